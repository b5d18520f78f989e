"""A ``y_true`` of one column, ``(n, 1)``: read as binary 1-D, as scikit-learn does,
with a mask of ``y_true``'s own shape accepted by the metrics and by the bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm
from toxeval import metrics as tm
from toxeval.stats import bootstrap, bootstrap_indices


@pytest.mark.parametrize("metric", ["average_precision_score", "roc_auc_score"])
def test_one_column_y_true_takes_its_one_column_mask(metric: str) -> None:
    # Not "mask has shape (6, 1) but y_true has shape (6,)": the mask follows y_true.
    y = np.array([[1], [0], [1], [0], [1], [0]])
    s = np.array([[0.9], [0.1], [0.4], [0.5], [0.3], [0.8]])
    known = np.array([True, True, False, True, True, True])
    got = getattr(tm, metric)(y, s, mask=known.reshape(-1, 1))
    want = getattr(skm, metric)(y[known, 0], s[known, 0])
    assert got == pytest.approx(want, rel=1e-12, abs=0)


def test_bootstrap_of_one_column_with_its_mask_is_the_metric_per_resample() -> None:
    rng = np.random.default_rng(5)
    y = (rng.random((40, 1)) < 0.4).astype(np.int64)
    s = rng.random((40, 1)).astype(np.float32)
    known = rng.random((40, 1)) < 0.8
    res = bootstrap("average_precision_score", y, s, mask=known, n_resamples=15, seed=4)
    idx = bootstrap_indices(40, 15, seed=4)
    want = []
    for i in idx:
        k = known[i, 0]
        if y[i][k, 0].any():
            want.append(skm.average_precision_score(y[i][k, 0], s[i][k, 0]))
    np.testing.assert_allclose(res.bootstrap_distribution, want, rtol=1e-12, atol=0)
