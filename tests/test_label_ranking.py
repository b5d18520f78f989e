"""toxeval.metrics' label-ranking family against scikit-learn 1.9.1.

Property tests draw tie-heavy inputs (scores from a handful of values, -0.0 next to
0.0), rows with no or all relevant labels, graded relevance, zero weights, float32,
Fortran order and strided views, and compare with scikit-learn to rtol 1e-12. The
masked definition is checked against scikit-learn applied row by row to each row's
known labels; one_error against a plain Python reference.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.metrics as skm
import toxeval.metrics as tm
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=examples(200), deadline=None)
BINARY_FUNCS = [
    "label_ranking_loss",
    "label_ranking_average_precision_score",
    "coverage_error",
]


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-13) or (math.isnan(a) and math.isnan(b))


def layout(a: np.ndarray, how: str) -> np.ndarray:
    if how == "F":
        return np.asfortranarray(a)
    if how == "strided":
        wide = np.zeros((a.shape[0], 2 * a.shape[1]), dtype=a.dtype)
        wide[:, ::2] = a
        return wide[:, ::2]
    return np.ascontiguousarray(a)


@st.composite
def cases(draw: Any, graded: bool = False) -> dict[str, Any]:
    n = draw(st.integers(1, 25))
    k = draw(st.integers(2, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_values = draw(st.sampled_from([0, 1, 2, 3, 5]))
    if n_values == 0:
        score = rng.normal(size=(n, k))
    else:
        values = np.array([0.0, -0.0, 0.5, -1.0, 0.25])[:n_values]
        score = rng.choice(values, size=(n, k))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    score = layout(score.astype(dtype), draw(st.sampled_from(["C", "F", "strided"])))
    p = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
    rel = rng.random((n, k)) < p
    # rows with no / all relevant labels
    rel[rng.random(n) < 0.2] = False
    rel[rng.random(n) < 0.2] = True
    if graded:
        kind = draw(st.sampled_from(["binary", "int", "float"]))
        if kind == "binary":
            truth: np.ndarray = rel.astype(np.float64)
        elif kind == "int":
            truth = rel * rng.integers(1, 4, size=(n, k))
        else:
            truth = rel * np.round(rng.random((n, k)) * 3, 2)
    else:
        truth = rel.astype(draw(st.sampled_from([np.bool_, np.int64, np.float64])))
    truth = layout(truth, draw(st.sampled_from(["C", "F", "strided"])))
    weight = None
    if draw(st.booleans()):
        weight = rng.choice([0.0, 0.5, 1.0, 3.0], size=n)
        if weight.sum() == 0:
            weight[0] = 1.0
    return {"y_true": truth, "y_score": score, "sample_weight": weight}


def sk_call(name: str, *args: Any, **kwargs: Any) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(getattr(skm, name)(*args, **kwargs))


# ----------------------------------------------------------------------------- parity


@pytest.mark.parametrize("name", BINARY_FUNCS)
@SETTINGS
@given(c=cases())
def test_binary_relevance_matches_sklearn(name: str, c: dict[str, Any]) -> None:
    y, s, w = c["y_true"], c["y_score"], c["sample_weight"]
    if name != "label_ranking_average_precision_score":
        # sklearn needs a multilabel-indicator y_true (2 distinct values at most, 2-D)
        pass
    want = sk_call(name, y, s, sample_weight=w)
    got = getattr(tm, name)(y, s, sample_weight=w)
    assert type(got) is float
    assert close(got, want), (got, want)


@pytest.mark.parametrize("name", ["dcg_score", "ndcg_score"])
@SETTINGS
@given(c=cases(graded=True), data=st.data())
def test_graded_relevance_matches_sklearn(name: str, c: dict[str, Any], data: Any) -> None:
    y, s, w = c["y_true"], c["y_score"], c["sample_weight"]
    kw: dict[str, Any] = {"k": data.draw(st.one_of(st.none(), st.integers(1, y.shape[1] + 5)))}
    if name == "dcg_score":
        kw["log_base"] = data.draw(st.sampled_from([2, 10, math.e, 0.5]))
    want = sk_call(name, y, s, sample_weight=w, **kw)
    got = getattr(tm, name)(y, s, sample_weight=w, **kw)
    assert type(got) is float
    assert close(got, want), (got, want)


@pytest.mark.parametrize("name", ["dcg_score", "ndcg_score"])
@SETTINGS
@given(c=cases(graded=True), data=st.data())
def test_ignore_ties_matches_sklearn_without_ties(name: str, c: dict[str, Any], data: Any) -> None:
    y, w = c["y_true"], c["sample_weight"]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    # distinct scores in every row
    s = np.argsort(rng.random(y.shape), axis=1).astype(c["y_score"].dtype) / 7.0
    k = data.draw(st.one_of(st.none(), st.integers(1, y.shape[1] + 5)))
    want = sk_call(name, y, s, k=k, sample_weight=w, ignore_ties=True)
    got = getattr(tm, name)(y, s, k=k, sample_weight=w, ignore_ties=True)
    assert close(got, want), (got, want)
    # without ties, the tie-averaged path gives the same value
    assert close(getattr(tm, name)(y, s, k=k, sample_weight=w), want)


# ----------------------------------------------------------------------------- mask


def _row_reference(name: str, t: np.ndarray, s: np.ndarray, **kw: Any) -> float:
    """sklearn on one row of (at least one) known labels, with the documented
    degenerate-row rule."""
    kk = t.shape[0]
    if name == "label_ranking_loss" and kk < 2:
        return 0.0
    if name == "label_ranking_average_precision_score" and kk < 2:
        return 1.0
    if name == "coverage_error" and kk < 2:
        return float(np.count_nonzero(t))
    if name in ("dcg_score", "ndcg_score") and kk < 2:
        if name == "ndcg_score":
            return 1.0 if t[0] > 0 else 0.0
        base = kw.get("log_base", 2)
        return float(t[0] * (1 / (np.log(2) / np.log(base))))
    return sk_call(name, t[None, :], s[None, :], **kw)


@pytest.mark.parametrize("name", [*BINARY_FUNCS, "dcg_score", "ndcg_score"])
@SETTINGS
@given(c=cases(graded=True), data=st.data())
def test_mask_equals_sklearn_row_by_row(name: str, c: dict[str, Any], data: Any) -> None:
    y, s, w = c["y_true"], c["y_score"], c["sample_weight"]
    if name in BINARY_FUNCS:
        y = y != 0
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    p_known = data.draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    mask = rng.random(y.shape) < p_known
    mask[rng.random(y.shape[0]) < 0.2] = True
    kw: dict[str, Any] = {}
    if name in ("dcg_score", "ndcg_score"):
        kw["k"] = data.draw(st.one_of(st.none(), st.integers(1, y.shape[1] + 2)))
    # unknown entries may hold garbage placeholders
    y_bad = np.where(mask, y, np.nan if name not in BINARY_FUNCS else y)
    s_bad = np.where(mask, s, np.nan).astype(s.dtype)
    rows = np.flatnonzero(mask.any(axis=1))
    per_row = [_row_reference(name, y[i][mask[i]], s[i][mask[i]], **kw) for i in rows]
    _assert_mean_of_known_rows(
        lambda: getattr(tm, name)(y_bad, s_bad, sample_weight=w, mask=mask, **kw),
        per_row,
        None if w is None else w[rows],
        nan_on_zero_weights=name == "label_ranking_average_precision_score",
    )


def _assert_mean_of_known_rows(
    call: Any, per_row: list[float], w_kept: Any, *, nan_on_zero_weights: bool = False
) -> None:
    """``call()`` is the (weighted) mean of ``per_row``, the values of the rows with a
    known label (rows without one are left out). No such row: ``ValueError``; their
    weights sum to zero: ``ZeroDivisionError`` (LRAP: NaN with NumPy's
    ``RuntimeWarning``, as scikit-learn)."""
    if not per_row:
        with pytest.raises(ValueError, match="no row has a known label"):
            call()
        return
    if w_kept is not None and float(np.sum(w_kept)) == 0.0:
        if nan_on_zero_weights:
            with pytest.warns(RuntimeWarning):
                assert math.isnan(call())
        else:
            with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
                call()
        return
    want = float(np.average(per_row, weights=w_kept))
    got = call()
    assert close(got, want), (got, want)


@pytest.mark.parametrize("name", [*BINARY_FUNCS, "dcg_score", "ndcg_score", "one_error"])
@SETTINGS
@given(c=cases())
def test_all_true_mask_is_no_mask(name: str, c: dict[str, Any]) -> None:
    y, s, w = c["y_true"], c["y_score"], c["sample_weight"]
    mask = np.ones(y.shape, dtype=bool)
    a = getattr(tm, name)(y, s, sample_weight=w)
    b = getattr(tm, name)(y, s, sample_weight=w, mask=mask)
    assert a == b or (math.isnan(a) and math.isnan(b))
    assert b == getattr(tm, name)(y, s, sample_weight=w, mask=mask.astype(np.int8))


# ----------------------------------------------------------------------------- one_error


def one_error_reference(
    y: np.ndarray, s: np.ndarray, w: np.ndarray | None, mask: np.ndarray | None
) -> tuple[list[float], np.ndarray | None]:
    """Per-row one-errors of the rows with a known label, and their weights."""
    errs, rows = [], []
    for i in range(y.shape[0]):
        known = [j for j in range(y.shape[1]) if mask is None or mask[i, j]]
        if not known:
            continue  # unknown: left out
        top = max(float(s[i, j]) for j in known)
        group = [j for j in known if float(s[i, j]) == top]
        errs.append(sum(1 for j in group if y[i, j] == 0) / len(group))
        rows.append(i)
    return errs, None if w is None else np.asarray(w)[rows]


@SETTINGS
@given(c=cases(), data=st.data())
def test_one_error_matches_reference(c: dict[str, Any], data: Any) -> None:
    y, s, w = c["y_true"], c["y_score"], c["sample_weight"]
    mask = None
    if data.draw(st.booleans()):
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        mask = rng.random(y.shape) < 0.6
    errs, w_kept = one_error_reference(y, s, w, mask)
    _assert_mean_of_known_rows(lambda: tm.one_error(y, s, sample_weight=w, mask=mask), errs, w_kept)


def test_one_error_named_cases() -> None:
    assert tm.one_error([[1, 0, 0]], [[0.9, 0.5, 0.1]]) == 0.0
    assert tm.one_error([[0, 1, 0]], [[0.9, 0.5, 0.1]]) == 1.0
    # tie at the top: half of the top group is irrelevant
    assert tm.one_error([[1, 0, 0]], [[0.5, 0.5, 0.1]]) == 0.5
    # no relevant label: classical definition counts an error
    assert tm.one_error([[0, 0, 0], [1, 0, 0]], [[0.1, 0.2, 0.3], [0.9, 0.1, 0.1]]) == 0.5
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        tm.one_error([[1, 0]], [[0.1, 0.2]], sample_weight=[0.0])


# ----------------------------------------------------------------------------- named cases


def test_coverage_tie_handling() -> None:
    cases_ = [
        ([[0, 0]], [[0.5, 0.5]], 0),
        ([[1, 0]], [[0.5, 0.5]], 2),
        ([[0, 1]], [[0.5, 0.5]], 2),
        ([[1, 1]], [[0.5, 0.5]], 2),
        ([[0, 0, 0]], [[0.25, 0.5, 0.5]], 0),
        ([[0, 0, 1]], [[0.25, 0.5, 0.5]], 2),
        ([[0, 1, 0]], [[0.25, 0.5, 0.5]], 2),
        ([[0, 1, 1]], [[0.25, 0.5, 0.5]], 2),
        ([[1, 0, 0]], [[0.25, 0.5, 0.5]], 3),
        ([[1, 0, 1]], [[0.25, 0.5, 0.5]], 3),
        ([[1, 1, 0]], [[0.25, 0.5, 0.5]], 3),
        ([[1, 1, 1]], [[0.25, 0.5, 0.5]], 3),
    ]
    for y, s, want in cases_:
        assert tm.coverage_error(y, s) == want


def test_ranking_loss_ties_handling() -> None:
    cases_ = [
        ([[1, 0]], [[0.5, 0.5]], 1),
        ([[0, 1]], [[0.5, 0.5]], 1),
        ([[0, 0, 1]], [[0.25, 0.5, 0.5]], 0.5),
        ([[0, 1, 0]], [[0.25, 0.5, 0.5]], 0.5),
        ([[0, 1, 1]], [[0.25, 0.5, 0.5]], 0),
        ([[1, 0, 0]], [[0.25, 0.5, 0.5]], 1),
        ([[1, 0, 1]], [[0.25, 0.5, 0.5]], 1),
        ([[1, 1, 0]], [[0.25, 0.5, 0.5]], 1),
        # -0.0 ties with 0.0
        ([[1, 0]], [[-0.0, 0.0]], 1),
    ]
    for y, s, want in cases_:
        assert tm.label_ranking_loss(y, s) == want


def test_docstring_examples() -> None:
    assert tm.label_ranking_loss([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1], [1, 0.2, 0.1]]) == 0.75
    assert close(
        tm.label_ranking_average_precision_score(
            np.array([[1, 0, 0], [0, 0, 1]]), np.array([[0.75, 0.5, 1], [1, 0.2, 0.1]])
        ),
        0.41666666666666663,
    )
    assert tm.coverage_error([[1, 0, 0], [0, 1, 1]], [[1, 0, 0], [0, 1, 1]]) == 1.5
    rel = np.asarray([[10, 0, 0, 1, 5]])
    assert close(
        tm.dcg_score(rel, [[0.1, 0.2, 0.3, 4, 70]]),
        sk_call("dcg_score", rel, [[0.1, 0.2, 0.3, 4, 70]]),
    )
    assert tm.dcg_score(rel, [[1, 0, 0, 0, 1]], k=1) == 7.5
    assert tm.dcg_score(rel, [[1, 0, 0, 0, 1]], k=1, ignore_ties=True) == 5.0
    assert tm.ndcg_score(rel, [[1, 0, 0, 0, 1]], k=1) == 0.75
    assert tm.ndcg_score(rel, [[1, 0, 0, 0, 1]], k=1, ignore_ties=True) == 0.5


def test_lrap_ties_and_degenerate_rows() -> None:
    assert close(
        tm.label_ranking_average_precision_score([[1, 0, 1]], [[0.5, 0.5, 0.2]]), 0.5833333333333333
    )
    # single column (2-D binary) -> 1.0
    assert tm.label_ranking_average_precision_score([[1], [0]], [[0.2], [0.3]]) == 1.0
    # rows with no / all relevant labels -> 1.0
    assert (
        tm.label_ranking_average_precision_score([[0, 0], [1, 1]], [[0.2, 0.3], [0.1, 0.2]]) == 1.0
    )


def test_lrap_sample_weighting_zero_labels() -> None:
    y = np.array([[1, 0, 0, 0], [1, 0, 0, 1], [0, 0, 0, 0]], dtype=bool)
    s = np.array([[0.3, 0.4, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]])
    w = np.array([1, 1, 0])
    assert close(
        tm.label_ranking_average_precision_score(y, s, sample_weight=w),
        sk_call("label_ranking_average_precision_score", y, s, sample_weight=w),
    )


def test_lrap_all_zero_weights_is_nan_with_runtime_warning() -> None:
    with pytest.warns(RuntimeWarning, match="invalid value encountered"):
        v = tm.label_ranking_average_precision_score(
            [[1, 0], [0, 1]], [[0.1, 0.2], [0.3, 0.4]], sample_weight=[0, 0]
        )
    assert math.isnan(v)


@pytest.mark.parametrize(
    "name", ["label_ranking_loss", "coverage_error", "dcg_score", "ndcg_score"]
)
def test_all_zero_weights_raise_zero_division(name: str) -> None:
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero, can't be normalized"):
        getattr(tm, name)([[1, 0], [0, 1]], [[0.1, 0.2], [0.3, 0.4]], sample_weight=[0, 0])


def test_dcg_ties() -> None:
    y = np.asarray([np.arange(5)])
    s = np.zeros(y.shape)
    discounts = 1 / np.log2(np.arange(2, 7))
    assert close(tm.dcg_score(y, s), discounts.sum() * y.mean())
    # ignore_ties: stable order, i.e. ties in descending column order
    assert close(tm.dcg_score(y, s, ignore_ties=True), (discounts * y[:, ::-1]).sum())
    s[0, 3:] = 1
    assert close(
        tm.dcg_score(y, s),
        discounts[:2].sum() * y[0, 3:].mean() + discounts[2:].sum() * y[0, :3].mean(),
    )
    assert close(tm.dcg_score(y, s, ignore_ties=True), (discounts * y[:, ::-1]).sum())


def test_dcg_partial_tie_group_at_cutoff() -> None:
    y = np.array([[3.0, 1.0, 0.0, 2.0]])
    s = np.array([[0.9, 0.5, 0.5, 0.5]])
    for k in (1, 2, 3, 4, 6):
        assert close(tm.dcg_score(y, s, k=k), sk_call("dcg_score", y, s, k=k))
        assert close(tm.ndcg_score(y, s, k=k), sk_call("ndcg_score", y, s, k=k))


@pytest.mark.parametrize("ignore_ties", [True, False])
def test_ndcg_toy_examples(ignore_ties: bool) -> None:
    y_true = 3 * np.eye(7)[:5]
    y_score = np.tile(np.arange(6, -1, -1), (5, 1))
    noisy = y_score + np.random.RandomState(0).uniform(-0.2, 0.2, size=y_score.shape)
    want_dcg = (3 / np.log2(np.arange(2, 7))).mean()
    assert close(tm.dcg_score(y_true, y_score, ignore_ties=ignore_ties), want_dcg)
    assert close(tm.dcg_score(y_true, noisy, ignore_ties=ignore_ties), want_dcg)
    assert close(
        tm.ndcg_score(y_true, y_score, ignore_ties=ignore_ties),
        (1 / np.log2(np.arange(2, 7))).mean(),
    )
    assert close(
        tm.dcg_score(y_true, y_score, log_base=10, ignore_ties=ignore_ties),
        (3 / np.log10(np.arange(2, 7))).mean(),
    )
    y_true = 3 * np.ones((5, 7))
    assert close(
        tm.dcg_score(y_true, y_score, ignore_ties=ignore_ties), (3 / np.log2(np.arange(2, 9))).sum()
    )
    assert close(tm.ndcg_score(y_true, y_score, ignore_ties=ignore_ties), 1.0)


def test_ndcg_zero_ideal_rows_count_as_zero() -> None:
    y = [[1, 0, 1], [0, 0, 0]]
    assert tm.ndcg_score(y, y) == 0.5


def test_ndcg_invariant() -> None:
    y = np.arange(70).reshape(7, 10)
    y_score = y + np.random.RandomState(0).uniform(-0.2, 0.2, size=y.shape)
    assert close(tm.ndcg_score(y, y_score), 1.0)
    assert close(tm.ndcg_score(y, y_score, ignore_ties=True), 1.0)


def test_dcg_accepts_negative_gains() -> None:
    y = np.array([[-1.0, 2.0, 0.5], [1.0, -3.0, 0.0]])
    s = np.array([[0.1, 0.2, 0.2], [0.3, 0.1, 0.2]])
    assert close(tm.dcg_score(y, s), sk_call("dcg_score", y, s))


def test_relevance_is_nonzero_and_sparse_y_true() -> None:
    s = np.array([[0.1, 0.4, 0.35], [0.8, 0.2, 0.5]])
    for y in ([[-1, 1, 1], [1, -1, -1]], [[0, 2, 0], [2, 0, 2]]):
        for name in BINARY_FUNCS:
            assert close(getattr(tm, name)(y, s), sk_call(name, y, s))
    y = np.array([[0, 1, 0], [1, 0, 1]])
    for name in ("label_ranking_loss", "label_ranking_average_precision_score"):
        for conv in (sp.csr_matrix, sp.csr_array, sp.csc_matrix):
            assert close(getattr(tm, name)(conv(y), s), sk_call(name, y, s))


def test_lists_ints_and_integer_scores() -> None:
    y = [[1, 0, 1, 0], [0, 0, 1, 1]]
    s = [[3, 1, 2, 2], [1, 1, 1, 4]]
    for name in [*BINARY_FUNCS, "dcg_score", "ndcg_score"]:
        assert close(getattr(tm, name)(y, s), sk_call(name, y, s))
    # int64 scores beyond 2**53 stay distinct
    big = np.array([[2**53, 2**53 + 1]], dtype=np.int64)
    assert tm.label_ranking_loss([[1, 0]], big) == 1.0
    assert tm.label_ranking_loss([[0, 1]], big) == 0.0


def test_float32_ties_decided_in_float32() -> None:
    y = np.array([[1, 0]])
    s64 = np.array([[0.1, 0.1 + 1e-10]])
    assert tm.label_ranking_loss(y, s64) == 1.0
    assert tm.label_ranking_loss(y, s64.astype(np.float32)) == 1.0
    assert tm.label_ranking_loss([[0, 1]], s64) == 0.0
    assert tm.label_ranking_loss([[0, 1]], s64.astype(np.float32)) == 1.0


# ----------------------------------------------------------------------------- errors


def _errors_match(func_name: str, *args: Any, **kwargs: Any) -> None:
    try:
        getattr(skm, func_name)(*args, **kwargs)
    except Exception as e:
        want: BaseException = e
    else:
        raise AssertionError("sklearn did not raise")
    with pytest.raises(type(want)) as got:
        getattr(tm, func_name)(*args, **kwargs)
    assert str(got.value) == str(want)


Y = np.array([[1, 0, 1], [0, 1, 0]])
S = np.array([[0.5, 0.5, 0.2], [0.1, 0.2, 0.3]])

BAD_INPUTS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((np.zeros((0, 3)), np.zeros((0, 3))), {}),
    ((np.zeros((3, 0)), np.zeros((3, 0))), {}),
    (([1, 0, 1], [0.1, 0.2, 0.3]), {}),
    ((np.zeros((2, 2, 2)), np.zeros((2, 2, 2))), {}),
    ((Y, sp.csr_matrix(S)), {}),
    (([["a", "b"], ["b", "a"]], S[:, :2]), {}),
    ((Y, S[:1]), {}),
    ((Y, S[:, :2]), {}),
    ((Y, np.where(S > 0.4, np.nan, S)), {}),
    ((Y, np.where(S > 0.4, np.inf, S)), {}),
    ((np.where(Y > 0, np.nan, Y), S), {}),
    ((Y[:, :1], S[:, :1]), {}),
    ((np.array([[0, 1, 2], [2, 1, 0]]), S), {}),
    ((np.array([[0.5, 1, 2], [2, 1, 0]]), S), {}),
    ((np.array([[-1, 1, 1], [1, 1, -1]]), S), {}),
    ((Y, S), {"sample_weight": [1, 2, 3]}),
    ((1, 1), {}),
    ((Y, S.astype(complex)), {}),
    ((Y.ravel(), S.ravel()), {}),
]


@pytest.mark.parametrize("name", [*BINARY_FUNCS, "dcg_score", "ndcg_score"])
@pytest.mark.parametrize("case", range(len(BAD_INPUTS)))
def test_bad_inputs_same_errors(name: str, case: int) -> None:
    args, kwargs = BAD_INPUTS[case]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(skm, name)(*args, **kwargs)
    except Exception:
        _errors_match(name, *args, **kwargs)
    else:
        assert close(getattr(tm, name)(*args, **kwargs), float(want))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 0},
        {"k": 1.5},
        {"k": "a"},
        {"k": -1},
        {"log_base": 0},
        {"log_base": -1},
        {"log_base": "a"},
        {"log_base": np.inf},
        {"ignore_ties": "yes"},
        {"ignore_ties": 1},
    ],
)
def test_parameter_errors(kwargs: dict[str, Any]) -> None:
    _errors_match("dcg_score", Y, S, **kwargs)
    if "log_base" not in kwargs:
        _errors_match("ndcg_score", Y, S, **kwargs)
    # InvalidParameterError is both a ValueError and a TypeError
    with pytest.raises(ValueError):
        tm.dcg_score(Y, S, **kwargs)


def test_specific_messages() -> None:
    with pytest.raises(ValueError, match=r"^binary format is not supported$"):
        tm.label_ranking_loss([[1], [0]], [[0.1], [0.2]])
    with pytest.raises(ValueError, match=r"^y_true and y_score have different shape$"):
        tm.label_ranking_loss(Y, S[:, :2])
    with pytest.raises(ValueError, match=r"Got binary instead$"):
        tm.dcg_score([1, 0, 1], [0.1, 0.2, 0.3])
    with pytest.raises(
        ValueError, match=r"^ndcg_score should not be used on negative y_true values\.$"
    ):
        tm.ndcg_score([[-1, 1]], [[0.1, 0.2]])
    with pytest.raises(ValueError, match=r"more than 1 document\. Got 1 instead\.$"):
        tm.ndcg_score([[1], [0]], [[0.1], [0.2]])
    with pytest.raises(ValueError, match=r"^Expected 2D array, got 1D array instead"):
        tm.coverage_error([1, 0, 1], [0.1, 0.2, 0.3])


@pytest.mark.parametrize("name", [*BINARY_FUNCS, "dcg_score", "ndcg_score", "one_error"])
def test_bad_masks(name: str) -> None:
    f = getattr(tm, name)
    with pytest.raises(ValueError, match="mask has shape"):
        f(Y, S, mask=np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="mask must be a boolean array"):
        f(Y, S, mask=np.full(Y.shape, 0.5))
    with pytest.raises(ValueError, match="mask must be a boolean array"):
        f(Y, S, mask=np.full(Y.shape, 2))


# ----------------------------------------------------------------------------- threads


@pytest.mark.parametrize("name", [*BINARY_FUNCS, "dcg_score", "ndcg_score", "one_error"])
def test_n_jobs_do_not_change_results(name: str) -> None:
    rng = np.random.default_rng(7)
    n, k = 60_000, 9
    y = rng.random((n, k)) < 0.2
    s = np.round(rng.random((n, k)), 1)
    w = rng.random(n)
    mask = rng.random((n, k)) < 0.9
    f = getattr(tm, name)
    for kw in ({}, {"sample_weight": w}, {"mask": mask}):
        a = f(y, s, n_jobs=1, **kw)
        b = f(y, s, n_jobs=2, **kw)
        assert a == b
    if name != "one_error":
        assert close(f(y, s, n_jobs=2), sk_call(name, y, s))
