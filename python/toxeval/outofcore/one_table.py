"""The out-of-core pass over one table holding labels and scores: batches straight into
the metric states, ids checked distinct across all shards (:class:`_DistinctIds`), the
pass started again on range partitions when the tree's state outgrows its share.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from toxeval.datasets import DatasetError
from toxeval.datasets.labels import LabelReader
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
    bytes_per_row,
    count_unscored,
    first_scores,
    float32_scores,
    on_shard,
)
from toxeval.outofcore.spill import SpillPartitions, id_hashes
from toxeval.outofcore.states import RANGES, StatesOutgrown
from toxeval.shards import ShardSet

__all__ = ["score_one_table"]


def score_one_table(
    run: Run, shards: ShardSet
) -> tuple[dict[str, Any], dict[str, Any], RowCounts, list[str]]:
    tax = run.taxonomy
    src = shards.source
    plan = plan_columns(shards.schema, tax, src, labels=True, predictions=True)
    reader = LabelReader(tax, None)
    columns = ["id", *plan.labels, *plan.predictions]
    batch_rows = run.budget.batch_rows(bytes_per_row(shards, tax.k))
    f32 = float32_scores(shards.schema, plan)
    n = shards.num_rows
    attempts = [run.pick_path(n, first_scores(shards, columns, plan, tax, src))]
    notes: list[str] = []
    while True:
        path = attempts[-1]
        counts = RowCounts(n_dataset=n, n_read=n)
        sample: np.ndarray | None = None
        states: Any = None
        done = 0
        ids_check = _DistinctIds(run, n, src, path)
        run.step(f"scoring ({path})")
        try:
            for batch in shards.batches(columns, batch_rows, on_shard=on_shard):
                table = pa.Table.from_batches([batch])
                ids = read_ids(batch, src, DatasetError)
                ids_check.add(ids, done)
                labels = read_labels(table.select(list(plan.labels)), reader, src)
                kind, rows = read_scores(table.select(["id", *plan.predictions]), ids, tax, src)
                scored = ~(rows.null | rows.failed)
                count_unscored(counts, ids, rows, table, plan)
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


class _DistinctIds:
    """Checks that a one-table input gives each id once: the 64-bit hashes of the ids
    (with their row) go to hash partitions (in memory when they fit); equal hashes
    within a partition are confirmed on the ids themselves by a second read of the
    rows concerned only."""

    def __init__(self, run: Run, n: int, src: str, attempt: str) -> None:
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
