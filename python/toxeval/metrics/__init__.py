"""Ranking metrics with scikit-learn's exact semantics, computed natively.

Each function here has the name, signature, defaults, return type, warnings and
errors of its ``sklearn.metrics`` (or ``scipy.stats``) namesake, plus two keywords:

* ``mask``: a boolean array shaped like ``y_true``, ``True`` where the label is
  known. Unknown labels are left out (never treated as negatives).
* ``n_jobs``: threads to use; ``n_jobs=None`` means all cores (scikit-learn/joblib
  read ``None`` as one job: these are speed-first drop-ins whose results never depend
  on the thread count), ``1`` = sequential, negative counts back from the cores. It
  must be an int or None (``InvalidParameterError`` otherwise). Forked children build
  their own thread pools.
"""

from __future__ import annotations

from toxeval.metrics._axis_nan_policy import SignificanceResult, SmallSampleWarning
from toxeval.metrics._binary import (
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
)
from toxeval.metrics._binary_average import weighted_mean as weighted_mean
from toxeval.metrics._kendall import kendalltau
from toxeval.metrics._label_ranking import (
    coverage_error,
    dcg_score,
    label_ranking_average_precision_score,
    label_ranking_loss,
    ndcg_score,
    one_error,
)
from toxeval.metrics._report import MultilabelReport, multilabel_report

# multilabel_report as a mergeable state, for toxeval.streaming; not drop-ins.
from toxeval.metrics._report_state import BinaryFigures as BinaryFigures
from toxeval.metrics._report_state import ReportChunk as ReportChunk
from toxeval.metrics._report_state import ReportTotals as ReportTotals
from toxeval.metrics._report_state import check_report_chunk as check_report_chunk
from toxeval.metrics._report_state import finish_report as finish_report
from toxeval.metrics._report_state import warn_binary_flags as warn_binary_flags
from toxeval.metrics._validation import InvalidParameterError, UndefinedMetricWarning

# The one mask check, for toxeval's other layers (plots); not part of the drop-in API.
from toxeval.metrics._validation import check_mask as check_mask
from toxeval.metrics._validation import check_n_jobs as check_n_jobs
from toxeval.metrics._validation import to_array as to_array
from toxeval.metrics._validation import warning_category as warning_category

__all__ = [
    "InvalidParameterError",
    "MultilabelReport",
    "SignificanceResult",
    "SmallSampleWarning",
    "UndefinedMetricWarning",
    "average_precision_score",
    "coverage_error",
    "dcg_score",
    "kendalltau",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "multilabel_report",
    "ndcg_score",
    "one_error",
    "precision_recall_curve",
    "roc_auc_score",
    "roc_curve",
]
