"""``toxeval compare``: the datasets x systems matrix from results folders, with
intervals and paired tests that equal toxeval.stats on the same rows, in every format."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from toxeval import stats
from toxeval.cli import main
from toxeval.compare import MAX_RESAMPLES, CompareError, compare
from toxeval.report import write_outputs
from toxeval.scored_rows import FILE_NAME, read_scored_rows
from toxeval.scoring.intervals import figure_intervals


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
    with pytest.raises(CompareError, match="different items") as err:
        compare([f"a={folders['noisy']}", f"b={folders['fewer']}"], n_resamples=20)
    assert "5 ids ('demo-0001', 'demo-0002', 'demo-0003', ...) only in the first" in str(err.value)
    assert "0 ids only in the second" in str(err.value)


def _reordered(folder: Path, to: Path, order: np.ndarray) -> Path:
    """A copy of a results folder whose scored_rows.parquet holds its rows in ``order``."""
    from toxeval.scored_rows import FILE_NAME, read_scored_rows, write_scored_rows

    shutil.copytree(folder, to)
    r = read_scored_rows(to / FILE_NAME)
    ids = [r.ids[i] for i in order]
    write_scored_rows(
        to / FILE_NAME, ids, r.category_ids, r.y_true[order], r.mask[order], r.scores[order],
        dataset_sha256=r.dataset_sha256,
    )  # fmt: skip
    assert read_scored_rows(to / FILE_NAME).ids == tuple(ids) != r.ids
    return to


def test_the_same_items_in_another_order_are_matched_by_id(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    # the same ids in another order were refused ("0 ids only in the first, 0 only in
    # the second, same ids in another order"); paired tests need the same items only
    order = np.random.default_rng(4).permutation(362)
    shuffled = _reordered(folders["noisy"], tmp_path / "noisy", order)
    kw: dict[str, Any] = {"baseline": "lex", "n_resamples": 40, "seed": 9}
    want = compare([f"lex={folders['lex']}", f"noisy={folders['noisy']}"], **kw)
    got = compare([f"lex={folders['lex']}", f"noisy={shuffled}"], **kw)
    assert _paired(got) == _paired(want)
    assert got.cells["demo"]["noisy"].p_permutation == want.cells["demo"]["noisy"].p_permutation
    # the reordered folder as baseline, second: the same paired tests
    kw["baseline"] = "noisy"
    want = compare([f"lex={folders['lex']}", f"noisy={folders['noisy']}"], **kw)
    got = compare([f"lex={folders['lex']}", f"noisy={shuffled}"], **kw)
    assert _paired(got) == _paired(want)
    # each system's own interval is drawn over its folder's rows in that folder's order,
    # as its results.json's is: the reordered folder's over the shuffled rows
    own = read_scored_rows(shuffled / FILE_NAME)
    fi = figure_intervals(own.y_true, own.scores, own.mask, n_resamples=40, seed=9)
    assert got.cells["demo"]["noisy"].interval == {
        "map": fi.map, "label_ranking_loss": fi.label_ranking_loss
    }  # fmt: skip
    assert got.cells["demo"]["lex"].interval == want.cells["demo"]["lex"].interval
    assert got.cells["demo"]["noisy"].interval != want.cells["demo"]["noisy"].interval


def _paired(c: Any) -> list[dict[str, Any]]:
    """The records without the systems' own intervals (the figures and paired tests)."""
    return [{k: v for k, v in r.items() if not k.endswith(("_low", "_high")) or "_diff_" in k}
            for r in c.to_records()]  # fmt: skip


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


def test_a_dataset_without_the_baseline_is_named_in_the_legend(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    # systems on a dataset the baseline was not scored on got no paired test and no
    # mark, which read as "not significantly different from the baseline"
    from importlib.resources import files

    demo = files("toxeval") / "data" / "datasets" / "demo.jsonl"
    other = tmp_path / "demo_copy.jsonl"
    other.write_bytes(demo.read_bytes() + b"\n")  # the same rows, another file (sha256)
    rng = np.random.default_rng(1)
    for name in ("x", "y"):
        ds = toxeval.load_dataset(other)
        write_outputs(toxeval.score(rng.random(ds.y_true.shape), ds), tmp_path / name)
    c = compare(
        [f"lex={folders['lex']}", f"noisy={folders['noisy']}"]
        + [f"{n}={tmp_path / n}" for n in ("x", "y")],
        baseline="lex",
        n_resamples=20,
    )
    assert c.datasets == ["demo", "demo_copy"]
    assert c.cells["demo_copy"]["x"].p_holm == {}
    # the matrix's legend (the tables of the folders' own reports follow it)
    legend = c.to_markdown().split("\n## ", 1)[0].splitlines()[-1]
    assert legend.endswith("No paired tests on demo\\_copy: lex was not scored on it.")
    assert "No paired tests on demo_copy: lex was not scored on it." in c.to_html()
    assert "No paired tests on demo_copy" in c.to_latex()
    # with the baseline on every dataset, nothing is said
    assert (
        "No paired tests"
        not in compare(
            [f"lex={folders['lex']}", f"noisy={folders['noisy']}"], baseline="lex", n_resamples=20
        ).to_markdown()
    )


def test_chromium_sorts_the_compare_page_by_a_figure(
    folders: dict[str, Path], run_browser: Any, tmp_path: Path
) -> None:
    """A click on a figure's header sorts the systems by it (the matrix cells carry no
    sort key of their own, and sorting left the rows as they were)."""
    import re

    c = compare(
        [f"lex={folders['lex']}", f"noisy={folders['noisy']}", f"z={folders['lex']}"],
        n_resamples=20,
    )
    # one click on the mAP header: ascending
    click = (
        "<script>var th=document.querySelectorAll('table.sortable th');"
        "th[1].click();</script></body>"
    )
    page = tmp_path / "cmp.html"
    page.write_text(c.to_html().replace("</body>", click), encoding="utf-8")
    proc = run_browser(page, "--dump-dom")
    assert [line for line in proc.stderr.splitlines() if "CONSOLE" in line] == []
    body = proc.stdout.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    shown = re.findall(r"<tr><td>([^<]*)</td>", body)
    by_map = sorted(c.systems, key=lambda s: c.cells["demo"][s].value["map"])
    assert shown == by_map and by_map != c.systems


def test_one_folder_may_be_given_as_a_path_or_a_string(folders: dict[str, Path]) -> None:
    # a string was read as a list of one-character folder names, a Path was a TypeError
    lex = folders["lex"]
    for given in (lex, str(lex), f"lex={lex}"):
        c = compare(given, n_resamples=20)
        assert len(c.systems) == 1 and c.datasets == ["demo"]


def test_the_confidence_level_is_named_as_asked(folders: dict[str, Path]) -> None:
    # 0.975 was printed as "98%"
    c = compare([str(folders["lex"])], n_resamples=20, confidence_level=0.975)
    assert "[97.5% bootstrap interval, 20 resamples" in c.to_markdown()


def test_latex_escapes_system_names(folders: dict[str, Path]) -> None:
    c = compare([f"gpt_4$&{{x}}={folders['lex']}"], n_resamples=20)
    tex = c.to_latex()
    assert r"gpt\_4\$\&\{x\}" in tex
    assert "gpt_4$" not in tex


def test_a_line_end_in_a_name_stays_in_its_markdown_row(folders: dict[str, Path]) -> None:
    # a name with a line end (from results.json, or NAME=DIR) cut its table row in two
    c = compare([f"a\nb={folders['lex']}", f"c\r\nd={folders['noisy']}"], n_resamples=20)
    whole = c.to_markdown()
    md = whole.split("\n## ", 1)[0].splitlines()  # the matrix, then the folders' own tables
    assert md[2].startswith("| a b | ") and md[3].startswith("| c  d | ")
    assert md[4] == "" and len(md) == 6
    calibration = whole.split("## Calibration against annotators", 1)[1].splitlines()
    assert [x[:14] for x in calibration if x.startswith("| demo")] == [
        "| demo | a b |",
        "| demo | c  d ",
    ]


def test_latex_rows_cannot_start_with_an_argument_of_the_previous_line_break(
    folders: dict[str, Path],
) -> None:
    # LaTeX reads "\\ [v2]" (even across the line end) as the line break's optional
    # length, an error, and "\\ *x" as its star form, dropping the "*"; "<", ">" and "|"
    # print as other glyphs in LaTeX's default font encoding
    c = compare([f"[v2] a={folders['lex']}", f"*x<y>|z={folders['noisy']}"], n_resamples=20)
    body = c.to_latex().split("\\midrule\n", 1)[1].split("\n\\bottomrule", 1)[0].splitlines()
    assert [row.split(" & ")[0] for row in body] == [
        "{[}v2{]} a",
        r"{*}x\textless{}y\textgreater{}\textbar{}z",
    ]


@pytest.mark.parametrize("text", ["[1, 2]", '{"system": "x", "dataset": {}}', '{"dataset": 3}'])
def test_results_json_of_another_shape_is_refused(
    folders: dict[str, Path], tmp_path: Path, capsys: Any, text: str
) -> None:
    # a results.json that is not an object (or whose system/dataset are not objects)
    # was an internal error (AttributeError)
    other = tmp_path / "other"
    shutil.copytree(folders["lex"], other)
    (other / "results.json").write_text(text, encoding="utf-8")
    with pytest.raises(CompareError, match=r"results\.json: not a toxeval results\.json"):
        compare([str(other)], n_resamples=20)
    assert main(["compare", str(other)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_html_is_checked_before_any_work_and_never_overwrites_an_input(
    folders: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    lex = folders["lex"]
    results = lex / "results.json"
    before = results.read_bytes()
    # the page was written over results.json, destroying the results folder
    assert main(["compare", str(lex), "--bootstrap", "20", "--html", str(results)]) == 2
    assert results.read_bytes() == before
    assert "inside the results folder" in capsys.readouterr().err
    assert not (lex / "cmp.html").exists()
    for target in (tmp_path, tmp_path / "missing" / "cmp.html"):
        assert main(["compare", str(lex), "--bootstrap", "20", "--html", str(target)]) == 2
        out = capsys.readouterr()
        assert out.out == ""  # refused before the table was computed and printed
        assert out.err.startswith("toxeval: error: --html ")


def test_html_is_staged_and_renamed_never_written_through_a_link(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    # the page was written in place: a --html file that is a hard link to a results
    # folder's file (no symbolic link to see) wrote the page over that input
    lex = tmp_path / "lex"
    shutil.copytree(folders["lex"], lex)
    results = lex / "results.json"
    before = results.read_bytes()
    page = tmp_path / "pages" / "cmp.html"
    page.parent.mkdir()
    page.hardlink_to(results)
    assert main(["compare", str(lex), "--bootstrap", "20", "--html", str(page)]) == 0
    assert results.read_bytes() == before
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in page.parent.iterdir()) == ["cmp.html"]  # nothing staged left
    # a failure while the page is written leaves the old page and no staged file
    old = page.read_bytes()
    c = compare([str(lex)], n_resamples=20)

    def fail(*_: Any) -> None:
        raise OSError(28, "No space left on device")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("toxeval.output_dir.os.replace", fail)
        with pytest.raises(OSError, match="No space left"):
            c.write_html(page)
    assert page.read_bytes() == old
    assert sorted(p.name for p in page.parent.iterdir()) == ["cmp.html"]


def test_html_through_a_link_into_a_results_folder_is_refused(
    folders: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    # a --html path that is a symbolic link to a results folder's file passed the check
    # (its own folder is elsewhere) and the page was written over results.json
    lex = tmp_path / "lex"
    shutil.copytree(folders["lex"], lex)
    before = (lex / "results.json").read_bytes()
    link = tmp_path / "page.html"
    link.symlink_to(lex / "results.json")
    assert main(["compare", str(lex), "--bootstrap", "20", "--html", str(link)]) == 2
    assert "inside the results folder" in capsys.readouterr().err
    assert (lex / "results.json").read_bytes() == before


def test_resamples_out_of_range_are_refused(folders: dict[str, Path], capsys: Any) -> None:
    for n in ("-1", "1", str(MAX_RESAMPLES + 1)):
        assert main(["compare", str(folders["lex"]), "--bootstrap", n]) == 2
        assert f"--bootstrap must be a number of resamples from 2 to {MAX_RESAMPLES}" in (
            capsys.readouterr().err
        )


def test_names_may_hold_equals_signs_and_csv_cells_are_not_formulas(
    folders: dict[str, Path],
) -> None:
    # NAME=DIR split at the first "=": "=HYPERLINK(1)=DIR" was no name and the folder
    # "HYPERLINK(1)=DIR"; a name a spreadsheet runs as a formula went into the CSV as is
    c = compare([f"=HYPERLINK(1)={folders['lex']}", f"a=b={folders['noisy']}"], n_resamples=20)
    assert c.systems == ["=HYPERLINK(1)", "a=b"]
    rows = list(csv.DictReader(io.StringIO(c.to_csv())))
    assert [r["system"] for r in rows] == ["'=HYPERLINK(1)", "a=b"]
    assert float(rows[0]["map"]) == c.cells["demo"]["=HYPERLINK(1)"].value["map"]
    lex = compare([str(folders["lex"])], n_resamples=20)
    assert lex.systems == ["lexicon-baseline"]


def test_names_with_markup_are_shown_as_given_in_every_format(folders: dict[str, Path]) -> None:
    # "**x**" came out as a bold "x" (rich table, HTML), "a|b" split the Markdown row
    # into an extra column, "[red]" was rich markup for the terminal
    c = compare(
        [f"a|b={folders['lex']}", f"**x**[red]<i>={folders['noisy']}"],
        baseline="a|b",
        n_resamples=20,
    )
    md = c.to_markdown().splitlines()
    assert [line.count(" | ") for line in (md[0], md[2], md[3])] == [2, 2, 2]
    assert md[2].startswith(r"| a\|b (baseline) | ")
    assert md[3].startswith(r"| \*\*x\*\*\[red\]\<i\> | **")
    page = c.to_html()
    assert "<td>**x**[red]&lt;i&gt;</td>" in page and "<td>a|b (baseline)</td>" in page
    from rich.console import Console

    console = Console(record=True, width=200)
    c.render(console)
    assert "**x**[red]<i>" in console.export_text()


def test_scored_rows_that_disagree_with_results_json_are_refused(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    # rows from another evaluation (fewer rows, another dataset) were compared as if
    # they were the figures results.json reports
    from toxeval.scored_rows import FILE_NAME, read_scored_rows, write_scored_rows

    def copy_with(name: str, n: int, sha: str | None) -> Path:
        folder = tmp_path / name
        shutil.copytree(folders["lex"], folder)
        r = read_scored_rows(folder / FILE_NAME)
        write_scored_rows(
            folder / FILE_NAME,
            r.ids[:n],
            r.category_ids,
            r.y_true[:n],
            r.mask[:n],
            r.scores[:n],
            dataset_sha256=sha,
        )
        return folder

    sha = read_scored_rows(folders["lex"] / FILE_NAME).dataset_sha256
    with pytest.raises(
        CompareError, match=r"counts 362 scored rows, scored_rows\.parquet holds 300"
    ):
        compare([str(copy_with("fewer", 300, sha))], n_resamples=20)
    with pytest.raises(CompareError, match="name different datasets"):
        compare([str(copy_with("other", 362, "cd" * 32))], n_resamples=20)
    empty = copy_with("empty", 0, sha)
    results = json.loads((empty / "results.json").read_text(encoding="utf-8"))
    results["counts"]["scored"] = 0
    (empty / "results.json").write_text(json.dumps(results), encoding="utf-8")
    with pytest.raises(CompareError, match="no scored rows"):
        compare([str(empty)], n_resamples=20)


def test_scored_rows_of_another_run_of_the_same_size_are_refused(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    # same dataset, same 362 rows: only the figures tell the runs apart. Without the
    # check, the lexicon's folder was compared with the noisy system's scores in it.
    from toxeval.scored_rows import FILE_NAME

    swapped = tmp_path / "swapped"
    shutil.copytree(folders["lex"], swapped)
    shutil.copyfile(folders["noisy"] / FILE_NAME, swapped / FILE_NAME)
    with pytest.raises(
        CompareError, match=r"swapped: results\.json reports mAP 0\.\d+, but the rows"
    ):
        compare([str(swapped), str(folders["noisy"])], n_resamples=20)
    # results.json edited by hand where it does not touch the figures (a system label),
    # or written without figures, is still read
    for name, edit in (("relabelled", "label"), ("no_figures", "figures")):
        folder = tmp_path / name
        shutil.copytree(folders["lex"], folder)
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        if edit == "label":
            results["system"]["label"] = "my lexicon"
        else:
            del results["figures"]
        (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
        assert compare([str(folder)], n_resamples=20).datasets


def test_an_interval_defined_on_too_few_resamples_is_na_as_in_the_report(
    tmp_path: Path,
) -> None:
    # on a few rows mAP is defined on the rows but on no resample (a rare category has
    # no positive in most draws): the report shows n/a; compare refused the whole table
    import dataclasses

    from toxeval.predictions import predictions_from_array
    from toxeval.scoring import add_intervals, score_predictions

    ds = toxeval.load_dataset()
    rng = np.random.default_rng(1)
    specs = []
    for name in ("a", "b"):
        scores = np.clip(ds.y_true * 0.4 + rng.random(ds.y_true.shape) * 0.6, 0, 1)
        preds = predictions_from_array(scores, ds)
        scored = np.zeros_like(preds.scored)
        scored[:8] = True
        result = score_predictions(dataclasses.replace(preds, scored=scored), ds)
        add_intervals(result, n_resamples=10, seed=0)
        write_outputs(result, tmp_path / name)
        specs.append(f"{name}={tmp_path / name}")
    reported = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))
    assert reported["figures"]["intervals"]["map"] is None  # the report's n/a
    c = compare(specs, baseline="a", n_resamples=10, seed=0)
    cell = c.cells["demo"]["a"]
    assert cell.interval["map"] is None and not math.isnan(cell.value["map"])
    assert f"{cell.value['map']:.4f} [n/a]" in c.to_markdown()
    assert "n/a: the figure is undefined on more than 5% of the resamples" in c.to_markdown()
    rec = next(r for r in c.to_records() if r["system"] == "a")
    assert rec["map_low"] is None and rec["map_high"] is None
    assert "[n/a]" in c.to_latex() and "[n/a]" in c.to_html()
    # the paired difference is defined on as few resamples: no test, the difference kept
    b = c.cells["demo"]["b"]
    assert b.diff["map"] == pytest.approx(b.value["map"] - cell.value["map"])
    assert "map" not in b.p_bootstrap and "map" not in b.diff_interval


@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_html_that_is_a_link_to_nothing_is_refused_before_any_work(
    folders: dict[str, Path], tmp_path: Path, capsys: Any, kind: str
) -> None:
    # a symbolic link loop was an internal error (RuntimeError from Path.resolve); a link
    # to a missing file was replaced by the page
    page = tmp_path / "cmp.html"
    if kind == "loop":
        (tmp_path / "other.html").symlink_to(page)
        page.symlink_to(tmp_path / "other.html")
    else:
        page.symlink_to(tmp_path / "missing" / "cmp.html")
    assert main(["compare", str(folders["lex"]), "--bootstrap", "20", "--html", str(page)]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        f"toxeval: error: --html {page}: a symbolic link to nothing (its target is missing, "
        "or the link is a loop)\n"
    )
    assert page.is_symlink()


def test_a_results_json_that_is_a_named_pipe_is_refused_not_waited_on(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    # reading it waited forever for a writer
    other = tmp_path / "other"
    shutil.copytree(folders["lex"], other)
    (other / "results.json").unlink()
    os.mkfifo(other / "results.json")
    with pytest.raises(CompareError, match=r"results\.json: not a regular file$"):
        compare([str(other)], n_resamples=20)


def test_one_row_systems_are_compared_without_intervals_or_tests(tmp_path: Path) -> None:
    # one row cannot be resampled (stats.compare refuses it): the figures and their
    # difference are shown, the intervals and the paired tests are n/a
    from helpers import make_dataset

    ds = make_dataset(np.array([[1, 0, 1]]))
    for name, s in (("a", [[0.9, 0.2, 0.6]]), ("b", [[0.1, 0.2, 0.6]])):
        write_outputs(toxeval.score(np.array(s), ds, bootstrap=20), tmp_path / name)
    c = compare([f"A={tmp_path / 'a'}", f"B={tmp_path / 'b'}"], baseline="A", n_resamples=20)
    (b,) = [r for r in c.to_records() if r["system"] == "B"]
    assert b["label_ranking_loss"] == 0.5 and b["label_ranking_loss_diff_vs_baseline"] == 0.5
    assert b["map_low"] is None and b["label_ranking_loss_p_bootstrap"] is None


def test_readme_workflow_and_an_llm_run_with_failed_rows(
    fake_openai: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """The README's compare example, command for command (the API at the fake server
    through OPENAI_BASE_URL), with three rows the server refuses: the run's results
    miss them, compare refuses the two systems with a message that names --common-rows,
    and with --common-rows compares them on the other 359 rows, saying so."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    # the server's keys of the first three rows' requests, from a run of those alone
    assert main("predict --dataset demo --detector openai:gpt-4o-mini --limit 3 -q "
                "--out first3.jsonl".split()) == 0  # fmt: skip
    for key in fake_openai.answered():
        fake_openai.faults[key] = ["400"]
    readme = [
        "predict --dataset demo --detector openai:gpt-4o-mini --out runs/gpt.jsonl -q",
        "score runs/gpt.jsonl --dataset demo --out results/gpt --html -q",
        "evaluate --out results/lex -q",
    ]
    for line in readme:
        assert main(line.split()) == 0, line
    cmp = "compare lex=results/lex gpt=results/gpt --baseline lex --format latex".split()
    capsys.readouterr()
    assert main(cmp) == 2
    err = capsys.readouterr().err
    assert "3 ids ('demo-0001', 'demo-0002', 'demo-0003') only in the first" in err
    assert "with --common-rows" in err and "--on-mismatch" not in err
    assert main([*cmp, "--common-rows", "--bootstrap", "50"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert r"\begin{tabular}" in out
    assert "demo: compared on the 359 rows every system scored (rows left out: lex 3)" in out
    assert main([*cmp[:3], "--common-rows", "--bootstrap", "50", "--format", "csv"]) == 0
    recs = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["system"], r["rows"], r["rows_left_out"]) for r in recs] == [
        ("lex", "359", "3"),
        ("gpt", "359", "0"),
    ]
    # on the common rows, each system's figures are those of its rows there
    lex = read_scored_rows(tmp_path / "results" / "lex" / FILE_NAME)
    keep = np.array([i not in {"demo-0001", "demo-0002", "demo-0003"} for i in lex.ids])
    want = figure_intervals(
        lex.y_true[keep], lex.scores[keep], lex.mask[keep], n_resamples=50, seed=0
    ).map_estimate
    assert float(recs[0]["map"]) == pytest.approx(want, rel=1e-12)
