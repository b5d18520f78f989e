"""Dumps and datasets with a JSON Lines row nested deeper than any reader handles:
a clear error naming the file and line (exit 2), never a crash of pyarrow's reader
or a RecursionError; rows with many brackets but shallow nesting read as usual."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import examples, write_scored_pair
from hypothesis import given, settings
from hypothesis import strategies as st
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


@settings(max_examples=examples(300), deadline=None)
@given(
    data=st.lists(st.sampled_from([b"[", b"{", b"\n", b"a", b"]"]), max_size=120).map(b"".join),
    cuts=st.lists(st.integers(0, 120), max_size=4),
    limit=st.integers(0, 8),
)
def test_openers_match_a_plain_count_of_every_line(
    data: bytes, cuts: list[int], limit: int
) -> None:
    want = any(line.count(b"[") + line.count(b"{") > limit for line in data.split(b"\n"))
    edges = sorted({0, len(data), *(min(c, len(data)) for c in cuts)})
    blocks = [data[a:b] for a, b in itertools.pairwise(edges)]
    assert json_openers_exceed(blocks, limit) is want


def test_many_long_lines_are_counted_in_one_pass() -> None:
    data = b"[[[aaaaaaa\n" * 100  # 100 lines longer than the limit, 3 openers each
    for cut in (0, 5, 555):
        blocks = [data[:cut], data[cut:]]
        assert json_openers_exceed(blocks, 3) is False
        assert json_openers_exceed(blocks, 2) is True
