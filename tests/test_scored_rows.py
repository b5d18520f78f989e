"""scored_rows.parquet: the per-row record ``toxeval compare`` reads back exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from toxeval.scored_rows import read_scored_rows, write_scored_rows


def test_round_trip_keeps_unknown_labels_and_scores_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=(50, 4)).astype(np.int8)
    m = rng.random((50, 4)) > 0.2
    s = rng.random((50, 4))
    ids = [f"q{i}" for i in range(50)]
    path = write_scored_rows(
        tmp_path / "rows.parquet", ids, ["a", "b", "c", "d"], y, m, s, dataset_sha256="ab" * 32
    )
    back = read_scored_rows(path)
    assert back.ids == tuple(ids)
    assert back.category_ids == ("a", "b", "c", "d")
    assert np.array_equal(back.mask, m)
    assert np.array_equal(back.y_true, np.where(m, y, 0))
    assert np.array_equal(back.scores, s)  # bit for bit
    assert back.dataset_sha256 == "ab" * 32


def test_other_files_are_refused_with_the_file_named(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"id": ["a"]}), other)
    with pytest.raises(ValueError, match=r"other\.parquet: not a toxeval scored-rows file"):
        read_scored_rows(other)
    with pytest.raises(ValueError, match=r"missing\.parquet: not found"):
        read_scored_rows(tmp_path / "missing.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    with pytest.raises(ValueError, match=r"junk\.parquet: not a readable Parquet file"):
        read_scored_rows(tmp_path / "junk.parquet")


def test_shape_mismatch_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="2 ids and 3 categories"):
        write_scored_rows(
            tmp_path / "x.parquet",
            ["a", "b"],
            ["x", "y", "z"],
            np.zeros((3, 3), np.int8),
            np.ones((3, 3), bool),
            np.zeros((3, 3)),
            dataset_sha256=None,
        )


def _edited(tmp_path: Path, edit: Any) -> Path:
    """A valid scored-rows file of 6 rows x 2 categories, with ``edit(table) -> table``
    applied to its Arrow table (metadata kept unless the edit replaces it)."""
    import pyarrow.parquet as pq

    path = write_scored_rows(
        tmp_path / "rows.parquet",
        [f"q{i}" for i in range(6)],
        ["a", "b"],
        np.array([[1, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]], np.int8),
        np.ones((6, 2), bool),
        np.linspace(0, 1, 12).reshape(6, 2),
        dataset_sha256="ab" * 32,
    )
    pq.write_table(edit(pq.read_table(path)), path)
    return path


def _set(name: str, values: list[Any]) -> Any:
    import pyarrow as pa

    def edit(t: pa.Table) -> pa.Table:
        return t.set_column(t.column_names.index(name), name, pa.array(values))

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (_set("score:a", [0.1, float("nan"), 0.3, 0.4, 0.5, 0.6]), "score:a has 1 NaN or inf"),
        (_set("score:b", [0.1, 0.2, float("inf"), 0.4, 0.5, 0.6]), "score:b has 1 NaN or inf"),
        (_set("score:b", [0.1, 0.2, None, 0.4, 0.5, 0.6]), "score:b has 1 null scores"),
        (_set("id", ["q0", "q1", "q2", "q3", "q4", "q0"]), "1 duplicate ids"),
        (_set("true:a", [1, 0, 2, 0, 1, 0]), "true:a holds labels other than 0, 1"),
        (_set("true:a", ["1", "0", "1", "0", "1", "0"]), "true:a has type string"),
        (_set("id", [1, 2, 3, 4, 5, 6]), "column id has type int64"),
        (
            lambda t: t.replace_schema_metadata({b"toxeval.scored_rows": b'{"version": 1}'}),
            "metadata has no list of category ids",
        ),
        # a file of another format version was said to have no toxeval metadata at all
        (
            lambda t: t.replace_schema_metadata({b"toxeval.scored_rows": b'{"version": 2}'}),
            "scored-rows format version 2, and this toxeval reads version 1",
        ),
        (
            lambda t: t.replace_schema_metadata(
                {b"toxeval.scored_rows": b'{"version": 1, "category_ids": "ab"}'}
            ),
            "metadata has no list of category ids",
        ),
    ],
)
def test_rows_that_cannot_be_scored_as_they_stand_are_refused(
    tmp_path: Path, edit: Any, message: str
) -> None:
    # NaN/inf scores, duplicate ids and labels outside {0, 1} reached the metrics (or,
    # for duplicates, silently weighed one item twice); bad metadata or column types
    # were internal errors.
    path = _edited(tmp_path, edit)
    with pytest.raises(ValueError, match=rf"rows\.parquet: .*{message}"):
        read_scored_rows(path)


def test_float32_scores_stay_float32_and_columns_are_plain(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=(30, 2)).astype(np.int8)
    m = np.ones((30, 2), dtype=bool)
    s32 = rng.random((30, 2)).astype(np.float32)
    ids = [f"r{i}" for i in range(30)]
    path = write_scored_rows(
        tmp_path / "r.parquet", ids, ["a", "b"], y, m, s32, dataset_sha256=None
    )
    schema = pq.read_schema(path)
    assert str(schema.field("score:a").type) == "float"
    meta = pq.ParquetFile(path).metadata.row_group(0)
    for i in range(meta.num_columns):
        col = meta.column(i)
        assert col.statistics is None, col.path_in_schema
        assert "RLE_DICTIONARY" not in col.encodings and "PLAIN_DICTIONARY" not in col.encodings
    back = read_scored_rows(path)
    assert back.scores.dtype == np.float64
    assert np.array_equal(back.scores, s32.astype(np.float64))  # widened exactly
    # float16 (or any other dtype) is written as float64, never narrowed
    path16 = write_scored_rows(
        tmp_path / "h.parquet", ids, ["a", "b"], y, m, s32.astype(np.float16), dataset_sha256=None
    )
    assert str(pq.read_schema(path16).field("score:a").type) == "double"
