"""Calibration against annotators (toxeval.calibration) and the mAP intervals that resample
annotators as well as rows (toxeval.scoring.annotator_intervals): each figure against a
direct computation (scikit-learn's brier_score_loss and calibration_curve, a NumPy ECE,
a NumPy + scikit-learn two-stage bootstrap on the same seeds); unknown cells and rows
without annotators left out and counted; scores that are not probabilities get no figure;
the outputs (terminal, report.md, per_category.csv, results.json, report.html in
headless Chromium)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm
import toxeval
from helpers import make_dataset
from scipy.stats import binom
from sklearn.calibration import calibration_curve
from toxeval.calibration import (
    FIGURES,
    NO_CELL,
    NOT_PROBABILITIES,
    annotator_interval_line,
    brier_score,
    expected_calibration_error,
)
from toxeval.cli import main
from toxeval.predictions import predictions_from_array
from toxeval.report import per_category_csv, report_markdown
from toxeval.scoring import score_predictions
from toxeval.scoring.annotator_intervals import annotator_map_intervals, majority_probability
from toxeval.scoring.intervals import add_intervals


def _ece_reference(s: np.ndarray, t: np.ndarray, n_bins: int = 10) -> float:
    """ECE by its textbook definition, bin by bin: [0, 0.1], (0.1, 0.2], ..., (0.9, 1],
    the edges those of scikit-learn's calibration_curve (np.linspace(0, 1, 11))."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    total = 0.0
    for b in range(n_bins):
        lo, hi = edges[b], edges[b + 1]
        inside = (s <= hi) & ((s > lo) if b else (s >= lo))
        if inside.any():
            total += inside.sum() / s.size * abs(t[inside].mean() - s[inside].mean())
    return total


def _annotated(seed: int, n: int = 120, k: int = 4) -> dict[str, Any]:
    """Rows with 0 (no annotations), 3 or 5 annotators, split votes on some cells, some
    unknown labels, scores rounded to two decimals (ties, scores on bin edges)."""
    rng = np.random.default_rng(seed)
    n_ann = rng.choice([0, 3, 5], n, p=[0.25, 0.4, 0.35])
    p = rng.uniform(0.15, 0.5, k)
    counts = np.stack([rng.binomial(n_ann, p[c]) for c in range(k)], axis=1)
    share = counts / np.maximum(n_ann, 1)[:, None]
    y = np.where(n_ann[:, None] > 0, share > 0.5, rng.random((n, k)) < 0.3).astype(np.int8)
    mask = rng.random((n, k)) >= 0.1
    soft = np.where(n_ann[:, None] > 0, share, y.astype(float))
    soft = np.where(mask, soft, np.nan)
    s = np.round(np.clip(0.5 * share + 0.3 * y + 0.4 * rng.random((n, k)) - 0.1, 0, 1), 1)
    return {"y": y, "mask": mask, "soft": soft, "n_ann": n_ann, "s": s}


def _result(d: dict[str, Any]) -> toxeval.EvaluationResult:
    ds = make_dataset(d["y"], d["mask"], soft=d["soft"], n_annotators=d["n_ann"])
    return score_predictions(predictions_from_array(d["s"], ds), ds)


@pytest.mark.parametrize("seed", range(5))
def test_ece_equals_a_bin_by_bin_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # scores on every bin edge, ties, and shares as targets as well as 0/1 labels
    s = np.concatenate([np.linspace(0, 1, 11), np.round(rng.random(200), 2)])
    for t in (rng.random(s.size), (rng.random(s.size) < s).astype(float)):
        assert expected_calibration_error(s, t) == pytest.approx(_ece_reference(s, t), abs=1e-12)
    assert np.isnan(expected_calibration_error(np.empty(0), np.empty(0)))


@pytest.mark.parametrize("seed", range(5))
def test_calibration_block_equals_sklearn_and_numpy_per_category(seed: int) -> None:
    d = _annotated(10 + seed)
    block = _result(d).calibration
    assert block is not None and block["applicable"] and block["reason"] is None
    annotated = d["n_ann"] > 0
    assert block["annotated_rows"] == int(annotated.sum())
    assert block["rows_without_annotations"] == int((~annotated).sum())
    for k, row in enumerate(block["per_category"]):
        cells = annotated & d["mask"][:, k]
        s, share = d["s"][cells, k], d["soft"][cells, k]
        major = (share > 0.5).astype(int)
        assert row["cells"] == int(cells.sum())
        assert row["excluded_unknown"] == int((annotated & ~d["mask"][:, k]).sum()) > 0
        assert row["brier_majority"] == pytest.approx(skm.brier_score_loss(major, s), abs=1e-12)
        assert row["brier_share"] == pytest.approx(np.mean((s - share) ** 2), abs=1e-12)
        assert row["ece_share"] == pytest.approx(_ece_reference(s, share), abs=1e-12)
        assert row["ece_majority"] == pytest.approx(_ece_reference(s, major), abs=1e-12)
        # the reliability bins are scikit-learn's calibration_curve (uniform, 10 bins)
        prob_true, prob_pred = calibration_curve(major, s, n_bins=10, strategy="uniform")
        full = [b for b, c in enumerate(row["bins"]["count"]) if c]
        np.testing.assert_allclose([row["bins"]["mean_majority"][b] for b in full], prob_true)
        np.testing.assert_allclose([row["bins"]["mean_score"][b] for b in full], prob_pred)
        assert sum(row["bins"]["count"]) == row["cells"]
    for f in FIGURES:
        want = np.mean([r[f] for r in block["per_category"]])
        assert block["macro"][f] == pytest.approx(want, abs=1e-12)


def test_direct_functions_match_the_formulas() -> None:
    s = np.array([0.0, 0.2, 0.7, 1.0])
    t = np.array([0.0, 0.5, 1.0, 1.0])
    assert brier_score(s, t) == pytest.approx((0.3**2 + 0.3**2) / 4)
    # bins: 0 and 0.2 alone, 0.7 alone, 1.0 alone: |0-0| + |0.5-0.2| + |1-0.7| + 0, over 4
    assert expected_calibration_error(s, t) == pytest.approx(0.6 / 4)


@pytest.mark.parametrize("bad", [1.5, -0.25, 7.0])
def test_scores_that_are_not_probabilities_get_no_figure(bad: float) -> None:
    d = _annotated(3)
    d["s"] = d["s"].copy()
    d["s"][5, 1] = bad
    d["mask"][5, 1] = True
    block = _result(d).calibration
    assert block is not None and not block["applicable"]
    assert block["reason"].startswith(NOT_PROBABILITIES)
    for row in block["per_category"]:
        assert all(row[f] is None for f in FIGURES) and row["bins"] is None
        assert row["reason"] == block["reason"]
    assert all(v is None for v in block["macro"].values())
    result = _result(d)
    md = report_markdown(result)
    section = md.split("## Calibration against annotators", 1)[1].split("\n## ", 1)[0]
    assert "calibration does not apply: scores outside [0, 1]" in section.replace("\\", "")
    assert "| category |" not in section  # no table of n/a rows
    from toxeval.html_report import render_html

    page = render_html(add_intervals(result, 20).to_dict())
    assert "calibration does not apply" in page and "Reliability diagram" not in page
    assert "mAP against the annotators&#x27; majority" in page  # mAP needs no probabilities
    from rich.console import Console
    from toxeval.report import render

    con = Console(record=True, width=200, color_system=None)
    render(result, con)
    assert "calibration against annotators: calibration does not apply" in con.export_text()


@pytest.mark.parametrize("bad", [1.0000001, np.nextafter(1.0, 2.0), -1e-12, -0.0000004])
def test_a_score_just_outside_0_1_is_shown_outside(bad: float) -> None:
    # a float32 sigmoid's 1.0000001: the reason must not print its range as "0 to 1"
    d = _annotated(3)
    d["s"] = np.clip(d["s"].copy(), 0.01, 0.99)
    d["s"][5, 1] = bad
    d["mask"][5, 1] = True
    block = _result(d).calibration
    assert block is not None and not block["applicable"]
    shown = re.search(r"run from (\S+) to (\S+)\)", block["reason"])
    assert shown is not None
    lo, hi = float(shown[1]), float(shown[2])
    assert lo < 0 or hi > 1, block["reason"]


def test_an_unknown_out_of_range_score_does_not_count() -> None:
    """Only known cells' scores are read: a score on an unknown label is not scored."""
    d = _annotated(4)
    d["s"] = d["s"].copy()
    d["mask"][7, 2] = False
    d["soft"][7, 2] = np.nan
    d["s"][7, 2] = 9.0
    assert _result(d).calibration["applicable"]  # type: ignore[index]


def test_a_category_without_annotated_known_cells_says_why() -> None:
    d = _annotated(5)
    d["mask"][d["n_ann"] > 0, 3] = False
    d["soft"][:, 3] = np.where(d["mask"][:, 3], d["soft"][:, 3], np.nan)
    block = _result(d).calibration
    assert block is not None
    row = block["per_category"][3]
    assert row["cells"] == 0 and row["reason"] == NO_CELL and row["ece_share"] is None
    assert block["macro"]["ece_share"] == pytest.approx(
        np.mean([r["ece_share"] for r in block["per_category"][:3]])
    )


def test_no_calibration_without_annotators() -> None:
    d = _annotated(6)
    ds = make_dataset(d["y"], d["mask"])
    result = score_predictions(predictions_from_array(d["s"], ds), ds)
    assert result.calibration is None and "calibration" not in result.to_dict()
    d["n_ann"] = np.zeros_like(d["n_ann"])
    assert _result(d).calibration is None


def _two_stage_reference(
    d: dict[str, Any], n_resamples: int, seed: int, level: float
) -> tuple[list[float] | None, list[float] | None, float, float | None]:
    """The two-stage bootstrap written out, drawn rows and copies as rows, with
    scikit-learn's AP and SciPy's binomial tail, on the documented draws: per resample
    rng.integers(0, N, N), then rng.binomial(copies, p) per contested cell of a drawn row,
    row-major."""
    y, m, soft, n_ann, s = d["y"], d["mask"], d["soft"], d["n_ann"], d["s"]
    n, k = y.shape
    voted = m & (n_ann[:, None] > 0)
    share = np.where(voted, soft, 0.0)
    labels = np.where(voted, share > 0.5, y == 1).astype(int)
    p = np.where(voted, binom.sf(n_ann[:, None] // 2, n_ann[:, None], share), labels)
    contested = voted & (p > 0) & (p < 1)

    def mean_ap(lab: np.ndarray, sc: np.ndarray, mk: np.ndarray, cols: list[int]) -> float:
        aps = []
        for c in cols:
            known = mk[:, c]
            if not (lab[known, c] == 1).any():
                return float("nan")
            aps.append(skm.average_precision_score(lab[known, c], sc[known, c]))
        return float(np.mean(aps))

    cols = [c for c in range(k) if ((labels[:, c] == 1) & m[:, c]).any()]
    rng = np.random.default_rng(seed)
    rows_only, both = [], []
    for _ in range(n_resamples):
        copies = np.bincount(rng.integers(0, n, n), minlength=n)
        positive_copies = {}
        for i in range(n):  # one draw per contested cell, in row-major order
            for c in range(k):
                if contested[i, c] and copies[i]:
                    positive_copies[i, c] = rng.binomial(copies[i], p[i, c])
        rows = np.repeat(np.arange(n), copies)  # every drawn copy, as a row
        copy_no = np.concatenate([np.arange(x) for x in copies])
        redrawn = labels[rows].copy()
        for (i, c), got in positive_copies.items():
            redrawn[rows == i, c] = (copy_no[rows == i] < got).astype(int)
        rows_only.append(mean_ap(labels[rows], s[rows], m[rows], cols))
        both.append(mean_ap(redrawn, s[rows], m[rows], cols))
    a = (1 - level) / 2

    def withheld(values: list[float]) -> bool:  # the report's rule on undefined resamples
        v = np.array([x for x in values if np.isfinite(x)])
        return v.size < 2 or len(values) - v.size > (1 - level) * len(values) + 1e-9

    def ci(values: list[float]) -> list[float] | None:
        v = np.array([x for x in values if np.isfinite(x)])
        return None if withheld(values) else [float(q) for q in np.quantile(v, [a, 1 - a])]

    med = None if withheld(both) else float(np.median([x for x in both if np.isfinite(x)]))
    return ci(rows_only), ci(both), mean_ap(labels, s, m, cols), med


def test_majority_probability_is_the_binomial_tail_and_a_simulated_majority() -> None:
    n = np.array([1, 2, 3, 4, 5, 7, 10, 3, 3, 0, 2000, 5000])
    q = np.array([0.5, 0.5, 2 / 3, 0.5, 0.4, 3 / 7, 0.6, 0.0, 1.0, 0.0, 0.49, 0.503])
    got = majority_probability(n, q)
    np.testing.assert_allclose(got, binom.sf(n // 2, n, q), rtol=1e-11, atol=1e-15)
    n, q = n[:10], q[:10]
    got = got[:10]
    # the majority of n annotators drawn with replacement from n, a share q of whom voted
    rng = np.random.default_rng(0)
    for nn, qq, pp in zip(n, q, got, strict=True):
        votes = (rng.random((100_000, nn)) < qq).sum(axis=1)
        assert np.mean(votes * 2 > nn) == pytest.approx(pp, abs=0.006)


@pytest.mark.parametrize(("seed", "k"), [(0, 3), (1, 3), (2, 3), (3, 1)])
def test_annotator_intervals_equal_a_numpy_reference_on_the_same_seed(seed: int, k: int) -> None:
    d = _annotated(20 + seed, n=60, k=k)
    got = annotator_map_intervals(
        d["y"], d["s"], d["mask"], d["soft"], d["n_ann"],
        n_resamples=60, seed=seed, confidence_level=0.9,
    )  # fmt: skip
    assert got is not None
    ci_rows, ci_both, estimate, median = _two_stage_reference(d, 60, seed, 0.9)
    assert got["map"] == pytest.approx(estimate, abs=1e-12)
    assert got["ci_rows"] == pytest.approx(ci_rows, abs=1e-12)
    assert got["ci_rows_and_annotators"] == pytest.approx(ci_both, abs=1e-12)
    assert got["median_rows_and_annotators"] == pytest.approx(median, abs=1e-12)
    assert got["ci_rows"] != pytest.approx(got["ci_rows_and_annotators"])


def test_annotator_intervals_are_withheld_when_a_rare_category_leaves_many_undefined() -> None:
    d = _annotated(40, n=60, k=3)
    # one known positive left in category 2: most resamples miss it (mAP undefined there)
    pos = np.flatnonzero(d["y"][:, 2] == 1)
    d["y"][pos[1:], 2] = 0
    d["soft"][pos[1:], 2] = np.where(np.isnan(d["soft"][pos[1:], 2]), np.nan, 0.0)
    d["soft"][pos[0], 2] = np.where(np.isnan(d["soft"][pos[0], 2]), np.nan, 1.0)
    got = annotator_map_intervals(
        d["y"], d["s"], d["mask"], d["soft"], d["n_ann"],
        n_resamples=60, seed=0, confidence_level=0.9,
    )  # fmt: skip
    assert got is not None and got["n_undefined"]["rows"] > 6  # more than 10% of 60
    ci_rows, ci_both, _, median = _two_stage_reference(d, 60, 0, 0.9)
    assert got["ci_rows"] is None and ci_rows is None
    # redrawn annotators of other contested cells can give the category positives, so the
    # second stage may be defined more often: it follows the same rule on its own count
    assert got["ci_rows_and_annotators"] == (
        None if ci_both is None else pytest.approx(ci_both, abs=1e-12)
    )
    assert got["median_rows_and_annotators"] == (
        None if median is None else pytest.approx(median, abs=1e-12)
    )


def test_an_estimate_outside_its_rows_interval_is_said() -> None:
    # small sets and few resamples: the rows-only percentile interval misses the estimate
    # on some of them (a skewed bootstrap distribution); the line must say so, as the
    # report's notes do for its own intervals
    rng = np.random.default_rng(0)
    seen = {True: 0, False: 0}
    for seed in range(60):
        n_ann = rng.integers(1, 6, 30)
        share = rng.binomial(n_ann[:, None], 0.3, (30, 2)) / n_ann[:, None]
        got = annotator_map_intervals(
            (share > 0.5).astype(np.int8), rng.random((30, 2)), np.ones((30, 2), bool),
            share, n_ann, n_resamples=int(rng.integers(2, 30)), seed=seed,
            confidence_level=0.95,
        )  # fmt: skip
        assert got is not None
        if got["ci_rows"] is None:  # withheld: too many resamples without a positive
            continue
        outside = not got["ci_rows"][0] <= got["map"] <= got["ci_rows"][1]
        line = annotator_interval_line({"annotator_intervals": got})
        assert line is not None
        assert ("the estimate lies outside its rows interval" in line) is outside
        seen[outside] += 1
    assert seen[True] and seen[False]


def test_one_scored_row_gets_no_annotator_interval() -> None:
    # the report gives no interval on one row ("resampling needs two or more scored
    # rows"); the annotator line must not show a [1.0000, 1.0000] beside that note
    d = _annotated(3, n=1, k=3)
    d["n_ann"][:] = 3
    d["soft"] = np.full((1, 3), 2 / 3)
    d["y"][:] = 1
    d["mask"][:] = True
    result = add_intervals(_result(d), 20)
    assert result.agreement is not None
    assert result.agreement["annotator_intervals"] is None
    assert "annotator resampling" not in report_markdown(result)


def test_a_withheld_annotator_interval_says_why() -> None:
    # two rows: most resamples draw no positive, so both intervals are withheld; the
    # line says on how many resamples the figure was undefined, not a bare n/a
    d = _annotated(3, n=2, k=3)
    d["n_ann"][:] = 3
    d["mask"][:] = True
    d["soft"] = np.array([[2 / 3, 0.0, 1.0], [0.0, 1 / 3, 0.0]])
    d["y"] = (d["soft"] > 0.5).astype(np.int8)
    result = add_intervals(_result(d), 20)
    assert result.agreement is not None
    ai = result.agreement["annotator_intervals"]
    assert ai["ci_rows"] is None and ai["ci_rows_and_annotators"] is None
    line = annotator_interval_line(result.agreement)
    assert line is not None
    u = ai["n_undefined"]
    assert f"n/a (undefined on {u['rows']} of 20 resamples)" in line
    assert f"n/a (undefined on {u['rows_and_annotators']} of 20 resamples)" in line


def test_unanimous_annotators_add_nothing_to_the_interval() -> None:
    d = _annotated(30)
    d["soft"] = np.where(np.isnan(d["soft"]), np.nan, (d["soft"] > 0.5).astype(float))
    got = annotator_map_intervals(
        d["y"], d["s"], d["mask"], d["soft"], d["n_ann"],
        n_resamples=50, seed=4, confidence_level=0.95,
    )  # fmt: skip
    assert got is not None and got["ci_rows"] == got["ci_rows_and_annotators"]


def test_add_intervals_puts_them_beside_the_agreement_figures() -> None:
    result = add_intervals(_result(_annotated(8)), 40, seed=3, confidence_level=0.9)
    ai = result.agreement["annotator_intervals"]  # type: ignore[index]
    assert ai["n_resamples"] == 40 and ai["seed"] == 3 and ai["confidence_level"] == 0.9
    assert "map_contested_rows" in result.agreement  # type: ignore[operator]
    add_intervals(result, 0)
    assert result.agreement["annotator_intervals"] is None  # type: ignore[index]


def test_outputs_show_the_calibration(tmp_path: Path, capsys: Any) -> None:
    result = add_intervals(_result(_annotated(9)), 30)
    md = report_markdown(result)
    assert "## Calibration against annotators" in md
    assert "mAP against the annotators' majority" in md
    rows = list(csv.DictReader(io.StringIO(per_category_csv(result))))
    for row, cal in zip(rows, result.calibration["per_category"], strict=True):  # type: ignore[index]
        assert float(row["ece_share"]) == pytest.approx(cal["ece_share"], rel=1e-15)
        assert float(row["brier_majority"]) == pytest.approx(cal["brier_majority"], rel=1e-15)
    ds = make_dataset(np.eye(3, dtype=np.int8))
    plain = score_predictions(predictions_from_array(np.eye(3), ds), ds)
    first = next(csv.DictReader(io.StringIO(per_category_csv(plain))))
    assert all(first[f] == "" for f in FIGURES)


def test_cli_and_chromium_show_the_calibration(
    tmp_path: Path, run_browser: Any, capsys: Any
) -> None:
    out = tmp_path / "out"
    assert main(["evaluate", "--bootstrap", "20", "--out", str(out), "--html"]) == 0
    printed = capsys.readouterr().out
    assert "calibration against annotators" in printed
    assert "annotator resampling" in printed
    block = json.loads((out / "results.json").read_text())["calibration"]
    assert block["applicable"] and block["annotated_rows"] == 106
    proc = run_browser(out / "report.html", "--dump-dom")
    assert [line for line in proc.stderr.splitlines() if "CONSOLE" in line] == []
    section = proc.stdout.split("<h2>Calibration against annotators</h2>", 1)[1]
    table = section.split("</table>", 1)[0]
    body = table.split("<tbody>", 1)[1].split("</tr>")[:-1]
    assert len(body) == len(block["per_category"]) + 1  # the categories and their mean
    for row, cal in zip(body, block["per_category"], strict=False):
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
        assert cells[:3] == [cal["id"], str(cal["cells"]), f"{cal['ece_share']:.4f}"]
    figure = section.split("<svg", 1)[1].split("</svg>", 1)[0]
    assert "Reliability diagram" in figure
    dots = sum(c > 0 for cal in block["per_category"] for c in cal["bins"]["count"])
    assert figure.count("<circle") == 2 * dots  # a share dot and a majority dot per bin


def test_the_decision_example_of_statistics_md_prints_what_it_shows(capsys: Any) -> None:
    doc = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
    if not doc.is_file():
        pytest.skip("docs/statistics.md is not beside the tests")
    section = doc.read_text(encoding="utf-8").split("## Calibration against annotators", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, str(doc), "exec"), {})
    shown = [line.split("# -> ", 1)[1] for line in code.splitlines() if "# -> " in line]
    assert capsys.readouterr().out.splitlines() == shown


def test_the_annotator_intervals_bench_runs() -> None:
    """benches/bench_annotator_intervals.py end to end on a tiny workload (no timing)."""
    import os
    import subprocess
    import sys

    bench = Path(__file__).resolve().parents[1] / "benches" / "bench_annotator_intervals.py"
    if not bench.is_file():
        pytest.skip("benches/ is not beside the tests")
    argv = ["--rows", "300", "--labels", "3", "--resamples", "4", "--slow-resamples", "1"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, str(bench), *argv], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "annotator intervals (4 resamples)" in proc.stdout
    assert "written out in NumPy + scikit-learn" in proc.stdout
