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
import pyarrow.compute as pc

__all__ = ["SpillPartitions", "id_hashes", "small_codes"]

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
    """A 64-bit hash of each string of ``ids`` (a string array without nulls), a function
    of the string alone (the same in any batch). It only decides partitions; ids are
    always compared on their bytes. ASCII ids up to 64 bytes are padded by Arrow and
    folded eight bytes at a time; others go through a polynomial over their bytes."""
    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    nbytes = np.asarray(pc.binary_length(ids).to_numpy(zero_copy_only=False), dtype=np.int64)
    short_ascii = nbytes <= 64
    if int(nbytes.sum()) != int(pc.sum(pc.utf8_length(ids)).as_py() or 0):
        chars = np.asarray(pc.utf8_length(ids).to_numpy(zero_copy_only=False), dtype=np.int64)
        short_ascii &= chars == nbytes
    with np.errstate(over="ignore"):
        if short_ascii.all():
            return _mix(_padded_words_hash(ids, nbytes))
        out = np.empty(n, dtype=np.uint64)
        for sel, fn in ((short_ascii, _padded_words_hash), (~short_ascii, _polynomial_hash)):
            rows = np.flatnonzero(sel)
            if rows.size:
                part = ids.take(pa.array(rows))
                out[rows] = _mix(fn(part, nbytes[rows]))
        return out


def _padded_words_hash(ids: pa.Array, nbytes: np.ndarray) -> np.ndarray:
    """ASCII ids padded with spaces to one width, folded eight bytes at a time; a word
    past a string's length is not folded (so the width chosen does not matter) and the
    length is in the seed ("a" and "a " differ)."""
    n = len(ids)
    width = max(8, (int(nbytes.max()) + 7) // 8 * 8)
    padded = pc.utf8_rpad(ids, width=width, padding=" ")
    at = int(
        np.frombuffer(padded.buffers()[1], dtype=np.int32, count=1, offset=padded.offset * 4)[0]
    )
    body = np.frombuffer(padded.buffers()[2], dtype=np.uint8)[at : at + n * width]
    words = np.ascontiguousarray(body).view(np.uint64).reshape(n, width // 8)
    h: np.ndarray = nbytes.astype(np.uint64) * _M1
    for j in range(width // 8):
        folded = (h ^ words[:, j]) * _M2
        folded ^= folded >> np.uint64(29)
        if int(nbytes.min()) > 8 * j:
            h = folded
        else:
            h = np.where(nbytes > 8 * j, folded, h)
    return h


def _polynomial_hash(ids: pa.Array, nbytes: np.ndarray) -> np.ndarray:
    """Any ids: the sum of (byte + 1) x M^position over each string's bytes."""
    n = len(ids)
    h: np.ndarray = nbytes.astype(np.uint64) * _M1
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32, count=n + 1, offset=ids.offset * 4)
    start, stop = int(offsets[0]), int(offsets[-1])
    data = ids.buffers()[2]
    if stop == start or data is None:
        return h
    body = np.frombuffer(data, dtype=np.uint8)[start:stop].astype(np.uint64)
    body += np.uint64(1)
    starts = offsets[:-1].astype(np.int64) - start
    pos = np.arange(stop - start, dtype=np.int64) - np.repeat(starts, nbytes)
    powers = np.empty(int(nbytes.max()), dtype=np.uint64)
    powers[0] = 1
    for i in range(1, powers.size):
        powers[i] = powers[i - 1] * _M3
    body *= powers[pos]
    nonempty = nbytes > 0
    h[nonempty] ^= np.add.reduceat(body, starts[nonempty])
    return h


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
        order = np.argsort(small_codes(part), kind="stable")
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


def small_codes(codes: np.ndarray) -> np.ndarray:
    """Partition or range numbers as uint16 when they fit: NumPy's stable sort of
    16-bit integers is a radix sort (linear), of wider ones a merge sort."""
    if codes.size and int(codes.max()) < 1 << 16:
        return codes.astype(np.uint16)
    return codes
