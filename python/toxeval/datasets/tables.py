"""Dataset rows read column-wise from a pyarrow table (JSONL, CSV, Parquet): a million rows
need no Python object per row for the label matrix. A table this path cannot take whole
(mixed label forms, values it cannot vouch for) raises :class:`NotColumnar`, and the
reader re-reads it record by record (:mod:`toxeval.datasets.records`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toxeval.arrow_numpy import from_numpy, strings, values
from toxeval.datasets.labels import (
    TEXT_ONE,
    TEXT_UNKNOWN,
    TEXT_ZERO,
    LabelReader,
    RawRows,
    claims_again,
)
from toxeval.datasets.records import check_unique_ids
from toxeval.datasets.schema import RESERVED_FIELDS, SCHEMA_SUMMARY, DatasetError
from toxeval.ids import StringColumn
from toxeval.input_columns import check_column_names


class NotColumnar(Exception):
    """The table is not in a form the column-wise path handles; use the row path."""


def _list_of_codes(arr: pa.Array, labels: LabelReader) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise list<string> -> (rows, cols) index pairs of positives."""
    flat = pc.list_flatten(arr)
    parents = values(pc.list_parent_indices(arr))
    if len(flat) == 0:
        return parents, parents
    if isinstance(flat, pa.ChunkedArray):
        flat = flat.combine_chunks()
    # Parquet label lists arrive dictionary-encoded (see _read_parquet): no hashing here
    enc = flat if pa.types.is_dictionary(flat.type) else pc.dictionary_encode(flat)
    if enc.null_count or enc.dictionary.null_count:
        raise NotColumnar
    codes = enc.dictionary.to_pylist()
    idx = values(enc.indices).astype(np.intp, copy=False)
    # a dictionary read from a file may hold values no row uses: those need no category
    used = np.bincount(idx, minlength=len(codes)) > 0
    targets = [labels.targets(code) if u else () for code, u in zip(codes, used, strict=True)]
    if all(ts is not None and len(ts) == 1 for ts, u in zip(targets, used, strict=True) if u):
        # one category per code (no mapping fan-out): one lookup, no pass per code
        lut = np.array([ts[0] if ts else 0 for ts in targets], dtype=np.int64)
        return parents, lut[idx]
    rows_out: list[np.ndarray] = []
    cols_out: list[np.ndarray] = []
    for u, ts in enumerate(targets):
        if ts is None:
            raise NotColumnar
        if not ts:
            continue  # unused code, or one that maps to no category
        sel = parents[idx == u]
        for t in ts:
            rows_out.append(sel)
            cols_out.append(np.full(len(sel), t, dtype=np.int64))
    if not rows_out:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(rows_out), np.concatenate(cols_out)


def _is_text(t: pa.DataType) -> bool:
    """A string type, or a dictionary of strings (how Parquet label lists are read)."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _tri_state(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A numeric/bool/null column of 1/0/-1/null -> (is_one, is_known)."""
    t = arr.type
    n = len(arr)
    if pa.types.is_null(t):
        return np.zeros(n, bool), np.zeros(n, bool)
    if not (
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_boolean(t)
        or pa.types.is_decimal(t)
    ):
        raise NotColumnar
    if pa.types.is_integer(t) and not arr.null_count:
        # integers without nulls (a K-vector of 0/1/-1): read in place, bounds checked
        ints = values(arr)
        if ints.size and (int(ints.min()) < -1 or int(ints.max()) > 1):
            raise NotColumnar
        return ints == 1, ints != -1
    vals = values(pc.cast(arr, pa.float64()).fill_null(-1.0))
    vals = np.where(np.isnan(vals), -1.0, vals)
    if not np.isin(vals, (0.0, 1.0, -1.0)).all():
        raise NotColumnar
    return vals == 1.0, vals != -1.0


def table_labels(
    table: pa.Table, labels: LabelReader, *, csv_text: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Label matrix and mask from the ``labels`` column or per-category columns."""
    n = table.num_rows
    k = labels.k
    y = np.zeros((n, k), dtype=np.int8)
    mask = np.zeros((n, k), dtype=bool)
    if "labels" in table.column_names:
        col = table.column("labels").combine_chunks()
        t = col.type
        if col.null_count:
            raise NotColumnar
        if csv_text and pa.types.is_string(t):
            first = pc.utf8_slice_codeunits(pc.utf8_trim_whitespace(col), 0, 1)
            if pc.any(pc.is_in(first, strings(["[", "{"]))).as_py():
                raise NotColumnar
            col = pc.split_pattern(pc.utf8_trim_whitespace(col), ";")
            col = pa.ListArray.from_arrays(col.offsets, pc.utf8_trim_whitespace(col.flatten()))
            col = _drop_empty_strings(col)
            t = col.type
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            vt = t.value_type
            lens = values(pc.list_value_length(col))
            if _is_text(vt):
                r, c = _list_of_codes(col, labels)
                y[r, c] = 1
                mask[:] = labels.coverage
            elif pa.types.is_null(vt) and (lens == 0).all():
                mask[:] = labels.coverage
            else:
                if labels.mapping is not None or not ((lens == 0) | (lens == k)).all():
                    raise NotColumnar
                one, known = _tri_state(pc.list_flatten(col))
                vec_rows = np.flatnonzero(lens == k)
                y[vec_rows] = one.reshape(-1, k)
                mask[vec_rows] = known.reshape(-1, k)
                mask[lens == 0] = True
        elif pa.types.is_struct(t):
            per_target_pos = np.zeros((n, k), dtype=bool)
            neg = np.zeros((n, k), dtype=np.int64)
            unk = np.zeros((n, k), dtype=np.int64)
            claimed: set[int] = set()
            for i in range(t.num_fields):
                ts = labels.targets(t.field(i).name)
                if ts is None or claims_again(ts, claimed, labels):
                    raise NotColumnar
                one, known = _tri_state(col.field(i))
                for tt in ts:
                    per_target_pos[:, tt] |= one
                    neg[:, tt] += known & ~one
                    unk[:, tt] += ~known
            y[:] = per_target_pos
            mask[:] = per_target_pos | ((neg > 0) & (unk == 0))
        else:
            raise NotColumnar
        return y, mask
    cols = [c for c in table.column_names if c not in RESERVED_FIELDS]
    pos = np.zeros((n, k), dtype=bool)
    neg = np.zeros((n, k), dtype=np.int64)
    unk = np.zeros((n, k), dtype=np.int64)
    found = False
    named: set[int] = set()
    for name in cols:
        ts = labels.targets(name)
        if ts is None:
            msg = labels.misspelt(name, "column")
            if msg is not None:
                raise DatasetError(msg)
            continue  # extra metadata columns are ignored (and listed in the notes)
        if claims_again(ts, named, labels):
            raise NotColumnar  # two columns name one category: the row path checks them
        found = True
        col = table.column(name).combine_chunks()
        if _is_text(col.type):
            col = _text_cells(pc.cast(col, pa.string()), name)
        one, known = _tri_state(col)
        for tt in ts:
            pos[:, tt] |= one
            neg[:, tt] += known & ~one
            unk[:, tt] += ~known
    if not found:
        raise DatasetError(
            "no labels: the table has no 'labels' or 'annotations' column and no column "
            f"named after a category (columns: {', '.join(table.column_names)})\n" + SCHEMA_SUMMARY
        )
    covered = (neg + unk) > 0
    mask = pos | (covered & (unk == 0))
    return pos.astype(np.int8), mask


def _drop_empty_strings(col: pa.ListArray) -> pa.ListArray:
    flat = col.flatten()
    keep = pc.not_equal(flat, "")
    if pc.all(keep).as_py():
        return col
    parents = values(pc.list_parent_indices(col))
    kept = values(keep.fill_null(False))
    counts = np.bincount(parents[kept], minlength=len(col))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return pa.ListArray.from_arrays(from_numpy(offsets), flat.filter(keep))


class _CellError(Exception):
    def __init__(self, row: int, column: str, value: str) -> None:
        self.row, self.column, self.value = row, column, value


def _text_cells(col: pa.Array, name: str) -> pa.Array:
    """CSV cells '1'/'0'/''/'-1'/'true'/'false' -> float64 with nulls for unknown."""
    s = pc.utf8_lower(pc.utf8_trim_whitespace(col))
    one = pc.is_in(s, strings(list(TEXT_ONE)))
    zero = pc.is_in(s, strings(list(TEXT_ZERO)))
    unk = pc.or_(pc.is_null(s), pc.is_in(s, strings(list(TEXT_UNKNOWN))))
    bad = pc.invert(pc.or_(pc.or_(one.fill_null(False), zero.fill_null(False)), unk))
    if pc.any(bad).as_py():
        i = int(np.flatnonzero(values(bad.fill_null(False)))[0])
        raise _CellError(i, name, str(col[i].as_py()))
    out = np.where(values(one.fill_null(False)), 1.0, 0.0)
    nulls = values(unk.fill_null(False))
    return from_numpy(out, mask=nulls)


def _table_annotations(
    table: pa.Table, labels: LabelReader
) -> tuple[np.ndarray, np.ndarray] | None:
    if "annotations" not in table.column_names:
        return None
    col = table.column("annotations").combine_chunks()
    t = col.type
    if not (pa.types.is_list(t) and pa.types.is_list(t.value_type)):
        raise NotColumnar
    inner = col.flatten()
    if not pa.types.is_string(inner.type.value_type) and not pa.types.is_null(
        inner.type.value_type
    ):
        raise NotColumnar
    if inner.null_count:
        raise NotColumnar  # a null annotator list: the row path names the row
    n_ann = values(pc.list_value_length(col).fill_null(0)).astype(np.int64)
    outer_parent = values(pc.list_parent_indices(col))
    counts = np.zeros((len(col), labels.k), dtype=np.float64)
    if pa.types.is_string(inner.type.value_type):
        r, c = _list_of_codes(inner, labels)
        # one annotator marks a category at most once
        pairs = np.unique(np.stack([r, c]), axis=1) if len(r) else np.zeros((2, 0), np.int64)
        np.add.at(counts, (outer_parent[pairs[0]], pairs[1]), 1.0)
    return counts, n_ann


def table_to_rows(
    table: pa.Table,
    labels: LabelReader,
    source: str,
    unit: str,
    *,
    first_line: int,
    csv_text: bool = False,
) -> RawRows:
    n = table.num_rows
    if n == 0:
        raise DatasetError(f"{source}: the file has no rows")
    names = table.column_names
    check_column_names(names, source, DatasetError)
    for req in ("id", "text"):
        if req not in names:
            raise DatasetError(f"{source}: missing column {req!r} (columns: {', '.join(names)})")
        nulls = table.column(req).null_count
        if nulls:
            i = int(np.flatnonzero(values(table.column(req).is_null()))[0])
            raise DatasetError(f"{source}: {unit} {i + first_line}: missing {req!r}")
    if not pa.types.is_string(table.column("text").type):
        raise NotColumnar
    idcol = table.column("id")
    if not (pa.types.is_string(idcol.type) or pa.types.is_integer(idcol.type)):
        raise NotColumnar
    for name in ("id", "text", "response"):
        if name in names and pa.types.is_string(table.column(name).type):
            try:  # pyarrow's JSON reader does not check UTF-8: the row path names the line
                table.column(name).validate(full=True)
            except pa.ArrowInvalid:
                raise NotColumnar from None
    if csv_text and pa.types.is_string(idcol.type):
        empty = pc.equal(idcol, "")
        if pc.any(empty).as_py():
            i = int(np.flatnonzero(values(empty.fill_null(False)))[0])
            raise DatasetError(f"{source}: {unit} {i + first_line}: missing 'id'")
    # ids, texts and responses stay Arrow columns: no Python string per row unless asked
    ids = StringColumn(idcol)
    if not ids.all_distinct():
        lines = list(range(first_line, first_line + n))
        check_unique_ids(ids.tolist(), lines, source, unit)
    texts = StringColumn(table.column("text"))
    responses: Sequence[str] | None = None
    if "response" in names:
        rc = table.column("response")
        if rc.null_count:
            i = int(np.flatnonzero(values(rc.is_null()))[0])
            raise DatasetError(f"{source}: {unit} {i + first_line}: missing 'response'")
        if pa.types.is_string(rc.type):
            responses = StringColumn(rc)
        else:
            responses = [str(v) for v in rc.to_pylist()]
    ann = _table_annotations(table, labels)
    try:
        if "labels" in names or ann is None:
            y, mask = table_labels(table, labels, csv_text=csv_text)
            has_labels = np.ones(n, dtype=bool)
        else:
            y, mask = np.zeros((n, labels.k), np.int8), np.zeros((n, labels.k), bool)
            has_labels = np.zeros(n, dtype=bool)
    except _CellError as e:
        raise DatasetError(
            f"{source}: {unit} {e.row + first_line}: column {e.column!r}: label value must be "
            f"1, 0 or empty, got {e.value!r}"
        ) from None
    except DatasetError as e:
        raise DatasetError(f"{source}: {e}") from None
    if ann is not None and not has_labels.all():
        bad = np.flatnonzero(ann[1] == 0)
        if len(bad):
            raise DatasetError(
                f"{source}: {unit} {int(bad[0]) + first_line}: no labels and no annotations"
            )
    ignored = tuple(
        c
        for c in names
        if c not in RESERVED_FIELDS
        and ("labels" in names or ann is not None or labels.targets(c) is None)
    )
    return RawRows(
        ids=ids,
        texts=texts,
        responses=responses,
        y=y,
        mask=mask,
        counts=None if ann is None else ann[0],
        n_ann=None if ann is None else ann[1],
        has_labels=has_labels,
        ignored=ignored,
        extra={c: table.column(c) for c in ignored},
    )
