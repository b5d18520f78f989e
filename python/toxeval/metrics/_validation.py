"""Input validation with scikit-learn's rules and messages, fast on large arrays.

scikit-learn validates with ``type_of_target`` (a full ``np.unique`` over y_true)
and ``check_array``; at 1M x 15 that alone costs more than toxeval's kernels. The
functions here return the same answers and raise the same errors, but decide the
common numeric cases (bool/int/float arrays) in a few linear passes and fall back
to the general rule only for exotic inputs (objects, strings).

Warning and error classes: toxeval defines its own, so that scikit-learn is not a
runtime dependency. When scikit-learn *is* imported in the process, warnings and
parameter errors are raised as a class that subclasses both toxeval's and
scikit-learn's, so ``warnings.filterwarnings(..., category=sklearn's class)`` and
``pytest.warns(sklearn's class)`` keep working after swapping the import.
"""

from __future__ import annotations

import numbers
import sys
import warnings
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "InvalidParameterError",
    "UndefinedMetricWarning",
    "assert_all_finite",
    "check_consistent_length",
    "check_n_jobs",
    "known_row_weights",
    "mask_array",
    "to_array",
    "type_of_target",
    "warn_undefined",
]


class InvalidParameterError(ValueError, TypeError):
    """A parameter has an invalid type or value (scikit-learn's class of the same name)."""


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for the input (scikit-learn's class of the same name)."""


@cache
def _bridged(ours: type, module: str, name: str) -> type:
    sk = getattr(sys.modules.get(module), name, None)
    if sk is None or issubclass(ours, sk):
        return ours
    return type(name, (ours, sk), {"__module__": ours.__module__, "__doc__": ours.__doc__})


def _category(ours: type, module: str, name: str) -> type:
    # Only bridge when scikit-learn is already imported: importing it here would
    # cost over a second per process.
    if module in sys.modules:
        return _bridged(ours, module, name)
    return ours


def warn_undefined(message: str, stacklevel: int = 3) -> None:
    """Emit ``UndefinedMetricWarning`` (bridged to scikit-learn's class if loaded)."""
    cat = _category(UndefinedMetricWarning, "sklearn.exceptions", "UndefinedMetricWarning")
    warnings.warn(message, cat, stacklevel=stacklevel)


def invalid_parameter(message: str) -> Exception:
    """Build ``InvalidParameterError`` (bridged to scikit-learn's class if loaded)."""
    cat = _category(
        InvalidParameterError, "sklearn.utils._param_validation", "InvalidParameterError"
    )
    return cat(message)  # type: ignore[no-any-return]


_MASKED_ARRAY = (
    "masked arrays are not supported (scikit-learn would read the values under the "
    "mask): pass the data (a.data) and, for unknown labels, "
    "mask=~np.ma.getmaskarray(a) (True = known)"
)


def check_n_jobs(n_jobs: Any, func: str) -> int | None:
    """``n_jobs`` as an ``int`` or ``None``; anything else (a float, a string, a bool)
    raises ``InvalidParameterError`` naming the parameter and ``func``, as scikit-learn's
    parameter validation does. ``0`` passes here and is rejected by the thread-count
    rule (``ValueError``: it has no meaning)."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise invalid_parameter(
            f"The 'n_jobs' parameter of {func} must be an int or None. Got {n_jobs!r} instead."
        )
    return int(n_jobs)


#: The error of a per-row metric whose rows all lack a known label.
NO_KNOWN_ROW = (
    "no row has a known label (mask is False everywhere): the per-row metric is "
    "undefined; rows without a known label are left out of the mean, and here that "
    "leaves none"
)


def known_row_weights(
    mask: NDArray[np.bool_] | None, weights: NDArray[np.float64] | None, n_rows: int
) -> tuple[NDArray[np.float64] | None, int]:
    """Row weights that leave rows without any known label out of a per-row mean, and
    how many such rows there are.

    A row whose mask is all False has nothing to rank: it is unknown, and scoring it
    (as a perfect row, or as an error) would fold the unknown into the mean. Giving it
    weight 0 is exactly the same as removing the row: the weighted sums add an exact
    zero and the weight sum (the divisor) no longer counts it. ``weights`` are returned
    unchanged when every row has a known label (or there is no 2-D mask); ``None``
    stands for unit weights."""
    if mask is None or mask.ndim != 2 or n_rows == 0:
        return weights, 0
    known = mask.any(axis=1)
    n_without = n_rows - int(np.count_nonzero(known))
    if n_without == 0:
        return weights, 0
    base = np.ones(n_rows) if weights is None else weights
    return np.where(known, base, 0.0), n_without


def _pandas_numeric_extension(x: Any) -> bool:
    """Whether ``x`` is a pandas DataFrame or Series holding a numeric extension dtype
    (``Int64``, ``boolean``, ``Float64``, ``int64[pyarrow]``, ...) and otherwise only
    numeric columns: ``np.asarray`` would make it an object array."""
    if hasattr(x, "columns") and hasattr(x, "dtypes") and hasattr(x.dtypes, "__iter__"):
        dtypes = list(x.dtypes)
    elif hasattr(x, "iloc") and hasattr(x, "dtype"):
        dtypes = [x.dtype]
    else:
        return False
    if all(isinstance(d, np.dtype) for d in dtypes):
        return False
    return all(getattr(d, "kind", "O") in ("b", "i", "u", "f") for d in dtypes)


def mask_array(mask: Any) -> NDArray[Any]:
    """``mask`` as an array for the mask checks: like :func:`to_array`, except that a
    pandas mask with extension dtypes (``boolean``, ``Int64``, ...) keeps booleans or
    integers (its missing values are an error: a mask says what is known, it cannot
    itself be unknown)."""
    if _pandas_numeric_extension(mask):
        if bool(np.asarray(mask.isna()).any()):
            raise ValueError("mask contains missing values (pd.NA); it must be all True/False")
        kinds = mask.dtypes if hasattr(mask, "columns") else [mask.dtype]
        as_bool = all(getattr(d, "kind", "O") == "b" for d in kinds)
        converted: NDArray[Any] = mask.to_numpy(dtype=np.bool_ if as_bool else np.int64)
        return converted
    return to_array(mask)


def to_array(x: Any) -> NDArray[Any]:
    """``np.asarray`` as ``check_array(dtype=None)`` would: ragged input becomes object.

    A NumPy masked array with masked entries is rejected (scikit-learn silently reads
    the values under its mask, which would drop what the mask says); without any it is
    its data. A pandas object with numeric extension dtypes becomes float64 with
    ``pd.NA`` as NaN, which is what scikit-learn's ``check_array`` converts it to (so a
    missing value meets the NaN check and its error)."""
    if isinstance(x, np.ma.MaskedArray):
        if np.ma.getmaskarray(x).any():
            raise ValueError(_MASKED_ARRAY)
        return np.ma.getdata(x)
    if isinstance(x, np.ndarray):
        return x
    if _pandas_numeric_extension(x):
        converted: NDArray[Any] = x.to_numpy(dtype=np.float64, na_value=np.nan)
        return converted
    if hasattr(x, "toarray") and hasattr(x, "tocsr"):
        raise invalid_parameter("sparse input is not supported here")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.VisibleDeprecationWarning)
            return np.asarray(x)
    except (ValueError, np.exceptions.VisibleDeprecationWarning):
        return np.asarray(x, dtype=object)


_INT64_MAX = int(np.iinfo(np.int64).max)


def uint64_as_int64(arr: NDArray[Any]) -> NDArray[np.int64] | None:
    """For a uint64 array holding a value above the int64 range, int64 values in the
    same order with the same ties (``x - 2**63``: the top bit flipped), which is all a
    ranking metric reads of the scores; ``None`` otherwise (then ``astype(np.int64)``
    is exact). Converting such scores to int64 would wrap them to negative numbers,
    and to float64 would tie neighbours."""
    if arr.dtype.kind != "u" or arr.dtype.itemsize != 8 or arr.size == 0:
        return None
    if int(arr.max()) <= _INT64_MAX:
        return None
    return shift_uint64(arr)


def shift_uint64(arr: NDArray[Any]) -> NDArray[np.int64]:
    """uint64 values as int64 ``x - 2**63`` (the top bit flipped): same order, same ties."""
    shifted: NDArray[np.int64] = (arr ^ np.uint64(1 << 63)).view(np.int64)
    return shifted


def _num_samples(x: Any) -> int:
    if hasattr(x, "shape") and x.shape is not None:
        if len(x.shape) == 0:
            raise TypeError(
                f"Input should have at least 1 dimension i.e. satisfy `len(x.shape) > 0`, got scalar `{x!r}` instead."
            )
        return int(x.shape[0])
    if not hasattr(x, "__len__"):
        raise TypeError(f"Expected sequence or array-like, got {type(x)}")
    return len(x)


def check_consistent_length(*arrays: Any) -> None:
    """scikit-learn's ``check_consistent_length`` (None entries are skipped)."""
    lengths = [_num_samples(x) for x in arrays if x is not None]
    if len(set(lengths)) > 1:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"{[int(n) for n in lengths]!r}"
        )


#: From this many values the finite check runs natively on the call's threads.
_NATIVE_FINITE_MIN = 1 << 20


def assert_all_finite(
    x: NDArray[Any],
    *,
    input_name: str = "",
    allow_nan: bool = False,
    n_jobs: int | None = None,
) -> None:
    """scikit-learn's ``_assert_all_finite`` messages for float arrays.

    ``n_jobs`` lets a large contiguous float64/float32 array be checked natively on
    that many threads; the outcome and the messages do not depend on it.
    """
    if x.dtype.kind not in "fc" or x.size == 0:
        return
    if _native_all_finite(x, n_jobs):
        return
    # One pass for the common case: the sum of a finite array is finite (or overflows
    # to inf, in which case we look closer).
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.sum(x)
    if np.isfinite(s):
        return
    has_nan = bool(np.isnan(x).any())
    has_inf = bool(np.isinf(x).any())
    if has_nan and not allow_nan:
        kind = "NaN"
    elif has_inf:
        kind = "infinity or a value too large for " + repr(x.dtype)
    else:
        return
    padded = f"{input_name} " if input_name else ""
    raise ValueError(f"Input {padded}contains {kind}.")


def _native_all_finite(x: NDArray[Any], n_jobs: int | None) -> bool:
    """True when the native check ran and found every value finite."""
    if x.size < _NATIVE_FINITE_MIN or x.dtype not in (np.float64, np.float32):
        return False
    if not (x.flags.c_contiguous or x.flags.f_contiguous):
        return False
    from toxeval import _core

    try:
        return bool(_core.all_finite(x.ravel(order="K"), n_jobs))
    except ValueError:
        return False  # e.g. n_jobs=0: the NumPy check runs, the kernel raises later


TargetType = Literal[
    "binary",
    "multiclass",
    "multilabel-indicator",
    "continuous",
    "multiclass-multioutput",
    "continuous-multioutput",
    "unknown",
]


def _distinct_upto3(y: NDArray[Any]) -> NDArray[Any]:
    """Up to three distinct values of a numeric array (all of them if there are <= 2)."""
    if y.size == 0:
        return y.ravel()
    if y.dtype == np.bool_:
        has_true = bool(y.any())
        has_false = not bool(y.all())
        return np.array([v for v, present in ((False, has_false), (True, has_true)) if present])
    flat = y.ravel()
    lo = flat.min()
    hi = flat.max()
    if lo == hi and not (y.dtype.kind == "f" and np.isnan(lo)):
        return np.array([lo], dtype=y.dtype)
    if y.dtype.kind == "f" and (np.isnan(lo) or np.isnan(hi)):
        # NaN present: fall back to the exact rule.
        return np.unique(flat)[:3]
    others = (flat != lo) & (flat != hi)
    if not others.any():
        return np.array([lo, hi], dtype=y.dtype)
    return np.array([lo, flat[np.argmax(others)], hi], dtype=y.dtype)


def binary_labels(y: NDArray[Any]) -> NDArray[Any]:
    """``np.unique(y)`` for a target ``type_of_target`` called "binary" (at most two
    distinct values): the minimum and maximum of a numeric array, one linear pass
    instead of a sort (a 4M-row y_true took ~120 ms to ``np.unique``); other dtypes
    (strings, objects) still go through ``np.unique``. Same values, dtype and order."""
    if y.dtype.kind in "biuf":
        labels = _distinct_upto3(y)
        # A float zero of either sign: np.unique keeps whichever zero its sort puts
        # first, so a -0.0 anywhere takes np.unique itself.
        signed_zero = (
            y.dtype.kind == "f" and bool(np.any(labels == 0)) and bool(np.signbit(y[y == 0]).any())
        )
        if labels.shape[0] <= 2 and not signed_zero:
            return labels
    return np.unique(y)


def _is_integral_float(labels: NDArray[Any]) -> bool:
    return bool(labels.dtype.kind == "f" and np.all(labels.astype(np.int64) == labels))


def type_of_target(y: Any, input_name: str = "") -> TargetType:
    """scikit-learn's ``type_of_target`` (dense inputs), in linear time for numeric arrays."""
    valid = (isinstance(y, Sequence) or hasattr(y, "__array__")) and not isinstance(y, str)
    if not valid:
        raise ValueError(f"Expected array-like (array or non-string sequence), got {y!r}")
    arr = to_array(y)
    numeric = arr.dtype.kind in "biuf"

    try:
        first = arr[0]
        if isinstance(first, bytes):
            raise TypeError(
                "Support for labels represented as bytes is not supported. Convert "
                "the labels to a string or integer format."
            )
        if (
            not hasattr(first, "__array__")
            and isinstance(first, Sequence)
            and not isinstance(first, str)
        ):
            raise ValueError(
                "You appear to be using a legacy multi-label data"
                " representation. Sequence of sequences are no"
                " longer supported; use a binary array or sparse"
                " matrix instead - the MultiLabelBinarizer"
                " transformer can convert to this format."
            )
    except IndexError:
        pass

    if arr.ndim == 2 and arr.shape[1] > 1 and numeric:
        labels = _distinct_upto3(arr)
        if labels.shape[0] < 3 and (arr.dtype.kind in "biu" or _is_integral_float(labels)):
            return "multilabel-indicator"
    elif arr.ndim == 2 and arr.shape[1] > 1 and arr.size:
        labels = np.unique(arr)
        if labels.shape[0] < 3 and _is_integral_float(labels):
            return "multilabel-indicator"

    if arr.ndim not in (1, 2):
        return "unknown"
    if not min(arr.shape):
        return "binary" if arr.ndim == 1 else "unknown"
    if arr.dtype == object and not isinstance(arr.flat[0], str):
        return "unknown"

    suffix = "-multioutput" if arr.ndim == 2 and arr.shape[1] > 1 else ""
    if arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            integral = arr.astype(np.int64)
        if np.any(arr != integral.astype(arr.dtype)):
            assert_all_finite(arr, input_name=input_name)
            return "continuous" + suffix  # type: ignore[return-value]

    n_unique = _distinct_upto3(arr).shape[0] if numeric else np.unique(arr).shape[0]
    if n_unique > 2 or (arr.ndim == 2 and len(arr[0]) > 1):
        return "multiclass" + suffix  # type: ignore[return-value]
    return "binary"
