"""The out-of-core id join of a dataset and predictions given apart: a grace hash join.
Both sides stream into P partition files by a hash of the id (P = 1: kept in memory),
then each partition is put back in input order and joined by
:func:`toxeval.ids.join_ids`, so repeated, missing and unknown ids follow
``on_mismatch`` exactly as in memory; the joined rows go into the metric states.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from toxeval.datasets import DatasetError
from toxeval.datasets.labels import LabelReader
from toxeval.ids import SHOW, StringColumn, join_ids
from toxeval.outofcore.columns import (
    dataset_metadata_columns,
    plan_columns,
    read_ids,
    read_labels,
    read_scores,
)
from toxeval.outofcore.run import (
    RowCounts,
    Run,
    add_ids,
    bytes_per_row,
    float32_scores,
    on_shard,
)
from toxeval.outofcore.spill import SpillPartitions, id_hashes
from toxeval.outofcore.states import RANGES, StatesOutgrown
from toxeval.predictions import PredictionError
from toxeval.predictions.schema import ids_text
from toxeval.shards import ShardSet

__all__ = ["score_joined"]


_DS_SCHEMA_FIELDS = ("id", "row", "lab")


def score_joined(
    run: Run, ds_shards: ShardSet, pred_shards: ShardSet
) -> tuple[dict[str, Any], dict[str, Any], RowCounts, list[str]]:
    tax = run.taxonomy
    k = tax.k
    ds_src, pred_src = ds_shards.source, pred_shards.source
    ds_plan = plan_columns(ds_shards.schema, tax, ds_src, labels=True, predictions=False)
    pred_plan = plan_columns(pred_shards.schema, tax, pred_src, labels=False, predictions=True)
    f32 = float32_scores(pred_shards.schema, pred_plan)
    n_ds, n_pred = ds_shards.num_rows, pred_shards.num_rows
    # partitions: both sides' spilled rows (about twice their bytes while joined) in a
    # quarter of the limit
    ds_row = ds_shards.uncompressed_bytes // max(1, n_ds) + 8 + k + 16
    pred_row = 24 + 8 + 1 + 8 * k + 16
    total = n_ds * ds_row + n_pred * pred_row
    n_parts = max(1, -(-(2 * total) // max(1, run.budget.batch_bytes)))
    folder = None if n_parts == 1 else run.folder / "join"
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    ds_schema = pa.schema(
        [("id", pa.string()), ("row", pa.int64()), ("lab", pa.list_(pa.int8(), k))]
    )
    pred_schema = pa.schema(
        [
            ("id", pa.string()),
            ("row", pa.int64()),
            ("state", pa.int8()),  # 0 scored, 1 null prediction, 2 failed request
            ("s", pa.list_(pa.float64(), k)),
            ("error", pa.string()),
        ]
    )
    counts = RowCounts(n_dataset=n_ds, n_read=n_pred)
    total_rows = n_ds + n_pred
    done = 0
    run.step(f"partitioning the dataset by id ({n_parts} partition{'s' if n_parts > 1 else ''})")
    reader = LabelReader(tax, None)
    ds_parts = SpillPartitions(folder, "dataset", n_parts, ds_schema)
    batch_rows = run.budget.batch_rows(bytes_per_row(ds_shards, k))
    at = 0
    for batch in ds_shards.batches(["id", *ds_plan.labels], batch_rows, on_shard=on_shard):
        ids = read_ids(batch, ds_src, DatasetError)
        table = pa.Table.from_batches([batch])
        lab = read_labels(table.select(list(ds_plan.labels)), reader, ds_src)
        cells = np.where(lab.mask, lab.y, -1).astype(np.int8)
        rows = np.arange(at, at + batch.num_rows, dtype=np.int64)
        out = pa.RecordBatch.from_arrays(
            [ids, pa.array(rows), pa.FixedSizeListArray.from_arrays(pa.array(cells.ravel()), k)],
            schema=ds_schema,
        )
        ds_parts.write(out, _partition_of(ids, n_parts))
        at += batch.num_rows
        done += batch.num_rows
        if run.rows_progress:
            run.rows_progress(done, total_rows)
    ds_parts.close()

    run.step("partitioning the predictions by id")
    pred_parts = SpillPartitions(folder, "predictions", n_parts, pred_schema)
    batch_rows = run.budget.batch_rows(bytes_per_row(pred_shards, k))
    sample: np.ndarray | None = None
    at = 0
    pred_cols = ["id", *pred_plan.predictions]
    for batch in pred_shards.batches(pred_cols, batch_rows, on_shard=on_shard):
        ids = read_ids(batch, pred_src, PredictionError)
        table = pa.Table.from_batches([batch])
        kind, sr = read_scores(table, ids, tax, pred_src)
        counts.kind = kind
        counts.n_out_of_range += sr.n_out_of_range
        counts.binary &= sr.binary
        n = batch.num_rows
        state = np.where(sr.failed, 2, np.where(sr.null, 1, 0)).astype(np.int8)
        full = np.zeros((n, k), dtype=np.float64)
        full[state == 0] = sr.scores
        if sample is None and sr.scores.shape[0]:
            sample = sr.scores
        err = pa.nulls(n, pa.string())
        if sr.failed.any() and "error" in table.column_names:
            e = table.column("error").combine_chunks().cast(pa.string())
            err = pa.array(np.where(sr.failed, e.to_numpy(zero_copy_only=False), None), pa.string())
        out = pa.RecordBatch.from_arrays(
            [
                ids,
                pa.array(np.arange(at, at + n, dtype=np.int64)),
                pa.array(state),
                pa.FixedSizeListArray.from_arrays(pa.array(full.ravel()), k),
                err,
            ],
            schema=pred_schema,
        )
        pred_parts.write(out, _partition_of(ids, n_parts))
        at += n
        done += n
        if run.rows_progress:
            run.rows_progress(done, total_rows)
    pred_parts.close()
    if n_pred == 0:
        raise PredictionError(f"{pred_src}: empty file (no predictions)")

    attempts = [run.pick_path(n_pred, sample)]
    notes: list[str] = []
    while True:
        path = attempts[-1]
        states = run.states(path, n_pred, sample, f32)
        run.step(f"joining and scoring ({path})")
        joined = RowCounts(n_dataset=n_ds, n_read=n_pred)
        try:
            for i in range(n_parts):
                _join_partition(run, ds_parts, pred_parts, i, joined, states, ds_src, pred_src)
                if run.rows_progress:
                    run.rows_progress(i + 1, n_parts)
            break
        except StatesOutgrown:
            attempts.append(RANGES)
            notes.append(
                "out of core: the tree-merge states outgrew half the memory limit, so the "
                "joined rows were scored again into range partitions"
            )
    for name in ("kind", "n_out_of_range", "binary"):
        setattr(joined, name, getattr(counts, name))
    run.step(f"reducing ({attempts[-1]})")
    report, info = states.finish(run.rows_progress)
    info["attempts"] = attempts
    info["join"] = f"hash partitions by id ({n_parts})"
    info["join_partitions"] = n_parts
    info["join_spill_bytes"] = ds_parts.bytes_written + pred_parts.bytes_written if folder else 0
    ignored = dataset_metadata_columns(ds_shards.schema.names, ds_plan)
    if ignored:
        notes.append(
            "dataset fields ignored (not schema fields, or per-category fields while the "
            "labels come from 'labels'/'annotations'): " + ", ".join(map(repr, ignored[:20]))
        )
    return report, info, joined, notes


def _partition_of(ids: pa.Array, n_parts: int) -> np.ndarray | None:
    """The id-hash partition of each row (None: one partition)."""
    if n_parts == 1:
        return None
    part: np.ndarray = (id_hashes(ids) % np.uint64(n_parts)).astype(np.int64)
    return part


def _sorted_by_row(t: pa.Table) -> pa.Table:
    rows = t.column("row").to_numpy()
    if rows.size > 1 and not bool((rows[1:] > rows[:-1]).all()):
        t = t.take(pa.array(np.argsort(rows, kind="stable")))
    return t


def _join_partition(
    run: Run,
    ds_parts: SpillPartitions,
    pred_parts: SpillPartitions,
    i: int,
    c: RowCounts,
    states: Any,
    ds_src: str,
    pred_src: str,
) -> None:
    """Join partition ``i`` of both sides and feed its scored rows to ``states``."""
    k = run.taxonomy.k
    ds = _sorted_by_row(ds_parts.read(i))
    pred = _sorted_by_row(pred_parts.read(i))
    ds_ids = StringColumn(ds.column("id"))
    if len(ds_ids) and not ds_ids.all_distinct():
        _raise_duplicate_dataset_id(ds, ds_src)
    pred_ids = pred.column("id").combine_chunks()
    if len(pred_ids) == 0:
        n_missing = len(ds_ids)
        c.n_missing += n_missing
        add_ids(c.missing_ids, ds_ids[:SHOW] if n_missing else [])
        _check_mismatch(run, c, pred_src)
        return
    if len(ds_ids) == 0:
        c.n_unknown += len(pred_ids)
        add_ids(c.unknown_ids, pred_ids.slice(0, SHOW).to_pylist())
        _check_mismatch(run, c, pred_src)
        return
    j = join_ids(pred_ids, ds_ids, pred_src, PredictionError)
    c.n_missing += j.n_missing
    c.n_duplicate += j.n_duplicate
    c.n_unknown += j.n_unknown
    add_ids(c.missing_ids, j.missing_ids)
    add_ids(c.duplicate_ids, j.duplicate_ids)
    add_ids(c.unknown_ids, j.unknown_ids)
    _check_mismatch(run, c, pred_src)
    state = pred.column("state").to_numpy()[j.src]
    null_src, failed_src = j.src[state == 1], j.src[state == 2]
    c.n_null += int(null_src.size)
    c.n_failed += int(failed_src.size)
    if null_src.size and len(c.null_ids) < SHOW:
        add_ids(c.null_ids, pred_ids.take(pa.array(null_src[:SHOW])).to_pylist())
    if failed_src.size and len(c.failed) < SHOW:
        errs = pred.column("error").combine_chunks()
        for r in failed_src[:SHOW]:
            if len(c.failed) < SHOW:
                c.failed.append((str(pred_ids[int(r)].as_py()), str(errs[int(r)].as_py() or "")))
    keep = state == 0
    src, dst = j.src[keep], j.dst[keep]
    lab = ds.column("lab").combine_chunks().flatten().to_numpy().reshape(-1, k)[dst]
    s = pred.column("s").combine_chunks().flatten().to_numpy().reshape(-1, k)[src]
    c.n_scored += int(src.size)
    states.update(lab == 1, np.ascontiguousarray(s), lab != -1)


def _check_mismatch(run: Run, c: RowCounts, src: str) -> None:
    if run.on_mismatch != "error" or not (c.n_missing or c.n_duplicate or c.n_unknown):
        return
    parts = []
    if c.n_missing:
        parts.append(f"dataset ids without a prediction ({ids_text(c.missing_ids, c.n_missing)})")
    if c.n_duplicate:
        parts.append(f"rows repeating an id ({ids_text(c.duplicate_ids, c.n_duplicate)})")
    if c.n_unknown:
        parts.append(f"prediction ids not in the dataset ({ids_text(c.unknown_ids, c.n_unknown)})")
    raise PredictionError(
        f"{src}: predictions do not match the dataset: {'; '.join(parts)}. Pass "
        "on_mismatch='drop' (--on-mismatch drop) to score the matching rows only"
    )


def _raise_duplicate_dataset_id(ds: pa.Table, src: str) -> None:
    ids = ds.column("id").to_pylist()
    rows = ds.column("row").to_numpy()
    seen: dict[str, int] = {}
    for v, r in zip(ids, rows, strict=True):
        if v in seen:
            raise DatasetError(
                f"{src}: row {int(r) + 1}: duplicate id {v!r} (first seen at row "
                f"{seen[v] + 1}); ids must be distinct across all shards"
            )
        seen[v] = int(r)
