"""scored_rows.parquet: the per-row record ``toxeval compare`` reads back exactly."""

from __future__ import annotations

from pathlib import Path

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
