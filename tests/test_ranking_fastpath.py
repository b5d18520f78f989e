"""The one-pass native fast path of the label-ranking functions, and ``ranking_report_sums``.

``_core.ranking_sum_checked`` checks and computes in one pass over the user's own
``y_true``/``y_score``; on any problem the general path runs and raises. Here: every
supported ``y_true`` dtype gives the same value as scikit-learn, invalid inputs raise
scikit-learn's exact error (type and message), and ``ranking_report_sums`` divided by
its weight sum equals each separate public function (ties, masks, weights).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm
import toxeval.metrics as tm
from helpers import RANKING, examples
from hypothesis import given, settings
from hypothesis import strategies as st
from toxeval import _core


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-13)


def _data(seed: int, n: int = 30, k: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < 0.3).astype(np.int64)
    s = rng.choice(np.array([0.0, -0.0, 0.25, 0.5, 1.0]), size=(n, k))
    return y, s


@pytest.mark.parametrize("name", RANKING)
@pytest.mark.parametrize(
    "dtype", [np.bool_, np.int64, np.int32, np.int8, np.uint8, np.float64, np.float32, np.uint16]
)
@pytest.mark.parametrize("sdtype", [np.float64, np.float32])
def test_every_true_dtype_matches_sklearn(name: str, dtype: Any, sdtype: Any) -> None:
    y, s = _data(1)
    y = y.astype(dtype)
    s = s.astype(sdtype)
    w = np.linspace(0.0, 2.0, y.shape[0])
    for sw in (None, w):
        assert close(
            getattr(tm, name)(y, s, sample_weight=sw), getattr(skm, name)(y, s, sample_weight=sw)
        )


def _error(f: Any, *args: Any, **kw: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as e:
        f(*args, **kw)
    return type(e.value), str(e.value)


BAD_CASES = {
    "three labels": lambda y, s: (np.where(y == 1, 2, y) - (y.sum(1, keepdims=True) == 0), s),
    "non-integral float labels": lambda y, s: (y * 0.5, s),
    "float labels 0/2": lambda y, s: (y * 2.0, s),
    "nan score": lambda y, s: (y, np.where(np.eye(*s.shape, dtype=bool), np.nan, s)),
    "inf score": lambda y, s: (y, np.where(np.eye(*s.shape, dtype=bool), np.inf, s)),
    "nan label": lambda y, s: (np.where(np.eye(*y.shape, dtype=bool), np.nan, y.astype(float)), s),
    "inf label and nan score": lambda y, s: (
        np.where(np.eye(*y.shape, dtype=bool), np.inf, y.astype(float)),
        np.where(np.eye(*s.shape, dtype=bool), np.nan, s),
    ),
    "negative labels": lambda y, s: (-y, s),
    "three labels and nan score": lambda y, s: (
        np.where(y == 1, 3, y) + np.eye(*y.shape, dtype=np.int64),
        np.where(np.eye(*s.shape, dtype=bool), np.nan, s),
    ),
    "shape mismatch": lambda y, s: (y, s[:, :-1]),
    "length mismatch": lambda y, s: (y, s[:-1]),
}


@pytest.mark.parametrize("name", RANKING)
@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_invalid_inputs_raise_like_sklearn(name: str, case: str) -> None:
    y, s = BAD_CASES[case](*_data(2))
    try:
        want: Any = getattr(skm, name)(y, s)
    except Exception as e:
        want = (type(e), str(e))
    if isinstance(want, tuple):
        got = _error(getattr(tm, name), y, s)
        assert got[1] == want[1]
        assert issubclass(got[0], want[0]) or issubclass(want[0], got[0])
    else:
        assert close(getattr(tm, name)(y, s), want)


def test_n_jobs_zero_still_validates_first() -> None:
    y, s = _data(3)
    with pytest.raises(ValueError, match="multiclass-multioutput format is not supported"):
        tm.label_ranking_loss(y * 2 + np.eye(*y.shape, dtype=np.int64), s, n_jobs=0)
    with pytest.raises(ValueError, match="n_jobs == 0"):
        tm.label_ranking_loss(y, s, n_jobs=0)


def test_mask_hides_bad_entries_in_fast_path() -> None:
    y, s = _data(4)
    m = np.ones(y.shape, dtype=bool)
    m[:, 0] = False
    y2 = y.astype(np.float64)
    y2[:, 0] = 7.5  # unknown: never read, not part of the type check
    s2 = s.copy()
    s2[:, 0] = np.nan
    for name in [n for n in RANKING if n != "dcg_score"]:
        f = getattr(tm, name)
        assert close(f(y2, s2, mask=m), f(y[:, 1:], s[:, 1:]))


def test_checked_kernel_flags() -> None:
    y, s = _data(5)
    total, flags, labels = _core.ranking_sum_checked("lrl", y, s)
    assert flags == 0 and sorted(labels) == [0.0, 1.0]
    assert close(total / y.shape[0], skm.label_ranking_loss(y, s))
    s[0, 0] = np.inf
    y3 = y.copy()
    y3[1, 1] = 2
    y3[2, 2] = -1
    assert _core.ranking_sum_checked("lrl", y3, s)[1] == 1 | 4 | 8
    assert _core.ranking_sum_checked("lrl", y.astype(np.uint16), s) is None


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_small_int_labels_are_read_in_place(dtype: Any) -> None:
    """int8/uint8 ``y_true`` (what pandas, polars and torch hand over for 0/1 labels)
    takes the one-pass kernel, and its checks see the native values: a third value,
    a negative int8, uint8 255 (not -1) give scikit-learn's results and errors."""
    y, s = _data(6)
    yd = y.astype(dtype)
    total, flags, labels = _core.ranking_sum_checked("lrl", yd, s)
    assert flags == 0 and sorted(labels) == [0.0, 1.0]
    assert close(total / y.shape[0], skm.label_ranking_loss(y, s))
    odd = {"two": 2, "top": int(np.iinfo(dtype).max), "bottom": int(np.iinfo(dtype).min)}
    for value in odd.values():
        bad = yd.copy()
        bad[0, 0] = value
        flags = _core.ranking_sum_checked("lrl", bad, s)[1]
        assert flags & 8 or (value < 0 and flags & 4) or value in (0, 1)
        for name in RANKING:
            try:
                want: Any = getattr(skm, name)(bad, s)
            except Exception as e:
                want = (type(e), str(e))
            if isinstance(want, tuple):
                got = _error(getattr(tm, name), bad, s)
                assert got[1] == want[1], (name, value)
            else:
                assert close(getattr(tm, name)(bad, s), want), (name, value)


@st.composite
def report_cases(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 30))
    k = draw(st.integers(2, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_values = draw(st.sampled_from([0, 1, 2, 3, 5]))
    if n_values == 0:
        score = rng.normal(size=(n, k))
    else:
        score = rng.choice(np.array([0.0, -0.0, 0.5, -1.0, 0.25])[:n_values], size=(n, k))
    score = score.astype(draw(st.sampled_from([np.float64, np.float32])))
    if draw(st.booleans()):
        score = np.asfortranarray(score)
    rel = rng.random((n, k)) < draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
    mask = None
    if draw(st.booleans()):
        mask = rng.random((n, k)) < draw(st.sampled_from([0.3, 0.8, 1.0]))
    w = None
    if draw(st.booleans()):
        w = rng.choice(np.array([0.0, 0.5, 1.0, 3.0]), size=n)
        if w.sum() == 0:
            w[0] = 1.0
    return {"rel": rel, "score": score, "mask": mask, "w": w}


@settings(max_examples=examples(300), deadline=None)
@given(report_cases(), st.sampled_from([1, 2]))
def test_report_sums_equal_separate_functions(c: dict[str, Any], n_jobs: int) -> None:
    rel, score, mask, w = c["rel"], c["score"], c["mask"], c["w"]
    kw: dict[str, Any] = {"mask": mask, "sample_weight": w}
    y = rel.astype(np.int64)
    # Rows without a known label leave the public functions' means: multilabel_report
    # gives them weight 0 in the kernel, and so does this comparison.
    w_rows = w
    if mask is not None and not mask.any(axis=1).all():
        if not mask.any():
            with pytest.raises(ValueError, match="no row has a known label"):
                tm.label_ranking_loss(y, score, **kw)
            return
        w_rows = np.where(mask.any(axis=1), 1.0 if w is None else w, 0.0)
    got = _core.ranking_report_sums(rel, score, mask, w_rows, n_jobs)
    ws = got["weight_sum"]
    assert close(ws, float(np.sum(w_rows)) if w_rows is not None else float(rel.shape[0]))
    if ws == 0.0:
        return  # the known rows weigh nothing: the public functions raise (test_label_ranking)
    expected = {
        "label_ranking_loss": tm.label_ranking_loss(y, score, **kw),
        "label_ranking_average_precision": tm.label_ranking_average_precision_score(y, score, **kw),
        "coverage_error": tm.coverage_error(y, score, **kw),
        "one_error": tm.one_error(y, score, **kw),
        "ndcg": tm.ndcg_score(y, score, **kw),
    }
    relevant = {"one_error_relevant_errors", "rows_with_relevant"}  # tests/test_report.py
    assert set(got) == set(expected) | {"weight_sum"} | relevant
    for key, want in expected.items():
        assert close(got[key] / ws, want), key


def test_report_sums_named_case() -> None:
    rel = np.array([[True, False, False], [False, False, True], [False, False, False]])
    score = np.array([[0.75, 0.5, 1.0], [1.0, 0.2, 0.1], [0.3, 0.3, 0.1]])
    got = _core.ranking_report_sums(rel, score)
    assert got["weight_sum"] == 3.0
    assert close(got["label_ranking_loss"], 0.5 + 1.0 + 0.0)
    assert close(got["coverage_error"], 2.0 + 3.0 + 0.0)
    assert close(got["one_error"], 1.0 + 1.0 + 1.0)
    # rows 0 and 1 have a relevant label and an irrelevant one on top; row 2 has none
    assert got["rows_with_relevant"] == 2.0 and got["one_error_relevant_errors"] == 2.0
    with pytest.raises(ValueError, match="NaN"):
        _core.ranking_report_sums(rel, np.where(rel, np.nan, score))
