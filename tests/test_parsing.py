"""Tests for toxeval.parsing: free-text model outputs turned into label vectors.

Named cases for every accepted form, property tests that render a random label set in
many output styles and parse it back exactly, and a fuzz test that nothing raises.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import toxeval.parsing as parsing
import toxeval.parsing.llama_guard as llama_guard
from helpers import examples, named_part
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toxeval.parsing import (
    DEFAULT_LLAMA_GUARD_MAPPING,
    STATUSES,
    ParsedBatch,
    ParseResult,
    UnparseableOutputError,
    parse_output,
    parse_outputs,
)
from toxeval.parsing.answer import Acc, norm_name
from toxeval.taxonomy import Taxonomy, load_mapping, load_taxonomy, normalize_label

TOX15 = load_taxonomy("toxeval-15")
TOX15_IDS = [c.id for c in TOX15.categories]

# ----------------------------------------------------------------------------- fixtures

CUSTOM5_TOML = textwrap.dedent(
    """
    name = "custom-5"
    version = "1"

    [[category]]
    id = "insult"
    name = "Insults"
    aliases = ["name calling", "put-down"]

    [[category]]
    id = "threat"
    name = "Threats of violence"
    aliases = ["intimidation", "menace"]

    [[category]]
    id = "spam"
    name = "Spam"
    aliases = ["junk mail", "advertising"]

    [[category]]
    id = "self_harm"
    name = "Self-harm"
    aliases = ["suicide", "self injury"]

    [[category]]
    id = "doxxing"
    name = "Doxxing"
    aliases = ["personal information leak"]
    """
)

CUSTOM2_TOML = textwrap.dedent(
    """
    name = "binary-2"
    version = "1"

    [[category]]
    id = "toxic_speech"
    name = "Toxic speech"
    aliases = ["toxicity", "abuse"]

    [[category]]
    id = "scam"
    name = "Scams"
    aliases = ["phishing"]
    """
)


def _write_mapping(path: Path, target: str, ids: tuple[str, ...]) -> Path:
    lines = [
        'name = "test-guard"',
        'source = "test Llama Guard codes"',
        f"target = {json.dumps(target)}",
        "",
        "[map]",
    ]
    lines += [f'S{i + 1} = ["{cid}"]' for i, cid in enumerate(ids)]
    lines.append(f"S{len(ids) + 1} = []")  # a code with no counterpart in the taxonomy
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    parsing.clear_caches()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("parsing")
    c5 = d / "custom5.toml"
    c5.write_text(CUSTOM5_TOML, encoding="utf-8")
    c2 = d / "custom2.toml"
    c2.write_text(CUSTOM2_TOML, encoding="utf-8")
    return {
        "custom5": c5,
        "custom2": c2,
        "map15": _write_mapping(d / "map15.toml", "toxeval-15", TOX15.ids),
        "map5": _write_mapping(d / "map5.toml", str(c5), load_taxonomy(c5).ids),
        "map2": _write_mapping(d / "map2.toml", str(c2), load_taxonomy(c2).ids),
    }


def p(text: str, **kw: object) -> ParseResult:
    return parse_output(text, **kw)  # type: ignore[arg-type]


def check_invariants(r: ParseResult, tax: Taxonomy) -> None:
    assert r.status in STATUSES
    assert r.scores.shape == (tax.k,)
    assert r.scores.dtype == np.float64
    silent = np.isnan(r.scores)  # categories the answer says nothing about
    if silent.any():
        assert r.status == "partial" and r.reason and "no value for" in r.reason, r
        assert not r.labels & {tax.ids[i] for i in np.flatnonzero(silent)}
    assert np.array_equal(r.known, ~silent)
    s = np.where(silent, 0.0, r.scores)
    assert np.all(np.isfinite(s))
    assert np.all((s >= 0.0) & (s <= 1.0))
    assert r.labels <= set(tax.ids)
    if r.reason is not None:
        assert not r.reason.startswith("parser error"), r.reason
    if r.status == "unparseable":
        assert r.reason
        assert not r.labels
        assert not r.scores.any()
    elif r.status == "partial":
        assert (r.unknown or silent.any()) and r.reason
    elif r.status == "empty":
        assert not r.labels and not r.scores.any() and not r.unknown
    else:
        assert not r.unknown
        assert r.scores.any()
    if not r.graded:
        assert set(np.unique(s)) <= {0.0, 1.0}
        assert r.labels == {tax.ids[i] for i in np.flatnonzero(s)}


# ----------------------------------------------------------------------------- named cases

OK_CASES: list[tuple[str, set[str]]] = [
    # plain lists of ids, names, aliases
    ("hate", {"hate"}),
    ("hate, violence", {"hate", "violence"}),
    ("Hate,Violence", {"hate", "violence"}),
    ("HATE; harassment", {"hate", "harassment"}),
    ("hate & violence + weapons", {"hate", "violence", "weapons"}),
    ("hate\nviolence\n", {"hate", "violence"}),
    ("- hate\n- Self-harm\n- drugs", {"hate", "self_harm", "drugs"}),
    ("* Hate\n* Fraud and scams", {"hate", "fraud"}),
    ("• violence\n• weapons", {"violence", "weapons"}),
    ("1. hate\n2. violence", {"hate", "violence"}),
    ("1) sexual\n2) Sexual content involving minors", {"sexual", "sexual_minors"}),
    ("sexual_minors", {"sexual_minors"}),
    ("self harms", {"self_harm"}),
    ("SELF_HARM.", {"self_harm"}),
    ("Privacy Violations!", {"privacy"}),
    ("hate and violence", {"hate", "violence"}),
    ("hate violence", {"hate", "violence"}),
    ("hate - violence", {"hate", "violence"}),
    ('"hate", "violence"', {"hate", "violence"}),
    # lead-ins and markdown
    ("Categories: hate, harassment", {"hate", "harassment"}),
    ("Final answer: violence", {"violence"}),
    ("The categories are:\n- hate\n- fraud", {"hate", "fraud"}),
    ("**Categories:** `hate`, `drugs`", {"hate", "drugs"}),
    ("Labels = [hate, violence]", {"hate", "violence"}),
    ("Hate - attacks on a protected group", {"hate"}),
    ("Detected: misinformation", {"misinformation"}),
    # JSON lists
    ('["hate", "violence"]', {"hate", "violence"}),
    ('["Self-harm", "Other non-violent crime"]', {"self_harm", "crime"}),
    ("['hate', 'violence',]", {"hate", "violence"}),
    ("[hate, violence]", {"hate", "violence"}),
    # JSON objects of bools / yes-no strings
    ('{"hate": true, "violence": false}', {"hate"}),
    ('{"Hate": "yes", "Violence": "no", "drugs": "Yes"}', {"hate", "drugs"}),
    ("{'hate': True, 'violence': False,}", {"hate"}),
    ('{"hate": false, "violence": true}', {"violence"}),
    # nested forms
    ('{"categories": ["hate", "self-harm"]}', {"hate", "self_harm"}),
    ('{"labels": {"hate": true, "sexual": false}}', {"hate"}),
    ('{"unsafe": true, "categories": ["hate"]}', {"hate"}),
    ('{"safe": false, "violated_categories": "hate, fraud"}', {"hate", "fraud"}),
    ('[{"category": "hate"}, {"category": "violence"}]', {"hate", "violence"}),
    ('{"hate": {"flagged": true}, "violence": {"flagged": false}}', {"hate"}),
    ('{"hate": true, "reasoning": "uses a slur"}', {"hate"}),
    # JSON in fences and prose
    ('```json\n{"hate": true}\n```', {"hate"}),
    ('```\n["violence"]\n```', {"violence"}),
    ("```\nhate, drugs\n```", {"hate", "drugs"}),
    ('Sure. Here is the result:\n```json\n["fraud"]\n```\nLet me know.', {"fraud"}),
    ('My analysis: {"categories": ["extremism"]} (high confidence)', {"extremism"}),
    ('I think [see note 1] the answer is ["profanity"].', {"profanity"}),
    ("unsafe\nhate, violence", {"hate", "violence"}),
    ("hate, fraud\n\nExplanation: the text uses a slur and, also, a scam.", {"hate", "fraud"}),
    ("Categories: violence\nReasoning: it describes an attack", {"violence"}),
    ("Reasoning: the text insults a group, badly.\nFinal answer: hate", {"hate"}),
    (
        "Let me think step by step.\nIt mentions a scam.\n\n**Categories:** fraud, crime",
        {"fraud", "crime"},
    ),
]


@pytest.mark.parametrize(("text", "expected"), OK_CASES, ids=[c[0][:40] for c in OK_CASES])
def test_ok_forms(text: str, expected: set[str]) -> None:
    r = p(text)
    status, scores = named_part(r)
    assert status == "ok", r
    assert r.labels == expected
    assert not r.graded
    assert scores.tolist() == [1.0 if i in expected else 0.0 for i in TOX15.ids]
    check_invariants(r, TOX15)


GRADED_CASES: list[tuple[str, dict[str, float]]] = [
    ('{"hate": 0.9, "violence": 0.1}', {"hate": 0.9, "violence": 0.1}),
    ('{"Hate": 1, "sexual": 0}', {"hate": 1.0}),
    ('{"scores": {"hate": 0.75}}', {"hate": 0.75}),
    (
        '{"category_scores": {"hate": 0.93, "violence": 0.02}, "flagged": true}',
        {"hate": 0.93, "violence": 0.02},
    ),
    (
        '[{"category": "hate", "score": 0.8}, {"label": "violence", "probability": 0.3}]',
        {"hate": 0.8, "violence": 0.3},
    ),
    ('{"hate": {"score": 0.6}}', {"hate": 0.6}),
    ('{"hate": "0.7"}', {"hate": 0.7}),
    ('```json\n{"drugs": 0.55, "weapons": 0.45}\n```', {"drugs": 0.55, "weapons": 0.45}),
    ('Scores follow {"fraud": 0.61} as requested', {"fraud": 0.61}),
    ("hate: 0.9\nviolence: 0.1", {"hate": 0.9, "violence": 0.1}),
    ("hate (0.92), violence (20%)", {"hate": 0.92, "violence": 0.2}),
    ("{'hate': 0.4, 'crime': 0.8,}", {"hate": 0.4, "crime": 0.8}),
]


@pytest.mark.parametrize(("text", "expected"), GRADED_CASES, ids=[c[0][:40] for c in GRADED_CASES])
def test_graded_forms_keep_scores(text: str, expected: dict[str, float]) -> None:
    r = p(text)
    status, scores = named_part(r)
    assert status == "ok", r
    assert r.graded
    want = np.array([expected.get(i, 0.0) for i in TOX15.ids])
    np.testing.assert_array_equal(scores, want)
    assert r.labels == {k for k, v in expected.items() if v >= 0.5}
    check_invariants(r, TOX15)


def test_threshold_semantics() -> None:
    # labels are score >= threshold; the score vector is never thresholded.
    r = p('{"hate": 0.5, "violence": 0.4999, "drugs": 0.2}')
    assert r.labels == {"hate"}
    assert r.scores[TOX15.index("violence")] == 0.4999
    r = p('{"hate": 0.5, "violence": 0.4999, "drugs": 0.2}', threshold=0.2)
    assert r.labels == {"hate", "violence", "drugs"}
    # all scores below the threshold: still "ok" for what it names (the vector is not
    # all zero); the categories it leaves out are unknown, so the row is partial.
    r = p('{"hate": 0.1}')
    assert named_part(r)[0] == "ok" and r.labels == frozenset() and r.graded
    assert r.status == "partial" and np.isnan(r.scores).sum() == 14
    # an all-zero graded vector is "empty" for what it names.
    r = p('{"hate": 0, "violence": 0.0}')
    assert named_part(r)[0] == "empty" and r.graded
    with pytest.raises(ValueError, match="threshold"):
        p("hate", threshold=1.5)


EMPTY_CASES = [
    "none",
    "None.",
    "NONE",
    "safe",
    "Safe",
    "no categories",
    "No categories.",
    "not toxic",
    "Non-toxic",
    "benign",
    "N/A",
    "n/a",
    "[]",
    "{}",
    "```json\n[]\n```",
    '{"categories": []}',
    '{"unsafe": false}',
    '{"safe": true}',
    '{"flagged": false, "categories": {"hate": false, "violence": false}}',
    '{"hate": false, "violence": false}',
    "Categories: none",
    "Answer: N/A",
    "The text is safe.",
    "This content appears to be benign",
    "none of the above",
]


@pytest.mark.parametrize("text", EMPTY_CASES)
def test_empty_forms(text: str) -> None:
    r = p(text)
    status, scores = named_part(r)
    assert status == "empty", r
    assert r.labels == frozenset()
    assert not scores.any()
    check_invariants(r, TOX15)


UNPARSEABLE_CASES: list[tuple[str, str]] = [
    ("", "empty output"),
    ("   \n ", "empty output"),
    ("I can't help with that.", "refusal"),
    ("I'm sorry, but I cannot assist with this request.", "refusal"),
    ("As an AI language model, I do not classify content.", "refusal"),
    ("I won't do that", "refusal"),
    # names joined by "/" or "or" say one of them, not which
    ("hate / violence / weapons", "not which"),
    ("spam, eggs", "no category recognised: 'spam', 'eggs'"),
    ("The weather is nice today", "no category recognised"),
    ('{"hate": NaN}', "NaN"),
    ('{"hate": 1.5}', "outside [0, 1]"),
    ('{"hate": -0.1}', "outside [0, 1]"),
    ('{"hate": Infinity}', "outside [0, 1]"),
    ("hate: 1.7", "outside [0, 1]"),
    ('{"hate": 0.9, "violence": NaN}', "NaN"),
    ('{"spam": 0.9}', "no category recognised: 'spam'"),
    ('["spam"]', "no category recognised"),
    ('{"unsafe": true, "categories": []}', "flagged unsafe but no category"),
    ('{"safe": false}', "flagged unsafe but no category"),
    ("unsafe", "without category codes"),
    ("{", "malformed JSON"),
    ('{"hate": tru', "malformed JSON"),
    ("[[[[", "malformed JSON"),
    ("42", "no category"),
    ("Categories:", "nothing after it"),
    ('{"hate": [1, 2]}', ""),
]


@pytest.mark.parametrize(
    ("text", "reason"), UNPARSEABLE_CASES, ids=[c[0][:40] for c in UNPARSEABLE_CASES]
)
def test_unparseable_forms(text: str, reason: str) -> None:
    r = p(text)
    assert r.status == "unparseable", r
    assert r.reason is not None and reason in r.reason, r.reason
    check_invariants(r, TOX15)


def test_refusal_has_no_unknown_names() -> None:
    r = p("I can't help with that.")
    assert r.unknown == ()
    assert r.reason is not None and r.reason.startswith("refusal")


PARTIAL_CASES: list[tuple[str, set[str], tuple[str, ...]]] = [
    ("hate, spam", {"hate"}, ("spam",)),
    ("- violence\n- clickbait\n- Drugs", {"violence", "drugs"}, ("clickbait",)),
    ('["hate", "spam"]', {"hate"}, ("spam",)),
    ('{"hate": true, "spam": true}', {"hate"}, ("spam",)),
    ('{"hate": 0.8, "spam": 0.3}', {"hate"}, ("spam",)),
]


@pytest.mark.parametrize(
    ("text", "labels", "unknown"), PARTIAL_CASES, ids=[c[0][:40] for c in PARTIAL_CASES]
)
def test_partial_lists_unknown_names(text: str, labels: set[str], unknown: tuple[str, ...]) -> None:
    r = p(text)
    assert r.status == "partial", r
    assert r.labels == labels
    assert r.unknown == unknown
    assert r.reason is not None and all(u in r.reason for u in unknown)
    check_invariants(r, TOX15)


UNPLACED_CASES: list[tuple[str, set[str], tuple[str, ...]]] = [
    ("Catégories : haine, violence", {"violence"}, ("haine",)),
    ("Kategorien: Hass, Gewalt, violence", {"violence"}, ("Hass", "Gewalt")),
    ('["haine", "violence"]', {"violence"}, ("haine",)),
    ("hate, spam", {"hate"}, ("spam",)),
    ("- violence\n- clickbait\n- Drugs", {"violence", "drugs"}, ("clickbait",)),
]


@pytest.mark.parametrize(
    ("text", "labels", "unknown"), UNPLACED_CASES, ids=[c[0][:40] for c in UNPLACED_CASES]
)
def test_a_listed_name_the_taxonomy_lacks_leaves_the_rest_unknown(
    text: str, labels: set[str], unknown: tuple[str, ...]
) -> None:
    """A list that names something the taxonomy does not hold ("haine" is French for
    hate) does not say the categories it leaves out are negative: any of them may be
    meant. They are unknown (NaN), never 0: "haine, violence" once scored hate 0."""
    r = p(text)
    assert r.status == "partial", r
    assert r.labels == labels and r.unknown == unknown
    for j, cat in enumerate(TOX15.categories):
        if cat.id in labels:
            assert r.scores[j] == 1.0
        else:
            assert np.isnan(r.scores[j]), (cat.id, r.scores)
    assert r.reason is not None and "may name any category" in r.reason
    check_invariants(r, TOX15)


@pytest.mark.parametrize(
    "text",
    [
        "After analyzing, I conclude: harassment",
        "Categories: harassment\nConfidence: high",
        "After careful review, the content falls under the following categories:\n\n1. harassment",
    ],
)
def test_prose_around_a_list_keeps_it_complete(text: str) -> None:
    """Lead-in prose and meta fields beside a list are not names of categories: the
    list still says what it leaves out is negative."""
    r = p(text)
    assert r.labels == {"harassment"}
    assert not np.isnan(r.scores).any(), r.scores
    assert r.reason is None or "may name any category" not in r.reason


_TABLE = "| Category | Present |\n|---|---|\n| hate | yes |\n| violence | no |\n\n"


@pytest.mark.parametrize(
    "after",
    [
        "On reflection, hate does not apply either.",
        "Correction: none of the categories apply.",
        "Violence also applies.",
        "Violence: yes",
    ],
)
def test_prose_that_takes_a_table_back_is_a_contradiction(after: str) -> None:
    """The table is the answer and prose around it is not read, unless it takes part of
    the table back: then which answer is meant is not known (hate 1 / violence 0 were
    kept as confident labels)."""
    r = p(_TABLE + after)
    assert r.status == "unparseable", r
    assert r.reason is not None and r.reason.startswith("contradictory")


@pytest.mark.parametrize(
    ("after", "complete"),
    [
        ("Hate: yes", False),
        ("The text is hateful toward a group.", False),
        ("All other categories: no", True),
    ],
)
def test_prose_that_agrees_with_a_table_keeps_it(after: str, complete: bool) -> None:
    r = p(_TABLE + after)
    assert r.labels == {"hate"} and r.scores[2] == 0.0
    assert (not np.isnan(r.scores).any()) == complete, r.scores


@pytest.mark.parametrize(
    "text",
    [
        '{"hate": 1, "violence": 1}\nActually, hate does not apply.',
        '["hate", "violence"]\n\nOn second thought, remove hate.',
        "Labels: [hate, violence] - wait, remove hate.",
        'Answer: ["hate"]. Correction: none apply.',
        '```json\n["hate", "violence"]\n```\nOn reflection hate does not apply.',
    ],
)
def test_prose_that_takes_json_or_a_fence_back_is_a_contradiction(text: str) -> None:
    """JSON in prose and code fences: prose beside them that takes part of the answer
    back is a contradiction (each kept hate 1)."""
    r = p(text)
    assert r.status == "unparseable", r
    assert r.reason is not None and r.reason.startswith("contradictory")


@pytest.mark.parametrize(
    "text",
    [
        'Here is my answer:\n{"hate": 0.9, "violence": 0.1}\nThe text is hateful but not violent.',
        'The text is not violent but hateful:\n{"hate": 0.9, "violence": 0.1}',
        'Here is the JSON:\n```json\n{"hate": 0.9, "violence": 0.1}\n```\nThe text is hateful.',
    ],
)
def test_prose_that_agrees_with_json_keeps_it(text: str) -> None:
    r = p(text)
    assert r.labels == {"hate"} and r.status == "partial", r


def test_a_phrase_that_speaks_of_a_category_again_is_not_a_known_value() -> None:
    """ "Violence: no" then "Actually, violence also applies" (it kept violence 0), or a
    list then "Correction: only violence" (it kept hate 1): the answer changes itself,
    so which one it means is not known; a phrase that only mentions a category beside
    its value leaves that category unknown."""
    for text in (
        "Hate: yes\nViolence: no\n\nActually, violence also applies.",
        "hate, violence\nCorrection: only violence.",
    ):
        r = p(text)
        assert r.status == "unparseable", r
        assert r.reason is not None and "takes part of the answer back" in r.reason
    r = p("Hate: yes\nViolence: no\nviolance")
    assert r.labels == {"hate"}
    assert np.isnan(r.scores[TOX15_IDS.index("violence")]), r.scores


def test_unknown_name_scored_zero_is_not_partial() -> None:
    # an unrecognised key with a false/zero value loses nothing.
    r = p('{"hate": true, "spam": false}')
    assert named_part(r)[0] == "ok" and r.unknown == ()


def test_non_str_raises_type_error() -> None:
    for bad in (None, 3, b"hate", ["hate"], {"hate": 1}):
        with pytest.raises(TypeError, match="expects the model output as a str"):
            parse_output(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="row 1 is NoneType"):
        parse_outputs(["hate", None])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="row 2 is int"):
        parse_outputs(["hate", "violence", 7])  # type: ignore[list-item]


def test_scores_are_read_only() -> None:
    r = p("hate")
    with pytest.raises(ValueError):
        r.scores[0] = 0.5
    assert p("hate").scores[TOX15.index("hate")] == 1.0  # the cached result is intact


# ----------------------------------------------------------------------------- Llama Guard


def test_llama_guard_with_explicit_mapping(files: dict[str, Path]) -> None:
    m = load_mapping(files["map15"])
    r = p("unsafe\nS1,S10", mapping=m)
    assert r.status == "ok" and r.labels == {TOX15.ids[0], TOX15.ids[9]}
    assert p("safe", mapping=m).status == "empty"
    assert p("Unsafe\nS3, s5\n", mapping=m).labels == {TOX15.ids[2], TOX15.ids[4]}
    # a path works as well as a LabelMapping
    assert p("unsafe\nS2", mapping=str(files["map15"])).labels == {TOX15.ids[1]}
    # a code the mapping does not know may cover any category: the row is unparseable,
    # not scored 0 in the categories S1 leaves out
    r = p("unsafe\nS1,S99", mapping=m)
    assert r.status == "unparseable" and r.reason is not None
    assert "'S99' is not in mapping" in r.reason and m.name in r.reason
    # a code that maps to no category of the taxonomy: a valid all-zero answer, explained
    r = p("unsafe\nS16", mapping=m)
    assert r.status == "empty" and r.reason is not None and "S16" in r.reason
    # codes listed without the verdict line still resolve through an explicit mapping
    assert p("S1, S2", mapping=m).labels == {TOX15.ids[0], TOX15.ids[1]}


def test_llama_guard_default_mapping_absent_is_graceful(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llama_guard, "DEFAULT_LLAMA_GUARD_MAPPING", "no-such-mapping-xyz")
    r = p("unsafe\nS1,S10")
    assert r.status == "unparseable"
    assert r.reason is not None
    assert "no-such-mapping-xyz" in r.reason and "mapping=" in r.reason
    assert p("safe").status == "empty"  # 'safe' needs no mapping


def test_llama_guard_default_mapping_used_when_present(
    monkeypatch: pytest.MonkeyPatch, files: dict[str, Path]
) -> None:
    def fake(name: str | Path) -> object:
        if name == DEFAULT_LLAMA_GUARD_MAPPING:
            return load_mapping(files["map15"])
        return load_mapping(name)

    monkeypatch.setattr(llama_guard, "load_mapping", fake)
    r = p("unsafe\nS1,S10")
    assert r.status == "ok" and r.labels == {TOX15.ids[0], TOX15.ids[9]}


def test_llama_guard_default_mapping_for_other_taxonomy(
    monkeypatch: pytest.MonkeyPatch, files: dict[str, Path]
) -> None:
    monkeypatch.setattr(
        llama_guard,
        "load_mapping",
        lambda name: (
            load_mapping(files["map15"])
            if name == DEFAULT_LLAMA_GUARD_MAPPING
            else load_mapping(name)
        ),
    )
    r = parse_output("unsafe\nS1", load_taxonomy(files["custom2"]))
    assert r.status == "unparseable" and r.reason is not None and "targets" in r.reason


# ----------------------------------------------------------------------------- batches


def test_parse_outputs_matches_parse_output(files: dict[str, Path]) -> None:
    texts = (
        [c[0] for c in OK_CASES + GRADED_CASES] + EMPTY_CASES + [c[0] for c in UNPARSEABLE_CASES]
    )
    texts += [c[0] for c in PARTIAL_CASES] + ["hate"] * 5
    b = parse_outputs(texts)
    assert isinstance(b, ParsedBatch)
    assert len(b) == len(texts)
    assert b.scores.shape == (len(texts), TOX15.k) and b.scores.dtype == np.float64
    assert b.statuses.shape == (len(texts),)
    assert b.graded  # some rows carry scores
    for i, t in enumerate(texts):
        r = p(t)
        assert b.statuses[i] == r.status
        assert b.labels[i] == r.labels
        assert b.unknown[i] == r.unknown
        assert b.reasons[i] == r.reason
        np.testing.assert_array_equal(b.scores[i], r.scores)
        row = b[i]
        assert row.status == r.status and row.graded == r.graded
    counts = b.status_counts()
    assert list(counts) == list(STATUSES)
    assert sum(counts.values()) == len(texts)
    assert counts["unparseable"] == len(UNPARSEABLE_CASES)
    assert counts == {s: sum(p(t).status == s for t in texts) for s in STATUSES}
    assert counts["partial"] >= len(PARTIAL_CASES)


def test_batch_graded_flag_and_binary() -> None:
    b = parse_outputs(["hate", "violence, drugs", "none"])
    assert not b.graded and b.is_binary
    assert b.status_counts() == {"ok": 2, "partial": 0, "empty": 1, "unparseable": 0}
    b = parse_outputs(["hate", '{"hate": 0.3}'])
    assert b.graded and not b.is_binary
    b = parse_outputs([])
    assert b.scores.shape == (0, TOX15.k) and b.status_counts()["ok"] == 0


def test_apply_policy() -> None:
    b = parse_outputs(["hate", "I can't help with that", "none"])
    # the default leaves the refusal out: an unreadable answer is not a "no"
    assert b.apply_policy()[1].tolist() == [True, False, True]
    scores, keep = b.apply_policy("zeros")
    assert keep.tolist() == [True, True, True] and not scores[1].any()
    scores, keep = b.apply_policy("exclude")
    assert keep.tolist() == [True, False, True]
    with pytest.raises(
        UnparseableOutputError, match=r"1 of 3 outputs are unparseable.*row 1: refusal"
    ):
        b.apply_policy("error")
    with pytest.raises(ValueError, match="unknown unparseable-row policy"):
        b.apply_policy("drop")  # type: ignore[arg-type]
    ok = parse_outputs(["hate"])
    assert ok.apply_policy("error")[1].tolist() == [True]


def test_custom_k2_taxonomy(files: dict[str, Path]) -> None:
    tax = load_taxonomy(files["custom2"])
    assert parse_output("toxic speech, phishing", tax).labels == {"toxic_speech", "scam"}
    assert parse_output("Abuse", str(files["custom2"])).labels == {"toxic_speech"}
    r = parse_output('{"toxicity": 0.8, "scams": 0.1}', tax)
    assert r.graded and r.scores.tolist() == [0.8, 0.1]
    r = parse_output("hate", tax)  # a toxeval-15 id means nothing here
    assert r.status == "unparseable" and r.unknown == ("hate",)
    b = parse_outputs(["scam", "none", "unsafe\nS2"], tax, mapping=files["map2"])
    assert b.scores.shape == (3, 2)
    assert b.labels == [frozenset({"scam"}), frozenset(), frozenset({"scam"})]


def test_taxonomy_category_called_safe_wins(tmp_path: Path) -> None:
    f = tmp_path / "t.toml"
    f.write_text(
        '[[category]]\nid = "safe"\nname = "Safe"\n[[category]]\nid = "unsafe_x"\nname = "Bad"\n',
        encoding="utf-8",
    )
    assert parse_output("safe", load_taxonomy(f)).labels == {"safe"}


# ----------------------------------------------------------------------------- property tests

TAXONOMIES = ("toxeval-15", "custom5", "custom2")


def _tax(files: dict[str, Path], key: str) -> tuple[Taxonomy, Path]:
    if key == "toxeval-15":
        return TOX15, files["map15"]
    mp = files["map5"] if key == "custom5" else files["map2"]
    return load_taxonomy(files[key]), mp


def _names(tax: Taxonomy, cid: str) -> list[str]:
    """Every spelling of ``cid`` (id, name, aliases) that resolves to it on its own."""
    cat = tax.category(cid)
    out = []
    for n in (cat.id, cat.name, *cat.aliases):
        if tax.resolve(n) != cid or any(ch in n for ch in ",;|\n"):
            continue
        if parse_output(n, tax).labels != {cid}:
            continue
        out.append(n)
    return out or [cid]


@st.composite
def spelled(draw: st.DrawFn, tax: Taxonomy, cid: str) -> str:
    """A name, id or alias of ``cid`` in random case, word separators and plural."""
    name = draw(st.sampled_from(_names(tax, cid)))
    words = normalize_label(name).split() if draw(st.booleans()) else [name]
    seps = [draw(st.sampled_from([" ", "_", "-", "  ", " - "])) for _ in words[1:]]
    text = words[0] + "".join(s + w for s, w in zip(seps, words[1:], strict=True))
    if draw(st.booleans()) and normalize_label(text + "s") == normalize_label(text):
        text += "s"
    text = "".join(c.upper() if draw(st.booleans()) else c.lower() for c in text)
    if normalize_label(text) != normalize_label(name):
        text = name  # a separator changed the words; keep the original spelling
    text += draw(st.sampled_from(["", "", ".", "!"]))
    return text


NONE_WORDS = ["none", "None.", "safe", "No categories", "N/A", "not toxic", "benign"]


@st.composite
def rendered(
    draw: st.DrawFn, tax: Taxonomy, mapping_path: Path
) -> tuple[str, frozenset[str], dict[str, object]]:
    """(output text, the label set it encodes, parse_output keyword arguments)."""
    ids = list(tax.ids)
    chosen = draw(st.lists(st.sampled_from(ids), unique=True, max_size=len(ids)))
    labels = frozenset(chosen)
    style = draw(
        st.sampled_from(
            [
                "json_bool",
                "json_scores",
                "json_list",
                "json_names",
                "fenced",
                "prose_json",
                "nested",
                "comma_ids",
                "newline_ids",
                "bullets",
                "numbered",
                "lead_in",
                "names",
                "llama_guard",
            ]
        )
    )
    kw: dict[str, object] = {}
    others = [i for i in ids if i not in labels]

    def obj_bools() -> str:
        keys = chosen + draw(st.lists(st.sampled_from(others), unique=True)) if others else chosen
        order = draw(st.permutations(keys)) if keys else []
        return json.dumps({k: k in labels for k in order})

    def as_list(items: list[str], sep: str) -> str:
        return sep.join(items) if items else draw(st.sampled_from(NONE_WORDS))

    spell: Callable[[str], str] = lambda cid: draw(spelled(tax, cid))  # noqa: E731
    if style == "json_bool":
        text = obj_bools()
    elif style == "json_scores":
        hi = st.floats(0.5, 1.0)
        lo = st.floats(0.0, 0.5, exclude_max=True)
        obj = {k: draw(hi) for k in chosen}
        if others:
            obj.update({k: draw(lo) for k in draw(st.lists(st.sampled_from(others), unique=True))})
        text = json.dumps(obj)
        kw["_scores"] = obj
    elif style == "json_list":
        text = json.dumps(chosen)
    elif style == "json_names":
        text = json.dumps([spell(c) for c in chosen])
    elif style == "fenced":
        inner = draw(st.sampled_from([obj_bools(), json.dumps(chosen)]))
        lang = draw(st.sampled_from(["json", "JSON", ""]))
        text = f"Here is my analysis.\n```{lang}\n{inner}\n```\nLet me know if you need more."
    elif style == "prose_json":
        text = f"Sure! The answer is {json.dumps({'categories': chosen})} based on the text."
    elif style == "nested":
        key = draw(st.sampled_from(["categories", "labels", "violated_categories"]))
        flag = {"unsafe": bool(chosen)} if draw(st.booleans()) else {}
        text = json.dumps({**flag, key: chosen})
    elif style == "comma_ids":
        # (" / " and " or " join names an answer hedges between: refused, tested apart)
        text = as_list(chosen, draw(st.sampled_from([",", ", ", " , ", ";", " & "])))
    elif style == "newline_ids":
        text = as_list(chosen, "\n")
    elif style == "bullets":
        b = draw(st.sampled_from(["- ", "* ", "• "]))
        text = as_list([b + spell(c) for c in chosen], "\n")
    elif style == "numbered":
        text = as_list([f"{i + 1}. {spell(c)}" for i, c in enumerate(chosen)], "\n")
    elif style == "lead_in":
        lead = draw(
            st.sampled_from(
                ["Categories", "Labels", "Answer", "Final answer", "Detected categories"]
            )
        )
        text = f"{lead}: " + as_list([spell(c) for c in chosen], ", ")
    elif style == "names":
        text = as_list([spell(c) for c in chosen], draw(st.sampled_from([", ", "\n", "; "])))
    else:
        codes = [f"S{ids.index(c) + 1}" for c in chosen]
        text = "unsafe\n" + ",".join(codes) if codes else "safe"
        kw["mapping"] = load_mapping(mapping_path)
    return text, labels, kw


@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_property_rendered_label_sets_parse_back(
    files: dict[str, Path], data: st.DataObject
) -> None:
    tax, mapping_path = _tax(files, data.draw(st.sampled_from(TAXONOMIES)))
    text, labels, kw = data.draw(rendered(tax, mapping_path))
    want_scores = kw.pop("_scores", None)
    r = parse_output(text, tax, **kw)  # type: ignore[arg-type]
    check_invariants(r, tax)
    assert r.labels == labels, (text, r)
    if want_scores is not None:
        assert isinstance(want_scores, dict)
        assert r.graded == bool(want_scores)
        want = np.array([float(want_scores.get(i, 0.0)) for i in tax.ids])
        status, scores = named_part(r)
        np.testing.assert_array_equal(scores, want)
        assert status == ("empty" if not want.any() else "ok")
    else:
        assert not r.graded
        status, scores = named_part(r)
        assert status == ("ok" if labels else "empty"), (text, r)
        assert scores.tolist() == [1.0 if i in labels else 0.0 for i in tax.ids]


FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    ",",
    ":",
    "\n",
    " ",
    "```",
    "```json\n",
    "hate",
    "Violence",
    "self-harm",
    "0.5",
    "1.5",
    "NaN",
    "-Infinity",
    "true",
    "null",
    "unsafe",
    "safe",
    "S1",
    "none",
    "categories",
    "I can't",
    "\\",
    "1e999",
    "-",
    "* ",
    "1. ",
    "/",
    ";",
    "é",
    "\x00",
    "\ud800",
    "categories:",
    "score",
    "'s",
    "99999999999999999999999",
]


@settings(max_examples=examples(500), deadline=None)
@given(
    st.one_of(st.text(max_size=200), st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
)
def test_fuzz_never_raises(text: str) -> None:
    for tax in (TOX15,):
        r = parse_output(text, tax)
        check_invariants(r, tax)


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_fuzz_never_raises_with_mapping_and_k2(files: dict[str, Path], data: st.DataObject) -> None:
    text = data.draw(
        st.lists(
            st.sampled_from([*FRAGMENTS, "toxic speech", "scam", "S2", "S3"]), max_size=30
        ).map("".join)
    )
    tax = load_taxonomy(files["custom2"])
    r = parse_output(text, tax, mapping=files["map2"])
    check_invariants(r, tax)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 50_000 + "]" * 50_000,
        "{" * 100_000,
        '{"a":' * 5000 + "1" + "}" * 5000,
        "hate, " * 20_000,
        "x" * 1_000_000,
        "```" * 1000,
        "'" + "a" * 100_000,
        '{"hate": ' + "9" * 10_000 + "}",
    ],
    ids=[
        "deep-list",
        "open-braces",
        "deep-object",
        "long-list",
        "long-word",
        "fences",
        "open-quote",
        "huge-int",
    ],
)
def test_adversarial_inputs_are_bounded(text: str) -> None:
    r = p(text)
    check_invariants(r, TOX15)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.one_of(
        st.text(max_size=40),
        st.text(alphabet="aAbBsS yY-_.,/'0123456789\té", max_size=40),
    )
)
def test_cached_normaliser_matches_taxonomy(text: str) -> None:
    parsing.clear_caches()
    assert norm_name(text) == normalize_label(text)
    assert norm_name(text) == normalize_label(text)  # cached


def test_huge_int_and_overflow_scores_are_unparseable() -> None:
    assert p('{"hate": 1e999}').status == "unparseable"
    assert math.isinf(float("1e999"))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("hate (nan%)", "'hate': score is NaN"),
        ("hate: NaN%", "'hate': score is NaN"),
        ("hate: nan", "'hate': score is NaN"),
        ("hate (inf%)", "'hate': score inf is outside [0, 1]"),
        ("hate: -inf%", "'hate': score -inf is outside [0, 1]"),
        ("hate: inf", "'hate': score inf is outside [0, 1]"),
    ],
)
def test_nan_and_inf_percentages_are_unparseable(text: str, reason: str) -> None:
    # a NaN / inf percentage is not a confident positive: it is an invalid score
    r = p(text)
    assert r.status == "unparseable"
    assert r.reason == reason
    assert not r.labels
    assert not r.scores.any()


@pytest.mark.parametrize(
    "text",
    [
        '{"hate": 0.9, "hate": 0.7}',
        '{"hate": 0.7, "hate": 0.9}',
        '{"scores": {"hate": 0.9, "hate": 0.7}}',
        '{"hate": "90%", "hate": "70%"}',
        "hate: 0.9, hate: 0.7",
    ],
)
def test_json_key_given_twice_keeps_the_larger_value(text: str) -> None:
    # docs/parsing.md: two values on the same side of 0.5: the larger is kept
    r = p(text)
    assert named_part(r)[0] == "ok"
    assert r.labels == frozenset({"hate"})
    assert r.scores[TOX15.index("hate")] == pytest.approx(0.9)


@pytest.mark.parametrize(
    "text",
    [
        '{"hate": 0.9, "hate": 0.1}',
        '{"hate": 0.1, "hate": 0.9}',
        '{"hate": false, "hate": true}',
        '{"hate": true, "racism": false}',
        '{"Hate speech": false, "Hateful content": true}',
        "hate: 0.9, hate: 0.1",
        "self harm: no; selfharm: yes",
    ],
)
def test_category_given_a_positive_and_a_negative_value_is_unparseable(text: str) -> None:
    # docs/parsing.md: which of the two values the answer means is not known
    r = p(text)
    assert named_part(r)[0] == "unparseable"
    assert "contradictory" in (r.reason or "")
    assert not r.labels


@pytest.mark.parametrize(
    ("text", "hate"),
    [
        ('{"hate": {"present": true, "confidence": 0.3}}', 1.0),
        ('{"hate": {"flagged": false, "confidence": 0.95}}', 0.0),
        ('{"hate": {"label": "no", "confidence": "high"}}', 0.0),
        ('[{"category": "hate", "present": false, "confidence": 0.9}]', 0.0),
        ('{"hate": {"confidence": 0.9}}', 0.9),
    ],
)
def test_confidence_beside_a_verdict_is_not_the_score(text: str, hate: float) -> None:
    # docs/parsing.md: "confidence" is how sure the model is of the verdict beside it
    r = p(text)
    assert r.scores[TOX15.index("hate")] == pytest.approx(hate)


def test_json_key_given_twice_with_a_bad_value_is_unparseable() -> None:
    # the earlier value is not silently dropped: its error counts
    r = p('{"hate": NaN, "hate": 0.9}')
    assert r.status == "unparseable"
    assert "NaN" in (r.reason or "")


def test_many_unknown_names_keep_order_and_dedup() -> None:
    names = [f"foo{i}" for i in range(20_000)]
    text = ", ".join(names + names[:5] + ["hate"])
    r = p(text)
    assert r.status == "partial"
    assert r.labels == frozenset({"hate"})
    assert list(r.unknown) == names  # first-seen order, each once
    # membership is a hash lookup, not a scan of the list (20k names were quadratic)
    acc = Acc()
    for n in ("b", "a", "b", " a ", "c"):
        acc.add_unknown(n)
    assert tuple(acc.unknown) == ("b", "a", "c")
    assert not isinstance(acc.unknown, list)


def test_no_private_name_is_imported_from_or_into_the_parsing_package() -> None:
    # toxeval.parsing is split into modules; what they share is public, so that a
    # private name never crosses a module (ARCHITECTURE.md, invariants).
    import ast

    from helpers import REPO

    crossing = []
    for path in sorted((REPO / "python" / "toxeval").rglob("*.py")):
        in_parsing = path.parent.name == "parsing"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
                continue
            module = node.module or ""
            from_parsing = module.startswith("toxeval.parsing") or (in_parsing and node.level)
            if not (from_parsing or in_parsing):
                continue
            for alias in node.names:
                if alias.name.startswith("_") or module.split(".")[-1].startswith("_"):
                    crossing.append(f"{path.relative_to(REPO)}:{node.lineno} {alias.name}")
    assert crossing == []


@pytest.mark.parametrize(
    ("text", "negatives", "positives"),
    [
        ('{"not_present": ["hate", "violence"]}', {"hate", "violence"}, set()),
        ('{"absent": ["hate"], "present": ["violence"]}', {"hate"}, {"violence"}),
        ("not_present:\n  - hate\n  - violence", {"hate", "violence"}, set()),
        (
            "### Present\n- Violence\n### Not present\n- Hate\n- Fraud",
            {"hate", "fraud"},
            {"violence"},
        ),
        (
            "### Not present\n- Hate\n- Fraud\n### Present\n- Violence",
            {"hate", "fraud"},
            {"violence"},
        ),
        ("Category | Present\n--- | ---\nHate | No\nViolence | Yes", {"hate"}, {"violence"}),
        (
            "| Category | Confidence | Present |\n|---|---|---|\n| Hate | 0.95 | No |\n"
            "| Violence | 0.60 | Yes |",
            {"hate"},
            {"violence"},
        ),
    ],
)
def test_negated_keys_headings_and_verdict_columns(
    text: str, negatives: set[str], positives: set[str]
) -> None:
    # docs/parsing.md: a negated list's names are negatives wherever the cue stands
    r = p(text)
    assert named_part(r)[0] in ("ok", "partial", "empty")
    assert r.labels == frozenset(positives)
    for c in negatives:
        assert r.known[TOX15.index(c)] and r.scores[TOX15.index(c)] == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "| Category | Not present |\n|---|---|\n| Hate | ✓ |\n| Violence | ✓ |",
        "| Category | Absent |\n|---|---|\n| Hate | yes |\n| Violence | no |",
    ],
)
def test_table_with_a_negated_value_column_is_unparseable(text: str) -> None:
    r = p(text)
    assert named_part(r)[0] == "unparseable"
    assert "negated" in (r.reason or "")


@pytest.mark.parametrize(
    "text",
    [
        "Nothing here is violent, hateful, or sexual.",
        "I cannot determine hate, violence, or fraud from this text.",
        "Please provide the text you want me to classify for hate, violence, etc.",
        "No, it's not free of violence.",
    ],
)
def test_a_sentence_split_at_its_commas_is_not_a_label_list(text: str) -> None:
    # docs/parsing.md: an item that is a sentence mentioning a category is prose
    r = p(text)
    assert r.status == "unparseable"
    assert not r.labels


@pytest.mark.parametrize(
    "text",
    [
        "I can't say it's not hate speech.",
        "I'm unable to say whether there is no violence.",
        "🔴 Hate\n🟢 Violence",
        "🚫 hate\n🚫 violence",
        "Not hate; not violence; profanity.",
        "Not present: none",
        "Not present: none of them",
    ],
)
def test_unsure_negations_and_unknown_signs_are_unparseable(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable"
    assert not r.labels


def test_decorative_emoji_bullets_are_bullets() -> None:
    r = p("🔹 hate\n🔹 violence")
    assert r.status == "ok"
    assert r.labels == frozenset({"hate", "violence"})


@pytest.mark.parametrize(
    ("text", "col", "value"),
    [
        ("Cybercrime (hacking): yes", "cybercrime", 1.0),
        ("Crime — theft: yes", "crime", 1.0),
        ("Hate (slurs): 0.3", "hate", 0.3),
    ],
)
def test_a_name_with_a_gloss_then_a_value_is_a_pair(text: str, col: str, value: float) -> None:
    # docs/parsing.md: a pair speaks only for the category it names
    r = p(text)
    assert r.status == "partial"
    assert r.scores[TOX15.index(col)] == pytest.approx(value)
    assert int(np.isnan(r.scores).sum()) == 14


@pytest.mark.parametrize(
    "text",
    [
        "Sexual (minors): no",
        "Categories: hate, etc.",
        "Categories: hate, violence, ...",
        "Categories: hate, among others",
        "Everything except profanity is absent.",
        "Harassment is present; hate speech is not present.",
        "Profanity: f***",
        "Profanity: s**t",
        "Hate: 0.9 (not hateful)",
        "| Category | Flagged | Score |\n|---|---|---|\n| Hate | no | 0.7 |",
        "| Category | Present | Present |\n|---|---|---|\n| Hate | No | Yes |",
        "hate (or violence)",
        "Harassment (could also be hate)",
    ],
)
def test_a_list_that_goes_on_or_a_gloss_naming_another_category_is_unparseable(
    text: str,
) -> None:
    r = p(text)
    assert r.status == "unparseable"


@pytest.mark.parametrize(
    "text",
    [
        "All categories except hate: no",  # the lead-in leaves hate out: not "none"
        "Every category except hate: none",
        "All categories but hate: no",
        "Everything but hate is absent",  # "but" after "everything" is an exception
        "All but hate are absent.",
    ],
)
def test_an_answer_for_every_category_but_one_never_reads_that_one_as_negative(
    text: str,
) -> None:
    # these read hate as 0 (status empty or partial): the exception was dropped
    r = p(text)
    assert r.status == "unparseable"


@pytest.mark.parametrize(
    "text",
    [
        '{"categories": ["hate"], "violence": 0.9}',  # read as violence 0, status ok
        '{"categories": ["hate"], "hate": 0}',  # read as hate 1, status ok
        '{"categories": [], "hate": true}',
    ],
)
def test_a_category_key_beside_a_container_that_disagrees_is_a_contradiction(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "contradictory" in (r.reason or "")


def test_category_keys_beside_a_container_that_agree_are_read() -> None:
    r = p('{"categories": ["hate"], "hate": 0.9, "violence": 0.1}')
    assert r.status == "ok" and r.labels == frozenset({"hate"})
    r = p('{"category_scores": {"hate": 0.9}, "violence": 0.8}')  # beside a score object
    assert r.scores[TOX15.index("violence")] == pytest.approx(0.8)


@pytest.mark.parametrize(
    "text",
    [
        "Categories: hate, violence. Answer: none",  # read as hate and violence, ok
        "Answer: none. Categories: hate",
        "Labels: hate. Verdict: none.",
    ],
)
def test_lead_in_answers_on_one_line_that_disagree_are_refused_as_on_two(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "disagree" in (r.reason or "")
    assert p(text.replace(". ", "\n")).status == "unparseable"


def test_lead_in_answers_on_one_line_that_agree_are_read() -> None:
    r = p("Categories: hate. Answer: hate")
    assert r.status == "ok" and r.labels == frozenset({"hate"})


def test_latin_words_with_cyrillic_or_greek_lookalike_letters_read_as_latin() -> None:
    # "Nоt present" with a Cyrillic "о" was no cue: "Nоt present:" was read as a lead-in
    # and hate and violence as positives, status ok
    r = p("N\u043et present: hate, violence")
    assert r.status == "partial" and r.labels == frozenset()
    assert r.scores[TOX15.index("hate")] == 0.0 and r.scores[TOX15.index("violence")] == 0.0
    assert p("h\u0430te").labels == frozenset({"hate"})  # a Cyrillic "а"
    assert p("hate: n\u03bf").scores[TOX15.index("hate")] == 0.0  # a Greek omicron
    assert p("\u043d\u0435\u0442").status == "unparseable"  # a Russian word stays one


def test_a_loose_bullet_list_under_a_negated_lead_is_one_list() -> None:
    # blank lines between the bullets: "violence" was read as a positive, status ok
    r = p("Absent:\n- hate\n\n- violence")
    assert r.status == "partial" and r.labels == frozenset()
    assert r.scores[TOX15.index("hate")] == 0.0 and r.scores[TOX15.index("violence")] == 0.0
    r = p("Absent:\n\n- hate\n\n- violence\n\nPresent:\n- fraud")
    assert r.status == "ok" and r.labels == frozenset({"fraud"})


@pytest.mark.parametrize(
    "text",
    [
        "Hate\nNo",  # read as the label list {hate}, status ok
        "**Hate**\nNo\n**Violence**\nYes",  # read as {hate, violence}
        "hate, no",
        '["hate", "no"]',
    ],
)
def test_a_bare_yes_or_no_after_a_name_is_refused_not_dropped(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "a value, not a label" in (r.reason or "")


@pytest.mark.parametrize(
    "text",
    [
        "- hate\n- violence\n\nThese are not present.",  # read as {hate, violence}, partial
        "1. hate\n2. violence\n\nBoth are absent.",
        "Categories: hate, violence\n(Neither applies.)",
        "hate and violence, neither present",
    ],
)
def test_a_negation_beside_a_label_list_refuses_its_positives(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "a negation beside the list" in (r.reason or "")


def test_the_final_answer_in_the_middle_of_a_line_is_the_answer() -> None:
    r = p("Initial thought: hate. Final answer: harassment.")
    assert r.status == "ok"
    assert r.labels == frozenset({"harassment"})


@pytest.mark.parametrize(
    "text",
    [
        "This is not not violent.",  # read as violence negative: "not" after a cue was filler
        "This is not not hateful.",
        "Not present: not hate.",
        "There is no not-violent reading.",
    ],
)
def test_a_double_negation_is_unparseable(text: str) -> None:
    # two denials in a row assert the category, or nothing clear: never a known negative
    r = p(text)
    assert r.status == "unparseable" and "a double negation" in (r.reason or "")


@pytest.mark.parametrize(
    "text",
    [
        "Hate -",  # read as {hate}: the dash of a missing value was stripped as an edge
        "Hate —\nViolence — no",
        "Hate -\nViolence -",
        "- Hate –\n- Violence – yes",
    ],
)
def test_a_name_and_a_dash_with_no_value_after_it_is_unparseable(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "no value given" in (r.reason or "")


@pytest.mark.parametrize(
    "text",
    [
        "hate. Actually, none.",  # read as {hate}: the "none" item was dropped
        "Answer: hate. Actually, on reflection, none apply.",
        "violence. Never mind, none apply.",
        "hate\nnone",
        "hate, safe",
    ],
)
def test_a_none_after_the_categories_is_unparseable(text: str) -> None:
    # a "none" after the names takes them back: which one is the answer is not known
    r = p(text)
    assert r.status == "unparseable" and "after" in (r.reason or "")


def test_a_none_before_the_categories_is_still_a_list_item() -> None:
    r = p("None of these apply\nhate")
    assert r.status == "ok" and r.labels == frozenset({"hate"})


@pytest.mark.parametrize(
    "text",
    [
        # each read as its score: hate 0.1 (under a "present": true) or 0.9 (under false)
        '{"hate": {"present": true, "score": 0.1}}',
        '{"hate": {"flagged": false, "score": 0.9}}',
        '{"hate": {"detected": "yes", "probability": "10%"}}',
        '[{"category": "hate", "present": false, "score": 0.8}]',
    ],
)
def test_a_json_verdict_and_score_that_disagree_are_unparseable(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "disagree" in (r.reason or "")


def test_a_json_verdict_and_score_that_agree_give_the_score() -> None:
    r = p('{"hate": {"present": true, "score": 0.8}, "violence": {"flagged": false, "score": 0.1}}')
    assert r.status == "partial" and r.labels == frozenset({"hate"}) and r.graded


@pytest.mark.parametrize(
    "text",
    [
        '{"hate": 0.9, "violence": 0.2, "final_answer": "none"}',  # read as hate 0.9
        '{"hate": true, "final_categories": ["violence"]}',  # read as hate
    ],
)
def test_a_final_answer_key_beside_category_keys_must_agree(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "contradictory" in (r.reason or "")


def test_a_final_answer_key_is_the_answer() -> None:
    r = p('{"reasoning": "it threatens him", "final_answer": ["violence", "harassment"]}')
    assert r.status == "ok" and r.labels == frozenset({"violence", "harassment"})


@pytest.mark.parametrize(
    "text",
    [
        # each read as its names positive: any words before a ":" were taken for a lead-in
        "Unlikely: hate, violence",
        "Least likely: hate",
        "Rejected: hate, violence\nAccepted: harassment",
        "Considered: hate, violence. Selected: harassment.",
        "Initially: hate\nRevised: harassment",
        "Possibly present: hate",
        "Could apply: hate",
        "Maybe: hate",
        "Detected: none. Potential: hate.",
        "Suspected: violence",
        "Probable: hate",
    ],
)
def test_a_lead_in_that_does_not_assert_its_list_is_unparseable(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "does not assert" in (r.reason or "")


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("After analyzing, I conclude: harassment", {"harassment"}),
        ("Present: hate", {"hate"}),
        ("Original answer: hate\nCorrected answer: harassment", {"harassment"}),
    ],
)
def test_a_lead_in_that_asserts_its_list_is_read(text: str, labels: set[str]) -> None:
    r = p(text)
    assert r.status != "unparseable" and r.labels == labels


@pytest.mark.parametrize(
    "text",
    [
        "Label: hate\nScore: 0.1",  # read as hate 1.0, 14 negatives: the score was dropped
        "Categories: hate\nProbability: 10%",
        "Hate: yes, confidence 0.1",
    ],
)
def test_a_low_score_beside_the_answer_is_unparseable(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "beside the answer" in (r.reason or "")


def test_a_high_score_beside_the_answer_keeps_it() -> None:
    r = p("Label: hate\nScore: 0.93")
    assert r.status != "unparseable" and r.labels == frozenset({"hate"})


@pytest.mark.parametrize(
    "text",
    [
        # read as a label list, the 13 categories not named negative: "clearly" was
        # taken for a description of violence
        "- Hate — not really\n- Violence — clearly",
        "Hate - no\nViolence - strongly",
        "Violence - obviously",
    ],
)
def test_one_word_after_a_dash_that_is_not_a_value_is_unparseable(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "not understood" in (r.reason or "")


def test_a_description_after_a_dash_still_names_the_category() -> None:
    r = p("Hate: no\nViolence - threats to kill")
    assert r.status == "ok" and r.labels == frozenset({"violence"})


@pytest.mark.parametrize(
    "text",
    [
        "Hate: yes\nAll categories: no",  # read as empty: the first line was dropped
        "Hate: yes\nViolence: no\nCategories: none",
        "- hate\n- violence\nCategories: harassment",
    ],
)
def test_an_answer_before_the_last_lead_in_must_agree_with_it(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "disagree" in (r.reason or "")


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("Reasoning: The text mentions hate speech but it is a quote.\nAnswer: none", set()),
        ("Hate: yes\nCategories: hate", {"hate"}),
    ],
)
def test_reasoning_before_the_last_lead_in_is_not_the_answer(text: str, labels: set[str]) -> None:
    r = p(text)
    assert r.status in ("ok", "empty") and r.labels == labels


@pytest.mark.parametrize(
    "text",
    [
        # read as {hate}: the first code fence is the answer and the text after it was
        # not read
        "```\nhate\n```\nActually, violence.",
        '```json\n{"categories": ["hate"]}\n```\nNote: on reflection this is not hate.',
        'Hate: yes\n```json\n{"categories": []}\n```',
    ],
)
def test_text_beside_a_code_fence_that_contradicts_it_is_unparseable(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "code fence" in (r.reason or "")


@pytest.mark.parametrize(
    "text",
    [
        'Here is my answer:\n```json\n{"categories": ["hate"]}\n```\nLet me know if you need more.',
        '```json\n{"categories": ["hate"]}\n```\nThe slur targets a protected group.',
        'Hate: yes\n```json\n{"categories": ["hate"]}\n```',
    ],
)
def test_text_beside_a_code_fence_that_agrees_or_says_nothing_keeps_it(text: str) -> None:
    r = p(text)
    assert r.status == "ok" and r.labels == frozenset({"hate"})


@pytest.mark.parametrize(
    "text",
    [
        "Hate, not violence, and harassment",  # read as harassment negative
        "hate, no violence, harassment",
    ],
)
def test_a_negation_in_the_middle_of_a_list_that_runs_on_is_unparseable(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "middle of a list" in (r.reason or "")


def test_a_negated_item_in_the_middle_of_a_list_is_read() -> None:
    r = p("hate, no violence")
    assert r.status == "ok" and r.labels == frozenset({"hate"})
    assert r.scores[TOX15.index("violence")] == 0.0


@pytest.mark.parametrize(
    "text",
    [
        # read as scores in [0, 1]: 1 on a 1-5 scale is its lowest, not 1.0
        "| Category | Score (1-5) |\n|---|---|\n| Hate | 1 |\n| Violence | 1 |",
        "| Category | Severity (0-3) |\n|---|---|\n| Hate | 0 |\n| Violence | 1 |",
        "| Category | Rating (out of 10) |\n|---|---|\n| Hate | 1 |",
        "| Category | Score /5 |\n|---|---|\n| Hate | 1 |",
    ],
)
def test_a_table_column_on_another_scale_is_unparseable(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "scale" in (r.reason or "")


def test_a_table_column_on_the_unit_scale_is_read() -> None:
    r = p("| Category | Score (0-1) |\n|---|---|\n| Hate | 0.8 |\n| Violence | 0.1 |")
    assert r.status == "partial" and r.labels == frozenset({"hate"}) and r.graded


@pytest.mark.parametrize(
    "text",
    ["Not safe.", "Not benign.", "The text is not harmless.", "It is not clean."],
)
def test_a_negated_safe_verdict_is_not_a_none_answer(text: str) -> None:
    # read as "empty" (every category negative): "not safe" says something is there
    r = p(text)
    assert r.status == "unparseable" and r.reason == "flagged unsafe but no category given"


def test_a_negated_safe_verdict_with_categories_is_read() -> None:
    r = p("Not safe. Categories: hate")
    assert r.status == "ok" and r.labels == frozenset({"hate"})


@pytest.mark.parametrize("text", ["Not unsafe.", "There are no violations.", "Not toxic."])
def test_a_negated_unsafe_verdict_is_a_none_answer(text: str) -> None:
    assert p(text).status == "empty"


def test_a_negation_in_commentary_after_the_answer_is_not_read() -> None:
    # read as violence positive: the negation reader ran before the commentary was cut
    r = p("Hate: No\nReason: not hate, but violence: yes")
    assert r.status == "partial" and r.labels == frozenset()
    assert r.known[TOX15.index("hate")] and not r.known[TOX15.index("violence")]


@pytest.mark.parametrize(
    "text",
    [
        '{"scores": {"hate": 0.9}, "categories": ["violence"]}',  # read as hate 0.9
        '{"category_scores": {"hate": 0.1}, "categories": ["hate"]}',  # read as hate 0.1
        '{"final_answer": ["violence"], "categories": ["hate"]}',  # read as violence
    ],
)
def test_two_containers_that_disagree_are_unparseable(text: str) -> None:
    r = p(text)
    assert r.status == "unparseable" and "containers disagree" in (r.reason or "")


def test_two_containers_that_agree_are_read() -> None:
    r = p('{"category_scores": {"hate": 0.9, "violence": 0.1}, "categories": ["hate"]}')
    assert r.labels == frozenset({"hate"}) and r.graded
