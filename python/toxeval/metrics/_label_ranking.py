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
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from toxeval import _core
from toxeval.metrics._ranking_inputs import (
    BOOL_NEGATIVE,
    INDICATOR_REJECT,
    SCORE_NONFINITE,
    TRUE_NEGATIVE,
    TRUE_NONFINITE,
    check_ranking_array,
    check_ranking_arrays,
    check_same_shape,
    fast_sum,
    known_rows,
    known_values,
    label_ranking_inputs,
    mask_if_fits,
    ranking_scores,
    relevance,
    weighted_mean,
)
from toxeval.metrics._target import type_of_target
from toxeval.metrics._validation import (
    average_weights,
    check_consistent_length,
    check_mask,
    check_n_jobs,
    invalid_parameter,
)

__all__ = [
    "coverage_error",
    "dcg_score",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "ndcg_score",
    "one_error",
]


# --------------------------------------------------------------------------------------
# binary relevance: ranking loss, LRAP, coverage, one-error


def _fast_indicator_sum(
    metric: str, y_true: Any, y_score: Any, sample_weight: Any, mask: Any, n_jobs: int | None
) -> tuple[float, NDArray[np.float64] | None] | None:
    """:func:`fast_sum` for a metric of multilabel-indicator ``y_true``."""
    return fast_sum(
        metric,
        y_true,
        y_score,
        sample_weight,
        mask,
        n_jobs,
        reject=INDICATOR_REJECT,
        need_indicator=True,
    )


def _indicator_sum(
    metric: Literal["lrl", "lrap", "one_error"],
    func: str,
    y_true: Any,
    y_score: Any,
    sample_weight: Any,
    mask: Any,
    n_jobs: int | None,
    *,
    lrap: bool = False,
) -> tuple[float, int, NDArray[np.float64] | None]:
    """``(weighted row sum, rows, row weights)`` of ranking loss, LRAP or one-error,
    after scikit-learn's checks (dense or CSR ``y_true``): the fast path when the
    input is in its form, else :func:`label_ranking_inputs`."""
    check_ranking_arrays(func, y_true, y_score, sample_weight, sparse_ok=True)
    fast = _fast_indicator_sum(metric, y_true, y_score, sample_weight, mask, n_jobs)
    if fast is not None:
        return fast[0], y_true.shape[0], fast[1]
    rel, s, m, w = label_ranking_inputs(func, y_true, y_score, sample_weight, mask, lrap=lrap)
    return _core.ranking_sum(metric, rel, s, m, w, n_jobs), rel.shape[0], w


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
    total, n_rows, w = _indicator_sum("lrl", func, y_true, y_score, sample_weight, mask, n_jobs)
    return weighted_mean(total, n_rows, w)


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
    total, n_rows, w = _indicator_sum(
        "lrap", func, y_true, y_score, sample_weight, mask, n_jobs, lrap=True
    )
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
    check_ranking_arrays(func, y_true, y_score, sample_weight, sparse_ok=False)
    fast = _fast_indicator_sum("coverage", y_true, y_score, sample_weight, mask, n_jobs)
    if fast is not None:
        return weighted_mean(fast[0], np.shape(y_true)[0], fast[1])
    yt = check_ranking_array(y_true, ensure_2d=True, mask=mask, labels=True)
    ys = check_ranking_array(y_score, ensure_2d=True, mask=mask)
    check_consistent_length(yt, ys, sample_weight)
    pre_mask = mask_if_fits(mask, yt.shape)
    y_type = type_of_target(known_values(yt, pre_mask), input_name="y_true")
    if y_type != "multilabel-indicator":
        raise ValueError(f"{y_type} format is not supported")
    check_same_shape(yt, ys)
    m = check_mask(mask, yt.shape)
    w = known_rows(m, average_weights(sample_weight), yt.shape[0])
    total = _core.ranking_sum("coverage", relevance(yt, m), ranking_scores(ys), m, w, n_jobs)
    return weighted_mean(total, yt.shape[0], w)


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
    func = "one_error"
    n_jobs = check_n_jobs(n_jobs, func)
    total, n_rows, w = _indicator_sum(
        "one_error", func, y_true, y_score, sample_weight, mask, n_jobs
    )
    return weighted_mean(total, n_rows, w)


# --------------------------------------------------------------------------------------
# graded relevance: DCG, NDCG

_DCG_FORMATS = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")


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


def _dcg(
    y_true: Any,
    y_score: Any,
    k: int | None,
    log_base: float,
    sample_weight: Any,
    ignore_ties: bool,
    mask: Any,
    n_jobs: int | None,
    normalize: bool,
) -> float:
    """``dcg_score`` (``normalize=False``) or ``ndcg_score`` after the parameter
    checks: the fast path when the input is in its form, else scikit-learn's checks
    in its order, then the native weighted row sum.

    Fast path (``fast_sum``): for 2-D numeric ``y_true`` with at least 2 columns
    ``type_of_target`` always gives one of the accepted formats once the values are
    finite, so only finiteness (and, for NDCG, negative gains) is checked there.
    """
    if type(y_true) is np.ndarray and y_true.ndim == 2:
        discount, cumsum = _discounts(y_true.shape[1], k, log_base)
        reject = SCORE_NONFINITE | TRUE_NONFINITE | (TRUE_NEGATIVE if normalize else 0)
        fast = fast_sum(
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
        if fast is not None:
            return weighted_mean(fast[0], y_true.shape[0], fast[1])
    yt = check_ranking_array(y_true, ensure_2d=False, mask=mask, labels=True)
    ys = check_ranking_array(y_score, ensure_2d=False, mask=mask)
    check_consistent_length(yt, ys, sample_weight)
    known = known_values(yt, mask_if_fits(mask, yt.shape))
    if normalize:
        if known.min() < 0:
            raise ValueError("ndcg_score should not be used on negative y_true values.")
        if yt.ndim > 1 and yt.shape[1] <= 1:
            raise ValueError(
                "Computing NDCG is only meaningful when there is more than 1 document. "
                f"Got {yt.shape[1]} instead."
            )
    y_type = type_of_target(known, input_name="y_true")
    if y_type not in _DCG_FORMATS:
        raise ValueError(f"Only {_DCG_FORMATS} formats are supported. Got {y_type} instead")
    m = check_mask(mask, yt.shape)
    return _dcg_sum(yt, ys, k, log_base, bool(ignore_ties), normalize, m, sample_weight, n_jobs)


def _dcg_sum(
    y_true: NDArray[Any],
    y_score: NDArray[Any],
    k: int | None,
    log_base: float,
    ignore_ties: bool,
    normalize: bool,
    m: NDArray[np.bool_] | None,
    sample_weight: Any,
    n_jobs: int | None,
) -> float:
    _check_dcg_shapes(y_true, y_score, ignore_ties)
    if not ignore_ties and y_score.dtype == np.bool_:
        raise TypeError(BOOL_NEGATIVE)
    w = known_rows(m, average_weights(sample_weight), y_true.shape[0])
    gains = np.asarray(known_values(y_true, m), dtype=np.float64)
    discount, cumsum = _discounts(y_true.shape[1], k, log_base)
    total = _core.dcg_sum(
        gains, ranking_scores(y_score), discount, cumsum, ignore_ties, normalize, m, w, n_jobs
    )
    return weighted_mean(total, y_true.shape[0], w)


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
    check_ranking_arrays(func, y_true, y_score, sample_weight, sparse_ok=False)
    return _dcg(y_true, y_score, k, log_base, sample_weight, ignore_ties, mask, n_jobs, False)


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
    check_ranking_arrays(func, y_true, y_score, sample_weight, sparse_ok=False)
    return _dcg(y_true, y_score, k, 2, sample_weight, ignore_ties, mask, n_jobs, True)
