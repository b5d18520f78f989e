"""Dataset rows read one record at a time (JSONL lines, CSV rows, OpenAI moderation lines)
into :class:`RawRows`, with errors that name the line. The readers fall back to this path
when a file cannot be read column-wise in one piece.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from toxeval.datasets.labels import LabelReader, RawRows
from toxeval.datasets.schema import RESERVED_FIELDS, DatasetError


def check_unique_ids(ids: list[str], lines: Sequence[int] | None, source: str, unit: str) -> None:
    arr = np.asarray(ids, dtype=object)
    if len(set(ids)) == len(ids):
        return
    seen: dict[str, int] = {}
    for i, v in enumerate(arr):
        if v in seen:
            at = lines[i] if lines is not None else i + 1
            first = lines[seen[v]] if lines is not None else seen[v] + 1
            raise DatasetError(
                f"{source}: {unit} {at}: duplicate id {v!r} (first seen at {unit} {first})"
            )
        seen[v] = i


def records_to_rows(
    records: Iterable[tuple[int, Any]],
    labels: LabelReader,
    source: str,
    unit: str = "line",
) -> RawRows:
    ids: list[str] = []
    texts: list[str] = []
    responses: list[str | None] = []
    lines: list[int] = []
    ys: list[np.ndarray] = []
    ms: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    n_ann: list[int] = []
    has_labels: list[bool] = []
    any_ann = False
    any_resp = False
    ignored: dict[str, None] = {}
    extra: dict[str, dict[int, Any]] = {}  # field -> {row: value} of the ignored fields
    k = labels.k
    for line, rec in records:
        where = f"{source}: {unit} {line}"
        if not isinstance(rec, dict):
            raise DatasetError(f"{where}: expected a JSON object, got {type(rec).__name__}")
        if rec.get("id") is None:
            raise DatasetError(f"{where}: missing 'id'")
        if not isinstance(rec["id"], (str, int)) or isinstance(rec["id"], bool):
            raise DatasetError(f"{where}: 'id' must be a string or integer, got {rec['id']!r}")
        text = rec.get("text")
        if not isinstance(text, str):
            raise DatasetError(
                f"{where}: missing 'text'" if text is None else f"{where}: 'text' must be a string"
            )
        resp = rec.get("response")
        if resp is not None:
            if not isinstance(resp, str):
                raise DatasetError(f"{where}: 'response' must be a string")
            any_resp = True
        lab = rec.get("labels")
        ann = rec.get("annotations")
        # one field per category (other extra fields are metadata: ignored, and listed)
        cat_cols: dict[str, Any] = {}
        per_category = lab is None and ann is None
        for c, v in rec.items():
            if c in RESERVED_FIELDS:
                continue
            if labels.targets(c) is not None:
                cat_cols[c] = v
                if per_category:
                    continue  # otherwise labels / annotations give the targets: ignored
            elif per_category and (msg := labels.misspelt(c)) is not None:
                raise DatasetError(f"{where}: {msg}")
            ignored[c] = None
            extra.setdefault(c, {})[len(ids)] = v
        if lab is not None:
            y, m = labels.parse(lab, where)
        elif ann is None and cat_cols:
            y, m = labels.from_object(cat_cols, where, text_cells=True)
        elif ann is None:
            raise DatasetError(
                f"{where}: no labels (give 'labels', 'annotations' or one field per category)"
            )
        else:
            y, m = np.zeros(k, dtype=np.int8), np.zeros(k, dtype=bool)
        if ann is not None:
            c, n = labels.annotations(ann, where)
            if n == 0 and lab is None:
                raise DatasetError(f"{where}: 'annotations' is empty and there are no labels")
            any_ann = True
        else:
            c, n = np.zeros(k), 0
        ids.append(str(rec["id"]))
        texts.append(text)
        responses.append(resp)
        lines.append(line)
        ys.append(y)
        ms.append(m)
        counts.append(c)
        n_ann.append(n)
        has_labels.append(lab is not None or (ann is None))
    if not ids:
        raise DatasetError(f"{source}: the file has no rows")
    check_unique_ids(ids, lines, source, unit)
    if any_resp:
        for i, r in enumerate(responses):
            if r is None:
                raise DatasetError(
                    f"{source}: {unit} {lines[i]}: missing 'response' "
                    "(other rows have one; a dataset is prompt- or response-level)"
                )
    return RawRows(
        ids=ids,
        texts=texts,
        responses=[r or "" for r in responses] if any_resp else None,
        y=np.vstack(ys),
        mask=np.vstack(ms),
        counts=np.vstack(counts) if any_ann else None,
        n_ann=np.asarray(n_ann, dtype=np.int64) if any_ann else None,
        has_labels=np.asarray(has_labels, dtype=bool),
        ignored=tuple(ignored),
        extra={c: extra_column(extra[c], len(ids)) for c in ignored},
    )


def extra_column(values: dict[int, Any], n: int) -> Any:
    """One ignored field's values ({row: value}, absent rows null) as a pyarrow array:
    typed as pyarrow infers them, or as strings when the rows mix types."""
    import pyarrow as pa

    cells = [values.get(i) for i in range(n)]
    try:
        return pa.array(cells)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return pa.array(
            [None if v is None else json.dumps(v) if isinstance(v, (dict, list)) else str(v)
             for v in cells],
            type=pa.string(),
        )  # fmt: skip
