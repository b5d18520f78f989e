"""``n_jobs`` of every function that takes it: an int or None, else scikit-learn's style
of ``InvalidParameterError`` naming the parameter and the function; ``None`` means all
cores (scikit-learn/joblib: one job), which is stated where users look."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
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
}


@pytest.mark.parametrize("func", sorted(CALLS))
@pytest.mark.parametrize("bad", [1.5, "2", 2.0, True, [2]])
def test_n_jobs_that_is_not_an_int_is_a_parameter_error(func: str, bad: Any) -> None:
    with pytest.raises(SkInvalidParameterError) as info:
        CALLS[func](n_jobs=bad)
    assert str(info.value) == (
        f"The 'n_jobs' parameter of {func} must be an int or None. Got {bad!r} instead."
    )
    assert isinstance(info.value, (ValueError, TypeError))
    assert isinstance(info.value, metrics.InvalidParameterError)


@pytest.mark.parametrize("func", sorted(CALLS))
def test_n_jobs_ints_of_any_kind_give_the_same_result(func: str) -> None:
    want = CALLS[func](n_jobs=None)
    for n_jobs in (1, 2, -1, np.int64(2), np.int32(1)):
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
