"""The forms a table's predictions take, turned into scores: per-category scores (an object
``{"hate": 0.9, ...}``, a map, one column per category id, or a K-vector), a set of labels
(``labels: ["hate"]``, scored 1/0), or the model's raw text (``output`` / ``text``,
parsed later by :func:`toxeval.parsing.parse_outputs`). Score columns stay as numpy
chunks (:class:`ScoreColumns`) until they are copied once into dataset row order.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toxeval.arrow_numpy import values as arrow_values
from toxeval.predictions.schema import (
    ERROR_COLUMN,
    ID_COLUMNS,
    IGNORED_COLUMNS,
    LABEL_COLUMNS,
    SCORE_COLUMNS,
    TEXT_COLUMNS,
    Kind,
    PredictionError,
    resolve_category,
)
from toxeval.taxonomy import LabelMapping, Taxonomy

if TYPE_CHECKING:
    pass


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
        raise PredictionError(f"{path}: row {row_name(ids, 0)}: no score for {name!r}")
    if not _is_number_type(typ):
        raise PredictionError(f"{path}: score column {name!r} is {typ}, not numeric")
    if col.null_count:
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        row = int(np.flatnonzero(arrow_values(arr.is_null()))[0])
        raise PredictionError(f"{path}: row {row_name(ids, row)}: no score for {name!r}")
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    out = []
    for chunk in chunks:
        if len(chunk) == 0:
            continue
        if not pa.types.is_float64(chunk.type):
            chunk = _as_float64(chunk, f"the scores of column {name!r}", path)
        out.append(arrow_values(chunk))
    return out


class ScoreColumns(list):  # type: ignore[type-arg]
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


Scores = np.ndarray | ScoreColumns


def row_name(ids: pa.Array | np.ndarray | None, row: int) -> str:
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
        cat = resolve_category(name, taxonomy)
        if cat is None:
            unknown.append(name)
        elif cat in by_cat:
            raise PredictionError(
                f"{path}: {what} {by_cat[cat]!r} and {name!r} both name category {cat!r} "
                "(on one row, or on different rows of the file); name each category one way"
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
    # Kept as K columns (zero-copy views where pyarrow allows): build_predictions interleaves them
    # straight into the dataset-ordered matrix, with no (M, K) copy in file order.
    return ScoreColumns(
        [_column_values(columns[by_cat[c]], by_cat[c], ids, path) for c in taxonomy.ids]
    )


def _struct_scores(col: Any, taxonomy: Taxonomy, ids: pa.Array | None, path: str) -> Scores:
    if col.null_count:
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        row = int(np.flatnonzero(arrow_values(arr.is_null()))[0])
        raise PredictionError(f"{path}: row {row_name(ids, row)}: scores are missing (null)")
    typ = col.type
    # one (chunked) array per field, without concatenating the struct's chunks first
    children = col.flatten()
    fields = {typ.field(i).name: children[i] for i in range(typ.num_fields)}
    return _named_scores(fields, taxonomy, ids, path, "score key")


def _vector_scores(col: Any, taxonomy: Taxonomy, ids: pa.Array | None, path: str) -> np.ndarray:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if arr.null_count:
        row = int(np.flatnonzero(arrow_values(arr.is_null()))[0])
        raise PredictionError(f"{path}: row {row_name(ids, row)}: scores are missing (null)")
    k = taxonomy.k
    if pa.types.is_fixed_size_list(arr.type):
        lengths = np.full(len(arr), arr.type.list_size)
    else:
        lengths = arrow_values(pc.list_value_length(arr))
    bad = np.flatnonzero(lengths != k)
    if bad.size:
        row = int(bad[0])
        raise PredictionError(
            f"{path}: row {row_name(ids, row)}: score vector has length {int(lengths[row])}, "
            f"expected K={k} for taxonomy {taxonomy.name!r} ({', '.join(taxonomy.ids)})"
        )
    values = arr.flatten()
    if not _is_number_type(values.type):
        raise PredictionError(
            f"{path}: score vectors hold {values.type} values, expected numbers (a list of K "
            f"scores per row, type {arr.type} given)"
        )
    if values.null_count:
        pos = int(np.flatnonzero(arrow_values(values.is_null()))[0])
        raise PredictionError(
            f"{path}: row {row_name(ids, pos // k)}: null score for {taxonomy.ids[pos % k]!r}"
        )
    values = _as_float64(values, "the values of the score vectors", path)
    flat = np.asarray(arrow_values(values), dtype=np.float64)
    return flat.reshape(len(arr), k)


def _map_scores(col: Any, taxonomy: Taxonomy, ids: pa.Array | None, path: str) -> np.ndarray:
    """A map<string, number> column (Parquet) as (M, K) scores."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    m = len(arr)
    if arr.offset:
        arr = pa.concat_arrays([arr])  # unsliced, so offsets index keys/items directly
    lengths = np.diff(arrow_values(arr.offsets))
    rows = np.repeat(np.arange(m), lengths)
    cols, source = _label_columns(arr.keys, taxonomy, None, path, "score key")
    items = _as_float64(arr.items, "score map values", path)
    if items.null_count:
        pos = int(np.flatnonzero(arrow_values(items.is_null()))[0])
        raise PredictionError(f"{path}: row {row_name(ids, int(rows[pos]))}: a score is null")
    out = np.zeros((m, taxonomy.k), dtype=np.float64)
    counts = np.zeros((m, taxonomy.k), dtype=np.int64)
    out[rows[source], cols] = arrow_values(items)[source]
    np.add.at(counts, (rows[source], cols), 1)
    holes = np.argwhere(counts != 1)
    if holes.size:
        r, c = (int(v) for v in holes[0])
        what = "no score" if counts[r, c] == 0 else "more than one score"
        raise PredictionError(f"{path}: row {row_name(ids, r)}: {what} for {taxonomy.ids[c]!r}")
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
        cat = resolve_category(name, taxonomy)
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
    codes = arrow_values(pc.index_in(values, value_set=uniq))
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
    lengths = arrow_values(pc.list_value_length(arr).fill_null(0))
    flat = arr.flatten()
    rows = np.repeat(np.arange(m), lengths)
    if is_text:
        keep = pc.not_equal(flat, "")
        flat = flat.filter(keep)
        rows = rows[arrow_values(keep)]
    out = np.zeros((m, taxonomy.k), dtype=np.float64)
    if len(flat):
        cols, source = _label_columns(flat, taxonomy, mapping, path, "label")
        out[rows[source], cols] = 1.0
    return out


def text_column(table: pa.Table) -> str | None:
    for name in TEXT_COLUMNS:
        if name in table.column_names:
            return name
    return None


def extract_scores(
    table: pa.Table, taxonomy: Taxonomy, mapping: LabelMapping | None, path: str
) -> tuple[Kind, Scores | None, str | None]:
    """The form of a table's predictions: (kind, scores or None, text column or None)."""
    ids = table.column("id").combine_chunks() if "id" in table.column_names else None
    for name in SCORE_COLUMNS:
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
        if resolve_category(n, taxonomy) is not None and n not in ID_COLUMNS
    }
    if named:
        extra = [
            n
            for n in table.column_names
            if n not in named
            and n not in ID_COLUMNS + LABEL_COLUMNS + TEXT_COLUMNS
            and n != ERROR_COLUMN
            and not IGNORED_COLUMNS.match(n)
            and (
                pa.types.is_floating(table.schema.field(n).type)
                or pa.types.is_integer(table.schema.field(n).type)
            )
        ]
        cols = {**named, **{n: table.column(n) for n in extra}}
        return "scores", _named_scores(cols, taxonomy, ids, path, "score column"), None
    for name in LABEL_COLUMNS:
        if name in table.column_names:
            return "labels", _label_scores(table.column(name), taxonomy, mapping, path), None
    text = text_column(table)
    if text is not None:
        return "text", None, text
    raise PredictionError(
        f"{path}: no predictions found; expected a 'scores' object or vector, one column per "
        f"category id ({', '.join(taxonomy.ids)}), a 'labels' list, or an 'output'/'text' "
        f"column (columns present: {', '.join(table.column_names) or 'none'})"
    )


def all_binary(scores: Scores) -> bool:
    """True when every score is exactly 0 or 1 (checked in blocks, stops early)."""
    for arr in scores.chunks() if isinstance(scores, ScoreColumns) else [scores]:
        flat = arr.reshape(-1, order="A")  # a view in either memory order
        for start in range(0, flat.size, 1 << 20):
            block = flat[start : start + (1 << 20)]
            if not ((block == 0.0) | (block == 1.0)).all():
                return False
    return True


def validate_scores(scores: Scores, ids: Any, taxonomy: Taxonomy, path: str) -> int:
    """Raise on NaN / inf (naming the row and category); return the count outside [0, 1]."""
    parts = scores.chunks() if isinstance(scores, ScoreColumns) else [scores]
    if all(c.size == 0 for c in parts):
        return 0
    # min and max see every NaN and inf (NaN propagates): two passes, no temporaries
    bounds = [(float(c.min()), float(c.max())) for c in parts if c.size]
    if all(math.isfinite(lo) and math.isfinite(hi) for lo, hi in bounds):
        if all(lo >= 0.0 and hi <= 1.0 for lo, hi in bounds):
            return 0
        return sum(int(np.count_nonzero((c < 0.0) | (c > 1.0))) for c in parts)
    if isinstance(scores, ScoreColumns):
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
        f"{path}: row {row_name(ids, r)}: score for {taxonomy.ids[c]!r} is {what}; "
        f"scores must be finite"
    )
