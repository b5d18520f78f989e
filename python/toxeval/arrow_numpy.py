"""NumPy arrays of Arrow arrays and Arrow arrays of NumPy arrays, read and built from the
Arrow buffers directly.

pyarrow's own conversions (``pa.array(...)``, ``Array.to_numpy()``, ``np.asarray(arr)``)
import pandas the first time they run (0.2-0.4 s), though toxeval never needs pandas for
them. The score path converts through these helpers instead, which respect the array's
offset, validity bitmap and chunks and copy only where Arrow's layout differs from
NumPy's (booleans are bits in Arrow, bytes in NumPy; chunks are concatenated).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["from_numpy", "string_array", "string_buffers", "strings", "validity", "values"]


def _chunks(arr: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(arr.chunks) if isinstance(arr, pa.ChunkedArray) else [arr]


def _bits(buf: pa.Buffer, offset: int, n: int) -> np.ndarray:
    """``n`` bits of an Arrow bitmap from bit ``offset``, as a bool array."""
    start = offset // 8
    raw = np.frombuffer(buf, dtype=np.uint8, count=(offset + n + 7) // 8 - start, offset=start)
    return np.unpackbits(raw, bitorder="little")[offset % 8 : offset % 8 + n].view(bool)


def _chunk_values(arr: pa.Array) -> np.ndarray:
    t = arr.type
    n = len(arr)
    if pa.types.is_boolean(t):
        buf = arr.buffers()[1]
        return np.zeros(n, bool) if buf is None else _bits(buf, arr.offset, n)
    if pa.types.is_dictionary(t):
        return _chunk_values(arr.indices)
    if not (pa.types.is_integer(t) or pa.types.is_floating(t)) or pa.types.is_float16(t):
        raise TypeError(f"no NumPy view of an Arrow array of type {t}")
    dtype = np.dtype(t.to_pandas_dtype())
    buf = arr.buffers()[1]
    if buf is None or n == 0:
        return np.zeros(n, dtype)
    return np.frombuffer(buf, dtype=dtype, count=n, offset=arr.offset * dtype.itemsize)


def values(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a numeric or boolean Arrow array (a dictionary array: its indices)
    as a NumPy array: a read-only view of the Arrow buffer where the layouts agree (one
    chunk of a numeric type), else a copy. Null slots hold whatever the buffer holds:
    check :func:`validity` first where the array may have nulls."""
    parts = [_chunk_values(c) for c in _chunks(arr)]
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return _chunk_values(pa.Array.from_buffers(arr.type, 0, [None, None]))
    return np.concatenate(parts)


def validity(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per slot, True where the value is not null (bool array)."""
    parts = []
    for c in _chunks(arr):
        if pa.types.is_null(c.type):
            parts.append(np.zeros(len(c), bool))
        elif c.null_count == 0:
            parts.append(np.ones(len(c), bool))
        else:
            parts.append(_bits(c.buffers()[0], c.offset, len(c)))
    if not parts:
        return np.zeros(0, bool)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def from_numpy(data: np.ndarray, mask: np.ndarray | None = None) -> pa.Array:
    """A 1-d numeric or boolean NumPy array as an Arrow array (numeric: sharing its
    memory when contiguous), null where ``mask`` is True (as ``pa.array(data, mask=...)``)."""
    data = np.ascontiguousarray(data)
    if data.ndim != 1:
        raise ValueError("from_numpy takes a 1-d array")
    n = len(data)
    bitmap = None
    if mask is not None and np.any(mask):
        bitmap = pa.py_buffer(np.packbits(~np.asarray(mask, dtype=bool), bitorder="little"))
    if data.dtype == np.bool_:
        return pa.Array.from_buffers(
            pa.bool_(), n, [bitmap, pa.py_buffer(np.packbits(data, bitorder="little"))]
        )
    return pa.Array.from_buffers(pa.from_numpy_dtype(data.dtype), n, [bitmap, pa.py_buffer(data)])


def string_array(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """A string array from int32 offsets (n + 1) and UTF-8 bytes, sharing their memory."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int32)
    return pa.Array.from_buffers(
        pa.string(), len(offsets) - 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def string_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (int32, or int64 for ``large_string``) and UTF-8 bytes of one string
    array, as NumPy views of its Arrow buffers (no copy, no Python string per row); the
    offsets start at the array's offset, so they index the whole data buffer."""
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    size = np.dtype(width).itemsize
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=width, count=len(arr) + 1, offset=arr.offset * size)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return offsets, data


def strings(items: list[str]) -> pa.Array:
    """A string array of a few Python strings (a value set for ``pc.is_in``)."""
    encoded = [s.encode("utf-8") for s in items]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return string_array(offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8))
