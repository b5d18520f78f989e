"""The file layer's stream of record batches (:mod:`toxeval.record_batches`): bounded
batch sizes, and errors in a later block that name the line in the file, with the
messages of the whole-file readers. (That a stream's concatenation equals the whole-file
read, for every format and compression, is in test_input_paths.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import write_compressed
from toxeval.predictions import PredictionError
from toxeval.predictions.readers import read_pyarrow_jsonl_table
from toxeval.record_batches import iter_record_batches, json_bytes_batches, read_batches_table


def _lines(n: int) -> list[str]:
    return [json.dumps({"id": f"r{i}", "scores": {"hate": i / n}}) for i in range(n)]


def _stream(path: Path, **kw: int) -> list[pa.RecordBatch]:
    return list(iter_record_batches(path, PredictionError, what="predictions", **kw))


def _error(path: Path, **kw: int) -> str:
    with pytest.raises(PredictionError) as e:
        _stream(path, **kw)
    return str(e.value)


@pytest.mark.parametrize("name", ["p.jsonl", "p.jsonl.gz", "p.jsonl.zst"])
def test_malformed_line_of_a_later_block_names_its_line(tmp_path: Path, name: str) -> None:
    lines = _lines(60)
    lines[46] = '{"id": "r46", "scores": {"hate": 0.5}'  # line 47: no closing brace
    path = write_compressed(tmp_path / name, ("\n".join(lines) + "\n").encode())
    msg = _error(path, block_bytes=200)
    assert msg.startswith(f"{path}: line 47: malformed JSON")
    # the whole-file reader says the same
    with pytest.raises(PredictionError) as whole:
        read_pyarrow_jsonl_table(path)
    assert str(whole.value) == msg


def test_line_numbers_count_blank_lines_and_a_byte_order_mark(tmp_path: Path) -> None:
    lines = _lines(30)
    lines[3:3] = ["", "  "]
    lines[25] = "[1, 2]"  # line 26: not an object
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode())
    assert _error(path, block_bytes=100) == f"{path}: line 26: expected a JSON object, got list"


def test_text_not_utf8_in_a_later_block_names_line_and_byte(tmp_path: Path) -> None:
    body = ("\n".join(_lines(40)) + "\n").encode().split(b"\n")
    body[33] = b'{"id": "r\xff", "scores": null}'  # line 34, byte 10
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\n".join(body))
    msg = _error(path, block_bytes=128)
    assert msg.startswith(f"{path}: line 34: byte 10: not UTF-8 text")


def test_a_line_nested_too_deeply_is_named_not_a_crash(tmp_path: Path) -> None:
    lines = _lines(20)
    lines[14] = '{"id": "x", "scores": ' + "[" * 30_000 + "]" * 30_000 + "}"
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert _error(path, block_bytes=256) == f"{path}: line 15: JSON nested too deeply to read"


def test_a_line_longer_than_a_block_is_read_whole(tmp_path: Path) -> None:
    lines = _lines(10)
    lines[4] = json.dumps({"id": "long", "scores": {"hate": 0.5}, "text": "x" * 5000})
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines))  # no newline at the end either
    got = read_batches_table(_stream(path, block_bytes=64, batch_rows=3))
    assert got.column("id").to_pylist() == ["r0", "r1", "r2", "r3", "long", *_ids(5, 10)]
    assert got.column("text").to_pylist()[4] == "x" * 5000


def _ids(a: int, b: int) -> list[str]:
    return [f"r{i}" for i in range(a, b)]


def test_batches_are_bounded_for_every_format(tmp_path: Path) -> None:
    table = pa.table({"id": _ids(0, 1000), "hate": [i / 1000 for i in range(1000)]})
    pq.write_table(table, tmp_path / "p.parquet", row_group_size=600)
    lines = "".join(json.dumps(r) + "\n" for r in table.to_pylist())
    write_compressed(tmp_path / "p.jsonl.gz", lines.encode())
    csv = "id,hate\n" + "".join(f"{r['id']},{r['hate']}\n" for r in table.to_pylist())
    write_compressed(tmp_path / "p.csv.bz2", csv.encode())
    for name in ("p.parquet", "p.jsonl.gz", "p.csv.bz2"):
        batches = _stream(tmp_path / name, batch_rows=64, block_bytes=4096)
        assert max(b.num_rows for b in batches) <= 64, name
        assert sum(b.num_rows for b in batches) == 1000, name
        assert read_batches_table(batches).to_pylist() == table.to_pylist(), name


def test_csv_column_typed_by_the_first_block_is_an_error_not_a_wrong_value(
    tmp_path: Path,
) -> None:
    rows = "".join(f"r{i},{i % 2}\n" for i in range(500)) + "r500,0.5\n"
    path = tmp_path / "p.csv"
    path.write_text("id,hate\n" + rows)
    msg = _error(path, block_bytes=256)
    assert msg.startswith(f"{path}: cannot read as CSV: ")
    assert "0.5" in msg


def test_corrupt_compressed_file_and_empty_files(tmp_path: Path) -> None:
    bad = tmp_path / "p.jsonl.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    assert _error(bad).startswith(f"{bad}: not a valid gzip file")
    empty = tmp_path / "p.csv"
    empty.write_bytes(b"")
    assert _error(empty) == f"{empty}: the file is empty"
    blank = tmp_path / "p.jsonl"
    blank.write_text("\n \n\n")
    assert _stream(blank) == []


def test_unknown_format_and_a_directory_get_the_file_layer_messages(tmp_path: Path) -> None:
    odd = tmp_path / "p.txt"
    odd.write_text("x")
    assert "cannot tell the predictions format from the file name" in _error(odd)
    assert _error(tmp_path) == f"predictions file {tmp_path} is a directory, not a file"


def test_bytes_in_memory_stream_like_the_file(tmp_path: Path) -> None:
    # a dataset read whole for its hash streams its bytes: the same blocks and batches
    lines = _lines(50)
    lines[7] = json.dumps({"id": "long", "scores": {"hate": 0.25}, "text": "y" * 3000})
    body = b"\xef\xbb\xbf" + "\n".join(lines).encode()  # a BOM, no final newline
    path = tmp_path / "p.jsonl"
    path.write_bytes(body)
    for block in (64, 1000, 1 << 20):
        got = list(json_bytes_batches(body, path, PredictionError, batch_rows=4, block_bytes=block))
        assert max(b.num_rows for b in got) <= 4
        want = _stream(path, batch_rows=4, block_bytes=block)
        assert read_batches_table(got).to_pylist() == read_batches_table(want).to_pylist()
    bad = body.replace(b'"r33"', b'"r33" "x"')
    with pytest.raises(PredictionError, match=r"p\.jsonl: line 34: malformed JSON"):
        list(json_bytes_batches(bad, path, PredictionError, block_bytes=128))
