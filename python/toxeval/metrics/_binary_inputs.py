"""Input coercion of the binary ranking metrics (AP, ROC AUC, the curves), with
scikit-learn's rules and messages: 1-D columns, score dtypes the native core reads
without changing order or ties, ``check_array``'s shape rules, text scores replayed up
to where scikit-learn fails on them, ``pos_label`` checks, and the native
multilabel-indicator scan that replaces ``type_of_target`` for int matrices.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics._target import type_of_target
from toxeval.metrics._validation import (
    OBJECT_NAN,
    TEXT_NOT_NUMERIC,
    assert_all_finite,
    check_at_most_2d,
    check_min_size,
    check_not_0d_or_1d,
    check_sample_weight,
    complex_error,
    num_samples,
    param_error,
    to_array,
    uint64_as_int64,
)

__all__ = [
    "as_scores",
    "check_2d",
    "check_array_nd",
    "check_label_param",
    "check_pos_label_consistency",
    "classify_target",
    "column_or_1d",
    "fast_indicator",
    "has_text",
    "pos_label_error",
    "replay_text_scores",
]


def check_label_param(name: str, func: str, value: Any, *, optional: bool) -> None:
    """``validate_params`` for ``pos_label`` (a float, str or bool; None if ``optional``)."""
    ok = isinstance(value, (numbers.Real, str, bool, np.bool_)) or (optional and value is None)
    if not ok:
        constraint = "an instance of 'float', an instance of 'str', an instance of 'bool' or an instance of 'numpy.bool'"
        if optional:
            constraint += " or None"
        else:
            constraint = "an instance of 'float', an instance of 'str' or an instance of 'bool' or an instance of 'numpy.bool'"
        raise param_error(name, func, constraint, value)


def column_or_1d(y: Any) -> NDArray[Any]:
    """scikit-learn's ``column_or_1d``: a 1-D array or a single column, as 1-D."""
    arr = to_array(y)
    if arr.ndim == 1:
        return arr
    if arr.ndim == 2 and arr.shape[1] == 1:
        return arr.ravel()
    raise ValueError(f"y should be a 1d array, got an array of shape {arr.shape} instead.")


def as_scores(x: Any) -> NDArray[Any]:
    """Scores in a dtype the core accepts (float64, float32, int64) without changing
    their order or ties; float64/float32/int64 arrays are not copied."""
    arr = to_array(x)
    kind = arr.dtype.kind
    if arr.dtype in (np.float64, np.float32, np.int64):
        return arr
    if kind == "c":
        raise complex_error(arr)
    if kind in "US":
        raise ValueError(TEXT_NOT_NUMERIC)
    if kind == "f":
        # float16 widens exactly to float32; longdouble is narrowed as sklearn's
        # own float64 finite checks would see it.
        return arr.astype(np.float32 if arr.dtype.itemsize < 4 else np.float64)
    if kind in "bi" or (kind == "u" and arr.dtype.itemsize < 8):
        return arr.astype(np.int64)
    if kind == "u":
        flipped = uint64_as_int64(arr)
        return arr.astype(np.int64) if flipped is None else flipped
    return arr.astype(np.float64)


def check_array_nd(arr: NDArray[Any], *, numeric: bool, n_jobs: int | None = None) -> None:
    """scikit-learn's ``check_array(ensure_2d=False)`` shape and finiteness rules."""
    check_at_most_2d(arr)
    checked = as_scores(arr) if numeric else arr
    if checked.dtype.kind == "f":
        assert_all_finite(checked, n_jobs=n_jobs)
    if arr.ndim == 0:
        # check_array counts the samples after its finiteness check; it has converted
        # object input to float64 and kept every other dtype.
        num_samples(checked if arr.dtype == object else arr)
    check_min_size(arr.shape)


def check_2d(arr: NDArray[Any]) -> NDArray[Any]:
    """scikit-learn's ``check_array`` shape rules for a 2-D numeric input."""
    check_not_0d_or_1d(arr)
    check_at_most_2d(arr)
    check_min_size(arr.shape)
    return arr


def has_text(raw: NDArray[Any]) -> bool:
    """Whether 1-D scores are text: a str/bytes array, or an object array holding a
    str or bytes (checked only for object arrays, a rare and already slow input)."""
    kind = raw.dtype.kind
    if kind in "US":
        return True
    return kind == "O" and any(isinstance(v, (str, bytes)) for v in raw.flat)


def replay_text_scores(raw: NDArray[Any], sample_weight: NDArray[Any] | None, n: int) -> None:
    """scikit-learn's steps on 1-D text scores (``_sort_inputs_and_compute_...``), up
    to where they fail: its NaN check of object arrays (``x != x``), the weights, then
    a stable descending argsort of the nonzero-weight scores and ``np.diff`` of the
    sorted scores, which NumPy refuses for strings (``UFuncTypeError`` for str/bytes
    arrays, Python's ``TypeError`` for str objects, or the sort's own ``TypeError``
    for mixed objects). Only called for text scores (rare path); returns if no step
    fails (a single object string), and the caller goes on as before."""
    if raw.dtype == object and bool(np.any(raw != raw)):
        raise ValueError(OBJECT_NAN)
    w = None if sample_weight is None else check_sample_weight(column_or_1d(sample_weight), n)
    s = raw if w is None else raw[w != 0]
    # array_api_compat's argsort(descending=True, stable=True), as scikit-learn calls it
    order = s.shape[0] - 1 - np.flip(np.argsort(np.flip(s), kind="stable"))
    np.diff(s[order])


def pos_label_error(classes_repr: str) -> ValueError:
    """scikit-learn's error for labels other than {0, 1} / {-1, 1} without ``pos_label``."""
    return ValueError(
        f"y_true takes value in {{{classes_repr}}} and pos_label is not "
        "specified: either make y_true take value in {0, 1} or "
        "{-1, 1} or pass pos_label explicitly."
    )


def check_pos_label_consistency(pos_label: Any, y_true: NDArray[Any]) -> Any:
    """scikit-learn's ``_check_pos_label_consistency``: ``pos_label``, or 1 when
    ``y_true``'s classes are {0, 1} / {-1, 1} (or one of them), else its error."""
    if pos_label is not None:
        return pos_label
    classes = np.unique(y_true)
    if classes.shape[0] == 0 and classes.dtype.kind not in "OUS":
        # No class at all: scikit-learn's first comparison, ``classes == [0, 1]``,
        # cannot broadcast (0,) against (2,); NumPy raises its own ValueError.
        np.all(classes == np.asarray([0, 1]))
    if classes.dtype.kind in "OUS" or not any(
        classes.shape == np.shape(ref) and bool(np.all(classes == np.asarray(ref)))
        for ref in ([0, 1], [-1, 1], [0], [-1], [1])
    ):
        raise pos_label_error(", ".join([repr(c) for c in classes.tolist()]))
    return 1


def _native_int_indicator(y_true: Any) -> bool:
    """Whether the native indicator scan applies: a non-empty 2-D int64/int32 ndarray
    with at least two columns (anything else takes scikit-learn's type_of_target)."""
    return (
        type(y_true) is np.ndarray
        and y_true.ndim == 2
        and y_true.shape[1] >= 2
        and y_true.size > 0
        and y_true.dtype in (np.int64, np.int32)
    )


def fast_indicator(
    y_true: Any, n_jobs: int | None = None, *, packed: bool = True
) -> tuple[list[int], NDArray[np.uint8] | None] | None:
    """One native pass over a 2-D int64/int32 ``y_true`` with more than one column:
    ``(sorted distinct values, packed positives)`` when it holds at most two
    distinct values (then ``type_of_target`` is "multilabel-indicator"), else None
    (the caller takes the general path). The positives are ``y_true == 1`` packed
    eight labels per byte (``np.packbits(y_true == 1, axis=1, bitorder="little")``,
    1/8 of a bool copy), which the native kernels read directly. Replaces
    type_of_target's scans, min/max and ``y_true == 1`` (each a full pass).

    ``packed=False`` (for ``average="samples"``): the same check, in parallel, but no
    positives (``(values, None)``): the per-row kernel reads the labels in place."""
    if not _native_int_indicator(y_true):
        return None
    scan = _core.binary_indicator_summary if packed else _core.binary_indicator_values
    try:
        r: Any = scan(y_true, n_jobs)
    except ValueError:
        return None  # e.g. n_jobs=0: the general path raises in scikit-learn's order
    if r is None or r[2]:
        return None
    y_pos = r[3] if packed else None
    if packed and y_pos is None:
        return None
    lo, hi = r[0], r[1]
    return ([lo] if lo == hi else [lo, hi]), y_pos


def classify_target(y_true: Any, average: Any, jobs: int | None) -> tuple[Any, str, Any]:
    """``(indicator, y_type, y_arr)`` for AP / ROC AUC: the fast multilabel-indicator
    check (the in-place label-value scan for ``average="samples"``, which reads int64
    labels without a bool copy), else scikit-learn's ``type_of_target``."""
    indicator = fast_indicator(y_true, jobs, packed=average != "samples")
    if indicator is not None:
        return indicator, "multilabel-indicator", y_true
    return None, type_of_target(y_true, input_name="y_true"), to_array(y_true)
