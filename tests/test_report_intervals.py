"""Bootstrap intervals in every evaluate/score report: equal to toxeval.stats.bootstrap
on the scored rows and to a NumPy + scikit-learn bootstrap on the same resamples, seeded,
off with bootstrap=0, masked cells unknown, and shown in every output."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from helpers import make_dataset
from sklearn import metrics as skm
from toxeval import stats
from toxeval.per_category_csv import CSV_COLUMNS, per_category_csv
from toxeval.report import report_markdown
from toxeval.scoring.intervals import MAX_RESAMPLES, figure_intervals


@pytest.fixture(scope="module")
def demo() -> Any:
    """The default evaluation (lexicon on the demo set, 1000 resamples, seed 0)."""
    return toxeval.evaluate()


def _masked_problem(
    n: int = 40, k: int = 3, seed: int = 5, *, single: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels with unknown cells (one row wholly unknown), tied scores, and (``single``)
    a category with a single known positive (so some resamples draw none of it: about
    37%, too many for an interval of it or of mAP)."""
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < 0.3).astype(np.int8)
    m = rng.random((n, k)) > 0.15
    if single:
        y[:, 2] = 0
        y[7, 2] = 1
        m[7, 2] = True
    m[3] = False  # a row with no known label
    s = np.round(rng.random((n, k)), 1)
    return y, s, m


def _reference(
    y: np.ndarray, s: np.ndarray, m: np.ndarray, n_resamples: int, seed: int
) -> dict[str, Any]:
    """The report's intervals computed with NumPy + scikit-learn on materialised
    resamples: both from ``bootstrap_indices`` over every row; label ranking loss is the
    mean over the drawn rows with a known label (the rows it is defined on), undefined
    on a resample that draws none. A figure undefined on more than 5% of the resamples
    (or defined on fewer than 2) has no interval: None."""
    level = 0.95
    idx = stats.bootstrap_indices(y.shape[0], n_resamples, seed=seed)
    k = y.shape[1]
    cols = [j for j in range(k) if ((y[:, j] == 1) & m[:, j]).any()]
    ap = np.full((k, idx.shape[0]), np.nan)
    lrl = []
    for b, rows in enumerate(idx):
        yb, sb, mb = y[rows], s[rows], m[rows]
        for j in cols:
            known = mb[:, j]
            if (yb[known, j] == 1).any():
                ap[j, b] = skm.average_precision_score(yb[known, j], sb[known, j])
        # each row over its known labels (a single known label: no pair, loss 0)
        per_row = [
            skm.label_ranking_loss(yb[r, mb[r]][None, :], sb[r, mb[r]][None, :])
            if mb[r].sum() > 1
            else 0.0
            for r in range(len(rows))
            if mb[r].any()
        ]
        lrl.append(np.mean(per_row) if per_row else np.nan)
    q = [(1 - level) / 2, 1 - (1 - level) / 2]

    def ci(defined: np.ndarray) -> Any:
        undefined = n_resamples - defined.shape[0]
        if undefined > (1 - level) * n_resamples or defined.shape[0] < 2:
            return None
        return np.quantile(defined, q)

    every = np.isfinite(ap[cols]).all(axis=0)
    lrl_arr = np.array(lrl)
    return {
        "map": ci(ap[cols][:, every].mean(axis=0)),
        "map_undefined": int((~every).sum()),
        "lrl": ci(lrl_arr[np.isfinite(lrl_arr)]),
        "lrl_undefined": int((~np.isfinite(lrl_arr)).sum()),
        "ap": {j: ci(ap[j][np.isfinite(ap[j])]) for j in cols},
        "ap_undefined": {j: int((~np.isfinite(ap[j])).sum()) for j in cols},
    }


def _same(got: Any, want: Any) -> None:
    """An interval equals the reference's, or both are None (withheld)."""
    if want is None:
        assert got is None
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_default_report_equals_stats_bootstrap_on_the_scored_rows(demo: Any) -> None:
    iv = demo.figures["intervals"]
    assert (iv["method"], iv["confidence_level"], iv["n_resamples"], iv["seed"]) == (
        "percentile",
        0.95,
        1000,
        0,
    )
    y, s, m = demo.rows.y_true, demo.rows.scores, demo.rows.mask
    cols = np.flatnonzero(((y == 1) & m).any(axis=0))
    macro = stats.bootstrap(
        "average_precision_score", y[:, cols], s[:, cols], mask=m[:, cols], average="macro"
    )
    np.testing.assert_allclose(iv["map"], macro.confidence_interval, rtol=1e-12)
    assert macro.estimate == pytest.approx(demo.figures["map"], rel=1e-12)
    assert iv["n_undefined"]["map"] == macro.n_undefined
    lrl = stats.bootstrap("label_ranking_loss", y, s, mask=m)
    np.testing.assert_allclose(iv["label_ranking_loss"], lrl.confidence_interval, rtol=1e-12)
    assert lrl.estimate == pytest.approx(demo.figures["label_ranking_loss"], rel=1e-12)
    per = stats.bootstrap(
        "average_precision_score", y[:, cols], s[:, cols], mask=m[:, cols], average=None
    )
    for i, j in enumerate(cols):
        row = demo.per_category[j]
        assert row["ap_ci"] == pytest.approx(
            [per.confidence_interval.low[i], per.confidence_interval.high[i]], rel=1e-12
        )
        assert row["ap_ci_undefined"] == per.n_undefined[i]
        assert row["ap_ci"][0] <= row["ap"] <= row["ap_ci"][1]


@pytest.mark.slow
def test_intervals_equal_numpy_sklearn_bootstrap_with_masked_cells() -> None:
    for single in (True, False):
        y, s, m = _masked_problem(single=single)
        got = figure_intervals(y, s, m, n_resamples=60, seed=11)
        ref = _reference(y, s, m, 60, 11)
        _same(got.map, ref["map"])
        assert got.n_undefined["map"] == ref["map_undefined"]
        _same(got.label_ranking_loss, ref["lrl"])
        assert got.n_undefined["label_ranking_loss"] == ref["lrl_undefined"]
        for j, want in ref["ap"].items():
            _same(got.ap[j], want)
            assert got.ap_undefined[j] == ref["ap_undefined"][j]
        # the single positive: undefined on too many resamples for mAP or its AP
        assert (got.map is None) == (got.ap[2] is None) == single
        assert (ref["map_undefined"] > 0) == single


def test_masked_cells_are_unknown_whatever_they_hold() -> None:
    """Labels and scores under the mask do not move any interval: they are not read."""
    y, s, m = _masked_problem()
    rng = np.random.default_rng(0)
    y2 = np.where(m, y, 1 - y).astype(np.int8)
    s2 = np.where(m, s, rng.random(s.shape))
    a = figure_intervals(y, s, m, n_resamples=50, seed=2)
    b = figure_intervals(y2, s2, m, n_resamples=50, seed=2)
    assert a == b


def test_a_category_defined_on_too_few_resamples_gets_none_and_its_count() -> None:
    """Three resamples: the single positive of c2 is drawn in fewer than two of them for
    this seed, so c2 (and mAP) get no interval, only the count; the other figures still
    equal the scikit-learn reference on the same resamples."""
    y, s, m = _masked_problem(n=12, seed=1)
    # the first seed whose 3 resamples draw row 7 (c2's only positive) at most once
    seed = next(
        sd for sd in range(100) if (stats.bootstrap_indices(12, 3, seed=sd) == 7).any(1).sum() < 2
    )
    drawn = (stats.bootstrap_indices(12, 3, seed=seed) == 7).any(axis=1)
    got = figure_intervals(y, s, m, n_resamples=3, seed=seed)
    assert got.ap[2] is None and got.ap_undefined[2] == int((~drawn).sum())
    assert got.map is None and got.n_undefined["map"] >= got.ap_undefined[2]
    ref = _reference(y, s, m, 3, seed)
    for j in (0, 1):
        _same(got.ap[j], ref["ap"][j])


def test_intervals_recomputed_replace_their_notes() -> None:
    # add_intervals on a result that has intervals replaces them and their notes: the
    # notes of a previous run (resample counts of another n) must not stay behind.
    from toxeval.scoring.intervals import add_intervals

    y, s, m = _masked_problem(n=12, seed=1)
    r = toxeval.score(s, make_dataset(y, m), bootstrap=5, bootstrap_seed=0)
    others = [n for n in r.notes if not n.startswith("bootstrap:")]
    assert len(others) < len(r.notes)  # c2's single positive: some resamples left out
    assert add_intervals(r, 0).notes == others
    once = list(add_intervals(r, 7, seed=1).notes)
    assert add_intervals(r, 7, seed=1).notes == once
    assert any("(of 7" in n for n in once) and not any("(of 5" in n for n in once)
    # a result without scored rows is refused before anything in it changes
    r.rows = None
    with pytest.raises(ValueError, match="no scored rows"):
        add_intervals(r, 7, seed=1)
    assert r.notes == once


def test_same_seed_reproduces_another_seed_changes_any_n_jobs() -> None:
    y, s, m = _masked_problem(n=200, k=4, seed=9, single=False)
    a = figure_intervals(y, s, m, n_resamples=100, seed=3, n_jobs=1)
    assert a == figure_intervals(y, s, m, n_resamples=100, seed=3, n_jobs=2)
    b = figure_intervals(y, s, m, n_resamples=100, seed=4)
    assert a.map != b.map and a.label_ranking_loss != b.label_ranking_loss


def test_score_takes_bootstrap_seed_and_level() -> None:
    y, s, m = _masked_problem(n=120, k=4, seed=2)
    ds = make_dataset(y, m)
    a = toxeval.score(s, ds, bootstrap=200, bootstrap_seed=5, confidence_level=0.9)
    want = figure_intervals(y, s, m, n_resamples=200, seed=5, confidence_level=0.9)
    assert want.map is None  # c2's single positive: undefined on about a third
    assert a.figures["intervals"]["map"] is None
    assert a.figures["intervals"]["n_undefined"] == want.n_undefined
    assert a.figures["intervals"]["undefined_limit"] == pytest.approx(0.1)
    assert a.figures["intervals"]["label_ranking_loss"] == list(want.label_ranking_loss)
    assert a.figures["intervals"]["confidence_level"] == 0.9
    assert [r["ap_ci"] for r in a.per_category] == [list(c) if c else None for c in want.ap]
    assert any("left out of their intervals" in n for n in a.notes)  # c2: one positive
    assert any(n.startswith("bootstrap: no interval for mAP") for n in a.notes)


@pytest.mark.parametrize(("level", "shown"), [(0.999, "99.9%"), (0.975, "97.5%"), (0.9, "90%")])
def test_every_output_names_the_confidence_level_as_asked(level: float, shown: str) -> None:
    # the level was printed with no decimal: 0.999 read "100%" and 0.975 "98%"
    from toxeval.html_report import render_html
    from toxeval.report import interval_line, quiet_intervals

    y, s, m = _masked_problem(n=60, k=3, seed=1, single=False)
    r = toxeval.score(s, make_dataset(y, m), bootstrap=50, confidence_level=level)
    assert interval_line(r).startswith(f"{shown} percentile bootstrap")  # terminal, report.md
    assert quiet_intervals(r).startswith(f"  {shown} CI: mAP [")
    page = render_html(r.to_dict())
    assert f"confidence {shown}." in page and f"{shown} CI [" in page


@pytest.mark.parametrize(
    "kwargs",
    [
        {"bootstrap": 1},
        {"bootstrap": -5},
        {"bootstrap": MAX_RESAMPLES + 1},
        {"bootstrap": True},
        {"bootstrap": 2.5},
        {"bootstrap_seed": -1},
        {"confidence_level": 1.0},
    ],
)
def test_bad_options_are_refused_before_any_work(kwargs: dict[str, Any]) -> None:
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        toxeval.evaluate(**kwargs)


def test_bootstrap_zero_gives_no_interval_anywhere(tmp_path: Path) -> None:
    from toxeval.html_report import render_html

    result = toxeval.evaluate(bootstrap=0)
    assert result.figures["intervals"] is None
    assert all(r["ap_ci"] is None and r["ap_ci_undefined"] is None for r in result.per_category)
    md = report_markdown(result)
    assert "interval" not in md.lower() and "[0." not in md
    rows = list(csv.DictReader(io.StringIO(per_category_csv(result))))
    assert {r["ap_ci_low"] for r in rows} == {""} and {r["ap_ci_high"] for r in rows} == {""}
    page = render_html(result.to_dict())
    assert "No bootstrap intervals in this result" in page and " CI [" not in page


def test_cli_outputs_show_the_intervals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toxeval.cli import main

    out = tmp_path / "out"
    assert main(["evaluate", "--out", str(out), "--bootstrap", "300", "--bootstrap-seed", "4"]) == 0
    text = capsys.readouterr().out
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    iv = data["figures"]["intervals"]
    assert set(iv) == {
        "method",
        "confidence_level",
        "n_resamples",
        "seed",
        "map",
        "label_ranking_loss",
        "n_undefined",
        "undefined_limit",
        "withheld",
    }
    assert iv["withheld"] == {}  # every figure of the demo set has an interval
    assert (iv["n_resamples"], iv["seed"]) == (300, 4)
    assert set(iv["n_undefined"]) == {"map", "label_ranking_loss"}
    lo, hi = iv["map"]
    assert f"{data['figures']['map']:.4f} [{lo:.4f}, {hi:.4f}]" in text
    assert "95% percentile bootstrap" in text and "300" in text
    md = (out / "report.md").read_text(encoding="utf-8")
    assert f"[{lo:.4f}, {hi:.4f}]" in md and "AP interval" in md
    rows = list(csv.DictReader(io.StringIO((out / "per_category.csv").read_text("utf-8"))))
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert CSV_COLUMNS[2:5] == ("ap", "ap_ci_low", "ap_ci_high")
    for r, rec in zip(rows, data["per_category"], strict=True):
        assert [float(r["ap_ci_low"]), float(r["ap_ci_high"])] == rec["ap_ci"]
        assert isinstance(rec["ap_ci_undefined"], int)
    # the same seed again: the same bytes; another seed: other intervals
    first = (out / "results.json").read_bytes()
    assert (
        main(["evaluate", "--out", str(out), "-q", "--bootstrap", "300", "--bootstrap-seed", "4"])
        == 0
    )
    assert (out / "results.json").read_bytes() == first
    assert (
        main(["evaluate", "--out", str(out), "-q", "--bootstrap", "300", "--bootstrap-seed", "5"])
        == 0
    )
    other = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert other["figures"]["intervals"]["map"] != iv["map"]
    assert "95% CI: mAP [" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "msg"),
    [
        (["--bootstrap", "1"], "--bootstrap must be a number of resamples from 2 to 100000"),
        (["--bootstrap", "-3"], "--bootstrap must be"),
        (["--bootstrap", "1000001"], "--bootstrap must be"),
        (["--bootstrap", "many"], "--bootstrap"),
        (["--bootstrap-seed", "-1"], "--bootstrap-seed must be"),
    ],
)
def test_cli_bad_bootstrap_options_exit_2(
    args: list[str], msg: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from toxeval.cli import main

    assert main(["evaluate", "-q", *args]) == 2
    assert msg in capsys.readouterr().err


def test_cli_bootstrap_zero_writes_no_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toxeval.cli import main

    out = tmp_path / "out"
    assert main(["evaluate", "--out", str(out), "--bootstrap", "0"]) == 0
    text = capsys.readouterr().out
    assert "percentile bootstrap" not in text and "AP interval" not in text
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert data["figures"]["intervals"] is None
    assert all(r["ap_ci"] is None for r in data["per_category"])


def test_compare_interval_equals_the_folders_report(tmp_path: Path) -> None:
    """compare and the report share one computation: same rows and seed, same interval."""
    from toxeval.cli import main
    from toxeval.compare import compare

    out = tmp_path / "lex"
    assert (
        main(["evaluate", "--out", str(out), "-q", "--bootstrap", "200", "--bootstrap-seed", "9"])
        == 0
    )
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    cmp = compare([str(out)], n_resamples=200, seed=9)
    cell = next(iter(cmp.cells.values()))[cmp.systems[0]]
    assert list(cell.interval["map"]) == data["figures"]["intervals"]["map"]
    assert (
        list(cell.interval["label_ranking_loss"])
        == data["figures"]["intervals"]["label_ranking_loss"]
    )


def test_cli_score_takes_the_bootstrap_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``toxeval score`` of a dump: the intervals are figure_intervals on its scored rows."""
    from toxeval.cli import main

    ds = toxeval.load_dataset()
    scores = np.random.default_rng(1).random((len(ds), ds.k))
    dump = tmp_path / "scores.npy"
    np.save(dump, scores)
    out = tmp_path / "out"
    args = ["score", str(dump), "--dataset", "demo", "--out", str(out), "-q"]
    assert main([*args, "--bootstrap", "80", "--bootstrap-seed", "2"]) == 0
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    want = figure_intervals(ds.y_true, scores, ds.mask, n_resamples=80, seed=2)
    assert data["figures"]["intervals"]["map"] == list(want.map)
    assert data["figures"]["intervals"]["label_ranking_loss"] == list(want.label_ranking_loss)
    assert main([*args, "--bootstrap", "0"]) == 0
    assert json.loads((out / "results.json").read_text("utf-8"))["figures"]["intervals"] is None
    assert "CI" not in capsys.readouterr().out.splitlines()[-1]


def test_terminal_table_fits_80_columns_with_whole_names_and_intervals(demo: Any) -> None:
    from rich.console import Console
    from toxeval.report import render

    con = Console(width=80, record=True, color_system=None)
    render(demo, con)
    text = con.export_text()
    assert max(map(len, text.splitlines())) <= 80
    # the per-category table (the calibration table below it lists the categories too)
    lines = text.split("calibration against annotators")[0].splitlines()
    assert demo.config["taxonomy"]["name"] == "toxeval-15"
    for r in demo.per_category:
        # one line per category: its whole name, AP and interval "low–high" on it
        ci = f"{r['ap_ci'][0]:.2f}\u2013{r['ap_ci'][1]:.2f}"
        hits = [line for line in lines if line.split()[:1] == [r["id"]]]
        assert len(hits) == 1, r["id"]
        assert hits[0].split()[1:3] == [f"{r['ap']:.4f}", ci]


def test_label_ranking_loss_defined_on_too_few_resamples_gets_none_and_its_count() -> None:
    """Two rows, one with no known label: a resample drawing only that row leaves label
    ranking loss undefined; with one defined resample of two the figure gets no
    interval and its count, like a category's AP, instead of an error."""
    y = np.array([[1, 0], [0, 1]], dtype=np.int8)
    s = np.array([[0.9, 0.2], [0.3, 0.6]])
    m = np.array([[True, True], [False, False]])
    seed = next(
        sd
        for sd in range(200)
        if (stats.bootstrap_indices(2, 2, seed=sd) == 0).any(axis=1).sum() == 1
    )
    got = figure_intervals(y, s, m, n_resamples=2, seed=seed)
    assert got.label_ranking_loss is None
    assert got.n_undefined["label_ranking_loss"] == 1
    assert got.label_ranking_loss_estimate == 0.0


def test_one_scored_row_gets_no_interval_and_says_why() -> None:
    """Every resample of one row is that row: scipy.stats.bootstrap refuses a sample of
    one observation, and the report gives the figures without an interval (not a
    zero-width one) with one note saying why."""
    y = np.array([[1, 0, 1]], dtype=np.int8)
    s = np.array([[0.9, 0.2, 0.6]])
    r = toxeval.score(s, make_dataset(y), bootstrap=20)
    iv = r.figures["intervals"]
    assert iv["map"] is None and iv["label_ranking_loss"] is None
    assert all(row["ap_ci"] is None for row in r.per_category)
    assert r.figures["map"] == 1.0 and r.figures["label_ranking_loss"] == 0.0
    bootstrap_notes = [n for n in r.notes if n.startswith("bootstrap: ")]
    assert bootstrap_notes == ["bootstrap: no intervals: resampling needs two or more scored rows"]
