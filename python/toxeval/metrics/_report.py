"""``multilabel_report``: every multi-label figure of an (N x K) score matrix in one call.

The separate drop-in functions each validate their input and sort the data on
their own; an evaluation that wants all of them would validate ten times and sort
every label three times. This function validates once and shares the work:

* one sort per label gives both average precision and ROC AUC
  (``_core.binary_ap_auc_per_label``), one merged pass gives their micro averages
  (``_core.binary_ap_auc_micro``);
* one pass over the rows, one sort per row, gives label ranking loss, LRAP,
  coverage error, one-error and NDCG (``_core.ranking_report_sums``);
* the thresholded figures (micro/macro F1, Hamming loss) come from per-label
  confusion counts.

Every figure equals the corresponding public function called with the same
``mask`` and ``sample_weight`` (tested), so the report can be trusted exactly as
far as the drop-ins are.
"""

from __future__ import annotations

import warnings
from typing import Any, TypedDict

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics._binary import _check_mask, _emit
from toxeval.metrics._validation import (
    assert_all_finite,
    check_consistent_length,
    to_array,
)

__all__ = ["MultilabelReport", "multilabel_report"]


class MultilabelReport(TypedDict):
    """What ``multilabel_report`` returns (a plain ``dict``).

    Per-label arrays are float64 of length K, in column order. Macro averages are
    plain means over all labels, as scikit-learn's ``average="macro"`` (so a label
    whose ROC AUC is undefined makes the macro ROC AUC NaN; use the per-label
    arrays and ``support`` to average over a subset).
    """

    n_samples: int
    n_labels: int
    support: NDArray[np.int64]  # known positives per label
    n_negative: NDArray[np.int64]  # known negatives per label
    n_unknown: NDArray[np.int64]  # unknown cells per label
    ap: NDArray[np.float64]
    ap_macro: float
    ap_micro: float
    roc_auc: NDArray[np.float64]
    roc_auc_macro: float
    roc_auc_micro: float
    label_ranking_loss: float
    lrap: float
    coverage_error: float
    one_error: float
    ndcg: float
    threshold: float
    f1: NDArray[np.float64]
    f1_micro: float
    f1_macro: float
    hamming_loss: float


def _labels01(y_true: Any) -> NDArray[np.bool_]:
    y = to_array(y_true)
    if y.ndim != 2 or y.shape[1] < 2:
        raise ValueError(
            f"multilabel_report needs a 2-D y_true with at least 2 labels; got shape {y.shape}"
        )
    if y.dtype == np.bool_:
        return y
    if y.dtype.kind not in "iuf":
        raise ValueError(f"y_true must be numeric 0/1 or bool; got dtype {y.dtype}")
    if y.dtype.kind == "f":
        assert_all_finite(y, input_name="y_true")
    # min/max decide {0, 1} in two cheap passes (no N x K temporaries).
    if y.size and (y.min() < 0 or y.max() > 1):
        raise ValueError(
            "multilabel_report needs y_true in {0, 1} (use the mask for unknown labels)"
        )
    pos: NDArray[np.bool_] = y.astype(np.bool_)
    if y.dtype.kind == "f" and np.count_nonzero(pos) != np.count_nonzero(y == 1):
        raise ValueError(
            "multilabel_report needs y_true in {0, 1} (use the mask for unknown labels)"
        )
    return pos


def _scores(y_score: Any) -> NDArray[Any]:
    s = to_array(y_score)
    if s.dtype.kind not in "iuf" or s.dtype.kind == "c":
        raise ValueError(f"y_score must be numeric; got dtype {s.dtype}")
    if s.dtype not in (np.float64, np.float32, np.int64):
        s = s.astype(np.int64 if s.dtype.kind in "iu" else np.float64)
    assert_all_finite(s)
    return s


def multilabel_report(
    y_true: Any,
    y_score: Any,
    *,
    mask: Any = None,
    sample_weight: Any = None,
    threshold: float = 0.5,
    n_jobs: int | None = None,
) -> MultilabelReport:
    """All multi-label figures at once, sharing validation and sorts.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        0/1 (or bool) label indicators. Unknown labels go in ``mask``, not here.
    y_score : array-like of shape (n_samples, n_labels)
        Scores; float64, float32 (kept in float32 for tie decisions) or integers.
    mask : array-like of bool, same shape, optional
        True where a label is known. Per-label figures use the rows where the label
        is known; per-row figures rank only the known labels of each row; the
        thresholded figures count known cells only.
    sample_weight : array-like of shape (n_samples,), optional
        Row weights, used as by each drop-in function (thresholded figures are
        unweighted counts).
    threshold : float, default 0.5
        A label is predicted when ``y_score >= threshold``.
    n_jobs : int, optional
        Threads (None = all cores). Results do not depend on it.

    Returns
    -------
    MultilabelReport
        A dict: ``ap``/``roc_auc`` per label and their ``_macro``/``_micro``
        averages (``average_precision_score`` / ``roc_auc_score`` semantics),
        ``label_ranking_loss``, ``lrap``, ``coverage_error``, ``one_error``,
        ``ndcg`` (tie-aware, k=None), ``f1`` per label, ``f1_micro``, ``f1_macro``,
        ``hamming_loss`` (F1 with zero_division=0), and per-label ``support``,
        ``n_negative``, ``n_unknown``.

    Warnings are the ones the drop-in functions emit (e.g. a label without
    positives); each is emitted once.
    """
    pos = _labels01(y_true)
    s = _scores(y_score)
    if s.shape != pos.shape:
        raise ValueError(f"y_true and y_score have different shape: {pos.shape} vs {s.shape}")
    check_consistent_length(pos, s, sample_weight)
    m = _check_mask(mask, pos.shape)
    w = None
    if sample_weight is not None:
        w = np.ascontiguousarray(to_array(sample_weight), dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"sample_weight must be 1-D; got shape {w.shape}")
        assert_all_finite(w, input_name="sample_weight")
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number; got {threshold!r}")
    n, k = pos.shape

    ap, auc, ap_flags, auc_flags = _core.binary_ap_auc_per_label(s, pos, w, m, n_jobs)
    ap_micro, auc_micro, ap_mflag, auc_mflag = _core.binary_ap_auc_micro(s, pos, w, m, n_jobs)
    _emit(np.append(ap_flags, ap_mflag), "average_precision")
    _emit(np.append(auc_flags, auc_mflag), "roc_auc")
    sums = _core.ranking_report_sums(pos, s, m, w, n_jobs)
    wsum = float(sums["weight_sum"])

    def mean_of(key: str) -> float:
        if wsum == 0.0:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        return float(sums[key]) / wsum

    def col_counts(a: NDArray[np.bool_]) -> NDArray[np.int64]:
        return a.view(np.uint8).sum(axis=0, dtype=np.int64)  # type: ignore[no-any-return]

    known_pos = pos if m is None else pos & m
    support = col_counts(known_pos)
    n_known = np.full(k, n, dtype=np.int64) if m is None else col_counts(m)
    pred = s >= threshold
    if m is not None:
        pred &= m
    tp = col_counts(pred & known_pos).astype(np.float64)
    fp = col_counts(pred).astype(np.float64) - tp
    fn = support.astype(np.float64) - tp
    denom = 2 * tp + fp + fn
    f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    micro_den = float(denom.sum())
    cells = int(n_known.sum())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return MultilabelReport(
            n_samples=n,
            n_labels=k,
            support=support,
            n_negative=n_known - support,
            n_unknown=np.int64(n) - n_known,
            ap=np.asarray(ap, dtype=np.float64),
            ap_macro=float(np.mean(ap)),
            ap_micro=float(ap_micro),
            roc_auc=np.asarray(auc, dtype=np.float64),
            roc_auc_macro=float(np.mean(auc)),
            roc_auc_micro=float(auc_micro),
            label_ranking_loss=mean_of("label_ranking_loss"),
            lrap=mean_of("label_ranking_average_precision"),
            coverage_error=mean_of("coverage_error"),
            one_error=mean_of("one_error"),
            ndcg=mean_of("ndcg"),
            threshold=float(threshold),
            f1=f1,
            f1_micro=2 * float(tp.sum()) / micro_den if micro_den > 0 else 0.0,
            f1_macro=float(f1.mean()),
            hamming_loss=float(fp.sum() + fn.sum()) / cells if cells else float("nan"),
        )
