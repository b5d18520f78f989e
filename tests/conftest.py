"""Fixtures shared by several test modules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray


def make_multilabel(
    n: int, k: int, *, seed: int, tie_levels: int = 7, min_pos: int = 3
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """A multilabel problem with tied scores and at least ``min_pos`` positives and
    negatives per label: ``(y_true, score_a, score_b)``, b a noisier copy of a."""
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < 0.35).astype(np.int64)
    y[:min_pos] = 1
    y[min_pos : 2 * min_pos] = 0
    a = np.round(0.6 * y + rng.random((n, k)), 1) * tie_levels
    b = np.round(0.3 * y + rng.random((n, k)), 1) * tie_levels
    return y, a, b


@pytest.fixture
def make_problem() -> Any:
    """The generator of multilabel problems (see ``make_multilabel``)."""
    return make_multilabel


@pytest.fixture
def multilabel_problem() -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """60 rows x 4 labels, ties, every label with positives and negatives."""
    return make_multilabel(60, 4, seed=11)


@pytest.fixture
def stats_kwargs() -> dict[str, Any]:
    """Small, fast resampling options for the statistics tests."""
    return {"n_resamples": 40, "seed": 1234}
