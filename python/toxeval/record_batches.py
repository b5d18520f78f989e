"""Any input table as a stream of ``pyarrow.RecordBatch`` of bounded size: the file
layer's streaming interface, for JSONL, CSV / TSV and Parquet, JSONL and CSV compressed
or not (format and compression told as for every input, :mod:`toxeval.file_formats`).

- Parquet: ``ParquetFile.iter_batches``, one batch of at most ``batch_rows`` rows at a
  time (the Parquet shards of out-of-core scoring: :mod:`toxeval.shards`).
- CSV: pyarrow's streaming reader (``pyarrow.csv.open_csv``), ``block_bytes`` of text
  parsed at a time; a quoted cell may hold newlines. Its first block fixes the types
  of the columns the caller does not pin (``csv_convert``): a column empty or integral
  throughout the first block and not later is an error naming the column, never a
  wrong value.
- JSONL: pyarrow's JSON reader has no reader that names lines, so the file is read in
  blocks of whole lines (about ``block_bytes`` each, never cutting a line), each parsed
  by ``pyarrow.json``; a block pyarrow refuses is decoded line by line by the one JSON
  line decoder (:mod:`toxeval.json_lines`), so an error on line N of a later block names
  line N, with the messages of the whole-file readers. Text that is not UTF-8 names its
  line and byte; a line nested too deeply for pyarrow is read by Python's json first.

Every batch holds at most ``batch_rows`` rows; what is held at once is one block of the
file and its batch, never the file. JSONL column types are each block's own (pyarrow
infers them per block, or takes them from ``json_schema``); :func:`read_batches_table`
concatenates a stream, widening types where blocks disagree (an integer column in one
block, a float in the next), as pyarrow's whole-file readers do.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from toxeval.file_formats import file_compression, input_format
from toxeval.files import (
    ARROW_JSON_OPENERS,
    BOM,
    bad_utf8_place,
    check_utf8_encoding,
    json_openers_exceed,
    not_utf8_message,
    not_valid_compressed,
    open_binary,
    open_stream,
    require_file,
)
from toxeval.input_columns import check_column_names
from toxeval.json_lines import json_line_values

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "DEFAULT_BLOCK_BYTES",
    "iter_record_batches",
    "json_bytes_batches",
    "read_batches_table",
]

#: Rows per batch unless the caller says otherwise.
DEFAULT_BATCH_ROWS = 1 << 16
#: Bytes of JSONL or CSV text parsed at a time unless the caller says otherwise.
DEFAULT_BLOCK_BYTES = 1 << 24

_NON_BLANK = re.compile(rb"\S")

#: The formats a stream is read from (NPY and NPZ are arrays, not tables).
STREAM_FORMATS = ("jsonl", "csv", "parquet")


def iter_record_batches(
    path: str | Path,
    error: type[Exception],
    *,
    what: str = "input",
    given: str | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    csv_convert: Any = None,
    json_schema: pa.Schema | None = None,
    explain: Callable[[str], Exception] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The rows of the table at ``path`` (a ``what`` file: ``dataset``,
    ``predictions``) as record batches of at most ``batch_rows`` rows. ``given``: the
    format when the name does not say it. ``csv_convert``: the
    ``pyarrow.csv.ConvertOptions`` of a CSV file; ``json_schema``: the types of JSONL
    fields to pin (others inferred); ``explain``: the error for a JSONL block pyarrow
    refuses (given pyarrow's message) when no line of it is malformed on its own (a
    field of two kinds, say). Every problem is an ``error`` naming the file (and the
    line, for JSONL and text that is not UTF-8). A Parquet or CSV file with columns but
    no rows yields one empty batch (its columns); a JSONL file of blank lines nothing."""
    if batch_rows < 1 or block_bytes < 1:
        raise ValueError("batch_rows and block_bytes must be positive")
    p = require_file(path, f"{what} file", error)  # type: ignore[arg-type]
    fmt = input_format(p, what, error, STREAM_FORMATS, given=given)
    if fmt.format == "parquet":
        yield from _parquet_batches(p, error, batch_rows)
    elif fmt.format == "csv":
        yield from _csv_batches(p, error, batch_rows, block_bytes, fmt.delimiter, csv_convert)
    else:
        yield from _jsonl_batches(p, error, batch_rows, block_bytes, json_schema, explain)


def read_batches_table(batches: Iterable[pa.RecordBatch]) -> pa.Table:
    """The table of a stream of batches, types widened where blocks disagree (integer
    and float, null and anything: ``promote_options="permissive"``); ``ArrowTypeError``
    or ``ArrowInvalid`` where they cannot be (a string in one block, a number in
    another)."""
    tables = [pa.Table.from_batches([b]) for b in batches]
    if not tables:
        return pa.table({})
    return pa.concat_tables(tables, promote_options="permissive")


# ------------------------------------------------------------------ Parquet


def _parquet_batches(
    path: Path, error: type[Exception], batch_rows: int
) -> Iterator[pa.RecordBatch]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, memory_map=True)
        check_column_names(pf.schema_arrow.names, str(path), error)
        if pf.metadata.num_rows == 0:
            yield _empty(pf.schema_arrow)
            return
        yield from pf.iter_batches(batch_size=batch_rows)
    except (pa.ArrowException, OSError) as e:
        raise error(f"{path}: cannot read as Parquet: {e}") from None


# ------------------------------------------------------------------ CSV


def _csv_batches(
    path: Path,
    error: type[Exception],
    batch_rows: int,
    block_bytes: int,
    delimiter: str,
    convert: Any,
) -> Iterator[pa.RecordBatch]:
    import pyarrow.csv as pacsv

    _check_head(path, error)
    try:
        src: Any = str(path) if file_compression(path) is None else open_stream(path)
        reader = pacsv.open_csv(
            src,
            read_options=pacsv.ReadOptions(block_size=block_bytes),
            # a quoted text may hold newlines: blocks must not be cut inside one
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
            convert_options=convert,
        )
        check_column_names(reader.schema.names, str(path), error)
        rows = 0
        for batch in reader:
            rows += batch.num_rows
            yield from _bounded(batch, batch_rows)
        if rows == 0:
            yield _empty(reader.schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        if "Empty CSV file" in str(e):
            raise error(f"{path}: the file is empty") from None
        if "UTF8" in str(e) or "UTF-8" in str(e):
            raise error(
                not_utf8_message(str(path), bad_utf8_place(path), "invalid UTF-8")
            ) from None
        raise error(f"{path}: cannot read as CSV: {e}") from None
    except UnicodeDecodeError as e:  # header names are decoded when asked for
        raise error(not_utf8_message(str(path), bad_utf8_place(path), e.reason)) from None
    except (OSError, EOFError, zlib.error, pa.ArrowException) as e:
        raise _unreadable(path, e, error) from None


# ------------------------------------------------------------------ JSONL


def _jsonl_batches(
    path: Path,
    error: type[Exception],
    batch_rows: int,
    block_bytes: int,
    schema: pa.Schema | None,
    explain: Callable[[str], Exception] | None,
) -> Iterator[pa.RecordBatch]:
    _check_head(path, error)
    for first_line, block in _line_blocks(path, error, block_bytes):
        table = _parse_json_block(path, error, block, first_line, schema, explain)
        if table is not None:
            for batch in table.to_batches():
                yield from _bounded(batch, batch_rows)


def json_bytes_batches(
    data: bytes,
    source: Path,
    error: type[Exception],
    *,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    json_schema: pa.Schema | None = None,
) -> Iterator[pa.RecordBatch]:
    """The JSONL stream of :func:`iter_record_batches` over ``data``, the decompressed
    bytes of ``source`` already in memory (a dataset read whole for its hash): the same
    blocks of whole lines (views of ``data``, no copy), checks and messages."""
    first = len(BOM) if data.startswith(BOM) else 0
    check_utf8_encoding(data[first : first + 64], str(source), error)
    view = memoryview(data)
    line = 1
    start = first
    while start < len(data):
        stop = min(start + block_bytes, len(data))
        if stop < len(data):
            cut = data.rfind(b"\n", start, stop)
            if cut < 0:  # a line longer than a block: up to its end
                cut = data.find(b"\n", stop)
            stop = len(data) if cut < 0 else cut + 1
        table = _parse_json_block(source, error, view[start:stop], line, json_schema, None)
        if table is not None:
            for batch in table.to_batches():
                yield from _bounded(batch, batch_rows)
        line += data.count(b"\n", start, stop)
        start = stop


def _line_blocks(
    path: Path, error: type[Exception], block_bytes: int
) -> Iterator[tuple[int, memoryview]]:
    """(number of its first line, block) of blocks of whole lines of about
    ``block_bytes`` (longer when one line is), the byte-order mark dropped. The blocks
    are views of one buffer, reused for the next block once the caller has parsed one
    (a fresh buffer per block would page-fault its memory in every time)."""
    buf = bytearray(block_bytes)
    held = 0  # bytes at the start of buf: the unfinished line after the last block
    line = 1
    first = True
    try:
        with open_binary(path) as f:
            while True:
                if held == len(buf):  # a line longer than the buffer: a larger one
                    grown = bytearray(2 * len(buf))
                    grown[:held] = buf[:held]
                    buf = grown
                got = f.readinto(memoryview(buf)[held:])
                if first and got >= 3 and buf.startswith(BOM):
                    buf[: got - 3] = buf[3:got]  # drop the byte-order mark
                    got -= 3
                first = False
                if not got:
                    break
                end = held + got
                cut = buf.rfind(b"\n", held, end) + 1
                if cut == 0:
                    held = end  # no line ends in this block yet: read on
                    continue
                yield line, memoryview(buf)[:cut]
                line += buf.count(b"\n", 0, cut)
                buf[: end - cut] = buf[cut:end]
                held = end - cut
    except (OSError, EOFError, zlib.error, pa.ArrowException) as e:
        raise _unreadable(path, e, error) from None
    if held:
        yield line, memoryview(buf)[:held]


def _parse_json_block(
    path: Path,
    error: type[Exception],
    block: memoryview,
    first_line: int,
    schema: pa.Schema | None,
    explain: Callable[[str], Exception] | None,
) -> pa.Table | None:
    """The table of one block of whole lines, or None when it holds only blank lines;
    ``error`` naming the line for a line that is not UTF-8, not JSON, not an object or
    nested too deeply."""
    if _NON_BLANK.search(block) is None:
        return None
    if json_openers_exceed([block], ARROW_JSON_OPENERS):
        _scan_lines(path, error, block, first_line)  # names a line nested too deeply
    try:
        table = _read_json_block(path, error, block, schema)
        # pyarrow's JSON reader does not check UTF-8: the strings are checked here (in
        # C++, nested ones too), and the block decoded to name the line only when bad
        table.validate(full=True)
        return table
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        _scan_lines(path, error, block, first_line)
        if explain is not None:
            raise explain(str(e)) from None
        # pyarrow counts rows from 0 within the block and skips blank lines: its
        # "row N" is not a line number
        msg = re.sub(r" in row \d+", "", str(e).removeprefix("JSON parse error: "))
        raise error(f"{path}: cannot read as JSON Lines: {msg}") from None


def _read_json_block(
    path: Path, error: type[Exception], block: memoryview, schema: pa.Schema | None
) -> pa.Table:
    import pyarrow.json as pajson

    opts: dict[str, Any] = {"unexpected_field_behavior": "infer"}
    if schema is not None:
        opts["explicit_schema"] = schema
    parse = pajson.ParseOptions(**opts)
    try:
        # pyarrow's own blocks (1 MiB) are parsed in parallel
        return pajson.read_json(pa.BufferReader(block), parse_options=parse)
    except pa.ArrowInvalid as e:
        if "straddl" not in str(e):
            raise
    # a line longer than pyarrow's block: the whole block as one
    if len(block) >= (1 << 31) - 1:
        raise error(
            f"{path}: a line of {len(block)} bytes or more is too long to read as JSON Lines"
        )
    read = pajson.ReadOptions(block_size=len(block) + 1)
    return pajson.read_json(pa.BufferReader(block), parse_options=parse, read_options=read)


def _scan_lines(path: Path, error: type[Exception], block: memoryview, first_line: int) -> None:
    """Decode each line of a block, raising ``error`` naming the first line that is not
    UTF-8 or not a JSON object (error path, and blocks with deeply nested lines)."""
    text = _decode_block(path, error, block, first_line)
    for no, value in json_line_values(text.split("\n"), str(path), error, first_line):
        if not isinstance(value, dict):
            raise error(f"{path}: line {no}: expected a JSON object, got {type(value).__name__}")


def _decode_block(path: Path, error: type[Exception], view: memoryview, first_line: int) -> str:
    block = bytes(view)
    try:
        return block.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first_line + block.count(b"\n", 0, e.start)
        col = e.start - (block.rfind(b"\n", 0, e.start) + 1) + 1
        raise error(not_utf8_message(str(path), (line, col), e.reason)) from None


# ------------------------------------------------------------------ shared


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    """A batch of no rows with ``schema``'s columns."""
    return pa.RecordBatch.from_pylist([], schema=schema)


def _bounded(batch: pa.RecordBatch, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """``batch`` cut into batches of at most ``batch_rows`` rows (slices: no copy)."""
    for start in range(0, batch.num_rows, batch_rows):
        yield batch.slice(start, batch_rows)


def _check_head(path: Path, error: type[Exception]) -> None:
    """A clear error for UTF-16 / UTF-32 text (read as UTF-8 it is one garbled column)."""
    try:
        with open_binary(path) as f:
            head = f.read(64)
    except (OSError, EOFError, zlib.error, pa.ArrowException) as e:
        raise _unreadable(path, e, error) from None
    check_utf8_encoding(head, str(path), error)


def _unreadable(path: Path, e: BaseException, error: type[Exception]) -> Exception:
    if file_compression(path) is not None:
        return not_valid_compressed(path, e, error)
    return error(f"{path}: cannot read the file ({type(e).__name__}: {e})")
