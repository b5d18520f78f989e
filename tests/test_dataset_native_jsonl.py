"""The native JSONL dataset reader against the pyarrow / line-by-line readers: for every
file, the same rows or the same error with either reader (``TOXEVAL_DATASET_READER``);
the native reader serves the common form and declines the rest."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toxeval.datasets import DatasetError
from toxeval.datasets.labels import LabelReader, RawRows, dataset_taxonomy
from toxeval.datasets.native_jsonl import READER_ENV, read_native_dataset
from toxeval.datasets.readers import read_dataset_file

LABELS = LabelReader(dataset_taxonomy(None), None)


def _read(path: Path, reader: str) -> tuple[RawRows, str] | str:
    import os

    old = os.environ.get(READER_ENV)
    os.environ[READER_ENV] = reader
    try:
        return read_dataset_file(path, LABELS)
    except DatasetError as e:
        return f"DatasetError: {e}"
    finally:
        if old is None:
            del os.environ[READER_ENV]
        else:
            os.environ[READER_ENV] = old


def _same(a: tuple[RawRows, str] | str, b: tuple[RawRows, str] | str) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    (ra, sha_a), (rb, sha_b) = a, b
    assert sha_a == sha_b
    assert list(ra.ids) == list(rb.ids)
    assert list(ra.texts) == list(rb.texts)
    assert ra.responses == rb.responses
    assert np.array_equal(ra.y, rb.y) and ra.y.dtype == rb.y.dtype
    assert np.array_equal(ra.mask, rb.mask)
    assert np.array_equal(ra.has_labels, rb.has_labels)
    assert ra.counts is None and rb.counts is None
    assert ra.ignored == rb.ignored


def _check(path: Path) -> tuple[RawRows, str] | str:
    native = _read(path, "auto")
    _same(native, _read(path, "pyarrow"))
    return native


COVERED = {
    "string ids": (
        '{"id": "a", "text": "x", "labels": ["hate", "violence"]}\n'
        '{"labels": [], "text": "y y", "id": "b"}\n'
        '{"id":"c","text":"","labels":["hate"]}'
    ),
    "integer ids": '{"id": 7, "text": "x", "labels": ["hate"]}\n{"id": -3, "text": "y", "labels": []}\n',
    "escapes and unicode": (
        '{"id": "\\u00e9\\"q", "text": "a\\nb\\t\\u00e9\\ud83d\\ude00 漢", "labels": ["h\\u0061te"]}\r\n'
        '{"id": "漢", "text": "\\\\ \\/", "labels": []}\r\n'
    ),
    "names and aliases": '{"id": "a", "text": "x", "labels": ["Hate", "hate"]}\n',
    "no labels anywhere": '{"id": "a", "text": "x", "labels": []}\n{"id": "b", "text": "y", "labels": []}\n',
}


@pytest.mark.parametrize("name", COVERED)
def test_covered_forms_are_read_natively_and_equal(tmp_path: Path, name: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(COVERED[name], encoding="utf-8")
    assert read_native_dataset(path.read_bytes()) is not None
    got = _check(path)
    assert not isinstance(got, str), got


ERRORS_OR_DECLINED = {
    "unknown category": '{"id": "a", "text": "x", "labels": ["nope"]}\n',
    "duplicate ids": '{"id": "a", "text": "x", "labels": []}\n{"id": "a", "text": "y", "labels": []}\n',
    "string and integer id": '{"id": "1", "text": "x", "labels": []}\n{"id": 1, "text": "y", "labels": []}\n',
    "extra field": '{"id": "a", "text": "x", "labels": [], "lang": "en"}\n',
    "object labels": '{"id": "a", "text": "x", "labels": {"hate": 1, "violence": null}}\n',
    "vector labels": '{"id": "a", "text": "x", "labels": [1, 0, -1]}\n',
    "blank line": '{"id": "a", "text": "x", "labels": []}\n\n{"id": "b", "text": "y", "labels": []}\n',
    "missing text": '{"id": "a", "labels": []}\n',
    "lone surrogate": '{"id": "a", "text": "\\ud800", "labels": []}\n',
    "bad JSON": '{"id": "a", "text": "x", "labels": ["hate",]}\n',
    "byte-order mark": '\ufeff{"id": "a", "text": "x", "labels": []}\n',
    "timestamp-like ids": '{"id": "2020-01-01", "text": "2020-01-02", "labels": ["hate"]}\n',
    "float id": '{"id": 1.5, "text": "x", "labels": []}\n',
}


@pytest.mark.parametrize("name", ERRORS_OR_DECLINED)
def test_both_readers_give_the_same_rows_or_error(tmp_path: Path, name: str) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(ERRORS_OR_DECLINED[name], encoding="utf-8")
    _check(path)


def test_many_blocks_and_a_late_bad_line(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    cats = list(LABELS.tax.ids)
    lines = [
        json.dumps(
            {"id": f"r{i}", "text": f"t{i} é", "labels": list(rng.choice(cats, rng.integers(0, 3)))}
        )
        for i in range(40_000)
    ]
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert read_native_dataset(path.read_bytes()) is not None
    got = _check(path)
    assert not isinstance(got, str) and len(got[0].ids) == 40_000
    lines[35_000] = '{"id": "r35000", "text": "x", "labels": ["not a category"]}'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert isinstance(_check(path), str)


# --- property test: generated datasets, well formed and not ---------------------------

_text = st.one_of(
    st.text(max_size=6).map(lambda s: json.dumps(s, ensure_ascii=False)),
    st.text(max_size=6).map(json.dumps),
    st.sampled_from(['"\\ud800"', '"\\udc00x"', '"a\tb"', '"\\x"', "null", "1", '"2020-01-01"']),
)
_id = st.one_of(
    st.text(alphabet='ab\u00e9"\\', max_size=3).map(json.dumps),
    st.integers(-(2**64), 2**64).map(str),
    st.sampled_from(["null", "1.5", "true", "-0", "01", '"1"']),
)
_label = st.sampled_from(
    ['"hate"', '"violence"', '"Hate"', '"h\\u0061te"', '"nope"', "1", "0", "null", '""']
)
_labels = st.one_of(
    st.lists(_label, max_size=3).map(lambda v: "[" + ", ".join(v) + "]"),
    st.sampled_from(['{"hate": 1}', "null", '"hate"', "[]"]),
)


@st.composite
def _line(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(["", "  ", "[1]", "{", "not json", '{"id": "q"} x']))
    parts = [f'"id": {draw(_id)}', f'"text": {draw(_text)}', f'"labels": {draw(_labels)}']
    if kind == 1:
        parts.reverse()
    if kind == 2:
        parts.append(f'"{draw(st.sampled_from(["lang", "id", "text", "hate"]))}": "x"')
    if kind == 3:
        parts = parts[: draw(st.integers(1, 2))]
    return "{" + ", ".join(parts) + "}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(_line(), min_size=1, max_size=6),
    newline=st.sampled_from(["\n", "\r\n"]),
    end=st.sampled_from(["", "\n"]),
)
def test_property_both_readers_agree(lines: list[str], newline: str, end: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "d.jsonl"
        path.write_bytes((newline.join(lines) + end).encode("utf-8", "surrogatepass"))
        _check(path)


@st.composite
def _covered_dataset(draw: st.DrawFn) -> str:
    """A file of the form the native reader covers (unique ids of one kind), most of the
    time; the labels may name an unknown category, ids may repeat."""
    n = draw(st.integers(1, 8))
    if draw(st.booleans()):
        ids = [json.dumps(s, ensure_ascii=draw(st.booleans())) for s in draw(
            st.lists(st.text(max_size=4), min_size=n, max_size=n)
        )]  # fmt: skip
    else:
        ids = [
            str(v) for v in draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=n, max_size=n))
        ]
    lines = []
    for rid in ids:
        text = json.dumps(draw(st.text(max_size=8)), ensure_ascii=draw(st.booleans()))
        labels = (
            "["
            + ", ".join(draw(st.lists(_label.filter(lambda s: s.startswith('"')), max_size=3)))
            + "]"
        )
        parts = [f'"id": {rid}', f'"text": {text}', f'"labels": {labels}']
        order = draw(st.permutations(parts))
        lines.append("{" + draw(st.sampled_from([", ", ","])).join(order) + "}")
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_covered_dataset())
def test_property_covered_files_agree(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "d.jsonl"
        path.write_text(text, encoding="utf-8")
        _check(path)
