"""The native JSONL dataset reader (``toxeval._core.read_jsonl_dataset_bytes``, Rust:
``rust/datasets/``) and the pyarrow table it gives, which the column-wise path
(:func:`toxeval.datasets.tables.table_to_rows`) takes like pyarrow's.

It covers the common form of a dataset file: one object per line with exactly the keys
``id`` (a string, or a 64-bit integer on every line), ``text`` (a string) and ``labels``
(a list of strings: category ids, names or codes), in any order; JSON escapes are
decoded. Anything else (another field, another label form, a blank line, a byte-order
mark, bytes that are not UTF-8, a lone surrogate, ...) it *declines*, and pyarrow's
reader or the line-by-line reader reads the file and names every problem, so both paths
give the same rows or the same error. It is parallel over blocks of lines
(``TOXEVAL_NUM_THREADS`` caps the threads), builds no Python object per row and gives
the label lists dictionary-encoded, as the Parquet reader does.
"""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa

from toxeval.arrow_numpy import from_numpy, string_array

__all__ = ["READER_ENV", "native_dataset_reader", "read_native_dataset"]

#: ``TOXEVAL_DATASET_READER=pyarrow`` sends every JSONL dataset to pyarrow (to compare,
#: or to step around the native reader); unset or ``auto``: native where it covers the file.
READER_ENV = "TOXEVAL_DATASET_READER"


def native_dataset_reader() -> bool:
    """True when the native reader may be tried: the compiled module has it and
    :data:`READER_ENV` does not ask for pyarrow."""
    if os.environ.get(READER_ENV, "auto").strip().lower() == "pyarrow":
        return False
    from toxeval import _core

    return hasattr(_core, "read_jsonl_dataset_bytes")


def read_native_dataset(body: bytes) -> pa.Table | None:
    """The table (``id``, ``text``, ``labels`` as a list of dictionary-encoded strings)
    of a JSONL dataset's decompressed bytes, or None when the native reader declines
    them (see the module docstring)."""
    from toxeval import _core

    d: dict[str, Any] = _core.read_jsonl_dataset_bytes(body)
    if d["declined"] is not None:
        return None
    texts = string_array(d["text_offsets"], d["text_data"])
    n = len(texts)
    if "ids_int" in d:
        ids = from_numpy(d["ids_int"])
    else:
        ids = string_array(d["id_offsets"], d["id_data"])
    codes = from_numpy(d["label_codes"])
    dictionary = string_array(d["dict_offsets"], d["dict_data"])
    value_type = pa.dictionary(pa.int32(), pa.string())
    flat = pa.DictionaryArray.from_buffers(
        value_type, len(codes), codes.buffers(), dictionary=dictionary
    )
    labels = pa.ListArray.from_arrays(from_numpy(d["label_offsets"]), flat)
    assert len(labels) == n
    return pa.table({"id": ids, "text": texts, "labels": labels})
