"""No input, however malformed, may crash the native core.

A Rust panic reaches Python as ``pyo3_runtime.PanicException``, a ``BaseException``
that ``except Exception`` does not catch. This fuzzes every public metric with
arbitrary shapes (0-D to 3-D, empty), dtypes (bool, int, float with NaN/inf,
float32, object, str), layouts (Fortran order, strided), weights and masks, and
requires that each call either returns or raises an ordinary ``Exception``.
When scikit-learn/SciPy accept the same input, toxeval must accept it too.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import toxeval.metrics as tm
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sklearn_metrics = pytest.importorskip("sklearn.metrics")
scipy_stats = pytest.importorskip("scipy.stats")

FUNCS = [
    "average_precision_score",
    "roc_auc_score",
    "label_ranking_loss",
    "label_ranking_average_precision_score",
    "coverage_error",
    "ndcg_score",
    "dcg_score",
    "precision_recall_curve",
    "roc_curve",
    "one_error",
    "kendalltau",
]

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, 0.5, 2.0, -1.0, 1e308]


@st.composite
def arrays(draw: st.DrawFn, shape: tuple[int, ...] | None = None) -> Any:
    if shape is None:
        ndim = draw(st.integers(0, 3))
        shape = tuple(draw(st.integers(0, 5)) for _ in range(ndim))
    kind = draw(st.sampled_from(["bool", "int", "float", "float32", "special", "object", "str"]))
    size = int(np.prod(shape)) if shape else 1
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "bool":
        a: Any = rng.random(size) < 0.5
    elif kind == "int":
        a = rng.integers(-1, 3, size)
    elif kind == "float":
        a = rng.random(size)
    elif kind == "float32":
        a = rng.random(size).astype(np.float32)
    elif kind == "special":
        a = np.array([SPECIALS[i] for i in rng.integers(0, len(SPECIALS), size)])
    elif kind == "object":
        a = np.array([None if i % 3 == 0 else i for i in range(size)], dtype=object)
    else:
        a = np.array([str(i % 2) for i in range(size)])
    a = a.reshape(shape) if shape else a.reshape(())
    layout = draw(st.sampled_from(["c", "f", "strided", "list"]))
    if layout == "f" and a.ndim >= 2:
        a = np.asfortranarray(a)
    elif layout == "strided" and a.ndim >= 1:
        a = np.repeat(a, 2, axis=-1)[..., ::2]
    elif layout == "list":
        a = a.tolist()
    return a


def _outcome(fn: Any, *args: Any, **kwargs: Any) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*args, **kwargs)
        except Exception:
            return "raised"
    # A BaseException that is not an Exception (e.g. PanicException) propagates and
    # fails the test.
    return "ok"


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    name=st.sampled_from(FUNCS),
    data=st.data(),
    same_shape=st.booleans(),
    with_weight=st.booleans(),
    with_mask=st.booleans(),
)
def test_no_input_crashes(
    name: str, data: st.DataObject, same_shape: bool, with_weight: bool, with_mask: bool
) -> None:
    y_true = data.draw(arrays())
    shape = np.shape(y_true) if same_shape else None
    y_score = data.draw(arrays(shape))
    kwargs: dict[str, Any] = {}
    if name == "kendalltau":
        ours = _outcome(tm.kendalltau, y_true, y_score)
        ref = _outcome(scipy_stats.kendalltau, y_true, y_score)
    else:
        if with_weight and name != "one_error":
            n = np.shape(y_true)[0] if np.ndim(y_true) else 1
            kwargs["sample_weight"] = data.draw(arrays((n,)))
        ref_fn = getattr(sklearn_metrics, name, None)
        ref = _outcome(ref_fn, y_true, y_score, **kwargs) if ref_fn else "n/a"
        if with_mask and name not in ("precision_recall_curve", "roc_curve"):
            kwargs["mask"] = data.draw(arrays(np.shape(y_true)))
        ours = _outcome(getattr(tm, name), y_true, y_score, **kwargs)
    # Where the reference accepts the input (and no mask changes the question),
    # toxeval accepts it too; except a None score, which toxeval rejects on purpose
    # (docs/deviations.md: scikit-learn accepts it only when there is a single score).
    none_score = any(v is None for v in np.asarray(y_score, dtype=object).ravel())
    if ref == "ok" and "mask" not in kwargs and not none_score:
        assert ours == "ok", (name, y_true, y_score, kwargs)


@pytest.mark.parametrize("name", [f for f in FUNCS if f != "kendalltau"])
@pytest.mark.parametrize(
    "y_true, y_score",
    [
        (np.zeros((0, 3)), np.zeros((0, 3))),
        (np.zeros((3, 0)), np.zeros((3, 0))),
        (np.ones((2, 2, 2)), np.ones((2, 2, 2))),
        ([[0, 1], [1, 0]], [[0.1, np.nan], [0.2, 0.3]]),
        ([[0, 1], [1, 0]], [[0.1, np.inf], [0.2, 0.3]]),
        ([[0, 1], [1, 0]], [[0.1, 0.2, 0.3], [0.2, 0.3, 0.4]]),
        ([[0, 1], [1, 0]], [["a", "b"], ["c", "d"]]),
        ([[0, 1], [1, 0]], [[0.1, 0.2]]),
        ([["a", "b"], ["b", "a"]], [[0.1, 0.2], [0.3, 0.4]]),
        ([[0, 1], [1, 0]], np.array([[None, 0.2], [0.3, 0.4]], dtype=object)),
    ],
)
def test_named_bad_inputs_raise_value_or_type_error(name: str, y_true: Any, y_score: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError)):
            getattr(tm, name)(y_true, y_score)
