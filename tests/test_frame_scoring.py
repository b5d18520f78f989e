"""toxeval.score on tables of scores: pandas and polars DataFrames and pyarrow Tables are
scored by their column names (category ids, names or aliases), joined by an ``id``
column or in dataset row order; anything ambiguous is a clear PredictionError."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from helpers import write_jsonl
from toxeval import metrics, score
from toxeval.datasets import load_dataset
from toxeval.predictions import PredictionError

CATS = ["alpha", "beta", "gamma"]
S = np.array(
    [
        [0.9, 0.1, 0.2],
        [0.2, 0.8, 0.1],
        [0.7, 0.6, 0.3],
        [0.1, 0.25, 0.9],
        [0.3, 0.2, 0.15],
        [0.6, 0.4, 0.8],
    ]
)


def _to_pandas(d: dict[str, Any]) -> Any:
    return pd.DataFrame(d)


def _to_polars(d: dict[str, Any]) -> Any:
    return pl.DataFrame(d)


def _to_arrow(d: dict[str, Any]) -> Any:
    return pa.table(d)


MAKERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "pandas": _to_pandas,
    "polars": _to_polars,
    "arrow": _to_arrow,
}


def _expected(ds: Any, s: np.ndarray, rows: np.ndarray | None = None) -> tuple[float, float]:
    keep = np.ones(len(ds.ids), dtype=bool) if rows is None else rows
    y, m, sc = ds.y_true[keep], ds.mask[keep], s[keep]
    ap = float(metrics.average_precision_score(y, sc, average="macro", mask=m))
    lrl = float(metrics.label_ranking_loss(y, sc, mask=m))
    return ap, lrl


@pytest.mark.parametrize("lib", MAKERS)
def test_columns_by_id_name_or_alias_in_row_order(small_dataset: Any, lib: str) -> None:
    # "first" is alpha's alias, "Beta" beta's name; columns in another order than K
    frame = MAKERS[lib]({"gamma": S[:, 2], "first": S[:, 0], "Beta": S[:, 1]})
    res = score(frame, small_dataset)
    ap, lrl = _expected(small_dataset, S)
    assert res.figures["map"] == pytest.approx(ap, abs=1e-12)
    assert res.figures["label_ranking_loss"] == pytest.approx(lrl, abs=1e-12)
    assert res.counts["scored"] == 6


@pytest.mark.parametrize("lib", MAKERS)
def test_an_id_column_joins_by_id(small_dataset: Any, lib: str) -> None:
    order = [3, 0, 5, 1, 4, 2]
    frame = MAKERS[lib](
        {
            "id": [small_dataset.ids[i] for i in order],
            **{c: S[order, k] for k, c in enumerate(CATS)},
        }
    )
    res = score(frame, small_dataset)
    assert res.figures["map"] == pytest.approx(_expected(small_dataset, S)[0], abs=1e-12)


@pytest.mark.parametrize("lib", MAKERS)
def test_a_row_of_nulls_is_an_unscored_row(small_dataset: Any, lib: str) -> None:
    cols: dict[str, Any] = {c: [float(v) for v in S[:, k]] for k, c in enumerate(CATS)}
    for c in CATS:
        cols[c][4] = None
    res = score(MAKERS[lib](cols), small_dataset)
    assert res.counts["null_prediction"] == 1 and res.counts["scored"] == 5
    keep = np.arange(6) != 4
    assert res.figures["map"] == pytest.approx(_expected(small_dataset, S, keep)[0], abs=1e-12)


def test_a_square_pandas_frame_is_scored_by_its_columns_not_its_names(
    tmp_path: Path, alias_taxonomy_file: Path
) -> None:
    # three rows and three categories: the frame's column names are three category names,
    # which, read as three raw outputs, would score as one label per row
    rows = [
        {"id": "a", "text": "x", "labels": ["alpha"]},
        {"id": "b", "text": "y", "labels": ["beta"]},
        {"id": "c", "text": "z", "labels": ["gamma"]},
    ]
    p = tmp_path / "ds.jsonl"
    write_jsonl(p, rows)
    ds = load_dataset(p, taxonomy=alias_taxonomy_file)
    s = np.array([[0.1, 0.8, 0.3], [0.9, 0.2, 0.4], [0.3, 0.6, 0.2]])  # every AP below 1
    res = score(pd.DataFrame(s, columns=CATS), ds)
    assert res.figures["map"] == pytest.approx(
        float(metrics.average_precision_score(ds.y_true, s, average="macro")), abs=1e-12
    )
    assert res.system["kind"] == "scores" and res.parse is None


@pytest.mark.parametrize("lib", MAKERS)
@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"alpha": 0.1, "beta": 0.2, "gamma": 0.3, "delta": 0.4}, "'delta' are not categories"),
        ({"alpha": 0.1, "first": 0.2, "beta": 0.2, "gamma": 0.3}, "both name category 'alpha'"),
        ({"alpha": 0.1, "beta": 0.2}, "no scores for categories 'gamma'"),
        ({"alpha": 0.1, "beta": "high", "gamma": 0.3}, "score column 'beta' is .*string"),
    ],
)
def test_ambiguous_tables_are_rejected(
    small_dataset: Any, lib: str, columns: dict[str, Any], message: str
) -> None:
    frame = MAKERS[lib]({k: [v] * 6 for k, v in columns.items()})
    with pytest.raises(PredictionError, match=message):
        score(frame, small_dataset)


def test_a_column_name_given_twice_is_rejected(small_dataset: Any) -> None:
    # pandas allows two columns of one name; which one holds the category's scores is
    # not a guess to make (pyarrow's own error named neither the table nor the rule)
    cols = [*CATS, "alpha"]
    frame = pd.DataFrame(np.c_[S, S[::-1, 0]], columns=cols)
    with pytest.raises(PredictionError, match="DataFrame: column 'alpha' appears more than once"):
        score(frame, small_dataset)
    table = pa.Table.from_arrays([pa.array(c) for c in np.c_[S, S[::-1, 0]].T], names=cols)
    with pytest.raises(PredictionError, match="column 'alpha' appears more than once"):
        score(table, small_dataset)


def test_wrong_row_count_without_ids(small_dataset: Any) -> None:
    with pytest.raises(PredictionError, match="5 rows of scores, but the dataset"):
        score(pd.DataFrame(S[:5], columns=CATS), small_dataset)


def test_pandas_index(small_dataset: Any) -> None:
    by_id = pd.DataFrame(S, columns=CATS, index=pd.Index(list(small_dataset.ids), name="id"))
    res = score(by_id.iloc[::-1], small_dataset)  # an index named id is the id column
    assert res.figures["map"] == pytest.approx(_expected(small_dataset, S)[0], abs=1e-12)
    shuffled = pd.DataFrame(S, columns=CATS).iloc[::-1]  # row order lost: ambiguous
    with pytest.raises(PredictionError, match="non-default index"):
        score(shuffled, small_dataset)
    with pytest.raises(PredictionError, match="names must be category ids"):
        score(pd.DataFrame(S), small_dataset)


def test_options_that_do_not_apply_to_a_table(small_dataset: Any) -> None:
    with pytest.raises(ValueError, match="parse_policy='error' does not apply to a table"):
        score(pd.DataFrame(S, columns=CATS), small_dataset, parse_policy="error")
