"""Ranking metrics with scikit-learn's exact semantics, computed natively.

Each function here has the name, signature, defaults, return type, warnings and
errors of its ``sklearn.metrics`` (or ``scipy.stats``) namesake, plus two keywords:

* ``mask``: a boolean array shaped like ``y_true``, ``True`` where the label is
  known. Unknown labels are left out (never treated as negatives).
* ``n_jobs``: threads to use (``None`` = all cores, ``1`` = sequential). Results
  never depend on it.
"""

from __future__ import annotations

from toxeval.metrics._kendall import SignificanceResult, SmallSampleWarning, kendalltau
from toxeval.metrics._validation import InvalidParameterError, UndefinedMetricWarning

__all__ = [
    "InvalidParameterError",
    "SignificanceResult",
    "SmallSampleWarning",
    "UndefinedMetricWarning",
    "kendalltau",
]
