"""The same cells read through every path of the file layer give the same result.

A dataset's labels and masks, and a prediction dump's scores and scored rows, must not
depend on the format (JSONL, CSV, TSV, Parquet), the compression (none, gzip, bzip2,
zstd, LZ4), or the reader inside a format (column-wise with pyarrow or line by line for
datasets; the native reader or pyarrow for JSONL dumps), or whether the file is read
whole, streamed in batches from Parquet shards (out-of-core scoring), or streamed in
record batches by the file layer (:mod:`toxeval.record_batches`). Each case is compared with
values written out by hand, not only with the other cases.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq
import pytest
from helpers import CODECS, make_dataset, small_taxonomy, write_compressed
from toxeval.datasets import load_dataset
from toxeval.datasets.labels import LabelReader
from toxeval.datasets.schema import DatasetError
from toxeval.file_formats import name_format
from toxeval.outofcore.columns import plan_columns, read_ids, read_labels, read_scores
from toxeval.predictions import PredictionError, read_predictions
from toxeval.predictions.readers import (
    prediction_format,
    read_csv_table,
    read_parquet_table,
    read_pyarrow_jsonl_table,
)
from toxeval.record_batches import iter_record_batches, read_batches_table
from toxeval.shards import discover_shards

TAX = small_taxonomy(3)  # ids c0, c1, c2

# ------------------------------------------------------------------ datasets

# per-category cells: 1, 0, or None (unknown)
CELLS: list[tuple[str, str, list[int | None]]] = [
    ("r1", "first", [1, 0, None]),
    ("r2", "second", [0, 1, 0]),
    ("r3", "third", [None, None, 1]),
    ("r4", "fourth", [1, 1, 1]),
    ("r5", "fifth", [0, 0, 0]),
]
WANT_Y = np.array([[1 if v == 1 else 0 for v in c] for _, _, c in CELLS], dtype=np.int8)
WANT_MASK = np.array([[v is not None for v in c] for _, _, c in CELLS])


def _dataset_table() -> pa.Table:
    cols: dict[str, Any] = {
        "id": [i for i, _, _ in CELLS],
        "text": [t for _, t, _ in CELLS],
    }
    for k in range(3):
        cols[f"c{k}"] = pa.array([c[k] for _, _, c in CELLS], type=pa.int64())
    return pa.table(cols)


def _dataset_jsonl(blank_line: bool) -> bytes:
    lines = [
        json.dumps({"id": i, "text": t, **{f"c{k}": c[k] for k in range(3)}}) for i, t, c in CELLS
    ]
    if blank_line:  # a blank line sends the reader line by line instead of column-wise
        lines.insert(2, "")
    return ("\n".join(lines) + "\n").encode()


def _dataset_csv(delimiter: str) -> bytes:
    out = io.BytesIO()
    # an empty cell is an unknown label
    pacsv.write_csv(_dataset_table(), out, pacsv.WriteOptions(delimiter=delimiter))
    return out.getvalue()


def _write_dataset(tmp_path: Path, name: str) -> Path:
    plain = name.split(".")[1]
    if plain == "parquet":
        pq.write_table(_dataset_table(), tmp_path / name)
        return tmp_path / name
    body = {
        "jsonl": lambda: _dataset_jsonl(blank_line=False),
        "json": lambda: _dataset_jsonl(blank_line=True),
        "ndjson": lambda: _dataset_jsonl(blank_line=False),
        "csv": lambda: _dataset_csv(","),
        "tsv": lambda: _dataset_csv("\t"),
    }[plain]()
    return write_compressed(tmp_path / name, body)


DATASET_NAMES = [
    "d.jsonl",
    "d.json",  # written with a blank line: the line-by-line path
    "d.ndjson",
    "d.csv",
    "d.tsv",
    "d.parquet",
    *(f"d.{fmt}{sfx}" for fmt in ("jsonl", "json", "csv", "tsv") for sfx in CODECS),
]


@pytest.mark.parametrize("name", DATASET_NAMES)
def test_dataset_cells_read_the_same_through_every_path(tmp_path: Path, name: str) -> None:
    d = load_dataset(_write_dataset(tmp_path, name), taxonomy=TAX)
    assert list(d.ids) == [i for i, _, _ in CELLS]
    assert list(d.texts) == [t for _, t, _ in CELLS]
    np.testing.assert_array_equal(d.mask, WANT_MASK)
    np.testing.assert_array_equal(d.y_true, WANT_Y)


# ------------------------------------------------------------ prediction dumps

IDS = ["a", "b", "c", "d"]
# row "c" is null (no prediction: unscored, never a negative)
SCORES: list[list[float] | None] = [[0.9, 0.1, 0.25], [0.0, 1.0, 0.5], None, [0.125, 0.75, 0.3]]


def _dump_table() -> pa.Table:
    cols: dict[str, Any] = {"id": IDS}
    for k in range(3):
        cols[f"c{k}"] = pa.array([None if s is None else s[k] for s in SCORES], pa.float64())
    return pa.table(cols)


def _dump_jsonl() -> bytes:
    rows = [
        {"id": i, "scores": None if s is None else {f"c{k}": s[k] for k in range(3)}}
        for i, s in zip(IDS, SCORES, strict=True)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _write_dump(tmp_path: Path, name: str) -> Path:
    plain = name.split(".")[1]
    if plain in ("parquet", "parq", "pq"):
        pq.write_table(_dump_table(), tmp_path / name)
        return tmp_path / name
    if plain in ("jsonl", "ndjson", "json"):
        body = _dump_jsonl()
    else:
        out = io.BytesIO()
        delimiter = "\t" if plain == "tsv" else ","
        pacsv.write_csv(_dump_table(), out, pacsv.WriteOptions(delimiter=delimiter))
        body = out.getvalue()
    return write_compressed(tmp_path / name, body)


DUMP_NAMES = [
    "p.jsonl",
    "p.ndjson",
    "p.csv",
    "p.tsv",
    "p.parquet",
    "p.parq",
    "p.pq",
    *(f"p.{fmt}{sfx}" for fmt in ("jsonl", "csv", "tsv") for sfx in CODECS),
]


# an uncompressed JSONL dump is read natively unless pyarrow is asked for
DUMP_CASES = [(name, "auto") for name in DUMP_NAMES] + [
    ("p.jsonl", "pyarrow"),
    ("p.ndjson", "pyarrow"),
]


@pytest.mark.parametrize(("name", "reader"), DUMP_CASES)
def test_dump_scores_read_the_same_through_every_path(
    tmp_path: Path, name: str, reader: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOXEVAL_JSONL_READER", reader)
    ds = make_dataset(np.zeros((4, 3), dtype=np.int8), taxonomy=TAX, ids=list(IDS))
    pr = read_predictions(_write_dump(tmp_path, name), ds)
    np.testing.assert_array_equal(pr.scored, [s is not None for s in SCORES])
    want = np.array([s if s is not None else [0.0, 0.0, 0.0] for s in SCORES])
    np.testing.assert_array_equal(pr.scores[pr.scored], want[pr.scored])
    assert pr.n_null == 1


def test_dataset_csv_text_with_newlines_across_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a quoted text holding a newline where pyarrow's CSV reader cuts a block (16 MiB in
    # use, a few bytes here) is one cell, as the prediction reader always read it
    import toxeval.datasets.readers as dataset_readers

    monkeypatch.setattr(dataset_readers, "CSV_BLOCK_BYTES", 64)
    rows = [f'r{i},"line one of {i}\nline two",{"hate" if i % 2 else ""}' for i in range(40)]
    p = tmp_path / "d.csv"
    p.write_text("id,text,labels\n" + "\n".join(rows) + "\n")
    d = load_dataset(p)
    assert list(d.ids) == [f"r{i}" for i in range(40)]
    assert list(d.texts)[3] == "line one of 3\nline two"
    assert int(d.y_true[:, d.taxonomy.index("hate")].sum()) == 20


@pytest.mark.parametrize("sfx", list(CODECS))
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_compressed_file_under_a_plain_name_reads_for_datasets_and_dumps(
    tmp_path: Path, fmt: str, sfx: str
) -> None:
    # its first bytes say how it is compressed; datasets sniffed gzip only, dumps nothing
    d_packed = _write_dataset(tmp_path, f"d.{fmt}{sfx}")
    d_plain = d_packed.rename(tmp_path / f"d.{fmt}")
    d = load_dataset(d_plain, taxonomy=TAX)
    np.testing.assert_array_equal(d.mask, WANT_MASK)
    np.testing.assert_array_equal(d.y_true, WANT_Y)
    p_packed = _write_dump(tmp_path, f"p.{fmt}{sfx}")
    ds = make_dataset(np.zeros((4, 3), dtype=np.int8), taxonomy=TAX, ids=list(IDS))
    pr = read_predictions(p_packed.rename(tmp_path / f"p.{fmt}"), ds)
    np.testing.assert_array_equal(pr.scored, [s is not None for s in SCORES])
    assert pr.scores[0].tolist() == SCORES[0]


# ------------------------------------------- the out-of-core path (Parquet shards)


def _two_shards(tmp_path: Path, table: pa.Table) -> Path:
    folder = tmp_path / "shards"
    folder.mkdir()
    pq.write_table(table.slice(0, 2), folder / "part-0.parquet")
    pq.write_table(table.slice(2), folder / "part-1.parquet", row_group_size=1)
    return folder


def test_dataset_cells_read_the_same_streamed_from_shards(tmp_path: Path) -> None:
    shards = discover_shards(_two_shards(tmp_path, _dataset_table()))
    plan = plan_columns(shards.schema, TAX, "shards", labels=True, predictions=False)
    reader = LabelReader(TAX, None)
    got = [
        read_labels(pa.Table.from_batches([b]).select(list(plan.labels)), reader, "shards")
        for b in shards.batches(["id", *plan.labels], batch_rows=2, prefetch=False)
    ]
    np.testing.assert_array_equal(np.concatenate([g.mask for g in got]), WANT_MASK)
    np.testing.assert_array_equal(np.concatenate([g.y for g in got]), WANT_Y)


def test_dump_scores_read_the_same_streamed_from_shards(tmp_path: Path) -> None:
    shards = discover_shards(_two_shards(tmp_path, _dump_table()))
    plan = plan_columns(shards.schema, TAX, "shards", labels=False, predictions=True)
    scored: list[np.ndarray] = []
    null: list[np.ndarray] = []
    for b in shards.batches(["id", *plan.predictions], batch_rows=2, prefetch=False):
        t = pa.Table.from_batches([b])
        ids = read_ids(b, "shards", PredictionError)
        _, rows = read_scores(t.select(list(plan.predictions)), ids, TAX, "shards")
        scored.append(rows.scores)
        null.append(rows.null)
    np.testing.assert_array_equal(np.concatenate(null), [s is None for s in SCORES])
    want = np.array([s for s in SCORES if s is not None])
    np.testing.assert_array_equal(np.concatenate(scored), want)


# --------------------------------- the file layer's stream of record batches


def _whole_dump_table(path: Path) -> pa.Table:
    fmt = prediction_format(path).format
    if fmt == "parquet":
        return read_parquet_table(path)
    if fmt == "csv":
        return read_csv_table(path)
    return read_pyarrow_jsonl_table(path)


@pytest.mark.parametrize("name", DUMP_NAMES)
def test_dump_stream_concatenates_to_the_whole_file_read(tmp_path: Path, name: str) -> None:
    # JSONL in blocks of about one line (a block per batch), every format two rows a batch
    path = _write_dump(tmp_path, name)
    batches = list(
        iter_record_batches(path, PredictionError, what="predictions", batch_rows=2, block_bytes=64)
    )
    assert len(batches) >= 2 and all(b.num_rows <= 2 for b in batches)
    whole = _whole_dump_table(path)
    assert read_batches_table(batches).to_pylist() == whole.to_pylist()


@pytest.mark.parametrize("name", DATASET_NAMES)
def test_dataset_stream_concatenates_to_the_whole_file_read(tmp_path: Path, name: str) -> None:
    path = _write_dataset(tmp_path, name)
    fmt = name_format(path)
    assert fmt is not None
    # CSV: the first block fixes the column types, so the block holds the whole file
    block = 64 if fmt.format == "jsonl" else 1 << 20
    batches = list(
        iter_record_batches(path, DatasetError, what="dataset", batch_rows=2, block_bytes=block)
    )
    assert all(b.num_rows <= 2 for b in batches)
    got = read_batches_table(batches)
    if fmt.format == "parquet":
        whole = pq.read_table(path)
    elif fmt.format == "csv":
        src = pa.input_stream(str(path), compression=fmt.codec)
        whole = pacsv.read_csv(src, parse_options=pacsv.ParseOptions(delimiter=fmt.delimiter))
    else:
        src = pa.input_stream(str(path), compression=fmt.codec)
        whole = pajson.read_json(src)
    assert got.to_pylist() == whole.to_pylist()
    # and the cells are those written by hand
    rows = got.to_pylist()
    assert [r["id"] for r in rows] == [i for i, _, _ in CELLS]
    cells = [[r[f"c{k}"] for k in range(3)] for r in rows]
    assert cells == [c for _, _, c in CELLS]
