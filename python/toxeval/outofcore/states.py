"""The metric states rows stream into, on one of two paths that
:func:`choose_path` picks, and that end in the same ``multilabel_report`` dict:

- ``tree merge``: :class:`toxeval.streaming.MultilabelAccumulator`, whose AP/ROC AUC
  state is the runs of distinct scores per label. Small when scores take few values
  (LLM confidences, label lists, quantised outputs), or when N x K is small.
- ``range partitions``: the per-row sums and thresholded counts (:class:`RowSums`, the
  same native passes ``multilabel_report`` runs, added batch by batch), and each
  label's known cells written to range files on disk (:mod:`toxeval.outofcore.ranges`),
  reduced label by label at the end. Memory holds one range, whatever N is.

When the tree's state outgrows its share of the limit mid-stream,
:class:`StatesOutgrown` is raised and the caller starts the pass again on range
partitions (the choice is made from a sample, and a sample can mislead).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from toxeval import _core
from toxeval.outofcore.ranges import LabelRuns, RangeSpill, reduce_runs, splitters_from_sample

__all__ = ["RangeStates", "RowSums", "StatesOutgrown", "TreeStates", "choose_path"]

TREE = "tree merge"
RANGES = "range partitions"

# Bytes of tree state per distinct score of a label, at most (the runs' score and
# positive and negative weights, with the merge's working copy).
_RUN_BYTES = 48


class StatesOutgrown(Exception):
    """The tree's state passed its share of the memory limit: start again on ranges."""


def choose_path(n_rows_bound: int, k: int, sample: np.ndarray | None, state_bytes: int) -> str:
    """``tree merge`` when even one run per cell fits ``state_bytes`` (N x K x 48
    bytes), or when the sample (the first batch's scores, (n, K)) shows few distinct
    scores per label (at most 1/64 of its rows, or 256); else ``range partitions``."""
    if n_rows_bound * k * _RUN_BYTES <= state_bytes:
        return TREE
    if sample is not None and sample.shape[0]:
        distinct = max(int(np.unique(sample[:, c]).size) for c in range(sample.shape[1]))
        if distinct <= max(256, sample.shape[0] // 64):
            return TREE
    return RANGES


class RowSums:
    """Per-row sums (label ranking loss, LRAP, coverage error, one-error, NDCG) and
    per-label thresholded counts, added batch by batch: the parts of
    ``multilabel_report`` that merge by adding."""

    def __init__(self, k: int, threshold: float) -> None:
        self.k = k
        self.threshold = threshold
        self.cut = np.array([float(threshold)], dtype=np.float64)
        self.n = 0
        self.n_without = 0
        self.sums: dict[str, float] = {}
        self.n_known = np.zeros(k, dtype=np.int64)
        self.support = np.zeros(k, dtype=np.int64)
        self.predicted = np.zeros(k, dtype=np.int64)
        self.tp = np.zeros(k, dtype=np.int64)

    def update(self, y: np.ndarray, s: np.ndarray, m: np.ndarray) -> None:
        """Add a batch: ``y`` (n, K) bool positives, ``s`` (n, K) float64, ``m`` known."""
        n = y.shape[0]
        if n == 0:
            return
        known_rows = m.any(axis=1)
        n_without = n - int(np.count_nonzero(known_rows))
        mask = None if bool(m.all()) else m
        w = None if n_without == 0 else known_rows.astype(np.float64)
        if n_without < n:
            sums = _core.ranking_report_sums(y, s, mask, w, None)
            for key, v in sums.items():
                self.sums[key] = self.sums.get(key, 0.0) + float(v)
        known, support, predicted, tp = _core.threshold_counts(s, y, self.cut, mask, None)
        self.n += n
        self.n_without += n_without
        self.n_known += known
        self.support += support
        self.predicted += predicted
        self.tp += tp

    def report(self, ap: np.ndarray, auc: np.ndarray) -> dict[str, Any]:
        """The ``multilabel_report`` dict, with per-label ``ap`` and ``roc_auc`` given
        (micro AP and ROC AUC are not computed: NaN; the report does not use them)."""
        wsum = self.sums.get("weight_sum", 0.0)

        def mean_of(key: str) -> float:
            if self.n_without == self.n or wsum == 0.0:
                return math.nan
            return self.sums[key] / wsum

        tp = self.tp.astype(np.float64)
        fp = self.predicted.astype(np.float64) - tp
        fn = self.support.astype(np.float64) - tp
        denom = 2 * tp + fp + fn
        f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
        micro_den = float(denom.sum())
        cells = int(self.n_known.sum())
        relevant = self.sums.get("rows_with_relevant", 0.0)
        return {
            "n_samples": self.n,
            "n_labels": self.k,
            "n_rows_without_known_label": self.n_without,
            "support": self.support.copy(),
            "n_negative": self.n_known - self.support,
            "n_unknown": np.int64(self.n) - self.n_known,
            "ap": ap,
            "ap_macro": float(np.mean(ap)),
            "ap_micro": math.nan,
            "roc_auc": auc,
            "roc_auc_macro": float(np.mean(auc)),
            "roc_auc_micro": math.nan,
            "label_ranking_loss": mean_of("label_ranking_loss"),
            "lrap": mean_of("label_ranking_average_precision"),
            "coverage_error": mean_of("coverage_error"),
            "one_error": mean_of("one_error"),
            "one_error_relevant": self.sums.get("one_error_relevant_errors", 0.0) / relevant
            if relevant > 0
            else math.nan,
            "ndcg": mean_of("ndcg"),
            "threshold": float(self.threshold),
            "f1": f1,
            "f1_micro": 2 * float(tp.sum()) / micro_den if micro_den > 0 else 0.0,
            "f1_macro": float(f1.mean()),
            "hamming_loss": float(fp.sum() + fn.sum()) / cells if cells else math.nan,
        }


class TreeStates:
    """The tree-merge path: one accumulator, its size watched against ``state_bytes``."""

    path = TREE

    def __init__(self, k: int, threshold: float, state_bytes: int) -> None:
        from toxeval.streaming import MultilabelAccumulator

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

    def finish(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The report dict and what the path did (for ``results.json``)."""
        report = dict(self.acc.compute())
        return report, {"path": TREE, "peak_state_bytes": self.peak_state_bytes}


class RangeStates:
    """The range-partition path: :class:`RowSums` in memory, known cells to range files
    under ``folder``; splitters from the first batch given (``sample``)."""

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
        self.rows = RowSums(k, threshold)
        dtype = np.dtype(np.float32 if float32 else np.float64)
        # a range, read back with its sort's copy and the runs, within state_bytes
        self.max_values = max(64, state_bytes // (4 * dtype.itemsize + 24))
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
        self.rows.update(y, s, m)
        for c in range(self.k):
            known = m[:, c]
            self.spill.add(c, s[known, c], y[known, c])

    def finish(self) -> tuple[dict[str, Any], dict[str, Any]]:
        ap = np.full(self.k, np.nan)
        auc = np.full(self.k, np.nan)
        reduced = resplit = 0
        n_runs = []
        for c in range(self.k):
            runs = LabelRuns(
                int(self.rows.support[c]), int(self.rows.n_known[c] - self.rows.support[c])
            )
            r, s = reduce_runs(self.spill, c, runs, self.max_values)
            reduced += r
            resplit += s
            ap[c], auc[c] = runs.ap(), runs.roc_auc()
            n_runs.append(runs.n_runs)
        info = {
            "path": RANGES,
            "ranges_per_label": self.n_ranges,
            "ranges_reduced": reduced,
            "ranges_split_again": resplit,
            "spill_bytes": self.spill.bytes_written,
            "distinct_scores_max": int(max(n_runs)) if n_runs else 0,
        }
        return self.rows.report(ap, auc), info
