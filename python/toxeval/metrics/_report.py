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
  confusion counts of one native pass (``_core.threshold_counts``); with
  ``sample_weight`` they are weighted counts (``weighted_counts``), as scikit-learn's
  ``multilabel_confusion_matrix`` makes them.

No N x K temporary is made for int64/int32/bool ``y_true``: one native pass checks
int labels and packs the positives eight per byte (what the AP/AUC kernels and the
counts read), the per-row pass reads ``y_true`` in place, and the threshold becomes
a score value (``threshold_cut``) instead of a boolean matrix. Peak extra memory
at 1M x 15 is below half of ``y_score``'s bytes, float32 included.

Every figure equals the corresponding public function called with the same
``mask`` and ``sample_weight`` (tested), so the report can be trusted exactly as
far as the drop-ins are.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypedDict

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics._binary_average import emit_flags
from toxeval.metrics._validation import (
    assert_all_finite,
    check_consistent_length,
    check_mask,
    check_n_jobs,
    known_row_weights,
    shift_uint64,
    to_array,
    uint64_as_int64,
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
    n_rows_without_known_label: int  # left out of the per-row figures
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
    one_error_relevant: float
    ndcg: float
    threshold: float
    f1: NDArray[np.float64]
    f1_micro: float
    f1_macro: float
    hamming_loss: float


_NOT_01 = "multilabel_report needs y_true in {0, 1} (use the mask for unknown labels)"

# dtypes `_core.ranking_report_sums` reads in place (native byte order).
_IN_PLACE = (np.dtype(np.bool_), np.dtype(np.int64), np.dtype(np.int32))
_IN_PLACE_FLOAT = (np.dtype(np.float64), np.dtype(np.float32))


def labels01(
    y_true: Any, n_jobs: int | None
) -> tuple[NDArray[Any], NDArray[np.bool_] | NDArray[np.uint8]]:
    """Validate ``y_true`` as 0/1 (or bool) indicators: ``(y_rank, y_pos)``.

    ``y_rank`` is what the per-row pass reads: ``y_true`` itself when the native
    code reads its dtype in place (bool, int64, int32, float64, float32), else a bool
    copy. ``y_pos`` are the positives of the per-label kernels: ``y_true`` itself when
    bool, else packed eight labels per byte (``np.packbits(y == 1, axis=1,
    bitorder="little")``, 1/8 of a bool copy). For int64/int32 one native pass does
    the {0, 1} check and the packing (no N x K temporary at all).
    """
    y = to_array(y_true)
    if y.ndim != 2 or y.shape[1] < 2:
        raise ValueError(
            f"multilabel_report needs a 2-D y_true with at least 2 labels; got shape {y.shape}"
        )
    if y.dtype == np.bool_:
        return y, y
    if y.dtype.kind not in "iuf":
        raise ValueError(f"y_true must be numeric 0/1 or bool; got dtype {y.dtype}")
    if y.dtype in _IN_PLACE and y.size:
        try:
            r = _core.binary_indicator_summary(y, n_jobs)
        except ValueError:
            r = None  # e.g. n_jobs=0: the checks below run, the kernels raise later
        if r is not None:
            lo, hi, third, packed = r
            if third or lo < 0 or hi > 1 or packed is None:
                raise ValueError(_NOT_01)
            return y, packed
    if y.dtype.kind == "f":
        assert_all_finite(y, input_name="y_true")
    # min/max decide {0, 1} in two cheap passes (no N x K temporaries).
    if y.size and (y.min() < 0 or y.max() > 1):
        raise ValueError(_NOT_01)
    pos: NDArray[np.bool_] = y.astype(np.bool_)
    if y.dtype.kind == "f" and np.count_nonzero(pos) != np.count_nonzero(y == 1):
        raise ValueError(_NOT_01)
    if y.dtype in _IN_PLACE or y.dtype in _IN_PLACE_FLOAT:
        return y, np.packbits(pos, axis=1, bitorder="little")
    return pos, pos


def kernel_scores(s: NDArray[Any], n_jobs: int | None = None) -> tuple[NDArray[Any], bool]:
    """The scores the kernels read, and whether they are uint64 scores beyond int64
    shifted by ``uint64_as_int64`` (same order and ties, other values): float64/
    float32/int64 as they are, other integers as int64, other floats as float64."""
    if s.dtype.kind not in "iuf" or s.dtype.kind == "c":
        raise ValueError(f"y_score must be numeric; got dtype {s.dtype}")
    if s.dtype not in (np.float64, np.float32, np.int64):
        flipped = uint64_as_int64(s)
        if flipped is not None:
            return flipped, True  # integers: always finite
        s = s.astype(np.int64 if s.dtype.kind in "iu" else np.float64)
    assert_all_finite(s, n_jobs=n_jobs)
    return s, False


def threshold_cut(s: NDArray[Any], threshold: Any) -> NDArray[Any]:
    """The smallest value ``v`` of ``s.dtype`` with ``v >= threshold`` as NumPy
    decides it for ``s >= threshold`` (its promotion rules: a Python float meets
    float32 scores in float32 but int64 scores in float64, a NumPy float64 scalar
    meets float32 scores in float64, ...), as a 1-element array; empty when no value
    qualifies. ``s >= threshold`` is monotone in ``s``, so ``s >= v`` (in the score's
    own order, ``-0.0 == 0.0``) predicts exactly the same cells, and the native count
    needs no N x K boolean temporary.
    """
    dt = s.dtype

    def pred(v: Any) -> bool:
        return bool((np.array([v], dtype=dt) >= threshold)[0])

    def found(v: Any) -> NDArray[Any]:
        return np.array([v], dtype=dt)

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dt.kind == "f":
            lo, top = dt.type(-np.inf), dt.type(np.finfo(dt).max)
            if not pred(top):
                return np.empty(0, dtype=dt)
            if pred(lo):
                return found(lo)
            c = dt.type(threshold)
            # The threshold rounded to the score type is within an ulp or so of the
            # answer; walk to it.
            for _ in range(64):
                if not pred(c):
                    c = np.nextafter(c, dt.type(np.inf), dtype=dt)
                    continue
                d = np.nextafter(c, lo, dtype=dt)
                if not pred(d):
                    return found(c)
                c = d
        else:
            ilo, ihi = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
            if not pred(ihi):
                return np.empty(0, dtype=dt)
            if pred(ilo):
                return found(ilo)
            while ihi - ilo > 1:  # pred(ilo) is False, pred(ihi) is True
                mid = (ilo + ihi) // 2
                if pred(mid):
                    ihi = mid
                else:
                    ilo = mid
            return found(ihi)
    raise ValueError(f"cannot place threshold {threshold!r} among {dt} scores")


def weighted_counts(
    cells: NDArray[np.bool_], w: NDArray[np.float64], k: int
) -> NDArray[np.float64]:
    """Per label, the sum of the weights of the rows where ``cells`` is True, added in
    row order: scikit-learn's ``count_nonzero(csr, axis=0, sample_weight=w)`` (a
    ``bincount`` over the column indices of the CSR entries)."""
    rows, cols = np.nonzero(cells)
    counts = np.bincount(cols, weights=w[rows], minlength=k)
    return counts.astype(np.float64)  # bincount of no entries is int64


def weighted_threshold_figures(
    positive: NDArray[np.bool_],
    predicted: NDArray[np.bool_],
    m: NDArray[np.bool_] | None,
    w: NDArray[np.float64],
) -> tuple[NDArray[np.float64], float, float]:
    """Per-label F1, micro F1 and Hamming loss with row weights, as scikit-learn's
    ``f1_score(average=None / "micro", zero_division=0)`` and ``hamming_loss`` compute
    them from weighted confusion counts. With a mask, unknown cells are not counted: a
    label's counts and the Hamming loss's differing and total cells are sums of the
    weights of the known cells only (the Hamming loss divides the weighted differing
    known cells by the weighted known cells)."""
    n, k = positive.shape
    if m is not None:
        positive = positive & m
        predicted = predicted & m
    tp_sum = weighted_counts(positive & predicted, w, k)
    fp = weighted_counts(predicted, w, k) - tp_sum
    fn = weighted_counts(positive, w, k) - tp_sum
    pred_sum = tp_sum + fp
    true_sum = tp_sum + fn

    def f1_of(tp: NDArray[np.float64], t: NDArray[np.float64], p: NDArray[np.float64]) -> Any:
        denom = t + p
        return np.divide(2.0 * tp, denom, out=np.zeros_like(tp), where=denom != 0)

    f1 = f1_of(tp_sum, true_sum, pred_sum)
    micro = f1_of(np.array([tp_sum.sum()]), np.array([true_sum.sum()]), np.array([pred_sum.sum()]))
    differ = positive != predicted
    with np.errstate(divide="ignore", invalid="ignore"):
        if m is None:
            n_diff = np.float64(np.dot(np.count_nonzero(differ, axis=1), w))
            hamming = float(n_diff / (n * k * np.mean(w)))
        else:
            n_diff = np.float64(np.dot(np.count_nonzero(differ & m, axis=1), w))
            hamming = float(n_diff / np.dot(np.count_nonzero(m, axis=1), w))
    return f1, float(micro[0]), hamming


def predicted_cells(s: NDArray[Any], cut: NDArray[Any]) -> NDArray[np.bool_]:
    """``score >= threshold`` as a boolean matrix, from the cut ``threshold_cut`` placed."""
    if cut.size == 0:
        return np.zeros(s.shape, dtype=np.bool_)
    pred: NDArray[np.bool_] = s >= cut[0]
    return pred


def positives(y_pos: NDArray[Any], k: int) -> NDArray[np.bool_]:
    """The positives as a bool matrix (``y_pos`` may be packed eight labels per byte)."""
    if y_pos.dtype == np.bool_:
        return y_pos
    unpacked: NDArray[np.bool_] = np.unpackbits(y_pos, axis=1, count=k, bitorder="little").astype(
        np.bool_
    )
    return unpacked


class RowMeans(TypedDict):
    """The report's per-row figures."""

    label_ranking_loss: float
    lrap: float
    coverage_error: float
    one_error: float
    one_error_relevant: float
    ndcg: float


def per_row_means(sums: Mapping[str, Any], n: int, n_without: int) -> RowMeans:
    """The per-row figures from the row pass's weighted sums (``ranking_report_sums``,
    or those sums added over chunks): NaN when none of the ``n`` rows has a known label
    (``n_without == n``), scikit-learn's ZeroDivisionError when the weights of the rows
    that count sum to zero; ``one_error_relevant`` over rows with a relevant label."""
    wsum = float(sums["weight_sum"])

    def mean_of(key: str) -> float:
        if n_without == n:
            return float("nan")
        if wsum == 0.0:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        return float(sums[key]) / wsum

    relevant = float(sums["rows_with_relevant"])
    return RowMeans(
        label_ranking_loss=mean_of("label_ranking_loss"),
        lrap=mean_of("label_ranking_average_precision"),
        coverage_error=mean_of("coverage_error"),
        one_error=mean_of("one_error"),
        one_error_relevant=float(sums["one_error_relevant_errors"]) / relevant
        if relevant > 0
        else float("nan"),
        ndcg=mean_of("ndcg"),
    )


def count_threshold_figures(
    tp_count: NDArray[Any], predicted: NDArray[Any], support: NDArray[Any], n_known: NDArray[Any]
) -> tuple[NDArray[np.float64], float, float]:
    """Per-label F1, micro F1 and Hamming loss from unweighted per-label counts of true
    positives, predicted cells, known positives and known cells (``f1_score`` with
    ``zero_division=0``, ``hamming_loss`` over the known cells)."""
    tp = np.asarray(tp_count).astype(np.float64)
    fp = np.asarray(predicted).astype(np.float64) - tp
    fn = np.asarray(support).astype(np.float64) - tp
    denom = 2 * tp + fp + fn
    f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    micro_den = float(denom.sum())
    f1_micro = 2 * float(tp.sum()) / micro_den if micro_den > 0 else 0.0
    cells = int(np.asarray(n_known).sum())
    hamming = float(fp.sum() + fn.sum()) / cells if cells else float("nan")
    return f1, f1_micro, hamming


class ReportInputs(NamedTuple):
    """``multilabel_report``'s inputs, checked and in the forms the kernels read."""

    y_rank: NDArray[Any]  # what the per-row pass reads
    y_pos: NDArray[Any]  # the positives (bool or packed bits)
    raw: NDArray[Any]  # the scores as given (the threshold is placed among them)
    s: NDArray[Any]  # the kernel scores
    shifted: bool  # uint64 scores shifted into int64's range
    mask: NDArray[np.bool_] | None  # None: every label known
    weight: NDArray[np.float64] | None


def check_report_inputs(
    y_true: Any,
    y_score: Any,
    mask: Any,
    sample_weight: Any,
    n_jobs: int | None,
    scores: Callable[[NDArray[Any], int | None], tuple[NDArray[Any], bool]] = kernel_scores,
) -> ReportInputs:
    """The checks ``multilabel_report`` runs on its inputs, one message per mistake, for
    it and for the streaming states' chunks (``scores``: how scores become kernel
    scores; a chunk shifts every uint64 so that chunks of one state agree)."""
    y_rank, y_pos = labels01(y_true, n_jobs)
    raw = to_array(y_score)
    s, shifted = scores(raw, n_jobs)
    if s.shape != y_rank.shape:
        raise ValueError(f"y_true and y_score have different shape: {y_rank.shape} vs {s.shape}")
    check_consistent_length(y_rank, s, sample_weight)
    m = check_mask(mask, y_rank.shape, all_true_as_none=True)
    w = None
    if sample_weight is not None:
        w = np.ascontiguousarray(to_array(sample_weight), dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"sample_weight must be 1-D; got shape {w.shape}")
        assert_all_finite(w, input_name="sample_weight")
    return ReportInputs(y_rank, y_pos, raw, s, shifted, m, w)


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
        Row weights, used as by each drop-in function; the thresholded figures are
        weighted counts as in ``f1_score``/``hamming_loss`` with ``sample_weight``
        (with a mask: the weights of the known cells, see ``weighted_threshold_figures``).
    threshold : float, default 0.5
        A label is predicted when ``y_score >= threshold``.
    n_jobs : int, optional
        Threads (None = all cores, unlike scikit-learn/joblib's one). Results do not
        depend on it.

    Returns
    -------
    MultilabelReport
        A dict: ``n_samples`` and ``n_labels`` (the shape),
        ``n_rows_without_known_label`` (rows whose mask is all False: they are left
        out of every per-row figure, which is NaN when no row is left), ``ap``/``roc_auc`` per
        label and their ``_macro``/``_micro`` averages (``average_precision_score``
        / ``roc_auc_score`` semantics), ``label_ranking_loss``, ``lrap``,
        ``coverage_error``, ``one_error``, ``one_error_relevant`` (see below),
        ``ndcg`` (tie-aware, k=None), the
        ``threshold`` used, ``f1`` per label, ``f1_micro``, ``f1_macro``,
        ``hamming_loss`` (F1 with zero_division=0), and per-label ``support``,
        ``n_negative``, ``n_unknown``. Every key of :class:`MultilabelReport`.

    ``one_error`` is ``toxeval.metrics.one_error``'s classical definition: a row
    without a relevant known label is a full error, and a tie at the top counts its
    irrelevant share. ``one_error_relevant`` is the one-error of toxeval's CLI report
    (docs/cli.md): the (weighted) mean over rows with at least one relevant known
    label of 1 when an irrelevant known label scores at least as high as every
    relevant one (a tie at the top is an error), else 0; NaN when no row has a
    relevant known label. On a mostly benign toxicity set the classical figure mostly
    counts the benign rows.

    Warnings are the ones the drop-in functions emit (e.g. a label without
    positives); each is emitted once.
    """
    n_jobs = check_n_jobs(n_jobs, "multilabel_report")
    y_rank, y_pos, raw, s, shifted, m, w = check_report_inputs(
        y_true, y_score, mask, sample_weight, n_jobs
    )
    if not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number; got {threshold!r}")
    n, k = y_rank.shape

    ap, auc, ap_flags, auc_flags = _core.binary_ap_auc_per_label(s, y_pos, w, m, n_jobs)
    ap_micro, auc_micro, ap_mflag, auc_mflag = _core.binary_ap_auc_micro(s, y_pos, w, m, n_jobs)
    emit_flags(np.append(ap_flags, ap_mflag), "average_precision")
    emit_flags(np.append(auc_flags, auc_mflag), "roc_auc")
    # Rows with no known label are unknown: weight 0 leaves them out of every per-row
    # mean exactly (the per-label figures already skip their cells).
    w_rows, n_without = known_row_weights(m, w, n)
    sums = _core.ranking_report_sums(y_rank, s, m, w_rows, n_jobs)

    # One native pass over scores, labels and mask (no N x K temporaries).
    if shifted:
        # Placed among the uint64 scores as given, then shifted as they are.
        cut = shift_uint64(threshold_cut(raw, threshold))
    else:
        cut = threshold_cut(s, threshold)
    n_known, support, predicted, tp_count = _core.threshold_counts(s, y_pos, cut, m, n_jobs)
    if w is None:
        f1, f1_micro, hamming = count_threshold_figures(tp_count, predicted, support, n_known)
    else:
        f1, f1_micro, hamming = weighted_threshold_figures(
            positives(y_pos, k), predicted_cells(s, cut), m, w
        )
    rows = per_row_means(sums, n, n_without)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return MultilabelReport(
            n_samples=n,
            n_labels=k,
            n_rows_without_known_label=n_without,
            support=support,
            n_negative=n_known - support,
            n_unknown=np.int64(n) - n_known,
            ap=np.asarray(ap, dtype=np.float64),
            ap_macro=float(np.mean(ap)),
            ap_micro=float(ap_micro),
            roc_auc=np.asarray(auc, dtype=np.float64),
            roc_auc_macro=float(np.mean(auc)),
            roc_auc_micro=float(auc_micro),
            **rows,
            threshold=float(threshold),
            f1=f1,
            f1_micro=f1_micro,
            f1_macro=float(f1.mean()),
            hamming_loss=hamming,
        )
