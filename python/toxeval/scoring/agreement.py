"""Annotator disagreement: on datasets with per-annotator labels, the share of contested
cells and mAP on the unanimous versus the contested rows, with the mAP helpers it shares
with the headline figures.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from toxeval.datasets import Dataset


def _f(x: Any) -> float:
    return float(x)


def _masked_ap_auc(
    y: np.ndarray, s: np.ndarray, m: np.ndarray, included: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-category AP (on ``included``) and ROC AUC (where both classes are known)."""
    from toxeval import metrics

    k = y.shape[1]
    ap = np.full(k, np.nan)
    auc = np.full(k, np.nan)
    known_pos = ((y == 1) & m).sum(axis=0)
    known_neg = ((y == 0) & m).sum(axis=0)
    two = (known_pos > 0) & (known_neg > 0)
    for target, cols, fn in (
        (ap, np.flatnonzero(included), metrics.average_precision_score),
        (auc, np.flatnonzero(two), metrics.roc_auc_score),
    ):
        if cols.size >= 2:
            vals = fn(y[:, cols], s[:, cols], average=None, mask=m[:, cols])
            target[cols] = np.asarray(vals, dtype=np.float64)
        elif cols.size == 1:
            c = int(cols[0])
            known = m[:, c]
            target[c] = _f(fn(y[known, c], s[known, c]))
    return ap, auc


def mean_ap(ap: np.ndarray, included: np.ndarray) -> float:
    return float(np.mean(ap[included])) if included.any() else float("nan")


def agreement_figures(
    dataset: Dataset, rows: np.ndarray, s: np.ndarray, y: np.ndarray, m: np.ndarray
) -> dict[str, Any] | None:
    """Annotator disagreement: share of contested cells, mAP on unanimous vs contested rows."""
    soft = getattr(dataset, "soft", None)
    n_ann = getattr(dataset, "n_annotators", None)
    if soft is None or n_ann is None:
        return None
    annotated = np.asarray(n_ann)[rows] > 0
    if not annotated.any():
        return None
    sf = np.asarray(soft, dtype=np.float64)[rows]
    cells = m & annotated[:, None]
    contested = cells & (sf > 0) & (sf < 1)
    contested_rows = contested.any(axis=1)
    out: dict[str, Any] = {
        "annotated_rows": int(annotated.sum()),
        "annotated_cells": int(cells.sum()),
        "contested_cells": int(contested.sum()),
        "contested_cell_fraction": float(contested.sum() / cells.sum()) if cells.any() else None,
        "contested_rows": int((contested_rows & annotated).sum()),
    }
    for name, sel in (
        ("unanimous", annotated & ~contested_rows),
        ("contested", annotated & contested_rows),
    ):
        inc = ((y[sel] == 1) & m[sel]).sum(axis=0) > 0
        if sel.sum() >= 2 and inc.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ap, _ = _masked_ap_auc(y[sel], s[sel], m[sel], inc)
            out[f"map_{name}_rows"] = mean_ap(ap, inc)
        else:
            out[f"map_{name}_rows"] = None
        out[f"n_{name}_rows"] = int(sel.sum())
    return out
