"""multilabel_report equals the separate drop-in functions, figure by figure."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import toxeval.metrics as tm
from helpers import examples
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


def _one_error_relevant_reference(
    y: np.ndarray, s: np.ndarray, mask: np.ndarray | None, w: np.ndarray | None
) -> float:
    """docs/cli.md's one-error, row by row: rows with a relevant known label only; an
    irrelevant known label scored at least as high as every relevant one is an error."""
    errors = rows = 0.0
    for i in range(y.shape[0]):
        known = np.flatnonzero(np.ones(y.shape[1], bool) if mask is None else mask[i])
        rel = known[y[i, known] == 1]
        if rel.size == 0:
            continue
        wi = 1.0 if w is None else float(w[i])
        rows += wi
        irr = known[y[i, known] != 1]
        if irr.size and s[i, irr].max() >= s[i, rel].max():
            errors += wi
    return errors / rows if rows else float("nan")


@settings(max_examples=examples(200), deadline=None)
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
        if mask is not None and not mask.any():
            # no row with a known label: the drop-ins raise, the report gives NaN
            assert isinstance(ref, ValueError), (key, ref)
            assert np.isnan(rep[key]), key
            continue
        assert not isinstance(ref, Exception), (key, ref)
        _same(rep[key], ref)
    _same(rep["one_error_relevant"], _one_error_relevant_reference(y, s, mask, w))
    # thresholded figures over known cells (each weighted by its row), computed directly
    known = np.ones(y.shape, bool) if mask is None else mask
    cell_w = np.broadcast_to((np.ones(y.shape[0]) if w is None else w)[:, None], y.shape)
    pred = s >= 0.5
    tp = (cell_w * ((pred & (y == 1)) & known)).sum(0)
    fp = (cell_w * ((pred & (y == 0)) & known)).sum(0)
    fn_ = (cell_w * ((~pred & (y == 1)) & known)).sum(0)
    den = 2 * tp + fp + fn_
    f1 = np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), 0.0)
    np.testing.assert_allclose(rep["f1"], f1, rtol=1e-12, atol=1e-15)
    _same(rep["f1_macro"], float(f1.mean()))
    known_w = float((cell_w * known).sum())
    _same(rep["hamming_loss"], float((fp + fn_).sum()) / known_w if known_w else np.nan)
    np.testing.assert_array_equal(rep["support"], ((y == 1) & known).sum(0))
    np.testing.assert_array_equal(rep["n_unknown"], (~known).sum(0))


def test_one_error_relevant_leaves_out_rows_without_a_relevant_label() -> None:
    y = np.array([[1, 0, 0], [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    s = np.array(
        [[0.9, 0.1, 0.2], [0.9, 0.1, 0.2], [0.5, 0.5, 0.1], [0.3, 0.2, 0.1], [0.1, 0.1, 0.8]]
    )
    with warnings.catch_warnings():  # labels without positives or negatives warn
        warnings.simplefilter("ignore")
        rep = multilabel_report(y, s)
        nothing_relevant = multilabel_report(np.zeros((2, 3), int), s[:2])
        weighted = multilabel_report(y, s, sample_weight=np.array([1.0, 1.0, 3.0, 0.0, 1.0]))
    # rows 0 and 4 right, row 2 a tie at the top with an irrelevant label, row 3 wrong,
    # row 1 (no relevant label) left out; the classical one-error counts row 1 as an
    # error and row 2 as half of one
    assert rep["one_error_relevant"] == 2 / 4
    assert rep["one_error"] == pytest.approx((1 + 0.5 + 1) / 5)
    assert np.isnan(nothing_relevant["one_error_relevant"])
    # weights count rows; a row weighted zero is out as well
    assert weighted["one_error_relevant"] == 3 / 5


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


# ---------------------------------------------------------------------------
# Label paths: int64/int32 y_true is checked and packed natively (AP/AUC and the
# thresholded counts read packed bits, the per-row pass reads y_true in place),
# float y_true is packed after the NumPy checks, bool is read as is. Every path
# must give exactly the report of the bool matrix.


def _rep_equal(a: Any, b: Any) -> None:
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]), err_msg=key)


@pytest.mark.parametrize("n, k", [(50, 3), (300, 15), (20_000, 9), (40, 70)])
@pytest.mark.parametrize("use_mask", [False, True])
@pytest.mark.parametrize("use_w", [False, True])
def test_label_paths_equal_bool(n: int, k: int, use_mask: bool, use_w: bool) -> None:
    rng = np.random.default_rng(n + k)
    y = (rng.random((n, k)) < 0.3).astype(np.int64)
    y[:, 0] = 1  # make sure every label has positives and negatives
    y[0, 0] = 0
    s = np.round(rng.random((n, k)), 2)
    mask = rng.random((n, k)) < 0.85 if use_mask else None
    w = rng.choice([0.5, 1.0, 2.0], n) if use_w else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = multilabel_report(y.astype(bool), s, mask=mask, sample_weight=w)
        for yy in [
            y,
            y.astype(np.int32),
            y.astype(np.float64),
            y.astype(np.float32),
            y.astype(np.uint8),  # general path: bool copy
            np.asfortranarray(y),
            y.astype(">i8"),  # non-native byte order: general path
            y[:, ::-1][:, ::-1],  # strided view
        ]:
            for n_jobs in [1, 2]:
                got = multilabel_report(yy, s, mask=mask, sample_weight=w, n_jobs=n_jobs)
                _rep_equal(got, want)


@pytest.mark.parametrize(
    "y, msg",
    [
        (np.array([[0, 2], [1, 0]], dtype=np.int64), "in {0, 1}"),
        (np.array([[0, -1], [1, 0]], dtype=np.int32), "in {0, 1}"),
        (np.array([[0, 1], [2, 0], [1, 1]], dtype=np.int64), "in {0, 1}"),  # three values
        (np.array([[2, 2], [2, 2]], dtype=np.int64), "in {0, 1}"),
        (np.array([[-1, -1], [-1, -1]], dtype=np.int32), "in {0, 1}"),
        (np.array([[0, 0.5], [1, 0]]), "in {0, 1}"),
        (np.array([[0, np.nan], [1, 0]]), "NaN"),
        (np.array([[0, np.inf], [1, 0]], dtype=np.float32), "infinity"),
        (np.array([[0, 3], [1, 0]], dtype=np.uint8), "in {0, 1}"),
        (np.array([["a", "b"], ["c", "d"]]), "numeric 0/1 or bool"),
    ],
)
def test_label_checks_per_dtype(y: Any, msg: str) -> None:
    with pytest.raises(ValueError, match=msg.replace("{", r"\{").replace("}", r"\}")):
        multilabel_report(y, np.ones(y.shape))


def test_n_jobs_zero_still_raises() -> None:
    y = np.array([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="n_jobs"):
        multilabel_report(y, np.ones((2, 2)), n_jobs=0)


def _thresholded(y: Any, s: Any, thr: Any, mask: Any = None) -> dict[str, Any]:
    known = np.ones(y.shape, bool) if mask is None else mask
    pred = s >= thr  # NumPy's own promotion rules
    pos = y == 1
    tp = (pred & pos & known).sum(0)
    fp = (pred & ~pos & known).sum(0)
    fn_ = (~pred & pos & known).sum(0)
    den = 2 * tp + fp + fn_
    return {
        "f1": np.where(den > 0, 2 * tp / np.maximum(den, 1), 0.0),
        "hamming_loss": float((fp + fn_).sum() / known.sum()),
        "f1_micro": 2 * tp.sum() / den.sum() if den.sum() else 0.0,
    }


@pytest.mark.parametrize(
    "dtype, values, thresholds",
    [
        (
            np.float64,
            [-0.0, 0.0, 0.1, 0.5, 0.9, 1e300, -1e300],
            [
                0.5,
                0.1,
                0.0,
                -0.0,
                np.float32(0.1),
                1e300,
                -1e300,
                1e308,
                -1e308,
                2,
                np.nextafter(0.1, 1),
            ],
        ),
        (
            np.float32,
            [-0.0, 0.0, 0.1, 0.5, 0.9, np.float32(np.nextafter(np.float32(0.1), np.float32(1)))],
            [0.5, 0.1, np.float64(0.1), np.float32(0.1), 0.0, -0.0, 1e300, -1e300, 1e-50, 3, True],
        ),
        (
            np.int64,
            [-(2**62), -3, 0, 2, 3, 2**53 + 1, 2**62],
            [2.5, 3, 2, -2.5, 0.0, float(2**53), 2**53 + 1, 1e300, -1e300, 2**62, np.int32(3)],
        ),
    ],
)
def test_threshold_follows_numpy_comparison(
    dtype: Any, values: list[Any], thresholds: list[Any]
) -> None:
    rng = np.random.default_rng(3)
    n, k = 60, 4
    s = rng.choice(np.array(values, dtype=dtype), (n, k))
    y = (rng.random((n, k)) < 0.5).astype(np.int64)
    mask = rng.random((n, k)) < 0.9
    for thr in thresholds:
        for m in [None, mask]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rep = multilabel_report(y, s, mask=m, threshold=thr)
                want = _thresholded(y, s, thr, m)
            np.testing.assert_array_equal(rep["f1"], want["f1"], err_msg=repr(thr))
            assert rep["hamming_loss"] == want["hamming_loss"], thr
            assert rep["f1_micro"] == want["f1_micro"], thr


def test_threshold_counts_kernel() -> None:
    """``_core.threshold_counts`` against NumPy, for bool and packed labels, masks,
    C/F order, several row blocks and thread counts."""
    from toxeval import _core

    rng = np.random.default_rng(7)
    for n, k in [(3 * 8192 + 5, 15), (1000, 64), (500, 65), (10, 2)]:
        s = np.round(rng.random((n, k)), 1)
        y = rng.random((n, k)) < 0.4
        packed = np.packbits(y, axis=1, bitorder="little")
        m = rng.random((n, k)) < 0.7
        for cut in [np.array([0.5]), np.array([0.0]), np.empty(0)]:
            pred = s >= cut[0] if cut.size else np.zeros_like(y)
            for mask in [None, m, np.asfortranarray(m)]:
                known = np.ones_like(y) if mask is None else mask
                want = [
                    known.sum(0),
                    (y & known).sum(0),
                    (pred & known).sum(0),
                    (pred & y & known).sum(0),
                ]
                for labels in [y, packed, np.asfortranarray(y)]:
                    for scores in [s, np.asfortranarray(s)]:
                        for n_jobs in [1, 2]:
                            got = _core.threshold_counts(scores, labels, cut, mask, n_jobs)
                            for g, w_ in zip(got, want, strict=True):
                                assert g.dtype == np.int64
                                np.testing.assert_array_equal(g, w_)
    s = np.ones((4, 3))
    y = np.zeros((4, 3), bool)
    with pytest.raises(TypeError, match="dtype"):
        _core.threshold_counts(s, y, np.array([1], dtype=np.int64))
    with pytest.raises(ValueError, match="at most one"):
        _core.threshold_counts(s, y, np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="shape"):
        _core.threshold_counts(s, y, np.array([1.0]), np.ones((4, 2), bool))
    with pytest.raises(ValueError, match="packed"):
        _core.threshold_counts(s, np.zeros((4, 2), np.uint8), np.array([1.0]))


def test_report_sums_read_labels_in_place() -> None:
    from toxeval import _core

    rng = np.random.default_rng(9)
    y = (rng.random((3000, 12)) < 0.3).astype(np.int64)
    s = np.round(rng.random((3000, 12)), 2)
    m = rng.random((3000, 12)) < 0.8
    w = rng.random(3000)
    want = _core.ranking_report_sums(y.astype(bool), s, m, w, 2)
    for yy in [
        y,
        y.astype(np.int32),
        y.astype(np.float64),
        y.astype(np.float32),
        np.asfortranarray(y),
    ]:
        assert _core.ranking_report_sums(yy, s, m, w, 2) == want
    with pytest.raises(TypeError, match="y_true"):
        _core.ranking_report_sums(y.astype(np.uint8), s)


@pytest.mark.parametrize("use_mask", [False, True])
@pytest.mark.parametrize("use_w", [False, True])
def test_macro_averages_equal_sklearn_macro(use_mask: bool, use_w: bool) -> None:
    """``roc_auc_macro`` and ``ap_macro`` are scikit-learn's ``average="macro"`` (a
    plain mean over the labels), each label scored on its known rows with the row
    weights; recomputed here with scikit-learn, not with toxeval."""
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(21 + 2 * use_mask + use_w)
    n, k = 300, 6
    y = (rng.random((n, k)) < rng.uniform(0.1, 0.6, k)).astype(np.int64)
    s = np.round(rng.random((n, k)) * 0.5 + y * rng.uniform(0.0, 0.5, k), 2)  # ties
    mask = rng.random((n, k)) < 0.75 if use_mask else None
    w = rng.choice([0.0, 0.5, 1.0, 3.0], n) if use_w else None
    rep = multilabel_report(y, s, mask=mask, sample_weight=w)
    if mask is None:
        want_auc = sk.roc_auc_score(y, s, average="macro", sample_weight=w)
        want_ap = sk.average_precision_score(y, s, average="macro", sample_weight=w)
    else:
        aucs, aps = [], []
        for j in range(k):
            known = mask[:, j]
            wj = None if w is None else w[known]
            aucs.append(sk.roc_auc_score(y[known, j], s[known, j], sample_weight=wj))
            aps.append(sk.average_precision_score(y[known, j], s[known, j], sample_weight=wj))
        want_auc, want_ap = float(np.mean(aucs)), float(np.mean(aps))
    # the macro ROC AUC and AP differ here, so one figure cannot stand in for the other
    assert abs(want_auc - want_ap) > 1e-3
    assert type(rep["roc_auc_macro"]) is float and type(rep["ap_macro"]) is float
    assert rep["roc_auc_macro"] == pytest.approx(want_auc, rel=1e-12)
    assert rep["ap_macro"] == pytest.approx(want_ap, rel=1e-12)
