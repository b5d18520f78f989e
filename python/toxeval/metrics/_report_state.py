"""``multilabel_report`` as a mergeable state: the checks of one chunk of rows, and
the additive part of the report, which merges by adding.

Everything in the report except AP and ROC AUC is a (weighted) sum over rows or
cells: the per-row figures are weighted row sums divided by the weight of the rows
with a known label, the thresholded figures come from per-label confusion counts, and
supports and unknown counts are counts. :class:`ReportTotals` holds those sums; two
totals of disjoint rows add up to the totals of their union, in any order and split.
AP and ROC AUC need the runs of distinct scores (``toxeval.streaming.LabelRuns``);
:func:`finish_report` turns the totals and the AP/ROC AUC figures into the same dict
``multilabel_report`` returns, with the same warnings.

A chunk is checked by :func:`check_report_chunk` with exactly the checks and
messages of ``multilabel_report`` (it calls the same helpers), plus what a sequence
of chunks needs: the same number of labels and the same score dtype family in every
chunk (float32 scores are tied in float32, so float32 and float64 chunks do not mix).
uint64 scores are always shifted into int64 (same order and ties), so that chunks
with and without values above the int64 range give comparable keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics._binary_average import emit_flags
from toxeval.metrics._report import (
    MultilabelReport,
    check_report_inputs,
    count_threshold_figures,
    kernel_scores,
    per_row_means,
    positives,
    predicted_cells,
    threshold_cut,
    weighted_counts,
)
from toxeval.metrics._validation import (
    known_row_weights,
    shift_uint64,
)

__all__ = [
    "ROW_SUM_KEYS",
    "ReportChunk",
    "ReportTotals",
    "check_report_chunk",
    "finish_report",
    "warn_binary_flags",
]

# The weighted row sums of `_core.ranking_report_sums`, in the order kept.
ROW_SUM_KEYS = (
    "label_ranking_loss",
    "label_ranking_average_precision",
    "coverage_error",
    "one_error",
    "ndcg",
    "one_error_relevant_errors",
    "rows_with_relevant",
    "weight_sum",
)


@dataclass(frozen=True)
class ReportChunk:
    """One checked chunk of rows, in the forms the kernels read.

    ``s`` are the kernel scores (float64, float32 or int64; uint64 shifted),
    ``score_kind`` names their family (``"float64"``, ``"float32"``, ``"int64"``,
    ``"uint64"``); ``y_rank`` is what the per-row pass reads, ``y_pos`` the
    positives (bool or packed bits); ``mask`` is None when every label is known;
    ``weight`` is None without ``sample_weight``; ``cut`` is the threshold placed
    among the scores (empty: nothing is predicted)."""

    s: NDArray[Any]
    score_kind: str
    y_rank: NDArray[Any]
    y_pos: NDArray[Any]
    mask: NDArray[np.bool_] | None
    weight: NDArray[np.float64] | None
    cut: NDArray[Any]

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, labels)``."""
        n, k = self.s.shape
        return int(n), int(k)


def _chunk_scores(raw: NDArray[Any], n_jobs: int | None) -> tuple[NDArray[Any], bool]:
    """Kernel scores of a chunk: as ``multilabel_report``'s, except that every uint64
    chunk is shifted (whatever its values), so that all chunks of a state agree."""
    if raw.dtype.kind == "u" and raw.dtype.itemsize == 8:
        return shift_uint64(np.ascontiguousarray(raw)), True
    return kernel_scores(raw, n_jobs)


def check_report_chunk(
    y_true: Any,
    y_score: Any,
    *,
    mask: Any = None,
    sample_weight: Any = None,
    threshold: float = 0.5,
    n_jobs: int | None = None,
) -> ReportChunk:
    """Check one chunk as ``multilabel_report`` checks its input (same messages) and
    return it in kernel form. ``n_jobs`` must already be checked."""
    y_rank, y_pos, raw, s, shifted, m, w = check_report_inputs(
        y_true, y_score, mask, sample_weight, n_jobs, scores=_chunk_scores
    )
    kind = "uint64" if shifted else str(s.dtype)
    cut = shift_uint64(threshold_cut(raw, threshold)) if shifted else threshold_cut(s, threshold)
    return ReportChunk(s=s, score_kind=kind, y_rank=y_rank, y_pos=y_pos, mask=m, weight=w, cut=cut)


def _zeros_i(k: int) -> NDArray[np.int64]:
    return np.zeros(k, dtype=np.int64)


def _zeros_f(k: int) -> NDArray[np.float64]:
    return np.zeros(k, dtype=np.float64)


@dataclass
class ReportTotals:
    """The additive part of ``multilabel_report`` over some rows (see the module
    docs). Integer counts are exact; float sums are added in chunk order.

    ``weighted`` says whether any chunk had ``sample_weight`` (then the thresholded
    figures use the ``*_w`` weighted counts, where rows without a weight count 1)."""

    n_labels: int
    n_samples: int = 0
    n_rows_without_known_label: int = 0
    row_sums: NDArray[np.float64] = field(default_factory=lambda: np.zeros(len(ROW_SUM_KEYS)))
    n_known: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    support: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    predicted: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    tp: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    weighted: bool = False
    tp_w: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    predicted_w: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    support_w: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    # Hamming loss: weighted differing known cells / weighted known cells.
    hamming_w: NDArray[np.float64] = field(default_factory=lambda: np.zeros(2))

    def __post_init__(self) -> None:
        k = self.n_labels
        for name in ("n_known", "support", "predicted", "tp"):
            if getattr(self, name).shape != (k,):
                setattr(self, name, _zeros_i(k))
        for name in ("tp_w", "predicted_w", "support_w"):
            if getattr(self, name).shape != (k,):
                setattr(self, name, _zeros_f(k))

    @classmethod
    def of_chunk(cls, c: ReportChunk, n_jobs: int | None) -> ReportTotals:
        """The totals of one checked chunk (one per-row pass, one count pass)."""
        n, k = c.shape
        t = cls(n_labels=k, n_samples=n, weighted=c.weight is not None)
        if n == 0:
            return t
        w_rows, n_without = known_row_weights(c.mask, c.weight, n)
        sums = _core.ranking_report_sums(c.y_rank, c.s, c.mask, w_rows, n_jobs)
        t.n_rows_without_known_label = n_without
        t.row_sums = np.array([float(sums[key]) for key in ROW_SUM_KEYS], dtype=np.float64)
        n_known, support, predicted, tp = _core.threshold_counts(
            c.s, c.y_pos, c.cut, c.mask, n_jobs
        )
        t.n_known, t.support = n_known.astype(np.int64), support.astype(np.int64)
        t.predicted, t.tp = predicted.astype(np.int64), tp.astype(np.int64)
        if c.weight is None:
            t.tp_w = t.tp.astype(np.float64)
            t.predicted_w = t.predicted.astype(np.float64)
            t.support_w = t.support.astype(np.float64)
            differ = (t.predicted - t.tp) + (t.support - t.tp)
            t.hamming_w = np.array([float(differ.sum()), float(t.n_known.sum())])
            return t
        w = c.weight
        pos = positives(c.y_pos, k)
        pred = predicted_cells(c.s, c.cut)
        if c.mask is not None:
            pos = pos & c.mask
            pred = pred & c.mask
        t.tp_w = weighted_counts(pos & pred, w, k)
        t.predicted_w = weighted_counts(pred, w, k)
        t.support_w = weighted_counts(pos, w, k)
        differ = np.count_nonzero(pos != pred, axis=1)
        if c.mask is None:
            known_cells = float(k) * float(w.sum())
        else:
            known_cells = float(np.dot(np.count_nonzero(c.mask, axis=1), w))
        t.hamming_w = np.array([float(np.dot(differ, w)), known_cells])
        return t

    def add(self, other: ReportTotals) -> None:
        """Add the totals of other rows (in place)."""
        if other.n_labels != self.n_labels:
            raise ValueError(f"cannot merge states of {self.n_labels} and {other.n_labels} labels")
        self.n_samples += other.n_samples
        self.n_rows_without_known_label += other.n_rows_without_known_label
        self.weighted = self.weighted or other.weighted
        for name in _ARRAYS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_arrays(self) -> dict[str, NDArray[Any]]:
        """The totals as named arrays (for pickling and saving)."""
        out: dict[str, NDArray[Any]] = {
            "counts": np.array(
                [
                    self.n_labels,
                    self.n_samples,
                    self.n_rows_without_known_label,
                    int(self.weighted),
                ],
                dtype=np.int64,
            )
        }
        out.update({name: np.array(getattr(self, name)) for name in _ARRAYS})
        return out

    @classmethod
    def from_arrays(cls, d: dict[str, NDArray[Any]]) -> ReportTotals:
        """Totals from :meth:`to_arrays`; a ``ValueError`` when something is missing
        or has the wrong shape."""
        try:
            counts = _exact(d["counts"], np.dtype(np.int64), "counts")
            if counts.shape != (4,):
                raise ValueError(f"counts has shape {counts.shape}, expected (4,)")
            k, n, n_without, weighted = (int(v) for v in counts)
            if k < 0 or not 0 <= n_without <= n or weighted not in (0, 1):
                raise ValueError(f"counts {counts.tolist()} are not counts")
            t = cls(n_labels=k, n_samples=n, n_rows_without_known_label=n_without)
            t.weighted = bool(weighted)
            for name in _ARRAYS:
                ref = getattr(t, name)
                v = _exact(d[name], ref.dtype, name)
                if v.shape != ref.shape:
                    raise ValueError(f"{name} has shape {v.shape}, expected {ref.shape}")
                setattr(t, name, v.copy())
            # Counts a real state always satisfies: a tampered or mismatched file is
            # refused here rather than turned into different figures.
            if not (
                np.all(t.tp >= 0)
                and np.all(t.tp <= t.predicted)
                and np.all(t.tp <= t.support)
                and np.all(t.predicted <= t.n_known)
                and np.all(t.support <= t.n_known)
                and np.all(t.n_known <= n)
            ):
                raise ValueError(
                    "per-label counts are inconsistent (0 <= tp <= predicted, support "
                    "<= n_known <= n_samples)"
                )
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise ValueError(f"not a saved multilabel_report state: {e}") from None
        return t


def _exact(value: Any, dtype: np.dtype[Any], name: str) -> NDArray[Any]:
    """``value`` as ``dtype`` when NumPy casts it there without loss of kind (integers
    stay integers: no float or string is read as a count)."""
    v = np.asarray(value)
    if not np.can_cast(v.dtype, dtype, casting="same_kind") or v.dtype.kind == "b":
        raise ValueError(f"{name} has dtype {v.dtype}, expected {dtype}")
    return v.astype(dtype)


_ARRAYS = (
    "row_sums",
    "n_known",
    "support",
    "predicted",
    "tp",
    "tp_w",
    "predicted_w",
    "support_w",
    "hamming_w",
)


@dataclass(frozen=True)
class BinaryFigures:
    """AP and ROC AUC per label and micro-averaged, with the kernels' flags (which
    say why a value is undefined; :func:`finish_report` turns them into
    scikit-learn's warnings and errors)."""

    ap: NDArray[np.float64]
    roc_auc: NDArray[np.float64]
    ap_flags: NDArray[np.uint8]
    roc_auc_flags: NDArray[np.uint8]
    ap_micro: float
    roc_auc_micro: float
    ap_micro_flags: int
    roc_auc_micro_flags: int


def warn_binary_flags(ap_flags: Any, roc_auc_flags: Any) -> None:
    """scikit-learn's warnings (and errors) for AP and ROC AUC flags of one or more
    problems, as ``multilabel_report`` emits them."""
    emit_flags(np.atleast_1d(np.asarray(ap_flags, dtype=np.uint8)), "average_precision")
    emit_flags(np.atleast_1d(np.asarray(roc_auc_flags, dtype=np.uint8)), "roc_auc")


def finish_report(t: ReportTotals, binary: BinaryFigures, threshold: float) -> MultilabelReport:
    """The ``multilabel_report`` dict of totals and AP/ROC AUC figures, with the
    warnings (and errors) ``multilabel_report`` gives for the same rows."""
    warn_binary_flags(
        np.append(binary.ap_flags, binary.ap_micro_flags),
        np.append(binary.roc_auc_flags, binary.roc_auc_micro_flags),
    )
    n, k = t.n_samples, t.n_labels
    sums = dict(zip(ROW_SUM_KEYS, (float(v) for v in t.row_sums), strict=True))
    n_without = t.n_rows_without_known_label
    if not t.weighted:
        f1, f1_micro, hamming = count_threshold_figures(t.tp, t.predicted, t.support, t.n_known)
    else:
        tp_w, pred_w, true_w = t.tp_w, t.predicted_w, t.support_w
        den = true_w + pred_w
        f1 = np.divide(2.0 * tp_w, den, out=np.zeros_like(tp_w), where=den != 0)
        micro_d = float(true_w.sum() + pred_w.sum())
        f1_micro = 2.0 * float(tp_w.sum()) / micro_d if micro_d != 0 else 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            hamming = float(np.float64(t.hamming_w[0]) / np.float64(t.hamming_w[1]))
    with np.errstate(all="ignore"):
        ap_macro = float(np.mean(binary.ap)) if k else float("nan")
        auc_macro = float(np.mean(binary.roc_auc)) if k else float("nan")
        f1_macro = float(f1.mean()) if k else float("nan")
    rows = per_row_means(sums, n, n_without)
    return MultilabelReport(
        n_samples=n,
        n_labels=k,
        n_rows_without_known_label=n_without,
        support=t.support.copy(),
        n_negative=t.n_known - t.support,
        n_unknown=np.int64(n) - t.n_known,
        ap=np.asarray(binary.ap, dtype=np.float64),
        ap_macro=ap_macro,
        ap_micro=float(binary.ap_micro),
        roc_auc=np.asarray(binary.roc_auc, dtype=np.float64),
        roc_auc_macro=auc_macro,
        roc_auc_micro=float(binary.roc_auc_micro),
        **rows,
        threshold=float(threshold),
        f1=f1,
        f1_micro=f1_micro,
        f1_macro=f1_macro,
        hamming_loss=hamming,
    )
