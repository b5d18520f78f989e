"""The README's performance figures are the ones of docs/performance.md (one published
run), so the two cannot drift apart when a new run is published."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if not (ROOT / "README.md").is_file() or not (ROOT / "docs" / "performance.md").is_file():
    # tests run against an installed package, away from the repository
    pytest.skip("README.md and docs/ are not beside the tests", allow_module_level=True)


def _read(rel: str) -> str:
    path = ROOT / rel
    if not path.is_file():
        pytest.skip(f"{rel} is not beside the tests (installed-package run)")
    return path.read_text(encoding="utf-8")


def _published_times() -> dict[str, tuple[str, str, str]]:
    """function -> (reference time, toxeval time, ratio) from docs/performance.md."""
    perf = _read("docs/performance.md")
    table = perf.split("<!-- performance-table -->\n", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, tuple[str, str, str]] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = (cells[1], cells[2], cells[3])
    return rows


def test_performance_doc_table_is_complete() -> None:
    rows = _published_times()
    assert len(rows) >= 13, "docs/performance.md lost rows of its table"
    for name, (_, _, ratio) in rows.items():
        assert ratio.endswith("×"), (name, ratio)


def test_readme_figures_are_the_published_run() -> None:
    readme = _read("README.md")
    section = readme.split("## Performance", 1)[1].split("\n## ", 1)[0]
    assert len(section.splitlines()) <= 18, "the README's Performance section is a summary"
    published = _published_times()
    quoted = 0
    for line in section.splitlines():
        m = re.match(r"\| `(\w+)`( macro / micro)? \| (.+?) \| (.+?) \| (.+?) \|$", line)
        if not m:
            continue
        name, pair = m.group(1), m.group(2)
        keys = [f"{name} (macro)", f"{name} (micro)"] if pair else [name]
        if name == "ndcg_score":
            keys = ["ndcg_score (default)"]
        cols = [m.group(3).split(" / "), m.group(4).split(" / "), m.group(5).split(" / ")]
        for i, key in enumerate(keys):
            ref, tox, ratio = published[key]
            assert (cols[0][i], cols[1][i], cols[2][i]) == (ref, tox, ratio), key
            quoted += 1
    assert quoted >= 6, "the README quotes no figures of the published run"
