"""The runner end to end: toxeval predict / evaluate --detector / score RUNFILE against
the fake OpenAI server on 127.0.0.1 (tests/fake_openai.py), through the same client code
users run: nothing lost under faults, resume after kill -9 and Ctrl-C, torn lines,
changed settings, failures reported as unscored, secrets never written."""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from fake_openai import FakeOpenAI, logprob_yes, scripted_scores, write_dataset
from helpers import CliRun, examples
from hypothesis import given, settings
from hypothesis import strategies as st
from toxeval.datasets import load_dataset
from toxeval.llm import predict
from toxeval.llm.runfile import RunWriter, read_run, request_hash, request_hasher
from toxeval.taxonomy import load_taxonomy

TAX = load_taxonomy("toxeval-15")
FAST = {"retry_base_delay": 0.001}
KEY = "sk-test-SECRET-0123456789abcdefXYZ"


def _rows(path: Path) -> list[dict[str, Any]]:
    """The item rows of a run file (complete lines only)."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")[:-1]  # a torn tail has no newline
    objs = [json.loads(x) for x in lines if x.strip()]
    return [o for o in objs if "toxeval_run" not in o]


def _key(row_id: str) -> str:
    return f"item-{int(row_id[1:]):05d}"


def _cli(
    *args: str, env: dict[str, str] | None = None, **kw: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toxeval.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        **kw,
    )


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "ds.jsonl"
    write_dataset(path, 60)
    return path


def test_2000_rows_at_concurrency_64_with_10pc_faults_end_with_every_id_once(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    ds = tmp_path / "big.jsonl"
    write_dataset(ds, 2000)
    fake_openai.fault_rate = 0.10
    run = tmp_path / "run.jsonl"
    summary = predict(ds, "openai:fake", run, base_url=fake_openai.url, concurrency=64, **FAST)
    assert summary.failed == 0 and summary.written == 2000
    assert summary.retries >= 100  # about 200 faults were injected and retried
    rows = _rows(run)
    assert Counter(r["id"] for r in rows) == Counter(f"r{i}" for i in range(2000))
    for r in rows:
        assert r["error"] is None and r["parse_status"] == "ok"
        assert r["scores"] == scripted_scores(_key(r["id"]), TAX.ids)
    faulted = {e.keys[0] for e in fake_openai.log if e.status != 200}
    assert len(faulted) > 100
    # a second run sends nothing
    n = len(fake_openai.log)
    again = predict(ds, "openai:fake", run, base_url=fake_openai.url, concurrency=64, **FAST)
    assert again.written == 0 and again.skipped == 2000 and len(fake_openai.log) == n


def test_run_file_scores_are_the_scripted_ones_in_the_report(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    predict(dataset, "openai:fake", run, base_url=fake_openai.url, **FAST)
    result = toxeval.score(run, dataset)
    ds = load_dataset(dataset)
    expected = np.array([[scripted_scores(_key(i), TAX.ids)[c] for c in TAX.ids] for i in ds.ids])
    assert result.map == pytest.approx(toxeval.score(expected, ds).map, abs=1e-12)
    assert result.system["scoring_method"] == ["json"]
    assert result.config["run_fingerprint"]["model"] == "fake"
    assert not result.binary_scores


def test_torn_last_line_is_redone_and_the_file_repaired(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    predict(dataset, "openai:fake", run, base_url=fake_openai.url, **FAST)
    lines = run.read_bytes().split(b"\n")[:-1]
    last = json.loads(lines[-1])
    run.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-1][: len(lines[-1]) // 2])
    assert read_run(run).torn_tail
    before = len(fake_openai.log)
    summary = predict(dataset, "openai:fake", run, base_url=fake_openai.url, **FAST)
    assert summary.written == 1 and summary.repaired_bytes > 0
    assert [e.keys for e in fake_openai.log[before:]] == [(_key(last["id"]),)]
    rows = _rows(run)
    assert Counter(r["id"] for r in rows) == Counter(f"r{i}" for i in range(60))
    assert run.read_bytes().endswith(b"\n")


@pytest.mark.parametrize(
    "change",
    [{"temperature": 0.7}, {"detector": "openai:other-model"}, {"template": "few-shot-prompt"}],
    ids=["temperature", "model", "template"],
)
def test_changed_settings_redo_every_row_and_never_mix(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path, change: dict[str, Any]
) -> None:
    run = tmp_path / "run.jsonl"
    predict(dataset, "openai:fake", run, base_url=fake_openai.url, limit=20, **FAST)
    opts = {"detector": "openai:fake", **change}
    det = opts.pop("detector")
    before = len(fake_openai.log)
    summary = predict(dataset, det, run, base_url=fake_openai.url, limit=20, **FAST, **opts)
    assert summary.written == 20 and summary.skipped == 0
    assert len(fake_openai.log) - before == 20
    state = read_run(run)
    assert state.header is not None and len(state.by_hash) == 40
    first_fp = json.loads(run.read_text().splitlines()[0])["fingerprint"]
    result = toxeval.score(run, dataset)
    assert result.counts["scored"] == 20  # the 20 current rows, not the 20 stale ones
    assert result.system["fingerprint"] == state.header["fingerprint"] != first_fp


def test_failed_rows_are_unscored_and_retried_by_the_next_run(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    fake_openai.faults["item-00003"] = ["500"] * 5
    fake_openai.faults["item-00005"] = ["400"]
    summary = predict(dataset, "openai:fake", run, base_url=fake_openai.url, max_retries=2, **FAST)
    assert summary.failed == 2
    failed = {r["id"]: r for r in _rows(run) if r["error"]}
    assert set(failed) == {"r3", "r5"} and all(r["scores"] is None for r in failed.values())
    assert "HTTP 500" in failed["r3"]["error"] and "not retried" in failed["r5"]["error"]
    assert fake_openai.requested("item-00005") == 1  # 400: never retried
    result = toxeval.score(run, dataset)
    assert result.counts["scored"] == 58 and result.counts["excluded"] == 2
    # failed requests are counted as such, not as rows without a prediction
    assert result.counts["failed_request"] == 2 and result.counts["missing_prediction"] == 0
    assert any("2 rows failed after retries" in n for n in result.notes)
    assert result.system["rows"]["failed"] == 2
    again = predict(dataset, "openai:fake", run, base_url=fake_openai.url, max_retries=2, **FAST)
    assert again.written == 2 and again.failed == 0
    assert toxeval.score(run, dataset).counts["scored"] == 60


def test_dry_run_sends_nothing(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    p = cli(
        "predict", "--dataset", str(dataset), "--detector", "openai:fake",
        "--base-url", fake_openai.url, "--dry-run",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "60 requests" in p.stdout and "prompt tokens" in p.stdout
    assert fake_openai.log == []
    assert not (tmp_path / "run.jsonl").exists()


def test_401_stops_the_run_after_the_first_request_with_exit_2(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    fake_openai.require_key = "sk-the-right-key-000000000000"
    run = tmp_path / "run.jsonl"
    p = cli(
        "predict", "--dataset", str(dataset), "--detector", "openai:fake", "--out", str(run),
        "--base-url", fake_openai.url, "-q",
        env={"OPENAI_API_KEY": KEY},
    )  # fmt: skip
    assert p.returncode == 2
    assert "HTTP 401" in p.stderr and "run stopped" in p.stderr and "Traceback" not in p.stderr
    assert len(fake_openai.log) == 1
    _assert_no_key(tmp_path, p.stdout + p.stderr)


def _assert_no_key(root: Path, output: str) -> None:
    assert KEY not in output and KEY[-10:] not in output
    for f in root.rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            assert KEY.encode() not in data and KEY[-10:].encode() not in data, f


def test_the_key_is_sent_and_never_written(
    fake_openai: FakeOpenAI,
    dataset: Path,
    tmp_path: Path,
    cli: Callable[..., CliRun],
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_openai.require_key = KEY
    caplog.set_level(logging.DEBUG)  # the runner logs every request at INFO
    out = tmp_path / "out"
    p = cli(
        "evaluate", "--dataset", str(dataset), "--detector", "openai:fake", "--out", str(out),
        "--base-url", fake_openai.url, "--api-key-env", "MY_KEY",
        env={"MY_KEY": KEY, "TOXEVAL_DEBUG": "1"},
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert (out / "run.jsonl").is_file() and (out / "results.json").is_file()
    assert all(h.get("Authorization") == f"Bearer {KEY}" for h in fake_openai.headers_seen)
    assert "HTTP Request: POST" in caplog.text
    _assert_no_key(tmp_path, p.stdout + p.stderr + caplog.text)


def test_evaluate_detector_gives_the_full_report_with_graded_scores(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    out = tmp_path / "out"
    p = cli(
        "evaluate", "--dataset", str(dataset), "--detector", "openai:gpt-fake",
        "--base-url", fake_openai.url, "--out", str(out),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "mAP" in p.stdout and "per category" in p.stdout
    res = json.loads((out / "results.json").read_text())
    assert res["binary_scores"] is False and res["counts"]["scored"] == 60
    assert res["system"]["scoring_method"] == ["json"]
    assert res["system"]["fingerprint"]["model"] == "gpt-fake"
    assert res["config"]["run_fingerprint"] == res["system"]["fingerprint"]
    # the same report from the kept run file
    again = toxeval.score(out / "run.jsonl", dataset)
    figures = {k: v for k, v in again.figures.items() if k != "intervals"}
    want = {k: v for k, v in res["figures"].items() if k != "intervals"}
    assert figures == pytest.approx(want, abs=1e-15)
    # the same rows and seed: the same intervals as the command's
    assert again.figures["intervals"] == res["figures"]["intervals"]


def test_python_evaluate_with_a_detector_spec(fake_openai: FakeOpenAI, dataset: Path) -> None:
    result = toxeval.evaluate(dataset, detector="openai:gpt-fake", base_url=fake_openai.url)
    assert result.counts["scored"] == 60 and result.system["kind"] == "run"


def test_labels_scoring_warns_that_ranking_figures_are_coarse(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    result = toxeval.evaluate(
        dataset, detector="openai:fake", base_url=fake_openai.url, scoring="labels"
    )
    assert result.system["scoring_method"] == ["labels"]
    assert any("ranking figures" in n and "coarse" in n for n in result.notes)


def _start_predict(dataset: Path, run: Path, url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toxeval.cli",
            "predict",
            "--dataset",
            str(dataset),
            "--detector",
            "openai:fake",
            "--out",
            str(run),
            "--base-url",
            url,
            "--concurrency",
            "4",
            "-q",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_rows(run: Path, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if run.exists() and run.read_bytes().count(b"\n") > n:
            return
        time.sleep(0.02)
    raise AssertionError(f"the run did not reach {n} rows (exit {proc.poll()})")


def _interrupt(
    fake: FakeOpenAI, tmp_path: Path, sig: signal.Signals, after_rows: int
) -> tuple[Path, Path, int, str, float]:
    """A `toxeval predict` of 200 rows sent ``sig`` once ``after_rows`` rows are written:
    (dataset, run file, exit code, stderr, when it had ended)."""
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 200)
    run = tmp_path / "run.jsonl"
    fake.latency = 0.01
    proc = _start_predict(ds, run, fake.url)
    _wait_for_rows(run, after_rows, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    fake.latency = 0.0
    return ds, run, proc.returncode, err, time.monotonic()


def test_kill_9_in_the_middle_then_resume_loses_and_repeats_nothing(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    ds, run, code, _, killed_at = _interrupt(fake_openai, tmp_path, signal.SIGKILL, 40)
    assert code == -signal.SIGKILL
    finished = {r["id"] for r in _rows(run)}
    assert 40 <= len(finished) < 200
    p = _cli(
        "predict", "--dataset", str(ds), "--detector", "openai:fake", "--out", str(run),
        "--base-url", fake_openai.url, "-q",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    rows = _rows(run)
    assert Counter(r["id"] for r in rows) == Counter(f"r{i}" for i in range(200))
    asked_after = {k for e in fake_openai.log if e.time > killed_at for k in e.keys}
    assert not asked_after & {_key(i) for i in finished}  # no finished row asked again
    assert asked_after == {_key(f"r{i}") for i in range(200)} - {_key(i) for i in finished}


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_and_sigterm_stop_cleanly_with_a_resume_message(
    fake_openai: FakeOpenAI, tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    ds, run, got, err, _ = _interrupt(fake_openai, tmp_path, sig, 30)
    assert got == code, err
    assert "interrupted" in err and "rerun the same command to resume" in err
    assert "Traceback" not in err
    data = run.read_bytes()
    assert data.endswith(b"\n")  # complete rows only
    rows = _rows(run)
    assert len({r["id"] for r in rows}) == len(rows) < 200
    again = predict(ds, "openai:fake", run, base_url=fake_openai.url, **FAST)
    assert again.skipped == len(rows) and again.written == 200 - len(rows)


def test_a_run_gives_back_the_callers_signal_handlers(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    # the run's own Ctrl-C/SIGTERM handling reset both signals to Python's defaults when
    # it ended: a program's own handlers were gone after one predict() call
    def mine(signum: int, frame: Any) -> None:
        pass

    before = {sig: signal.signal(sig, mine) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        predict(dataset, "openai:fake", tmp_path / "run.jsonl", base_url=fake_openai.url, **FAST)
        assert signal.getsignal(signal.SIGINT) is mine
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def test_moderation_scores_map_onto_the_taxonomy_with_unmapped_cells_unknown(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    summary = predict(dataset, "openai-moderation", run, base_url=fake_openai.url, **FAST)
    assert summary.requests == 2  # 60 inputs in batches of 32
    rows = _rows(run)
    assert len(rows) == 60 and all(r["method"] == "moderation" for r in rows)
    assert all(len(r["raw"][0]["results"]) == 1 for r in rows)  # each row keeps its own result
    nulls = {c for r in rows for c, v in r["scores"].items() if v is None}
    result = toxeval.score(run, dataset)
    if nulls:
        assert any("counted per category as 'no score'" in n for n in result.notes)
        assert result.counts["no_score_cells"] >= 60 * len(nulls)


def test_batch_file_round_trip_gives_the_live_report(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    batch = tmp_path / "batch.jsonl"
    p = cli(
        "predict", "--dataset", str(dataset), "--detector", "openai:fake",
        "--batch-file", str(batch), "--base-url", fake_openai.url,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert fake_openai.log == []
    lines = [json.loads(x) for x in batch.read_text().splitlines()]
    assert len(lines) == 60
    assert set(lines[0]) == {"custom_id", "method", "url", "body"}
    assert lines[0]["method"] == "POST" and lines[0]["url"] == "/v1/chat/completions"
    # what the Batch API would return, one request failing
    out = tmp_path / "batch_output.jsonl"
    with open(out, "w") as f:
        for line in lines:
            key = json.dumps(line["body"]).split("item-")[-1][:5]
            body = fake_openai.chat_body("fake", (f"item-{key}",), line["body"])
            failed = line["custom_id"].startswith("7.0.")
            f.write(
                json.dumps(
                    {
                        "custom_id": line["custom_id"],
                        "response": None if failed else {"status_code": 200, "body": body},
                        "error": {"message": "server error"} if failed else None,
                    }
                )
                + "\n"
            )
    q = cli("score", str(out), "--dataset", str(dataset), "--batch-input", str(batch), "-q")
    assert q.returncode == 0, q.stderr
    assert "(59 scored, 1 excluded)" in q.stdout
    # a live run where the same request fails gives the same report
    fake_openai.faults["item-00007"] = ["400"]
    live = tmp_path / "live.jsonl"
    predict(dataset, "openai:fake", live, base_url=fake_openai.url, **FAST)
    result = toxeval.score(live, dataset)
    assert q.stdout.startswith(f"mAP {result.map:.4f}  label ranking loss ")
    assert result.counts["scored"] == 59


def test_lexicon_through_predict_gives_the_evaluate_figures(tmp_path: Path) -> None:
    run = tmp_path / "lex.jsonl"
    summary = predict(None, "lexicon", run)
    assert summary.written == 362
    assert toxeval.score(run).figures == toxeval.evaluate().figures


def test_a_local_detector_refuses_options_only_a_model_server_takes(tmp_path: Path) -> None:
    for options, flags in (
        ({"temperature": 0.5}, "--temperature"),
        ({"concurrency": 4, "timeout": 3.0}, "--concurrency, --timeout"),
        ({"seed": 3}, "--seed"),
    ):
        with pytest.raises(ValueError, match=f"{flags} apply to model servers"):
            predict(None, "lexicon", tmp_path / "run.jsonl", **options)
    # with a sample, the seed draws it; the defaults written out are not "given"
    summary = predict(
        None, "lexicon", tmp_path / "run.jsonl", sample=5, seed=3, timeout=(10.0, 120.0)
    )
    assert summary.items == 5


def test_python_detector_returning_labels_strings_or_arrays(tmp_path: Path) -> None:
    mod = tmp_path / "my_detectors.py"
    mod.write_text(
        "import numpy as np\n"
        "def labels(texts):\n    return [['hate'] if 'kill' in t else [] for t in texts]\n"
        "def raw(texts):\n    return ['{\"hate\": 0.9}' if 'kill' in t else \"I'm sorry, but I can't help with that.\" for t in texts]\n"
        "class Scorer:\n    def predict_scores(self, texts):\n        return np.full((len(texts), 15), 0.25)\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        r1 = toxeval.evaluate(detector="python:my_detectors:labels", run_file=tmp_path / "a.jsonl")
        assert r1.binary_scores
        r2 = toxeval.evaluate(detector="python:my_detectors:raw", run_file=tmp_path / "b.jsonl")
        assert r2.parse is not None and r2.parse["status_counts"].get("unparseable", 0) > 0
        assert r2.counts["excluded"] == r2.parse["status_counts"]["unparseable"]
        r3 = toxeval.evaluate(detector="python:my_detectors:Scorer", run_file=tmp_path / "c.jsonl")
        assert r3.counts["scored"] == 362
    finally:
        sys.path.remove(str(tmp_path))


def test_a_detector_with_no_usable_answer_is_named_not_a_temporary_run_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # evaluate without a run file reads the answers from a temporary file: the error
    # named that file (gone by then), and left the unparseable answers uncounted
    # (a detector answering text that says nothing readable; a NaN score is an error of
    # its own, tests/test_detectors.py)
    (tmp_path / "mute_detector.py").write_text("def f(texts):\n    return ['???'] * len(texts)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError) as e:
        toxeval.evaluate(detector="python:mute_detector:f")
    assert str(e.value) == (
        "the answers of python:mute_detector:f: no dataset row has a usable prediction "
        "(362 unparseable answers)"
    )


@pytest.mark.parametrize(
    ("name", "code", "attr", "said"),
    [
        # an import that fails otherwise than ImportError was an internal error (exit 1)
        (
            "gpu_det",
            "raise RuntimeError('no GPU')\n",
            "f",
            "importing 'gpu_det' raised RuntimeError: no GPU",
        ),
        ("typo_det", "def f(:\n", "f", "importing 'typo_det' raised SyntaxError: invalid syntax"),
        # a detector that calls sys.exit() ended the run with its status: 0 and no output
        ("exit_det", "import sys\nsys.exit(0)\n", "f", "importing 'exit_det' raised SystemExit: 0"),
        (
            "exit_call_det",
            "import sys\ndef f(texts):\n    sys.exit(0)\n",
            "f",
            "raised SystemExit: 0",
        ),
        # a class that cannot be built said only its own words
        (
            "ctor_det",
            "class C:\n    def __init__(self):\n        raise ValueError('no weights file')\n",
            "C",
            "building C raised ValueError: no weights file",
        ),
    ],
)
def test_a_python_detector_that_fails_to_load_or_exits_is_a_clear_error(
    tmp_path: Path,
    cli: Callable[..., CliRun],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    code: str,
    attr: str,
    said: str,
) -> None:
    (tmp_path / f"{name}.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    p = cli("evaluate", "--detector", f"python:{name}:{attr}", "-q", "--bootstrap", "0")
    assert p.returncode == 2, p
    assert p.stderr.startswith("toxeval: error: detector ") and f"python:{name}:{attr}" in p.stderr
    assert said in p.stderr and len(p.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o", "unknown detector"),
        ("openai:", "name the model"),
        ("python:nomodule", "python:module:attr"),
        ("python:no_such_module_xyz:f", "cannot import"),
    ],
)
def test_bad_detector_specs_are_clear_errors(spec: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=message):
        predict(None, spec, tmp_path / "r.jsonl")
    assert not (tmp_path / "r.jsonl").exists()


def test_a_bad_detector_spec_exits_2_in_the_cli(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    p = cli("predict", "--dataset", "demo", "--detector", "gpt-4o", "--out", str(tmp_path / "r"))
    assert p.returncode == 2 and "unknown detector 'gpt-4o'" in p.stderr
    assert "Traceback" not in p.stderr


def test_a_moderation_batch_sent_again_does_not_write_its_done_rows_twice(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    predict(dataset, "openai-moderation", run, base_url=fake_openai.url, limit=40, **FAST)
    summary = predict(dataset, "openai-moderation", run, base_url=fake_openai.url, **FAST)
    assert summary.skipped == 40 and summary.written == 20
    assert Counter(r["id"] for r in _rows(run)) == Counter(f"r{i}" for i in range(60))


def test_a_file_that_is_not_a_run_file_is_never_appended_to(
    tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    other = tmp_path / "preds.jsonl"
    other.write_text('{"id": "demo-0001", "scores": [0.1]}\n')
    p = cli("predict", "--dataset", "demo", "--detector", "lexicon", "--out", str(other))
    assert p.returncode == 2 and "not a toxeval run file" in p.stderr
    assert other.read_text() == '{"id": "demo-0001", "scores": [0.1]}\n'


def test_logprobs_scoring_reads_p_yes_from_the_token_logprobs(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    summary = predict(dataset, "openai:fake", run, base_url=fake_openai.url, scoring="logprobs")
    assert summary.parse_counts == {"ok": 60}
    for r in _rows(run):
        expected = {c: logprob_yes(v) for c, v in scripted_scores(_key(r["id"]), TAX.ids).items()}
        assert r["scores"] == pytest.approx(expected, abs=1e-9)
    assert toxeval.score(run, dataset).system["scoring_method"] == ["logprobs"]


def test_a_python_detector_that_raises_is_a_clear_error_and_the_report_names_the_run(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    (tmp_path / "broken_detector.py").write_text("def f(texts):\n    raise RuntimeError('boom')\n")
    p = _cli(
        "predict", "--dataset", "demo", "--detector", "python:broken_detector:f",
        "--out", str(tmp_path / "r.jsonl"),
        env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"},
    )  # fmt: skip
    assert p.returncode == 2 and "raised RuntimeError: boom" in p.stderr
    run = tmp_path / "run.jsonl"
    predict(dataset, "openai:gpt-fake", run, base_url=fake_openai.url, **FAST)
    from rich.console import Console
    from toxeval.report import render

    console = Console(file=io.StringIO(), width=300)
    render(toxeval.score(run, dataset), console)
    assert f"openai:gpt-fake (json scoring), run file {run}" in console.file.getvalue()


def test_401_without_the_key_variable_says_it_is_not_set(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_openai.require_key = KEY
    monkeypatch.delenv("MY_UNSET_KEY", raising=False)
    with pytest.raises(ValueError, match=r"run stopped: .*HTTP 401.*\$MY_UNSET_KEY is not set"):
        predict(dataset, "openai:fake", tmp_path / "r.jsonl", base_url=fake_openai.url,
                api_key_env="MY_UNSET_KEY")  # fmt: skip
    assert len(fake_openai.log) == 1


def test_response_level_datasets_send_the_prompt_and_the_response(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    write_dataset(tmp_path / "R-A-MLL.jsonl", 30, response=True)
    run = tmp_path / "run.jsonl"
    summary = predict("R-A-MLL", "openai:fake", run, data_dir=tmp_path, base_url=fake_openai.url)
    assert summary.written == 30 and summary.failed == 0
    sent = json.dumps(fake_openai.bodies[0]["messages"])
    assert "a prompt 0" in sent and "a reply to item-00000" in sent
    assert json.loads(run.read_text().splitlines()[0])["fingerprint"]["level"] == "response"
    assert toxeval.score(run, "R-A-MLL", data_dir=tmp_path).counts["scored"] == 30


def test_sample_with_a_seed_draws_the_same_rows_and_works_for_moderation(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    runs = [tmp_path / f"run{i}.jsonl" for i in range(3)]
    for run, seed in zip(runs, (7, 7, 8), strict=True):
        predict(dataset, "openai-moderation", run, base_url=fake_openai.url, sample=10, seed=seed)
    ids = [sorted(r["id"] for r in _rows(run)) for run in runs]
    assert len(ids[0]) == 10 and ids[0] == ids[1] != ids[2]


def test_a_second_writer_on_the_same_run_file_is_refused(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    run = tmp_path / "run.jsonl"
    predict(dataset, "openai:fake", run, base_url=fake_openai.url, limit=5, **FAST)
    before = run.read_bytes()
    with RunWriter(run, {"toxeval_run": 1}, last_header=None):  # another process's writer
        p = cli(
            "predict", "--dataset", str(dataset), "--detector", "openai:fake", "--out",
            str(run), "--base-url", fake_openai.url, "-q",
        )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "another process is writing to this run file" in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert run.read_bytes().startswith(before)  # untouched but for the open writer


def _full_disk_predict(dataset: Path, run: Path, url: str, limit: int) -> Any:
    """``toxeval predict`` with the file size capped at ``limit`` bytes (RLIMIT_FSIZE: a
    full disk as the writer sees it)."""
    import resource

    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "toxeval.cli", "predict", "--dataset", str(dataset),
         "--detector", "openai:fake", "--out", str(run), "--base-url", url, "-q"],
        capture_output=True, text=True, timeout=120, preexec_fn=cap,
    )  # fmt: skip


def test_a_full_disk_is_a_clear_error_and_the_file_stays_resumable(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    p = _full_disk_predict(dataset, run, fake_openai.url, 20_000)
    assert p.returncode == 2, p.stderr
    assert "writing the run file failed" in p.stderr and "Traceback" not in p.stderr
    data = run.read_bytes()
    assert data.endswith(b"\n") and 0 < len(data) <= 20_000  # complete rows only
    kept = _rows(run)
    assert 0 < len(kept) < 60
    again = predict(dataset, "openai:fake", run, base_url=fake_openai.url, **FAST)
    assert again.skipped == len(kept) and again.written == 60 - len(kept)
    assert Counter(r["id"] for r in _rows(run)) == Counter(f"r{i}" for i in range(60))


@pytest.mark.parametrize("target", ["--out", "--batch-file"])
def test_a_read_only_file_system_is_a_clear_error_naming_the_file(
    dataset: Path,
    tmp_path: Path,
    cli: Callable[..., CliRun],
    monkeypatch: pytest.MonkeyPatch,
    target: str,
) -> None:
    # EROFS (a read-only mount; root passes permission checks, not this) was an internal
    # error, exit 1, naming the batch file's staged name
    import builtins
    import errno

    def read_only(real: Any) -> Any:
        def opener(path: Any, *args: Any, **kwargs: Any) -> Any:
            if str(path).startswith(str(tmp_path / "ro")):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
            return real(path, *args, **kwargs)

        return opener

    monkeypatch.setattr(os, "open", read_only(os.open))
    monkeypatch.setattr(builtins, "open", read_only(builtins.open))
    (tmp_path / "ro").mkdir()
    out = tmp_path / "ro" / "r.jsonl"
    p = cli(
        "predict", "--dataset", str(dataset), "--detector", "openai:fake", target, str(out),
        "--base-url", "http://127.0.0.1:9/v1", "-q",
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"toxeval: error: {out}: cannot write") or p.stderr.startswith(
        f"toxeval: error: --batch-file {out}: cannot write"
    ), p.stderr
    assert "Read-only file system" in p.stderr and ".toxeval-" not in p.stderr


def test_an_unreachable_base_url_stops_after_the_first_request_with_exit_2(
    dataset: Path, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = tmp_path / "run.jsonl"
    p = cli(
        "predict", "--dataset", str(dataset), "--detector", "openai:fake", "--out", str(run),
        "--base-url", f"http://127.0.0.1:{port}/v1", "--max-retries", "1", "-q",
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "no answer from" in p.stderr and "check --base-url" in p.stderr
    assert len(_rows(run)) == 1 and _rows(run)[0]["error"]  # the one request, unscored


@pytest.mark.parametrize("url", ["htp://x/v1", "notaurl", "http://x:99999/v1", "http:///v1"])
def test_a_malformed_base_url_is_a_one_line_error(url: str, dataset: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--base-url"):
        predict(dataset, "openai:fake", tmp_path / "run.jsonl", base_url=url)
    assert not (tmp_path / "run.jsonl").exists()


def test_a_run_killed_while_writing_its_header_starts_cleanly(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    run.write_bytes(b'{"toxeval_run": 1, "detector": "openai:fa')  # a torn first line
    summary = predict(dataset, "openai:fake", run, base_url=fake_openai.url, **FAST)
    assert summary.repaired_bytes == 41 and summary.written == 60
    lines = run.read_bytes().split(b"\n")
    assert lines[0].startswith(b'{"toxeval_run"') and lines[-1] == b""
    assert sum(b"toxeval_run" in x for x in lines) == 1
    assert Counter(r["id"] for r in _rows(run)) == Counter(f"r{i}" for i in range(60))


def test_the_progress_bar_shows_every_row_though_rich_is_told_at_most_ten_times_a_second(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from toxeval.llm.progress import Progress, RunSummary

    monkeypatch.setenv("COLUMNS", "200")
    summary = RunSummary(path="run.jsonl", items=1000)
    with Progress(1000, 100, False, summary) as bar:
        for _ in range(900):
            summary.written += 1
            summary.ok += 1
            summary.parse_counts["ok"] = summary.parse_counts.get("ok", 0) + 1
            bar.advance(1)
    err = capsys.readouterr().err
    assert "1000/1000" in err and "parsed 100%" in err


def test_a_run_keeps_its_connections_alive_instead_of_opening_one_per_request(
    fake_openai: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run.jsonl"
    summary = predict(dataset, "openai:fake", run, base_url=fake_openai.url, concurrency=4)
    assert summary.written == 60 and summary.failed == 0
    assert len(fake_openai.log) == 60
    assert 1 <= len(fake_openai.connections) <= 4


@settings(max_examples=examples(300), deadline=None)
@given(st.text(), st.one_of(st.none(), st.text()), st.text(), st.floats(allow_nan=False))
def test_the_hash_of_an_item_from_the_shared_start_is_request_hash(
    text: str, response: str | None, model: str, temperature: float
) -> None:
    fp = {"model": model, "temperature": temperature, "nested": {"b": [1, None], "a": model}}
    hash_item = request_hasher("http://127.0.0.1:1/v1", fp)
    assert hash_item(text, response) == request_hash("http://127.0.0.1:1/v1", fp, text, response)
