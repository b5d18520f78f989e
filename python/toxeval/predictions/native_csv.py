"""The native CSV / TSV reader (``toxeval._core.read_csv_dump``, Rust:
``rust/dumps/csv.rs``) and the pyarrow table it gives, equal to the one
:func:`pyarrow.csv.read_csv` gives for the same file with toxeval's options.

It covers the common form of a score dump (a compressed one once decompressed): a
header row, an ``id`` column (read as strings, as pyarrow is told to) and one column of
numbers per category, an empty cell for a missing score; a column is float64, or int64
when no cell has a fraction or exponent, as pyarrow infers it. For any other file (a
quote, pyarrow's null spellings such as ``NA`` or ``nan``, a label or text column, a row
with another number of cells, a column with no number, a compressed file that does not
decompress, ...) it
*declines*, and pyarrow (:func:`toxeval.predictions.readers.read_csv_table`) reads the
file and names every problem; so both readers give the same table or the same error.
Parallel over blocks of lines (``TOXEVAL_NUM_THREADS`` caps the threads); no Python
object per row.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from toxeval.arrow_numpy import from_numpy
from toxeval.file_formats import file_compression
from toxeval.files import read_decompressed
from toxeval.predictions.native_jsonl import COMPRESSED_MAX_BYTES

__all__ = ["CSV_READER_ENV", "native_csv_available", "read_native_csv"]

#: ``TOXEVAL_CSV_READER=pyarrow`` sends every CSV / TSV dump to pyarrow (to compare, or
#: to step around the native reader); unset or ``auto``: native where it covers the file.
CSV_READER_ENV = "TOXEVAL_CSV_READER"


def native_csv_available() -> bool:
    """True when the native reader may be tried: the compiled module has it and
    :data:`CSV_READER_ENV` does not ask for pyarrow."""
    if os.environ.get(CSV_READER_ENV, "auto").strip().lower() == "pyarrow":
        return False
    from toxeval import _core

    return hasattr(_core, "read_csv_dump")


def read_native_csv(path: Path, delimiter: str, string_columns: Sequence[str]) -> pa.Table | None:
    """The table of ``path`` (CSV, cells split at ``delimiter``; a compressed file
    decompressed first, up to ``COMPRESSED_MAX_BYTES``), or None when the native reader
    declines the file (see the module docstring).
    ``string_columns``: the columns pyarrow is told to read as strings. ``OSError`` as
    reading the file raises it."""
    from toxeval import _core

    sep = delimiter.encode("utf-8")
    if len(sep) != 1:
        return None
    names = [c.encode("utf-8") for c in string_columns]
    d: dict[str, Any]
    if file_compression(path) is None:
        d = _core.read_csv_dump(str(path), sep[0], names)
    else:
        body = read_decompressed(path, COMPRESSED_MAX_BYTES)
        if body is None:
            return None  # held whole in memory: past the limit, pyarrow streams it
        d = _core.read_csv_dump_bytes(body, sep[0], names)
    if d["declined"] is not None:
        return None
    names = [b.decode("utf-8") for b in d["names"]]
    numbers = iter(d["columns"])
    columns: list[pa.Array] = []
    for place in range(len(names)):
        if place == d["id_column"]:
            offsets = d["id_offsets"]
            columns.append(
                pa.Array.from_buffers(
                    pa.string(),
                    len(offsets) - 1,
                    [None, pa.py_buffer(offsets), pa.py_buffer(d["id_data"])],
                )
            )
            continue
        values, valid = next(numbers)
        ok = np.asarray(valid, dtype=bool)
        columns.append(from_numpy(np.asarray(values), None if ok.all() else ~ok))
    return pa.table(columns, names=names)
