"""Exact mergeable metric states and streaming accumulators.

``multilabel_report`` needs every score in one process; these states give the same
figures over rows that arrive in chunks, live in several processes, or do not fit in
memory, with results that do not depend on how the rows were split:

* :class:`MultilabelAccumulator`: ``update`` with chunks of rows (NumPy, anything
  with ``__array__`` or ``__dlpack__``), ``merge`` states of other processes,
  ``compute`` the ``multilabel_report`` dict; ``reset``, ``n_samples``, ``nbytes``,
  ``save``/``load`` (NPZ), pickling. See docs/streaming.md for a PyTorch Lightning /
  DDP loop (gather the small pickled states, never the scores).
* :class:`LabelRuns`: one binary problem's exact AP/ROC AUC state, the runs of
  distinct scores with their positive and negative weights. ``from_scores`` (one
  label), ``from_matrix`` (each column of a chunk), ``from_checked`` (kernel arrays),
  ``merge`` / ``merge_all`` (sorted merges), ``figures`` (AP and ROC AUC).
* :class:`RunsReducer`: AP and ROC AUC from runs fed range by range in descending
  score order, with O(1) state: for a label too large for memory, range-partition
  its rows on :func:`score_keys` (equal scores never straddle a boundary), build each
  range's runs and feed them highest range first.
* :class:`PairFigures`: one problem's AP, ROC AUC and undefined-value flags;
  ``toxeval.metrics.BinaryFigures`` is the per-label + micro form ``compute`` takes.
"""

from __future__ import annotations

from toxeval.metrics import BinaryFigures
from toxeval.streaming.accumulator import MultilabelAccumulator
from toxeval.streaming.runs import (
    LabelRuns,
    PairFigures,
    RunsReducer,
    binary_figures,
    score_keys,
)

__all__ = [
    "BinaryFigures",
    "LabelRuns",
    "MultilabelAccumulator",
    "PairFigures",
    "RunsReducer",
    "binary_figures",
    "score_keys",
]
