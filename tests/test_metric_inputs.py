"""Score dtypes and sample weights the drop-in metrics take, each ranked as scikit-learn
ranks it or rejected as it rejects it: bool and complex scores, sample weights that are
not real 1-D numbers, and ``mask`` arrays that are not boolean or not shaped like y_true
(one message per fault). Unsigned scores, NumPy masked arrays and ``n_jobs`` have their own
files (test_unsigned_scores.py, test_masked_array_scores.py, test_n_jobs_parameter.py)."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest
from helpers import RANKING
from sklearn import metrics as sk
from toxeval import metrics as te


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


MASKED = [*RANKING, "one_error", "average_precision_score", "roc_auc_score", "multilabel_report"]


@pytest.mark.parametrize("name", MASKED)
@pytest.mark.parametrize(
    ("mask", "message"),
    [
        (np.ones((3, 2), dtype=bool), "mask has shape (3, 2) but y_true has shape (3, 3)"),
        (
            np.ones((3, 3)),
            "mask must be a boolean array (or 0/1 integers) shaped like y_true; got dtype float64",
        ),
        (
            np.full((3, 3), 2),
            "mask must be a boolean array (or 0/1 integers) shaped like y_true; got dtype int64",
        ),
    ],
    ids=["shape", "float", "not-0/1"],
)
def test_a_bad_mask_has_one_message_everywhere(name: str, mask: Any, message: str) -> None:
    # Masks are toxeval's own (scikit-learn has none): one check, one message per fault.
    y = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    s = np.random.default_rng(0).random((3, 3))
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        getattr(te, name)(y, s, mask=mask)
