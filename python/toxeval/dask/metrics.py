"""The public functions of ``toxeval.dask``: the in-memory drop-ins' signatures on
Dask collections. Each builds per-block states (``toxeval.dask.states``), merges
them in a tree of tasks (``toxeval.dask.tree``) and finishes on the client; where a
label's runs of distinct scores would not fit a worker (continuous scores, large N),
``multilabel_report`` and AP/ROC AUC go through range partitions by score instead
(``toxeval.dask.ranges``), chosen from a first cheap pass or forced by ``n_ranges``.

``*_graph`` functions return the merged state as one ``Delayed`` without computing
it, for callers who compute it themselves (``client.compute`` with a progress bar or
a timeout: the CLI does).
"""

from __future__ import annotations

import warnings
from typing import Any

import dask.array as da
import numpy as np
from dask.delayed import Delayed
from numpy.typing import NDArray

from toxeval import metrics
from toxeval.dask.blocks import row_blocks
from toxeval.dask.budget import state_budget
from toxeval.dask.ranges import (
    Plan,
    Survey,
    plan_ranges,
    ranged_figures,
    ranged_report,
    survey_graph,
    tree_suffices,
)
from toxeval.dask.states import (
    BinaryState,
    RowSums,
    binary_block,
    binary_merge,
    report_block,
    report_merge,
    row_block,
    row_merge,
)
from toxeval.dask.tree import compute_one, task, tree_reduce
from toxeval.metrics import (
    MultilabelReport,
    UndefinedMetricWarning,
    warn_binary_flags,
    warning_category,
    weighted_mean,
)
from toxeval.outofcore.states import TREE, choose_path
from toxeval.streaming import LabelRuns, MultilabelAccumulator

__all__ = [
    "accumulate",
    "accumulator_graph",
    "average_precision_score",
    "coverage_error",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "label_runs",
    "multilabel_report",
    "ndcg_score",
    "roc_auc_score",
]

_AVERAGES = (None, "micro", "macro", "weighted", "samples")


def _blocks(y_true: Any, y_score: Any, mask: Any, sample_weight: Any) -> list[tuple[Any, ...]]:
    return row_blocks(y_true, y_score, mask, sample_weight)


def _route(
    blocks: list[tuple[Any, ...]],
    y_score: Any,
    n_ranges: int | None,
    memory_limit: str | int | None,
    report: dict[str, Any] | None,
    *,
    labels: bool = True,
    micro: bool = False,
) -> tuple[Survey, Plan] | None:
    """None for the tree merge of runs; else the survey and the range plan. The tree
    when ``n_ranges`` is None and the state fits: an array of known shape small
    enough (no pass needed), or a survey whose sample shows few distinct scores or
    whose rows are few (the out-of-core rule, ``choose_path``)."""
    state_bytes, workers = state_budget(memory_limit)
    if n_ranges is None and isinstance(y_score, da.Array) and not np.isnan(y_score.shape[0]):
        shape = y_score.shape
        k = 1 if len(shape) == 1 else int(shape[1])
        if choose_path(int(shape[0]), k, None, state_bytes) == TREE:
            return None
    survey: Survey = compute_one(survey_graph(blocks, report))
    if n_ranges is None and tree_suffices(survey, state_bytes):
        return None
    plan = plan_ranges(
        survey,
        n_ranges=n_ranges,
        state_bytes=state_bytes,
        n_workers=workers,
        labels=labels,
        micro=micro,
    )
    return survey, plan


# ------------------------------------------------------------------ multilabel_report


def accumulator_graph(
    y_true: Any,
    y_score: Any,
    *,
    mask: Any = None,
    sample_weight: Any = None,
    threshold: float = 0.5,
    n_jobs: int | None = 1,
    split_every: int = 8,
) -> Delayed:
    """The merged ``MultilabelAccumulator`` of every row, as one ``Delayed``
    (nothing computed). ``n_jobs``: native threads per task (1 suits one-thread
    workers; None = every core of the worker's machine)."""
    MultilabelAccumulator(threshold=threshold, n_jobs=n_jobs)  # argument checks, here
    opts = {"threshold": threshold, "n_jobs": n_jobs, "keep_runs": True}
    block = task(report_block)
    states = [block(*b, **opts) for b in _blocks(y_true, y_score, mask, sample_weight)]
    return tree_reduce(states, report_merge, split_every=split_every, **opts)


def accumulate(
    y_true: Any,
    y_score: Any,
    *,
    mask: Any = None,
    sample_weight: Any = None,
    threshold: float = 0.5,
    n_jobs: int | None = 1,
    split_every: int = 8,
) -> MultilabelAccumulator:
    """The merged ``toxeval.streaming.MultilabelAccumulator`` of every row (computed);
    ``compute()`` on it gives the report, ``save()`` keeps it."""
    graph = accumulator_graph(
        y_true,
        y_score,
        mask=mask,
        sample_weight=sample_weight,
        threshold=threshold,
        n_jobs=n_jobs,
        split_every=split_every,
    )
    acc: MultilabelAccumulator = compute_one(graph)
    return acc


def multilabel_report(
    y_true: Any,
    y_score: Any,
    *,
    mask: Any = None,
    sample_weight: Any = None,
    threshold: float = 0.5,
    n_jobs: int | None = 1,
    split_every: int = 8,
    n_ranges: int | None = None,
    memory_limit: str | int | None = None,
) -> MultilabelReport:
    """``toxeval.metrics.multilabel_report`` of Dask collections: ``y_true`` and
    ``y_score`` (n_samples, n_labels) dask arrays or dataframes, ``mask`` likewise,
    ``sample_weight`` a 1-D dask array or series. Same dict, same warnings.

    AP and ROC AUC (per label and micro) come from a tree merge of each label's runs
    when they fit a worker, else from range partitions by score (no worker or client
    holds a label's runs): chosen by a first pass over the data, or forced with
    ``n_ranges`` (ranges, shared by every label). ``memory_limit``: the bytes one worker may use
    (``"2GB"``; default 2 GiB, or half the smallest worker's limit), which sizes the
    ranges and the passes over the data."""
    MultilabelAccumulator(threshold=threshold, n_jobs=n_jobs)  # argument checks, here
    blocks = _blocks(y_true, y_score, mask, sample_weight)
    route = _route(
        blocks,
        y_score,
        n_ranges,
        memory_limit,
        {"threshold": threshold, "n_jobs": n_jobs},
        micro=True,
    )
    if route is None:
        merged = accumulate(
            y_true,
            y_score,
            mask=mask,
            sample_weight=sample_weight,
            threshold=threshold,
            n_jobs=n_jobs,
            split_every=split_every,
        )
        if merged.n_samples == 0:
            return _of_no_rows(y_score, "multilabel_report", threshold=threshold)  # type: ignore[no-any-return]
        return merged.compute()
    if route[0].rows == 0:
        return _of_no_rows(y_score, "multilabel_report", threshold=threshold)  # type: ignore[no-any-return]
    acc, binary = ranged_report(blocks, *route)
    return acc.compute(binary=binary)


def _n_labels(y_score: Any) -> int:
    """The columns of a Dask array or dataframe of scores (1 for 1-D input)."""
    if isinstance(y_score, da.Array):
        return 1 if y_score.ndim == 1 else int(y_score.shape[1])
    columns = getattr(y_score, "columns", None)
    return 1 if columns is None else len(columns)


def _of_no_rows(y_score: Any, name: str, **kwargs: Any) -> Any:
    """What the in-memory function ``name`` gives for input of no rows of this shape
    (its value, warnings or error: scikit-learn's)."""
    shape = (0,) if getattr(y_score, "ndim", 2) == 1 else (0, _n_labels(y_score))
    return getattr(metrics, name)(np.zeros(shape, np.int64), np.zeros(shape), **kwargs)


# ------------------------------------------------------------------ AP / ROC AUC


def _binary_graph(
    y_true: Any, y_score: Any, mask: Any, sample_weight: Any, micro: bool, split_every: int
) -> Delayed:
    block = task(binary_block)
    states = [
        block(*b, micro=micro, n_jobs=1) for b in _blocks(y_true, y_score, mask, sample_weight)
    ]
    return tree_reduce(states, binary_merge, split_every=split_every)


def label_runs(
    y_true: Any, y_score: Any, *, mask: Any = None, sample_weight: Any = None, split_every: int = 8
) -> list[LabelRuns]:
    """Each label's ``LabelRuns`` (distinct scores with positive and negative weights)
    over every row, merged on the cluster."""
    state = compute_one(_binary_graph(y_true, y_score, mask, sample_weight, False, split_every))
    if state.labels is None:
        raise ValueError("toxeval.dask: the input has no rows")
    return list(state.labels)


def _binary_score(
    metric: str,
    y_true: Any,
    y_score: Any,
    average: Any,
    sample_weight: Any,
    mask: Any,
    split_every: int,
    n_ranges: int | None = None,
    memory_limit: str | int | None = None,
) -> Any:
    if average not in _AVERAGES:
        raise ValueError(f"average has to be one of {_AVERAGES}")
    one_label = getattr(y_score, "ndim", 2) == 1
    name = "average_precision_score" if metric == "average_precision" else "roc_auc_score"
    if average == "samples" and not one_label:
        return _row_metric(name, y_true, y_score, sample_weight, mask, split_every, average=average)
    micro = average == "micro" and not one_label
    pick = 0 if metric == "average_precision" else 1
    none = np.zeros(0, dtype=np.uint8)

    def emit(flags: Any) -> None:
        warn_binary_flags(flags, none) if pick == 0 else warn_binary_flags(none, flags)

    blocks = _blocks(y_true, y_score, mask, sample_weight)
    route = _route(blocks, y_score, n_ranges, memory_limit, None, labels=not micro, micro=micro)
    if route is not None:
        if route[0].rows == 0:
            return _of_no_rows(y_score, name, average=average)
        figs, micro_fig, pos_weight = ranged_figures(blocks, route[1])
        if micro_fig is not None:
            emit(micro_fig[2 + pick])
            return float(micro_fig[pick])
    else:
        state = compute_one(_binary_graph(y_true, y_score, mask, sample_weight, micro, split_every))
        if not isinstance(state, BinaryState) or state.labels is None:
            return _of_no_rows(y_score, name, average=average)
        if micro:
            assert state.micro is not None
            fig = state.micro.figures()
            emit(fig[2 + pick])
            return float(fig[pick])
        figs = [r.figures() for r in state.labels]
        pos_weight = np.array([r.pos.sum() for r in state.labels], dtype=np.float64)
    values: NDArray[np.float64] = np.array([f[pick] for f in figs], dtype=np.float64)
    flags = np.array([f[2 + pick] for f in figs], dtype=np.uint8)
    support = None
    if average == "weighted" and not one_label:
        support = pos_weight
        if bool(np.isclose(np.sum(support), 0)):
            return 0
    emit(flags)
    if one_label:
        return float(values[0])
    if average is None:
        return values
    return weighted_mean(values, support)


def average_precision_score(
    y_true: Any,
    y_score: Any,
    *,
    average: str | None = "macro",
    sample_weight: Any = None,
    mask: Any = None,
    split_every: int = 8,
    n_ranges: int | None = None,
    memory_limit: str | int | None = None,
) -> Any:
    """``toxeval.metrics.average_precision_score`` of Dask collections (1-D binary or
    (n_samples, n_labels) multi-label; every ``average``). Per-label and micro figures
    go through range partitions by score where the runs would not fit a worker, as in
    :func:`multilabel_report` (``n_ranges`` forces them, ``memory_limit`` sizes them)."""
    return _binary_score(
        "average_precision",
        y_true,
        y_score,
        average,
        sample_weight,
        mask,
        split_every,
        n_ranges,
        memory_limit,
    )


def roc_auc_score(
    y_true: Any,
    y_score: Any,
    *,
    average: str | None = "macro",
    sample_weight: Any = None,
    mask: Any = None,
    split_every: int = 8,
    n_ranges: int | None = None,
    memory_limit: str | int | None = None,
) -> Any:
    """``toxeval.metrics.roc_auc_score`` of Dask collections (1-D binary or
    (n_samples, n_labels) multi-label; every ``average``; no ``max_fpr``). Per-label and
    micro figures go through range partitions by score where the runs would not fit a
    worker, as in :func:`multilabel_report` (``n_ranges`` forces them, ``memory_limit``
    sizes them)."""
    return _binary_score(
        "roc_auc",
        y_true,
        y_score,
        average,
        sample_weight,
        mask,
        split_every,
        n_ranges,
        memory_limit,
    )


# ------------------------------------------------------------------ per-row metrics

# One row of each kind: the undefined case (no row with a known label, or weights
# summing to zero) is handed to the in-memory function, so its error or warning is
# the in-memory one.
_ONE_ROW_TRUE = np.array([[1, 0]])
_ONE_ROW_SCORE = np.array([[0.75, 0.25]])


def _row_metric(
    name: str,
    y_true: Any,
    y_score: Any,
    sample_weight: Any,
    mask: Any,
    split_every: int,
    **kwargs: Any,
) -> float:
    block = task(row_block)
    states = [
        block(*b, name=name, kwargs=kwargs) for b in _blocks(y_true, y_score, mask, sample_weight)
    ]
    sums = compute_one(tree_reduce(states, row_merge, split_every=split_every))
    assert isinstance(sums, RowSums)
    for category, message in sums.warnings:
        warnings.warn(message, _as_here(category), stacklevel=3)
    if sums.weight == 0.0:
        return _undefined(name, sums, mask is not None, kwargs)
    return float(sums.total / sums.weight)


def _undefined(name: str, sums: RowSums, masked: bool, kwargs: dict[str, Any]) -> float:
    """The in-memory function's own error or value (NaN with its warning) where no
    row counts, from one row of the same kind; warnings the blocks gave already are
    not repeated."""
    func = getattr(metrics, name)
    seen: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            if sums.known_rows == 0 and masked:
                mask = np.zeros((1, 2), bool)
                value = float(func(_ONE_ROW_TRUE, _ONE_ROW_SCORE, mask=mask, **kwargs))
            else:
                w = np.zeros(1)
                value = float(func(_ONE_ROW_TRUE, _ONE_ROW_SCORE, sample_weight=w, **kwargs))
    finally:
        # replayed once recording has stopped (a warning issued while recording would be
        # appended to the list being replayed)
        said = {(_as_here(c), m) for c, m in sums.warnings}
        for x in seen:
            if (x.category, str(x.message)) not in said:
                warnings.warn(x.message, x.category, stacklevel=4)
    return value


def _as_here(category: type[Warning]) -> type[Warning]:
    """A warning class a worker recorded, as this process emits it: toxeval's
    ``UndefinedMetricWarning`` is bridged to scikit-learn's class where scikit-learn is
    imported (toxeval.metrics does so in memory), and a worker that never imported it
    records the plain class."""
    if issubclass(category, UndefinedMetricWarning):
        bridged: type[Warning] = warning_category(
            UndefinedMetricWarning, "sklearn.exceptions", "UndefinedMetricWarning"
        )
        return bridged
    return category


def label_ranking_loss(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, mask: Any = None, split_every: int = 8
) -> float:
    """``toxeval.metrics.label_ranking_loss`` of Dask collections."""
    return _row_metric("label_ranking_loss", y_true, y_score, sample_weight, mask, split_every)


def label_ranking_average_precision_score(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, mask: Any = None, split_every: int = 8
) -> float:
    """``toxeval.metrics.label_ranking_average_precision_score`` of Dask collections."""
    return _row_metric(
        "label_ranking_average_precision_score", y_true, y_score, sample_weight, mask, split_every
    )


def coverage_error(
    y_true: Any, y_score: Any, *, sample_weight: Any = None, mask: Any = None, split_every: int = 8
) -> float:
    """``toxeval.metrics.coverage_error`` of Dask collections."""
    return _row_metric("coverage_error", y_true, y_score, sample_weight, mask, split_every)


def ndcg_score(
    y_true: Any,
    y_score: Any,
    *,
    k: int | None = None,
    sample_weight: Any = None,
    ignore_ties: bool = False,
    mask: Any = None,
    split_every: int = 8,
) -> float:
    """``toxeval.metrics.ndcg_score`` of Dask collections."""
    return _row_metric(
        "ndcg_score",
        y_true,
        y_score,
        sample_weight,
        mask,
        split_every,
        k=k,
        ignore_ties=ignore_ties,
    )
