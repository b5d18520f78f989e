"""What one record batch of a Parquet input becomes: ids, the label matrix and mask
(the dataset side, read by :func:`toxeval.datasets.tables.table_labels`, the reader of
in-memory datasets), and scores with the rows that hold no prediction (read by
:mod:`toxeval.predictions.forms` and :mod:`toxeval.predictions.align`, the readers of
in-memory dumps). So a label or score column means here what it means in memory, and
its errors read the same.

:func:`plan_columns` decides once, from the schema, which columns each side reads:
a dataset table (``id`` and its labels), a prediction table (``id``, the scores in one
of the dump forms, ``error``), or one table holding both (labels in a ``labels``
column and scores in per-category columns or a ``scores`` column; or labels in
per-category columns and scores in a ``scores`` column).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toxeval.arrow_numpy import values as arrow_values
from toxeval.datasets import DatasetError
from toxeval.datasets.labels import LabelReader
from toxeval.datasets.schema import RESERVED_FIELDS
from toxeval.datasets.tables import NotColumnar, table_labels
from toxeval.predictions import PredictionError
from toxeval.predictions.align import check_one_form, unknown_rows
from toxeval.predictions.forms import ScoreColumns, extract_scores, validate_scores
from toxeval.predictions.schema import (
    ERROR_COLUMN,
    LABEL_COLUMNS,
    SCORE_COLUMNS,
    TEXT_COLUMNS,
    resolve_category,
)
from toxeval.taxonomy import Taxonomy

__all__ = ["ColumnPlan", "LabelRows", "ScoreRows", "plan_columns", "read_ids", "read_labels"]


@dataclass(frozen=True)
class ColumnPlan:
    """The columns each side reads from a table (empty: the side is not in it)."""

    labels: tuple[str, ...]
    predictions: tuple[str, ...]


@dataclass(frozen=True)
class LabelRows:
    """One batch of dataset rows: labels (int8, unknown cells 0) and the known mask."""

    y: np.ndarray  # (n, K) int8
    mask: np.ndarray  # (n, K) bool


@dataclass(frozen=True)
class ScoreRows:
    """One batch of prediction rows: the scores of the rows that hold a prediction, and
    which rows hold none (null, or a failed request)."""

    scores: np.ndarray  # (n_scored, K) float64, rows with a prediction, in batch order
    null: np.ndarray  # (n,) bool
    failed: np.ndarray  # (n,) bool
    n_out_of_range: int
    binary: bool  # every score 0 or 1


def _category_columns(names: Sequence[str], taxonomy: Taxonomy) -> list[str]:
    return [n for n in names if n != "id" and resolve_category(n, taxonomy) is not None]


def _score_column(schema: pa.Schema) -> str | None:
    for name in SCORE_COLUMNS:
        if name in schema.names:
            return name
    return None


def plan_columns(
    schema: pa.Schema, taxonomy: Taxonomy, source: str, *, labels: bool, predictions: bool
) -> ColumnPlan:
    """Which columns hold the labels and which the predictions; a :class:`DatasetError`
    or :class:`PredictionError` naming ``source`` when the table cannot give what is
    asked (``labels`` / ``predictions``)."""
    names = schema.names
    if "id" not in names:
        err = DatasetError if labels else PredictionError
        raise err(
            f"{source}: no 'id' column (columns: {', '.join(names)}); out-of-core scoring "
            "matches rows by id"
        )
    cats = _category_columns(names, taxonomy)
    score_col = _score_column(schema)
    label_cols: tuple[str, ...] = ()
    pred_cols: tuple[str, ...] = ()
    if labels:
        if "labels" in names:
            label_cols = ("labels",)
        elif predictions and score_col is None:
            raise DatasetError(
                f"{source}: one table holding labels and scores needs the labels in a "
                "'labels' column and the scores in per-category columns or a 'scores' "
                "column, or the labels in per-category columns and the scores in a "
                f"'scores' column (columns: {', '.join(names)})"
            )
        elif cats:
            label_cols = tuple(cats)
        elif "annotations" in names:
            raise DatasetError(
                f"{source}: labels only as per-annotator 'annotations': out-of-core scoring "
                "reads the labels themselves (a 'labels' column, or one column per category); "
                "apply the annotator rule first, or score the file in memory"
            )
        else:
            raise DatasetError(
                f"{source}: no labels: no 'labels' column and no column named after a "
                f"category of {taxonomy.name!r} (columns: {', '.join(names)})"
            )
    if predictions:
        if score_col is not None:
            pred_cols = (score_col,)
        elif cats and label_cols != tuple(cats):
            pred_cols = tuple(cats)
        elif not labels and any(n in names for n in LABEL_COLUMNS):
            pred_cols = (next(n for n in LABEL_COLUMNS if n in names),)
        elif any(n in names for n in TEXT_COLUMNS):
            raise PredictionError(
                f"{source}: predictions as raw text are parsed in memory, not out of core; "
                "score the file without --memory-limit, or write scores or label lists"
            )
        else:
            raise PredictionError(
                f"{source}: no predictions found; expected a 'scores' column, one column per "
                f"category id ({', '.join(taxonomy.ids)}) or a 'labels' list (columns: "
                f"{', '.join(names)})"
            )
        if ERROR_COLUMN in names:
            pred_cols = (*pred_cols, ERROR_COLUMN)
    return ColumnPlan(labels=label_cols, predictions=pred_cols)


def read_ids(batch: pa.RecordBatch, source: str, error: type[ValueError]) -> pa.Array:
    """The batch's ``id`` column as strings (integers as their text, like the in-memory
    readers); a null or a type other than text or integers is ``error``."""
    col = batch.column(batch.schema.get_field_index("id"))
    if col.null_count:
        raise error(f"{source}: a row has no id (null 'id')")
    t = col.type
    if pa.types.is_dictionary(t):
        col = col.cast(t.value_type)
        t = col.type
    if pa.types.is_string(t):
        return col
    if pa.types.is_large_string(t) or pa.types.is_integer(t):
        return pc.cast(col, pa.string())
    raise error(f"{source}: ids are {t}, expected strings or integers")


def read_labels(batch: pa.Table, reader: LabelReader, source: str) -> LabelRows:
    """The labels of a batch holding only label columns (:func:`plan_columns`)."""
    try:
        y, mask = table_labels(batch, reader)
    except NotColumnar:
        raise DatasetError(
            f"{source}: labels in a form out-of-core scoring does not read (values other "
            "than 1/0/-1/null, a label list with nulls, or two columns naming one "
            "category); write a 'labels' list or per-category 1/0/null columns"
        ) from None
    except DatasetError as e:
        raise DatasetError(f"{source}: {e}") from None
    return LabelRows(y=y, mask=mask)


def read_scores(
    batch: pa.Table, ids: pa.Array, taxonomy: Taxonomy, source: str
) -> tuple[str, ScoreRows]:
    """The predictions of a batch holding ``id`` and prediction columns: their kind
    (``scores`` or ``labels``) and :class:`ScoreRows`."""
    fast = _float_columns(batch, taxonomy)
    if fast is not None:
        n_out = validate_scores(fast, ids, taxonomy, source)
        none = np.zeros(batch.num_rows, dtype=bool)
        return "scores", ScoreRows(fast, none, none, n_out, _all_binary(fast))
    unknown = unknown_rows(batch, taxonomy)
    check_one_form(batch, taxonomy, unknown, source)
    known = batch
    rows = unknown.rows
    if rows.any():
        known = batch.filter(pa.array(~rows))
    k = taxonomy.k
    if known.num_rows == 0:
        empty = np.zeros((0, k))
        return "scores", ScoreRows(empty, unknown.null, unknown.failed, 0, True)
    kind, scores, _ = extract_scores(known, taxonomy, None, source)
    if kind == "text" or scores is None:
        raise PredictionError(f"{source}: predictions as raw text are not scored out of core")
    known_ids = ids.filter(pa.array(~rows)) if rows.any() else ids
    n_out = validate_scores(scores, known_ids, taxonomy, source)
    matrix = _matrix(scores, k)
    return kind, ScoreRows(matrix, unknown.null, unknown.failed, n_out, _all_binary(matrix))


def _float_columns(batch: pa.Table, taxonomy: Taxonomy) -> np.ndarray | None:
    """The common form read directly: one float column per category id, no nulls, no
    ``error`` column; each column converted once into a Fortran-order float64 matrix
    (what :func:`extract_scores` gives for it, without its intermediate copies). None
    for any other form."""
    names = [n for n in batch.column_names if n != "id"]
    if sorted(names) != sorted(taxonomy.ids):
        return None
    cols = [batch.column(c) for c in taxonomy.ids]
    if any(c.null_count or not pa.types.is_floating(c.type) for c in cols):
        return None
    if any(pa.types.is_float16(c.type) for c in cols):
        return None
    out_t = np.empty((len(cols), batch.num_rows), dtype=np.float64)
    for j, col in enumerate(cols):
        at = 0
        for chunk in col.chunks:
            values = arrow_values(chunk)  # the buffer itself: no pandas, no copy
            out_t[j, at : at + len(values)] = values
            at += len(values)
    return np.asarray(out_t.T)


def _all_binary(matrix: np.ndarray) -> bool:
    """Whether every score is 0 or 1, column by column (stops at the first that is not)."""
    for j in range(matrix.shape[1]):
        col = matrix[:, j]
        if not bool(((col == 0.0) | (col == 1.0)).all()):
            return False
    return True


def _matrix(scores: np.ndarray | ScoreColumns, k: int) -> np.ndarray:
    """(n, K) float64 scores in Fortran order (each label's column contiguous, as the
    range files take them; the metric states read either order)."""
    if isinstance(scores, np.ndarray):
        return np.asfortranarray(scores, dtype=np.float64)
    n = scores.n_rows
    out_t = np.empty((k, n), dtype=np.float64)
    for c in range(k):
        at = 0
        for chunk in scores[c]:
            out_t[c, at : at + len(chunk)] = chunk
            at += len(chunk)
    return np.asarray(out_t.T)


def dataset_metadata_columns(names: Sequence[str], plan: ColumnPlan) -> list[str]:
    """Columns of a dataset table that give no labels and are not schema fields (the
    notes list them, as for an in-memory dataset)."""
    used = set(plan.labels) | set(plan.predictions) | {"id"}
    return [n for n in names if n not in used and n not in RESERVED_FIELDS]
