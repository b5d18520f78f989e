"""AP and ROC AUC over a label matrix: scikit-learn's ``_average_binary_score``
(``None``, ``"micro"``, ``"macro"``, ``"weighted"``, ``"samples"``) on top of the
native per-label, per-row and micro kernels, and the warnings and errors those
kernels flag, emitted in scikit-learn's order with its messages (ROC AUC errors
replay scikit-learn's curve on the one unit that fails, to print the same array).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics._binary_inputs import (
    as_scores,
    check_2d,
    column_or_1d,
    has_text,
    pos_label_error,
    replay_text_scores,
)
from toxeval.metrics._target import distinct_upto3
from toxeval.metrics._validation import (
    WEIGHTS_SUM_TO_ZERO,
    assert_all_finite,
    check_consistent_length,
    check_mask,
    check_sample_weight,
    mask_array,
    warn_undefined,
)

__all__ = [
    "MSG_NO_NEG_LEFT",
    "MSG_NO_POSITIVE",
    "MSG_NO_POS_LEFT",
    "MSG_SINGLE_CLASS",
    "Average",
    "average_binary_score",
    "binary_problem",
    "emit_flags",
    "weighted_mean",
]

Average = Literal["micro", "macro", "weighted", "samples"] | None


# Flags returned by the native core (rust/binary/mod.rs).
_NO_POSITIVE = 1


_SINGLE_CLASS = 2


_NO_NEGATIVE_LEFT = 4


_NO_POSITIVE_LEFT = 8


_EMPTY = 16


_ALL_ZERO_WEIGHT = 32


_NOT_MONOTONIC = 64


_TOO_FEW_POINTS = 128


MSG_NO_POSITIVE = "No positive class found in y_true, recall is set to one for all thresholds."


MSG_SINGLE_CLASS = "Only one class is present in y_true. ROC AUC score is not defined in that case."


MSG_NO_NEG_LEFT = "No negative samples in y_true, false positive value should be meaningless"


MSG_NO_POS_LEFT = "No positive samples in y_true, true positive value should be meaningless"


_MSG_EMPTY = "A label (or row) has no known entries in mask; its score is NaN."


_MSG_ZERO_WEIGHTS = "Sample weights must contain at least one non-zero number."


def emit_flags(
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
            (_NO_POSITIVE, MSG_NO_POSITIVE, UserWarning),
            (_SINGLE_CLASS, MSG_SINGLE_CLASS, None),
            (_NO_NEGATIVE_LEFT, MSG_NO_NEG_LEFT, None),
            (_NO_POSITIVE_LEFT, MSG_NO_POS_LEFT, None),
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
    """``unit_error`` for :func:`emit_flags`: unit ``i`` is label ``i`` (row ``i`` for
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
        warn_undefined(MSG_SINGLE_CLASS, stacklevel=4)
    # "weighted" with weights: scikit-learn has cast y_true to the weights' dtype.
    dtype = y_true.dtype
    if average == "weighted" and sample_weight is not None and sample_weight.dtype.kind in "iuf":
        dtype = sample_weight.dtype
    raise pos_label_error(", ".join(repr(c) for c in np.asarray(values, dtype=dtype).tolist()))


def average_binary_score(
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
    """scikit-learn's ``average_binary_score`` for a multilabel-indicator y_true.

    ``indicator``: the result of :func:`fast_indicator` for ``y_true`` when already
    computed; ``finite_checked``: the scores already passed ``assert_all_finite``."""
    check_consistent_length(y_true, y_score, sample_weight)
    y_true = check_2d(y_true)
    scores = as_scores(y_score)
    check_2d(scores)
    if not finite_checked:
        assert_all_finite(scores, n_jobs=n_jobs)
    if scores.shape[1] != y_true.shape[1]:
        raise ValueError(
            f"y_true and y_score have different numbers of columns: "
            f"{y_true.shape[1]} vs {scores.shape[1]}"
        )
    m = check_mask(mask, y_true.shape, all_true_as_none=True)
    w = check_sample_weight(sample_weight, y_true.shape[0])

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
            distinct = distinct_upto3(y_true)
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
        emit_flags(flag, metric, unit_error)
        return float(value)

    if average == "samples":
        if check_labels:
            _check_roc_auc_labels(y_true, m, values, average, sample_weight)
        row_values, flags = _core.binary_metric_per_row(
            scores, y_pos, m, metric=metric, max_fpr=max_fpr, n_jobs=n_jobs
        )
        emit_flags(flags, metric, unit_error)
        return weighted_mean(row_values, sample_weight)

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
    emit_flags(flags, metric, unit_error)
    if average is None:
        return values_
    if support is None:
        return float(np.mean(values_))
    return weighted_mean(values_, support)


def weighted_mean(score: NDArray[np.float64], weights: NDArray[Any] | None) -> float:
    """scikit-learn's ``float(np.average(score, weights=weights))`` with scores of zero
    weight forced to 0 (a NaN of a label without support does not spread); the mean
    without ``weights``."""
    if weights is None:
        return float(np.mean(score))
    score = score.copy()
    score[weights == 0] = 0
    w = np.asarray(weights).astype(np.float64)
    scale = np.sum(w)
    if scale == 0.0:
        raise ZeroDivisionError(WEIGHTS_SUM_TO_ZERO)
    return float(np.sum(np.multiply(score, w)) / scale)


def binary_problem(
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
    y_pos = column_or_1d(y_pos)
    raw = column_or_1d(y_score)
    if metric == "average_precision" and raw.dtype.kind in "USO" and has_text(raw):
        replay_text_scores(raw, sample_weight, y_pos.shape[0])
    scores = as_scores(raw)
    assert_all_finite(scores)
    if mask is not None:
        # A one-column y_true is read as 1-D (column_or_1d); its one-column mask too.
        mk = mask_array(mask)
        mask = mk.reshape(-1) if mk.shape == (y_pos.shape[0], 1) else mk
    m = check_mask(mask, y_pos.shape, all_true_as_none=True)
    w = check_sample_weight(sample_weight, y_pos.shape[0])
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
    emit_flags(flags, metric, unit_error)
    return float(values[0])
