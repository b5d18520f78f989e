"""The metric states rows stream into, on one of two paths that
:func:`choose_path` picks, and that end in the same ``multilabel_report`` dict:

- ``tree merge``: :class:`toxeval.streaming.MultilabelAccumulator`, whose AP/ROC AUC
  state is the runs of distinct scores per label. Small when scores take few values
  (LLM confidences, label lists, quantised outputs), or when N x K is small.
- ``range partitions``: the same accumulator without runs (``keep_runs=False``: the
  per-row sums and thresholded counts, O(K)), and each label's known cells written to
  range files on disk (:mod:`toxeval.outofcore.ranges`), reduced label by label at the
  end into the AP/ROC AUC figures ``compute(binary=...)`` takes. Memory holds one
  range per worker thread, whatever N is.

When the tree's state outgrows its share of the limit mid-stream,
:class:`StatesOutgrown` is raised and the caller starts the pass again on range
partitions (the choice is made from a sample, and a sample can mislead).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from toxeval.outofcore.ranges import RangeSpill, reduce_runs, splitters_from_sample
from toxeval.streaming import MultilabelAccumulator, RunsReducer, binary_figures

__all__ = ["RangeStates", "StatesOutgrown", "TreeStates", "choose_path"]

TREE = "tree merge"
RANGES = "range partitions"

# Bytes of tree state per distinct score of a label, at most (the runs' score and
# positive and negative weights, with the merge's working copy).
_RUN_BYTES = 48


class StatesOutgrown(Exception):
    """The tree's state passed its share of the memory limit: start again on ranges."""


def choose_path(n_rows_bound: int, k: int, sample: np.ndarray | None, state_bytes: int) -> str:
    """``tree merge`` when the sample (the first batch's scores, (n, K)) shows few
    distinct scores per label (at most 256, or 1/64 of its rows: LLM confidences,
    label lists, quantised scores), or when the input is small (N x K at most 2^22
    cells, and one run per cell fits ``state_bytes``); else ``range partitions``
    (continuous scores: merging runs of about one entry per row costs more than
    sorting ranges read from disk)."""
    if sample is not None and sample.shape[0]:
        distinct = max(int(np.unique(sample[:, c]).size) for c in range(sample.shape[1]))
        if distinct <= max(256, sample.shape[0] // 64):
            return TREE
    cells = n_rows_bound * k
    if cells <= 1 << 22 and cells * _RUN_BYTES <= state_bytes:
        return TREE
    return RANGES


class TreeStates:
    """The tree-merge path: one accumulator, its size watched against ``state_bytes``."""

    path = TREE

    def __init__(self, k: int, threshold: float, state_bytes: int) -> None:
        self.acc = MultilabelAccumulator(k, threshold=threshold)
        self.state_bytes = state_bytes
        self.peak_state_bytes = 0

    def update(self, y: np.ndarray, s: np.ndarray, m: np.ndarray) -> None:
        if y.shape[0] == 0:
            return
        self.acc.update(y, s, mask=m)
        size = int(self.acc.nbytes)
        self.peak_state_bytes = max(self.peak_state_bytes, size)
        if size > self.state_bytes:
            raise StatesOutgrown(size)

    def finish(
        self, progress: Callable[[int, int], None] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The report dict and what the path did (for ``results.json``)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the report's notes say what is undefined
            report = dict(self.acc.compute())
        return report, {"path": TREE, "peak_state_bytes": self.peak_state_bytes}


class RangeStates:
    """The range-partition path: the accumulator without runs in memory, known cells to
    range files under ``folder``; splitters from the first batch's scores (``sample``).
    Labels are reduced on up to two threads, each holding one range."""

    path = RANGES

    def __init__(
        self,
        k: int,
        threshold: float,
        folder: Path,
        *,
        n_cells_bound: int,
        sample: np.ndarray | None,
        float32: bool,
        state_bytes: int,
        buffer_bytes: int,
    ) -> None:
        self.k = k
        self.acc = MultilabelAccumulator(k, threshold=threshold, keep_runs=False)
        dtype = np.dtype(np.float32 if float32 else np.float64)
        self.workers = max(1, min(2, os.cpu_count() or 1, k))
        # a range read back (scores, their labels, the copy into one array), its
        # order keys and the sort's buffer, and its runs (24 bytes per distinct
        # score), per worker
        per_value = 3 * dtype.itemsize + 1 + 32 + 24 + 16
        self.max_values = max(64, state_bytes // self.workers // per_value)
        n_ranges = max(1, -(-n_cells_bound // self.max_values))
        self.n_ranges = n_ranges
        spl = [
            splitters_from_sample(sample[:, c], n_ranges) if sample is not None else np.zeros(0)
            for c in range(k)
        ]
        folder.mkdir(parents=True, exist_ok=True)
        self.spill = RangeSpill(folder, k, dtype, spl, max(1 << 12, buffer_bytes))

    def update(self, y: np.ndarray, s: np.ndarray, m: np.ndarray) -> None:
        if y.shape[0] == 0:
            return
        self.acc.update(y, s, mask=m)
        yf = np.asfortranarray(y)
        mf = np.asfortranarray(m)
        for c in range(self.k):
            known = mf[:, c]
            if known.all():
                self.spill.add(c, s[:, c], yf[:, c])
            else:
                self.spill.add(c, s[known, c], yf[known, c])

    def _reduce(self, c: int) -> tuple[Any, int, int, int]:
        reducer = RunsReducer()
        reduced, resplit, distinct = reduce_runs(self.spill, c, reducer, self.max_values)
        return reducer.result(), reduced, resplit, distinct

    def finish(
        self, progress: Callable[[int, int], None] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The report dict and what the path did; ``progress(labels done, K)``."""
        self.spill.flush()
        out = []
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            for i, o in enumerate(pool.map(self._reduce, range(self.k))):
                out.append(o)
                if progress:
                    progress(i + 1, self.k)
        binary = binary_figures([o[0] for o in out], None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the report's notes say what is undefined
            report = dict(self.acc.compute(binary=binary))
        info = {
            "path": RANGES,
            "ranges_per_label": self.n_ranges,
            "ranges_reduced": sum(o[1] for o in out),
            "ranges_split_again": sum(o[2] for o in out),
            "spill_bytes": self.spill.bytes_written,
            "distinct_scores_max": max((o[3] for o in out), default=0),
            "reduce_threads": self.workers,
        }
        return report, info
