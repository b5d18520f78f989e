"""Every answer style of tests/data/answer_corpus.jsonl parses to its expected vector and
status.

The corpus (written by tests/data/make_answer_corpus.py, expected vectors from how each
answer was written, not from the parser) covers JSON variants, markdown tables, bullet
and numbered lists, "Category: value" lines, Llama Guard, refusals, hedged prose,
reasoning blocks, junk, and every value form of docs/parsing.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import named_part
from toxeval.parsing import STATUSES, parse_output, parse_outputs
from toxeval.taxonomy import load_taxonomy

CORPUS = Path(__file__).parent / "data" / "answer_corpus.jsonl"
ENTRIES: list[dict[str, Any]] = [
    json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line
]


def test_the_corpus_is_large_and_well_formed() -> None:
    assert len(ENTRIES) >= 300
    assert len({e["text"] for e in ENTRIES}) == len(ENTRIES)  # no duplicate answers
    for e in ENTRIES:
        assert e["status"] in STATUSES and e["note"]
        ids = load_taxonomy(e["taxonomy"]).ids
        assert set(e["expected"]) <= set(ids), e
    for status in STATUSES:
        assert any(e["status"] == status for e in ENTRIES), status


@pytest.mark.parametrize("e", ENTRIES, ids=[f"{i}-{e['note'][:30]}" for i, e in enumerate(ENTRIES)])
def test_corpus_entry(e: dict[str, Any]) -> None:
    tax = load_taxonomy(e["taxonomy"])
    r = parse_output(e["text"], tax)
    want = [float(e["expected"].get(c, 0.0)) for c in tax.ids]
    # the corpus gives what each answer says about the categories it names; those it
    # leaves out are unknown (NaN), which named_part checks
    status, scores = named_part(r)
    assert status == e["status"], (e, r)
    np.testing.assert_allclose(scores, want, rtol=0, atol=1e-12, err_msg=e["text"])
    if "reason" in e:
        assert r.reason is not None and e["reason"] in r.reason, (e, r.reason)


def test_the_corpus_as_one_batch_matches_row_by_row() -> None:
    b = parse_outputs([e["text"] for e in ENTRIES])
    for i, e in enumerate(ENTRIES):
        assert named_part(b[i])[0] == e["status"], e
        r = parse_output(e["text"])
        np.testing.assert_array_equal(b.scores[i], r.scores, err_msg=e["text"])
        assert (b.reasons[i], b.unknown[i], b.labels[i]) == (r.reason, r.unknown, r.labels)
    counts = b.status_counts()
    assert counts == {s: int(np.sum(b.statuses == s)) for s in STATUSES}
    named = [named_part(b[i])[0] for i in range(len(b))]
    assert named == [e["status"] for e in ENTRIES]
