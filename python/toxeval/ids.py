"""Ids and joins by id, shared by datasets and predictions.

A dataset's ids must be distinct, and a prediction file is matched to the dataset by id.
Both run over pyarrow string arrays without a Python string per row:

- :class:`IdIndex` sorts ids by a 64-bit hash of their bytes, so a uniqueness check or
  a join of two permutations of the same ids is a sort of integers; every match the
  hashes propose is confirmed on the bytes, and a collision falls back to Arrow's hash
  tables (exact, slower).
- :class:`StringColumn` is the read-only column of strings a dataset keeps its ids,
  texts and responses in; it computes its :class:`IdIndex` once.
- :func:`join_ids` matches prediction ids to dataset rows and reports the dataset ids
  without a prediction, repeated prediction ids and ids not in the dataset.
- :func:`index_in` is the one place that picks how ids are looked up: the native
  kernel (``toxeval._core.ids_index_in``, Rust ``rust/ids/``: a hash table over the
  Arrow string buffers, every match confirmed on the bytes) when the compiled module
  has it, else the numpy hash index above and Arrow's ``index_in``.
  ``TOXEVAL_ID_JOIN=arrow`` forces the latter (to compare, or to step around the
  kernel); both give the same positions, so the same joins and messages.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toxeval.arrow_numpy import from_numpy, string_buffers

__all__ = [
    "JOIN_ENV",
    "SHOW",
    "IdIndex",
    "IdJoin",
    "StringColumn",
    "dataset_id_array",
    "id_index",
    "index_in",
    "join_ids",
    "native_join_available",
]

# How many ids a message names before "...".
SHOW = 5

# Ids up to this many UTF-8 bytes are matched through sorted 64-bit hashes (numpy sorts
# of integers), longer ones through Arrow's hash tables.
_ID_BYTES_MAX = 64
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(31))

#: ``TOXEVAL_ID_JOIN=arrow`` looks ids up with numpy hashes and Arrow's hash tables
#: instead of the native kernel; unset or ``auto``: native when the module has it.
JOIN_ENV = "TOXEVAL_ID_JOIN"


def native_join_available() -> bool:
    """True when ids are looked up by the native kernel: the compiled module has it
    and :data:`JOIN_ENV` does not ask for Arrow."""
    if os.environ.get(JOIN_ENV, "auto").strip().lower() == "arrow":
        return False
    from toxeval import _core

    return hasattr(_core, "ids_index_in")


def _text_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def index_in(
    values: pa.Array | pa.ChunkedArray,
    value_set: pa.Array | pa.ChunkedArray,
    set_keys: np.ndarray | None = None,
) -> np.ndarray:
    """For each of ``values`` (strings without nulls; ``string`` or ``large_string``,
    chunked or not), the first row of ``value_set`` holding the same string, or -1
    (an int64 array). Native when :func:`native_join_available`, else Arrow's
    ``index_in``; both confirm every match on the bytes. ``set_keys``: the native
    sort keys of ``value_set`` when known (:meth:`StringColumn.native_keys`)."""
    if native_join_available():
        from toxeval import _core

        set_offsets, set_data = string_buffers(_text_array(value_set))
        chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
        parts = [
            _core.ids_index_in(*string_buffers(chunk), set_offsets, set_data, set_keys)
            for chunk in chunks
        ]
        return np.concatenate(parts) if len(parts) != 1 else parts[0]
    pos = pc.index_in(values, value_set=_text_array(value_set))
    out = pos.fill_null(-1)
    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks()
    return np.asarray(out.to_numpy(zero_copy_only=False), dtype=np.int64)


@dataclass(frozen=True)
class IdIndex:
    """Strings sorted by a 64-bit hash: uniqueness checks and joins by sorting integers.

    Arrow's hash tables (``unique``, ``index_in``) take a few hundred nanoseconds per
    string; hashing the zero-padded bytes in 8-byte words with numpy, then one
    ``np.sort`` of ``hash | row`` keys (the row in the low bits, so no ``argsort`` is
    needed), costs a small fraction of that. Hashes only propose matches: every match is
    confirmed on the bytes (:meth:`same`), and hash collisions fall back to Arrow.
    """

    padded: np.ndarray  # (n, W) uint8: each string's bytes, zero-padded to W
    lengths: np.ndarray  # (n,) int64 byte lengths (tell "a" from "a\0")
    hashes: np.ndarray  # (n,) uint64, sorted, low ``row_bits`` bits cleared
    rows: np.ndarray  # (n,) intp: the row of each sorted hash

    def distinct_hashes(self) -> bool:
        """True when no two strings share a (truncated) hash: then they are all distinct."""
        return not bool((self.hashes[1:] == self.hashes[:-1]).any())

    def same(self, rows: np.ndarray, other: IdIndex, other_rows: np.ndarray) -> bool:
        """Whether string ``rows[i]`` equals ``other``'s string ``other_rows[i]`` for all i."""
        if self.padded.shape[1] != other.padded.shape[1]:
            return False
        # take along axis 0 copies whole rows (fancy indexing goes byte by byte)
        return bool(
            np.array_equal(np.take(self.lengths, rows), np.take(other.lengths, other_rows))
            and np.array_equal(
                np.take(self.padded, rows, axis=0), np.take(other.padded, other_rows, axis=0)
            )
        )


def id_index(arr: pa.Array) -> IdIndex | None:
    """The :class:`IdIndex` of a string array without nulls, or None when its strings are
    long (over ``_ID_BYTES_MAX`` bytes) or it is empty."""
    n = len(arr)
    if n == 0 or arr.null_count or not pa.types.is_string(arr.type):
        return None
    offsets, data = string_buffers(arr)
    lengths = np.diff(offsets).astype(np.int64)
    longest = int(lengths.max())
    if longest > _ID_BYTES_MAX:
        return None
    width = max(8, (longest + 7) // 8 * 8)
    start, stop = int(offsets[0]), int(offsets[-1])
    body = data[start:stop]
    shortest = int(lengths.min())
    if shortest == longest == width:
        padded = body.reshape(n, width)
    elif shortest == longest:
        padded = np.zeros((n, width), dtype=np.uint8)
        padded[:, :longest] = body.reshape(n, longest)
    else:
        padded = np.zeros((n, width), dtype=np.uint8)
        row = np.repeat(np.arange(n), lengths)
        col = np.arange(stop - start) - np.repeat(offsets[:-1].astype(np.int64) - start, lengths)
        padded[row, col] = body
    words = padded.view(np.uint64)  # native order: the hash is only compared in-process
    h = lengths.astype(np.uint64)
    h *= _MIX[0]
    for j in range(words.shape[1]):
        h ^= words[:, j]
        h *= _MIX[1]
        h ^= h >> _MIX[2]
    # the row number in the low bits: one sort of integers orders rows by hash
    row_bits = max(1, (n - 1).bit_length())
    low = np.uint64((1 << row_bits) - 1)
    h &= ~low
    h |= np.arange(n, dtype=np.uint64)
    h.sort()
    rows = (h & low).astype(np.intp)
    h &= ~low
    return IdIndex(padded=padded, lengths=lengths, hashes=h, rows=rows)


class StringColumn(Sequence[str]):
    """A read-only column of strings kept as a pyarrow array until Python wants the values.

    Readers that go through pyarrow hand ids, texts and responses over in this form, so
    ``toxeval score`` (which joins ids in Arrow and never reads the texts) builds no
    Python string per row. It behaves as a sequence of ``str``: ``len``, indexing,
    slicing (a ``list``), iteration and ``==`` with any sequence; the first slice or
    iteration, or many single lookups, turn it into a cached ``list`` once.
    ``.arrow`` is the underlying array, ``tolist()`` a fresh list.
    """

    __slots__ = ("_arr", "_index", "_keys", "_list", "_lookups")
    __hash__ = None  # type: ignore[assignment]  # like list: compared by value
    _EAGER_AFTER = 64  # single lookups served from Arrow before the list is built

    def __init__(self, arr: pa.Array | pa.ChunkedArray) -> None:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
        if not pa.types.is_string(arr.type):
            arr = pc.cast(arr, pa.string())
        self._arr: pa.Array = arr
        self._list: list[str] | None = None
        self._lookups = 0
        self._index: IdIndex | bool | None = False  # False: not computed yet
        self._keys: np.ndarray | None = None

    def native_keys(self) -> np.ndarray:
        """The native kernel's sort keys of the values (computed once): what
        :func:`index_in` and the uniqueness check sort the column by."""
        if self._keys is None:
            from toxeval import _core

            self._keys = _core.ids_sorted_keys(*string_buffers(self._arr))
        return self._keys

    def id_index(self) -> IdIndex | None:
        """The sorted-hash index of the values (computed once; None for long strings)."""
        if self._index is False:
            self._index = id_index(self._arr)
        assert self._index is not True
        return self._index

    def all_distinct(self) -> bool:
        """Whether no value repeats: the native lookup of the column in itself, else
        sorted hashes when they are distinct, else Arrow."""
        if not self._arr.null_count and native_join_available():
            from toxeval import _core

            buffers = string_buffers(self._arr)
            return not _core.ids_any_repeat(*buffers, self.native_keys())
        index = self.id_index()
        if index is not None and index.distinct_hashes():
            return True
        return len(pc.unique(self._arr)) == len(self._arr)

    @property
    def arrow(self) -> pa.Array:
        """The column as a pyarrow string array (no copy)."""
        return self._arr

    def _values(self) -> list[str]:
        if self._list is None:
            self._list = list(self._arr.to_numpy(zero_copy_only=False).tolist())
        return self._list

    def tolist(self) -> list[str]:
        return list(self._values())

    def __len__(self) -> int:
        return len(self._arr)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice) or self._list is not None:
            return self._values()[i]
        self._lookups += 1
        if self._lookups > self._EAGER_AFTER:
            return self._values()[i]
        n = len(self._arr)
        j = int(i)
        if not -n <= j < n:
            raise IndexError("StringColumn index out of range")
        return str(self._arr[j].as_py())

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())

    def __contains__(self, value: object) -> bool:
        if self._list is None and isinstance(value, str):
            return bool(pc.any(pc.equal(self._arr, value)).as_py())
        return value in self._values()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StringColumn):
            return bool(self._arr.equals(other._arr))
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and self._values() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        head = ", ".join(repr(v) for v in self[: min(len(self), 3)])
        more = ", ..." if len(self) > 3 else ""
        return f"StringColumn([{head}{more}], length={len(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (StringColumn, (self._arr,))


# --------------------------------------------------------------------------- joining


@dataclass(frozen=True)
class IdJoin:
    """Prediction rows ``src[i]`` fill dataset rows ``dst[i]``; the ids that did not join,
    counted, with the first :data:`SHOW` of each kind."""

    src: np.ndarray  # prediction rows used
    dst: np.ndarray  # dataset rows they fill
    n_missing: int
    missing_ids: tuple[str, ...]
    n_duplicate: int
    duplicate_ids: tuple[str, ...]
    n_unknown: int
    unknown_ids: tuple[str, ...]


def dataset_id_array(dataset_ids: Sequence[str]) -> pa.Array:
    """The dataset's ids as a pyarrow string array (the one the reader kept, if any)."""
    cached = getattr(dataset_ids, "arrow", None)
    if isinstance(cached, pa.Array) and pa.types.is_string(cached.type):
        return cached
    try:
        return pa.array(dataset_ids, type=pa.string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        # a Dataset built by hand: the readers give text ids (integers turned into text)
        bad = next(((i, v) for i, v in enumerate(dataset_ids) if not isinstance(v, str)), None)
        if bad is None:
            raise
        i, v = bad
        raise TypeError(
            f"dataset ids must be str: ids[{i}] is {v!r} ({type(v).__name__}); the dataset "
            "readers read integer ids as text, build a Dataset the same way"
        ) from None


def permutation_by_hash(
    pred_ids: pa.Array, dataset_ids: Sequence[str], ds: pa.Array
) -> np.ndarray | None:
    """The dataset row of each prediction row when the predictions hold exactly the
    dataset's ids in another order (the common shuffled dump), else None.

    Both sides are sorted by a 64-bit hash of the id (see :class:`IdIndex`; the
    dataset's is computed once, when its ids were checked for uniqueness); equal sorted
    hashes pair the rows up, and every pair is then confirmed byte for byte, so a hash
    collision can only send the join to the exact hash-table path, never mis-join."""
    ds_index = dataset_ids.id_index() if isinstance(dataset_ids, StringColumn) else id_index(ds)
    if ds_index is None or not ds_index.distinct_hashes():
        return None
    pred_index = id_index(pred_ids)
    if pred_index is None or not np.array_equal(pred_index.hashes, ds_index.hashes):
        return None
    if not pred_index.same(pred_index.rows, ds_index, ds_index.rows):
        return None
    perm = np.empty(len(pred_ids), dtype=np.intp)
    perm[pred_index.rows] = ds_index.rows
    return perm


def join_ids(
    pred_ids: pa.Array, dataset_ids: Sequence[str], path: str, error: type[ValueError]
) -> IdJoin:
    """Match prediction ids to dataset rows (vectorised: ``pc.index_in``). Ids that are
    null, of a type other than text or integers, or not UTF-8 raise ``error`` naming
    ``path``."""
    if pred_ids.null_count:
        row = int(np.flatnonzero(pred_ids.is_null().to_numpy(zero_copy_only=False))[0])
        raise error(f"{path}: row #{row + 1} has no id")
    if not (pa.types.is_string(pred_ids.type) or pa.types.is_large_string(pred_ids.type)):
        t = pred_ids.type
        if pa.types.is_dictionary(t):
            t = t.value_type
        if not (
            pa.types.is_string(t)
            or pa.types.is_large_string(t)
            or pa.types.is_binary(t)
            or pa.types.is_large_binary(t)
            or pa.types.is_integer(t)
        ):
            raise error(f"{path}: ids are {pred_ids.type}, expected strings or integers")
        try:
            pred_ids = pred_ids.cast(pa.string())
        except pa.ArrowInvalid:
            raise error(f"{path}: ids ({pred_ids.type}) are not valid UTF-8 text") from None
    ds = dataset_id_array(dataset_ids)
    n_ds = len(ds)
    if len(pred_ids) == n_ds and pred_ids.equals(ds):  # already in dataset order
        rows = np.arange(n_ds)
        return IdJoin(rows, rows, 0, (), 0, (), 0, ())
    if native_join_available():
        keys = None
        if isinstance(dataset_ids, StringColumn) and dataset_ids.arrow is ds:
            keys = dataset_ids.native_keys()  # computed once, with the uniqueness check
        idx = index_in(pred_ids, ds, keys)
    else:
        if len(pred_ids) == n_ds:
            perm = permutation_by_hash(pred_ids, dataset_ids, ds)
            if perm is not None:  # the same ids in another order
                return IdJoin(np.arange(n_ds), perm, 0, (), 0, (), 0, ())
        idx = index_in(pred_ids, ds)
    known = idx >= 0
    if len(idx) == n_ds and known.all():
        # every id known and as many rows as the dataset: a permutation unless an id repeats
        present = np.zeros(n_ds, dtype=bool)
        present[idx] = True
        if present.all():
            return IdJoin(np.arange(n_ds), idx.astype(np.intp, copy=False), 0, (), 0, (), 0, ())
    unknown_rows = np.flatnonzero(~known)
    known_rows = np.flatnonzero(known)
    first_dst, first_at = np.unique(idx[known_rows], return_index=True)
    src = known_rows[first_at]
    order = np.argsort(src, kind="stable")
    src, dst = src[order], first_dst[order]
    dup_mask = np.ones(known_rows.size, dtype=bool)
    dup_mask[first_at] = False
    dup_rows = known_rows[dup_mask]
    present = np.zeros(n_ds, dtype=bool)
    present[dst] = True
    missing_rows = np.flatnonzero(~present)
    dup_ids = tuple(
        dict.fromkeys(
            pred_ids.take(from_numpy(np.asarray(dup_rows[: SHOW * 4], dtype=np.int64))).to_pylist()
        )
    )
    return IdJoin(
        src=src,
        dst=dst,
        n_missing=int(missing_rows.size),
        missing_ids=tuple(dataset_ids[int(i)] for i in missing_rows[:SHOW]),
        n_duplicate=int(dup_rows.size),
        duplicate_ids=tuple(str(i) for i in dup_ids[:SHOW]),
        n_unknown=int(unknown_rows.size),
        unknown_ids=tuple(str(i) for i in pred_ids.take(pa.array(unknown_rows[:SHOW])).to_pylist()),
    )
