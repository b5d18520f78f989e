"""Null predictions and failed requests: a null ``scores``, ``labels`` or ``output`` (or
an empty CSV cell, a Parquet null) and a row with an ``error`` are unscored rows, counted
and reported, never negatives and never folded into a figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import write_jsonl
from toxeval import metrics, score
from toxeval.predictions import PredictionError, read_predictions

S = {
    "r1": [0.9, 0.1, 0.2],
    "r2": [0.2, 0.8, 0.1],
    "r3": [0.7, 0.6, 0.3],
    "r4": [0.1, 0.25, 0.9],
    "r5": [0.3, 0.2, 0.1],
    "r6": [0.6, 0.4, 0.8],
}
CATS = ("alpha", "beta", "gamma")


def _obj(rid: str) -> dict[str, float]:
    return dict(zip(CATS, S[rid], strict=True))


def _expected_map(ds: Any, unscored: set[str]) -> float:
    keep = np.array([i not in unscored for i in ds.ids])
    s = np.array([S[i] for i in ds.ids])[keep]
    return float(
        metrics.average_precision_score(ds.y_true[keep], s, average="macro", mask=ds.mask[keep])
    )


@pytest.mark.parametrize("first_null", [True, False])
def test_null_scores_are_unscored_not_an_error(
    tmp_path: Path, small_dataset: Any, first_null: bool
) -> None:
    rows = [{"id": i, "scores": _obj(i)} for i in S]
    nulled = 0 if first_null else 3
    rows[nulled]["scores"] = None
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    res = score(p, small_dataset)
    rid = rows[nulled]["id"]
    assert res.counts["null_prediction"] == 1
    assert res.counts["scored"] == 5 and res.counts["excluded"] == 1
    assert res.figures["map"] == pytest.approx(_expected_map(small_dataset, {rid}), abs=1e-12)
    assert any("null prediction" in n and repr(rid) in n for n in res.notes)


def test_null_labels_are_unscored_not_no_categories(tmp_path: Path, small_dataset: Any) -> None:
    rows: list[dict[str, Any]] = [{"id": i, "labels": ["alpha"]} for i in S]
    rows[1]["labels"] = None
    rows[4]["labels"] = []  # an empty list: known, no category
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    res = score(p, small_dataset)
    assert res.counts["null_prediction"] == 1
    assert res.counts["scored"] == 5


def test_null_output_is_unscored_not_unparseable(tmp_path: Path, small_dataset: Any) -> None:
    rows: list[dict[str, Any]] = [{"id": i, "output": "alpha"} for i in S]
    rows[2]["output"] = None
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    res = score(p, small_dataset)
    assert res.counts["null_prediction"] == 1
    assert res.parse is not None
    assert sum(res.parse["status_counts"].values()) == 5  # the null row is not parsed


def test_failed_request_is_unscored_and_counted(tmp_path: Path, small_dataset: Any) -> None:
    rows: list[dict[str, Any]] = [{"id": i, "scores": _obj(i), "error": None} for i in S]
    rows[0] = {"id": "r1", "scores": None, "error": "HTTP 503 after 5 attempts"}
    rows[5]["error"] = "timeout"  # scores present but the request failed: not trusted
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    res = score(p, small_dataset)
    assert res.counts["failed_request"] == 2 and res.counts["null_prediction"] == 0
    assert res.counts["scored"] == 4
    assert res.system["failed"]["first"][0] == {"id": "r1", "error": "HTTP 503 after 5 attempts"}
    assert any("HTTP 503" in n for n in res.notes)
    assert res.figures["map"] == pytest.approx(
        _expected_map(small_dataset, {"r1", "r6"}), abs=1e-12
    )


def test_every_row_null_is_a_clear_error(tmp_path: Path, small_dataset: Any) -> None:
    p = write_jsonl(tmp_path / "p.jsonl", [{"id": i, "scores": None} for i in S])
    with pytest.raises(PredictionError, match=r"no dataset row has a usable prediction.*6 null"):
        score(p, small_dataset)


def test_csv_empty_cells_are_null(tmp_path: Path, small_dataset: Any) -> None:
    lines = ["id,alpha,beta,gamma"] + [
        f"{i}," + ("" if i == "r2" else ",".join(map(str, S[i]))) for i in S
    ]
    lines[2] = "r2,,,"
    p = tmp_path / "p.csv"
    p.write_text("\n".join(lines) + "\n")
    res = score(p, small_dataset)
    assert res.counts["null_prediction"] == 1 and res.counts["scored"] == 5
    # an empty labels cell is null; a quoted "" is an empty label list
    p2 = tmp_path / "l.csv"
    p2.write_text('id,labels\nr1,alpha\nr2,\nr3,""\nr4,gamma\nr5,beta\nr6,alpha\n')
    res2 = score(p2, small_dataset)
    assert res2.counts["null_prediction"] == 1 and res2.counts["scored"] == 5


def test_csv_partly_empty_score_row_is_still_an_error(tmp_path: Path, small_dataset: Any) -> None:
    p = tmp_path / "p.csv"
    rows = "".join(f"{i},0.1,{'' if i == 'r4' else 0.5},0.2\n" for i in S)
    p.write_text("id,alpha,beta,gamma\n" + rows)
    with pytest.raises(PredictionError, match="row id 'r4': no score for 'beta'"):
        read_predictions(p, small_dataset)


@pytest.mark.parametrize("form", ["struct", "vector", "labels", "output"])
def test_parquet_nulls_are_unscored(tmp_path: Path, small_dataset: Any, form: str) -> None:
    ids = list(S)
    values: list[Any]
    if form == "struct":
        values = [_obj(i) for i in ids]
    elif form == "vector":
        values = [S[i] for i in ids]
    elif form == "labels":
        values = [["alpha"] for _ in ids]
    else:
        values = ["alpha" for _ in ids]
    values[3] = None
    col = {"struct": "scores", "vector": "scores", "labels": "labels", "output": "output"}[form]
    p = tmp_path / "p.parquet"
    pq.write_table(pa.table({"id": ids, col: values}), p)
    res = score(p, small_dataset)
    assert res.counts["null_prediction"] == 1 and res.counts["scored"] == 5
