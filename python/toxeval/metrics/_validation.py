"""The one validation layer of the drop-in metrics: array-likes, masks, sample weights,
dtypes, shapes, finiteness and ``n_jobs``, each checked by one function with one
message (scikit-learn's wherever scikit-learn has the check; toxeval's own for masks
and ``n_jobs`` values it does not take). Target types are in ``_target``.

Checks are fast on large arrays: finiteness is one pass (native and threaded from
1M values), masks and weights are converted once and not copied when already in form.

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
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "NO_KNOWN_ROW",
    "OBJECT_NAN",
    "TEXT_NOT_NUMERIC",
    "WEIGHTS_SUM_TO_ZERO",
    "InvalidParameterError",
    "UndefinedMetricWarning",
    "assert_all_finite",
    "average_weights",
    "check_array_like",
    "check_at_most_2d",
    "check_consistent_length",
    "check_mask",
    "check_min_size",
    "check_n_jobs",
    "check_not_0d_or_1d",
    "check_sample_weight",
    "complex_error",
    "invalid_parameter",
    "is_array_like",
    "issparse",
    "known_row_weights",
    "mask_array",
    "num_samples",
    "param_error",
    "shift_uint64",
    "to_array",
    "uint64_as_int64",
    "warn_undefined",
    "warning_category",
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


def warning_category(ours: type, module: str, name: str) -> type:
    """``ours``, or, when ``module`` (scikit-learn's or SciPy's) is already imported, a
    class subclassing both ``ours`` and that module's class ``name``."""
    # Only bridge when the library is already imported: importing it here would
    # cost over a second per process.
    if module in sys.modules:
        return _bridged(ours, module, name)
    return ours


def warn_undefined(message: str, stacklevel: int = 3) -> None:
    """Emit ``UndefinedMetricWarning`` (bridged to scikit-learn's class if loaded)."""
    cat = warning_category(UndefinedMetricWarning, "sklearn.exceptions", "UndefinedMetricWarning")
    warnings.warn(message, cat, stacklevel=stacklevel)


def invalid_parameter(message: str) -> Exception:
    """Build ``InvalidParameterError`` (bridged to scikit-learn's class if loaded)."""
    cat = warning_category(
        InvalidParameterError, "sklearn.utils._param_validation", "InvalidParameterError"
    )
    return cat(message)  # type: ignore[no-any-return]


def param_error(name: str, func: str, constraint: str, value: Any) -> Exception:
    """scikit-learn's ``validate_params`` error for parameter ``name`` of ``func``."""
    return invalid_parameter(
        f"The {name!r} parameter of {func} must be {constraint}. Got {value!r} instead."
    )


MAX_N_JOBS = 2**62  # n_jobs reaches the native code as a 64-bit int


def check_n_jobs(n_jobs: Any, func: str) -> int | None:
    """``n_jobs`` as an ``int`` or ``None``; anything else (a float, a string, a bool)
    raises ``InvalidParameterError`` naming the parameter and ``func``, as scikit-learn's
    parameter validation does. ``0`` passes here and is rejected by the thread-count
    rule (``ValueError``: it has no meaning). A count beyond a 64-bit int means what a
    large one means (all cores; ``-k``: one job) and is passed on as one."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise invalid_parameter(
            f"The 'n_jobs' parameter of {func} must be an int or None. Got {n_jobs!r} instead."
        )
    return max(-MAX_N_JOBS, min(int(n_jobs), MAX_N_JOBS))


# ---------------------------------------------------------------------- array-likes, masks, weights


def issparse(x: Any) -> bool:
    """Whether ``x`` is a SciPy sparse array or matrix (without importing SciPy)."""
    return hasattr(x, "tocsr") and hasattr(x, "toarray")


def is_array_like(x: Any) -> bool:
    """scikit-learn's "array-like" constraint (``_is_arraylike_not_scalar``): a 0-d
    ndarray passes it (and fails later, as in scikit-learn); scalars (NumPy's
    included) do not. Sparse input is not array-like here (see ``check_array_like``)."""
    if issparse(x) or np.isscalar(x):
        return False
    return hasattr(x, "__len__") or hasattr(x, "shape") or hasattr(x, "__array__")


def check_array_like(
    name: str, func: str, value: Any, *, optional: bool = False, sparse_ok: bool = False
) -> None:
    """scikit-learn's ``validate_params`` for an array argument: ``InvalidParameterError``
    naming the parameter, ``func`` and what it accepts (``None`` with ``optional``, a
    sparse array or matrix with ``sparse_ok``)."""
    if (optional and value is None) or is_array_like(value) or (sparse_ok and issparse(value)):
        return
    constraint = "an array-like or a sparse array or matrix" if sparse_ok else "an array-like"
    raise param_error(name, func, constraint + (" or None" if optional else ""), value)


_MASKED_ARRAY = (
    "masked arrays are not supported (scikit-learn would read the values under the "
    "mask): pass the data (a.data) and, for unknown labels, "
    "mask=~np.ma.getmaskarray(a) (True = known)"
)


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
    if issparse(x):
        raise invalid_parameter("sparse input is not supported here")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.VisibleDeprecationWarning)
            return np.asarray(x)
    except (ValueError, np.exceptions.VisibleDeprecationWarning):
        return np.asarray(x, dtype=object)


def check_mask(
    mask: Any, shape: tuple[int, ...], *, all_true_as_none: bool = False
) -> NDArray[np.bool_] | None:
    """``mask`` (True = label known) as a bool array of ``shape`` (y_true's), or None
    when absent. Bool arrays are not copied; 0/1 integers (a pandas ``boolean`` or
    ``Int64`` mask included) become bool; anything else, or another shape, is a
    ``ValueError``. With ``all_true_as_none`` an all-True mask is returned as None (the
    unmasked result is the same, and the unmasked kernels are faster)."""
    if mask is None:
        return None
    m = mask_array(mask)
    if m.dtype != np.bool_:
        if m.dtype.kind in "iu" and bool(((m == 0) | (m == 1)).all()):
            m = m.astype(np.bool_)
        else:
            raise ValueError(
                f"mask must be a boolean array (or 0/1 integers) shaped like y_true; got dtype {m.dtype}"
            )
    if m.shape != shape:
        raise ValueError(f"mask has shape {m.shape} but y_true has shape {shape}")
    if all_true_as_none and bool(m.all()):
        return None
    return m


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


def check_sample_weight(sample_weight: NDArray[Any] | None, n: int) -> NDArray[np.float64] | None:
    """scikit-learn's ``_check_sample_weight`` for the binary metrics: float64 of shape
    ``(n,)``, finite. (The per-row metrics average with ``np.average`` and take its
    rules instead: :func:`average_weights`.)"""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_weight.shape == {w.shape}, expected {(n,)}!")
    assert_all_finite(w, input_name="sample_weight")
    return w


def average_weights(sample_weight: Any) -> NDArray[np.float64] | None:
    """Row weights as float64. Strings are rejected rather than parsed, and weights that
    are not 1-D raise ``np.average``'s TypeError, as in scikit-learn (which averages with
    it)."""
    if sample_weight is None:
        return None
    raw = np.asarray(sample_weight)
    if raw.dtype.kind in "USc":
        raise TypeError(f"sample_weight must be real numbers; got dtype {raw.dtype}")
    w = np.asarray(raw, dtype=np.float64)
    if w.ndim != 1:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    return w


# ---------------------------------------------------------------------- dtypes, shapes, finiteness


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


def num_samples(x: Any) -> int:
    """scikit-learn's ``_num_samples`` (its ``TypeError`` for scalars and 0-d arrays)."""
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
    lengths = [num_samples(x) for x in arrays if x is not None]
    if len(set(lengths)) > 1:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"{[int(n) for n in lengths]!r}"
        )


def check_min_size(shape: tuple[int, ...]) -> None:
    """``check_array``'s minimum of one sample (and one feature for 2-D input)."""
    if shape[0] < 1:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={shape}) while a minimum of 1 is required."
        )
    if len(shape) == 2 and shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required."
        )


def check_at_most_2d(arr: NDArray[Any]) -> None:
    """``check_array``'s ``allow_nd=False``."""
    if arr.ndim >= 3:
        raise ValueError(f"Found array with dim {arr.ndim}, while dim <= 2 is required.")


_RESHAPE = (
    "Reshape your data either using array.reshape(-1, 1) if your data has a single "
    "feature or array.reshape(1, -1) if it contains a single sample."
)


def check_not_0d_or_1d(arr: NDArray[Any]) -> None:
    """``check_array``'s ``ensure_2d=True`` for a scalar or 1-D array."""
    if arr.ndim in (0, 1):
        got = "scalar" if arr.ndim == 0 else "1D"
        raise ValueError(f"Expected 2D array, got {got} array instead:\narray={arr}.\n{_RESHAPE}")


#: ``check_array(dtype="numeric")``'s error for str/bytes arrays.
TEXT_NOT_NUMERIC = (
    "dtype='numeric' is not compatible with arrays of bytes/strings."
    "Convert your data to numeric values explicitly instead."
)
#: ``check_array``'s NaN error for object arrays (no final period, unlike float arrays).
OBJECT_NAN = "Input contains NaN"
#: ``np.average``'s error when the weights sum to zero (scikit-learn averages with it).
WEIGHTS_SUM_TO_ZERO = "Weights sum to zero, can't be normalized"


def complex_error(arr: NDArray[Any]) -> ValueError:
    """``check_array``'s error for complex input (casting would drop the imaginary parts)."""
    return ValueError(f"Complex data not supported\n{arr}\n")


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
