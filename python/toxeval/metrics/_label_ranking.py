"""Per-row label-ranking metrics: drop-ins for scikit-learn 1.9.1, plus ``one_error``.

``label_ranking_loss``, ``label_ranking_average_precision_score``, ``coverage_error``,
``dcg_score`` and ``ndcg_score`` take the arguments of their ``sklearn.metrics``
namesakes, validate in the same order with the same errors, and return the same
Python ``float``. scikit-learn loops over rows in Python; here every row is scored in
native code (``toxeval._core``), in parallel over fixed blocks of rows, so the result
does not depend on ``n_jobs``.

Masked definition (``mask=``, ``True`` = label known): each row is reduced to its known
labels and scikit-learn's per-row quantity is computed on that shorter row; the rows
are then averaged exactly as without a mask (every row counts, with its sample
weight). Unknown entries of ``y_true`` and ``y_score`` are never read, so they may hold
placeholders such as ``-1`` or NaN. A row with **no known label** is unknown, not
perfect and not wrong: it is left out of the mean (exactly as if the row were not
passed; with ``sample_weight`` it leaves the weighted mean), and if no row has a known
label the call raises ``ValueError`` (the mean of nothing is undefined). A row with one
known label follows the unmasked degenerate rules: ranking loss 0, LRAP 1, coverage =
number of known relevant labels (0 or 1), DCG = its gain times the first discount,
NDCG 1 if that gain is positive else 0, and one-error 1 unless that label is relevant.
``mask=None`` and an all-True mask give identical results.

``n_jobs``: threads, ``None`` = all cores (scikit-learn/joblib read ``None`` as one
job); a value that is not an int raises ``InvalidParameterError``.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from toxeval import _core
from toxeval.metrics._validation import (
    NO_KNOWN_ROW,
    _is_integral_float,
    _num_samples,
    assert_all_finite,
    check_consistent_length,
    check_n_jobs,
    invalid_parameter,
    known_row_weights,
    mask_array,
    to_array,
    type_of_target,
    uint64_as_int64,
)

__all__ = [
    "coverage_error",
    "dcg_score",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "ndcg_score",
    "one_error",
]

# What scikit-learn raises where it ranks -y_score (LRAP, tie-averaged DCG) and the
# scores are bool: NumPy refuses the negative of a bool array.
_BOOL_NEGATIVE = (
    "The numpy boolean negative, the `-` operator, is not supported, use the `~` "
    "operator or the logical_not function instead."
)
_DCG_FORMATS = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")


# --------------------------------------------------------------------------------------
# validation helpers (scikit-learn's messages)


def _issparse(x: Any) -> bool:
    return hasattr(x, "tocsr") and hasattr(x, "nnz")


def _is_arraylike(x: Any) -> bool:
    if _issparse(x):
        return False
    return (
        hasattr(x, "__len__") or hasattr(x, "shape") or hasattr(x, "__array__")
    ) and not np.isscalar(x)


def _check_params(
    func: str, y_true: Any, y_score: Any, sample_weight: Any, *, sparse_ok: bool
) -> None:
    """``validate_params`` for the array arguments."""
    if not (_is_arraylike(y_true) or (sparse_ok and _issparse(y_true))):
        kinds = "an array-like or a sparse array or matrix" if sparse_ok else "an array-like"
        raise invalid_parameter(
            f"The 'y_true' parameter of {func} must be {kinds}. Got {y_true!r} instead."
        )
    if not _is_arraylike(y_score):
        raise invalid_parameter(
            f"The 'y_score' parameter of {func} must be an array-like. Got {y_score!r} instead."
        )
    if sample_weight is not None and not _is_arraylike(sample_weight):
        raise invalid_parameter(
            f"The 'sample_weight' parameter of {func} must be an array-like or None. "
            f"Got {sample_weight!r} instead."
        )


def _as_mask(mask: Any, shape: tuple[int, ...]) -> NDArray[np.bool_] | None:
    """Validate ``mask``: bool (or 0/1 integer) array of the shape of ``y_true``."""
    if mask is None:
        return None
    m = mask_array(mask)
    if m.shape != shape:
        raise ValueError(f"mask has shape {m.shape}, expected {shape} (the shape of y_true)")
    if m.dtype == np.bool_:
        return m
    if m.dtype.kind in "iu" and bool(np.all((m == 0) | (m == 1))):
        return m.astype(np.bool_)
    raise ValueError(
        f"mask must be a boolean array (or integers 0/1) marking known labels; got dtype {m.dtype}"
    )


def _mask_if_fits(mask: Any, shape: tuple[int, ...]) -> NDArray[np.bool_] | None:
    """The mask, if it is usable for this shape (full validation happens later)."""
    if mask is None:
        return None
    try:
        return _as_mask(mask, shape)
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


def _check_array(
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
    if accept_sparse and _issparse(x):
        x = x.tocsr()
        if x.ndim == 2 and x.shape[0] > 0 and x.shape[1] > 0:
            assert_all_finite(np.asarray(x.data))
        _check_min_size(x.shape)
        return x
    arr = to_array(x)
    if arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported\n{arr}\n")
    if arr.dtype == object and not (labels and not hasattr(x, "dtype")):
        arr = arr.astype(np.float64)  # NumPy's own error for what it cannot convert
    reshape = (
        "Reshape your data either using array.reshape(-1, 1) if your data has a single "
        "feature or array.reshape(1, -1) if it contains a single sample."
    )
    if ensure_2d and arr.ndim == 0:
        raise ValueError(f"Expected 2D array, got scalar array instead:\narray={arr}.\n{reshape}")
    if ensure_2d and arr.ndim == 1:
        raise ValueError(f"Expected 2D array, got 1D array instead:\narray={arr}.\n{reshape}")
    if arr.dtype.kind in "USV":
        raise ValueError(
            "dtype='numeric' is not compatible with arrays of bytes/strings."
            "Convert your data to numeric values explicitly instead."
        )
    if arr.ndim >= 3:
        raise ValueError(f"Found array with dim {arr.ndim}, while dim <= 2 is required.")
    if arr.dtype == object:
        if bool(np.any(arr != arr)):  # check_array's NaN check of object arrays
            raise ValueError("Input contains NaN")
    else:
        _check_finite(arr, _mask_if_fits(mask, arr.shape))
    if arr.ndim == 0:
        _num_samples(arr)  # check_array counts samples: TypeError for a 0-d array
    _check_min_size(arr.shape)
    return arr


def _check_min_size(shape: tuple[int, ...]) -> None:
    if shape[0] < 1:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={shape}) while a minimum of 1 is required."
        )
    if len(shape) == 2 and shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required."
        )


def _known(y: NDArray[Any], mask: NDArray[np.bool_] | None) -> NDArray[Any]:
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


def _relevance(y_true: Any, mask: NDArray[np.bool_] | None) -> NDArray[np.bool_]:
    """Relevant = non-zero (for CSR input: stored entries, as scikit-learn's indices)."""
    if _issparse(y_true):
        rel = np.zeros(y_true.shape, dtype=np.bool_)
        counts = np.diff(y_true.indptr)
        rows = np.repeat(np.arange(y_true.shape[0]), counts)
        rel[rows, y_true.indices] = True
        return rel
    y = _known(y_true, mask)
    if y.dtype == np.bool_:
        return y
    nonzero: NDArray[np.bool_] = y != 0
    return nonzero


def _scores(y_score: NDArray[Any]) -> NDArray[Any]:
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


def _weights(sample_weight: Any) -> NDArray[np.float64] | None:
    """Row weights as float64. Strings are rejected rather than parsed, and weights that
    are not 1-D raise ``np.average``'s TypeError, as in scikit-learn (which averages with
    it)."""
    if sample_weight is None:
        return None
    raw = np.asarray(sample_weight)
    if raw.dtype.kind in "USc":
        raise TypeError(f"sample_weight must be real numbers; got dtype {raw.dtype}")
    w = np.asarray(raw, dtype=np.float64)
    if w.ndim != 1:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    return w


def _known_rows(
    m: NDArray[np.bool_] | None, w: NDArray[np.float64] | None, n_rows: int
) -> NDArray[np.float64] | None:
    """The row weights with rows that have no known label left out (weight 0); raises
    ``ValueError`` when that leaves no row."""
    kept, n_without = known_row_weights(m, w, n_rows)
    if n_rows and n_without == n_rows:
        raise ValueError(NO_KNOWN_ROW)
    return kept


def _average(total: float, n_rows: int, w: NDArray[np.float64] | None) -> float:
    """``np.average(per_row, weights=w)`` from the weighted row sum."""
    if w is None:
        return float(total / n_rows)
    scale = float(w.sum())
    if scale == 0.0:
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    return float(total / scale)


def _check_shape(y_true: Any, y_score: NDArray[Any]) -> None:
    if y_true.shape != y_score.shape:
        raise ValueError("y_true and y_score have different shape")


# --------------------------------------------------------------------------------------
# fast path: one native pass that checks and computes

_FAST_TRUE_DTYPES = frozenset(
    np.dtype(t) for t in (np.bool_, np.int64, np.int32, np.int8, np.uint8, np.float64, np.float32)
)
_FAST_SCORE_DTYPES = frozenset(np.dtype(t) for t in (np.float64, np.float32))
# Bits of the flags returned by ``_core.ranking_sum_checked``.
_SCORE_NONFINITE = 1
_TRUE_NONFINITE = 2
_TRUE_NEGATIVE = 4
_MORE_THAN_TWO_LABELS = 8


def _fast_sum(
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
        if not _is_arraylike(sample_weight):
            return None
        try:
            w = _weights(sample_weight)
        except (TypeError, ValueError):
            return None  # the general path raises, in scikit-learn's order
        if w is None or w.shape[0] != shape[0]:
            return None
    m = None
    if mask is not None:
        m = _mask_if_fits(mask, shape)
        if m is None:
            return None
        w = _known_rows(m, w, shape[0])
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
        and not _is_integral_float(np.asarray(labels, dtype=y_true.dtype))
    ):
        return None
    return total, w


_INDICATOR_REJECT = _SCORE_NONFINITE | _TRUE_NONFINITE | _MORE_THAN_TWO_LABELS


# --------------------------------------------------------------------------------------
# binary relevance: ranking loss, LRAP, coverage, one-error


def _label_ranking_inputs(
    func: str,
    y_true: Any,
    y_score: Any,
    sample_weight: Any,
    mask: Any,
    *,
    lrap: bool = False,
) -> tuple[NDArray[np.bool_], NDArray[Any], NDArray[np.bool_] | None, NDArray[np.float64] | None]:
    """Validation shared by ranking loss, LRAP and one-error (sklearn's order)."""
    _check_params(func, y_true, y_score, sample_weight, sparse_ok=True)
    if lrap:
        check_consistent_length(y_true, y_score, sample_weight)
    y_true = _check_array(y_true, ensure_2d=False, mask=mask, accept_sparse=True, labels=True)
    y_score = _check_array(y_score, ensure_2d=False, mask=mask)
    if lrap:
        _check_shape(y_true, y_score)
    else:
        check_consistent_length(y_true, y_score, sample_weight)
    pre_mask = None if _issparse(y_true) else _mask_if_fits(mask, y_true.shape)
    if _issparse(y_true):
        y_type = _sparse_type(y_true)
    else:
        y_type = type_of_target(_known(y_true, pre_mask), input_name="y_true")
    if lrap:
        if y_type != "multilabel-indicator" and not (y_type == "binary" and y_true.ndim == 2):
            raise ValueError(f"{y_type} format is not supported")
    else:
        if y_type != "multilabel-indicator":
            raise ValueError(f"{y_type} format is not supported")
        _check_shape(y_true, y_score)
    m = _as_mask(mask, y_true.shape)
    if lrap and y_score.dtype == np.bool_:
        raise TypeError(_BOOL_NEGATIVE)
    w = _known_rows(m, _weights(sample_weight), y_true.shape[0])
    return _relevance(y_true, m), _scores(y_score), m, w


def label_ranking_loss(
    y_true: Any,
    y_score: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    n_jobs: int | None = None,
) -> float:
    """Ranking loss, as ``sklearn.metrics.label_ranking_loss``.

    Per row: the fraction of (relevant, irrelevant) label pairs that are ordered
    wrongly, ``#{(p, n): s_p <= s_n} / (|R| * (L - |R|))``. A tied pair counts as a
    full error. Relevant = non-zero entry of ``y_true`` (dense or CSR). Rows with no
    or only relevant labels score 0. Weighted mean over rows (all-zero weights raise
    ``ZeroDivisionError``). With ``mask``, each row ranks its known labels only; a row
    with one known label scores 0 and a row with none is left out of the mean.
    """
    func = "label_ranking_loss"
    n_jobs = check_n_jobs(n_jobs, func)
    _check_params(func, y_true, y_score, sample_weight, sparse_ok=True)
    fast = _fast_sum(
        "lrl",
        y_true,
        y_score,
        sample_weight,
        mask,
        n_jobs,
        reject=_INDICATOR_REJECT,
        need_indicator=True,
    )
    if fast is not None:
        return _average(fast[0], y_true.shape[0], fast[1])
    rel, s, m, w = _label_ranking_inputs(func, y_true, y_score, sample_weight, mask)
    total = _core.ranking_sum("lrl", rel, s, m, w, n_jobs)
    return _average(total, rel.shape[0], w)


def label_ranking_average_precision_score(
    y_true: Any,
    y_score: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    n_jobs: int | None = None,
) -> float:
    """Label ranking average precision, as ``sklearn.metrics.label_ranking_average_precision_score``.

    Per row: mean over relevant labels j of ``#{relevant k: s_k >= s_j} / #{k: s_k >= s_j}``
    (ties take the maximal rank). Rows with no or only relevant labels (and a single
    column) score 1.0. Weighted mean over rows; all-zero weights give ``nan`` with
    NumPy's ``RuntimeWarning``, as in scikit-learn. With ``mask``, each row ranks its
    known labels only; a row with one known label scores 1.0 and a row with none is
    left out of the mean.
    """
    func = "label_ranking_average_precision_score"
    n_jobs = check_n_jobs(n_jobs, func)
    _check_params(func, y_true, y_score, sample_weight, sparse_ok=True)
    fast = _fast_sum(
        "lrap",
        y_true,
        y_score,
        sample_weight,
        mask,
        n_jobs,
        reject=_INDICATOR_REJECT,
        need_indicator=True,
    )
    if fast is not None:
        total, w = fast
        n_rows = y_true.shape[0]
    else:
        rel, s, m, w = _label_ranking_inputs(func, y_true, y_score, sample_weight, mask, lrap=True)
        total = _core.ranking_sum("lrap", rel, s, m, w, n_jobs)
        n_rows = rel.shape[0]
    if w is None:
        return float(total / n_rows)
    return float(np.float64(total) / np.sum(w))


def coverage_error(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    n_jobs: int | None = None,
) -> float:
    """Coverage error, as ``sklearn.metrics.coverage_error``.

    Per row: how many labels are scored at least as high as the lowest-scored relevant
    label (ties take the maximal rank); rows with no relevant label score 0. Weighted
    mean over rows. With ``mask``, only known labels are counted, and a row with no known
    label is left out of the mean.
    """
    func = "coverage_error"
    n_jobs = check_n_jobs(n_jobs, func)
    _check_params(func, y_true, y_score, sample_weight, sparse_ok=False)
    fast = _fast_sum(
        "coverage",
        y_true,
        y_score,
        sample_weight,
        mask,
        n_jobs,
        reject=_INDICATOR_REJECT,
        need_indicator=True,
    )
    if fast is not None:
        return _average(fast[0], np.shape(y_true)[0], fast[1])
    yt = _check_array(y_true, ensure_2d=True, mask=mask, labels=True)
    ys = _check_array(y_score, ensure_2d=True, mask=mask)
    check_consistent_length(yt, ys, sample_weight)
    pre_mask = _mask_if_fits(mask, yt.shape)
    y_type = type_of_target(_known(yt, pre_mask), input_name="y_true")
    if y_type != "multilabel-indicator":
        raise ValueError(f"{y_type} format is not supported")
    _check_shape(yt, ys)
    m = _as_mask(mask, yt.shape)
    w = _known_rows(m, _weights(sample_weight), yt.shape[0])
    total = _core.ranking_sum("coverage", _relevance(yt, m), _scores(ys), m, w, n_jobs)
    return _average(total, yt.shape[0], w)


def one_error(
    y_true: Any,
    y_score: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    n_jobs: int | None = None,
) -> float:
    """One-error (Schapire & Singer, 2000): how often the top-ranked label is not relevant.

    Not in scikit-learn. Per row: 1 if the highest-scored label is irrelevant, else 0.
    Ties at the top: the fraction of the top tie group that is irrelevant (the
    expected one-error when ties are broken uniformly at random). Rows without a
    relevant label count as a full error (classical definition: the top label cannot
    be relevant). Weighted mean over rows (all-zero weights raise
    ``ZeroDivisionError``). Inputs are validated like ``label_ranking_loss``
    (multilabel-indicator ``y_true``, dense or CSR). With ``mask``, only known labels
    compete for the top; a row with no known label is left out of the mean (unknown is
    neither right nor wrong).
    """
    n_jobs = check_n_jobs(n_jobs, "one_error")
    _check_params("one_error", y_true, y_score, sample_weight, sparse_ok=True)
    fast = _fast_sum(
        "one_error",
        y_true,
        y_score,
        sample_weight,
        mask,
        n_jobs,
        reject=_INDICATOR_REJECT,
        need_indicator=True,
    )
    if fast is not None:
        return _average(fast[0], y_true.shape[0], fast[1])
    rel, s, m, w = _label_ranking_inputs("one_error", y_true, y_score, sample_weight, mask)
    total = _core.ranking_sum("one_error", rel, s, m, w, n_jobs)
    return _average(total, rel.shape[0], w)


# --------------------------------------------------------------------------------------
# graded relevance: DCG, NDCG


def _check_k(func: str, k: Any) -> None:
    if k is None:
        return
    if not isinstance(k, numbers.Integral) or k < 1:
        raise invalid_parameter(
            f"The 'k' parameter of {func} must be an int in the range [1, inf) or None. "
            f"Got {k!r} instead."
        )


def _check_ignore_ties(func: str, ignore_ties: Any) -> None:
    if not isinstance(ignore_ties, (bool, np.bool_)):
        raise invalid_parameter(
            f"The 'ignore_ties' parameter of {func} must be an instance of 'bool' or an "
            f"instance of 'numpy.bool'. Got {ignore_ties!r} instead."
        )


def _discounts(
    n_labels: int, k: int | None, log_base: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """scikit-learn's discount vector (same NumPy expression, so same bits) and its cumsum."""
    discount = 1 / (np.log(np.arange(n_labels) + 2) / np.log(log_base))
    if k is not None:
        discount[k:] = 0
    return discount, np.cumsum(discount)


def _check_dcg_shapes(y_true: NDArray[Any], y_score: NDArray[Any], ignore_ties: bool) -> None:
    """The errors scikit-learn's computation runs into when the columns disagree."""
    if y_score.shape == y_true.shape:
        return
    if not ignore_ties or y_score.ndim != 2:
        raise ValueError("array is not broadcastable to correct shape")
    if y_score.shape[1] > y_true.shape[1]:
        raise IndexError(
            f"index {y_true.shape[1]} is out of bounds for axis 1 with size {y_true.shape[1]}"
        )
    lt, ls = y_true.shape[1], y_score.shape[1]
    raise ValueError(
        f"shapes ({lt},) and ({ls},{y_true.shape[0]}) not aligned: {lt} (dim 0) != {ls} (dim 0)"
    )


def _fast_dcg(
    y_true: Any,
    y_score: Any,
    k: int | None,
    log_base: float,
    sample_weight: Any,
    ignore_ties: bool,
    mask: Any,
    n_jobs: int | None,
    normalize: bool,
) -> float | None:
    """``dcg_score``/``ndcg_score`` through ``_fast_sum`` (``None``: take the general path).

    For 2-D numeric ``y_true`` with at least 2 columns ``type_of_target`` always gives
    one of the accepted formats once the values are finite, so only finiteness (and,
    for NDCG, negative gains) is checked.
    """
    if type(y_true) is not np.ndarray or y_true.ndim != 2:
        return None
    discount, cumsum = _discounts(y_true.shape[1], k, log_base)
    reject = _SCORE_NONFINITE | _TRUE_NONFINITE | (_TRUE_NEGATIVE if normalize else 0)
    fast = _fast_sum(
        "dcg",
        y_true,
        y_score,
        sample_weight,
        mask,
        n_jobs,
        reject=reject,
        need_indicator=False,
        discount=discount,
        cumsum=cumsum,
        ignore_ties=bool(ignore_ties),
        normalize=normalize,
    )
    if fast is None:
        return None
    return _average(fast[0], y_true.shape[0], fast[1])


def _dcg(
    y_true: NDArray[Any],
    y_score: NDArray[Any],
    *,
    k: int | None,
    log_base: float,
    ignore_ties: bool,
    normalize: bool,
    m: NDArray[np.bool_] | None,
    sample_weight: Any,
    n_jobs: int | None,
) -> float:
    _check_dcg_shapes(y_true, y_score, bool(ignore_ties))
    if not ignore_ties and y_score.dtype == np.bool_:
        raise TypeError(_BOOL_NEGATIVE)
    w = _known_rows(m, _weights(sample_weight), y_true.shape[0])
    gains = np.asarray(_known(y_true, m), dtype=np.float64)
    discount, cumsum = _discounts(y_true.shape[1], k, log_base)
    total = _core.dcg_sum(
        gains, _scores(y_score), discount, cumsum, bool(ignore_ties), normalize, m, w, n_jobs
    )
    return _average(total, y_true.shape[0], w)


def dcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    log_base: float = 2,
    sample_weight: ArrayLike | None = None,
    ignore_ties: bool = False,
    mask: ArrayLike | None = None,
    n_jobs: int | None = None,
) -> float:
    """Discounted cumulative gain, as ``sklearn.metrics.dcg_score``.

    Per row: ``sum_r gain_(r) / log_base(r + 1)`` over ranks ``r = 1..min(k, L)`` in
    decreasing score order; ``y_true`` holds graded (possibly negative) gains. Ties
    (default): McSherry–Najork averaging: a group of tied scores contributes its mean
    gain times the sum of the discounts of the ranks it occupies (a group straddling
    ``k`` only gets the discounts within ``k``). ``ignore_ties=True``: scikit-learn's
    order inside ties is unspecified; here it is stable (descending score, then
    descending column), which matches scikit-learn whenever there are no ties.
    With ``mask``, ranks count known labels only; a row with no known label is left out
    of the mean.
    """
    func = "dcg_score"
    n_jobs = check_n_jobs(n_jobs, func)
    _check_k(func, k)
    if not isinstance(log_base, numbers.Real) or not (0 < log_base < np.inf):
        raise invalid_parameter(
            f"The 'log_base' parameter of {func} must be a float in the range (0.0, inf). "
            f"Got {log_base!r} instead."
        )
    _check_ignore_ties(func, ignore_ties)
    _check_params(func, y_true, y_score, sample_weight, sparse_ok=False)
    fast = _fast_dcg(y_true, y_score, k, log_base, sample_weight, ignore_ties, mask, n_jobs, False)
    if fast is not None:
        return fast
    yt = _check_array(y_true, ensure_2d=False, mask=mask, labels=True)
    ys = _check_array(y_score, ensure_2d=False, mask=mask)
    check_consistent_length(yt, ys, sample_weight)
    pre_mask = _mask_if_fits(mask, yt.shape)
    _check_dcg_type(_known(yt, pre_mask))
    m = _as_mask(mask, yt.shape)
    return _dcg(
        yt,
        ys,
        k=k,
        log_base=log_base,
        ignore_ties=ignore_ties,
        normalize=False,
        m=m,
        sample_weight=sample_weight,
        n_jobs=n_jobs,
    )


def _check_dcg_type(y_true: NDArray[Any]) -> None:
    y_type = type_of_target(y_true, input_name="y_true")
    if y_type not in _DCG_FORMATS:
        raise ValueError(f"Only {_DCG_FORMATS} formats are supported. Got {y_type} instead")


def ndcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_ties: bool = False,
    mask: ArrayLike | None = None,
    n_jobs: int | None = None,
) -> float:
    """Normalized DCG, as ``sklearn.metrics.ndcg_score``.

    Per row: DCG (see ``dcg_score``, tie-averaged by default) divided by the DCG of
    the ideal ordering; rows whose ideal DCG is 0 score 0 (and still count in the
    mean). Negative ``y_true`` values are rejected; a single column is rejected.
    With ``mask``, each row is scored on its known labels (negatives are only
    rejected among known entries); a row with one known label scores 1 if its gain is
    positive, else 0, and a row with none is left out of the mean.
    """
    func = "ndcg_score"
    n_jobs = check_n_jobs(n_jobs, func)
    _check_k(func, k)
    _check_ignore_ties(func, ignore_ties)
    _check_params(func, y_true, y_score, sample_weight, sparse_ok=False)
    fast = _fast_dcg(y_true, y_score, k, 2, sample_weight, ignore_ties, mask, n_jobs, True)
    if fast is not None:
        return fast
    yt = _check_array(y_true, ensure_2d=False, mask=mask, labels=True)
    ys = _check_array(y_score, ensure_2d=False, mask=mask)
    check_consistent_length(yt, ys, sample_weight)
    pre_mask = _mask_if_fits(mask, yt.shape)
    known = _known(yt, pre_mask)
    if known.min() < 0:
        raise ValueError("ndcg_score should not be used on negative y_true values.")
    if yt.ndim > 1 and yt.shape[1] <= 1:
        raise ValueError(
            "Computing NDCG is only meaningful when there is more than 1 document. "
            f"Got {yt.shape[1]} instead."
        )
    _check_dcg_type(known)
    m = _as_mask(mask, yt.shape)
    return _dcg(
        yt,
        ys,
        k=k,
        log_base=2,
        ignore_ties=ignore_ties,
        normalize=True,
        m=m,
        sample_weight=sample_weight,
        n_jobs=n_jobs,
    )
