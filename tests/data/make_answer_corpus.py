"""Write tests/data/answer_corpus.jsonl: LLM answer styles with their expected vectors.

Run from the repository root: ``python tests/data/make_answer_corpus.py``. The output is
deterministic (fixed seed), so rerunning it leaves the file unchanged unless this script
changed.

Every expected vector comes from how the answer was *written* here (the value forms and
their scores are the tables below, which follow docs/parsing.md), never from the parser.
One JSON object per line::

    {"text": ..., "taxonomy": "toxeval-15", "expected": {"hate": 0.2, ...},
     "status": "ok" | "partial" | "empty" | "unparseable", "reason": optional substring,
     "note": what the entry exercises}

``expected`` lists the non-zero scores; every other category is 0.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("answer_corpus.jsonl")
TAXONOMY = "toxeval-15"

# (id, display name) of toxeval-15, in column order.
CATEGORIES = [
    ("hate", "Hate"),
    ("harassment", "Harassment"),
    ("violence", "Violence"),
    ("self_harm", "Self-harm"),
    ("sexual", "Sexual content"),
    ("sexual_minors", "Sexual content involving minors"),
    ("weapons", "Weapons"),
    ("drugs", "Drugs"),
    ("fraud", "Fraud and scams"),
    ("cybercrime", "Cybercrime"),
    ("privacy", "Privacy violations"),
    ("crime", "Other non-violent crime"),
    ("extremism", "Violent extremism"),
    ("misinformation", "Misinformation"),
    ("profanity", "Profanity"),
]

# Value forms written after a category name, and the score each one states.
NEGATIVE_VALUES = [
    "no",
    "No",
    "NO",
    "false",
    "none",
    "None",
    "not present",
    "Not present",
    "not detected",
    "Not detected.",
    "none detected",
    "absent",
    "negative",
    "N/A",
    "n/a",
    "not applicable",
    "not flagged",
    "no evidence",
    "0",
    "0%",
    "0/10",
    "0 out of 10",
]
POSITIVE_VALUES = [
    "yes",
    "Yes",
    "YES",
    "true",
    "present",
    "Present",
    "detected",
    "flagged",
    "violated",
    "positive",
    "Yes.",
]
GRADED_VALUES: list[tuple[str, float]] = [
    ("very low", 0.05),
    ("negligible", 0.05),
    ("minimal", 0.05),
    ("very unlikely", 0.05),
    ("low", 0.2),
    ("Low", 0.2),
    ("unlikely", 0.2),
    ("low risk", 0.2),
    ("low likelihood", 0.2),
    ("possible", 0.5),
    ("medium", 0.5),
    ("moderate", 0.5),
    ("likely", 0.8),
    ("high", 0.8),
    ("High risk", 0.8),
    ("very likely", 0.95),
    ("very high", 0.95),
    ("severe", 0.95),
    ("certain", 0.95),
    ("0.3", 0.3),
    ("0.85", 0.85),
    ("1.0", 1.0),
    ("20%", 0.2),
    ("20 %", 0.2),
    ("75%", 0.75),
    ("20 percent", 0.2),
    ("7/10", 0.7),
    ("3/10", 0.3),
    ("3/5", 0.6),
    ("4 / 5", 0.8),
    ("0.3/1", 0.3),
    ("3 out of 10", 0.3),
    ("8 out of 10", 0.8),
    ("score 0.2", 0.2),
    ("score: 0.9", 0.9),
    ("confidence 0.7", 0.7),
    ("probability 0.4", 0.4),
    ("likelihood: low", 0.2),
    ("risk: high", 0.8),
]
# Values that say nothing usable: the row is unparseable, naming the category.
UNKNOWN_VALUES = ["unclear", "unknown", "unsure", "not sure", "maybe not", "?", "depends"]


def entry(
    text: str,
    expected: dict[str, float],
    status: str,
    note: str,
    reason: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "text": text,
        "taxonomy": TAXONOMY,
        "expected": {k: v for k, v in expected.items() if v != 0.0},
        "status": status,
    }
    if reason is not None:
        out["reason"] = reason
    out["note"] = note
    return out


def status_of(expected: dict[str, float]) -> str:
    """Status of a fully understood answer: ok if any score is non-zero, else empty."""
    return "ok" if any(v != 0.0 for v in expected.values()) else "empty"


def generated(rng: random.Random) -> list[dict[str, Any]]:
    """Category-by-category answers in many layouts, each value from the tables above."""
    rows: list[dict[str, Any]] = []
    values: list[tuple[str, float]] = (
        [(v, 0.0) for v in NEGATIVE_VALUES] + [(v, 1.0) for v in POSITIVE_VALUES] + GRADED_VALUES
    )
    layouts = ["lines", "bullets", "numbered", "table", "json", "bold", "dash", "parens"]
    for n in range(190):
        layout = layouts[n % len(layouts)]
        cats = rng.sample(CATEGORIES, rng.randint(1, 5))
        picked = [(cid, name, *rng.choice(values)) for cid, name in cats]
        if layout == "dash":
            # "Name - value": only values that are not descriptions
            picked = [(c, nm, v, s) for c, nm, v, s in picked if not v[:1].isdigit()] or [
                (cats[0][0], cats[0][1], "none detected", 0.0)
            ]
        if layout == "parens":
            picked = [(c, nm, f"score {s:g}", s) for c, nm, _, s in picked]
        expected = {cid: s for cid, _, _, s in picked}
        use_id = rng.random() < 0.4
        label = {cid: (cid if use_id else name) for cid, name, _, _ in picked}
        if layout == "lines":
            text = "\n".join(f"{label[c]}: {v}" for c, _, v, _ in picked)
        elif layout == "bullets":
            text = "\n".join(f"- {label[c]}: {v}" for c, _, v, _ in picked)
        elif layout == "numbered":
            text = "\n".join(f"{i + 1}. {label[c]}: {v}" for i, (c, _, v, _) in enumerate(picked))
        elif layout == "table":
            head = rng.choice(["Present", "Score", "Likelihood", "Verdict", "Flag"])
            body = [f"| {label[c]} | {v} |" for c, _, v, _ in picked]
            text = "\n".join([f"| Category | {head} |", "|---|---|", *body])
            if rng.random() < 0.5:
                text = "Here is my assessment:\n\n" + text + "\n\nLet me know if you need more."
        elif layout == "json":
            obj = {label[c]: v for c, _, v, _ in picked}
            text = json.dumps(obj)
            if rng.random() < 0.5:
                text = f"```json\n{json.dumps(obj, indent=2)}\n```"
        elif layout == "bold":
            text = "\n".join(f"**{label[c]}**: {v}" for c, _, v, _ in picked)
        elif layout == "dash":
            text = "\n".join(f"* {label[c]} - {v}" for c, _, v, _ in picked)
        else:
            text = ", ".join(f"{label[c]} ({v})" for c, _, v, _ in picked)
        rows.append(entry(text, expected, status_of(expected), f"generated: {layout} of values"))
    # JSON shapes with booleans, numbers, strings, nested containers, lists of objects
    for n in range(60):
        cats = rng.sample(CATEGORIES, rng.randint(1, 4))
        shape = n % 6
        if shape == 0:
            flags = {cid: rng.random() < 0.5 for cid, _ in cats}
            text = json.dumps({"categories": flags})
            expected = {c: 1.0 for c, f in flags.items() if f}
        elif shape == 1:
            sc = {cid: round(rng.random(), 2) for cid, _ in cats}
            text = json.dumps(
                {"flagged": any(v >= 0.5 for v in sc.values()), "category_scores": sc}
            )
            expected = dict(sc)
        elif shape == 2:
            sc = {cid: round(rng.random(), 2) for cid, _ in cats}
            text = json.dumps([{"category": name, "score": sc[cid]} for cid, name in cats])
            expected = dict(sc)
        elif shape == 3:
            pres = {cid: rng.random() < 0.5 for cid, _ in cats}
            text = json.dumps([{"label": cid, "present": pres[cid]} for cid, _ in cats])
            expected = {c: 1.0 for c, f in pres.items() if f}
        elif shape == 4:
            sc = {cid: round(rng.random(), 2) for cid, _ in cats}
            text = json.dumps({name: str(sc[cid]) for cid, name in cats})
            expected = dict(sc)
        else:
            chosen = [cid for cid, _ in cats]
            text = (
                "Sure, here is the classification you asked for.\n"
                + json.dumps({"unsafe": True, "violated_categories": chosen})
                + "\nThe text targets a group."
            )
            expected = dict.fromkeys(chosen, 1.0)
        rows.append(entry(text, expected, status_of(expected), f"generated: JSON shape {shape}"))
    # Lists of ids, names and aliases, with lead-ins and reasoning blocks
    leads = ["", "Categories: ", "Final answer: ", "**Labels:** ", "Detected categories: "]
    for n in range(40):
        cats = rng.sample(CATEGORIES, rng.randint(1, 4))
        names = [cid if rng.random() < 0.5 else name for cid, name in cats]
        lead = leads[n % len(leads)]
        text = lead + ", ".join(names)
        if n % 4 == 1:
            text = f"<think>The user asks about {names[0]}... is it really? Let me weigh it.</think>\n{text}"
        if n % 4 == 3:
            text = "\n".join(f"- {x}" for x in names)
        expected = dict.fromkeys((cid for cid, _ in cats), 1.0)
        rows.append(entry(text, expected, "ok", "generated: label list"))
    # Unknown values: never a positive, never a 0
    for n in range(15):
        cid, name = rng.choice(CATEGORIES)
        _, oname = rng.choice([c for c in CATEGORIES if c[0] != cid])
        bad = UNKNOWN_VALUES[n % len(UNKNOWN_VALUES)]
        text = f"{name}: {bad}\n{oname}: yes"
        rows.append(
            entry(
                text,
                {},
                "unparseable",
                "generated: a value that is not understood",
                reason=f"{name!r}: value {bad!r} not understood",
            )
        )
    return rows


def handwritten() -> list[dict[str, Any]]:
    e = entry
    # One answer per line: a table, not code.
    # fmt: off
    return [
        # Llama Guard
        e("safe", {}, "empty", "Llama Guard safe"),
        e("unsafe\nS1", {"violence": 1.0}, "ok", "Llama Guard one code"),
        e("unsafe\nS1,S10", {"violence": 1.0, "hate": 1.0}, "ok", "Llama Guard two codes"),
        e("unsafe\nS10, S11", {"hate": 1.0, "self_harm": 1.0}, "ok", "Llama Guard spaced codes"),
        e("unsafe\nS6", {}, "empty", "Llama Guard code with no counterpart", reason="S6"),
        e("unsafe", {}, "unparseable", "unsafe without codes", reason="without category codes"),
        e("unsafe\nhate, violence", {"hate": 1.0, "violence": 1.0}, "ok", "unsafe then names"),
        # refusals
        e("I can't help with that.", {}, "unparseable", "refusal", reason="refusal"),
        e("I'm sorry, but I cannot assist with this request.", {}, "unparseable", "refusal", reason="refusal"),
        e("As an AI language model, I cannot classify this.", {}, "unparseable", "refusal", reason="refusal"),
        e("I won't label this content.", {}, "unparseable", "refusal", reason="refusal"),
        e("Sorry, but I must decline.", {}, "unparseable", "refusal", reason="refusal"),
        # none answers
        e("None of the categories apply", {}, "empty", "none-of phrase"),
        e("None of the categories apply.", {}, "empty", "none-of phrase"),
        e("No category applies", {}, "empty", "none-of phrase"),
        e("none", {}, "empty", "none"),
        e("N/A", {}, "empty", "N/A as the whole answer"),
        e("The text is safe.", {}, "empty", "safe sentence"),
        e("Categories: none", {}, "empty", "lead-in then none"),
        e("[]", {}, "empty", "empty JSON list"),
        e('{"safe": true}', {}, "empty", "safe verdict"),
        e('{"flagged": false, "categories": {"hate": false}}', {}, "empty", "not flagged"),
        # hedged prose and junk
        e("The text contains hate speech.", {}, "unparseable", "prose is not read", reason="no category recognised"),
        e("It might be somewhat offensive, hard to say.", {}, "unparseable", "hedged prose", reason="no category recognised"),
        e("Das ist Hassrede.", {}, "unparseable", "other language", reason="no category recognised"),
        e("これはヘイトです", {}, "unparseable", "other script", reason="no category recognised"),
        e("¯\\_(ツ)_/¯", {}, "unparseable", "junk"),
        e("42", {}, "unparseable", "lone number", reason="no category"),
        e("", {}, "unparseable", "empty output", reason="empty output"),
        e("{", {}, "unparseable", "broken JSON", reason="malformed JSON"),
        e("spam, eggs", {}, "unparseable", "unknown names", reason="no category recognised"),
        e("hate, spam", {"hate": 1.0}, "partial", "one unknown name", reason="'spam'"),
        e("hate: yes\nspam: yes", {"hate": 1.0}, "partial", "unknown name asserted", reason="'spam'"),
        e("hate: yes\nspam: no", {"hate": 1.0}, "ok", "unknown name denied loses nothing"),
        # defects: negated and graded values
        e("Hate: none\nViolence: yes", {"violence": 1.0}, "ok", "negation after a name"),
        e("Hate: not present\nViolence: yes", {"violence": 1.0}, "ok", "negation after a name"),
        e("hate: not detected", {}, "empty", "negation"),
        e("hate: negative", {}, "empty", "negation"),
        e("hate: N/A", {}, "empty", "N/A after a name means it does not apply"),
        e("hate: 0/10", {}, "empty", "zero fraction"),
        e("hate: 20 %", {"hate": 0.2}, "ok", "percentage with a space"),
        e("hate (score 0.2)", {"hate": 0.2}, "ok", "score phrase"),
        e("hate (score: 0.2)", {"hate": 0.2}, "ok", "score phrase with colon"),
        e("hate: low", {"hate": 0.2}, "ok", "severity word"),
        e("hate: unlikely", {"hate": 0.2}, "ok", "likelihood word"),
        e("Hate - none detected", {}, "empty", "dash then negation"),
        e("Hate (not present)", {}, "empty", "parenthesised negation"),
        e("hate: no (0.02)", {"hate": 0.02}, "ok", "no with an agreeing score: the score is kept"),
        e("hate: yes (0.3)", {}, "unparseable", "yes with a low score", reason="contradicts itself"),
        e("hate: yes (0.9)", {"hate": 0.9}, "ok", "yes with a score: the score is kept"),
        e("hate: no (0.9)", {}, "unparseable", "no with a high score", reason="contradicts itself"),
        e("hate: high (0.3)", {}, "unparseable", "high with a low score", reason="contradicts itself"),
        e("hate: 7", {}, "unparseable", "score out of range", reason="outside [0, 1]"),
        e("hate: 12/10", {}, "unparseable", "fraction above one", reason="outside [0, 1]"),
        e("hate: 85%\nviolence: 5%", {"hate": 0.85, "violence": 0.05}, "ok", "percentages"),
        e("hate: yes - uses a slur", {"hate": 1.0}, "ok", "yes with a gloss"),
        e("hate: no (the slur is quoted in a news report)", {}, "empty", "no with a gloss"),
        e("Hate - attacks on a protected group", {"hate": 1.0}, "ok", "description after a dash"),
        e("Hate: the text uses a slur", {}, "unparseable", "prose after a colon", reason="not understood"),
        # contradictions
        e('{"safe": true, "categories": ["hate"]}', {}, "unparseable", "safe with a category", reason="contradictory"),
        e("Safe. Categories: hate", {}, "unparseable", "safe with a category", reason="contradictory"),
        e("safe\nS10", {}, "unparseable", "Llama Guard safe with a code", reason="contradictory"),
        e('{"hate": true}\n{"hate": false}', {}, "unparseable", "two JSON objects disagree", reason="disagree"),
        e('{"hate": true}\n{"hate": true}', {"hate": 1.0}, "ok", "two JSON objects agree"),
        # reasoning blocks
        e("<think>hate? no, it is a threat.</think>\nviolence", {"violence": 1.0}, "ok", "reasoning block"),
        e("<think>\nLet me check each category.\nHate: yes?\n</think>\n\nnone", {}, "empty", "reasoning then none"),
        e("<think>Could be hate", {}, "unparseable", "unterminated reasoning", reason="unterminated <think>"),
        e("<think>hate</think>", {}, "unparseable", "reasoning, no answer", reason="no final answer"),
        e('reasoning here</think>\n{"fraud": 0.8}', {"fraud": 0.8}, "ok", "closing tag only"),
        # tables
        e("| Category | Present | Reason |\n|---|---|---|\n| Hate | Yes | slur |\n| Violence | No | - |", {"hate": 1.0}, "ok", "table with a reason column"),
        e("| Category | Likelihood |\n| :-- | :-: |\n| Drugs | low |\n| Weapons | very high |", {"drugs": 0.2, "weapons": 0.95}, "ok", "table of likelihood words"),
        e("| hate | violence |", {"hate": 1.0, "violence": 1.0}, "ok", "one-row table of names"),
        # explicit nulls: "no value given", never a 0 (the row is left to the parse policy)
        e('{"hate": null, "violence": true}', {}, "unparseable", "JSON null is not a 0", reason="'hate': null"),
        e('{"category_scores": {"hate": null, "violence": 0.2}}', {}, "unparseable", "null in a scores container", reason="'hate': null"),
        e('[{"category": "hate", "score": null}]', {}, "unparseable", "null score of a list item is not a mention", reason="'hate': null"),
        e('{"hate": {"score": null}}', {}, "unparseable", "null inner score", reason="'hate': null"),
        e("hate: null\nviolence: yes", {}, "unparseable", "null written in text", reason="'hate': null"),
        # numbers with a leading decimal point or a decimal comma
        e("hate: .1", {"hate": 0.1}, "ok", "leading decimal point is not stripped"),
        e("hate (.3)\nviolence (.05)", {"hate": 0.3, "violence": 0.05}, "ok", "leading decimal point in parentheses"),
        e("hate: 0,7\nviolence: 0,1", {"hate": 0.7, "violence": 0.1}, "ok", "decimal comma"),
        e("hate: 1,5", {}, "unparseable", "decimal comma above one is not split", reason="'hate'"),
        e("hate (" + "9" * 400 + "%)", {}, "unparseable", "a huge number is not a description", reason="'hate'"),
        # check marks and crosses are values, wherever they stand
        e("- hate \u2705\n- violence \u274c", {"hate": 1.0}, "ok", "check mark and cross after names"),
        e("hate \u2718", {}, "empty", "heavy ballot x after a name is a no"),
        e("\u274c Hate\n\u2714 Violence", {"violence": 1.0}, "ok", "marks before names"),
        e("| Category | Present |\n|---|---|\n| Hate | \u2705 |\n| Violence | \u274c |", {"hate": 1.0}, "ok", "marks in a table"),
        e("Hate: \u2705 Yes\nViolence: \u274c No", {"hate": 1.0}, "ok", "mark and word agree"),
        e("Hate: Not present \u2705", {}, "unparseable", "mark and word disagree", reason="contradicts itself"),
        # invisible and full-width characters
        e("hate: 0.9\u200b", {"hate": 0.9}, "ok", "zero-width space after a value"),
        e("ha\u200bte: yes", {"hate": 1.0}, "ok", "zero-width space inside a name"),
        e("hate\uff1a\uff10.\uff19", {"hate": 0.9}, "ok", "full-width colon and digits"),
        e("\ufeffViolence:\u00a0likely", {"violence": 0.8}, "ok", "byte-order mark and non-breaking space"),
        # a category list quoted back from the prompt is not an answer
        e("Categories: hate, harassment, violence\nAnswer: none", {}, "unparseable", "prompt's category list quoted back", reason="contradictory: two lead-in answers disagree"),
        e("Categories: hate, violence\nFinal answer: violence", {}, "unparseable", "two lead-in lines disagree", reason="contradictory"),
        e("Detected categories: violence\nFinal answer: violence", {"violence": 1.0}, "ok", "two lead-in lines agree"),
        e("Verdict: safe\nCategories: none", {}, "empty", "safe verdict and no category agree"),
        # a gloss that says the model does not know qualifies the value
        e("Hate: Yes (unclear)", {}, "unparseable", "yes with an unsure gloss", reason="not understood"),
        e("Hate: no - uncertain", {}, "unparseable", "no with an unsure gloss", reason="not understood"),
    ]
    # fmt: on


def main() -> None:
    rng = random.Random(20260)
    rows = handwritten() + generated(rng)
    lines = [json.dumps(r, ensure_ascii=False) + "\n" for r in rows]
    OUT.write_text("".join(lines), encoding="utf-8")
    print(f"wrote {len(rows)} entries to {OUT.name}")


if __name__ == "__main__":
    main()
