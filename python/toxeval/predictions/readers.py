"""Prediction files into pyarrow tables: JSONL (``.jsonl``, ``.ndjson``), CSV / TSV and
Parquet (NPY and NPZ: :mod:`~toxeval.predictions.arrays`). JSONL and CSV may be
compressed (``.gz``, ``.bz2``, ``.zst``, ``.lz4``: pyarrow's codecs); a compressed
Parquet, NPY or NPZ file is rejected.

JSONL and CSV of the common score forms are read by the native readers
(:mod:`~toxeval.predictions.native_jsonl`, :mod:`~toxeval.predictions.native_csv`;
:func:`read_jsonl_table` and :func:`read_csv_table` decide); the rest
by pyarrow with an explicit schema built from the first lines, so every row is typed
the same way; when pyarrow refuses a file, it is scanned line by line to
name the line and the problem. Decompression and decoding errors become a
:class:`PredictionError` naming the file.
"""

from __future__ import annotations

import io
import json
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa

from toxeval.file_formats import (
    TEXT_FORMATS,
    InputFormat,
    file_compression,
    input_format,
    name_format,
)
from toxeval.files import (
    bad_utf8_place,
    check_utf8_encoding,
    not_utf8_message,
    not_valid_compressed,
    open_binary,
    open_stream,
)
from toxeval.input_columns import check_column_names
from toxeval.json_lines import json_line_values
from toxeval.predictions.native_csv import native_csv_available, read_native_csv
from toxeval.predictions.native_jsonl import native_jsonl_available, read_native_jsonl
from toxeval.predictions.schema import (
    FORMATS,
    ID_COLUMNS,
    LABEL_COLUMNS,
    SCORE_COLUMNS,
    TEXT_COLUMNS,
    PredictionError,
)
from toxeval.record_batches import iter_record_batches, read_batches_table

__all__ = [
    "TEXT_FORMATS",
    "detect_format",
    "prediction_format",
    "read_csv_table",
    "read_jsonl_table",
    "read_parquet_table",
    "read_pyarrow_jsonl_table",
]


def prediction_format(path: str | Path, given: str | None = None) -> InputFormat:
    """The format and compression of a prediction file from its name
    (:func:`toxeval.file_formats.input_format`), or the format ``given`` (``--format``)
    with the compression from the name. Raises :class:`PredictionError` when the name
    implies no format, or for a compressed Parquet, NPY or NPZ file."""
    return input_format(
        path,
        "predictions",
        PredictionError,
        FORMATS[1:],
        given=given,
        hint=f"; or pass format= (--format): one of {', '.join(FORMATS[1:])}",
    )


def detect_format(path: str | Path) -> str:
    """The dump format implied by the file name (``.jsonl.gz`` -> ``jsonl``), looking
    through one trailing compression suffix (``.gz``, ``.bz2``, ``.zst``, ``.lz4``).
    Raises :class:`PredictionError` when the name implies none. (A compressed Parquet,
    NPY or NPZ name gives its format; reading such a file is refused.)"""
    found = name_format(path)
    return found.format if found is not None else prediction_format(path).format


def _open_text(path: Path) -> io.TextIOBase:
    """``path`` as UTF-8 text; a byte-order mark at the start is skipped (pyarrow's
    readers skip it too)."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig")


def _unreadable(path: Path, e: BaseException) -> PredictionError:
    """A decompression or decoding error while reading ``path`` as a PredictionError."""
    if isinstance(e, UnicodeDecodeError):
        return PredictionError(not_utf8_message(str(path), bad_utf8_place(path), e.reason))
    if file_compression(path) is not None:
        return PredictionError(str(not_valid_compressed(path, e, PredictionError)))
    return PredictionError(f"{path}: cannot read the file ({type(e).__name__}: {e})")


#: Rows per batch when a whole file is read through the stream: as many as a block
#: (or a Parquet row group) holds, so the table has one chunk per block.
WHOLE_FILE_ROWS = 1 << 62

# Lines read at most to find a non-null value of each prediction field for the schema.
_SCHEMA_LINES = 10_000


def _schema_sample(path: Path) -> dict[str, Any]:
    """Each field of the first non-blank line, with the first non-null value found for
    it in the first lines (a dump may start with a null prediction or a failed
    request); errors carry the line number."""
    try:
        return _schema_sample_unchecked(path)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as e:
        raise _unreadable(path, e) from None


def _typed_nulls(sample: dict[str, Any]) -> list[str]:
    """The fields of ``sample`` that :func:`_json_schema` types but that are null."""
    typed = ID_COLUMNS + SCORE_COLUMNS + LABEL_COLUMNS + TEXT_COLUMNS
    return [k for k, v in sample.items() if v is None and k in typed]


def _json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of a JSONL dump; a line that is not
    a JSON object raises :class:`PredictionError` naming it."""
    with _open_text(path) as f:
        for lineno, obj in json_line_values(f, str(path), PredictionError):
            if not isinstance(obj, dict):
                raise PredictionError(
                    f"{path}: line {lineno}: expected a JSON object, got {type(obj).__name__}"
                )
            yield lineno, obj


def _schema_sample_unchecked(path: Path) -> dict[str, Any]:
    sample: dict[str, Any] | None = None
    for lineno, obj in _json_objects(path):
        if sample is None:
            sample = obj
        else:
            for key in _typed_nulls(sample):
                sample[key] = obj.get(key)
        if lineno >= _SCHEMA_LINES or not _typed_nulls(sample):
            break
    if sample is None:
        raise PredictionError(f"{path}: empty file (no predictions)")
    return sample


def _scan_jsonl(path: Path, pyarrow_msg: str) -> PredictionError:
    """Find the first bad line after pyarrow rejected the file (error path only)."""
    try:
        return _scan_jsonl_unchecked(path, pyarrow_msg)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as e:
        return _unreadable(path, e)


def _scan_jsonl_unchecked(path: Path, pyarrow_msg: str) -> PredictionError:
    kinds: dict[str, tuple[str, int]] = {}
    try:
        for lineno, obj in _json_objects(path):
            for key, kind in _nested_kinds(obj):
                if key in ID_COLUMNS and kind not in ("string", "int"):
                    return PredictionError(
                        f"{path}: line {lineno}: field {key!r} is {_a(kind)} "
                        f"({json.dumps(obj[key])[:40]}); an id is a string or an integer"
                    )
                if key in ID_COLUMNS and kind == "int" and not -(2**63) <= obj[key] < 2**63:
                    return PredictionError(
                        f"{path}: line {lineno}: field {key!r} is an integer beyond 64 bits "
                        f"({str(obj[key])[:40]}); write such ids as JSON strings "
                        f'("{str(obj[key])[:40]}"), which match the dataset\'s ids as text'
                    )
                if key.endswith("[]") and _root(key) in LABEL_COLUMNS and kind != "string":
                    return PredictionError(
                        f"{path}: line {lineno}: field {_root(key)!r} holds {_a(kind)}; a "
                        'labels list names categories (["hate"]); give a 0/1 vector in '
                        "taxonomy order as 'scores'"
                    )
                nested_score = key != _root(key) and _root(key) in SCORE_COLUMNS
                if nested_score and kind not in ("int", "float"):
                    return PredictionError(
                        f"{path}: line {lineno}: field {key!r} is {_a(kind)}; a score is a "
                        "number (0 or 1 for a yes/no answer), or null when unknown"
                    )
                seen = kinds.get(key)
                if seen is None:
                    kinds[key] = (kind, lineno)
                elif seen[0] != kind and {seen[0], kind} != {"int", "float"}:
                    return PredictionError(
                        f"{path}: line {lineno}: field {key!r} is {_a(kind)}, but {_a(seen[0])} "
                        f"on line {seen[1]}"
                    )
    except PredictionError as e:
        return e
    # pyarrow counts rows from 0 and skips blank lines: its "row N" is not a line number
    msg = re.sub(r" in row \d+", "", pyarrow_msg.removeprefix("JSON parse error: "))
    return PredictionError(f"{path}: cannot read as JSON Lines: {msg}")


def _root(key: str) -> str:
    """The top-level field of a path from :func:`_nested_kinds` (``scores.hate`` -> ``scores``)."""
    return key.split(".", 1)[0].removesuffix("[]")


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeio" else f"a {kind}"


def _nested_kinds(obj: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """(field path, JSON kind) of every non-null value in ``obj``, nested ones too
    (``scores.hate``, ``labels[]``), as pyarrow types them column by column."""
    for key, value in obj.items():
        name = f"{prefix}{key}"
        kind = _json_kind(value)
        if kind == "null":
            continue
        yield name, kind
        if isinstance(value, dict):
            yield from _nested_kinds(value, f"{name}.")
        elif isinstance(value, list):
            for v in value:
                k = _json_kind(v)
                if k != "null":
                    yield f"{name}[]", k
                    if isinstance(v, dict):
                        yield from _nested_kinds(v, f"{name}[].")


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "object"


def _json_schema(first: dict[str, Any]) -> pa.Schema:
    """Explicit types for the fields the first line shows; others are inferred."""
    fields = []
    for key, value in first.items():
        if key in ID_COLUMNS:
            fields.append((key, pa.int64() if _json_kind(value) == "int" else pa.string()))
        elif isinstance(value, dict) and key in SCORE_COLUMNS:
            fields.append((key, pa.struct([(str(k), pa.float64()) for k in value])))
        elif isinstance(value, list) and key in SCORE_COLUMNS:
            fields.append((key, pa.list_(pa.float64())))
        elif isinstance(value, list) and key in LABEL_COLUMNS:
            fields.append((key, pa.list_(pa.string())))
        elif isinstance(value, str) and (key in TEXT_COLUMNS or key in LABEL_COLUMNS):
            fields.append((key, pa.string()))
        elif _json_kind(value) in ("int", "float"):
            fields.append((key, pa.float64()))
    return pa.schema(fields)


@contextmanager
def _source(path: Path) -> Iterator[str | pa.NativeFile]:
    """What pyarrow's JSON / CSV readers are given: the path of a plain file, or a
    decompressing stream chosen by the (case-insensitive) suffix, so every compression
    :func:`detect_format` looks through is read, not only those pyarrow detects."""
    if file_compression(path) is None:
        yield str(path)
        return
    with open_stream(path) as stream:
        yield stream


def _check_encoding(path: Path) -> None:
    """A clear error for a UTF-16 or UTF-32 text file (files.check_utf8_encoding)."""
    try:
        with open_binary(path) as f:
            head = f.read(64)
    except (OSError, EOFError, zlib.error) as e:
        raise _unreadable(path, e) from None
    check_utf8_encoding(head, str(path), PredictionError)


def read_jsonl_table(path: Path) -> pa.Table:
    """The one place that decides which reader serves a JSONL dump: the native reader
    (:mod:`~toxeval.predictions.native_jsonl`) for a file it covers (compressed ones
    decompressed first), pyarrow (:func:`read_pyarrow_jsonl_table`) for everything
    else: a file the native reader declines, or ``TOXEVAL_JSONL_READER=pyarrow``. Both
    give the same table; every error message comes from the pyarrow path."""
    if native_jsonl_available():
        try:
            table = read_native_jsonl(path)
        except OSError as e:
            raise _unreadable(path, e) from None
        if table is not None:
            return table
    return read_pyarrow_jsonl_table(path)


def read_pyarrow_jsonl_table(path: Path) -> pa.Table:
    """Any JSONL dump through ``pyarrow.json`` with an explicit schema from the first
    lines: the concatenation of the file layer's stream of batches
    (:func:`~toxeval.record_batches.iter_record_batches`, blocks of whole lines), so a
    line nested too deeply, longer than pyarrow's block or malformed is handled and
    named as when streamed; a file pyarrow refuses otherwise is scanned line by line to
    name the line and the problem."""
    _check_encoding(path)
    first = _schema_sample(path)
    batches = iter_record_batches(
        path,
        PredictionError,
        what="predictions",
        given="jsonl",
        batch_rows=WHOLE_FILE_ROWS,
        json_schema=_json_schema(first),
        explain=lambda msg: _scan_jsonl(path, msg),
    )
    try:
        return read_batches_table(batches)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:  # blocks of types that do not unify
        raise _scan_jsonl(path, str(e)) from None


def read_csv_table(path: Path) -> pa.Table:
    """The one place that decides which reader serves a CSV / TSV dump: the native
    reader (:mod:`~toxeval.predictions.native_csv`) for a file it covers (compressed
    ones decompressed first), pyarrow for everything else: a file the native reader
    declines, or ``TOXEVAL_CSV_READER=pyarrow``. Both give the same table; every error message
    comes from the pyarrow path."""
    import pyarrow.csv as pcsv

    if path.stat().st_size == 0:
        raise PredictionError(f"{path}: empty file (no predictions)")
    _check_encoding(path)
    delimiter = prediction_format(path, "csv").delimiter
    string_columns = ID_COLUMNS + LABEL_COLUMNS + TEXT_COLUMNS
    if native_csv_available():
        try:
            table = read_native_csv(path, delimiter, string_columns)
        except OSError as e:
            raise _unreadable(path, e) from None
        if table is not None:
            check_column_names(table.column_names, str(path), PredictionError)
            return table
    try:
        with _source(path) as src:
            table = pcsv.read_csv(
                src,
                parse_options=pcsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
                convert_options=pcsv.ConvertOptions(
                    column_types={c: pa.string() for c in string_columns},
                    # an empty cell is null (no prediction, unscored); a quoted "" is an
                    # empty string (an empty output, an empty label list)
                    strings_can_be_null=True,
                    quoted_strings_can_be_null=False,
                ),
            )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise PredictionError(f"{path}: cannot read as CSV: {e}") from None
    except (OSError, EOFError, zlib.error) as e:
        raise _unreadable(path, e) from None
    try:
        check_column_names(table.column_names, str(path), PredictionError)
        return table
    except UnicodeDecodeError as e:  # pyarrow checks header names only when asked for them
        raise _unreadable(path, e) from None


def read_parquet_table(path: Path) -> pa.Table:
    """A Parquet dump: the concatenation of the file layer's stream of batches, one row
    group at a time (:func:`~toxeval.record_batches.iter_record_batches`)."""
    if path.stat().st_size == 0:
        raise PredictionError(f"{path}: empty file (no predictions)")
    batches = iter_record_batches(
        path, PredictionError, what="predictions", given="parquet", batch_rows=WHOLE_FILE_ROWS
    )
    return read_batches_table(batches)
