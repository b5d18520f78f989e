"""Token limits: ``--max-tokens`` and ``--max-completion-tokens``.

OpenAI's reasoning models (o-series, GPT-5) refuse ``max_tokens`` with a 400
``unsupported_parameter`` and take their limit as ``max_completion_tokens``; most other
OpenAI-compatible servers take ``max_tokens``. The fake server's ``reasoning_models``
answer as OpenAI's do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, write_dataset
from helpers import CliRun
from toxeval.llm import predict
from toxeval.llm.batch import read_sidecar
from toxeval.llm.requests import Item, RequestSpec, plan
from toxeval.taxonomy import load_taxonomy

TAX = load_taxonomy("toxeval-15")


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "ds.jsonl"
    write_dataset(path, 12)
    return path


def test_a_reasoning_model_given_max_tokens_stops_with_the_flag_to_use(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    fake_openai.reasoning_models = {"o-fake"}
    p = cli(
        "predict", "--dataset", str(dataset), "--detector", "openai:o-fake",
        "--out", str(tmp_path / "run.jsonl"), "--base-url", fake_openai.url,
        "--max-tokens", "400", "-q",
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "Unsupported parameter: 'max_tokens'" in p.stderr
    assert "--max-completion-tokens" in p.stderr and "Traceback" not in p.stderr
    assert len(fake_openai.log) == 1


def test_max_completion_tokens_is_sent_and_the_run_is_scored(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    fake_openai.reasoning_models = {"o-fake"}
    out = tmp_path / "out"
    p = cli(
        "evaluate", "--dataset", str(dataset), "--detector", "openai:o-fake",
        "--out", str(out), "--base-url", fake_openai.url, "--max-completion-tokens", "4000",
        "--bootstrap", "0", "-q",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert len(fake_openai.bodies) == 12
    assert all(b["max_completion_tokens"] == 4000 for b in fake_openai.bodies)
    assert not any("max_tokens" in b for b in fake_openai.bodies)
    results = json.loads((out / "results.json").read_text())
    assert results["counts"]["scored"] == 12


def test_the_limit_is_part_of_the_request_hash_and_absent_when_unset(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    predict(dataset, "openai:fake", run, base_url=fake_openai.url)
    assert not any("max_completion_tokens" in b for b in fake_openai.bodies)
    # the same run again: every row is done (an unset limit leaves the hash as it was)
    again = predict(dataset, "openai:fake", run, base_url=fake_openai.url)
    assert (again.written, again.skipped) == (0, 12)
    # a limit changes the requests, so every row is asked again
    limited = predict(
        dataset, "openai:fake", run, base_url=fake_openai.url, max_completion_tokens=9
    )
    assert limited.written == 12 and fake_openai.bodies[-1]["max_completion_tokens"] == 9


def test_the_spec_checks_the_limit() -> None:
    spec = RequestSpec(api="chat", model="m", taxonomy=TAX, max_completion_tokens=64)
    assert (
        "max_completion_tokens"
        not in RequestSpec(api="chat", model="m", taxonomy=TAX).fingerprint()
    )
    assert spec.fingerprint()["max_completion_tokens"] == 64
    body = plan(spec, [Item("a", "some text")])[0].calls[0].body
    assert body["max_completion_tokens"] == 64 and "max_tokens" not in body
    with pytest.raises(ValueError, match="not both"):
        RequestSpec(api="chat", model="m", taxonomy=TAX, max_tokens=5, max_completion_tokens=5)
    for bad in (0, -1, 1.5, True, "9"):
        with pytest.raises((ValueError, TypeError), match="max_completion_tokens"):
            RequestSpec(api="chat", model="m", taxonomy=TAX, max_completion_tokens=bad)
    moderation = load_taxonomy("openai-moderation-8")
    with pytest.raises(ValueError, match="max_completion_tokens only apply to api='chat'"):
        RequestSpec(api="moderation", model="m", taxonomy=moderation, max_completion_tokens=5)


def test_a_local_detector_refuses_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--max-completion-tokens apply to model servers"):
        predict(None, "lexicon", tmp_path / "run.jsonl", max_completion_tokens=10)


def test_a_batch_file_carries_the_limit_and_is_scored_with_it(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    batch = tmp_path / "batch.jsonl"
    p = cli(
        "predict", "--dataset", str(dataset), "--detector", "openai:o-fake",
        "--batch-file", str(batch), "--max-completion-tokens", "300",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    lines = [json.loads(x) for x in batch.read_text().splitlines()]
    assert [line["body"]["max_completion_tokens"] for line in lines] == [300] * 12
    assert read_sidecar(batch)["options"]["max_completion_tokens"] == 300
    out = tmp_path / "batch_output.jsonl"
    with open(out, "w") as f:
        for line in lines:
            key = json.dumps(line["body"]).split("item-")[-1][:5]
            body = fake_openai.chat_body("o-fake", (f"item-{key}",), line["body"])
            answer = {"status_code": 200, "body": body}
            f.write(json.dumps({"custom_id": line["custom_id"], "response": answer}) + "\n")
    q = cli("score", str(out), "--dataset", str(dataset), "--batch-input", str(batch), "-q")
    assert q.returncode == 0, q.stderr
    assert "(12 scored" in q.stdout
