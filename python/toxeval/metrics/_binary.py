"""Per-label binary ranking metrics: ``average_precision_score``, ``roc_auc_score``,
``precision_recall_curve`` and ``roc_curve``, drop-ins for scikit-learn 1.9.1.

Validation, averaging and warnings happen here with scikit-learn's exact rules and
messages; the native core (``toxeval._core.binary_*``) sorts each label once (radix
sort on order keys, parallel over labels or row blocks) and returns per-label (or
per-row) values plus flags that say which scikit-learn warning applies.

Masked definition (``mask``, True = label known), shared by both scores:

* per label (``average=None``, ``"macro"``, ``"weighted"``): label ``j`` is scored on
  the rows where ``mask[:, j]`` is True only, exactly as scikit-learn would score
  ``y_true[mask[:, j], j]`` against ``y_score[mask[:, j], j]``; the ``"weighted"``
  support is the (weighted) positive count over those rows;
* ``"micro"``: the known cells only, raveled row-major;
* ``"samples"``: each row over its known labels only.

A label (or row) with no known entry scores NaN with an ``UndefinedMetricWarning``.
``mask=None`` and an all-True mask give exactly the unmasked (scikit-learn) result.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics._validation import (
    _distinct_upto3,
    _num_samples,
    assert_all_finite,
    binary_labels,
    check_consistent_length,
    check_n_jobs,
    invalid_parameter,
    mask_array,
    to_array,
    type_of_target,
    uint64_as_int64,
    warn_undefined,
)

__all__ = [
    "average_precision_score",
    "precision_recall_curve",
    "roc_auc_score",
    "roc_curve",
]

Average = Literal["micro", "macro", "weighted", "samples"] | None

# scikit-learn prints these sets in set-iteration order, which depends on its own
# .pyc; the elements (not their order) match.
_AP_AVERAGES = {"micro", "samples", "weighted", "macro"}
_AUC_AVERAGES = {"micro", "macro", "samples", "weighted"}
_MULTI_CLASS = {"raise", "ovr", "ovo"}

# Flags returned by the native core (rust/binary/mod.rs).
_NO_POSITIVE = 1
_SINGLE_CLASS = 2
_NO_NEGATIVE_LEFT = 4
_NO_POSITIVE_LEFT = 8
_EMPTY = 16
_ALL_ZERO_WEIGHT = 32
_NOT_MONOTONIC = 64
_TOO_FEW_POINTS = 128

_MSG_NO_POSITIVE = "No positive class found in y_true, recall is set to one for all thresholds."
_MSG_SINGLE_CLASS = (
    "Only one class is present in y_true. ROC AUC score is not defined in that case."
)
_MSG_NO_NEG_LEFT = "No negative samples in y_true, false positive value should be meaningless"
_MSG_NO_POS_LEFT = "No positive samples in y_true, true positive value should be meaningless"
_MSG_EMPTY = "A label (or row) has no known entries in mask; its score is NaN."
_MSG_ZERO_WEIGHTS = "Sample weights must contain at least one non-zero number."


# --------------------------------------------------------------------------- validation


def _param_error(name: str, func: str, constraint: str, value: Any) -> Exception:
    return invalid_parameter(
        f"The {name!r} parameter of {func} must be {constraint}. Got {value!r} instead."
    )


def _str_options(options: set[str]) -> str:
    return "a str among {" + ", ".join(repr(o) for o in options) + "}"


def _is_array_like(x: Any) -> bool:
    """scikit-learn's "array-like" constraint (``_is_arraylike_not_scalar``): a 0-d
    ndarray passes it (and fails later, as in scikit-learn); scalars (NumPy's
    included) do not. Sparse input is rejected here (not supported)."""
    if hasattr(x, "toarray") and hasattr(x, "tocsr"):
        return False
    if np.isscalar(x):
        return False
    return hasattr(x, "__len__") or hasattr(x, "shape") or hasattr(x, "__array__")


def _check_array_like(name: str, func: str, value: Any, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not _is_array_like(value):
        raise _param_error(
            name, func, "an array-like or None" if optional else "an array-like", value
        )


def _check_label_param(name: str, func: str, value: Any, *, optional: bool) -> None:
    ok = isinstance(value, (numbers.Real, str, bool, np.bool_)) or (optional and value is None)
    if not ok:
        constraint = "an instance of 'float', an instance of 'str', an instance of 'bool' or an instance of 'numpy.bool'"
        if optional:
            constraint += " or None"
        else:
            constraint = "an instance of 'float', an instance of 'str' or an instance of 'bool' or an instance of 'numpy.bool'"
        raise _param_error(name, func, constraint, value)


def _column_or_1d(y: Any) -> NDArray[Any]:
    arr = to_array(y)
    if arr.ndim == 1:
        return arr
    if arr.ndim == 2 and arr.shape[1] == 1:
        return arr.ravel()
    raise ValueError(f"y should be a 1d array, got an array of shape {arr.shape} instead.")


def _as_scores(x: Any) -> NDArray[Any]:
    """Scores in a dtype the core accepts (float64, float32, int64) without changing
    their order or ties; float64/float32/int64 arrays are not copied."""
    arr = to_array(x)
    kind = arr.dtype.kind
    if arr.dtype in (np.float64, np.float32, np.int64):
        return arr
    if kind == "c":
        # check_array's message; casting would drop the imaginary parts with a warning
        raise ValueError(f"Complex data not supported\n{arr}\n")
    if kind in "US":
        raise ValueError(
            "dtype='numeric' is not compatible with arrays of bytes/strings."
            "Convert your data to numeric values explicitly instead."
        )
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


def _check_array_nd(arr: NDArray[Any], *, numeric: bool, n_jobs: int | None = None) -> None:
    """scikit-learn's ``check_array(ensure_2d=False)`` shape and finiteness rules."""
    if arr.ndim >= 3:
        raise ValueError(f"Found array with dim {arr.ndim}, while dim <= 2 is required.")
    checked = _as_scores(arr) if numeric else arr
    if checked.dtype.kind == "f":
        assert_all_finite(checked, n_jobs=n_jobs)
    if arr.ndim == 0:
        # check_array counts the samples after its finiteness check; it has converted
        # object input to float64 and kept every other dtype.
        _num_samples(checked if arr.dtype == object else arr)
    if arr.ndim >= 1 and arr.shape[0] < 1:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    if arr.ndim == 2 and arr.shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )


def _check_2d(arr: NDArray[Any]) -> NDArray[Any]:
    """scikit-learn's ``check_array`` shape rules for a 2-D numeric input."""
    if arr.ndim == 1:
        raise ValueError(
            f"Expected 2D array, got 1D array instead:\narray={arr}.\n"
            "Reshape your data either using array.reshape(-1, 1) if "
            "your data has a single feature or array.reshape(1, -1) "
            "if it contains a single sample."
        )
    if arr.ndim >= 3:
        raise ValueError(f"Found array with dim {arr.ndim}, while dim <= 2 is required.")
    if arr.shape[0] < 1:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    if arr.shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    return arr


def _check_mask(mask: Any, shape: tuple[int, ...]) -> NDArray[np.bool_] | None:
    """A boolean mask shaped like y_true (None when absent or all True)."""
    if mask is None:
        return None
    m = mask_array(mask)
    if m.dtype != np.bool_:
        if m.dtype.kind in "iu" and m.size and bool(((m == 0) | (m == 1)).all()):
            m = m.astype(np.bool_)
        elif m.dtype.kind in "iu" and m.size == 0:
            m = m.astype(np.bool_)
        else:
            raise ValueError(
                f"mask must be a boolean array (or 0/1 integers) shaped like y_true; got dtype {m.dtype}"
            )
    if m.shape != shape:
        raise ValueError(f"mask has shape {m.shape} but y_true has shape {shape}")
    if bool(m.all()):
        return None
    return m


def _weights_f64(sample_weight: NDArray[Any] | None, n: int) -> NDArray[np.float64] | None:
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_weight.shape == {w.shape}, expected {(n,)}!")
    assert_all_finite(w, input_name="sample_weight")
    return w


def _has_text(raw: NDArray[Any]) -> bool:
    """Whether 1-D scores are text: a str/bytes array, or an object array holding a
    str or bytes (checked only for object arrays, a rare and already slow input)."""
    kind = raw.dtype.kind
    if kind in "US":
        return True
    return kind == "O" and any(isinstance(v, (str, bytes)) for v in raw.flat)


def _replay_text_scores(raw: NDArray[Any], sample_weight: NDArray[Any] | None, n: int) -> None:
    """scikit-learn's steps on 1-D text scores (``_sort_inputs_and_compute_...``), up
    to where they fail: its NaN check of object arrays (``x != x``), the weights, then
    a stable descending argsort of the nonzero-weight scores and ``np.diff`` of the
    sorted scores, which NumPy refuses for strings (``UFuncTypeError`` for str/bytes
    arrays, Python's ``TypeError`` for str objects, or the sort's own ``TypeError``
    for mixed objects). Only called for text scores (rare path); returns if no step
    fails (a single object string), and the caller goes on as before."""
    if raw.dtype == object and bool(np.any(raw != raw)):
        raise ValueError("Input contains NaN")  # no period: the object-array message
    w = None if sample_weight is None else _weights_f64(_column_or_1d(sample_weight), n)
    s = raw if w is None else raw[w != 0]
    # array_api_compat's argsort(descending=True, stable=True), as scikit-learn calls it
    order = s.shape[0] - 1 - np.flip(np.argsort(np.flip(s), kind="stable"))
    np.diff(s[order])


def _check_pos_label_consistency(pos_label: Any, y_true: NDArray[Any]) -> Any:
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
        classes_repr = ", ".join([repr(c) for c in classes.tolist()])
        raise ValueError(
            f"y_true takes value in {{{classes_repr}}} and pos_label is not "
            "specified: either make y_true take value in {0, 1} or "
            "{-1, 1} or pass pos_label explicitly."
        )
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


def _fast_indicator(
    y_true: Any, n_jobs: int | None = None
) -> tuple[list[int], NDArray[np.uint8]] | None:
    """One native pass over a 2-D int64/int32 ``y_true`` with more than one column:
    ``(sorted distinct values, packed positives)`` when it holds at most two
    distinct values (then ``type_of_target`` is "multilabel-indicator"), else None
    (the caller takes the general path). The positives are ``y_true == 1`` packed
    eight labels per byte (``np.packbits(y_true == 1, axis=1, bitorder="little")``,
    1/8 of a bool copy), which the native kernels read directly. Replaces
    type_of_target's scans, min/max and ``y_true == 1`` (each a full pass)."""
    if not _native_int_indicator(y_true):
        return None
    try:
        r = _core.binary_indicator_summary(y_true, n_jobs)
    except ValueError:
        return None  # e.g. n_jobs=0: the general path raises in scikit-learn's order
    if r is None:
        return None
    lo, hi, third, y_pos = r
    if third or y_pos is None:
        return None
    return ([lo] if lo == hi else [lo, hi]), y_pos


def _fast_indicator_values(
    y_true: Any, n_jobs: int | None
) -> tuple[list[int], NDArray[np.bool_] | None] | None:
    """:func:`_fast_indicator` for ``average="samples"``: the same check, in
    parallel, but no ``y_true == 1`` copy (``(values, None)``): the per-row kernel
    reads int64/int32 labels in place."""
    if not _native_int_indicator(y_true):
        return None
    try:
        r = _core.binary_indicator_values(y_true, n_jobs)
    except ValueError:
        return None  # e.g. n_jobs=0: the general path raises in scikit-learn's order
    if r is None or r[2]:
        return None
    lo, hi, _ = r
    return ([lo] if lo == hi else [lo, hi]), None


# --------------------------------------------------------------------------- core calls


def _emit(
    flags: NDArray[np.uint8] | int,
    metric: str,
    unit_error: Callable[[int], None] | None = None,
) -> None:
    """Warn once per kind of flag and raise on error flags, with scikit-learn's
    messages. Units (labels or rows) are processed in order as scikit-learn loops
    over them: an error raises after the warnings of the units before it, and the
    kinds of warning come in the order scikit-learn first emits them (by the first
    unit showing each; within a unit, in the order of its code).

    ``unit_error(i)``, for a ROC error flag on unit ``i``, raises scikit-learn's
    error with the curve it prints (see :func:`_raise_roc_auc_error`)."""
    arr = np.atleast_1d(np.asarray(flags, dtype=np.uint8))
    errors = _ALL_ZERO_WEIGHT | _TOO_FEW_POINTS | _NOT_MONOTONIC
    bad = np.flatnonzero(arr & errors)
    upto = arr if bad.size == 0 else arr[: bad[0] + 1]
    seen = int(np.bitwise_or.reduce(upto)) if upto.size else 0
    if metric != "average_precision":
        seen &= ~_EMPTY
    kinds = [
        (bit, msg, cat)
        for bit, msg, cat in (
            (_EMPTY, _MSG_EMPTY, None),
            (_NO_POSITIVE, _MSG_NO_POSITIVE, UserWarning),
            (_SINGLE_CLASS, _MSG_SINGLE_CLASS, None),
            (_NO_NEGATIVE_LEFT, _MSG_NO_NEG_LEFT, None),
            (_NO_POSITIVE_LEFT, _MSG_NO_POS_LEFT, None),
        )
        if seen & bit
    ]
    if len(kinds) > 1 and upto.size > 1:  # only when several kinds warn
        kinds.sort(key=lambda k: int(np.argmax((upto & k[0]) != 0)))
    for _, msg, cat in kinds:
        if cat is None:
            warn_undefined(msg, stacklevel=4)
        else:
            warnings.warn(msg, cat, stacklevel=4)
    if bad.size:
        first = int(arr[bad[0]])
        if first & _ALL_ZERO_WEIGHT:
            raise ValueError(_MSG_ZERO_WEIGHTS)
        if unit_error is not None:
            unit_error(int(bad[0]))
        if first & _TOO_FEW_POINTS:
            raise ValueError(
                "At least 2 points are needed to compute area under curve, but x.shape = 1"
            )
        raise ValueError("x is neither increasing nor decreasing.")


def _auc_x_check(x: NDArray[np.float64]) -> None:
    """The errors of scikit-learn's ``auc(x, y)`` (its x printed as it prints it)."""
    if x.shape[0] < 2:
        raise ValueError(  # scikit-learn's "... x.shape = %s" % x.shape, x being 1-D
            f"At least 2 points are needed to compute area under curve, but x.shape = {x.shape[0]}"
        )
    dx = np.diff(x)
    if np.any(dx < 0) and not np.all(dx <= 0):
        raise ValueError(f"x is neither increasing nor decreasing : {x}.")


def _sklearn_fpr(
    y_pos: NDArray[np.bool_], scores: NDArray[Any], sample_weight: NDArray[Any] | None
) -> NDArray[np.float64]:
    """``roc_curve(...)[0]`` computed as scikit-learn computes it (its cumulative sums,
    so the same bits, down to the ``-0.0`` a negative weight can leave in fps)."""
    y, s, w = y_pos, scores, sample_weight
    if w is not None:
        nonzero = w != 0
        y, s, w = y[nonzero], s[nonzero], w[nonzero]
    order = s.shape[0] - 1 - np.flip(np.argsort(np.flip(s), kind="stable"))
    s, yf = s[order], y[order].astype(np.float64)
    idx = np.concatenate([np.nonzero(np.diff(s))[0], [yf.shape[0] - 1]])
    weight: Any = 1.0 if w is None else w[order]
    tps = np.cumsum(yf * weight, dtype=np.float64)[idx]
    if w is None:
        fps = 1 + idx.astype(np.float64) - tps
    else:
        fps = np.cumsum((1 - yf) * weight, dtype=np.float64)[idx]
    if fps.shape[0] > 2:
        keep = np.concatenate([[True], np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), [True]])
        fps = fps[np.where(keep)[0]]
    fps = np.concatenate([[0.0], fps])
    if fps[-1] <= 0:
        return np.full(fps.shape, np.nan)
    fpr: NDArray[np.float64] = fps / fps[-1]
    return fpr


def _raise_roc_auc_error(
    y_pos: NDArray[np.bool_],
    scores: NDArray[Any],
    sample_weight: NDArray[Any] | None,
    max_fpr: float | None,
) -> None:
    """Replay scikit-learn's ``_binary_roc_auc_score`` on one unit the kernel flagged
    (negative weights made its fpr turn back, or left too few points below
    ``max_fpr``) so that the error is scikit-learn's, with the fpr array its ``auc``
    prints. Only runs on that error path; the warnings were already emitted."""
    fpr = _sklearn_fpr(y_pos, scores, sample_weight)
    if max_fpr is None or max_fpr == 1:
        _auc_x_check(fpr)
        return
    stop = np.searchsorted(fpr, max_fpr, "right")
    fpr[stop]  # scikit-learn's interpolation reads it: IndexError past the end
    _auc_x_check(np.append(fpr[:stop], max_fpr))


def _roc_unit_error(
    average: Any,
    y_true: NDArray[Any],
    scores: NDArray[Any],
    w: NDArray[np.float64] | None,
    m: NDArray[np.bool_] | None,
    max_fpr: float | None,
) -> Callable[[int], None]:
    """``unit_error`` for :func:`_emit`: unit ``i`` is label ``i`` (row ``i`` for
    ``"samples"``, the raveled matrix for ``"micro"``), its known entries only;
    positives are ``y_true == 1`` (ROC AUC only gets here for {0, 1} / {-1, 1})."""

    def unit_error(i: int) -> None:
        if average == "micro":
            yc, sc = y_true.ravel(), scores.ravel()
            wc = None if w is None else np.repeat(w, y_true.shape[1])
            known = None if m is None else m.ravel()
        elif average == "samples":
            yc, sc, wc = y_true[i], scores[i], None
            known = None if m is None else m[i]
        else:
            yc, sc, wc = y_true[:, i], scores[:, i], w
            known = None if m is None else m[:, i]
        if known is not None:
            yc, sc = yc[known], sc[known]
            wc = None if wc is None else wc[known]
        _raise_roc_auc_error(yc == 1, sc, wc, max_fpr)

    return unit_error


def _first_mixed_unit(
    y: NDArray[Any], mask: NDArray[np.bool_] | None, a: Any, b: Any, axis: int | None
) -> int:
    """The first unit (label, row, or the whole matrix) whose known entries hold both
    ``a`` and ``b``; -1 if none does."""
    known = np.ones(y.shape, dtype=bool) if mask is None else mask
    has_a = ((y == a) & known).any(axis=axis)
    has_b = ((y == b) & known).any(axis=axis)
    both = np.atleast_1d(has_a & has_b)
    return int(np.argmax(both)) if bool(both.any()) else -1


def _check_roc_auc_labels(
    y_true: NDArray[Any],
    m: NDArray[np.bool_] | None,
    values: list[Any],
    average: Any,
    sample_weight: NDArray[Any] | None,
) -> None:
    """ROC AUC with a multilabel y_true of two values other than {0, 1} / {-1, 1}:
    scikit-learn scores unit after unit and raises on the first one holding both
    values. The units before it hold one value each, so each warned that only one
    class is present (toxeval warns once, as for every warning)."""
    axis = {None: 0, "macro": 0, "weighted": 0, "micro": None, "samples": 1}[average]
    first = _first_mixed_unit(y_true, m, values[0], values[1], axis)
    if first < 0:
        return
    if first > 0:
        warn_undefined(_MSG_SINGLE_CLASS, stacklevel=4)
    # "weighted" with weights: scikit-learn has cast y_true to the weights' dtype.
    dtype = y_true.dtype
    if average == "weighted" and sample_weight is not None and sample_weight.dtype.kind in "iuf":
        dtype = sample_weight.dtype
    classes_repr = ", ".join(repr(c) for c in np.asarray(values, dtype=dtype).tolist())
    raise ValueError(
        f"y_true takes value in {{{classes_repr}}} and pos_label is not "
        "specified: either make y_true take value in {0, 1} or "
        "{-1, 1} or pass pos_label explicitly."
    )


def _average_binary_score(
    metric: str,
    func: str,
    y_true: NDArray[Any],
    y_score: Any,
    average: Average,
    sample_weight: NDArray[Any] | None,
    mask: Any,
    n_jobs: int | None,
    max_fpr: float | None = None,
    indicator: tuple[list[int], NDArray[np.uint8] | None] | None = None,
    finite_checked: bool = False,
) -> Any:
    """scikit-learn's ``_average_binary_score`` for a multilabel-indicator y_true.

    ``indicator``: the result of :func:`_fast_indicator` for ``y_true`` when already
    computed; ``finite_checked``: the scores already passed ``assert_all_finite``."""
    check_consistent_length(y_true, y_score, sample_weight)
    y_true = _check_2d(y_true)
    scores = _as_scores(y_score)
    _check_2d(scores)
    if not finite_checked:
        assert_all_finite(scores, n_jobs=n_jobs)
    if scores.shape[1] != y_true.shape[1]:
        raise ValueError(
            f"y_true and y_score have different numbers of columns: "
            f"{y_true.shape[1]} vs {scores.shape[1]}"
        )
    m = _check_mask(mask, y_true.shape)
    w = _weights_f64(sample_weight, y_true.shape[0])

    # Positives: y_true == 1 (pos_label is fixed to 1 for multilabel input). ROC AUC
    # only accepts {0, 1} / {-1, 1} per label: any other pair of values is an error
    # as soon as one label (or row, or the raveled matrix) holds both.
    values: list[Any]
    if y_true.dtype == np.bool_:
        y_pos = y_true
        values = []
        standard = True
    elif indicator is not None:
        values, pos = indicator
        y_pos = y_true if pos is None else pos  # None: samples reads y_true in place
        standard = set(values) <= {0, 1} or set(values) <= {-1, 1}
    else:
        # y_true is a multilabel indicator here (at most two distinct values):
        # min/max instead of np.unique, which would copy and hash the whole matrix.
        if y_true.size == 0:
            values = []
        elif y_true.dtype.kind in "iu":
            lo, hi = y_true.min(), y_true.max()
            values = [lo.item()] if lo == hi else [lo.item(), hi.item()]
        else:
            distinct = _distinct_upto3(y_true)
            if distinct.shape[0] > 2:  # pragma: no cover - excluded by type_of_target
                distinct = np.unique(y_true)
            values = sorted(distinct.tolist())
        standard = set(values) <= {0, 1} or set(values) <= {-1, 1}
        y_pos = y_true == 1
    # Non-standard values: checked when scikit-learn would score the units ("weighted"
    # may return 0 before that).
    check_labels = metric == "roc_auc" and not standard and len(values) == 2
    unit_error = (
        _roc_unit_error(average, y_true, scores, w, m, max_fpr) if metric == "roc_auc" else None
    )

    if average == "micro":
        if check_labels:
            _check_roc_auc_labels(y_true, m, values, average, sample_weight)
        value, flag = _core.binary_metric_micro(
            scores, y_pos, w, m, metric=metric, max_fpr=max_fpr, n_jobs=n_jobs
        )
        _emit(flag, metric, unit_error)
        return float(value)

    if average == "samples":
        if check_labels:
            _check_roc_auc_labels(y_true, m, values, average, sample_weight)
        row_values, flags = _core.binary_metric_per_row(
            scores, y_pos, m, metric=metric, max_fpr=max_fpr, n_jobs=n_jobs
        )
        _emit(flags, metric, unit_error)
        return _finish(row_values, sample_weight)

    support: NDArray[Any] | None = None
    if average == "weighted":
        # weighted: support from the raw y_true values, as scikit-learn sums them.
        raw_fast = y_true.dtype == np.bool_ or (standard and set(values) <= {0, 1})
        if raw_fast and (sample_weight is None or sample_weight.dtype == np.float64):
            support = _core.binary_support(y_pos, w, m, n_labels=y_true.shape[1])
        else:
            known = 1 if m is None else m
            if sample_weight is not None:
                yt = np.asarray(y_true, dtype=sample_weight.dtype)
                support = np.sum(yt * known * sample_weight.reshape(-1, 1), axis=0)
            else:
                support = np.sum(y_true * known, axis=0)
        if bool(np.isclose(np.sum(support), 0)):
            return 0
    if check_labels:
        _check_roc_auc_labels(y_true, m, values, average, sample_weight)
    values_, flags = _core.binary_metric_per_label(
        scores, y_pos, w, m, metric=metric, max_fpr=max_fpr, n_jobs=n_jobs
    )
    _emit(flags, metric, unit_error)
    if average is None:
        return values_
    if support is None:
        return float(np.mean(values_))
    return _finish(values_, support)


def _finish(score: NDArray[np.float64], weights: NDArray[Any] | None) -> float:
    """``float(_average(score, weights))`` with scores of zero weight forced to 0."""
    if weights is None:
        return float(np.mean(score))
    score = score.copy()
    score[weights == 0] = 0
    w = np.asarray(weights).astype(np.float64)
    scale = np.sum(w)
    if scale == 0.0:
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    return float(np.sum(np.multiply(score, w)) / scale)


def _binary_problem(
    metric: str,
    y_pos: NDArray[np.bool_],
    y_score: Any,
    sample_weight: NDArray[Any] | None,
    mask: Any,
    max_fpr: float | None = None,
) -> float:
    """One binary problem (1-D y_true already turned into positive flags).

    Text scores fail where scikit-learn's curve fails on them for AP; ROC AUC has
    already rejected (or parsed, for objects) them in its ``check_array``."""
    check_consistent_length(y_pos, y_score, sample_weight)
    y_pos = _column_or_1d(y_pos)
    raw = _column_or_1d(y_score)
    if metric == "average_precision" and raw.dtype.kind in "USO" and _has_text(raw):
        _replay_text_scores(raw, sample_weight, y_pos.shape[0])
    scores = _as_scores(raw)
    assert_all_finite(scores)
    m = _check_mask(mask, y_pos.shape)
    w = _weights_f64(sample_weight, y_pos.shape[0])
    if y_pos.shape[0] == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    values, flags = _core.binary_metric_per_label(
        scores.reshape(-1, 1),
        y_pos.reshape(-1, 1),
        w,
        None if m is None else m.reshape(-1, 1),
        metric=metric,
        max_fpr=max_fpr,
        n_jobs=1,
    )
    unit_error = None
    if metric == "roc_auc":
        unit_error = _roc_unit_error(
            None,
            y_pos.reshape(-1, 1),
            scores.reshape(-1, 1),
            w,
            None if m is None else m.reshape(-1, 1),
            max_fpr,
        )
    _emit(flags, metric, unit_error)
    return float(values[0])


# --------------------------------------------------------------------------- public API


def _classify_target(y_true: Any, average: Any, jobs: int | None) -> tuple[Any, str, Any]:
    """``(indicator, y_type, y_arr)`` for AP / ROC AUC: the fast multilabel-indicator
    check (the in-place label-value scan for ``average="samples"``, which reads int64
    labels without a bool copy), else scikit-learn's ``type_of_target``."""
    indicator = (
        _fast_indicator_values(y_true, jobs)
        if average == "samples"
        else _fast_indicator(y_true, jobs)
    )
    if indicator is not None:
        return indicator, "multilabel-indicator", y_true
    return None, type_of_target(y_true, input_name="y_true"), to_array(y_true)


def average_precision_score(
    y_true: Any,
    y_score: Any,
    *,
    average: Average = "macro",
    pos_label: Any = 1,
    sample_weight: Any = None,
    mask: Any = None,
    n_jobs: int | None = None,
) -> Any:
    """Average precision (AP), scikit-learn's ``average_precision_score``.

    ``AP = sum_n (R_n - R_{n-1}) P_n`` over the distinct score thresholds (the
    non-interpolated step integral, not the trapezoid). Tied scores form one
    threshold, so AP does not depend on the order of tied rows (constant scores give
    the prevalence). A label without positives scores 0.0 with scikit-learn's
    ``UserWarning``; a label with only positives scores 1.0.

    ``y_true`` may be binary (1-D, ``pos_label`` applies), a multilabel indicator
    matrix (positives are entries equal to 1) or multiclass (1-D with more than two
    classes, binarized against the sorted classes; ``y_score`` must then be
    ``(n_samples, n_classes)``). ``average``: None (per-label float64 array),
    ``"micro"``, ``"macro"``, ``"weighted"`` (returns the int ``0`` when the total
    support is 0) or ``"samples"``; ignored for binary input.

    ``mask`` (bool, shaped like ``y_true``; True = known): per-label averages use
    only the rows where that label is known; ``"micro"`` uses only known cells;
    ``"samples"`` uses each row's known labels. A label or row with no known entry
    is NaN (with ``UndefinedMetricWarning``). ``mask=None`` or all True is exactly
    scikit-learn.

    Differences from scikit-learn, by decision: a 2-D ``y_score`` whose number of
    columns differs from ``y_true``'s raises ``ValueError`` (scikit-learn silently
    scores only the first ``y_score.shape[1]`` labels when there are fewer columns,
    and raises ``IndexError`` when there are more). ``n_jobs`` sets the thread count
    (results never depend on it).
    """
    func = "average_precision_score"
    _check_array_like("y_true", func, y_true)
    _check_array_like("y_score", func, y_score)
    if average is not None and (not isinstance(average, str) or average not in _AP_AVERAGES):
        raise _param_error("average", func, _str_options(_AP_AVERAGES) + " or None", average)
    _check_label_param("pos_label", func, pos_label, optional=False)
    _check_array_like("sample_weight", func, sample_weight, optional=True)
    jobs = check_n_jobs(n_jobs, func)

    sw = None if sample_weight is None else _column_or_1d(sample_weight)
    indicator, y_type, y_arr = _classify_target(y_true, average, jobs)

    if y_type == "binary":
        present = binary_labels(y_arr)
        if present.shape[0] == 2 and pos_label not in present:
            raise ValueError(
                f"pos_label={pos_label} is not a valid label. It should be one of {present}"
            )
        return _binary_problem("average_precision", y_arr == pos_label, y_score, sw, mask)
    if y_type == "multilabel-indicator" and pos_label != 1:
        raise ValueError(
            "Parameter pos_label is fixed to 1 for multilabel-indicator y_true. "
            "Do not set pos_label or set pos_label to 1."
        )
    if y_type == "multiclass":
        if pos_label != 1:
            raise ValueError(
                "Parameter pos_label is fixed to 1 for multiclass y_true. "
                "Do not set pos_label or set pos_label to 1."
            )
        present = np.unique(y_arr)
        y_arr = (y_arr.reshape(-1, 1) == present.reshape(1, -1)).astype(np.int64)
        score_shape = getattr(y_score, "shape", None)
        if score_shape is None:
            score_shape = to_array(y_score).shape
        if tuple(score_shape) != y_arr.shape:
            raise ValueError(
                "`y_score` needs to be of shape `(n_samples, n_classes)`, since "
                "`y_true` contains multiple classes. Got "
                f"`y_score.shape={tuple(score_shape)}`."
            )
        if mask is not None:
            mk = to_array(mask)
            if mk.ndim == 1:
                mask = np.broadcast_to(mk.reshape(-1, 1), y_arr.shape)
    elif y_type != "multilabel-indicator":
        # scikit-learn takes np.unique(y_true) before it looks at the type: labels
        # that cannot be ordered (e.g. [None, 1]) raise NumPy's TypeError first.
        np.unique(y_true, equal_nan=False)
        raise ValueError(f"{y_type} format is not supported")
    return _average_binary_score(
        "average_precision", func, y_arr, y_score, average, sw, mask, jobs, indicator=indicator
    )


def roc_auc_score(
    y_true: Any,
    y_score: Any,
    *,
    average: Average = "macro",
    sample_weight: Any = None,
    max_fpr: float | None = None,
    multi_class: str = "raise",
    labels: Any = None,
    mask: Any = None,
    n_jobs: int | None = None,
) -> Any:
    """Area under the ROC curve, scikit-learn's ``roc_auc_score``.

    Binary and multilabel-indicator ``y_true`` are computed natively: the trapezoid
    over one operating point per distinct score, i.e. Mann-Whitney U with a tied
    positive/negative pair counting 1/2. ``max_fpr`` in (0, 1) returns McClish's
    standardized partial AUC over ``[0, max_fpr]`` (tpr linearly interpolated at
    ``max_fpr``). A label whose (known) values are all one class scores NaN with
    ``UndefinedMetricWarning``; that check happens before zero-weight rows are
    dropped, as in scikit-learn. Averages as in :func:`average_precision_score`
    (``"weighted"`` hides NaN labels of zero support, ``"samples"`` is NaN if a row
    is single-class).

    Multiclass ``y_true`` (and binary ``y_true`` with a ``y_score`` of more than two
    columns) is delegated to ``sklearn.metrics.roc_auc_score`` (``mask`` is not
    supported there); scikit-learn must then be installed.

    ``mask`` (bool, shaped like ``y_true``; True = known): per-label averages use
    only the rows where that label is known; ``"micro"`` uses only known cells;
    ``"samples"`` uses each row's known labels. A label or row with no known entry is
    NaN with scikit-learn's single-class warning. ``mask=None`` or all True is
    exactly scikit-learn.

    Differences from scikit-learn, by decision: a 2-D ``y_score`` whose number of
    columns differs from ``y_true``'s raises ``ValueError`` (scikit-learn silently
    scores only the first ``y_score.shape[1]`` labels when there are fewer columns).
    """
    func = "roc_auc_score"
    _check_array_like("y_true", func, y_true)
    _check_array_like("y_score", func, y_score)
    if average is not None and (not isinstance(average, str) or average not in _AUC_AVERAGES):
        raise _param_error("average", func, _str_options(_AUC_AVERAGES) + " or None", average)
    _check_array_like("sample_weight", func, sample_weight, optional=True)
    if max_fpr is not None and (
        not isinstance(max_fpr, numbers.Real) or not (0.0 < max_fpr <= 1.0)
    ):
        raise _param_error("max_fpr", func, "a float in the range (0.0, 1.0] or None", max_fpr)
    if not isinstance(multi_class, str) or multi_class not in _MULTI_CLASS:
        raise _param_error("multi_class", func, _str_options(_MULTI_CLASS), multi_class)
    _check_array_like("labels", func, labels, optional=True)
    jobs = check_n_jobs(n_jobs, func)

    indicator, y_type, y_arr = _classify_target(y_true, average, jobs)
    scores_in = to_array(y_score)
    _check_array_nd(y_arr, numeric=False)
    _check_array_nd(scores_in, numeric=True, n_jobs=jobs)
    sw = None if sample_weight is None else _column_or_1d(sample_weight)
    mf = None if max_fpr is None else float(max_fpr)

    if y_type == "multiclass" or (
        y_type == "binary" and scores_in.ndim == 2 and scores_in.shape[1] > 2
    ):
        if max_fpr is not None and max_fpr != 1.0:
            raise ValueError(
                "Partial AUC computation not available in "
                "multiclass setting, 'max_fpr' must be"
                f" set to `None`, received `max_fpr={max_fpr}` "
                "instead"
            )
        if multi_class == "raise":
            raise ValueError("multi_class must be in ('ovo', 'ovr')")
        if mask is not None:
            raise ValueError("mask is not supported for multiclass roc_auc_score")
        try:
            from sklearn.metrics import roc_auc_score as sk_roc_auc_score
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "multiclass roc_auc_score is delegated to scikit-learn; install "
                "scikit-learn (pip install scikit-learn) to use it"
            ) from exc
        return sk_roc_auc_score(
            y_true,
            y_score,
            average=average,
            sample_weight=sample_weight,
            max_fpr=max_fpr,
            multi_class=multi_class,
            labels=labels,
        )
    if y_type == "binary":
        # label_binarize on the sorted classes: the greater label is positive.
        present = binary_labels(y_arr)
        if present.shape[0] == 1 and mask is None:
            # scikit-learn's _binary_roc_auc_score answers a one-class y_true before
            # roc_curve looks at y_score's length or the weights.
            warn_undefined(_MSG_SINGLE_CLASS, stacklevel=2)
            return float("nan")
        y_pos = y_arr == present[1] if present.shape[0] == 2 else np.zeros(y_arr.shape, dtype=bool)
        if y_pos.ndim == 2:
            y_pos = y_pos[:, 0]
        return _binary_problem("roc_auc", y_pos, y_score, sw, mask, mf)
    if y_type != "multilabel-indicator":
        raise ValueError(f"{y_type} format is not supported")
    # _check_array_nd already ran assert_all_finite on the same scores.
    return _average_binary_score(
        "roc_auc",
        func,
        y_arr,
        y_score,
        average,
        sw,
        mask,
        jobs,
        mf,
        indicator=indicator,
        finite_checked=True,
    )


def _confusion_counts(
    func: str, y_true: Any, y_score: Any, pos_label: Any, sample_weight: Any
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any]]:
    """scikit-learn's ``confusion_matrix_at_thresholds``: (fps, tps, thresholds)."""
    _check_array_like("y_true", func, y_true)
    _check_array_like("y_score", func, y_score)
    _check_label_param("pos_label", func, pos_label, optional=True)
    _check_array_like("sample_weight", func, sample_weight, optional=True)
    y_type = type_of_target(y_true, input_name="y_true")
    if not (y_type == "binary" or (y_type == "multiclass" and pos_label is not None)):
        raise ValueError(f"{y_type} format is not supported")
    y_arr = to_array(y_true)
    pos_label = _check_pos_label_consistency(pos_label, y_arr)
    y_pos = np.asarray(y_arr == pos_label)
    check_consistent_length(y_pos, y_score, sample_weight)
    y_pos = _column_or_1d(y_pos)
    raw = _column_or_1d(y_score)
    if raw.dtype.kind in "USO" and _has_text(raw):
        _replay_text_scores(raw, sample_weight, y_pos.shape[0])
    scores = _as_scores(raw)
    assert_all_finite(scores)
    w = None
    if sample_weight is not None:
        w = _weights_f64(_column_or_1d(sample_weight), y_pos.shape[0])
    if y_pos.shape[0] == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    fps, tps, rows = _core.binary_counts(scores, y_pos, w)
    # scikit-learn's thresholds are y_score's own values (object arrays included);
    # rows are the last row of each tie group, the one scikit-learn takes.
    thresholds = raw[rows] if raw.dtype.kind in "biufO" else scores[rows]
    return fps, tps, thresholds


def precision_recall_curve(
    y_true: Any,
    y_score: Any,
    *,
    pos_label: Any = None,
    sample_weight: Any = None,
    drop_intermediate: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any]]:
    """Precision-recall pairs per distinct threshold, scikit-learn's
    ``precision_recall_curve`` (binary ``y_true`` only).

    Tied scores form one threshold. ``precision = tp / (tp + fp)``, ``recall =
    tp / tp[-1]`` (all ones, with a ``UserWarning``, when there is no positive); the
    arrays are reversed and end with ``precision = 1``, ``recall = 0``. Zero-weight
    rows are dropped first.
    """
    func = "precision_recall_curve"
    if not isinstance(drop_intermediate, (bool, np.bool_)):
        raise _param_error(
            "drop_intermediate",
            func,
            "an instance of 'bool' or an instance of 'numpy.bool'",
            drop_intermediate,
        )
    fps, tps, thresholds = _confusion_counts(func, y_true, y_score, pos_label, sample_weight)
    if drop_intermediate and fps.shape[0] > 2:
        keep = np.where(
            np.concatenate([[True], np.logical_or(np.diff(tps[:-1]), np.diff(tps[1:])), [True]])
        )[0]
        fps, tps, thresholds = fps[keep], tps[keep], thresholds[keep]
    ps = tps + fps
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(ps != 0, np.divide(tps, ps), 0.0)
    if tps[-1] == 0:
        warnings.warn(_MSG_NO_POSITIVE, UserWarning, stacklevel=2)
        recall = np.full(tps.shape, 1.0)
    else:
        recall = tps / tps[-1]
    return (
        np.concatenate((np.flip(precision), [1.0])),
        np.concatenate((np.flip(recall), [0.0])),
        np.flip(thresholds),
    )


def roc_curve(
    y_true: Any,
    y_score: Any,
    *,
    pos_label: Any = None,
    sample_weight: Any = None,
    drop_intermediate: bool = True,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Receiver operating characteristic, scikit-learn's ``roc_curve`` (binary only).

    One point per distinct score (ties grouped); with ``drop_intermediate`` points
    collinear with their neighbours are dropped; the curve starts at (0, 0) with
    threshold ``inf``. No negatives (positives) left → fpr (tpr) is NaN with
    ``UndefinedMetricWarning``.
    """
    func = "roc_curve"
    if not isinstance(drop_intermediate, (bool, np.bool_)):
        raise _param_error(
            "drop_intermediate",
            func,
            "an instance of 'bool' or an instance of 'numpy.bool'",
            drop_intermediate,
        )
    fps, tps, thresholds = _confusion_counts(func, y_true, y_score, pos_label, sample_weight)
    if drop_intermediate and fps.shape[0] > 2:
        keep = np.where(
            np.concatenate([[True], np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), [True]])
        )[0]
        fps, tps, thresholds = fps[keep], tps[keep], thresholds[keep]
    tps = np.concatenate([[0.0], tps])
    fps = np.concatenate([[0.0], fps])
    thresholds = np.concatenate([[np.inf], thresholds.astype(np.float64)])
    if fps[-1] <= 0:
        warn_undefined(_MSG_NO_NEG_LEFT, stacklevel=3)
        fpr = np.full(fps.shape, np.nan)
    else:
        fpr = fps / fps[-1]
    if tps[-1] <= 0:
        warn_undefined(_MSG_NO_POS_LEFT, stacklevel=3)
        tpr = np.full(tps.shape, np.nan)
    else:
        tpr = tps / tps[-1]
    return fpr, tpr, thresholds
