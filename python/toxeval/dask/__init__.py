"""Exact toxeval metrics on Dask collections (the ``toxeval[dask]`` extra).

Each function takes row-chunked ``dask.array`` arrays or ``dask.dataframe`` frames
(and series for ``sample_weight``), builds one mergeable state per block on the
workers (``toxeval.streaming``: per-label runs of distinct scores, the report's
additive totals, or a per-row metric's weighted sum), merges the states in a tree of
Dask tasks and finishes on the client. Scores never travel between tasks, only
states; results equal the in-memory ``toxeval.metrics`` functions (counts exactly,
floats to ~1e-12 relative) with the same warnings. Computation runs on whatever
scheduler Dask would use (the active ``distributed.Client`` if there is one).

``import toxeval`` never imports this package; importing it without Dask installed
raises an ``ImportError`` naming the extra. See docs/dask.md.
"""

from __future__ import annotations

try:
    import dask
    import dask.array
    import dask.dataframe  # noqa: F401
    import distributed  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised where Dask is absent
    raise ImportError(
        f"toxeval.dask needs Dask and distributed: pip install 'toxeval[dask]' (import failed: {e})"
    ) from None

from toxeval.dask.metrics import (
    accumulate,
    accumulator_graph,
    average_precision_score,
    coverage_error,
    label_ranking_average_precision_score,
    label_ranking_loss,
    label_runs,
    multilabel_report,
    ndcg_score,
    roc_auc_score,
)

__all__ = [
    "accumulate",
    "accumulator_graph",
    "average_precision_score",
    "coverage_error",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "label_runs",
    "multilabel_report",
    "ndcg_score",
    "roc_auc_score",
]
