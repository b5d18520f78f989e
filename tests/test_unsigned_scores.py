"""Unsigned integer scores containing 0 rank by value in LRAP, NDCG and DCG (a
documented deviation, docs/deviations.md): scikit-learn ranks ``-y_score``, and the
negative of an unsigned 0 stays 0 while every other value wraps to a large number, so it
ranks the 0 first instead of last."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sklearn.metrics as skm
from toxeval import metrics

ROOT = Path(__file__).resolve().parents[1]

# The relevant label of each row scores 0, the lowest score of the row.
Y = np.array([[1, 0, 0], [0, 1, 0]])
S = np.array([[0, 1, 2], [2, 0, 1]])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize(
    "name",
    ["label_ranking_average_precision_score", "ndcg_score", "dcg_score"],
)
def test_uint_scores_rank_by_value_where_sklearn_wraps(name: str, dtype: type) -> None:
    s = S.astype(dtype)
    ours = getattr(metrics, name)(Y, s)
    # toxeval: the same value as the scores in a signed type (ranked by value)
    assert ours == getattr(skm, name)(Y, S.astype(np.int64))
    assert ours == pytest.approx({"label_ranking_average_precision_score": 1 / 3}.get(name, 0.5))
    # scikit-learn: the relevant 0 is ranked first, a perfect score
    assert getattr(skm, name)(Y, s) == 1.0


def test_the_deviation_is_documented_with_its_example() -> None:
    text = (ROOT / "docs" / "deviations.md").read_text()
    assert "Unsigned integer scores containing 0" in text
    assert "np.uint8" in text and "0.333" in text
