"""The README's performance table is the one of docs/performance.md (one run, copied
whole), so the two cannot drift apart when a new run is published."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if not (ROOT / "README.md").is_file() or not (ROOT / "docs" / "performance.md").is_file():
    # tests run against an installed package, away from the repository
    pytest.skip("README.md and docs/ are not beside the tests", allow_module_level=True)


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ")]


def test_readme_performance_table_is_the_published_run() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    perf = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    section = readme.split("<!-- performance-table -->", 1)[1].split("**Not met", 1)[0]
    readme_rows = _table_rows(section)
    assert len(readme_rows) > 20, "README lost its performance table"
    # The first targets table of docs/performance.md is the published run's.
    targets = perf.split("## Targets", 1)[1].split("\n## ", 1)[0]
    assert readme_rows[2:] == _table_rows(targets)[2:]
    # Both name the same commit for that run.
    readme_commit = re.search(r"commit ([0-9a-f]{7,40})", section)
    perf_commit = re.search(r"Source: commit ([0-9a-f]{7,40})", perf)
    assert readme_commit and perf_commit
    assert readme_commit.group(1) == perf_commit.group(1)
