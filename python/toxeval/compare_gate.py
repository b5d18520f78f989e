"""The regression gate of ``toxeval compare --fail-if-worse``: whether a new system is
worse than the baseline by more than a margin, decided by a one-sided paired test so a
CI job can fail on it.

For each figure named (``map``, ``lrl``, ``ap:CATEGORY``), each system other than the
baseline and each dataset the baseline was scored on, let ``d*`` be the paired bootstrap
differences (system - baseline, on the same resampled rows; the resamples of
:func:`toxeval.stats.compare`, so the same seed gives the same resamples as the table's
paired tests), oriented so that a positive ``d*`` is better (label ranking loss: baseline
- system). The null hypothesis is "not worse by more than ``margin``" (``d >= -margin``);
its one-sided bootstrap p-value is ``(1 + #{d* >= -margin}) / (1 + B)`` over the ``B``
defined resamples (add-one, so never 0). The p-values of every test of the gate are
Holm-adjusted together (:func:`toxeval.stats.holm`), so the gate fails wrongly with
probability at most ``alpha`` whatever the number of figures, systems and datasets.

A test that cannot be run (one row; a difference undefined on more than ``ALPHA`` of the
resamples: :func:`toxeval.scoring.intervals.too_many_undefined`) is *undecided*: the
gate fails on it too, as a regression that could not be tested is not shown absent.
Definitions and a CI example: ``docs/cli.md`` ("Regression gate").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval.scoring.intervals import too_many_undefined

__all__ = [
    "ALPHA",
    "Gate",
    "GateFigure",
    "GateTest",
    "dataset_tests",
    "one_sided_pvalue",
    "parse_figures",
    "suggest_category",
]

_NAMES = {"map": "map", "lrl": "label_ranking_loss", "label_ranking_loss": "label_ranking_loss"}


#: the family-wise error rate of the gate: Holm-adjusted p-values at or below it fail
ALPHA = 0.05

#: why a system with no results on a dataset the baseline was scored on is undecided there
MISSING = "no results of it on this dataset (its folder is missing from the comparison)"


@dataclass(frozen=True)
class GateFigure:
    """One figure the gate watches: ``metric`` is ``map``, ``label_ranking_loss`` or
    ``ap`` (one category's average precision, ``category`` its id)."""

    metric: str
    category: str | None = None

    @property
    def key(self) -> str:
        """The figure as the user names it: ``map``, ``lrl`` or ``ap:CATEGORY``."""
        if self.metric == "ap":
            return f"ap:{self.category}"
        return "lrl" if self.metric == "label_ranking_loss" else self.metric

    @property
    def higher_is_better(self) -> bool:
        return self.metric != "label_ranking_loss"


def parse_figures(text: str | Sequence[str]) -> list[GateFigure]:
    """``map,lrl,ap:hate`` (or a list of such items) as figures, each once, in order.
    Raises ``ValueError`` naming an item that is none of ``map``, ``lrl`` and
    ``ap:CATEGORY``."""
    items = [text] if isinstance(text, str) else list(text)
    out: list[GateFigure] = []
    for item in (p.strip() for chunk in items for p in chunk.split(",")):
        if not item:
            continue
        low = item.lower()
        if low in _NAMES:
            fig = GateFigure(_NAMES[low])
        elif low.startswith("ap:") and item[3:].strip():
            fig = GateFigure("ap", item[3:].strip())
        else:
            raise ValueError(
                f"--fail-if-worse: {item!r} is not a figure; give map, lrl or ap:CATEGORY "
                "(comma-separated)"
            )
        if fig not in out:
            out.append(fig)
    if not out:
        raise ValueError("--fail-if-worse: name at least one figure (map, lrl, ap:CATEGORY)")
    return out


def check_margin(margin: float) -> float:
    """The margin as a float in [0, 1) (``-0`` as 0; a ``ValueError`` otherwise). The
    figures the gate watches lie in [0, 1], so no system is worse by 1 or more: a margin
    of 1 or more would pass every system, most likely a percentage meant as a fraction."""
    try:
        value = float(margin) + 0.0  # -0.0 + 0.0 is 0.0
    except (TypeError, ValueError):
        raise ValueError(f"--margin must be a number, got {margin!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"--margin must be a finite number >= 0, got {margin!r}")
    if value >= 1:
        raise ValueError(
            f"--margin {margin!r} would pass every system: the figures lie in [0, 1], so "
            "give the margin as a fraction (0.01 is one point of mAP)"
        )
    return value


def one_sided_pvalue(better: NDArray[np.float64], margin: float) -> float:
    """p-value of "not worse by more than ``margin``" from the defined bootstrap
    differences ``better`` (positive: the system is better than the baseline)."""
    hits = int(np.count_nonzero(better >= -margin))
    return float((1 + hits) / (1 + better.shape[0]))


def check_power(n_tests: int, n_resamples: int, alpha: float) -> None:
    """A ``CompareError`` when the gate could never fail: the smallest one-sided p-value
    is ``1 / (1 + B)``, the smallest Holm-adjusted one ``m / (1 + B)`` over ``m`` tests,
    so with ``m / (1 + B) > alpha`` every system passes, however much worse it is."""
    from toxeval.compare_inputs import CompareError

    if n_tests and n_tests / (1 + n_resamples) > alpha:
        need = math.ceil(n_tests / alpha - 1 - 1e-9)
        raise CompareError(
            f"--fail-if-worse: with {n_resamples} resamples the gate could never fail: the "
            f"smallest p-value of its {n_tests} tests after Holm's adjustment is "
            f"{n_tests}/{1 + n_resamples} > {alpha:g}; give --bootstrap {need} or more"
        )


@dataclass(frozen=True)
class GateTest:
    """One (dataset, system, figure) test. ``difference``: system - baseline as the
    figure reads (mAP up is better, label ranking loss down); ``p``/``p_holm``: the
    one-sided p-value and its Holm adjustment, ``None`` when undecided (``reason``)."""

    dataset: str
    system: str
    figure: str
    difference: float
    worse_by: float
    p: float | None
    p_holm: float | None = None
    reason: str | None = None

    def worse(self, alpha: float) -> bool:
        return self.p_holm is not None and self.p_holm <= alpha


def gate_test(
    dataset: str,
    system: str,
    figure: GateFigure,
    difference: float,
    distribution: NDArray[np.float64] | None,
    margin: float,
    n_resamples: int,
) -> GateTest:
    """The test of one figure from the observed ``difference`` (system - baseline) and
    the defined bootstrap differences of the ``n_resamples`` drawn (``None``, empty or
    too few for a p-value of ``ALPHA`` or less: undecided)."""
    sign = 1.0 if figure.higher_is_better else -1.0
    worse_by = -sign * difference
    if distribution is None or distribution.shape[0] == 0:
        reason = "the difference has no bootstrap distribution (too few rows or defined resamples)"
        return GateTest(dataset, system, figure.key, difference, worse_by, None, reason=reason)
    d = np.asarray(distribution, dtype=np.float64)
    ok = d[np.isfinite(d)]
    n_undefined = n_resamples - ok.shape[0]
    if n_undefined and too_many_undefined(n_undefined, n_resamples, ALPHA):
        reason = (  # the undefined resamples alone could hold the p-value's tail
            f"the difference is undefined on {n_undefined} of {n_resamples} resamples, more "
            f"than {ALPHA:.0%} (too few known positives of a category to be drawn in each)"
        )
        return GateTest(dataset, system, figure.key, difference, worse_by, None, reason=reason)
    if 1 / (1 + ok.shape[0]) > ALPHA:  # p >= 1/(1+B) > alpha: it could never fail
        reason = (
            f"the difference is defined on only {ok.shape[0]} of {n_resamples} resamples, "
            f"too few for a p-value of {ALPHA:g} or less (more rows or more --bootstrap)"
        )
        return GateTest(dataset, system, figure.key, difference, worse_by, None, reason=reason)
    p = one_sided_pvalue(sign * ok, margin)
    return GateTest(dataset, system, figure.key, difference, worse_by, p)


def dataset_tests(
    dataset: str,
    group: Sequence[Any],
    baseline: Any,
    names: Sequence[str],
    figures: Sequence[GateFigure],
    margin: float,
    differences: dict[str, dict[str, float]],
    distributions: dict[tuple[str, str], Any],
    *,
    n_resamples: int,
    seed: int,
    n_jobs: int | None,
) -> list[GateTest]:
    """Every test on one dataset the baseline was scored on: each system of ``group``
    (its rows matched to the baseline's) by :func:`system_tests`, and each of ``names``
    (every system compared) that was not scored on the dataset as undecided tests, one
    per figure: a system whose results are missing is not shown not worse."""
    out: list[GateTest] = []
    for sr in group:
        if sr is not baseline:
            out += system_tests(
                dataset, sr, baseline, figures, margin, differences[sr.name], distributions,
                n_resamples=n_resamples, seed=seed, n_jobs=n_jobs,
            )  # fmt: skip
    scored = {sr.name for sr in group}
    reason = MISSING
    for name in names:
        if name not in scored:
            out += [
                GateTest(dataset, name, f.key, math.nan, math.nan, None, reason=reason)
                for f in figures
            ]
    return out


def system_tests(
    dataset: str,
    system: Any,
    baseline: Any,
    figures: Sequence[GateFigure],
    margin: float,
    differences: dict[str, float],
    distributions: dict[tuple[str, str], Any],
    *,
    n_resamples: int,
    seed: int,
    n_jobs: int | None,
) -> list[GateTest]:
    """Every test of ``system`` against ``baseline`` on one dataset: mAP and label ranking
    loss from the table's paired tests (``differences`` by metric, ``distributions`` by
    (system, metric)), each ``ap:CATEGORY`` from its own paired bootstrap."""
    out = [
        gate_test(
            dataset,
            system.name,
            f,
            differences[f.metric],
            distributions.get((system.name, f.metric)),
            margin,
            n_resamples,
        )
        for f in figures
        if f.metric != "ap"
    ]
    return out + category_tests(
        dataset,
        system,
        baseline,
        figures,
        margin,
        n_resamples=n_resamples,
        seed=seed,
        n_jobs=n_jobs,
    )


def category_tests(
    dataset: str,
    system: Any,
    baseline: Any,
    figures: Sequence[GateFigure],
    margin: float,
    *,
    n_resamples: int,
    seed: int,
    n_jobs: int | None,
) -> list[GateTest]:
    """The ``ap:CATEGORY`` tests of ``system`` against ``baseline`` (row-matched
    ``SystemResult``s): a paired bootstrap of AP per category (:func:`toxeval.stats.compare`,
    the table's seed and count, undefined resamples counted for the gate's rule). A
    category the dataset lacks or without a known positive is a ``CompareError``."""
    from toxeval import stats
    from toxeval.compare_inputs import CompareError
    from toxeval.stats.bootstrap import conditioned_intervals_allowed

    wanted = [f for f in figures if f.metric == "ap"]
    if not wanted:
        return []
    rows, base = system.rows, baseline.rows
    ids = list(rows.category_ids)
    cols = []
    for f in wanted:
        if f.category not in ids:
            close = suggest_category(str(f.category), ids)
            hint = f"did you mean ap:{close}? " if close else ""
            raise CompareError(
                f"--fail-if-worse {f.key}: {dataset} has no category {f.category!r}; "
                f"{hint}its categories (by id): {', '.join(ids)}"
            )
        j = ids.index(f.category)
        if not np.any((rows.y_true[:, j] == 1) & rows.mask[:, j]):
            raise CompareError(
                f"--fail-if-worse {f.key}: no row of {dataset} is a known positive of "
                f"{f.category!r}, so its average precision is undefined there"
            )
        cols.append(j)
    diffs: list[float] = []
    dists: list[Any] = []
    for j in cols:
        y, m = rows.y_true[:, j], rows.mask[:, j]
        a, b = rows.scores[:, j], base.scores[:, j]
        if y.shape[0] >= 2:  # one row: nothing to resample, undecided
            try:
                with conditioned_intervals_allowed():  # the gate's own rule, on the counts
                    cmp = stats.compare(
                        "average_precision_score", y, a, b, mask=m, method="bootstrap",
                        n_resamples=n_resamples, seed=seed, n_jobs=n_jobs,
                    )  # fmt: skip
            except stats.TooFewResamplesError:
                pass
            else:
                diffs.append(float(cmp.difference))
                dists.append(cmp.bootstrap_distribution)
                continue
        diffs.append(_ap(y, a, m) - _ap(y, b, m))
        dists.append(None)
    return [
        gate_test(dataset, system.name, f, d, dist, margin, n_resamples)
        for f, d, dist in zip(wanted, diffs, dists, strict=True)
    ]


def suggest_category(name: str, ids: Sequence[str]) -> str | None:
    """The category id of ``ids`` that ``name`` most likely means: a category's name or
    alias in the default taxonomy (``Self-harm``, ``hate speech``) or a misspelt id
    (``violance``), by :meth:`toxeval.taxonomy.Taxonomy.suggest`; else the closest id
    (:func:`difflib.get_close_matches`, cutoff 0.8, case and ``-``/space folded); else
    None. Only suggested, never taken in its place: a CI gate names what it watches."""
    import difflib

    from toxeval.taxonomy import load_taxonomy

    hit = load_taxonomy().suggest(name)
    if hit in ids:
        return hit
    folded = {i.lower().replace("-", "_").replace(" ", "_"): i for i in ids}
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    close = difflib.get_close_matches(key, list(folded), n=1, cutoff=0.8)
    return folded[close[0]] if close else None


def _ap(y: NDArray[Any], s: NDArray[Any], m: NDArray[Any]) -> float:
    """One category's average precision over its known rows."""
    from toxeval.metrics import average_precision_score

    return float(average_precision_score(y[m], s[m]))


@dataclass(frozen=True)
class Gate:
    """Every test of the gate with Holm-adjusted p-values, and its verdict."""

    baseline: str
    figures: tuple[str, ...]
    margin: float
    alpha: float
    tests: tuple[GateTest, ...]
    #: datasets the baseline was not scored on: nothing tested there
    untested: tuple[str, ...] = ()
    #: ``--common-rows``: per dataset where a system left rows out, what was compared
    common_rows: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        baseline: str,
        figures: Sequence[GateFigure],
        margin: float,
        alpha: float,
        tests: Sequence[GateTest],
        untested: Sequence[str] = (),
        *,
        n_resamples: int | None = None,
        common: Mapping[str, tuple[int, Mapping[str, int]]] | None = None,
    ) -> Gate:
        """Holm-adjust the decided tests together. A ``CompareError`` when no system
        but the baseline was scored on a dataset the baseline was scored on, or when
        ``n_resamples`` is too few for the gate ever to fail (see :func:`check_power`).
        ``common``: per dataset, the rows compared and the rows each system left out
        (``--common-rows``), said in the verdict."""
        from toxeval.compare_inputs import CompareError
        from toxeval.stats import holm

        if all(t.reason == MISSING for t in tests):
            raise CompareError(
                f"--fail-if-worse: nothing to test: no other system was scored on a dataset "
                f"{baseline} was scored on"
            )

        decided = [i for i, t in enumerate(tests) if t.p is not None]
        if n_resamples is not None:
            check_power(len(decided), n_resamples, alpha)
        adjusted: list[float] = holm([tests[i].p for i in decided]).tolist() if decided else []
        out = list(tests)
        for i, p in zip(decided, adjusted, strict=True):
            t = out[i]
            out[i] = GateTest(
                t.dataset, t.system, t.figure, t.difference, t.worse_by, t.p, float(p)
            )
        notes = tuple(
            f"{d}: compared on the {n} rows every system scored (rows left out: "
            + ", ".join(f"{k} {v}" for k, v in left.items())
            + ")"
            for d, (n, left) in (common or {}).items()
        )
        figs = tuple(f.key for f in figures)
        return cls(baseline, figs, margin, alpha, tuple(out), tuple(untested), notes)

    @property
    def failing(self) -> list[GateTest]:
        """The tests that fail the gate: worse by more than the margin, or undecided."""
        return [t for t in self.tests if t.p is None or t.worse(self.alpha)]

    @property
    def exit_code(self) -> int:
        """1 when a test fails the gate, else 0."""
        return 1 if self.failing else 0

    def lines(self) -> list[str]:
        """One line per test, then the one-line verdict (last)."""
        out = []
        for t in self.tests:
            p = "undecided" if t.p_holm is None else f"Holm p {t.p_holm:.4g}"
            state = "UNDECIDED" if t.p is None else ("WORSE" if t.worse(self.alpha) else "ok")
            out.append(
                f"  {t.dataset}  {t.system} vs {self.baseline}  {t.figure}: "
                f"{_signed(t.difference)} ({p})  {state}"
            )
        for d in self.untested:
            out.append(f"  {d}: not tested ({self.baseline} was not scored on it)")
        out += [f"  {note}" for note in self.common_rows]
        out.append(self.verdict())
        return out

    def verdict(self) -> str:
        """The one-line verdict a CI log shows."""
        n = sum(t.p is not None for t in self.tests)
        rule = (
            f"worse by more than {self.margin:g} on {', '.join(self.figures)} "
            f"(one-sided paired bootstrap, Holm-adjusted over {n} test{'' if n == 1 else 's'}, "
            f"alpha {self.alpha:g})"
        )
        untested = (
            f"; not tested: {', '.join(self.untested)} ({self.baseline} was not scored there)"
            if self.untested
            else ""
        ) + "".join(f"; {note}" for note in self.common_rows)
        failing = self.failing
        if not failing:
            return f"gate passed: no system is {rule}{untested}"
        worse = [t for t in failing if t.p is not None]
        undecided = [t for t in failing if t.p is None]
        parts = [f"{t.system} on {t.dataset} {t.figure} ({_signed(t.difference)})" for t in worse]
        # one part per (system, dataset, reason): a missing folder is said once, not per figure
        same: dict[tuple[str, str, str | None], list[str]] = {}
        for t in undecided:
            same.setdefault((t.system, t.dataset, t.reason), []).append(t.figure)
        parts += [f"{s} on {d} {', '.join(f)} undecided: {r}" for (s, d, r), f in same.items()]
        return f"gate FAILED: {'; '.join(parts)}; the rule: fail when {rule}{untested}"

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per test (for JSON or a table)."""
        return [
            {
                "dataset": t.dataset,
                "system": t.system,
                "baseline": self.baseline,
                "figure": t.figure,
                "difference": t.difference,
                "margin": self.margin,
                "p_one_sided": t.p,
                "p_holm": t.p_holm,
                "fails": t.p is None or t.worse(self.alpha),
            }
            for t in self.tests
        ]


def _signed(x: float) -> str:
    """A difference as the gate's lines show it: signed, 4 decimals (2 significant
    digits below 1e-4, which 4 decimals would show as 0), ``n/a`` if NaN."""
    if math.isnan(x):
        return "n/a"
    return f"{x:+.4f}" if x == 0 or abs(x) >= 1e-4 else f"{x:+.1e}"
