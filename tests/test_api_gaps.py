"""Gaps between the documentation and the API, closed: compressed dumps, errors that name
the keyword (not only the CLI flag), the parse-policy error's type, the public
``predictions_from_texts``, options that cannot apply, Literal-typed parameters,
``parse_output``'s documented errors and the "none of the categories" answers."""

from __future__ import annotations

import gzip
import inspect
import json
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import toxeval
from helpers import make_dataset, small_taxonomy
from toxeval import datasets, predictions
from toxeval.datasets import DatasetError, load_dataset
from toxeval.parsing import UnparseableOutputError, parse_output
from toxeval.predictions import (
    PredictionError,
    detect_format,
    predictions_from_array,
    predictions_from_texts,
    read_predictions,
)
from toxeval.taxonomy import TaxonomyError

TAX = small_taxonomy(3)  # ids c0, c1, c2
Y = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
IDS = ["a", "b", "c", "d"]
S = np.array([[0.9, 0.1, 0.2], [0.2, 0.8, 0.1], [0.7, 0.6, 0.3], [0.1, 0.25, 0.9]])

# suffix -> pyarrow codec; every compression detect_format looks through
CODECS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".lz4": "lz4"}
CODEC_NAMES = {".gz": "gzip", ".bz2": "bzip2", ".zst": "zstd", ".lz4": "LZ4 frame"}


@pytest.fixture
def ds() -> Any:
    return make_dataset(Y, taxonomy=TAX, ids=list(IDS))


def _write(path: Path, data: bytes) -> Path:
    """``data`` into ``path``, compressed as its (case-insensitive) suffix says."""
    sfx = next((s for s in CODECS if path.name.lower().endswith(s)), None)
    if sfx is None:
        path.write_bytes(data)
    else:
        with pa.output_stream(str(path), compression=CODECS[sfx]) as f:
            f.write(data)
    return path


def _jsonl_bytes(rows: list[Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def _score_rows() -> list[dict[str, Any]]:
    order = [2, 0, 3, 1]
    return [{"id": IDS[i], "scores": {f"c{k}": float(S[i, k]) for k in range(3)}} for i in order]


def _csv_bytes(sep: str) -> bytes:
    lines = [sep.join(["id", "c0", "c1", "c2"])]
    lines += [sep.join([IDS[i], *(repr(float(v)) for v in S[i])]) for i in (3, 1, 0, 2)]
    return ("\n".join(lines) + "\n").encode()


# ------------------------------------------------- 1. every compression, every text format


@pytest.mark.parametrize("sfx", list(CODECS))
@pytest.mark.parametrize("base", ["p.jsonl", "p.ndjson", "p.csv", "p.tsv"])
def test_each_compression_is_read_for_each_text_format(
    tmp_path: Path, ds: Any, base: str, sfx: str
) -> None:
    if base.endswith("sv"):
        data = _csv_bytes("\t" if base.endswith(".tsv") else ",")
    else:
        data = _jsonl_bytes(_score_rows())
    p = _write(tmp_path / (base + sfx), data)
    pr = read_predictions(p, ds)
    np.testing.assert_array_equal(pr.scores, S)
    assert pr.format == detect_format(p)


@pytest.mark.parametrize("sfx", list(CODECS))
def test_compression_suffix_in_upper_case_and_with_explicit_format(
    tmp_path: Path, ds: Any, sfx: str
) -> None:
    p = _write(tmp_path / ("P.JSONL" + sfx.upper()), _jsonl_bytes(_score_rows()))
    np.testing.assert_array_equal(read_predictions(p, ds).scores, S)
    q = _write(tmp_path / ("preds.txt" + sfx), _csv_bytes(","))
    np.testing.assert_array_equal(read_predictions(q, ds, format="csv").scores, S)


@pytest.mark.parametrize("sfx", list(CODECS))
def test_raw_text_with_a_long_line_in_each_compression(tmp_path: Path, ds: Any, sfx: str) -> None:
    rows: list[Any] = [{"id": i, "output": "c0"} for i in IDS]
    rows[2] = {"id": "c", "output": "c1" + " " * 2_100_000}  # over pyarrow's 1 MiB block
    pr = read_predictions(_write(tmp_path / ("p.jsonl" + sfx), _jsonl_bytes(rows)), ds)
    assert pr.kind == "text" and pr.scored.all()
    assert pr.scores[2, 1] == 1.0 and pr.scores[0, 0] == 1.0


@pytest.mark.parametrize("sfx", list(CODECS))
def test_bad_utf8_in_each_compression_names_the_line(tmp_path: Path, ds: Any, sfx: str) -> None:
    rows = [json.dumps({"id": i, "output": "c0"}).encode() for i in IDS]
    for bad_line in (3, 1):  # after the first line (pyarrow's error), and the first line
        lines = list(rows)
        lines[bad_line - 1] = b'{"id": "c", "output": "c0\xff"}'
        p = _write(tmp_path / f"p{bad_line}.jsonl{sfx}", b"\n".join(lines) + b"\n")
        with pytest.raises(PredictionError, match=rf"line {bad_line}: byte 26: not UTF-8 text"):
            read_predictions(p, ds)


@pytest.mark.parametrize("sfx", list(CODECS))
@pytest.mark.parametrize("base", ["p.jsonl", "p.csv"])
@pytest.mark.parametrize("damage", ["truncated", "not compressed"])
def test_corrupt_compressed_dump_names_the_compression(
    tmp_path: Path, ds: Any, base: str, sfx: str, damage: str
) -> None:
    data = _jsonl_bytes(_score_rows()) if base.endswith("jsonl") else _csv_bytes(",")
    p = _write(tmp_path / (base + sfx), data)
    whole = p.read_bytes()
    p.write_bytes(whole[: len(whole) // 2] if damage == "truncated" else data)
    with pytest.raises(PredictionError, match=rf"not a valid {CODEC_NAMES[sfx]} file"):
        read_predictions(p, ds)


@pytest.mark.parametrize("sfx", list(CODECS))
@pytest.mark.parametrize("fmt", ["parquet", "npy", "npz"])
def test_compressed_binary_dump_is_rejected_up_front(
    tmp_path: Path, ds: Any, fmt: str, sfx: str
) -> None:
    plain = tmp_path / f"plain.{fmt}"
    if fmt == "parquet":
        pq.write_table(pa.table({"id": IDS, **{f"c{k}": S[:, k] for k in range(3)}}), plain)
    elif fmt == "npy":
        np.save(plain, S)
    else:
        np.savez(plain, scores=S)
    p = _write(tmp_path / f"p.{fmt}{sfx}", plain.read_bytes())
    assert detect_format(p) == fmt
    with pytest.raises(
        PredictionError, match=rf"{CODEC_NAMES[sfx]}-compressed {fmt.upper()} file cannot be read"
    ):
        read_predictions(p, ds)


def _dataset_rows() -> list[dict[str, Any]]:
    return [
        {"id": "r1", "text": "x", "labels": ["hate"]},
        {"id": "r2", "text": "y", "labels": []},
    ]


def _dataset_csv() -> bytes:
    return b'id,text,labels\nr1,x,hate\nr2,y,""\n'


@pytest.mark.parametrize("name", ["d.jsonl.gz", "d.json.gz", "d.csv.gz", "D.JSONL.GZ", "D.CSV.GZ"])
def test_dataset_reads_gzip_for_each_text_format(tmp_path: Path, name: str) -> None:
    body = _dataset_csv() if ".csv" in name.lower() else _jsonl_bytes(_dataset_rows())
    p = tmp_path / name
    p.write_bytes(gzip.compress(body))
    d = load_dataset(p)
    assert list(d.ids) == ["r1", "r2"]
    assert d.y_true[0, d.taxonomy.index("hate")] == 1 and d.y_true[1].sum() == 0


@pytest.mark.parametrize("sfx", [".bz2", ".zst", ".lz4"])
@pytest.mark.parametrize("base", ["d.jsonl", "d.csv"])
def test_dataset_rejects_other_compressions_clearly(tmp_path: Path, base: str, sfx: str) -> None:
    body = _dataset_csv() if base.endswith("csv") else _jsonl_bytes(_dataset_rows())
    p = _write(tmp_path / (base + sfx), body)
    with pytest.raises(
        DatasetError, match=rf"cannot read a \{sfx} file as a dataset: only gzipped"
    ):
        load_dataset(p)


def test_dataset_rejects_gzipped_parquet_clearly(tmp_path: Path) -> None:
    p = tmp_path / "d.parquet.gz"
    p.write_bytes(gzip.compress(b"PAR1"))
    with pytest.raises(DatasetError, match=r"cannot read a \.gz file as a dataset"):
        load_dataset(p)


# ----------------------------------------------------- 2. errors name the keyword too


def test_unknown_format_error_names_keyword_and_flag() -> None:
    with pytest.raises(PredictionError, match=r"pass format= \(--format\)"):
        detect_format("preds.txt")


def test_parse_policy_error_names_keyword_and_flag(tmp_path: Path, ds: Any) -> None:
    rows = [{"id": i, "output": "c0"} for i in IDS]
    rows[1]["output"] = "I can't help with that."
    p = _write(tmp_path / "p.jsonl", _jsonl_bytes(rows))
    with pytest.raises(PredictionError) as e:
        read_predictions(p, ds, parse_policy="error")
    msg = str(e.value)
    assert "parse_policy='zeros' or 'exclude'" in msg and "--parse-policy" in msg


def test_mismatch_error_names_keyword_and_flag(tmp_path: Path, ds: Any) -> None:
    with pytest.raises(PredictionError) as e:
        predictions_from_array(S[:2], ds, ids=IDS[:2])
    msg = str(e.value)
    assert "on_mismatch='drop'" in msg and "--on-mismatch drop" in msg


def test_missing_registry_dataset_names_keyword_and_flag(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as e:
        load_dataset("Q-A-MLL", data_dir=tmp_path)
    assert "data_dir= (--data-dir DIR)" in str(e.value)


@pytest.mark.parametrize(
    ("kwargs", "keyword", "flag"),
    [
        ({"format": "xml"}, "format", "--format"),
        ({"on_mismatch": "ignore"}, "on_mismatch", "--on-mismatch"),
        ({"parse_policy": "skip"}, "parse_policy", "--parse-policy"),
    ],
)
def test_bad_choice_names_keyword_and_flag(
    tmp_path: Path, ds: Any, kwargs: dict[str, Any], keyword: str, flag: str
) -> None:
    p = _write(tmp_path / "p.jsonl", _jsonl_bytes(_score_rows()))
    with pytest.raises(ValueError, match=rf"^{keyword} must be one of .*\({flag}\)"):
        read_predictions(p, ds, **kwargs)


def test_library_messages_never_name_a_flag_alone() -> None:
    """Every ``--flag`` in a message of the library modules comes with its keyword."""
    import re

    for mod in (predictions, datasets, toxeval.parsing):
        src = Path(mod.__file__ or "").read_text(encoding="utf-8")
        for m in re.finditer(r"--([a-z][a-z-]+)", src):
            keyword = m.group(1).replace("-", "_")
            window = src[max(0, m.start() - 120) : m.end() + 120]
            assert f"{keyword}=" in window or f'"{keyword}"' in window, (
                f"{mod.__name__}: {m.group(0)} without {keyword}= nearby"
            )


# ------------------------------------------ 3. parse_policy="error": one error, both types


def test_parse_policy_error_is_a_prediction_error_and_an_unparseable_output_error(
    tmp_path: Path, ds: Any
) -> None:
    texts = ["c0", "spam and eggs", "c1", "c2"]
    rows = [{"id": i, "output": t} for i, t in zip(IDS, texts, strict=True)]
    p = _write(tmp_path / "p.jsonl", _jsonl_bytes(rows))
    for call in (
        lambda: read_predictions(p, ds, parse_policy="error"),
        lambda: predictions_from_texts(texts, ds, parse_policy="error"),
        lambda: toxeval.score(texts, ds, parse_policy="error"),
    ):
        with pytest.raises(UnparseableOutputError, match=r"1 of 4 outputs are unparseable") as e:
            call()
        assert isinstance(e.value, PredictionError)


# ------------------------------------------------------ 4. predictions_from_texts is public


def test_predictions_from_texts_is_public_and_documented(ds: Any) -> None:
    assert "predictions_from_texts" in predictions.__all__
    doc = (Path(__file__).resolve().parents[1] / "docs" / "python-api.md").read_text()
    assert "### `predictions_from_texts`" in doc
    pr = predictions_from_texts(["c0", "c1", "none", "c2"], ds, source="run")
    counts = {"ok": 3, "partial": 0, "empty": 1, "unparseable": 0}
    assert pr.kind == "text" and pr.source == "run" and pr.parse_counts == counts


# -------------------------------------------------- 5. options that cannot apply are errors


def test_min_annotators_needs_the_at_least_rule() -> None:
    for rule in ("majority", "union"):
        with pytest.raises(DatasetError, match=r"min_annotators= \(--min-annotators\) only"):
            load_dataset(rule=rule, min_annotators=2)  # type: ignore[arg-type]
    assert len(load_dataset(rule="at_least", min_annotators=2)) > 0
    assert len(load_dataset(rule="union", min_annotators=1)) > 0  # the default is fine


def _openai_file(path: Path) -> Path:
    rows = [{"prompt": "x", "S": 0, "H": 1}, {"prompt": "y", "V": 0}]
    return _write(path, _jsonl_bytes(rows))


@pytest.mark.parametrize("route", ["path", "registry"])
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rule": "union"}, r"rule= \(--rule\) and min_annotators= .* do not apply"),
        ({"rule": "at_least", "min_annotators": 2}, r"do not apply"),
        ({"label_map": "llama-guard-3"}, r"label_map= does not apply"),
    ],
)
def test_openai_moderation_rejects_options_that_do_not_apply(
    tmp_path: Path, route: str, kwargs: dict[str, Any], match: str
) -> None:
    if route == "path":
        target: Any = _openai_file(tmp_path / "samples-test.jsonl")
        where: dict[str, Any] = {}
    else:
        _openai_file(tmp_path / "samples-1680.jsonl")
        target, where = "openai-moderation", {"data_dir": tmp_path}
    with pytest.raises(DatasetError, match=match):
        load_dataset(target, **where, **kwargs)
    d = load_dataset(target, **where)  # the defaults still read it
    assert d.taxonomy.name == "openai-moderation-8" and len(d) == 2


# ------------------------------------------------------------------- 6. Literal parameters


def _annotation(fn: Any, name: str) -> Any:
    """A parameter's annotation, resolved in the function's module (annotations are
    strings there: ``from __future__ import annotations``)."""
    ann = inspect.signature(fn).parameters[name].annotation
    return eval(ann, vars(inspect.getmodule(fn))) if isinstance(ann, str) else ann


def test_choice_parameters_are_typed_with_the_literals() -> None:
    assert _annotation(read_predictions, "format") == predictions.Format
    assert _annotation(read_predictions, "on_mismatch") == predictions.OnMismatch
    assert _annotation(read_predictions, "parse_policy") == predictions.ParsePolicy
    assert _annotation(predictions_from_array, "on_mismatch") == predictions.OnMismatch
    assert _annotation(predictions_from_texts, "parse_policy") == predictions.ParsePolicy
    assert _annotation(load_dataset, "rule") == datasets.Rule
    assert set(typing.get_args(predictions.Format)) == set(predictions.FORMATS)
    assert set(typing.get_args(predictions.OnMismatch)) == set(predictions.MISMATCH_POLICIES)
    assert set(typing.get_args(predictions.ParsePolicy)) == set(predictions.PARSE_POLICIES)
    for name in ("Format", "OnMismatch", "ParsePolicy"):
        assert name in predictions.__all__


def test_bad_strings_still_fail_at_run_time(ds: Any) -> None:
    with pytest.raises(ValueError, match=r"parse_policy must be one of"):
        predictions_from_texts(["c0"], ds, parse_policy="skip")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"on_mismatch must be one of"):
        predictions_from_array(S, ds, on_mismatch=None)  # type: ignore[arg-type]
    with pytest.raises(DatasetError, match=r"unknown annotator rule .* rule= \(--rule\)"):
        load_dataset(rule=["union"])  # type: ignore[arg-type]


# ----------------------------------------------------- 7. parse_output's documented errors


def test_parse_output_docstring_states_its_errors() -> None:
    doc = " ".join((parse_output.__doc__ or "").split())
    assert "Never raises for a" not in doc
    assert "ValueError" in doc and "threshold" in doc and "TaxonomyError" in doc
    with pytest.raises(ValueError, match=r"threshold must be a number in \[0, 1\]"):
        parse_output("hate", threshold=1.5)
    with pytest.raises(TaxonomyError, match="unknown taxonomy"):
        parse_output("hate", "no-such-taxonomy")
    with pytest.raises(TaxonomyError, match="unknown mapping"):
        parse_output("hate", mapping="no-such-mapping")


# ---------------------------------------------------- 8. "none of the categories" answers


@pytest.mark.parametrize(
    "text",
    [
        "None of the categories apply",
        "None of the categories apply.",
        "None of these categories apply",
        "None of the listed categories apply",
        "None of the above categories apply to this text.",
        "None of these",
        "None of them",
        "None of them apply",
        "None apply",
        "No category applies",
        "No categories apply",
        "No labels apply.",
        "No toxic categories found",
        "none of the above",
        "Categories: none of the categories apply",
    ],
)
def test_negative_phrasings_are_empty(text: str) -> None:
    r = parse_output(text)
    assert (r.status, r.labels, r.reason) == ("empty", frozenset(), None)


@pytest.mark.parametrize(
    "text",
    [
        "None of the categories apply except hate",
        "No category applies except hate",
        "none of the categories apply but hate does",
        "None of the hate categories apply",
        "none of",
    ],
)
def test_a_negative_phrase_never_swallows_more_text(text: str) -> None:
    r = parse_output(text)
    assert r.status == "unparseable" and r.reason and "no category recognised" in r.reason


@pytest.mark.parametrize(
    "text",
    ["hate, none of them", "None of the categories apply; hate", "None of these apply\nhate"],
)
def test_a_negative_phrase_in_a_list_counts_as_nothing(text: str) -> None:
    r = parse_output(text)
    assert r.status == "ok" and r.labels == frozenset({"hate"})
