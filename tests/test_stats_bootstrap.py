"""toxeval.stats.bootstrap: every resample's value is the metric on the
materialised resample, the interval is SciPy's, undefined resamples are counted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.stats
from sklearn import metrics as skm
from toxeval import metrics as tm
from toxeval.stats import TooFewResamplesError, bootstrap, bootstrap_indices, compare
from toxeval.stats.resampled_metric import ResampledMetric

# (toxeval metric, keyword arguments, reference on materialised rows)
CASES: list[tuple[Callable[..., Any], dict[str, Any], Callable[..., Any]]] = [
    (tm.average_precision_score, {}, skm.average_precision_score),
    (tm.average_precision_score, {"average": "weighted"}, skm.average_precision_score),
    (tm.average_precision_score, {"average": "micro"}, skm.average_precision_score),
    (tm.average_precision_score, {"average": None}, skm.average_precision_score),
    (tm.label_ranking_loss, {}, skm.label_ranking_loss),
    (tm.label_ranking_average_precision_score, {}, skm.label_ranking_average_precision_score),
    (tm.coverage_error, {}, skm.coverage_error),
    (tm.one_error, {}, tm.one_error),
    (tm.ndcg_score, {}, skm.ndcg_score),
    (tm.ndcg_score, {"k": 2}, skm.ndcg_score),
    (tm.dcg_score, {"k": 3, "log_base": 10}, skm.dcg_score),
]
IDS = [f"{f.__name__}-{kw}" for f, kw, _ in CASES]


def _resample_values(
    reference: Callable[..., Any],
    y: Any,
    s: Any,
    kwargs: dict[str, Any],
    idx: Any,
    sample_weight: Any = None,
) -> Any:
    kw = dict(kwargs)
    if sample_weight is not None:
        kw["sample_weight"] = sample_weight[idx]
    return np.asarray(reference(y[idx], s[idx], **kw), dtype=np.float64)


@pytest.mark.parametrize(("metric", "kwargs", "reference"), CASES, ids=IDS)
def test_each_resample_is_the_metric_on_the_materialised_rows(
    make_problem: Any, metric: Any, kwargs: dict[str, Any], reference: Any
) -> None:
    y, a, _ = make_problem(80, 4, seed=3, min_pos=12)
    res = bootstrap(metric, y, a, n_resamples=12, seed=7, **kwargs)
    assert res.path in ("native-ap", "native-rows")
    idx = bootstrap_indices(80, 12, seed=7)
    dist = res.bootstrap_distribution
    per_label = kwargs.get("average", "macro") is None
    assert np.all(np.asarray(res.n_undefined) == 0)
    for b in range(12):
        got = dist[:, b] if per_label else dist[b]
        np.testing.assert_allclose(
            got, _resample_values(reference, y, a, kwargs, idx[b]), rtol=1e-12
        )
    np.testing.assert_allclose(res.estimate, reference(y, a, **kwargs), rtol=1e-12)


@pytest.mark.parametrize(("metric", "kwargs", "reference"), CASES[:6], ids=IDS[:6])
def test_sample_weight_multiplies_the_counts(
    make_problem: Any, metric: Any, kwargs: dict[str, Any], reference: Any
) -> None:
    y, a, _ = make_problem(50, 3, seed=5, min_pos=10)
    w = np.random.default_rng(0).uniform(0.2, 3.0, 50)
    w[4] = 0.0
    res = bootstrap(metric, y, a, sample_weight=w, n_resamples=8, seed=2, **kwargs)
    idx = bootstrap_indices(50, 8, seed=2)
    per_label = kwargs.get("average", "macro") is None
    for b in range(8):
        got = res.bootstrap_distribution[:, b] if per_label else res.bootstrap_distribution[b]
        want = _resample_values(reference, y, a, kwargs, idx[b], sample_weight=w)
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize(
    ("metric", "kwargs"),
    [
        (tm.average_precision_score, {}),
        (tm.average_precision_score, {"average": "micro"}),
        (tm.label_ranking_loss, {}),
        (tm.ndcg_score, {}),
    ],
)
def test_mask_applies_to_every_resample_as_in_the_drop_in(
    make_problem: Any, metric: Any, kwargs: dict[str, Any]
) -> None:
    y, a, _ = make_problem(70, 4, seed=8, min_pos=15)
    mask = np.random.default_rng(1).random(y.shape) > 0.2
    mask[:15] = True
    res = bootstrap(metric, y, a, mask=mask, n_resamples=10, seed=3, **kwargs)
    assert res.path != "materialised"
    idx = bootstrap_indices(70, 10, seed=3)
    for b in range(10):
        want = metric(y[idx[b]], a[idx[b]], mask=mask[idx[b]], **kwargs)
        np.testing.assert_allclose(res.bootstrap_distribution[b], want, rtol=1e-12)


def test_native_and_materialised_paths_agree(multilabel_problem: Any) -> None:
    y, a, _ = multilabel_problem

    def wrapped(yt: Any, ys: Any, **kw: Any) -> Any:  # not a toxeval function: materialised
        return tm.average_precision_score(yt, ys, **kw)

    fast = bootstrap(tm.average_precision_score, y, a, n_resamples=15, seed=4)
    slow = bootstrap(wrapped, y, a, n_resamples=15, seed=4)
    assert (fast.path, slow.path) == ("native-ap", "materialised")
    np.testing.assert_allclose(fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-12)
    assert fast.confidence_interval == pytest.approx(slow.confidence_interval, rel=1e-12)


def test_binary_one_dimensional_input_uses_the_native_path() -> None:
    rng = np.random.default_rng(2)
    y = (rng.random(60) < 0.4).astype(int)
    y[:5] = 1
    s = np.round(rng.random(60) + 0.5 * y, 1)
    res = bootstrap("average_precision_score", y, s, n_resamples=10, seed=9)
    assert res.path == "native-ap"
    idx = bootstrap_indices(60, 10, seed=9)
    for b in range(10):
        assert res.bootstrap_distribution[b] == pytest.approx(
            skm.average_precision_score(y[idx[b]], s[idx[b]]), rel=1e-12
        )


def test_roc_auc_falls_back_to_materialised_resamples(multilabel_problem: Any) -> None:
    y, a, _ = multilabel_problem
    res = bootstrap(tm.roc_auc_score, y, a, n_resamples=6, seed=1)
    assert res.path == "materialised"
    idx = bootstrap_indices(60, 6, seed=1)
    for b in range(6):
        assert res.bootstrap_distribution[b] == pytest.approx(
            skm.roc_auc_score(y[idx[b]], a[idx[b]]), rel=1e-12
        )


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
@pytest.mark.parametrize(
    ("metric", "reference"),
    [
        (tm.average_precision_score, skm.average_precision_score),
        (tm.label_ranking_loss, skm.label_ranking_loss),
    ],
)
def test_interval_is_scipys_for_the_same_distribution(
    make_problem: Any, method: str, metric: Any, reference: Any
) -> None:
    y, a, _ = make_problem(40, 3, seed=21, min_pos=6)
    res = bootstrap(metric, y, a, n_resamples=200, seed=5, method=method)  # type: ignore[arg-type]

    def statistic(idx: Any) -> float:
        return float(reference(y[idx.astype(int)], a[idx.astype(int)]))

    ref = scipy.stats.bootstrap(
        (np.arange(40),),
        statistic,
        n_resamples=0,
        bootstrap_result=res,  # SciPy reuses our distribution, recomputes the rest
        method=method,
        vectorized=False,
    )
    assert res.confidence_interval.low == pytest.approx(ref.confidence_interval.low, rel=1e-12)
    assert res.confidence_interval.high == pytest.approx(ref.confidence_interval.high, rel=1e-12)
    assert res.standard_error == pytest.approx(ref.standard_error, rel=1e-12)


def test_bca_bias_correction_reads_a_resample_one_ulp_off_the_estimate_as_a_tie() -> None:
    # A resample equal to the estimate in exact arithmetic may come out one ulp away from
    # it (the native kernel sums in another order than scikit-learn); the bias correction
    # must not flip on that, or the BCa interval moves by a whole resample step.
    from toxeval.stats.intervals import interval

    rng = np.random.default_rng(3)
    estimate = 1 / 3
    dist = np.concatenate([rng.uniform(0.2, 0.5, 97), np.full(3, estimate)])
    jack = rng.uniform(0.3, 0.36, 25)
    exact = interval(dist, estimate, confidence_level=0.9, method="bca", jackknife=jack)
    off = dist.copy()
    off[-3:-1] = np.nextafter(estimate, 1.0)
    off[-1] = np.nextafter(estimate, 0.0)
    assert interval(off, estimate, confidence_level=0.9, method="bca", jackknife=jack) == (
        pytest.approx(exact, rel=1e-12)
    )


def test_leave_one_out_values_are_exact_for_weighted_ap(make_problem: Any) -> None:
    # BCa with sample weights: SciPy cannot weight, so check the acceleration input
    # (leave-one-out values) directly against removal of each row.
    y, a, _ = make_problem(30, 3, seed=4, min_pos=5)
    w = np.random.default_rng(3).uniform(0.5, 2.0, 30)
    for average in ("macro", "weighted", None):
        rm = ResampledMetric(
            "average_precision_score",
            tm.average_precision_score,
            y,
            w,
            None,
            {"average": average},
            None,
        )
        loo = rm.jackknife(a)
        for i in range(30):
            keep = np.delete(np.arange(30), i)
            want = skm.average_precision_score(
                y[keep], a[keep], average=average, sample_weight=w[keep]
            )
            np.testing.assert_allclose(loo[i], np.atleast_1d(want), rtol=1e-12)


def test_results_do_not_depend_on_n_jobs(make_problem: Any) -> None:
    y, a, _ = make_problem(3000, 5, seed=6, min_pos=20)
    one = bootstrap(tm.average_precision_score, y, a, n_resamples=64, seed=3, n_jobs=1)
    two = bootstrap(tm.average_precision_score, y, a, n_resamples=64, seed=3, n_jobs=2)
    np.testing.assert_array_equal(one.bootstrap_distribution, two.bootstrap_distribution)
    other = bootstrap(tm.average_precision_score, y, a, n_resamples=64, seed=4, n_jobs=2)
    assert not np.array_equal(one.bootstrap_distribution, other.bootstrap_distribution)


def test_draws_are_pinned() -> None:
    # The stream is documented (SplitMix64 + Lemire); these draws must not change.
    first = bootstrap_indices(10, 2, seed=0)
    again = bootstrap_indices(10, 2, seed=0)
    np.testing.assert_array_equal(first, again)
    assert first.shape == (2, 10) and first.min() >= 0 and first.max() < 10
    assert not np.array_equal(first[0], first[1])


def test_strata_keep_each_group_size() -> None:
    groups = np.array(["a"] * 5 + ["b"] * 3 + ["c"] * 12)
    idx = bootstrap_indices(20, 30, seed=2, strata=groups)
    for row in idx:
        drawn = groups[row]
        assert [int(np.sum(drawn == g)) for g in "abc"] == [5, 3, 12]


def test_undefined_resamples_are_excluded_and_counted(make_problem: Any) -> None:
    y, a, _ = make_problem(30, 3, seed=9, min_pos=6)
    y[:, 2] = 0
    y[17, 2] = 1  # label 2 has a single positive: resamples that miss row 17 are undefined
    res = bootstrap(tm.average_precision_score, y, a, n_resamples=50, seed=8)
    idx = bootstrap_indices(30, 50, seed=8)
    missing = [b for b in range(50) if 17 not in idx[b]]
    assert 0 < res.n_undefined == len(missing)
    assert res.bootstrap_distribution.shape == (50 - len(missing),)
    assert np.all(np.isfinite(res.bootstrap_distribution))
    per_label = bootstrap(tm.average_precision_score, y, a, n_resamples=50, seed=8, average=None)
    np.testing.assert_array_equal(per_label.n_undefined, [0, 0, len(missing)])
    assert np.isnan(per_label.bootstrap_distribution[2, missing]).all()
    with pytest.raises(ValueError, match="BCa needs every leave-one-out value"):
        bootstrap(tm.average_precision_score, y, a, n_resamples=50, method="bca")


def test_metric_undefined_on_the_full_data_is_an_error(multilabel_problem: Any) -> None:
    y, a, _ = multilabel_problem
    y = y.copy()
    y[:, 1] = 0
    with pytest.raises(ValueError, match="undefined on the full data"):
        bootstrap(tm.average_precision_score, y, a, n_resamples=10)


@pytest.mark.parametrize("metric", ["label_ranking_loss", "average_precision_score"])
def test_bca_with_equal_leave_one_out_values_is_a_clear_error(metric: str) -> None:
    # Every row is a copy of one of four rows and every score ranks its row perfectly:
    # each leave-one-out value equals the estimate, so the acceleration is 0/0. SciPy
    # returns NaN with a warning there; toxeval refuses BCa with its degenerate-data error.
    y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]] * 5)
    s = y * 0.9 + 0.05
    with pytest.raises(ValueError, match="the BCa interval cannot be computed"):
        bootstrap(metric, y, s, n_resamples=50, method="bca")
    with pytest.raises(ValueError, match="the BCa interval cannot be computed"):
        compare(metric, y, s, s, n_resamples=50, n_permutations=10, interval_method="bca")
    assert np.isfinite(bootstrap(metric, y, s, n_resamples=50).confidence_interval).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_resamples": 1}, "n_resamples must be an integer >= 2"),
        ({"n_resamples": 2.5}, "n_resamples must be an integer >= 2"),
        ({"confidence_level": 1.0}, "confidence_level must be a number in"),
        ({"method": "student"}, "method must be one of"),
        ({"seed": -1}, "seed must be an integer in"),
        ({"strata": [0, 1]}, "strata must be 1-D with one entry per row"),
        ({"sample_weight": -np.ones(60)}, "sample_weight must be non-negative"),
        ({"sample_weight": np.ones((6, 10))}, r"sample_weight must be 1-D .* shape \(6, 10\)"),
        ({"sample_weight": np.ones((1, 60))}, r"sample_weight must be 1-D .* shape \(1, 60\)"),
    ],
)
def test_bad_options_raise_clear_errors(
    multilabel_problem: Any, kwargs: dict[str, Any], message: str
) -> None:
    y, a, _ = multilabel_problem
    with pytest.raises(ValueError, match=message):
        bootstrap(tm.average_precision_score, y, a, **kwargs)


def test_unknown_metric_name_is_an_error(multilabel_problem: Any) -> None:
    y, a, _ = multilabel_problem
    with pytest.raises(ValueError, match="unknown metric 'map'"):
        bootstrap("map", y, a)


def test_drop_in_errors_pass_through(multilabel_problem: Any) -> None:
    y, a, _ = multilabel_problem
    with pytest.raises(ValueError, match="average"):
        bootstrap(tm.average_precision_score, y, a, average="mean")


@pytest.mark.parametrize("average", ["macro", "weighted", "micro", None])
@pytest.mark.parametrize("variant", ["plain", "ties", "mask", "float32"])
def test_unweighted_ap_equals_unit_sample_weight(
    make_problem: Any, average: Any, variant: str
) -> None:
    # Without sample_weight, AP resamples are evaluated from integer draw counts
    # (bucketed per label); with sample_weight the sorted walk over f64 weights
    # runs. Unit weights give the same numbers, so the two paths agree bit for bit.
    y, a, _ = make_problem(500, 4, seed=8, min_pos=25)
    kw: dict[str, Any] = {"average": average, "n_resamples": 30, "seed": 1}
    if variant == "ties":
        a = np.round(a * 4) / 4
    elif variant == "mask":
        kw["mask"] = np.random.default_rng(3).random(y.shape) < 0.85
    elif variant == "float32":
        a = a.astype(np.float32)
    plain = bootstrap(tm.average_precision_score, y, a, **kw)
    unit = bootstrap(tm.average_precision_score, y, a, sample_weight=np.ones(y.shape[0]), **kw)
    assert plain.path == unit.path == "native-ap"
    np.testing.assert_array_equal(plain.n_undefined, unit.n_undefined)
    np.testing.assert_array_equal(plain.bootstrap_distribution, unit.bootstrap_distribution)


ROW_METRICS = [
    (tm.label_ranking_loss, {}),
    (tm.label_ranking_average_precision_score, {}),
    (tm.coverage_error, {}),
    (tm.one_error, {}),
    (tm.ndcg_score, {}),
    (tm.dcg_score, {"k": 2}),
]


@pytest.mark.parametrize(
    ("metric", "kwargs"), ROW_METRICS, ids=lambda v: getattr(v, "__name__", "")
)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_rows_without_a_known_label_are_not_rows_of_any_resample(
    make_problem: Any, metric: Any, kwargs: dict[str, Any], weighted: bool
) -> None:
    # A row whose labels are all unknown is not a row of a per-row metric (the drop-in
    # leaves it out), so a resample that draws it must not count it either: its mean is
    # over the known rows drawn, not over every row drawn.
    y, a, b = make_problem(60, 4, seed=11, min_pos=12)
    mask = np.ones(y.shape, dtype=bool)
    mask[::5] = False  # 12 rows with no known label
    mask[1, 0] = False  # and some partly known rows
    w = np.random.default_rng(4).uniform(0.5, 2.0, 60) if weighted else None
    res = bootstrap(metric, y, a, mask=mask, sample_weight=w, n_resamples=15, seed=5, **kwargs)
    assert res.path == "native-rows"
    idx = bootstrap_indices(60, 15, seed=5)

    def on(rows: Any, scores: Any = a) -> float:
        kw = dict(kwargs) if w is None else {**kwargs, "sample_weight": w[rows]}
        return float(metric(y[rows], scores[rows], mask=mask[rows], **kw))

    for r in range(15):
        assert res.bootstrap_distribution[r] == pytest.approx(on(idx[r]), rel=1e-12)
    # leave-one-out values (BCa's acceleration) and the paired comparison agree too
    rm = ResampledMetric(metric.__name__, metric, y, w, mask, dict(kwargs), None)
    loo = rm.jackknife(a)[:, 0]
    for i in range(60):
        assert loo[i] == pytest.approx(on(np.delete(np.arange(60), i)), rel=1e-12)
    paired = compare(metric, y, a, b, mask=mask, sample_weight=w, n_resamples=15, seed=5, **kwargs)
    for r in range(15):
        want = on(idx[r]) - on(idx[r], b)
        assert paired.bootstrap_distribution[r] == pytest.approx(want, rel=1e-12, abs=1e-15)


def _ap_path(y: Any) -> str:
    return ResampledMetric(
        "average_precision_score", tm.average_precision_score, y, None, None, {}, None
    ).path


@pytest.mark.parametrize("dtype", [bool, np.int8, np.uint8, np.int64, np.float32, np.float64])
def test_zero_one_label_matrices_of_any_dtype_take_the_native_ap_path(
    multilabel_problem: Any, dtype: Any
) -> None:
    y = multilabel_problem[0].astype(dtype)
    assert _ap_path(y) == "native-ap"
    assert _ap_path(y[:0]) == "native-ap"  # no value other than 0 and 1


@pytest.mark.parametrize(
    ("dtype", "bad"), [(np.int64, 2), (np.int64, -1), (np.float64, 0.5), (np.float64, np.nan)]
)
def test_labels_other_than_zero_and_one_leave_the_native_ap_path(
    multilabel_problem: Any, dtype: Any, bad: Any
) -> None:
    y = multilabel_problem[0].astype(dtype)
    y[37, 2] = bad
    assert _ap_path(y) == "materialised"


@pytest.mark.parametrize(
    ("metric", "reference", "int_mask"),
    [
        (tm.roc_auc_score, skm.roc_auc_score, False),
        (tm.average_precision_score, skm.average_precision_score, True),
    ],
    ids=["roc_auc", "ap-int-mask"],
)
def test_materialised_per_label_resamples_leave_out_only_the_undefined_label(
    make_problem: Any, metric: Any, reference: Any, int_mask: bool
) -> None:
    # A resample that misses label 2's single positive is undefined for label 2 only:
    # the other labels' values on it are kept, as on the native path, or their
    # intervals would be conditioned on a draw of another label's positive. (A 0/1
    # integer mask, all known, sends AP to the materialised path.)
    y, a, _ = make_problem(30, 3, seed=9, min_pos=6)
    y[:, 2] = 0
    y[17, 2] = 1
    mask = np.ones(y.shape, dtype=np.int64) if int_mask else None
    res = bootstrap(metric, y, a, mask=mask, n_resamples=40, seed=8, average=None)
    assert res.path == "materialised"
    idx = bootstrap_indices(30, 40, seed=8)
    missing = [b for b in range(40) if 17 not in idx[b]]
    assert missing
    np.testing.assert_array_equal(res.n_undefined, [0, 0, len(missing)])
    for b in range(40):
        for j in (0, 1):
            want = reference(y[idx[b], j], a[idx[b], j])
            assert res.bootstrap_distribution[j, b] == pytest.approx(want, rel=1e-12)
        assert np.isnan(res.bootstrap_distribution[2, b]) == (b in missing)


def test_weighted_average_without_weighted_positives_is_undefined_not_zero() -> None:
    # scikit-learn's average="weighted" returns 0, without a warning, when the label
    # weights (the positives' sample weights) sum to about 0: no weighted positive was
    # drawn. That is an undefined resample, left out on every path, never an AP of 0.
    y = np.array([[1, 0], [0, 1], [0, 0], [0, 0], [1, 1], [0, 0]])
    s = np.random.default_rng(1).random((6, 2))
    w = np.array([1.0, 1.0, 1.0, 1.0, 0.0, 1.0])
    idx = bootstrap_indices(6, 30, seed=0)
    no_positive = (y[idx] * w[idx][..., None]).sum(axis=(1, 2)) == 0
    assert no_positive.any()
    kw: dict[str, Any] = {"sample_weight": w, "average": "weighted", "n_resamples": 30}
    fast = bootstrap(tm.average_precision_score, y, s, **kw)
    # a 0/1 integer mask (all known) sends the same metric to the materialised path
    slow = bootstrap(tm.average_precision_score, y, s, mask=np.ones(y.shape, int), **kw)
    assert (fast.path, slow.path) == ("native-ap", "materialised")
    np.testing.assert_allclose(fast.bootstrap_distribution, slow.bootstrap_distribution, rtol=1e-12)
    assert fast.n_undefined == slow.n_undefined >= int(no_positive.sum())
    roc = bootstrap(tm.roc_auc_score, y, s, **kw)
    assert roc.n_undefined >= int(no_positive.sum())


@pytest.mark.parametrize("metric", [tm.average_precision_score, tm.roc_auc_score])
def test_weighted_average_with_label_weights_about_zero_is_undefined(
    make_problem: Any, metric: Any
) -> None:
    # Weights so small that the label weights sum to under 1e-8: the drop-in returns
    # 0 there, so the estimate is no AP at all, and no resample may be scored either.
    y, a, _ = make_problem(30, 3, seed=2, min_pos=6)
    w = np.full(30, 1e-12)
    with pytest.raises(ValueError, match="undefined on the full data"):
        bootstrap(metric, y, a, sample_weight=w, average="weighted", n_resamples=10)


def test_weighted_average_resamples_with_label_weights_about_zero_are_left_out() -> None:
    # Positives of weight 1e-10 beside one of weight 1: a resample that misses the
    # heavy positive has label weights of about 0 (the drop-in's 0), so it is undefined.
    y = np.array([[1, 0], [0, 1], [1, 1], [0, 0], [0, 0], [1, 0], [0, 1], [0, 0]])
    s = np.random.default_rng(4).random((8, 2))
    w = np.array([1.0, 1e-10, 1e-10, 1.0, 1.0, 1e-10, 1e-10, 1.0])
    res = bootstrap(
        tm.average_precision_score, y, s, sample_weight=w, average="weighted", n_resamples=40
    )
    idx = bootstrap_indices(8, 40, seed=0)
    about_zero = np.isclose((y[idx] * w[idx][..., None]).sum(axis=(1, 2)), 0)
    assert about_zero.any()
    assert res.n_undefined == int(about_zero.sum())


def test_too_few_resamples_of_a_single_value_names_no_label() -> None:
    # label ranking loss is one value, not a label's: the message must not send the
    # reader to "label 0"; with average=None it names the label.
    y = np.array([[1, 0], [0, 1]])
    s = np.array([[0.9, 0.2], [0.3, 0.6]])
    m = np.array([[True, True], [False, False]])
    seed = next(
        sd for sd in range(200) if (bootstrap_indices(2, 2, seed=sd) == 0).any(axis=1).sum() == 1
    )
    with pytest.raises(TooFewResamplesError, match="defined on only 1 of 2") as info:
        bootstrap("label_ranking_loss", y, s, mask=m, n_resamples=2, seed=seed)
    assert "label" not in str(info.value).replace("label_ranking_loss", "")
    y = np.array([[1, 1], [0, 0], [1, 0]])
    seed = next(
        sd for sd in range(200) if (bootstrap_indices(3, 2, seed=sd) == 0).any(axis=1).sum() == 1
    )
    with pytest.raises(TooFewResamplesError, match=r"\(label \d\)"):
        bootstrap(
            "average_precision_score",
            y,
            np.random.default_rng(0).random((3, 2)),
            average=None,
            n_resamples=2,
            seed=seed,
        )


def test_one_row_is_refused_as_scipy_refuses_one_observation() -> None:
    y, s = np.array([[1, 0, 1]]), np.array([[0.9, 0.2, 0.6]])
    with pytest.raises(ValueError, match="two or more observations"):
        scipy.stats.bootstrap((np.array([0.5]),), np.mean)
    with pytest.raises(ValueError, match="resampling needs two or more rows, got 1"):
        bootstrap("label_ranking_loss", y, s, n_resamples=10)
    with pytest.raises(ValueError, match="resampling needs two or more rows, got 1"):
        compare("label_ranking_loss", y, s, s[:, ::-1], n_resamples=10)


def test_an_interval_resting_on_few_resamples_warns_that_it_is_conditioned() -> None:
    import warnings

    from toxeval.stats import ConditionedIntervalWarning

    rng = np.random.default_rng(0)
    y = (rng.random((200, 3)) < 0.3).astype(int)
    y[:, 2] = 0
    y[7, 2] = 1  # one positive: about 37% of resamples miss it
    s = rng.random((200, 3))
    with pytest.warns(ConditionedIntervalWarning, match=r"labels 2 \(\d+\)"):
        res = bootstrap("average_precision_score", y, s, average=None, n_resamples=200)
    assert res.n_undefined[2] > 10
    with pytest.warns(ConditionedIntervalWarning, match="undefined on more than 5%"):
        bootstrap("average_precision_score", y, s, n_resamples=200)  # macro
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # common labels: nothing to say
        bootstrap("average_precision_score", y[:, :2], s[:, :2], n_resamples=200)
