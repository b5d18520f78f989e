"""Confidence intervals from a bootstrap distribution, with SciPy's formulas.

``percentile``, ``basic`` and ``bca`` follow ``scipy.stats.bootstrap`` (Efron &
Tibshirani 1993, sections 13.3, 14.3 and eq. 14.15/15.36): the interval ends are
``np.quantile(distribution, [a1, a2])`` (linear interpolation) with
``a1 = alpha``, ``a2 = 1 - alpha`` and ``alpha = (1 - confidence_level) / 2``;
``basic`` reflects them around the estimate; ``bca`` shifts ``a1``, ``a2`` by the
bias correction ``z0 = ndtri(percentile of the estimate in the distribution)``
(ties count half) and the acceleration ``a`` from the leave-one-out values.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Method = Literal["percentile", "basic", "bca"]
METHODS: tuple[Method, ...] = ("percentile", "basic", "bca")

_NORMAL = NormalDist()


def _ndtr(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _ndtri(p: float) -> float:
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _NORMAL.inv_cdf(p)


def acceleration(jackknife: NDArray[np.float64]) -> float:
    """BCa acceleration ``a = sum(U^3) / (6 * sum(U^2)^1.5)`` with
    ``U_i = (n - 1) * (mean(theta_(i)) - theta_(i))`` (SciPy's expression); NaN when
    every leave-one-out value is the same (0/0: SciPy's NaN, without its warning)."""
    n = float(jackknife.shape[0])
    u = (n - 1) * (np.mean(jackknife) - jackknife)
    num = float(np.sum(u**3)) / n**3
    den = float(np.sum(u**2)) / n**2
    if den == 0.0:
        return math.nan
    return float(1 / 6 * num / den ** (3 / 2))


def interval(
    distribution: NDArray[np.float64],
    estimate: float,
    *,
    confidence_level: float,
    method: Method,
    jackknife: NDArray[np.float64] | None = None,
) -> tuple[float, float]:
    """The two-sided interval of one statistic from its defined resample values."""
    alpha = (1 - confidence_level) / 2
    a1, a2 = alpha, 1 - alpha
    if method == "bca":
        if jackknife is None:  # pragma: no cover - callers always pass it
            raise ValueError("bca needs leave-one-out values")
        b = distribution.shape[0]
        # A resample within a relative 1e-12 of the estimate is a tie: the native
        # kernels sum in another order than scikit-learn, so a value equal to the
        # estimate in exact arithmetic may come out an ulp away from it.
        tol = abs(estimate) * 1e-12
        pct = (
            np.count_nonzero(distribution < estimate - tol)
            + np.count_nonzero(distribution <= estimate + tol)
        ) / (2 * b)
        z0 = _ndtri(float(pct))
        a_hat = acceleration(jackknife)
        z_alpha = _ndtri(alpha)
        num1 = z0 + z_alpha
        a1 = _ndtr(z0 + num1 / (1 - a_hat * num1))
        num2 = z0 - z_alpha
        a2 = _ndtr(z0 + num2 / (1 - a_hat * num2))
        if not (math.isfinite(a1) and math.isfinite(a2)):
            raise ValueError(
                "the BCa interval cannot be computed: the data are degenerate (every "
                "resample on one side of the estimate, or every leave-one-out value "
                "the same); use method='percentile'"
            )
    lo, hi = np.quantile(distribution, [a1, a2])
    if method == "basic":
        lo, hi = 2 * estimate - hi, 2 * estimate - lo
    return float(lo), float(hi)
