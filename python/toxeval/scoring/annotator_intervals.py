"""Intervals of mAP that resample annotators as well as rows (a two-stage bootstrap), so
that label ambiguity shows in the interval, not only sampling noise.

The figure is mAP against the annotators' majority: on a row with per-annotator labels a
known cell is positive when more than half of its annotators marked it (whatever the
``labels`` field or the annotator rule gave); other rows keep their labels. Each resample

1. draws N rows with replacement (``rng.integers(0, N, N)``); row ``i`` is drawn
   ``c_i`` times;
2. for each drawn copy of a row with ``n`` annotators, draws the annotators again (``n``
   with replacement from the row's ``n``) and takes their majority, per category. A
   category marked by a share ``q`` of them is then positive with probability
   ``p = P(Binomial(n, q) > n / 2)``, independently for each copy, so the copies of row
   ``i`` that are positive number ``Binomial(c_i, p)``: that count is what is drawn,
   ``rng.binomial(c_i, p)``, for each contested cell (``0 < p < 1``) of a drawn row
   (``c_i > 0``), the cells in row-major order (rows in dataset order, then
   categories). A unanimous cell (``p`` 0 or 1) keeps its label and draws nothing.

with ``rng = numpy.random.default_rng(seed)`` drawing step 1 then step 2 for resample 1,
then for resample 2, and so on. The dataset keeps per category how many annotators
marked it, not which annotator gave which vote, so the votes of a category are redrawn
apart from those of the other categories: each category's labels are resampled
exactly; that the same annotator's votes on two categories of a row go together is not
kept.

The rows-only interval of the same figure uses the same row draws with the labels as they
are, so the two intervals differ by the annotators' part alone. As in the report's mAP
interval (:mod:`toxeval.scoring.intervals`), mAP averages over the categories with a
known positive; a resample without a known positive of one of them is undefined and
counted, and an interval undefined on more than ``1 - confidence_level`` of the
resamples is not given (the report's rule, :func:`toxeval.stats.undefined.too_many_undefined`).

The rows-and-annotators resamples measure mAP against a majority of *redrawn*
annotators, which is noisier than the observed majority the estimate is scored against
(a cell two of three annotators marked loses its majority on about a quarter of the
redraws): for a system that ranks the majority labels well their interval sits lower
than the rows-only one and may lie wholly below the estimate; for one near chance it can
sit higher (redrawn majorities add positives, and its AP follows their share). It is reported with its own median (``median_rows_and_annotators``) and read
as how far label ambiguity alone can move the figure, not as an interval around the
estimate.

Each category's known rows are sorted by score once; a resample's AP is a
walk over them with the copies' positive and negative counts as weights (scikit-learn's
AP with ties grouped, as for the drawn rows written out), O(rows) per category.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from toxeval.scoring.result import EvaluationResult

__all__ = [
    "add_annotator_intervals",
    "annotator_map_intervals",
    "majority_labels",
    "majority_probability",
]


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


def majority_probability(n: NDArray[np.int64], q: NDArray[np.float64]) -> NDArray[np.float64]:
    """``P(Binomial(n, q) > n / 2)`` elementwise: the chance that more than half of ``n``
    annotators drawn with replacement, of whom a share ``q`` marked a category, mark it.
    Sums of binomial terms in log space (no overflow for any ``n``), one per distinct
    ``(n, q)``."""
    n, q = np.broadcast_arrays(np.asarray(n, dtype=np.int64), np.asarray(q, dtype=np.float64))
    out = np.zeros(n.shape)
    for k in np.unique(n):
        kk = int(k)
        sel = n == k
        qs, inverse = np.unique(q[sel], return_inverse=True)
        v = np.arange(kk // 2 + 1, kk + 1)
        log_comb = math.lgamma(kk + 1) - np.array(
            [math.lgamma(x + 1) + math.lgamma(kk - x + 1) for x in v]
        )
        tails = np.empty(qs.size)
        for j, qq in enumerate(qs.tolist()):
            if qq <= 0.0 or qq >= 1.0 or kk == 0:
                tails[j] = 1.0 if qq >= 1.0 and kk > 0 else 0.0
                continue
            tails[j] = float(np.exp(log_comb + v * math.log(qq) + (kk - v) * math.log1p(-qq)).sum())
        out[sel] = tails[np.asarray(inverse).reshape(-1)]
    return np.clip(out, 0.0, 1.0)


class _SortedWalk:
    """One category's known rows in descending score order, with their tie groups, its
    majority labels there and where its contested cells are: per resample, the AP of
    the drawn copies with the labels as they are and with the contested ones redrawn."""

    def __init__(
        self, scores: NDArray[Any], known: NDArray[np.bool_], labels: NDArray[np.int8],
        contested_rows: NDArray[np.intp],
    ) -> None:  # fmt: skip
        rows = np.flatnonzero(known)
        s = np.asarray(scores)[rows]
        order = np.argsort(-s.astype(np.float64), kind="stable")
        self.rows = rows[order]
        ordered = s[order]
        # the last row of each run of equal scores (-0.0 ties 0.0)
        self.ends = np.append(np.flatnonzero(ordered[1:] != ordered[:-1]), ordered.size - 1)
        self.labels = labels[self.rows].astype(np.int64)
        # the walk positions of the contested cells (given in row order), in that order
        position = np.full(labels.shape[0], -1, dtype=np.intp)
        position[self.rows] = np.arange(self.rows.size)
        self.contested = position[contested_rows]

    def aps(self, copies: NDArray[np.int64], drawn: NDArray[np.int64]) -> tuple[float, float]:
        """AP of the drawn copies (``copies`` per dataset row) with the labels as they
        are, and with the contested cells' positive copies ``drawn`` (NaN without a
        positive copy)."""
        c = copies[self.rows]
        pos = c * self.labels
        # integer sums (exact), as floats only at the distinct scores
        weight = np.cumsum(c)[self.ends].astype(np.float64)
        tp = np.cumsum(pos)[self.ends].astype(np.float64)
        pos[self.contested] = drawn
        redrawn = np.cumsum(pos)[self.ends].astype(np.float64)
        return _ap(tp, weight), _ap(redrawn, weight)


def _ap(tp: NDArray[np.float64], weight: NDArray[np.float64]) -> float:
    """scikit-learn's AP from the cumulative positive and total weights at each distinct
    score, highest first: the sum of recall steps times precision."""
    if tp.size == 0 or tp[-1] == 0:
        return float("nan")
    precision = np.divide(tp, weight, out=np.zeros_like(tp), where=weight > 0)
    return float(np.sum(np.diff(tp, prepend=0.0) * precision) / tp[-1])


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
    resamples left out of each (``n_undefined``); None when no row has annotators or
    fewer than two rows are scored (the report's rule). An
    interval defined on fewer than two resamples is None."""
    from toxeval import metrics
    from toxeval.stats.undefined import too_many_undefined, undefined_limit, withheld_or_percentile

    n_ann = np.asarray(n_annotators, dtype=np.int64)
    if not (n_ann > 0).any() or n_resamples < 2 or n_ann.shape[0] < 2:
        return None  # as the report: resampling needs two or more scored rows
    m = np.asarray(m, dtype=bool)
    labels, voted, share = majority_labels(y, m, soft, n_ann)
    cols = np.flatnonzero(((labels == 1) & m).any(axis=0))  # mAP's categories
    p = labels.astype(np.float64)
    p[voted] = majority_probability(
        np.broadcast_to(n_ann[:, None], voted.shape)[voted], share[voted]
    )
    c_rows, c_cols = np.nonzero(voted & (p > 0) & (p < 1))  # contested, row-major
    p_contested = p[c_rows, c_cols]
    # per category, its contested cells' slice of the draws once they are put in
    # category order (the draws are made in row-major order)
    by_category = np.argsort(c_cols, kind="stable")
    bounds = np.searchsorted(c_cols[by_category], np.arange(labels.shape[1] + 1))
    walks = [
        (_SortedWalk(s[:, c], m[:, c], labels[:, c], c_rows[by_category[bounds[c] : bounds[c + 1]]]),
         slice(int(bounds[c]), int(bounds[c + 1])))
        for c in cols
    ]  # fmt: skip
    n = labels.shape[0]
    rng = np.random.default_rng(seed)
    rows_only = np.full(n_resamples, np.nan)
    both = np.full(n_resamples, np.nan)
    drawn = np.zeros(c_rows.size, dtype=np.int64)
    for b in range(n_resamples):
        copies = np.bincount(rng.integers(0, n, n), minlength=n)
        # a row drawn 0 times has no copy to draw for (numpy draws nothing for n = 0)
        n_copies = copies[c_rows]
        some = n_copies > 0
        drawn[:] = 0
        drawn[some] = rng.binomial(n_copies[some], p_contested[some])
        in_order = drawn[by_category]
        if walks:  # a mean is NaN when a category has no positive copy drawn
            pairs = [walk.aps(copies, in_order[here]) for walk, here in walks]
            rows_only[b] = np.mean([a for a, _ in pairs])
            both[b] = np.mean([r for _, r in pairs])

    limit = undefined_limit(confidence_level)

    def ci(values: NDArray[np.float64]) -> list[float] | None:
        # the report's rule: no interval resting on a conditioned subset
        got = withheld_or_percentile(values[np.isfinite(values)], n_resamples, confidence_level)
        return None if got is None else list(got)

    def median(values: NDArray[np.float64]) -> float | None:
        ok = values[np.isfinite(values)]
        return (
            None
            if too_many_undefined(n_resamples - ok.shape[0], n_resamples, limit)
            else float(np.median(ok))
        )

    estimate = None
    if cols.size == 1:
        known = m[:, cols[0]]
        estimate = float(metrics.average_precision_score(labels[known, cols[0]], s[known, cols[0]]))
    elif cols.size:
        ap = metrics.average_precision_score(
            labels[:, cols], s[:, cols], average=None, mask=m[:, cols]
        )
        estimate = float(np.mean(np.asarray(ap, dtype=np.float64)))
    return {
        "map": estimate,
        "categories": int(cols.size),
        "ci_rows": ci(rows_only),
        "ci_rows_and_annotators": ci(both),
        # where the rows-and-annotators resamples centre: redrawn majorities flip contested
        # labels, so they sit below an estimate against the observed majority
        "median_rows_and_annotators": median(both),
        "n_undefined": {
            "rows": int(np.isnan(rows_only).sum()),
            "rows_and_annotators": int(np.isnan(both).sum()),
        },
        "method": "percentile",
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence_level": confidence_level,
    }


def add_annotator_intervals(
    result: EvaluationResult, n_resamples: int, seed: int, confidence_level: float
) -> None:
    """The agreement block's mAP intervals that resample annotators as well as rows
    (:func:`annotator_map_intervals`), when the rows have annotators."""
    rows = result.rows
    if result.agreement is None or rows is None or rows.soft is None or rows.n_annotators is None:
        return
    result.agreement["annotator_intervals"] = (
        annotator_map_intervals(
            rows.y_true,
            rows.scores,
            rows.mask,
            rows.soft,
            rows.n_annotators,
            n_resamples=n_resamples,
            seed=seed,
            confidence_level=confidence_level,
        )
        if n_resamples
        else None
    )
