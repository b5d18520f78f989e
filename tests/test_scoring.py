"""toxeval.scoring: every figure equals scikit-learn on the known cells, computed here
independently; excluded categories are listed; unknown labels never act as negatives."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm
import toxeval.metrics
from helpers import make_dataset, small_taxonomy, write_jsonl
from toxeval.predictions import PredictionError, predictions_from_array
from toxeval.scoring import score, score_predictions
from toxeval.taxonomy import Category, Taxonomy, load_taxonomy

# --------------------------------------------------------------------------- helpers


def _random_case(seed: int, n: int = 60, k: int = 5, p_unknown: float = 0.2) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < 0.3).astype(np.int8)
    mask = rng.random((n, k)) >= p_unknown
    s = np.round(rng.random((n, k)), 1)  # tie-heavy
    return y, mask, s


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("seed", range(5))
def test_per_category_ap_auc_equal_sklearn_on_known_cells(seed: int) -> None:
    y, mask, s = _random_case(seed)
    ds = make_dataset(y, mask)
    res = score_predictions(predictions_from_array(s, ds), ds)
    aps = []
    for k, row in enumerate(res.per_category):
        known = mask[:, k]
        yk, sk = y[known, k], s[known, k]
        assert row["support"] == int(yk.sum())
        assert row["negatives"] == int((yk == 0).sum())
        assert row["unknown"] == int((~known).sum())
        if yk.sum() > 0:
            ap = skm.average_precision_score(yk, sk)
            assert row["ap"] == pytest.approx(ap, rel=1e-12)
            aps.append(ap)
        if 0 < yk.sum() < yk.size:
            assert row["roc_auc"] == pytest.approx(skm.roc_auc_score(yk, sk), rel=1e-12)
    assert res.figures["map"] == pytest.approx(np.mean(aps), rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_threshold_figures_equal_sklearn_on_known_cells(seed: int) -> None:
    y, mask, s = _random_case(seed)
    ds = make_dataset(y, mask)
    res = score_predictions(predictions_from_array(s, ds), ds, threshold=0.5)
    pred = (s >= 0.5).astype(int)
    yt, yp = y[mask], pred[mask]
    assert res.figures["micro_f1"] == pytest.approx(skm.f1_score(yt, yp), rel=1e-12)
    assert res.figures["hamming_loss"] == pytest.approx(float(np.mean(yt != yp)), rel=1e-12)
    f1s = []
    for k in range(y.shape[1]):
        known = mask[:, k]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f1 = skm.f1_score(y[known, k], pred[known, k], zero_division=0)
        assert res.per_category[k]["f1"] == pytest.approx(f1, rel=1e-12)
        if y[known, k].sum() > 0:
            f1s.append(f1)
    assert res.figures["macro_f1"] == pytest.approx(np.mean(f1s), rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_rowwise_figures_equal_sklearn_when_fully_known(seed: int) -> None:
    y, _, s = _random_case(seed, p_unknown=0.0)
    ds = make_dataset(y)
    res = score_predictions(predictions_from_array(s, ds), ds)
    assert res.figures["label_ranking_loss"] == pytest.approx(
        skm.label_ranking_loss(y, s), rel=1e-12
    )
    assert res.figures["lrap"] == pytest.approx(
        skm.label_ranking_average_precision_score(y, s), rel=1e-12
    )
    assert res.figures["coverage_error"] == pytest.approx(skm.coverage_error(y, s), rel=1e-12)


def test_rowwise_ranking_loss_uses_known_labels_only() -> None:
    # every row keeps >= 1 known positive and >= 1 known negative
    y = np.array([[1, 0, 1, 0], [0, 1, 1, 0], [1, 1, 0, 0]])
    mask = np.array([[1, 1, 0, 1], [1, 1, 1, 0], [1, 0, 1, 1]], dtype=bool)
    s = np.array([[0.2, 0.5, 0.9, 0.1], [0.3, 0.3, 0.8, 0.9], [0.6, 0.1, 0.4, 0.6]])
    ds = make_dataset(y, mask)
    res = score_predictions(predictions_from_array(s, ds), ds)
    want = np.mean([skm.label_ranking_loss([y[i][mask[i]]], [s[i][mask[i]]]) for i in range(3)])
    assert res.figures["label_ranking_loss"] == pytest.approx(want, rel=1e-12)


def test_unknown_cells_never_act_as_negatives() -> None:
    y, mask, s = _random_case(11)
    ds1 = make_dataset(y, mask)
    flipped = np.where(mask, y, 1 - y)  # change every unknown cell
    ds2 = make_dataset(flipped, mask)
    r1 = score_predictions(predictions_from_array(s, ds1), ds1)
    r2 = score_predictions(predictions_from_array(s, ds2), ds2)
    assert r1.figures == r2.figures
    assert r1.per_category == r2.per_category


def test_categories_without_known_positive_are_excluded_and_listed() -> None:
    y = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
    mask = np.ones_like(y, dtype=bool)
    mask[3, 2] = False  # c2's only positive is unknown
    s = np.array([[0.9, 0.1, 0.2], [0.2, 0.8, 0.1], [0.7, 0.6, 0.3], [0.1, 0.1, 0.9]])
    ds = make_dataset(y, mask)
    res = score_predictions(predictions_from_array(s, ds), ds)
    assert res.excluded_categories == ["c2"]
    assert not res.per_category[2]["in_map"]
    assert np.isnan(res.per_category[2]["ap"])
    assert any("excluded" in n and "c2" in n for n in res.notes)
    want = np.mean([skm.average_precision_score(y[:, k], s[:, k]) for k in (0, 1)])
    assert res.figures["map"] == pytest.approx(want, rel=1e-12)


def test_categories_without_known_negative_are_named_in_a_note() -> None:
    # a set labelled 1 / -1 with -1 meant as "negative" reads -1 as unknown: every known
    # label is positive, AP is 1 whatever the scores, and the report has to say so
    y = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
    mask = np.ones_like(y, dtype=bool)
    mask[:, 0] = y[:, 0] == 1  # c0: positives known, the rest unknown
    s = np.array([[0.1, 0.1, 0.2], [0.2, 0.8, 0.1], [0.05, 0.6, 0.3], [0.9, 0.1, 0.9]])
    ds = make_dataset(y, mask)
    res = score_predictions(predictions_from_array(s, ds), ds)
    assert res.per_category[0]["in_map"] and res.per_category[0]["ap"] == 1.0
    note = [n for n in res.notes if "no known negative" in n]
    assert len(note) == 1 and "c0" in note[0] and "c1" not in note[0], res.notes
    want = np.mean(
        [skm.average_precision_score(y[mask[:, k], k], s[mask[:, k], k]) for k in range(3)]
    )
    assert res.figures["map"] == pytest.approx(want, rel=1e-12)


def test_binary_scores_are_flagged() -> None:
    y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    ds = make_dataset(y)
    res = score_predictions(predictions_from_array(y.astype(float), ds), ds)
    assert res.binary_scores
    assert any("binary" in n for n in res.notes)
    res2 = score_predictions(predictions_from_array(y * 0.5 + 0.2, ds), ds)
    assert not res2.binary_scores


def test_card_recipe_on_fully_known_rows_only() -> None:
    from toxeval.card_recipe import compute_metrics

    y, mask, s = _random_case(3, k=3, p_unknown=0.1)
    ds = make_dataset(y, mask)
    res = score_predictions(predictions_from_array(s, ds), ds, threshold=0.5)
    full = mask.all(axis=1)
    m_ap, lrl = compute_metrics(y[full], (s[full] >= 0.5).astype(int))
    card = res.card_recipe
    assert card["rows_used"] == int(full.sum())
    assert card["rows_skipped_partial_labels"] == int((~full).sum())
    assert card["label_ranking_loss"] == pytest.approx(lrl)
    if np.isnan(m_ap):
        assert np.isnan(card["map"])
    else:
        assert card["map"] == pytest.approx(m_ap)
    assert "recipe" in card["label"]
    assert any("fully known" in n or "all known" in n for n in res.notes)


def test_missing_predictions_are_counted_and_not_scored() -> None:
    y, _, s = _random_case(5, n=10, p_unknown=0.0)
    ds = make_dataset(y)
    ids = [f"r{i}" for i in range(8)]
    preds = predictions_from_array(s[:8], ds, ids=ids, on_mismatch="drop")
    res = score_predictions(preds, ds)
    assert res.counts["scored"] == 8
    assert res.counts["missing_prediction"] == 2
    assert res.counts["excluded"] == 2
    want = skm.label_ranking_loss(y[:8], s[:8])
    assert res.figures["label_ranking_loss"] == pytest.approx(want, rel=1e-12)
    assert any("no prediction" in n for n in res.notes)


def test_agreement_figures_when_soft_labels_exist() -> None:
    y = np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]])
    soft = np.array([[1, 0], [0, 1], [0.6, 1], [0.2, 0], [1, 0], [0, 0.7]])
    n_ann = np.array([5, 5, 5, 5, 0, 5])
    ds = make_dataset(y, soft=soft, n_annotators=n_ann)
    s = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.7], [0.3, 0.1], [0.8, 0.3], [0.1, 0.6]])
    res = score_predictions(predictions_from_array(s, ds), ds)
    a = res.agreement
    assert a is not None
    assert a["annotated_rows"] == 5
    assert a["contested_cells"] == 3
    assert a["contested_cell_fraction"] == pytest.approx(3 / 10)
    assert a["n_contested_rows"] == 3
    assert a["n_unanimous_rows"] == 2


def test_score_accepts_texts_and_reports_parse_counts() -> None:
    tax = load_taxonomy("toxeval-15")
    y = np.zeros((4, tax.k), dtype=np.int8)
    y[0, tax.index("hate")] = 1
    y[1, tax.index("violence")] = 1
    ds = make_dataset(y, taxonomy=tax)
    outputs = ["hate", "violence", "none", "I cannot help with that."]
    res = score(outputs, ds, parse_policy="exclude")
    assert res.parse is not None
    assert res.parse["policy"] == "exclude"
    assert sum(res.parse["status_counts"].values()) == 4
    assert res.counts["excluded_by_parse_policy"] == res.parse["status_counts"]["unparseable"]


def test_threshold_must_be_finite() -> None:
    y = np.array([[1, 0], [0, 1]])
    ds = make_dataset(y)
    with pytest.raises(ValueError, match="threshold"):
        score_predictions(predictions_from_array(y * 0.7, ds), ds, threshold=float("nan"))


@pytest.mark.parametrize("seed", range(4))
def test_counts_cover_the_scored_rows_only(seed: int) -> None:
    """Unknown cells and rows without a known label are counted over the scored rows:
    unscored rows add neither."""
    y, mask, s = _random_case(seed, n=80)
    mask[10 + seed] = False  # a row without any known label
    ds = make_dataset(y, mask=mask)
    rows = np.ones(len(y), dtype=bool)
    rows[[3, 7]] = False  # two rows without a prediction
    preds = dataclasses.replace(predictions_from_array(s, ds), scored=rows, n_missing=2)
    counts = score_predictions(preds, ds).to_dict()["counts"]
    assert counts["unknown_cells"] == int((~mask[rows]).sum())
    assert counts["rows_without_known_labels"] == int((~mask[rows].any(axis=1)).sum()) >= 1


def test_score_rejects_a_sequence_that_is_not_raw_outputs() -> None:
    tax = small_taxonomy(3)
    y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    ds = make_dataset(y, taxonomy=tax)
    with pytest.raises(TypeError, match=r"item 0 is int .*np\.asarray"):
        score([1, 2, 3], ds)
    with pytest.raises(TypeError, match=r"item 0 is list .*np\.asarray"):
        score(y.tolist(), ds)
    with pytest.raises(TypeError, match=r"item 1 is NoneType .*fill a missing output"):
        score(["c0", None, "c2"], ds)  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"got int"):
        score(7, ds)  # type: ignore[arg-type]
    assert score(["c0", "c1", "c2"], ds).map == 1.0


def _one_error_by_hand(y: np.ndarray, s: np.ndarray, m: np.ndarray) -> float:
    """docs/cli.md's one-error, row by row."""
    errors, rows = 0, 0
    for yi, si, mi in zip(y, s, m, strict=True):
        known = np.flatnonzero(mi)
        if not (yi[known] == 1).any():
            continue  # no right answer: left out
        rows += 1
        top = si[known].max()
        errors += int(any(yi[j] != 1 and si[j] == top for j in known))
    return errors / rows if rows else float("nan")


def test_one_error_is_the_documented_rule() -> None:
    # docs/cli.md: per row with a known positive, 1 if the top-scored known label is not
    # relevant, a tie at the top with an irrelevant label being an error. Rows without a
    # known positive are left out (metrics.one_error's classical definition would count
    # them as errors: on a mostly benign set it would mostly count benign rows).
    y = np.array([[1, 0, 0], [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]])
    s = np.array(
        [[0.9, 0.1, 0.2], [0.9, 0.1, 0.2], [0.5, 0.5, 0.1], [0.3, 0.2, 0.1], [0.1, 0.1, 0.8],
         [0.4, 0.9, 0.1]]
    )  # fmt: skip
    mask = np.ones_like(y, dtype=bool)
    mask[5, 1] = False  # the unknown label scored highest does not compete
    r = score(s, make_dataset(y, mask))
    # rows 0, 4, 5 right; row 2 a tie with an irrelevant label; row 3 wrong; row 1 out
    assert r.figures["one_error"] == pytest.approx(2 / 5)
    assert toxeval.metrics.one_error(y, s, mask=mask) != pytest.approx(2 / 5)


@pytest.mark.parametrize("seed", range(4))
def test_one_error_matches_a_row_by_row_count(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    y = (rng.random((n, 5)) < 0.2).astype(np.int8)
    s = np.round(rng.random((n, 5)), 1)  # ties at the top are common
    mask = rng.random((n, 5)) < 0.8
    want = _one_error_by_hand(y, s, mask)
    assert score(s, make_dataset(y, mask)).figures["one_error"] == pytest.approx(want, abs=1e-15)


def _map_rows_reference(
    y: np.ndarray, mask: np.ndarray, s: np.ndarray, rows: np.ndarray
) -> float | None:
    """mAP over ``rows`` as docs/cli.md defines it: scikit-learn's AP per category on
    the rows where the category is known, averaged over the categories with a known
    positive among those rows; None when fewer than 2 rows or no such category."""
    if rows.sum() < 2:
        return None
    aps = []
    for k in range(y.shape[1]):
        known = rows & mask[:, k]
        if (y[known, k] == 1).any():
            aps.append(skm.average_precision_score(y[known, k], s[known, k]))
    return float(np.mean(aps)) if aps else None


@pytest.mark.parametrize("seed", range(4))
def test_agreement_map_on_unanimous_and_contested_rows_equals_sklearn(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n, k = 80, 4
    n_ann = rng.choice([0, 3, 5], n, p=[0.2, 0.4, 0.4])
    votes = rng.random((n, k)) < rng.uniform(0.1, 0.5, k)
    # per cell: unanimous (0 or 1) for most, a split vote for some
    split = rng.random((n, k)) < 0.15
    soft = np.where(split, rng.choice([0.2, 0.4, 0.6, 0.8], (n, k)), votes.astype(float))
    y = (soft > 0.5).astype(np.int8)
    mask = rng.random((n, k)) >= 0.15
    soft = np.where(mask, soft, np.nan)  # unknown labels have no agreement figure
    s = np.round(np.clip(0.4 * y + rng.random((n, k)) * 0.7, 0, 1), 2)
    ds = make_dataset(y, mask, soft=soft, n_annotators=n_ann)
    res = score_predictions(predictions_from_array(s, ds), ds)
    a = res.agreement
    assert a is not None
    annotated = n_ann > 0
    contested = mask & annotated[:, None] & (soft > 0) & (soft < 1)
    unanimous_rows = annotated & ~contested.any(axis=1)
    contested_rows = annotated & contested.any(axis=1)
    assert a["n_unanimous_rows"] == int(unanimous_rows.sum()) >= 2
    assert a["n_contested_rows"] == int(contested_rows.sum()) >= 2
    y_known = np.where(mask, y, 0)
    for name, rows in (("unanimous", unanimous_rows), ("contested", contested_rows)):
        want = _map_rows_reference(y_known, mask, s, rows)
        assert want is not None
        assert a[f"map_{name}_rows"] == pytest.approx(want, rel=1e-12), name
    # the two figures are different numbers here, and neither is the mAP of all rows
    assert a["map_unanimous_rows"] != pytest.approx(a["map_contested_rows"], rel=1e-6)
    assert a["map_unanimous_rows"] != pytest.approx(res.figures["map"], rel=1e-6)


def test_agreement_map_is_none_without_two_rows_or_a_known_positive() -> None:
    y = np.array([[1, 0], [0, 1], [1, 0], [0, 0], [0, 0]])
    soft = np.array([[1, 0], [0, 1], [0.6, 0], [0, 0], [0.4, 0]], dtype=float)
    n_ann = np.array([5, 5, 5, 5, 5])
    mask = np.ones_like(y, dtype=bool)
    ds = make_dataset(y, mask, soft=soft, n_annotators=n_ann)
    s = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.3], [0.3, 0.2], [0.4, 0.5]])
    a = score_predictions(predictions_from_array(s, ds), ds).agreement
    assert a is not None
    # rows 0, 1, 3 unanimous: both categories have a known positive there
    assert a["n_unanimous_rows"] == 3
    want = _map_rows_reference(y, mask, s, np.array([1, 1, 0, 1, 0], dtype=bool))
    assert a["map_unanimous_rows"] == pytest.approx(want, rel=1e-12)
    # rows 2 and 4 contested: only category 0 has a known positive there
    assert a["n_contested_rows"] == 2
    want = skm.average_precision_score([1, 0], [0.6, 0.4])
    assert a["map_contested_rows"] == pytest.approx(want, rel=1e-12)
    # one contested row: no mAP
    ds1 = make_dataset(y[:4], mask[:4], soft=soft[:4], n_annotators=n_ann[:4])
    a1 = score_predictions(predictions_from_array(s[:4], ds1), ds1).agreement
    assert a1 is not None and a1["n_contested_rows"] == 1
    assert a1["map_contested_rows"] is None


# ------------------------------------------------- options that do not apply, alignment


def _small_case() -> tuple[Any, np.ndarray]:
    y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]])
    s = np.array([[0.9, 0.1, 0.2], [0.2, 0.8, 0.1], [0.1, 0.3, 0.7], [0.6, 0.4, 0.1]])
    return make_dataset(y), s


@pytest.mark.parametrize(
    ("form", "option"),
    [
        ("array", {"on_mismatch": "drop"}),
        ("array", {"format": "jsonl"}),
        ("array", {"parse_policy": "zeros"}),
        ("array", {"mapping": "llama-guard-3"}),
        ("array", {"on_mismatch": "bogus"}),
        ("texts", {"format": "csv"}),
        ("texts", {"on_mismatch": "drop"}),
        ("predictions", {"parse_policy": "error"}),
        ("predictions", {"on_mismatch": "drop"}),
        ("array", {"rule": "union"}),
        ("array", {"min_annotators": 2}),
        ("array", {"data_dir": "/nowhere"}),
    ],
)
def test_score_rejects_options_that_do_not_apply(form: str, option: dict[str, Any]) -> None:
    ds, s = _small_case()
    preds: Any = {
        "array": s,
        "texts": ["c0", "c1", "c2", "c0, c1"],
        "predictions": predictions_from_array(s, ds),
    }[form]
    (name,) = option
    with pytest.raises(ValueError, match=f"{name}=.* not apply"):
        score(preds, ds, **option)


def test_score_takes_options_at_their_default_and_records_what_applied() -> None:
    ds, s = _small_case()
    explicit = score(
        s, ds, on_mismatch="error", format="auto", parse_policy="exclude", rule="majority"
    )
    assert explicit.to_dict() | {"toxeval_version": 0} == score(s, ds).to_dict() | {
        "toxeval_version": 0
    }
    assert explicit.config["rule"] is None and explicit.config["min_annotators"] is None
    assert explicit.config["parse_policy"] is None  # not text
    # a Predictions read with on_mismatch="drop" records "drop", not the default
    dropped = predictions_from_array(s[:3], ds, ids=["r0", "r1", "r2"], on_mismatch="drop")
    r = score(dropped, ds)
    assert r.config["on_mismatch"] == "drop" == r.system["on_mismatch"]
    texts = score(["c0", "c1", "nothing to parse here", "c0, c1"], ds, parse_policy="exclude")
    assert texts.config["parse_policy"] == "exclude" and texts.counts["scored"] == 3


def test_score_predictions_checks_alignment_and_reserved_config() -> None:
    ds, s = _small_case()
    preds = predictions_from_array(s, ds)
    other = make_dataset(np.eye(5, 3, dtype=int))  # 5 rows
    with pytest.raises(PredictionError, match=r"shape \(4, 3\) but the dataset .* 5 rows x 3"):
        score_predictions(preds, other)
    # same shape, another dataset: the rows would be scored against the wrong labels
    relabelled = dataclasses.replace(ds, y_true=ds.y_true[::-1].copy(), sha256="1" * 64)
    with pytest.raises(
        PredictionError,
        match=r"aligned to another dataset \(sha256 000000000000\.\.\.\) than 'test'",
    ):
        score_predictions(preds, relabelled)
    assert preds.dataset_sha256 == ds.sha256
    with pytest.raises(ValueError, match="config cannot set 'threshold'"):
        score_predictions(preds, ds, threshold=0.5, config={"threshold": 0.9})
    r = score_predictions(preds, ds, threshold=0.3, config={"run": "a"})
    assert r.config["run"] == "a" and r.config["threshold"] == 0.3 == r.figures["threshold"]


class _Echo:
    """A detector of our own: scores = the dataset's labels, shifted."""

    name = "echo"

    def __init__(self, ds: Any, taxonomy: Taxonomy) -> None:
        self.taxonomy = taxonomy
        self.by_text = {
            t: np.asarray(y, float) * 0.8 + 0.1 for t, y in zip(ds.texts, ds.y_true, strict=True)
        }

    def predict_scores(self, texts: Any) -> np.ndarray:
        return np.array([self.by_text[t] for t in texts])


def test_evaluate_takes_a_detector_object() -> None:
    from toxeval.scoring import evaluate

    ds, _ = _small_case()
    ds = dataclasses.replace(ds, texts=[f"text {i}" for i in range(len(ds))])
    det = _Echo(ds, ds.taxonomy)
    r = evaluate(ds, det)
    assert r.map == 1.0
    assert r.config["detector"] == "echo" == r.system["detector"]
    want = score(det.predict_scores(ds.texts), ds).figures
    assert r.figures == want
    with pytest.raises(ValueError, match=r"detector's taxonomy .* does not match"):
        other = Taxonomy(
            name="other",
            version="1",
            categories=tuple(
                Category(id=f"x{i}", name=f"X {i}", description="x") for i in range(3)
            ),
        )
        evaluate(ds, _Echo(ds, other))
    with pytest.raises(TypeError, match="predict_scores"):
        evaluate(ds, object())  # type: ignore[arg-type]


def test_text_list_type_error_reads_well() -> None:
    ds, _ = _small_case()
    with pytest.raises(TypeError, match=r"got a sequence that is none of these; item 1 is int"):
        score(["c0", 3, "c1", "c2"], ds)  # type: ignore[list-item]


def test_options_a_dump_has_no_use_for_are_noted_not_recorded(tmp_path: Any) -> None:

    import toxeval

    ds = toxeval.load_dataset()
    scores = np.zeros((len(ds), ds.k))
    scores[:, 0] = ds.y_true[:, 0]
    npy = tmp_path / "s.npy"
    np.save(npy, scores)
    r = score(npy, ds, parse_policy="error", mapping="llama-guard-3")
    assert r.config["parse_policy"] is None and r.config["mapping"] is None
    assert any(
        "parse_policy='error' and mapping='llama-guard-3' not used: the predictions are scores" in n
        for n in r.notes
    )
    # a label-list dump uses the mapping (codes in lists), not the parse policy
    labels = tmp_path / "l.jsonl"
    write_jsonl(
        labels, [{"id": i, "labels": ["S1"] if k % 2 else []} for k, i in enumerate(ds.ids)]
    )
    r = score(labels, ds, parse_policy="zeros", mapping="llama-guard-3")
    assert r.config["mapping"] == "llama-guard-3" and r.config["parse_policy"] is None
    assert any("parse_policy='zeros' not used: the predictions are labels" in n for n in r.notes)
    assert not any("mapping=" in n for n in r.notes)
    # at their defaults nothing is noted
    assert not any("not used" in n for n in score(npy, ds).notes)
