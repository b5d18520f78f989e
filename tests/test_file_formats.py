"""The shared file layer's decisions, unit by unit: format and compression from a file
name (:mod:`toxeval.file_formats`), the column-name check (:mod:`toxeval.input_columns`)
and the JSON-line decoder (:mod:`toxeval.json_lines`), with the messages every reader
now gives."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import CODECS, make_dataset, small_taxonomy, write_compressed
from toxeval.datasets import DatasetError, load_dataset
from toxeval.file_formats import (
    file_compression,
    input_format,
    is_parquet_name,
    name_format,
    sniff_compression,
)
from toxeval.input_columns import check_column_names
from toxeval.json_lines import json_line_values
from toxeval.predictions import PredictionError, read_predictions
from toxeval.shards import ShardError, discover_shards


@pytest.mark.parametrize(
    ("name", "fmt", "compression", "suffix"),
    [
        ("a.jsonl", "jsonl", None, ".jsonl"),
        ("a.NDJSON.ZST", "jsonl", ".zst", ".ndjson.zst"),
        ("a.json.bz2", "jsonl", ".bz2", ".json.bz2"),
        ("a.tsv.lz4", "csv", ".lz4", ".tsv.lz4"),
        ("a.csv.gz", "csv", ".gz", ".csv.gz"),
        ("a.Parq", "parquet", None, ".parq"),
        ("a.pq", "parquet", None, ".pq"),
        ("a.npz", "npz", None, ".npz"),
    ],
)
def test_name_format(name: str, fmt: str, compression: str | None, suffix: str) -> None:
    f = name_format(name)
    assert f is not None
    assert (f.format, f.compression, f.suffix) == (fmt, compression, suffix)
    assert f.delimiter == ("\t" if ".tsv" in name.lower() else ",")


def test_name_without_a_format() -> None:
    assert name_format("a.txt") is None
    assert name_format("a.gz") is None


def test_unknown_format_message_is_the_same_for_datasets_and_dumps(tmp_path: Path) -> None:
    for name in ("d.txt", "d.gz", "d.txt.zst"):
        p = tmp_path / name
        p.write_text("x")
        with pytest.raises(DatasetError) as de:
            load_dataset(p)
        ds = make_dataset(np.zeros((1, 3), dtype=np.int8), taxonomy=small_taxonomy(3), ids=["a"])
        with pytest.raises(PredictionError) as pe:
            read_predictions(p, ds)
        for e, what in ((de, "dataset"), (pe, "predictions")):
            msg = str(e.value)
            assert msg.startswith(f"{p}: cannot tell the {what} format from the file name")
            assert "(JSONL and CSV also compressed: .gz, .bz2, .zst, .lz4)" in msg
        assert "pass format= (--format)" in str(pe.value)  # the dump's other way to say it


@pytest.mark.parametrize("sfx", list(CODECS))
def test_compressed_parquet_message_is_the_same_for_datasets_and_dumps(
    tmp_path: Path, sfx: str
) -> None:
    p = write_compressed(tmp_path / f"x.parquet{sfx}", b"PAR1")
    ds = make_dataset(np.zeros((1, 3), dtype=np.int8), taxonomy=small_taxonomy(3), ids=["a"])
    with pytest.raises(DatasetError) as de:
        load_dataset(p)
    with pytest.raises(PredictionError) as pe:
        read_predictions(p, ds)
    assert str(de.value) == str(pe.value)
    assert "-compressed PARQUET file cannot be read; decompress it first" in str(de.value)


def test_given_format_keeps_the_compression_of_the_name() -> None:
    f = input_format("preds.txt.zst", "predictions", ValueError, given="csv")
    assert (f.format, f.compression) == ("csv", ".zst")
    with pytest.raises(ValueError, match="zstd-compressed NPY file cannot be read"):
        input_format("preds.bin.zst", "predictions", ValueError, given="npy")


def test_formats_a_kind_does_not_read_are_unknown_to_it() -> None:
    with pytest.raises(ValueError, match=r"it must end in \.jsonl, \.ndjson, \.json, \.csv"):
        input_format("d.npy", "dataset", ValueError, ("jsonl", "csv", "parquet"))


def test_parquet_names() -> None:
    assert is_parquet_name("x.PARQUET") and is_parquet_name("x.parq") and is_parquet_name("x.pq")
    assert not is_parquet_name("x.parquet.gz") and not is_parquet_name("x.csv")


@pytest.mark.parametrize("sfx", list(CODECS))
def test_magic_numbers_under_a_plain_name(tmp_path: Path, sfx: str) -> None:
    p = write_compressed(tmp_path / f"x.csv{sfx}", b"id,text\nr1,x\n")
    assert sniff_compression(p.read_bytes()[:10]) == sfx
    assert file_compression(p.rename(tmp_path / "x.csv")) == sfx


def test_text_is_not_taken_for_a_compression(tmp_path: Path) -> None:
    for head in (b"BZh,id,text\n", b'{"id": 1}\n', b"id,text\n", b"\xef\xbb\xbfid\n", b""):
        assert sniff_compression(head) is None
    assert file_compression(tmp_path / "missing.jsonl") is None


def test_column_names_plural_and_singular() -> None:
    check_column_names(["a", "b"], "t", ValueError)
    with pytest.raises(ValueError, match=r"^t: column 'a' appears more than once; every"):
        check_column_names(["a", "b", "a"], "t", ValueError)
    with pytest.raises(ValueError, match=r"^t: columns 'a', 'b' appear more than once"):
        check_column_names(["b", "a", "b", "a"], "t", ValueError)


def test_repeated_shard_column_gets_the_same_message(tmp_path: Path) -> None:
    t = pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["c", "c"])
    pq.write_table(t, tmp_path / "s.parquet")
    with pytest.raises(ShardError, match=r"s\.parquet: column 'c' appears more than once; every"):
        discover_shards(tmp_path)


def test_json_lines_blank_lines_numbers_and_messages() -> None:
    lines = ['{"a": 1}', "", " \t\r", '{"b": [1, 2]}\r']
    assert list(json_line_values(lines, "f", ValueError)) == [(1, {"a": 1}), (4, {"b": [1, 2]})]
    with pytest.raises(ValueError, match=r"^f: line 2: malformed JSON \(.* at column 8\)$"):
        list(json_line_values(['{"a": 1}', '{"a": 1'], "f", ValueError))
    # lines read from a text file keep their line end: the error is still at the end
    # of that line, not at column 1 of the next
    with pytest.raises(ValueError, match=r"^f: line 2: malformed JSON \(.* at column 8\)$"):
        list(json_line_values(['{"a": 1}\n', '{"a": 1\n'], "f", ValueError))
    with pytest.raises(ValueError, match=r"^f: line 1: key 'a' is specified twice in one object"):
        list(json_line_values(['{"a": 1, "a": 2}'], "f", ValueError))
    with pytest.raises(ValueError, match=r"^f: line 1: JSON nested too deeply to read$"):
        list(json_line_values(["[" * 100_000 + "]" * 100_000], "f", ValueError))


def test_key_given_twice_in_a_dump_names_the_line(tmp_path: Path) -> None:
    # pyarrow refused the file too, without naming the line
    p = tmp_path / "p.jsonl"
    good = {"id": "a", "scores": {"c0": 0.1, "c1": 0.2, "c2": 0.3}}
    p.write_text(json.dumps(good) + '\n{"id": "b", "id": "c", "scores": null}\n')
    ds = make_dataset(np.zeros((2, 3), dtype=np.int8), taxonomy=small_taxonomy(3), ids=["a", "b"])
    with pytest.raises(
        PredictionError, match=r"p\.jsonl: line 2: key 'id' is specified twice in one object"
    ):
        read_predictions(p, ds)
