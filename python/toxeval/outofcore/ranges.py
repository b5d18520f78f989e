"""Exact average precision and ROC AUC per label when no process holds a label's scores:
range partitions on disk, reduced in score order with prefix counts (the template of
Spark's exact ``BinaryClassificationMetrics``).

Each label's known cells are written, as it streams past, to one of R range files by
their score: R - 1 splitters per label, distinct values taken from a sample, and a
score goes to the range ``searchsorted(splitters, score, side="right")``, so equal
scores (``-0.0`` with ``0.0``) always share a range and no run of ties straddles a
boundary. Positives and negatives go to separate files, so a range file is a plain
array of scores (float32 when every score column is float32, else float64).

The reduction walks each label's ranges from the highest scores down. A range is read
whole (one range is sized to fit its share of the memory limit; one that does not,
because the sample missed where the scores are, is split again by its own splitters),
turned into runs (distinct score, positives, negatives) by
:meth:`toxeval.streaming.LabelRuns.from_scores` and fed to a
:class:`toxeval.streaming.RunsReducer`, which carries the true- and false-positive
counts of the ranges above: the figures are scikit-learn's over all N scores, with no
process holding them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from toxeval.outofcore.spill import small_codes
from toxeval.streaming import LabelRuns, RunsReducer, score_keys

__all__ = [
    "RangeSpill",
    "quantile_splitters",
    "range_slices",
    "reduce_runs",
    "splitters_from_sample",
]


def quantile_splitters(values: np.ndarray, n_ranges: int) -> np.ndarray:
    """Up to ``n_ranges - 1`` distinct ascending splitters at the quantiles of
    ``values`` (sorted, distinct: ``np.unique`` of a sample), never its smallest value
    (so no range is empty by construction); fewer when there are fewer values. Scores
    or order keys (``toxeval.streaming.score_keys``) alike."""
    if n_ranges <= 1 or values.size <= 1:
        return values[:0]
    at = np.linspace(0, values.size, n_ranges + 1)[1:-1].astype(np.int64)
    return np.unique(values[np.clip(at, 1, values.size - 1)])


def splitters_from_sample(sample: np.ndarray, n_ranges: int) -> np.ndarray:
    """Up to ``n_ranges - 1`` distinct ascending splitters at the sample's quantiles
    (fewer when the sample has fewer distinct values)."""
    values = np.unique(sample.astype(np.float64) + 0.0)  # + 0.0: -0.0 becomes 0.0
    return quantile_splitters(values, n_ranges)


def range_slices(parts: np.ndarray, n_parts: int) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """The order that groups values by their range number ``parts`` (stable: a
    range's values keep their order) and, per range present, (range, start, stop) in
    that order."""
    order = np.argsort(small_codes(parts), kind="stable")
    counts = np.bincount(parts, minlength=n_parts)
    ends = np.cumsum(counts)
    return order, [(int(r), int(ends[r] - counts[r]), int(ends[r])) for r in np.flatnonzero(counts)]


@dataclass
class RangeSpill:
    """The range files of every label: write buffers, flushed to ``folder`` when they
    hold ``buffer_bytes`` in all."""

    folder: Path
    k: int
    dtype: np.dtype
    splitters: list[np.ndarray]
    buffer_bytes: int
    _buffers: dict[tuple[int, int, bool], list[np.ndarray]] = field(default_factory=dict)
    _held: int = 0
    bytes_written: int = 0

    def n_ranges(self, label: int) -> int:
        return int(self.splitters[label].size) + 1

    def path(self, label: int, rng: int, positive: bool, level: str = "") -> Path:
        return self.folder / f"l{label:03d}{level}-r{rng:05d}-{'p' if positive else 'n'}.bin"

    def add(self, label: int, scores: np.ndarray, positive: np.ndarray) -> None:
        """Route one label's known cells (``scores``, ``positive``) to their ranges."""
        if scores.size == 0:
            return
        values = scores.astype(self.dtype, copy=False)
        spl = self.splitters[label]
        if spl.size == 0:
            parts = np.zeros(values.size, dtype=np.int64)
        else:
            parts = np.searchsorted(spl, values, side="right")
        for is_pos in (True, False):
            sel = positive if is_pos else ~positive
            v, r = values[sel], parts[sel]
            if v.size == 0:
                continue
            if spl.size == 0:
                self._hold((label, 0, is_pos), v)
                continue
            order, slices = range_slices(r, spl.size + 1)
            v = v[order]
            for rng, start, stop in slices:
                self._hold((label, rng, is_pos), v[start:stop])
        if self._held >= self.buffer_bytes:
            self.flush()

    def _hold(self, key: tuple[int, int, bool], values: np.ndarray) -> None:
        self._buffers.setdefault(key, []).append(np.array(values, copy=True))
        self._held += values.nbytes

    def flush(self) -> None:
        for (label, rng, is_pos), parts in self._buffers.items():
            with open(self.path(label, rng, is_pos), "ab") as f:
                for part in parts:
                    part.tofile(f)
                    self.bytes_written += part.nbytes
        self._buffers.clear()
        self._held = 0

    def read(self, path: Path) -> np.ndarray:
        if not path.exists():
            return np.zeros(0, dtype=self.dtype)
        return np.fromfile(path, dtype=self.dtype)


def _one_run(spill: RangeSpill, pos_path: Path, neg_path: Path) -> LabelRuns:
    """The one run of a range whose scores are all equal, from its files' sizes."""
    n = [
        p.stat().st_size // spill.dtype.itemsize if p.exists() else 0 for p in (pos_path, neg_path)
    ]
    src = pos_path if n[0] else neg_path
    value = np.fromfile(src, dtype=spill.dtype, count=1)
    return LabelRuns(
        score_keys(value),
        np.array([float(n[0])]),
        np.array([float(n[1])]),
        n_pos=n[0],
        n_neg=n[1],
        score_kind=str(spill.dtype),
    )


def _range_runs(spill: RangeSpill, pos_path: Path, neg_path: Path) -> LabelRuns:
    """The runs of one range read whole."""
    pos, neg = spill.read(pos_path), spill.read(neg_path)
    y = np.zeros(pos.size + neg.size, dtype=np.bool_)
    y[: pos.size] = True
    return LabelRuns.from_scores(y, np.concatenate([pos, neg]))


def reduce_runs(
    spill: RangeSpill, label: int, reducer: RunsReducer, max_values: int
) -> tuple[int, int, int]:
    """Feed ``reducer`` every range of ``label`` from the highest scores down; ranges
    over ``max_values`` scores are split again on disk first. Returns (ranges reduced,
    ranges split again, distinct scores). Range files are removed once reduced."""
    spill.flush()
    pending: list[tuple[Path, Path]] = [
        (spill.path(label, r, True), spill.path(label, r, False))
        for r in range(spill.n_ranges(label))
    ]
    reduced = resplit = distinct = 0
    depth = 0
    while pending:
        pos_path, neg_path = pending.pop()  # the highest remaining range
        size = sum(p.stat().st_size for p in (pos_path, neg_path) if p.exists())
        n_values = size // spill.dtype.itemsize
        if n_values > max_values:
            parts = _split_range(spill, pos_path, neg_path, max_values, depth)
            depth += 1
            if parts is None:  # one distinct score: one run, counted from the sizes
                reducer.feed(_one_run(spill, pos_path, neg_path))
                for p in (pos_path, neg_path):
                    if p.exists():
                        p.unlink()
                reduced += 1
                distinct += 1
                continue
            pending.extend(parts)
            resplit += 1
            continue
        if pos_path.exists() or neg_path.exists():
            runs = _range_runs(spill, pos_path, neg_path)
            reducer.feed(runs)
            distinct += len(runs)
        for p in (pos_path, neg_path):
            if p.exists():
                p.unlink()
        reduced += 1
    return reduced, resplit, distinct


def _split_range(
    spill: RangeSpill, pos_path: Path, neg_path: Path, max_values: int, depth: int
) -> list[tuple[Path, Path]] | None:
    """Split one oversized range into sub-ranges by splitters from a strided sample of
    its own scores (or, when the sample shows one value, its midpoint between the
    smallest and largest score), streaming it in blocks; None when it holds one
    distinct score (one run, counted without reading it into memory)."""
    item = spill.dtype.itemsize
    block = max(1, max_values // 2)
    sample = []
    for p in (pos_path, neg_path):
        if p.exists():
            mm = np.memmap(p, dtype=spill.dtype, mode="r")
            step = max(1, mm.size // 65536)
            sample.append(np.array(mm[::step]))
            del mm
    values = np.concatenate(sample) if sample else np.zeros(0)
    total = sum(p.stat().st_size for p in (pos_path, neg_path) if p.exists()) // item
    n_sub = int(min(4096, max(2, -(-2 * total // max_values))))
    spl = splitters_from_sample(values, n_sub)
    if spl.size == 0:
        lo, hi = _min_max(spill, (pos_path, neg_path), block)
        if lo == hi:
            return None
        spl = np.array([lo + (hi - lo) / 2.0])
    out: list[tuple[Path, Path]] = []
    names = [
        (
            pos_path.with_name(f"{pos_path.stem}-s{depth}-{i:05d}.bin"),
            neg_path.with_name(f"{neg_path.stem}-s{depth}-{i:05d}.bin"),
        )
        for i in range(spl.size + 1)
    ]
    for src, side in ((pos_path, 0), (neg_path, 1)):
        if not src.exists():
            continue
        mm = np.memmap(src, dtype=spill.dtype, mode="r")
        for at in range(0, mm.size, block):
            v = np.array(mm[at : at + block])
            r = np.searchsorted(spl, v, side="right")
            order, slices = range_slices(r, spl.size + 1)
            v = v[order]
            for i, start, stop in slices:
                with open(names[i][side], "ab") as f:
                    v[start:stop].tofile(f)
        del mm
        src.unlink()
    out.extend(names)  # ascending: popped from the end, highest first
    return out


def _min_max(spill: RangeSpill, paths: tuple[Path, Path], block: int) -> tuple[float, float]:
    lo, hi = np.inf, -np.inf
    for p in paths:
        if not p.exists():
            continue
        mm = np.memmap(p, dtype=spill.dtype, mode="r")
        for at in range(0, mm.size, block):
            v = mm[at : at + block]
            lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
        del mm
    return lo + 0.0, hi + 0.0
