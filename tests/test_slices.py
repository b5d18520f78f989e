"""Slices (--slice-by): each slice's figures equal scoring that slice's rows alone; small
slices and rows without a value; the outputs; the refusals."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
import toxeval
from toxeval.cli import main
from toxeval.datasets import load_dataset
from toxeval.slices import FIGURES, MIN_ROWS, MISSING, add_slices

CATS = ("hate", "violence", "harassment")


def _rows(n: int = 160) -> list[dict[str, Any]]:
    rng = np.random.default_rng(7)
    rows = []
    for i in range(n):
        labels = [c for c in CATS if rng.random() < 0.3]
        # fr is rare: a small slice; None: rows without a language
        lang = "fr" if i % 20 == 0 else None if i % 4 == 1 else ("en", "de")[i % 2]
        rows.append({"id": f"r{i}", "text": "w " * int(rng.integers(1, 700)), "labels": labels,
                     "language": lang})  # fmt: skip
    return rows


def _write(rows: list[dict[str, Any]], path: Path) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    elif path.suffix == ".csv":
        flat = [{**r, "labels": ";".join(r["labels"])} for r in rows]
        pacsv.write_csv(pa.Table.from_pylist(flat), path)
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _scores(n: int, k: int) -> np.ndarray:
    return np.random.default_rng(3).random((n, k))


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_slices_equal_scoring_each_slice_alone(tmp_path: Path, suffix: str) -> None:
    rows = _rows()
    ds = load_dataset(_write(rows, tmp_path / f"d{suffix}"))
    scores = _scores(len(rows), ds.k)
    result = toxeval.score(scores, ds, bootstrap=40, bootstrap_seed=5)
    add_slices(result, ds, ["language"], n_resamples=40, seed=5)
    assert result.slices is not None
    got = {s["value"]: s for s in result.slices["columns"][0]["slices"]}
    assert set(got) == {"en", "de", "fr", MISSING}
    for value, sl in got.items():
        want_lang = None if value == MISSING else value
        sel = [i for i, r in enumerate(rows) if r["language"] == want_lang]
        assert sl["rows"] == len(sel)
        if len(sel) < MIN_ROWS:
            assert sl["too_small"] and sl["figures"] is None and "fewer than" in sl["reason"]
            continue
        sub = _write([rows[i] for i in sel], tmp_path / f"{value}{suffix}")
        alone = toxeval.score(scores[sel], load_dataset(sub), bootstrap=40, bootstrap_seed=5)
        for key in FIGURES:
            np.testing.assert_allclose(sl["figures"][key], alone.figures[key], rtol=1e-12)
        assert sl["intervals"]["map"] == alone.figures["intervals"]["map"]
        assert sl["intervals"]["n_undefined"] == alone.figures["intervals"]["n_undefined"]
        assert (
            sl["intervals"]["label_ranking_loss"]
            == alone.figures["intervals"]["label_ranking_loss"]
        )
    assert got["fr"]["too_small"]  # 8 rows
    assert not got[MISSING]["too_small"]


def test_text_length_slices_of_the_demo_set_equal_scoring_them_alone() -> None:
    ds = load_dataset("demo")
    result = toxeval.evaluate(ds, bootstrap=0)
    add_slices(result, ds, ["text_length"])
    assert result.slices is not None
    lengths = np.array([len(t) for t in ds.texts])
    bounds = {"<=50": (0, 50), "51-200": (51, 200), "201-1000": (201, 1000), ">1000": (1001, 10**9)}
    slices = result.slices["columns"][0]["slices"]
    assert [s["value"] for s in slices] == list(bounds)
    assert sum(s["rows"] for s in slices) == len(ds)
    checked = 0
    for sl in slices:
        lo, hi = bounds[sl["value"]]
        sel = np.flatnonzero((lengths >= lo) & (lengths <= hi))
        assert sl["rows"] == len(sel)
        if sl["too_small"]:
            continue
        sub = dataclasses.replace(
            ds,
            ids=[ds.ids[i] for i in sel],
            texts=[ds.texts[i] for i in sel],
            responses=None,
            y_true=ds.y_true[sel],
            mask=ds.mask[sel],
            soft=None if ds.soft is None else ds.soft[sel],
            n_annotators=None if ds.n_annotators is None else ds.n_annotators[sel],
            columns={},
        )
        alone = toxeval.evaluate(sub, bootstrap=0)
        for key in FIGURES:
            np.testing.assert_allclose(sl["figures"][key], alone.figures[key], rtol=1e-12)
        checked += 1
    assert checked >= 1


def test_a_slice_without_a_known_positive_is_too_small(tmp_path: Path) -> None:
    rows = _rows(120)
    for r in rows:
        if r["language"] == "de":
            r["labels"] = []
    ds = load_dataset(_write(rows, tmp_path / "d.jsonl"))
    result = add_slices(toxeval.score(_scores(len(rows), ds.k), ds, bootstrap=0), ds, ["language"])
    assert result.slices is not None
    de = next(s for s in result.slices["columns"][0]["slices"] if s["value"] == "de")
    assert de["rows"] >= MIN_ROWS
    assert de["too_small"] and de["reason"] == "no category with a known positive"


def test_empty_csv_cells_are_missing(tmp_path: Path) -> None:
    rows = _rows(60)
    ds = load_dataset(_write(rows, tmp_path / "d.csv"))
    result = add_slices(toxeval.score(_scores(60, ds.k), ds, bootstrap=0), ds, ["language"])
    assert result.slices is not None
    got = {s["value"]: s["rows"] for s in result.slices["columns"][0]["slices"]}
    assert got[MISSING] == sum(r["language"] is None for r in rows)
    assert "" not in got


def test_cli_writes_slices_everywhere(tmp_path: Path, capsys: Any) -> None:
    data = _write(_rows(), tmp_path / "d.jsonl")
    out = tmp_path / "out"
    args = ["evaluate", "--dataset", str(data), "--bootstrap", "20", "--out", str(out)]
    assert main([*args, "--html", "--slice-by", "language", "--slice-by", "text_length"]) == 0
    printed = capsys.readouterr().out
    assert "slices" in printed and "too small" in printed
    res = json.loads((out / "results.json").read_text())
    assert [c["column"] for c in res["slices"]["columns"]] == ["language", "text_length"]
    assert res["config"]["rule"] == "majority"
    assert "## Slices" in (out / "report.md").read_text()
    csv_lines = (out / "slices.csv").read_text().splitlines()
    assert csv_lines[0].startswith("column,value,rows,too_small")
    assert len(csv_lines) == 1 + sum(len(c["slices"]) for c in res["slices"]["columns"])
    html = (out / "report.html").read_text()
    assert "<h2>Slices</h2>" in html and "id=slices" in html
    # without --slice-by: no slices block, and the slices.csv toxeval wrote is removed
    assert main(args) == 0
    assert "slices" not in json.loads((out / "results.json").read_text())
    assert not (out / "slices.csv").exists()


def test_cli_unknown_column_exits_2_listing_the_columns(tmp_path: Path, capsys: Any) -> None:
    data = _write(_rows(40), tmp_path / "d.jsonl")
    preds = tmp_path / "p.npy"
    np.save(preds, _scores(40, 15))
    for cmd in (["evaluate"], ["score", str(preds)]):
        assert main([*cmd, "--dataset", str(data), "--slice-by", "lang"]) == 2
        err = capsys.readouterr().err
        assert "--slice-by lang" in err and "language, text_length" in err
    # before any work: no model is asked (nothing listens there), no --out written
    out = tmp_path / "out"
    model = ["--detector", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--out", str(out)]
    assert main(["evaluate", "--dataset", str(data), *model, "--slice-by", "lang"]) == 2
    assert "--slice-by lang" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("extra", [["--dask-local", "1"], ["--memory-limit", "1GB"]])
def test_slices_are_refused_out_of_core(tmp_path: Path, extra: list[str], capsys: Any) -> None:
    preds = tmp_path / "p.parquet"
    ds = load_dataset("demo")
    pq.write_table(
        pa.table({"id": list(ds.ids), **{c: np.zeros(len(ds)) for c in ds.taxonomy.ids}}), preds
    )
    argv = ["score", str(preds), "--dataset", "demo", "--slice-by", "text_length", *extra]
    assert main(argv) == 2
    assert "--slice-by needs every scored row in memory" in capsys.readouterr().err


def test_the_record_path_keeps_extra_columns(tmp_path: Path) -> None:
    """A file read record by record (mixed label forms) keeps its extra fields too; a
    field whose values mix types is read as strings."""
    rows: list[dict[str, Any]] = [
        {"id": "a", "text": "x", "labels": ["hate"], "language": "en", "level": 1},
        {"id": "b", "text": "y", "labels": {"hate": 0}, "language": None, "level": "two"},
        {"id": "c", "text": "z", "labels": [], "level": 3},
    ]
    ds = load_dataset(_write(rows, tmp_path / "mixed.jsonl"))
    assert ds.columns["language"].to_pylist() == ["en", None, None]
    assert ds.columns["level"].to_pylist() == ["1", "two", "3"]
    result = add_slices(toxeval.score(_scores(3, ds.k), ds, bootstrap=0), ds, ["language"])
    assert result.slices is not None
    got = [(s["value"], s["rows"], s["too_small"]) for s in result.slices["columns"][0]["slices"]]
    assert got == [("en", 1, True), (MISSING, 2, True)]


def test_chromium_shows_the_slices_of_report_html(
    tmp_path: Path, run_browser: Any, capsys: Any
) -> None:
    data = _write(_rows(), tmp_path / "d.jsonl")
    out = tmp_path / "out"
    argv = ["evaluate", "--dataset", str(data), "--bootstrap", "20", "--slice-by", "language"]
    assert main([*argv, "--out", str(out), "--html"]) == 0
    capsys.readouterr()
    block = json.loads((out / "results.json").read_text())["slices"]
    proc = run_browser(out / "report.html", "--dump-dom")
    assert [line for line in proc.stderr.splitlines() if "CONSOLE" in line] == []
    table = proc.stdout.split("<h2>Slices</h2>", 1)[1].split("</table>", 1)[0]
    rows = table.split("<tbody>", 1)[1].split("</tr>")[:-1]
    slices = block["columns"][0]["slices"]
    assert len(rows) == len(slices) == 4
    for row, sl in zip(rows, slices, strict=True):
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
        assert cells[:3] == ["language", sl["value"], str(sl["rows"])]
        if sl["too_small"]:
            assert cells[3].startswith("too small")
        else:
            assert cells[3] == f"{sl['figures']['map']:.4f}"


def test_cli_score_slices_equal_the_python_api(tmp_path: Path, capsys: Any) -> None:
    rows = _rows()
    data = _write(rows, tmp_path / "d.parquet")
    ds = load_dataset(data)
    preds = tmp_path / "p.npy"
    np.save(preds, _scores(len(rows), ds.k))
    out = tmp_path / "out"
    argv = ["score", str(preds), "--dataset", str(data), "--bootstrap", "30"]
    assert main([*argv, "--slice-by", "language", "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    got = json.loads((out / "results.json").read_text())["slices"]
    want = add_slices(
        toxeval.score(_scores(len(rows), ds.k), ds, bootstrap=30), ds, ["language"], n_resamples=30
    ).slices
    assert want is not None
    assert got["columns"] == json.loads(json.dumps(want["columns"]))


def test_batch_output_scoring_checks_the_column_first(tmp_path: Path, capsys: Any) -> None:
    data = _write(_rows(40), tmp_path / "d.jsonl")
    output, batch = tmp_path / "output.jsonl", tmp_path / "batch.jsonl"
    output.write_text("")
    batch.write_text("")
    argv = ["score", str(output), "--dataset", str(data), "--batch-input", str(batch)]
    assert main([*argv, "--slice-by", "lang"]) == 2
    assert "--slice-by lang" in capsys.readouterr().err


def test_column_of_ids_is_refused_with_its_bound(tmp_path: Path, capsys: Any) -> None:
    """A column with one value per row (an id) would give thousands of empty slices and a
    scan per value: refused up front (exit 2, one line, no --out folder)."""
    from toxeval.slices import MAX_SLICES

    rows = [{**r, "uid": f"u{i}"} for i, r in enumerate(_rows(MAX_SLICES + 1))]
    data = _write(rows, tmp_path / "d.jsonl")
    preds = tmp_path / "p.npy"
    np.save(preds, _scores(len(rows), load_dataset(data).k))
    out = tmp_path / "out"
    argv = ["score", str(preds), "--dataset", str(data), "--slice-by", "uid", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{MAX_SLICES + 1} distinct values" in err and "Traceback" not in err
    assert not out.exists()
    # at the bound the slices are computed, each row its own (too small) slice
    ds = load_dataset(_write(rows[:MAX_SLICES], tmp_path / "e.jsonl"))
    result = add_slices(toxeval.score(_scores(MAX_SLICES, ds.k), ds, bootstrap=0), ds, ["uid"])
    assert result.slices is not None
    got = result.slices["columns"][0]["slices"]
    assert len(got) == MAX_SLICES and all(s["rows"] == 1 and s["too_small"] for s in got)


def test_column_of_bytes_not_utf8_is_refused(tmp_path: Path, capsys: Any) -> None:
    """A Parquet column of bytes that are not UTF-8: exit 2 naming the column, not an
    Arrow traceback or a bare 'Invalid UTF8 payload'."""
    rows = _rows(60)
    table = pa.Table.from_pylist(rows).append_column(
        "blob", pa.array([b"\xff\xfe" if i % 2 else b"ok" for i in range(60)], pa.binary())
    )
    data = tmp_path / "d.parquet"
    pq.write_table(table, data)
    preds = tmp_path / "p.npy"
    np.save(preds, _scores(60, load_dataset(data).k))
    assert main(["score", str(preds), "--dataset", str(data), "--slice-by", "blob"]) == 2
    err = capsys.readouterr().err
    assert "--slice-by blob: the column's values cannot be read as text" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_slices_csv_shows_formula_like_values_as_text() -> None:
    # a column value is user text: "=HYPERLINK(...)" must not run in a spreadsheet
    from toxeval.slices import slices_csv

    block = {
        "columns": [
            {
                "column": "source",
                "slices": [
                    {"value": "=cmd|' /C calc'!A0", "rows": 3, "too_small": True,
                     "reason": "fewer than 30 scored rows", "figures": None, "intervals": None}
                ],
            }
        ]
    }  # fmt: skip
    row = slices_csv(block).splitlines()[1]
    assert row.startswith("source,'=cmd")


def test_the_ignored_fields_note_leaves_out_the_slice_columns(tmp_path: Path) -> None:
    rows = [{**r, "source": "web"} for r in _rows()]
    ds = load_dataset(_write(rows, tmp_path / "d.jsonl"))
    result = toxeval.score(_scores(len(rows), ds.k), ds)
    ignored = [n for n in result.notes if n.startswith("dataset fields ignored")]
    assert len(ignored) == 1 and "'language'" in ignored[0] and "'source'" in ignored[0]
    add_slices(result, ds, ["language"])
    ignored = [n for n in result.notes if n.startswith("dataset fields ignored")]
    assert len(ignored) == 1 and "'language'" not in ignored[0] and "'source'" in ignored[0]
    # every ignored field sliced by: no such note at all
    add_slices(result, ds, ["language", "source"])
    assert not [n for n in result.notes if n.startswith("dataset fields ignored")]


def test_a_slice_estimate_outside_its_interval_is_marked() -> None:
    # two resamples: the "<=50" slice's label ranking loss lies outside its interval;
    # the table says so beside that interval, and only there
    from toxeval.slices import slices_caption, slices_table

    block = toxeval.evaluate(bootstrap=2, slice_by="text_length").slices
    assert block is not None
    rows = slices_table(block)
    flagged = 0
    slices = [sl for col in block["columns"] for sl in col["slices"]]
    for sl, cells in zip(slices, rows, strict=True):
        if sl["too_small"]:
            continue
        for key, cell in (("map", cells[4]), ("label_ranking_loss", cells[6])):
            ci, est = sl["intervals"][key], sl["figures"][key]
            outside = ci is not None and not ci[0] <= est <= ci[1]
            assert ("estimate outside" in cell) is outside, cell
            flagged += outside
    assert flagged
    assert "estimate outside" in slices_caption(block)
