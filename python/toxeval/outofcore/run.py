"""What every out-of-core pass shares: :class:`Run` (the settings, the memory budget,
the spill folder, progress, the metric states it starts), :class:`RowCounts` (what the
rows were), the hook called before each shard is opened, and the small readers both
passes use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from toxeval.ids import SHOW
from toxeval.outofcore.columns import ColumnPlan, read_ids, read_scores
from toxeval.outofcore.memory import MemoryBudget
from toxeval.outofcore.states import TREE, RangeStates, TreeStates, choose_path
from toxeval.predictions import PredictionError
from toxeval.predictions.schema import OnMismatch
from toxeval.scoring.result import Progress
from toxeval.shards import Shard, ShardSet
from toxeval.taxonomy import Taxonomy

__all__ = [
    "ABSENT",
    "RowCounts",
    "RowProgress",
    "Run",
    "add_ids",
    "bytes_per_row",
    "count_unscored",
    "first_scores",
    "float32_scores",
    "on_shard",
    "shard_hook",
]

#: Called with (rows read so far, rows in all shards) as batches stream.
RowProgress = Callable[[int, int], None]


ABSENT = (
    "out of core: no scored_rows.parquet, HTML report, --plots figures or card recipe "
    "(each needs every scored row in memory); `toxeval compare` cannot resample this "
    "result"
)


@dataclass
class RowCounts:
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


def add_ids(into: list[Any], ids: Any) -> None:
    for i in ids:
        if len(into) >= SHOW:
            return
        into.append(i)


@dataclass
class Run:
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


def float32_scores(schema: pa.Schema, plan: ColumnPlan) -> bool:
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


def bytes_per_row(shards: ShardSet, k: int) -> int:
    per = shards.uncompressed_bytes // max(1, shards.num_rows)
    return int(per + 8 * k * 3 + 64)


def shard_hook(shard: Shard) -> None:
    """Called before each shard is opened (tests replace it to change a shard mid-run)."""


def on_shard(shard: Shard) -> None:
    """What the passes give ``ShardSet.batches``: :func:`shard_hook`, looked up when called."""
    shard_hook(shard)


def first_scores(
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


def count_unscored(
    counts: RowCounts, ids: pa.Array, rows: Any, table: pa.Table, plan: ColumnPlan
) -> None:
    n_null, n_failed = int(rows.null.sum()), int(rows.failed.sum())
    counts.n_null += n_null
    counts.n_failed += n_failed
    if n_null and len(counts.null_ids) < SHOW:
        add_ids(counts.null_ids, ids.filter(pa.array(rows.null)).to_pylist())
    if n_failed and len(counts.failed) < SHOW:
        err = table.column("error").combine_chunks() if "error" in table.column_names else None
        for i in np.flatnonzero(rows.failed)[:SHOW]:
            if len(counts.failed) < SHOW:
                text = "" if err is None else str(err[int(i)].as_py())
                counts.failed.append((str(ids[int(i)].as_py()), text))
