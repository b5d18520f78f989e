"""The runnable examples of docs/dask.md: each ```python block marked
``<!-- run: ENGINE -->`` runs as a script in a fresh interpreter (its own asserts
check the results against the in-memory functions). Dask blocks run where Dask is
installed; the Ray Data and Spark blocks where Ray / PySpark are installed, and are
skipped with the reason elsewhere (neither is a toxeval dependency)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "dask.md"
NEEDS = {"dask": "distributed", "ray": "ray", "spark": "pyspark"}


def _blocks() -> list[tuple[str, int, str]]:
    if not DOC.is_file():
        return []
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- run: (\w+) -->\n```python\n(.*?)```", text, flags=re.S)
    return [(engine, i, code) for i, (engine, code) in enumerate(found)]


BLOCKS = _blocks()


def test_doc_has_runnable_blocks_for_each_engine() -> None:
    if not DOC.is_file():
        pytest.skip("docs/ is not beside the tests (installed-package run)")
    assert {engine for engine, _, _ in BLOCKS} == set(NEEDS)


@pytest.mark.parametrize(
    ("engine", "index", "code"), BLOCKS, ids=[f"{e}-{i}" for e, i, _ in BLOCKS]
)
def test_doc_example_runs(engine: str, index: int, code: str, tmp_path: Path) -> None:
    if importlib.util.find_spec(NEEDS[engine]) is None:
        pytest.skip(
            f"{NEEDS[engine]} is not installed: the {engine} example of docs/dask.md is not run"
        )
    script = tmp_path / f"example_{index}.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    p = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip(), "the example printed nothing"
