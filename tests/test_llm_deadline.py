"""The request deadline: one attempt (connect, send, the whole answer) may take at most
``request_deadline`` seconds, so a server that trickles its answer a byte at a time,
which no read timeout cuts off, is timed out like a silent one: retried, then a failed
row, asked again by the next run. Against the fake server on 127.0.0.1
(tests/fake_openai.py, fault ``trickle``).

Every run here is guarded (``asyncio.wait_for``, a subprocess timeout) so that a client
without a working deadline fails the test instead of hanging it."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, write_dataset
from toxeval.cli import main as cli_main
from toxeval.cli.parser import build_parser
from toxeval.llm import predict
from toxeval.llm.client import DEFAULT_REQUEST_DEADLINE, Client, RequestFailed, RetryPolicy
from toxeval.llm.connections import TIMEOUTS, Connections, DeadlineExceeded

BODY = {"model": "m", "messages": [{"role": "user", "content": "judge item-00007"}]}
ONE_RETRY = RetryPolicy(max_retries=1, base_delay=0.001, max_delay=0.001)
GUARD_S = 20.0  # far past every deadline here, far below the trickle's ~40 s answer


def _trickling(server: FakeOpenAI, times: int, *, step: int = 1, every: float = 0.05) -> None:
    """The next ``times`` requests for item 7 are answered ``step`` bytes every
    ``every`` seconds (the whole answer, ~800 bytes, takes ~40 s one byte at a time)."""
    server.trickle_bytes, server.trickle_s = step, every
    server.faults["item-00007"] = ["trickle"] * times


def _posts(url: str, n: int, **kw: Any) -> tuple[list[Any], float]:
    """``n`` posts in a row on one client; (replies or the exception, seconds taken)."""

    async def go() -> list[Any]:
        out: list[Any] = []
        async with Client(url, concurrency=1, **kw) as c:
            for _ in range(n):
                try:
                    out.append(await c.post("/chat/completions", BODY))
                except RequestFailed as e:
                    out.append(e)
        return out

    t0 = time.monotonic()
    replies = asyncio.run(asyncio.wait_for(go(), GUARD_S))
    return replies, time.monotonic() - t0


def test_a_trickled_answer_is_cut_at_the_deadline_retried_then_failed(
    fake_openai: FakeOpenAI,
) -> None:
    url = fake_openai.url
    _trickling(fake_openai, 2)
    (failed,), took = _posts(url, 1, read_timeout=0.5, request_deadline=0.6, retry=ONE_RETRY)
    assert isinstance(failed, RequestFailed), failed
    assert "timed out (no complete answer within the request deadline of 0.6 s)" in str(failed)
    assert failed.attempts == 2 and failed.status_code is None
    assert fake_openai.requested("item-00007") == 2
    assert 2 * 0.6 <= took < 2 * 0.6 + 3.0  # two attempts, each cut at its deadline


def test_the_slot_of_a_cut_attempt_serves_the_next_request(fake_openai: FakeOpenAI) -> None:
    _trickling(fake_openai, 1)
    replies, _ = _posts(fake_openai.url, 3, read_timeout=0.5, request_deadline=0.5)
    assert [r.attempts for r in replies] == [2, 1, 1]  # the cut one retried on a new one
    assert all(r.body["choices"] for r in replies)


def test_a_slow_answer_inside_the_deadline_is_not_cut(fake_openai: FakeOpenAI) -> None:
    _trickling(fake_openai, 1, step=100, every=0.1)  # ~9 pieces, ~0.9 s in all
    (reply,), took = _posts(fake_openai.url, 1, read_timeout=0.5, request_deadline=4.0)
    assert reply.attempts == 1 and reply.body["choices"]
    assert took > 0.5  # it was slower than the read timeout, and whole


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toxeval.cli", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
    )


def test_a_run_records_the_cut_request_as_failed_and_a_rerun_asks_it_again(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    ds, run = tmp_path / "ds.jsonl", tmp_path / "run.jsonl"
    write_dataset(ds, 8)
    _trickling(fake_openai, 2)
    base = ["predict", "--dataset", str(ds), "--detector", "openai:fake", "-q"]
    base += ["--base-url", fake_openai.url, "--out", str(run)]
    first = _cli(*base, "--timeout", "5,2", "--request-deadline", "0.5", "--max-retries", "1")
    assert first.returncode == 0, first.stderr
    assert "8 rows written" in first.stdout and "1 failed" in first.stdout
    rows = [json.loads(x) for x in run.read_text().splitlines()[1:]]
    (bad,) = [r for r in rows if r["error"]]
    assert bad["id"] == "r7" and bad["scores"] is None and bad["attempts"] == 2
    assert "request deadline of 0.5 s" in bad["error"]
    # the deadline is not part of what is asked: the 7 answers stand, r7 is asked again
    again = _cli(*base, "--request-deadline", "30")
    assert again.returncode == 0, again.stderr
    assert "1 rows written" in again.stdout and "(7 already done)" in again.stdout
    assert "0 failed" in again.stdout


@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_a_bad_request_deadline_is_a_one_line_error_with_exit_2(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 2)
    args = ["predict", "--dataset", str(ds), "--detector", "openai:fake"]
    args += ["--out", str(tmp_path / "run.jsonl"), "--request-deadline", value]
    assert cli_main(args) == 2
    err = capsys.readouterr().err
    assert "request-deadline" in err and "Traceback" not in err
    assert not (tmp_path / "run.jsonl").exists()


def test_the_python_api_checks_the_deadline_and_local_detectors_refuse_it(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match=r"request_deadline must be a number > 0"):
        predict(None, "openai:fake", tmp_path / "run.jsonl", request_deadline=0)
    with pytest.raises(ValueError, match="--request-deadline apply to model servers"):
        predict(None, "lexicon", tmp_path / "run.jsonl", request_deadline=5.0)
    default = inspect.signature(predict).parameters["request_deadline"].default
    cli = (
        build_parser().parse_args(["predict", "--dataset", "d", "--detector", "x"]).request_deadline
    )
    assert default == cli == DEFAULT_REQUEST_DEADLINE  # the API's, the CLI's, the client's


def test_a_silent_tls_handshake_is_cut_at_the_deadline_not_the_connect_timeout() -> None:
    # connecting and the TLS handshake are bounded by the connect timeout each, and by
    # the deadline together: a server that accepts and never answers the handshake
    # costs the deadline (1 s), not the connect timeout (10 s)
    async def go() -> float:
        held: list[asyncio.StreamWriter] = []  # kept open, silent: no TLS handshake

        async def hold(_: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            held.append(w)  # Python 3.13 closes a connection whose writer is dropped

        silent = await asyncio.start_server(hold, "127.0.0.1", 0)
        port = silent.sockets[0].getsockname()[1]
        conns = Connections(
            f"https://127.0.0.1:{port}/v1", {}, slots=1, connect_timeout=10.0,
            read_timeout=10.0, deadline=1.0,
        )  # fmt: skip
        t0 = time.monotonic()
        with pytest.raises(DeadlineExceeded, match="request deadline of 1 s"):
            await conns.send("/chat/completions", b"{}")
        taken = time.monotonic() - t0
        await conns.aclose()
        for w in held:
            w.close()
        silent.close()
        return taken

    taken = asyncio.run(asyncio.wait_for(go(), GUARD_S))
    assert 0.9 < taken < 1.6, taken


def test_a_silent_tls_handshake_is_cut_at_the_connect_timeout_inside_the_deadline() -> None:
    async def go() -> None:
        held: list[asyncio.StreamWriter] = []

        async def hold(_: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            held.append(w)

        silent = await asyncio.start_server(hold, "127.0.0.1", 0)
        port = silent.sockets[0].getsockname()[1]
        conns = Connections(
            f"https://127.0.0.1:{port}/v1", {}, slots=1, connect_timeout=0.3,
            read_timeout=10.0, deadline=10.0,
        )  # fmt: skip
        t0 = time.monotonic()
        with pytest.raises(TIMEOUTS) as e:
            await conns.send("/chat/completions", b"{}")
        assert not isinstance(e.value, DeadlineExceeded) and time.monotonic() - t0 < 2.0
        await conns.aclose()
        for w in held:
            w.close()
        silent.close()

    asyncio.run(asyncio.wait_for(go(), GUARD_S))
