"""Argument checks of toxeval.stats that depend on what the metric returns: with
``per_label=True`` a metric must give one value per label for ``average=None``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from toxeval import metrics as tm
from toxeval.stats import compare


def _problem() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    y = (rng.random((60, 4)) < 0.4).astype(np.int64)
    y[:4] = np.eye(4, dtype=np.int64)  # every label has a positive and a negative
    y[4:8] = 1 - np.eye(4, dtype=np.int64)
    return y, rng.random(y.shape), rng.random(y.shape)


def test_per_label_refuses_a_metric_that_takes_average_but_returns_one_value() -> None:
    # a callable with **kwargs accepts average=None, but its single value was compared
    # as if it were one label: one-element arrays, Holm over one "label"
    def macro_only(y_true: Any, y_score: Any, **kwargs: Any) -> float:
        return float(tm.average_precision_score(y_true, y_score))

    y, a, b = _problem()
    with pytest.raises(ValueError, match="it returned a single value") as err:
        compare(macro_only, y, a, b, per_label=True, n_resamples=10, n_permutations=10)
    assert "one value per label" in str(err.value) and "average=None" in str(err.value)


def test_per_label_refuses_a_table_of_values() -> None:
    def table(y_true: Any, y_score: Any, **kwargs: Any) -> np.ndarray:
        return np.asarray(tm.average_precision_score(y_true, y_score, average=None)).reshape(2, 2)

    y, a, b = _problem()
    with pytest.raises(ValueError, match=r"it returned an array of shape \(2, 2\)"):
        compare(table, y, a, b, per_label=True, n_resamples=10, n_permutations=10)


def test_per_label_accepts_a_callable_that_honours_average_none() -> None:
    def ap(y_true: Any, y_score: Any, **kwargs: Any) -> Any:
        return tm.average_precision_score(y_true, y_score, **kwargs)

    y, a, b = _problem()
    got = compare(ap, y, a, b, per_label=True, n_resamples=20, n_permutations=20, seed=2)
    want = compare(
        tm.average_precision_score, y, a, b, per_label=True, n_resamples=20,
        n_permutations=20, seed=2,
    )  # fmt: skip
    assert np.shape(got.difference) == (4,)
    np.testing.assert_allclose(got.difference, want.difference, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got.pvalue_permutation, want.pvalue_permutation, rtol=0, atol=0)
