"""AP and ROC AUC per label through range partitions by score, for labels whose runs
are too large for one worker (continuous scores at large N).

1. A sample of each label's order keys (``toxeval.streaming.score_keys``, a strided
   sample per block) gives splitters: a label's keys are cut into ``n_ranges`` ranges
   ``lo <= key < hi``, so equal scores never straddle two ranges.
2. Each block's runs (``LabelRuns.from_matrix``) are cut at the splitters; the blocks
   are persisted on the cluster, and for every (label, range) the pieces are merged
   in a tree of tasks: a merge task holds one range of one label, not the label.
3. The client computes the ranges highest first, one range (of every label) at a
   time, and feeds each to the label's ``RunsReducer`` (O(1) state), releasing it.

The client never holds more than one range of every label; the workers hold the
block pieces (the data's size, spread over the cluster) while the ranges are merged.
Splitters from a sample only balance the ranges; exactness never depends on them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval.dask.blocks import as_numpy
from toxeval.dask.tree import compute_one, task, tree_reduce
from toxeval.streaming import LabelRuns, PairFigures, RunsReducer, score_keys

__all__ = ["ranged_figures"]

SAMPLE_PER_BLOCK = 2048


def _as_2d(x: Any) -> Any:
    x = as_numpy(x)
    return None if x is None else (x.reshape(-1, 1) if x.ndim == 1 else x)


def _sample(y_score: Any) -> list[NDArray[np.uint64]]:
    """A strided sample of each column's order keys."""
    s = _as_2d(y_score)
    step = max(1, s.shape[0] // SAMPLE_PER_BLOCK)
    return [score_keys(np.ascontiguousarray(s[::step, j])) for j in range(s.shape[1])]


def _splitters(samples: list[list[NDArray[np.uint64]]], n_ranges: int) -> list[NDArray[np.uint64]]:
    """Per label, at most ``n_ranges - 1`` increasing boundaries from the sample."""
    k = max((len(b) for b in samples), default=0)
    out = []
    for j in range(k):
        keys = np.unique(np.concatenate([b[j] for b in samples if len(b) > j]))
        if keys.size < 2:
            out.append(np.zeros(0, dtype=np.uint64))
            continue
        at = np.linspace(0, keys.size, n_ranges + 1)[1:-1].astype(np.int64)
        out.append(np.unique(keys[np.clip(at, 1, keys.size - 1)]))
    return out


def _cut(
    y_true: Any, y_score: Any, mask: Any, weight: Any, *, bounds: list[NDArray[np.uint64]]
) -> dict[tuple[int, int], LabelRuns]:
    """One block's runs, cut into (label, range) pieces; a label's known positive and
    negative counts ride on its lowest range's piece."""
    yt, ys, m = _as_2d(y_true), _as_2d(y_score), _as_2d(mask)
    if yt.shape[0] == 0:
        return {}
    runs = LabelRuns.from_matrix(yt, ys, mask=m, sample_weight=as_numpy(weight), n_jobs=1)
    out: dict[tuple[int, int], LabelRuns] = {}
    for j, r in enumerate(runs):
        rank = np.searchsorted(bounds[j], r.keys, side="right")
        for g in range(len(bounds[j]) + 1):
            sel = rank == g
            out[(j, g)] = LabelRuns(
                r.keys[sel],
                r.pos[sel],
                r.neg[sel],
                n_pos=r.n_pos if g == 0 else 0,
                n_neg=r.n_neg if g == 0 else 0,
                score_kind=r.score_kind,
            )
    return out


def _pick(pieces: dict[tuple[int, int], LabelRuns], key: tuple[int, int]) -> LabelRuns | None:
    return pieces.get(key)


def _merge(*runs: LabelRuns | None) -> LabelRuns | None:
    full = [r for r in runs if r is not None]
    return LabelRuns.merge_all(full) if full else None


def ranged_figures(
    blocks: list[tuple[Any, ...]], n_ranges: int, split_every: int
) -> tuple[list[PairFigures], NDArray[np.float64]]:
    """Each label's AP/ROC AUC figures (no warnings emitted) and positive weight,
    from the row blocks (y_true, y_score, mask, weight) through ``n_ranges`` ranges."""
    import dask

    if isinstance(n_ranges, bool) or not isinstance(n_ranges, int) or n_ranges < 1:
        raise ValueError(f"n_ranges must be an int >= 1; got {n_ranges!r}")
    sample = task(_sample)
    samples = compute_one(tree_reduce([sample(b[1]) for b in blocks], _collect, split_every=64))
    if samples and isinstance(samples[0], np.ndarray):  # one block: not collected
        samples = [samples]
    bounds = _splitters(samples, n_ranges)
    cut = task(_cut)
    pieces = dask.persist(*[cut(*b, bounds=bounds) for b in blocks])  # type: ignore[attr-defined, no-untyped-call]
    pick, k = task(_pick), len(bounds)
    reducers = [RunsReducer() for _ in range(k)]
    support = np.zeros(k)
    top = max((len(b) for b in bounds), default=0)
    try:
        for g in range(top, -1, -1):
            labels = [j for j in range(k) if g <= len(bounds[j])]
            graphs = [
                tree_reduce([pick(p, (j, g)) for p in pieces], _merge, split_every=split_every)
                for j in labels
            ]
            for j, runs in zip(labels, compute_one(task(list)(graphs)), strict=True):
                if runs is not None:
                    reducers[j].feed(runs)
                    support[j] += float(np.sum(runs.pos))
    finally:
        del pieces
    return [r.result() for r in reducers], support


def _collect(*parts: Any) -> list[list[NDArray[np.uint64]]]:
    """Samples of blocks (or lists of them) into one list."""
    out: list[list[NDArray[np.uint64]]] = []
    for p in parts:
        if p and isinstance(p[0], list):
            out.extend(p)
        else:
            out.append(p)
    return out
