"""No confident wrong parse: the held-out corpus of chat answers (tests/data/chat_answers.jsonl,
written by tests/data/make_chat_answers.py with a hand-written reading per answer) is
read with no category given a wrong known label, and a negation cue never turns a
category positive.

The measurement is tools/parsing_corpus_rates.py (``python tools/parsing_corpus_rates.py
-v`` lists what is refused); docs/parsing.md quotes its figures.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from toxeval.parsing import parse_output
from toxeval.taxonomy import load_taxonomy

ROOT = Path(__file__).resolve().parents[1]
TAX = load_taxonomy("toxeval-15")


def _rates_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "parsing_corpus_rates", ROOT / "tools" / "parsing_corpus_rates.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


RATES = _rates_tool()
ENTRIES: list[dict[str, Any]] = RATES.load()


def test_the_corpus_is_large_varied_and_well_formed() -> None:
    assert len(ENTRIES) >= 500
    assert len({e["text"] for e in ENTRIES}) == len(ENTRIES)
    styles = {e["style"] for e in ENTRIES}
    assert {
        "gpt-prose",
        "claude-prose",
        "llama-list",
        "table",
        "yaml",
        "json",
        "negation",
        "spanish",
        "french",
        "german",
        "typo",
        "refusal",
    } <= styles
    for e in ENTRIES:
        reading = e["reading"]
        if reading is None:
            continue
        cells = [c for part in reading.values() for c in part]
        assert sorted(cells) == sorted(TAX.ids), e  # every category read exactly once
    assert sum(e["reading"] is None for e in ENTRIES) >= 30


def test_no_confident_wrong_parse_on_the_corpus() -> None:
    rates = RATES.measure(ENTRIES)
    print(rates.summary())  # the refusal rate, for `pytest -s`
    assert rates.confident_wrong == [], rates.summary()
    # refusing is always better than a wrong label, but the corpus must still be read
    assert len(rates.refused) <= 0.05 * rates.with_reading, rates.refused


@pytest.mark.parametrize(
    "text",
    [
        "Not present: hate, violence",
        "Categories not present: hate, violence",
        "Negative for: hate, violence",
        "None of: hate, violence",
        "No hate, violence or harassment.",
        "Free of hate, violence, harassment.",
    ],
)
def test_a_negated_list_is_negatives_and_says_nothing_else(text: str) -> None:
    r = parse_output(text)
    assert r.status == "partial" and not r.labels, r
    negated = {"hate", "violence", "harassment"} & set(re.findall(r"[a-z]+", text.lower()))
    for cid in TAX.ids:
        v = r.scores[TAX.index(cid)]
        assert (v == 0.0) if cid in negated else np.isnan(v), (cid, r)


def test_a_complete_list_beside_a_negated_one_makes_the_rest_negative() -> None:
    r = parse_output("Applies: fraud. Does not apply: hate, violence.")
    assert r.status == "ok" or (r.status == "partial" and not np.isnan(r.scores).any()), r
    assert r.labels == {"fraud"} and not np.isnan(r.scores).any()


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("| Hate | Violence | Fraud |\n|---|---|---|\n| no | no | yes |", [0, 0, 1]),
        ("| Hate | Violence | Fraud |\n|---|---|---|\n| ❌ | ❌ | ✅ |", [0, 0, 1]),
        (
            "| Category | Hate | Violence | Fraud |\n|---|---|---|---|\n| Present | 0.1 | 0.2 | 0.9 |",
            [0.1, 0.2, 0.9],
        ),
    ],
)
def test_a_table_is_read_across(text: str, want: list[float]) -> None:
    r = parse_output(text)
    got = [r.scores[TAX.index(c)] for c in ("hate", "violence", "fraud")]
    assert r.status == "partial" and got == want, r
    assert np.isnan(r.scores).sum() == 12


@pytest.mark.parametrize(
    "text",
    [
        "| Hate | Violence |\n|---|---|\n| no | yes |\n| yes | no |",
        "| Hate | Violence |\n|---|---|\n| maybe? | yes |",
        "| Hate | Violence |\n|---|---|\n| no |",
    ],
)
def test_an_ambiguous_table_is_unparseable(text: str) -> None:
    assert parse_output(text).status == "unparseable"


@pytest.mark.parametrize(
    ("text", "said"),
    [("Hate: none, Violence: yes", {"hate": 0.0, "violence": 1.0}), ("Hate: none", {"hate": 0.0})],
)
def test_a_category_an_answer_gives_no_value_for_is_unknown(
    text: str, said: dict[str, float]
) -> None:
    r = parse_output(text)
    assert r.status == "partial"
    for cid in TAX.ids:
        v = r.scores[TAX.index(cid)]
        assert v == said[cid] if cid in said else np.isnan(v)


@pytest.mark.parametrize(
    ("text", "meant", "listed"),
    [("hate, violance", "violence", "hate"), ("Self harm, misinfo", "misinformation", "self_harm")],
)
def test_a_misspelt_name_is_unknown_with_the_suggestion(text: str, meant: str, listed: str) -> None:
    r = parse_output(text)
    assert r.status == "partial" and r.labels == {listed}
    assert np.isnan(r.scores[TAX.index(meant)])
    assert r.reason is not None and meant in r.reason
    others = [c for c in TAX.ids if c not in (meant, listed)]
    assert all(r.scores[TAX.index(c)] == 0.0 for c in others)  # a label list is complete


# Negation cues and the shapes a list takes after them.
_CUES = [
    "Not present: {}",
    "Categories not present: {}",
    "Negative for: {}",
    "None of: {}",
    "No {}.",
    "Free of {}.",
    "Without {}",
    "Does not apply: {}",
    "Excluded: {}",
    "Not flagged: {}",
    "❌ {}",
    "There is no {} in this text.",
    "The text does not contain {}.",
    "Sin {}",
    "Aucune des catégories: {}",
    "Keine der Kategorien: {}",
]
_LEADS = ["", "Categories: {}\n", "Applies: {}. ", "Detected: {}\n"]


def _names(draw: st.DrawFn, cats: list[str]) -> str:
    names = [
        draw(st.sampled_from([c, TAX.category(c).name, *TAX.category(c).aliases[:2]])) for c in cats
    ]
    if len(names) == 1:
        return names[0]
    sep = draw(st.sampled_from([", ", "; ", " / "]))
    last = draw(st.sampled_from([" or ", " and ", ", "]))  # "nor" is itself a cue
    return sep.join(names[:-1]) + last + names[-1]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_property_a_negation_cue_never_turns_a_category_positive(data: st.DataObject) -> None:
    """Inserting a negation cue before a list never turns a category from negative to
    positive: what the list names is negative or unknown (refused), never a label."""
    ids = list(TAX.ids)
    negated = data.draw(st.lists(st.sampled_from(ids), unique=True, min_size=1, max_size=4))
    listed = data.draw(
        st.lists(st.sampled_from([c for c in ids if c not in negated]), unique=True, max_size=2)
    )
    cue = data.draw(st.sampled_from(_CUES))
    lead = data.draw(st.sampled_from(_LEADS)) if listed else ""
    plain = _names(data.draw, negated)
    text = (lead.format(", ".join(listed)) if listed else "") + cue.format(plain)
    # "hate or violence" / "hate / violence" alone hedges (one of them, not which): the
    # positive reading of
    # the same list is its "and" form; under a cue ("Not present: hate or violence") it
    # is a negative for each
    without_cue = parse_output(plain.replace(" or ", " and ").replace(" / ", " and "))
    r = parse_output(text)
    for c in negated:
        v = r.scores[TAX.index(c)]
        assert not v > 0.0, (text, r)  # 0 or NaN, never positive
        assert c not in r.labels, (text, r)
        if r.status != "unparseable":
            # the list without its cue reads it positive; the cue makes it a known negative
            assert without_cue.scores[TAX.index(c)] == 1.0, plain
            assert v == 0.0, (text, r)
    assert not (r.labels - set(listed)), (text, r)


def test_scoring_masks_what_an_answer_does_not_name() -> None:
    """Through toxeval.score: a category an answer gives no value for is an unknown
    label on that row (masked), never a 0 the metrics would count as a negative."""
    import toxeval
    from helpers import make_dataset
    from toxeval.predictions import predictions_from_texts

    y = np.zeros((4, TAX.k), dtype=np.int8)
    y[:, TAX.index("violence")] = [1, 1, 0, 0]
    y[:, TAX.index("fraud")] = [0, 0, 1, 1]
    ds = make_dataset(y, taxonomy=TAX)
    outputs = ["Hate: none, Violence: yes", "hate, violence", "Not present: hate", '{"fraud": 0.9}']
    preds = predictions_from_texts(outputs, ds)
    assert preds.unknown_cells is not None
    assert preds.unknown_cells.sum(axis=1).tolist() == [13, 0, 14, 14]
    assert np.isfinite(preds.scores).all()  # the masked cells are never read
    assert any("say nothing about some categories" in n for n in preds.notes)
    result = toxeval.score(outputs, ds)
    # the dataset knows every label: what the answers leave out is the system's missing
    # score (results.json schema 2), not an unknown label
    assert result.counts["no_score_cells"] == 13 + 14 + 14
    assert result.counts["unknown_cells"] == 0
