"""Every reader and every input form of ``toxeval.score``, fuzzed: an outcome is either a
correct result (checked against the drop-in metrics on the aligned arrays) or a
ValueError (DatasetError, PredictionError) with a message; the CLI exits 0 or 2 with a
one-line error, never a traceback.

Two kinds of input: *valid* ones built with known content (a score matrix, null rows,
labels in every form), whose results are checked value for value, and *chaotic* ones
(random JSON values, random arrays, truncated and corrupted bytes), whose results are
checked for consistency. Budgets are fixed (``max_examples``, scaled by the Hypothesis
profile, or ``$TOXEVAL_FUZZ_EXAMPLES``) so that the module runs
in well under a minute on a loaded two-core machine.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import math
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import examples
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from toxeval import metrics, score
from toxeval.cli import main
from toxeval.datasets import load_dataset
from toxeval.predictions import read_predictions
from toxeval.scoring import EvaluationResult, score_predictions

CATS = ("alpha", "beta", "gamma")
# every spelling the taxonomy resolves for each category (id, name, alias)
SPELLINGS = {
    "alpha": ("alpha", "Alpha", "first"),
    "beta": ("beta", "Beta"),
    "gamma": ("gamma", "Gamma"),
}
IDS = ("r1", "r2", "r3", "r4", "r5", "r6")

FUZZ = settings(
    max_examples=int(os.environ.get("TOXEVAL_FUZZ_EXAMPLES", examples(60))),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize="TOXEVAL_FUZZ_EXAMPLES" not in os.environ,
)

# a few score values with ties, and arbitrary finite floats
SCORE = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(-5, 5, allow_nan=False))
JUNK_KEYS = ("delta", "", "id", "scores", "labels", "output", "error", "Ä", "first ")
JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from([s for v in SPELLINGS.values() for s in v]),
)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from((*CATS, "Alpha", "first", *JUNK_KEYS)), inner, max_size=4),
    ),
    max_leaves=8,
)


def _input_error(e: BaseException) -> bool:
    """An input error as the project promises them: a ValueError with a message."""
    event(f"input error: {type(e).__name__}")
    # a raw decoding error is a ValueError too, but names neither the file nor the line
    return isinstance(e, ValueError) and not isinstance(e, UnicodeError) and bool(str(e).strip())


def _check_consistent(
    res: EvaluationResult, ds: Any, scores: np.ndarray, scored: np.ndarray
) -> None:
    """The result's headline figures are the drop-in metrics on the rows it scored."""
    event("result")
    y, m, s = ds.y_true[scored], ds.mask[scored], scores[scored]
    assert res.counts["scored"] == int(scored.sum())
    included = ((y == 1) & m).sum(axis=0) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if included.any():
            aps = [
                float(metrics.average_precision_score(y[m[:, c], c], s[m[:, c], c]))
                for c in np.flatnonzero(included)
            ]
            assert res.figures["map"] == pytest.approx(float(np.mean(aps)), abs=1e-12)
        else:
            assert math.isnan(res.figures["map"])
        if m.any():
            lrl = float(metrics.label_ranking_loss(y, s, mask=m))
            assert res.figures["label_ranking_loss"] == pytest.approx(lrl, abs=1e-12, nan_ok=True)


# ------------------------------------------------------------------ prediction dumps


@st.composite
def valid_dumps(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], np.ndarray, np.ndarray]:
    """(format, rows, scores in dataset order, scored mask) of a well-formed dump."""
    fmt = draw(st.sampled_from(["jsonl", "jsonl.gz", "csv", "csv.gz", "parquet", "npz", "npy"]))
    scores = np.array([[draw(SCORE) for _ in CATS] for _ in IDS])
    order = list(draw(st.permutations(range(len(IDS)))))
    nullable = fmt not in ("npz", "npy")
    unscored = draw(st.sets(st.sampled_from(range(len(IDS))), max_size=4)) if nullable else set()
    failed = draw(st.sets(st.sampled_from(sorted(unscored)))) if unscored else set()
    form = (
        "columns"
        if fmt.startswith("csv")
        else draw(st.sampled_from(["object", "vector", "columns"]))
    )
    keys = [draw(st.sampled_from(SPELLINGS[c])) for c in CATS]
    rows: list[dict[str, Any]] = []
    for i in order:
        row: dict[str, Any] = {"id": IDS[i]}
        vals: list[float | None] = [None] * 3 if i in unscored else [float(v) for v in scores[i]]
        if form == "object":
            row["scores"] = None if i in unscored else dict(zip(keys, vals, strict=True))
        elif form == "vector":
            row["scores"] = None if i in unscored else vals
        else:
            row.update(zip(keys, vals, strict=True))
        if failed:
            row["error"] = "HTTP 503 after 5 attempts" if i in failed else None
        rows.append(row)
    scored = np.array([i not in unscored for i in range(len(IDS))])
    return fmt, rows, scores, scored


def _row_file(fmt: str, rows: list[dict[str, Any]]) -> bytes:
    """``rows`` as the bytes of a JSONL, CSV (an empty cell for None) or Parquet file,
    gzipped for a ``.gz`` format. JSON keeps NaN and infinities as NaN / Infinity, which
    JSON does not allow; Parquet falls back to the ids as text when Arrow cannot hold
    the rows."""
    if fmt.startswith("jsonl"):
        body = "".join(json.dumps(r) + "\n" for r in rows).encode()
    elif fmt.startswith("csv"):
        names = list(dict.fromkeys(k for r in rows for k in r))
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(names)
        for r in rows:
            w.writerow(["" if r.get(k) is None else r[k] for k in names])
        body = buf.getvalue().encode()
    else:
        return _parquet_bytes(rows)
    return gzip.compress(body) if fmt.endswith(".gz") else body


def _write_rows(folder: Path, fmt: str, rows: list[dict[str, Any]]) -> Path:
    """``rows`` as a dump in ``fmt`` (numpy formats: the score vectors / columns)."""
    path = folder / f"p.{fmt}"
    if fmt.split(".")[0] in ("jsonl", "csv", "parquet"):
        path.write_bytes(_row_file(fmt, rows))
    else:
        mat = np.array(
            [
                r["scores"]
                if isinstance(r.get("scores"), list)
                else list(
                    (
                        r.get("scores") or {k: v for k, v in r.items() if k not in ("id", "error")}
                    ).values()
                )
                for r in rows
            ],
            dtype=np.float64,
        )
        if fmt == "npz":
            np.savez(path, scores=mat, ids=np.array([r["id"] for r in rows]))
        else:
            order = np.argsort([IDS.index(r["id"]) for r in rows])
            np.save(path, mat[order])
    return path


@FUZZ
@given(dump=valid_dumps())
def test_valid_dumps_score_exactly(shared_small_dataset: tuple[Any, Path, Path], dump: Any) -> None:
    ds = shared_small_dataset[0]
    fmt, rows, scores, scored = dump
    with tempfile.TemporaryDirectory() as d:
        path = _write_rows(Path(d), fmt, rows)
        if not scored.any():
            with pytest.raises(ValueError, match="no dataset row has a usable prediction"):
                score(path, ds)
            return
        res = score(path, ds)
    _check_consistent(res, ds, scores, scored)
    n_failed = sum(1 for r in rows if r.get("error"))
    assert res.counts["failed_request"] == n_failed
    assert res.counts["null_prediction"] == int((~scored).sum()) - n_failed


def _parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    """``rows`` as Parquet bytes, or, when Arrow cannot hold them (mixed types, empty
    structs), their ids as text."""
    buf = io.BytesIO()
    try:
        pq.write_table(pa.Table.from_pylist(rows), buf)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        buf = io.BytesIO()
        pq.write_table(pa.table({"id": [str(r.get("id")) for r in rows]}), buf)
    return buf.getvalue()


def _mutate(data: bytes, draw: st.DrawFn) -> bytes:
    how = draw(st.sampled_from(["none", "truncate", "flip", "bom", "latin1"]))
    if how == "truncate" and data:
        return data[: draw(st.integers(0, len(data) - 1))]
    if how == "flip" and data:
        at = draw(st.integers(0, len(data) - 1))
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "latin1":
        return data + b"\xe9\n"
    return data


@st.composite
def chaotic_dumps(draw: st.DrawFn) -> tuple[str, bytes]:
    """(file suffix, bytes) of an arbitrary, possibly broken dump."""
    fmt = draw(st.sampled_from(["jsonl", "jsonl.gz", "csv", "parquet", "npy", "npz"]))
    id_value = st.one_of(st.sampled_from(IDS), st.integers(0, 3), st.none(), st.text(max_size=3))
    row = st.fixed_dictionaries(
        {},
        optional={
            "id": id_value,
            "scores": JSON_VALUE,
            "labels": JSON_VALUE,
            "output": st.one_of(st.none(), st.text(max_size=12)),
            "error": st.one_of(st.none(), st.text(max_size=5)),
            **{k: JSON_VALUE for k in ("alpha", "Beta", "first", "gamma", "delta")},
        },
    )
    if fmt in ("npy", "npz"):
        arr = draw(
            hnp.arrays(
                dtype=st.sampled_from([np.float64, np.float32, np.int64, np.bool_, np.dtype("U3")]),
                shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=7),
            )
        )
        buf = io.BytesIO()
        if fmt == "npy":
            np.save(buf, arr)
        else:
            extra = {"ids": np.array(draw(st.lists(st.sampled_from(IDS), max_size=7)))}
            np.savez(buf, scores=arr, **(extra if draw(st.booleans()) else {}))
        return fmt, _mutate(buf.getvalue(), draw)
    if draw(st.booleans()):  # a well-formed dump with one value replaced
        rows = draw(valid_dumps())[1]
        target = draw(st.sampled_from(rows))
        key = draw(st.sampled_from([*target, "error", "labels", "output", "delta"]))
        target[key] = draw(JSON_VALUE)
    else:
        rows = draw(st.lists(row, max_size=8))
    return fmt, _mutate(_row_file(fmt, rows), draw)


@FUZZ
@given(dump=chaotic_dumps(), drop=st.booleans())
def test_chaotic_dumps_give_a_result_or_an_input_error(
    shared_small_dataset: tuple[Any, Path, Path], dump: tuple[str, bytes], drop: bool
) -> None:
    ds = shared_small_dataset[0]
    fmt, data = dump
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"p.{fmt}"
        path.write_bytes(data)
        try:
            preds = read_predictions(path, ds, on_mismatch="drop" if drop else "error")
            res = score_predictions(preds, ds)
        except Exception as e:
            assert _input_error(e), f"{type(e).__name__}: {e}"
            return
    _check_consistent(res, ds, preds.scores, preds.scored)


@settings(FUZZ, max_examples=max(FUZZ.max_examples // 3, 1))
@given(dump=chaotic_dumps())
def test_cli_on_chaotic_dumps_exits_0_or_2_with_one_line(
    shared_small_dataset: tuple[Any, Path, Path], dump: tuple[str, bytes]
) -> None:
    _, ds_path, tax = shared_small_dataset
    fmt, data = dump
    out, err = io.StringIO(), io.StringIO()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"p.{fmt}"
        path.write_bytes(data)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(
                ["score", str(path), "--dataset", str(ds_path), "--taxonomy", str(tax), "-q"]
            )
    assert code in (0, 2), err.getvalue()
    if code == 2:
        lines = err.getvalue().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("toxeval: error: "), err.getvalue()
    assert "Traceback" not in err.getvalue()


# ------------------------------------------------------------------ datasets


@st.composite
def valid_datasets(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], np.ndarray, np.ndarray]:
    """(format, rows, y_true, mask) of a well-formed dataset, labels in a drawn form."""
    fmt = draw(st.sampled_from(["jsonl", "jsonl.gz", "csv", "parquet"]))
    n = draw(st.integers(1, 6))
    cell = st.sampled_from([1, 0, None])
    y = np.zeros((n, 3), dtype=np.int8)
    m = np.zeros((n, 3), dtype=bool)
    form = draw(st.sampled_from(["list", "object", "vector", "columns"]))
    keys = [draw(st.sampled_from(SPELLINGS[c])) for c in CATS]
    rows = []
    for i in range(n):
        cells = [draw(cell) for _ in CATS]
        if form == "list":
            cells = [1 if v == 1 else 0 for v in cells]
        for c, v in enumerate(cells):
            if v is not None:
                y[i, c], m[i, c] = v, True
        row: dict[str, Any] = {"id": f"x{i}", "text": draw(st.text(min_size=1, max_size=5))}
        if form == "list":
            row["labels"] = [keys[c] for c in range(3) if cells[c] == 1]
        elif form == "object":
            row["labels"] = dict(zip(keys, cells, strict=True))
        elif form == "vector":
            row["labels"] = [-1 if v is None else v for v in cells]
        else:
            row.update(zip(keys, cells, strict=True))
        rows.append(row)
    if fmt == "csv" and form != "columns":
        for r in rows:
            lab = r["labels"]
            r["labels"] = (
                ";".join(lab) if isinstance(lab, list) and form == "list" else json.dumps(lab)
            )
    return fmt, rows, y, m


@FUZZ
@given(data=valid_datasets())
def test_valid_datasets_load_exactly(
    shared_small_dataset: tuple[Any, Path, Path], data: Any
) -> None:
    tax = shared_small_dataset[2]
    fmt, rows, y, m = data
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"ds.{fmt}"
        path.write_bytes(_row_file(fmt, rows))
        ds = load_dataset(path, taxonomy=tax)
    np.testing.assert_array_equal(ds.mask, m)
    np.testing.assert_array_equal(ds.y_true, np.where(m, y, 0))
    assert list(ds.ids) == [r["id"] for r in rows]


@st.composite
def chaotic_datasets(draw: st.DrawFn) -> tuple[str, bytes]:
    fmt = draw(st.sampled_from(["jsonl", "jsonl.gz", "csv", "parquet"]))
    row = st.fixed_dictionaries(
        {},
        optional={
            "id": st.one_of(st.text(max_size=3), st.integers(0, 5), st.none()),
            "text": st.one_of(st.text(max_size=5), st.none(), st.integers()),
            "labels": JSON_VALUE,
            "annotations": JSON_VALUE,
            "response": st.one_of(st.none(), st.text(max_size=3)),
            **{k: JSON_VALUE for k in ("alpha", "Alpha", "first", "beta", "gamma", "gama")},
        },
    )
    rows = draw(st.lists(row, max_size=6))
    return fmt, _mutate(_row_file(fmt, rows), draw)


@FUZZ
@given(data=chaotic_datasets())
def test_chaotic_datasets_load_or_raise_an_input_error(
    shared_small_dataset: tuple[Any, Path, Path], data: tuple[str, bytes]
) -> None:
    tax = shared_small_dataset[2]
    fmt, body = data
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"ds.{fmt}"
        path.write_bytes(body)
        try:
            ds = load_dataset(path, taxonomy=tax)
        except Exception as e:
            assert _input_error(e), f"{type(e).__name__}: {e}"
            return
    n = len(ds.ids)
    assert ds.y_true.shape == ds.mask.shape == (n, 3)
    assert set(np.unique(ds.y_true)) <= {0, 1}
    assert not ds.y_true[~ds.mask].any()
    assert len(set(ds.ids)) == n


# ------------------------------------------------------------------ score() inputs


@st.composite
def score_inputs(draw: st.DrawFn) -> tuple[Any, np.ndarray | None]:
    """(an object given to score, the (6, 3) scores it means in dataset order, or None
    when it is not a valid table of scores)."""
    kind = draw(st.sampled_from(["array", "list", "pandas", "polars", "arrow"]))
    if kind == "array":
        dtype = draw(
            st.sampled_from(
                [np.float64, np.float32, np.int64, np.bool_, np.dtype("U2"), np.dtype("O")]
            )
        )
        floats = np.dtype(dtype).kind == "f" and draw(st.booleans())
        arr = draw(
            hnp.arrays(
                dtype=dtype,
                shape=st.sampled_from([(6, 3), (6, 2), (5, 3), (6,), (6, 3, 1), (0, 3)]),
                elements=st.one_of(st.floats(-2, 2, width=32), st.just(np.nan)) if floats else None,
            )
        )
        ok = (
            arr.shape == (6, 3)
            and arr.dtype.kind in "biuf"
            and bool(np.isfinite(arr.astype(float)).all())
        )
        return arr, (arr.astype(np.float64) if ok else None)
    if kind == "list":
        return draw(st.lists(JSON_LEAF, min_size=0, max_size=7)), None
    scores = np.array([[draw(SCORE) for _ in CATS] for _ in IDS])
    names = [draw(st.sampled_from((*SPELLINGS[c], "delta"))) for c in CATS]
    if draw(st.booleans()):
        names = list(draw(st.permutations(names)))
    cols: dict[str, Any] = {}
    for name, c in zip(names, range(3), strict=True):
        cols.setdefault(name, scores[:, c].tolist())
    if draw(st.booleans()):  # a text column
        cols[draw(st.sampled_from(CATS))] = [str(v) for v in scores[:, 0]]
    with_ids = draw(st.booleans())
    order = list(draw(st.permutations(range(6)))) if with_ids else list(range(6))
    data = {k: [v[i] for i in order] for k, v in cols.items()}
    if with_ids:
        data = {"id": [IDS[i] for i in order], **data}
    frame = {"pandas": pd.DataFrame, "polars": pl.DataFrame, "arrow": pa.table}[kind](data)
    resolved = {next((c for c in CATS if n in SPELLINGS[c]), None) for n in data if n != "id"}
    valid = (
        resolved == set(CATS)
        and len(data) == 3 + with_ids
        and all(isinstance(v[0], float) for k, v in data.items() if k != "id")
    )
    if not valid:
        return frame, None
    mat = np.empty((6, 3))
    for name, values in data.items():
        if name != "id":
            c = next(i for i, cat in enumerate(CATS) if name in SPELLINGS[cat])
            mat[order, c] = values
    return frame, mat


@FUZZ
@given(given_input=score_inputs())
def test_score_inputs_give_a_correct_result_or_an_input_error(
    shared_small_dataset: tuple[Any, Path, Path], given_input: tuple[Any, np.ndarray | None]
) -> None:
    ds = shared_small_dataset[0]
    obj, expected = given_input
    try:
        res = score(obj, ds)
    except TypeError as e:
        # a Python object of a type score() does not take (documented): only for
        # sequences and arrays of the wrong element type, never for a table
        assert not isinstance(obj, (pd.DataFrame, pl.DataFrame, pa.Table)), str(e)
        assert str(e).strip()
        return
    except Exception as e:
        assert _input_error(e), f"{type(e).__name__}: {e}"
        assert expected is None, f"valid input rejected: {e}"
        return
    if expected is not None:
        _check_consistent(res, ds, expected, np.ones(6, dtype=bool))
