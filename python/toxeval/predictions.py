"""Prediction dumps: read, validate and join model predictions to a dataset.

A dump holds, per item, either per-category scores (an object ``{"hate": 0.9, ...}``,
one column per category id, or a K-vector), a set of labels (``labels: ["hate"]``), or
the model's raw text (``output`` or ``text``, turned into a vector by
:func:`toxeval.parsing.parse_outputs`). It is read from JSONL (``.jsonl``, ``.ndjson``),
CSV, Parquet (matched to the dataset by the ``id`` column), or NPY / NPZ (matched by row
order, or by an ``ids`` array in an NPZ). JSONL and CSV may be compressed (``.gz``,
``.bz2``, ``.zst``, ``.lz4``: pyarrow's codecs); a compressed Parquet, NPY or NPZ file is
rejected.

Everything on the score path is columnar: pyarrow reads the file (with an explicit schema
for JSONL, built from the first line), ids are joined in Arrow / numpy and scores move as
numpy arrays, so a million rows load without a Python object per row. Raw text is the
exception: each output is parsed as a string. The join takes the cheapest exact path:
ids already in dataset order (one array comparison); the same ids shuffled (both sides
sorted by a 64-bit hash, every pair confirmed byte for byte); anything else, or a hash
collision, through ``pyarrow.compute.index_in``. Score columns are copied once, chunk by
chunk, into a Fortran-order (N, K) matrix in dataset row order.

Nothing is dropped silently. Ids of the dataset without a prediction (*missing*), ids
given twice (*duplicate*) and ids not in the dataset (*unknown*) are counted; with
``on_mismatch="error"`` (the default) any of them raises :class:`PredictionError`, with
``"drop"`` later duplicates and unknown rows are dropped and missing dataset rows are
left out of scoring; the counts and the first few ids go into the report either way.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toxeval.files import (
    COMPRESSIONS,
    BackgroundSha256,
    compression_suffix,
    file_sha256,
    open_binary,
    open_stream,
    plain_name,
    require_file,
)
from toxeval.ids import SHOW, IdJoin, dataset_id_array, join_ids
from toxeval.parsing import UnparseableOutputError
from toxeval.taxonomy import LabelMapping, Taxonomy, load_mapping

if TYPE_CHECKING:
    from toxeval.datasets import Dataset

__all__ = [
    "FORMATS",
    "MISMATCH_POLICIES",
    "PARSE_POLICIES",
    "Format",
    "OnMismatch",
    "ParsePolicy",
    "PredictionError",
    "Predictions",
    "detect_format",
    "is_frame",
    "predictions_from_array",
    "predictions_from_frame",
    "predictions_from_texts",
    "read_predictions",
]

Format = Literal["auto", "jsonl", "csv", "parquet", "npy", "npz"]
OnMismatch = Literal["error", "drop"]
ParsePolicy = Literal["zeros", "exclude", "error"]
Kind = Literal["scores", "labels", "text"]
FORMATS: tuple[str, ...] = ("auto", "jsonl", "csv", "parquet", "npy", "npz")
MISMATCH_POLICIES: tuple[str, ...] = ("error", "drop")
PARSE_POLICIES: tuple[str, ...] = ("zeros", "exclude", "error")
STATUSES: tuple[str, ...] = ("ok", "partial", "empty", "unparseable")

# How many ids an error message or the report lists before "...".
_ID_COLUMNS = ("id",)
_SCORE_COLUMNS = ("scores", "score", "y_score", "probs", "probabilities")
_LABEL_COLUMNS = ("labels", "label", "categories", "y_pred")
_TEXT_COLUMNS = ("output", "text", "response", "completion", "generation")
# A failed model request: any value but null, "" or false marks the row as failed.
_ERROR_COLUMN = "error"
# Columns that are never category scores (pandas index columns and the like).
_IGNORED = re.compile(r"^(index|row|__index_level_\d+__|Unnamed: ?\d*|)$")


class PredictionError(ValueError):
    """A prediction dump is unreadable, malformed, or does not match the dataset."""


class _UnparseableOutputs(PredictionError, UnparseableOutputError):
    """Raw outputs that do not parse under ``parse_policy="error"``: a
    :class:`PredictionError` like every other bad prediction, and the
    :class:`~toxeval.parsing.UnparseableOutputError` that ``ParsedBatch.apply_policy``
    raises for the same policy, so either ``except`` catches it."""


def _check_choice(name: str, value: object, choices: tuple[str, ...], flag: str) -> None:
    """A ValueError naming the keyword (and its CLI flag) unless ``value`` is a choice."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(
            f"{name} must be one of {', '.join(map(repr, choices))} ({flag}), got {value!r}"
        )


@dataclass(frozen=True)
class Predictions:
    """Predictions aligned to a dataset's rows.

    ``scores[i]`` is the score vector of dataset row ``i`` (columns in taxonomy order);
    rows with ``scored[i] == False`` (no prediction, a null prediction, a failed request,
    or excluded by the parse policy) hold zeros and are left out of every figure.
    """

    scores: np.ndarray  # (N, K) float64
    scored: np.ndarray  # (N,) bool
    kind: Kind
    source: str
    format: str
    sha256: str | None
    n_read: int
    on_mismatch: str
    n_missing: int = 0
    n_duplicate: int = 0
    n_unknown: int = 0
    missing_ids: tuple[str, ...] = ()
    duplicate_ids: tuple[str, ...] = ()
    unknown_ids: tuple[str, ...] = ()
    n_out_of_range: int = 0
    parse_policy: str | None = None
    parse_counts: dict[str, int] | None = None
    n_parse_excluded: int = 0
    graded: bool = True
    notes: tuple[str, ...] = field(default=())
    # sha256 of the dataset the rows were aligned to (None: not recorded); scoring
    # checks it against the dataset it is given
    dataset_sha256: str | None = None
    # dataset rows whose prediction is null (unknown: no score, label list or output)
    # or whose request failed (a non-null 'error' field): unscored, never negatives
    n_null: int = 0
    null_ids: tuple[str, ...] = ()
    n_failed: int = 0
    failed: tuple[tuple[str, str], ...] = ()  # first few (id, error)

    @property
    def n_scored(self) -> int:
        return int(self.scored.sum())

    def summary(self) -> dict[str, Any]:
        """JSON-ready description (everything but the score matrix)."""
        return {
            "source": self.source,
            "format": self.format,
            "kind": self.kind,
            "sha256": self.sha256,
            "rows_read": self.n_read,
            "on_mismatch": self.on_mismatch,
            "missing": {"count": self.n_missing, "first_ids": list(self.missing_ids)},
            "duplicate": {"count": self.n_duplicate, "first_ids": list(self.duplicate_ids)},
            "unknown": {"count": self.n_unknown, "first_ids": list(self.unknown_ids)},
            "scores_outside_0_1": self.n_out_of_range,
            "parse_policy": self.parse_policy,
            "parse_status_counts": self.parse_counts,
            "parse_excluded": self.n_parse_excluded,
            "null": {"count": self.n_null, "first_ids": list(self.null_ids)},
            "failed": {
                "count": self.n_failed,
                "first": [{"id": i, "error": e} for i, e in self.failed],
            },
        }


# --------------------------------------------------------------------------- helpers


def _ids_text(ids: Sequence[str], total: int | None = None) -> str:
    shown = ", ".join(repr(i) for i in ids[:SHOW])
    n = len(ids) if total is None else total
    return shown + (", ..." if n > SHOW else "")


_TEXT_FORMATS = ("jsonl", "csv")


def detect_format(path: str | Path) -> str:
    """The dump format implied by the file name (``.jsonl.gz`` -> ``jsonl``), looking
    through one trailing compression suffix (``.gz``, ``.bz2``, ``.zst``, ``.lz4``).
    Raises :class:`PredictionError` when the name implies none."""
    name = plain_name(path)
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if name.endswith(".csv") or name.endswith(".tsv"):
        return "csv"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith(".npy"):
        return "npy"
    if name.endswith(".npz"):
        return "npz"
    raise PredictionError(
        f"{path}: cannot tell the format from the file name; "
        f"pass format= (--format): one of {', '.join(FORMATS[1:])}"
    )


def _resolve_name(name: str, taxonomy: Taxonomy) -> str | None:
    if name in taxonomy.ids:
        return name
    return taxonomy.resolve(name)


def _open_text(path: Path) -> io.TextIOBase:
    """``path`` as UTF-8 text; a byte-order mark at the start is skipped (pyarrow's
    readers skip it too)."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig")


# --------------------------------------------------------------------------- readers


def _unreadable(path: Path, e: BaseException) -> PredictionError:
    """A decompression or decoding error while reading ``path`` as a PredictionError."""
    if isinstance(e, UnicodeDecodeError):
        return PredictionError(f"{path}: {_bad_utf8_line(path)}not UTF-8 text ({e.reason})")
    sfx = compression_suffix(path)
    if sfx is not None:
        what = COMPRESSIONS[sfx][1]
        return PredictionError(f"{path}: not a valid {what} file ({type(e).__name__}: {e})")
    return PredictionError(f"{path}: cannot read the file ({type(e).__name__}: {e})")


def _bad_utf8_line(path: Path) -> str:
    """ "line N: " for the first line of ``path`` that is not UTF-8 (error path only)."""
    try:
        with open_binary(path) as f:
            for lineno, line in enumerate(f, start=1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as e:
                    return f"line {lineno}: byte {e.start + 1}: "
    except (OSError, EOFError, zlib.error):
        pass
    return ""


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
    typed = _ID_COLUMNS + _SCORE_COLUMNS + _LABEL_COLUMNS + _TEXT_COLUMNS
    return [k for k, v in sample.items() if v is None and k in typed]


def _schema_sample_unchecked(path: Path) -> dict[str, Any]:
    sample: dict[str, Any] | None = None
    with _open_text(path) as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise PredictionError(f"{path}: line {lineno}: not valid JSON ({e.msg})") from None
            if not isinstance(obj, dict):
                raise PredictionError(
                    f"{path}: line {lineno}: expected a JSON object, got {type(obj).__name__}"
                )
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
    with _open_text(path) as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                return PredictionError(f"{path}: line {lineno}: not valid JSON ({e.msg})")
            if not isinstance(obj, dict):
                return PredictionError(
                    f"{path}: line {lineno}: expected a JSON object, got {type(obj).__name__}"
                )
            for key, kind in _nested_kinds(obj):
                seen = kinds.get(key)
                if seen is None:
                    kinds[key] = (kind, lineno)
                elif seen[0] != kind and {seen[0], kind} != {"int", "float"}:
                    return PredictionError(
                        f"{path}: line {lineno}: field {key!r} is {_a(kind)}, but {_a(seen[0])} "
                        f"on line {seen[1]}"
                    )
    # pyarrow counts rows from 0 and skips blank lines: its "row N" is not a line number
    msg = re.sub(r" in row \d+", "", pyarrow_msg.removeprefix("JSON parse error: "))
    return PredictionError(f"{path}: cannot read as JSON Lines: {msg}")


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
        if key in _ID_COLUMNS:
            fields.append((key, pa.int64() if _json_kind(value) == "int" else pa.string()))
        elif isinstance(value, dict) and key in _SCORE_COLUMNS:
            fields.append((key, pa.struct([(str(k), pa.float64()) for k in value])))
        elif isinstance(value, list) and key in _SCORE_COLUMNS:
            fields.append((key, pa.list_(pa.float64())))
        elif isinstance(value, list) and key in _LABEL_COLUMNS:
            fields.append((key, pa.list_(pa.string())))
        elif isinstance(value, str) and (key in _TEXT_COLUMNS or key in _LABEL_COLUMNS):
            fields.append((key, pa.string()))
        elif _json_kind(value) in ("int", "float"):
            fields.append((key, pa.float64()))
    return pa.schema(fields)


def _longest_line(path: Path) -> int:
    """Bytes in the longest line of a (possibly compressed) file, read in blocks."""
    longest = 0
    run = 0  # bytes since the last newline
    with open_binary(path) as f:
        while block := f.read(1 << 22):
            nl = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
            if nl.size == 0:
                run += len(block)
            else:
                longest = max(longest, run + int(nl[0]) + 1)
                if nl.size > 1:
                    longest = max(longest, int(np.diff(nl).max()))
                run = len(block) - int(nl[-1]) - 1
    return max(longest, run)


@contextmanager
def _source(path: Path) -> Iterator[str | pa.NativeFile]:
    """What pyarrow's JSON / CSV readers are given: the path of a plain file, or a
    decompressing stream chosen by the (case-insensitive) suffix, so every compression
    :func:`detect_format` looks through is read, not only those pyarrow detects."""
    if compression_suffix(path) is None:
        yield str(path)
        return
    with open_stream(path) as stream:
        yield stream


def _read_jsonl(path: Path) -> pa.Table:
    import pyarrow.json as pj

    first = _schema_sample(path)
    opts = pj.ParseOptions(explicit_schema=_json_schema(first), unexpected_field_behavior="infer")
    try:
        try:
            with _source(path) as src:
                return pj.read_json(src, parse_options=opts)
        except pa.ArrowInvalid as e:
            if "straddl" not in str(e):
                raise
            # a line longer than pyarrow's block (1 MiB): read again in blocks that hold
            # the longest line whole
            block = _longest_line(path) + 1024
            if block >= 1 << 31:
                raise PredictionError(
                    f"{path}: a line of {block} bytes is too long to read as JSON Lines"
                ) from None
            read = pj.ReadOptions(block_size=max(block, 1 << 20))
            with _source(path) as src:
                return pj.read_json(src, parse_options=opts, read_options=read)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise _scan_jsonl(path, str(e)) from None
    except (OSError, EOFError, zlib.error) as e:
        raise _unreadable(path, e) from None


def _read_csv(path: Path) -> pa.Table:
    import pyarrow.csv as pcsv

    if path.stat().st_size == 0:
        raise PredictionError(f"{path}: empty file (no predictions)")
    delimiter = "\t" if plain_name(path).endswith(".tsv") else ","
    try:
        with _source(path) as src:
            table = pcsv.read_csv(
                src,
                parse_options=pcsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
                convert_options=pcsv.ConvertOptions(
                    column_types={
                        c: pa.string() for c in _ID_COLUMNS + _LABEL_COLUMNS + _TEXT_COLUMNS
                    },
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
        return _check_column_names(table, path)
    except UnicodeDecodeError as e:  # pyarrow checks header names only when asked for them
        raise _unreadable(path, e) from None


def _check_column_names(table: pa.Table, path: Path) -> pa.Table:
    """Reject a table that names a column twice (every column must mean one thing)."""
    names = table.column_names
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise PredictionError(
            f"{path}: column {'s' if len(dup) > 1 else ''}{', '.join(map(repr, dup))} "
            f"appear{'' if len(dup) > 1 else 's'} more than once; every column name must be "
            "unique"
        )
    return table


def _read_parquet(path: Path) -> pa.Table:
    import pyarrow.parquet as pq

    if path.stat().st_size == 0:
        raise PredictionError(f"{path}: empty file (no predictions)")
    try:
        # ParquetFile: one chunk per row group, and no import of pyarrow.dataset
        table = pq.ParquetFile(path, memory_map=True).read()
    except (pa.ArrowInvalid, OSError) as e:
        raise PredictionError(f"{path}: cannot read as Parquet: {e}") from None
    return _check_column_names(table, path)


def _check_npy_size(f: Any, available: int, path: Path, what: str) -> None:
    """Compare the size an NPY header declares with the bytes there are, before numpy
    allocates the array: a corrupt or lying header (a shape of 1e11 rows over 48 bytes)
    is an error naming the file, not a MemoryError."""
    from numpy.lib import format as npformat

    start = f.tell()
    version = npformat.read_magic(f)
    if version == (1, 0):
        shape, _, dtype = npformat.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, _, dtype = npformat.read_array_header_2_0(f)
    else:
        return  # left to numpy (its message names the version)
    header = f.tell() - start
    f.seek(start)
    if dtype.hasobject:
        return  # numpy refuses pickled objects itself
    count = 1
    for d in shape:
        count *= int(d)
    if count < 0:
        raise PredictionError(f"{path}: {what}: the header declares a negative shape {shape}")
    need = count * dtype.itemsize
    if need > available - header:
        raise PredictionError(
            f"{path}: {what}: the header declares shape {shape} of {dtype} ({need} bytes), "
            f"but the file holds {max(available - header, 0)} bytes of data; it is "
            "truncated or corrupt"
        )


def _read_numpy(path: Path, fmt: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Scores (and, from an NPZ, optional ids) from an .npy / .npz file."""
    size = path.stat().st_size
    if size == 0:
        raise PredictionError(f"{path}: empty file (no predictions)")
    try:
        if fmt == "npy":
            with open(path, "rb") as f:
                _check_npy_size(f, size, path, "NPY")
                return np.load(f, allow_pickle=False), None
        with np.load(path, allow_pickle=False) as z:
            names = list(z.files)
            key = next((n for n in _SCORE_COLUMNS + _LABEL_COLUMNS if n in names), None)
            if key is None:
                non_id = [n for n in names if n not in ("ids", "id")]
                if len(non_id) != 1:
                    raise PredictionError(
                        f"{path}: NPZ holds {names}; name the score array 'scores' "
                        f"(and optionally the ids 'ids')"
                    )
                key = non_id[0]
            ids_key = "ids" if "ids" in names else ("id" if "id" in names else None)
            for member in (key, ids_key):
                if member is None:
                    continue
                info = z.zip.getinfo(member + ".npy")
                with z.zip.open(info) as f:
                    _check_npy_size(f, info.file_size, path, f"array {member!r}")
            return z[key], (z[ids_key] if ids_key else None)
    except PredictionError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise PredictionError(f"{path}: cannot read as {fmt.upper()}: {e}") from None


# --------------------------------------------------------------------------- extraction


def _is_number_type(t: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_boolean(t)
        or pa.types.is_decimal(t)
    )


def _as_float64(values: Any, what: str, path: str) -> Any:
    """Numeric Arrow ``values`` as float64, or an error naming ``what`` when a value does
    not fit (a uint64 beyond float64's range) or the values are not numbers."""
    t = values.type
    if not _is_number_type(t):
        raise PredictionError(f"{path}: {what} are {t}, expected numbers")
    try:
        if pa.types.is_decimal(t):
            # through the decimal text: parsing it gives the nearest float64, as reading
            # the same number from a CSV or JSON file would
            return values.cast(pa.string()).cast(pa.float64())
        return values.cast(pa.float64())
    except pa.ArrowInvalid as e:
        raise PredictionError(f"{path}: {what} ({t}): cannot be read as float64: {e}") from None


def _column_values(col: Any, name: str, ids: pa.Array | None, path: str) -> list[np.ndarray]:
    """A numeric column as float64 chunks, one per Arrow chunk (zero-copy views of float64
    chunks: the copy into the dataset-ordered matrix is the only one); a null names the
    row id."""
    typ = col.type
    if pa.types.is_null(typ) and len(col):
        raise PredictionError(f"{path}: row {_row_name(ids, 0)}: no score for {name!r}")
    if not _is_number_type(typ):
        raise PredictionError(f"{path}: score column {name!r} is {typ}, not numeric")
    if col.null_count:
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        row = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise PredictionError(f"{path}: row {_row_name(ids, row)}: no score for {name!r}")
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    out = []
    for chunk in chunks:
        if len(chunk) == 0:
            continue
        if not pa.types.is_float64(chunk.type):
            chunk = _as_float64(chunk, f"the scores of column {name!r}", path)
        out.append(np.asarray(chunk.to_numpy(zero_copy_only=False)))
    return out


class _Columns(list):  # type: ignore[type-arg]
    """(M, K) scores as K float64 columns of length M, in taxonomy order; each column is a
    list of 1-D chunks (views of the Arrow buffers), so nothing is concatenated."""

    @property
    def n_rows(self) -> int:
        return sum(len(c) for c in self[0]) if self else 0

    def column(self, c: int) -> np.ndarray:
        """Column ``c`` in one array (a copy when chunked; error paths only)."""
        chunks = self[c]
        if len(chunks) == 1:
            return np.asarray(chunks[0])
        return np.concatenate(chunks) if chunks else np.zeros(0)

    def chunks(self) -> list[np.ndarray]:
        return [chunk for col in self for chunk in col]


Scores = np.ndarray | _Columns


def _assemble(scores: Scores, join: IdJoin, n: int, n_read: int) -> np.ndarray:
    """The (n, K) matrix in dataset row order: row ``dst[i]`` is prediction row ``src[i]``,
    zeros elsewhere.

    Columns read from a table go into a Fortran-order matrix (K contiguous columns; the
    metrics take either order and give identical results): each Arrow chunk is copied
    once, sequentially when the rows are already in dataset order, else scattered to
    its dataset rows, so no (M, K) copy in file order and no concatenation is made."""
    if isinstance(scores, np.ndarray):
        if _is_identity(join, n) and scores.shape[0] == n:
            return scores  # rows already in dataset order: no gather
        return _gather(scores, join, n)
    k = len(scores)
    src, dst = join.src, join.dst
    full = dst.size == n
    out_t = np.empty((k, n)) if full else np.zeros((k, n))
    if _is_identity(join, n) and n_read == n:
        for c, chunks in enumerate(scores):
            at = 0
            for chunk in chunks:
                out_t[c, at : at + len(chunk)] = chunk
                at += len(chunk)
        return np.asarray(out_t.T)
    # where each prediction row goes (-1: not used)
    pos = np.full(n_read, -1, dtype=np.intp)
    pos[src] = dst
    every = src.size == n_read
    for c, chunks in enumerate(scores):
        col = out_t[c]
        at = 0
        for chunk in chunks:
            to = pos[at : at + len(chunk)]
            if every:
                col[to] = chunk
            else:
                used = to >= 0
                col[to[used]] = chunk[used]
            at += len(chunk)
    return np.asarray(out_t.T)


def _row_name(ids: pa.Array | np.ndarray | None, row: int) -> str:
    if ids is None:
        return f"#{row + 1}"
    value = ids[row]
    if hasattr(value, "as_py"):
        value = value.as_py()
    return f"id {str(value)!r}"


def _named_scores(
    columns: dict[str, Any], taxonomy: Taxonomy, ids: pa.Array | None, path: str, what: str
) -> Scores:
    """(M, K) scores from columns named after categories (ids, names or aliases)."""
    unknown = []
    by_cat: dict[str, str] = {}
    for name in columns:
        cat = _resolve_name(name, taxonomy)
        if cat is None:
            unknown.append(name)
        elif cat in by_cat:
            raise PredictionError(
                f"{path}: {what} {by_cat[cat]!r} and {name!r} both name category {cat!r}"
            )
        else:
            by_cat[cat] = name
    if unknown:
        raise PredictionError(
            f"{path}: unknown categories in {what}s: {', '.join(map(repr, unknown))}; "
            f"taxonomy {taxonomy.name!r} has: {', '.join(taxonomy.ids)}"
        )
    absent = [c for c in taxonomy.ids if c not in by_cat]
    if absent:
        raise PredictionError(
            f"{path}: no scores for categories {', '.join(map(repr, absent))} "
            f"(taxonomy {taxonomy.name!r} has K={taxonomy.k}: {', '.join(taxonomy.ids)})"
        )
    # Kept as K columns (zero-copy views where pyarrow allows): _finish interleaves them
    # straight into the dataset-ordered matrix, with no (M, K) copy in file order.
    return _Columns(
        [_column_values(columns[by_cat[c]], by_cat[c], ids, path) for c in taxonomy.ids]
    )


def _struct_scores(col: Any, taxonomy: Taxonomy, ids: pa.Array | None, path: str) -> Scores:
    if col.null_count:
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        row = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise PredictionError(f"{path}: row {_row_name(ids, row)}: scores are missing (null)")
    typ = col.type
    # one (chunked) array per field, without concatenating the struct's chunks first
    children = col.flatten()
    fields = {typ.field(i).name: children[i] for i in range(typ.num_fields)}
    return _named_scores(fields, taxonomy, ids, path, "score key")


def _vector_scores(col: Any, taxonomy: Taxonomy, ids: pa.Array | None, path: str) -> np.ndarray:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if arr.null_count:
        row = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise PredictionError(f"{path}: row {_row_name(ids, row)}: scores are missing (null)")
    k = taxonomy.k
    if pa.types.is_fixed_size_list(arr.type):
        lengths = np.full(len(arr), arr.type.list_size)
    else:
        lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(lengths != k)
    if bad.size:
        row = int(bad[0])
        raise PredictionError(
            f"{path}: row {_row_name(ids, row)}: score vector has length {int(lengths[row])}, "
            f"expected K={k} for taxonomy {taxonomy.name!r} ({', '.join(taxonomy.ids)})"
        )
    values = arr.flatten()
    if not _is_number_type(values.type):
        raise PredictionError(
            f"{path}: score vectors hold {values.type} values, expected numbers (a list of K "
            f"scores per row, type {arr.type} given)"
        )
    if values.null_count:
        pos = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
        raise PredictionError(
            f"{path}: row {_row_name(ids, pos // k)}: null score for {taxonomy.ids[pos % k]!r}"
        )
    values = _as_float64(values, "the values of the score vectors", path)
    flat = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
    return flat.reshape(len(arr), k)


def _map_scores(col: Any, taxonomy: Taxonomy, ids: pa.Array | None, path: str) -> np.ndarray:
    """A map<string, number> column (Parquet) as (M, K) scores."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    m = len(arr)
    if arr.offset:
        arr = pa.concat_arrays([arr])  # unsliced, so offsets index keys/items directly
    lengths = np.diff(arr.offsets.to_numpy(zero_copy_only=False))
    rows = np.repeat(np.arange(m), lengths)
    cols, source = _label_columns(arr.keys, taxonomy, None, path, "score key")
    items = _as_float64(arr.items, "score map values", path)
    if items.null_count:
        pos = int(np.flatnonzero(items.is_null().to_numpy(zero_copy_only=False))[0])
        raise PredictionError(f"{path}: row {_row_name(ids, int(rows[pos]))}: a score is null")
    out = np.zeros((m, taxonomy.k), dtype=np.float64)
    counts = np.zeros((m, taxonomy.k), dtype=np.int64)
    out[rows[source], cols] = items.to_numpy(zero_copy_only=False)[source]
    np.add.at(counts, (rows[source], cols), 1)
    holes = np.argwhere(counts != 1)
    if holes.size:
        r, c = (int(v) for v in holes[0])
        what = "no score" if counts[r, c] == 0 else "more than one score"
        raise PredictionError(f"{path}: row {_row_name(ids, r)}: {what} for {taxonomy.ids[c]!r}")
    return out


def _label_columns(
    values: pa.Array, taxonomy: Taxonomy, mapping: LabelMapping | None, path: str, what: str
) -> tuple[np.ndarray, np.ndarray]:
    """Column index per label string (resolving each distinct string once).

    Returns ``(cols, source)``: for a label that maps to several categories (a mapping
    code), one entry per category, and ``source`` gives the position in ``values``.
    """
    values = values.cast(pa.string())
    if values.null_count:
        raise PredictionError(f"{path}: a {what} is null")
    uniq = pc.unique(values)
    targets: list[tuple[int, ...]] = []
    unknown = []
    for name in uniq.to_pylist():  # one Python object per distinct label, not per row
        cat = _resolve_name(name, taxonomy)
        if cat is not None:
            targets.append((taxonomy.index(cat),))
            continue
        mapped = mapping.map(name) if mapping is not None else None
        if mapped is None:
            unknown.append(name)
            targets.append(())
        else:
            targets.append(tuple(taxonomy.index(c) for c in mapped if c in taxonomy.ids))
    if unknown:
        raise PredictionError(
            f"{path}: unknown categories in {what}s: {', '.join(map(repr, sorted(unknown)))}; "
            f"taxonomy {taxonomy.name!r} has: {', '.join(taxonomy.ids)}"
        )
    codes = pc.index_in(values, value_set=uniq).to_numpy(zero_copy_only=False)
    if all(len(t) == 1 for t in targets):
        lut = np.array([t[0] for t in targets], dtype=np.intp)
        return lut[codes], np.arange(len(values))
    n_targets = np.array([len(t) for t in targets], dtype=np.intp)
    flat = np.array([c for t in targets for c in t], dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(n_targets)[:-1]]).astype(np.intp)
    per = n_targets[codes]
    source = np.repeat(np.arange(len(values)), per)
    offset = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    return flat[starts[codes][source] + offset], source


def _label_scores(
    col: Any, taxonomy: Taxonomy, mapping: LabelMapping | None, path: str
) -> np.ndarray:
    """(M, K) 0/1 scores from a list-of-labels column (or a delimited string in CSV)."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    m = len(arr)
    is_text = pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
    if is_text:
        # CSV: "hate;violence", "hate, violence" or '["hate", "violence"]'
        stripped = pc.utf8_trim(arr.fill_null(""), characters="[]\"' ")
        arr = pc.split_pattern_regex(stripped, pattern=r"[\"']?\s*[,;|]\s*[\"']?")
    elif not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
        raise PredictionError(f"{path}: labels column is {arr.type}, expected a list of ids")
    lengths = pc.list_value_length(arr).fill_null(0).to_numpy(zero_copy_only=False)
    flat = arr.flatten()
    rows = np.repeat(np.arange(m), lengths)
    if is_text:
        keep = pc.not_equal(flat, "")
        flat = flat.filter(keep)
        rows = rows[keep.to_numpy(zero_copy_only=False)]
    out = np.zeros((m, taxonomy.k), dtype=np.float64)
    if len(flat):
        cols, source = _label_columns(flat, taxonomy, mapping, path, "label")
        out[rows[source], cols] = 1.0
    return out


def _text_column(table: pa.Table) -> str | None:
    for name in _TEXT_COLUMNS:
        if name in table.column_names:
            return name
    return None


def _extract(
    table: pa.Table, taxonomy: Taxonomy, mapping: LabelMapping | None, path: str
) -> tuple[Kind, Scores | None, str | None]:
    """The form of a table's predictions: (kind, scores or None, text column or None)."""
    ids = table.column("id").combine_chunks() if "id" in table.column_names else None
    for name in _SCORE_COLUMNS:
        if name not in table.column_names:
            continue
        typ = table.schema.field(name).type
        if pa.types.is_struct(typ):
            return "scores", _struct_scores(table.column(name), taxonomy, ids, path), None
        if pa.types.is_map(typ):
            return "scores", _map_scores(table.column(name), taxonomy, ids, path), None
        if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
            return "scores", _vector_scores(table.column(name), taxonomy, ids, path), None
    named = {
        n: table.column(n)
        for n in table.column_names
        if _resolve_name(n, taxonomy) is not None and n not in _ID_COLUMNS
    }
    if named:
        extra = [
            n
            for n in table.column_names
            if n not in named
            and n not in _ID_COLUMNS + _LABEL_COLUMNS + _TEXT_COLUMNS
            and n != _ERROR_COLUMN
            and not _IGNORED.match(n)
            and (
                pa.types.is_floating(table.schema.field(n).type)
                or pa.types.is_integer(table.schema.field(n).type)
            )
        ]
        cols = {**named, **{n: table.column(n) for n in extra}}
        return "scores", _named_scores(cols, taxonomy, ids, path, "score column"), None
    for name in _LABEL_COLUMNS:
        if name in table.column_names:
            return "labels", _label_scores(table.column(name), taxonomy, mapping, path), None
    text = _text_column(table)
    if text is not None:
        return "text", None, text
    raise PredictionError(
        f"{path}: no predictions found; expected a 'scores' object or vector, one column per "
        f"category id ({', '.join(taxonomy.ids)}), a 'labels' list, or an 'output'/'text' "
        f"column (columns present: {', '.join(table.column_names) or 'none'})"
    )


# --------------------------------------------------------------------------- joining


def _mismatch_error(path: str, j: IdJoin, n_dataset: int, n_read: int) -> PredictionError:
    parts = []
    if j.n_missing:
        parts.append(
            f"{j.n_missing} of {n_dataset} dataset ids have no prediction "
            f"({_ids_text(j.missing_ids, j.n_missing)})"
        )
    if j.n_duplicate:
        parts.append(
            f"{j.n_duplicate} rows repeat an id already seen ({_ids_text(j.duplicate_ids, j.n_duplicate)})"
        )
    if j.n_unknown:
        parts.append(
            f"{j.n_unknown} of {n_read} prediction ids are not in the dataset "
            f"({_ids_text(j.unknown_ids, j.n_unknown)})"
        )
    return PredictionError(
        f"{path}: predictions do not match the dataset: {'; '.join(parts)}. "
        f"Pass on_mismatch='drop' (--on-mismatch drop) to score the matching rows only"
    )


# --------------------------------------------------------------------------- entry points


def _is_identity(join: IdJoin, n: int) -> bool:
    return join.src.size == n and bool(
        np.array_equal(join.src, np.arange(n)) and np.array_equal(join.dst, join.src)
    )


def _gather(scores: np.ndarray, join: IdJoin, n: int) -> np.ndarray:
    """(n, K) scores in dataset row order: row ``dst[i]`` is ``scores[src[i]]``, zeros
    elsewhere (``take`` along rows copies whole rows, unlike fancy indexing)."""
    if join.dst.size == n:  # every dataset row filled: one gather through the inverse map
        inv = np.empty(n, dtype=np.intp)
        inv[join.dst] = join.src
        return np.take(np.ascontiguousarray(scores, dtype=np.float64), inv, axis=0)
    out = np.zeros((n, scores.shape[1]), dtype=np.float64)
    out[join.dst] = np.take(scores, join.src, axis=0)
    return out


def _all_binary(scores: Scores) -> bool:
    """True when every score is exactly 0 or 1 (checked in blocks, stops early)."""
    for arr in scores.chunks() if isinstance(scores, _Columns) else [scores]:
        flat = arr.reshape(-1, order="A")  # a view in either memory order
        for start in range(0, flat.size, 1 << 20):
            block = flat[start : start + (1 << 20)]
            if not ((block == 0.0) | (block == 1.0)).all():
                return False
    return True


def _validate_scores(scores: Scores, ids: Any, taxonomy: Taxonomy, path: str) -> int:
    """Raise on NaN / inf (naming the row and category); return the count outside [0, 1]."""
    parts = scores.chunks() if isinstance(scores, _Columns) else [scores]
    if all(c.size == 0 for c in parts):
        return 0
    # min and max see every NaN and inf (NaN propagates): two passes, no temporaries
    bounds = [(float(c.min()), float(c.max())) for c in parts if c.size]
    if all(math.isfinite(lo) and math.isfinite(hi) for lo, hi in bounds):
        if all(lo >= 0.0 and hi <= 1.0 for lo, hi in bounds):
            return 0
        return sum(int(np.count_nonzero((c < 0.0) | (c > 1.0))) for c in parts)
    if isinstance(scores, _Columns):
        # the first bad cell in row-major order: the smallest row, then the first column
        cols = [scores.column(i) for i in range(len(scores))]
        first = [np.flatnonzero(~np.isfinite(col)) for col in cols]
        r = min(int(f[0]) for f in first if f.size)
        c = next(i for i, f in enumerate(first) if f.size and int(f[0]) == r)
        value = float(cols[c][r])
    else:
        finite = np.isfinite(scores)
        r, c = (int(v) for v in np.argwhere(~finite)[0])
        value = scores[r, c]
    what = "NaN" if math.isnan(value) else str(value)
    raise PredictionError(
        f"{path}: row {_row_name(ids, r)}: score for {taxonomy.ids[c]!r} is {what}; "
        f"scores must be finite"
    )


@dataclass(frozen=True)
class _Unknown:
    """The rows of a dump (file order) that hold no prediction: a null prediction (null
    ``scores`` / ``labels`` / ``output``, or every score column empty) or a failed
    request (a non-null ``error`` field; failed wins when both hold)."""

    null: np.ndarray  # (M,) bool
    failed: np.ndarray  # (M,) bool
    errors: pa.Array | None  # the 'error' column, when there is one

    @property
    def rows(self) -> np.ndarray:
        out: np.ndarray = self.null | self.failed
        return out


def _unknown_rows(table: pa.Table, taxonomy: Taxonomy) -> _Unknown:
    """Which rows of ``table`` hold no prediction (see :class:`_Unknown`)."""
    m = table.num_rows
    failed = np.zeros(m, dtype=bool)
    errors = None
    if _ERROR_COLUMN in table.column_names:
        errors = table.column(_ERROR_COLUMN).combine_chunks()
        t = errors.type
        if not pa.types.is_null(t):
            present = errors.is_valid()
            if pa.types.is_string(t) or pa.types.is_large_string(t):
                present = pc.and_(present, pc.not_equal(errors, "").fill_null(False))
            elif pa.types.is_boolean(t):
                present = errors.fill_null(False)
            failed = np.asarray(present.to_numpy(zero_copy_only=False), dtype=bool)
    null = np.zeros(m, dtype=bool)
    cols = _prediction_columns(table, taxonomy)
    if cols:
        null[:] = True
        for name in cols:
            null &= np.asarray(
                table.column(name).is_null().to_numpy(zero_copy_only=False), dtype=bool
            )
    return _Unknown(null=null & ~failed, failed=failed, errors=errors)


def _prediction_columns(table: pa.Table, taxonomy: Taxonomy) -> list[str]:
    """The column(s) holding the predictions, in :func:`_extract`'s order of preference:
    a ``scores`` column (object, map or vector; all-null too), the columns named after
    categories, a ``labels`` column, a text column. A row is a null prediction when all
    of them are null."""
    names = table.column_names
    for name in _SCORE_COLUMNS:
        if name in names:
            typ = table.schema.field(name).type
            if (
                pa.types.is_struct(typ)
                or pa.types.is_map(typ)
                or pa.types.is_list(typ)
                or pa.types.is_large_list(typ)
                or pa.types.is_fixed_size_list(typ)
                or pa.types.is_null(typ)
            ):
                return [name]
    named = [n for n in names if n not in _ID_COLUMNS and _resolve_name(n, taxonomy) is not None]
    if named:
        return named
    for name in _LABEL_COLUMNS:
        if name in names:
            return [name]
    text = _text_column(table)
    return [text] if text is not None else []


def _without_unknown(join: IdJoin, unknown: _Unknown) -> tuple[IdJoin, np.ndarray]:
    """``join`` restricted to the rows that hold a prediction, its ``src`` renumbered to
    count those rows only (the rows extraction kept); and the dataset rows left
    unscored."""
    rows = unknown.rows
    keep = ~rows[join.src]
    rank = np.cumsum(~rows) - 1
    out = IdJoin(
        rank[join.src[keep]],
        join.dst[keep],
        join.n_missing,
        join.missing_ids,
        join.n_duplicate,
        join.duplicate_ids,
        join.n_unknown,
        join.unknown_ids,
    )
    return out, join.src[~keep]


def _finish(
    *,
    dataset: Dataset,
    kind: Kind,
    scores_read: Scores | None,
    texts: pa.Array | None,
    pred_ids: Any,
    join: IdJoin | None,
    path: str,
    fmt: str,
    sha: str | None,
    n_read: int,
    on_mismatch: OnMismatch,
    parse_policy: ParsePolicy,
    mapping: LabelMapping | None,
    unknown: _Unknown | None = None,
    all_ids: pa.Array | None = None,
) -> Predictions:
    """Predictions from what a reader extracted. With ``unknown`` (a table's rows without
    a prediction), ``join`` and ``all_ids`` cover every row read, while ``scores_read``,
    ``texts`` and ``pred_ids`` hold the other rows only."""
    taxonomy = dataset.taxonomy
    n = len(dataset.ids)
    _check_choice("on_mismatch", on_mismatch, MISMATCH_POLICIES, "--on-mismatch")
    _check_choice("parse_policy", parse_policy, PARSE_POLICIES, "--parse-policy")
    if join is None:
        if n_read != n:
            raise PredictionError(
                f"{path}: {n_read} rows of predictions, but the dataset {dataset.name!r} has "
                f"{n} rows; {fmt.upper()} predictions are matched by row order"
                + (" (or add an 'ids' array)" if fmt == "npz" else "")
            )
        join = IdJoin(np.arange(n), np.arange(n), 0, (), 0, (), 0, ())
    elif (join.n_missing or join.n_duplicate or join.n_unknown) and on_mismatch == "error":
        raise _mismatch_error(path, join, n, n_read)
    n_null = n_failed = 0
    null_ids: tuple[str, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    n_rows_read = n_read
    if unknown is not None and unknown.rows.any():
        assert all_ids is not None
        join, dropped = _without_unknown(join, unknown)
        n_rows_read = n_read - int(unknown.rows.sum())
        was_null = dropped[unknown.null[dropped]]
        was_failed = dropped[unknown.failed[dropped]]
        n_null, n_failed = int(was_null.size), int(was_failed.size)
        null_ids = tuple(str(all_ids[int(i)].as_py()) for i in was_null[:SHOW])
        errors = unknown.errors
        failed = tuple(
            (str(all_ids[int(i)].as_py()), str(errors[int(i)].as_py() if errors else ""))
            for i in was_failed[:SHOW]
        )

    notes: list[str] = []
    out = np.zeros((0, taxonomy.k), dtype=np.float64)
    scored = np.zeros(n, dtype=bool)
    scored[join.dst] = True
    parse_counts: dict[str, int] | None = None
    n_parse_excluded = 0
    graded = True
    n_out = 0
    if kind == "text":
        from toxeval.parsing import parse_outputs

        assert texts is not None
        used = texts.take(pa.array(join.src)).to_pylist()
        batch = parse_outputs(used, taxonomy, mapping=mapping)
        statuses = np.asarray(batch.statuses)
        parse_counts = {s: int(np.count_nonzero(statuses == s)) for s in STATUSES}
        bad = np.flatnonzero(statuses == "unparseable")
        if bad.size and parse_policy == "error":
            first = int(bad[0])
            reason = batch.reasons[first] or "unparseable"
            raise _UnparseableOutputs(
                f"{path}: {bad.size} of {len(used)} outputs are unparseable (first: "
                f"{_row_name(pred_ids, int(join.src[first]))}: {reason}); pass "
                f"parse_policy='zeros' or 'exclude' (--parse-policy zeros|exclude) to score "
                f"them as all-zero or leave them out"
            )
        out = np.zeros((n, taxonomy.k), dtype=np.float64)
        out[join.dst] = batch.scores
        if bad.size and parse_policy == "exclude":
            scored[join.dst[bad]] = False
            n_parse_excluded = int(bad.size)
        if bad.size and parse_policy == "zeros":
            notes.append(
                f"{bad.size} unparseable outputs are scored as all-zero vectors "
                f"(parse_policy='zeros'): each counts as an answer of no category"
            )
        graded = bool(batch.graded)
        n_out = int(np.count_nonzero((batch.scores < 0) | (batch.scores > 1)))
    else:
        assert scores_read is not None
        n_out = _validate_scores(scores_read, pred_ids, taxonomy, path)
        out = _assemble(scores_read, join, n, n_rows_read)
        graded = kind == "scores" and not _all_binary(scores_read)
    if n_out:
        notes.append(
            f"{n_out} scores lie outside [0, 1] (logits?); ranking figures use them as they "
            f"are, thresholded figures compare them with the threshold"
        )
    return Predictions(
        scores=out,
        scored=scored,
        kind=kind,
        source=path,
        format=fmt,
        sha256=sha,
        n_read=n_read,
        on_mismatch=on_mismatch,
        n_missing=join.n_missing,
        n_duplicate=join.n_duplicate,
        n_unknown=join.n_unknown,
        missing_ids=join.missing_ids,
        duplicate_ids=join.duplicate_ids,
        unknown_ids=join.unknown_ids,
        n_out_of_range=n_out,
        parse_policy=parse_policy if kind == "text" else None,
        parse_counts=parse_counts,
        n_parse_excluded=n_parse_excluded,
        graded=graded,
        notes=tuple(notes),
        dataset_sha256=dataset.sha256,
        n_null=n_null,
        null_ids=null_ids,
        n_failed=n_failed,
        failed=failed,
    )


def read_predictions(
    path: str | Path,
    dataset: Dataset,
    *,
    format: Format = "auto",
    on_mismatch: OnMismatch = "error",
    parse_policy: ParsePolicy = "exclude",
    mapping: str | Path | LabelMapping | None = None,
) -> Predictions:
    """Read a prediction dump and align it to ``dataset``'s rows.

    ``format``: ``auto`` (from the extension), ``jsonl``, ``csv``, ``parquet``, ``npy``,
    ``npz``; a JSONL or CSV file may be compressed (``.gz``, ``.bz2``, ``.zst``, ``.lz4``).
    ``on_mismatch``: ``error`` or ``drop`` (see the module docstring).
    ``parse_policy`` (raw text only) decides what happens to unparseable outputs:
    ``exclude`` (the default) leaves them out and counts them, ``zeros`` scores them as
    all-zero vectors (a note in the report says how many), ``error`` raises :class:`PredictionError` (also an
    :class:`~toxeval.parsing.UnparseableOutputError`). ``mapping`` translates other
    schemes' codes (e.g. Llama Guard ``S1``) in label lists and raw text. Raises
    :class:`PredictionError` on any bad input, ``ValueError`` for an unknown ``format``,
    ``on_mismatch`` or ``parse_policy``.
    """
    _check_choice("format", format, FORMATS, "--format")
    _check_choice("on_mismatch", on_mismatch, MISMATCH_POLICIES, "--on-mismatch")
    _check_choice("parse_policy", parse_policy, PARSE_POLICIES, "--parse-policy")
    p = require_file(path, "predictions file", PredictionError, FileNotFoundError)
    fmt = detect_format(p) if format == "auto" else format
    sfx = compression_suffix(p)
    if sfx is not None and fmt not in _TEXT_FORMATS:
        raise PredictionError(
            f"{p}: a {COMPRESSIONS[sfx][1]}-compressed {fmt.upper()} file cannot be read; "
            f"decompress it first (only JSONL and CSV dumps may be compressed: "
            f"{', '.join(COMPRESSIONS)})"
        )
    mp = load_mapping(mapping) if isinstance(mapping, (str, Path)) else mapping
    src = str(p)
    if fmt in ("npy", "npz"):
        sha = file_sha256(p)
        arr, ids = _read_numpy(p, fmt)
        return _from_array(
            arr,
            ids,
            dataset,
            src,
            fmt=fmt,
            sha=sha,
            on_mismatch=on_mismatch,
            parse_policy=parse_policy,
            mapping=mp,
        )
    readers = {"jsonl": _read_jsonl, "csv": _read_csv, "parquet": _read_parquet}
    hashing = BackgroundSha256(p)  # overlaps with parsing; its errors come first
    try:
        table = readers[fmt](p)
    except BaseException:
        hashing.result()
        raise
    sha = hashing.result()
    try:
        return _from_table(table, dataset, src, fmt, sha, on_mismatch, parse_policy, mp)
    except (pa.ArrowException, UnicodeError) as e:
        # a form of malformed input no check above anticipated: still an input error
        # naming the file, never an internal one
        raise PredictionError(f"{src}: cannot read the predictions: {e}") from None


def _from_table(
    table: pa.Table,
    dataset: Dataset,
    src: str,
    fmt: str,
    sha: str | None,
    on_mismatch: OnMismatch,
    parse_policy: ParsePolicy,
    mp: LabelMapping | None,
) -> Predictions:
    if table.num_rows == 0:
        raise PredictionError(f"{src}: empty file (no predictions)")
    if "id" not in table.column_names:
        raise PredictionError(
            f"{src}: no 'id' column to match predictions to the dataset "
            f"(columns: {', '.join(table.column_names)})"
        )
    all_ids = table.column("id").combine_chunks()
    join = join_ids(all_ids, dataset.ids, src, PredictionError)
    unknown = _unknown_rows(table, dataset.taxonomy)
    known = table
    if unknown.rows.any():
        known = table.filter(pa.array(~unknown.rows))
    kind: Kind
    if known.num_rows:
        kind, scores, text_col = _extract(known, dataset.taxonomy, mp, src)
    else:  # every row null or failed: nothing to extract, every row unscored
        kind, scores, text_col = "scores", np.zeros((0, dataset.taxonomy.k)), None
    texts = known.column(text_col).combine_chunks() if text_col else None
    if texts is not None and not pa.types.is_string(texts.type):
        raise PredictionError(f"{src}: column {text_col!r} is {texts.type}, expected text")
    return _finish(
        dataset=dataset,
        kind=kind,
        scores_read=scores,
        texts=texts,
        pred_ids=known.column("id").combine_chunks(),
        all_ids=all_ids,
        unknown=unknown,
        join=join,
        path=src,
        fmt=fmt,
        sha=sha,
        n_read=table.num_rows,
        on_mismatch=on_mismatch,
        parse_policy=parse_policy,
        mapping=mp,
    )


def _from_array(
    arr: np.ndarray,
    ids: np.ndarray | None,
    dataset: Dataset,
    src: str,
    *,
    fmt: str,
    sha: str | None,
    on_mismatch: OnMismatch,
    parse_policy: ParsePolicy,
    mapping: LabelMapping | None,
) -> Predictions:
    taxonomy = dataset.taxonomy
    if arr.dtype.kind not in "biuf":
        raise PredictionError(f"{src}: array dtype {arr.dtype} is not numeric")
    if arr.ndim != 2:
        raise PredictionError(f"{src}: scores must be a 2-D (N, K) array, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise PredictionError(f"{src}: empty file (no predictions)")
    if arr.shape[1] != taxonomy.k:
        raise PredictionError(
            f"{src}: score matrix has {arr.shape[1]} columns, expected K={taxonomy.k} for "
            f"taxonomy {taxonomy.name!r} ({', '.join(taxonomy.ids)})"
        )
    scores = np.asarray(arr, dtype=np.float64)
    join = None
    pred_ids: Any = None
    if ids is not None:
        if ids.ndim != 1 or len(ids) != len(arr):
            raise PredictionError(
                f"{src}: 'ids' has shape {ids.shape}, expected ({len(arr)},) like the scores"
            )
        pred_ids = _id_strings(ids, src)
        join = join_ids(pred_ids, dataset.ids, src, PredictionError)
    kind: Kind = "labels" if arr.dtype.kind == "b" else "scores"
    return _finish(
        dataset=dataset,
        kind=kind,
        scores_read=scores,
        texts=None,
        pred_ids=pred_ids,
        join=join,
        path=src,
        fmt=fmt,
        sha=sha,
        n_read=len(arr),
        on_mismatch=on_mismatch,
        parse_policy=parse_policy,
        mapping=mapping,
    )


def is_frame(obj: object) -> bool:
    """Whether ``obj`` is a table of scores :func:`predictions_from_frame` reads: a
    pyarrow Table, a pandas or polars DataFrame, or any object that exports an Arrow
    stream (``__arrow_c_stream__``) and is not a plain sequence."""
    if isinstance(obj, pa.Table):
        return True
    module = type(obj).__module__.split(".")[0]
    if module in ("pandas", "polars"):
        return type(obj).__name__ == "DataFrame"
    return hasattr(obj, "__arrow_c_stream__") and not isinstance(obj, (list, tuple, str))


def _frame_table(frame: Any, source: str) -> pa.Table:
    """A DataFrame or Arrow table as a pyarrow Table. A pandas index named ``id``
    becomes the id column; any other index that is not the default (0, 1, ..., N-1)
    is rejected when there is no ``id`` column, since row order would then be
    ambiguous."""
    if isinstance(frame, pa.Table):
        return frame
    module = type(frame).__module__.split(".")[0]
    try:
        if module == "pandas":
            index = frame.index
            if index.name == "id" and "id" not in frame.columns:
                frame = frame.reset_index()
            elif "id" not in frame.columns and not _default_index(index):
                raise PredictionError(
                    f"{source}: the DataFrame has a non-default index ({type(index).__name__}) and no "
                    "'id' column: give the ids as an 'id' column (or an index named 'id'), or "
                    "reset_index(drop=True) to score in dataset row order"
                )
            bad = [c for c in frame.columns if not isinstance(c, str)]
            if bad:
                raise PredictionError(
                    f"{source}: column names must be category ids, names or aliases "
                    f"(strings); got {', '.join(map(repr, bad[:SHOW]))}; for scores in "
                    "taxonomy column order pass frame.to_numpy()"
                )
            return pa.Table.from_pandas(frame, preserve_index=False)
        if module == "polars":
            return frame.to_arrow()
        return pa.table(frame)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        raise PredictionError(f"{source}: cannot read the table: {e}") from None


def _default_index(index: Any) -> bool:
    """Whether a pandas index is the default RangeIndex 0, 1, ..., N-1."""
    start, stop, step = (getattr(index, a, None) for a in ("start", "stop", "step"))
    return (
        type(index).__name__ == "RangeIndex"
        and index.name is None
        and start == 0
        and step == 1
        and stop == len(index)
    )


def predictions_from_frame(
    frame: Any,
    dataset: Dataset,
    *,
    source: str = "dataframe",
    on_mismatch: OnMismatch = "error",
) -> Predictions:
    """Predictions from a table of scores: a pandas or polars DataFrame, a pyarrow Table
    (or any object exporting an Arrow stream).

    Every column but ``id`` names a category (its id, name or alias, resolved through
    the dataset's taxonomy as the columns of a prediction file are) and holds numbers;
    every category has exactly one column. With an ``id`` column (or a pandas index named
    ``id``) rows are joined to the dataset by id, as dump files are (``on_mismatch``
    decides about missing, duplicate and unknown ids); without, they are in dataset row
    order and must be as many. A row whose scores are all null (NaN in pandas) is a null
    prediction: unscored and counted. Raises :class:`PredictionError` for an unknown,
    missing or repeated category, a non-numeric column, a pandas index that is not the
    default without an ``id`` column, and a wrong row count."""
    _check_choice("on_mismatch", on_mismatch, MISMATCH_POLICIES, "--on-mismatch")
    table = _frame_table(frame, source)
    taxonomy = dataset.taxonomy
    names = table.column_names
    _check_column_names(table, Path(source))
    unknown = [n for n in names if n != "id" and _resolve_name(n, taxonomy) is None]
    if unknown:
        raise PredictionError(
            f"{source}: columns {', '.join(map(repr, unknown))} are not categories of taxonomy "
            f"{taxonomy.name!r} ({', '.join(taxonomy.ids)}); a table of scores holds one column "
            "per category and optionally 'id'"
        )
    if "id" not in names:
        n = len(dataset.ids)
        if table.num_rows != n:
            raise PredictionError(
                f"{source}: {table.num_rows} rows of scores, but the dataset {dataset.name!r} "
                f"has {n} rows; without an 'id' column rows are matched by row order"
            )
        table = table.append_column("id", dataset_id_array(dataset.ids))
    else:
        ids = table.column("id")
        if pa.types.is_large_string(ids.type) or getattr(pa.types, "is_string_view", bool)(
            ids.type
        ):
            table = table.set_column(names.index("id"), "id", ids.cast(pa.string()))
    return _from_table(table, dataset, source, "dataframe", None, on_mismatch, "zeros", None)


def _id_strings(ids: np.ndarray, src: str) -> pa.Array:
    """An NPZ / in-memory id array as a pyarrow string array: str, UTF-8 bytes or
    integers; anything else (None, floats, mixed objects) is an error, not a guess."""
    kind = ids.dtype.kind
    if kind == "U":
        return pa.array(ids.astype(str), type=pa.string())
    if kind in "iu":
        return pa.array(ids).cast(pa.string())
    if kind == "S":
        out = []
        for i, v in enumerate(ids.tolist()):
            try:
                out.append(v.decode("utf-8"))
            except UnicodeDecodeError:
                raise PredictionError(f"{src}: 'ids'[{i}] {v!r} is not UTF-8 text") from None
        return pa.array(out, type=pa.string())
    if kind == "O":
        vals = ids.tolist()
        for i, v in enumerate(vals):
            if not isinstance(v, (str, int)) or isinstance(v, bool):
                raise PredictionError(
                    f"{src}: 'ids'[{i}] is {v!r} ({type(v).__name__}); ids must be strings "
                    "or integers"
                )
        return pa.array([str(v) for v in vals], type=pa.string())
    raise PredictionError(f"{src}: 'ids' has dtype {ids.dtype}; ids must be strings or integers")


def check_raw_outputs(texts: Sequence[object], what: str) -> None:
    """A TypeError (``what``, then which item is not a ``str`` and how to fix it) unless
    every item of ``texts`` is a raw model output."""
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            hint = (
                " (fill a missing output with '' to mark it unparseable)"
                if t is None
                else " (for scores, pass np.asarray(...) of shape (N, K))"
                if isinstance(t, (int, float, list, tuple, np.ndarray, np.number))
                else ""
            )
            raise TypeError(f"{what}; item {i} is {type(t).__name__}{hint}")


def predictions_from_array(
    scores: np.ndarray,
    dataset: Dataset,
    *,
    source: str = "array",
    ids: Sequence[str] | np.ndarray | None = None,
    on_mismatch: OnMismatch = "error",
) -> Predictions:
    """Predictions from an in-memory (N, K) score matrix (row order, or joined by ``ids``).

    Raises :class:`PredictionError` for a bad matrix or an id mismatch under
    ``on_mismatch="error"``, ``ValueError`` for an unknown ``on_mismatch``."""
    _check_choice("on_mismatch", on_mismatch, MISMATCH_POLICIES, "--on-mismatch")
    arr = np.asarray(scores)
    id_arr = None if ids is None else np.asarray(ids)
    return _from_array(
        arr,
        id_arr,
        dataset,
        source,
        fmt="array",
        sha=None,
        on_mismatch=on_mismatch,
        parse_policy="exclude",
        mapping=None,
    )


def predictions_from_texts(
    texts: Sequence[str],
    dataset: Dataset,
    *,
    source: str = "texts",
    parse_policy: ParsePolicy = "exclude",
    mapping: str | Path | LabelMapping | None = None,
) -> Predictions:
    """Predictions from raw model outputs, one per dataset row, in row order.

    Each output is parsed by :func:`toxeval.parsing.parse_outputs` (with ``mapping``);
    ``parse_policy`` is as for :func:`read_predictions`. Raises ``TypeError`` for an item
    that is not a ``str``, :class:`PredictionError` when the number of outputs is not the
    dataset's or (``parse_policy="error"``) an output is unparseable, ``ValueError`` for
    an unknown ``parse_policy``, ``TaxonomyError`` for an unknown ``mapping``."""
    _check_choice("parse_policy", parse_policy, PARSE_POLICIES, "--parse-policy")
    mp = load_mapping(mapping) if isinstance(mapping, (str, Path)) else mapping
    check_raw_outputs(texts, f"{source}: raw model outputs must be str")
    if len(texts) != len(dataset.ids):
        raise PredictionError(
            f"{source}: {len(texts)} outputs, but the dataset {dataset.name!r} has "
            f"{len(dataset.ids)} rows"
        )
    return _finish(
        dataset=dataset,
        kind="text",
        scores_read=None,
        texts=pa.array(list(texts), type=pa.string()),
        pred_ids=dataset_id_array(dataset.ids),
        join=None,
        path=source,
        fmt="texts",
        sha=None,
        n_read=len(texts),
        on_mismatch="error",
        parse_policy=parse_policy,
        mapping=mp,
    )
