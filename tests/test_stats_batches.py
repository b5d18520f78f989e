"""Resamples without ``sample_weight`` are drawn and evaluated in batches of four
(``rust/bootstrap/mod.rs``, ``LANES``): every resample of a batch, of a partial last
batch and of a paired (two-system) bootstrap is still the metric on its materialised
rows, for any ``n_jobs``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sklearn import metrics as skm
from toxeval.stats import bootstrap_indices
from toxeval.stats.resampled_metric import ResampledMetric, resolve_metric


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize(
    ("metric", "kwargs"),
    [
        ("average_precision_score", {}),
        ("average_precision_score", {"average": None}),
        ("average_precision_score", {"average": "micro"}),
        ("label_ranking_loss", {}),
    ],
)
def test_two_systems_every_resample_is_the_metric_on_its_rows(
    make_problem: Any, metric: str, kwargs: dict[str, Any], n_jobs: int
) -> None:
    # Three full batches and a partial one; 5,500 rows x 13 resamples is past the
    # native parallel threshold, so with n_jobs=2 two threads share the batches.
    n_rows, n_resamples = 5500, 13
    y, a, b = make_problem(n_rows, 3, seed=12, min_pos=40)
    name, func = resolve_metric(metric)
    rm = ResampledMetric(name, func, y, None, None, dict(kwargs), n_jobs)
    assert rm.path != "materialised"
    dist = rm.distribution([a, b], seed=21, n_resamples=n_resamples, strata=(None, 1))
    assert dist.shape[:2] == (n_resamples, 2)
    reference = getattr(skm, metric)
    idx = bootstrap_indices(n_rows, n_resamples, seed=21)
    for r in range(n_resamples):
        for system, s in enumerate((a, b)):
            want = np.atleast_1d(reference(y[idx[r]], s[idx[r]], **kwargs))
            np.testing.assert_allclose(dist[r, system], want, rtol=1e-12, atol=0)
