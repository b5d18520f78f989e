"""Predictions held in memory: pandas / polars DataFrames and Arrow tables (scored by column
name, joined by an ``id`` column or matched by row order), numpy arrays and raw model
outputs, checked the same way as files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from toxeval.ids import SHOW, dataset_id_array
from toxeval.input_columns import check_column_names
from toxeval.predictions.align import build_predictions
from toxeval.predictions.load import array_predictions, table_predictions
from toxeval.predictions.schema import (
    MISMATCH_POLICIES,
    PARSE_POLICIES,
    OnMismatch,
    ParsePolicy,
    PredictionError,
    Predictions,
    check_choice,
    resolve_category,
)
from toxeval.taxonomy import LabelMapping, load_mapping

if TYPE_CHECKING:
    from toxeval.datasets import Dataset


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
            dup = frame.columns[frame.columns.duplicated()]
            if len(dup):
                raise PredictionError(
                    f"{source}: column {dup[0]!r} appears more than once; every column name "
                    "must be unique"
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
    check_choice("on_mismatch", on_mismatch, MISMATCH_POLICIES, "--on-mismatch")
    table = _frame_table(frame, source)
    taxonomy = dataset.taxonomy
    names = table.column_names
    check_column_names(table.column_names, source, PredictionError)
    unknown = [n for n in names if n != "id" and resolve_category(n, taxonomy) is None]
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
    return table_predictions(table, dataset, source, "dataframe", None, on_mismatch, "zeros", None)


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
    check_choice("on_mismatch", on_mismatch, MISMATCH_POLICIES, "--on-mismatch")
    arr = np.asarray(scores)
    if isinstance(ids, (list, tuple)):
        # numpy reads [True, 2, 3] as the integers [1, 2, 3]: refuse a bool before that
        for i, v in enumerate(ids):
            if isinstance(v, (bool, np.bool_)):
                raise PredictionError(
                    f"{source}: 'ids'[{i}] is {bool(v)!r} (bool); ids must be strings or integers"
                )
    id_arr = None if ids is None else np.asarray(ids)
    return array_predictions(
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
    check_choice("parse_policy", parse_policy, PARSE_POLICIES, "--parse-policy")
    mp = load_mapping(mapping) if isinstance(mapping, (str, Path)) else mapping
    check_raw_outputs(texts, f"{source}: raw model outputs must be str")
    if len(texts) != len(dataset.ids):
        raise PredictionError(
            f"{source}: {len(texts)} outputs, but the dataset {dataset.name!r} has "
            f"{len(dataset.ids)} rows"
        )
    return build_predictions(
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
