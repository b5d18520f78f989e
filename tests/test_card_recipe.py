"""toxeval.card_recipe against the benchmark card's literal code.

``literal_compute_metrics`` is the card's reference function verbatim except that the
hard-coded 15 is the number of columns; it is run wherever it runs, and compared with
toxeval's compatibility mode exactly.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from toxeval.card_recipe import card_average_precision, card_ranking_loss, compute_metrics


def literal_compute_metrics(y_true, y_pred):  # type: ignore[no-untyped-def]
    # y_true, y_pred: (N, 15) binary matrices
    aps = []
    for k in range(y_true.shape[1]):  # the card: range(15)
        tp = (y_pred[:, k] == 1) & (y_true[:, k] == 1)
        fp = (y_pred[:, k] == 1) & (y_true[:, k] == 0)  # noqa: F841 (unused in the card too)
        precisions = np.cumsum(tp) / np.arange(1, len(tp) + 1)
        aps.append(np.mean(precisions[tp]))
    mAP = np.mean(aps)
    pos = y_true == 1
    neg = y_true == 0
    lrl_vals = []
    for i in range(len(y_true)):
        if pos[i].sum() == 0 or neg[i].sum() == 0:
            lrl_vals.append(0.0)
        else:
            swaps = np.sum(y_pred[i, pos[i]] < y_pred[i, neg[i]])
            lrl_vals.append(swaps / (pos[i].sum() * neg[i].sum()))
    LRL = np.mean(lrl_vals)
    return mAP, LRL


def _literal(y, p):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return literal_compute_metrics(y, p)


def _same(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or a == b


def test_three_row_example_scores_0_383() -> None:
    y = np.array([[0, 1], [0, 0], [1, 1]])
    # perfect predictions: the recipe's "AP" is not 1
    m_ap, lrl = compute_metrics(y, y)
    lit = _literal(y, y)
    assert m_ap == lit[0]
    assert lrl == lit[1] == 0.0
    y3 = np.array([[0], [0], [1]])
    ap = card_average_precision(np.hstack([y3, y3]), np.hstack([y3, y3]))
    assert ap[0] == pytest.approx(1 / 3)
    yk = np.array([[1, 0], [0, 0], [1, 0], [0, 1]])
    assert compute_metrics(yk, yk)[0] == _literal(yk, yk)[0]


def test_three_row_perfect_predictions_score_0_383() -> None:
    # N = 3, K = 15 as in the card; perfect predictions. The recipe's category "AP"s:
    # positive only on row 3 -> 1/3 (x13), rows 1 and 3 -> (1 + 2/3) / 2 = 5/6, rows 2
    # and 3 -> (1/2 + 2/3) / 2 = 7/12; mean = 23/60 = 0.3833, not 1.
    y = np.zeros((3, 15), dtype=int)
    y[2, :] = 1
    y[0, 13] = 1
    y[1, 14] = 1
    m_ap, lrl = compute_metrics(y, y)
    lit_ap, lit_lrl = _literal(y, y)
    assert m_ap == lit_ap
    assert round(m_ap, 3) == 0.383
    assert m_ap == pytest.approx(23 / 60, rel=1e-15)
    assert lrl == lit_lrl == 0.0


def test_row_shuffle_changes_ap() -> None:
    y = np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0]])
    p = np.array([[1, 0], [0, 1], [1, 0], [0, 0], [0, 1]])
    perm = np.array([4, 2, 0, 3, 1])
    a, b = compute_metrics(y, p)[0], compute_metrics(y[perm], p[perm])[0]
    assert a != b
    assert a == _literal(y, p)[0]
    assert b == _literal(y[perm], p[perm])[0]


def test_no_true_positive_gives_nan_like_the_recipe() -> None:
    y = np.array([[1, 0], [0, 1], [1, 0]])
    p = np.array([[1, 0], [0, 0], [1, 0]])
    aps = card_average_precision(y, p)
    assert np.isnan(aps[1]) and not np.isnan(aps[0])
    assert np.isnan(compute_metrics(y, p)[0])
    assert np.isnan(_literal(y, p)[0])


def test_broadcasting_error_case_only_strict_inversion_runs() -> None:
    # K = 5, a row with 2 positives and 3 negatives: the literal code cannot broadcast
    y = np.array([[1, 1, 0, 0, 0], [1, 0, 0, 0, 0]])
    p = np.array([[0, 1, 1, 0, 1], [0, 1, 0, 0, 0]])
    with pytest.raises(ValueError, match="broadcast"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the literal code's empty means
        literal_compute_metrics(y, p)
    # row 0: pos scores [0, 1], neg scores [1, 0, 1] -> strict inversions: 0<1, 0<1 -> 2 of 6
    # row 1: pos [0], neg [1, 0, 0, 0] -> 1 of 4
    assert card_ranking_loss(y, p) == pytest.approx((2 / 6 + 1 / 4) / 2)


def test_ties_are_free_in_the_recipe() -> None:
    y = np.array([[1, 0]])
    assert card_ranking_loss(y, np.array([[0.5, 0.5]])) == 0.0
    assert card_ranking_loss(y, np.array([[0.4, 0.5]])) == 1.0


def _runs_pairwise(y: np.ndarray) -> bool:
    npos = (y == 1).sum(axis=1)
    nneg = (y == 0).sum(axis=1)
    return bool(np.all((npos <= 1) | (nneg <= 1)))


@settings(max_examples=examples(200), deadline=None)
@given(
    st.integers(1, 30).flatmap(
        lambda n: st.integers(2, 15).flatmap(
            lambda k: st.tuples(
                st.lists(
                    st.lists(st.integers(0, 1), min_size=k, max_size=k), min_size=n, max_size=n
                ),
                st.lists(
                    st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=k, max_size=k),
                    min_size=n,
                    max_size=n,
                ),
                st.booleans(),
            )
        )
    )
)
def test_matches_literal_code_wherever_it_runs_pairwise(case) -> None:  # type: ignore[no-untyped-def]
    y_l, p_l, binary = case
    y = np.array(y_l)
    p = np.array(p_l)
    if binary:
        p = (p >= 0.5).astype(int)
    # make every row run pairwise in the literal code (<= 1 positive or <= 1 negative)
    for i in range(len(y)):
        if not _runs_pairwise(y[i : i + 1]):
            y[i, 1:] = 0
    m_ap, lrl = compute_metrics(y, p)
    lit_ap, lit_lrl = _literal(y, p)
    assert _same(m_ap, float(lit_ap))
    np.testing.assert_array_equal(
        card_average_precision(y, p),
        [
            np.mean(
                ((p[:, k] == 1) & (y[:, k] == 1)).cumsum()[(p[:, k] == 1) & (y[:, k] == 1)]
                / (np.flatnonzero((p[:, k] == 1) & (y[:, k] == 1)) + 1)
            )
            if ((p[:, k] == 1) & (y[:, k] == 1)).any()
            else np.nan
            for k in range(y.shape[1])
        ],
    )
    assert lrl == pytest.approx(float(lit_lrl), rel=1e-12, abs=1e-15)


def test_shape_errors() -> None:
    with pytest.raises(ValueError, match="2-D"):
        compute_metrics(np.array([1, 0]), np.array([1, 0]))
    with pytest.raises(ValueError, match="different shapes"):
        compute_metrics(np.zeros((2, 3)), np.zeros((2, 4)))


def test_even_k_half_positive_row_literal_compares_element_wise() -> None:
    # K = 4, 2 positives and 2 negatives: shapes match, so the literal code silently
    # compares element by element; the compatibility mode counts pairs (documented).
    y = np.array([[1, 1, 0, 0]])
    p = np.array([[0.2, 0.9, 0.1, 0.5]])
    _, lit = _literal(y, p)
    assert lit == pytest.approx(0 / 4)  # 0.2<0.1? no; 0.9<0.5? no
    assert card_ranking_loss(y, p) == pytest.approx(1 / 4)  # 0.2 < 0.5
