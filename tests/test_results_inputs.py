"""results.json identifies every input file: the path as given, the file name and the
sha256 of its bytes (custom taxonomy and mapping files included)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from helpers import write_jsonl
from toxeval import evaluate, score
from toxeval.cli import main
from toxeval.report import results_json

MAPPING = """name = "greek"
target = "toxeval-15"
[map]
A = ["hate"]
B = ["violence"]
"""


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_every_input_file_is_recorded_as_given_with_its_hash(
    tmp_path: Path,
    small_dataset_file: Path,
    alias_taxonomy_file: Path,
    monkeypatch: Any,
) -> None:
    monkeypatch.chdir(tmp_path)
    dump = tmp_path / "p.jsonl"
    write_jsonl(dump, [{"id": f"r{i}", "labels": ["first"]} for i in range(1, 7)])
    # relative paths, as a user types them: stored as given, never resolved
    assert main(
        ["score", "p.jsonl", "--dataset", small_dataset_file.name, "--taxonomy",
         alias_taxonomy_file.name, "--out", "out", "-q"]
    ) == 0  # fmt: skip
    inputs = json.loads((tmp_path / "out" / "results.json").read_text())["inputs"]
    assert inputs == {
        "dataset": {
            "path": "small.jsonl",
            "name": "small.jsonl",
            "sha256": _sha(small_dataset_file),
        },
        "predictions": {"path": "p.jsonl", "name": "p.jsonl", "sha256": _sha(dump)},
        "taxonomy": {
            "path": "alias-3.toml",
            "name": "alias-3.toml",
            "sha256": _sha(alias_taxonomy_file),
        },
        "mapping": None,
    }
    assert str(tmp_path) not in (tmp_path / "out" / "results.json").read_text()


def test_a_mapping_file_is_recorded(tmp_path: Path) -> None:
    mapping = tmp_path / "greek.toml"
    mapping.write_text(MAPPING)
    ds = tmp_path / "ds.jsonl"
    write_jsonl(
        ds,
        [
            {"id": f"r{i}", "text": "t", "labels": ["hate"] if i % 2 else ["violence"]}
            for i in range(6)
        ],
    )
    dump = tmp_path / "labels.jsonl"
    write_jsonl(dump, [{"id": f"r{i}", "labels": ["A" if i % 2 else "B"]} for i in range(6)])
    res = score(dump, str(ds), mapping=str(mapping))
    assert res.inputs["mapping"] == {
        "path": str(mapping),
        "name": "greek.toml",
        "sha256": _sha(mapping),
    }
    codes = tmp_path / "codes.jsonl"
    write_jsonl(codes, [{"id": f"r{i}", "labels": ["S1" if i % 2 else "S9"]} for i in range(6)])
    builtin = score(codes, str(ds), mapping="llama-guard-3").inputs["mapping"]
    assert builtin["builtin"] == "llama-guard-3" and len(builtin["sha256"]) == 64


def test_builtin_files_are_recorded_by_name_and_hash() -> None:
    import importlib.resources

    inputs = evaluate().to_dict()["inputs"]
    data = importlib.resources.files("toxeval") / "data"
    assert inputs["dataset"] == {
        "builtin": "demo",
        "sha256": hashlib.sha256((data / "datasets" / "demo.jsonl").read_bytes()).hexdigest(),
    }
    assert inputs["taxonomy"]["builtin"] == "toxeval-15"
    assert inputs["predictions"] is None and inputs["mapping"] is None


def test_a_changed_taxonomy_file_changes_the_record(
    tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path
) -> None:
    dump = tmp_path / "p.jsonl"
    write_jsonl(dump, [{"id": f"r{i}", "labels": ["alpha"]} for i in range(1, 7)])
    first = json.loads(results_json(score(dump, small_dataset_file, taxonomy=alias_taxonomy_file)))
    alias_taxonomy_file.write_text(alias_taxonomy_file.read_text().replace("Beta", "Bravo"))
    second = json.loads(results_json(score(dump, small_dataset_file, taxonomy=alias_taxonomy_file)))
    assert first["inputs"]["taxonomy"]["sha256"] != second["inputs"]["taxonomy"]["sha256"]
    assert second["inputs"]["taxonomy"]["sha256"] == _sha(alias_taxonomy_file)
