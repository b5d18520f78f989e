"""``toxeval.score`` rejects a NumPy masked score matrix with masked entries (its hidden
values would be scored); one without masked entries is its data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from toxeval.predictions import PredictionError
from toxeval.scoring import score


def _case() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = (rng.random((30, 3)) < 0.4).astype(np.int8)
    y[0] = 1
    s = rng.random((30, 3))
    return y, s


def test_masked_entries_are_rejected(masked_dataset: Callable[..., Any]) -> None:
    y, s = _case()
    ds = masked_dataset(y)
    hidden = np.ma.masked_array(s, mask=np.zeros_like(s, dtype=bool))
    hidden[4, 1] = np.ma.masked
    with pytest.raises(PredictionError, match="masked arrays are not supported as scores"):
        score(hidden, ds)


def test_a_masked_array_without_masked_entries_is_its_data(
    masked_dataset: Callable[..., Any],
) -> None:
    y, s = _case()
    ds = masked_dataset(y)
    plain = score(s, ds)
    masked = score(np.ma.masked_array(s), ds)
    assert masked.figures == plain.figures
