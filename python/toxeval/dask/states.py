"""What each block task builds and each merge task combines (plain functions, so
Dask pickles them by reference): the ``multilabel_report`` accumulator, the
per-label (and micro) runs of AP/ROC AUC, and the weighted row sums of the per-row
metrics. Everything here runs on the workers; nothing here imports Dask."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from toxeval import metrics
from toxeval.dask.blocks import as_numpy
from toxeval.streaming import LabelRuns, MultilabelAccumulator

__all__ = [
    "ROW_METRICS",
    "BinaryState",
    "RowSums",
    "binary_block",
    "binary_merge",
    "report_block",
    "report_merge",
    "row_block",
    "row_merge",
]


# ------------------------------------------------------------------ multilabel_report


def report_block(
    y_true: Any,
    y_score: Any,
    mask: Any,
    weight: Any,
    *,
    threshold: Any,
    n_jobs: Any,
    keep_runs: bool,
) -> MultilabelAccumulator:
    """The accumulator of one block (an empty one for a block of no rows)."""
    acc = MultilabelAccumulator(threshold=threshold, n_jobs=n_jobs, keep_runs=keep_runs)
    yt, ys = as_numpy(y_true), as_numpy(y_score)
    if np.shape(yt)[0] == 0 and np.shape(ys)[0] == 0:
        return acc
    acc.update(yt, ys, mask=as_numpy(mask), sample_weight=as_numpy(weight))
    return acc


def report_merge(
    *states: MultilabelAccumulator, threshold: Any, n_jobs: Any, keep_runs: bool
) -> MultilabelAccumulator:
    """A new accumulator holding every state's rows (the inputs are not changed: a
    retried task sees them as they were)."""
    out = MultilabelAccumulator(threshold=threshold, n_jobs=n_jobs, keep_runs=keep_runs)
    for s in states:
        out.merge(s)
    return out


# ------------------------------------------------------------------ AP / ROC AUC


class BinaryState(NamedTuple):
    """Runs per label (``labels``) and of the raveled matrix (``micro``, when asked);
    ``None`` for a block of no rows."""

    labels: list[LabelRuns] | None
    micro: LabelRuns | None


def _as_2d(x: Any) -> Any:
    x = as_numpy(x)
    return None if x is None else (x.reshape(-1, 1) if x.ndim == 1 else x)


def binary_block(
    y_true: Any, y_score: Any, mask: Any, weight: Any, *, micro: bool, n_jobs: Any
) -> BinaryState:
    """The runs of one block."""
    yt, ys, m = _as_2d(y_true), _as_2d(y_score), _as_2d(mask)
    w = as_numpy(weight)
    if yt.shape != ys.shape:
        raise ValueError(
            f"y_true and y_score must be of one shape; got {yt.shape} and {ys.shape} in a block"
        )
    if yt.shape[0] == 0:
        return BinaryState(None, None)
    labels = LabelRuns.from_matrix(yt, ys, mask=m, sample_weight=w, n_jobs=n_jobs)
    flat = None
    if micro:
        k = yt.shape[1]
        flat = LabelRuns.from_scores(
            yt.ravel(),
            ys.ravel(),
            mask=None if m is None else m.ravel(),
            sample_weight=None if w is None else np.repeat(np.asarray(w, dtype=np.float64), k),
        )
    return BinaryState(labels, flat)


def binary_merge(*states: BinaryState) -> BinaryState:
    """The runs of the union of the blocks' rows."""
    full = [s for s in states if s.labels is not None]
    if not full:
        return BinaryState(None, None)
    k = {len(s.labels) for s in full if s.labels is not None}
    if len(k) > 1:
        raise ValueError(f"blocks have different numbers of labels: {sorted(k)}")
    labels = [
        LabelRuns.merge_all(col) for col in zip(*(s.labels for s in full if s.labels), strict=True)
    ]
    micro = [s.micro for s in full if s.micro is not None]
    return BinaryState(labels, LabelRuns.merge_all(micro) if micro else None)


# ------------------------------------------------------------------ per-row metrics

ROW_METRICS: dict[str, Callable[..., float]] = {
    "label_ranking_loss": metrics.label_ranking_loss,
    "label_ranking_average_precision_score": metrics.label_ranking_average_precision_score,
    "coverage_error": metrics.coverage_error,
    "ndcg_score": metrics.ndcg_score,
    "average_precision_score": metrics.average_precision_score,
    "roc_auc_score": metrics.roc_auc_score,
}


class RowSums(NamedTuple):
    """A per-row metric's weighted row sum, the weight it is divided by, the rows
    with a known label, and the warnings the blocks gave (category, message; each
    once, in order of first appearance), replayed on the client."""

    total: float
    weight: float
    known_rows: int
    warnings: tuple[tuple[type[Warning], str], ...] = ()


def row_block(
    y_true: Any, y_score: Any, mask: Any, weight: Any, *, name: str, kwargs: dict[str, Any]
) -> RowSums:
    """The weighted row sum of one block: the in-memory metric (all its checks) times
    the weight of the rows it averages over."""
    yt, ys, m, w = (as_numpy(a) for a in (y_true, y_score, mask, weight))
    n = np.shape(ys)[0]
    if n == 0 and np.shape(yt)[0] == 0:
        return RowSums(0.0, 0.0, 0)
    counted = np.ones(n, dtype=bool) if m is None else np.asarray(m, dtype=bool).any(axis=1)
    known = int(counted.sum())
    wsum = float(known) if w is None else float(np.asarray(w, dtype=np.float64)[counted].sum())
    extra = {} if m is None else {"mask": m}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            value = ROW_METRICS[name](yt, ys, sample_weight=w, **extra, **kwargs)
        except ZeroDivisionError:  # every weight 0 here: nothing to add, warnings kept
            if wsum != 0.0:
                raise
            value = 0.0
    said = _unique((x.category, str(x.message)) for x in seen)
    if wsum == 0.0:  # no row counts here (the in-memory mean may still be defined)
        # numpy's 0/0 of this block's own weighted mean is an artifact of the split:
        # the whole data gives it only when no row counts anywhere, and then the client
        # replays the in-memory function's own warnings (metrics._undefined)
        said = tuple((c, m) for c, m in said if not issubclass(c, RuntimeWarning))
        return RowSums(0.0, 0.0, known, said)
    return RowSums(float(value) * wsum, wsum, known, said)


def _unique(items: Any) -> tuple[tuple[type[Warning], str], ...]:
    out: dict[tuple[type[Warning], str], None] = {}
    for item in items:
        out.setdefault(item, None)
    return tuple(out)


def row_merge(*sums: RowSums) -> RowSums:
    """Sums of disjoint blocks add."""
    return RowSums(
        float(sum(s.total for s in sums)),
        float(sum(s.weight for s in sums)),
        int(sum(s.known_rows for s in sums)),
        _unique(w for s in sums for w in s.warnings),
    )
