"""Dataset files by format: JSONL, CSV / TSV and Parquet. The format and compression come
from the name (:mod:`toxeval.file_formats`, as for prediction dumps); JSONL and CSV may be
compressed (``.gz``, ``.bz2``, ``.zst``, ``.lz4``), and a file without a compression
suffix whose bytes start with gzip's magic number is read as gzip.

A JSONL file of the common form (``id``, ``text``, a ``labels`` list on every line) is
parsed by the native reader (:mod:`toxeval.datasets.native_jsonl`; it declines anything
else, and ``TOXEVAL_DATASET_READER=pyarrow`` turns it off). Other simple, regular files
are read column-wise with pyarrow (:mod:`toxeval.datasets.tables`; JSONL through the file
layer's stream of record batches, :mod:`toxeval.record_batches`); both give a table to
:func:`~toxeval.datasets.tables.table_to_rows`. A file the native reader serves but whose
rows break a rule (unknown category, duplicate id) is read again by the paths below, so
the error is the one they give; a JSONL file that pyarrow cannot read in one piece (malformed line, mixed label forms,
unknown category) is re-read line by line (:mod:`toxeval.datasets.records`) so errors
name the line. The file's sha256 is computed on a thread while it is parsed.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from toxeval.datasets.labels import LabelReader, RawRows, text_cell
from toxeval.datasets.native_jsonl import native_dataset_reader, read_native_dataset
from toxeval.datasets.records import records_to_rows
from toxeval.datasets.schema import RESERVED_FIELDS, DatasetError
from toxeval.datasets.tables import NotColumnar, table_to_rows
from toxeval.file_formats import InputFormat, input_format, input_stem
from toxeval.files import (
    BackgroundSha256,
    check_utf8_encoding,
    decode_utf8,
    decompress,
    require_file,
)
from toxeval.input_columns import check_column_names
from toxeval.json_lines import json_line_values
from toxeval.record_batches import json_bytes_batches, read_batches_table

_NON_BLANK = re.compile(rb"\S")


def _blank(body: bytes) -> bool:
    """``not body.strip()`` without copying the body: stops at the first non-blank byte."""
    return _NON_BLANK.search(body) is None


def json_lines(raw: bytes, source: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line of a dataset's (decompressed) bytes.
    Lines end at "\n" only (a "\r" before it is JSON whitespace): str.splitlines would
    also split at U+2028, U+2029 and U+0085, which JSON allows raw inside a string."""
    text = decode_utf8(raw, source, DatasetError)
    return json_line_values(text.split("\n"), source, DatasetError)


def _read_jsonl(path: Path, data: bytes, labels: LabelReader, source: str) -> RawRows:
    body = decompress(path, data, DatasetError)
    if _blank(body):
        raise DatasetError(f"{source}: the file is empty")
    check_utf8_encoding(body[:64], source, DatasetError)
    if native_dataset_reader():
        # the native reader declines blank lines itself (no pass over the body here)
        table = read_native_dataset(body)
        if table is not None:
            try:
                return table_to_rows(table, labels, source, "line", first_line=1)
            except (NotColumnar, DatasetError):
                pass  # read again below: the paths that name the line
    blank_free = b"\n\n" not in body and not body.startswith((b"\n", b"\r\n"))
    # a line nested too deeply for pyarrow is named by the stream (as Python's json
    # reads it) and read again line by line below
    if blank_free:
        try:
            # the file layer's stream over the bytes already read, concatenated
            table = read_batches_table(json_bytes_batches(body, path, DatasetError))
            return table_to_rows(table, labels, source, "line", first_line=1)
        except (pa.ArrowException, NotColumnar, DatasetError):
            pass  # re-read line by line: exact line numbers, mixed label forms
    try:
        return records_to_rows(json_lines(body, source), labels, source)
    except UnicodeDecodeError as e:
        raise DatasetError(f"{source}: not UTF-8 text: {e}") from None


#: The block pyarrow's CSV reader parses at a time (in parallel), in bytes.
CSV_BLOCK_BYTES = 1 << 24


def _read_csv(path: Path, data: bytes, labels: LabelReader, source: str, delimiter: str) -> RawRows:
    import pyarrow.csv as pacsv

    body = decompress(path, data, DatasetError)
    if _blank(body):
        raise DatasetError(f"{source}: the file is empty")
    check_utf8_encoding(body[:64], source, DatasetError)
    try:
        table = pacsv.read_csv(
            io.BytesIO(body),
            convert_options=pacsv.ConvertOptions(
                # ids, texts and label text exactly as written ("001" stays "001", a
                # 20-digit id is not a float); label cells may be inferred (1, 1.0, true)
                column_types={c: pa.string() for c in RESERVED_FIELDS},
                strings_can_be_null=False,
                auto_dict_encode=False,
            ),
            read_options=pacsv.ReadOptions(block_size=CSV_BLOCK_BYTES),
            # a quoted text may hold newlines: blocks must not be cut inside one
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        if "UTF8" in str(e):
            decode_utf8(body, source, DatasetError)  # names the line and the byte
        raise DatasetError(f"{source}: cannot read as CSV: {e}") from None
    check_column_names(table.column_names, source, DatasetError)
    # every column as text: 1/0/empty cells, JSON label text
    table = pa.table({c: _as_text(table.column(c)) for c in table.column_names})
    try:
        return table_to_rows(table, labels, source, "line", first_line=2, csv_text=True)
    except NotColumnar:
        return records_to_rows(_csv_records(table), labels, source)


def _as_text(col: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_string(col.type):
        return col
    if pa.types.is_null(col.type):
        return pa.chunked_array([pa.array([""] * len(col), pa.string())])
    out = pc.cast(col, pa.string())
    if pa.types.is_floating(col.type):
        out = pc.replace_substring_regex(out, r"\.0$", "")
    return out.fill_null("")


def _csv_records(table: pa.Table) -> Iterator[tuple[int, Any]]:
    cols = table.column_names
    data = {c: table.column(c).to_pylist() for c in cols}
    for i in range(table.num_rows):
        rec: dict[str, Any] = {}
        for c in cols:
            v = data[c][i]
            if c == "labels" or c == "text":
                rec[c] = v  # an empty labels cell is [] (no category)
            elif c in RESERVED_FIELDS:
                rec[c] = None if v in ("", None) else v
            else:
                rec[c] = _csv_cell(v)
        yield i + 2, rec


def _csv_cell(v: Any) -> Any:
    return None if v is None else text_cell(str(v))


def _read_parquet(data: bytes, labels: LabelReader, source: str) -> RawRows:
    import pyarrow.parquet as pq

    try:
        # from the bytes already read for the hash (no second read); ParquetFile gives
        # one chunk per row group and does not import pyarrow.dataset, as read_table does
        source_file = pa.BufferReader(data)
        meta = pq.ParquetFile(source_file)
        schema = meta.schema_arrow
        check_column_names(schema.names, source, DatasetError)
        # a list of label strings is read as dictionary codes: Parquet stores them that
        # way, so neither decoding to strings nor hashing them again is needed (Arrow
        # reads nested dictionaries from one row group only)
        as_dict = []
        if "labels" in schema.names and meta.metadata.num_row_groups == 1:
            t = schema.field("labels").type
            if pa.types.is_list(t) and pa.types.is_string(t.value_type):
                as_dict.append(f"labels.list.{t.value_field.name}")
        table = pq.ParquetFile(source_file, read_dictionary=as_dict or None).read()
    except (pa.ArrowException, OSError) as e:
        raise DatasetError(f"{source}: cannot read as Parquet: {e}") from None
    try:
        return table_to_rows(table, labels, source, "row", first_line=1)
    except NotColumnar:
        recs = table.to_pylist()
        if "labels" in table.column_names and pa.types.is_map(table.schema.field("labels").type):
            # Arrow gives a map as (key, value) pairs: it is the object form
            for i, r in enumerate(recs):
                if r["labels"] is not None:
                    r["labels"] = _map_object(r["labels"], f"{source}: row {i + 1}")
        return records_to_rows(((i + 1, r) for i, r in enumerate(recs)), labels, source, "row")


def _map_object(pairs: list[tuple[Any, Any]], where: str) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DatasetError(f"{where}: key {key!r} is given twice in the labels map")
        out[key] = value
    return out


#: The formats a dataset file may have (NPY and NPZ hold scores, not labelled texts).
DATASET_FORMATS = ("jsonl", "csv", "parquet")


def dataset_format(path: Path) -> InputFormat:
    """The format and compression of a dataset file from its name
    (:func:`toxeval.file_formats.input_format`), or :class:`DatasetError`."""
    return input_format(path, "dataset", DatasetError, DATASET_FORMATS)


def dataset_stem(path: Path) -> str:
    """The file name without its format and compression suffixes (the dataset's name);
    :class:`DatasetError` for a name that is no dataset format."""
    dataset_format(path)
    return input_stem(path)


def read_dataset_file(path: Path, labels: LabelReader) -> tuple[RawRows, str]:
    """The raw rows of a dataset file and the sha256 of its bytes."""
    source = str(path)
    require_file(path, "dataset file", DatasetError)
    fmt = dataset_format(path)
    data = path.read_bytes()
    hashing = BackgroundSha256(data)  # overlaps with parsing (hashlib drops the GIL)
    try:
        if fmt.format == "jsonl":
            raw = _read_jsonl(path, data, labels, source)
        elif fmt.format == "csv":
            raw = _read_csv(path, data, labels, source, fmt.delimiter)
        else:
            if not data:
                raise DatasetError(f"{source}: the file is empty")
            raw = _read_parquet(data, labels, source)
    except (pa.ArrowException, UnicodeError) as e:
        # a form of malformed input no check anticipated: an input error naming the
        # file, never a raw Arrow error
        raise DatasetError(f"{source}: cannot read the dataset: {e}") from None
    return raw, hashing.result()
