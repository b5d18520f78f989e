"""The benchmark card's reference recipe (:mod:`toxeval.card_recipe`) on predictions
thresholded at the threshold, restricted to rows whose labels are all known, labelled as
the card's recipe with its caveats (:data:`CARD_CAVEATS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from toxeval import card_recipe

if TYPE_CHECKING:
    pass


CARD_CAVEATS = (
    "The card's recipe divides running true positives by the row index and walks rows in "
    "dataset order, so its 'AP' is not average precision (perfect predictions do not "
    "score 1, row order changes it; a category with no true positive gives NaN and then "
    "mAP is NaN). Its ranking loss is the strict pairwise inversion count (ties are free); "
    "the literal code raises a broadcasting error on rows with 2..K-2 positives, where "
    "toxeval still counts pairs. Computed on predictions thresholded at the threshold."
)


def card_figures(
    y: np.ndarray,
    s: np.ndarray,
    m: np.ndarray,
    threshold: float,
    ids: Sequence[str],
    all_known: bool = False,
) -> dict[str, Any]:
    full = np.ones(m.shape[0], dtype=bool) if all_known else m.all(axis=1)
    n_full = int(full.sum())
    out: dict[str, Any] = {
        "label": "benchmark card's reference recipe (compatibility mode; not standard AP)",
        "threshold": threshold,
        "rows_used": n_full,
        "rows_skipped_partial_labels": int((~full).sum()),
        "caveats": CARD_CAVEATS,
    }
    if n_full == 0:
        out.update(map=None, label_ranking_loss=None, per_category_ap={})
        return out
    everything = n_full == full.shape[0]
    yb = y if everything else y[full]
    pb = (s if everything else s[full]) >= threshold
    if pb.flags.f_contiguous and not pb.flags.c_contiguous:
        # scores joined from a table are column-major: labels in the same order make the
        # recipe's element-wise passes and per-row counts run along contiguous columns
        yb = np.asfortranarray(yb)
    aps, m_ap, lrl = card_recipe.card_figures(yb, pb)
    out.update(
        map=m_ap,
        label_ranking_loss=lrl,
        per_category_ap={c: float(a) for c, a in zip(ids, aps, strict=True)},
    )
    return out
