"""Logits to probabilities: sigmoid per label for a multi-label head, softmax over the
labels for a single-label one (:mod:`toxeval.classifiers.model_dir` says which), in
float64 and stable for large logits."""

from __future__ import annotations

import numpy as np

from toxeval.classifiers.model_dir import Head

__all__ = ["probabilities"]


def probabilities(logits: np.ndarray, head: Head) -> np.ndarray:
    """(n, L) float64 probabilities of (n, L) ``logits``: ``1 / (1 + exp(-x))`` per cell
    (sigmoid), or ``exp(x - max) / sum(exp(x - max))`` per row (softmax)."""
    x = np.asarray(logits, dtype=np.float64)
    if head == "sigmoid":
        # exp of a negative number only: no overflow warning for large |x|
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    shifted = x - x.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    out: np.ndarray = e / e.sum(axis=1, keepdims=True)
    return out
