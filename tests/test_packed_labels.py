"""Packed positives: the multilabel indicator check hands the native kernels
``y_true == 1`` packed eight labels per byte (``np.packbits(..., bitorder="little")``)
instead of a bool copy. These tests pin the format, the equality of every kernel
result on packed and bool labels, the binding's errors, and the public metrics on
label counts that cross byte boundaries (pairs of labels per pass included)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm
import toxeval.metrics as tm
from toxeval import _core
from toxeval.metrics._binary_inputs import fast_indicator


def _data(n: int, k: int, seed: int, ties: bool = False) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < 0.2).astype(np.int64)
    y[:, 0] = 0  # a label without positives
    y[:, -1] = 1  # a label without negatives
    s = rng.random((n, k))
    if ties:
        s = np.round(s, 1)
    return y, s


@pytest.mark.parametrize("k", [2, 7, 8, 9, 15, 16, 17, 70])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_summary_packs_like_numpy(k: int, dtype: Any) -> None:
    y, _ = _data(20_000, k, k)
    y = y.astype(dtype)
    for n_jobs in (1, 2):
        r = _core.binary_indicator_summary(y, n_jobs)
        assert r is not None
        lo, hi, third, packed = r
        assert (lo, hi, third) == (0, 1, False)
        assert packed is not None and packed.dtype == np.uint8
        np.testing.assert_array_equal(packed, np.packbits(y == 1, axis=1, bitorder="little"))
    # Fortran order and strided views pack the same bits
    np.testing.assert_array_equal(
        _core.binary_indicator_summary(np.asfortranarray(y))[3],  # type: ignore[index]
        np.packbits(y == 1, axis=1, bitorder="little"),
    )
    view = y[::2, ::-1]
    np.testing.assert_array_equal(
        _core.binary_indicator_summary(view)[3],  # type: ignore[index]
        np.packbits(view == 1, axis=1, bitorder="little"),
    )


def test_summary_third_value_and_pm1() -> None:
    y, _ = _data(30_000, 5, 1)
    y[-1, 2] = 2
    r = _core.binary_indicator_summary(y, 2)
    assert r is not None and r[2] is True and r[3] is None
    ypm = 2 * _data(100, 9, 2)[0] - 1
    ind = fast_indicator(ypm)
    assert ind is not None
    values, packed = ind
    assert values == [-1, 1]
    np.testing.assert_array_equal(packed, np.packbits(ypm == 1, axis=1, bitorder="little"))


@pytest.mark.parametrize("k", [3, 9, 16, 17])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernels_equal_on_packed_and_bool(k: int, dtype: Any) -> None:
    y, s = _data(5000, k, 10 + k, ties=k % 2 == 1)
    s = s.astype(dtype)
    pos = y == 1
    packed = np.packbits(pos, axis=1, bitorder="little")
    rng = np.random.default_rng(k)
    mask = rng.random(y.shape) < 0.9
    w = rng.random(y.shape[0])
    for m in (None, mask):
        for n_jobs in (1, 2):
            for metric, mf in (("average_precision", None), ("roc_auc", None), ("roc_auc", 0.3)):
                a = _core.binary_metric_per_label(
                    s, pos, None, m, metric=metric, max_fpr=mf, n_jobs=n_jobs
                )
                b = _core.binary_metric_per_label(
                    s, packed, None, m, metric=metric, max_fpr=mf, n_jobs=n_jobs
                )
                np.testing.assert_array_equal(a[0], b[0])
                np.testing.assert_array_equal(a[1], b[1])
                a2 = _core.binary_metric_micro(
                    s, pos, w, m, metric=metric, max_fpr=mf, n_jobs=n_jobs
                )
                b2 = _core.binary_metric_micro(
                    s, packed, w, m, metric=metric, max_fpr=mf, n_jobs=n_jobs
                )
                assert a2 == b2
            a3 = _core.binary_ap_auc_per_label(s, pos, None, m, n_jobs)
            b3 = _core.binary_ap_auc_per_label(s, packed, None, m, n_jobs)
            for u, v in zip(a3, b3, strict=True):
                np.testing.assert_array_equal(u, v)
            assert _core.binary_ap_auc_micro(s, pos, None, m, n_jobs) == _core.binary_ap_auc_micro(
                s, packed, None, m, n_jobs
            )
            np.testing.assert_array_equal(
                _core.binary_support(pos, w, m), _core.binary_support(packed, w, m, n_labels=k)
            )


def test_binding_rejects_bad_packed_labels() -> None:
    y, s = _data(100, 9, 3)
    packed = np.packbits(y == 1, axis=1, bitorder="little")
    with pytest.raises(ValueError, match="packed labels have 1 bytes per row, 9 labels need 2"):
        _core.binary_metric_per_label(s, packed[:, :1], metric="roc_auc")
    with pytest.raises(ValueError, match="packed labels"):
        _core.binary_support(packed, n_labels=20)
    with pytest.raises(ValueError, match="shape"):
        _core.binary_metric_micro(s[:50], packed, metric="average_precision")
    with pytest.raises(TypeError, match="packed uint8"):
        _core.binary_ap_auc_per_label(s, y.astype(np.int16))


@pytest.mark.filterwarnings("ignore:No positive class found")
@pytest.mark.parametrize("k", [4, 8, 9, 15, 17])
@pytest.mark.parametrize("average", ["macro", "micro", "weighted", None])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_public_metrics_match_sklearn(k: int, average: Any, n_jobs: int) -> None:
    y, s = _data(3000, k, 100 + k, ties=k == 9)
    for ours, ref in (
        (tm.average_precision_score, skm.average_precision_score),
        (tm.roc_auc_score, skm.roc_auc_score),
    ):
        if ref is skm.roc_auc_score and average != "micro":
            yy = y.copy()
            yy[0, 0] = 1  # every label needs both classes for ROC AUC per label
            yy[0, -1] = 0
        else:
            yy = y
        got = ours(yy, s, average=average, n_jobs=n_jobs)
        want = ref(yy, s, average=average)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
        assert type(got) is type(want)
