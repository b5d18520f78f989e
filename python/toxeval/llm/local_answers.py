"""What an in-process detector said about a batch of texts (:class:`LocalAnswers`), and
how many rows it is handed per call (``LOCAL_BATCH``).

A leaf of :mod:`toxeval.llm` (numpy only), so that the detectors (:mod:`toxeval.llm.detectors`)
and the local classifiers (:mod:`toxeval.classifiers`) both produce answers without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LOCAL_BATCH", "LocalAnswers"]

LOCAL_BATCH = 256  # rows handed to an in-process detector per call (a run-file flush)


@dataclass(frozen=True)
class LocalAnswers:
    """What a local system said about a batch: ``scores`` (n, K) with NaN rows for items
    without a usable answer, per-item parse ``statuses`` / ``reasons``, the raw
    ``outputs`` (text answers only) and the ``method`` ("scores", "labels" or "text").
    ``known``: the (K,) columns the system scores at all (None: every column; a NaN in
    another column is an unknown cell, not an unusable answer); ``truncated``: per item,
    whether its text was cut to the model's token limit (local classifiers only)."""

    scores: np.ndarray
    statuses: list[str]
    reasons: list[str | None]
    outputs: list[str | None]
    method: str
    graded: list[bool]
    known: np.ndarray | None = None
    truncated: list[bool] | None = None
