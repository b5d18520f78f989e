"""``toxeval compare``: the datasets x systems matrix from results folders, with
intervals and paired tests that equal toxeval.stats on the same rows, in every format."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from toxeval import stats
from toxeval.cli import main
from toxeval.compare import CompareError, compare
from toxeval.report import write_outputs


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    ds = toxeval.load_dataset()
    rng = np.random.default_rng(0)
    root = tmp_path_factory.mktemp("results")
    out = {}
    lex = toxeval.evaluate()
    write_outputs(lex, root / "lex")
    out["lex"] = root / "lex"
    noisy = np.clip(ds.y_true * 0.5 + rng.random(ds.y_true.shape) * 0.6, 0, 1)
    write_outputs(toxeval.score(noisy, ds), root / "noisy")
    out["noisy"] = root / "noisy"
    # the same system on fewer rows: another item set
    from toxeval.predictions import predictions_from_array
    from toxeval.scoring import score_predictions

    preds = predictions_from_array(noisy, ds)
    scored = preds.scored.copy()
    scored[:5] = False
    import dataclasses

    fewer = score_predictions(dataclasses.replace(preds, scored=scored), ds)
    write_outputs(fewer, root / "fewer")
    out["fewer"] = root / "fewer"
    return out


def test_matrix_equals_toxeval_stats_on_the_same_rows(folders: dict[str, Path]) -> None:
    c = compare(
        [f"lex={folders['lex']}", f"noisy={folders['noisy']}"],
        baseline="lex",
        n_resamples=200,
        seed=3,
    )
    assert c.datasets == ["demo"] and c.systems == ["lex", "noisy"]
    ds = toxeval.load_dataset()
    lex = toxeval.evaluate()
    cell = c.cells["demo"]["lex"]
    assert cell.value["map"] == pytest.approx(lex.map, rel=1e-12)
    assert cell.value["label_ranking_loss"] == pytest.approx(
        lex.figures["label_ranking_loss"], rel=1e-12
    )
    rows = lex.rows
    assert rows is not None
    b = stats.bootstrap(
        "label_ranking_loss",
        rows.y_true,
        rows.scores,
        mask=rows.mask,
        n_resamples=200,
        seed=3,
    )
    assert cell.interval["label_ranking_loss"] == pytest.approx(tuple(b.confidence_interval))
    noisy = c.cells["demo"]["noisy"]
    assert noisy.best["map"] and not cell.best["map"]
    assert noisy.diff["map"] == pytest.approx(noisy.value["map"] - cell.value["map"])
    assert 0 < noisy.p_bootstrap["label_ranking_loss"] <= 1
    assert noisy.p_holm["map"] >= noisy.p_bootstrap["map"] - 1e-15
    assert ds.taxonomy.k == len(rows.y_true[0])


def test_formats(folders: dict[str, Path]) -> None:
    c = compare(
        [f"lex={folders['lex']}", f"noisy={folders['noisy']}"], baseline="lex", n_resamples=50
    )
    md = c.to_markdown()
    assert md.splitlines()[0] == "| system | demo mAP ↑ | demo LRL ↓ |"
    assert "lex (baseline)" in md and "**" in md
    tex = c.to_latex()
    assert tex.startswith("\\begin{tabular}{lcc}") and "\\toprule" in tex and "\\bottomrule" in tex
    rows = list(csv.DictReader(io.StringIO(c.to_csv())))
    assert [r["system"] for r in rows] == ["lex", "noisy"]
    assert float(rows[0]["map"]) == pytest.approx(c.cells["demo"]["lex"].value["map"])
    page = c.to_html()
    assert page.startswith("<!DOCTYPE html>") and "Paired tests against the baseline" in page


def test_different_item_sets_are_refused(folders: dict[str, Path]) -> None:
    with pytest.raises(CompareError, match="different items"):
        compare([f"a={folders['noisy']}", f"b={folders['fewer']}"], n_resamples=20)


def test_cli(folders: dict[str, Path], tmp_path: Path, capsys: Any) -> None:
    page = tmp_path / "cmp.html"
    args = [f"lex={folders['lex']}", f"noisy={folders['noisy']}", "--bootstrap", "50"]
    assert main(["compare", *args, "--format", "csv", "--html", str(page)]) == 0
    assert capsys.readouterr().out.startswith("dataset,system,map,")
    assert page.is_file()
    assert main(["compare", *args, "--baseline", "nobody"]) == 2
    assert "--baseline 'nobody' is none of the systems" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "missing")]) == 2
    assert main(["compare", *args, "--bootstrap", "0"]) == 2


def test_latex_escapes_system_names(folders: dict[str, Path]) -> None:
    c = compare([f"gpt_4$&{{x}}={folders['lex']}"], n_resamples=20)
    tex = c.to_latex()
    assert r"gpt\_4\$\&\{x\}" in tex
    assert "gpt_4$" not in tex
