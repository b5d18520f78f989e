"""Parquet inputs read as a stream of record batches: one file or a directory of shards.

This is the file layer of out-of-core scoring (:mod:`toxeval.outofcore`), kept apart from
it so that the in-memory readers can move onto it too: it knows Parquet, shards and
schemas, nothing about labels, scores or metrics.

- :func:`discover_shards` finds the shards (a file, or the ``*.parquet`` files of a
  directory, sorted by name, hidden ``.``/``_`` files skipped as pyarrow's datasets
  skip them), reads each footer once, and checks that every shard has the first one's
  columns with the same types, naming the shard and the column when not.
- :meth:`ShardSet.batches` reads the chosen columns row group by row group
  (``ParquetFile.iter_batches``), so what is held at once is one batch, never a file.
- A shard that disappears, or whose size or modification time changes between
  discovery and the end of its read, is a :class:`ShardError` naming it: a result is
  never computed from a file that changed under it.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from toxeval.file_formats import TEXT_FORMATS, is_parquet_name, name_format
from toxeval.input_columns import check_column_names

__all__ = ["Shard", "ShardError", "ShardSet", "discover_shards", "is_parquet_input", "shard_paths"]


class ShardError(ValueError):
    """A Parquet input (a file or a directory of shards) cannot be streamed: not found,
    no shards, not Parquet, schemas that differ, or a shard changed while read."""


@dataclass(frozen=True)
class Shard:
    """One Parquet file as found at discovery: what is checked again when it is read."""

    path: Path
    size: int
    mtime_ns: int
    num_rows: int
    num_row_groups: int
    uncompressed_bytes: int  # the footer's total of the row groups' uncompressed sizes

    def check_unchanged(self, when: str) -> None:
        """A :class:`ShardError` when the file is gone or its size or modification time
        is not what discovery saw."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            raise ShardError(
                f"{self.path}: the shard disappeared {when}; the results would miss its rows"
            ) from None
        except OSError as e:
            raise ShardError(f"{self.path}: cannot read the shard {when}: {e}") from None
        if st.st_size != self.size or st.st_mtime_ns != self.mtime_ns:
            raise ShardError(
                f"{self.path}: the shard changed {when} (size {self.size} -> {st.st_size} "
                "bytes, or its modification time); score a folder nothing writes to"
            )


@dataclass(frozen=True)
class ShardSet:
    """The shards of one input, in order, and the schema they share."""

    source: str  # the path as given
    shards: tuple[Shard, ...]
    schema: pa.Schema

    @property
    def num_rows(self) -> int:
        return sum(s.num_rows for s in self.shards)

    @property
    def uncompressed_bytes(self) -> int:
        return sum(s.uncompressed_bytes for s in self.shards)

    @property
    def disk_bytes(self) -> int:
        return sum(s.size for s in self.shards)

    def batches(
        self,
        columns: Sequence[str],
        batch_rows: int,
        *,
        on_shard: Callable[[Shard], None] | None = None,
        prefetch: bool = True,
    ) -> Iterator[pa.RecordBatch]:
        """Record batches of ``columns``, at most ``batch_rows`` rows each, shard after
        shard in order (empty shards give none). ``on_shard(shard)`` is called before
        each shard is opened. Each shard is checked against what discovery saw before it
        is opened and after its last batch. With ``prefetch`` the next batch is read on
        a thread while the caller works on this one (one batch more in memory)."""
        it = self._batches(columns, batch_rows, on_shard)
        return _prefetched(it) if prefetch else it

    def _batches(
        self,
        columns: Sequence[str],
        batch_rows: int,
        on_shard: Callable[[Shard], None] | None,
    ) -> Iterator[pa.RecordBatch]:
        for shard in self.shards:
            if on_shard is not None:
                on_shard(shard)
            shard.check_unchanged("before it was read")
            if shard.num_rows == 0:
                shard.check_unchanged("while it was read")
                continue
            try:
                with open(shard.path, "rb") as f:
                    pf = pq.ParquetFile(f)
                    yield from pf.iter_batches(
                        batch_size=max(1, batch_rows), columns=list(columns), use_threads=True
                    )
            except FileNotFoundError:
                shard.check_unchanged("while it was read")
                raise
            except (OSError, pa.ArrowException) as e:
                shard.check_unchanged("while it was read")
                raise ShardError(f"{shard.path}: cannot read the shard: {e}") from None
            shard.check_unchanged("while it was read")


_DONE = object()


def _prefetched(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``it`` run on a thread one item ahead (pyarrow reads with the GIL released, so
    reading overlaps the caller's work); its exceptions are raised here, in order.
    Closing the generator stops the thread after the item it is reading."""
    q: queue.Queue[Any] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def work() -> None:
        try:
            for item in it:
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(_DONE)
        except BaseException as e:  # handed to the consumer, raised there
            q.put(e)

    t = threading.Thread(target=work, name="toxeval-shard-reader", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while t.is_alive():
            try:
                q.get_nowait()
            except queue.Empty:
                t.join(timeout=0.1)
        close = getattr(it, "close", None)
        if close is not None:
            close()


def is_parquet_input(path: str | Path) -> bool:
    """Whether ``path`` is a directory (of shards) or a file with a Parquet suffix."""
    p = Path(path)
    return p.is_dir() or is_parquet_name(p)


def shard_paths(root: Path) -> list[Path]:
    """The shard files of ``root``: itself if a file, else its ``*.parquet`` files (not
    hidden or ``_``-prefixed) in name order; :class:`ShardError` when there are none."""
    if root.is_file():
        fmt = name_format(root)
        if fmt is not None and fmt.format in TEXT_FORMATS:
            raise ShardError(
                f"{root}: out-of-core scoring streams Parquet (a file or a folder of "
                f"shards), not {fmt.format.upper()}; convert it to Parquet, or score it in "
                "memory (without --memory-limit)"
            )
        return [root]
    if not root.exists():
        raise ShardError(f"{root}: no such file or directory")
    if not root.is_dir():
        raise ShardError(f"{root}: not a file or a directory")
    found = sorted(
        (p for p in root.iterdir() if is_parquet_name(p) and not p.name.startswith((".", "_"))),
        key=lambda p: p.name,
    )
    others = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))]
    if others and not found:
        raise ShardError(
            f"{root}: holds no *.parquet shard, only folders ({others[0].name}, ...); "
            "give the folder of the shards (partitioned sub-folders are not read)"
        )
    if not found:
        raise ShardError(f"{root}: no *.parquet shards in this directory")
    bad = [p for p in found if not p.is_file()]
    if bad:
        raise ShardError(f"{bad[0]}: is not a file")
    return found


def _read_shard(path: Path) -> tuple[Shard, pa.Schema]:
    try:
        st = path.stat()
        with open(path, "rb") as f:
            meta = pq.ParquetFile(f).metadata
            schema = meta.schema.to_arrow_schema()
    except FileNotFoundError:
        raise ShardError(f"{path}: the shard disappeared while the shards were listed") from None
    except (OSError, pa.ArrowException) as e:
        raise ShardError(f"{path}: not a readable Parquet file: {e}") from None
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    shard = Shard(
        path=path,
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        num_rows=meta.num_rows,
        num_row_groups=meta.num_row_groups,
        uncompressed_bytes=size,
    )
    return shard, schema


def _check_same_schema(first: Shard, schema: pa.Schema, shard: Shard, other: pa.Schema) -> None:
    want = {f.name: f.type for f in schema}
    got = {f.name: f.type for f in other}
    for name in want:
        if name not in got:
            raise ShardError(
                f"{shard.path}: no column {name!r}, which {first.path.name} has; every shard "
                "must have the same columns"
            )
    for name in got:
        if name not in want:
            raise ShardError(
                f"{shard.path}: column {name!r} is not in {first.path.name}; every shard must "
                "have the same columns"
            )
    for name, t in want.items():
        if got[name] != t:
            raise ShardError(
                f"{shard.path}: column {name!r} is {got[name]}, but {t} in "
                f"{first.path.name}; every shard must give a column the same type"
            )


def discover_shards(path: str | Path) -> ShardSet:
    """The shards of ``path`` (a Parquet file, or a directory of ``*.parquet`` files read
    in name order), with their schemas checked to agree (:class:`ShardError` otherwise)."""
    root = Path(os.fspath(path))
    paths = shard_paths(root)
    shards: list[Shard] = []
    schema: pa.Schema | None = None
    for p in paths:
        shard, sch = _read_shard(p)
        check_column_names(sch.names, str(p), ShardError)
        if schema is None:
            schema = sch
        else:
            _check_same_schema(shards[0], schema, shard, sch)
        shards.append(shard)
    assert schema is not None
    return ShardSet(source=str(path), shards=tuple(shards), schema=schema)
