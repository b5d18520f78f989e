"""``scored_rows.parquet``: the rows an evaluation scored, kept beside ``results.json``.

``toxeval compare`` needs more than the figures of each system: paired tests resample the
*same items* for two systems, so each results folder keeps, per scored row, its id, its
labels (null where unknown) and the system's scores. Layout (one Parquet file):

* ``id``: string, the dataset row id;
* ``true:<category id>``: int8, 1 / 0, null where the label is unknown;
* ``score:<category id>``: the system's score: float32 when the scores handed to
  :func:`write_scored_rows` are float32, float64 otherwise (never widened, never narrowed).

How the file is written, and why: it is the one output whose size grows with the rows
(1M rows x 15 categories is ~120 MB of scores), and writing it was the largest output
step. Columns are written plain, without Parquet's dictionary encoding and without
column statistics: ids are unique and scores nearly so, so a dictionary is built, found
useless and dropped for every page, which doubled the writer's CPU time, and nothing
reads the statistics (``toxeval compare`` reads whole columns). Pages stay
Snappy-compressed (about the same size and CPU as LZ4 here; no compression costs half
again the bytes). There is no status column: rows that were not scored are not in the
file, and each column appears once (``id``, then labels, then scores).

File metadata ``toxeval.scored_rows`` holds JSON with the format version, the taxonomy's
category ids (column order) and the sha256 of the dataset the rows came from. Rows that
were not scored (missing or failed predictions, excluded by the parse policy) are not in
the file; ``results.json`` counts them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["FILE_NAME", "ScoredRows", "read_scored_rows", "write_scored_rows"]

FILE_NAME = "scored_rows.parquet"
_META_KEY = b"toxeval.scored_rows"
_VERSION = 1


@dataclass(frozen=True)
class ScoredRows:
    """The scored rows of one evaluation: ``y_true`` int8 (N, K) with unknown cells 0,
    ``mask`` True where the label is known, ``scores`` float64 (N, K) (a float32 file's
    scores widened exactly)."""

    ids: tuple[str, ...]
    category_ids: tuple[str, ...]
    y_true: NDArray[np.int8]
    mask: NDArray[np.bool_]
    scores: NDArray[np.float64]
    dataset_sha256: str | None


def write_scored_rows(
    path: str | Path,
    ids: Sequence[str] | Any,
    category_ids: Sequence[str],
    y_true: NDArray[np.integer] | NDArray[np.bool_],
    mask: NDArray[np.bool_],
    scores: NDArray[np.floating],
    *,
    dataset_sha256: str | None,
) -> Path:
    """Write the file; ``y_true``, ``mask`` and ``scores`` are (N, K) in ``category_ids`` order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from toxeval.arrow_numpy import from_numpy

    n, k = np.shape(scores)
    if len(ids) != n or len(category_ids) != k:
        raise ValueError(
            f"scored rows: {len(ids)} ids and {len(category_ids)} categories for scores of "
            f"shape {(n, k)}"
        )
    y = np.asarray(y_true, dtype=np.int8)
    m = np.asarray(mask, dtype=bool)
    s = np.asarray(scores)
    s = s if s.dtype == np.float32 else s.astype(np.float64, copy=False)
    id_col = ids if isinstance(ids, pa.Array) else pa.array(list(map(str, ids)), type=pa.string())
    columns: dict[str, pa.Array] = {"id": id_col.cast(pa.string())}
    for j, cid in enumerate(category_ids):
        columns[f"true:{cid}"] = from_numpy(y[:, j], mask=~m[:, j])
    for j, cid in enumerate(category_ids):
        columns[f"score:{cid}"] = from_numpy(s[:, j])
    meta = {
        "version": _VERSION,
        "category_ids": list(category_ids),
        "dataset_sha256": dataset_sha256,
    }
    table = pa.table(columns).replace_schema_metadata({_META_KEY: json.dumps(meta).encode()})
    out = Path(path)
    # plain pages, no statistics: see the module docstring
    pq.write_table(table, out, use_dictionary=False, write_statistics=False)
    return out


def read_scored_rows(path: str | Path) -> ScoredRows:
    """Read a file written by :func:`write_scored_rows`; ``ValueError`` naming the file
    when it is not one, or when its rows could not be scored as they stand (labels other
    than 0/1, NaN or infinite scores, duplicate ids)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = Path(path)
    try:
        table = pq.read_table(p)
    except FileNotFoundError:
        raise ValueError(f"{p}: not found (results folders written by toxeval keep it)") from None
    except (OSError, ValueError) as e:
        raise ValueError(f"{p}: not a readable Parquet file ({e})") from None
    raw = (table.schema.metadata or {}).get(_META_KEY)
    try:
        meta = json.loads(raw) if raw else None
    except ValueError:
        meta = None
    if not isinstance(meta, dict) or "version" not in meta:
        raise ValueError(f"{p}: not a toxeval scored-rows file (no {_META_KEY.decode()} metadata)")
    if meta["version"] != _VERSION:
        raise ValueError(
            f"{p}: scored-rows format version {meta['version']}, and this toxeval reads "
            f"version {_VERSION}: score the predictions again with this version, or compare "
            "with the toxeval that wrote the file"
        )
    raw_cats = meta.get("category_ids")
    if not isinstance(raw_cats, list) or not all(isinstance(c, str) for c in raw_cats):
        raise ValueError(f"{p}: {_META_KEY.decode()} metadata has no list of category ids")
    cats = tuple(raw_cats)
    names = set(table.column_names)
    wanted = ["id", *(f"true:{c}" for c in cats), *(f"score:{c}" for c in cats)]
    missing = [c for c in wanted if c not in names]
    if missing:
        raise ValueError(f"{p}: columns missing: {', '.join(missing[:5])}")
    n, k = table.num_rows, len(cats)
    y = np.zeros((n, k), dtype=np.int8)
    m = np.zeros((n, k), dtype=bool)
    s = np.empty((n, k), dtype=np.float64)
    for j, c in enumerate(cats):
        truth = _column(p, table, f"true:{c}", pa.types.is_integer)
        m[:, j] = ~np.asarray(truth.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        values = np.asarray(truth.fill_null(0).to_numpy(zero_copy_only=False))
        if not np.isin(values, (0, 1)).all():
            raise ValueError(f"{p}: column true:{c} holds labels other than 0, 1 and null")
        y[:, j] = values
        score = _column(p, table, f"score:{c}", pa.types.is_floating)
        if score.null_count:
            raise ValueError(f"{p}: column score:{c} has {score.null_count} null scores")
        s[:, j] = np.asarray(score.to_numpy(zero_copy_only=False), dtype=np.float64)
        bad = int(np.count_nonzero(~np.isfinite(s[:, j])))
        if bad:
            raise ValueError(f"{p}: column score:{c} has {bad} NaN or infinite scores")
    id_col = _column(p, table, "id", pa.types.is_string)
    if id_col.null_count:
        raise ValueError(f"{p}: column id has {id_col.null_count} null ids")
    ids = tuple(str(v) for v in id_col.to_pylist())
    if len(set(ids)) != len(ids):
        raise ValueError(f"{p}: {len(ids) - len(set(ids))} duplicate ids (each row is one item)")
    sha = meta.get("dataset_sha256")
    return ScoredRows(ids, cats, y, m, s, str(sha) if sha else None)


def _column(
    path: Path, table: pa.Table, name: str, is_type: Callable[[pa.DataType], bool]
) -> pa.ChunkedArray:
    """Column ``name`` of ``table``; ``ValueError`` naming the file when its type is not
    the one :func:`write_scored_rows` writes."""
    col = table.column(name)
    if not is_type(col.type):
        raise ValueError(f"{path}: column {name} has type {col.type}, not the type toxeval writes")
    return col
