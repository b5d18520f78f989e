"""toxeval.stats.compare and holm: paired bootstrap on shared resamples, the
approximate randomization test, Holm's correction."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from toxeval import metrics as tm
from toxeval.stats import bootstrap, compare, holm


def holm_reference(p: list[float]) -> list[float]:
    """Holm's step-down procedure written out directly."""
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


@pytest.mark.parametrize(
    "p",
    [
        [0.01, 0.04, 0.03, 0.2],
        [0.5],
        [0.001, 0.001, 0.9, 0.02, 0.04, 0.0],
        list(np.random.default_rng(0).random(15)),
    ],
)
def test_holm_matches_the_direct_procedure(p: list[float]) -> None:
    np.testing.assert_allclose(holm(p), holm_reference(p), rtol=0, atol=1e-15)


def test_holm_rejects_nan_and_out_of_range() -> None:
    with pytest.raises(ValueError, match=r"p-values must be numbers in \[0, 1\]"):
        holm([0.1, float("nan")])
    with pytest.raises(ValueError, match=r"p-values must be numbers in \[0, 1\]"):
        holm([1.5])


@pytest.mark.parametrize(
    ("metric", "kwargs"),
    [
        (tm.average_precision_score, {}),
        (tm.average_precision_score, {"average": "micro"}),
        (tm.label_ranking_loss, {}),
        (tm.coverage_error, {}),
    ],
)
def test_paired_bootstrap_uses_the_same_resamples_for_both_systems(
    multilabel_problem: Any, metric: Any, kwargs: dict[str, Any]
) -> None:
    y, a, b = multilabel_problem
    res = compare(metric, y, a, b, n_resamples=30, n_permutations=30, seed=6, **kwargs)
    ra = bootstrap(metric, y, a, n_resamples=30, seed=6, **kwargs)
    rb = bootstrap(metric, y, b, n_resamples=30, seed=6, **kwargs)
    np.testing.assert_array_equal(
        res.bootstrap_distribution, ra.bootstrap_distribution - rb.bootstrap_distribution
    )
    assert res.difference == pytest.approx(ra.estimate - rb.estimate, rel=1e-12)
    d = res.bootstrap_distribution
    tail = min(np.sum(d <= 0), np.sum(d >= 0))
    assert res.pvalue_bootstrap == min(1.0, 2 * (1 + tail) / (1 + d.shape[0]))


@pytest.mark.parametrize(
    ("metric", "kwargs"),
    [
        (tm.average_precision_score, {}),
        (tm.average_precision_score, {"average": "weighted"}),
        (tm.average_precision_score, {"average": "micro"}),
        (tm.label_ranking_average_precision_score, {}),
        (tm.ndcg_score, {}),
    ],
)
def test_permutations_equal_metric_on_materialised_swaps(
    multilabel_problem: Any, metric: Any, kwargs: dict[str, Any]
) -> None:
    y, a, b = multilabel_problem

    def wrapped(yt: Any, ys: Any, **kw: Any) -> Any:  # forces the materialised path
        return metric(yt, ys, **kw)

    fast = compare(metric, y, a, b, method="permutation", n_permutations=25, seed=3, **kwargs)
    slow = compare(wrapped, y, a, b, method="permutation", n_permutations=25, seed=3, **kwargs)
    assert fast.path != "materialised" and slow.path == "materialised"
    np.testing.assert_allclose(
        fast.permutation_distribution, slow.permutation_distribution, rtol=1e-12, atol=1e-15
    )
    d = fast.permutation_distribution
    hits = np.sum(np.abs(d) >= abs(fast.difference) * (1 - 1e-12))
    assert fast.pvalue_permutation == (1 + hits) / (1 + d.shape[0])
    assert fast.confidence_interval is None and fast.bootstrap_distribution is None


def test_identical_systems_have_p_one(multilabel_problem: Any) -> None:
    y, a, _ = multilabel_problem
    res = compare(tm.average_precision_score, y, a, a.copy(), n_resamples=20, n_permutations=20)
    assert res.difference == 0.0
    assert res.pvalue_bootstrap == 1.0 and res.pvalue_permutation == 1.0
    assert res.confidence_interval == (0.0, 0.0)


def test_a_clearly_better_system_is_significant(make_problem: Any) -> None:
    y, a, _ = make_problem(300, 3, seed=2, min_pos=10)
    noise = np.random.default_rng(5).random(y.shape)
    res = compare(tm.average_precision_score, y, a, noise, n_resamples=200, n_permutations=200)
    assert res.difference > 0.2
    assert res.confidence_interval is not None and res.confidence_interval.low > 0
    assert res.pvalue_bootstrap < 0.05 and res.pvalue_permutation < 0.05


def test_per_label_comparison_adds_holm(multilabel_problem: Any) -> None:
    y, a, b = multilabel_problem
    res = compare(
        tm.average_precision_score, y, a, b, per_label=True, n_resamples=40, n_permutations=40
    )
    assert res.difference.shape == (4,)
    assert res.bootstrap_distribution is not None and res.bootstrap_distribution.shape == (4, 40)
    np.testing.assert_array_equal(res.pvalue_bootstrap_holm, holm(res.pvalue_bootstrap))
    np.testing.assert_array_equal(res.pvalue_permutation_holm, holm(res.pvalue_permutation))
    scalar = compare(tm.average_precision_score, y, a, b, n_resamples=10, n_permutations=10)
    assert scalar.pvalue_bootstrap_holm is None


def test_bca_interval_of_the_difference(multilabel_problem: Any) -> None:
    y, a, b = multilabel_problem
    res = compare(
        tm.label_ranking_loss, y, a, b, method="bootstrap", interval_method="bca", n_resamples=100
    )
    assert res.confidence_interval is not None
    assert res.confidence_interval.low < res.difference < res.confidence_interval.high


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "paired"}, "method must be 'both', 'bootstrap' or 'permutation'"),
        ({"n_permutations": 0}, "n_permutations must be an integer >= 2"),
        ({"per_label": True, "average": "macro"}, "per_label=True sets average=None"),
        ({"per_label": "yes"}, "per_label must be True or False"),
    ],
)
def test_bad_options_raise_clear_errors(
    multilabel_problem: Any, kwargs: dict[str, Any], message: str
) -> None:
    y, a, b = multilabel_problem
    with pytest.raises(ValueError, match=message):
        compare(tm.average_precision_score, y, a, b, **kwargs)


@pytest.mark.parametrize("metric", ["label_ranking_loss", tm.coverage_error, tm.kendalltau])
def test_per_label_needs_a_metric_with_per_category_values(
    multilabel_problem: Any, metric: Any
) -> None:
    # A per-row metric has no average= (no per-category values): a clear error, not the
    # drop-in's TypeError about an unexpected keyword.
    y, a, b = multilabel_problem
    with pytest.raises(ValueError, match="per_label=True needs a metric with an average="):
        compare(metric, y, a, b, per_label=True, n_resamples=10, n_permutations=10)


@pytest.mark.parametrize("variant", ["mask", "float32", "mixed-dtypes", "strata", "weights"])
@pytest.mark.parametrize("average", ["macro", "micro", None])
def test_paired_bootstrap_equals_two_single_bootstraps(
    make_problem: Any, variant: str, average: Any
) -> None:
    # Both systems are evaluated in one pass over each resample; each system's
    # values must still be exactly those of its own bootstrap with the same seed,
    # for any n_jobs.
    y, a, b = make_problem(400, 4, seed=5, min_pos=30)
    kw: dict[str, Any] = {"average": average, "n_resamples": 40, "seed": 9}
    rng = np.random.default_rng(2)
    if variant == "mask":
        kw["mask"] = rng.random(y.shape) < 0.9
    elif variant == "float32":
        a, b = a.astype(np.float32), b.astype(np.float32)
    elif variant == "mixed-dtypes":
        b = b.astype(np.float32)
    elif variant == "strata":
        kw["strata"] = rng.integers(0, 3, y.shape[0])
    else:
        kw["sample_weight"] = rng.uniform(0.5, 2.0, y.shape[0])
    for n_jobs in (1, 2):
        per_label = {"per_label": True} if average is None else {"average": average}
        ckw = {k: v for k, v in kw.items() if k != "average"} | per_label
        res = compare(tm.average_precision_score, y, a, b, method="bootstrap", n_jobs=n_jobs, **ckw)
        ra = bootstrap(tm.average_precision_score, y, a, n_jobs=n_jobs, **kw)
        rb = bootstrap(tm.average_precision_score, y, b, n_jobs=n_jobs, **kw)
        assert np.all(np.asarray(ra.n_undefined) == 0)
        assert np.all(np.asarray(rb.n_undefined) == 0)
        np.testing.assert_array_equal(
            res.bootstrap_distribution, ra.bootstrap_distribution - rb.bootstrap_distribution
        )


@pytest.mark.parametrize("average", ["macro", "micro", None])
@pytest.mark.parametrize(
    "dtype_b", [np.float32, np.int64], ids=["float64-vs-float32", "float64-vs-int64"]
)
def test_permutations_of_systems_with_different_score_dtypes(
    multilabel_problem: Any, average: Any, dtype_b: Any
) -> None:
    # A permutation mixes rows of both systems: the mixed scores are compared as one
    # array (np.where's common dtype), never as two dtypes' incomparable sort keys.
    y, a, b = multilabel_problem
    b = (b * 100).astype(dtype_b)

    def wrapped(yt: Any, ys: Any, **kw: Any) -> Any:  # forces the materialised path
        return tm.average_precision_score(yt, ys, **kw)

    kw: dict[str, Any] = {"method": "permutation", "n_permutations": 20, "seed": 3}
    fast = compare(tm.average_precision_score, y, a, b, average=average, **kw)
    slow = compare(wrapped, y, a, b, average=average, **kw)
    assert fast.path == "native-ap"
    np.testing.assert_allclose(
        fast.permutation_distribution, slow.permutation_distribution, rtol=1e-12, atol=1e-15
    )
    assert fast.pvalue_permutation == slow.pvalue_permutation


def test_the_native_permutation_kernel_refuses_two_dtypes() -> None:
    # its sort keys encode the dtype, so two dtypes could not be merged: a clear error
    # for any caller that does not convert first
    from toxeval import _core

    y = np.array([[True, False], [False, True], [True, True]])
    a = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.6]])
    with pytest.raises(TypeError, match="different dtypes \\(float64 and float32\\)"):
        _core.bootstrap_ap_permutations(
            a, a.astype(np.float32), y, None, None, average="macro", seed=0, n_permutations=4
        )
