"""The id join's two lookups, the native kernel (``rust/ids/``) and numpy hashes with
Arrow's ``index_in`` (``TOXEVAL_ID_JOIN=arrow``): the same joins, counts, first ids
and errors on the same ids, whatever their layout (string, large_string, chunked,
sliced, integers, dictionary)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from helpers import examples, make_dataset, small_taxonomy, write_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st
from toxeval import ids as id_module
from toxeval.ids import JOIN_ENV, IdJoin, StringColumn, index_in, join_ids, native_join_available
from toxeval.predictions import PredictionError, read_predictions

pytestmark = pytest.mark.skipif(
    not native_join_available(), reason="the compiled module has no ids_index_in"
)


def _with(monkeypatch: pytest.MonkeyPatch, path: str, f: Any) -> Any:
    """``f()`` with the lookup ``path`` (``native`` or ``arrow``): its value or its error."""
    monkeypatch.setenv(JOIN_ENV, "auto" if path == "native" else "arrow")
    try:
        return f()
    except Exception as e:  # compared by type and message below
        return e


def _same(a: Any, b: Any) -> None:
    if isinstance(a, Exception) or isinstance(b, Exception):
        assert type(a) is type(b) and str(a) == str(b), (a, b)
        return
    if isinstance(a, IdJoin):
        for field in IdJoin.__dataclass_fields__:
            x, y = getattr(a, field), getattr(b, field)
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y, err_msg=field)
            else:
                assert x == y, field
        return
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
        return
    assert a == b


def _both_joins(monkeypatch: pytest.MonkeyPatch, pred: Any, ds_ids: list[str]) -> IdJoin:
    runs = [
        _with(
            monkeypatch,
            path,
            lambda: join_ids(pred, StringColumn(pa.array(ds_ids)), "p", ValueError),
        )
        for path in ("native", "arrow")
    ]
    _same(*runs)
    return runs[0]


DS = [f"id{i}" for i in range(10)]

CASES: dict[str, Any] = {
    "same order": pa.array(DS),
    "shuffled": pa.array(DS[::-1]),
    "missing, repeated, unknown": pa.array(["id3", "id1", "zz", "id3", "id9", "yy", "id1"]),
    "large_string": pa.array(DS[::-1], type=pa.large_string()),
    "chunked": pa.chunked_array([pa.array(DS[5:]), pa.array([*DS[:5], "x"])]),
    "sliced": pa.array(["pad", "pad2", *DS[::-1], "tail"]).slice(2, 10),
    "dictionary": pa.array(DS[::-1]).dictionary_encode(),
    "binary": pa.array([s.encode() for s in DS], type=pa.binary()),
    "empty strings and prefixes": pa.array(["", "id", "id1", "id10", "id1\x00"]),
    "null id": pa.array(["id1", None]),
    "not UTF-8": pa.array([b"\xff"], type=pa.binary()),
    "floats": pa.array([1.5]),
    "empty": pa.array([], type=pa.string()),
}


@pytest.mark.parametrize("name", CASES)
def test_both_lookups_join_alike(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    _both_joins(monkeypatch, CASES[name], DS)


def test_integer_ids_against_text_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    j = _both_joins(monkeypatch, pa.array([3, 1, 2, 7], type=pa.int64()), ["1", "2", "3", "4"])
    assert isinstance(j, IdJoin)
    assert j.src.tolist() == [0, 1, 2] and j.dst.tolist() == [2, 0, 1]
    assert (j.n_missing, j.missing_ids, j.n_unknown, j.unknown_ids) == (1, ("4",), 1, ("7",))


def test_the_native_lookup_is_exact_on_bytes() -> None:
    values = pa.array(["a", "a\x00", "", "é", "b" * 200, "b" * 199 + "c", "zz"])
    value_set = pa.array(["b" * 200, "", "a", "é", "a", "a\x00"], type=pa.large_string())
    assert index_in(values, value_set).tolist() == [2, 5, 1, 3, 0, -1, -1]


def test_all_distinct_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    for ids in (DS, [*DS, "id3"], ["a", "a\x00"], []):
        got = [
            _with(
                monkeypatch,
                path,
                lambda ids=ids: StringColumn(pa.array(ids, pa.string())).all_distinct(),
            )
            for path in ("native", "arrow")
        ]
        assert got[0] == got[1] == (len(set(ids)) == len(ids))


@settings(max_examples=examples(150), deadline=None)
@given(
    ds_ids=st.lists(st.text(alphabet="ab\x00é", max_size=4), unique=True, max_size=30),
    picks=st.lists(st.one_of(st.integers(0, 40), st.text(alphabet="abc", max_size=3)), max_size=40),
    large=st.booleans(),
    chunk=st.integers(0, 40),
)
def test_fuzz_native_and_arrow_joins_agree(
    ds_ids: list[str], picks: list[Any], large: bool, chunk: int
) -> None:
    pred = [ds_ids[p] if isinstance(p, int) and p < len(ds_ids) else str(p) for p in picks]
    arr = pa.array(pred, type=pa.large_string() if large else pa.string())
    if 0 < chunk < len(pred):
        arr = pa.chunked_array([arr.slice(0, chunk), arr.slice(chunk)])
    with pytest.MonkeyPatch.context() as mp:
        _both_joins(mp, arr, ds_ids)


def test_prediction_files_give_the_same_errors_and_joins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tax = small_taxonomy(2)
    ds = make_dataset(np.array([[1, 0], [0, 1], [1, 1]]), taxonomy=tax, ids=["a", "b", "c"])
    rows = [{"id": i, "scores": {"c0": 0.5, "c1": 0.25}} for i in ("c", "b", "b", "q")]
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    errors = [
        _with(monkeypatch, path, lambda: read_predictions(p, ds)) for path in ("native", "arrow")
    ]
    assert isinstance(errors[0], PredictionError)
    _same(*errors)
    dropped = [
        _with(monkeypatch, path, lambda: read_predictions(p, ds, on_mismatch="drop"))
        for path in ("native", "arrow")
    ]
    np.testing.assert_array_equal(dropped[0].scores, dropped[1].scores)
    assert dropped[0].summary() == dropped[1].summary()
    assert id_module.SHOW == 5  # the first ids named per kind, on both paths


def test_cached_sort_keys_give_the_same_lookup_and_foreign_keys_are_refused() -> None:
    from toxeval import _core

    col = StringColumn(pa.array(["b", "a", "c", "a\x00"]))
    values = pa.array(["a\x00", "c", "x", "b"])
    assert index_in(values, col.arrow, col.native_keys()).tolist() == [3, 2, -1, 0]
    assert index_in(values, col.arrow).tolist() == [3, 2, -1, 0]
    other = StringColumn(pa.array(["q", "r"])).native_keys()
    with pytest.raises(ValueError, match="sort keys do not belong to these ids"):
        index_in(values, col.arrow, other)
    with pytest.raises(ValueError, match="sort keys do not belong"):
        _core.ids_any_repeat(*_offsets_and_data(col.arrow), other)


def _offsets_and_data(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=len(arr) + 1)
    return offsets, np.frombuffer(arr.buffers()[2], dtype=np.uint8)
