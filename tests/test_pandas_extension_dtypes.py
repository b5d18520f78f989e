"""pandas extension dtypes (``Int64``, ``boolean``, ``Float64``, ``int64[pyarrow]``) are
accepted by every drop-in as scikit-learn accepts them, compared live against it;
``pd.NA`` gives scikit-learn's error instead of a number."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm
from toxeval import metrics

pd = pytest.importorskip("pandas")

DTYPES = ["Int64", "boolean", "Float64", "int64[pyarrow]", "UInt8", "bool[pyarrow]"]
MULTILABEL = [
    "label_ranking_loss",
    "label_ranking_average_precision_score",
    "coverage_error",
    "ndcg_score",
    "dcg_score",
    "average_precision_score",
    "roc_auc_score",
]


def _frames() -> tuple[Any, Any, np.ndarray]:
    rng = np.random.default_rng(0)
    y = (rng.random((40, 4)) < 0.4).astype(np.int64)
    y[0] = 1
    y[1] = 0
    s = np.round(rng.random((40, 4)), 2)
    w = rng.random(40) + 0.5
    cols = [f"c{i}" for i in range(4)]
    return pd.DataFrame(y, columns=cols), pd.DataFrame(s, columns=cols), w


def _outcome(fn: Any, *args: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("value", fn(*args, **kw))
        except Exception as e:  # the outcome (value or error) is what is compared
            return ("error", type(e).__name__, str(e))


def _same(ours: Any, theirs: Any) -> None:
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "value":
        assert ours[1] == pytest.approx(theirs[1], rel=1e-12, abs=1e-15, nan_ok=True)
    else:
        assert ours[1:] == theirs[1:]


@pytest.mark.parametrize("name", MULTILABEL)
@pytest.mark.parametrize("dtype", DTYPES)
def test_extension_dtype_y_true_equals_sklearn(name: str, dtype: str) -> None:
    y, s, w = _frames()
    yt = y.astype(dtype)
    for kw in ({}, {"sample_weight": w}):
        _same(
            _outcome(getattr(metrics, name), yt, s, **kw),
            _outcome(getattr(skm, name), yt, s, **kw),
        )


@pytest.mark.parametrize("name", MULTILABEL)
@pytest.mark.parametrize("dtype", ["Float64", "double[pyarrow]", "Int64"])
def test_extension_dtype_scores_and_weights_equal_sklearn(name: str, dtype: str) -> None:
    y, s, w = _frames()
    ys = (s * 100).round().astype(dtype) if dtype == "Int64" else s.astype(dtype)
    sw = pd.Series(w, dtype="Float64")
    _same(
        _outcome(getattr(metrics, name), y.astype("Int64"), ys, sample_weight=sw),
        _outcome(getattr(skm, name), y.astype("Int64"), ys, sample_weight=sw),
    )


@pytest.mark.parametrize("dtype", ["Int64", "boolean", "int64[pyarrow]"])
def test_extension_dtype_mask_is_read_as_booleans(dtype: str) -> None:
    y, s, _ = _frames()
    m = np.ones(y.shape, dtype=bool)
    m[::3, 1] = False
    want = metrics.label_ranking_loss(y.to_numpy(), s.to_numpy(), mask=m)
    got = metrics.label_ranking_loss(y, s, mask=pd.DataFrame(m).astype(dtype))
    assert got == want


@pytest.mark.parametrize("name", MULTILABEL)
@pytest.mark.parametrize("where", ["y_true", "y_score"])
def test_pandas_na_gives_sklearns_error(name: str, where: str) -> None:
    y, s, _ = _frames()
    yt, ys = y.astype("Int64"), s.astype("Float64")
    if where == "y_true":
        yt.iloc[3, 2] = pd.NA
    else:
        ys.iloc[3, 2] = pd.NA
    ours = _outcome(getattr(metrics, name), yt, ys)
    theirs = _outcome(getattr(skm, name), yt, ys)
    assert theirs[0] == "error"
    _same(ours, theirs)


@pytest.mark.parametrize("dtype", ["Int64", "boolean", "Float64", "int64[pyarrow]"])
def test_extension_dtype_binary_series_equals_sklearn(dtype: str) -> None:
    y, s, _ = _frames()
    yt = y["c0"].astype(dtype)
    for name in ("average_precision_score", "roc_auc_score"):
        _same(
            _outcome(getattr(metrics, name), yt, s["c0"]),
            _outcome(getattr(skm, name), yt, s["c0"]),
        )
    for name in ("precision_recall_curve", "roc_curve"):
        ours = getattr(metrics, name)(yt, s["c0"])
        theirs = getattr(skm, name)(yt, s["c0"])
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_na_weight_gives_nan_in_lrap_where_sklearn_raises() -> None:
    """The documented deviation: a ``pd.NA`` weight is NaN (a NaN result), as in
    scikit-learn's ranking loss; scikit-learn's LRAP fails converting it."""
    y, s, w = _frames()
    sw = pd.Series(w, dtype="Float64")
    sw.iloc[2] = pd.NA
    for name in ("label_ranking_loss", "coverage_error"):
        _same(
            _outcome(getattr(metrics, name), y, s, sample_weight=sw),
            _outcome(getattr(skm, name), y, s, sample_weight=sw),
        )
    ours = _outcome(metrics.label_ranking_average_precision_score, y, s, sample_weight=sw)
    assert ours[0] == "value" and np.isnan(ours[1])
    with pytest.raises(TypeError):
        skm.label_ranking_average_precision_score(y, s, sample_weight=sw)
