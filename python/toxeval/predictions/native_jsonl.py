"""The native JSONL reader (``toxeval._core.read_jsonl_dump``, Rust: ``rust/dumps/``)
and the pyarrow table it gives, equal to the one :mod:`pyarrow.json` gives for the same
file.

It covers the common forms of a score dump (compressed ones once decompressed): one object per line with an
``id`` (a string without escapes, or a 64-bit integer, the same kind on every line) and
``scores``, either an object of numbers or nulls (``{"hate": 0.9, ...}``, field names
from the first non-null object, within the first 10,000 lines as for pyarrow's schema)
or a vector of numbers, or null. Blank lines are skipped. For any other file (another
field, label lists, raw text, a string with an escape, a number JSON does not allow or
float64 cannot hold, a compressed file that does not decompress, ...) it *declines*, and the general reader
(pyarrow, :func:`toxeval.predictions.readers.read_jsonl_table`) reads the file and
names every problem; so both readers give the same table or the same error. It is
parallel over blocks of lines (``TOXEVAL_NUM_THREADS`` caps the threads) and builds no
Python object per row.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from toxeval.arrow_numpy import from_numpy
from toxeval.file_formats import file_compression
from toxeval.files import read_decompressed

__all__ = ["READER_ENV", "native_jsonl_available", "read_native_jsonl"]

#: ``TOXEVAL_JSONL_READER=pyarrow`` sends every JSONL dump to pyarrow (to compare, or
#: to step around the native reader); unset or ``auto``: native where it covers the file.
READER_ENV = "TOXEVAL_JSONL_READER"

#: A compressed dump is decompressed whole into memory for the native reader; one that
#: decompresses to more than this is read by pyarrow's streaming reader instead.
COMPRESSED_MAX_BYTES = 1 << 30


def native_jsonl_available() -> bool:
    """True when the native reader may be tried: the compiled module has it and
    :data:`READER_ENV` does not ask for pyarrow."""
    if os.environ.get(READER_ENV, "auto").strip().lower() == "pyarrow":
        return False
    from toxeval import _core

    return hasattr(_core, "read_jsonl_dump")


def read_native_jsonl(path: Path) -> pa.Table | None:
    """The table of ``path`` (JSONL; gz, bz2, zst or lz4 files decompressed by
    pyarrow's decompressors first), or None when the native reader declines the file
    (see the module docstring), or a compressed file does not decompress (the general
    reader names that error). ``OSError`` as reading the file raises it."""
    from toxeval import _core

    d: dict[str, Any]
    if file_compression(path) is None:
        d = _core.read_jsonl_dump(str(path))
    else:
        body = read_decompressed(path, COMPRESSED_MAX_BYTES)
        if body is None:
            return None  # held whole in memory: past the limit, pyarrow's blocks read it
        d = _core.read_jsonl_dump_bytes(body)
    if d["declined"] is not None:
        return None
    row_valid = np.asarray(d["row_valid"], dtype=bool)
    n = len(row_valid)
    row_null = None if row_valid.all() else from_numpy(~row_valid)
    if "ids_int" in d:
        ids = from_numpy(np.asarray(d["ids_int"], dtype=np.int64))
    else:
        offsets = d["id_offsets"]
        ids = pa.Array.from_buffers(
            pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(d["id_data"])]
        )
    if "names" in d:
        names = [b.decode("utf-8") for b in d["names"]]
        children = []
        for values, valid in zip(d["values"], d["valid"], strict=True):
            ok = np.asarray(valid, dtype=bool)
            f64 = np.asarray(values, dtype=np.float64)
            children.append(from_numpy(f64, None if ok.all() else ~ok))
        scores: pa.Array = pa.StructArray.from_arrays(
            children, fields=[pa.field(name, pa.float64()) for name in names], mask=row_null
        )
    else:
        scores = pa.ListArray.from_arrays(
            from_numpy(np.asarray(d["vec_offsets"], dtype=np.int32)),
            from_numpy(np.asarray(d["vec_values"], dtype=np.float64)),
            type=pa.list_(pa.float64()),
            mask=row_null,
        )
    columns = {"id": ids, "scores": scores}
    order = ("id", "scores") if d["id_first"] else ("scores", "id")
    return pa.table({name: columns[name] for name in order})
