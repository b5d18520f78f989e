"""Bootstrap intervals of the report's figures, shared by the report and ``toxeval compare``.

:func:`figure_intervals` resamples the scored rows (:func:`toxeval.stats.bootstrap`, its
seeded draws: the same seed gives the same numbers for any ``n_jobs``) and returns
percentile intervals of

* **mAP**: macro AP over the categories with a known positive (:func:`map_columns`),
  the report's definition. The per-category AP distributions come from one
  ``average=None`` bootstrap; a resample's mAP is their mean, and a resample on which
  any of these categories has no known positive drawn is undefined for mAP (what
  ``stats.bootstrap(..., average="macro")`` does, so both give the same interval);
* **per-category AP**, from the same resamples: a resample without a known positive of
  that category is undefined for it;
* **label ranking loss** over every category, with :func:`toxeval.stats.bootstrap` of
  ``label_ranking_loss`` and the mask on all scored rows (the mAP resamples' draws):
  a drawn row without a known label is not a row of this figure (the report's rule)
  and weighs 0 in its resample, and a resample that draws no row with a known label is
  undefined.

A figure undefined on more than ``1 - confidence_level`` of the resamples (5% at 95%,
:func:`too_many_undefined`), or defined on fewer than two, gets no interval (``None``),
only its count of undefined resamples: the defined resamples are then a selection (those
that draw a rare category's positives, where its AP runs high), and their interval may
lie wholly off the figure. Never a NaN in place of an interval.
:func:`add_intervals` puts them into an :class:`~toxeval.scoring.EvaluationResult`, with
notes that say which figures have no interval and which categories cause it.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

import numpy as np
from numpy.typing import NDArray

from toxeval.stats.undefined import (
    too_many_undefined,
    undefined_limit,
    withheld_or_percentile,
)

if TYPE_CHECKING:
    from toxeval.scoring.result import EvaluationResult

__all__ = [
    "DEFAULT_RESAMPLES",
    "MAX_RESAMPLES",
    "FigureIntervals",
    "add_intervals",
    "check_resamples",
    "figure_intervals",
    "map_columns",
    "too_many_undefined",
    "undefined_limit",
]

#: Resamples of a report's intervals unless asked otherwise.
DEFAULT_RESAMPLES = 1000
#: Most resamples a report or a comparison draws: each one rescores every row (of every
#: system), so far more would run for hours without changing the intervals' third decimal.
MAX_RESAMPLES = 100_000
#: The interval method of every report and comparison.
METHOD: Final[Literal["percentile"]] = "percentile"


def check_resamples(n_resamples: Any, *, allow_zero: bool, option: str = "bootstrap") -> int:
    """``n_resamples`` as an int, or a ``ValueError`` naming ``option``: 2 to
    :data:`MAX_RESAMPLES`, or 0 (no intervals) when ``allow_zero``."""
    ok = isinstance(n_resamples, numbers.Integral) and not isinstance(n_resamples, bool)
    n = int(n_resamples) if ok else -1
    if not ((allow_zero and n == 0) or 2 <= n <= MAX_RESAMPLES):
        zero = " (0: no intervals)" if allow_zero else ""
        raise ValueError(
            f"{option} must be a number of resamples from 2 to {MAX_RESAMPLES}{zero}, "
            f"got {n_resamples!r}"
        )
    return n


def map_columns(y: NDArray[Any], m: NDArray[np.bool_]) -> NDArray[np.intp]:
    """The categories mAP averages over: those with a known positive among the rows."""
    return np.flatnonzero(((np.asarray(y) == 1) & np.asarray(m, dtype=bool)).any(axis=0))


Interval = tuple[float, float] | None


@dataclass(frozen=True)
class FigureIntervals:
    """Percentile bootstrap intervals of the report's figures on one set of rows.

    ``map``, ``label_ranking_loss``: ``(low, high)`` or ``None`` (undefined on too many
    resamples, :func:`too_many_undefined`, or undefined on the rows); ``*_estimate``: the
    figure on the rows (what the interval is around); ``n_undefined``: resamples on which
    each figure is undefined (``None`` when the figure is undefined on the rows). ``ap``:
    per category (every column of the input, in order) ``(low, high)`` or ``None``;
    ``ap_undefined``: per category the undefined resamples, ``None`` for a category
    outside mAP. A figure defined on the rows whose interval is ``None`` is *withheld*
    (:meth:`withheld`)."""

    n_resamples: int
    confidence_level: float
    seed: int
    map: Interval
    map_estimate: float
    label_ranking_loss: Interval
    label_ranking_loss_estimate: float
    n_undefined: dict[str, int | None]
    ap: list[Interval]
    ap_undefined: list[int | None]

    @property
    def undefined_limit(self) -> float:
        """The share of undefined resamples past which a figure gets no interval."""
        return undefined_limit(self.confidence_level)

    def withheld(self) -> dict[str, int]:
        """The headline figures (``map``, ``label_ranking_loss``) defined on the rows
        but given no interval, with their counts of undefined resamples."""
        return {
            name: u
            for name, u in self.n_undefined.items()
            if u is not None and getattr(self, name) is None
        }


def _ap_distribution(
    y: NDArray[Any],
    s: NDArray[Any],
    m: NDArray[np.bool_],
    *,
    n_resamples: int,
    seed: int,
    n_jobs: int | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-category AP on the rows and on every resample, shape ``(k, n_resamples)``
    with NaN where the resample draws no known positive of the category.

    One ``stats.bootstrap(average=None)`` call; it refuses when a category is defined
    on fewer than two resamples (possible only with a handful of resamples: a category
    with a known positive misses it in at most ~37% of them), and then the resamples
    are rebuilt from :func:`toxeval.stats.bootstrap_indices` and scored one by one with
    :func:`toxeval.metrics.average_precision_score`, the same values."""
    from toxeval import metrics, stats
    from toxeval.stats.bootstrap import conditioned_intervals_allowed

    try:
        with conditioned_intervals_allowed():  # the rule is applied here, on the counts
            res = stats.bootstrap(
                "average_precision_score",
                y,
                s,
                mask=m,
                average=None,
                n_resamples=n_resamples,
                method=METHOD,
                seed=seed,
                n_jobs=n_jobs,
            )
        return np.asarray(res.estimate, dtype=np.float64), np.asarray(
            res.bootstrap_distribution, dtype=np.float64
        )
    except ValueError:
        pass
    k = y.shape[1]
    estimate = np.array(
        [metrics.average_precision_score(y[m[:, j], j], s[m[:, j], j]) for j in range(k)]
    )
    dist = np.full((k, n_resamples), np.nan)
    for b, idx in enumerate(stats.bootstrap_indices(y.shape[0], n_resamples, seed=seed)):
        yb, sb, mb = y[idx], s[idx], m[idx]
        for j in range(k):
            known = mb[:, j]
            if (yb[known, j] == 1).any():
                dist[j, b] = metrics.average_precision_score(yb[known, j], sb[known, j])
    return estimate, dist


def _lrl_interval(
    y: NDArray[Any],
    s: NDArray[Any],
    m: NDArray[np.bool_],
    *,
    n_resamples: int,
    confidence_level: float,
    seed: int,
    n_jobs: int | None,
) -> tuple[Interval, float, int | None]:
    """Label ranking loss: interval, estimate and resamples left out. Every scored row
    is resampled; a drawn row without a known label weighs 0 (``toxeval.stats``), so a
    resample's value is the figure's definition on the drawn rows. Undefined on the
    rows (no row with a known label): ``(None, nan, None)``."""
    from toxeval import stats
    from toxeval.stats.bootstrap import conditioned_intervals_allowed

    if not m.any():
        return None, float("nan"), None
    try:
        with conditioned_intervals_allowed():  # the rule is applied below, on the counts
            res = stats.bootstrap(
                "label_ranking_loss",
                y,
                s,
                mask=m,
                n_resamples=n_resamples,
                method=METHOD,
                confidence_level=confidence_level,
                seed=seed,
                n_jobs=n_jobs,
            )
    except stats.TooFewResamplesError:
        # Defined on fewer than two resamples: no interval, but the figure and the
        # count of resamples that draw no row with a known label.
        from toxeval import metrics

        known: NDArray[np.bool_] = np.asarray(m.any(axis=1), dtype=bool)
        drawn = known[stats.bootstrap_indices(y.shape[0], n_resamples, seed=seed)]
        estimate = metrics.label_ranking_loss(y, s, mask=m, n_jobs=n_jobs)
        return None, float(estimate), int((~drawn.any(axis=1)).sum())
    ci = res.confidence_interval
    n_undefined = int(res.n_undefined)
    if too_many_undefined(n_undefined, n_resamples, undefined_limit(confidence_level)):
        return None, float(res.estimate), n_undefined
    return (float(ci.low), float(ci.high)), float(res.estimate), n_undefined


def figure_intervals(
    y: NDArray[Any],
    s: NDArray[Any],
    m: NDArray[np.bool_],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence_level: float = 0.95,
    seed: int = 0,
    n_jobs: int | None = None,
) -> FigureIntervals:
    """Intervals of mAP, label ranking loss and per-category AP on the rows ``y``
    (labels, unknown cells 0), ``s`` (scores), ``m`` (True where the label is known);
    see the module docstring."""
    check_resamples(n_resamples, allow_zero=False)
    y, s, m = np.asarray(y), np.asarray(s), np.asarray(m, dtype=bool)
    cols = map_columns(y, m)
    k = y.shape[1]
    ap: list[Interval] = [None] * k
    ap_undefined: list[int | None] = [None] * k
    map_ci: Interval = None
    map_estimate, map_undefined = float("nan"), None
    if y.shape[0] < 2:
        # every resample of one row is that row: the estimates without intervals
        # (scipy.stats.bootstrap refuses one observation)
        from toxeval import metrics

        if cols.size:
            map_estimate = float(
                metrics.average_precision_score(
                    y[:, cols], s[:, cols], mask=m[:, cols], average="macro"
                )
            )
        lrl = metrics.label_ranking_loss(y, s, mask=m) if m.any() else float("nan")
        return FigureIntervals(
            n_resamples=n_resamples,
            confidence_level=float(confidence_level),
            seed=int(seed),
            map=None,
            map_estimate=map_estimate,
            label_ranking_loss=None,
            label_ranking_loss_estimate=float(lrl),
            n_undefined={"map": None, "label_ranking_loss": None},
            ap=ap,
            ap_undefined=ap_undefined,
        )
    if cols.size:
        estimate, dist = _ap_distribution(
            y[:, cols], s[:, cols], m[:, cols], n_resamples=n_resamples, seed=seed, n_jobs=n_jobs
        )
        defined = np.isfinite(dist)
        for i, j in enumerate(cols):
            ap[j] = withheld_or_percentile(dist[i, defined[i]], n_resamples, confidence_level)
            ap_undefined[j] = int(n_resamples - defined[i].sum())
        every = defined.all(axis=0)
        map_estimate = float(np.mean(estimate))
        map_ci = withheld_or_percentile(
            np.mean(dist[:, every], axis=0), n_resamples, confidence_level
        )
        map_undefined = int(n_resamples - every.sum())
    lrl_ci, lrl_estimate, lrl_undefined = _lrl_interval(
        y,
        s,
        m,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        n_jobs=n_jobs,
    )
    return FigureIntervals(
        n_resamples=n_resamples,
        confidence_level=float(confidence_level),
        seed=int(seed),
        map=map_ci,
        map_estimate=map_estimate,
        label_ranking_loss=lrl_ci,
        label_ranking_loss_estimate=lrl_estimate,
        n_undefined={"map": map_undefined, "label_ranking_loss": lrl_undefined},
        ap=ap,
        ap_undefined=ap_undefined,
    )


#: The options' names in the Python API and on the command line, for error messages.
API_NAMES = ("bootstrap", "bootstrap_seed")
CLI_NAMES = ("--bootstrap", "--bootstrap-seed")


def check_options(
    n_resamples: Any, seed: Any, confidence_level: Any, *, names: tuple[str, str] = API_NAMES
) -> int:
    """The report's resampling options (``n_resamples=0``: no intervals), with a clear
    ``ValueError`` naming the option (``names``: resamples, seed) for bad ones."""
    from toxeval.stats.bootstrap import check_options as check_resampling

    n = check_resamples(n_resamples, allow_zero=True, option=names[0])
    try:  # the seed and level as toxeval.stats checks them, named as the caller knows them
        check_resampling(2, confidence_level, METHOD, seed)
    except ValueError as e:
        text = str(e)
        raise ValueError(
            names[1] + text.removeprefix("seed") if text.startswith("seed") else text
        ) from None
    return n


#: How every note about the intervals begins (and how add_intervals finds the old ones).
NOTE_PREFIX = "bootstrap: "


def add_intervals(
    result: EvaluationResult,
    n_resamples: int = DEFAULT_RESAMPLES,
    *,
    seed: int = 0,
    confidence_level: float = 0.95,
    n_jobs: int | None = None,
) -> EvaluationResult:
    """Set ``result.figures["intervals"]`` and each category's ``ap_ci``,
    ``ap_ci_undefined`` and ``ap_ci_withheld`` from ``result.rows`` (``n_resamples=0``:
    ``None`` everywhere: no intervals). Returns ``result``, changed in place; the notes of
    intervals it had before are replaced.

    ``figures["intervals"]["withheld"]`` names each headline figure given no interval
    (undefined on too many resamples, :func:`too_many_undefined`) with its count of
    undefined resamples and, for mAP, the categories that leave it undefined (those
    undefined most often first); ``undefined_limit`` is the share past which that
    happens."""
    n = check_options(n_resamples, seed, confidence_level)
    if n and result.rows is None:
        raise ValueError("this result carries no scored rows (it was not made by scoring)")
    result.notes[:] = [note for note in result.notes if not note.startswith(NOTE_PREFIX)]
    if n == 0:
        result.figures["intervals"] = None
        for row in result.per_category:
            row["ap_ci"] = row["ap_ci_undefined"] = row["ap_ci_withheld"] = None
        if result.agreement is not None:
            result.agreement["annotator_intervals"] = None
        return result
    rows = result.rows
    assert rows is not None  # checked above, before anything changed
    fi = figure_intervals(
        rows.y_true,
        rows.scores,
        rows.mask,
        n_resamples=n,
        confidence_level=confidence_level,
        seed=seed,
        n_jobs=n_jobs,
    )
    ids = [str(r["id"]) for r in result.per_category]
    withheld: dict[str, dict[str, Any]] = {
        name: {"n_undefined": u, "categories": _causes(ids, fi) if name == "map" else []}
        for name, u in fi.withheld().items()
    }
    result.figures["intervals"] = {
        "method": METHOD,
        "confidence_level": fi.confidence_level,
        "n_resamples": fi.n_resamples,
        "seed": fi.seed,
        "map": list(fi.map) if fi.map else None,
        "label_ranking_loss": list(fi.label_ranking_loss) if fi.label_ranking_loss else None,
        "n_undefined": fi.n_undefined,
        "undefined_limit": fi.undefined_limit,
        "withheld": withheld,
    }
    for row, ci, undefined in zip(result.per_category, fi.ap, fi.ap_undefined, strict=True):
        row["ap_ci"] = list(ci) if ci else None
        row["ap_ci_undefined"] = undefined
        row["ap_ci_withheld"] = None if undefined is None else ci is None
    result.notes.extend(_notes(result, fi))
    from toxeval.scoring.annotator_intervals import add_annotator_intervals

    add_annotator_intervals(result, n, seed, confidence_level)
    return result


def _causes(ids: list[str], fi: FigureIntervals) -> list[str]:
    """The categories of mAP undefined on some resamples (each such resample leaves mAP
    undefined), those undefined most often first, then in column order."""
    counts = [(u, j) for j, u in enumerate(fi.ap_undefined) if u]
    return [ids[j] for _, j in sorted(counts, key=lambda c: (-c[0], c[1]))]


def _share(fi: FigureIntervals) -> str:
    """The limit as text: ``5%`` at 95%."""
    from toxeval.report_text import level_text

    return level_text(fi.undefined_limit)


def _notes(result: EvaluationResult, fi: FigureIntervals) -> list[str]:
    """What the reader needs to read the intervals: resamples left out, figures
    without an interval and why, an estimate outside its own interval."""
    if result.rows is not None and result.rows.y_true.shape[0] < 2:
        return [f"{NOTE_PREFIX}no intervals: resampling needs two or more scored rows"]
    notes = []
    b = fi.n_resamples
    ids = [str(r["id"]) for r in result.per_category]
    left_out = [f"{i} {u}" for i, u in zip(ids, fi.ap_undefined, strict=True) if u]
    if left_out:  # None (outside mAP) and 0 say nothing
        notes.append(
            f"{NOTE_PREFIX}resamples that draw no known positive of a category are undefined "
            f"for its AP and for mAP, and left out of their intervals (of {b}: "
            + ", ".join(left_out)
            + f"; mAP {fi.n_undefined['map'] or 0})"
        )
    missing = []
    for name, u in fi.withheld().items():
        if name == "map":
            causes = _causes(ids, fi)
            why = f", through {', '.join(causes)}" if causes else ""
            missing.append(f"mAP (undefined on {u} of {b} resamples{why})")
        else:
            missing.append(
                f"label ranking loss (undefined on {u} of {b} resamples: they draw no row "
                "with a known label)"
            )
    aps = [i for i, ci, u in zip(ids, fi.ap, fi.ap_undefined, strict=True) if ci is None and u]
    if aps:
        missing.append("the AP of " + ", ".join(aps))
    if missing:
        notes.append(
            f"{NOTE_PREFIX}no interval for "
            + "; ".join(missing)
            + f": a figure undefined on more than {_share(fi)} of the resamples (or defined "
            "on fewer than 2) gets none: the resamples it is defined on are a selection "
            "(those that draw a category's few known positives, where its AP runs high), "
            "and their interval need not contain the figure; more known positives give one"
        )
    outside = [
        name
        for name, ci, est in (
            ("mAP", fi.map, fi.map_estimate),
            ("label ranking loss", fi.label_ranking_loss, fi.label_ranking_loss_estimate),
            *(
                (f"AP of {i}", ci, r["ap"])
                for i, ci, r in zip(ids, fi.ap, result.per_category, strict=True)
            ),
        )
        if ci is not None and est is not None and not ci[0] <= est <= ci[1]
    ]
    if outside:
        notes.append(
            f"{NOTE_PREFIX}the estimate lies outside its own interval for "
            + ", ".join(outside)
            + ": its resampled values lie mostly on one side of it (a skewed bootstrap "
            "distribution), so read that interval as a rough guide"
        )
    return notes
