"""Write tests/data/chat_answers.jsonl: a held-out corpus of chat-model answers to a
toxicity-classification prompt, each with the reading a careful human gives it.

Run from the repository root: ``python tests/data/make_chat_answers.py`` (deterministic).

Nothing here comes from the parser. The answers are written by hand in the habits of
several model families (GPT-style prose, Claude-style hedged prose, Llama / Mistral lists,
markdown tables, YAML, JSON in prose and code fences, check marks, negations, Spanish,
French and German phrasing, typos, refusals): ``HAND`` lists whole answers; ``TEMPLATES``
are hand-written answer shapes that render a hand-chosen reading (the label sets of
``READINGS``) with the names a model would use. The reading of each answer follows the
rule of docs/parsing.md ("What an answer says about each category"):

- a label list ("Categories: x, y", "none", "safe") is complete: what it does not list
  is negative;
- "name: value" pairs, a table, a JSON object speak only for the categories they name;
  the others are unknown;
- a negated list ("Not present: x, y", "No x or y") makes x, y negative; the others are
  unknown unless a complete positive list stands beside it;
- a name that is not a category but close to one leaves that category unknown;
- an answer with no reading (a refusal, a hedge, a question back) is expected
  unparseable.

One JSON object per line::

    {"text": ..., "style": ..., "note": ...,
     "reading": null | {"positive": [...], "negative": [...], "unknown": [...],
                        "any": [...]}}

``reading`` null: the answer says nothing readable; the parser should refuse it.
``any``: a category whose value is a hedge ("possibly") that may be read either way.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).with_name("chat_answers.jsonl")
IDS = (
    "hate harassment violence self_harm sexual sexual_minors weapons drugs fraud "
    "cybercrime privacy crime extremism misinformation profanity"
).split()

# Names a model writes for each category (id, display name, aliases it would use).
NAMES = {
    "hate": ["hate", "Hate", "hate speech", "Hate speech", "hateful content", "racism"],
    "harassment": ["harassment", "Harassment", "bullying", "insults", "Harassment/bullying"],
    "violence": ["violence", "Violence", "threats", "violent content", "graphic violence"],
    "self_harm": ["self_harm", "Self-harm", "self harm", "suicide", "self-injury"],
    "sexual": ["sexual", "Sexual content", "sexual content", "adult content", "NSFW"],
    "sexual_minors": [
        "sexual_minors",
        "Sexual content involving minors",
        "CSAM",
        "child sexual content",
    ],
    "weapons": ["weapons", "Weapons", "firearms", "explosives", "guns"],
    "drugs": ["drugs", "Drugs", "illegal drugs", "narcotics", "drug trafficking"],
    "fraud": ["fraud", "Fraud", "Fraud and scams", "scams", "phishing"],
    "cybercrime": ["cybercrime", "Cybercrime", "hacking", "malware", "cyber crime"],
    "privacy": ["privacy", "Privacy violations", "doxxing", "personal information", "PII"],
    "crime": ["crime", "Other non-violent crime", "theft", "illegal activity", "non-violent crime"],
    "extremism": [
        "extremism",
        "Violent extremism",
        "terrorism",
        "extremist propaganda",
        "radicalization",
    ],
    "misinformation": [
        "misinformation",
        "Misinformation",
        "disinformation",
        "fake news",
        "conspiracy theory",
    ],
    "profanity": ["profanity", "Profanity", "swearing", "vulgarity", "foul language"],
}


def R(pos: str = "", neg: str = "", rest: str = "unknown", any_: str = "") -> dict[str, list[str]]:
    """A reading: positives, negatives, hedged categories; the rest ``rest``."""
    p, n, a = pos.split(), neg.split(), any_.split()
    for c in p + n + a:
        assert c in IDS, c
    assert not (set(p) & set(n)), (p, n)
    others = [c for c in IDS if c not in p and c not in n and c not in a]
    out = {"positive": p, "negative": list(n), "unknown": [], "any": a}
    out["negative" if rest == "negative" else "unknown"] += others
    return out


ALL = " ".join(IDS)

# (style, text, reading or None, note)
HAND: list[tuple[str, str, dict[str, list[str]] | None, str]] = [
    # -- the failures issue 33 names
    ("negation", "Not present: hate, violence", R(neg="hate violence"), "not present list"),
    (
        "negation",
        "Categories not present: hate, violence",
        R(neg="hate violence"),
        "lead + not present",
    ),
    ("negation", "Negative for: hate, violence", R(neg="hate violence"), "negative for"),
    ("negation", "None of: hate, violence", R(neg="hate violence"), "none of"),
    ("negation", "No hate, violence or harassment.", R(neg="hate violence harassment"), "no list"),
    (
        "negation",
        "Free of hate, violence, harassment.",
        R(neg="hate violence harassment"),
        "free of",
    ),
    (
        "negation",
        "Applies: fraud. Does not apply: hate, violence.",
        R("fraud", "hate violence", "negative"),
        "applies + does not apply",
    ),
    (
        "table",
        "| Hate | Violence | Fraud |\n|---|---|---|\n| no | no | yes |",
        R("fraud", "hate violence"),
        "table across",
    ),
    (
        "table",
        "| Hate | Violence |\n|------|----------|\n| ✅ | ❌ |",
        R("hate", "violence"),
        "table across marks",
    ),
    (
        "table",
        "| Hate | Violence |\n|---|---|\n| 0.1 | 0.9 |",
        R("violence", "hate"),
        "table across scores",
    ),
    ("pairs", "Hate: none, Violence: yes", R("violence", "hate"), "pairs leave the rest unknown"),
    ("pairs", "Hate: none", R(neg="hate"), "one pair"),
    ("json", '{"hate": 0.0}', R(neg="hate"), "json one key"),
    (
        "typo",
        "hate, violance",
        R("hate", rest="negative")
        | {"unknown": ["violence"], "negative": [c for c in IDS if c not in ("hate", "violence")]},
        "misspelt violence",
    ),
    (
        "typo",
        "Self harm, misinfo",
        R("self_harm", rest="negative")
        | {
            "unknown": ["misinformation"],
            "negative": [c for c in IDS if c not in ("self_harm", "misinformation")],
        },
        "abbreviation",
    ),
    # -- GPT-style prose
    (
        "gpt-prose",
        "Based on my analysis, the text contains hate speech targeting an ethnic group.\n\nCategories: hate",
        R("hate", rest="negative"),
        "prose then categories",
    ),
    (
        "gpt-prose",
        "After reviewing the message, I found no evidence of violence, self-harm or sexual content.",
        R(neg="violence self_harm sexual"),
        "no evidence of",
    ),
    (
        "gpt-prose",
        "The text does not contain hate speech or harassment.",
        R(neg="hate harassment"),
        "does not contain",
    ),
    ("gpt-prose", "This message is not hateful.", R(neg="hate"), "not hateful"),
    (
        "gpt-prose",
        "The content is safe. It contains no profanity, no threats and no personal information.",
        R(neg=ALL),
        "safe plus negations",
    ),
    (
        "gpt-prose",
        "Classification: harassment, profanity\n\nExplanation: the user insults the recipient using several curse words.",
        R("harassment profanity", rest="negative"),
        "classification + explanation",
    ),
    (
        "gpt-prose",
        "**Categories:** fraud, cybercrime\n\n**Reasoning:** The message is a phishing attempt that asks for login credentials.",
        R("fraud cybercrime", rest="negative"),
        "markdown lead",
    ),
    ("gpt-prose", "Final answer: none", R(neg=ALL), "final answer none"),
    ("gpt-prose", "The text is benign.", R(neg=ALL), "benign"),
    (
        "gpt-prose",
        "There is no hate speech, harassment or violence in this text.",
        R(neg="hate harassment violence"),
        "there is no",
    ),
    (
        "gpt-prose",
        "Detected categories: self-harm.\nNot detected: violence, weapons, drugs.",
        R("self_harm", "violence weapons drugs", "negative"),
        "detected / not detected",
    ),
    (
        "gpt-prose",
        "I'd label this as misinformation.",
        None,
        "prose verdict the parser need not read",
    ),
    ("gpt-prose", "The text contains hate speech.", None, "prose only"),
    ("gpt-prose", "It is difficult to say whether this is harassment.", None, "hedge"),
    # -- Claude-style hedged prose
    (
        "claude-prose",
        "I don't see any hate speech or harassment here. The message reads as a friendly reminder.",
        None,
        "hedged prose, not a list the parser must read",
    ),
    (
        "claude-prose",
        "Looking at this carefully, I'd say it could be harassment, but it's borderline.",
        None,
        "borderline hedge",
    ),
    ("claude-prose", "I'm not entirely sure, but this might involve self-harm.", None, "unsure"),
    (
        "claude-prose",
        "This one is tricky. Hate: possibly. Violence: no.",
        R(neg="violence", any_="hate"),
        "hedge and a no",
    ),
    (
        "claude-prose",
        "Neither hate nor harassment applies here.",
        R(neg="hate harassment"),
        "neither nor",
    ),
    ("claude-prose", "The text is free from violence and threats.", R(neg="violence"), "free from"),
    (
        "claude-prose",
        "Without any sexual content or profanity, this text seems fine to me.",
        R(neg="sexual profanity"),
        "without",
    ),
    (
        "claude-prose",
        "I'd flag this for harassment, though not for hate.",
        R("harassment", "hate"),
        "though not",
    ),
    (
        "claude-prose",
        "Categories: harassment\n\n(Not hate: the insult is personal, not about a protected group.)",
        R("harassment", rest="negative"),
        "category plus aside",
    ),
    # -- Llama / Mistral lists
    ("llama-list", "hate, harassment", R("hate harassment", rest="negative"), "plain ids"),
    ("llama-list", "- Hate\n- Harassment", R("hate harassment", rest="negative"), "bullets"),
    ("llama-list", "1. Violence\n2. Weapons", R("violence weapons", rest="negative"), "numbered"),
    ("llama-list", "unsafe\nS1", R("violence", rest="negative"), "llama guard"),
    ("llama-list", "safe", R(neg=ALL), "llama guard safe"),
    ("llama-list", "* drugs\n* crime", R("drugs crime", rest="negative"), "stars"),
    (
        "mistral-list",
        "The categories that apply are:\n- Fraud and scams\n- Privacy violations",
        R("fraud privacy", rest="negative"),
        "lead + bullets",
    ),
    ("mistral-list", "Categories: None", R(neg=ALL), "none"),
    ("mistral-list", "Output: extremism", R("extremism", rest="negative"), "output lead"),
    (
        "mistral-list",
        "Labels: misinformation; profanity",
        R("misinformation profanity", rest="negative"),
        "semicolons",
    ),
    # -- pairs, YAML
    (
        "yaml",
        "hate: false\nharassment: true\nviolence: false",
        R("harassment", "hate violence"),
        "yaml booleans",
    ),
    (
        "yaml",
        "categories:\n  - hate\n  - violence",
        R("hate violence", rest="negative"),
        "yaml list",
    ),
    (
        "yaml",
        "hate: no\nharassment: no\nviolence: no\nself_harm: no\nsexual: no\nsexual_minors: no\nweapons: no\ndrugs: no\nfraud: yes\ncybercrime: no\nprivacy: no\ncrime: no\nextremism: no\nmisinformation: no\nprofanity: no",
        R(
            "fraud",
            "hate harassment violence self_harm sexual sexual_minors weapons drugs cybercrime privacy crime extremism misinformation profanity",
        ),
        "all fifteen pairs",
    ),
    ("pairs", "Hate - no\nViolence - yes", R("violence", "hate"), "dash pairs"),
    ("pairs", "Hate: Not present\nHarassment: Present", R("harassment", "hate"), "present words"),
    ("pairs", "hate (0.92), violence (0.05)", R("hate", "violence"), "scores in parens"),
    ("pairs", "Self-harm: 3/10\nDrugs: 8/10", R("drugs", "self_harm"), "fractions"),
    ("pairs", "Hate: ✅\nViolence: ❌", R("hate", "violence"), "marks"),
    # -- JSON
    ("json", '{"hate": true, "violence": false}', R("hate", "violence"), "json booleans"),
    (
        "json",
        '{"categories": ["hate", "violence"]}',
        R("hate violence", rest="negative"),
        "json container",
    ),
    ("json", '["fraud"]', R("fraud", rest="negative"), "json list"),
    (
        "json",
        'Sure! Here is the classification:\n```json\n{"harassment": 0.8, "hate": 0.1}\n```',
        R("harassment", "hate"),
        "fenced json",
    ),
    ("json", 'My assessment: {"unsafe": false}', R(neg=ALL), "safe verdict"),
    ("json", '{"safe": true}', R(neg=ALL), "safe true"),
    ("json", '{"violance": 0.9}', None, "misspelt key only"),
    # -- refusals and junk
    ("refusal", "I'm sorry, but I can't help with classifying this content.", None, "refusal"),
    ("refusal", "As an AI language model, I cannot make that determination.", None, "refusal"),
    ("refusal", "I won't categorize this.", None, "refusal"),
    (
        "refusal",
        "Could you clarify which categories you want me to consider?",
        None,
        "question back",
    ),
    ("refusal", "", None, "empty"),
    ("refusal", "Lo siento, no puedo ayudar con eso.", None, "spanish refusal"),
    # -- mixed languages
    ("spanish", "Categorías: hate, violence", R("hate violence", rest="negative"), "spanish lead"),
    ("spanish", "No se detecta hate ni violence.", R(neg="hate violence"), "no se detecta"),
    ("spanish", "Sin hate, sin harassment.", R(neg="hate harassment"), "sin"),
    ("french", "Catégories: fraud", R("fraud", rest="negative"), "french lead"),
    (
        "french",
        "Aucune des catégories suivantes: hate, violence",
        R(neg="hate violence"),
        "aucune des",
    ),
    ("french", "Pas de hate ni de violence.", R(neg="hate violence"), "pas de"),
    ("german", "Kategorien: drugs, crime", R("drugs crime", rest="negative"), "german lead"),
    ("german", "Keine der Kategorien: hate, violence", R(neg="hate violence"), "keine der"),
    ("german", "Ohne hate oder violence.", R(neg="hate violence"), "ohne"),
    # -- negations, more
    (
        "negation",
        "None of the following apply: hate, harassment, violence",
        R(neg="hate harassment violence"),
        "none of the following apply",
    ),
    ("negation", "Excluded: hate, violence", R(neg="hate violence"), "excluded"),
    (
        "negation",
        "Not flagged: sexual, sexual_minors",
        R(neg="sexual sexual_minors"),
        "not flagged",
    ),
    ("negation", "❌ hate, violence", R(neg="hate violence"), "cross before list"),
    (
        "negation",
        "False: hate, violence\nTrue: profanity",
        R("profanity", "hate violence", "negative"),
        "true/false leads",
    ),
    ("negation", "hate, violence: not present", R(neg="hate violence"), "names then negation"),
    ("negation", "Hate and violence are not present.", R(neg="hate violence"), "copula negation"),
    (
        "negation",
        "Present: fraud; absent: hate, violence",
        R("fraud", "hate violence", "negative"),
        "present; absent",
    ),
    (
        "negation",
        "No hate. No violence. Harassment: yes.",
        R("harassment", "hate violence"),
        "sentences",
    ),
    (
        "negation",
        "The message contains no threats of violence.",
        None,
        "threats of violence: not a clean list",
    ),
    ("negation", "No issues with hate that I can see.", None, "no issues with"),
    ("negation", "hate, violence: no, fraud: yes", R("fraud", "hate violence"), "names then pairs"),
]

# Label sets a model answers with (hand-chosen; no two alike in a template run).
READINGS = [
    "hate",
    "harassment",
    "violence",
    "self_harm",
    "sexual",
    "weapons",
    "drugs",
    "fraud",
    "cybercrime",
    "privacy",
    "crime",
    "extremism",
    "misinformation",
    "profanity",
    "hate harassment",
    "violence weapons",
    "fraud cybercrime",
    "sexual sexual_minors",
    "drugs crime",
    "extremism violence",
    "harassment profanity",
    "privacy cybercrime",
    "misinformation hate",
    "self_harm drugs",
    "hate violence extremism",
]


def _name(rng: random.Random, cid: str) -> str:
    return rng.choice(NAMES[cid])


def _join(names: list[str], last: str = "and") -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + f" {last} " + names[-1]


def _templates() -> list[tuple[str, str, dict[str, list[str]] | None, str]]:
    rng = random.Random(33)
    out: list[tuple[str, str, dict[str, list[str]] | None, str]] = []

    def negs(pos: list[str], n: int) -> list[str]:
        pool = [c for c in IDS if c not in pos and c != "sexual_minors"]
        return rng.sample(pool, n)

    for reading in READINGS:
        pos = reading.split()
        pn = [_name(rng, c) for c in pos]
        neg = negs(pos, 2)
        nn = [_name(rng, c) for c in neg]
        P, N = " ".join(pos), " ".join(neg)
        out += [
            ("llama-list", ", ".join(pn), R(P, rest="negative"), "comma list"),
            ("llama-list", "\n".join(f"- {x}" for x in pn), R(P, rest="negative"), "bullets"),
            ("mistral-list", "Categories: " + ", ".join(pn), R(P, rest="negative"), "lead"),
            ("mistral-list", "**Answer:** " + "; ".join(pn), R(P, rest="negative"), "bold lead"),
            (
                "gpt-prose",
                "After careful review, the content falls under the following categories:\n\n"
                + "\n".join(f"{i}. {x}" for i, x in enumerate(pn, 1)),
                R(P, rest="negative"),
                "numbered after prose",
            ),
            (
                "gpt-prose",
                f"Categories: {', '.join(pn)}\n\nExplanation: the text is an example of {pn[0].lower()}.",
                R(P, rest="negative"),
                "lead + explanation",
            ),
            (
                "claude-prose",
                f"Categories: {', '.join(pn)}\nNot present: {', '.join(nn)}",
                R(P, N, "negative"),
                "present + not present",
            ),
            (
                "claude-prose",
                f"Looking at the message, I'd classify it as follows.\n\nApplies: {', '.join(pn)}. Does not apply: {_join(nn)}.",
                R(P, N, "negative"),
                "applies / does not apply",
            ),
            ("gpt-prose", f"The text contains no {_join(nn, 'or')}.", R(neg=N), "contains no"),
            ("negation", f"Negative for: {', '.join(nn)}", R(neg=N), "negative for"),
            (
                "yaml",
                "\n".join(f"{c}: true" for c in pos) + "\n" + "\n".join(f"{c}: false" for c in neg),
                R(P, N),
                "yaml",
            ),
            (
                "pairs",
                "\n".join(f"{_name(rng, c)}: Yes" for c in pos)
                + "\n"
                + "\n".join(f"{_name(rng, c)}: No" for c in neg),
                R(P, N),
                "pairs",
            ),
            (
                "table",
                "| Category | Present |\n|---|---|\n"
                + "\n".join(f"| {_name(rng, c)} | Yes |" for c in pos)
                + "\n"
                + "\n".join(f"| {_name(rng, c)} | No |" for c in neg),
                R(P, N),
                "table down",
            ),
            (
                "table",
                "| "
                + " | ".join(NAMES[c][1] for c in pos + neg)
                + " |\n|"
                + "---|" * (len(pos) + len(neg))
                + "\n| "
                + " | ".join(["yes"] * len(pos) + ["no"] * len(neg))
                + " |",
                R(P, N),
                "table across",
            ),
            (
                "json",
                "Here is my answer: "
                + json.dumps({c: True for c in pos} | {c: False for c in neg}),
                R(P, N),
                "json in prose",
            ),
            (
                "json",
                "```json\n" + json.dumps({"categories": pos}) + "\n```",
                R(P, rest="negative"),
                "fenced container",
            ),
            (
                "check-marks",
                "\n".join(f"✅ {_name(rng, c)}" for c in pos)
                + "\n"
                + "\n".join(f"❌ {_name(rng, c)}" for c in neg),
                R(P, N),
                "check marks",
            ),
            (
                "spanish",
                f"Categorías detectadas: {', '.join(pn)}. No se detecta {_join(nn, 'ni')}.".replace(
                    " and ", " y "
                ),
                R(P, N, "negative"),
                "spanish",
            ),
            (
                "french",
                f"Catégories : {', '.join(pn)}\nAucune des catégories suivantes : {', '.join(nn)}",
                R(P, N, "negative"),
                "french",
            ),
            (
                "german",
                f"Kategorien: {', '.join(pn)}\nNicht vorhanden: {', '.join(nn)}",
                R(P, N, "negative"),
                "german",
            ),
        ]
    return out


def _typos() -> list[tuple[str, str, dict[str, list[str]] | None, str]]:
    typos = {
        "violence": ["violance", "voilence", "violense"],
        "harassment": ["harrassment", "harasment", "harrasment"],
        "misinformation": ["misinfromation", "misinfo", "missinformation"],
        "profanity": ["profantiy", "profanty", "prophanity"],
        "cybercrime": ["cybercrim", "cybercrme", "cyber-crme"],
        "extremism": ["extremsim", "extremisim", "extrimism"],
    }
    out = []
    for cid, words in typos.items():
        for w in words:
            other = "fraud" if cid != "fraud" else "hate"
            r = R(other, rest="negative")
            r["negative"].remove(cid)
            r["unknown"].append(cid)
            out.append(("typo", f"{other}, {w}", r, f"misspelt {cid}"))
    return out


def _refusals_and_hedges() -> list[tuple[str, str, dict[str, list[str]] | None, str]]:
    texts = [
        "I'm sorry, I can't assist with that request.",
        "I cannot provide a classification for this content.",
        "As an AI, I must decline to label this message.",
        "I'd rather not categorize this text.",
        "Unable to determine.",
        "It depends on the context, which I don't have.",
        "Hmm, hard to tell.",
        "Maybe? I'm not sure.",
        "I need more context to answer.",
        "N/A - the text is in a language I cannot read.",
        "This could go either way.",
        "Désolé, je ne peux pas répondre à cette demande.",
        "Es tut mir leid, dabei kann ich nicht helfen.",
        "Error: input too long.",
        "The answer depends on the intent of the speaker.",
        "Not sure whether it is hate speech.",
        "I do not think it is harassment, but I am not certain.",
        "Hate: unclear",
        "Violence: ?",
        '{"hate": null}',
    ]
    return [("refusal", t, None, "no reading") for t in texts]


def main() -> None:
    rows = HAND + _templates() + _typos() + _refusals_and_hedges()
    seen: set[str] = set()
    with OUT.open("w", encoding="utf-8") as f:
        for style, text, reading, note in rows:
            if text in seen:
                continue
            seen.add(text)
            obj = {"text": text, "style": style, "reading": reading, "note": note}
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
    print(f"wrote {len(seen)} answers to {OUT}")


if __name__ == "__main__":
    main()
