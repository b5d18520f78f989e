"""Dumps and datasets with a JSON Lines row nested deeper than any reader handles:
a clear error naming the file and line (exit 2), never a crash of pyarrow's reader
or a RecursionError; rows with many brackets but shallow nesting read as usual."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write_scored_pair
from toxeval.files import json_openers_exceed

_DEEP = "[" * 100_000 + "]" * 100_000


def _score_cli(dump: Path, dataset: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toxeval", "score", str(dump), "--dataset", str(dataset), "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("where", ["dump", "dataset"])
@pytest.mark.parametrize("line", [0, 3])
def test_a_line_nested_too_deep_is_a_clear_error_not_a_crash(
    tmp_path: Path, where: str, line: int
) -> None:
    # Past the first line pyarrow's JSON reader would crash the process (SIGSEGV) on
    # this line; on the first, Python's json would raise RecursionError.
    pad = {line: _DEEP}
    dump, ds = write_scored_pair(
        tmp_path, pad if where == "dump" else {}, pad if where == "dataset" else {}
    )
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
    dump, ds = write_scored_pair(tmp_path, {2: shallow}, {4: shallow})
    got = _score_cli(dump, ds)
    plain = tmp_path / "plain"
    plain.mkdir()
    want = _score_cli(*write_scored_pair(plain, {}, {}))
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
