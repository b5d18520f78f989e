"""``multilabel_report(sample_weight=...)`` weights the thresholded figures too: F1 and
Hamming loss equal scikit-learn's ``f1_score(zero_division=0)`` and ``hamming_loss`` with
the same weights; with a mask they count the known cells only, each with its row's
weight."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import f1_score, hamming_loss
from toxeval import metrics


def _case(seed: int, dtype: type = np.int64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n, k = 250, 6
    y = (rng.random((n, k)) < 0.3).astype(dtype)
    y[:, 5] = 0  # a label without positives: F1 0 by zero_division
    s = np.round(rng.random((n, k)), 2)
    w = rng.random(n) * 4
    w[:10] = 0.0
    return y, s, w


def _report(*args: object, **kw: object) -> metrics.MultilabelReport:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return metrics.multilabel_report(*args, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.uint8, np.float64])
@pytest.mark.parametrize("threshold", [0.5, 0.25, 2.0])
def test_weighted_f1_and_hamming_equal_sklearn(seed: int, dtype: type, threshold: float) -> None:
    y, s, w = _case(seed, dtype)
    r = _report(y, s, sample_weight=w, threshold=threshold)
    pred = (s >= threshold).astype(np.int64)
    yi = y.astype(np.int64)
    np.testing.assert_allclose(
        r["f1"], f1_score(yi, pred, average=None, sample_weight=w, zero_division=0), rtol=1e-12
    )
    for avg, key in (("micro", "f1_micro"), ("macro", "f1_macro")):
        want = f1_score(yi, pred, average=avg, sample_weight=w, zero_division=0)
        assert r[key] == pytest.approx(want, rel=1e-12)  # type: ignore[literal-required]
    assert r["hamming_loss"] == pytest.approx(hamming_loss(yi, pred, sample_weight=w), rel=1e-12)


def test_weights_change_the_thresholded_figures() -> None:
    y, s, w = _case(4)
    plain = _report(y, s)
    weighted = _report(y, s, sample_weight=w)
    assert weighted["f1_micro"] != plain["f1_micro"]
    assert weighted["hamming_loss"] != plain["hamming_loss"]
    # unit weights give the unweighted figures
    ones = _report(y, s, sample_weight=np.ones(y.shape[0]))
    for key in ("f1_micro", "f1_macro", "hamming_loss"):
        assert ones[key] == pytest.approx(plain[key], rel=1e-12)  # type: ignore[literal-required]


def test_masked_weighted_figures_count_known_cells_with_their_row_weight() -> None:
    """With a mask: a cell-by-cell reference (known cells, each weighted by its row)."""
    y, s, w = _case(5)
    rng = np.random.default_rng(9)
    m = rng.random(y.shape) < 0.7
    r = _report(y, s, mask=m, sample_weight=w)
    pred = s >= 0.5
    pos = y == 1
    ww = np.broadcast_to(w[:, None], y.shape)
    tp = (ww * (pos & pred & m)).sum(axis=0)
    fp = (ww * (~pos & pred & m)).sum(axis=0)
    fn = (ww * (pos & ~pred & m)).sum(axis=0)
    den = 2 * tp + fp + fn
    f1 = np.divide(2 * tp, den, out=np.zeros_like(tp), where=den > 0)
    np.testing.assert_allclose(r["f1"], f1, rtol=1e-12)
    assert r["f1_macro"] == pytest.approx(f1.mean(), rel=1e-12)
    assert r["f1_micro"] == pytest.approx(2 * tp.sum() / den.sum(), rel=1e-12)
    hamming = (ww * ((pos != pred) & m)).sum() / (ww * m).sum()
    assert r["hamming_loss"] == pytest.approx(hamming, rel=1e-12)
    # an all-True mask is no mask
    full = _report(y, s, mask=np.ones_like(m), sample_weight=w)
    nomask = _report(y, s, sample_weight=w)
    for key in ("f1_micro", "f1_macro", "hamming_loss"):
        assert full[key] == pytest.approx(nomask[key], rel=1e-12)  # type: ignore[literal-required]
