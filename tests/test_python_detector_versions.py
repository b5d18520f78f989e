"""A ``python:module:attr`` detector is versioned in its run file: the fingerprint holds the
sha256 of the files that define it and the ``__version__`` it declares, so a rerun after
the code changed scores every row again, and a rerun of unchanged code reuses them all.
Each command runs in a new process, as a user's reruns do (Python imports a module once)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from toxeval.llm.detectors import LocalSystem, parse_detector
from toxeval.scored_rows import FILE_NAME, read_scored_rows
from toxeval.taxonomy import load_taxonomy

LIMIT = 12


def _detector(value: float, *, extra: str = "") -> str:
    return f"import numpy as np\n{extra}\ndef f(texts):\n    return np.full((len(texts), 15), {value})\n"


def _toxeval(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(tmp_path), *sys.path])
    env = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "toxeval.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )


def _item_rows(run: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
    return [r for r in lines if "toxeval_run" not in r]


def _values(rows: list[dict[str, Any]]) -> set[float]:
    return {v for r in rows for v in r["scores"].values()}


def _predict(tmp_path: Path, run: Path, spec: str) -> subprocess.CompletedProcess[str]:
    return _toxeval(
        tmp_path, "predict", "--dataset", "demo", "--detector", spec,
        "--limit", str(LIMIT), "--out", str(run), "--quiet",
    )  # fmt: skip


@pytest.mark.slow
def test_predict_redoes_the_rows_after_the_function_changed(tmp_path: Path) -> None:
    mod, run = tmp_path / "my_det_predict.py", tmp_path / "run.jsonl"
    mod.write_text(_detector(0.25), encoding="utf-8")
    p = _predict(tmp_path, run, "python:my_det_predict:f")
    assert p.returncode == 0, p.stderr
    first = _item_rows(run)
    assert len(first) == LIMIT and _values(first) == {0.25}
    # unchanged code: every row is reused, none is computed again
    p = _predict(tmp_path, run, "python:my_det_predict:f")
    assert p.returncode == 0, p.stderr
    assert _item_rows(run) == first
    # changed code, same command and run file: every row is scored again by the new code
    mod.write_text(_detector(0.75), encoding="utf-8")
    p = _predict(tmp_path, run, "python:my_det_predict:f")
    assert p.returncode == 0, p.stderr
    rows = _item_rows(run)
    assert rows[:LIMIT] == first and len(rows) == 2 * LIMIT
    assert _values(rows[LIMIT:]) == {0.75}
    assert {r["id"] for r in rows[LIMIT:]} == {r["id"] for r in first}


@pytest.mark.slow
def test_evaluate_scores_the_changed_detector_not_the_old_rows(tmp_path: Path) -> None:
    mod, run = tmp_path / "my_det_eval.py", tmp_path / "run.jsonl"

    def evaluate(out: str) -> set[float]:
        p = _toxeval(
            tmp_path, "evaluate", "--dataset", "demo", "--detector", "python:my_det_eval:f",
            "--limit", str(LIMIT), "--run-file", str(run), "--out", str(tmp_path / out),
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
        rows = read_scored_rows(tmp_path / out / FILE_NAME)
        assert len(rows.ids) == LIMIT
        return set(np.unique(rows.scores).tolist())

    mod.write_text(_detector(0.5), encoding="utf-8")
    assert evaluate("a") == {0.5}
    assert evaluate("b") == {0.5} and len(_item_rows(run)) == LIMIT  # resumed
    mod.write_text(_detector(0.75), encoding="utf-8")
    assert evaluate("c") == {0.75}
    assert len(_item_rows(run)) == 2 * LIMIT


@pytest.mark.slow
def test_a_detector_without_a_source_file_is_not_resumed_without_a_version(
    tmp_path: Path,
) -> None:
    # a function compiled from a string (as one typed into an interpreter) has no file
    # that tells whether it changed: resuming could mix its old and new scores
    mod, run = tmp_path / "my_det_nofile.py", tmp_path / "run.jsonl"
    body = (
        "import numpy as np\nns = {'np': np, '__name__': 'not_a_module'}\n"
        "exec('def f(texts):\\n    return np.full((len(texts), 15), 0.5)', ns)\nf = ns['f']\n"
    )
    mod.write_text(body, encoding="utf-8")
    assert _predict(tmp_path, run, "python:my_det_nofile:f").returncode == 0
    p = _predict(tmp_path, run, "python:my_det_nofile:f")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"already holds {LIMIT} rows" in p.stderr and "declare __version__" in p.stderr
    assert len(_item_rows(run)) == LIMIT  # nothing written by the refused run
    # a declared version identifies it: scored once more under it, then resumed
    mod.write_text('__version__ = "2"\n' + body, encoding="utf-8")
    assert _predict(tmp_path, run, "python:my_det_nofile:f").returncode == 0
    assert _predict(tmp_path, run, "python:my_det_nofile:f").returncode == 0
    assert len(_item_rows(run)) == 2 * LIMIT


def test_the_fingerprint_holds_the_sources_and_the_declared_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "my_det_helpers.py").write_text(_detector(0.1), encoding="utf-8")
    (tmp_path / "my_det_fp.py").write_text(
        "from my_det_helpers import f\n"
        "class Scorer:\n    __version__ = 3\n"
        "    def predict_scores(self, texts):\n        return f(texts)\n",
        encoding="utf-8",
    )
    tax = load_taxonomy("toxeval-15")
    fp = LocalSystem(parse_detector("python:my_det_fp:f"), tax).fingerprint()
    # the module named in the spec and the one that defines the function
    assert sorted(fp["sources"]) == ["my_det_fp", "my_det_helpers"] and fp["version"] is None
    fp = LocalSystem(parse_detector("python:my_det_fp:Scorer"), tax).fingerprint()
    assert sorted(fp["sources"]) == ["my_det_fp"] and fp["version"] == "3"
    lexicon = LocalSystem(parse_detector("lexicon"), tax).fingerprint()
    assert "sources" not in lexicon  # the lexicon is versioned by toxeval's version


def test_a_source_edited_after_import_in_this_process_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Python does not import a module twice: the file's new hash would name old code
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    mod = tmp_path / "my_det_edited.py"
    mod.write_text(_detector(0.1), encoding="utf-8")
    tax = load_taxonomy("toxeval-15")
    spec = parse_detector("python:my_det_edited:f")
    LocalSystem(spec, tax)
    mod.write_text(_detector(0.9), encoding="utf-8")
    with pytest.raises(ValueError, match="changed after my_det_edited was imported"):
        LocalSystem(spec, tax)
    import importlib

    importlib.reload(sys.modules["my_det_edited"])
    assert float(LocalSystem(spec, tax)(["x"]).scores[0, 0]) == 0.9
