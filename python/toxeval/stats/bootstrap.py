"""Bootstrap confidence intervals for the metrics of ``toxeval.metrics``.

``bootstrap(metric, y_true, y_score, ...)`` resamples rows with replacement
(optionally within strata), evaluates the metric on every resample (in Rust for the
headline metrics, see ``toxeval.stats.resampled_metric``) and returns an object
shaped like SciPy's ``BootstrapResult`` plus the point estimate and the number of
undefined resamples. Definitions: ``docs/statistics.md``.
"""

from __future__ import annotations

import contextlib
import numbers
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.stats.intervals import METHODS, Method, interval
from toxeval.stats.resampled_metric import (
    ResampledMetric,
    num_rows,
    resolve_metric,
    strata_codes,
)

__all__ = [
    "BootstrapResult",
    "ConditionedIntervalWarning",
    "ConfidenceInterval",
    "TooFewResamplesError",
    "bootstrap",
    "bootstrap_indices",
    "conditioned_intervals_allowed",
]


class TooFewResamplesError(ValueError):
    """The metric is defined on the data but on fewer than two resamples: no interval.
    A ``ValueError``, so callers that catch that see no change."""


class ConditionedIntervalWarning(UserWarning):
    """The metric is undefined on more than ``1 - confidence_level`` of the resamples:
    the interval rests on those that drew what it needs (a rare label's positives) and
    may not cover the estimate. toxeval's reports give no interval there
    (``docs/statistics.md``, "Undefined resamples"); this API still returns it, counted
    in ``n_undefined``, and warns."""


class ConfidenceInterval(NamedTuple):
    """Interval ends (floats, or arrays with one entry per label)."""

    low: Any
    high: Any


@dataclass(frozen=True)
class BootstrapResult:
    """A bootstrap interval, shaped like ``scipy.stats.BootstrapResult``.

    ``bootstrap_distribution``: for a scalar metric, the values of the defined
    resamples (``n_resamples - n_undefined`` of them, in resample order, so
    ``standard_error == np.std(bootstrap_distribution, ddof=1)`` as in SciPy); for a
    per-label metric (``average=None``), shape ``(n_labels, n_resamples)`` with NaN
    where that label is undefined on that resample. ``n_undefined``: resamples left
    out (an int, or one count per label). ``path``: how resamples were evaluated
    (``"native-ap"``, ``"native-rows"`` or ``"materialised"``).
    """

    confidence_interval: ConfidenceInterval
    bootstrap_distribution: NDArray[np.float64]
    standard_error: Any
    estimate: Any
    n_resamples: int
    n_undefined: Any
    method: str
    confidence_level: float
    path: str


def check_n_jobs(n_jobs: Any, func: str) -> int | None:
    """``n_jobs`` of ``func`` (``bootstrap``, ``compare``) as the metrics check theirs:
    an int or None, else ``InvalidParameterError`` naming ``func``, not the metric it
    resamples; ``0`` is refused by the thread-count rule; a count beyond a 64-bit int is
    passed on as the largest one. Checked here also because a metric of the user's is
    called without it."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        from toxeval.metrics import InvalidParameterError

        raise InvalidParameterError(
            f"The 'n_jobs' parameter of {func} must be an int or None. Got {n_jobs!r} instead."
        )
    jobs = max(-(2**62), min(int(n_jobs), 2**62))  # the native int is 64 bits
    _core.resolve_threads(jobs)
    return jobs


def check_options(
    n_resamples: Any, confidence_level: Any, method: Any, seed: Any, *, name: str = "n_resamples"
) -> None:
    """The shared resampling options, with a clear ``ValueError`` for bad ones."""
    if (
        isinstance(n_resamples, bool)
        or not isinstance(n_resamples, numbers.Integral)
        or n_resamples < 2
    ):
        raise ValueError(f"{name} must be an integer >= 2, got {n_resamples!r}")
    if (
        isinstance(confidence_level, bool)
        or not isinstance(confidence_level, numbers.Real)
        or not 0 < float(confidence_level) < 1
    ):
        raise ValueError(f"confidence_level must be a number in (0, 1), got {confidence_level!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    if (
        isinstance(seed, bool)
        or not isinstance(seed, numbers.Integral)
        or not 0 <= int(seed) < 2**64
    ):
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")


def as_arrays(y: Any) -> Any:
    """Dense inputs as NumPy arrays (sparse matrices are kept)."""
    if y is None or hasattr(y, "tocsr"):
        return y
    return np.asarray(y)


def as_weights(sample_weight: Any, n_rows: int) -> NDArray[np.float64] | None:
    if sample_weight is None:
        return None
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"sample_weight must be real numbers: {e}") from None
    # One weight per row: a column (n_rows, 1) is one, as scikit-learn reads it; any
    # other 2-D shape holding n_rows numbers is not, and the metric would refuse it.
    if w.ndim > 1 and w.shape != (n_rows, 1):
        raise ValueError(
            f"sample_weight must be 1-D with one entry per row ({n_rows}), got shape {w.shape}"
        )
    w = w.reshape(-1)
    if w.shape[0] != n_rows:
        raise ValueError(f"sample_weight has {w.shape[0]} entries for {n_rows} rows")
    return w


def summarise(
    values: NDArray[np.float64],
    estimate: NDArray[np.float64],
    *,
    confidence_level: float,
    method: Method,
    jackknife: Callable[[], NDArray[np.float64]],
    what: str,
    per_label: bool,
) -> tuple[list[tuple[float, float]], list[float], list[int]]:
    """Interval, standard error and undefined count per column of ``values``
    (``n_resamples x n_out``, NaN = undefined); ``per_label``: the columns are labels
    (``average=None``), named in the errors."""
    loo = jackknife() if method == "bca" else None
    cis, ses, undefined = [], [], []
    for j in range(values.shape[1]):
        col = values[:, j]
        ok = col[np.isfinite(col)]
        undefined.append(int(col.shape[0] - ok.shape[0]))
        if ok.shape[0] < 2:
            why = (
                f" (label {j}): too few for an interval; a label needs more known "
                "positives, or use strata= so every resample draws some"
                if per_label
                else ": too few for an interval; it needs more of the rows it is defined "
                "on, or use strata= so every resample draws some"
            )
            raise TooFewResamplesError(
                f"{what} is defined on only {ok.shape[0]} of {col.shape[0]} resamples{why}"
            )
        jk = None
        if loo is not None:
            jk = loo[:, j]
            if not np.all(np.isfinite(jk)):
                where = f"label {j}: " if per_label else ""
                raise ValueError(
                    f"BCa needs every leave-one-out value, but {what} is undefined with "
                    f"some row left out ({where}a label with a single known positive, "
                    "or a single row it is defined on); use method='percentile' or 'basic'"
                )
        cis.append(
            interval(
                ok,
                float(estimate[j]),
                confidence_level=confidence_level,
                method=method,
                jackknife=jk,
            )
        )
        ses.append(float(np.std(ok, ddof=1)))
    _warn_conditioned(undefined, values.shape[0], confidence_level, what, per_label)
    return cis, ses, undefined


@contextlib.contextmanager
def conditioned_intervals_allowed() -> Iterator[None]:
    """No :class:`ConditionedIntervalWarning` inside: for callers that apply the reports'
    rule themselves (withhold the interval, say why) on the counts returned."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConditionedIntervalWarning)
        yield


def _warn_conditioned(
    undefined: list[int], n_resamples: int, confidence_level: float, what: str, per_label: bool
) -> None:
    """One :class:`ConditionedIntervalWarning` naming the columns undefined on more
    than the share of resamples the reports allow (:func:`toxeval.stats.undefined.too_many_undefined`)."""
    from toxeval.stats.undefined import too_many_undefined, undefined_limit

    limit = undefined_limit(confidence_level)
    over = [j for j, u in enumerate(undefined) if too_many_undefined(u, n_resamples, limit)]
    if not over:
        return
    where = (
        "labels "
        + ", ".join(f"{j} ({undefined[j]})" for j in over[:10])
        + (", ..." if len(over) > 10 else "")
        if per_label
        else str(undefined[0])
    )
    warnings.warn(
        f"{what} is undefined on more than {100 * limit:g}% of {n_resamples} resamples "
        f"(undefined on {where}): the interval rests on the resamples that drew what the "
        "metric needs and may not cover the estimate; use strata= so every resample draws "
        "some, or read n_undefined",
        ConditionedIntervalWarning,
        stacklevel=4,
    )


def bootstrap(
    metric: str | Callable[..., Any],
    y_true: Any,
    y_score: Any,
    *,
    mask: Any = None,
    sample_weight: Any = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    method: Method = "percentile",
    seed: int = 0,
    strata: Any = None,
    n_jobs: int | None = None,
    **metric_kwargs: Any,
) -> BootstrapResult:
    """Bootstrap confidence interval of ``metric(y_true, y_score, **metric_kwargs)``.

    ``metric``: a function of ``toxeval.metrics`` (or its name), or any callable
    with that calling convention (evaluated on materialised resamples). Rows are
    drawn with replacement, ``n_resamples`` times, from the seeded stream described
    in ``docs/statistics.md`` (same ``seed``, same resamples, for any ``n_jobs``);
    with ``strata`` (one group label per row) each group is resampled to its own
    size. ``mask`` and ``sample_weight`` apply to every resample as in the metric.

    A resample on which the metric is undefined (a label with no positive drawn, a
    ROC AUC label with one class: wherever the metric warns or fails) is left out
    and counted in ``n_undefined``; per label with ``average=None``. ``method``:
    ``"percentile"``, ``"basic"`` or ``"bca"`` (SciPy's formulas; BCa's
    acceleration uses exact leave-one-out values). Raises ``ValueError`` when the
    metric is undefined on the full data.
    """
    check_options(n_resamples, confidence_level, method, seed)
    n_jobs = check_n_jobs(n_jobs, "bootstrap")
    name, func = resolve_metric(metric)
    y_true, y_score = as_arrays(y_true), as_arrays(y_score)
    sw = as_weights(sample_weight, num_rows(y_true))
    rm = ResampledMetric(name, func, y_true, sw, mask, dict(metric_kwargs), n_jobs)
    estimate, scalar = rm.estimate(y_score)
    rm.check_rows()
    codes = strata_codes(strata, rm.n_rows)
    dist = rm.distribution([y_score], seed=seed, n_resamples=n_resamples, strata=codes)[:, 0, :]
    cis, ses, undefined = summarise(
        dist,
        estimate,
        confidence_level=float(confidence_level),
        method=method,
        jackknife=lambda: rm.jackknife(y_score),
        what=name,
        per_label=not scalar,
    )
    if scalar:
        return BootstrapResult(
            confidence_interval=ConfidenceInterval(*cis[0]),
            bootstrap_distribution=dist[np.isfinite(dist[:, 0]), 0],
            standard_error=ses[0],
            estimate=float(estimate[0]),
            n_resamples=n_resamples,
            n_undefined=undefined[0],
            method=method,
            confidence_level=float(confidence_level),
            path=rm.path,
        )
    return BootstrapResult(
        confidence_interval=ConfidenceInterval(
            np.array([c[0] for c in cis]), np.array([c[1] for c in cis])
        ),
        bootstrap_distribution=np.ascontiguousarray(dist.T),
        standard_error=np.array(ses),
        estimate=estimate,
        n_resamples=n_resamples,
        n_undefined=np.array(undefined),
        method=method,
        confidence_level=float(confidence_level),
        path=rm.path,
    )


def bootstrap_indices(
    n_rows: int, n_resamples: int, *, seed: int = 0, strata: Any = None
) -> NDArray[np.int64]:
    """The rows drawn by ``bootstrap`` (and ``compare``) for this ``seed`` and
    ``strata``: shape ``(n_resamples, n_rows)``, resample ``b`` in row ``b``, draws
    in order. For rebuilding resamples (tests, audits)."""
    for what, value in (("n_rows", n_rows), ("n_resamples", n_resamples)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{what} must be a positive integer, got {value!r}")
    check_options(2, 0.95, "percentile", seed)
    codes, n_strata = strata_codes(strata, int(n_rows))
    out: NDArray[np.int64] = _core.bootstrap_indices(
        int(n_rows), int(seed), list(range(int(n_resamples))), codes, n_strata
    )
    return out
