"""Statistics for evaluation results.

* ``scipy.stats`` drop-ins computed natively: ``from toxeval.stats import kendalltau``
  (same signatures, results, warnings and errors as SciPy 1.17.1, see
  ``toxeval.metrics.kendalltau``, plus an ``n_jobs`` keyword).
* ``bootstrap``: confidence intervals for any metric of ``toxeval.metrics``.
* ``compare``: paired bootstrap and approximate randomization test of two systems;
  ``holm`` adjusts p-values across categories.
* ``bootstrap_indices``: the rows each resample draws, for rebuilding resamples.

Definitions and references: ``docs/statistics.md``.
"""

from __future__ import annotations

from toxeval.metrics import SignificanceResult, SmallSampleWarning, kendalltau
from toxeval.stats.bootstrap import (
    BootstrapResult,
    ConditionedIntervalWarning,
    ConfidenceInterval,
    TooFewResamplesError,
    bootstrap,
    bootstrap_indices,
)
from toxeval.stats.compare import CompareResult, compare, holm

__all__ = [
    "BootstrapResult",
    "CompareResult",
    "ConditionedIntervalWarning",
    "ConfidenceInterval",
    "SignificanceResult",
    "SmallSampleWarning",
    "TooFewResamplesError",
    "bootstrap",
    "bootstrap_indices",
    "compare",
    "holm",
    "kendalltau",
]
