"""When a metric is undefined on a set of rows (a resample, a leave-one-out set, the
full data), for ``toxeval.stats``: an undefined value is left out and counted, never
scored (``docs/statistics.md``, "Undefined resamples").

* ``evaluate_defined``: the metric's value, or None where it warns, raises
  ``ValueError`` or returns NaN;
* ``no_label_weight``: AP and ROC AUC with ``average="weighted"`` whose label weights
  sum to about 0, where scikit-learn returns 0 without a warning;
* ``per_column``: AP and ROC AUC with ``average=None`` scored label by label, so a
  label undefined on some rows leaves the other labels' values defined;
* ``undefined_limit``, ``too_many_undefined``: when a figure undefined on some resamples
  gets no interval at all (the reports' rule, ``docs/statistics.md``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval import metrics as _metrics

__all__ = [
    "LABEL_WISE",
    "evaluate_defined",
    "no_label_weight",
    "per_column",
    "tiny_label_weight",
    "too_many_undefined",
    "undefined_limit",
    "withheld_or_percentile",
]

#: Metrics whose ``average=None`` values are the metric on each label's column alone
#: and whose ``average="weighted"`` weighs labels by their positives' sample weights.
LABEL_WISE = (_metrics.average_precision_score, _metrics.roc_auc_score)


def evaluate_defined(
    func: Callable[..., Any], *args: Any, **kwargs: Any
) -> NDArray[np.float64] | None:
    """``func(*args, **kwargs)`` as a float64 array, or None when the metric is
    undefined there (it warns, raises ``ValueError`` or returns NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            value = np.atleast_1d(np.asarray(func(*args, **kwargs), dtype=np.float64))
        except (Warning, ValueError, ZeroDivisionError):
            return None
    if not np.all(np.isfinite(value)):
        return None
    return value


def no_label_weight(
    func: Callable[..., Any], average: Any, y_true: Any, weight: Any, mask: Any
) -> bool:
    """Whether AP or ROC AUC with ``average="weighted"`` is undefined on these rows
    because its label weights (the known positives' sample weights) sum to about 0
    (``np.isclose``, as scikit-learn tests it): scikit-learn returns 0 there without a
    warning, which is no AP or AUC of anything (no weighted positive was drawn)."""
    if func not in LABEL_WISE or average != "weighted":
        return False
    y = np.asarray(y_true.toarray() if hasattr(y_true, "toarray") else y_true)
    if y.ndim != 2 or y.dtype.kind not in "biuf":
        return False
    support = y.astype(np.float64)
    if mask is not None:
        support = support * np.asarray(mask, dtype=bool)
    if weight is not None:
        support = support * np.asarray(weight, dtype=np.float64).reshape(-1, 1)
    return bool(np.isclose(np.sum(support), 0))


def tiny_label_weight(
    weight: NDArray[np.float64] | None, y_pos: NDArray[Any], mask: NDArray[np.bool_] | None
) -> bool:
    """Whether some row's known positives weigh more than 0 but at most 1e-8 in all:
    then a resample's label weights may sum to about 0 without being 0, which the
    native AP walk would score (a sum of exactly 0 it leaves undefined, and every other
    sum is above 1e-8)."""
    if weight is None:
        return False
    known = y_pos if mask is None else y_pos & mask
    mass = weight * known.sum(axis=1)
    return bool(np.any((mass > 0) & (mass <= 1e-8)))


def per_column(
    func: Callable[..., Any], y_true: Any, y_score: Any, kwargs: dict[str, Any]
) -> NDArray[np.float64]:
    """``average=None`` values of a label-wise metric (``LABEL_WISE``) scored one
    label's column at a time: NaN where that label is undefined, the metric's value
    elsewhere."""
    yt = y_true.toarray() if hasattr(y_true, "toarray") else np.asarray(y_true)
    ys = np.asarray(y_score)
    kw = {k: v for k, v in kwargs.items() if k not in ("mask", "average")}
    mask = kwargs.get("mask")
    out = np.full(yt.shape[1], np.nan)
    for j in range(yt.shape[1]):
        if mask is not None:
            kw["mask"] = np.asarray(mask)[:, j]
        value = evaluate_defined(func, yt[:, j], ys[:, j], **kw)
        if value is not None:
            out[j] = value[0]
    return out


def undefined_limit(confidence_level: float) -> float:
    """The largest share of undefined resamples an interval at ``confidence_level`` may
    rest on: ``1 - confidence_level``, the share the interval itself leaves outside
    (5% at 95%). Past it the undefined resamples alone could hold both tails the
    interval cuts off, so the defined ones cannot place its ends."""
    return round(1.0 - float(confidence_level), 12)  # 0.05, not 0.050000000000000044


def too_many_undefined(n_undefined: int, n_resamples: int, limit: float) -> bool:
    """Whether a figure undefined on ``n_undefined`` of ``n_resamples`` resamples gets
    no interval (or test): defined on fewer than two, or undefined on more than the
    share ``limit`` of them (:func:`undefined_limit`; within 1e-9 of it counts as at
    it, so 50 of 1000 at 95% is not more than 5%)."""
    return n_resamples - n_undefined < 2 or n_undefined > limit * n_resamples + 1e-9


def withheld_or_percentile(
    defined: NDArray[np.float64], n_resamples: int, confidence_level: float
) -> tuple[float, float] | None:
    """The percentile interval (``toxeval.stats``' formula) of the ``defined`` values of
    ``n_resamples`` resamples, or ``None`` when the others are too many
    (:func:`too_many_undefined`): the reports' intervals and the annotator intervals."""
    import math

    from toxeval.stats.intervals import interval

    n_undefined = n_resamples - defined.shape[0]
    if too_many_undefined(n_undefined, n_resamples, undefined_limit(confidence_level)):
        return None
    low, high = interval(defined, math.nan, confidence_level=confidence_level, method="percentile")
    return float(low), float(high)
