"""Calibration, slices and operating points in toxeval compare (toxeval.compare_reported):
each system's own report's figures, side by side, in the records / CSV (calibration),
Markdown, HTML and the terminal; n/a where a folder has none."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from rich.console import Console
from toxeval.compare import compare
from toxeval.compare_reported import CALIBRATION_COLUMNS
from toxeval.datasets import load_dataset
from toxeval.report import write_outputs


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The lexicon baseline on the demo set with slices and operating points; the same
    scores squeezed into [0.2, 0.8] (same ranking, worse calibration) with them; and the
    baseline again without either."""
    root = tmp_path_factory.mktemp("reported")
    ds = load_dataset("demo")
    opts: dict[str, Any] = {"bootstrap": 20, "slice_by": "text_length"}
    raw = toxeval.evaluate(ds, operating_point="precision=0.9", **opts)
    write_outputs(raw, root / "raw")
    assert raw.rows is not None
    np.save(root / "sq.npy", 0.2 + 0.6 * raw.rows.scores)
    squeezed = toxeval.score(root / "sq.npy", ds, operating_point="precision=0.9", **opts)
    write_outputs(squeezed, root / "squeezed")
    write_outputs(toxeval.evaluate(ds, bootstrap=20), root / "plain")
    return {name: root / name for name in ("raw", "squeezed", "plain")}


def _results(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "results.json").read_text()))


def test_write_outputs_of_a_sliced_result_writes_slices_csv(folders: dict[str, Path]) -> None:
    assert (folders["raw"] / "slices.csv").is_file()
    assert not (folders["plain"] / "slices.csv").exists()


def test_calibration_columns_are_each_reports_means(folders: dict[str, Path]) -> None:
    cmp = compare([f"{n}={p}" for n, p in folders.items()], n_resamples=20)
    rows = list(csv.DictReader(io.StringIO(cmp.to_csv())))
    assert [r["system"] for r in rows] == ["raw", "squeezed", "plain"]
    for r in rows:
        macro = _results(folders[r["system"]])["calibration"]["macro"]
        for k in CALIBRATION_COLUMNS:
            assert float(r[k]) == pytest.approx(macro[k], rel=1e-15)
    # same ranking, so the same mAP; calibration tells them apart
    assert rows[0]["map"] == rows[1]["map"]
    assert float(rows[1]["brier_share"]) > 3 * float(rows[0]["brier_share"])


def test_tables_in_markdown_html_and_the_terminal(folders: dict[str, Path]) -> None:
    cmp = compare([f"{n}={p}" for n, p in folders.items()], n_resamples=20)
    md = cmp.to_markdown()
    for title in ("## Calibration against annotators", "## Slices", "## Operating points"):
        assert title in md
    raw = _results(folders["raw"])
    hate = next(p for p in raw["operating_points"]["points"] if p["category"] == "hate")
    line = next(x for x in md.splitlines() if x.startswith("| demo | hate |"))
    # raw's point, squeezed's, and n/a for the folder chosen without an operating point
    assert line.split(" | ")[2].startswith(f"{hate['threshold']:.4f}: P {hate['precision']:.3f}")
    assert line.rstrip(" |").endswith("n/a")
    short = next(s for s in raw["slices"]["columns"][0]["slices"] if s["value"] == "<=50")
    row = next(x for x in md.splitlines() if "\\<=50" in x)
    assert f"{short['figures']['map']:.4f} ({short['rows']} rows)" in row
    assert row.rstrip(" |").endswith("n/a")
    page = cmp.to_html()
    assert "<h2>Calibration against annotators</h2>" in page and "<h2>Slices</h2>" in page
    con = Console(record=True, width=160, color_system=None)
    cmp.render(con)
    text = con.export_text()
    assert "Operating points" in text and "0.1820" in text  # squeezed's mean ECE (share)


def test_nothing_added_without_the_blocks(folders: dict[str, Path], tmp_path: Path) -> None:
    cmp = compare([f"plain={folders['plain']}"], n_resamples=20)
    md = cmp.to_markdown()
    assert "## Slices" not in md and "## Operating points" not in md
    ds = load_dataset("demo")
    y = np.asarray(ds.y_true)
    no_votes = tmp_path / "d.jsonl"
    no_votes.write_text(
        "".join(
            json.dumps({"id": i, "text": t, "labels": [c for c, v in zip(ds.taxonomy.ids, r, strict=True) if v]}) + "\n"
            for i, t, r in zip(ds.ids, ds.texts, y, strict=True)
        )
    )  # fmt: skip
    write_outputs(toxeval.evaluate(no_votes, bootstrap=20), tmp_path / "out")
    plain = compare([str(tmp_path / "out")], n_resamples=20)
    assert "ece_share" not in plain.to_csv().splitlines()[0]
    assert "Calibration" not in plain.to_markdown()


@pytest.mark.parametrize(
    "block",
    [
        {"slices": {"columns": 5}},
        {"slices": {"columns": [{"column": "c", "slices": 5}]}},
        {"operating_points": {"points": 5}},
    ],
)
def test_a_malformed_block_reads_n_a(
    folders: dict[str, Path], tmp_path: Path, block: dict[str, Any]
) -> None:
    # a hand-edited or foreign results.json: its figures are missing (n/a), not a crash
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(folders["plain"], bad)
    results = _results(bad)
    results.update(block)
    (bad / "results.json").write_text(json.dumps(results))
    cmp = compare([f"raw={folders['raw']}", f"bad={bad}"], n_resamples=20)
    md = cmp.to_markdown()
    assert "## Calibration against annotators" in md


def test_an_estimate_outside_its_interval_is_said(folders: dict[str, Path]) -> None:
    # two resamples: some intervals miss their estimate; the legend names each, as the
    # systems' own reports do
    seen = {True: 0, False: 0}
    for seed in range(8):
        cmp = compare([f"{n}={p}" for n, p in folders.items()], n_resamples=2, seed=seed)
        outside = [
            f"{s} on {d}: {short}"
            for d in cmp.datasets
            for s, c in cmp.cells[d].items()
            for m, short in (("map", "mAP"), ("label_ranking_loss", "LRL"))
            if (ci := c.interval[m]) is not None and not ci[0] <= c.value[m] <= ci[1]
        ]
        md = cmp.to_markdown()
        assert ("outside its interval" in md) is bool(outside)
        for where in outside:
            assert where in md
        seen[bool(outside)] += 1
    assert seen[True] and seen[False]


def test_a_block_without_its_reason_or_source_prints_no_none(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    # a hand-edited results.json: "applicable": false without a reason, operating
    # points without a target or a source, a point without a category
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(folders["plain"], bad)
    results = _results(bad)
    results["calibration"] = {"applicable": False}
    results["operating_points"] = {"points": [{"threshold": 0.5}]}
    (bad / "results.json").write_text(json.dumps(results))
    md = compare([f"bad={bad}"], n_resamples=20).to_markdown()
    tables = md.split("## Calibration against annotators", 1)[1]
    assert "None" not in tables, tables
