"""NumPy masked arrays: one with masked entries is rejected (its hidden values would be
scored), by every drop-in metric and by ``toxeval.score``; one without masked entries is
its data. Unknown labels are passed as ``mask=`` instead."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import RANKING
from toxeval import metrics as te
from toxeval.predictions import PredictionError
from toxeval.scoring import score


def _case() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = (rng.random((30, 3)) < 0.4).astype(np.int8)
    y[0] = 1
    s = rng.random((30, 3))
    return y, s


def test_masked_entries_are_rejected(masked_dataset: Callable[..., Any]) -> None:
    y, s = _case()
    ds = masked_dataset(y)
    hidden = np.ma.masked_array(s, mask=np.zeros_like(s, dtype=bool))
    hidden[4, 1] = np.ma.masked
    with pytest.raises(PredictionError, match="masked arrays are not supported as scores"):
        score(hidden, ds)


def test_a_masked_array_without_masked_entries_is_its_data(
    masked_dataset: Callable[..., Any],
) -> None:
    y, s = _case()
    ds = masked_dataset(y)
    plain = score(s, ds)
    masked = score(np.ma.masked_array(s), ds)
    assert masked.figures == plain.figures


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
