"""A run file scored against a dataset other than the one it answers: the dataset read
with another taxonomy than the one the model was asked about. The answers hold scores
for the run's categories under the run's definitions; reading them as another
taxonomy's categories of the same ids would be a silent wrong report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import toxeval
from fake_openai import FakeOpenAI, write_dataset
from toxeval.cli import main as cli_main
from toxeval.llm import predict
from toxeval.llm.runfile import RunFileError

FAST = {"retry_base_delay": 0.001}

# two toxeval-15 ids with other definitions
TWO = """name = "forum-2"
version = "1"
description = "a forum's own rules"

[[category]]
id = "hate"
name = "Hate"
description = "anything rude about anyone"

[[category]]
id = "harassment"
name = "Harassment"
description = "replying to the same user twice"
"""


@pytest.fixture
def run(fake_openai: FakeOpenAI, tmp_path: Path) -> tuple[Path, Path]:
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 12)
    path = tmp_path / "run.jsonl"
    predict(ds, "openai:fake", path, base_url=fake_openai.url, **FAST)
    return ds, path


def _dataset_for(tmp_path: Path) -> tuple[Path, Path]:
    tax = tmp_path / "forum-2.toml"
    tax.write_text(TWO, encoding="utf-8")
    ds = tmp_path / "ds2.jsonl"
    with ds.open("w", encoding="utf-8") as f:
        for i in range(12):
            labels = ["hate"] if i % 3 == 0 else (["harassment"] if i % 3 == 1 else [])
            row = {"id": f"r{i}", "text": f"please judge item-{i:05d}", "labels": labels}
            f.write(json.dumps(row) + "\n")
    return ds, tax


def test_a_run_scored_with_another_taxonomy_is_refused(
    run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, path = run
    ds, tax = _dataset_for(tmp_path)
    with pytest.raises(RunFileError, match="asked about taxonomy 'toxeval-15'"):
        toxeval.score(path, ds, taxonomy=tax, bootstrap=0)
    code = cli_main(["score", str(path), "--dataset", str(ds), "--taxonomy", str(tax), "-q"])
    assert code == 2
    assert "'forum-2'" in capsys.readouterr().err


def test_a_run_scored_with_its_own_taxonomy_is_read(run: tuple[Path, Path]) -> None:
    ds, path = run
    result = toxeval.score(path, ds, bootstrap=0)
    assert result.counts["scored"] == 12


def test_a_lexicon_run_scored_with_another_taxonomy_is_refused(tmp_path: Path) -> None:
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 12)
    path = tmp_path / "lex.jsonl"
    predict(ds, "lexicon", path)
    ds2, tax = _dataset_for(tmp_path)
    with pytest.raises(RunFileError, match="asked about another taxonomy"):
        toxeval.score(path, ds2, taxonomy=tax, bootstrap=0)


@pytest.mark.parametrize(
    ("cell", "said"),
    [
        ('"abc"', "a string"),
        ('"0.5"', "a string"),
        ("[0.5]", "a list"),
        ('{"p": 0.5}', "an object"),
        ("true", "a bool"),
        ("NaN", "NaN"),
        ("Infinity", "inf"),
        ("-1e999", "-inf"),
    ],
)
def test_a_score_cell_that_is_not_a_finite_number_is_named(
    run: tuple[Path, Path], capsys: pytest.CaptureFixture[str], cell: str, said: str
) -> None:
    # a list or an object was an internal error, a string "0.5" or true was read as a
    # score, "abc" gave float()'s message and NaN or inf the metric's, naming no row
    ds, path = run
    lines = path.read_text(encoding="utf-8").splitlines()
    n = next(i for i, line in enumerate(lines) if json.loads(line).get("id") == "r3")
    row = json.loads(lines[n])
    lines[n] = json.dumps({**row, "scores": {**row["scores"], "hate": "CELL"}})
    path.write_text("\n".join(lines).replace('"CELL"', cell) + "\n", encoding="utf-8")
    message = (
        f"{path}: row id 'r3': score for 'hate' is {said}; a score is a finite number, "
        "or null when unknown"
    )
    with pytest.raises(RunFileError) as e:
        toxeval.score(path, ds, bootstrap=0)
    assert str(e.value) == message
    assert cli_main(["score", str(path), "--dataset", str(ds), "-q", "--bootstrap", "0"]) == 2
    assert capsys.readouterr().err == f"toxeval: error: {message}\n"


def test_run_file_ids_not_in_the_dataset_are_counted_in_results(tmp_path: Path) -> None:
    # a run over 12 rows scored against a dataset holding 8 of them and 2 others: the 4
    # answers without a dataset row are counted where every dump's unknown ids are
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 12)
    path = tmp_path / "lex.jsonl"
    predict(ds, "lexicon", path)
    lines = ds.read_text(encoding="utf-8").splitlines()[:8]
    lines += [json.dumps({"id": f"new{i}", "text": f"new {i}", "labels": []}) for i in range(2)]
    subset = tmp_path / "subset.jsonl"
    subset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = toxeval.score(path, subset, bootstrap=0)
    assert result.counts["scored"] == 8
    assert result.counts["missing_prediction"] == 2
    assert result.counts["unknown_ids_dropped"] == 4
    assert sum("4 unknown-id" in n for n in result.notes) == 1, result.notes
