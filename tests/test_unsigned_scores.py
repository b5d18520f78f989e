"""Unsigned integer scores rank by value. uint64 scores beyond the int64 range rank as
scikit-learn ranks them (not wrapped to negative int64, not tied as float64). Unsigned
scores containing 0 rank by value in LRAP, NDCG and DCG too (a documented deviation,
docs/deviations.md): scikit-learn ranks ``-y_score``, and the negative of an unsigned 0
stays 0 while every other value wraps to a large number, so it ranks the 0 first instead
of last."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import RANKING
from sklearn import metrics as sk
from toxeval import metrics as te

ROOT = Path(__file__).resolve().parents[1]

# The relevant label of each row scores 0, the lowest score of the row.
Y = np.array([[1, 0, 0], [0, 1, 0]])
S = np.array([[0, 1, 2], [2, 0, 1]])


TOP = np.uint64(1 << 63)


def _uint64_scores(rng: np.random.Generator, shape: tuple[int, ...]) -> Any:
    """uint64 scores straddling 2**63 with near neighbours and ties: float64 cannot
    tell most of them apart, int64 wraps the upper half to negative values."""
    # No 0: scikit-learn's LRAP ranks -y_score, and -0 wraps (docs/deviations.md).
    values = np.array([1, 5, 1 << 62, (1 << 63) - 1, 1 << 63, (1 << 64) - 8], dtype=np.uint64)
    base = rng.choice(values, size=shape)
    return base + rng.integers(0, 4, size=shape).astype(np.uint64)


@pytest.mark.parametrize("seed", range(8))
def test_uint64_scores_beyond_int64_rank_as_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = (rng.random((40, 4)) < 0.4).astype(np.int64)
    y[0] = [1, 0, 1, 0]
    y[1] = [0, 1, 0, 1]
    s = _uint64_scores(rng, y.shape)
    assert int(s.max()) > np.iinfo(np.int64).max
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in RANKING:
            assert getattr(te, name)(y, s) == pytest.approx(getattr(sk, name)(y, s), rel=1e-12), (
                name
            )
        for average in [None, "macro", "micro", "samples"]:
            for name in ["average_precision_score", "roc_auc_score"]:
                got = getattr(te, name)(y, s, average=average)
                want = getattr(sk, name)(y, s, average=average)
                np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"{name} {average}")
        col_y, col_s = y[:, 0], s[:, 0]
        assert te.average_precision_score(col_y, col_s) == pytest.approx(
            sk.average_precision_score(col_y, col_s), rel=1e-12
        )
        assert te.roc_auc_score(col_y, col_s) == pytest.approx(
            sk.roc_auc_score(col_y, col_s), rel=1e-12
        )
        for curve in ["roc_curve", "precision_recall_curve"]:
            ours, theirs = getattr(te, curve)(col_y, col_s), getattr(sk, curve)(col_y, col_s)
            for a, b in zip(ours, theirs, strict=True):
                np.testing.assert_array_equal(a, b, err_msg=curve)


def test_lrap_ranks_wrapping_scores_by_value() -> None:
    # scikit-learn negates the scores: -0 (uint64) and -(-2**63) (int64) wrap, so it
    # ranks these first; toxeval ranks them last, as their float64 values rank.
    y = np.array([[1, 0, 0], [0, 1, 1]])
    want = sk.label_ranking_average_precision_score(y, np.array([[0.0, 5, 7]] * 2))
    for s in [np.array([[0, 5, 7]] * 2, dtype=np.uint64), np.array([[-(2**63), 5, 7]] * 2)]:
        assert te.label_ranking_average_precision_score(y, s) == want == pytest.approx(2 / 3)


def test_uint64_neighbours_above_2_53_are_not_tied() -> None:
    # 2**63 + 1 and 2**63 + 2 are one float64: a float conversion ties them.
    y = [0, 1, 0, 1]
    s = np.array([(1 << 63) + 1, (1 << 63) + 2, 1, 2], dtype=np.uint64)
    assert (
        te.average_precision_score(y, s) == sk.average_precision_score(y, s) == pytest.approx(5 / 6)
    )
    assert te.roc_auc_score(y, s) == sk.roc_auc_score(y, s) == 0.75


@pytest.mark.parametrize("threshold", [0.5, float(1 << 63), float((1 << 63) + 4096), 2.0**64])
def test_report_with_uint64_scores_beyond_int64(threshold: float) -> None:
    rng = np.random.default_rng(3)
    y = (rng.random((60, 3)) < 0.5).astype(np.int64)
    y[0], y[1] = [1, 0, 1], [0, 1, 0]
    s = _uint64_scores(rng, y.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = te.multilabel_report(y, s, threshold=threshold)
        np.testing.assert_allclose(
            r["ap"], sk.average_precision_score(y, s, average=None), rtol=1e-12
        )
        np.testing.assert_allclose(r["roc_auc"], sk.roc_auc_score(y, s, average=None), rtol=1e-12)
        assert r["label_ranking_loss"] == pytest.approx(sk.label_ranking_loss(y, s), rel=1e-12)
        assert r["ndcg"] == pytest.approx(sk.ndcg_score(y, s), rel=1e-12)
        pred = (s >= threshold).astype(np.int64)  # NumPy's own comparison of the scores
        assert r["f1_micro"] == pytest.approx(
            sk.f1_score(y, pred, average="micro", zero_division=0)
        )
        np.testing.assert_allclose(r["f1"], sk.f1_score(y, pred, average=None, zero_division=0))
        assert r["hamming_loss"] == pytest.approx(sk.hamming_loss(y, pred))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize(
    "name",
    ["label_ranking_average_precision_score", "ndcg_score", "dcg_score"],
)
def test_uint_scores_rank_by_value_where_sklearn_wraps(name: str, dtype: type) -> None:
    s = S.astype(dtype)
    ours = getattr(te, name)(Y, s)
    # toxeval: the same value as the scores in a signed type (ranked by value)
    assert ours == getattr(sk, name)(Y, S.astype(np.int64))
    assert ours == pytest.approx({"label_ranking_average_precision_score": 1 / 3}.get(name, 0.5))
    # scikit-learn: the relevant 0 is ranked first, a perfect score
    assert getattr(sk, name)(Y, s) == 1.0


def test_the_deviation_is_documented_with_its_example() -> None:
    text = (ROOT / "docs" / "deviations.md").read_text()
    assert "Unsigned integer scores containing 0" in text
    assert "np.uint8" in text and "0.333" in text
