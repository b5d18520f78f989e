"""The Batch API flow under hostile input: ``toxeval predict --batch-file`` and then
``toxeval score OUTPUT --batch-input FILE`` with outputs that are not the batch's own
(another batch of the same shape, a batch input written again since), duplicate, extra
or missing ``custom_id`` lines, error lines, truncated files, rows in any order, a
broken sidecar, and ``--out`` folders holding another run's ``run.jsonl``.

The Batch API itself is played by :func:`batch_output`, which answers every request of
an input file with the fake server's scripted answer (tests/fake_openai.py), so no
server is started."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import toxeval
from fake_openai import FakeOpenAI, text_key, write_dataset
from helpers import CliRun
from toxeval.llm import batch as batch_module
from toxeval.llm.batch import BATCH_FORMAT, sidecar_path

URL = "http://127.0.0.1:9/v1"  # never contacted: --batch-file sends nothing


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "ds.jsonl"
    write_dataset(path, 24)
    return path


def batch_output(batch_input: Path, *, fail: frozenset[int] = frozenset()) -> list[dict[str, Any]]:
    """The Batch API's output lines for ``batch_input``: the fake server's answer to each
    request, in the input's order; the requests at the positions in ``fail`` get an
    error line instead."""
    fake = FakeOpenAI()
    lines = []
    for n, text in enumerate(batch_input.read_text(encoding="utf-8").splitlines()):
        req = json.loads(text)
        key = text_key(json.dumps(req["body"]))
        if n in fail:
            line = {
                "custom_id": req["custom_id"],
                "response": None,
                "error": {"code": "server_error", "message": "server error"},
            }
        else:
            body = fake.chat_body("fake", (key,), req["body"])
            line = {
                "custom_id": req["custom_id"],
                "response": {"status_code": 200, "body": body},
                "error": None,
            }
        lines.append(line)
    return lines


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path


def write_batch(cli: Callable[..., CliRun], dataset: Path, batch: Path, *extra: str) -> None:
    p = cli(
        "predict", "--dataset", str(dataset), "--detector", "openai:fake",
        "--batch-file", str(batch), "--base-url", URL, *extra,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr


def score_batch(
    cli: Callable[..., CliRun], output: Path, dataset: Path, batch: Path, *extra: str
) -> CliRun:
    return cli(
        "score", str(output), "--dataset", str(dataset), "--batch-input", str(batch),
        "-q", "--bootstrap", "0", *extra,
    )  # fmt: skip


def test_the_output_of_another_batch_of_the_same_shape_is_refused(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    # two batches of 8 rows drawn with different seeds: the same custom_id positions,
    # other items behind them; scoring the first output through the second sidecar
    # would give each answer to another row
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch, "--sample", "8", "--seed", "1")
    first = write_lines(tmp_path / "out1.jsonl", batch_output(batch))
    write_batch(cli, dataset, batch, "--sample", "8", "--seed", "2")
    second = write_lines(tmp_path / "out2.jsonl", batch_output(batch))
    assert score_batch(cli, second, dataset, batch).returncode == 0
    p = score_batch(cli, first, dataset, batch)
    assert p.returncode == 2, p.stdout
    assert "not a request of" in p.stderr and str(batch) in p.stderr


def test_the_output_of_a_batch_with_another_template_is_refused(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch, "--template", "zero-shot-prompt")
    out = write_lines(tmp_path / "out.jsonl", batch_output(batch))
    write_batch(cli, dataset, batch, "--template", "few-shot-prompt")
    p = score_batch(cli, out, dataset, batch)
    assert p.returncode == 2 and "not a request of" in p.stderr


def test_a_duplicate_custom_id_is_refused_not_overwritten(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    lines = batch_output(batch)
    again = {**lines[3], "response": {"status_code": 500, "body": {}}}
    p = score_batch(cli, write_lines(tmp_path / "out.jsonl", [*lines, again]), dataset, batch)
    assert p.returncode == 2
    assert f"custom_id {lines[3]['custom_id']!r} is on lines 4 and 25" in p.stderr


def test_an_extra_custom_id_is_refused(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    lines = batch_output(batch)
    extra = {**lines[0], "custom_id": "99.0"}
    p = score_batch(cli, write_lines(tmp_path / "out.jsonl", [*lines, extra]), dataset, batch)
    assert p.returncode == 2 and "line 25: custom_id '99.0' is not a request of" in p.stderr


def test_the_batch_input_given_as_the_output_is_named_as_such(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    p = score_batch(cli, batch, dataset, batch)
    assert p.returncode == 2 and "line 1 is a Batch API request, not an answer" in p.stderr


def test_rows_in_any_order_give_the_report_of_the_input_order(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    lines = batch_output(batch, fail=frozenset({5}))
    ordered = score_batch(cli, write_lines(tmp_path / "a.jsonl", lines), dataset, batch)
    random.Random(0).shuffle(lines)
    shuffled = score_batch(cli, write_lines(tmp_path / "b.jsonl", lines), dataset, batch)
    assert ordered.returncode == shuffled.returncode == 0, ordered.stderr + shuffled.stderr
    assert ordered.stdout == shuffled.stdout
    assert "(23 scored, 1 excluded)" in ordered.stdout


def test_missing_and_failed_requests_are_counted_as_failed_not_scored(
    dataset: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    lines = batch_output(batch, fail=frozenset({0, 1}))
    del lines[2:5]  # the Batch API never answered three requests
    out = write_lines(tmp_path / "out.jsonl", lines)
    run = tmp_path / "run.jsonl"
    from toxeval.datasets import load_dataset
    from toxeval.llm.batch import batch_run_file

    batch_run_file(out, batch, load_dataset(dataset), run)
    result = toxeval.score(run, dataset)
    assert result.counts["scored"] == 19
    assert result.counts["failed_request"] == 5
    errors = [json.loads(x).get("error") for x in run.read_text().splitlines()[1:]]
    assert sum("server error" in (e or "") for e in errors) == 2
    assert sum("no answer in the batch output" in (e or "") for e in errors) == 3


def test_a_truncated_output_is_an_error_naming_the_line(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    text = write_lines(tmp_path / "full.jsonl", batch_output(batch)).read_text()
    out = tmp_path / "out.jsonl"
    out.write_text(text[: len(text) // 2])
    p = score_batch(cli, out, dataset, batch)
    assert p.returncode == 2 and "is not JSON" in p.stderr


def test_an_output_with_no_answer_says_so_without_a_temporary_path(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    out = write_lines(tmp_path / "out.jsonl", batch_output(batch, fail=frozenset(range(24))))
    p = score_batch(cli, out, dataset, batch)
    assert p.returncode == 2
    assert str(out) in p.stderr and "24 failed requests" in p.stderr
    assert "tmp" not in p.stderr.replace(str(tmp_path), "")


@pytest.mark.parametrize(
    "sidecar",
    [
        {"toxeval_batch": BATCH_FORMAT},
        {"toxeval_batch": BATCH_FORMAT, "dataset": "ds", "detector": "openai:fake"},
        [],
    ],
)
def test_a_broken_sidecar_is_a_clear_error(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path, sidecar: Any
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    out = write_lines(tmp_path / "out.jsonl", batch_output(batch))
    side = tmp_path / "batch.jsonl.toxeval.json"
    side.write_text(json.dumps(sidecar))
    p = score_batch(cli, out, dataset, batch)
    assert p.returncode == 2, p.stderr
    assert str(side) in p.stderr


def test_out_keeps_another_runs_run_file(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    # --out holds run.jsonl of another run (evaluate --detector keeps its answers there)
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    out = write_lines(tmp_path / "out.jsonl", batch_output(batch))
    results = tmp_path / "results"
    results.mkdir()
    other = results / "run.jsonl"
    other.write_text('{"toxeval_run": 1}\n')
    p = score_batch(cli, out, dataset, batch, "--out", str(results))
    assert p.returncode == 2 and "run.jsonl" in p.stderr
    assert other.read_text() == '{"toxeval_run": 1}\n'
    # the batch output itself saved as run.jsonl there is read, not deleted first
    out.replace(other)
    p = score_batch(cli, other, dataset, batch, "--out", str(results))
    assert p.returncode == 2 and other.exists()


def test_out_run_file_is_replaced_by_the_same_batch_scored_again(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    out = write_lines(tmp_path / "out.jsonl", batch_output(batch))
    results = tmp_path / "results"
    first = score_batch(cli, out, dataset, batch, "--out", str(results))
    assert first.returncode == 0, first.stderr
    run = (results / "run.jsonl").read_text()
    again = score_batch(cli, out, dataset, batch, "--out", str(results))
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout and (results / "run.jsonl").read_text() == run


@pytest.mark.parametrize(
    "option",
    [
        ("--parse-policy", "error"),
        ("--mapping", "llama-guard-3"),
        ("--format", "csv"),
        ("--on-mismatch", "drop"),
    ],
)
def test_dump_options_are_refused_with_a_batch_output(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path, option: tuple[str, str]
) -> None:
    # they do not apply to a batch (as to a run file), rather than be ignored
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    out = write_lines(tmp_path / "out.jsonl", batch_output(batch))
    p = score_batch(cli, out, dataset, batch, *option)
    assert p.returncode == 2 and f"{option[0]} does not apply to a Batch API output" in p.stderr


def test_the_batch_file_never_replaces_the_dataset_or_a_run_file(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    before = dataset.read_bytes()
    p = cli(
        "predict", "--dataset", str(dataset), "--detector", "openai:fake",
        "--batch-file", str(dataset), "--base-url", URL,
    )  # fmt: skip
    assert p.returncode == 2 and "would overwrite the dataset file" in p.stderr
    assert dataset.read_bytes() == before
    run = tmp_path / "run.jsonl"
    run.write_text('{"toxeval_run": 1}\n')
    p = cli(
        "predict", "--dataset", str(dataset), "--detector", "openai:fake",
        "--batch-file", str(run), "--base-url", URL,
    )  # fmt: skip
    assert p.returncode == 2 and "is not a batch input toxeval wrote" in p.stderr
    assert run.read_text() == '{"toxeval_run": 1}\n'
    assert not (tmp_path / "run.jsonl.toxeval.json").exists()


def test_a_batch_file_written_again_replaces_the_earlier_batch(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch, "--limit", "4")
    write_batch(cli, dataset, batch, "--limit", "6")
    assert len(batch.read_text().splitlines()) == 6
    assert len(json.loads((tmp_path / "batch.jsonl.toxeval.json").read_text())["ids"]) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "batch.jsonl", "batch.jsonl.toxeval.json", "ds.jsonl",
    ]  # fmt: skip


def test_a_batch_with_a_template_file_is_scored_from_another_folder(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toxeval.llm

    work = tmp_path / "work"
    work.mkdir()
    shipped = Path(toxeval.llm.__file__).parents[1] / "data/templates/zero-shot-prompt.toml"
    (work / "mine.toml").write_bytes(shipped.read_bytes())
    monkeypatch.chdir(work)
    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch, "--template", "mine.toml")
    out = write_lines(tmp_path / "out.jsonl", batch_output(batch))
    monkeypatch.chdir(tmp_path)
    p = score_batch(cli, out, dataset, batch)
    assert p.returncode == 0, p.stderr


def test_results_name_the_batch_output_not_a_temporary_run_file(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    import hashlib

    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    out = write_lines(tmp_path / "out.jsonl", batch_output(batch))
    results = tmp_path / "results"
    p = score_batch(cli, out, dataset, batch, "--out", str(results))
    assert p.returncode == 0, p.stderr
    data = json.loads((results / "results.json").read_text())
    sha = hashlib.sha256(out.read_bytes()).hexdigest()
    assert data["inputs"]["predictions"] == {"path": str(out), "name": out.name, "sha256": sha}
    assert data["system"]["source"] == str(out) and data["system"]["batch_input"] == str(batch)
    system = next(x for x in (results / "report.md").read_text().splitlines() if "| system" in x)
    assert "Batch API output" in system and "run file" not in system


def test_failed_batch_requests_keep_the_servers_reason(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    # the Batch API writes a request the model server refused with its HTTP status and
    # error body, and one it never ran (expired, cancelled) with response null and an
    # error object; either row fails (unscored) with the server's words
    from toxeval.datasets import load_dataset
    from toxeval.llm.batch import batch_run_file

    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    lines = batch_output(batch)
    refused = {"message": "Invalid 'messages[1].content': string too long.", "code": None}
    lines[2]["response"] = {
        "status_code": 400,
        "request_id": "req_0c5e8d",
        "body": {"error": {**refused, "type": "invalid_request_error", "param": "messages"}},
    }
    lines[5]["response"] = None
    lines[5]["error"] = {
        "code": "batch_expired",
        "message": "This request could not be executed before the completion window expired.",
    }
    run = tmp_path / "run.jsonl"
    batch_run_file(write_lines(tmp_path / "out.jsonl", lines), batch, load_dataset(dataset), run)
    rows = [json.loads(x) for x in run.read_text().splitlines()[1:]]
    errors = [r["error"] for r in rows if r.get("error")]
    assert errors == [
        "batch request failed: HTTP 400: Invalid 'messages[1].content': string too long.",
        "batch request failed: batch_expired: This request could not be executed before the "
        "completion window expired.",
    ]
    assert sum(r.get("scores") is None for r in rows) == 2


def test_an_error_inside_a_200_answer_is_a_failed_row_not_an_unparseable_one(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    # a provider's failure inside a 200 body (OpenRouter's form), and a 200 with no
    # choice: nothing the model said, so the rows fail (unscored, asked again by a live
    # run) as in a live run; read as answers they were unparseable, the model's failure
    from toxeval.datasets import load_dataset
    from toxeval.llm.batch import batch_run_file

    batch = tmp_path / "batch.jsonl"
    write_batch(cli, dataset, batch)
    lines = batch_output(batch)
    lines[3]["response"]["body"] = {"error": {"message": "Provider returned error", "code": 502}}
    lines[4]["response"]["body"] = {"id": "chatcmpl-0", "choices": []}
    run = tmp_path / "run.jsonl"
    batch_run_file(write_lines(tmp_path / "out.jsonl", lines), batch, load_dataset(dataset), run)
    rows = [json.loads(x) for x in run.read_text().splitlines()[1:]]
    errors = [r["error"] for r in rows if r.get("error")]
    assert errors == [
        "batch request failed: HTTP 200 with an error: Provider returned error",
        "batch request failed: HTTP 200 with an error: the answer holds no choices",
    ]
    result = toxeval.score(run, dataset)
    assert result.counts["failed_request"] == 2 and result.counts["scored"] == 22


@pytest.mark.parametrize("limit", [5, 6])
def test_a_batch_file_over_openais_limits_gets_a_note(
    cli: Callable[..., CliRun],
    dataset: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    limit: int,
) -> None:
    # OpenAI refuses an input file over its limits when it is uploaded, long after it was
    # written: the note says so at once (the file is still written: other servers take it).
    monkeypatch.setattr(batch_module, "OPENAI_MAX_REQUESTS", limit)
    batch = tmp_path / "b.jsonl"
    p = cli("predict", "--dataset", str(dataset), "--detector", "openai:fake",
            "--batch-file", str(batch), "--limit", "6")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert len(batch.read_text().splitlines()) == 6
    if limit < 6:
        assert p.stderr.startswith(f"toxeval: note: {batch} holds 6 requests (")
        assert "OpenAI's Batch API takes at most 5 requests and 200 MB per file" in p.stderr
    else:
        assert "note" not in p.stderr


def test_a_batch_file_that_is_a_link_to_nothing_is_refused(
    cli: Callable[..., CliRun], dataset: Path, tmp_path: Path
) -> None:
    # the link (a loop, or one to a file in a missing folder) was replaced by the batch
    # input, and the run said it was written
    loop, dangling = tmp_path / "loop.jsonl", tmp_path / "dangling.jsonl"
    (tmp_path / "other.jsonl").symlink_to(loop)
    loop.symlink_to(tmp_path / "other.jsonl")
    dangling.symlink_to(tmp_path / "missing" / "batch.jsonl")
    for link in (loop, dangling):
        p = cli(
            "predict", "--dataset", str(dataset), "--detector", "openai:fake",
            "--batch-file", str(link), "--base-url", URL,
        )  # fmt: skip
        assert p.returncode == 2
        assert p.stderr == (
            f"toxeval: error: --batch-file {link}: a symbolic link to nothing (its target is "
            "missing, or the link is a loop)\n"
        )
        assert link.is_symlink() and not sidecar_path(link).exists()
