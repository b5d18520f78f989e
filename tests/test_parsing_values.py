"""The value written after a category name: negations, presence words, severity words,
numbers, percentages, fractions and score phrases; contradictions; reasoning blocks.

The named defect cases each read as a positive before the value grammar existed
(``Hate: none`` gave hate = 1.0); the property tests render a random score vector in
every supported style and parse it back, and check that no negated rendering is ever
read as a positive.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import examples, named_part
from hypothesis import given, settings
from hypothesis import strategies as st
from toxeval import parse_output
from toxeval.parsing.values import DEGREE_WORDS, read_value
from toxeval.taxonomy import load_taxonomy

TOX15 = load_taxonomy("toxeval-15")
IDS = TOX15.ids


pytestmark = pytest.mark.usefixtures("fresh_parse_caches")


def vector(scores: dict[str, float]) -> list[float]:
    return [scores.get(c, 0.0) for c in IDS]


# ----------------------------------------------------------------------- named defects

# (answer, status, scores): each of these gave status ok with the first category at 1.0.
DEFECTS: list[tuple[str, str, dict[str, float]]] = [
    ("Hate: none\nViolence: yes", "ok", {"violence": 1.0}),
    ("Hate: not present\nViolence: yes", "ok", {"violence": 1.0}),
    ("hate: not detected", "empty", {}),
    ("hate: negative", "empty", {}),
    ("hate: N/A", "empty", {}),
    ("Hate: n/a\nViolence: yes", "ok", {"violence": 1.0}),
    ("hate: not applicable", "empty", {}),
    ("Hate - none detected", "empty", {}),
    ("Hate (not present)", "empty", {}),
    ("hate: 0/10", "empty", {}),
    ("hate: 20 %", "ok", {"hate": 0.2}),
    ("hate: 20%", "ok", {"hate": 0.2}),
    ("hate: 20 percent", "ok", {"hate": 0.2}),
    ("hate (score 0.2)", "ok", {"hate": 0.2}),
    ("hate (score: 0.2)", "ok", {"hate": 0.2}),
    ("hate: confidence 0.7", "ok", {"hate": 0.7}),
    ("hate: low", "ok", {"hate": 0.2}),
    ("hate: unlikely", "ok", {"hate": 0.2}),
    ("hate: very low", "ok", {"hate": 0.05}),
    ("hate: low risk", "ok", {"hate": 0.2}),
    ("hate: 7/10", "ok", {"hate": 0.7}),
    ("hate: 0.3/1", "ok", {"hate": 0.3}),
    ("hate: 3 out of 10", "ok", {"hate": 0.3}),
    ("hate: 3/5", "ok", {"hate": 0.6}),
    ('{"hate": "low", "violence": "not present"}', "ok", {"hate": 0.2}),
    ('{"hate": "20 %"}', "ok", {"hate": 0.2}),
    ('{"hate": "negative", "violence": "yes"}', "ok", {"violence": 1.0}),
    (
        "| Category | Present |\n|---|---|\n| Hate | no |\n| Violence | yes |",
        "ok",
        {"violence": 1.0},
    ),
    ("Hate: yes\nPrivacy violations: no\nViolence: no", "ok", {"hate": 1.0}),
]


@pytest.mark.parametrize(("text", "status", "scores"), DEFECTS, ids=[d[0][:40] for d in DEFECTS])
def test_negative_and_graded_values_are_not_positives(
    text: str, status: str, scores: dict[str, float]
) -> None:
    r = parse_output(text)
    named_status, named_scores = named_part(r)  # the categories it does not name: unknown
    assert named_status == status, r
    assert r.reason is None or r.reason.startswith("no value for"), r
    np.testing.assert_allclose(named_scores, vector(scores), rtol=0, atol=1e-12)
    assert r.labels == {c for c, v in scores.items() if v >= 0.5}


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("hate: maybe not", "'hate': value 'maybe not' not understood"),
        ("Hate: unclear\nViolence: yes", "'Hate': value 'unclear' not understood"),
        ("hate: unknown", "'hate': value 'unknown' not understood"),
        ("hate: the text uses a slur", "'hate': value 'the text uses a slur' not understood"),
        ("Hate (not sure)", "'Hate': value 'not sure' not understood"),
        ("Hate - not really sure", "'Hate': value 'not really sure' not understood"),
        ('{"hate": "perhaps not", "violence": true}', "'hate': value 'perhaps not' not"),
        ("| Category | Flag |\n|---|---|\n| Hate | ??? |", "'Hate': value '???' not understood"),
        ("hate: 7", "'hate': score 7.0 is outside [0, 1]"),
        ("hate: 12/10", "'hate': fraction '12/10' is outside [0, 1]"),
        ("hate: 3/0", "'hate': fraction '3/0' has no positive finite denominator"),
        ("hate: no (0.9)", "'hate': value 'no (0.9)' contradicts itself"),
        ("hate:", "'hate': no value given"),
    ],
)
def test_a_value_not_understood_makes_the_row_unparseable_naming_it(text: str, named: str) -> None:
    # never a silent positive, never a silent 0: the category is unknown, so is the row
    r = parse_output(text)
    assert r.status == "unparseable", r
    assert r.reason is not None and named in r.reason, r.reason
    assert not r.scores.any()


def test_an_unknown_name_with_a_negative_value_loses_nothing() -> None:
    r = parse_output("hate: yes\nspam: not present")
    assert named_part(r)[0] == "ok" and r.unknown == ()
    r = parse_output("hate: yes\nspam: likely")
    assert r.status == "partial" and r.unknown == ("spam",)


def test_descriptions_after_a_dash_or_parenthesis_still_name_the_category() -> None:
    for text in ("Hate - attacks on a protected group", "Hate (explicit slur)", "hate - violence"):
        r = parse_output(text)
        assert r.status == "ok" and "hate" in r.labels, (text, r)
    assert parse_output("hate - violence").labels == {"hate", "violence"}
    # "hate/harassment: yes" says one of them, not which: refused, never both positive
    r = parse_output("hate/harassment: yes")
    assert r.status == "unparseable" and "not which" in (r.reason or ""), r
    both = parse_output("hate/harassment: no")  # neither: a negative for both
    assert both.status == "partial" and both.labels == set(), both
    assert both.scores[TOX15.index("hate")] == 0.0 == both.scores[TOX15.index("harassment")]


# ----------------------------------------------------------------------- contradictions


@pytest.mark.parametrize(
    "text",
    [
        '{"safe": true, "categories": ["hate"]}',
        '{"unsafe": false, "hate": true}',
        '{"flagged": false, "category_scores": {"hate": 0.93}}',
        "Safe. Categories: hate",
        "safe\nhate",
        "Verdict: safe\nCategories: hate",
        "The text is safe.\nhate",
    ],
)
def test_safe_with_a_category_is_contradictory(text: str) -> None:
    r = parse_output(text)
    assert r.status == "unparseable", r
    assert r.reason == "contradictory: says safe but names hate"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # each read as its last line alone: "none" (empty) or {hate}
        ("Toxic: yes\nCategories: none", "flagged unsafe but no category given"),
        ("Unsafe: yes\nCategories: none", "flagged unsafe but no category given"),
        ("Flagged: yes\nCategories: none", "flagged unsafe but no category given"),
        ("Safe: no\nCategories: none", "flagged unsafe but no category given"),
        ("Toxic: no\nCategories: hate", "contradictory: says safe but names hate"),
        ("Harmful: false\nCategories: hate", "contradictory: says safe but names hate"),
    ],
)
def test_a_verdict_line_that_disagrees_with_the_categories_is_unparseable(
    text: str, reason: str
) -> None:
    r = parse_output(text)
    assert r.status == "unparseable" and r.reason == reason


@pytest.mark.parametrize(
    ("text", "status", "labels"),
    [
        ("Toxic: yes\nCategories: hate", "ok", {"hate"}),
        ("Toxic: no\nCategories: none", "empty", set()),
        ("Unsafe: yes\nHate: yes\nViolence: no", "partial", {"hate"}),
    ],
)
def test_a_verdict_line_that_agrees_with_the_categories_is_read(
    text: str, status: str, labels: set[str]
) -> None:
    r = parse_output(text)
    assert r.status == status and r.labels == labels


def test_safe_with_low_scores_is_not_contradictory() -> None:
    r = parse_output('{"flagged": false, "category_scores": {"hate": 0.01}}')
    assert r.status == "ok" and r.labels == frozenset() and r.graded


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            '{"hate": true} {"hate": false}',
            "contradictory: two JSON answers disagree (hate=1 vs no category)",
        ),
        (
            'First: {"hate": 0.9}. On reflection: {"hate": 0.2, "violence": 0.8}',
            "contradictory: two JSON answers disagree (hate=0.9 vs hate=0.2, violence=0.8)",
        ),
        (
            '```json\n{"hate": 1}\n```\nor\n```json\n{"fraud": 1}\n```',
            "contradictory: two code fences disagree (hate=1 vs fraud=1)",
        ),
    ],
)
def test_two_answers_that_disagree_are_flagged(text: str, reason: str) -> None:
    r = parse_output(text)
    assert (r.status, r.reason) == ("unparseable", reason)


def test_two_answers_that_agree_are_read_once() -> None:
    r = parse_output('{"hate": true} and, to repeat, {"hate": true}')
    assert (named_part(r)[0], r.labels, r.unknown) == ("ok", frozenset({"hate"}), ())
    r = parse_output('```json\n["hate"]\n```\nSame as ```["hate"]```')
    assert (r.status, r.labels) == ("ok", frozenset({"hate"}))


# ----------------------------------------------------------------------- reasoning blocks


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("<think>Is it hate? No, it is violence.</think>\nviolence", {"violence"}),
        ('<think>\nhate: yes? no.\n</think>\n\n{"fraud": true}', {"fraud"}),
        ("<THINK>hate</THINK> none", set()),
        ("<thinking>weighing hate</thinking>Categories: drugs", {"drugs"}),
        # a chat template that opens the block in the prompt: only the closing tag is seen
        ("The user mentions hate... </think>\n\nviolence", {"violence"}),
    ],
)
def test_a_leading_reasoning_block_is_not_the_answer(text: str, labels: set[str]) -> None:
    r = parse_output(text)
    assert named_part(r)[0] in ("ok", "empty") and r.labels == labels, r


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<think>hmm, hate maybe", "unterminated <think> reasoning block: no final answer"),
        ("<think>hate</think>   ", "no final answer after the </think> reasoning block"),
        ("hate?</think>", "no final answer after the </think> reasoning block"),
    ],
)
def test_a_reasoning_block_without_an_answer_is_unparseable(text: str, reason: str) -> None:
    r = parse_output(text)
    assert (r.status, r.reason) == ("unparseable", reason)


# ----------------------------------------------------------------------- the grammar


def test_degree_words_never_reach_a_yes_or_a_no() -> None:
    assert all(0.0 < v < 1.0 for v in DEGREE_WORDS.values())
    for word in ("low", "unlikely", "very low", "negligible", "minor"):
        assert DEGREE_WORDS[word] < 0.5, word
    for word in ("likely", "high", "severe", "very likely", "certain"):
        assert DEGREE_WORDS[word] > 0.5, word


@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("no", (0.0, False, None)),
        ("Not detected.", (0.0, False, None)),
        ("**Yes**", (1.0, False, None)),
        ("violated", (1.0, False, None)),
        ("possible", (0.5, True, None)),
        ("Highly likely", (0.95, True, None)),
        ("probability of 20%", (0.2, True, None)),
        ("likelihood: low", (0.2, True, None)),
        ("p=0.35", (0.35, True, None)),
        ("yes (0.9)", (0.9, True, None)),
        ("no (neutral mention)", (0.0, False, None)),
        ("yes - uses a slur", (1.0, False, None)),
        ("no hate speech detected", (0.0, False, None)),
        ("0", (0.0, True, None)),
        ("1", (1.0, True, None)),
    ],
)
def test_read_value(text: str, reading: tuple[float | None, bool, str | None]) -> None:
    assert read_value(text) == reading


@pytest.mark.parametrize(
    "text",
    [
        "yes - not hateful",  # read as 1.0: a note that denies was taken as a description
        "yes (not present)",
        "1 - none found",
        "0.0 - strongly present",  # read as 0.0: a note that affirms, beside a zero
        "no (clearly present)",
        "none - detected in the second sentence",
    ],
)
def test_a_value_beside_a_note_that_says_the_opposite_contradicts_itself(text: str) -> None:
    score, _, err = read_value(text)
    assert score is None and err is not None and "contradicts itself" in err


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("yes - uses a slur", 1.0),
        ("yes (no doubt)", 1.0),
        ("no (not present)", 0.0),
        ("no - nothing detected", 0.0),
        ("yes, present", 1.0),
        ("0.2 (some hostility detected)", 0.2),
    ],
)
def test_a_note_that_agrees_with_its_value_keeps_it(text: str, score: float) -> None:
    assert read_value(text)[0] == score


@pytest.mark.parametrize("text", ["no, but borderline", "unsure", "unclear", "not sure", "??"])
def test_read_value_does_not_guess(text: str) -> None:
    score, _, err = read_value(text)
    assert score is None and err is not None and "not understood" in err


# ----------------------------------------------------------------------- properties

# How a score is written in each style, and the precision the style keeps.
_SCORE_STYLES = ("number", "percent", "percent_space", "fraction10", "out_of_100")


def _written(v: float, style: str) -> tuple[str, float]:
    """``v`` written in ``style``, and the value the text states exactly."""
    if style == "number":
        return f"{v:.3f}", round(v, 3)
    if style == "percent":
        return f"{round(v * 100)}%", round(v * 100) / 100
    if style == "percent_space":
        return f"{round(v * 100)} %", round(v * 100) / 100
    if style == "fraction10":
        return f"{round(v * 10)}/10", round(v * 10) / 10
    return f"{round(v * 100)} out of 100", round(v * 100) / 100


@st.composite
def score_vectors(draw: st.DrawFn) -> dict[str, float]:
    cats = draw(st.lists(st.sampled_from(IDS), unique=True, min_size=1, max_size=6))
    return {c: draw(st.floats(0.0, 1.0, allow_nan=False)) for c in cats}


def _name(draw: st.DrawFn, cid: str) -> str:
    cat = TOX15.category(cid)
    return str(draw(st.sampled_from([cat.id, cat.name, cat.name.upper(), cat.name.lower()])))


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_property_graded_renderings_parse_back(data: st.DataObject) -> None:
    vec = data.draw(score_vectors())
    style = data.draw(st.sampled_from(_SCORE_STYLES))
    layout = data.draw(st.sampled_from(["json", "lines", "table", "bullets", "parens"]))
    written = {c: _written(v, style) for c, v in vec.items()}
    names = {c: _name(data.draw, c) for c in vec}
    if layout == "json":
        text = json.dumps({names[c]: w for c, (w, _) in written.items()})
    elif layout == "lines":
        text = "\n".join(f"{names[c]}: {w}" for c, (w, _) in written.items())
    elif layout == "table":
        head = data.draw(st.sampled_from(["Score", "Likelihood", "Probability"]))
        rows = [f"| {names[c]} | {w} |" for c, (w, _) in written.items()]
        text = "\n".join([f"| Category | {head} |", "|---|---|", *rows])
    elif layout == "bullets":
        text = "\n".join(f"- **{names[c]}**: {w}" for c, (w, _) in written.items())
    else:
        text = ", ".join(f"{names[c]} (score {w})" for c, (w, _) in written.items())
    r = parse_output(text)
    want = vector({c: x for c, (_, x) in written.items()})
    status, scores = named_part(r)
    assert status == ("ok" if any(want) else "empty"), (text, r)
    assert r.graded, text
    np.testing.assert_allclose(scores, want, rtol=0, atol=1e-12, err_msg=text)
    # every category it names is known, every other one unknown
    assert {IDS[i] for i in np.flatnonzero(r.known)} == set(vec), (text, r)


_YES = ["yes", "Yes", "YES", "true", "present", "detected", "flagged", "violated", "positive"]
_NO = ["no", "No", "false", "none", "absent", "negative", "not present", "Not detected", "N/A"]


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_property_yes_no_renderings_parse_back(data: st.DataObject) -> None:
    cats = data.draw(st.lists(st.sampled_from(IDS), unique=True, min_size=1, max_size=8))
    flags = {c: data.draw(st.booleans()) for c in cats}
    words = {c: data.draw(st.sampled_from(_YES if f else _NO)) for c, f in flags.items()}
    names = {c: _name(data.draw, c) for c in cats}
    layout = data.draw(st.sampled_from(["json", "lines", "table", "bullets", "numbered"]))
    if layout == "json":
        text = json.dumps({names[c]: w for c, w in words.items()})
    elif layout == "lines":
        text = "\n".join(f"{names[c]}: {w}" for c, w in words.items())
    elif layout == "table":
        rows = [f"| {names[c]} | {w} |" for c, w in words.items()]
        text = "\n".join(["| Category | Present? |", "| --- | :---: |", *rows])
    elif layout == "bullets":
        text = "\n".join(f"* {names[c]} - {w}" for c, w in words.items())
    else:
        text = "\n".join(f"{i + 1}. {names[c]}: {w}" for i, (c, w) in enumerate(words.items()))
    r = parse_output(text)
    positives = {c for c, f in flags.items() if f}
    status, scores = named_part(r)
    assert (status, r.labels, r.graded) == ("ok" if positives else "empty", positives, False), (
        text,
        r,
    )
    np.testing.assert_array_equal(scores, vector(dict.fromkeys(positives, 1.0)))


_NEGATED = [
    "{name}: not present",
    "{name}: no",
    "{name} - none detected",
    "{name}: none",
    "{name}: negative",
    "{name}: N/A",
    "{name} (not detected)",
    "{name}: absent",
    "{name}: false",
    "{name}: 0%",
    "{name}: 0/10",
    "{name}: not applicable",
    "{name}: no evidence",
    "- **{name}**: Not flagged",
    "| {name} | no |",
]


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_property_a_negated_rendering_is_never_a_positive(data: st.DataObject) -> None:
    cats = data.draw(st.lists(st.sampled_from(IDS), unique=True, min_size=1, max_size=5))
    lines = [data.draw(st.sampled_from(_NEGATED)).format(name=_name(data.draw, c)) for c in cats]
    text = "\n".join(lines)
    r = parse_output(text)
    status, scores = named_part(r)
    assert not scores.any() and not r.labels, (text, r)
    assert status == "empty", (text, r)
    # the named categories are negatives (or unknown: a table's prose lines are not read)
    assert not any(r.scores[IDS.index(c)] > 0.0 for c in cats), (text, r)
    if "|" not in text:
        assert all(r.scores[IDS.index(c)] == 0.0 for c in cats), (text, r)


@pytest.mark.parametrize(
    "text",
    [
        "hate: a" + " " * 100_000 + "b",
        "a" + " " * 100_000 + "b: no",
        "hate" + " " * 100_000 + "(no)",
        "hate:" + "\t" * 100_000 + "no",
        "hate: no (" + "a " * 100_000,
        "hate: " + "(" * 100_000,
        "| hate | no |\n" * 20_000,
        "x - " * 50_000 + "hate",
        "<think>" + "x" * 500_000,
    ],
    ids=[
        "spaces-value",
        "spaces-name",
        "spaces-paren",
        "tabs",
        "gloss",
        "parens",
        "table",
        "dashes",
        "think",
    ],
)
def test_long_runs_in_values_stay_linear(text: str) -> None:
    # a regex that backtracks over a long run of spaces would take minutes here
    r = parse_output(text)
    assert r.status in ("ok", "empty", "partial", "unparseable")


@pytest.mark.parametrize(
    "text",
    [
        # each read as hate 1.0: the 1 is the bottom of the scale the answer names
        "Scores (1-5):\nHate: 1\nViolence: 1",
        "Hate (1-5): 1",
        "Hate: 1 (on a 1-5 scale)",
        "Scale: 1-10\nHate: 1",
        '{"scale": "1-5", "hate": 1, "violence": 1}',
        '{"hate": {"score": 1, "max": 5}}',
        "Severity scores (0 = none, 3 = severe):\nHate: 0\nViolence: 1",
    ],
)
def test_scores_on_a_scale_the_answer_names_are_unparseable(text: str) -> None:
    r = parse_output(text)
    assert r.status == "unparseable" and "scale" in (r.reason or "")


def test_a_long_run_of_digits_beside_scores_is_read_like_a_short_one() -> None:
    # the scale pattern tried every split of a run of digits from each of its digits:
    # 50,000 digits took minutes (quadratic), now the same reading as a short run
    def answer(digits: str, tail: str = "") -> str:
        return json.dumps({"hate": 0.9, "violence": 0.1, "reason": f"score from {digits}{tail}"})

    short = parse_output(answer("7"))
    long = parse_output(answer("7" * 50_000))
    assert long.status == short.status == "partial"
    assert long.labels == short.labels == frozenset({"hate"})
    np.testing.assert_array_equal(long.scores, short.scores)
    # a scale named after the run is still found
    scaled = parse_output(answer("1" * 50_000, "-5 scale"))
    assert scaled.status == "unparseable" and "scale to 5" in (scaled.reason or "")


@pytest.mark.parametrize(
    "text",
    ["Scores (0-1):\nHate: 0.8", "Hate: 4/5", "Hate: 0.8\nThe target is 13-17 years old."],
)
def test_scores_on_the_unit_scale_or_with_their_own_scale_are_read(text: str) -> None:
    r = parse_output(text)
    assert r.status == "partial" and r.labels == frozenset({"hate"})


@pytest.mark.parametrize(
    "text",
    [
        "Unsafe. Categories: none",  # read as empty
        "Verdict: unsafe\nCategories: none",
        "safe\nunsafe\nS1",  # read as empty, "unsafe" and "S1" unrecognised
        "none\ntoxic",
    ],
)
def test_an_unsafe_verdict_beside_a_none_answer_is_unparseable(text: str) -> None:
    r = parse_output(text)
    assert r.status == "unparseable" and r.reason is not None
    assert "unsafe" in r.reason
