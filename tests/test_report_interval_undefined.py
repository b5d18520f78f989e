"""Bootstrap intervals of figures that are undefined on some resamples (a category whose
few known positives a resample does not draw): the interval must estimate the figure
printed beside it, or be withheld with the reason, in every output (API, terminal,
results.json, report.md, per_category.csv, HTML, compare, slices).

The rule (docs/statistics.md, "Undefined resamples"): a resample on which a category of
mAP is undefined is undefined for mAP; a figure undefined on more than ``1 - level`` of
the resamples (5% at 95%) gets no interval, only its count and the categories that
cause it. The kept resamples are those that happen to draw the rare positives, where
those categories' AP runs high, so their percentile interval can lie wholly above the
estimate (the case below: mAP 0.0430, interval [0.0469, 0.0779] from the 18 resamples of
200 that drew every rare positive)."""

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
from toxeval.report import per_category_csv, report_markdown
from toxeval.scoring.intervals import figure_intervals

#: known positives per category: eight rare categories, then seven with six each
RARE_COUNTS = (1, 1, 1, 1, 2, 2, 3, 3, 6, 6, 6, 6, 6, 6, 6)


def _rare_problem(
    counts: tuple[int, ...] = RARE_COUNTS, n: int = 200, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Labels with ``counts[j]`` positives in column j and a weak model's scores
    (uniform, independent of the labels)."""
    rng = np.random.default_rng(seed)
    y = np.zeros((n, len(counts)), dtype=np.int8)
    for j, c in enumerate(counts):
        y[rng.choice(n, c, replace=False), j] = 1
    return y, np.round(rng.random(y.shape), 3)


def _reference(
    y: np.ndarray, s: np.ndarray, n_resamples: int, seed: int, level: float = 0.95
) -> dict[str, Any]:
    """The rule with NumPy + scikit-learn on the materialised resamples of
    ``bootstrap_indices``: per category the AP of each resample that draws one of its
    positives; mAP the mean on resamples where every category is defined; a figure
    undefined on more than ``1 - level`` of the resamples has no interval (None)."""
    idx = stats.bootstrap_indices(y.shape[0], n_resamples, seed=seed)
    k = y.shape[1]
    drawn = y[idx].any(axis=1).T  # (k, n_resamples): a positive of the category drawn
    # where a category is defined, its AP (NaN elsewhere: a placeholder where the
    # category is withheld anyway, so scikit-learn is not asked for values never used)
    ap = np.where(drawn, 0.0, np.nan)
    for j in range(k):
        if (~drawn[j]).sum() <= (1 - level) * n_resamples:
            for b in np.flatnonzero(drawn[j]):
                ap[j, b] = skm.average_precision_score(y[idx[b], j], s[idx[b], j])
    q = [(1 - level) / 2, 1 - (1 - level) / 2]

    def ci(values: np.ndarray) -> Any:
        ok = values[np.isfinite(values)]
        undefined = n_resamples - ok.shape[0]
        if undefined > (1 - level) * n_resamples or ok.shape[0] < 2:
            return None, undefined
        return list(np.quantile(ok, q)), undefined

    every = np.isfinite(ap).all(axis=0)
    means = np.where(every, np.nanmean(np.where(every, ap, 0.0), axis=0), np.nan)
    return {"map": ci(means), "ap": [ci(ap[j]) for j in range(k)]}


# ---------------------------------------------------------------- the reported defect


def test_map_interval_is_withheld_not_printed_above_its_estimate() -> None:
    y, s = _rare_problem()
    r = toxeval.score(s, make_dataset(y), bootstrap=200, bootstrap_seed=0)
    est, iv = r.figures["map"], r.figures["intervals"]
    assert est == pytest.approx(0.04302133283352922, rel=1e-9)
    assert iv["n_undefined"]["map"] == 182
    # the defect: [0.0469, 0.0779] from the 18 resamples that drew every rare positive
    assert iv["map"] is None or iv["map"][0] <= est <= iv["map"][1]
    assert iv["map"] is None
    assert iv["undefined_limit"] == pytest.approx(0.05)
    withheld = iv["withheld"]["map"]
    assert withheld["n_undefined"] == 182
    # the categories that leave mAP undefined, those undefined most often first
    assert set(withheld["categories"]) == {f"c{j}" for j in range(8)} | {"c12"}
    undefined = {row["id"]: row["ap_ci_undefined"] for row in r.per_category}
    assert [undefined[c] for c in withheld["categories"]] == sorted(
        (undefined[c] for c in withheld["categories"]), reverse=True
    )
    note = next(n for n in r.notes if n.startswith("bootstrap: no interval for mAP"))
    assert "182 of 200" in note and "c0" in note and "more than 5%" in note


def test_every_interval_given_contains_its_estimate_on_the_rare_problem() -> None:
    for seed in range(6):
        y, s = _rare_problem(seed=seed)
        r = toxeval.score(s, make_dataset(y), bootstrap=200, bootstrap_seed=0)
        iv = r.figures["intervals"]
        for name in ("map", "label_ranking_loss"):
            if iv[name] is not None:
                assert iv[name][0] <= r.figures[name] <= iv[name][1], (seed, name)
        for row in r.per_category:
            undefined = row["ap_ci_undefined"]
            assert (row["ap_ci"] is None) == (undefined > 10), (seed, row["id"])
            assert row["ap_ci_withheld"] == (undefined > 10)
            if row["ap_ci"] is not None:
                assert row["ap_ci"][0] <= row["ap"] <= row["ap_ci"][1], (seed, row["id"])


def test_category_intervals_follow_the_rule_and_equal_the_numpy_reference() -> None:
    y, s = _rare_problem((1, 1, 2, 3, 3, 6, 6, 6))
    got = figure_intervals(y, s, np.ones_like(y, dtype=bool), n_resamples=200, seed=0)
    ref = _reference(y, s, 200, 0)
    assert got.map is None and ref["map"][0] is None
    assert got.n_undefined["map"] == ref["map"][1] > 100
    for j in range(y.shape[1]):
        want, undefined = ref["ap"][j]
        assert got.ap_undefined[j] == undefined
        if want is None:
            assert got.ap[j] is None, j
        else:
            np.testing.assert_allclose(got.ap[j], want, rtol=1e-12)
    # one positive: undefined on about 37% of the resamples; six: on none here
    assert got.ap[0] is None and got.ap[7] is not None


def test_map_with_few_undefined_resamples_keeps_its_interval_equal_to_the_reference() -> None:
    """Every category with 4 or more positives: mAP is undefined on a few resamples,
    under 5%; its interval is the percentile interval of the others, as before."""
    counts = (4, 6, 6, 8, 8, 10)
    y, s = _rare_problem(counts, n=150, seed=4)
    got = figure_intervals(y, s, np.ones_like(y, dtype=bool), n_resamples=150, seed=2)
    ref = _reference(y, s, 150, 2)
    assert 0 < got.n_undefined["map"] == ref["map"][1] <= 0.05 * 150
    np.testing.assert_allclose(got.map, ref["map"][0], rtol=1e-12)
    for j in range(len(counts)):
        np.testing.assert_allclose(got.ap[j], ref["ap"][j][0], rtol=1e-12)


def test_the_limit_follows_the_confidence_level() -> None:
    """At 80% an interval may leave out up to 20% of the resamples: a category of two
    positives (about 13.5% undefined) gets one at 80%, none at 95%."""
    y, s = _rare_problem((2, 6, 6), n=150, seed=1)
    m = np.ones_like(y, dtype=bool)
    at95 = figure_intervals(y, s, m, n_resamples=200, seed=0)
    at80 = figure_intervals(y, s, m, n_resamples=200, seed=0, confidence_level=0.8)
    assert 10 < at95.ap_undefined[0] == at80.ap_undefined[0] <= 40
    assert at95.ap[0] is None and at80.ap[0] is not None
    ref = _reference(y, s, 200, 0, level=0.8)
    np.testing.assert_allclose(at80.ap[0], ref["ap"][0][0], rtol=1e-12)


# ---------------------------------------------------------------- every output


def _write_rare_pair(folder: Path) -> tuple[Path, Path, list[str]]:
    """The rare problem as a toxeval-15 dataset file and a JSONL dump of its scores."""
    from toxeval.taxonomy import load_taxonomy

    ids = list(load_taxonomy("toxeval-15").ids)
    y, s = _rare_problem()
    ds = folder / "ds.jsonl"
    dump = folder / "dump.jsonl"
    ds.write_text(
        "".join(
            json.dumps(
                {"id": f"r{i}", "text": "t", "labels": [ids[j] for j in np.flatnonzero(y[i])]}
            )
            + "\n"
            for i in range(y.shape[0])
        ),
        encoding="utf-8",
    )
    dump.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "scores": dict(zip(ids, s[i].tolist(), strict=True))}) + "\n"
            for i in range(y.shape[0])
        ),
        encoding="utf-8",
    )
    return dump, ds, ids


def test_cli_score_says_the_interval_is_withheld_and_why_in_every_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toxeval.cli import main

    dump, ds, ids = _write_rare_pair(tmp_path)
    out = tmp_path / "out"
    args = ["score", str(dump), "--dataset", str(ds), "--out", str(out), "--html"]
    assert main([*args, "--bootstrap", "200", "--bootstrap-seed", "0"]) == 0
    # the panel's borders and line breaks (80 columns) removed
    text = " ".join(capsys.readouterr().out.replace("\u2502", " ").split())
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    est = data["figures"]["map"]
    assert est == pytest.approx(0.04302133283352922, rel=1e-9)
    iv = data["figures"]["intervals"]
    assert iv["map"] is None and iv["n_undefined"]["map"] == 182
    assert iv["withheld"]["map"]["n_undefined"] == 182
    assert ids[0] in iv["withheld"]["map"]["categories"]
    # terminal: the figure says it has no interval and why, never a confident interval
    assert f"{est:.4f} (no interval: undefined on 182 of 200 resamples)" in text
    assert "[0.0469" not in text
    assert "no interval for mAP" in text
    md = (out / "report.md").read_text(encoding="utf-8")
    assert f"{est:.4f} (no interval: undefined on 182 of 200 resamples)" in md
    assert "no interval for mAP" in md
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO((out / "per_category.csv").read_text()))}
    one = rows[ids[0]]  # a single positive
    assert one["ap_ci_low"] == one["ap_ci_high"] == ""
    assert one["ap_ci_withheld"] == "True" and int(one["ap_ci_undefined"]) > 10
    many = rows[ids[8]]  # six positives
    assert many["ap_ci_low"] != "" and many["ap_ci_withheld"] == "False"
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "no CI: undefined on 182 of 200 resamples" in page
    assert "no interval for mAP" in page
    assert main([*args[:-1], "-q", "--bootstrap", "200"]) == 0
    quiet = capsys.readouterr().out
    assert "95% CI: mAP n/a (undefined on 182 of 200 resamples)" in quiet


def test_markdown_and_csv_of_the_api_result_agree() -> None:
    y, s = _rare_problem()
    r = toxeval.score(s, make_dataset(y), bootstrap=200)
    md = report_markdown(r)
    rows = list(csv.DictReader(io.StringIO(per_category_csv(r))))
    for row, rec in zip(rows, r.per_category, strict=True):
        assert row["ap_ci_withheld"] == str(rec["ap_ci_withheld"])
        assert row["ap_ci_undefined"] == str(rec["ap_ci_undefined"])
        line = next(x for x in md.splitlines() if x.startswith(f"| {rec['id']} |"))
        if rec["ap_ci_withheld"]:
            assert f"| n/a ({rec['ap_ci_undefined']} of 200 undefined) |" in line
        else:
            assert "n/a" not in line
    assert r.per_category[0]["ap_ci_withheld"] and not r.per_category[8]["ap_ci_withheld"]


# ---------------------------------------------------------------- compare and slices


def test_compare_withholds_intervals_and_bootstrap_tests_of_undefined_figures(
    tmp_path: Path,
) -> None:
    from toxeval.compare import compare
    from toxeval.report import write_outputs

    y, s = _rare_problem()
    ds = make_dataset(y)
    other = np.clip(s + 0.3 * y, 0, 1)
    write_outputs(toxeval.score(s, ds, bootstrap=0), tmp_path / "weak")
    write_outputs(toxeval.score(other, ds, bootstrap=0), tmp_path / "better")
    c = compare(
        [f"weak={tmp_path / 'weak'}", f"better={tmp_path / 'better'}"],
        baseline="weak",
        n_resamples=200,
        seed=0,
        fail_if_worse="map",
    )
    cell = c.cells["test"]["better"]
    assert cell.interval["map"] is None and cell.withheld["map"] == 182
    # the paired difference is undefined on the same resamples: no interval and no
    # bootstrap p-value (nor Holm's); the permutation test does not resample rows
    assert "map" not in cell.diff_interval and "map" not in cell.p_bootstrap
    assert "map" not in cell.p_holm and "map" in cell.p_permutation
    # (the paired resamples draw the rows matched by id, in id order: other draws)
    assert cell.withheld_diff["map"] > 0.05 * 200
    rec = next(r for r in c.to_records() if r["system"] == "better")
    assert rec["map_low"] is None and rec["map_undefined"] == 182
    assert rec["map_p_bootstrap"] is None and rec["map_p_permutation"] is not None
    assert "182 of 200" in c.to_markdown()
    # the regression gate cannot decide mAP here: undecided, with the reason
    assert c.gate is not None
    test = next(t for t in c.gate.tests if t.figure == "map")
    assert test.p is None and test.reason is not None
    assert f"{cell.withheld_diff['map']} of 200" in test.reason
    assert "more than 5%" in test.reason
    # label ranking loss is defined on every resample: intervals and tests as before
    assert cell.interval["label_ranking_loss"] is not None
    assert "label_ranking_loss" in cell.p_bootstrap


def test_slices_withhold_intervals_of_undefined_figures(tmp_path: Path) -> None:
    from toxeval.datasets import load_dataset
    from toxeval.slices import add_slices, slices_csv, slices_lines

    _, ds_path, _ = _write_rare_pair(tmp_path)
    rows = [json.loads(line) for line in ds_path.read_text().splitlines()]
    for i, row in enumerate(rows):
        row["half"] = "a" if i % 2 else "b"
    ds_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_dataset(ds_path)
    _, s = _rare_problem()
    result = toxeval.score(s, ds, bootstrap=0)
    add_slices(result, ds, ["half"], n_resamples=200, seed=0)
    assert result.slices is not None
    for sl in result.slices["columns"][0]["slices"]:
        iv = sl["intervals"]
        u = iv["n_undefined"]["map"]
        assert u > 10 and iv["map"] is None
    md = "\n".join(slices_lines(result.slices))
    assert "n/a (" in md and "resamples undefined" in md and "more than 5%" in md
    table = list(csv.DictReader(io.StringIO(slices_csv(result.slices))))
    assert all(r["map_ci_low"] == "" and int(r["map_ci_undefined"]) > 10 for r in table)


def test_an_estimate_outside_an_interval_given_is_named_in_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No constructed case puts a figure outside an interval that is given (the rule
    above sees to the undefined resamples), but a skewed distribution could: the note
    must then say so. The intervals are replaced to make one."""
    import dataclasses

    from toxeval.scoring import intervals

    y, s = _rare_problem((6, 8), n=100, seed=3)
    real = intervals.figure_intervals

    def shifted(*args: Any, **kwargs: Any) -> Any:
        fi = real(*args, **kwargs)
        up = (fi.map_estimate + 0.01, fi.map_estimate + 0.02)
        return dataclasses.replace(fi, map=up)

    monkeypatch.setattr(intervals, "figure_intervals", shifted)
    r = toxeval.score(s, make_dataset(y), bootstrap=50)
    notes = [n for n in r.notes if "outside its own interval" in n]
    assert notes == [
        "bootstrap: the estimate lies outside its own interval for mAP: its resampled "
        "values lie mostly on one side of it (a skewed bootstrap distribution), so read "
        "that interval as a rough guide"
    ]
    monkeypatch.undo()
    r = toxeval.score(s, make_dataset(y), bootstrap=50)
    assert not any("outside its own interval" in n for n in r.notes)


def test_reports_compare_and_the_gate_apply_the_rule_without_the_stats_warning(
    tmp_path: Path,
) -> None:
    # toxeval.stats warns about a conditioned interval; the reports withhold it and say
    # why, so the warning would only repeat that (and it reached the CLI's stderr)
    import warnings

    from toxeval.compare import compare
    from toxeval.report import write_outputs

    y, s = _rare_problem()
    ds = make_dataset(y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", stats.ConditionedIntervalWarning)
        write_outputs(toxeval.score(s, ds, bootstrap=200), tmp_path / "weak")
        write_outputs(toxeval.score(np.clip(s + 0.3 * y, 0, 1), ds, bootstrap=0), tmp_path / "b")
        c = compare(
            [f"weak={tmp_path / 'weak'}", f"b={tmp_path / 'b'}"],
            baseline="weak",
            n_resamples=200,
            seed=0,
            fail_if_worse="map,ap:c0",
        )
    assert c.cells["test"]["b"].withheld["map"] == 182


def test_lrl_undefined_on_most_resamples_is_withheld_without_the_stats_warning() -> None:
    import warnings

    y, s = _rare_problem(RARE_COUNTS[8:])  # every category has positives
    m = np.zeros(y.shape, dtype=bool)
    m[:1] = True  # one row with known labels: a resample misses it 37% of the time
    with warnings.catch_warnings():
        warnings.simplefilter("error", stats.ConditionedIntervalWarning)
        r = toxeval.score(s, make_dataset(y, m), bootstrap=200, bootstrap_seed=0)
    iv = r.figures["intervals"]
    assert iv["label_ranking_loss"] is None and iv["n_undefined"]["label_ranking_loss"] > 10
