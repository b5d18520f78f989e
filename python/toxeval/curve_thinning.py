"""Thinning a precision-recall curve for drawing: which of its (up to one per distinct
score) points to draw so that the drawn curve stays within a small distance of the
true one.

The PNG figures (:mod:`toxeval.plots`) and the HTML page's inline SVG
(:mod:`toxeval.html_report`) both draw curves; this leaf module (numpy only) serves both
without one rendering importing the other. Figures computed from a curve (AP) always use
every point.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["MAX_CURVE_POINTS", "thin_curve_indices"]

MAX_CURVE_POINTS = 2000
"""Default cap on the points drawn per precision-recall curve."""


def thin_curve_indices(
    recall: NDArray[Any], precision: NDArray[Any], max_points: int = MAX_CURVE_POINTS
) -> NDArray[np.intp]:
    """Sorted indices of at most ``max_points`` points of a curve to draw.

    Always the first and last points; then both ends of the largest single steps (the
    jumps of recall or precision, about half the budget); the rest of the budget spread
    evenly along the curve's path length (|d recall| + |d precision|), so that no run
    of dropped points moves the curve by more than about ``2 * length / max_points``.
    For drawing only: figures computed from the curve must use every point."""
    if max_points < 2:
        raise ValueError(f"max_points must be at least 2, got {max_points}")
    n = int(recall.shape[0])
    if n <= max_points:
        return np.arange(n, dtype=np.intp)
    dr = np.abs(np.diff(recall.astype(np.float64)))
    dp = np.abs(np.diff(precision.astype(np.float64)))
    keep = np.zeros(n, dtype=bool)
    keep[0] = keep[-1] = True
    n_jumps = (max_points - 2) // 4  # two points each: half the budget
    if n_jumps > 0:
        jumps = np.argpartition(np.maximum(dr, dp), -n_jumps)[-n_jumps:]
        keep[jumps] = True
        keep[jumps + 1] = True
    budget = max_points - int(keep.sum())
    path = np.concatenate(([0.0], np.cumsum(dr + dp)))
    if budget > 0 and path[-1] > 0:
        # bucket b holds the points whose path length is in [b, b + 1) * length / budget;
        # the first point of each bucket after the first: at most `budget` points
        bucket = np.floor(path / path[-1] * budget)
        keep[np.flatnonzero(np.diff(bucket) > 0) + 1] = True
    return np.flatnonzero(keep).astype(np.intp)
