"""What of a ``toxeval compare`` table has no interval or no paired bootstrap test (n/a)
and why, in the legend's words.

A figure, or a paired difference, undefined on more than ``1 - confidence_level`` of the
resamples (a resample that draws no known positive of a category leaves its AP and mAP
undefined) gets no interval, as in the systems' own reports
(:func:`toxeval.scoring.intervals.too_many_undefined`); a difference gets no bootstrap
p-value either, nor Holm's adjustment of it. The approximate randomization test resamples
no rows and keeps its p-value. A figure whose estimate lies outside its own interval (a
skewed bootstrap distribution) is named in the legend too, as in the systems' reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toxeval.report_text import level_text
from toxeval.scoring.intervals import too_many_undefined, undefined_limit

__all__ = ["difference_withheld", "na_legend", "p_text"]

_SHORT = {"map": "mAP", "label_ranking_loss": "LRL"}


def difference_withheld(cmp: Any, n_resamples: int, confidence_level: float) -> int | None:
    """The resamples on which the paired difference of ``cmp`` (a
    :class:`toxeval.stats.CompareResult`) is undefined when there are too many for an
    interval and a bootstrap p-value, else ``None``."""
    n_undefined = int(cmp.n_undefined_resamples)
    if too_many_undefined(n_undefined, n_resamples, undefined_limit(confidence_level)):
        return n_undefined
    return None


def _has_na(cells: Mapping[str, Mapping[str, Any]], baseline: str | None) -> bool:
    """Whether a figure has no interval, or a system no paired bootstrap test."""
    for row in cells.values():
        for name, c in row.items():
            if None in c.interval.values():
                return True
            if baseline in row and name != baseline:
                if any(m not in c.p_bootstrap for m in _SHORT):
                    return True
    return False


def na_legend(
    cells: Mapping[str, Mapping[str, Any]],
    datasets: Sequence[str],
    baseline: str | None,
    n_resamples: int,
    confidence_level: float,
    esc: Callable[[str], str] = str,
) -> str:
    """The legend's sentences on n/a (``""`` when the table has none): the rule, then
    each figure given no interval with its count of undefined resamples (``esc``
    escapes the system and dataset names, user text); then the figures whose estimate
    lies outside their own interval."""
    return _na_text(cells, datasets, baseline, n_resamples, confidence_level, esc) + _outside(
        cells, datasets, esc
    )


def _outside(
    cells: Mapping[str, Mapping[str, Any]], datasets: Sequence[str], esc: Callable[[str], str]
) -> str:
    """The legend's sentence on estimates outside their own interval, as the systems'
    own reports note them (``""`` when there is none)."""
    where = [
        f"{esc(s)} on {esc(d)}: {short}"
        for d in datasets
        for s, c in cells[d].items()
        for m, short in _SHORT.items()
        if (ci := c.interval.get(m)) is not None
        and math.isfinite(est := c.value[m])
        and not ci[0] <= est <= ci[1]
    ]
    if not where:
        return ""
    return (
        " The estimate lies outside its interval for "
        + "; ".join(where)
        + ": its resampled values lie mostly on one side of it (a skewed bootstrap "
        "distribution), so read that interval as a rough guide."
    )


def _na_text(
    cells: Mapping[str, Mapping[str, Any]],
    datasets: Sequence[str],
    baseline: str | None,
    n_resamples: int,
    confidence_level: float,
    esc: Callable[[str], str],
) -> str:
    if not _has_na(cells, baseline):
        return ""
    limit = level_text(undefined_limit(confidence_level))
    text = (
        f" n/a: the figure is undefined on more than {limit} of the resamples (a "
        "resample that draws no known positive of a category leaves its AP and mAP "
        "undefined), or defined on fewer than 2: no interval and no paired bootstrap "
        "test, since the resamples it is defined on would not describe it."
    )
    where = [
        f"{esc(s)} on {esc(d)}: {_SHORT[m]} undefined on {u} of {n_resamples}"
        + (" (and its difference)" if m in c.withheld_diff else "")
        for d in datasets
        for s, c in cells[d].items()
        for m, u in c.withheld.items()
    ]
    return text + (" " + "; ".join(where) + "." if where else "")


def p_text(p: float | None) -> str:
    """A p-value in the HTML table of tests (n/a: not computed)."""
    return "n/a" if p is None else f"{p:.4g}"
