"""The native CSV / TSV reader against pyarrow's: for every file it reads, the table
pyarrow gives; for every file it declines, pyarrow serves (and names any error). The
property tests hold the public reader (``read_csv_table``) to the same result or the
same error with the native reader allowed and with ``TOXEVAL_CSV_READER=pyarrow``."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from helpers import either_reader, examples, same_read
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toxeval.predictions import read_predictions
from toxeval.predictions.native_csv import CSV_READER_ENV, read_native_csv
from toxeval.predictions.readers import read_csv_table
from toxeval.predictions.schema import ID_COLUMNS, LABEL_COLUMNS, TEXT_COLUMNS

STRING_COLUMNS = ID_COLUMNS + LABEL_COLUMNS + TEXT_COLUMNS


def _native(path: Path) -> pa.Table | None:
    return read_native_csv(path, "\t" if path.suffix == ".tsv" else ",", STRING_COLUMNS)


COVERED = {
    "scores": "id,hate,violence\nq1,0.91,0.02\nq2,0.5,1e-7\n",
    "empty cells, CRLF, blank lines": "id,a,b\r\nq1,,0.5\r\n\r\nq2,0.25,\r\n\nq3,1,-0.0",
    "an integer column": "id,a,b\nq1,0,0.5\nq2,1,1\n",
    "id not first, spaces and unicode in ids": "a,id\n0.5, x \n-2.5E+3,é漢🙂\n",
    "awkward numbers": "id,a\nq,0.30000000000000004\nr,1.7976931348623157e308\ns,5e-324\nt,123456789012345\nu,0.1",
    "no id column": "a,b\n0.5,1\n0.25,0\n",
}


@pytest.mark.parametrize("name", COVERED)
def test_covered_forms_read_natively_equal_pyarrow(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "p.csv"
    path.write_text(COVERED[name], encoding="utf-8")
    native = _native(path)
    assert native is not None, "the native reader declined a form it covers"
    monkeypatch.setenv(CSV_READER_ENV, "pyarrow")
    general = read_csv_table(path)
    assert native.schema == general.schema, (native.schema, general.schema)
    assert native.equals(general), (native.to_pylist(), general.to_pylist())


def test_tsv(tmp_path: Path) -> None:
    path = tmp_path / "p.tsv"
    path.write_text("id\ta\nq 1\t0.5\nq,2\t0.25\n", encoding="utf-8")
    native, general = either_reader(read_csv_table, path, CSV_READER_ENV)
    assert _native(path) is not None
    assert same_read(native, general)


DECLINED = {
    "quotes": 'id,a\n"q1",0.5\n',
    "a null spelling": "id,a\nq1,NA\nq2,0.5\n",
    "an id read as null": "id,a\nnan,0.5\n",
    "an empty id": "id,a\n,0.5\n",
    "a label column": "id,a,labels\nq1,0.5,x\n",
    "an error column": "id,a,error\nq1,0.5,\n",
    "too few cells": "id,a,b\nq1,0.5\n",
    "too many cells": "id,a\nq1,0.5,1\n",
    "a column without numbers": "id,a,b\nq1,0.5,\nq2,0.5,\n",
    "text in a number column": "id,a\nq1,0.5\nq2,high\n",
    "a repeated column": "id,a,a\nq1,0.5,0.5\n",
    "a byte-order mark": "\ufeffid,a\nq1,0.5\n",
    "whitespace around a number": "id,a\nq1, 0.5\n",
    "a long integer": "id,a\nq1,0.5\nq2,12345678901234567\n",
    "header only": "id,a\n",
    "a lone carriage return": "id,a\rq1,0.5\n",
}


@pytest.mark.parametrize("name", DECLINED)
def test_other_files_are_declined_and_served_by_pyarrow(tmp_path: Path, name: str) -> None:
    path = tmp_path / "p.csv"
    path.write_text(DECLINED[name], encoding="utf-8")
    assert _native(path) is None
    native, general = either_reader(read_csv_table, path, CSV_READER_ENV)
    assert same_read(native, general), (native, general)


def test_a_column_typed_late_is_declined(tmp_path: Path) -> None:
    """Integers only in the first lines, a fraction far below: pyarrow versions that
    type a column from the first block would refuse the file, so it is left to them."""
    path = tmp_path / "p.csv"
    path.write_text("id,a\n" + "".join(f"q{i},1\n" for i in range(20_000)) + "z,0.5\n")
    assert _native(path) is None
    path.write_text("id,a\nq,0.5\n" + "".join(f"q{i},1\n" for i in range(20_000)))
    table = _native(path)
    assert table is not None and table.schema.field("a").type == pa.float64()


def test_read_predictions_is_the_same_with_either_reader(
    tmp_path: Path, small_dataset: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = small_dataset
    cats = list(ds.taxonomy.ids)  # type: ignore[attr-defined]
    rng = np.random.default_rng(5)
    lines = ["id," + ",".join(cats)]
    for i, rid in enumerate(ds.ids):  # type: ignore[attr-defined]
        cells = ["" if i == 1 else repr(float(rng.random())) for _ in cats]
        lines.append(rid + "," + ",".join(cells))
    path = tmp_path / "p.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _native(path) is not None
    native, general = either_reader(
        lambda p: read_predictions(p, ds),
        path,
        CSV_READER_ENV,  # type: ignore[arg-type]
    )
    assert type(native) is type(general)
    if isinstance(native, tuple):  # the null row: the same error either way
        assert native == general
        return
    assert np.array_equal(native.scores, general.scores, equal_nan=True)
    assert np.array_equal(native.scored, general.scored)
    for name in ("kind", "n_read", "n_missing", "n_duplicate", "n_unknown", "notes", "sha256"):
        assert getattr(native, name) == getattr(general, name), name


# --- property tests: generated dumps, well formed and not ----------------------------

_cell = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(width=32, allow_nan=False, allow_infinity=False).map(lambda v: f"{v:.6g}"),
    st.integers(-(10**17), 10**17).map(str),
    st.just(""),
    st.sampled_from(
        ["-0", "0.0", "1e5", "1E-5", "2.5e+3", "1e400", "01", "1.", ".5", "+1", "NaN", "nan"]
    ),
    st.sampled_from(["NA", "null", "true", "x", '"0.5"', " 0.5", "0.5 ", "1,5", "é"]),
)
_id = st.one_of(
    st.text(alphabet="ab é,\t", min_size=0, max_size=4),
    st.sampled_from(["NA", "null", "", '"q"', "N/A", "-nan"]),
)
_header = st.lists(
    st.sampled_from(["a", "b", "c", "id", "labels", "error", "", "a b", '"a"', "score"]),
    min_size=1,
    max_size=4,
)


@st.composite
def _csv(draw: st.DrawFn) -> str:
    header = draw(_header)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    rows = [",".join(header)]
    for _ in range(draw(st.integers(0, 6))):
        n = len(header) + draw(st.sampled_from([0, 0, 0, 0, -1, 1]))
        cells = [draw(_id) if h == "id" else draw(_cell) for h in header[: max(n, 0)]]
        cells += [draw(_cell) for _ in range(n - len(header))]
        rows.append(",".join(cells))
        if draw(st.integers(0, 8)) == 0:
            rows.append("")
    return newline.join(rows) + draw(st.sampled_from(["", newline]))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_csv())
def test_property_the_reader_gives_the_same_result_or_error_either_way(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "p.csv"
        path.write_text(text, encoding="utf-8", newline="")
        native, general = either_reader(read_csv_table, path, CSV_READER_ENV)
        assert same_read(native, general), (native, general)


_good = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(0, 1).map(lambda v: f"{v:.6f}"),
    st.just(""),
)


@st.composite
def _covered_csv(draw: st.DrawFn) -> str:
    names = draw(st.permutations(["id", "x", "y", "z"]))[: draw(st.integers(2, 4))]
    if "id" not in names:
        names = ["id", *names]
    rows = [",".join(names)]
    for i in range(draw(st.integers(1, 8))):
        cells = []
        for n in names:
            if n == "id":
                cells.append(draw(st.text(alphabet="ab é漢", max_size=3)) + str(i))
            elif i == 0:
                cells.append("0.5")  # every column typed float64 by its first cell
            else:
                cells.append(draw(_good))
        rows.append(",".join(cells))
    return "\n".join(rows) + "\n"


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_covered_csv())
def test_property_covered_dumps_are_read_natively_and_equal(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "p.csv"
        path.write_text(text, encoding="utf-8")
        assert _native(path) is not None, "declined a covered dump"
        native, general = either_reader(read_csv_table, path, CSV_READER_ENV)
        assert isinstance(general, pa.Table), general
        assert same_read(native, general), (native, general)


@pytest.mark.parametrize(
    ("suffix", "codec"), [(".gz", "gzip"), (".bz2", "bz2"), (".zst", "zstd"), (".lz4", "lz4")]
)
def test_compressed_csv_dumps_are_read_natively_after_decompression(
    tmp_path: Path, suffix: str, codec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gz, bz2, zst or lz4 CSV dump is decompressed by pyarrow and read natively: the
    table pyarrow's CSV reader gives; a corrupt one goes to pyarrow, which names it."""
    from toxeval import _core

    text = "id,x,y\n" + "".join(f"r{i},{i / 7},{'' if i % 5 else 0.5}\n" for i in range(400))
    path = tmp_path / f"p.csv{suffix}"
    with pa.output_stream(str(path), compression=codec) as out:
        out.write(text.encode())
    calls: list[int] = []
    real = _core.read_csv_dump_bytes
    monkeypatch.setattr(
        _core, "read_csv_dump_bytes", lambda b, *a, **k: calls.append(len(b)) or real(b, *a, **k)
    )
    native, general = either_reader(read_csv_table, path, CSV_READER_ENV)
    assert calls == [len(text.encode())]
    assert isinstance(native, pa.Table) and same_read(native, general)
    bad = tmp_path / f"bad.csv{suffix}"
    bad.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    native, general = either_reader(read_csv_table, bad, CSV_READER_ENV)
    assert same_read(native, general) and isinstance(native, tuple), native
