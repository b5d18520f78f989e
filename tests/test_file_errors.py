"""What a user sees when a file is not what toxeval expects: byte-order marks accepted by
every reader, 1-based line numbers, the file named, a directory called a directory, the
format told by content, user text printed as written, undefined figures shown as n/a,
decimal columns read."""

from __future__ import annotations

import csv
import decimal
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import write_jsonl
from toxeval import metrics, score
from toxeval.cli import main
from toxeval.datasets import DatasetError, load_dataset
from toxeval.predictions import PredictionError, read_predictions
from toxeval.taxonomy import TaxonomyError, load_taxonomy

CATS = ("alpha", "beta", "gamma")


def _score_lines(ids: list[str]) -> list[str]:
    return [
        json.dumps({"id": i, "scores": {c: round(0.1 * (n + k), 2) for k, c in enumerate(CATS)}})
        for n, i in enumerate(ids)
    ]


def test_bom_at_start_of_jsonl_predictions_is_accepted(tmp_path: Path, small_dataset: Any) -> None:
    lines = _score_lines(list(small_dataset.ids))
    plain = tmp_path / "plain.jsonl"
    plain.write_text("\n".join(lines) + "\n", encoding="utf-8")
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    got = read_predictions(bom, small_dataset)
    want = read_predictions(plain, small_dataset)
    np.testing.assert_array_equal(got.scores, want.scores)


def test_bom_at_start_of_datasets_and_csv_predictions_is_accepted(
    tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path
) -> None:
    ds_bom = tmp_path / "ds_bom.jsonl"
    ds_bom.write_bytes(b"\xef\xbb\xbf" + small_dataset_file.read_bytes())
    ds = load_dataset(ds_bom, taxonomy=alias_taxonomy_file)
    assert list(ds.ids) == ["r1", "r2", "r3", "r4", "r5", "r6"]
    p = tmp_path / "p.csv"
    p.write_bytes(b"\xef\xbb\xbfid,labels\n" + b"".join(f"{i},alpha\n".encode() for i in ds.ids))
    assert score(p, ds).counts["scored"] == 6


def test_type_change_is_reported_at_its_file_line(tmp_path: Path, small_dataset: Any) -> None:
    lines = _score_lines(list(small_dataset.ids))
    lines[5] = json.dumps({"id": "r6", "scores": {"alpha": "high", "beta": 0.1, "gamma": 0.2}})
    lines.insert(2, "")  # a blank line: pyarrow's row count no longer matches lines
    p = tmp_path / "p.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(PredictionError) as e:
        read_predictions(p, small_dataset)
    assert "line 7: field 'scores.alpha' is a string; a score is a number" in str(e.value)
    assert "row" not in str(e.value)


@pytest.mark.parametrize("value", [True, "0.9"])
def test_scores_that_are_never_numbers_are_named_at_their_line(
    tmp_path: Path, small_dataset: Any, value: object
) -> None:
    # Every line alike, so no line contradicts another: the message must still name the
    # field and say a score is a number, not pyarrow's "changed from number to boolean".
    p = tmp_path / "p.jsonl"
    rows = [{"id": i, "scores": {"alpha": value, "beta": 0.1}} for i in small_dataset.ids]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(PredictionError) as e:
        read_predictions(p, small_dataset)
    kind = "a bool" if value is True else "a string"
    assert str(e.value) == (
        f"{p}: line 1: field 'scores.alpha' is {kind}; a score is a number "
        "(0 or 1 for a yes/no answer), or null when unknown"
    )


def test_non_utf8_csv_header_is_named_with_its_line(tmp_path: Path, small_dataset: Any) -> None:
    p = tmp_path / "p.csv"
    p.write_bytes(b"id,caf\xe9\nr1,0.5\n")
    with pytest.raises(PredictionError, match=r"p\.csv: line 1: byte 7: not UTF-8"):
        read_predictions(p, small_dataset)


def test_corrupt_gzip_dataset_is_a_dataset_error(
    tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path
) -> None:
    import gzip

    body = bytearray(gzip.compress(small_dataset_file.read_bytes(), compresslevel=0))
    body[12] ^= 0xFF  # inside the first deflate block header: a zlib error, not an OSError
    p = tmp_path / "ds.jsonl.gz"
    p.write_bytes(bytes(body))
    with pytest.raises(DatasetError, match=r"ds\.jsonl\.gz: not a valid gzip file"):
        load_dataset(p, taxonomy=alias_taxonomy_file)


def test_non_utf8_taxonomy_file_is_named(tmp_path: Path) -> None:
    p = tmp_path / "bad.toml"
    p.write_bytes(b'name = "x"\n[[category]]\nid = "caf\xe9"\n')
    with pytest.raises(TaxonomyError, match=r"bad\.toml: line 3: byte 10: not UTF-8"):
        load_taxonomy(p)


@pytest.mark.parametrize("what", ["dataset", "predictions", "taxonomy"])
def test_directory_where_a_file_is_expected(
    tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path, what: str
) -> None:
    d = tmp_path / ("dir.toml" if what == "taxonomy" else "dir.jsonl")
    d.mkdir()
    err: type[Exception] = {
        "dataset": DatasetError,
        "predictions": PredictionError,
        "taxonomy": DatasetError,
    }[what]
    with pytest.raises(err, match="is a directory, not a file"):
        if what == "dataset":
            load_dataset(d, taxonomy=alias_taxonomy_file)
        elif what == "taxonomy":
            load_dataset(small_dataset_file, taxonomy=d)
        else:
            score(d, load_dataset(small_dataset_file, taxonomy=alias_taxonomy_file))


def test_directory_on_the_command_line_exits_2(
    tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path, capsys: Any
) -> None:
    d = tmp_path / "preds.jsonl"
    d.mkdir()
    code = main(
        [
            "score",
            str(d),
            "--dataset",
            str(small_dataset_file),
            "--taxonomy",
            str(alias_taxonomy_file),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "is a directory" in err and len(err.strip().splitlines()) == 1


def test_dataset_format_is_told_by_content_not_name(
    tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path
) -> None:
    own = tmp_path / "samples-1.jsonl"  # toxeval's schema under an OpenAI-like name
    own.write_bytes(small_dataset_file.read_bytes())
    ds = load_dataset(own, taxonomy=alias_taxonomy_file)
    assert ds.name == "samples-1" and ds.ids[0] == "r1"
    openai = tmp_path / "moderation-rows.jsonl"  # OpenAI's format under another name
    openai.write_text(
        json.dumps({"prompt": "hello", "S": 0, "H": 1}) + "\n" + json.dumps({"prompt": "x"}) + "\n"
    )
    ds2 = load_dataset(openai)
    assert ds2.name == "openai-moderation" and ds2.taxonomy.name == "openai-moderation-8"


def test_rich_markup_in_file_names_is_printed_as_written(
    tmp_path: Path,
    small_dataset_file: Path,
    alias_taxonomy_file: Path,
    capsys: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # no wrapping inside the path
    ds = tmp_path / "ds[bold]1.jsonl"
    ds.write_bytes(small_dataset_file.read_bytes())
    p = tmp_path / "p[red]x.jsonl"
    p.write_text("\n".join(_score_lines(["r1", "r2", "r3", "r4", "r5", "r6"])) + "\n")
    code = main(["score", str(p), "--dataset", str(ds), "--taxonomy", str(alias_taxonomy_file)])
    out = capsys.readouterr().out
    assert code == 0
    assert "ds[bold]1" in out and "p[red]x.jsonl" in out


def test_category_without_a_known_label_has_f1_na(
    tmp_path: Path, alias_taxonomy_file: Path, capsys: Any
) -> None:
    rows = [
        {"id": f"r{i}", "text": "t", "labels": {"alpha": i % 2, "beta": 1 - i % 2, "gamma": None}}
        for i in range(6)
    ]
    ds_path = tmp_path / "ds.jsonl"
    write_jsonl(ds_path, rows)
    p = tmp_path / "p.jsonl"
    p.write_text("\n".join(_score_lines([f"r{i}" for i in range(6)])) + "\n")
    out_dir = tmp_path / "out"
    args = ["score", str(p), "--dataset", str(ds_path), "--taxonomy", str(alias_taxonomy_file)]
    assert main([*args, "--out", str(out_dir)]) == 0
    terminal = capsys.readouterr().out
    gamma_line = next(line for line in terminal.splitlines() if "gamma" in line)
    assert "n/a" in gamma_line and "0.0000" not in gamma_line
    md = (out_dir / "report.md").read_text()
    assert (
        next(line for line in md.splitlines() if line.startswith("| gamma ")).split("|")[4].strip()
        == "n/a"
    )
    with open(out_dir / "per_category.csv") as f:
        gamma = next(r for r in csv.DictReader(f) if r["id"] == "gamma")
    assert gamma["f1"] == ""
    res = json.loads((out_dir / "results.json").read_text())
    assert next(r for r in res["per_category"] if r["id"] == "gamma")["f1"] is None


def test_decimal_parquet_scores_are_read_as_float64(tmp_path: Path, small_dataset: Any) -> None:
    ids = list(small_dataset.ids)
    text = {c: [f"0.{(3 * n + k) % 10}5" for n in range(len(ids))] for k, c in enumerate(CATS)}
    cols = {
        c: pa.array([decimal.Decimal(v) for v in vs], pa.decimal128(6, 3)) for c, vs in text.items()
    }
    p = tmp_path / "p.parquet"
    pq.write_table(pa.table({"id": ids, **cols}), p)
    res = score(p, small_dataset)
    s = np.array([[float(text[c][n]) for c in CATS] for n in range(len(ids))])
    want = metrics.average_precision_score(
        small_dataset.y_true, s, average="macro", mask=small_dataset.mask
    )
    assert res.figures["map"] == pytest.approx(float(want), abs=1e-12)


def test_a_named_pipe_as_the_predictions_is_refused_not_waited_on(
    tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path
) -> None:
    # a pipe nobody writes to: reading it to see whether it is a run file waits forever
    pipe = tmp_path / "preds.jsonl"
    os.mkfifo(pipe)
    args = ["score", str(pipe), "--dataset", str(small_dataset_file)]
    args += ["--taxonomy", str(alias_taxonomy_file), "--bootstrap", "0", "-q"]
    done = subprocess.run(
        [sys.executable, "-m", "toxeval", *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"toxeval: error: predictions file {pipe} is not a regular file"


@pytest.mark.parametrize(
    ("encoding", "name", "iconv"),
    [
        ("utf-16", "UTF-16 LE (with a byte-order mark)", "UTF-16"),
        ("utf-16-le", "UTF-16 LE", "UTF-16LE"),
        ("utf-16-be", "UTF-16 BE", "UTF-16BE"),
        ("utf-32", "UTF-32 LE (with a byte-order mark)", "UTF-32"),
    ],
)
def test_utf16_and_utf32_files_are_named_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], encoding: str, name: str, iconv: str
) -> None:
    """A spreadsheet's 'Unicode text' export is UTF-16: read as UTF-8 it is one garbled
    column, which pyarrow reported as 'Expected 16 columns, got 1'."""
    ds = load_dataset()
    header = "id," + ",".join(ds.taxonomy.ids)
    preds = tmp_path / "preds.csv"
    lines = [header] + [f"{i}," + ",".join("0.5" for _ in ds.taxonomy.ids) for i in ds.ids]
    preds.write_text("\n".join(lines) + "\n", encoding=encoding)
    dataset = tmp_path / "ds.csv"
    rows = ["id,text," + ",".join(ds.taxonomy.ids), "r1,hello," + ",".join("0" * ds.taxonomy.k)]
    dataset.write_text("\n".join(rows) + "\n", encoding=encoding)
    jsonl = tmp_path / "ds.jsonl"
    jsonl.write_text('{"id": "r1", "text": "x", "labels": []}\n', encoding=encoding)
    for args, path in (
        (["score", str(preds), "--dataset", "demo"], preds),
        (["evaluate", "--dataset", str(dataset)], dataset),
        (["evaluate", "--dataset", str(jsonl)], jsonl),
    ):
        assert main([*args, "-q"]) == 2
        err = capsys.readouterr().err
        assert err.strip().splitlines() == [
            f"toxeval: error: {path}: the file is {name} text; toxeval reads UTF-8: convert it "
            f"(iconv -f {iconv} -t UTF-8 FILE > NEW_FILE"
            + ("; from a spreadsheet, save as 'CSV UTF-8')" if path.suffix == ".csv" else ")")
        ]
    with pytest.raises(PredictionError, match=f"is {name[:9]}"):
        read_predictions(preds, ds)
