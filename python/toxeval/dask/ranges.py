"""AP and ROC AUC per label (and micro-averaged) through range partitions by score, so
that no worker and not the client holds a label's whole state: the path for
continuous scores at large N, where a label's runs of distinct scores are as large as
the data.

1. **Survey** (one cheap pass, :func:`survey_graph`): each block gives a strided
   sample of its order keys (``toxeval.streaming.score_keys``), its known cells per
   label and, for ``multilabel_report``, the report's additive totals
   (``MultilabelAccumulator(keep_runs=False)``: O(labels)); these are tree-merged to
   the client.
2. **Plan** (:func:`plan_ranges`, on the client): from the sample, one set of
   splitters shared by every label (a range is ``lo <= key < hi``, so equal scores
   never straddle two ranges, and the micro average's range is the union of the
   labels' ranges: its cells are not cut or held a second time); from the known
   cells and a memory target per worker, how many ranges (one range, reduced by one
   task, fits the target) and how many passes over the data (the cells of one pass,
   held on the workers, fit the target on every worker).
3. **Passes**, highest scores first: each block task keeps the known cells of the
   pass's ranges (score, label, weight: 5 bytes a cell for float32 unweighted
   scores), by range, label after label; the first pass also sums each range's
   positive and negative weight per label (a tree of small arrays). One task per
   range then gathers the range's cells from every block, turns each label's into
   runs (``LabelRuns.from_scores``; the micro average's are their merge) and feeds
   them to reducers started from the weight above the range
   (``RunsReducer.below``): the ranges are reduced in parallel, and the client
   joins their reducers (a few numbers each) highest range first
   (``RunsReducer.then``).

The client receives the survey, the totals and, per pass, a few reducers per range. The splitters
only balance the ranges; exactness never depends on them (the reducer gives
scikit-learn's figures over all the cells it was fed).
"""

from __future__ import annotations

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
from toxeval.streaming.runs import range_numbers

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
# per distinct score), and the micro average's merged runs (24 bytes more).
REDUCE_BYTES_PER_CELL = 96


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
    """One set of splitters shared by every label (range ``g`` holds the keys
    ``bounds[g-1] <= key < bounds[g]`` of every label, so the micro average's range
    ``g`` is the union of the labels' ranges ``g``); per pass, highest first, the
    range numbers [a, b) it reduces; the labels (K) and which figures are asked."""

    bounds: NDArray[np.uint64]
    passes: list[tuple[int, int]]
    k: int
    micro: bool
    labels: bool

    @property
    def n_ranges(self) -> int:
        """How many ranges the scores are cut into."""
        return int(self.bounds.size) + 1


def plan_ranges(
    survey: Survey,
    *,
    n_ranges: int | None,
    state_bytes: int,
    n_workers: int,
    labels: bool = True,
    micro: bool = False,
) -> Plan:
    """Splitters and passes for ``survey``'s data: ``n_ranges`` ranges when given,
    else as many as make one range's reduce task (every label's cells of the range)
    fit ``state_bytes``; passes so that the cells of one pass fit ``state_bytes`` on
    each of ``n_workers`` workers."""
    if n_ranges is not None and (
        isinstance(n_ranges, bool) or not isinstance(n_ranges, int) or n_ranges < 1
    ):
        raise ValueError(f"n_ranges must be an int >= 1; got {n_ranges!r}")
    cells = int(survey.known.sum())
    cell = survey.itemsize + 1 + (8 if survey.weighted else 0)
    n_passes = max(1, -(-cells * cell // max(1, n_workers * state_bytes)))
    r = n_ranges
    if r is None:
        r = max(n_passes, -(-cells * REDUCE_BYTES_PER_CELL // max(1, state_bytes)))
    bounds = quantile_splitters(np.unique(survey.sample.ravel()), r)
    total = int(bounds.size) + 1
    n_passes = min(n_passes, total)
    passes = [
        (p * total // n_passes, (p + 1) * total // n_passes) for p in reversed(range(n_passes))
    ]
    return Plan(bounds, passes, int(survey.known.size), micro, labels)


# ------------------------------------------------------------------ 3. passes


class Cells(NamedTuple):
    """Known cells of one range in one block, label after label: scores (their own
    dtype), positive flags, weights or None, and each label's number of cells."""

    scores: NDArray[Any]
    positive: NDArray[np.bool_]
    weight: NDArray[np.float64] | None
    counts: NDArray[np.int64]


class BlockCut(NamedTuple):
    """One block's cells of a pass, by range number, and (in the first pass) the
    positive and negative weight of its known cells per range and label,
    shape (2, ranges, K)."""

    cells: dict[int, Cells]
    totals: NDArray[np.float64] | None


def _range_numbers(
    scores: NDArray[Any], bounds: NDArray[np.uint64], a: int, b: int, everything: bool
) -> tuple[NDArray[np.uint32], NDArray[np.intp] | None]:
    """Range numbers of ``scores`` (all, when ``everything``) or of the scores in
    ranges [a, b) with their positions."""
    rank = range_numbers(scores, bounds)
    if everything or (a == 0 and b == bounds.size + 1):
        return rank, None
    idx = np.flatnonzero((rank >= a) & (rank < b))
    return rank[idx], idx


def cut_block(
    y_true: Any,
    y_score: Any,
    mask: Any,
    weight: Any,
    *,
    bounds: NDArray[np.uint64],
    span: tuple[int, int],
    totals: bool,
) -> BlockCut:
    """The known cells of one block in the pass's ranges ``span`` = [a, b), by range,
    and with ``totals`` each range's positive and negative weight per label."""
    ys = _as_2d(y_score)
    n, k = ys.shape
    n_ranges = bounds.size + 1
    tot = np.zeros((2, n_ranges, k)) if totals else None
    if n == 0:
        return BlockCut({}, tot)
    a, b = span
    # one column at a time, contiguous: the transposes cost one pass each
    scores = np.ascontiguousarray(ys.T)
    positive = np.ascontiguousarray(np.asarray(_as_2d(y_true)).T) == 1
    m = _as_2d(mask)
    known = None if m is None else np.ascontiguousarray(np.asarray(m, dtype=bool).T)
    w = as_numpy(weight)
    w = None if w is None else np.asarray(w, dtype=np.float64)
    Piece = tuple[int, NDArray[Any], NDArray[np.bool_], NDArray[np.float64] | None]
    parts: dict[int, list[Piece]] = {}
    for j in range(k):
        s, y, wj = scores[j], positive[j], w
        if known is not None and not known[j].all():
            at = np.flatnonzero(known[j])
            s, y = s[at], y[at]
            wj = None if w is None else w[at]
        rank, idx = _range_numbers(s, bounds, a, b, tot is not None)
        if tot is not None:
            tot[0, :, j] = np.bincount(rank[y], None if wj is None else wj[y], n_ranges)
            tot[1, :, j] = np.bincount(rank[~y], None if wj is None else wj[~y], n_ranges)
            if a > 0 or b < n_ranges:
                idx = np.flatnonzero((rank >= a) & (rank < b))
                rank = rank[idx]
        if idx is not None:
            s, y = s[idx], y[idx]
            wj = None if wj is None else wj[idx]
        if s.size == 0:
            continue
        order, slices = range_slices(rank, n_ranges)
        s, y = s[order], y[order]
        wj = None if wj is None else wj[order]
        for g, lo, hi in slices:
            piece = (j, s[lo:hi], y[lo:hi], None if wj is None else wj[lo:hi])
            parts.setdefault(g, []).append(piece)
    cells = {}
    for g, pieces in parts.items():
        counts = np.zeros(k, dtype=np.int64)
        for j, sj, _, _ in pieces:
            counts[j] = sj.size
        weights = [pw for _, _, _, pw in pieces if pw is not None]
        cells[g] = Cells(
            np.concatenate([sj for _, sj, _, _ in pieces]),
            np.concatenate([yj for _, _, yj, _ in pieces]),
            np.concatenate(weights) if weights else None,
            counts,
        )
    return BlockCut(cells, tot)


def _pick(cut: BlockCut, g: int) -> Cells | None:
    return cut.cells.get(g)


def _totals(cut: BlockCut) -> NDArray[np.float64]:
    if cut.totals is None:  # pragma: no cover - the first pass always asks for them
        raise ValueError("this cut holds no totals")
    return cut.totals


def _add(*totals: NDArray[np.float64]) -> NDArray[np.float64]:
    out: NDArray[np.float64] = np.sum(totals, axis=0)
    return out


def range_offsets(totals: NDArray[np.float64], g: int) -> NDArray[np.float64]:
    """The positive and negative weight of every label above range ``g``, (2, K)."""
    out: NDArray[np.float64] = totals[:, g + 1 :, :].sum(axis=1)
    return out


def reduce_range(
    offsets: NDArray[np.float64], *pieces: Cells | None, labels: bool, micro: bool
) -> list[RunsReducer]:
    """Range ``g`` reduced on its own: for each label (when ``labels``), then for the
    micro average (when ``micro``), a reducer started from the weight above the range
    (``offsets``, (2, K)) and fed the runs of every block's cells of it. Joined
    highest range first (``RunsReducer.then``) they give the figures of all cells."""
    full = [p for p in pieces if p is not None and p.scores.size]
    k = offsets.shape[1]
    starts = [np.concatenate([[0], np.cumsum(p.counts)]) for p in full]
    weighted = any(p.weight is not None for p in full)
    runs: list[LabelRuns | None] = []
    for j in range(k):
        segs = [
            (p, int(st[j]), int(st[j + 1]))
            for p, st in zip(full, starts, strict=True)
            if st[j + 1] > st[j]
        ]
        if not segs:
            runs.append(None)
            continue
        w = None
        if weighted:
            w = np.concatenate(
                [p.weight[a:b] if p.weight is not None else np.ones(b - a) for p, a, b in segs]
            )
        runs.append(
            LabelRuns.from_scores(
                np.concatenate([p.positive[a:b] for p, a, b in segs]),
                np.concatenate([p.scores[a:b] for p, a, b in segs]),
                sample_weight=w,
            )
        )
    out = []
    if labels:
        for j in range(k):
            red = RunsReducer.below(offsets[0, j], offsets[1, j])
            out.append(red if runs[j] is None else red.feed(runs[j]))  # type: ignore[arg-type]
    if micro:
        red = RunsReducer.below(offsets[0].sum(), offsets[1].sum())
        present = [r for r in runs if r is not None]
        out.append(red.feed(LabelRuns.merge_all(present)) if present else red)
    return out


def ranged_figures(
    blocks: list[tuple[Any, ...]], plan: Plan
) -> tuple[list[PairFigures], PairFigures | None, NDArray[np.float64]]:
    """Each label's AP/ROC AUC figures (no warnings emitted; none when the plan has no
    labels), the micro figures (when planned) and each label's positive weight.

    Each pass cuts every block into the pass's ranges; the first pass also sums the
    weight of every range, so each range's reduce task knows the weight above it and
    runs independently of the others (in parallel); only the reducers' few numbers
    come back, joined here highest range first."""
    n_targets = (plan.k if plan.labels else 0) + (1 if plan.micro else 0)
    joined = [RunsReducer() for _ in range(n_targets)]
    totals: NDArray[np.float64] | None = None
    cut, pick, reduce = task(cut_block), task(_pick), task(reduce_range)
    for a, b in plan.passes:
        first = totals is None
        cuts = [cut(*blk, bounds=plan.bounds, span=(a, b), totals=first) for blk in blocks]
        summed: Any = totals
        if first:
            summed = tree_reduce([task(_totals)(c) for c in cuts], _add, split_every=32)
        graphs = []
        for g in range(b - 1, a - 1, -1):
            offsets = task(range_offsets)(summed, g) if first else range_offsets(summed, g)
            graphs.append(
                reduce(offsets, *[pick(c, g) for c in cuts], labels=plan.labels, micro=plan.micro)
            )
        out = compute_one(task(list)([summed if first else None, *graphs]))
        if first:
            totals = out[0]
        for reducers in out[1:]:
            for t, red in enumerate(reducers):
                joined[t].then(red)
    figs = [r.result() for r in joined]
    micro = figs.pop() if plan.micro else None
    if totals is None:  # pragma: no cover - a plan has at least one pass
        totals = np.zeros((2, 1, plan.k))
    support = totals[0].sum(axis=0) if plan.labels else np.zeros(0)
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
