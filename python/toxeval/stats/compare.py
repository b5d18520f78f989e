"""Paired comparison of two systems scored on the same rows.

``compare(metric, y_true, score_a, score_b, ...)`` reports the difference
``d = metric(a) - metric(b)`` with

* a paired bootstrap (both systems on the same resampled rows): interval of ``d``
  and a two-sided p-value
  ``p = min(1, 2 * (1 + min(#{d*_b <= 0}, #{d*_b >= 0})) / (1 + B))`` over the
  ``B`` defined resamples (twice the smaller tail, add-one so it is never 0);
* an approximate randomization test (Noreen 1989): each permutation swaps the two
  systems' scores on a random half of the rows (each row independently with
  probability 1/2); ``p = (1 + #{|d*_p| >= |d|}) / (1 + P)`` over the ``P``
  defined permutations (``|d*| >= |d|`` up to a relative 1e-12, so that a
  permutation that reproduces ``d`` counts whatever the summation order);

and, with ``per_label=True``, the same per category with Holm's step-down
correction across categories (``holm``). Definitions: ``docs/statistics.md``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from toxeval.stats.bootstrap import (
    ConfidenceInterval,
    as_arrays,
    as_weights,
    check_n_jobs,
    check_options,
    summarise,
)
from toxeval.stats.intervals import Method
from toxeval.stats.resampled_metric import (
    ResampledMetric,
    num_rows,
    resolve_metric,
    strata_codes,
)

__all__ = ["CompareResult", "compare", "holm"]

Tests = Literal["both", "bootstrap", "permutation"]


@dataclass(frozen=True)
class CompareResult:
    """Result of ``compare``: floats, or arrays with one entry per label when
    ``per_label=True``. Fields of a test that was not run are None.

    ``difference = estimate_a - estimate_b``. ``bootstrap_distribution``: the
    resampled differences (scalar metric: defined resamples only; per label:
    ``(n_labels, n_resamples)`` with NaN where undefined). ``permutation_distribution``:
    the permuted differences, same layout. ``pvalue_*_holm``: Holm-adjusted across
    labels (per_label only).
    """

    estimate_a: Any
    estimate_b: Any
    difference: Any
    confidence_interval: ConfidenceInterval | None
    standard_error: Any
    bootstrap_distribution: NDArray[np.float64] | None
    pvalue_bootstrap: Any
    n_undefined_resamples: Any
    permutation_distribution: NDArray[np.float64] | None
    pvalue_permutation: Any
    n_undefined_permutations: Any
    pvalue_bootstrap_holm: NDArray[np.float64] | None
    pvalue_permutation_holm: NDArray[np.float64] | None
    path: str


def holm(pvalues: Any) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values (Holm 1979), in the input order.

    With the p-values sorted ascending, ``p_(1) <= ... <= p_(m)``, the adjusted
    value of ``p_(i)`` is ``max_{j <= i} min(1, (m - j + 1) * p_(j))``. Rejecting
    where the adjusted value is ``<= alpha`` controls the family-wise error rate at
    ``alpha`` under any dependence.
    """
    p = np.asarray(pvalues, dtype=np.float64).reshape(-1)
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError("p-values must be numbers in [0, 1] (no NaN)")
    m = p.shape[0]
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(scaled)
    return out


def bootstrap_pvalue(diffs: NDArray[np.float64]) -> float:
    """Two-sided paired-bootstrap p-value of the defined differences ``diffs``."""
    tail = min(int(np.count_nonzero(diffs <= 0)), int(np.count_nonzero(diffs >= 0)))
    return float(min(1.0, 2 * (1 + tail) / (1 + diffs.shape[0])))


def permutation_pvalue(diffs: NDArray[np.float64], observed: float) -> float:
    """Approximate-randomization p-value of the defined permuted differences."""
    hits = int(np.count_nonzero(np.abs(diffs) >= abs(observed) * (1 - 1e-12)))
    return float((1 + hits) / (1 + diffs.shape[0]))


def compare(
    metric: str | Callable[..., Any],
    y_true: Any,
    score_a: Any,
    score_b: Any,
    *,
    mask: Any = None,
    sample_weight: Any = None,
    method: Tests = "both",
    n_resamples: int = 1000,
    n_permutations: int = 1000,
    confidence_level: float = 0.95,
    interval_method: Method = "percentile",
    seed: int = 0,
    strata: Any = None,
    per_label: bool = False,
    n_jobs: int | None = None,
    **metric_kwargs: Any,
) -> CompareResult:
    """Paired bootstrap and/or approximate randomization test of
    ``metric(score_a) - metric(score_b)`` on the same rows (see module docs).

    ``method``: ``"both"`` (default), ``"bootstrap"`` or ``"permutation"``.
    ``interval_method``: the bootstrap interval (``"percentile"``, ``"basic"``,
    ``"bca"``). ``per_label=True`` compares per category (the metric's
    ``average=None``) and adds Holm-adjusted p-values. Resamples or permutations on
    which either system's metric is undefined are left out and counted.
    """
    if method not in ("both", "bootstrap", "permutation"):
        raise ValueError(f"method must be 'both', 'bootstrap' or 'permutation', got {method!r}")
    check_options(n_resamples, confidence_level, interval_method, seed)
    check_options(n_permutations, confidence_level, interval_method, seed, name="n_permutations")
    n_jobs = check_n_jobs(n_jobs, "compare")
    if not isinstance(per_label, bool):
        raise ValueError(f"per_label must be True or False, got {per_label!r}")
    kwargs = dict(metric_kwargs)
    if per_label:
        if "average" in kwargs:
            raise ValueError("per_label=True sets average=None; do not pass average")
        kwargs["average"] = None
    name, func = resolve_metric(metric)
    if per_label and not _takes_keyword(func, "average"):
        raise ValueError(
            f"per_label=True needs a metric with an average= parameter (values per "
            f"category); {name} has none"
        )
    y_true, score_a, score_b = as_arrays(y_true), as_arrays(score_a), as_arrays(score_b)
    sw = as_weights(sample_weight, num_rows(y_true))
    rm = ResampledMetric(name, func, y_true, sw, mask, kwargs, n_jobs)
    (est_a, scalar_a), (est_b, scalar_b) = rm.estimate(score_a), rm.estimate(score_b)
    rm.check_rows()
    if per_label:
        _check_per_label(name, scalar_a or scalar_b, est_a, est_b)
    if est_a.shape != est_b.shape:
        raise ValueError("the two systems give metric values of different shapes")
    diff = est_a - est_b
    width = diff.shape[0]

    ci = se = boot_dist = p_boot = n_undef_b = None
    if method in ("both", "bootstrap"):
        dist = rm.distribution(
            [score_a, score_b],
            seed=seed,
            n_resamples=n_resamples,
            strata=strata_codes(strata, rm.n_rows),
        )
        d = dist[:, 0, :] - dist[:, 1, :]
        cis, ses, undefined = summarise(
            d,
            diff,
            confidence_level=float(confidence_level),
            method=interval_method,
            jackknife=lambda: rm.jackknife(score_a) - rm.jackknife(score_b),
            what=f"the difference of {name}",
            per_label=per_label,
        )
        pb = [bootstrap_pvalue(d[np.isfinite(d[:, j]), j]) for j in range(width)]
        ci = ConfidenceInterval(
            _unwrap([c[0] for c in cis], per_label), _unwrap([c[1] for c in cis], per_label)
        )
        se, p_boot, n_undef_b = (
            _unwrap(ses, per_label),
            _unwrap(pb, per_label),
            _unwrap(undefined, per_label),
        )
        boot_dist = np.ascontiguousarray(d.T) if per_label else d[np.isfinite(d[:, 0]), 0]

    perm_dist = p_perm = n_undef_p = None
    if method in ("both", "permutation"):
        perm = rm.permutations(score_a, score_b, seed=seed, n_permutations=n_permutations)
        dp = perm[:, 0, :] - perm[:, 1, :]
        pp, undef_p = [], []
        for j in range(width):
            ok = dp[np.isfinite(dp[:, j]), j]
            if ok.shape[0] == 0:
                raise ValueError(f"the difference of {name} is undefined on every permutation")
            pp.append(permutation_pvalue(ok, float(diff[j])))
            undef_p.append(int(dp.shape[0] - ok.shape[0]))
        p_perm, n_undef_p = _unwrap(pp, per_label), _unwrap(undef_p, per_label)
        perm_dist = np.ascontiguousarray(dp.T) if per_label else dp[np.isfinite(dp[:, 0]), 0]

    return CompareResult(
        estimate_a=_unwrap(est_a.tolist(), per_label),
        estimate_b=_unwrap(est_b.tolist(), per_label),
        difference=_unwrap(diff.tolist(), per_label),
        confidence_interval=ci,
        standard_error=se,
        bootstrap_distribution=boot_dist,
        pvalue_bootstrap=p_boot,
        n_undefined_resamples=n_undef_b,
        permutation_distribution=perm_dist,
        pvalue_permutation=p_perm,
        n_undefined_permutations=n_undef_p,
        pvalue_bootstrap_holm=holm(p_boot) if per_label and p_boot is not None else None,
        pvalue_permutation_holm=holm(p_perm) if per_label and p_perm is not None else None,
        path=rm.path,
    )


def _unwrap(values: list[Any], per_label: bool) -> Any:
    """One value per label as an array, or the single value of a scalar metric."""
    if per_label:
        return np.asarray(values)
    return values[0]


def _check_per_label(
    name: str, scalar: bool, est_a: NDArray[np.float64], est_b: NDArray[np.float64]
) -> None:
    """``per_label=True`` needs one value per label from the metric with ``average=None``;
    a metric that accepts ``average`` (by name or ``**kwargs``) and still returns one
    value would otherwise be compared as a single label."""
    if scalar or est_a.ndim != 1 or est_b.ndim != 1:
        got = "a single value" if scalar else f"an array of shape {est_a.shape}"
        raise ValueError(
            f"per_label=True needs {name} to return one value per label (a 1-D array) "
            f"when called with average=None; it returned {got}. Make it honour "
            "average=None, or compare with per_label=False"
        )


def _takes_keyword(func: Callable[..., Any], name: str) -> bool:
    """Whether ``func`` accepts the keyword argument ``name`` (or any, via ``**kwargs``);
    True when its signature cannot be read."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in params)
