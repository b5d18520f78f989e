"""Rows whose labels are all unknown (mask all False) are left out of per-row metrics.

Unknown is never correct and never wrong: such a row has nothing to rank, so it must not
count as a perfect row (ranking loss 0, LRAP 1) nor as an error (one-error). It leaves
the mean, and the weighted mean, exactly as if it had not been passed; when no row is
left the drop-ins raise ``ValueError`` and the report gives NaN. The report and the CLI
report count such rows.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm
from helpers import PER_ROW, RANKING
from toxeval import metrics
from toxeval.report import report_markdown
from toxeval.scoring import score


def _worst_ranked_plus_unknown_rows() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """10 rows labelled [1, 0, 0] with the relevant label ranked last, then 10 rows
    whose mask is all False."""
    y = np.array([[1, 0, 0]] * 20)
    s = np.array([[0.1, 0.5, 0.9]] * 20)
    m = np.ones((20, 3), dtype=bool)
    m[10:] = False
    return y, s, m


def test_the_reported_case_gives_a_ranking_loss_of_one() -> None:
    y, s, m = _worst_ranked_plus_unknown_rows()
    assert metrics.label_ranking_loss(y, s, mask=m) == 1.0
    assert metrics.label_ranking_average_precision_score(y, s, mask=m) == pytest.approx(1 / 3)
    assert metrics.coverage_error(y, s, mask=m) == 3.0
    assert metrics.one_error(y, s, mask=m) == 1.0


def _case(seed: int, n: int = 120, k: int = 6) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < 0.3).astype(np.int64)
    s = np.round(rng.random((n, k)), 2)
    m = rng.random((n, k)) < 0.8
    m[rng.random(n) < 0.25] = False  # about a quarter of the rows: no known label
    w = rng.random(n) * 3
    return y, s, m, w


def _forms(y: np.ndarray, s: np.ndarray, m: np.ndarray) -> list[tuple[Any, Any, Any]]:
    """The native fast path (float64 ndarrays) and the general path (lists, int32)."""
    return [(y, s, m), (y.tolist(), (s * 100).astype(np.int32), m.tolist())]


@pytest.mark.parametrize("name", PER_ROW)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unknown_rows_leave_the_mean_and_the_weighted_mean(name: str, seed: int) -> None:
    fn = getattr(metrics, name)
    y, s, m, w = _case(seed)
    keep = m.any(axis=1)
    assert 0 < keep.sum() < len(keep)
    # weights of the dropped rows must not matter, however large
    w_wild = np.where(keep, w, 1e9)
    for yy, ss, mm in _forms(y, s, m):
        scale = 100 if np.asarray(ss).dtype == np.int32 else 1
        ref_s = s[keep] * scale
        want = fn(y[keep], ref_s, mask=m[keep])
        want_w = fn(y[keep], ref_s, mask=m[keep], sample_weight=w[keep])
        assert fn(yy, ss, mask=mm) == pytest.approx(want, rel=1e-12, abs=1e-15)
        assert fn(yy, ss, mask=mm, sample_weight=w_wild) == pytest.approx(
            want_w, rel=1e-12, abs=1e-15
        )


@pytest.mark.parametrize("name", RANKING)
def test_with_unknown_rows_removed_the_value_is_scikit_learns(name: str) -> None:
    y, s, _, w = _case(5)
    m = np.ones_like(y, dtype=bool)
    m[::4] = False  # whole rows unknown, the others fully known
    keep = m.any(axis=1)
    ours = getattr(metrics, name)(y, s, mask=m, sample_weight=w)
    theirs = getattr(skm, name)(y[keep], s[keep], sample_weight=w[keep])
    assert ours == pytest.approx(theirs, rel=1e-12)


@pytest.mark.parametrize("name", PER_ROW)
@pytest.mark.parametrize("weighted", [False, True])
def test_no_row_with_a_known_label_is_a_clear_error(name: str, weighted: bool) -> None:
    y, s, m, w = _case(3)
    kw: dict[str, Any] = {"sample_weight": w} if weighted else {}
    for yy, ss, _ in _forms(y, s, m):
        with pytest.raises(ValueError, match="no row has a known label"):
            getattr(metrics, name)(yy, ss, mask=np.zeros_like(m), **kw)


def test_the_report_leaves_unknown_rows_out_and_counts_them() -> None:
    y, s, m, w = _case(7)
    keep = m.any(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in ({}, {"sample_weight": w}):
            full = metrics.multilabel_report(y, s, mask=m, **kw)
            sub_kw = {"sample_weight": w[keep]} if kw else {}
            sub = metrics.multilabel_report(y[keep], s[keep], mask=m[keep], **sub_kw)
            assert full["n_rows_without_known_label"] == int((~keep).sum())
            assert sub["n_rows_without_known_label"] == 0
            for key in ("label_ranking_loss", "lrap", "coverage_error", "one_error", "ndcg"):
                assert full[key] == pytest.approx(sub[key], rel=1e-12), key
                sw = sub_kw.get("sample_weight")
                fn = {
                    "label_ranking_loss": metrics.label_ranking_loss,
                    "lrap": metrics.label_ranking_average_precision_score,
                    "coverage_error": metrics.coverage_error,
                    "one_error": metrics.one_error,
                    "ndcg": metrics.ndcg_score,
                }[key]
                assert full[key] == pytest.approx(
                    fn(y, s, mask=m, sample_weight=None if sw is None else w), rel=1e-12
                )
            assert full["one_error_relevant"] == pytest.approx(sub["one_error_relevant"])


def test_the_report_with_no_known_row_gives_nan_per_row_figures() -> None:
    y, s, m, _ = _case(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = metrics.multilabel_report(y, s, mask=np.zeros_like(m))
    assert r["n_rows_without_known_label"] == y.shape[0]
    for key in ("label_ranking_loss", "lrap", "coverage_error", "one_error", "ndcg"):
        assert np.isnan(r[key]), key


def test_cli_report_leaves_unknown_rows_out_and_shows_their_count(
    masked_dataset: Callable[..., Any],
) -> None:
    y, s, m = _worst_ranked_plus_unknown_rows()
    ds = masked_dataset(y, m)
    result = score(s, ds)
    assert result.figures["label_ranking_loss"] == 1.0
    assert result.figures["lrap"] == pytest.approx(1 / 3)
    assert result.figures["coverage_error"] == 3.0
    assert result.figures["one_error"] == 1.0
    assert result.counts["rows_without_known_labels"] == 10
    text = report_markdown(result)
    assert "rows without a known label" in text
    assert "10 (left out of the per-row figures" in text
