"""Spill files: record batches written to disk in numbered partitions and read back one
partition at a time (Arrow IPC streams), and the 64-bit id hash that decides a row's
partition in the id join.

A partition that is never written reads back as empty. With one partition and
``in_memory=True`` nothing touches the disk: the batches are kept as they are (the
join of inputs that fit the memory limit).
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

import numpy as np
import pyarrow as pa

__all__ = ["SpillPartitions", "id_hashes"]

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


def _mix(h: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, in place (uint64 arithmetic wraps)."""
    h ^= h >> np.uint64(30)
    h *= _M2
    h ^= h >> np.uint64(27)
    h *= _M3
    h ^= h >> np.uint64(31)
    return h


def id_hashes(ids: pa.Array) -> np.ndarray:
    """A 64-bit hash of each string of ``ids`` (a string array without nulls), the same
    for equal strings wherever they come from: a polynomial over the bytes, then mixed.
    It only decides partitions; ids are always compared on their bytes."""
    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32, count=n + 1, offset=ids.offset * 4)
    lengths = np.diff(offsets).astype(np.int64)
    start, stop = int(offsets[0]), int(offsets[-1])
    data = ids.buffers()[2]
    h = lengths.astype(np.uint64) * _M1
    if stop > start and data is not None:
        body = np.frombuffer(data, dtype=np.uint8)[start:stop].astype(np.uint64)
        body += np.uint64(1)
        starts = offsets[:-1].astype(np.int64) - start
        pos = np.arange(stop - start, dtype=np.int64) - np.repeat(starts, lengths)
        powers = np.empty(int(lengths.max()), dtype=np.uint64)
        powers[0] = 1
        with np.errstate(over="ignore"):
            for i in range(1, powers.size):
                powers[i] = powers[i - 1] * _M3
            body *= powers[pos]
        nonempty = lengths > 0
        sums = np.add.reduceat(body, starts[nonempty])
        h[nonempty] ^= sums
    with np.errstate(over="ignore"):
        return _mix(h)


class SpillPartitions:
    """``n`` partitions of record batches of one schema: :meth:`write` appends a batch's
    rows to the partition each row names, :meth:`read` gives a partition back as one
    table. Files live in ``folder`` (removed by the caller's temporary directory)."""

    def __init__(self, folder: Path | None, name: str, n: int, schema: pa.Schema) -> None:
        self.n = n
        self.schema = schema
        self.bytes_written = 0
        self._memory: list[list[pa.RecordBatch]] | None = None
        self._paths: list[Path] = []
        self._writers: list[pa.ipc.RecordBatchStreamWriter | None] = []
        self._sinks: list[pa.NativeFile | None] = []
        if folder is None:
            if n != 1:
                raise ValueError("partitions kept in memory: one partition only")
            self._memory = [[]]
        else:
            self._paths = [folder / f"{name}-{i:05d}.arrows" for i in range(n)]
            self._writers = [None] * n
            self._sinks = [None] * n

    def write(self, batch: pa.RecordBatch, part: np.ndarray | None) -> None:
        """Append the rows of ``batch`` to their partitions (``part``: one index per row;
        None: all to partition 0)."""
        if batch.num_rows == 0:
            return
        if part is None or self.n == 1:
            self._append(0, batch)
            return
        order = np.argsort(part, kind="stable")
        counts = np.bincount(part, minlength=self.n)
        sorted_batch = batch.take(pa.array(order))
        at = 0
        for i in np.flatnonzero(counts):
            c = int(counts[i])
            self._append(int(i), sorted_batch.slice(at, c))
            at += c

    def _append(self, i: int, batch: pa.RecordBatch) -> None:
        self.bytes_written += batch.nbytes
        if self._memory is not None:
            self._memory[i].append(batch)
            return
        w = self._writers[i]
        if w is None:
            sink = pa.OSFile(str(self._paths[i]), "wb")
            self._sinks[i] = sink
            w = pa.ipc.new_stream(sink, self.schema)
            self._writers[i] = w
        w.write_batch(batch)

    def close(self) -> None:
        """Finish writing (each partition file gets its end-of-stream marker)."""
        for i, w in enumerate(self._writers):
            if w is not None:
                w.close()
                sink = self._sinks[i]
                assert sink is not None
                sink.close()
                self._writers[i] = None

    def read(self, i: int) -> pa.Table:
        """Partition ``i`` as one table (empty when nothing was written to it)."""
        if self._memory is not None:
            return pa.Table.from_batches(self._memory[i], schema=self.schema)
        p = self._paths[i]
        if not p.exists():
            return self.schema.empty_table()
        with pa.OSFile(str(p), "rb") as src:
            table = pa.ipc.open_stream(src).read_all()
        return table

    def drop(self, i: int) -> None:
        """Free partition ``i`` (its file, or its batches) once it has been read."""
        if self._memory is not None:
            self._memory[i] = []
        elif self._paths and self._paths[i].exists():
            self._paths[i].unlink()

    def __enter__(self) -> SpillPartitions:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
