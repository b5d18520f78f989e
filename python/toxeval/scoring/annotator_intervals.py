"""Intervals of mAP that resample annotators as well as rows (a two-stage bootstrap), so
that label ambiguity shows in the interval, not only sampling noise.

The figure is mAP against the annotators' majority: on a row with per-annotator labels a
known cell is positive when more than half of its annotators marked it (whatever the
``labels`` field or the annotator rule gave); other rows keep their labels. Each resample

1. draws N rows with replacement (``rng.integers(0, N, N)``), then
2. for each drawn row with annotators, draws its ``n`` annotators' votes again, per
   category: ``rng.binomial(n, share)`` votes for (the count of positives among ``n``
   annotators drawn with replacement from the row's ``n``), and takes their majority,

with ``rng = numpy.random.default_rng(seed)`` drawing step 1 then step 2 for resample 1,
then for resample 2, and so on. A row drawn twice has its annotators drawn twice,
independently. The dataset keeps per category how many annotators marked it, not which
annotator gave which vote, so the votes of a category are redrawn apart from those of
the other categories: each category's labels are resampled exactly; that the same
annotator's votes on two categories of a row go together is not kept.

The rows-only interval of the same figure uses the same row draws with the labels as they
are, so the two intervals differ by the annotators' part alone. As in the report's mAP
interval (:mod:`toxeval.scoring.intervals`), mAP averages over the categories with a
known positive, and a resample without a known positive of one of them is left out and
counted. NumPy draws the votes and the native AP kernel scores each resample; nothing
here is a loop over rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["annotator_map_intervals", "majority_labels"]


def majority_labels(
    y: NDArray[Any], m: NDArray[np.bool_], soft: NDArray[np.float64], n_annotators: NDArray[Any]
) -> tuple[NDArray[np.int8], NDArray[np.bool_], NDArray[np.float64]]:
    """(labels, voted cells, shares): ``y`` with each known cell of an annotated row set to
    its annotators' majority (share > 0.5); the cells that have votes; their shares (0
    elsewhere)."""
    annotated = np.asarray(n_annotators) > 0
    share = np.asarray(soft, dtype=np.float64)
    voted = np.asarray(m, dtype=bool) & annotated[:, None] & np.isfinite(share)
    share = np.where(voted, share, 0.0)
    labels = np.where(voted, share > 0.5, np.asarray(y) == 1).astype(np.int8)
    return labels, voted, share


def _map(
    y: NDArray[np.int8], s: NDArray[Any], m: NDArray[np.bool_], cols: NDArray[np.intp]
) -> float:
    """mAP over ``cols``; NaN when one of them has no known positive."""
    from toxeval import metrics

    if not ((y[:, cols] == 1) & m[:, cols]).any(axis=0).all():
        return float("nan")
    if cols.size == 1:
        c = int(cols[0])
        known = m[:, c]
        return float(metrics.average_precision_score(y[known, c], s[known, c]))
    ap = metrics.average_precision_score(y[:, cols], s[:, cols], average=None, mask=m[:, cols])
    return float(np.mean(np.asarray(ap, dtype=np.float64)))


def annotator_map_intervals(
    y: NDArray[Any],
    s: NDArray[Any],
    m: NDArray[np.bool_],
    soft: NDArray[np.float64],
    n_annotators: NDArray[Any],
    *,
    n_resamples: int,
    seed: int,
    confidence_level: float,
) -> dict[str, Any] | None:
    """mAP against the annotators' majority with its percentile intervals resampling the
    rows (``ci_rows``) and the rows and their annotators (``ci_rows_and_annotators``), the
    resamples left out of each (``n_undefined``); None when no row has annotators. An
    interval defined on fewer than two resamples is None."""
    from toxeval.stats.intervals import interval

    n_ann = np.asarray(n_annotators, dtype=np.int64)
    if not (n_ann > 0).any() or n_resamples < 2:
        return None
    m = np.asarray(m, dtype=bool)
    labels, voted, share = majority_labels(y, m, soft, n_ann)
    cols = np.flatnonzero(((labels == 1) & m).any(axis=0))  # mAP's categories
    n = labels.shape[0]
    rng = np.random.default_rng(seed)
    rows_only = np.full(n_resamples, np.nan)
    both = np.full(n_resamples, np.nan)
    for b in range(n_resamples):
        idx = rng.integers(0, n, n)
        n_b = n_ann[idx][:, None]
        votes = rng.binomial(n_b, share[idx])
        if cols.size == 0:
            continue
        s_b, m_b, y_b = s[idx], m[idx], labels[idx]
        rows_only[b] = _map(y_b, s_b, m_b, cols)
        redrawn = np.where(voted[idx], votes * 2 > n_b, y_b == 1).astype(np.int8)
        both[b] = _map(redrawn, s_b, m_b, cols)

    def ci(values: NDArray[np.float64]) -> list[float] | None:
        ok = values[np.isfinite(values)]
        if ok.shape[0] < 2:
            return None
        low, high = interval(ok, np.nan, confidence_level=confidence_level, method="percentile")
        return [float(low), float(high)]

    return {
        "map": _map(labels, s, m, cols) if cols.size else None,
        "categories": int(cols.size),
        "ci_rows": ci(rows_only),
        "ci_rows_and_annotators": ci(both),
        "n_undefined": {
            "rows": int(np.isnan(rows_only).sum()),
            "rows_and_annotators": int(np.isnan(both).sum()),
        },
        "method": "percentile",
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence_level": confidence_level,
    }
