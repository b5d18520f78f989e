"""Every parallel metric kernel on one input large enough to use the thread pool.

A plain module (not a test module) so that a ``spawn``/``forkserver`` child can import
the function by name; the fork-safety and thread-safety tests compare its results
between processes and threads.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from helpers import PER_ROW

#: Rows x labels: 300,000 scores, well above the size from which calls use the pool.
N_ROWS, N_LABELS = 20_000, 15
#: Observations for kendalltau (its pair counting splits from this size).
N_KENDALL = 300_000


def inputs(seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    y = (rng.random((N_ROWS, N_LABELS)) < 0.2).astype(np.int64)
    s = np.round(rng.random((N_ROWS, N_LABELS)), 3)  # ties, as real scores have
    mask = rng.random((N_ROWS, N_LABELS)) < 0.9
    x = rng.integers(0, 1000, N_KENDALL)
    z = x + rng.integers(0, 300, N_KENDALL)
    return {"y": y, "s": s, "mask": mask, "x": x, "z": z}


def all_kernel_results(seed: int = 0, n_jobs: int | None = None) -> dict[str, Any]:
    """Every parallel kernel's result on ``inputs(seed)``, keyed by call."""
    from toxeval import metrics

    d = inputs(seed)
    y, s, mask = d["y"], d["s"], d["mask"]
    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for average in ("macro", "micro", "weighted", "samples", None):
            out[f"ap_{average}"] = metrics.average_precision_score(
                y, s, average=average, n_jobs=n_jobs
            )
            out[f"ap_{average}_mask"] = metrics.average_precision_score(
                y, s, average=average, mask=mask, n_jobs=n_jobs
            )
            out[f"auc_{average}"] = metrics.roc_auc_score(y, s, average=average, n_jobs=n_jobs)
            out[f"auc_{average}_mask"] = metrics.roc_auc_score(
                y, s, average=average, mask=mask, n_jobs=n_jobs
            )
        for name in PER_ROW:
            fn = getattr(metrics, name)
            out[name] = fn(y, s, n_jobs=n_jobs)
            out[f"{name}_mask"] = fn(y, s, mask=mask, n_jobs=n_jobs)
        report = metrics.multilabel_report(y, s, mask=mask, n_jobs=n_jobs)
        for key, value in report.items():
            out[f"report_{key}"] = value
        tau = metrics.kendalltau(d["x"], d["z"], n_jobs=n_jobs)
        out["kendalltau"] = (tau.statistic, tau.pvalue)
    return out


def same_results(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The keys whose values differ (NaN equals NaN; arrays element by element)."""
    if a.keys() != b.keys():
        return sorted(set(a) ^ set(b))
    return [k for k in a if not np.array_equal(np.asarray(a[k]), np.asarray(b[k]), equal_nan=True)]
