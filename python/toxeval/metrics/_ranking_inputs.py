"""Input handling shared by the per-row ranking metrics (ranking loss, LRAP, coverage,
one-error, DCG, NDCG), with scikit-learn's rules, order and messages: its
``check_array``, relevance of dense and CSR ``y_true``, score dtypes for the native
core, per-row means, and the fast path that checks and computes in one native pass.

Masks: unknown entries are never read (they may hold placeholders such as ``-1`` or
NaN); a row with no known label is left out of the mean (``known_rows``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics._target import is_integral_float, type_of_target
from toxeval.metrics._validation import (
    NO_KNOWN_ROW,
    OBJECT_NAN,
    TEXT_NOT_NUMERIC,
    WEIGHTS_SUM_TO_ZERO,
    assert_all_finite,
    average_weights,
    check_array_like,
    check_at_most_2d,
    check_consistent_length,
    check_mask,
    check_min_size,
    check_not_0d_or_1d,
    complex_error,
    is_array_like,
    issparse,
    known_row_weights,
    num_samples,
    to_array,
    uint64_as_int64,
)

__all__ = [
    "BOOL_NEGATIVE",
    "INDICATOR_REJECT",
    "SCORE_NONFINITE",
    "TRUE_NEGATIVE",
    "TRUE_NONFINITE",
    "check_ranking_array",
    "check_ranking_arrays",
    "check_same_shape",
    "fast_sum",
    "known_rows",
    "known_values",
    "label_ranking_inputs",
    "mask_if_fits",
    "ranking_scores",
    "relevance",
    "weighted_mean",
]


# What scikit-learn raises where it ranks -y_score (LRAP, tie-averaged DCG) and the
# scores are bool: NumPy refuses the negative of a bool array.
BOOL_NEGATIVE = (
    "The numpy boolean negative, the `-` operator, is not supported, use the `~` "
    "operator or the logical_not function instead."
)


def check_ranking_arrays(
    func: str, y_true: Any, y_score: Any, sample_weight: Any, *, sparse_ok: bool
) -> None:
    """``validate_params`` for the array arguments (``y_true`` may be sparse where
    scikit-learn accepts it: ``sparse_ok``)."""
    check_array_like("y_true", func, y_true, sparse_ok=sparse_ok)
    check_array_like("y_score", func, y_score)
    check_array_like("sample_weight", func, sample_weight, optional=True)


def mask_if_fits(mask: Any, shape: tuple[int, ...]) -> NDArray[np.bool_] | None:
    """The mask, if it is usable for this shape (full validation happens later)."""
    if mask is None:
        return None
    try:
        return check_mask(mask, shape)
    except ValueError:
        return None


def _check_finite(x: NDArray[Any], mask: NDArray[np.bool_] | None) -> None:
    if mask is None or x.dtype.kind not in "fc":
        assert_all_finite(x)
        return
    try:
        assert_all_finite(x)
    except ValueError:
        assert_all_finite(x[mask])


def check_ranking_array(
    x: Any,
    *,
    ensure_2d: bool,
    mask: Any = None,
    accept_sparse: bool = False,
    labels: bool = False,
) -> Any:
    """scikit-learn's ``check_array(x, ensure_2d=..., dtype="numeric")``, in its order.

    With a usable ``mask``, the finiteness check only looks at known entries.
    ``labels`` (y_true): an object array made from a list (no ``dtype`` of its own,
    e.g. ``[[None, 1], [1, 0]]``) stays object, as ``check_array`` leaves it, so
    that ``type_of_target`` fails on it as in scikit-learn; scores are always
    converted to float64 (toxeval ranks numbers only).
    """
    if accept_sparse and issparse(x):
        x = x.tocsr()
        if x.ndim == 2 and x.shape[0] > 0 and x.shape[1] > 0:
            assert_all_finite(np.asarray(x.data))
        check_min_size(x.shape)
        return x
    arr = to_array(x)
    if arr.dtype.kind == "c":
        raise complex_error(arr)
    if arr.dtype == object and not (labels and not hasattr(x, "dtype")):
        arr = arr.astype(np.float64)  # NumPy's own error for what it cannot convert
    if ensure_2d:
        check_not_0d_or_1d(arr)
    if arr.dtype.kind in "USV":
        raise ValueError(TEXT_NOT_NUMERIC)
    check_at_most_2d(arr)
    if arr.dtype == object:
        if bool(np.any(arr != arr)):  # check_array's NaN check of object arrays
            raise ValueError(OBJECT_NAN)
    else:
        _check_finite(arr, mask_if_fits(mask, arr.shape))
    if arr.ndim == 0:
        num_samples(arr)  # check_array counts samples: TypeError for a 0-d array
    check_min_size(arr.shape)
    return arr


def known_values(y: NDArray[Any], mask: NDArray[np.bool_] | None) -> NDArray[Any]:
    """``y`` with unknown entries replaced by 0 (for type checks and relevance)."""
    if mask is None or y.shape != mask.shape:
        return y
    return np.where(mask, y, np.zeros((), dtype=y.dtype))


def _sparse_type(y: Any) -> str:
    """``type_of_target`` for a CSR matrix."""
    if y.shape[1] > 1:
        data = np.asarray(y.data)
        labels = np.unique(data)
        integral = data.dtype.kind in "biu" or bool(np.all(labels.astype(np.int64) == labels))
        if data.size == 0 or (
            (labels.size == 1 or (labels.size == 2 and 0 in labels)) and integral
        ):
            return "multilabel-indicator"
    return str(type_of_target(y.toarray(), input_name="y_true"))


def relevance(y_true: Any, mask: NDArray[np.bool_] | None) -> NDArray[np.bool_]:
    """Relevant = non-zero (for CSR input: stored entries, as scikit-learn's indices)."""
    if issparse(y_true):
        rel = np.zeros(y_true.shape, dtype=np.bool_)
        counts = np.diff(y_true.indptr)
        rows = np.repeat(np.arange(y_true.shape[0]), counts)
        rel[rows, y_true.indices] = True
        return rel
    y = known_values(y_true, mask)
    if y.dtype == np.bool_:
        return y
    nonzero: NDArray[np.bool_] = y != 0
    return nonzero


def ranking_scores(y_score: NDArray[Any]) -> NDArray[Any]:
    """Scores for ``_core`` without changing any order or tie: float64/float32 as they
    are, smaller floats and bools widened, integers as float64 when that is exact
    (|x| < 2**53) and as int64 otherwise."""
    kind = y_score.dtype.kind
    if y_score.dtype in (np.float64, np.float32):
        return y_score
    if kind == "f" and y_score.dtype.itemsize < 4:
        return y_score.astype(np.float32)
    if kind in "iu" and y_score.size and int(np.abs(y_score).max()) >= 2**53:
        flipped = uint64_as_int64(y_score)
        return y_score.astype(np.int64) if flipped is None else flipped
    return y_score.astype(np.float64)


def known_rows(
    m: NDArray[np.bool_] | None, w: NDArray[np.float64] | None, n_rows: int
) -> NDArray[np.float64] | None:
    """The row weights with rows that have no known label left out (weight 0); raises
    ``ValueError`` when that leaves no row."""
    kept, n_without = known_row_weights(m, w, n_rows)
    if n_rows and n_without == n_rows:
        raise ValueError(NO_KNOWN_ROW)
    return kept


def weighted_mean(total: float, n_rows: int, w: NDArray[np.float64] | None) -> float:
    """``np.average(per_row, weights=w)`` from the weighted row sum."""
    if w is None:
        return float(total / n_rows)
    scale = float(w.sum())
    if scale == 0.0:
        raise ZeroDivisionError(WEIGHTS_SUM_TO_ZERO)
    return float(total / scale)


def check_same_shape(y_true: Any, y_score: NDArray[Any]) -> None:
    if y_true.shape != y_score.shape:
        raise ValueError("y_true and y_score have different shape")


# --------------------------------------------------------------------------------------
# fast path: one native pass that checks and computes


_FAST_TRUE_DTYPES = frozenset(
    np.dtype(t) for t in (np.bool_, np.int64, np.int32, np.int8, np.uint8, np.float64, np.float32)
)


_FAST_SCORE_DTYPES = frozenset(np.dtype(t) for t in (np.float64, np.float32))


# Bits of the flags returned by ``_core.ranking_sum_checked``.
SCORE_NONFINITE = 1


TRUE_NONFINITE = 2


TRUE_NEGATIVE = 4


_MORE_THAN_TWO_LABELS = 8


def fast_sum(
    metric: str,
    y_true: Any,
    y_score: Any,
    sample_weight: Any,
    mask: Any,
    n_jobs: int | None,
    *,
    reject: int,
    need_indicator: bool,
    discount: NDArray[np.float64] | None = None,
    cumsum: NDArray[np.float64] | None = None,
    ignore_ties: bool = False,
    normalize: bool = False,
) -> tuple[float, NDArray[np.float64] | None] | None:
    """The weighted row sum and the weights, when the input is valid and in the common
    form (dense 2-D ndarrays of the same shape with at least 2 columns, native dtypes);
    ``None`` otherwise, and the caller takes the general path, which raises
    scikit-learn's error in scikit-learn's order.

    ``_core.ranking_sum_checked`` reads ``y_true`` and ``y_score`` once, doing in the
    same pass what ``check_array`` (finiteness), ``type_of_target`` (at most two
    distinct integral values: "multilabel-indicator") and the relevance conversion
    would do, all over the known entries only. ``reject`` are the flags that make the
    input invalid for this metric; with ``need_indicator`` ``y_true`` must be a
    multilabel indicator.
    """
    if type(y_true) is not np.ndarray or type(y_score) is not np.ndarray:
        return None
    shape = y_true.shape
    if (
        y_true.ndim != 2
        or y_score.shape != shape
        or shape[0] < 1
        or shape[1] < 2
        or y_true.dtype not in _FAST_TRUE_DTYPES
        or y_score.dtype not in _FAST_SCORE_DTYPES
    ):
        return None
    w = None
    if sample_weight is not None:
        if not is_array_like(sample_weight):
            return None
        try:
            w = average_weights(sample_weight)
        except (TypeError, ValueError):
            return None  # the general path raises, in scikit-learn's order
        if w is None or w.shape[0] != shape[0]:
            return None
    m = None
    if mask is not None:
        m = mask_if_fits(mask, shape)
        if m is None:
            return None
        w = known_rows(m, w, shape[0])
    try:
        out = _core.ranking_sum_checked(
            metric, y_true, y_score, m, w, n_jobs, discount, cumsum, ignore_ties, normalize
        )
    except ValueError:
        return None  # e.g. n_jobs=0: raised by the general path after its checks
    if out is None:
        return None
    total, flags, labels = out
    if flags & reject:
        return None
    if (
        need_indicator
        and y_true.dtype.kind == "f"
        and not is_integral_float(np.asarray(labels, dtype=y_true.dtype))
    ):
        return None
    return total, w


INDICATOR_REJECT = SCORE_NONFINITE | TRUE_NONFINITE | _MORE_THAN_TWO_LABELS


# --------------------------------------------------------------------------------------
# binary relevance: ranking loss, LRAP, one-error


def label_ranking_inputs(
    func: str,
    y_true: Any,
    y_score: Any,
    sample_weight: Any,
    mask: Any,
    *,
    lrap: bool = False,
) -> tuple[NDArray[np.bool_], NDArray[Any], NDArray[np.bool_] | None, NDArray[np.float64] | None]:
    """Validation shared by ranking loss, LRAP and one-error (sklearn's order)."""
    check_ranking_arrays(func, y_true, y_score, sample_weight, sparse_ok=True)
    if lrap:
        check_consistent_length(y_true, y_score, sample_weight)
    y_true = check_ranking_array(
        y_true, ensure_2d=False, mask=mask, accept_sparse=True, labels=True
    )
    y_score = check_ranking_array(y_score, ensure_2d=False, mask=mask)
    if lrap:
        check_same_shape(y_true, y_score)
    else:
        check_consistent_length(y_true, y_score, sample_weight)
    pre_mask = None if issparse(y_true) else mask_if_fits(mask, y_true.shape)
    if issparse(y_true):
        y_type = _sparse_type(y_true)
    else:
        y_type = type_of_target(known_values(y_true, pre_mask), input_name="y_true")
    if lrap:
        if y_type != "multilabel-indicator" and not (y_type == "binary" and y_true.ndim == 2):
            raise ValueError(f"{y_type} format is not supported")
    else:
        if y_type != "multilabel-indicator":
            raise ValueError(f"{y_type} format is not supported")
        check_same_shape(y_true, y_score)
    m = check_mask(mask, y_true.shape)
    if lrap and y_score.dtype == np.bool_:
        raise TypeError(BOOL_NEGATIVE)
    w = known_rows(m, average_weights(sample_weight), y_true.shape[0])
    return relevance(y_true, m), ranking_scores(y_score), m, w
