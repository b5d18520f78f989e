"""The run's progress bar and the report's system line say what a resumed or local run
did, not a parse share or rate of nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toxeval.cli import main


def _dataset(path: Path) -> Path:
    rows = [
        {"id": f"r{i}", "text": f"text {i}", "labels": ["hate"] if i % 3 else []} for i in range(30)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_resumed_run_with_nothing_to_ask_shows_no_parse_share_or_rate(
    tmp_path: Path, capsys: Any
) -> None:
    data = _dataset(tmp_path / "d.jsonl")
    args = [
        "predict",
        "--dataset",
        str(data),
        "--detector",
        "lexicon",
        "--out",
        str(tmp_path / "r.jsonl"),
    ]
    assert main(args) == 0
    first = capsys.readouterr().err
    assert "parsed 100%" in first and "rows/s" in first
    assert main(args) == 0
    out, again = capsys.readouterr()
    assert "(30 already done)" in out
    assert "parsed -" in again and "parsed 0%" not in again and "0.0 rows/s" not in again


def test_a_local_detector_run_file_reads_as_graded_scores(tmp_path: Path, capsys: Any) -> None:
    data = _dataset(tmp_path / "d.jsonl")
    run = tmp_path / "r.jsonl"
    args = ["--dataset", str(data), "--detector", "lexicon"]
    assert main(["predict", *args, "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", *args, "--run-file", str(run), "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert "lexicon (graded scores), run file" in out and "scores scoring" not in out
