"""Evaluation datasets: the documented schema, its readers, and the dataset registry.

A dataset is N texts (prompts, or prompt + response for response-level benchmarks) with an
(N, K) label matrix in a taxonomy's column order and an (N, K) mask of which labels are
known. Unknown labels never become silent negatives: they are 0 in ``y_true`` and False in
``mask``, and the metrics skip them. The schema (see docs/datasets.md):

- ``id`` (unique) and ``text``; optional ``response``;
- ``labels`` as a list of category ids (complete annotation), an object
  ``{id: 1 | 0 | null}`` (null or an absent key = unknown), or a K-vector with -1/null for
  unknown; or, in CSV/Parquet/JSONL, one column per category id with 1/0/empty;
- optional ``annotations``: a list of per-annotator label lists, from which the targets
  come by a rule (majority, union, at least k) and soft labels are the agreement fraction.

Readers: JSONL (also gzip), CSV and Parquet. Simple, regular files are read column-wise with
pyarrow so a million rows need no Python object per row for the label matrix; a JSONL file
that pyarrow cannot read in one piece (malformed line, mixed label forms, unknown
category) is re-read line by line so errors name the line.
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import io
import json
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toxeval.files import BackgroundSha256, decode_utf8, gunzip, require_file
from toxeval.ids import StringColumn
from toxeval.taxonomy import (
    DEFAULT_TAXONOMY,
    LabelMapping,
    Taxonomy,
    TaxonomyError,
    load_mapping,
    load_taxonomy,
    normalize_label,
)

__all__ = [
    "Dataset",
    "DatasetError",
    "DatasetInfo",
    "Rule",
    "StringColumn",
    "list_datasets",
    "load_dataset",
    "read_openai_moderation",
]

Rule = Literal["majority", "union", "at_least"]
_RULES: tuple[Rule, ...] = ("majority", "union", "at_least")
Level = Literal["prompt", "response"]

ENV_DATA_DIR = "TOXEVAL_DATA_DIR"
OPENAI_FILE = "samples-1680.jsonl.gz"
OPENAI_KEYS = ("S", "H", "V", "HR", "SH", "S3", "H2", "V2")
_EXTENSIONS = (".jsonl", ".jsonl.gz", ".csv", ".parquet")
_RESERVED = {"id", "text", "response", "labels", "annotations"}
# Fields documented as metadata (docs/datasets.md): never taken for a misspelt category,
# however close their name is to one. Like every field that is not a label, they are
# ignored, and the report's notes list them.
KNOWN_METADATA = frozenset(
    {
        "source", "split", "lang", "language", "meta", "metadata", "note", "notes",
        "comment", "comments", "url", "date", "model", "prompt_id", "index",
    }
)  # fmt: skip
_INDEX_COLUMN = re.compile(r"^(Unnamed: ?\d*|__index_level_\d+__)$")

SCHEMA_SUMMARY = """\
Expected schema (docs/datasets.md): one row per item with
  id          unique string (or integer)
  text        the prompt (or the text that was labelled)
  response    optional; the model response, for response-level datasets
  labels      a list of category ids          ["hate", "violence"]   ([] = benign)
              or an object, null = unknown     {"hate": 1, "violence": null, ...}
              or a K-vector, -1/null = unknown [1, 0, -1, ...]
              (CSV/Parquet: a labels column, or one column per category id with 1/0/empty)
  annotations optional; per-annotator label lists [["hate"], ["hate", "violence"], []]
Files: <name>.jsonl, .jsonl.gz, .csv or .parquet."""


class DatasetError(ValueError):
    """A dataset file is missing or does not follow the schema; says where and what."""


@dataclass(frozen=True)
class Dataset:
    """An evaluation dataset in a taxonomy's column order.

    ``y_true`` is int8 (N, K) with unknown cells 0; ``mask`` is True where the label is
    known. ``soft`` is the fraction of annotators who marked each category (NaN where the
    label is unknown; for rows without per-annotator data it repeats the hard label) and
    ``n_annotators`` is 0 on such rows; both are None when the file has no annotations.

    ``ids``, ``texts`` and ``responses`` are sequences of ``str``: lists, or, from the
    column-wise readers, :class:`StringColumn` (Arrow-backed, turned into Python strings
    only when used). ``ignored_fields`` names the fields (columns, keys) of the file that
    gave no labels and are not schema fields: metadata, or per-category fields when the
    labels came from ``labels`` / ``annotations``.
    """

    name: str
    level: Level
    taxonomy: Taxonomy
    ids: Sequence[str]
    texts: Sequence[str]
    responses: Sequence[str] | None
    y_true: np.ndarray
    mask: np.ndarray
    soft: np.ndarray | None
    n_annotators: np.ndarray | None
    source: str
    sha256: str
    ignored_fields: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def k(self) -> int:
        return self.taxonomy.k


@dataclass(frozen=True)
class DatasetInfo:
    """A registry entry: where toxeval looks for a dataset and what it found."""

    name: str
    level: Level
    description: str
    looked_at: tuple[str, ...]
    path: str | None


_REGISTRY: dict[str, tuple[Level, str]] = {
    "Q-A-MLL": (
        "prompt",
        "prompt-level multi-label benchmark (Kou et al., 2025); not public, bring your own file",
    ),
    "H-X-MLL": (
        "prompt",
        "prompt-level multi-label benchmark (Kou et al., 2025); not public, bring your own file",
    ),
    "R-A-MLL": (
        "response",
        "response-level multi-label benchmark (Kou et al., 2025); not public, bring your own file",
    ),
    "openai-moderation": (
        "prompt",
        "OpenAI moderation evaluation set (Markov et al., 2022), samples-1680.jsonl.gz; "
        "absent keys = unknown",
    ),
}


# --------------------------------------------------------------------------- labels


class _Labels:
    """Turns label values of any accepted form into rows of the (N, K) matrices.

    Codes are category ids, names or aliases of the taxonomy, or, with a mapping, the
    mapping's codes. With a mapping, categories that no code maps to are unknown, and a
    category is 1 if any code mapping to it is 1, 0 if every such code is known 0.
    """

    def __init__(self, taxonomy: Taxonomy, mapping: LabelMapping | None) -> None:
        self.tax = taxonomy
        self.k = taxonomy.k
        self.mapping = mapping
        self._cache: dict[str, tuple[int, ...] | None] = {}
        self._misspelt: dict[tuple[str, str], str | None] = {}
        cover = np.ones(self.k, dtype=bool)
        if mapping is not None:
            cover[:] = False
            for targets in mapping.table.values():
                for t in targets:
                    cover[taxonomy.index(t)] = True
        self.coverage = cover

    def targets(self, code: str) -> tuple[int, ...] | None:
        if code in self._cache:
            return self._cache[code]
        out: tuple[int, ...] | None
        if self.mapping is not None:
            ids = self.mapping.map(code)
            out = None if ids is None else tuple(self.tax.index(i) for i in ids)
        elif code in self.tax.ids:
            out = (self.tax.index(code),)
        else:
            rid = self.tax.resolve(code)
            out = None if rid is None else (self.tax.index(rid),)
        self._cache[code] = out
        return out

    def unknown(self, code: str) -> str:
        if self.mapping is not None:
            return (
                f"unknown label code {code!r} for mapping {self.mapping.name!r}; "
                f"known codes: {', '.join(self.mapping.table)}"
            )
        return (
            f"unknown category {code!r} for taxonomy {self.tax.name!r}; "
            f"known ids: {', '.join(self.tax.ids)}"
        )

    def misspelt(self, field: str, kind: str = "field") -> str | None:
        """An error message when ``field`` (not a category) looks like a misspelt one
        (``gamme`` for ``gamma``, by difflib), else None. Documented metadata fields and
        pandas index columns are never taken for one."""
        if (field, kind) not in self._misspelt:
            self._misspelt[(field, kind)] = self._misspelt_uncached(field, kind)
        return self._misspelt[(field, kind)]

    def _misspelt_uncached(self, field: str, kind: str) -> str | None:
        if field in _RESERVED or field.lower() in KNOWN_METADATA or _INDEX_COLUMN.match(field):
            return None
        if self.mapping is not None:
            cands = {c.lower(): c for c in self.mapping.table}
        else:
            cands = {}
            for cat in self.tax.categories:
                for x in (cat.id, cat.name, *cat.aliases):
                    cands.setdefault(x.lower(), cat.id)
                    cands.setdefault(normalize_label(x), cat.id)
        key = field.lower()
        hit = difflib.get_close_matches(key, list(cands), n=1, cutoff=0.8)
        if not hit:
            hit = difflib.get_close_matches(normalize_label(field), list(cands), n=1, cutoff=0.8)
        if not hit:
            return None
        what = (
            f"a code of mapping {self.mapping.name!r}"
            if self.mapping is not None
            else f"a category of taxonomy {self.tax.name!r}"
        )
        return (
            f"{kind} {field!r} is not {what}; did you mean {cands[hit[0]]!r}? "
            f"(per-category label {kind}s must be named after a category: rename it, or "
            "give the labels in a 'labels' field)"
        )

    def code_targets(self, code: Any, where: str) -> tuple[int, ...]:
        if not isinstance(code, str):
            raise DatasetError(f"{where}: category names must be strings, got {code!r}")
        t = self.targets(code)
        if t is None:
            raise DatasetError(f"{where}: {self.unknown(code)}")
        return t

    def from_list(self, codes: Sequence[Any], where: str) -> tuple[np.ndarray, np.ndarray]:
        y = np.zeros(self.k, dtype=np.int8)
        for c in codes:
            for t in self.code_targets(c, where):
                y[t] = 1
        return y, self.coverage.copy()

    def from_object(self, obj: dict[str, Any], where: str) -> tuple[np.ndarray, np.ndarray]:
        pos = np.zeros(self.k, dtype=bool)
        neg_votes = np.zeros(self.k, dtype=np.int64)
        unk_votes = np.zeros(self.k, dtype=np.int64)
        # without a mapping each category has one value: two keys naming it (its id and
        # an alias, or two spellings) must agree, as in prediction files
        given: dict[int, tuple[str, int | None]] = {}
        for code, v in obj.items():
            ts = self.code_targets(code, where)
            val = _cell(v, f"{where}: labels[{code!r}]")
            if self.mapping is None:
                for t in ts:
                    first = given.setdefault(t, (code, val))
                    if first[1] != val:
                        raise DatasetError(
                            f"{where}: keys {first[0]!r} ({_cell_text(first[1])}) and "
                            f"{code!r} ({_cell_text(val)}) both name category "
                            f"{self.tax.ids[t]!r} with different labels; keep one"
                        )
            for t in ts:
                if val == 1:
                    pos[t] = True
                elif val == 0:
                    neg_votes[t] += 1
                else:
                    unk_votes[t] += 1
        known = pos | ((neg_votes > 0) & (unk_votes == 0))
        return pos.astype(np.int8), known

    def from_vector(self, vec: Sequence[Any], where: str) -> tuple[np.ndarray, np.ndarray]:
        if self.mapping is not None:
            raise DatasetError(
                f"{where}: a label vector cannot be used with a label mapping; "
                "give labels as a list or object of codes"
            )
        if len(vec) != self.k:
            raise DatasetError(
                f"{where}: label vector has length {len(vec)}, expected K = {self.k} "
                f"(taxonomy {self.tax.name!r}: {', '.join(self.tax.ids)})"
            )
        y = np.zeros(self.k, dtype=np.int8)
        m = np.zeros(self.k, dtype=bool)
        for j, v in enumerate(vec):
            val = _cell(v, f"{where}: labels[{j}]", allow_minus_one=True)
            if val is not None:
                y[j] = val
                m[j] = True
        return y, m

    def parse(self, value: Any, where: str) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(value, dict):
            return self.from_object(value, where)
        if isinstance(value, list):
            if all(isinstance(v, str) for v in value):
                return self.from_list(value, where)
            if all(v is None or (not isinstance(v, str)) for v in value):
                return self.from_vector(value, where)
            raise DatasetError(
                f"{where}: labels mix category names and numbers; use a list of ids or a K-vector"
            )
        if isinstance(value, str):
            return self.parse(_split_label_text(value, where), where)
        raise DatasetError(
            f"{where}: labels must be a list of ids, an object or a K-vector, got {value!r}"
        )

    def annotations(self, value: Any, where: str) -> tuple[np.ndarray, int]:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as e:
                raise DatasetError(f"{where}: annotations are not valid JSON: {e}") from None
        if not isinstance(value, list) or not all(isinstance(a, list) for a in value):
            raise DatasetError(
                f"{where}: annotations must be a list of per-annotator label lists, got {value!r}"
            )
        counts = np.zeros(self.k, dtype=np.float64)
        for j, ann in enumerate(value):
            y, _ = self.from_list(ann, f"{where}: annotations[{j}]")
            counts += y
        return counts, len(value)


def _cell(v: Any, where: str, *, allow_minus_one: bool = False) -> int | None:
    """One label cell: 1/0 (or true/false) is known, null (or NaN, or -1 in a vector) unknown."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        if v == 1:
            return 1
        if v == 0:
            return 0
        if v == -1 and allow_minus_one:
            return None
    allowed = "1, 0, -1 or null" if allow_minus_one else "1, 0 or null"
    raise DatasetError(f"{where}: label value must be {allowed}, got {v!r}")


def _cell_text(value: int | None) -> str:
    return "unknown" if value is None else str(value)


def _split_label_text(text: str, where: str) -> Any:
    s = text.strip()
    if s.startswith(("[", "{")):
        try:
            return json.loads(s)
        except json.JSONDecodeError as e:
            raise DatasetError(f"{where}: labels are not valid JSON: {e}") from None
    return [p.strip() for p in s.split(";") if p.strip()]


# ---------------------------------------------------------------------- assembling


@dataclass
class _Raw:
    ids: Sequence[str]
    texts: Sequence[str]
    responses: Sequence[str] | None
    y: np.ndarray
    mask: np.ndarray
    counts: np.ndarray | None
    n_ann: np.ndarray | None
    has_labels: np.ndarray  # (N,) bool: row had explicit labels (these win over annotations)
    ignored: tuple[str, ...] = ()  # fields that gave no labels and are not schema fields


def _combine(
    raw: _Raw, rule: Rule, min_annotators: int, coverage: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    y, mask = raw.y, raw.mask
    if raw.counts is None or raw.n_ann is None:
        return y, mask, None, None
    n = raw.n_ann
    ann = n > 0
    from_ann = ann & ~raw.has_labels
    counts = raw.counts
    if rule == "majority":
        hard = counts * 2 > n[:, None]
    elif rule == "union":
        hard = counts >= 1
    else:
        hard = counts >= min_annotators
    y = y.copy()
    mask = mask.copy()
    y[from_ann] = hard[from_ann].astype(np.int8)
    mask[from_ann] = coverage
    y[~mask] = 0
    soft = np.where(ann[:, None], counts / np.maximum(n, 1)[:, None], y.astype(np.float64))
    soft[~mask] = np.nan
    return y, mask, soft, n.astype(np.int64)


def _check_unique(ids: list[str], lines: Sequence[int] | None, source: str, unit: str) -> None:
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


def _records_to_raw(
    records: Iterable[tuple[int, Any]], labels: _Labels, source: str, unit: str = "line"
) -> _Raw:
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
            if c in _RESERVED:
                continue
            if labels.targets(c) is not None:
                cat_cols[c] = v
                if per_category:
                    continue  # otherwise labels / annotations give the targets: ignored
            elif per_category and (msg := labels.misspelt(c)) is not None:
                raise DatasetError(f"{where}: {msg}")
            ignored[c] = None
        if lab is not None:
            y, m = labels.parse(lab, where)
        elif ann is None and cat_cols:
            y, m = labels.from_object(cat_cols, where)
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
    _check_unique(ids, lines, source, unit)
    if any_resp:
        for i, r in enumerate(responses):
            if r is None:
                raise DatasetError(
                    f"{source}: {unit} {lines[i]}: missing 'response' "
                    "(other rows have one; a dataset is prompt- or response-level)"
                )
    return _Raw(
        ids=ids,
        texts=texts,
        responses=[r or "" for r in responses] if any_resp else None,
        y=np.vstack(ys),
        mask=np.vstack(ms),
        counts=np.vstack(counts) if any_ann else None,
        n_ann=np.asarray(n_ann, dtype=np.int64) if any_ann else None,
        has_labels=np.asarray(has_labels, dtype=bool),
        ignored=tuple(ignored),
    )


# ------------------------------------------------------------- column-wise (pyarrow)


class _NotColumnar(Exception):
    """The table is not in a form the column-wise path handles; use the row path."""


def _check_column_names(names: Sequence[str], source: str) -> None:
    """Every column must mean one thing: a name given twice is an error."""
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if list(names).count(n) > 1})
        raise DatasetError(
            f"{source}: column name {', '.join(map(repr, dup))} appears more than once; "
            "every column name must be unique"
        )


def _list_of_codes(arr: pa.Array, labels: _Labels) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise list<string> -> (rows, cols) index pairs of positives."""
    flat = pc.list_flatten(arr)
    parents = np.asarray(pc.list_parent_indices(arr))
    if len(flat) == 0:
        return parents, parents
    if isinstance(flat, pa.ChunkedArray):
        flat = flat.combine_chunks()
    # Parquet label lists arrive dictionary-encoded (see _read_parquet): no hashing here
    enc = flat if pa.types.is_dictionary(flat.type) else pc.dictionary_encode(flat)
    if enc.null_count or enc.dictionary.null_count:
        raise _NotColumnar
    codes = enc.dictionary.to_pylist()
    idx = np.asarray(enc.indices).astype(np.intp, copy=False)
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
            raise _NotColumnar
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
        raise _NotColumnar
    vals = np.asarray(pc.cast(arr, pa.float64()).fill_null(-1.0).to_numpy(zero_copy_only=False))
    vals = np.where(np.isnan(vals), -1.0, vals)
    if not np.isin(vals, (0.0, 1.0, -1.0)).all():
        raise _NotColumnar
    return vals == 1.0, vals != -1.0


def _table_labels(
    table: pa.Table, labels: _Labels, *, csv_text: bool = False
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
            raise _NotColumnar
        if csv_text and pa.types.is_string(t):
            first = pc.utf8_slice_codeunits(pc.utf8_trim_whitespace(col), 0, 1)
            if pc.any(pc.is_in(first, pa.array(["[", "{"]))).as_py():
                raise _NotColumnar
            col = pc.split_pattern(pc.utf8_trim_whitespace(col), ";")
            col = pa.ListArray.from_arrays(col.offsets, pc.utf8_trim_whitespace(col.flatten()))
            col = _drop_empty_strings(col)
            t = col.type
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            vt = t.value_type
            lens = np.asarray(pc.list_value_length(col))
            if _is_text(vt):
                r, c = _list_of_codes(col, labels)
                y[r, c] = 1
                mask[:] = labels.coverage
            elif pa.types.is_null(vt) and (lens == 0).all():
                mask[:] = labels.coverage
            else:
                if labels.mapping is not None or not ((lens == 0) | (lens == k)).all():
                    raise _NotColumnar
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
                if ts is None or _claims_again(ts, claimed, labels):
                    raise _NotColumnar
                one, known = _tri_state(col.field(i))
                for tt in ts:
                    per_target_pos[:, tt] |= one
                    neg[:, tt] += known & ~one
                    unk[:, tt] += ~known
            y[:] = per_target_pos
            mask[:] = per_target_pos | ((neg > 0) & (unk == 0))
        else:
            raise _NotColumnar
        return y, mask
    cols = [c for c in table.column_names if c not in _RESERVED]
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
        if _claims_again(ts, named, labels):
            raise _NotColumnar  # two columns name one category: the row path checks them
        found = True
        col = table.column(name).combine_chunks()
        if pa.types.is_string(col.type):
            col = _text_cells(col, name)
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


def _claims_again(targets: tuple[int, ...], claimed: set[int], labels: _Labels) -> bool:
    """Whether a second label field names a category already named (an id and its alias,
    two spellings), with no mapping to combine codes: then the row path compares their
    values row by row. Adds ``targets`` to ``claimed``."""
    again = labels.mapping is None and not claimed.isdisjoint(targets)
    claimed.update(targets)
    return again


def _drop_empty_strings(col: pa.ListArray) -> pa.ListArray:
    flat = col.flatten()
    keep = pc.not_equal(flat, "")
    if pc.all(keep).as_py():
        return col
    parents = np.asarray(pc.list_parent_indices(col))
    kept = np.asarray(keep.to_numpy(zero_copy_only=False), dtype=bool)
    counts = np.bincount(parents[kept], minlength=len(col))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), flat.filter(keep))


class _CellError(Exception):
    def __init__(self, row: int, column: str, value: str) -> None:
        self.row, self.column, self.value = row, column, value


def _text_cells(col: pa.Array, name: str) -> pa.Array:
    """CSV cells '1'/'0'/''/'-1'/'true'/'false' -> float64 with nulls for unknown."""
    s = pc.utf8_lower(pc.utf8_trim_whitespace(col))
    one = pc.is_in(s, pa.array(["1", "1.0", "true", "yes"]))
    zero = pc.is_in(s, pa.array(["0", "0.0", "false", "no"]))
    unk = pc.or_(pc.is_null(s), pc.is_in(s, pa.array(["", "-1", "null", "nan", "na", "none"])))
    bad = pc.invert(pc.or_(pc.or_(one.fill_null(False), zero.fill_null(False)), unk))
    if pc.any(bad).as_py():
        i = int(np.flatnonzero(np.asarray(bad.to_numpy(zero_copy_only=False)))[0])
        raise _CellError(i, name, str(col[i].as_py()))
    out = np.where(np.asarray(one.fill_null(False)), 1.0, 0.0)
    nulls = np.asarray(unk.to_numpy(zero_copy_only=False), dtype=bool)
    return pa.array(out, mask=nulls)


def _table_annotations(table: pa.Table, labels: _Labels) -> tuple[np.ndarray, np.ndarray] | None:
    if "annotations" not in table.column_names:
        return None
    col = table.column("annotations").combine_chunks()
    t = col.type
    if not (pa.types.is_list(t) and pa.types.is_list(t.value_type)):
        raise _NotColumnar
    inner = col.flatten()
    if not pa.types.is_string(inner.type.value_type) and not pa.types.is_null(
        inner.type.value_type
    ):
        raise _NotColumnar
    if inner.null_count:
        raise _NotColumnar  # a null annotator list: the row path names the row
    n_ann = np.asarray(pc.list_value_length(col).fill_null(0), dtype=np.int64)
    outer_parent = np.asarray(pc.list_parent_indices(col))
    counts = np.zeros((len(col), labels.k), dtype=np.float64)
    if pa.types.is_string(inner.type.value_type):
        r, c = _list_of_codes(inner, labels)
        # one annotator marks a category at most once
        pairs = np.unique(np.stack([r, c]), axis=1) if len(r) else np.zeros((2, 0), np.int64)
        np.add.at(counts, (outer_parent[pairs[0]], pairs[1]), 1.0)
    return counts, n_ann


def _table_to_raw(
    table: pa.Table,
    labels: _Labels,
    source: str,
    unit: str,
    *,
    first_line: int,
    csv_text: bool = False,
) -> _Raw:
    n = table.num_rows
    if n == 0:
        raise DatasetError(f"{source}: the file has no rows")
    names = table.column_names
    _check_column_names(names, source)
    for req in ("id", "text"):
        if req not in names:
            raise DatasetError(f"{source}: missing column {req!r} (columns: {', '.join(names)})")
        nulls = table.column(req).null_count
        if nulls:
            i = int(np.flatnonzero(np.asarray(table.column(req).is_null()))[0])
            raise DatasetError(f"{source}: {unit} {i + first_line}: missing {req!r}")
    if not pa.types.is_string(table.column("text").type):
        raise _NotColumnar
    idcol = table.column("id")
    if not (pa.types.is_string(idcol.type) or pa.types.is_integer(idcol.type)):
        raise _NotColumnar
    for name in ("id", "text", "response"):
        if name in names and pa.types.is_string(table.column(name).type):
            try:  # pyarrow's JSON reader does not check UTF-8: the row path names the line
                table.column(name).validate(full=True)
            except pa.ArrowInvalid:
                raise _NotColumnar from None
    if csv_text and pa.types.is_string(idcol.type):
        empty = pc.equal(idcol, "")
        if pc.any(empty).as_py():
            i = int(np.flatnonzero(np.asarray(empty.to_numpy(zero_copy_only=False)))[0])
            raise DatasetError(f"{source}: {unit} {i + first_line}: missing 'id'")
    # ids, texts and responses stay Arrow columns: no Python string per row unless asked
    ids = StringColumn(idcol)
    if not ids.all_distinct():
        lines = list(range(first_line, first_line + n))
        _check_unique(ids.tolist(), lines, source, unit)
    texts = StringColumn(table.column("text"))
    responses: Sequence[str] | None = None
    if "response" in names:
        rc = table.column("response")
        if rc.null_count:
            i = int(np.flatnonzero(np.asarray(rc.is_null()))[0])
            raise DatasetError(f"{source}: {unit} {i + first_line}: missing 'response'")
        if pa.types.is_string(rc.type):
            responses = StringColumn(rc)
        else:
            responses = [str(v) for v in rc.to_pylist()]
    ann = _table_annotations(table, labels)
    try:
        if "labels" in names or ann is None:
            y, mask = _table_labels(table, labels, csv_text=csv_text)
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
    return _Raw(
        ids=ids,
        texts=texts,
        responses=responses,
        y=y,
        mask=mask,
        counts=None if ann is None else ann[0],
        n_ann=None if ann is None else ann[1],
        has_labels=has_labels,
        ignored=tuple(
            c
            for c in names
            if c not in _RESERVED
            and ("labels" in names or ann is not None or labels.targets(c) is None)
        ),
    )


# ----------------------------------------------------------------------- file readers


_NON_BLANK = re.compile(rb"\S")


def _blank(body: bytes) -> bool:
    """``not body.strip()`` without copying the body: stops at the first non-blank byte."""
    return _NON_BLANK.search(body) is None


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _RepeatedKey(k)
            seen.add(k)
    return obj


_ROW_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
_JSON_SPACE = " \t\r"  # JSON's whitespace within a line (RFC 8259, section 2)


def _json_lines(raw: bytes, source: str) -> Iterator[tuple[int, Any]]:
    text = decode_utf8(raw, source, DatasetError)
    decode = _ROW_DECODER.decode
    # Lines end at "\n" only (a "\r" before it is JSON whitespace): str.splitlines would
    # also split at U+2028, U+2029 and U+0085, which JSON allows raw inside a string.
    for no, line in enumerate(text.split("\n"), start=1):
        s = line.strip(_JSON_SPACE)
        if not s:
            continue
        try:
            yield no, decode(s)
        except json.JSONDecodeError as e:
            raise DatasetError(
                f"{source}: line {no}: malformed JSON ({e.msg} at column {e.colno})"
            ) from None
        except _RepeatedKey as e:
            # as pyarrow and the predictions reader do: a key given twice is ambiguous
            raise DatasetError(
                f"{source}: line {no}: key {e.key!r} is specified twice in one object"
            ) from None


def _read_jsonl(path: Path, data: bytes, labels: _Labels, source: str) -> _Raw:
    import pyarrow.json as pajson

    body = gunzip(path, data, DatasetError)
    if _blank(body):
        raise DatasetError(f"{source}: the file is empty")
    blank_free = b"\n\n" not in body and not body.startswith((b"\n", b"\r\n"))
    if blank_free:
        try:
            table = pajson.read_json(
                pa.BufferReader(body), read_options=pajson.ReadOptions(block_size=1 << 24)
            )
            return _table_to_raw(table, labels, source, "line", first_line=1)
        except (pa.ArrowException, _NotColumnar, DatasetError):
            pass  # re-read line by line: exact line numbers, mixed label forms
    try:
        return _records_to_raw(_json_lines(body, source), labels, source)
    except UnicodeDecodeError as e:
        raise DatasetError(f"{source}: not UTF-8 text: {e}") from None


def _read_csv(path: Path, data: bytes, labels: _Labels, source: str) -> _Raw:
    import pyarrow.csv as pacsv

    body = gunzip(path, data, DatasetError)
    if _blank(body):
        raise DatasetError(f"{source}: the file is empty")
    try:
        table = pacsv.read_csv(
            io.BytesIO(body),
            convert_options=pacsv.ConvertOptions(
                # ids, texts and label text exactly as written ("001" stays "001", a
                # 20-digit id is not a float); label cells may be inferred (1, 1.0, true)
                column_types={c: pa.string() for c in _RESERVED},
                strings_can_be_null=False,
                auto_dict_encode=False,
            ),
            read_options=pacsv.ReadOptions(block_size=1 << 24),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise DatasetError(f"{source}: cannot read CSV: {e}") from None
    _check_column_names(table.column_names, source)
    # every column as text: 1/0/empty cells, JSON label text
    table = pa.table({c: _as_text(table.column(c)) for c in table.column_names})
    try:
        return _table_to_raw(table, labels, source, "line", first_line=2, csv_text=True)
    except _NotColumnar:
        return _records_to_raw(_csv_records(table), labels, source)


def _as_text(col: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_string(col.type):
        return col
    if pa.types.is_null(col.type):
        return pa.chunked_array([pa.array([""] * len(col), pa.string())])
    out = pc.cast(col, pa.string())
    if pa.types.is_floating(col.type):
        out = pc.replace_substring_regex(out, r"\.0$", "")
    return out.fill_null("")


def _csv_records(table: pa.Table) -> Iterator[tuple[int, Any]]:
    cols = table.column_names
    data = {c: table.column(c).to_pylist() for c in cols}
    for i in range(table.num_rows):
        rec: dict[str, Any] = {}
        for c in cols:
            v = data[c][i]
            if c == "labels" or c == "text":
                rec[c] = v  # an empty labels cell is [] (no category)
            elif c in _RESERVED:
                rec[c] = None if v in ("", None) else v
            else:
                rec[c] = _csv_cell(v)
        yield i + 2, rec


def _csv_cell(v: Any) -> Any:
    s = str(v).strip().lower() if v is not None else ""
    if s in ("", "-1", "null", "nan", "na", "none"):
        return None
    if s in ("1", "1.0", "true", "yes"):
        return 1
    if s in ("0", "0.0", "false", "no"):
        return 0
    return v


def _read_parquet(data: bytes, labels: _Labels, source: str) -> _Raw:
    import pyarrow.parquet as pq

    try:
        # from the bytes already read for the hash (no second read); ParquetFile gives
        # one chunk per row group and does not import pyarrow.dataset, as read_table does
        source_file = pa.BufferReader(data)
        meta = pq.ParquetFile(source_file)
        schema = meta.schema_arrow
        _check_column_names(schema.names, source)
        # a list of label strings is read as dictionary codes: Parquet stores them that
        # way, so neither decoding to strings nor hashing them again is needed (Arrow
        # reads nested dictionaries from one row group only)
        as_dict = []
        if "labels" in schema.names and meta.metadata.num_row_groups == 1:
            t = schema.field("labels").type
            if pa.types.is_list(t) and pa.types.is_string(t.value_type):
                as_dict.append(f"labels.list.{t.value_field.name}")
        table = pq.ParquetFile(source_file, read_dictionary=as_dict or None).read()
    except (pa.ArrowException, OSError) as e:
        raise DatasetError(f"{source}: cannot read Parquet: {e}") from None
    try:
        return _table_to_raw(table, labels, source, "row", first_line=1)
    except _NotColumnar:
        recs = table.to_pylist()
        return _records_to_raw(((i + 1, r) for i, r in enumerate(recs)), labels, source, "row")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    for ext in (".jsonl.gz", ".json.gz", ".jsonl", ".json", ".csv.gz", ".csv", ".parquet", ".pq"):
        if name.endswith(ext):
            return ext
    return path.suffix.lower()


def _stem(path: Path) -> str:
    name = path.name
    ext = _suffix(path)
    return name[: -len(ext)] if ext and name.lower().endswith(ext) else path.stem


def _read_file(path: Path, labels: _Labels) -> tuple[_Raw, str]:
    source = str(path)
    require_file(path, "dataset file", DatasetError)
    ext = _suffix(path)
    data = path.read_bytes()
    if ext in (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".csv", ".csv.gz", ".parquet", ".pq"):
        hashing = BackgroundSha256(data)  # overlaps with parsing (hashlib drops the GIL)
        try:
            if ext in (".jsonl", ".jsonl.gz", ".json", ".json.gz"):
                raw = _read_jsonl(path, data, labels, source)
            elif ext in (".csv", ".csv.gz"):
                raw = _read_csv(path, data, labels, source)
            else:
                if not data:
                    raise DatasetError(f"{source}: the file is empty")
                raw = _read_parquet(data, labels, source)
        except (pa.ArrowException, UnicodeError) as e:
            # a form of malformed input no check anticipated: an input error naming the
            # file, never a raw Arrow error
            raise DatasetError(f"{source}: cannot read the dataset: {e}") from None
        return raw, hashing.result()
    if ext in (".gz", ".bz2", ".zst", ".lz4"):
        raise DatasetError(
            f"{source}: cannot read a {ext} file as a dataset: only gzipped JSONL or CSV "
            f"(.jsonl.gz, .json.gz, .csv.gz) is decompressed; decompress the file (or "
            f"gzip the JSONL or CSV in it) and pass that"
        )
    raise DatasetError(
        f"{source}: unknown dataset format {ext!r}; use .jsonl, .json, .csv or .parquet "
        f"(.pq), JSONL and CSV also gzipped (.jsonl.gz, .json.gz, .csv.gz)"
    )


# ----------------------------------------------------------------------------- public


def _taxonomy(taxonomy: str | Path | Taxonomy | None, default: str = DEFAULT_TAXONOMY) -> Taxonomy:
    try:
        return load_taxonomy(default if taxonomy is None else taxonomy)
    except TaxonomyError as e:
        raise DatasetError(str(e)) from None


def _mapping(label_map: str | Path | LabelMapping | None, tax: Taxonomy) -> LabelMapping | None:
    if label_map is None or isinstance(label_map, LabelMapping):
        m = label_map
    else:
        try:
            m = load_mapping(label_map)
        except TaxonomyError as e:
            raise DatasetError(str(e)) from None
    if m is not None and m.target != tax.name:
        raise DatasetError(
            f"label mapping {m.name!r} targets taxonomy {m.target!r}, not {tax.name!r}"
        )
    return m


def _finish(
    raw: _Raw,
    *,
    name: str,
    level: Level,
    tax: Taxonomy,
    labels: _Labels,
    rule: Rule,
    min_annotators: int,
    source: str,
    sha: str,
) -> Dataset:
    y, mask, soft, n_ann = _combine(raw, rule, min_annotators, labels.coverage)
    y = np.ascontiguousarray(y, dtype=np.int8)
    if not mask.all():
        y[~mask] = 0
    return Dataset(
        name=name,
        level="response" if raw.responses is not None else level,
        taxonomy=tax,
        ids=raw.ids,
        texts=raw.texts,
        responses=raw.responses,
        y_true=y,
        mask=np.ascontiguousarray(mask, dtype=bool),
        soft=soft,
        n_annotators=n_ann,
        source=source,
        sha256=sha,
        ignored_fields=raw.ignored,
    )


def _data_dirs(data_dir: str | Path | None) -> list[Path]:
    out: list[Path] = []
    if data_dir is not None:
        out.append(Path(data_dir))
    env = os.environ.get(ENV_DATA_DIR)
    if env:
        out.append(Path(env))
    return out


def _candidates(name: str, data_dir: str | Path | None) -> list[Path]:
    paths: list[Path] = []
    for d in _data_dirs(data_dir):
        if name == "openai-moderation":
            for base in (d, d / "openai-moderation"):
                paths += [base / OPENAI_FILE, base / OPENAI_FILE.removesuffix(".gz")]
        else:
            for base in (d, d / name):
                paths += [base / f"{name}{ext}" for ext in _EXTENSIONS]
    return paths


def _find(path: Path) -> Path | None:
    """``path`` itself, or a file in its directory whose name matches case-insensitively."""
    if path.is_file():
        return path
    parent = path.parent
    if not parent.is_dir():
        return None
    want = path.name.lower()
    for p in sorted(parent.iterdir()):
        if p.name.lower() == want and p.is_file():
            return p
    return None


def _registry_name(name: str) -> str | None:
    for key in _REGISTRY:
        if key.lower() == name.lower():
            return key
    return None


def _missing_message(name: str, tried: list[Path]) -> str:
    where = "\n".join(f"  {p}" for p in tried) or (
        f"  (nowhere: pass data_dir= / --data-dir, or set ${ENV_DATA_DIR})"
    )
    return (
        f"dataset {name!r} not found. toxeval looked at:\n{where}\n"
        f"Point toxeval at the directory that holds it with data_dir= (--data-dir DIR) "
        f"or ${ENV_DATA_DIR}, or pass the file's path.\n{SCHEMA_SUMMARY}"
    )


def list_datasets(data_dir: str | Path | None = None) -> list[DatasetInfo]:
    """Known datasets: the embedded demo set and the registry, with where each is looked for."""
    out = [
        DatasetInfo(
            name="demo",
            level="prompt",
            description="embedded demo set written for toxeval (a demo, not a benchmark)",
            looked_at=("built-in:demo",),
            path="built-in:demo",
        )
    ]
    for name, (level, desc) in _REGISTRY.items():
        tried = _candidates(name, data_dir)
        found = next((f for f in (_find(p) for p in tried) if f is not None), None)
        out.append(
            DatasetInfo(
                name=name,
                level=level,
                description=desc,
                looked_at=tuple(str(p) for p in tried),
                path=None if found is None else str(found),
            )
        )
    return out


def read_openai_moderation(
    path: str | Path,
    *,
    taxonomy: str | Path | Taxonomy = "openai-moderation-8",
) -> Dataset:
    """Read OpenAI's moderation evaluation format (``samples-1680.jsonl.gz``).

    Each row has ``prompt`` and some of the keys S, H, V, HR, SH, S3, H2, V2 with value 0
    or 1; **an absent key means the label is unknown** (mask False). Ids are the 1-based
    line numbers. With a taxonomy other than ``openai-moderation-8`` the keys go through the
    built-in ``openai-moderation`` mapping (which must target that taxonomy).
    """
    p = require_file(path, "OpenAI moderation file", DatasetError)
    tax = _taxonomy(taxonomy)
    mapping = None if tax.name == "openai-moderation-8" else _mapping("openai-moderation", tax)
    labels = _Labels(tax, mapping)
    data = p.read_bytes()
    body = gunzip(p, data, DatasetError)
    if not body.strip():
        raise DatasetError(f"{p}: the file is empty")
    records: list[tuple[int, Any]] = []
    for no, rec in _json_lines(body, str(p)):
        if not isinstance(rec, dict) or not isinstance(rec.get("prompt"), str):
            raise DatasetError(f"{p}: line {no}: expected an object with a string 'prompt'")
        lab = {k: v for k, v in rec.items() if k in OPENAI_KEYS}
        extra = [k for k in rec if k != "prompt" and k not in OPENAI_KEYS]
        if extra:
            raise DatasetError(
                f"{p}: line {no}: unknown key(s) {', '.join(map(repr, extra))}; "
                f"expected 'prompt' and some of {', '.join(OPENAI_KEYS)}"
            )
        # every key the row lacks is unknown: list it as null so the mask says so
        obj = {k: lab.get(k) for k in OPENAI_KEYS}
        records.append((no, {"id": str(no), "text": rec["prompt"], "labels": obj}))
    raw = _records_to_raw(records, labels, str(p))
    return _finish(
        raw,
        name="openai-moderation",
        level="prompt",
        tax=tax,
        labels=labels,
        rule="majority",
        min_annotators=1,
        source=str(p),
        sha=hashlib.sha256(data).hexdigest(),
    )


def _is_openai_moderation(path: Path) -> bool:
    """Whether ``path`` is a JSONL file in OpenAI's moderation format, told by its
    content, not its name: its first row has a string ``prompt``, no ``text`` or
    ``id``, and only OpenAI's category keys beside it."""
    if not path.is_file() or _suffix(path) not in (".jsonl", ".jsonl.gz", ".json", ".json.gz"):
        return False
    try:
        if _suffix(path).endswith(".gz"):
            with gzip.open(path, "rb") as f:
                head = f.readline(1 << 20)
        else:
            with open(path, "rb") as f:
                head = f.readline(1 << 20)
        first = json.loads(head.decode("utf-8-sig"))
    except (OSError, EOFError, ValueError, zlib.error):
        return False  # the dataset reader names what is wrong with the file
    return (
        isinstance(first, dict)
        and isinstance(first.get("prompt"), str)
        and all(k == "prompt" or k in OPENAI_KEYS for k in first)
    )


def _check_openai_options(
    path: Path, rule: Rule, min_annotators: int, label_map: str | Path | LabelMapping | None
) -> None:
    """Reject the options :func:`load_dataset` takes that mean nothing for the OpenAI
    moderation format (rather than ignore them)."""
    if rule != "majority" or min_annotators != 1:
        raise DatasetError(
            f"{path}: the OpenAI moderation format has no per-annotator annotations, so "
            f"rule= (--rule) and min_annotators= (--min-annotators) do not apply (given "
            f"rule={rule!r}, min_annotators={min_annotators!r}); leave them at their "
            f"defaults"
        )
    if label_map is not None:
        raise DatasetError(
            f"{path}: label_map= does not apply to the OpenAI moderation format: its keys "
            f"({', '.join(OPENAI_KEYS)}) are read as taxonomy 'openai-moderation-8', or "
            f"through the built-in 'openai-moderation' mapping for another taxonomy; drop "
            f"label_map"
        )


def load_dataset(
    name_or_path: str | Path | None = None,
    *,
    taxonomy: str | Path | Taxonomy | None = None,
    data_dir: str | Path | None = None,
    rule: Rule = "majority",
    min_annotators: int = 1,
    label_map: str | Path | LabelMapping | None = None,
) -> Dataset:
    """Load a dataset: the embedded demo set (``None`` or ``"demo"``), a registry name, or a file.

    Registry names ``Q-A-MLL``, ``H-X-MLL`` (prompt level) and ``R-A-MLL`` (response level)
    are looked for in ``data_dir`` and then ``$TOXEVAL_DATA_DIR`` as
    ``<name>.{jsonl,jsonl.gz,csv,parquet}`` (case-insensitive, also inside ``<name>/``);
    ``openai-moderation`` as ``samples-1680.jsonl.gz``. A missing dataset raises
    :class:`DatasetError` listing every path looked at and the expected schema.

    Rows with per-annotator ``annotations`` and no ``labels`` get their targets by ``rule``:
    ``majority`` (more than half of the annotators), ``union`` (at least one) or
    ``at_least`` (at least ``min_annotators``). When a row has both, ``labels`` wins for the
    targets and the annotations only give the soft labels. ``label_map`` translates label
    codes of another scheme (e.g. ``llama-guard-3``) into the taxonomy; categories no code
    maps to are unknown.
    """
    if not isinstance(rule, str) or rule not in _RULES:
        raise DatasetError(
            f"unknown annotator rule {rule!r}; pass rule= (--rule) majority, union or at_least"
        )
    if (
        isinstance(min_annotators, bool)
        or not isinstance(min_annotators, int)
        or min_annotators < 1
    ):
        raise DatasetError(f"min_annotators must be an integer >= 1, got {min_annotators!r}")
    if min_annotators != 1 and rule != "at_least":
        raise DatasetError(
            f"min_annotators= (--min-annotators) only applies with rule='at_least' "
            f"(--rule at_least), and the rule is {rule!r}; pass rule='at_least' or drop "
            f"min_annotators"
        )
    if name_or_path is None or (isinstance(name_or_path, str) and name_or_path.lower() == "demo"):
        tax = _taxonomy(taxonomy)
        labels = _Labels(tax, _mapping(label_map, tax))
        if tax.name != "toxeval-15" and label_map is None:
            raise DatasetError(
                f"the demo set is labelled with toxeval-15; taxonomy {tax.name!r} needs a "
                "label_map from toxeval-15 ids"
            )
        res = resources.files("toxeval") / "data" / "datasets" / "demo.jsonl"
        data = res.read_bytes()
        raw = _records_to_raw(_json_lines(data, "built-in:demo"), labels, "built-in:demo")
        return _finish(
            raw,
            name="demo",
            level="prompt",
            tax=tax,
            labels=labels,
            rule=rule,
            min_annotators=min_annotators,
            source="built-in:demo",
            sha=hashlib.sha256(data).hexdigest(),
        )
    reg = _registry_name(str(name_or_path)) if isinstance(name_or_path, str) else None
    if reg is not None and not Path(str(name_or_path)).is_file():
        tried = _candidates(reg, data_dir)
        found = next((f for f in (_find(p) for p in tried) if f is not None), None)
        if found is None:
            raise DatasetError(_missing_message(reg, tried))
        if reg == "openai-moderation":
            _check_openai_options(found, rule, min_annotators, label_map)
            return read_openai_moderation(found, taxonomy=taxonomy or "openai-moderation-8")
        path, name, level = found, reg, _REGISTRY[reg][0]
    else:
        path = Path(name_or_path)
        if not path.exists():
            raise DatasetError(
                f"{str(name_or_path)!r} is neither a file nor a known dataset "
                f"(known: demo, {', '.join(_REGISTRY)})"
            )
        if _is_openai_moderation(path):
            _check_openai_options(path, rule, min_annotators, label_map)
            return read_openai_moderation(path, taxonomy=taxonomy or "openai-moderation-8")
        name, level = _stem(path), "prompt"
    tax = _taxonomy(taxonomy)
    labels = _Labels(tax, _mapping(label_map, tax))
    raw, sha = _read_file(path, labels)
    return _finish(
        raw,
        name=name,
        level=level,
        tax=tax,
        labels=labels,
        rule=rule,
        min_annotators=min_annotators,
        source=str(path),
        sha=sha,
    )
