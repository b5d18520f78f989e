"""Hostile and odd inputs found by attacking the finished tree: each test reproduces
one failure (a refused valid input, a wrong number, a traceback or a hang) and
checks the behaviour that replaced it."""

from __future__ import annotations

import contextlib
import json
import os
import socketserver
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fake_openai import write_dataset
from sklearn import metrics as skm
from toxeval import metrics as tm
from toxeval.files import json_openers_exceed
from toxeval.stats import bootstrap, bootstrap_indices
from toxeval.taxonomy import load_taxonomy


@pytest.mark.parametrize("metric", ["average_precision_score", "roc_auc_score"])
def test_one_column_y_true_takes_its_one_column_mask(metric: str) -> None:
    # y_true of shape (n, 1) is read as binary 1-D, as scikit-learn does; a mask of
    # y_true's own shape was refused ("mask has shape (6, 1) but y_true has shape (6,)").
    y = np.array([[1], [0], [1], [0], [1], [0]])
    s = np.array([[0.9], [0.1], [0.4], [0.5], [0.3], [0.8]])
    known = np.array([True, True, False, True, True, True])
    got = getattr(tm, metric)(y, s, mask=known.reshape(-1, 1))
    want = getattr(skm, metric)(y[known, 0], s[known, 0])
    assert got == pytest.approx(want, rel=1e-12, abs=0)


def test_bootstrap_of_one_column_with_its_mask_is_the_metric_per_resample() -> None:
    rng = np.random.default_rng(5)
    y = (rng.random((40, 1)) < 0.4).astype(np.int64)
    s = rng.random((40, 1)).astype(np.float32)
    known = rng.random((40, 1)) < 0.8
    res = bootstrap("average_precision_score", y, s, mask=known, n_resamples=15, seed=4)
    idx = bootstrap_indices(40, 15, seed=4)
    want = []
    for i in idx:
        k = known[i, 0]
        if y[i][k, 0].any():
            want.append(skm.average_precision_score(y[i][k, 0], s[i][k, 0]))
    np.testing.assert_allclose(res.bootstrap_distribution, want, rtol=1e-12, atol=0)


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
    # json.loads raised RecursionError, which stopped the run as an internal error
    # (exit 1); it is a malformed body: retried, then the row is a failed request.
    with _raw_server(nesting) as server:
        p, run = _predict(tmp_path, server.server_address[1])
    assert p.returncode == 0, p.stderr
    assert "internal error" not in p.stderr
    rows = _items(run)
    assert sorted(r["id"] for r in rows) == ["r0", "r1", "r2"]
    assert all(r["scores"] is None and "not a JSON object" in r["error"] for r in rows)
    assert server.requests_seen == 6  # two attempts per row


def test_an_answer_with_a_lone_surrogate_is_recorded_and_scored(tmp_path: Path) -> None:
    # "\ud800" is valid JSON text with no UTF-8 form: writing the run file raised
    # UnicodeEncodeError and stopped the run on every rerun (exit 2, "'utf-8' codec
    # can't encode character"). It is written escaped and reads back unchanged.
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


_CATEGORIES = load_taxonomy("toxeval-15").ids
_DEEP = "[" * 100_000 + "]" * 100_000


def _score_cli(dump: Path, dataset: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toxeval", "score", str(dump), "--dataset", str(dataset), "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def _write_lines(path: Path, rows: list[dict[str, Any]], extra: dict[int, str]) -> None:
    """JSON Lines; ``extra[i]`` is spliced into row i as a last field ``"pad"``."""
    lines = [json.dumps(r) for r in rows]
    for i, pad in extra.items():
        lines[i] = lines[i][:-1] + f', "pad": {pad}}}'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _files(
    tmp_path: Path, dump_pad: dict[int, str], dataset_pad: dict[int, str]
) -> tuple[Path, Path]:
    rng = np.random.default_rng(3)
    ds = [{"id": i, "text": "t", "labels": [_CATEGORIES[i % 3]]} for i in range(6)]
    dump = [
        {"id": i, "scores": dict(zip(_CATEGORIES, rng.random(15).tolist(), strict=True))}
        for i in range(6)
    ]
    _write_lines(tmp_path / "ds.jsonl", ds, dataset_pad)
    _write_lines(tmp_path / "dump.jsonl", dump, dump_pad)
    return tmp_path / "dump.jsonl", tmp_path / "ds.jsonl"


@pytest.mark.parametrize("where", ["dump", "dataset"])
@pytest.mark.parametrize("line", [0, 3])
def test_a_line_nested_too_deep_is_a_clear_error_not_a_crash(
    tmp_path: Path, where: str, line: int
) -> None:
    # pyarrow's JSON reader crashed the process (SIGSEGV, exit -11) on a line nested
    # 100,000 deep past the first line; Python's json raised RecursionError (an
    # internal error) on the first.
    pad = {line: _DEEP}
    dump, ds = _files(tmp_path, pad if where == "dump" else {}, pad if where == "dataset" else {})
    p = _score_cli(dump, ds)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines() == [
        f"toxeval: error: {dump if where == 'dump' else ds}: line {line + 1}: "
        "JSON nested too deeply to read"
    ]


def test_a_line_with_many_brackets_but_shallow_is_read_as_before(tmp_path: Path) -> None:
    # More openers than pyarrow is given, but nested two deep: read by json, then
    # scored as the same files without the companion field.
    shallow = json.dumps([[i] for i in range(3000)])
    dump, ds = _files(tmp_path, {2: shallow}, {4: shallow})
    got = _score_cli(dump, ds)
    plain = tmp_path / "plain"
    plain.mkdir()
    want = _score_cli(*_files(plain, {}, {}))
    assert got.returncode == 0 and want.returncode == 0, got.stderr + want.stderr
    assert got.stdout.split("(")[0] == want.stdout.split("(")[0]
    assert "mAP" in got.stdout


def test_openers_are_counted_per_line_across_blocks() -> None:
    line = b'{"a": ' + b"[" * 9 + b"]" * 9 + b"}\n"
    data = line * 3
    for cut in range(len(data) + 1):
        blocks = [data[:cut], data[cut:]]
        assert json_openers_exceed(blocks, 10) is False
        assert json_openers_exceed(blocks, 9) is True
    assert json_openers_exceed([b"[[", b"[\n[", b"["], 2) is True
    assert json_openers_exceed([b"[[", b"\n[", b"[\n"], 2) is False


def test_compare_html_into_a_named_pipe_writes_through_it(tmp_path: Path) -> None:
    # The page was written beside the target and renamed over it: --html /dev/null (run
    # as root) or a named pipe was replaced by a regular file holding the page.
    folders = []
    for name in ("a", "b"):
        sub = tmp_path / name
        sub.mkdir()
        dump, ds = _files(sub, {}, {})
        p = subprocess.run(
            [sys.executable, "-m", "toxeval", "score", str(dump), "--dataset", str(ds),
             "--out", str(sub / "res"), "-q"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
        folders.append(f"{name.upper()}={sub / 'res'}")
    pipe = tmp_path / "page.fifo"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    p = subprocess.run(
        [sys.executable, "-m", "toxeval", "compare", *folders, "--bootstrap", "20",
         "--html", str(pipe)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    reader.join(30)
    assert stat.S_ISFIFO(pipe.lstat().st_mode)
    assert received and b"<h1>toxeval compare</h1>" in received[0]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a", "b", "page.fifo"]
