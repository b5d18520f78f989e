"""The benchmark card's reference recipe, reproduced as a compatibility mode.

Kou et al. (arXiv:2510.15007) publish an evaluation card whose reference code computes
"mAP" and "label ranking loss" from binary (N, 15) matrices. Its figures are not the
standard ones (see docs/cli.md), so toxeval reports
the standard rank-based figures as its headline and shows the recipe's beside them,
labelled as the card's recipe, so that numbers can be compared with papers that used it.

What this module computes, and how it relates to the card's literal code:

* :func:`card_average_precision` reproduces the recipe's per-category "AP" **exactly**:
  ``mean(cumsum(tp) / arange(1, N+1))[tp]`` with ``tp = (y_pred == 1) & (y_true == 1)``,
  walking rows in dataset order. It divides by the row index, not by the number of
  predicted positives, so it is not average precision: perfect predictions do not score 1
  and shuffling the rows changes it. A category without a true positive gives ``nan``
  (the mean of an empty array), and then the recipe's mAP is ``nan``.
* :func:`card_ranking_loss` uses the **strict pairwise inversion count**
  ``#{(p, n): y_pred[p] < y_pred[n]} / (|P| |N|)`` per row (0 for rows with no positive or
  no negative), averaged over rows. Ties are free (unlike the standard definition). The
  literal code compares ``y_pred[i, pos] < y_pred[i, neg]`` with numpy broadcasting; that
  is this pairwise count on every row with exactly one positive or exactly one negative.
  On a row with 2..K-2 positives and ``|P| != |N|`` the literal code raises
  ``ValueError: operands could not be broadcast together``, where this function still
  runs. With an even K, a row with exactly K/2 positives makes the literal code compare
  element by element (no error, a different number); this function counts pairs there too.
* Nothing is "fixed" beyond that: ``y_true`` and ``y_pred`` are used as given (1 =
  positive, 0 = negative, anything else is neither), for any K >= 1.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["card_average_precision", "card_ranking_loss", "compute_metrics"]

# Rows per block in the pairwise count: bounds the (rows, K, K) temporary.
_BLOCK = 65_536


def _as_2d(a: object, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (N, K) array, got shape {arr.shape}")
    return arr


def card_average_precision(y_true: object, y_pred: object) -> np.ndarray:
    """Per-category "AP" of the card's recipe, reproduced exactly (order-dependent).

    For category k: ``tp = (y_pred[:, k] == 1) & (y_true[:, k] == 1)``,
    ``precisions = cumsum(tp) / arange(1, N + 1)``, ``ap_k = mean(precisions[tp])``;
    ``nan`` where the category has no true positive. Rows are taken in the given order;
    scores are not sorted, so this is not average precision.
    """
    yt = _as_2d(y_true, "y_true")
    yp = _as_2d(y_pred, "y_pred")
    if yt.shape != yp.shape:
        raise ValueError(f"y_true and y_pred have different shapes: {yt.shape} vs {yp.shape}")
    # precisions[tp] are the values cumsum(tp)[i] / (i + 1) at the hit rows i, that is
    # j / (i_j + 1) for the j-th hit: the same integer quotients, in the same order, so
    # their mean is the recipe's to the last bit, without a pass over all N rows per
    # category for the cumulative sum and the division.
    tp = (yp == 1) & (yt == 1)
    aps = np.full(tp.shape[1], np.nan)
    for k in range(tp.shape[1]):  # per category, as the recipe does
        hits = np.flatnonzero(tp[:, k])
        if hits.size:
            aps[k] = np.mean(np.arange(1, hits.size + 1) / (hits + 1))
    return aps


def card_ranking_loss(y_true: object, y_pred: object) -> float:
    """The recipe's ranking loss as the strict pairwise inversion count.

    Per row: ``#{(p, n): y_pred[p] < y_pred[n]}`` over positive ``p`` (``y_true == 1``)
    and negative ``n`` (``y_true == 0``), divided by ``|P| * |N|``; 0 for a row with no
    positive or no negative; then the mean over rows. Tied pairs are not errors. Equal to
    the card's literal code on every row where that code runs and broadcasts pairwise
    (exactly one positive or exactly one negative); also defined where it raises.
    """
    yt = _as_2d(y_true, "y_true")
    yp = _as_2d(y_pred, "y_pred")
    if yt.shape != yp.shape:
        raise ValueError(f"y_true and y_pred have different shapes: {yt.shape} vs {yp.shape}")
    n = yt.shape[0]
    if n == 0:
        return float("nan")
    pos = yt == 1
    neg = yt == 0
    if yp.dtype == np.bool_ or bool(np.logical_or(yp == 0, yp == 1).all()):
        # 0/1 predictions (the recipe's input): a strict inversion is a positive
        # predicted 0 with a negative predicted 1, so the count per row is a product.
        swaps = np.count_nonzero(pos & (yp == 0), axis=1) * np.count_nonzero(
            neg & (yp == 1), axis=1
        )
        pairs = np.count_nonzero(pos, axis=1) * np.count_nonzero(neg, axis=1)
        loss = np.divide(swaps, pairs, out=np.zeros(n), where=pairs > 0)
        return float(loss.sum() / n)
    total = 0.0
    for start in range(0, n, _BLOCK):
        sl = slice(start, start + _BLOCK)
        p, q, s = pos[sl], neg[sl], yp[sl].astype(np.float64)
        # inv[i, a, b]: positive a scored strictly below negative b
        inv = (s[:, :, None] < s[:, None, :]) & p[:, :, None] & q[:, None, :]
        swaps = inv.sum(axis=(1, 2))
        pairs = p.sum(axis=1) * q.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            loss = np.where(pairs > 0, swaps / np.maximum(pairs, 1), 0.0)
        total += float(loss.sum())
    return float(total / n)


def compute_metrics(y_true: object, y_pred: object) -> tuple[float, float]:
    """The card's ``compute_metrics``: ``(mAP, LRL)`` as the recipe defines them.

    ``mAP = mean(card_average_precision(...))`` (``nan`` if any category has no true
    positive, as in the recipe) and ``LRL = card_ranking_loss(...)``. Written for binary
    matrices; works for any K.
    """
    return card_figures(y_true, y_pred)[1:]


def card_figures(y_true: object, y_pred: object) -> tuple[np.ndarray, float, float]:
    """Per-category "AP", mAP and LRL of the recipe, computing the per-category part once."""
    aps = card_average_precision(y_true, y_pred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m_ap = float(np.mean(aps)) if aps.size else float("nan")
    return aps, m_ap, card_ranking_loss(y_true, y_pred)
