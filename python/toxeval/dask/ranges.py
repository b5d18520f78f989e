"""AP and ROC AUC per label (and micro-averaged) through range partitions by score, so
that no worker and not the client holds a label's whole state: the path for
continuous scores at large N, where a label's runs of distinct scores are as large as
the data.

1. **Survey** (one cheap pass, :func:`survey_graph`): each block gives a strided
   sample of its order keys (``toxeval.streaming.score_keys``), its known cells per
   label and, for ``multilabel_report``, the report's additive totals
   (``MultilabelAccumulator(keep_runs=False)``: O(labels)); these are tree-merged to
   the client.
2. **Plan** (:func:`plan_ranges`, on the client): from the sample, each label's
   splitters (a range is ``lo <= key < hi``, so equal scores never straddle two
   ranges); from the known cells and a memory target per worker, how many ranges
   each label needs (one range, reduced by one task, fits the target) and how many
   passes over the data (the cells of one pass, held on the workers, fit the
   target on every worker).
3. **Passes**, highest scores first: each block task keeps the known cells of the
   pass's ranges (score, label, weight: 5 bytes a cell for float32 unweighted
   scores), bucketed by range; for every label a chain of tasks, highest range
   first, gathers one range's cells from every block, turns them into runs
   (``LabelRuns.from_scores``) and feeds them to the label's
   ``toxeval.streaming.RunsReducer``, whose state (a few numbers: the positive and
   negative weight above) moves from task to task.

The client receives the survey and, per pass, one reducer per label. The splitters
only balance the ranges; exactness never depends on them (the reducer gives
scikit-learn's figures over all the cells it was fed).
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from toxeval.dask.blocks import as_numpy
from toxeval.dask.states import report_block, report_merge
from toxeval.dask.tree import compute_one, task, tree_reduce
from toxeval.metrics import BinaryFigures
from toxeval.outofcore.ranges import quantile_splitters, range_slices
from toxeval.outofcore.states import TREE, choose_path
from toxeval.streaming import (
    LabelRuns,
    MultilabelAccumulator,
    PairFigures,
    RunsReducer,
    binary_figures,
    score_keys,
)

__all__ = [
    "Plan",
    "Survey",
    "plan_ranges",
    "ranged_figures",
    "ranged_report",
    "survey_block",
    "survey_graph",
    "survey_merge",
    "tree_suffices",
]

SAMPLE_PER_BLOCK = 2048
# Rows of the merged sample kept on the client (a strided subsample beyond it).
SAMPLE_MAX = 1 << 16
# Bytes a reduce task holds per cell of its range: the cells gathered from the blocks
# and their concatenation, the order keys and the sort's buffer, the runs (24 bytes
# per distinct score).
REDUCE_BYTES_PER_CELL = 80


def _as_2d(x: Any) -> Any:
    x = as_numpy(x)
    return None if x is None else (x.reshape(-1, 1) if x.ndim == 1 else x)


# ------------------------------------------------------------------ 1. survey


class Survey(NamedTuple):
    """What the first pass learns: a strided sample of rows' order keys (n, K), the
    known cells per label, rows, whether any block is weighted, the scores' item size,
    and the report's totals (``None`` for AP/ROC AUC alone)."""

    sample: NDArray[np.uint64]
    known: NDArray[np.int64]
    rows: int
    weighted: bool
    itemsize: int
    acc: MultilabelAccumulator | None


def survey_block(
    y_true: Any, y_score: Any, mask: Any, weight: Any, *, report: dict[str, Any] | None
) -> Survey:
    """The survey of one block, checked as the tree path checks it: as
    ``multilabel_report`` (the accumulator's totals, when ``report`` holds its
    settings), or as ``LabelRuns.from_matrix`` for AP and ROC AUC."""
    yt, ys, m = _as_2d(y_true), _as_2d(y_score), _as_2d(mask)
    w = as_numpy(weight)
    acc = None
    if report is not None:
        acc = report_block(yt, ys, m, w, keep_runs=False, **report)
    else:  # the checks (and errors) of the tree path's LabelRuns.from_matrix
        LabelRuns.check_matrix(yt, ys, mask=m, sample_weight=w)
    n, k = ys.shape
    step = max(1, n // SAMPLE_PER_BLOCK)
    sample = np.zeros((0, k), dtype=np.uint64)
    if n:
        sample = np.column_stack(
            [score_keys(np.ascontiguousarray(ys[::step, j])) for j in range(k)]
        )
    known = np.full(k, n, np.int64) if m is None else np.asarray(m, bool).sum(0).astype(np.int64)
    item = 4 if ys.dtype == np.float32 else 8
    return Survey(sample, known, n, w is not None, item, acc)


def survey_merge(*parts: Survey) -> Survey:
    """The survey of the union of the blocks' rows."""
    ks = {p.known.size for p in parts if p.rows}
    if len(ks) > 1:
        raise ValueError(f"blocks have different numbers of labels: {sorted(ks)}")
    full = [p for p in parts if p.rows] or list(parts[:1])
    sample = np.concatenate([p.sample for p in full])
    if sample.shape[0] > SAMPLE_MAX:
        sample = sample[:: -(-sample.shape[0] // SAMPLE_MAX)]
    accs = [p.acc for p in parts if p.acc is not None]
    acc = None
    if accs:
        a0 = accs[0]
        acc = report_merge(*accs, threshold=a0.threshold, n_jobs=a0.n_jobs, keep_runs=False)
    return Survey(
        sample,
        np.sum([p.known for p in full], axis=0).astype(np.int64),
        sum(p.rows for p in parts),
        any(p.weighted for p in parts),
        max(p.itemsize for p in parts),
        acc,
    )


def survey_graph(blocks: list[tuple[Any, ...]], report: dict[str, Any] | None) -> Any:
    """The merged :class:`Survey` of the row blocks, as one ``Delayed``."""
    block = task(survey_block)
    return tree_reduce([block(*b, report=report) for b in blocks], survey_merge, split_every=32)


def tree_suffices(survey: Survey, state_bytes: int) -> bool:
    """Whether the tree merge of runs fits: the out-of-core rule
    (``toxeval.outofcore.states.choose_path``: few distinct scores in the sample, or a
    small input)."""
    k = survey.sample.shape[1] if survey.sample.ndim == 2 else 0
    return choose_path(survey.rows, k, survey.sample, state_bytes) == TREE


# ------------------------------------------------------------------ 2. plan


class Plan(NamedTuple):
    """Per target (each label, then the raveled matrix for micro averages when asked)
    its splitters; per pass, highest first, each target's range numbers [a, b)."""

    bounds: list[NDArray[np.uint64]]
    passes: list[list[tuple[int, int]]]
    micro: bool
    labels: bool

    @property
    def n_ranges(self) -> int:
        """The most ranges of any target."""
        return max((b.size + 1 for b in self.bounds), default=1)


def plan_ranges(
    survey: Survey,
    *,
    n_ranges: int | None,
    state_bytes: int,
    n_workers: int,
    labels: bool = True,
    micro: bool = False,
) -> Plan:
    """Splitters and passes for ``survey``'s data: ``n_ranges`` per target when given,
    else as many as make one range's reduce task fit ``state_bytes``; passes so that
    the cells of one pass fit ``state_bytes`` on each of ``n_workers`` workers."""
    if n_ranges is not None and (
        isinstance(n_ranges, bool) or not isinstance(n_ranges, int) or n_ranges < 1
    ):
        raise ValueError(f"n_ranges must be an int >= 1; got {n_ranges!r}")
    targets: list[tuple[NDArray[np.uint64], int]] = []
    if labels:
        targets += [(survey.sample[:, j], int(survey.known[j])) for j in range(survey.known.size)]
    if micro:
        targets.append((survey.sample.ravel(), int(survey.known.sum())))
    cell = survey.itemsize + 1 + (8 if survey.weighted else 0)
    total = sum(c for _, c in targets) * cell
    n_passes = max(1, -(-total // max(1, n_workers * state_bytes)))
    bounds = []
    for keys, cells in targets:
        r = n_ranges
        if r is None:
            r = max(n_passes, -(-cells * REDUCE_BYTES_PER_CELL // max(1, state_bytes)))
        bounds.append(quantile_splitters(np.unique(keys), r))
    n_passes = min(n_passes, max((b.size + 1 for b in bounds), default=1))
    passes = []
    for p in reversed(range(n_passes)):
        spans = []
        for b in bounds:
            r = b.size + 1
            spans.append((p * r // n_passes, (p + 1) * r // n_passes))
        passes.append(spans)
    return Plan(bounds, passes, micro, labels)


# ------------------------------------------------------------------ 3. passes


class Cells(NamedTuple):
    """Known cells of one range of one target in one block (scores in their own
    dtype, positive flags, weights or None)."""

    scores: NDArray[Any]
    positive: NDArray[np.bool_]
    weight: NDArray[np.float64] | None


def _bucket(
    out: dict[tuple[int, int], Cells],
    t: int,
    rank: NDArray[np.intp],
    n_ranges: int,
    scores: NDArray[Any],
    positive: NDArray[np.bool_],
    weight: NDArray[np.float64] | None,
) -> None:
    if scores.size == 0:
        return
    if n_ranges == 1:
        out[(t, 0)] = Cells(scores, positive, weight)
        return
    order, slices = range_slices(rank, n_ranges)
    s, y = scores[order], positive[order]
    w = None if weight is None else weight[order]
    for g, a, b in slices:
        out[(t, g)] = Cells(s[a:b], y[a:b], None if w is None else w[a:b])


def cut_block(
    y_true: Any,
    y_score: Any,
    mask: Any,
    weight: Any,
    *,
    bounds: list[NDArray[np.uint64]],
    spans: list[tuple[int, int]],
    labels: bool,
    micro: bool,
) -> dict[tuple[int, int], Cells]:
    """The known cells of one block in the pass's ranges, keyed by (target, range)."""
    ys = _as_2d(y_score)
    n, k = ys.shape
    out: dict[tuple[int, int], Cells] = {}
    if n == 0:
        return out
    # one column at a time, contiguous: the transposes cost one pass each
    scores = np.ascontiguousarray(ys.T)
    positive = np.ascontiguousarray(np.asarray(_as_2d(y_true)).T) == 1
    m = _as_2d(mask)
    known = None if m is None else np.ascontiguousarray(np.asarray(m, dtype=bool).T)
    w = as_numpy(weight)
    w = None if w is None else np.asarray(w, dtype=np.float64)
    mt = k if labels else 0
    micro_parts: dict[int, list[Cells]] = {}
    for j in range(k):
        keys = score_keys(scores[j])
        for t in ([j] if labels else []) + ([mt] if micro else []):
            a, b = spans[t]
            if a >= b:
                continue
            n_ranges = bounds[t].size + 1
            rank = np.searchsorted(bounds[t], keys, side="right")
            s, y, wj = scores[j], positive[j], w
            if a > 0 or b < n_ranges or known is not None:
                sel = (rank >= a) & (rank < b)
                if known is not None:
                    sel &= known[j]
                idx = np.flatnonzero(sel)
                rank, s, y = rank[idx], s[idx], y[idx]
                wj = None if w is None else w[idx]
            if t == mt and micro:
                part: dict[tuple[int, int], Cells] = {}
                _bucket(part, t, rank, n_ranges, s, y, wj)
                for (_, g), piece in part.items():
                    micro_parts.setdefault(g, []).append(piece)
            else:
                _bucket(out, t, rank, n_ranges, s, y, wj)
    for g, pieces in micro_parts.items():
        out[(mt, g)] = Cells(
            np.concatenate([c.scores for c in pieces]),
            np.concatenate([c.positive for c in pieces]),
            None
            if w is None
            else np.concatenate([c.weight for c in pieces if c.weight is not None]),
        )
    return out


def _pick(cells: dict[tuple[int, int], Cells], key: tuple[int, int]) -> Cells | None:
    return cells.get(key)


class Reduction(NamedTuple):
    """A target's reducer (the ranges fed so far) and its positive weight."""

    reducer: RunsReducer
    pos_weight: float


def reduce_range(state: Reduction, *pieces: Cells | None) -> Reduction:
    """``state`` fed one more range (lower than every range fed before): the runs of
    every block's cells of it. A new state: the input is not changed (a retried task
    sees it as it was)."""
    full = [p for p in pieces if p is not None and p.scores.size]
    if not full:
        return state
    weights = None
    if any(p.weight is not None for p in full):
        weights = np.concatenate(
            [p.weight if p.weight is not None else np.ones(p.scores.size) for p in full]
        )
    runs = LabelRuns.from_scores(
        np.concatenate([p.positive for p in full]),
        np.concatenate([p.scores for p in full]),
        sample_weight=weights,
    )
    reducer = copy.copy(state.reducer)
    reducer.feed(runs)
    return Reduction(reducer, state.pos_weight + float(np.sum(runs.pos)))


def ranged_figures(
    blocks: list[tuple[Any, ...]], plan: Plan
) -> tuple[list[PairFigures], PairFigures | None, NDArray[np.float64]]:
    """Each label's AP/ROC AUC figures (no warnings emitted; none when the plan has no
    labels), the micro figures (when planned) and each label's positive weight."""
    n_targets = len(plan.bounds)
    states = [Reduction(RunsReducer(), 0.0) for _ in range(n_targets)]
    cut, pick, reduce = task(cut_block), task(_pick), task(reduce_range)
    for spans in plan.passes:
        pieces = [
            cut(*b, bounds=plan.bounds, spans=spans, labels=plan.labels, micro=plan.micro)
            for b in blocks
        ]
        graphs = []
        for t, (a, b) in enumerate(spans):
            state: Any = states[t]
            for g in range(b - 1, a - 1, -1):
                state = reduce(state, *[pick(p, (t, g)) for p in pieces])
            graphs.append(state)
        states = list(compute_one(task(list)(graphs)))
    figs = [s.reducer.result() for s in states]
    micro = figs.pop() if plan.micro else None
    support = np.array([s.pos_weight for s in states[: len(figs)]], dtype=np.float64)
    return figs, micro, support


def ranged_report(
    blocks: list[tuple[Any, ...]], survey: Survey, plan: Plan
) -> tuple[MultilabelAccumulator, BinaryFigures]:
    """``multilabel_report``'s totals (from the survey) and its AP/ROC AUC figures,
    per label and micro, through range partitions: ``acc.compute(binary=...)``."""
    if survey.acc is None or not plan.micro or not plan.labels:
        raise ValueError("the report's ranges need the survey's totals, labels and micro")
    figs, micro, _ = ranged_figures(blocks, plan)
    return survey.acc, binary_figures(figs, micro)
