"""``scipy.stats`` drop-ins computed natively: ``from toxeval.stats import kendalltau``.

Same signatures, results, warnings and errors as SciPy 1.17.1 (see
``toxeval.metrics._kendall``), plus an ``n_jobs`` keyword.
"""

from __future__ import annotations

from toxeval.metrics._kendall import SignificanceResult, SmallSampleWarning, kendalltau

__all__ = ["SignificanceResult", "SmallSampleWarning", "kendalltau"]
