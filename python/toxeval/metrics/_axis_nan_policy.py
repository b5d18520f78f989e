"""SciPy's result and decorator machinery for the paired-sample drop-ins (``kendalltau``).

``SignificanceResult`` (SciPy's 2-tuple ``(statistic, pvalue)`` with attribute access)
and ``SmallSampleWarning``; then SciPy's ``_axis_nan_policy`` rules: ``nan_policy``
checks, masked arrays as sentinels, broadcasting, ``keepdims`` and the small-sample
warnings, with SciPy's checks, order and messages; ``kendalltau_nd`` applies a 1-D
statistic to every slice along the last axis.

When SciPy is already loaded, ``SmallSampleWarning`` is emitted as a class bridged to
SciPy's (``pytest.warns`` and warning filters keep working); SciPy is never imported
here.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from toxeval.metrics._validation import warning_category

__all__ = [
    "TOO_SMALL_1D",
    "TOO_SMALL_1D_OMIT",
    "SignificanceResult",
    "SmallSampleWarning",
    "add_reduced_axes",
    "broadcast_paired",
    "contains_nan",
    "get_nan",
    "kendalltau_nd",
    "masked_to_sentinel",
    "pack_result",
    "remove_nans",
    "remove_sentinel",
    "warn_small",
]


class SmallSampleWarning(RuntimeWarning):
    """A sample is too small for the statistic (SciPy's class of the same name)."""


class SignificanceResult(tuple):  # type: ignore[type-arg]
    """Result of a test: a 2-tuple ``(statistic, pvalue)`` with attribute access.

    Behaves like SciPy's ``SignificanceResult``: unpackable, indexable, with
    ``.statistic`` and ``.pvalue`` properties; extra attributes (``.correlation``
    for ``kendalltau``) live outside the tuple and are not part of ``repr``.
    """

    _fields = ("statistic", "pvalue")
    _extra_fields: tuple[str, ...] = ()
    _field_defaults: ClassVar[dict[str, Any]] = {}
    _replace = None
    # Set by kendalltau (an attribute outside the tuple, as in SciPy).
    correlation: Any

    def __new__(cls, statistic: Any, pvalue: Any, **extra_fields: Any) -> SignificanceResult:
        return tuple.__new__(cls, (statistic, pvalue))

    def __init__(self, statistic: Any, pvalue: Any, **extra_fields: Any) -> None:
        for key, val in extra_fields.items():
            if key not in self._extra_fields:
                raise TypeError(f"unexpected keyword argument '{key}'")
            self.__dict__[key] = val

    def __setattr__(self, key: str, val: Any) -> None:
        if key in self._fields:
            raise AttributeError(
                f"can't set attribute {key!r} of class {self.__class__.__name__!r}"
            )
        self.__dict__[key] = val

    @property
    def statistic(self) -> Any:
        return self[0]

    @property
    def pvalue(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(statistic={self[0]!r}, pvalue={self[1]!r})"

    def _asdict(self) -> dict[str, Any]:
        out = dict(zip(self._fields, self, strict=True))
        out.update(self.__dict__)
        return out

    def __getnewargs_ex__(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return tuple(self), self.__dict__


def pack_result(statistic: Any, pvalue: Any, correlation: Any) -> SignificanceResult:
    res = SignificanceResult(statistic, pvalue)
    res.correlation = correlation
    return res


TOO_SMALL_1D = (
    "One or more sample arguments is too small; all returned values will be NaN. "
    "See documentation for sample size requirements."
)


TOO_SMALL_1D_OMIT = (
    "After omitting NaNs, one or more sample arguments is too small; all returned "
    "values will be NaN. See documentation for sample size requirements."
)


TOO_SMALL_ND = (
    "All axis-slices of one or more sample arguments are too small; all elements "
    "of returned arrays will be NaN. See documentation for sample size requirements."
)


TOO_SMALL_ND_OMIT = (
    "After omitting NaNs, one or more axis-slices of one or more sample arguments "
    "is too small; corresponding elements of returned arrays will be NaN. "
    "See documentation for sample size requirements."
)


def warn_small(message: str, stacklevel: int) -> None:
    cat = warning_category(SmallSampleWarning, "scipy.stats._axis_nan_policy", "SmallSampleWarning")
    warnings.warn(message, cat, stacklevel=stacklevel + 1)


def contains_nan(a: NDArray[Any], nan_policy: str) -> bool:
    policies = {"propagate", "raise", "omit"}
    if nan_policy not in policies:
        raise ValueError(f"nan_policy must be one of {policies}.")
    if a.size == 0:
        return False
    if a.dtype.kind == "f":
        contains = bool(np.isnan(np.max(a)))
    elif a.dtype.kind == "c":
        contains = bool(np.isnan(np.max(a.real)) | np.isnan(np.max(a.imag)))
    elif a.dtype == object:
        contains = False
        for el in a.ravel():
            if np.issubdtype(type(el), np.number) and np.isnan(el):
                contains = True
                break
    else:
        return False
    if nan_policy == "raise" and contains:
        raise ValueError("The input contains nan values")
    return contains


def _result_dtype(*arrays: NDArray[Any]) -> np.dtype[Any]:
    """SciPy's ``xp_result_type(..., force_floating=True)`` for NumPy arrays."""
    try:
        return np.result_type(*arrays, 1.0)
    except TypeError:
        return np.dtype(np.float64)


def remove_nans(x: NDArray[Any], y: NDArray[Any]) -> tuple[NDArray[Any], NDArray[Any]]:
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def masked_to_sentinel(
    samples: list[NDArray[Any]],
) -> tuple[list[NDArray[Any]], Any]:
    """Masked arrays -> plain arrays with a sentinel value in masked places."""
    has_mask = False
    for sample in samples:
        has_mask = has_mask or bool(np.any(getattr(sample, "mask", False)))
    if not has_mask:
        return samples, None
    dtype = np.result_type(*samples)
    dtype = dtype if np.issubdtype(dtype, np.number) else np.dtype(np.float64)
    samples = [s.astype(dtype, copy=False) for s in samples]
    inexact = np.issubdtype(dtype, np.inexact)
    info: Any = np.finfo(dtype) if inexact else np.iinfo(dtype)
    sentinel: Any = info.max
    while sentinel > info.min:
        for sample in samples:
            if np.any(sample == sentinel):
                sentinel = np.nextafter(sentinel, -np.inf) if inexact else sentinel - 1
                break
        else:
            break
    else:
        raise ValueError(
            "This function replaces masked elements with sentinel values, but the data "
            "contains all distinct values of this data type. Consider promoting the "
            "dtype to `np.float64`."
        )
    out = []
    for sample in samples:
        mask = getattr(sample, "mask", None)
        if mask is not None:
            mask = np.broadcast_to(mask, sample.shape)
            raw: Any = sample.data
            data = raw.copy() if np.any(mask) else raw
            data = np.asarray(data)
            data[mask] = sentinel
            sample = data
        out.append(np.asarray(sample))
    return out, sentinel


def remove_sentinel(
    x: NDArray[Any], y: NDArray[Any], sentinel: Any
) -> tuple[NDArray[Any], NDArray[Any]]:
    keep = ~((x == sentinel) | (y == sentinel))
    return x[keep], y[keep]


def add_reduced_axes(res: tuple[Any, ...], reduced_axes: Any, keepdims: bool) -> tuple[Any, ...]:
    if not keepdims:
        return res
    return tuple(np.expand_dims(out, axis=reduced_axes) for out in res)


def broadcast_paired(x: NDArray[Any], y: NDArray[Any]) -> list[NDArray[Any]]:
    """SciPy's ``_broadcast_arrays(..., axis=None)``: full broadcasting, SciPy's message."""
    nd = max(x.ndim, y.ndim)
    shapes = np.ones((2, nd), dtype=int)
    for row, shape in zip(shapes, (x.shape, y.shape), strict=True):
        row[len(row) - len(shape) :] = shape
    new_shape = np.max(shapes, axis=0)
    new_shape *= shapes.all(axis=0)
    if np.any(~((shapes == 1) | (shapes == new_shape))):
        raise ValueError("Array shapes are incompatible for broadcasting.")
    target = tuple(int(s) for s in new_shape)
    return [np.broadcast_to(x, target), np.broadcast_to(y, target)]


def get_nan(x: NDArray[Any], y: NDArray[Any]) -> Any:
    return np.full((), np.nan, dtype=_result_dtype(x, y))[()]


def kendalltau_nd(
    xs: NDArray[Any],
    ys: NDArray[Any],
    body: Any,
    nan_policy: str,
    sentinel: Any,
    reduced_axes: Any,
    keepdims: bool,
    nan: Any,
) -> SignificanceResult:
    """One result per slice along the last axis (SciPy's ``apply_along_axis`` path)."""

    def too_small(a: NDArray[Any], b: NDArray[Any]) -> bool:
        return bool(a.shape[-1] <= 1 or b.shape[-1] <= 1)

    if xs.size == 0 or ys.size == 0:
        out_shape = xs.shape[:-1]
        empty = np.full(out_shape, np.nan, dtype=nan.dtype)
        small = too_small(xs, ys)
        if small or empty.size == 0:
            if small and empty.size != 0:
                warn_small(TOO_SMALL_ND, stacklevel=3)
            res = tuple(empty.copy() for _ in range(3))
            return pack_result(*add_reduced_axes(res, reduced_axes, keepdims))

    n = xs.shape[-1]
    cat = np.concatenate([xs, ys], axis=-1)
    contains = contains_nan(cat, nan_policy)

    def split(row: NDArray[Any]) -> tuple[NDArray[Any], NDArray[Any]]:
        a, b = row[:n], row[n:]
        if sentinel is not None:
            a, b = remove_sentinel(a, b, sentinel)
        return a, b

    if contains and nan_policy == "omit":

        def fun(row: NDArray[Any]) -> Any:
            a, b = row[:n], row[n:]
            a, b = remove_nans(a, b)
            if sentinel is not None:
                a, b = remove_sentinel(a, b, sentinel)
            if too_small(a, b):
                warn_small(TOO_SMALL_ND_OMIT, stacklevel=5)
                return np.full(3, nan)
            return body(a, b)

    elif contains and nan_policy == "propagate":

        def fun(row: NDArray[Any]) -> Any:
            if np.isnan(row).any():
                return np.full(3, nan)
            a, b = split(row)
            if too_small(a, b):
                return np.full(3, nan)
            return body(a, b)

    else:

        def fun(row: NDArray[Any]) -> Any:
            a, b = split(row)
            if too_small(a, b):
                return np.full(3, nan)
            return body(a, b)

    cat = np.moveaxis(cat, -1, 0)
    stacked = np.apply_along_axis(fun, axis=0, arr=cat)
    return pack_result(*add_reduced_axes(tuple(stacked), reduced_axes, keepdims))
