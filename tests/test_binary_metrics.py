"""toxeval.metrics per-label binary metrics against scikit-learn 1.9.1.

Property tests (tie-heavy scores, float32, Fortran order, strided views, zero
weights, labels with no or all positives, K from 2 to 40) compare values, NaN
positions, return types and warnings; named cases cover every edge of
metric-semantics.md section 1.1/1.2 and section 4.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn import metrics as sk
from toxeval import metrics as te

AVERAGES = [None, "micro", "macro", "weighted", "samples"]
FUNCS = ["average_precision_score", "roc_auc_score"]


def run(fn: Any, *args: Any, **kwargs: Any) -> tuple[str, Any, set[tuple[str, str]]]:
    """Call and record ('ok', value) or ('err', (type, message)) plus the warnings."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            out: tuple[str, Any] = ("ok", fn(*args, **kwargs))
        except Exception as e:
            out = ("err", (type(e).__name__, str(e)))
    seen = {(w.category.__name__, str(w.message)) for w in rec}
    seen = {s for s in seen if s[0] in ("UserWarning", "UndefinedMetricWarning")}
    return out[0], out[1], seen


def assert_same(expected: Any, got: Any) -> None:
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray)
        assert got.dtype == expected.dtype
        assert got.shape == expected.shape
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15, equal_nan=True)
    else:
        assert type(got) is type(expected), (type(got), type(expected))
        if isinstance(expected, float) and np.isnan(expected):
            assert np.isnan(got)
        else:
            assert got == pytest.approx(expected, rel=1e-12, abs=1e-15)


def normalize_sets(msg: str) -> str:
    """Sort the items of a printed str set ("among {...}"): its order is arbitrary."""
    if "among {" not in msg:
        return msg
    head, rest = msg.split("among {", 1)
    items, tail = rest.split("}", 1)
    return head + "among {" + ", ".join(sorted(items.split(", "))) + "}" + tail


def compare(name: str, *args: Any, **kwargs: Any) -> None:
    exp = run(getattr(sk, name), *args, **kwargs)
    got = run(getattr(te, name), *args, **kwargs)
    assert exp[0] == got[0], (exp, got)
    if exp[0] == "ok":
        if isinstance(exp[1], tuple):
            assert isinstance(got[1], tuple)
            for e, g in zip(exp[1], got[1], strict=True):
                assert_same(e, g)
        else:
            assert_same(exp[1], got[1])
    else:
        assert exp[1][0] == got[1][0]
        assert normalize_sets(exp[1][1]) == normalize_sets(got[1][1])
    assert exp[2] == got[2], (exp[2], got[2])


# ----------------------------------------------------------------------------- strategies


@st.composite
def multilabel(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 30))
    k = draw(st.integers(2, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    prevalence = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0, -1.0]))
    if prevalence < 0:
        y = rng.integers(0, 2, (n, k))
    else:
        y = (rng.random((n, k)) < prevalence).astype(int)
    # some labels with no / all positives
    if k > 2 and draw(st.booleans()):
        y[:, 0] = 0
        y[:, 1] = 1
    n_values = draw(st.sampled_from([1, 2, 3, 5, 1000]))
    s = rng.integers(0, n_values, (n, k)) / max(n_values - 1, 1)
    if draw(st.booleans()):
        s = s - 0.5  # negative scores and -0.0 / 0.0
        s[s == 0] = rng.choice([0.0, -0.0], size=int((s == 0).sum()))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    s = s.astype(dtype)
    layout = draw(st.sampled_from(["C", "F", "strided"]))
    if layout == "F":
        s = np.asfortranarray(s)
        y = np.asfortranarray(y)
    elif layout == "strided":
        big = np.zeros((n, 2 * k), dtype=dtype)
        big[:, ::2] = s
        s = big[:, ::2]
    ytype = draw(st.sampled_from(["int", "bool", "float"]))
    y = y.astype({"int": np.int64, "bool": np.bool_, "float": np.float64}[ytype])
    weights = draw(st.sampled_from([None, "int", "zeros_some", "float"]))
    w: Any = None
    if weights == "int":
        w = rng.integers(1, 4, n).astype(np.float64)
    elif weights == "zeros_some":
        w = rng.integers(0, 3, n).astype(np.float64)
        if not w.any():
            w[0] = 1.0
    elif weights == "float":
        w = rng.random(n) + 0.01
    return {"y": y, "s": s, "w": w}


SETTINGS = settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@pytest.mark.parametrize("average", AVERAGES)
@SETTINGS
@given(data=multilabel())
def test_average_precision_matches_sklearn(data: dict[str, Any], average: str | None) -> None:
    compare(
        "average_precision_score", data["y"], data["s"], average=average, sample_weight=data["w"]
    )


@pytest.mark.parametrize("average", AVERAGES)
@SETTINGS
@given(data=multilabel(), max_fpr=st.sampled_from([None, 1.0, 0.5, 0.1, 0.77]))
def test_roc_auc_matches_sklearn(
    data: dict[str, Any], average: str | None, max_fpr: float | None
) -> None:
    compare(
        "roc_auc_score",
        data["y"],
        data["s"],
        average=average,
        sample_weight=data["w"],
        max_fpr=max_fpr,
    )


@SETTINGS
@given(data=multilabel(), name=st.sampled_from(FUNCS))
def test_binary_matches_sklearn(data: dict[str, Any], name: str) -> None:
    compare(name, data["y"][:, 2 % data["y"].shape[1]], data["s"][:, 0], sample_weight=data["w"])


@SETTINGS
@given(
    data=multilabel(),
    name=st.sampled_from(["precision_recall_curve", "roc_curve"]),
    drop=st.booleans(),
)
def test_curves_match_sklearn(data: dict[str, Any], name: str, drop: bool) -> None:
    compare(
        name,
        data["y"][:, 0].astype(int),
        data["s"][:, 1],
        sample_weight=data["w"],
        drop_intermediate=drop,
    )


# ----------------------------------------------------------------------------- masks


@settings(max_examples=examples(200), deadline=None)
@given(data=multilabel(), name=st.sampled_from(FUNCS), seed=st.integers(0, 1000))
def test_mask_per_label_equals_sklearn_on_known_rows(
    data: dict[str, Any], name: str, seed: int
) -> None:
    y, s, w = data["y"], data["s"], data["w"]
    rng = np.random.default_rng(seed)
    mask = rng.random(y.shape) < 0.7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got_status, got, _ = run(getattr(te, name), y, s, average=None, sample_weight=w, mask=mask)
        # scikit-learn applied to the known rows of each label; any label on which it
        # raises (e.g. all known rows have zero weight) makes the masked call raise too.
        refs = []
        for j in range(y.shape[1]):
            rows = mask[:, j]
            if not rows.any():
                refs.append(None)
                continue
            wj = None if w is None else w[rows]
            refs.append(run(getattr(sk, name), y[rows, j], s[rows, j], sample_weight=wj))
        if any(r is not None and r[0] == "err" for r in refs):
            assert got_status == "err"
            return
        assert got_status == "ok", got
        for j, r in enumerate(refs):
            if r is None:
                assert np.isnan(got[j])
            else:
                assert_same(r[1], float(got[j]))


@SETTINGS
@given(data=multilabel(), name=st.sampled_from(FUNCS), average=st.sampled_from(AVERAGES))
def test_all_true_mask_equals_no_mask(data: dict[str, Any], name: str, average: Any) -> None:
    fn = getattr(te, name)
    a = run(fn, data["y"], data["s"], average=average, sample_weight=data["w"])
    b = run(
        fn,
        data["y"],
        data["s"],
        average=average,
        sample_weight=data["w"],
        mask=np.ones(data["y"].shape, dtype=bool),
    )
    assert a[0] == b[0] and a[2] == b[2]
    if a[0] == "ok":
        np.testing.assert_array_equal(a[1], b[1])


@settings(max_examples=examples(100), deadline=None)
@given(data=multilabel(), name=st.sampled_from(FUNCS), seed=st.integers(0, 1000))
def test_mask_micro_and_samples(data: dict[str, Any], name: str, seed: int) -> None:
    y, s = data["y"], data["s"]
    rng = np.random.default_rng(seed)
    mask = rng.random(y.shape) < 0.8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st_m, got_m, _ = run(getattr(te, name), y, s, average="micro", mask=mask)
        if mask.any():
            st_r, ref_m, _ = run(getattr(sk, name), y[mask], s[mask])
            assert st_m == st_r
            if st_r == "ok":
                assert_same(ref_m, got_m)
        st_s, got_s, _ = run(getattr(te, name), y, s, average="samples", mask=mask)
        if st_s == "ok" and mask.any(axis=1).all():
            rows = []
            for i in range(y.shape[0]):
                r = run(getattr(sk, name), y[i, mask[i]], s[i, mask[i]])
                assert r[0] == "ok"
                rows.append(r[1])
            assert_same(float(np.mean(rows)), got_s)


def test_mask_validation() -> None:
    y = np.array([[0, 1], [1, 0]])
    s = np.array([[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(ValueError, match="mask has shape"):
        te.average_precision_score(y, s, mask=np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="mask must be a boolean"):
        te.average_precision_score(y, s, mask=np.full((2, 2), 0.5))
    assert te.average_precision_score(y, s, mask=np.ones((2, 2), int)) == (
        sk.average_precision_score(y, s)
    )


# ----------------------------------------------------------------------------- named edges


def test_constant_scores_ap_is_prevalence_exactly() -> None:
    y = np.array([1, 0, 0, 0])
    assert te.average_precision_score(y, np.full(4, 0.5)) == 0.25
    assert sk.average_precision_score(y, np.full(4, 0.5)) == 0.25


@pytest.mark.parametrize("y", [[1, 0], [0, 1]])
def test_tied_pair_both_orders(y: list[int]) -> None:
    assert te.average_precision_score(y, [0.5, 0.5]) == 0.5
    assert te.roc_auc_score(y, [0.5, 0.5]) == 0.5


def test_negative_zero_ties_with_zero() -> None:
    for name in FUNCS:
        compare(name, [1, 0], [-0.0, 0.0])
        compare(name, [0, 1], [-0.0, 0.0])
    compare("roc_curve", [1, 0, 1], [-0.0, 0.0, 1.0])


def test_float32_collapse() -> None:
    y = [0, 1]
    s64 = np.array([0.1, 0.1 + 1e-10])
    assert te.average_precision_score(y, s64) == 1.0
    assert te.average_precision_score(y, s64.astype(np.float32)) == 0.5
    compare("average_precision_score", y, s64.astype(np.float32))


def test_int64_beyond_2_53_keeps_order() -> None:
    s = np.array([2**53, 2**53 + 1], dtype=np.int64)
    assert te.average_precision_score([0, 1], s) == 1.0
    assert te.average_precision_score([0, 1], s.astype(np.float64)) == 0.5
    compare("average_precision_score", [0, 1], s)
    compare("roc_auc_score", [0, 1], s)
    yy = np.array([[0, 1], [1, 0]])
    ss = np.array([[2**53, 2**53 + 1], [2**53 + 1, 2**53]], dtype=np.int64)
    compare("roc_auc_score", yy, ss, average=None)


@pytest.mark.parametrize("name", FUNCS)
def test_all_zero_weights(name: str) -> None:
    y = np.array([[0, 1], [1, 0], [1, 1]])
    s = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    compare(name, y, s, sample_weight=[0, 0, 0])
    compare(name, y[:, 0], s[:, 0], sample_weight=[0, 0, 0])
    with pytest.raises(ValueError, match="at least one non-zero"):
        getattr(te, name)(y, s, sample_weight=[0, 0, 0])


def test_zero_weight_equals_deleting_row() -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, (30, 4))
    s = rng.integers(0, 4, (30, 4)) / 3
    w = np.ones(30)
    w[::3] = 0
    for name in FUNCS:
        a = getattr(te, name)(y, s, sample_weight=w, average=None)
        b = getattr(te, name)(y[w > 0], s[w > 0], average=None)
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_auc_single_class_check_before_zero_weight_filter() -> None:
    compare("roc_auc_score", [1, 0, 1], [0.2, 0.1, 0.3], sample_weight=[1, 0, 1])
    compare("roc_auc_score", [[1, 0], [0, 1], [1, 1]], [[0.2, 0.1], [0.3, 0.4], [0.5, 0.6]])


def test_weighted_zero_support_returns_int_zero() -> None:
    y = np.zeros((3, 2), dtype=int)
    s = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    for name in FUNCS:
        compare(name, y, s, average="weighted")
        assert type(getattr(te, name)(y, s, average="weighted")) is int


@pytest.mark.parametrize(
    ("y_true", "kwargs"),
    [
        ([0, 2, 0], {}),
        ([0, 1, 0], {"pos_label": 2}),
        (["a", "b", "a"], {}),
        (["a", "b", "a"], {"pos_label": "b"}),
        ([[0, 1], [1, 0], [1, 1]], {"pos_label": 2}),
        ([[0, 1], [1, 0], [1, 1]], {"pos_label": None}),
        ([0, 1, 0], {"pos_label": 0}),
    ],
)
def test_pos_label_rules(y_true: Any, kwargs: dict[str, Any]) -> None:
    s = [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]] if np.ndim(y_true) == 2 else [0.1, 0.7, 0.3]
    compare("average_precision_score", y_true, s, **kwargs)


# Three classes, two rows each, with per-class scores (no ties at the top).
_MULTICLASS_Y = np.array([0, 0, 1, 1, 2, 2])
_MULTICLASS_S = np.array(
    [
        [0.7, 0.2, 0.1],
        [0.4, 0.3, 0.3],
        [0.1, 0.8, 0.1],
        [0.2, 0.3, 0.5],
        [0.4, 0.4, 0.2],
        [0.1, 0.2, 0.7],
    ]
)


def test_multiclass_y_true() -> None:
    y, s = _MULTICLASS_Y, _MULTICLASS_S
    for avg in AVERAGES:
        compare("average_precision_score", y, s, average=avg)
    compare("average_precision_score", y, s[:, 0])
    compare("average_precision_score", y, s, pos_label=2)
    for mc in ["ovr", "ovo", "raise"]:
        compare("roc_auc_score", y, s, multi_class=mc)
    compare("roc_auc_score", y, s, multi_class="ovr", max_fpr=0.5)


@pytest.mark.parametrize("values", [(0, 2), (1, 2), (-1, 1), (-1, 0)])
@pytest.mark.parametrize("average", AVERAGES)
def test_nonstandard_multilabel_encodings(values: tuple[int, int], average: Any) -> None:
    a, b = values
    y = np.array([[a, b, a], [b, b, a], [a, b, a]])
    s = np.array([[0.1, 0.2, 0.3], [0.3, 0.4, 0.1], [0.5, 0.6, 0.2]])
    for name in FUNCS:
        compare(name, y, s, average=average)
    y2 = np.array([[a, b], [a, b]])
    compare("roc_auc_score", y2, s[:2, :2], average=average)


@pytest.mark.parametrize("name", FUNCS)
def test_bad_inputs(name: str) -> None:
    y = np.array([[0, 1], [1, 0], [1, 1]])
    s = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    nan = s.copy()
    nan[1, 1] = np.nan
    inf = s.copy()
    inf[0, 0] = np.inf
    cases: list[tuple[Any, ...]] = [
        (y, nan, {}),
        (y, inf, {}),
        (y, inf.astype(np.float32), {}),
        (y[:, 0], nan[:, 1], {}),
        (y[:, 0], inf[:, 0], {}),
        (np.array([1, np.nan, 0]), [1, 2, 3], {}),
        (y, s[:2], {}),
        (y[:, 0], s[:2, 0], {}),
        (y, s, {"sample_weight": [1, 1]}),
        (y[:, 0], s[:, 0], {"sample_weight": [1, 1]}),
        (np.zeros((2, 2, 2)), np.zeros((2, 2, 2)), {}),
        (y, s.astype(str), {}),
        (y, s.astype(object), {}),
        (np.zeros((0, 3)), np.zeros((0, 3)), {}),
        (y[:, 0], s, {}),
        (y, s, {"average": "foo"}),
        (y, s, {"sample_weight": [[1, 1, 1]]}),
        (y, s, {"sample_weight": [-1, 1, 1]}),
        (y, s, {"sample_weight": np.ones((3, 1))}),
        (y.tolist(), s.tolist(), {}),
        (y.astype(bool), s, {}),
        ([[True, False], [False, True]], [[1, 2], [3, 4]], {}),
        (y, s.astype(np.int32), {}),
        (y, s > 0.3, {}),
        (y, s.astype(np.float16), {}),
    ]
    for y_true, y_score, kw in cases:
        compare(name, y_true, y_score, **kw)


def test_sparse_y_true_is_invalid_parameter() -> None:
    sp = pytest.importorskip("scipy.sparse")
    y = sp.csr_matrix(np.array([[0, 1], [1, 0]]))
    s = np.array([[0.1, 0.2], [0.3, 0.4]])
    compare("average_precision_score", y, s)
    with pytest.raises(sk_invalid_parameter()):
        te.average_precision_score(y, s)


def sk_invalid_parameter() -> type[Exception]:
    from sklearn.utils._param_validation import InvalidParameterError

    return InvalidParameterError


@pytest.mark.parametrize("max_fpr", [0, -0.5, 1.5, "a", True])
def test_max_fpr_validation(max_fpr: Any) -> None:
    y = np.array([[0, 1], [1, 0]])
    s = np.array([[0.1, 0.2], [0.3, 0.4]])
    compare("roc_auc_score", y, s, max_fpr=max_fpr)
    if not isinstance(max_fpr, bool):
        with pytest.raises(sk_invalid_parameter()):
            te.roc_auc_score(y, s, max_fpr=max_fpr)


def test_partial_auc_matches_sklearn_reference() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 500)
    s = rng.random(500)
    for mf in [0.01, 0.1, 0.3, 0.5, 0.99, 1.0]:
        compare("roc_auc_score", y, s, max_fpr=mf)
        compare("roc_auc_score", y, np.round(s, 1), max_fpr=mf)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("levels", [0, 7, 200])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_partial_auc_many_labels_matches_sklearn(dtype: Any, levels: int, n_jobs: int) -> None:
    """K >= 8 labels and enough cells to run in parallel: the per-label fast path
    (two labels per pass over the score rows, f32 on narrow keys) with max_fpr,
    including tiny max_fpr and labels with one class; the same values for any
    n_jobs."""
    rng = np.random.default_rng(levels + 3)
    n, k = 9000, 11
    y = (rng.random((n, k)) < rng.uniform(0.01, 0.6, k)).astype(np.int64)
    y[:, 3] = 0
    y[:, 6] = 1
    y[: n // 2, 8] = 0  # label 8: positives only in the second half
    s = rng.random((n, k)) if levels == 0 else rng.integers(0, levels, (n, k)) / levels
    s = s.astype(dtype)
    for mf in [1e-6, 0.001, 0.05, 0.5, 0.9, 1.0]:
        for yy, average in [(y, None), (y.astype(bool), "macro")]:
            exp = run(sk.roc_auc_score, yy, s, average=average, max_fpr=mf)
            got = run(te.roc_auc_score, yy, s, average=average, max_fpr=mf, n_jobs=n_jobs)
            assert exp[0] == got[0] == "ok"
            assert_same(exp[1], got[1])
            assert exp[2] == got[2]
        with warnings.catch_warnings():  # labels 3 and 6 have one class (checked above)
            warnings.simplefilter("ignore")
            one = te.roc_auc_score(y, s, average=None, max_fpr=mf, n_jobs=1)
            two = te.roc_auc_score(y, s, average=None, max_fpr=mf, n_jobs=2)
        np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize(
    ("y", "s", "kw"),
    [
        ([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], {}),
        ([1, 1, 2, 2], [0.1, 0.4, 0.35, 0.8], {"pos_label": 2}),
        ([0, 2, 0], [1, 2, 3], {}),
        (["a", "b", "a"], [1, 2, 3], {"pos_label": "b"}),
        ([1, 1, 1], [1, 2, 3], {}),
        ([0, 0, 0], [1, 2, 3], {}),
        ([0, 1], [1, 2], {"sample_weight": [0, 0]}),
        ([0, 1, 2], [1, 2, 3], {}),
        ([0, 1, 2], [1, 2, 3], {"pos_label": 2}),
        ([0, 1, 0], [[1, 2], [2, 3], [3, 4]], {}),
        ([0, 1, 0, 1], [3, 3, 3, 3], {}),
        ([0, 1, 0, 1], np.array([3, 1, 3, 2], dtype=np.int32), {}),
        ([0, 1, 1, 0], [0.5, 0.25, 0.25, 0.5], {"sample_weight": [1, 2, 0, 3]}),
    ],
)
@pytest.mark.parametrize("name", ["precision_recall_curve", "roc_curve"])
def test_curves_named_cases(y: Any, s: Any, kw: dict[str, Any], name: str) -> None:
    compare(name, y, s, **kw)
    compare(name, y, s, drop_intermediate=True, **kw)
    compare(name, y, s, drop_intermediate=False, **kw)


def test_roc_curve_leading_inf() -> None:
    fpr, tpr, thr = te.roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert thr[0] == np.inf and fpr[0] == 0 and tpr[0] == 0


def test_return_types() -> None:
    y = np.array([[0, 1], [1, 0], [1, 1]])
    s = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    for name in FUNCS:
        for avg in ["micro", "macro", "weighted", "samples"]:
            with warnings.catch_warnings():  # row [1, 1] has one class under "samples"
                warnings.simplefilter("ignore")
                value = getattr(te, name)(y, s, average=avg)
            assert type(value) is float
        out = getattr(te, name)(y, s, average=None)
        assert isinstance(out, np.ndarray) and out.dtype == np.float64


def test_no_copy_of_float_scores() -> None:
    from toxeval.metrics._binary_inputs import as_scores

    for dt in (np.float64, np.float32, np.int64):
        a = np.asfortranarray(np.ones((4, 3), dtype=dt))[:, ::2]
        assert as_scores(a) is a


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("average", AVERAGES)
def test_n_jobs_does_not_change_results(name: str, average: Any) -> None:
    rng = np.random.default_rng(11)
    n, k = 30_000, 6  # 180k elements: above the parallel threshold
    y = rng.random((n, k)) < 0.2
    s = rng.integers(0, 50, (n, k)) / 49
    w = rng.integers(0, 3, n).astype(np.float64)
    mask = rng.random((n, k)) < 0.9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = getattr(te, name)(y, s, average=average, sample_weight=w, mask=mask, n_jobs=1)
        b = getattr(te, name)(y, s, average=average, sample_weight=w, mask=mask, n_jobs=2)
    np.testing.assert_array_equal(a, b)
    if average != "samples":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = getattr(te, name)(y, s, average=average, sample_weight=w, n_jobs=2)
            d = getattr(sk, name)(y, s, average=average, sample_weight=w)
        np.testing.assert_allclose(c, d, rtol=1e-12)


@pytest.mark.parametrize("kind", ["uniform", "ties", "float32", "narrow", "masked"])
def test_micro_streaming_matches_sklearn(kind: str) -> None:
    """Above 2**18 cells the unweighted micro average streams the cells in key ranges
    (bounded memory, compensated sums): still within 1e-12 of scikit-learn, the same
    for every n_jobs, and AP/AUC of the report agree with the drop-ins."""
    rng = np.random.default_rng(3)
    n, k = 20_000, 15  # 300k cells
    y = (rng.random((n, k)) < 0.1).astype(np.int64)
    s: Any = rng.random((n, k))
    mask = None
    if kind == "ties":
        s = np.round(s, 2)
    elif kind == "float32":
        s = s.astype(np.float32)
    elif kind == "narrow":
        s = 0.5 + s * 1e-9  # one histogram bucket: forces refinement passes
    elif kind == "masked":
        mask = rng.random((n, k)) < 0.9
    for name in FUNCS:
        ours = [getattr(te, name)(y, s, average="micro", mask=mask, n_jobs=j) for j in (1, 2, None)]
        assert ours[0] == ours[1] == ours[2]
        if mask is None:
            ref = getattr(sk, name)(y, s, average="micro")
        else:
            ref = getattr(sk, name)(y[mask], s[mask])
        np.testing.assert_allclose(ours[0], ref, rtol=1e-12, atol=0)


@pytest.mark.parametrize("kind", ["uniform", "ties", "float32", "skewed", "masked", "packed"])
def test_large_labels_walk_matches_sklearn(kind: str) -> None:
    """Labels with at least 2**17 known rows take the count walk (no full sort; see
    docs/deviations.md): per-label, macro and weighted AP / ROC AUC stay within
    1e-13 of scikit-learn, n_jobs does not change them, and a label just under the
    limit (the sorted path) is still equal to scikit-learn's."""
    rng = np.random.default_rng(8)
    n = (1 << 17) + 2_000
    prevalence = np.array([0.1, 0.01, 0.5])
    y: Any = (rng.random((n, 3)) < prevalence).astype(np.int64)
    s: Any = rng.random((n, 3))
    mask = None
    if kind == "ties":
        s = np.round(s, 2)
    elif kind == "float32":
        s = s.astype(np.float32)
    elif kind == "skewed":
        s = s**12  # dense near 0: deep refinement in a narrow key range
    elif kind == "masked":
        # labels 0 and 2 keep more than 2**17 known rows, label 1 falls under
        mask = rng.random((n, 3)) < np.array([0.999, 0.9, 0.9999])
    elif kind == "packed":
        y = y.astype(bool)
    for name in FUNCS:
        for average in (None, "macro", "weighted"):
            ours = [getattr(te, name)(y, s, average=average, mask=mask, n_jobs=j) for j in (1, 2)]
            np.testing.assert_array_equal(ours[0], ours[1])
            if mask is None:
                ref = getattr(sk, name)(y, s, average=average)
            else:
                per = [getattr(sk, name)(y[mask[:, j], j], s[mask[:, j], j]) for j in range(3)]
                if average is None:
                    ref = np.array(per)
                elif average == "macro":
                    ref = np.mean(per)
                else:
                    continue  # weighted support under a mask: covered elsewhere
            np.testing.assert_allclose(ours[0], ref, rtol=1e-13, atol=0)


@pytest.mark.parametrize(
    ("y_true", "y_score", "kwargs"),
    [
        ([False], [False, True], {}),  # bool labels, lengths differ
        ([1, 1, 1], [0.2, 0.3], {}),
        ([0, 0], [[0.1, 0.9], [0.3, 0.7]], {}),
        ([2, 2, 2], [0.1, 0.2, 0.3], {"sample_weight": [1, 2]}),
        ([1, 1], [0.1, 0.2], {"max_fpr": 0.5}),
        ([0, 0], [0.1, np.nan], {}),
        (["a", "a"], [0.1, 0.2], {}),
    ],
)
def test_roc_auc_one_class_answers_before_length_checks(
    y_true: Any, y_score: Any, kwargs: dict[str, Any]
) -> None:
    """scikit-learn's binary ROC AUC returns NaN (with its warning) for a one-class
    y_true before roc_curve checks y_score's length or the weights."""

    def outcome(f: Any) -> tuple[str, list[tuple[str, str]]]:
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            try:
                r = f(np.array(y_true), np.array(y_score), **kwargs)
                got = f"{type(r).__name__}:{r!r}"
            except Exception as exc:  # compared with the reference
                got = f"{type(exc).__name__}: {exc}"
        return got, [(w.category.__name__, str(w.message)) for w in rec]

    assert outcome(te.roc_auc_score) == outcome(sk.roc_auc_score)


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_large_non_finite_scores_match_sklearn(
    name: str, dtype: Any, order: str, bad: float
) -> None:
    """From 2**20 values the finite check runs natively on the call's threads: same
    error, wherever the bad value sits, with any n_jobs (n_jobs=0 falls back to the
    NumPy check and still reports the value first)."""
    rng = np.random.default_rng(3)
    n, k = 70_000, 15
    y = (rng.random((n, k)) < 0.2).astype(np.int64)
    for at in [(0, 0), (n // 2, 7), (n - 1, k - 1)]:
        s = np.asarray(rng.random((n, k)), dtype=dtype, order=order)
        s[at] = bad
        expected = run(getattr(sk, name), y, s)
        assert expected[0] == "err"
        for n_jobs in [1, 2, 0]:
            got = run(getattr(te, name), y, s, n_jobs=n_jobs)
            assert got[:2] == expected[:2], (at, n_jobs)


def test_native_finite_check_layouts() -> None:
    """The native check covers C and Fortran order; a strided view takes the NumPy
    check; both report NaN before infinity like scikit-learn."""
    from toxeval.metrics._validation import assert_all_finite

    x = np.zeros((1 << 11, 1 << 10))
    assert_all_finite(x, n_jobs=2)
    assert_all_finite(np.asfortranarray(x), n_jobs=2)
    x[5, 5] = np.inf
    x[700, 3] = np.nan
    for arr in [x, np.asfortranarray(x), x[:, 1::2], x[::2, :]]:
        with pytest.raises(ValueError, match=r"^Input contains NaN\.$"):
            assert_all_finite(arr, n_jobs=2)
    x[700, 3] = 0.0
    with pytest.raises(ValueError, match="infinity or a value too large for dtype"):
        assert_all_finite(x.astype(np.float32), input_name="", n_jobs=1)


@pytest.mark.parametrize(
    "y",
    [
        np.array([0, 1, 1, 0]),
        np.array([1, 1, 1]),
        np.array([-1, 1, -1], dtype=np.int8),
        np.array([3, 7], dtype=np.uint16),
        np.array([True, False, True]),
        np.array([False, False]),
        np.array([0.0, 1.0, 0.0]),
        np.array([-0.0, 0.0]),
        np.array([0.0, -0.0, 1.0]),
        np.array([0.0, 1.0, -0.0]),
        np.array([2.5, -1.5, 2.5], dtype=np.float32),
        np.array([[0], [1], [1]]),
        np.array(["b", "a", "b"]),
        np.array(["x", 1, "x"], dtype=object),
        np.array([], dtype=np.int64),
    ],
)
def test_binary_labels_is_np_unique(y: np.ndarray) -> None:
    """The linear-time label scan of the binary branches returns exactly what
    ``np.unique`` returns (values, dtype, order) for a binary target."""
    from toxeval.metrics._target import binary_labels

    try:
        want = np.unique(y)
    except TypeError as e:  # unorderable objects: the same error either way
        with pytest.raises(TypeError, match=str(e)):
            binary_labels(y)
        return
    got = binary_labels(y)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert got.tolist() == want.tolist()
    assert [str(v) for v in got] == [str(v) for v in want]


def test_binary_pos_label_error_lists_the_labels_like_sklearn() -> None:
    y = np.array([2, 5, 5, 2])
    s = np.array([0.1, 0.9, 0.8, 0.3])
    with pytest.raises(ValueError) as ours:
        te.average_precision_score(y, s, pos_label=3)
    with pytest.raises(ValueError) as theirs:
        sk.average_precision_score(y, s, pos_label=3)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize(
    "name", ["average_precision_score", "roc_auc_score", "precision_recall_curve", "roc_curve"]
)
@pytest.mark.parametrize("y_score", [np.array([None], dtype=object), [None], [None, 0.5]])
def test_none_score_is_rejected(name: str, y_score: Any) -> None:
    """docs/deviations.md: a None score is NaN to toxeval (scikit-learn lets a single
    None through its object-array check)."""
    y = np.array([1]) if len(y_score) == 1 else np.array([0, 1])
    with pytest.raises(ValueError, match="Input contains NaN"):
        getattr(te, name)(y, y_score)


@pytest.mark.parametrize(
    ("y", "s", "w"),
    [
        ([1, 0, 0, 0, 0], [1.0, 0.0, 1.0, 1.0, 3.0], [1.0, 2.0, -1.0, -1.0, 2.0]),
        ([0, 0, 1, 0], [3.0, 2.0, 3.0, 0.0], [1.0, -1.0, 0.0, 1.0]),
    ],
)
def test_partial_auc_with_a_curve_that_turns_back_raises_as_sklearn(
    y: list[int], s: list[float], w: list[float]
) -> None:
    # Negative weights can make fpr go back; scikit-learn cuts it where np.searchsorted's
    # binary search lands (not at the first value above max_fpr) and its auc() raises.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="neither increasing nor decreasing"):
            sk.roc_auc_score(y, s, sample_weight=w, max_fpr=0.5)
        with pytest.raises(ValueError, match="neither increasing nor decreasing"):
            te.roc_auc_score(y, s, sample_weight=w, max_fpr=0.5)


# ----------------------------------------------------------------------------- deviations.md


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("average", AVERAGES)
def test_column_count_mismatch_raises_documented_message(name: str, average: Any) -> None:
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, (20, 4))
    y[0], y[1] = 1, 0  # both classes in every label and row mix
    s = rng.random((20, 4))
    fn = getattr(te, name)
    # fewer score columns: scikit-learn silently scores the first 3 labels (or fails
    # elsewhere); toxeval names both column counts
    with pytest.raises(ValueError) as e:
        fn(y, s[:, :3], average=average)
    assert str(e.value) == "y_true and y_score have different numbers of columns: 4 vs 3"
    # more score columns
    with pytest.raises(ValueError) as e:
        fn(y[:, :3], s, average=average)
    assert str(e.value) == "y_true and y_score have different numbers of columns: 3 vs 4"


@pytest.mark.parametrize("scalar", [np.float64, np.float32])
@pytest.mark.parametrize("average", ["binary", "macro", "micro", "weighted"])
def test_max_fpr_numpy_scalar_returns_python_float(scalar: Any, average: str) -> None:
    rng = np.random.default_rng(12)
    if average == "binary":
        y, s, kw = rng.integers(0, 2, 300), np.round(rng.random(300), 2), {}
    else:
        y = rng.integers(0, 2, (300, 3))
        s = np.round(rng.random((300, 3)), 2)
        kw = {"average": average}
    for mf in (0.1, 0.3, 0.77):
        max_fpr = scalar(mf)
        got = te.roc_auc_score(y, s, max_fpr=max_fpr, **kw)
        want = sk.roc_auc_score(y, s, max_fpr=max_fpr, **kw)
        assert type(got) is float, type(got)
        if scalar is np.float64:
            assert got == want
        else:
            assert got == pytest.approx(float(want), rel=1e-7, abs=1e-7)
    if average == "binary":
        # the value is the partial AUC computed in float64 from the float32 scalar
        mf32 = np.float32(0.3)
        got = te.roc_auc_score(y, s, max_fpr=mf32)
        assert got == sk.roc_auc_score(y, s, max_fpr=float(mf32))


def test_mask_is_rejected_for_multiclass_roc_auc() -> None:
    y, s = _MULTICLASS_Y, _MULTICLASS_S
    for mc in ("ovr", "ovo"):
        for mask in (np.ones(6, dtype=bool), np.ones((6, 3), dtype=bool)):
            with pytest.raises(ValueError, match="mask is not supported for multiclass"):
                te.roc_auc_score(y, s, multi_class=mc, mask=mask)
        # without a mask it is scikit-learn's value
        assert te.roc_auc_score(y, s, multi_class=mc) == sk.roc_auc_score(y, s, multi_class=mc)


def test_list_y_score_with_multiclass_y_true_works() -> None:
    # the multiclass fixture and two more rows, as Python lists
    y = [*_MULTICLASS_Y.tolist(), 1, 0]
    s = [*_MULTICLASS_S.tolist(), [0.3, 0.5, 0.2], [0.6, 0.1, 0.3]]
    arr = np.array(s)
    for avg in ["micro", "macro", "weighted", None]:
        got = te.average_precision_score(y, s, average=avg)
        want = sk.average_precision_score(y, arr, average=avg)
        assert_same(want, got)
    for mc in ("ovr", "ovo"):
        got = te.roc_auc_score(y, s, multi_class=mc)
        assert got == pytest.approx(sk.roc_auc_score(y, arr, multi_class=mc), rel=1e-12)


def _stored_csr(y: np.ndarray, zeros: list[tuple[int, int]]) -> Any:
    """``y`` as a CSR matrix that also stores an explicit 0 at each of ``zeros``."""
    sp = pytest.importorskip("scipy.sparse")
    rows, cols = np.nonzero(y)
    zr, zc = zip(*zeros, strict=True)
    data = np.r_[np.ones(rows.size), np.zeros(len(zeros))]
    m = sp.csr_matrix((data, (np.r_[rows, zr], np.r_[cols, zc])), shape=y.shape)
    assert m.nnz == rows.size + len(zeros)  # the zeros are stored, not summed away
    return m


def _lrl_reference(rel: np.ndarray, s: np.ndarray) -> float:
    """Label ranking loss, plain Python: per row, (relevant, irrelevant) pairs with the
    irrelevant label scored >= the relevant one, over |relevant| * |irrelevant|."""
    out = []
    for r, sc in zip(rel, s, strict=True):
        p, q = sc[r], sc[~r]
        out.append(0.0 if p.size == 0 or q.size == 0 else (p[:, None] <= q).mean())
    return float(np.mean(out))


def _one_error_reference(rel: np.ndarray, s: np.ndarray) -> float:
    """Classical one-error: a row without a relevant label is an error; a tie at the
    top counts the irrelevant fraction of the top group."""
    out = []
    for r, sc in zip(rel, s, strict=True):
        top = sc == sc.max()
        out.append(1.0 if not r.any() else float((top & ~r).sum() / top.sum()))
    return float(np.mean(out))


def test_csr_y_true_explicit_zeros_count_as_relevant() -> None:
    y = np.array([[1, 0, 1, 0], [0, 1, 0, 0], [1, 1, 0, 1], [0, 0, 1, 0], [0, 1, 1, 1]])
    s = np.array(
        [
            [0.9, 0.8, 0.1, 0.3],
            [0.2, 0.4, 0.7, 0.1],
            [0.5, 0.1, 0.6, 0.6],
            [0.3, 0.9, 0.3, 0.2],
            [0.9, 0.2, 0.4, 0.8],
        ]
    )
    zeros = [(0, 1), (1, 3), (3, 0), (3, 1)]
    csr = _stored_csr(y, zeros)
    stored = y.astype(bool)
    for i, j in zeros:
        stored[i, j] = True
    # LRAP: stored entries are relevant, exactly as scikit-learn's LRAP reads a CSR
    got = te.label_ranking_average_precision_score(csr, s)
    assert got == pytest.approx(sk.label_ranking_average_precision_score(csr, s), rel=1e-12)
    assert got == pytest.approx(sk.label_ranking_average_precision_score(stored, s), rel=1e-12)
    assert got != pytest.approx(sk.label_ranking_average_precision_score(y, s), rel=1e-6)
    # ranking loss and one-error: stored entries are the relevant labels
    lrl = te.label_ranking_loss(csr, s)
    assert lrl == pytest.approx(_lrl_reference(stored, s), rel=1e-12)
    assert lrl != pytest.approx(_lrl_reference(y.astype(bool), s), rel=1e-6)
    w = np.array([1.0, 2.0, 0.5, 1.0, 3.0])
    want = np.average(
        [_lrl_reference(stored[i : i + 1], s[i : i + 1]) for i in range(5)], weights=w
    )
    assert te.label_ranking_loss(csr, s, sample_weight=w) == pytest.approx(want, rel=1e-12)
    oe = te.one_error(csr, s)
    assert oe == pytest.approx(_one_error_reference(stored, s), rel=1e-12)
