"""``n_jobs`` of every function that takes it: an int or None, else scikit-learn's style
of ``InvalidParameterError`` naming the parameter and the function; ``None`` means all
cores (scikit-learn/joblib: one job), which is stated where users look; values do not
depend on it; a count beyond the cores is capped."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn import metrics as sk
from sklearn.utils._param_validation import InvalidParameterError as SkInvalidParameterError
from toxeval import metrics, stats

ROOT = Path(__file__).resolve().parents[1]

Y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
S = np.array([[0.9, 0.2, 0.4], [0.1, 0.8, 0.3], [0.7, 0.6, 0.5], [0.2, 0.1, 0.9]])

CALLS: dict[str, Any] = {
    "average_precision_score": lambda **kw: metrics.average_precision_score(Y, S, **kw),
    "roc_auc_score": lambda **kw: metrics.roc_auc_score(Y, S, **kw),
    "label_ranking_loss": lambda **kw: metrics.label_ranking_loss(Y, S, **kw),
    "label_ranking_average_precision_score": lambda **kw: (
        metrics.label_ranking_average_precision_score(Y, S, **kw)
    ),
    "coverage_error": lambda **kw: metrics.coverage_error(Y, S, **kw),
    "one_error": lambda **kw: metrics.one_error(Y, S, **kw),
    "dcg_score": lambda **kw: metrics.dcg_score(Y, S, **kw),
    "ndcg_score": lambda **kw: metrics.ndcg_score(Y, S, **kw),
    "multilabel_report": lambda **kw: metrics.multilabel_report(Y, S, **kw)["lrap"],
    "kendalltau": lambda **kw: tuple(stats.kendalltau(S[:, 0], S[:, 1], **kw)),
    "bootstrap": lambda **kw: tuple(
        stats.bootstrap("label_ranking_loss", Y, S, n_resamples=20, **kw).confidence_interval
    ),
    # a metric of the user's: n_jobs was not checked at all (True, 1.5, 0 accepted)
    "bootstrap of a callable": lambda **kw: tuple(
        stats.bootstrap(
            lambda y, s: float(np.mean(s[y == 1])), Y, S, n_resamples=20, **kw
        ).confidence_interval
    ),
    "compare": lambda **kw: (
        stats.compare(
            "average_precision_score", Y, S, S[::-1], n_resamples=20, n_permutations=20, **kw
        ).pvalue_bootstrap
    ),
}


@pytest.mark.parametrize("func", sorted(CALLS))
@pytest.mark.parametrize("bad", [1.5, "2", 2.0, True, [2]])
def test_n_jobs_that_is_not_an_int_is_a_parameter_error(func: str, bad: Any) -> None:
    with pytest.raises(metrics.InvalidParameterError) as info:
        CALLS[func](n_jobs=bad)
    # bootstrap and compare name themselves, not the metric they resample (they have no
    # scikit-learn counterpart whose error class to take)
    named = func.split()[0]
    assert str(info.value) == (
        f"The 'n_jobs' parameter of {named} must be an int or None. Got {bad!r} instead."
    )
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    if named not in ("bootstrap", "compare"):
        assert isinstance(info.value, SkInvalidParameterError)


@pytest.mark.parametrize("func", sorted(CALLS))
def test_n_jobs_ints_of_any_kind_give_the_same_result(func: str) -> None:
    want = CALLS[func](n_jobs=None)
    for n_jobs in (1, 2, -1, np.int64(2), np.int32(1)):
        assert CALLS[func](n_jobs=n_jobs) == want


@pytest.mark.parametrize("func", sorted(CALLS))
def test_n_jobs_beyond_a_64_bit_int_is_capped_like_any_large_count(func: str) -> None:
    # 2**63 and beyond raised OverflowError (the native int is 64 bits); 10**9 was capped
    want = CALLS[func](n_jobs=None)
    for n_jobs in (2**63, 10**30, -(10**30)):
        assert CALLS[func](n_jobs=n_jobs) == want


@pytest.mark.parametrize("func", sorted(CALLS))
def test_n_jobs_zero_is_an_error(func: str) -> None:
    with pytest.raises(ValueError, match="n_jobs == 0"):
        CALLS[func](n_jobs=0)


@pytest.mark.parametrize(
    "doc", ["README.md", "docs/python-api.md", "python/toxeval/metrics/__init__.py"]
)
def test_n_jobs_none_means_all_cores_is_stated(doc: str) -> None:
    path = ROOT / doc
    if not path.is_file():  # tests run against an installed package, away from the repo
        pytest.skip(f"{doc} is not beside the tests")
    text = " ".join(path.read_text().split())
    assert "`n_jobs=None` means all cores" in text or "``n_jobs=None`` means all cores" in text
    assert "scikit-learn" in text and "one" in text


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
            one = getattr(metrics, name)(y, s, n_jobs=1)
            two = getattr(metrics, name)(y, s, n_jobs=2)
            assert one == two, name  # bit for bit
            assert one == pytest.approx(getattr(sk, name)(y, s), rel=1e-12)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_n_jobs_beyond_the_cores_is_capped() -> None:
    y = (np.random.default_rng(1).random((100_000, 2)) < 0.3).astype(np.int64)
    s = np.random.default_rng(2).random((100_000, 2))
    before = _toxeval_threads()
    want = metrics.label_ranking_loss(y, s, n_jobs=1)
    for n_jobs in [64, 10**6, 10**18]:
        assert metrics.label_ranking_loss(y, s, n_jobs=n_jobs) == want
    # Rayon names its workers toxeval-<i>; at most the cores' pools are alive.
    cores = len(os.sched_getaffinity(0))
    assert _toxeval_threads() - before <= cores * (cores + 1) // 2
