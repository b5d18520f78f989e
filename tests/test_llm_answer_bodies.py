"""Answer bodies a model server may send that JSON allows but Python handles badly:
nesting deeper than the recursion limit (a malformed answer: retried, then a failed
request) and a lone surrogate escape (recorded escaped and scored). Each runs
``toxeval predict`` against a server on 127.0.0.1 that sends fixed bytes."""

from __future__ import annotations

import contextlib
import json
import socketserver
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import write_dataset


class _RawAnswers(socketserver.ThreadingTCPServer):
    """A server on 127.0.0.1 that answers every request with the same bytes."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.requests_seen = 0
        super().__init__(("127.0.0.1", 0), _RawHandler)


class _RawHandler(socketserver.StreamRequestHandler):
    server: _RawAnswers

    def handle(self) -> None:
        while True:
            length = 0
            while (line := self.rfile.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if not line:
                return
            self.rfile.read(length)
            self.server.requests_seen += 1
            self.wfile.write(self.server.answer)
            self.wfile.flush()


@contextlib.contextmanager
def _raw_server(body: bytes) -> Iterator[_RawAnswers]:
    head = (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    server = _RawAnswers(head.encode() + body)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _predict(tmp_path: Path, port: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    ds, run = tmp_path / "ds.jsonl", tmp_path / "run.jsonl"
    write_dataset(ds, 3)
    p = subprocess.run(
        [sys.executable, "-m", "toxeval", "predict", "--dataset", str(ds),
         "--detector", "openai:fake", "--out", str(run), "--max-retries", "1",
         "--base-url", f"http://127.0.0.1:{port}/v1", "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return p, run


def _items(run: Path) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in run.read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if "toxeval_run" not in r]


@pytest.mark.parametrize(
    "nesting", [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000]
)
def test_an_answer_nested_too_deep_is_a_malformed_answer_not_an_internal_error(
    tmp_path: Path, nesting: bytes
) -> None:
    # json.loads raises RecursionError on it: a malformed body, retried, then a failed
    # request, never an internal error (exit 1).
    with _raw_server(nesting) as server:
        p, run = _predict(tmp_path, server.server_address[1])
    assert p.returncode == 0, p.stderr
    assert "internal error" not in p.stderr
    rows = _items(run)
    assert sorted(r["id"] for r in rows) == ["r0", "r1", "r2"]
    assert all(r["scores"] is None and "not a JSON object" in r["error"] for r in rows)
    assert server.requests_seen == 6  # two attempts per row


def test_an_answer_with_a_lone_surrogate_is_recorded_and_scored(tmp_path: Path) -> None:
    # "\ud800" is valid JSON text with no UTF-8 form: the run file must write it
    # escaped (not fail with UnicodeEncodeError on every rerun) and read it back.
    content = '{"hate": 0.75} \\ud800'
    body = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
    body = body.replace(b"\\\\ud800", b"\\ud800")
    with _raw_server(body) as server:
        p, run = _predict(tmp_path, server.server_address[1])
    assert p.returncode == 0, p.stderr
    rows = _items(run)
    assert sorted(r["id"] for r in rows) == ["r0", "r1", "r2"]
    for r in rows:
        assert r["output"] == '{"hate": 0.75} \ud800'
        assert r["scores"]["hate"] == 0.75
    assert server.requests_seen == 3
