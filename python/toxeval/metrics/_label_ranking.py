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

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from toxeval import _core
from toxeval.metrics._ranking_inputs import (
    INDICATOR_REJECT,
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
)

__all__ = [
    "coverage_error",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "one_error",
]


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
