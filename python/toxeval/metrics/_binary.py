"""Per-label binary ranking metrics: ``average_precision_score`` and ``roc_auc_score``,
drop-ins for scikit-learn 1.9.1.

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
from typing import Any

import numpy as np

from toxeval.metrics._binary_average import (
    MSG_SINGLE_CLASS,
    Average,
    average_binary_score,
    binary_problem,
)
from toxeval.metrics._binary_inputs import (
    check_array_nd,
    check_label_param,
    classify_target,
    column_or_1d,
)
from toxeval.metrics._target import binary_labels
from toxeval.metrics._validation import (
    check_array_like,
    check_n_jobs,
    param_error,
    to_array,
    warn_undefined,
)

__all__ = ["average_precision_score", "roc_auc_score"]


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
