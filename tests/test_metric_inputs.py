"""The array forms the drop-in metrics take, each ranked as scikit-learn ranks it or
rejected as it rejects it: uint64 scores beyond the int64 range (ranked by value: not
wrapped to negative int64, not tied as float64), NumPy masked arrays (masked entries are
an error; the data under a mask is never used), bool and complex scores, sample weights
that are not real 1-D numbers, and thread counts (values do not depend on n_jobs; n_jobs
beyond the cores is capped)."""

from __future__ import annotations

import os
import re
import warnings
from typing import Any

import numpy as np
import pytest
from helpers import RANKING
from sklearn import metrics as sk
from toxeval import metrics as te

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


def _masked_calls() -> list[tuple[str, Any]]:
    y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
    s = np.array([[0.9, 0.1, 0.8], [0.2, 0.7, 0.3], [0.6, 0.5, 0.4], [0.1, 0.2, 0.9]])
    ms = np.ma.masked_array(s, mask=np.zeros_like(s, dtype=bool))
    ms.mask[1, 1] = True
    my = np.ma.masked_array(y, mask=np.zeros_like(y, dtype=bool))
    my.mask[0, 0] = True
    calls: list[tuple[str, Any]] = []
    for name in [*RANKING, "one_error", "average_precision_score", "roc_auc_score"]:
        f = getattr(te, name)
        calls.append((f"{name}-score", lambda f=f: f(y, ms)))
        calls.append((f"{name}-true", lambda f=f: f(my, s)))
    calls.append(("report-score", lambda: te.multilabel_report(y, ms)))
    calls.append(("report-true", lambda: te.multilabel_report(my, s)))
    calls.append(("binary-ap", lambda: te.average_precision_score(y[:, 0], ms[:, 1])))
    calls.append(("roc_curve", lambda: te.roc_curve(y[:, 0], ms[:, 1])))
    calls.append(("pr_curve", lambda: te.precision_recall_curve(my[:, 0], s[:, 0])))
    return calls


@pytest.mark.parametrize("case", _masked_calls(), ids=lambda c: c[0])
def test_masked_arrays_with_masked_entries_are_rejected(case: tuple[str, Any]) -> None:
    with pytest.raises(ValueError, match="masked arrays are not supported"):
        case[1]()


def test_masked_arrays_without_masked_entries_are_their_data() -> None:
    rng = np.random.default_rng(0)
    y = (rng.random((30, 4)) < 0.4).astype(np.int64)
    y[0], y[1] = [1, 0, 1, 0], [0, 1, 0, 1]
    s = rng.random((30, 4))
    my, ms = np.ma.masked_array(y), np.ma.masked_array(s, mask=np.zeros(s.shape, bool))
    for name in [*RANKING, "average_precision_score", "roc_auc_score"]:
        assert getattr(te, name)(my, ms) == getattr(te, name)(y, s), name
    assert te.multilabel_report(my, ms)["ap_macro"] == te.multilabel_report(y, s)["ap_macro"]


def _toxeval_threads() -> int:
    """Native threads named toxeval-<i> (the pools' workers), from /proc."""
    names = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except OSError:  # the thread ended meanwhile
            continue
    return sum(1 for n in names if n.startswith("toxeval-"))


def test_binary_problem_values_do_not_depend_on_threads() -> None:
    # Large enough for the count walk.
    rng = np.random.default_rng(7)
    n = 300_000
    y = rng.random(n) < 0.1
    for s in [rng.random(n), np.round(rng.random(n), 2), rng.random(n).astype(np.float32)]:
        for name in ["average_precision_score", "roc_auc_score"]:
            one = getattr(te, name)(y, s, n_jobs=1)
            two = getattr(te, name)(y, s, n_jobs=2)
            assert one == two, name  # bit for bit
            assert one == pytest.approx(getattr(sk, name)(y, s), rel=1e-12)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_n_jobs_beyond_the_cores_is_capped() -> None:
    y = (np.random.default_rng(1).random((100_000, 2)) < 0.3).astype(np.int64)
    s = np.random.default_rng(2).random((100_000, 2))
    before = _toxeval_threads()
    want = te.label_ranking_loss(y, s, n_jobs=1)
    for n_jobs in [64, 10**6, 10**18]:
        assert te.label_ranking_loss(y, s, n_jobs=n_jobs) == want
    # Rayon names its workers toxeval-<i>; at most the cores' pools are alive.
    cores = len(os.sched_getaffinity(0))
    assert _toxeval_threads() - before <= cores * (cores + 1) // 2


@pytest.mark.parametrize(
    ("name", "kw"),
    [
        ("label_ranking_average_precision_score", {}),
        ("dcg_score", {}),
        ("ndcg_score", {}),
        ("dcg_score", {"ignore_ties": True}),
        ("ndcg_score", {"ignore_ties": True}),
        ("label_ranking_loss", {}),
        ("coverage_error", {}),
    ],
)
def test_bool_scores_as_sklearn(name: str, kw: dict[str, Any]) -> None:
    # scikit-learn ranks -y_score in LRAP and tie-averaged DCG: NumPy's TypeError for a
    # bool array; the other metrics rank bools as 0/1.
    y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    s = np.array([[True, False, True], [False, True, True], [True, False, False]])
    try:
        want = getattr(sk, name)(y, s, **kw)
    except TypeError as e:
        with pytest.raises(TypeError, match=re.escape(str(e))):
            getattr(te, name)(y, s, **kw)
    else:
        assert getattr(te, name)(y, s, **kw) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    ("name", "two_d"),
    [
        *((n, False) for n in ["average_precision_score", "roc_auc_score", "roc_curve"]),
        ("precision_recall_curve", False),
        ("average_precision_score", True),
        ("roc_auc_score", True),
    ],
)
def test_complex_scores_are_rejected_as_sklearn(name: str, two_d: bool) -> None:
    # Casting complex scores to float would drop the imaginary parts (with a warning).
    y: Any = [0, 1, 1, 0]
    s: Any = np.array([0.1, 0.4, 0.35, 0.8]) + 0j
    if two_d:
        y, s = np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), np.stack([s, s[::-1]], axis=1)
    with pytest.raises(ValueError) as want:
        getattr(sk, name)(y, s)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way either
        with pytest.raises(ValueError, match=re.escape(str(want.value))):
            getattr(te, name)(y, s)


@pytest.mark.parametrize("name", RANKING)
@pytest.mark.parametrize("weight", [["1", "2", "3"], np.ones((3, 1))], ids=["str", "2d"])
def test_ranking_weights_that_are_not_real_1d_raise_type_error(name: str, weight: Any) -> None:
    # scikit-learn raises TypeError for these (from NumPy's average): strings are not
    # read as numbers.
    y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    s = np.random.default_rng(0).random((3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError):
            getattr(sk, name)(y, s, sample_weight=weight)
        with pytest.raises(TypeError):
            getattr(te, name)(y, s, sample_weight=weight)


@pytest.mark.parametrize("name", RANKING)
def test_complex_ranking_weights_are_rejected(name: str) -> None:
    # scikit-learn averages with them and returns a complex number (docs/deviations.md).
    y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    s = np.random.default_rng(0).random((3, 3))
    with pytest.raises(TypeError, match="sample_weight must be real numbers"):
        getattr(te, name)(y, s, sample_weight=np.array([1 + 1j, 1, 1]))
