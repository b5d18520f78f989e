"""Kendall's tau: a drop-in for ``scipy.stats.kendalltau`` (SciPy 1.17.1).

The native core (``toxeval._core.kendall_counts``) returns, in O(n log n) and in
parallel, the integers SciPy derives from the data (discordant pairs, joint /
x / y tied pairs, distinct-value counts) and the float64 tie moments computed
with NumPy's summation order. Everything after that (tau-b / tau-c, the exact
and asymptotic p-values, the ``method='auto'`` switch, the order in which
parameters are validated) is SciPy's own arithmetic, written out here with the
same Python-int / float64 operations so that results agree to the last bit.

The ``axis`` / ``keepdims`` / ``nan_policy`` / small-sample behaviour that SciPy
gets from its ``_axis_nan_policy`` decorator is reproduced by
``_axis_nan_policy`` below (same checks, same order, same warnings).

SciPy is not imported by this module. When SciPy is already loaded,
``SmallSampleWarning`` is bridged to SciPy's class (``pytest.warns`` and warning
filters keep working) and the normal tail uses ``scipy.special.ndtr``; without
SciPy the tail uses ``math.erf``/``math.erfc`` (agrees to ~1e-13 relative).
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics._axis_nan_policy import (
    TOO_SMALL_1D,
    TOO_SMALL_1D_OMIT,
    SignificanceResult,
    add_reduced_axes,
    broadcast_paired,
    contains_nan,
    get_nan,
    kendalltau_nd,
    masked_to_sentinel,
    pack_result,
    remove_nans,
    remove_sentinel,
    warn_small,
)
from toxeval.metrics._validation import check_n_jobs

__all__ = ["kendalltau", "kendalltau_1d"]


_SQRT1_2 = math.sqrt(0.5)


def _ndtr(z: Any) -> Any:
    special = sys.modules.get("scipy.special")
    if special is not None:
        return np.float64(special.ndtr(z))
    x = float(z) * _SQRT1_2
    a = abs(x)
    if a < _SQRT1_2:
        return np.float64(0.5 + 0.5 * math.erf(x))
    y = 0.5 * math.erfc(a)
    return np.float64(1.0 - y if x > 0 else y)


def _normal_pvalue(z: Any, alternative: str) -> Any:
    if alternative == "less":
        return _ndtr(z)
    if alternative == "greater":
        return _ndtr(-z)
    if alternative == "two-sided":
        return np.float64(2 * _ndtr(-np.abs(z)))
    raise ValueError("`alternative` must be 'less', 'greater', or 'two-sided'.")


def _kendall_p_exact(n: int, c: int, alternative: str = "two-sided") -> np.float64:
    """Exact null distribution of Kendall's statistic (Kendall 1970), as SciPy computes it.

    ``c`` is the number of concordant pairs of ``n`` tie-free observations.
    Two-sided = twice the smaller tail (clipped to 1). Any ``alternative`` other
    than 'two-sided' / 'greater' is treated as 'less' (SciPy's behaviour).
    """
    in_right_tail = c >= (n * (n - 1)) // 2 - c
    alternative_greater = alternative == "greater"
    c = int(min(c, (n * (n - 1)) // 2 - c))
    p_mass_at_c: Any = 0.0
    if n <= 0:
        raise ValueError(f"n ({n}) must be positive")
    elif c < 0 or 4 * c > n * (n - 1):
        raise ValueError(f"c ({c}) must satisfy 0 <= 4c <= n(n-1) = {n * (n - 1)}.")
    elif n == 1:
        prob: Any = 1.0
        p_mass_at_c = 1
    elif n == 2:
        prob = 1.0
        p_mass_at_c = 0.5
    elif c == 0:
        prob = 2.0 / math.factorial(n) if n < 171 else 0.0
        p_mass_at_c = prob / 2
    elif c == 1:
        prob = 2.0 / math.factorial(n - 1) if n < 172 else 0.0
        p_mass_at_c = (n - 1) / math.factorial(n)
    elif 4 * c == n * (n - 1) and alternative == "two-sided":
        prob = 1.0
    elif n < 171:
        new = np.zeros(c + 1)
        new[0:2] = 1.0
        for j in range(3, n + 1):
            new = np.cumsum(new)
            if j <= c:
                new[j:] -= new[: c + 1 - j]
        prob = 2.0 * np.sum(new) / math.factorial(n)
        p_mass_at_c = new[-1] / math.factorial(n)
    else:
        new = np.zeros(c + 1)
        new[0:2] = 1.0
        for j in range(3, n + 1):
            new = np.cumsum(new) / j
            if j <= c:
                new[j:] -= new[: c + 1 - j]
        prob = np.sum(new)
        p_mass_at_c = new[-1] / 2

    if alternative != "two-sided":
        if in_right_tail == alternative_greater:
            prob /= 2
        else:
            prob = 1 - prob / 2 + p_mass_at_c
    return np.clip(prob, 0, 1)  # type: ignore[no-any-return]


def _native_sample(a: NDArray[Any]) -> NDArray[Any]:
    """A view (or lossless conversion) of ``a`` that the native core accepts.

    float64 / float32 / int64 pass through untouched (any strides); other
    integers, bools and float16 convert losslessly; anything else (strings,
    objects, uint64 beyond int64, long double, complex) is replaced by its dense
    ranks, which order and tie exactly like the values.
    """
    kind = a.dtype.kind
    if a.dtype in (np.float64, np.float32, np.int64):
        return a
    if kind == "b" or (kind in "iu" and a.dtype.itemsize < 8) or kind == "i":
        return a.astype(np.int64)
    if kind == "u" and (a.size == 0 or a.max() <= np.iinfo(np.int64).max):
        return a.astype(np.int64)
    if a.dtype == np.float16:
        return a.astype(np.float32)
    if a.dtype.byteorder not in "=|" and kind == "f" and a.dtype.itemsize in (4, 8):
        return a.astype(a.dtype.newbyteorder("="))
    return np.unique(a, return_inverse=True)[1].reshape(-1).astype(np.int64)


def kendalltau_1d(
    x: NDArray[Any],
    y: NDArray[Any],
    method: str,
    variant: str,
    alternative: str,
    n_jobs: int | None,
) -> tuple[Any, Any, Any]:
    """SciPy's undecorated ``kendalltau`` on raveled, NaN-free samples."""
    x = np.asarray(x).ravel()
    y = np.asarray(y).ravel()
    if x.size != y.size:
        raise ValueError("Array shapes are incompatible for broadcasting.")
    elif not x.size or not y.size:
        nan = get_nan(x, y)
        return nan, nan, nan

    dis, ntie, xtie, ytie, fx0, fx1, fy0, fy1, x_unique, y_unique = _core.kendall_counts(
        _native_sample(x), _native_sample(y), n_jobs
    )
    x0, x1, y0, y1 = int(fx0), int(fx1), int(fy0), int(fy1)
    size = x.size
    tot = (size * (size - 1)) // 2

    if xtie == tot or ytie == tot:
        # SciPy takes this NaN from its dense-rank (intp) arrays: always float64.
        nan = np.float64(np.nan)
        return nan, nan, nan

    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    if variant == "b":
        tau: Any = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    elif variant == "c":
        minclasses = min(x_unique, y_unique)
        tau = 2 * con_minus_dis / (size**2 * (minclasses - 1) / minclasses)
    else:
        raise ValueError(
            f"Unknown variant of the method chosen: {variant}. variant must be 'b' or 'c'."
        )
    tau = np.minimum(1.0, max(-1.0, tau))

    if method == "exact" and (xtie != 0 or ytie != 0):
        raise ValueError("Ties found, exact method cannot be used.")
    if method == "auto":
        if (xtie == 0 and ytie == 0) and (size <= 33 or min(dis, tot - dis) <= 1):
            method = "exact"
        else:
            method = "asymptotic"

    if xtie == 0 and ytie == 0 and method == "exact":
        pvalue: Any = _kendall_p_exact(size, tot - dis, alternative)
    elif method == "asymptotic":
        m = size * (size - 1.0)
        var = (
            (m * (2 * size + 5) - x1 - y1) / 18
            + (2 * xtie * ytie) / m
            + x0 * y0 / (9 * m * (size - 2))
        )
        z = con_minus_dis / np.sqrt(var)
        pvalue = _normal_pvalue(z, alternative)
    else:
        raise ValueError(
            f"Unknown method {method} specified.  Use 'auto', 'exact' or 'asymptotic'."
        )
    return tau[()], pvalue[()], tau[()]


def kendalltau(
    x: Any,
    y: Any,
    *,
    nan_policy: str = "propagate",
    method: str = "auto",
    variant: str = "b",
    alternative: str = "two-sided",
    axis: int | None = None,
    keepdims: bool = False,
    n_jobs: int | None = None,
) -> SignificanceResult:
    r"""Kendall's tau, a correlation measure for ordinal data (``scipy.stats.kendalltau``).

    Same signature, defaults, results, warnings and errors as SciPy 1.17.1, plus
    ``n_jobs`` (threads for the O(n log n) pair counting; ``None`` = all cores, unlike
    scikit-learn/joblib where ``None`` means one; results never depend on it).

    Definitions (P concordant, Q discordant pairs; T pairs tied only in ``x``,
    U pairs tied only in ``y``; a pair tied in both counts in neither; n
    observations; m the smaller number of distinct values of ``x`` and ``y``)::

        tau_b = (P - Q) / sqrt((P + Q + T) * (P + Q + U))
        tau_c = 2 (P - Q) / (n**2 * (m - 1) / m)

    clipped to [-1, 1]. Ties are equal values (``-0.0 == 0.0``; ``±inf`` are
    ordinary values). Constant input gives ``(nan, nan)``.

    The p-value tests tau = 0 and is the same for both variants. ``method='auto'``
    uses the exact null distribution when there are no ties and (n <= 33 or
    min(Q, P) <= 1), else the normal approximation with the tie-corrected
    variance; ``method='exact'`` with ties raises ``ValueError``.

    ``axis=None`` (default) ravels both inputs; an integer ``axis`` computes one
    result per slice and returns arrays. ``nan_policy``: 'propagate' (NaN
    result), 'omit' (drop pairs with a NaN), 'raise'. Samples with <= 1
    observation give NaN with ``SmallSampleWarning``.

    Returns
    -------
    SignificanceResult
        2-tuple ``(statistic, pvalue)`` with ``.statistic``, ``.pvalue`` and
        ``.correlation`` (= statistic); ``np.float64`` scalars, or arrays when
        ``axis`` is an integer or ``keepdims=True``.
    """

    jobs = check_n_jobs(n_jobs, "kendalltau")

    def body(xs: NDArray[Any], ys: NDArray[Any]) -> tuple[Any, Any, Any]:
        return kendalltau_1d(xs, ys, method, variant, alternative, jobs)

    xa = np.asarray(x) if not isinstance(x, np.ma.MaskedArray) else x
    ya = np.asarray(y) if not isinstance(y, np.ma.MaskedArray) else y
    dtype = np.result_type(xa, ya)
    xa = xa.astype(dtype, copy=False)
    ya = ya.astype(dtype, copy=False)
    samples = [np.atleast_1d(xa), np.atleast_1d(ya)]
    if isinstance(xa, np.ma.MaskedArray) or isinstance(ya, np.ma.MaskedArray):
        samples = [np.ma.atleast_1d(s) if isinstance(s, np.ma.MaskedArray) else s for s in (xa, ya)]
    samples, sentinel = masked_to_sentinel(samples)

    reduced_axes: Any = axis
    if axis is None:
        reduced_axes = tuple(range(max(s.ndim for s in samples)))
        samples = [np.ravel(s) for s in samples]
    else:
        samples = broadcast_paired(samples[0], samples[1])
        axes: Any = (axis,) if np.isscalar(axis) else tuple(axis)  # type: ignore[arg-type]
        n_axes = len(axes)
        samples = [np.moveaxis(s, axes, tuple(range(-n_axes, 0))) for s in samples]
        samples = [
            np.reshape(s, (*s.shape[:-n_axes], math.prod(s.shape[-n_axes:]))) for s in samples
        ]
    nan = get_nan(*samples)
    xs, ys = samples

    if xs.ndim <= 1 and ys.ndim <= 1:
        contains = [contains_nan(s, nan_policy) for s in (xs, ys)]
        if any(contains) and nan_policy == "propagate":
            res = np.full(3, np.nan, dtype=nan.dtype)
            return pack_result(*add_reduced_axes(tuple(res), reduced_axes, keepdims))
        msg = TOO_SMALL_1D
        if any(contains) and nan_policy == "omit":
            xs, ys = remove_nans(xs, ys)
            msg = TOO_SMALL_1D_OMIT
        if sentinel is not None:
            xs, ys = remove_sentinel(xs, ys, sentinel)
        if xs.shape[-1] <= 1 or ys.shape[-1] <= 1:
            warn_small(msg, stacklevel=2)
            res = np.full(3, np.nan, dtype=nan.dtype)
            return pack_result(*add_reduced_axes(tuple(res), reduced_axes, keepdims))
        out = body(xs, ys)
        return pack_result(*add_reduced_axes(out, reduced_axes, keepdims))

    return kendalltau_nd(xs, ys, body, nan_policy, sentinel, reduced_axes, keepdims, nan)
