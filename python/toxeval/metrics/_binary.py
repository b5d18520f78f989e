"""Per-label binary ranking metrics: ``average_precision_score``, ``roc_auc_score``,
``precision_recall_curve`` and ``roc_curve``, drop-ins for scikit-learn 1.9.1.

Validation, averaging and warnings happen here with scikit-learn's exact rules and
messages; the native core (``toxeval._core.binary_*``) sorts each label once (radix
sort on order keys, parallel over labels or row blocks) and returns per-label (or
per-row) values plus flags that say which scikit-learn warning applies. The curves
(binary ``y_true`` only, no ``mask``) take the native core's counts at each distinct
score (``toxeval._core.binary_counts``, one sort).

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
from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval.metrics._binary_average import (
    MSG_NO_NEG_LEFT,
    MSG_NO_POS_LEFT,
    MSG_NO_POSITIVE,
    MSG_SINGLE_CLASS,
    Average,
    average_binary_score,
    binary_problem,
)
from toxeval.metrics._binary_inputs import (
    as_scores,
    check_array_nd,
    check_label_param,
    check_pos_label_consistency,
    classify_target,
    column_or_1d,
    has_text,
    replay_text_scores,
)
from toxeval.metrics._target import binary_labels, type_of_target
from toxeval.metrics._validation import (
    assert_all_finite,
    check_array_like,
    check_consistent_length,
    check_n_jobs,
    check_sample_weight,
    param_error,
    to_array,
    warn_undefined,
)

__all__ = ["average_precision_score", "precision_recall_curve", "roc_auc_score", "roc_curve"]


# scikit-learn prints these sets in set-iteration order, which depends on its own
# .pyc; the elements (not their order) match.
_AP_AVERAGES = {"micro", "samples", "weighted", "macro"}


_AUC_AVERAGES = {"micro", "macro", "samples", "weighted"}


_MULTI_CLASS = {"raise", "ovr", "ovo"}


def _str_options(options: set[str]) -> str:
    return "a str among {" + ", ".join(repr(o) for o in options) + "}"


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
    check_array_like("y_true", func, y_true)
    check_array_like("y_score", func, y_score)
    if average is not None and (not isinstance(average, str) or average not in _AP_AVERAGES):
        raise param_error("average", func, _str_options(_AP_AVERAGES) + " or None", average)
    check_label_param("pos_label", func, pos_label, optional=False)
    check_array_like("sample_weight", func, sample_weight, optional=True)
    jobs = check_n_jobs(n_jobs, func)

    sw = None if sample_weight is None else column_or_1d(sample_weight)
    indicator, y_type, y_arr = classify_target(y_true, average, jobs)

    if y_type == "binary":
        present = binary_labels(y_arr)
        if present.shape[0] == 2 and pos_label not in present:
            raise ValueError(
                f"pos_label={pos_label} is not a valid label. It should be one of {present}"
            )
        return binary_problem("average_precision", y_arr == pos_label, y_score, sw, mask)
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
    return average_binary_score(
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
    check_array_like("y_true", func, y_true)
    check_array_like("y_score", func, y_score)
    if average is not None and (not isinstance(average, str) or average not in _AUC_AVERAGES):
        raise param_error("average", func, _str_options(_AUC_AVERAGES) + " or None", average)
    check_array_like("sample_weight", func, sample_weight, optional=True)
    if max_fpr is not None and (
        not isinstance(max_fpr, numbers.Real) or not (0.0 < max_fpr <= 1.0)
    ):
        raise param_error("max_fpr", func, "a float in the range (0.0, 1.0] or None", max_fpr)
    if not isinstance(multi_class, str) or multi_class not in _MULTI_CLASS:
        raise param_error("multi_class", func, _str_options(_MULTI_CLASS), multi_class)
    check_array_like("labels", func, labels, optional=True)
    jobs = check_n_jobs(n_jobs, func)

    indicator, y_type, y_arr = classify_target(y_true, average, jobs)
    scores_in = to_array(y_score)
    check_array_nd(y_arr, numeric=False)
    check_array_nd(scores_in, numeric=True, n_jobs=jobs)
    sw = None if sample_weight is None else column_or_1d(sample_weight)
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
            warn_undefined(MSG_SINGLE_CLASS, stacklevel=2)
            return float("nan")
        y_pos = y_arr == present[1] if present.shape[0] == 2 else np.zeros(y_arr.shape, dtype=bool)
        if y_pos.ndim == 2:
            y_pos = y_pos[:, 0]
        return binary_problem("roc_auc", y_pos, y_score, sw, mask, mf)
    if y_type != "multilabel-indicator":
        raise ValueError(f"{y_type} format is not supported")
    # check_array_nd already ran assert_all_finite on the same scores.
    return average_binary_score(
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


# --------------------------------------------------------------------------- curves


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
