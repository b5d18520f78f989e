""":func:`score_out_of_core`: a Parquet file or a directory of Parquet shards scored with
bounded memory, into the same :class:`~toxeval.scoring.EvaluationResult` as in-memory
scoring (docs/out-of-core.md).

Two inputs:

- one table holding labels and scores (``dataset`` is None or the same path): its
  batches go straight into the metric states; ids are checked to be distinct through
  hash partitions of their 64-bit hashes (:class:`_DistinctIds`);
- a dataset and predictions joined by id: a grace hash join. Both sides are written to
  P partitions by a hash of the id (:mod:`toxeval.outofcore.spill`, P chosen so a
  partition fits a quarter of the limit; P = 1 keeps everything in memory), then each
  partition is joined in memory by :func:`toxeval.ids.join_ids` (rows in file order,
  so the first of repeated ids wins, as in memory) and its scored rows go into the
  states. Missing, repeated and unknown ids are counted over all partitions under
  ``on_mismatch`` as in memory; a dataset id given twice is an error.

The metric states take one of two paths (:mod:`toxeval.outofcore.states`): a tree
merge of mergeable states, or range partitions of each label's scores on disk for AP
and ROC AUC; ``result.config["out_of_core"]`` says which ran and what it held.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from toxeval.datasets import DatasetError
from toxeval.datasets.labels import LabelReader
from toxeval.ids import SHOW, StringColumn, join_ids
from toxeval.outofcore.columns import (
    ColumnPlan,
    dataset_metadata_columns,
    plan_columns,
    read_ids,
    read_labels,
    read_scores,
)
from toxeval.outofcore.memory import MemoryBudget, parse_memory_limit
from toxeval.outofcore.spill import SpillPartitions, id_hashes
from toxeval.outofcore.states import (
    RANGES,
    TREE,
    RangeStates,
    StatesOutgrown,
    TreeStates,
    choose_path,
)
from toxeval.predictions import PredictionError
from toxeval.predictions.schema import MISMATCH_POLICIES, OnMismatch, check_choice, ids_text
from toxeval.scoring.figures import report_figures
from toxeval.scoring.result import EvaluationResult, Progress
from toxeval.shards import Shard, ShardSet, discover_shards
from toxeval.taxonomy import Taxonomy, load_taxonomy

__all__ = ["RowProgress", "score_out_of_core"]

#: Called with (rows read so far, rows in all shards) as batches stream.
RowProgress = Callable[[int, int], None]

#: What the report says is not produced out of core, and why.
ABSENT = (
    "out of core: no scored_rows.parquet, HTML report, --plots figures or card recipe "
    "(each needs every scored row in memory); `toxeval compare` cannot resample this "
    "result"
)


@dataclass
class _Counts:
    """What the rows were, over every batch or partition."""

    n_dataset: int = 0
    n_read: int = 0
    n_scored: int = 0
    n_missing: int = 0
    n_duplicate: int = 0
    n_unknown: int = 0
    n_null: int = 0
    n_failed: int = 0
    n_out_of_range: int = 0
    binary: bool = True
    kind: str = "scores"
    missing_ids: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    null_ids: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def _add_ids(into: list[Any], ids: Any) -> None:
    for i in ids:
        if len(into) >= SHOW:
            return
        into.append(i)


@dataclass
class _Run:
    """One scoring run's settings and the shared pieces every pass uses."""

    taxonomy: Taxonomy
    threshold: float
    on_mismatch: OnMismatch
    budget: MemoryBudget
    folder: Path
    progress: Progress | None
    rows_progress: RowProgress | None
    force_path: str | None

    def step(self, name: str) -> None:
        if self.progress:
            self.progress(name)

    def states(self, path: str, n_cells_bound: int, sample: np.ndarray | None, f32: bool) -> Any:
        k = self.taxonomy.k
        if path == TREE:
            return TreeStates(k, self.threshold, self.budget.state_bytes)
        return RangeStates(
            k,
            self.threshold,
            self.folder / "ranges",
            n_cells_bound=n_cells_bound,
            sample=sample,
            float32=f32,
            state_bytes=self.budget.state_bytes,
            buffer_bytes=self.budget.spill_buffer_bytes,
        )

    def pick_path(self, n_rows: int, sample: np.ndarray | None) -> str:
        if self.force_path is not None:
            return self.force_path
        return choose_path(n_rows, self.taxonomy.k, sample, self.budget.state_bytes)


def _float32_scores(schema: pa.Schema, plan: ColumnPlan) -> bool:
    """Whether every score the plan reads is float32 (the range files then keep float32)."""
    types = []
    for name in plan.predictions:
        if name == "error":
            continue
        t = schema.field(name).type
        if pa.types.is_struct(t):
            types += [t.field(i).type for i in range(t.num_fields)]
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            types.append(t.value_type)
        else:
            types.append(t)
    return bool(types) and all(pa.types.is_float32(t) for t in types)


def _bytes_per_row(shards: ShardSet, k: int) -> int:
    per = shards.uncompressed_bytes // max(1, shards.num_rows)
    return int(per + 8 * k * 3 + 64)


def score_out_of_core(
    predictions: str | Path,
    dataset: str | Path | None = None,
    *,
    taxonomy: str | Path | Taxonomy | None = None,
    threshold: float = 0.5,
    on_mismatch: OnMismatch = "error",
    memory_limit: str | int | None = None,
    spill_dir: str | Path | None = None,
    progress: Progress | None = None,
    rows_progress: RowProgress | None = None,
    states_path: str | None = None,
) -> EvaluationResult:
    """Score a Parquet file or directory of shards with memory bounded by
    ``memory_limit`` (``"2GB"``, ``"512MiB"``, bytes; None: 2 GiB or half the
    available memory). ``dataset``: a Parquet file or directory of the labels, joined
    by ``id``; None or the same path: the one table holds labels and scores. Spill
    files go to a temporary folder in ``spill_dir`` (default: the system's temporary
    folder), removed at the end. ``states_path`` (``"tree merge"`` / ``"range
    partitions"``) overrides the automatic choice (tests). Intervals are not computed
    out of core."""
    import math

    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    check_choice("on_mismatch", on_mismatch, MISMATCH_POLICIES, "--on-mismatch")
    if states_path not in (None, TREE, RANGES):
        raise ValueError(f"states_path must be {TREE!r} or {RANGES!r}, got {states_path!r}")
    limit = parse_memory_limit(memory_limit)
    tax = load_taxonomy(taxonomy if taxonomy is not None else "toxeval-15")
    started = time.perf_counter()
    combined = dataset is None or Path(dataset).resolve() == Path(predictions).resolve()
    step = progress
    if step:
        step("listing shards")
    for what, given in (("predictions", predictions), ("dataset", dataset)):
        if given is not None and not Path(given).exists():
            err = PredictionError if what == "predictions" else DatasetError
            raise err(
                f"{given}: no such file or directory; out-of-core scoring reads the {what} "
                "from a Parquet file or a directory of Parquet shards"
            )
    pred_shards = discover_shards(predictions)
    ds_shards = None if combined else discover_shards(dataset)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory(prefix="toxeval-ooc-", dir=spill_dir) as tmp:
        run = _Run(
            taxonomy=tax,
            threshold=threshold,
            on_mismatch=on_mismatch,
            budget=MemoryBudget(limit),
            folder=Path(tmp),
            progress=progress,
            rows_progress=rows_progress,
            force_path=states_path,
        )
        if ds_shards is None:
            report, info, counts, notes = _score_one_table(run, pred_shards)
        else:
            report, info, counts, notes = _score_joined(run, ds_shards, pred_shards)
    info["seconds"] = round(time.perf_counter() - started, 3)
    info["memory_limit_bytes"] = limit
    return _result(
        run, report, info, counts, notes, pred_shards, ds_shards, str(predictions), dataset
    )


# --------------------------------------------------------------------- one table


def _score_one_table(
    run: _Run, shards: ShardSet
) -> tuple[dict[str, Any], dict[str, Any], _Counts, list[str]]:
    tax = run.taxonomy
    src = shards.source
    plan = plan_columns(shards.schema, tax, src, labels=True, predictions=True)
    reader = LabelReader(tax, None)
    columns = ["id", *plan.labels, *plan.predictions]
    batch_rows = run.budget.batch_rows(_bytes_per_row(shards, tax.k))
    f32 = _float32_scores(shards.schema, plan)
    n = shards.num_rows
    attempts = [run.pick_path(n, _first_scores(shards, columns, plan, tax, src))]
    notes: list[str] = []
    while True:
        path = attempts[-1]
        counts = _Counts(n_dataset=n, n_read=n)
        sample: np.ndarray | None = None
        states: Any = None
        done = 0
        ids_check = _DistinctIds(run, n, src, path)
        run.step(f"scoring ({path})")
        try:
            for batch in shards.batches(columns, batch_rows, on_shard=_shard_hook):
                table = pa.Table.from_batches([batch])
                ids = read_ids(batch, src, DatasetError)
                ids_check.add(ids, done)
                labels = read_labels(table.select(list(plan.labels)), reader, src)
                kind, rows = read_scores(table.select(["id", *plan.predictions]), ids, tax, src)
                scored = ~(rows.null | rows.failed)
                _count_unscored(counts, ids, rows, table, plan)
                counts.kind = kind
                counts.n_out_of_range += rows.n_out_of_range
                counts.binary &= rows.binary
                y = labels.y[scored].astype(bool)
                m = labels.mask[scored]
                if states is None:
                    sample = rows.scores
                    states = run.states(path, n, sample, f32)
                states.update(y, rows.scores, m)
                counts.n_scored += int(scored.sum())
                done += batch.num_rows
                if run.rows_progress:
                    run.rows_progress(done, n)
            break
        except StatesOutgrown:
            attempts.append(RANGES)
            notes.append(
                "out of core: the tree-merge states outgrew half the memory limit, so the "
                "scores were streamed again into range partitions"
            )
    run.step("checking that ids are distinct")
    ids_check.check(shards, columns=["id"], batch_rows=batch_rows)
    if states is None:
        states = run.states(attempts[-1], 0, None, f32)
    run.step(f"reducing ({attempts[-1]})")
    report, info = states.finish(run.rows_progress)
    info["attempts"] = attempts
    info["join"] = "none: one table holds labels and scores (ids checked distinct)"
    ignored = dataset_metadata_columns(shards.schema.names, plan)
    if ignored:
        notes.append("table columns ignored (not labels or scores): " + ", ".join(ignored[:20]))
    return report, info, counts, notes


def _shard_hook(shard: Shard) -> None:
    """Called before each shard is opened (tests replace it to change a shard mid-run)."""


def _first_scores(
    shards: ShardSet, columns: list[str], plan: ColumnPlan, tax: Taxonomy, src: str
) -> np.ndarray | None:
    """The scores of the first non-empty batch (at most 65,536 rows): the sample the
    path choice and the range splitters use."""
    for batch in shards.batches(["id", *plan.predictions], 65536):
        table = pa.Table.from_batches([batch])
        ids = read_ids(batch, src, PredictionError)
        _, rows = read_scores(table, ids, tax, src)
        if rows.scores.shape[0]:
            return rows.scores
    return None


def _count_unscored(
    counts: _Counts, ids: pa.Array, rows: Any, table: pa.Table, plan: ColumnPlan
) -> None:
    n_null, n_failed = int(rows.null.sum()), int(rows.failed.sum())
    counts.n_null += n_null
    counts.n_failed += n_failed
    if n_null and len(counts.null_ids) < SHOW:
        _add_ids(counts.null_ids, ids.filter(pa.array(rows.null)).to_pylist())
    if n_failed and len(counts.failed) < SHOW:
        err = table.column("error").combine_chunks() if "error" in table.column_names else None
        for i in np.flatnonzero(rows.failed)[:SHOW]:
            if len(counts.failed) < SHOW:
                text = "" if err is None else str(err[int(i)].as_py())
                counts.failed.append((str(ids[int(i)].as_py()), text))


class _DistinctIds:
    """Checks that a one-table input gives each id once: the 64-bit hashes of the ids
    (with their row) go to hash partitions (in memory when they fit); equal hashes
    within a partition are confirmed on the ids themselves by a second read of the
    rows concerned only."""

    def __init__(self, run: _Run, n: int, src: str, attempt: str) -> None:
        self.src = src
        schema = pa.schema([("h", pa.uint64()), ("row", pa.int64())])
        n_parts = max(1, -(-(n * 16 * 3) // max(1, run.budget.batch_bytes)))
        folder = None if n_parts == 1 else run.folder / f"ids-{attempt.split()[0]}"
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
        self.parts = SpillPartitions(folder, "ids", n_parts, schema)

    def add(self, ids: pa.Array, first_row: int) -> None:
        h = id_hashes(ids)
        rows = np.arange(first_row, first_row + len(ids), dtype=np.int64)
        batch = pa.RecordBatch.from_arrays([pa.array(h), pa.array(rows)], names=["h", "row"])
        self.parts.write(batch, (h % np.uint64(self.parts.n)).astype(np.int64))

    def check(self, shards: ShardSet, *, columns: list[str], batch_rows: int) -> None:
        self.parts.close()
        suspects: list[np.ndarray] = []
        for i in range(self.parts.n):
            t = self.parts.read(i)
            self.parts.drop(i)
            h = t.column("h").to_numpy()
            ordered = np.sort(h)
            repeated = ordered[1:][ordered[1:] == ordered[:-1]]
            if repeated.size:  # rare: the rows whose hash repeats, confirmed on the ids
                rows = t.column("row").to_numpy()
                suspects.append(np.sort(rows[np.isin(h, repeated)]))
        if not suspects:
            return
        wanted = np.unique(np.concatenate(suspects))
        seen: dict[str, int] = {}
        at = 0
        for batch in shards.batches(columns, batch_rows):
            n = batch.num_rows
            lo, hi = np.searchsorted(wanted, [at, at + n])
            if hi > lo:
                ids = read_ids(batch, self.src, DatasetError)
                for r in wanted[lo:hi]:
                    v = str(ids[int(r - at)].as_py())
                    if v in seen:
                        raise DatasetError(
                            f"{self.src}: row {int(r) + 1}: duplicate id {v!r} (first seen at "
                            f"row {seen[v] + 1}); ids must be distinct across all shards"
                        )
                    seen[v] = int(r)
            at += n


# --------------------------------------------------------------------- id join

_DS_SCHEMA_FIELDS = ("id", "row", "lab")


def _score_joined(
    run: _Run, ds_shards: ShardSet, pred_shards: ShardSet
) -> tuple[dict[str, Any], dict[str, Any], _Counts, list[str]]:
    tax = run.taxonomy
    k = tax.k
    ds_src, pred_src = ds_shards.source, pred_shards.source
    ds_plan = plan_columns(ds_shards.schema, tax, ds_src, labels=True, predictions=False)
    pred_plan = plan_columns(pred_shards.schema, tax, pred_src, labels=False, predictions=True)
    f32 = _float32_scores(pred_shards.schema, pred_plan)
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
    counts = _Counts(n_dataset=n_ds, n_read=n_pred)
    total_rows = n_ds + n_pred
    done = 0
    run.step(f"partitioning the dataset by id ({n_parts} partition{'s' if n_parts > 1 else ''})")
    reader = LabelReader(tax, None)
    ds_parts = SpillPartitions(folder, "dataset", n_parts, ds_schema)
    batch_rows = run.budget.batch_rows(_bytes_per_row(ds_shards, k))
    at = 0
    for batch in ds_shards.batches(["id", *ds_plan.labels], batch_rows, on_shard=_shard_hook):
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
    batch_rows = run.budget.batch_rows(_bytes_per_row(pred_shards, k))
    sample: np.ndarray | None = None
    at = 0
    pred_cols = ["id", *pred_plan.predictions]
    for batch in pred_shards.batches(pred_cols, batch_rows, on_shard=_shard_hook):
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
        joined = _Counts(n_dataset=n_ds, n_read=n_pred)
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
    run: _Run,
    ds_parts: SpillPartitions,
    pred_parts: SpillPartitions,
    i: int,
    c: _Counts,
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
        _add_ids(c.missing_ids, ds_ids[:SHOW] if n_missing else [])
        _check_mismatch(run, c, pred_src)
        return
    if len(ds_ids) == 0:
        c.n_unknown += len(pred_ids)
        _add_ids(c.unknown_ids, pred_ids.slice(0, SHOW).to_pylist())
        _check_mismatch(run, c, pred_src)
        return
    j = join_ids(pred_ids, ds_ids, pred_src, PredictionError)
    c.n_missing += j.n_missing
    c.n_duplicate += j.n_duplicate
    c.n_unknown += j.n_unknown
    _add_ids(c.missing_ids, j.missing_ids)
    _add_ids(c.duplicate_ids, j.duplicate_ids)
    _add_ids(c.unknown_ids, j.unknown_ids)
    _check_mismatch(run, c, pred_src)
    state = pred.column("state").to_numpy()[j.src]
    null_src, failed_src = j.src[state == 1], j.src[state == 2]
    c.n_null += int(null_src.size)
    c.n_failed += int(failed_src.size)
    if null_src.size and len(c.null_ids) < SHOW:
        _add_ids(c.null_ids, pred_ids.take(pa.array(null_src[:SHOW])).to_pylist())
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


def _check_mismatch(run: _Run, c: _Counts, src: str) -> None:
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


# --------------------------------------------------------------------- result


def _result(
    run: _Run,
    report: dict[str, Any],
    info: dict[str, Any],
    c: _Counts,
    notes: list[str],
    pred_shards: ShardSet,
    ds_shards: ShardSet | None,
    predictions: str,
    dataset: Any,
) -> EvaluationResult:
    tax = run.taxonomy
    if c.n_scored == 0:
        said = [
            f"{n} {what}"
            for n, what in ((c.n_null, "null predictions"), (c.n_failed, "failed requests"))
            if n
        ]
        extra = f" ({', '.join(said)})" if said else ""
        raise PredictionError(f"{predictions}: no dataset row has a usable prediction{extra}")
    summary = report_figures(report, tax, run.threshold)
    all_notes = list(notes)
    if c.n_missing:
        all_notes.append(
            f"{c.n_missing} dataset rows have no prediction and are not scored "
            f"(on_mismatch={run.on_mismatch})"
        )
    if c.n_null:
        all_notes.append(
            f"{c.n_null} dataset rows have a null prediction (unknown: no scores, labels "
            f"or output) and are not scored; first: {', '.join(map(repr, c.null_ids))}"
        )
    if c.n_failed:
        first = "; ".join(f"{i!r}: {e}" for i, e in c.failed)
        all_notes.append(
            f"{c.n_failed} dataset rows come from failed requests (an 'error' field) and "
            f"are not scored; first: {first}"
        )
    if c.n_duplicate or c.n_unknown:
        all_notes.append(
            f"dropped {c.n_duplicate} duplicate and {c.n_unknown} unknown-id prediction rows "
            f"(on_mismatch={run.on_mismatch})"
        )
    if c.n_out_of_range:
        all_notes.append(
            f"{c.n_out_of_range} scores lie outside [0, 1] (logits?); ranking figures use "
            "them as they are, thresholded figures compare them with the threshold"
        )
    all_notes.extend(summary.notes)
    if c.binary:
        all_notes.append(
            "scores are binary (0/1): ties are heavy, so AP, ROC AUC and the ranking figures "
            "describe a single operating point; graded scores rank better"
        )
    n_no_known = int(report["n_rows_without_known_label"])
    if n_no_known:
        all_notes.append(
            f"{n_no_known} scored rows have no known label: they are left out of the "
            "per-row figures (ranking loss, LRAP, coverage error, one-error)"
        )
    all_notes.append(ABSENT)
    known = int(np.sum(report["support"]) + np.sum(report["n_negative"]))
    counts = {
        "dataset_rows": c.n_dataset,
        "scored": c.n_scored,
        "excluded": c.n_dataset - c.n_scored,
        "missing_prediction": c.n_missing,
        "excluded_by_parse_policy": 0,
        "null_prediction": c.n_null,
        "failed_request": c.n_failed,
        "duplicate_rows_dropped": c.n_duplicate,
        "unknown_ids_dropped": c.n_unknown,
        "rows_without_known_labels": n_no_known,
        "known_cells": known,
        "unknown_cells": int(np.sum(report["n_unknown"])),
    }
    info["shards"] = {
        "predictions": len(pred_shards.shards),
        "dataset": None if ds_shards is None else len(ds_shards.shards),
    }
    info["intervals"] = "not computed out of core"
    info["absent"] = ["scored_rows.parquet", "report.html", "plots", "card_recipe"]
    config = {
        "threshold": run.threshold,
        "taxonomy": {"name": tax.name, "version": tax.version, "k": tax.k, "ids": list(tax.ids)},
        "parse_policy": None,
        "on_mismatch": run.on_mismatch if ds_shards is not None else None,
        "format": "parquet",
        "mapping": None,
        "rule": None,
        "min_annotators": None,
        "out_of_core": info,
    }
    ds_source = str(dataset) if ds_shards is not None else predictions
    ds_name = Path(ds_source).name.removesuffix(".parquet")
    card = {
        "label": "benchmark card's reference recipe (compatibility mode; not standard AP)",
        "threshold": run.threshold,
        "rows_used": None,
        "rows_skipped_partial_labels": None,
        "map": None,
        "label_ranking_loss": None,
        "per_category_ap": {},
        "caveats": "not computed out of core: the card's recipe walks every row in "
        "dataset order in memory",
    }
    system = {
        "kind": "predictions",
        "source": predictions,
        "format": "parquet",
        "predictions": c.kind,
        "rows_read": c.n_read,
        "shards": len(pred_shards.shards),
    }
    result = EvaluationResult(
        inputs={"dataset": None, "predictions": None, "taxonomy": None, "mapping": None},
        config=config,
        dataset={
            "name": ds_name,
            "level": "prompt",
            "source": ds_source,
            "sha256": None,
            "rows": c.n_dataset,
        },
        system=system,
        counts=counts,
        figures={**summary.figures, "intervals": None},
        per_category=[{**r, "ap_ci": None, "ap_ci_undefined": None} for r in summary.per_category],
        excluded_categories=summary.excluded,
        card_recipe=card,
        agreement=None,
        parse=None,
        binary_scores=c.binary,
        notes=all_notes,
    )
    return result
