"""The native JSONL reader against pyarrow's: for every file it reads, the same table
pyarrow gives; for every file it declines, pyarrow serves (and names any error)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from helpers import either_reader, examples, same_read
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toxeval.predictions import PredictionError, read_predictions
from toxeval.predictions.native_jsonl import READER_ENV, read_native_jsonl
from toxeval.predictions.readers import read_jsonl_table, read_pyarrow_jsonl_table


def _both(path: Path) -> tuple[pa.Table | None, pa.Table | Exception]:
    native = read_native_jsonl(path)
    try:
        general: pa.Table | Exception = read_pyarrow_jsonl_table(path)
    except PredictionError as e:
        general = e
    return native, general


COVERED = {
    "objects": '{"id": "a", "scores": {"x": 0.5, "y": 1}}\n{"id": "b", "scores": {"y": 0.25, "x": 1e-7}}\n',
    "objects, nulls, missing fields, blank lines, CRLF": (
        '{"id": "a", "scores": null}\r\n\r\n  \n{"id": "b", "scores": {"x": null, "y": -0.0}}\n'
        '{"scores": {"x": 0.1}, "id": "c"}\n{"id": "d"}'
    ),
    "scores first": '{"scores": {"x": 0.5}, "id": "a"}\n{"id": "b", "scores": {"x": 1}}\n',
    "vectors": '{"id": 1, "scores": [0.5, 1, 0]}\n{"id": -2, "scores": null}\n{"id": 3, "scores": [0.1]}\n',
    "unicode ids": '{"id": "é漢🙂", "scores": [0.5]}\n{"id": "", "scores": [1]}\n',
    "awkward numbers": '{"id": "a", "scores": [0.30000000000000004, 1.7976931348623157e308, 5e-324, 123456789012345, 2.5E+3, -0]}\n',
}


@pytest.mark.parametrize("name", COVERED)
def test_covered_forms_read_natively_equal_pyarrow(tmp_path: Path, name: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(COVERED[name], encoding="utf-8")
    native, general = _both(path)
    assert native is not None, "the native reader declined a form it covers"
    assert isinstance(general, pa.Table)
    assert native.equals(general), (native.to_pylist(), general.to_pylist())
    assert native.schema == general.schema


DECLINED = {
    "escape": '{"id": "a\\"b", "scores": [1]}\n',
    "other field": '{"id": "a", "scores": [1], "error": null}\n',
    "labels": '{"id": "a", "labels": ["x"]}\n',
    "mixed forms": '{"id": "a", "scores": [1]}\n{"id": "b", "scores": {"x": 1}}\n',
    "id kinds": '{"id": "a", "scores": [1]}\n{"id": 2, "scores": [1]}\n',
    "bad JSON": '{"id": "a", "scores": [1]}\n{"id": "b", "scores": [1,]}\n',
    "string score": '{"id": "a", "scores": {"x": "0.5"}}\n',
    "bool score": '{"id": "a", "scores": {"x": true}}\n',
    "huge": '{"id": "a", "scores": [1e400]}\n',
    "empty": "\n\n",
}


@pytest.mark.parametrize("name", DECLINED)
def test_other_files_are_declined_and_read_by_pyarrow(tmp_path: Path, name: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(DECLINED[name], encoding="utf-8")
    assert read_native_jsonl(path) is None
    # the one reader function serves it through pyarrow, errors and all
    try:
        expected: object = read_pyarrow_jsonl_table(path)
    except PredictionError as e:
        expected = str(e)
    try:
        got: object = read_jsonl_table(path)
    except PredictionError as e:
        got = str(e)
    assert type(got) is type(expected)
    if isinstance(got, pa.Table):
        assert isinstance(expected, pa.Table) and got.equals(expected)
    else:
        assert got == expected


def test_a_bad_line_past_the_first_block_is_declined(tmp_path: Path) -> None:
    lines = [json.dumps({"id": f"r{i}", "scores": {"x": i / 7}}) for i in range(60_000)]
    lines[55_000] = '{"id": "r55000", "scores": {"x": true}}'
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert read_native_jsonl(path) is None
    with pytest.raises(PredictionError, match="line 55001"):
        read_jsonl_table(path)


def test_read_predictions_is_the_same_with_either_reader(
    tmp_path: Path, small_dataset: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = small_dataset
    cats = list(ds.taxonomy.ids)  # type: ignore[attr-defined]
    rng = np.random.default_rng(3)
    rows = []
    for i, rid in enumerate(ds.ids):  # type: ignore[attr-defined]
        scores = None if i == 1 else {c: float(rng.random()) for c in cats}
        rows.append(json.dumps({"id": rid, "scores": scores}))
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(reversed(rows)) + "\n", encoding="utf-8")
    assert read_native_jsonl(path) is not None
    native = read_predictions(path, ds)  # type: ignore[arg-type]
    monkeypatch.setenv(READER_ENV, "pyarrow")
    general = read_predictions(path, ds)  # type: ignore[arg-type]
    assert np.array_equal(native.scores, general.scores, equal_nan=True)
    assert np.array_equal(native.scored, general.scored)
    assert not native.scored.all()  # the null row is counted, not scored
    for name in ("kind", "n_read", "n_missing", "n_duplicate", "n_unknown", "notes", "sha256"):
        assert getattr(native, name) == getattr(general, name), name


# --- property test: generated dumps, well formed and not ------------------------------

_names = st.sampled_from(["x", "y", "z", "é"])
_number = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-(10**20), 10**20).map(str),
    st.sampled_from(
        [
            "-0",
            "0.0",
            "1e5",
            "1E-5",
            "2.5e+3",
            "1e400",
            "01",
            "1.",
            ".5",
            "NaN",
            "true",
            '"0.5"',
            "null",
        ]
    ),
)
_obj = st.dictionaries(_names, _number, max_size=4).map(
    lambda d: "{" + ", ".join(f'"{k}": {v}' for k, v in d.items()) + "}"
)
_vec = st.lists(_number, max_size=4).map(lambda v: "[" + ", ".join(v) + "]")
_id = st.one_of(
    st.text(max_size=5).map(json.dumps),
    st.text(alphabet="ab\u00e9", max_size=3).map(lambda s: f'"{s}"'),
    st.integers(-(2**64), 2**64).map(str),
    st.sampled_from(["null", "1.5", "true"]),
)
_scores = st.one_of(_obj, _vec, st.just("null"))


@st.composite
def _line(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(
            st.sampled_from(
                ["", "  ", "[1]", "{", '{"id": "a"', "not json", '{"id": "q", "scores": [1]} x']
            )
        )
    parts = [f'"id": {draw(_id)}', f'"scores": {draw(_scores)}']
    if kind == 1:
        parts.reverse()
    if kind == 2:
        parts.append(f'"{draw(st.sampled_from(["error", "id", "scores", "labels"]))}": null')
    if kind == 3:
        parts = parts[:1]
    return "{" + ", ".join(parts) + "}"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_line(), min_size=1, max_size=8), newline=st.sampled_from(["\n", "\r\n"]))
def test_property_native_reads_only_what_pyarrow_reads_the_same(
    lines: list[str], newline: str
) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "p.jsonl"
        path.write_text(newline.join(lines), encoding="utf-8")
        native, general = _both(path)
        if native is None:
            return  # declined: pyarrow serves the file (errors included)
        assert isinstance(general, pa.Table), f"native read a file pyarrow refuses: {general}"
        assert same_read(native, general), (native.to_pylist(), general.to_pylist())


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_line(), min_size=1, max_size=8), newline=st.sampled_from(["\n", "\r\n"]))
def test_property_the_reader_gives_the_same_result_or_error_either_way(
    lines: list[str], newline: str
) -> None:
    """What a user gets from ``read_jsonl_table``, table or error, is the same with the
    native reader allowed and with ``TOXEVAL_JSONL_READER=pyarrow``."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "p.jsonl"
        path.write_text(newline.join(lines), encoding="utf-8")
        native, general = either_reader(read_jsonl_table, path, READER_ENV)
        assert same_read(native, general), (native, general)


_good_number = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-(10**15) + 1, 10**15 - 1).map(str),
    st.just("null"),
)


@st.composite
def _covered_dump(draw: st.DrawFn) -> str:
    vector = draw(st.booleans())
    int_ids = draw(st.booleans())
    n = draw(st.integers(1, 8))
    lines = []
    for i in range(n):
        rid = (
            str(draw(st.integers(-(2**63), 2**63 - 1)))
            if int_ids
            else f'"{draw(st.text(alphabet="ab é漢", max_size=4))}{i}"'
        )
        if i > 0 and draw(st.integers(0, 5)) == 0:
            scores = "null"
        elif vector:
            scores = (
                "["
                + ", ".join(draw(st.lists(_good_number.filter(lambda v: v != "null"), max_size=3)))
                + "]"
            )
        else:
            names = (
                ["x", "y", "z"]
                if i == 0
                else draw(st.permutations(["x", "y", "z"]))[: draw(st.integers(0, 3))]
            )
            scores = "{" + ", ".join(f'"{k}": {draw(_good_number)}' for k in names) + "}"
        lines.append(f'{{"id": {rid}, "scores": {scores}}}')
        if draw(st.integers(0, 6)) == 0:
            lines.append(" ")
    return "\n".join(lines) + "\n"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_covered_dump())
def test_property_covered_dumps_are_read_natively_and_equal(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "p.jsonl"
        path.write_text(text, encoding="utf-8")
        native, general = _both(path)
        assert native is not None, "declined a covered dump"
        assert isinstance(general, pa.Table), general
        assert native.equals(general), (native.to_pylist(), general.to_pylist())
        assert native.schema == general.schema


@pytest.mark.parametrize(
    ("suffix", "codec"), [(".gz", "gzip"), (".bz2", "bz2"), (".zst", "zstd"), (".lz4", "lz4")]
)
def test_compressed_dumps_are_read_natively_after_decompression(
    tmp_path: Path, suffix: str, codec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gz, bz2, zst or lz4 dump is decompressed by pyarrow's decompressor and read by
    the native reader: the table pyarrow's JSON reader gives; a corrupt one goes to
    pyarrow, which names the error."""
    from toxeval import _core

    text = "".join(
        json.dumps({"id": f"r{i}", "scores": {"x": i / 7, "y": None if i % 5 else 0.5}}) + "\n"
        for i in range(500)
    )
    path = tmp_path / f"p.jsonl{suffix}"
    with pa.output_stream(str(path), compression=codec) as out:
        out.write(text.encode())
    calls: list[int] = []
    real = _core.read_jsonl_dump_bytes
    monkeypatch.setattr(_core, "read_jsonl_dump_bytes", lambda b: calls.append(len(b)) or real(b))
    native, general = either_reader(read_jsonl_table, path, READER_ENV)
    assert calls == [len(text.encode())]
    assert isinstance(native, pa.Table) and same_read(native, general)
    bad = tmp_path / f"bad.jsonl{suffix}"
    bad.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    native, general = either_reader(read_jsonl_table, bad, READER_ENV)
    assert same_read(native, general) and isinstance(native, tuple), native


def test_a_compressed_dump_too_large_to_hold_goes_to_pyarrow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toxeval.predictions.native_jsonl as nj

    path = tmp_path / "p.jsonl.gz"
    with pa.output_stream(str(path), compression="gzip") as out:
        out.write(b'{"id": "a", "scores": {"x": 0.5}}\n' * 100)
    monkeypatch.setattr(nj, "COMPRESSED_MAX_BYTES", 1000)
    assert read_native_jsonl(path) is None
    native, general = either_reader(read_jsonl_table, path, READER_ENV)
    assert isinstance(native, pa.Table) and same_read(native, general)
