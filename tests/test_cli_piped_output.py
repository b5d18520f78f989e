"""Output piped or redirected (not a terminal) is never cut at rich's default 80 columns:
long paths, dataset names and system names reach the pipe whole."""

from __future__ import annotations

from pathlib import Path

import pytest
import toxeval
from toxeval.cli import main
from toxeval.report import write_outputs


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)


def test_datasets_prints_whole_paths_when_piped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "data"
    deep.mkdir(parents=True)
    assert main(["datasets", "--data-dir", str(deep)]) == 0
    out = capsys.readouterr().out
    assert "\u2026" not in out
    assert str(deep / "Q-A-MLL.jsonl") in out  # one whole path, on one line
    assert "embedded demo set written for toxeval (a demo, not a benchmark)" in out


def test_compare_prints_whole_system_names_when_piped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_outputs(toxeval.evaluate(bootstrap=0), tmp_path / "lex")
    name = "a-system-with-a-long-descriptive-name-v2.1-2024-instruct-quantised"
    assert main(["compare", f"{name}={tmp_path / 'lex'}", "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert "\u2026" not in out and name in out


def test_report_table_is_not_cut_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--bootstrap", "20"]) == 0
    out = capsys.readouterr().out
    assert "\u2026" not in out
    assert "AP interval" in out and "negatives" in out
