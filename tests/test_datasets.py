"""Dataset schema readers, label forms, gzipped datasets, annotator rules, registry,
OpenAI reader, demo set, and options rejected where they cannot apply."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import jsonl_text, write_compressed, write_csv, write_jsonl
from toxeval.datasets import (
    DatasetError,
    list_datasets,
    load_dataset,
    read_openai_moderation,
)
from toxeval.taxonomy import load_taxonomy

TAX3 = """name = "three"
version = "1"
[[category]]
id = "a"
name = "Alpha"
aliases = ["alpha cat"]
[[category]]
id = "b"
name = "Beta"
[[category]]
id = "c"
name = "Gamma"
"""

# expected y_true / mask for the canonical rows below
Y = np.array([[1, 0, 0], [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 1]], dtype=np.int8)
M = np.array(
    [[1, 1, 1], [1, 1, 1], [1, 0, 1], [1, 1, 0], [1, 1, 1]],
    dtype=bool,
)
IDS = ["r1", "r2", "r3", "r4", "r5"]
TEXTS = ["one", "two", "three, with a comma", 'four "quoted"', "five"]


@pytest.fixture
def tax3(tmp_path: Path) -> Path:
    p = tmp_path / "three.toml"
    p.write_text(TAX3)
    return p


def _check(ds: Any) -> None:
    assert ds.ids == IDS
    assert ds.texts == TEXTS
    np.testing.assert_array_equal(ds.mask, M)
    np.testing.assert_array_equal(ds.y_true, Y)
    assert ds.y_true.dtype == np.int8 and ds.mask.dtype == bool
    assert len(ds.sha256) == 64


MIXED = [
    {"id": "r1", "text": TEXTS[0], "labels": ["a"]},
    {"id": "r2", "text": TEXTS[1], "labels": []},
    {"id": "r3", "text": TEXTS[2], "labels": {"a": 1, "b": None, "c": 0}},
    {"id": "r4", "text": TEXTS[3], "labels": [0, 1, -1]},
    {"id": "r5", "text": TEXTS[4], "labels": ["b", "Gamma"]},
]
OBJECTS = [
    {"id": "r1", "text": TEXTS[0], "labels": {"a": 1, "b": 0, "c": 0}},
    {"id": "r2", "text": TEXTS[1], "labels": {"a": 0, "b": 0, "c": 0}},
    {"id": "r3", "text": TEXTS[2], "labels": {"a": 1, "b": None, "c": 0}},
    {"id": "r4", "text": TEXTS[3], "labels": {"a": 0, "b": 1}},  # absent key = unknown
    {"id": "r5", "text": TEXTS[4], "labels": {"a": 0, "b": 1, "c": 1}},
]
VECTORS = [
    {"id": "r1", "text": TEXTS[0], "labels": [1, 0, 0]},
    {"id": "r2", "text": TEXTS[1], "labels": [0, 0, 0]},
    {"id": "r3", "text": TEXTS[2], "labels": [1, None, 0]},
    {"id": "r4", "text": TEXTS[3], "labels": [0, 1, -1]},
    {"id": "r5", "text": TEXTS[4], "labels": [0, 1, 1]},
]
COLUMNS = [
    {
        "id": f"r{i + 1}",
        "text": TEXTS[i],
        **{c: (None if not M[i, j] else int(Y[i, j])) for j, c in enumerate("abc")},
    }
    for i in range(5)
]


@pytest.mark.parametrize(
    "rows", [MIXED, OBJECTS, VECTORS, COLUMNS], ids=["mixed", "object", "vector", "columns"]
)
@pytest.mark.parametrize("gz", [False, True])
def test_jsonl_label_forms_round_trip(tmp_path: Path, tax3: Path, rows: Any, gz: bool) -> None:
    p = write_jsonl(tmp_path / ("d.jsonl.gz" if gz else "d.jsonl"), rows, gz=gz)
    ds = load_dataset(p, taxonomy=tax3)
    _check(ds)
    assert ds.name == "d" and ds.level == "prompt" and ds.soft is None


def test_jsonl_list_form_fast_path(tmp_path: Path, tax3: Path) -> None:
    rows = [{"id": i, "text": "t", "labels": ["a", "c"] if i % 3 else []} for i in range(1000)]
    ds = load_dataset(write_jsonl(tmp_path / "big.jsonl", rows), taxonomy=tax3)
    assert ds.ids[:2] == ["0", "1"]
    assert ds.mask.all()
    np.testing.assert_array_equal(ds.y_true.sum(0), [666, 0, 666])


def test_csv_labels_json_text(tmp_path: Path, tax3: Path) -> None:
    p = write_csv(
        tmp_path / "d.csv",
        ["id", "text", "labels"],
        [[r["id"], r["text"], json.dumps(r["labels"])] for r in MIXED],
    )
    _check(load_dataset(p, taxonomy=tax3))


def test_csv_per_category_columns(tmp_path: Path, tax3: Path) -> None:
    rows = [[r["id"], r["text"], *("" if r[c] is None else r[c] for c in "abc")] for r in COLUMNS]
    _check(
        load_dataset(
            write_csv(tmp_path / "d.csv", ["id", "text", "a", "b", "c"], rows), taxonomy=tax3
        )
    )


def test_csv_semicolon_ids(tmp_path: Path, tax3: Path) -> None:
    rows = [["r1", "x", "a"], ["r2", "y", ""], ["r3", "z", "b; c"]]
    ds = load_dataset(write_csv(tmp_path / "d.csv", ["id", "text", "labels"], rows), taxonomy=tax3)
    np.testing.assert_array_equal(ds.y_true, [[1, 0, 0], [0, 0, 0], [0, 1, 1]])
    assert ds.mask.all()


@pytest.mark.parametrize("form", ["columns", "struct", "vector", "list"])
def test_parquet_round_trip(tmp_path: Path, tax3: Path, form: str) -> None:
    base = {"id": IDS, "text": TEXTS}
    if form == "columns":
        cols = {c: [r[c] for r in COLUMNS] for c in "abc"}
        table = pa.table({**base, **cols})
    elif form == "struct":
        full = [
            {c: (None if not M[i, j] else int(Y[i, j])) for j, c in enumerate("abc")}
            for i in range(5)
        ]
        table = pa.table({**base, "labels": full})
    elif form == "vector":
        table = pa.table({**base, "labels": [r["labels"] for r in VECTORS]})
    else:
        p = tmp_path / "d.parquet"
        pq.write_table(pa.table({"id": ["x", "y"], "text": ["1", "2"], "labels": [["a"], []]}), p)
        ds = load_dataset(p, taxonomy=tax3)
        np.testing.assert_array_equal(ds.y_true, [[1, 0, 0], [0, 0, 0]])
        assert ds.mask.all()
        return
    p = tmp_path / "d.parquet"
    pq.write_table(table, p)
    _check(load_dataset(p, taxonomy=tax3))


def test_response_level(tmp_path: Path, tax3: Path) -> None:
    rows = [{"id": "1", "text": "q", "response": "r", "labels": ["a"]}]
    ds = load_dataset(write_jsonl(tmp_path / "r.jsonl", rows), taxonomy=tax3)
    assert ds.level == "response" and ds.responses == ["r"]


# ------------------------------------------------------------------ bad inputs


def _bad(tmp_path: Path, tax3: Path, lines: list[str], name: str = "bad.jsonl") -> str:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(p, taxonomy=tax3)
    return str(e.value)


GOOD = '{"id": "1", "text": "ok", "labels": ["a"]}'


def test_malformed_json_line(tmp_path: Path, tax3: Path) -> None:
    msg = _bad(tmp_path, tax3, [GOOD, '{"id": "2", "text": "x", "labels": [}'])
    assert "bad.jsonl: line 2: malformed JSON" in msg


def test_unknown_category_names_it_and_known_ids(tmp_path: Path, tax3: Path) -> None:
    msg = _bad(
        tmp_path,
        tax3,
        [GOOD, GOOD.replace('"1"', '"2"'), '{"id": "3", "text": "x", "labels": ["zeta"]}'],
    )
    assert "line 3" in msg and "'zeta'" in msg and "known ids: a, b, c" in msg


def test_wrong_vector_length(tmp_path: Path, tax3: Path) -> None:
    msg = _bad(tmp_path, tax3, ['{"id": "1", "text": "x", "labels": [1, 0]}'])
    assert "line 1" in msg and "expected K = 3" in msg


def test_duplicate_ids(tmp_path: Path, tax3: Path) -> None:
    msg = _bad(tmp_path, tax3, [GOOD, GOOD])
    assert "line 2: duplicate id '1'" in msg and "line 1" in msg


def test_empty_file(tmp_path: Path, tax3: Path) -> None:
    assert "empty" in _bad(tmp_path, tax3, [""])


@pytest.mark.parametrize(
    ("row", "what"),
    [
        ('{"text": "x", "labels": []}', "missing 'id'"),
        ('{"id": "1", "labels": []}', "missing 'text'"),
        ('{"id": "1", "text": "x"}', "no labels"),
        ('{"id": "1", "text": "x", "labels": {"a": 2}}', "must be 1, 0, -1 or null"),
        ('{"id": "1", "text": "x", "labels": ["a", 1]}', "mix"),
    ],
)
def test_bad_rows(tmp_path: Path, tax3: Path, row: str, what: str) -> None:
    msg = _bad(tmp_path, tax3, [GOOD.replace('"1"', '"0"'), row])
    assert "line 2" in msg and what in msg


def test_blank_lines_keep_line_numbers(tmp_path: Path, tax3: Path) -> None:
    msg = _bad(tmp_path, tax3, [GOOD, "", '{"id": "2", "text": "x", "labels": ["nope"]}'])
    assert "line 3" in msg


def test_csv_bad_cell_names_line(tmp_path: Path, tax3: Path) -> None:
    p = write_csv(
        tmp_path / "d.csv",
        ["id", "text", "a", "b"],
        [["1", "x", "1", "0"], ["2", "y", "maybe", "0"]],
    )
    with pytest.raises(DatasetError, match=r"line 3: column 'a'.*'maybe'"):
        load_dataset(p, taxonomy=tax3)


def test_csv_missing_text_column(tmp_path: Path, tax3: Path) -> None:
    p = write_csv(tmp_path / "d.csv", ["id", "labels"], [["1", "a"]])
    with pytest.raises(DatasetError, match="missing column 'text'"):
        load_dataset(p, taxonomy=tax3)


def test_unknown_extension(tmp_path: Path) -> None:
    p = tmp_path / "d.txt"
    p.write_text("x")
    with pytest.raises(
        DatasetError, match=r"d\.txt: cannot tell the dataset format from the file name"
    ):
        load_dataset(p)


# ------------------------------------------------------------- annotator rules


def test_annotator_rules_and_soft_labels(tmp_path: Path, tax3: Path) -> None:
    rows = [
        {"id": "1", "text": "x", "annotations": [["a"], ["a", "b"], ["b"], []]},
        {"id": "2", "text": "y", "annotations": [["c"], ["c"], ["a", "c"]]},
        # labels win for the targets; annotations only give soft labels
        {"id": "3", "text": "z", "labels": ["b"], "annotations": [["a"], ["a"], ["a"]]},
        {"id": "4", "text": "w", "labels": ["c"]},
    ]
    p = write_jsonl(tmp_path / "ann.jsonl", rows)
    maj = load_dataset(p, taxonomy=tax3)
    np.testing.assert_array_equal(maj.y_true, [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 1]])
    uni = load_dataset(p, taxonomy=tax3, rule="union")
    np.testing.assert_array_equal(uni.y_true, [[1, 1, 0], [1, 0, 1], [0, 1, 0], [0, 0, 1]])
    at2 = load_dataset(p, taxonomy=tax3, rule="at_least", min_annotators=2)
    np.testing.assert_array_equal(at2.y_true, [[1, 1, 0], [0, 0, 1], [0, 1, 0], [0, 0, 1]])
    assert maj.soft is not None and maj.n_annotators is not None
    np.testing.assert_allclose(maj.soft[0], [0.5, 0.5, 0.0])
    np.testing.assert_allclose(maj.soft[1], [1 / 3, 0.0, 1.0])
    np.testing.assert_allclose(maj.soft[2], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(maj.soft[3], [0.0, 0.0, 1.0])  # no annotators: the hard label
    np.testing.assert_array_equal(maj.n_annotators, [4, 3, 3, 0])
    assert maj.mask.all()


def test_bad_rule_and_min_annotators() -> None:
    with pytest.raises(DatasetError, match="unknown annotator rule"):
        load_dataset(rule="mean")  # type: ignore[arg-type]
    with pytest.raises(DatasetError, match="min_annotators"):
        load_dataset(rule="at_least", min_annotators=0)


def test_label_map_codes_and_coverage(tmp_path: Path) -> None:
    rows = [
        {"id": "1", "text": "x", "labels": ["S10"]},
        {"id": "2", "text": "y", "labels": []},
        {"id": "3", "text": "z", "labels": {"S1": 1, "S7": None}},
    ]
    ds = load_dataset(write_jsonl(tmp_path / "lg.jsonl", rows), label_map="llama-guard-3")
    tax = ds.taxonomy
    assert ds.y_true[0, tax.index("hate")] == 1
    # Llama Guard has no profanity code: unknown, never a silent negative
    assert not ds.mask[:, tax.index("profanity")].any()
    assert ds.mask[1, tax.index("hate")]
    assert ds.y_true[2, tax.index("violence")] == 1 and not ds.mask[2, tax.index("privacy")]
    with pytest.raises(DatasetError, match="unknown label code 'S99'"):
        load_dataset(
            write_jsonl(tmp_path / "lg2.jsonl", [{"id": "1", "text": "x", "labels": ["S99"]}]),
            label_map="llama-guard-3",
        )


# -------------------------------------------------------------------- registry


def test_registry_missing_lists_every_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = tmp_path / "env"
    env.mkdir()
    monkeypatch.setenv("TOXEVAL_DATA_DIR", str(env))
    with pytest.raises(DatasetError) as e:
        load_dataset("H-X-MLL", data_dir=tmp_path)
    msg = str(e.value)
    for ext in (".jsonl", ".jsonl.gz", ".csv", ".parquet"):
        assert str(tmp_path / f"H-X-MLL{ext}") in msg
        assert str(env / f"H-X-MLL{ext}") in msg
    assert "docs/datasets.md" in msg and "labels" in msg


def test_registry_finds_file_case_insensitively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOXEVAL_DATA_DIR", str(tmp_path))
    write_jsonl(
        tmp_path / "r-a-mll.jsonl", [{"id": "1", "text": "q", "response": "r", "labels": ["hate"]}]
    )
    ds = load_dataset("R-A-MLL")
    assert ds.name == "R-A-MLL" and ds.level == "response"
    infos = {i.name: i for i in list_datasets()}
    assert infos["R-A-MLL"].path is not None and infos["Q-A-MLL"].path is None
    assert infos["Q-A-MLL"].looked_at and infos["demo"].path == "built-in:demo"


# ------------------------------------------------------------- OpenAI moderation


OPENAI_COUNTS = {
    "S": (237, 747),
    "H": (162, 609),
    "V": (94, 1356),
    "HR": (76, 1368),
    "SH": (51, 1396),
    "S3": (85, 909),
    "H2": (41, 720),
    "V2": (24, 1423),
}


def test_openai_moderation_counts(shared_data: Path) -> None:
    path = shared_data / "openai-moderation/samples-1680.jsonl.gz"
    ds = read_openai_moderation(path)
    assert len(ds) == 1680 and ds.taxonomy.name == "openai-moderation-8"
    for key, (pos, neg) in OPENAI_COUNTS.items():
        j = ds.taxonomy.index(key.lower())
        assert int((ds.y_true[:, j] == 1).sum()) == pos, key
        assert int((ds.mask[:, j] & (ds.y_true[:, j] == 0)).sum()) == neg, key
    assert (~ds.mask).any(axis=1).mean() > 0.4  # about half the rows lack some keys
    via_registry = load_dataset("openai-moderation", data_dir=shared_data)
    np.testing.assert_array_equal(via_registry.mask, ds.mask)
    mapped = read_openai_moderation(path, taxonomy="toxeval-15")
    assert not mapped.mask[:, mapped.taxonomy.index("fraud")].any()
    assert int(mapped.y_true[:, mapped.taxonomy.index("sexual_minors")].sum()) == 85


def test_openai_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        read_openai_moderation(tmp_path / "samples-1680.jsonl.gz")


# -------------------------------------------------------------------- demo set


def test_demo_set_constraints() -> None:
    ds = load_dataset()
    assert ds.name == "demo" and ds.source == "built-in:demo"
    assert ds.taxonomy.ids == load_taxonomy("toxeval-15").ids
    n = len(ds)
    assert n >= 300
    assert (ds.y_true.sum(axis=0) >= 15).all(), dict(
        zip(ds.taxonomy.ids, ds.y_true.sum(0), strict=True)
    )
    benign = (ds.y_true.sum(axis=1) == 0) & ds.mask.all(axis=1)
    assert benign.mean() >= 0.30
    toxic = ds.y_true.sum(axis=1) > 0
    assert (ds.y_true[toxic].sum(axis=1) >= 2).mean() >= 0.25
    assert ds.n_annotators is not None and ds.soft is not None
    annotated = ds.n_annotators > 0
    assert annotated.sum() >= 80
    assert set(ds.n_annotators[annotated]) <= {3, 4, 5}
    disagreement = ((ds.soft > 0) & (ds.soft < 1)).any(axis=1)
    assert disagreement.sum() >= 20
    assert (~ds.mask).any()  # partial labels exercise masks
    assert len(set(ds.texts)) == n
    assert not (load_dataset(rule="union").y_true == ds.y_true).all()


def test_annotations_column_wise_path(tmp_path: Path, tax3: Path) -> None:
    # every row has annotations and no labels: the pyarrow path; a repeated id in one
    # annotator's list counts once
    rows = [
        {"id": "1", "text": "x", "annotations": [["a"], ["a", "b"], ["b"], []]},
        {"id": "2", "text": "y", "annotations": [["c"], ["c"], ["a", "c", "c"]]},
    ]
    ds = load_dataset(write_jsonl(tmp_path / "ann.jsonl", rows), taxonomy=tax3)
    np.testing.assert_array_equal(ds.y_true, [[0, 0, 0], [0, 0, 1]])
    assert ds.soft is not None
    np.testing.assert_allclose(ds.soft, [[0.5, 0.5, 0.0], [1 / 3, 0.0, 1.0]])
    np.testing.assert_array_equal(ds.n_annotators, [4, 3])


# ------------------------------------------------ Arrow-backed ids and texts (StringColumn)


def _parquet_dataset(path: Path, ids: list[str], texts: list[str] | None = None) -> Path:
    labels = [["a"] if i % 2 else [] for i in range(len(ids))]
    texts = texts if texts is not None else [f"text {i}" for i in range(len(ids))]
    pq.write_table(pa.table({"id": ids, "text": texts, "labels": labels}), path)
    return path


def test_parquet_ids_and_texts_stay_arrow_but_act_as_lists(tmp_path: Path, tax3: Path) -> None:
    import pickle

    from toxeval.datasets import StringColumn

    ds = load_dataset(_parquet_dataset(tmp_path / "d.parquet", IDS, TEXTS), taxonomy=tax3)
    assert isinstance(ds.ids, StringColumn) and isinstance(ds.texts, StringColumn)
    assert ds.ids.arrow.to_pylist() == IDS  # the Arrow array itself, for the join
    assert ds.texts == TEXTS and ds.ids == IDS and ds.ids == tuple(IDS)
    assert ds.ids != IDS[:-1] and ds.ids != [*IDS[:-1], "other"]
    assert ds.ids[0] == "r1" and ds.ids[-1] == "r5" and ds.texts[2] == TEXTS[2]
    with pytest.raises(IndexError):
        ds.ids[5]
    assert ds.ids[1:3] == ["r2", "r3"] and ds.ids[::-1] == IDS[::-1]
    assert list(ds.texts) == TEXTS and len(ds.texts) == 5
    assert "r3" in ds.ids and "r9" not in ds.ids and 3 not in ds.ids
    assert ds.ids.tolist() == IDS and ds.ids.index("r4") == 3
    assert "r1" in repr(ds.ids) and "length=5" in repr(ds.ids)
    again = pickle.loads(pickle.dumps(ds))
    assert again.ids == IDS and again.texts == TEXTS and again.ids == ds.ids
    # many single lookups switch to a cached list without changing the answers
    assert [ds.ids[i % 5] for i in range(200)] == [IDS[i % 5] for i in range(200)]


def test_response_column_is_arrow_backed_too(tmp_path: Path, tax3: Path) -> None:
    p = tmp_path / "r.parquet"
    pq.write_table(
        pa.table(
            {
                "id": ["x", "y"],
                "text": ["p1", "p2"],
                "response": ["r1", "r2"],
                "labels": [[], ["a"]],
            }
        ),
        p,
    )
    ds = load_dataset(p, taxonomy=tax3)
    assert ds.level == "response" and ds.responses == ["r1", "r2"]


ID_SETS = {
    "fixed width": [f"item-{i:05d}" for i in range(300)],
    "eight bytes": [f"i{i:07d}" for i in range(300)],
    "variable": [str(i) * (1 + i % 7) for i in range(300)],
    "unicode": [f"ü-{i}-é" for i in range(300)],
    "nul suffix": ["a", "a\x00", "a\x00\x00", "b", ""],
    "long": ["x" * 70 + str(i) for i in range(50)],
}


@pytest.mark.parametrize("name", sorted(ID_SETS))
@pytest.mark.parametrize("collide", [False, True])
def test_id_uniqueness_by_sorted_hashes(
    tmp_path: Path, tax3: Path, name: str, collide: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toxeval.ids as id_module

    if collide:  # every hash equal: the exact Arrow check must decide
        monkeypatch.setattr(id_module, "_MIX", (np.uint64(0), np.uint64(0), np.uint64(31)))
    ids = ID_SETS[name]
    ds = load_dataset(_parquet_dataset(tmp_path / "ok.parquet", ids), taxonomy=tax3)
    assert ds.ids == ids
    dup = [*ids, ids[len(ids) // 2]]
    first = len(ids) // 2 + 1
    with pytest.raises(
        DatasetError, match=rf"row {len(dup)}: duplicate id .*first seen at row {first}\)"
    ):
        load_dataset(_parquet_dataset(tmp_path / "dup.parquet", dup), taxonomy=tax3)


def test_id_index_confirms_bytes() -> None:
    from toxeval.ids import id_index

    a = id_index(pa.array(["ab", "a", "abc"]))
    b = id_index(pa.array(["abc", "ab", "a\x00"]))
    assert a is not None and b is not None
    rows = np.arange(3)
    assert a.same(np.array([0, 1, 2]), b, np.array([1, 2, 0])) is False  # "a" != "a\0"
    assert a.same(np.array([0, 2]), b, np.array([1, 0])) is True
    assert a.same(rows, a, rows) is True
    assert id_index(pa.array(["x" * 65])) is None  # long ids: Arrow's hash tables


def test_id_index_of_a_sliced_array() -> None:
    from toxeval.ids import id_index

    whole = pa.array(["zero", "one", "two", "three", "four"])
    part = id_index(whole.slice(2))
    assert part is not None
    assert sorted(part.rows.tolist()) == [0, 1, 2]
    # row r of the slice holds whole[r + 2]
    want = id_index(pa.array(["two", "three", "four"]))
    assert want is not None
    assert part.same(np.arange(3), want, np.arange(3))
    np.testing.assert_array_equal(part.hashes, want.hashes)


def test_parquet_label_lists_read_as_dictionary_codes(tmp_path: Path, tax3: Path) -> None:
    """Label lists come from Parquet as dictionary codes (one dictionary per row group);
    the result equals the JSONL reading of the same rows, aliases included."""
    rng = np.random.default_rng(4)
    names = ["a", "b", "c", "alpha cat", "Gamma"]
    rows = [
        {
            "id": f"r{i}",
            "text": f"t{i}",
            "labels": sorted({names[j] for j in rng.integers(0, 5, rng.integers(0, 4))}),
        }
        for i in range(50)
    ]
    p = tmp_path / "d.parquet"
    want = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows), taxonomy=tax3)
    for group in (100, 7):  # one row group (dictionary codes), several (strings)
        pq.write_table(pa.Table.from_pylist(rows), p, row_group_size=group)
        ds = load_dataset(p, taxonomy=tax3)
        np.testing.assert_array_equal(ds.y_true, want.y_true)
        np.testing.assert_array_equal(ds.mask, want.mask)
    # an unknown category in the file is still named with its row
    rows[30]["labels"] = ["zeta"]
    for group in (100, 7):
        pq.write_table(pa.Table.from_pylist(rows), p, row_group_size=group)
        with pytest.raises(DatasetError, match=r"row 31: unknown category 'zeta'"):
            load_dataset(p, taxonomy=tax3)


def test_label_codes_ignore_unused_dictionary_values(tax3: Path) -> None:
    from toxeval.datasets.labels import LabelReader as _Labels
    from toxeval.datasets.tables import NotColumnar as _NotColumnar
    from toxeval.datasets.tables import _list_of_codes

    labels = _Labels(load_taxonomy(tax3), None)
    values = pa.DictionaryArray.from_arrays(pa.array([0, 2, 0]), pa.array(["a", "zeta", "c"]))
    lists = pa.ListArray.from_arrays(pa.array([0, 1, 1, 3]), values)
    rows, cols = _list_of_codes(lists, labels)  # "zeta" is in the dictionary, in no row
    assert rows.tolist() == [0, 2, 2] and cols.tolist() == [0, 2, 0]
    used = pa.ListArray.from_arrays(
        pa.array([0, 1]), pa.DictionaryArray.from_arrays(pa.array([1]), pa.array(["a", "zeta"]))
    )
    with pytest.raises(_NotColumnar):
        _list_of_codes(used, labels)


# ----------------------------------------------------------- malformed input, nothing dropped


def _raises(path: Path, tax3: Path, match: str) -> None:
    with pytest.raises(DatasetError, match=match):
        load_dataset(path, taxonomy=tax3)


def test_duplicated_column_names_are_an_error(tmp_path: Path, tax3: Path) -> None:
    p = tmp_path / "d.csv"
    p.write_text("id,text,labels,labels\nr1,x,a,b\nr2,y,b,a\n")
    _raises(p, tax3, r"d\.csv: column 'labels' appears more than once")
    t = pa.Table.from_arrays(
        [pa.array(["r1", "r2"]), pa.array(["x", "y"]), pa.array([1, 0]), pa.array([0, 1])],
        names=["id", "text", "a", "a"],
    )
    pq.write_table(t, tmp_path / "d.parquet")
    _raises(tmp_path / "d.parquet", tax3, r"d\.parquet: column 'a' appears more than once")


def test_null_annotator_list_is_a_dataset_error(tmp_path: Path, tax3: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_text(
        '{"id": "r1", "text": "x", "annotations": [null, ["a"]]}\n'
        '{"id": "r2", "text": "y", "annotations": [["b"]]}\n'
    )
    _raises(p, tax3, r"d\.jsonl: line 1: annotations must be a list of per-annotator label lists")
    t = pa.table({"id": ["r1", "r2"], "text": ["x", "y"], "annotations": [[None, ["a"]], [["b"]]]})
    pq.write_table(t, tmp_path / "d.parquet")
    _raises(tmp_path / "d.parquet", tax3, r"d\.parquet: row 1: annotations must be a list")


def test_non_utf8_csv_text_names_the_line(tmp_path: Path, tax3: Path) -> None:
    # as the prediction reader names it (pyarrow's own message names neither)
    p = tmp_path / "d.csv"
    p.write_bytes(b"id,text,labels\nr1,fine,a\nr2,caf\xe9,b\n")
    _raises(p, tax3, r"d\.csv: line 3: byte 7: not UTF-8 text \(invalid continuation byte\)")


def test_non_utf8_jsonl_text_names_the_line(tmp_path: Path, tax3: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_bytes(
        b'{"id": "r1", "text": "fine", "labels": ["a"]}\n'
        b'{"id": "r2", "text": "x\xff", "labels": ["b"]}\n'
    )
    _raises(p, tax3, r"d\.jsonl: line 2: byte 24: not UTF-8 text \(invalid start byte\)")


def test_csv_ids_and_texts_are_read_exactly_as_written(tmp_path: Path, tax3: Path) -> None:
    p = tmp_path / "d.csv"
    p.write_text(
        "id,text,labels\n001,007,a\n002,1.50,b\n"
        "12345678901234567890,1e3,\n12345678901234567891,true,a;b\n"
    )
    ds = load_dataset(p, taxonomy=tax3)
    assert list(ds.ids) == ["001", "002", "12345678901234567890", "12345678901234567891"]
    assert list(ds.texts) == ["007", "1.50", "1e3", "true"]
    np.testing.assert_array_equal(ds.y_true, [[1, 0, 0], [0, 1, 0], [0, 0, 0], [1, 1, 0]])
    # per-category cells may still be written as numbers
    q = write_csv(tmp_path / "c.csv", ["id", "text", "a", "b", "c"], [["01", "x", "1.0", 0, ""]])
    ds = load_dataset(q, taxonomy=tax3)
    assert list(ds.ids) == ["01"]
    np.testing.assert_array_equal(ds.mask, [[True, True, False]])


def test_csv_empty_id_cell_is_missing(tmp_path: Path, tax3: Path) -> None:
    p = tmp_path / "d.csv"
    p.write_text("id,text,labels\nr1,x,a\n,y,b\n")
    _raises(p, tax3, r"d\.csv: line 3: missing 'id'")


def test_duplicate_keys_in_a_jsonl_row_are_an_error(tmp_path: Path, tax3: Path) -> None:
    msg = _bad(tmp_path, tax3, [GOOD, '{"id": "2", "id": "3", "text": "x", "labels": ["a"]}'])
    assert "line 2: key 'id' is specified twice" in msg
    msg = _bad(tmp_path, tax3, ['{"id": "2", "text": "x", "labels": {"a": 1, "a": 0}}'])
    assert "line 1: key 'a' is specified twice" in msg


def test_misspelt_per_category_column_is_an_error_with_a_suggestion(
    tmp_path: Path, tax3: Path
) -> None:
    p = write_csv(tmp_path / "d.csv", ["id", "text", "a", "b", "gamme"], [["r1", "x", 1, 0, 1]])
    _raises(p, tax3, r"d\.csv: column 'gamme' is not a category .*did you mean 'c'\?")
    rows = [{"id": "r1", "text": "x", "a": 1, "b": 0, "Gama": 1}]
    _raises(
        write_jsonl(tmp_path / "d.jsonl", rows), tax3, r"line 1: field 'Gama' .*did you mean 'c'"
    )
    t = pa.table({"id": ["r1"], "text": ["x"], "a": [1], "betta": [0]})
    pq.write_table(t, tmp_path / "d.parquet")
    _raises(tmp_path / "d.parquet", tax3, r"column 'betta' .*did you mean 'b'")


def test_ignored_fields_are_listed_not_dropped_silently(tmp_path: Path, tax3: Path) -> None:
    # documented metadata is fine and still ignored, even when close to a category name
    # ("Beta" vs the documented "meta"), but the dataset says what it ignored
    p = write_csv(
        tmp_path / "d.csv",
        ["id", "text", "a", "b", "c", "source", "meta", "Unnamed: 0"],
        [["r1", "x", 1, 0, 1, "web", "m", 0], ["r2", "y", 0, 1, 0, "web", "m", 1]],
    )
    ds = load_dataset(p, taxonomy=tax3)
    assert ds.ignored_fields == ("source", "meta", "Unnamed: 0")
    # per-category fields beside 'labels' are not used: listed too (JSONL, both paths)
    rows = [{"id": "r1", "text": "x", "labels": ["a"], "b": 1, "lang": "en"}]
    ds = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows), taxonomy=tax3)
    np.testing.assert_array_equal(ds.y_true, [[1, 0, 0]])
    assert ds.ignored_fields == ("b", "lang")
    rows.append({"id": "r2", "text": "y", "labels": {"a": 1}, "gamme": 0})
    ds = load_dataset(write_jsonl(tmp_path / "e.jsonl", rows), taxonomy=tax3)
    assert ds.ignored_fields == ("b", "lang", "gamme")
    from toxeval.scoring import score

    res = score(np.asarray(ds.y_true, dtype=float), ds)
    assert any("'b', 'lang', 'gamme'" in n for n in res.notes)


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_line_reader_keeps_unicode_line_separators_inside_strings(
    tmp_path: Path, tax3: Path, eol: str
) -> None:
    # JSON allows U+2028, U+2029 and U+0085 raw inside a string; only "\n" ends a row.
    # The blank line and the mixed label forms send the file to the line-by-line reader.
    texts = ["a\u2028b", "c\u2029d\u0085e"]
    rows = [
        json.dumps({"id": "r1", "text": texts[0], "labels": ["a"]}, ensure_ascii=False),
        "",
        json.dumps({"id": "r2", "text": texts[1], "labels": {"b": 1}}, ensure_ascii=False),
    ]
    p = tmp_path / "d.jsonl"
    p.write_bytes((eol.join(rows) + eol).encode())
    ds = load_dataset(p, taxonomy=tax3)
    assert ds.ids == ["r1", "r2"]
    assert ds.texts == texts
    np.testing.assert_array_equal(ds.y_true, [[1, 0, 0], [0, 1, 0]])
    # line numbers still count "\n" only
    p.write_bytes(
        (eol.join([*rows, '{"id": "r3", "text": "x\u2028", "labels": ["nope"]}']) + eol).encode()
    )
    with pytest.raises(DatasetError, match="line 4"):
        load_dataset(p, taxonomy=tax3)


# ------------------------------------------------- one category named twice in a row


@pytest.mark.parametrize(
    "labels",
    [
        {"a": 0, "alpha cat": 1, "b": 0, "c": 0},  # an id and its alias
        {"Alpha": 1, "alpha": 0, "b": 0, "c": 0},  # two spellings of one name
        {"a": None, "Alpha": 1, "b": 0, "c": 0},  # unknown and known
    ],
)
@pytest.mark.parametrize("form", ["object", "columns", "csv", "parquet"])
def test_conflicting_labels_for_one_category_are_rejected(
    tmp_path: Path, tax3: Path, labels: dict[str, Any], form: str
) -> None:
    keys = [k for k in labels if k not in ("b", "c")]
    rows = [
        {"id": "r1", "text": "one", **({"labels": dict.fromkeys(labels, 0)})},
        {"id": "r2", "text": "two", "labels": labels},
    ]
    if form != "object":
        rows = [{"id": r["id"], "text": r["text"], **r["labels"]} for r in rows]
    if form == "csv":
        path = tmp_path / "ds.csv"
        header = list(rows[0])
        lines = [",".join(header)] + [
            ",".join("" if r[h] is None else str(r[h]) for h in header) for r in rows
        ]
        path.write_text("\n".join(lines) + "\n")
    elif form == "parquet":
        path = tmp_path / "ds.parquet"
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path = write_jsonl(tmp_path / "ds.jsonl", rows)
    with pytest.raises(DatasetError) as e:
        load_dataset(path, taxonomy=tax3)
    msg = str(e.value)
    unit = "row" if form == "parquet" else "line"
    line = 2 if form != "csv" else 3
    assert f"{unit} {line}:" in msg
    assert all(repr(k) in msg for k in keys), msg
    assert "category 'a'" in msg


def test_same_label_under_id_and_alias_is_accepted(tmp_path: Path, tax3: Path) -> None:
    rows = [
        {"id": "r1", "text": "one", "labels": {"a": 1, "alpha cat": 1, "b": 0, "c": 0}},
        {"id": "r2", "text": "two", "labels": {"a": 0, "Alpha": 0, "b": 1, "c": None}},
    ]
    ds = load_dataset(write_jsonl(tmp_path / "ds.jsonl", rows), taxonomy=tax3)
    assert ds.y_true.tolist() == [[1, 0, 0], [0, 1, 0]]
    assert ds.mask.tolist() == [[True, True, True], [True, True, False]]


# ------------------------------------------------------------------ compressed datasets


def _dataset_rows() -> list[dict[str, Any]]:
    return [
        {"id": "r1", "text": "x", "labels": ["hate"]},
        {"id": "r2", "text": "y", "labels": []},
    ]


def _dataset_csv() -> bytes:
    return b'id,text,labels\nr1,x,hate\nr2,y,""\n'


@pytest.mark.parametrize("name", ["d.jsonl.gz", "d.json.gz", "d.csv.gz", "D.JSONL.GZ", "D.CSV.GZ"])
def test_dataset_reads_gzip_for_each_text_format(tmp_path: Path, name: str) -> None:
    body = _dataset_csv() if ".csv" in name.lower() else jsonl_text(_dataset_rows()).encode()
    p = tmp_path / name
    p.write_bytes(gzip.compress(body))
    d = load_dataset(p)
    assert list(d.ids) == ["r1", "r2"]
    assert d.y_true[0, d.taxonomy.index("hate")] == 1 and d.y_true[1].sum() == 0


@pytest.mark.parametrize("sfx", [".bz2", ".zst", ".lz4"])
@pytest.mark.parametrize("base", ["d.jsonl", "d.csv"])
def test_dataset_reads_every_compression_predictions_read(
    tmp_path: Path, base: str, sfx: str
) -> None:
    # datasets accept the compressions prediction dumps accept (one format table)
    body = _dataset_csv() if base.endswith("csv") else jsonl_text(_dataset_rows()).encode()
    d = load_dataset(write_compressed(tmp_path / (base + sfx), body))
    assert list(d.ids) == ["r1", "r2"]
    assert d.y_true[0, d.taxonomy.index("hate")] == 1 and d.y_true[1].sum() == 0


def test_dataset_rejects_gzipped_parquet_clearly(tmp_path: Path) -> None:
    p = tmp_path / "d.parquet.gz"
    p.write_bytes(gzip.compress(b"PAR1"))
    with pytest.raises(
        DatasetError, match=r"a gzip-compressed PARQUET file cannot be read; decompress it"
    ):
        load_dataset(p)


# ----------------- options: named with their CLI flag, rejected where they cannot apply


def test_missing_registry_dataset_names_keyword_and_flag(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as e:
        load_dataset("Q-A-MLL", data_dir=tmp_path)
    assert "data_dir= (--data-dir DIR)" in str(e.value)


def test_min_annotators_needs_the_at_least_rule() -> None:
    for rule in ("majority", "union"):
        with pytest.raises(DatasetError, match=r"min_annotators= \(--min-annotators\) only"):
            load_dataset(rule=rule, min_annotators=2)  # type: ignore[arg-type]
    assert len(load_dataset(rule="at_least", min_annotators=2)) > 0
    assert len(load_dataset(rule="union", min_annotators=1)) > 0  # the default is fine


def _openai_file(path: Path) -> Path:
    rows = [{"prompt": "x", "S": 0, "H": 1}, {"prompt": "y", "V": 0}]
    return write_jsonl(path, rows)


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


# ------------------------------------- a label cell reads the same on either read path


# Per-category cells in every spelling the column-wise readers accept: -1, null, '' and
# 'NA' are unknown; 'yes' / 'no' and true / false are 1 / 0.
CELL_ROWS: list[dict[str, Any]] = [
    {"id": "r1", "text": "one", "a": 1, "b": "yes", "c": True},
    {"id": "r2", "text": "two", "a": -1, "b": "NA", "c": None},
    {"id": "r3", "text": "three", "a": 0, "b": "no", "c": False},
    {"id": "r4", "text": "four", "a": None, "b": "", "c": True},
]
CELL_Y = np.array([[1, 1, 1], [0, 0, 0], [0, 0, 0], [0, 0, 1]], dtype=np.int8)
CELL_M = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 1]], dtype=bool)


@pytest.mark.parametrize("form", ["columns", "object"])
def test_jsonl_label_cells_read_the_same_line_by_line(
    tmp_path: Path, tax3: Path, form: str
) -> None:
    # a line in another label form sends the whole file down the line-by-line path,
    # which must read every other line as the column-wise path does
    rows = CELL_ROWS
    if form == "object":  # labels objects: -1 and null unknown (strings are not accepted)
        rows = [
            {"id": r["id"], "text": r["text"], "labels": {"a": r["a"], "c": r["c"]}}
            for r in CELL_ROWS
        ]
    cols = [0, 1, 2] if form == "columns" else [0, 2]
    columnar = load_dataset(write_jsonl(tmp_path / "a.jsonl", rows), taxonomy=tax3)
    other = {"id": "r5", "text": "five", "labels": ["b"]}
    by_line = load_dataset(write_jsonl(tmp_path / "b.jsonl", [*rows, other]), taxonomy=tax3)
    for ds in (columnar, by_line):
        np.testing.assert_array_equal(ds.y_true[:4, cols], CELL_Y[:, cols])
        np.testing.assert_array_equal(ds.mask[:4, cols], CELL_M[:, cols])
    np.testing.assert_array_equal(by_line.y_true[4], [0, 1, 0])
    assert by_line.mask[4].all()


@pytest.mark.parametrize("text_type", [pa.string(), pa.large_string(), "dictionary"])
def test_parquet_text_label_cells_of_any_string_type(
    tmp_path: Path, tax3: Path, text_type: Any
) -> None:
    b = pa.array([r["b"] for r in CELL_ROWS], pa.string())
    b = b.dictionary_encode() if text_type == "dictionary" else b.cast(text_type)
    table = pa.table(
        {
            "id": [r["id"] for r in CELL_ROWS],
            "text": [r["text"] for r in CELL_ROWS],
            "a": [r["a"] for r in CELL_ROWS],
            "b": b,
            "c": [r["c"] for r in CELL_ROWS],
        }
    )
    pq.write_table(table, tmp_path / "d.parquet")
    ds = load_dataset(tmp_path / "d.parquet", taxonomy=tax3)
    np.testing.assert_array_equal(ds.y_true, CELL_Y)
    np.testing.assert_array_equal(ds.mask, CELL_M)


def test_parquet_labels_map_reads_as_an_object(tmp_path: Path, tax3: Path) -> None:
    # a map<string, int> column is the Parquet spelling of the object form
    labels = pa.array(
        [[("a", 1), ("b", None)], [("a", 0), ("c", 1)], []],
        pa.map_(pa.string(), pa.int64()),
    )
    table = pa.table({"id": ["r1", "r2", "r3"], "text": ["x", "y", "z"], "labels": labels})
    pq.write_table(table, tmp_path / "d.parquet")
    ds = load_dataset(tmp_path / "d.parquet", taxonomy=tax3)
    np.testing.assert_array_equal(ds.y_true, [[1, 0, 0], [0, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(ds.mask, [[1, 0, 0], [1, 0, 1], [0, 0, 0]])
    twice = pa.array([[("a", 1), ("a", 0)]], pa.map_(pa.string(), pa.int64()))
    pq.write_table(pa.table({"id": ["r1"], "text": ["x"], "labels": twice}), tmp_path / "e.parquet")
    with pytest.raises(DatasetError, match=r"e\.parquet: row 1: key 'a' is given twice"):
        load_dataset(tmp_path / "e.parquet", taxonomy=tax3)
