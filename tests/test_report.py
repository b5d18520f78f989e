"""multilabel_report equals the separate drop-in functions, figure by figure."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import toxeval.metrics as tm
from hypothesis import given, settings
from hypothesis import strategies as st
from toxeval.metrics import multilabel_report


@st.composite
def problems(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 40))
    k = draw(st.integers(2, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = (rng.random((n, k)) < draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))).astype(np.int64)
    if draw(st.booleans()):
        s = rng.choice(
            draw(st.sampled_from([[0.0, 1.0], [0.1, 0.5, 0.9], [-0.0, 0.0, 0.3]])), (n, k)
        )
    else:
        s = rng.random((n, k))
    if draw(st.booleans()):
        s = s.astype(np.float32)
    mask = None
    if draw(st.booleans()):
        mask = rng.random((n, k)) < 0.8
    w = None
    if draw(st.booleans()):
        w = rng.choice([0.0, 0.5, 1.0, 2.0], n)
        if not w.any():
            w[0] = 1.0
    return {"y": y, "s": s, "mask": mask, "w": w}


def _same(a: float, b: float) -> None:
    if np.isnan(b):
        assert np.isnan(a)
    else:
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12)


def _expect(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs)
        except (ValueError, ZeroDivisionError) as e:
            return e


@settings(max_examples=200, deadline=None)
@given(p=problems())
def test_report_equals_separate_functions(p: dict[str, Any]) -> None:
    y, s, mask, w = p["y"], p["s"], p["mask"], p["w"]
    rep = _expect(multilabel_report, y, s, mask=mask, sample_weight=w, threshold=0.5)
    ap = _expect(tm.average_precision_score, y, s, average=None, mask=mask, sample_weight=w)
    if isinstance(ap, Exception):
        assert isinstance(rep, Exception)
        return
    assert not isinstance(rep, Exception), rep
    np.testing.assert_allclose(rep["ap"], ap, rtol=1e-12, equal_nan=True)
    auc = _expect(tm.roc_auc_score, y, s, average=None, mask=mask, sample_weight=w)
    np.testing.assert_allclose(rep["roc_auc"], auc, rtol=1e-12, equal_nan=True)
    for key, fn, avg in [
        ("ap_micro", tm.average_precision_score, "micro"),
        ("roc_auc_micro", tm.roc_auc_score, "micro"),
    ]:
        ref = _expect(fn, y, s, average=avg, mask=mask, sample_weight=w)
        if not isinstance(ref, Exception):
            _same(rep[key], ref)
    for key, fn in [
        ("label_ranking_loss", tm.label_ranking_loss),
        ("lrap", tm.label_ranking_average_precision_score),
        ("coverage_error", tm.coverage_error),
        ("one_error", tm.one_error),
        ("ndcg", tm.ndcg_score),
    ]:
        ref = _expect(fn, y, s, mask=mask, sample_weight=w)
        assert not isinstance(ref, Exception), (key, ref)
        _same(rep[key], ref)
    # thresholded figures over known cells, computed directly
    known = np.ones(y.shape, bool) if mask is None else mask
    pred = s >= 0.5
    tp = ((pred & (y == 1)) & known).sum(0)
    fp = ((pred & (y == 0)) & known).sum(0)
    fn_ = ((~pred & (y == 1)) & known).sum(0)
    den = 2 * tp + fp + fn_
    f1 = np.where(den > 0, 2 * tp / np.maximum(den, 1), 0.0)
    np.testing.assert_allclose(rep["f1"], f1, rtol=1e-12)
    _same(rep["f1_macro"], float(f1.mean()))
    _same(rep["hamming_loss"], float((fp + fn_).sum() / known.sum()) if known.any() else np.nan)
    np.testing.assert_array_equal(rep["support"], ((y == 1) & known).sum(0))
    np.testing.assert_array_equal(rep["n_unknown"], (~known).sum(0))


def test_report_matches_sklearn_on_a_plain_problem() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    y = (rng.random((500, 7)) < 0.2).astype(int)
    s = np.round(rng.random((500, 7)), 2)
    rep = multilabel_report(y, s)
    assert rep["ap_macro"] == pytest.approx(sk.average_precision_score(y, s), rel=1e-12)
    assert rep["roc_auc_micro"] == pytest.approx(sk.roc_auc_score(y, s, average="micro"), rel=1e-12)
    assert rep["label_ranking_loss"] == pytest.approx(sk.label_ranking_loss(y, s), rel=1e-12)
    assert rep["lrap"] == pytest.approx(sk.label_ranking_average_precision_score(y, s), rel=1e-12)
    assert rep["ndcg"] == pytest.approx(sk.ndcg_score(y, s), rel=1e-12)
    assert rep["f1_micro"] == pytest.approx(sk.f1_score(y, s >= 0.5, average="micro"), rel=1e-12)
    assert rep["hamming_loss"] == pytest.approx(sk.hamming_loss(y, s >= 0.5), rel=1e-12)


@pytest.mark.parametrize(
    "y, s, msg",
    [
        (np.array([0, 1]), np.array([0.1, 0.2]), "2-D y_true"),
        (np.array([[0, 2], [1, 0]]), np.ones((2, 2)), "in {0, 1}"),
        (np.array([[0, 1], [1, 0]]), np.ones((2, 3)), "different shape"),
        (np.array([[0, 1], [1, 0]]), np.array([[np.nan, 1], [0, 1]]), "NaN"),
    ],
)
def test_report_bad_input(y: Any, s: Any, msg: str) -> None:
    with pytest.raises(ValueError, match=msg.replace("{", r"\{").replace("}", r"\}")):
        multilabel_report(y, s)
