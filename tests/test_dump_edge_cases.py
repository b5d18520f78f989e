"""Prediction dumps a user may well write: forms of prediction mixed in one file (two
dumps joined; a JSONL file's form is decided by its first line), companion columns
beside the predictions, and ids that differ only in Unicode normalisation or
whitespace, in every file format."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import toxeval
from helpers import write_csv, write_jsonl
from toxeval.predictions import PredictionError
from toxeval.taxonomy import load_taxonomy

TAX = load_taxonomy("toxeval-15")
NFC = unicodedata.normalize("NFC", "caf\u00e9")
NFD = unicodedata.normalize("NFD", NFC)
IDS = [NFC, NFD, "a", "a ", " a", "1", "01", "x\u200b", "x", "A"]


def _vector(hit: bool) -> list[float]:
    return [0.9 if hit else 0.1] + [0.0] * (TAX.k - 1)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    rows = [
        {"id": i, "text": "t", "labels": ["hate"] if n % 2 == 0 else []} for n, i in enumerate(IDS)
    ]
    return write_jsonl(tmp_path / "ds.jsonl", rows)


def _rows(form: str) -> list[dict[str, Any]]:
    """One prediction per id, the first two rows in ``scores`` and the rest in ``form``."""
    out: list[dict[str, Any]] = []
    for n, i in enumerate(IDS):
        hit = n % 2 == 0
        if n < 2 or form == "scores":
            out.append({"id": i, "scores": _vector(hit)})
        elif form == "labels":
            out.append({"id": i, "labels": ["hate"] if hit else []})
        else:
            out.append({"id": i, "hate": 0.9 if hit else 0.1})
    return out


@pytest.mark.parametrize("form", ["labels", "columns"])
def test_a_jsonl_dump_mixing_forms_is_an_error_not_null_rows(
    dataset: Path, tmp_path: Path, form: str
) -> None:
    dump = write_jsonl(tmp_path / "p.jsonl", _rows(form))
    with pytest.raises(PredictionError, match="8 rows give their prediction in") as e:
        toxeval.score(dump, dataset, bootstrap=0, on_mismatch="drop")
    assert "'scores'" in str(e.value) and "id 'a'" in str(e.value)


def test_a_parquet_dump_mixing_forms_is_an_error(dataset: Path, tmp_path: Path) -> None:
    hit = [n % 2 == 0 for n in range(len(IDS))]
    table = pa.table(
        {
            "id": IDS,
            "scores": [_vector(h) if n < 5 else None for n, h in enumerate(hit)],
            "labels": [None if n < 5 else (["hate"] if h else []) for n, h in enumerate(hit)],
        }
    )
    pq.write_table(table, tmp_path / "p.parquet")
    with pytest.raises(PredictionError, match="5 rows give their prediction in 'labels'"):
        toxeval.score(tmp_path / "p.parquet", dataset, bootstrap=0)


def test_a_companion_label_column_is_not_a_second_form(dataset: Path, tmp_path: Path) -> None:
    # scores with their thresholded labels beside them; a row without scores is a null
    # prediction, counted, whatever its labels say
    rows = [{**r, "labels": ["hate"] if r["scores"][0] > 0.5 else []} for r in _rows("scores")]
    rows[3] = {"id": IDS[3], "scores": None, "labels": []}
    result = toxeval.score(write_jsonl(tmp_path / "p.jsonl", rows), dataset, bootstrap=0)
    assert result.counts["null_prediction"] == 1 and result.counts["scored"] == 9


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_ids_differing_in_normalisation_or_whitespace_stay_apart(
    dataset: Path, tmp_path: Path, fmt: str
) -> None:
    # each id gets its own row's score, in reverse order: a join that folded any two
    # of these ids together would swap a positive and a negative
    rows = list(reversed(_rows("scores")))
    if fmt == "jsonl":
        dump = write_jsonl(tmp_path / "p.jsonl", rows)
    elif fmt == "csv":
        dump = write_csv(
            tmp_path / "p.csv", ["id", *TAX.ids], [[r["id"], *r["scores"]] for r in rows]
        )
    else:
        dump = tmp_path / "p.parquet"
        cols = {c: [r["scores"][k] for r in rows] for k, c in enumerate(TAX.ids)}
        pq.write_table(pa.table({"id": [r["id"] for r in rows], **cols}), dump)
    result = toxeval.score(dump, dataset, bootstrap=0)
    assert result.counts["scored"] == len(IDS)
    assert result.rows is not None
    expected = np.array([_vector(n % 2 == 0) for n in range(len(IDS))])
    np.testing.assert_array_equal(result.rows.scores, expected)
    assert json.loads(json.dumps(result.to_dict()))["counts"]["missing_prediction"] == 0


@pytest.mark.parametrize("mapping", [None, "llama-guard-3"])
def test_llama_guard_verdicts_leave_unreached_categories_unknown(
    tmp_path: Path, mapping: str | None
) -> None:
    # Llama Guard 3 has no code for harassment, extremism or profanity: its verdict says
    # nothing about them (the runner reads a live Llama Guard the same way)
    n = 12
    rows = [
        {"id": f"r{i}", "text": "t", "labels": ["harassment"] if i % 3 == 0 else ["violence"]}
        for i in range(n)
    ]
    ds = write_jsonl(tmp_path / "ds.jsonl", rows)
    outputs = ["unsafe\nS1" if i % 2 else "safe" for i in range(n)]
    outputs[0] = "harassment, violence"  # a label list names harassment: known there
    dump = write_jsonl(
        tmp_path / "p.jsonl", [{"id": f"r{i}", "output": o} for i, o in enumerate(outputs)]
    )
    result = toxeval.score(dump, ds, mapping=mapping, bootstrap=0)
    by_id = {c["id"]: c for c in result.per_category}
    unreached = ("harassment", "extremism", "profanity")
    for cid in unreached:  # the dataset knows these labels: the system gives no score
        assert by_id[cid]["no_score"] == n - 1, cid
        assert by_id[cid]["unknown"] == 0, cid
    assert by_id["harassment"]["support"] == 1
    assert by_id["violence"]["unknown"] == by_id["violence"]["no_score"] == 0
    assert result.counts["no_score_cells"] == (n - 1) * len(unreached)
    assert result.counts["unknown_cells"] == 0
    assert result.rows is not None and not result.rows.mask[1:, TAX.index("profanity")].any()
    assert any("Llama Guard verdicts" in note for note in result.notes)


@pytest.mark.parametrize(
    ("ids", "line", "said"),
    [((0.0, 1.0), 1, "a float (0.0)"), ((1, 2.5), 2, "a float (2.5)"), (("a", True), 2, "a bool")],
)
def test_an_id_that_is_not_a_string_or_integer_is_named(
    dataset: Path, tmp_path: Path, ids: tuple[Any, ...], line: int, said: str
) -> None:
    # float ids read "Column(/id) changed from string to number", naming no line
    dump = write_jsonl(tmp_path / "p.jsonl", [{"id": i, "scores": _vector(True)} for i in ids])
    with pytest.raises(PredictionError, match=re.escape(f"line {line}: field 'id' is {said}")):
        toxeval.score(dump, dataset, bootstrap=0, on_mismatch="drop")
