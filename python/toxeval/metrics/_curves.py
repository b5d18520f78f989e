"""Binary curves: ``precision_recall_curve`` and ``roc_curve``, drop-ins for
scikit-learn 1.9.1 (binary ``y_true`` only; no ``mask``).

Both take scikit-learn's ``confusion_matrix_at_thresholds`` counts, which the native
core (``toxeval._core.binary_counts``) computes with one sort: one point per distinct
score, the last row of each tie group, zero-weight rows dropped.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics._binary_average import MSG_NO_NEG_LEFT, MSG_NO_POS_LEFT, MSG_NO_POSITIVE
from toxeval.metrics._binary_inputs import (
    as_scores,
    check_label_param,
    check_pos_label_consistency,
    column_or_1d,
    has_text,
    replay_text_scores,
)
from toxeval.metrics._target import type_of_target
from toxeval.metrics._validation import (
    assert_all_finite,
    check_array_like,
    check_consistent_length,
    check_sample_weight,
    param_error,
    to_array,
    warn_undefined,
)

__all__ = ["precision_recall_curve", "roc_curve"]


def _confusion_counts(
    func: str,
    y_true: Any,
    y_score: Any,
    pos_label: Any,
    sample_weight: Any,
    drop_intermediate: Any,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any]]:
    """scikit-learn's ``confusion_matrix_at_thresholds``: (fps, tps, thresholds), after
    the curves' parameter checks."""
    if not isinstance(drop_intermediate, (bool, np.bool_)):
        raise param_error(
            "drop_intermediate",
            func,
            "an instance of 'bool' or an instance of 'numpy.bool'",
            drop_intermediate,
        )
    check_array_like("y_true", func, y_true)
    check_array_like("y_score", func, y_score)
    check_label_param("pos_label", func, pos_label, optional=True)
    check_array_like("sample_weight", func, sample_weight, optional=True)
    y_type = type_of_target(y_true, input_name="y_true")
    if not (y_type == "binary" or (y_type == "multiclass" and pos_label is not None)):
        raise ValueError(f"{y_type} format is not supported")
    y_arr = to_array(y_true)
    pos_label = check_pos_label_consistency(pos_label, y_arr)
    y_pos = np.asarray(y_arr == pos_label)
    check_consistent_length(y_pos, y_score, sample_weight)
    y_pos = column_or_1d(y_pos)
    raw = column_or_1d(y_score)
    if raw.dtype.kind in "USO" and has_text(raw):
        replay_text_scores(raw, sample_weight, y_pos.shape[0])
    scores = as_scores(raw)
    assert_all_finite(scores)
    w = None
    if sample_weight is not None:
        w = check_sample_weight(column_or_1d(sample_weight), y_pos.shape[0])
    if y_pos.shape[0] == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    fps, tps, rows = _core.binary_counts(scores, y_pos, w)
    # scikit-learn's thresholds are y_score's own values (object arrays included);
    # rows are the last row of each tie group, the one scikit-learn takes.
    thresholds = raw[rows] if raw.dtype.kind in "biufO" else scores[rows]
    return fps, tps, thresholds


def _keep_ends_and(middle: NDArray[np.bool_], *arrays: NDArray[Any]) -> tuple[NDArray[Any], ...]:
    """``drop_intermediate``: the first and last point and the inner points ``middle``
    keeps (scikit-learn's ``np.where(np.r_[True, middle, True])[0]``)."""
    keep = np.where(np.concatenate([[True], middle, [True]]))[0]
    return tuple(a[keep] for a in arrays)


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
    fps, tps, thresholds = _confusion_counts(
        func, y_true, y_score, pos_label, sample_weight, drop_intermediate
    )
    if drop_intermediate and fps.shape[0] > 2:
        middle = np.logical_or(np.diff(tps[:-1]), np.diff(tps[1:]))
        fps, tps, thresholds = _keep_ends_and(middle, fps, tps, thresholds)
    ps = tps + fps
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(ps != 0, np.divide(tps, ps), 0.0)
    if tps[-1] == 0:
        warnings.warn(MSG_NO_POSITIVE, UserWarning, stacklevel=2)
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
    fps, tps, thresholds = _confusion_counts(
        func, y_true, y_score, pos_label, sample_weight, drop_intermediate
    )
    if drop_intermediate and fps.shape[0] > 2:
        middle = np.logical_or(np.diff(fps, 2), np.diff(tps, 2))
        fps, tps, thresholds = _keep_ends_and(middle, fps, tps, thresholds)
    tps = np.concatenate([[0.0], tps])
    fps = np.concatenate([[0.0], fps])
    thresholds = np.concatenate([[np.inf], thresholds.astype(np.float64)])
    if fps[-1] <= 0:
        warn_undefined(MSG_NO_NEG_LEFT, stacklevel=3)
        fpr = np.full(fps.shape, np.nan)
    else:
        fpr = fps / fps[-1]
    if tps[-1] <= 0:
        warn_undefined(MSG_NO_POS_LEFT, stacklevel=3)
        tpr = np.full(tps.shape, np.nan)
    else:
        tpr = tps / tps[-1]
    return fpr, tpr, thresholds
