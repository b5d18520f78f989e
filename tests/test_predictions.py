"""toxeval.predictions: every format and form, compressed dumps (every compression for
every text format), joins by id, mismatch policies, every bad input with its message
(JSONL line numbers included; errors name the keyword and the CLI flag), and the choice
parameters typed with their Literals."""

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
from helpers import CODECS, jsonl_text, make_dataset, small_taxonomy, write_compressed, write_jsonl
from toxeval import datasets, predictions
from toxeval.datasets import DatasetError, load_dataset
from toxeval.parsing import UnparseableOutputError
from toxeval.predictions import (
    PredictionError,
    detect_format,
    predictions_from_array,
    predictions_from_texts,
    read_predictions,
)

TAX = small_taxonomy(3)  # ids c0, c1, c2
Y = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]])
IDS = ["a", "b", "c", "d"]
S = np.array([[0.9, 0.1, 0.2], [0.2, 0.8, 0.1], [0.7, 0.6, 0.3], [0.1, 0.25, 0.9]])


@pytest.fixture
def ds() -> Any:
    return make_dataset(Y, taxonomy=TAX, ids=list(IDS))


def _struct_rows(order: list[int] | None = None) -> list[dict[str, Any]]:
    order = order if order is not None else list(range(4))
    return [{"id": IDS[i], "scores": {f"c{k}": float(S[i, k]) for k in range(3)}} for i in order]


# --------------------------------------------------------------------------- formats, forms


@pytest.mark.parametrize("gz", [False, True])
def test_jsonl_score_objects_joined_by_id(tmp_path: Path, ds: Any, gz: bool) -> None:
    p = write_jsonl(
        tmp_path / ("p.jsonl.gz" if gz else "p.jsonl"), _struct_rows([3, 1, 0, 2]), gz=gz
    )
    pr = read_predictions(p, ds)
    np.testing.assert_array_equal(pr.scores, S)
    assert pr.scored.all()
    assert pr.kind == "scores" and pr.format == "jsonl"
    assert len(pr.sha256 or "") == 64


def test_jsonl_score_object_keys_may_be_names_or_aliases(tmp_path: Path, ds: Any) -> None:
    rows = [
        {"id": IDS[i], "scores": {"Category 0": S[i, 0], "c1": S[i, 1], "CATEGORY 2": S[i, 2]}}
        for i in range(4)
    ]
    pr = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), ds)
    np.testing.assert_array_equal(pr.scores, S)


def test_jsonl_vector_and_integer_ids(tmp_path: Path) -> None:
    ds = make_dataset(Y, taxonomy=TAX, ids=["1", "2", "3", "4"])
    rows = [{"id": i + 1, "scores": S[i].tolist()} for i in range(4)]
    pr = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), ds)
    np.testing.assert_array_equal(pr.scores, S)


def test_jsonl_per_category_columns(tmp_path: Path, ds: Any) -> None:
    rows = [{"id": IDS[i], **{f"c{k}": S[i, k] for k in range(3)}} for i in range(4)]
    pr = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), ds)
    np.testing.assert_array_equal(pr.scores, S)


def test_jsonl_labels(tmp_path: Path, ds: Any) -> None:
    rows = [{"id": IDS[i], "labels": [f"c{k}" for k in range(3) if Y[i, k]]} for i in range(4)]
    rows[0]["labels"] = []
    pr = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), ds)
    want = Y.astype(float)
    want[0] = 0
    np.testing.assert_array_equal(pr.scores, want)
    assert pr.kind == "labels"
    assert not pr.graded


def test_jsonl_text_is_parsed(tmp_path: Path) -> None:
    from toxeval.taxonomy import load_taxonomy

    tax = load_taxonomy("toxeval-15")
    y = np.zeros((3, tax.k), dtype=np.int8)
    ds = make_dataset(y, taxonomy=tax, ids=["x", "y", "z"])
    rows = [
        {"id": "x", "output": "hate, violence"},
        {"id": "y", "output": "none"},
        {"id": "z", "output": "I can't help with that."},
    ]
    pr = read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), ds, parse_policy="exclude")
    assert pr.kind == "text"
    assert pr.scores[0, tax.index("hate")] == 1.0
    assert pr.parse_counts is not None and pr.parse_counts["empty"] == 1
    assert pr.parse_counts["unparseable"] == 1
    assert pr.n_parse_excluded == 1 and not pr.scored[2]
    with pytest.raises(PredictionError, match=r"unparseable.*id 'z'"):
        read_predictions(tmp_path / "p.jsonl", ds, parse_policy="error")
    pz = read_predictions(tmp_path / "p.jsonl", ds, parse_policy="zeros")
    assert pz.scored.all() and not pz.scores[2].any()


def test_csv_columns_and_labels(tmp_path: Path, ds: Any) -> None:
    p = tmp_path / "p.csv"
    lines = ["Unnamed: 0,id,c0,c1,c2,model"] + [
        f"{i},{IDS[i]},{S[i, 0]},{S[i, 1]},{S[i, 2]},m" for i in range(4)
    ]
    p.write_text("\n".join(lines) + "\n")
    np.testing.assert_array_equal(read_predictions(p, ds).scores, S)
    q = tmp_path / "q.csv"
    q.write_text('id,labels\na,c0\nb,"[""c1""]"\nc,c0;c1\nd,\n')
    want = Y.astype(float)
    want[3] = 0
    np.testing.assert_array_equal(read_predictions(q, ds).scores, want)


def test_csv_numeric_ids_match_string_ids(tmp_path: Path) -> None:
    ds = make_dataset(Y, taxonomy=TAX, ids=["10", "20", "30", "40"])
    p = tmp_path / "p.csv"
    p.write_text(
        "id,c0,c1,c2\n"
        + "".join(f"{(i + 1) * 10},{S[i, 0]},{S[i, 1]},{S[i, 2]}\n" for i in range(4))
    )
    np.testing.assert_array_equal(read_predictions(p, ds).scores, S)


@pytest.mark.parametrize("form", ["struct", "list", "fixed", "map", "columns", "labels"])
def test_parquet_forms(tmp_path: Path, ds: Any, form: str) -> None:
    order = [2, 0, 3, 1]
    ids = pa.array([IDS[i] for i in order])
    sc = S[order]
    if form == "struct":
        col = pa.StructArray.from_arrays([pa.array(sc[:, k]) for k in range(3)], ["c0", "c1", "c2"])
        table = pa.table({"id": ids, "scores": col})
    elif form == "list":
        table = pa.table({"id": ids, "scores": pa.array(sc.tolist(), pa.list_(pa.float32()))})
    elif form == "fixed":
        table = pa.table({"id": ids, "scores": pa.array(sc.tolist(), pa.list_(pa.float64(), 3))})
    elif form == "map":
        items = [[(f"c{k}", float(r[k])) for k in (2, 0, 1)] for r in sc]
        table = pa.table({"id": ids, "scores": pa.array(items, pa.map_(pa.string(), pa.float64()))})
    elif form == "columns":
        table = pa.table({"id": ids, **{f"c{k}": sc[:, k] for k in range(3)}})
    else:
        labels = [[f"c{k}" for k in range(3) if Y[i, k]] for i in order]
        table = pa.table({"id": ids, "labels": labels})
    p = tmp_path / "p.parquet"
    pq.write_table(table, p)
    pr = read_predictions(p, ds)
    want = Y.astype(float) if form == "labels" else S
    np.testing.assert_allclose(pr.scores, want, rtol=1e-7 if form == "list" else 0)


def test_npy_and_npz_by_row_order(tmp_path: Path, ds: Any) -> None:
    np.save(tmp_path / "p.npy", S)
    np.testing.assert_array_equal(read_predictions(tmp_path / "p.npy", ds).scores, S)
    np.savez(tmp_path / "p.npz", scores=S.astype(np.float32))
    np.testing.assert_allclose(read_predictions(tmp_path / "p.npz", ds).scores, S, rtol=1e-7)
    np.savez(tmp_path / "q.npz", S)  # a single unnamed array
    np.testing.assert_array_equal(read_predictions(tmp_path / "q.npz", ds).scores, S)


def test_npz_with_ids_is_joined(tmp_path: Path, ds: Any) -> None:
    order = [1, 3, 0, 2]
    np.savez(tmp_path / "p.npz", scores=S[order], ids=np.array([IDS[i] for i in order]))
    np.testing.assert_array_equal(read_predictions(tmp_path / "p.npz", ds).scores, S)


@pytest.mark.parametrize(
    ("members", "message"),
    [
        # the ids under another name: matching by row order would pair shuffled scores
        # with the wrong rows
        ({"IDs": [1, 3, 0, 2]}, r"p\.npz: NPZ arrays 'IDs' are not read"),
        ({"sample_ids": [1, 3, 0, 2]}, r"p\.npz: NPZ arrays 'sample_ids' are not read"),
        # two id arrays that disagree: which one joins is not the reader's guess
        ({"ids": [0, 1, 2, 3], "id": [1, 3, 0, 2]}, r"p\.npz: NPZ holds both 'id' and 'ids'"),
        # a second score array: which one is scored is not the reader's guess either
        ({"probs": [0, 1, 2, 3]}, r"p\.npz: NPZ arrays 'probs' are not read"),
    ],
)
def test_npz_arrays_that_would_not_be_read_are_an_error(
    tmp_path: Path, ds: Any, members: dict[str, list[int]], message: str
) -> None:
    order = [1, 3, 0, 2]
    arrays = {k: np.array([IDS[i] for i in v]) for k, v in members.items()}
    np.savez(tmp_path / "p.npz", scores=S[order], **arrays)
    with pytest.raises(PredictionError, match=message):
        read_predictions(tmp_path / "p.npz", ds)


def test_jsonl_integer_id_beyond_64_bits_names_the_line(tmp_path: Path) -> None:
    # a dataset reads such ids exactly (as text); the prediction dump must say how to
    # write them, not pass on pyarrow's int64 conversion error
    big = [2**64 + i for i in range(4)]
    ds = make_dataset(Y, taxonomy=TAX, ids=[str(i) for i in big])
    rows = [{"id": i, "scores": list(S[k])} for k, i in enumerate(big)]
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(
        PredictionError, match=r"p\.jsonl: line 1: field 'id' is an integer .*string"
    ):
        read_predictions(p, ds)
    rows = [{"id": str(i), "scores": list(S[k])} for k, i in enumerate(big)]
    pr = read_predictions(write_jsonl(tmp_path / "q.jsonl", rows[::-1]), ds)
    np.testing.assert_array_equal(pr.scores, S)


def test_jsonl_labels_list_of_numbers_names_the_line(tmp_path: Path, ds: Any) -> None:
    # a 0/1 vector under 'labels' is not a list of category names
    rows = [{"id": i, "labels": [1, 0, 1]} for i in IDS]
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(PredictionError, match=r"p\.jsonl: line 1: field 'labels' holds an int"):
        read_predictions(p, ds)


def test_a_category_spelt_two_ways_across_rows_says_so(tmp_path: Path, ds: Any) -> None:
    # no row names c0 twice: row 2 spells it by name; the message must not claim one row did
    rows = _struct_rows()
    rows[1]["scores"] = {"Category 0": S[1, 0], "c1": S[1, 1], "c2": S[1, 2]}
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(PredictionError, match=r"both name category 'c0' \(on one row, or on diff"):
        read_predictions(p, ds)


def test_npz_label_array_beside_the_scores_is_a_companion(tmp_path: Path, ds: Any) -> None:
    # thresholded labels saved next to the scores are not read (the scores are), as a
    # 'labels' column beside 'scores' in a table
    order = [1, 3, 0, 2]
    np.savez(
        tmp_path / "p.npz",
        scores=S[order],
        labels=S[order] >= 0.5,
        ids=np.array([IDS[i] for i in order]),
    )
    pr = read_predictions(tmp_path / "p.npz", ds)
    np.testing.assert_array_equal(pr.scores, S)
    assert pr.kind == "scores"


def test_format_flag_overrides_extension(tmp_path: Path, ds: Any) -> None:
    p = write_jsonl(tmp_path / "preds.txt", _struct_rows())
    with pytest.raises(PredictionError, match=r"pass format= \(--format\)"):
        read_predictions(p, ds)
    np.testing.assert_array_equal(read_predictions(p, ds, format="jsonl").scores, S)
    assert detect_format("x.ndjson") == "jsonl"
    assert detect_format("x.PARQUET") == "parquet"


def test_many_rows_load_vectorised(tmp_path: Path) -> None:
    n = 200_000
    rng = np.random.default_rng(0)
    y = (rng.random((n, 3)) < 0.2).astype(np.int8)
    ids = [f"id{i}" for i in range(n)]
    ds = make_dataset(y, taxonomy=TAX, ids=ids)
    s = rng.random((n, 3))
    perm = rng.permutation(n)
    p = tmp_path / "big.parquet"
    pq.write_table(
        pa.table({"id": pa.array(ids).take(pa.array(perm)), "scores": pa.array(s[perm].tolist())}),
        p,
    )
    np.testing.assert_array_equal(read_predictions(p, ds).scores, s)


# --------------------------------------------------------------------------- mismatches


def test_missing_ids_error_then_drop(tmp_path: Path, ds: Any) -> None:
    p = write_jsonl(tmp_path / "p.jsonl", _struct_rows([0, 1, 2]))
    with pytest.raises(PredictionError, match=r"1 of 4 dataset ids have no prediction \('d'\)"):
        read_predictions(p, ds)
    pr = read_predictions(p, ds, on_mismatch="drop")
    assert pr.n_missing == 1 and pr.missing_ids == ("d",)
    assert pr.scored.tolist() == [True, True, True, False]
    assert pr.summary()["missing"] == {"count": 1, "first_ids": ["d"]}


def test_duplicate_ids_error_then_keep_first(tmp_path: Path, ds: Any) -> None:
    rows = _struct_rows()
    later = {"id": "b", "scores": {"c0": 0.0, "c1": 0.0, "c2": 0.0}}
    p = write_jsonl(tmp_path / "p.jsonl", [*rows, later])
    with pytest.raises(PredictionError, match=r"1 rows repeat an id already seen \('b'\)"):
        read_predictions(p, ds)
    pr = read_predictions(p, ds, on_mismatch="drop")
    np.testing.assert_array_equal(pr.scores, S)  # the first 'b' is kept
    assert pr.n_duplicate == 1 and pr.duplicate_ids == ("b",)


def test_unknown_ids_error_then_drop(tmp_path: Path, ds: Any) -> None:
    extra = [{"id": f"zz{i}", "scores": {"c0": 0.5, "c1": 0.5, "c2": 0.5}} for i in range(7)]
    p = write_jsonl(tmp_path / "p.jsonl", [*_struct_rows(), *extra])
    with pytest.raises(
        PredictionError, match=r"7 of 11 prediction ids are not in the dataset \('zz0'.*, \.\.\.\)"
    ):
        read_predictions(p, ds)
    pr = read_predictions(p, ds, on_mismatch="drop")
    np.testing.assert_array_equal(pr.scores, S)
    assert pr.n_unknown == 7 and pr.unknown_ids[:2] == ("zz0", "zz1")


def test_all_three_mismatches_in_one_message(tmp_path: Path, ds: Any) -> None:
    rows = _struct_rows([0, 1, 1])
    rows.append({"id": "q", "scores": {"c0": 0, "c1": 0, "c2": 0}})
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(PredictionError) as e:
        read_predictions(p, ds)
    msg = str(e.value)
    assert "2 of 4 dataset ids have no prediction" in msg
    assert "1 rows repeat" in msg and "not in the dataset ('q')" in msg
    assert "on_mismatch='drop' (--on-mismatch drop)" in msg


def test_npy_length_must_equal_n(tmp_path: Path, ds: Any) -> None:
    np.save(tmp_path / "p.npy", S[:3])
    with pytest.raises(
        PredictionError, match="3 rows of predictions, but the dataset 'test' has 4 rows"
    ):
        read_predictions(tmp_path / "p.npy", ds)


# --------------------------------------------------------------------------- bad input


def test_nan_and_inf_name_row_and_column(tmp_path: Path, ds: Any) -> None:
    rows = _struct_rows()
    rows[2] = '{"id": "c", "scores": {"c0": 0.1, "c1": NaN, "c2": 0.3}}'
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(PredictionError, match=r"row id 'c': score for 'c1' is NaN"):
        read_predictions(p, ds)
    s = S.copy()
    s[1, 2] = np.inf
    np.save(tmp_path / "p.npy", s)
    with pytest.raises(PredictionError, match=r"row #2: score for 'c2' is inf"):
        read_predictions(tmp_path / "p.npy", ds)


def test_wrong_k_names_expected_k_and_ids(tmp_path: Path, ds: Any) -> None:
    rows = [{"id": IDS[i], "scores": S[i].tolist()} for i in range(4)]
    rows[1]["scores"] = [0.1, 0.2]
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(
        PredictionError, match=r"row id 'b': score vector has length 2, expected K=3 .*c0, c1, c2"
    ):
        read_predictions(p, ds)
    np.save(tmp_path / "p.npy", np.zeros((4, 5)))
    with pytest.raises(PredictionError, match=r"5 columns, expected K=3 .*\(c0, c1, c2\)"):
        read_predictions(tmp_path / "p.npy", ds)


def test_unknown_category_names_are_listed(tmp_path: Path, ds: Any) -> None:
    rows = _struct_rows()
    rows[3]["scores"]["bogus"] = 0.2
    rows[3]["scores"]["weird"] = 0.1
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(
        PredictionError, match=r"unknown categories in score keys: 'bogus', 'weird'"
    ):
        read_predictions(p, ds)
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "a", "labels": ["c0", "nope"]}])
    with pytest.raises(PredictionError, match=r"unknown categories in labels: 'nope'"):
        read_predictions(q, ds)
    r = tmp_path / "r.csv"
    r.write_text("id,c0,c1,c2,extra\na,1,0,0,0.5\n")
    with pytest.raises(PredictionError, match="unknown categories in score columns: 'extra'"):
        read_predictions(r, ds)


def test_missing_category_or_null_score(tmp_path: Path, ds: Any) -> None:
    rows = [{"id": IDS[i], "scores": {"c0": S[i, 0], "c1": S[i, 1]}} for i in range(4)]
    with pytest.raises(PredictionError, match="no scores for categories 'c2'"):
        read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), ds)
    rows = _struct_rows()
    del rows[2]["scores"]["c1"]
    with pytest.raises(PredictionError, match="row id 'c': no score for 'c1'"):
        read_predictions(write_jsonl(tmp_path / "q.jsonl", rows), ds)


def test_scores_outside_unit_interval_are_allowed_and_noted(tmp_path: Path, ds: Any) -> None:
    np.save(tmp_path / "p.npy", S * 10 - 5)
    pr = read_predictions(tmp_path / "p.npy", ds)
    assert pr.n_out_of_range > 0
    assert any("outside [0, 1]" in n for n in pr.notes)


@pytest.mark.parametrize("name", ["p.jsonl", "p.jsonl.gz", "p.csv", "p.parquet", "p.npy", "p.npz"])
def test_empty_file(tmp_path: Path, ds: Any, name: str) -> None:
    p = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(p, "wb"):
            pass
    else:
        p.write_bytes(b"")
    with pytest.raises(PredictionError, match="empty file"):
        read_predictions(p, ds)


def test_blank_lines_only_is_empty(tmp_path: Path, ds: Any) -> None:
    p = tmp_path / "p.jsonl"
    p.write_text("\n\n  \n")
    with pytest.raises(PredictionError, match="empty file"):
        read_predictions(p, ds)


def test_malformed_jsonl_reports_line_number(tmp_path: Path, ds: Any) -> None:
    rows: list[Any] = _struct_rows()
    lines = [
        json.dumps(rows[0]),
        "",
        json.dumps(rows[1]),
        '{"id": "c", "scores": {"c0": 0.1,',
        json.dumps(rows[3]),
    ]
    p = tmp_path / "p.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        PredictionError, match=r"p\.jsonl: line 4: malformed JSON \(.* at column \d+\)"
    ):
        read_predictions(p, ds)
    q = tmp_path / "q.jsonl"
    q.write_text("not json\n")
    with pytest.raises(PredictionError, match="line 1: malformed JSON"):
        read_predictions(q, ds)


def test_inconsistent_types_report_line_number(tmp_path: Path, ds: Any) -> None:
    rows: list[Any] = _struct_rows()
    rows[2] = {"id": "c", "scores": "high"}
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(
        PredictionError, match=r"line 3: field 'scores' is a string, but an object on line 1"
    ):
        read_predictions(p, ds)


def test_no_id_column_and_no_predictions(tmp_path: Path, ds: Any) -> None:
    p = write_jsonl(tmp_path / "p.jsonl", [{"scores": [0.1, 0.2, 0.3]}])
    with pytest.raises(PredictionError, match="no 'id' column"):
        read_predictions(p, ds)
    q = write_jsonl(tmp_path / "q.jsonl", [{"id": "a", "model": "x"}])
    with pytest.raises(PredictionError, match="no predictions found"):
        read_predictions(q, ds)


def test_missing_file_and_bad_policy(tmp_path: Path, ds: Any) -> None:
    with pytest.raises(FileNotFoundError, match="predictions file not found"):
        read_predictions(tmp_path / "nope.jsonl", ds)
    p = write_jsonl(tmp_path / "p.jsonl", _struct_rows())
    with pytest.raises(ValueError, match="on_mismatch"):
        read_predictions(p, ds, on_mismatch="ignore")


# ------------------------------------------------ join fast paths (same order, shuffled)


def _big_case(n: int, ids: list[str]) -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(7)
    y = (rng.random((n, 3)) < 0.3).astype(np.int8)
    y[0] = [1, 1, 1]
    return make_dataset(y, taxonomy=TAX, ids=ids), np.round(rng.random((n, 3)), 3)


def _struct_parquet(path: Path, ids: list[str], s: np.ndarray, order: np.ndarray) -> Path:
    col = pa.StructArray.from_arrays([pa.array(s[order, k]) for k in range(3)], ["c0", "c1", "c2"])
    table = pa.table({"id": pa.array(ids).take(pa.array(order)), "scores": col})
    pq.write_table(table, path, row_group_size=97)  # many chunks per column
    return path


@pytest.mark.parametrize(
    "ids",
    [
        [f"row-{i:04d}" for i in range(500)],  # fixed width
        [str(i) * (1 + i % 5) for i in range(500)],  # variable width
        ["long-" * 14 + str(i) for i in range(500)],  # over 64 bytes: Arrow's hash tables
    ],
    ids=["fixed", "variable", "long"],
)
@pytest.mark.parametrize("collide", [False, True])
def test_same_order_and_shuffled_dumps_give_the_same_predictions(
    tmp_path: Path, ids: list[str], collide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toxeval.ids as id_module
    from toxeval.datasets import StringColumn
    from toxeval.scoring import score

    if collide:  # every hash equal: the join must take the exact hash-table path
        monkeypatch.setenv(id_module.JOIN_ENV, "arrow")  # the numpy hashes, not the kernel's
        monkeypatch.setattr(id_module, "_MIX", (np.uint64(0), np.uint64(0), np.uint64(31)))
    elif len(ids[-1]) <= 64:  # the sorted-hash join must not need Arrow's hash tables

        def no_hash_table(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("pc.index_in called")

        monkeypatch.setattr(pa.compute, "index_in", no_hash_table)
    n = len(ids)
    for as_arrow in (False, True):
        ds, s = _big_case(n, ids)
        if as_arrow:  # as the Parquet / JSONL readers hand them over
            object.__setattr__(ds, "ids", StringColumn(pa.array(ids)))
        same = read_predictions(
            _struct_parquet(tmp_path / "same.parquet", ids, s, np.arange(n)), ds
        )
        perm = np.random.default_rng(3).permutation(n)
        shuf = read_predictions(_struct_parquet(tmp_path / "shuf.parquet", ids, s, perm), ds)
        np.testing.assert_array_equal(same.scores, s)
        np.testing.assert_array_equal(shuf.scores, s)
        assert same.scored.all() and shuf.scored.all()
        a = score(same, ds).to_dict()
        b = score(shuf, ds).to_dict()
        for key in ("figures", "per_category", "counts", "card_recipe"):
            assert json.dumps(a[key]) == json.dumps(b[key])


@pytest.mark.parametrize("collide", [False, True])
def test_shuffled_dump_with_mismatches_drops_exactly(
    tmp_path: Path, collide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toxeval.ids as id_module

    if collide:  # the numpy hashes of the Arrow path, all equal
        monkeypatch.setenv(id_module.JOIN_ENV, "arrow")
        monkeypatch.setattr(id_module, "_MIX", (np.uint64(0), np.uint64(0), np.uint64(31)))
    n = 400
    ids = [f"r{i}" for i in range(n)]
    ds, s = _big_case(n, ids)
    rng = np.random.default_rng(5)
    # same length as the dataset, but one id missing, one repeated and one unknown
    order = rng.permutation(n)
    pred_ids = [ids[i] for i in order]
    pred_ids[10] = pred_ids[20]  # a duplicate; row 10 comes first and wins
    pred_ids[30] = "stranger"  # unknown
    lost = {int(order[10]), int(order[30])}  # ids no row carries any more
    sc = s[order]
    col = pa.StructArray.from_arrays([pa.array(sc[:, k]) for k in range(3)], ["c0", "c1", "c2"])
    p = tmp_path / "p.parquet"
    pq.write_table(pa.table({"id": pred_ids, "scores": col}), p, row_group_size=64)
    with pytest.raises(PredictionError, match=r"repeat an id.*not in the dataset"):
        read_predictions(p, ds)
    pr = read_predictions(p, ds, on_mismatch="drop")
    assert (pr.n_duplicate, pr.n_unknown, pr.n_missing) == (1, 1, len(lost))
    want = s.copy()
    want[order[20]] = sc[10]  # the first row with that id
    for r in lost:
        want[r] = 0.0
    scored = np.ones(n, dtype=bool)
    scored[list(lost)] = False
    np.testing.assert_array_equal(pr.scored, scored)
    np.testing.assert_array_equal(pr.scores, want)


def test_scoring_a_parquet_dump_makes_no_python_strings_for_ids_or_texts(tmp_path: Path) -> None:
    from toxeval.datasets import load_dataset
    from toxeval.report import write_outputs
    from toxeval.scoring import score

    n = 300
    ids = [f"row-{i}" for i in range(n)]
    labels = [["hate"] if i % 3 == 0 else ["violence"] if i % 3 == 1 else [] for i in range(n)]
    pq.write_table(
        pa.table({"id": ids, "text": [f"text {i}" for i in range(n)], "labels": labels}),
        tmp_path / "d.parquet",
    )
    ds = load_dataset(tmp_path / "d.parquet")
    rng = np.random.default_rng(0)
    order = rng.permutation(n)
    s = rng.random((n, ds.k))
    cols = pa.StructArray.from_arrays(
        [pa.array(s[order, k]) for k in range(ds.k)], list(ds.taxonomy.ids)
    )
    pq.write_table(
        pa.table({"id": pa.array(ids).take(pa.array(order)), "scores": cols}),
        tmp_path / "p.parquet",
    )
    result = score(tmp_path / "p.parquet", ds)
    write_outputs(result, tmp_path / "out")
    assert ds.ids._list is None and ds.texts._list is None  # still Arrow columns
    assert ds.texts[5] == "text 5" and list(ds.texts)[-1] == f"text {n - 1}"  # yet available
    assert result.counts["scored"] == n


# --------------------------------------------------------------------------- malformed input


def test_duplicated_column_names_are_an_error(tmp_path: Path, ds: Any) -> None:
    p = tmp_path / "p.csv"
    p.write_text("id,c0,c1,c2,c0\n" + "".join(f"{i},0.1,0.2,0.3,0.4\n" for i in IDS))
    with pytest.raises(PredictionError, match=r"p\.csv: column 'c0' appears more than once"):
        read_predictions(p, ds)
    cols = [pa.array(IDS)] + [pa.array(S[:, k]) for k in range(3)] + [pa.array(S[:, 0])]
    t = pa.Table.from_arrays(cols, names=["id", "c0", "c1", "c2", "c0"])
    pq.write_table(t, tmp_path / "p.parquet")
    with pytest.raises(PredictionError, match=r"p\.parquet: column 'c0' appears more than once"):
        read_predictions(tmp_path / "p.parquet", ds)


def test_parquet_score_vectors_nested_too_deep(tmp_path: Path, ds: Any) -> None:
    nested = [[[float(x)] for x in row] for row in S]
    pq.write_table(pa.table({"id": IDS, "scores": nested}), tmp_path / "p.parquet")
    with pytest.raises(PredictionError, match=r"p\.parquet: score vectors hold list<"):
        read_predictions(tmp_path / "p.parquet", ds)


def test_parquet_uint64_out_of_float_range_names_file_and_column(tmp_path: Path, ds: Any) -> None:
    big = pa.array([2**63 + 5, 1, 1, 2**63 + 6], pa.uint64())
    t = pa.table({"id": IDS, "c0": big, "c1": S[:, 1], "c2": S[:, 2]})
    pq.write_table(t, tmp_path / "p.parquet")
    with pytest.raises(
        PredictionError,
        match=r"p\.parquet: the scores of column 'c0' \(uint64\): cannot be read as float64",
    ):
        read_predictions(tmp_path / "p.parquet", ds)


def test_parquet_binary_ids_that_are_not_utf8(tmp_path: Path, ds: Any) -> None:
    ids = pa.array([b"a", b"b", b"c", b"\xff"], pa.binary())
    pq.write_table(pa.table({"id": ids, "scores": S.tolist()}), tmp_path / "p.parquet")
    with pytest.raises(PredictionError, match=r"p\.parquet: ids \(binary\) are not valid UTF-8"):
        read_predictions(tmp_path / "p.parquet", ds)


def test_npz_ids_bytes_objects_and_floats(tmp_path: Path, ds: Any) -> None:
    np.savez(tmp_path / "bad.npz", scores=S, ids=np.array([b"a", b"b", b"c", b"\xff"]))
    with pytest.raises(PredictionError, match=r"bad\.npz: 'ids'\[3\] b'\\xff' is not UTF-8"):
        read_predictions(tmp_path / "bad.npz", ds)
    np.savez(tmp_path / "ok.npz", scores=S[::-1], ids=np.array([i.encode() for i in IDS[::-1]]))
    np.testing.assert_array_equal(read_predictions(tmp_path / "ok.npz", ds).scores, S)
    np.savez(tmp_path / "f.npz", scores=S, ids=np.arange(4) * 1.0)
    with pytest.raises(PredictionError, match=r"f\.npz: 'ids' has dtype float64"):
        read_predictions(tmp_path / "f.npz", ds)


def test_non_utf8_jsonl_names_file_and_line(tmp_path: Path, ds: Any) -> None:
    p = tmp_path / "p.jsonl"
    rows = [json.dumps({"id": i, "output": "c0"}).encode() for i in IDS]
    rows[2] = b'{"id": "c", "output": "c0\xff"}'
    p.write_bytes(b"\n".join(rows) + b"\n")
    with pytest.raises(PredictionError, match=r"p\.jsonl: line 3: byte 26: not UTF-8 text"):
        read_predictions(p, ds)
    rows[2], rows[0] = rows[0], rows[2]  # the first line, read before pyarrow
    p.write_bytes(b"\n".join(rows) + b"\n")
    with pytest.raises(PredictionError, match=r"p\.jsonl: line 1: byte 26: not UTF-8 text"):
        read_predictions(p, ds)


@pytest.mark.parametrize("damage", ["truncated", "not gzip"])
def test_broken_gzip_jsonl(tmp_path: Path, ds: Any, damage: str) -> None:
    p = tmp_path / "p.jsonl.gz"
    whole = gzip.compress(jsonl_text(_struct_rows()).encode())
    p.write_bytes(whole[:40] if damage == "truncated" else b"not gzip at all")
    with pytest.raises(PredictionError, match=r"p\.jsonl\.gz: not a valid gzip file"):
        read_predictions(p, ds)


def _npy_header(shape: tuple[int, ...]) -> bytes:
    hdr = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}".encode()
    hdr = hdr + b" " * (118 - len(hdr)) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr


def test_npy_header_larger_than_the_file_is_an_error_not_an_allocation(
    tmp_path: Path, ds: Any
) -> None:
    p = tmp_path / "huge.npy"
    p.write_bytes(_npy_header((100_000_000_000, 3)) + b"\x00" * 48)
    with pytest.raises(PredictionError, match=r"huge\.npy: NPY: the header declares shape"):
        read_predictions(p, ds)
    # the same lie inside an NPZ member
    import zipfile

    with zipfile.ZipFile(tmp_path / "huge.npz", "w") as z:
        z.writestr("scores.npy", _npy_header((100_000_000_000, 3)) + b"\x00" * 48)
    with pytest.raises(PredictionError, match=r"huge\.npz: array 'scores': the header declares"):
        read_predictions(tmp_path / "huge.npz", ds)
    # a truncated but honest file says so too
    np.save(tmp_path / "t.npy", S)
    (tmp_path / "t.npy").write_bytes((tmp_path / "t.npy").read_bytes()[:-8])
    with pytest.raises(PredictionError, match=r"t\.npy: .*truncated or corrupt"):
        read_predictions(tmp_path / "t.npy", ds)


@pytest.mark.parametrize("gz", [False, True])
def test_jsonl_with_a_line_over_pyarrows_block_size(tmp_path: Path, gz: bool) -> None:
    ds = make_dataset(Y, taxonomy=TAX, ids=list(IDS))
    rows: list[Any] = [{"id": i, "output": "c0"} for i in IDS]
    rows[2] = {"id": "c", "output": "c1" + " " * 2_100_000}  # ~2.1 MB on one line
    p = write_jsonl(tmp_path / ("p.jsonl.gz" if gz else "p.jsonl"), rows, gz=gz)
    pr = read_predictions(p, ds)
    assert pr.kind == "text" and pr.scored.all()
    assert pr.scores[2, 1] == 1.0 and pr.scores[0, 0] == 1.0


def test_raw_outputs_must_be_strings(ds: Any) -> None:
    from toxeval.predictions import predictions_from_texts

    with pytest.raises(TypeError, match=r"item 0 is int .*np\.asarray"):
        predictions_from_texts([1, 2, 3, 4], ds)  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"item 1 is NoneType .*fill a missing output"):
        predictions_from_texts(["c0", None, "c1", "c2"], ds)  # type: ignore[list-item]


# --------------------------------------------------------------------- compressed dumps


# every compression detect_format looks through, by suffix, as its messages name it
CODEC_NAMES = {".gz": "gzip", ".bz2": "bzip2", ".zst": "zstd", ".lz4": "LZ4 frame"}


def _csv_bytes(sep: str) -> bytes:
    lines = [sep.join(["id", "c0", "c1", "c2"])]
    lines += [sep.join([IDS[i], *(repr(float(v)) for v in S[i])]) for i in (3, 1, 0, 2)]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("sfx", list(CODECS))
@pytest.mark.parametrize("base", ["p.jsonl", "p.ndjson", "p.csv", "p.tsv"])
def test_each_compression_is_read_for_each_text_format(
    tmp_path: Path, ds: Any, base: str, sfx: str
) -> None:
    if base.endswith("sv"):
        data = _csv_bytes("\t" if base.endswith(".tsv") else ",")
    else:
        data = jsonl_text(_struct_rows([2, 0, 3, 1])).encode()
    p = write_compressed(tmp_path / (base + sfx), data)
    pr = read_predictions(p, ds)
    np.testing.assert_array_equal(pr.scores, S)
    assert pr.format == detect_format(p)


@pytest.mark.parametrize("sfx", list(CODECS))
def test_compression_suffix_in_upper_case_and_with_explicit_format(
    tmp_path: Path, ds: Any, sfx: str
) -> None:
    p = write_compressed(
        tmp_path / ("P.JSONL" + sfx.upper()), jsonl_text(_struct_rows([2, 0, 3, 1])).encode()
    )
    np.testing.assert_array_equal(read_predictions(p, ds).scores, S)
    q = write_compressed(tmp_path / ("preds.txt" + sfx), _csv_bytes(","))
    np.testing.assert_array_equal(read_predictions(q, ds, format="csv").scores, S)


@pytest.mark.parametrize("sfx", list(CODECS))
def test_raw_text_with_a_long_line_in_each_compression(tmp_path: Path, ds: Any, sfx: str) -> None:
    rows: list[Any] = [{"id": i, "output": "c0"} for i in IDS]
    rows[2] = {"id": "c", "output": "c1" + " " * 2_100_000}  # over pyarrow's 1 MiB block
    pr = read_predictions(
        write_compressed(tmp_path / ("p.jsonl" + sfx), jsonl_text(rows).encode()), ds
    )
    assert pr.kind == "text" and pr.scored.all()
    assert pr.scores[2, 1] == 1.0 and pr.scores[0, 0] == 1.0


@pytest.mark.parametrize("sfx", list(CODECS))
def test_bad_utf8_in_each_compression_names_the_line(tmp_path: Path, ds: Any, sfx: str) -> None:
    rows = [json.dumps({"id": i, "output": "c0"}).encode() for i in IDS]
    for bad_line in (3, 1):  # after the first line (pyarrow's error), and the first line
        lines = list(rows)
        lines[bad_line - 1] = b'{"id": "c", "output": "c0\xff"}'
        p = write_compressed(tmp_path / f"p{bad_line}.jsonl{sfx}", b"\n".join(lines) + b"\n")
        with pytest.raises(PredictionError, match=rf"line {bad_line}: byte 26: not UTF-8 text"):
            read_predictions(p, ds)


@pytest.mark.parametrize("sfx", list(CODECS))
@pytest.mark.parametrize("base", ["p.jsonl", "p.csv"])
@pytest.mark.parametrize("damage", ["truncated", "not compressed"])
def test_corrupt_compressed_dump_names_the_compression(
    tmp_path: Path, ds: Any, base: str, sfx: str, damage: str
) -> None:
    data = (
        jsonl_text(_struct_rows([2, 0, 3, 1])).encode()
        if base.endswith("jsonl")
        else _csv_bytes(",")
    )
    p = write_compressed(tmp_path / (base + sfx), data)
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
    p = write_compressed(tmp_path / f"p.{fmt}{sfx}", plain.read_bytes())
    assert detect_format(p) == fmt
    with pytest.raises(
        PredictionError, match=rf"{CODEC_NAMES[sfx]}-compressed {fmt.upper()} file cannot be read"
    ):
        read_predictions(p, ds)


# --------------------------------------------- errors name the keyword and the CLI flag


def test_unknown_format_error_names_keyword_and_flag() -> None:
    with pytest.raises(PredictionError, match=r"pass format= \(--format\)"):
        detect_format("preds.txt")


def test_parse_policy_error_names_keyword_and_flag(tmp_path: Path, ds: Any) -> None:
    rows = [{"id": i, "output": "c0"} for i in IDS]
    rows[1]["output"] = "I can't help with that."
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    with pytest.raises(PredictionError) as e:
        read_predictions(p, ds, parse_policy="error")
    msg = str(e.value)
    assert "parse_policy='zeros' or 'exclude'" in msg and "--parse-policy" in msg


@pytest.mark.parametrize("flag", [True, np.True_])
def test_in_memory_ids_refuse_a_bool_among_integers(flag: Any) -> None:
    # numpy turns [True, 2, 3, 4] into the integers [1, 2, 3, 4]: True would join row '1'
    ds = make_dataset(Y, taxonomy=TAX, ids=["1", "2", "3", "4"])
    with pytest.raises(PredictionError, match=r"array: 'ids'\[0\] is True \(bool"):
        predictions_from_array(S, ds, ids=[flag, 2, 3, 4])
    pr = predictions_from_array(S[::-1], ds, ids=[4, 3, 2, 1])  # integers join as text
    np.testing.assert_array_equal(pr.scores, S)


def test_a_dataset_built_with_integer_ids_is_a_clear_error() -> None:
    # the readers turn integer ids into text; a Dataset built by hand must hold text too
    ds = make_dataset(Y, taxonomy=TAX, ids=[1, 2, 3, 4])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"dataset ids must be str: ids\[0\] is 1 \(int\)"):
        predictions_from_array(S[::-1], ds, ids=["4", "3", "2", "1"])


def test_mismatch_error_names_keyword_and_flag(tmp_path: Path, ds: Any) -> None:
    with pytest.raises(PredictionError) as e:
        predictions_from_array(S[:2], ds, ids=IDS[:2])
    msg = str(e.value)
    assert "on_mismatch='drop'" in msg and "--on-mismatch drop" in msg


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
    p = write_jsonl(tmp_path / "p.jsonl", _struct_rows([2, 0, 3, 1]))
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


# ---------------------------------------- parse_policy="error": one error of both types


def test_parse_policy_error_is_a_prediction_error_and_an_unparseable_output_error(
    tmp_path: Path, ds: Any
) -> None:
    texts = ["c0", "spam and eggs", "c1", "c2"]
    rows = [{"id": i, "output": t} for i, t in zip(IDS, texts, strict=True)]
    p = write_jsonl(tmp_path / "p.jsonl", rows)
    for call in (
        lambda: read_predictions(p, ds, parse_policy="error"),
        lambda: predictions_from_texts(texts, ds, parse_policy="error"),
        lambda: toxeval.score(texts, ds, parse_policy="error"),
    ):
        with pytest.raises(UnparseableOutputError, match=r"1 of 4 outputs are unparseable") as e:
            call()
        assert isinstance(e.value, PredictionError)


# --------------------------------------------------------------- predictions_from_texts


def test_predictions_from_texts_is_public_and_documented(ds: Any) -> None:
    assert "predictions_from_texts" in predictions.__all__
    doc_path = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"
    if not doc_path.is_file():  # tests run against an installed package, away from the repo
        pytest.skip("docs/python-api.md is not beside the tests")
    doc = doc_path.read_text()
    assert "### `predictions_from_texts`" in doc
    pr = predictions_from_texts(["c0", "c1", "none", "c2"], ds, source="run")
    counts = {"ok": 3, "partial": 0, "empty": 1, "unparseable": 0}
    assert pr.kind == "text" and pr.source == "run" and pr.parse_counts == counts


# ------------------------------------------------ choice parameters typed with Literals


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
