"""Label values into label matrices: the accepted label forms, annotator rules and soft labels.

:class:`LabelReader` turns a row's labels (a list of category ids, an object
``{id: 1 | 0 | null}``, a K-vector with -1/null for unknown, or per-category columns) into
a row of the (N, K) label and mask matrices, through a taxonomy and an optional label
mapping. :func:`build_dataset` combines per-annotator label lists by a rule (majority,
union, at least k) into targets, and their agreement fraction into soft labels.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toxeval.datasets.schema import (
    INDEX_COLUMN,
    KNOWN_METADATA,
    RESERVED_FIELDS,
    Dataset,
    DatasetError,
    Level,
    Rule,
)
from toxeval.taxonomy import (
    DEFAULT_TAXONOMY,
    LabelMapping,
    Taxonomy,
    TaxonomyError,
    load_mapping,
    load_taxonomy,
    normalize_label,
)


class LabelReader:
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
        if field in RESERVED_FIELDS or field.lower() in KNOWN_METADATA or INDEX_COLUMN.match(field):
            return None
        if self.mapping is not None:
            cands = {c.lower(): c for c in self.mapping.table}
            hit = difflib.get_close_matches(field.lower(), list(cands), n=1, cutoff=0.8)
            if not hit:
                hit = difflib.get_close_matches(
                    normalize_label(field), list(cands), n=1, cutoff=0.8
                )
            if not hit:
                return None
            suggestion = cands[hit[0]]
        else:
            # the same suggestion the parser gives for a misspelt name in an answer
            found = self.tax.suggest(field)
            if found is None:
                return None
            suggestion = found
        what = (
            f"a code of mapping {self.mapping.name!r}"
            if self.mapping is not None
            else f"a category of taxonomy {self.tax.name!r}"
        )
        return (
            f"{kind} {field!r} is not {what}; did you mean {suggestion!r}? "
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

    def from_object(
        self, obj: dict[str, Any], where: str, *, text_cells: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """A labels object, or (``text_cells``) a row's per-category fields, whose cells
        may also be the words of :data:`TEXT_ONE` / :data:`TEXT_ZERO` / :data:`TEXT_UNKNOWN`
        as in a column-wise read."""
        pos = np.zeros(self.k, dtype=bool)
        neg_votes = np.zeros(self.k, dtype=np.int64)
        unk_votes = np.zeros(self.k, dtype=np.int64)
        # without a mapping each category has one value: two keys naming it (its id and
        # an alias, or two spellings) must agree, as in prediction files
        given: dict[int, tuple[str, int | None]] = {}
        for code, v in obj.items():
            ts = self.code_targets(code, where)
            val = _cell(v, f"{where}: labels[{code!r}]", text=text_cells)
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
            val = _cell(v, f"{where}: labels[{j}]")
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
            except (json.JSONDecodeError, RecursionError) as e:
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


# Label cells written as text (CSV cells, string columns of per-category labels), compared
# after stripping and lower-casing; anything else is an error.
TEXT_ONE = ("1", "1.0", "true", "yes")
TEXT_ZERO = ("0", "0.0", "false", "no")
TEXT_UNKNOWN = ("", "-1", "null", "nan", "na", "none")


def text_cell(v: str) -> int | str | None:
    """1, 0 or None (unknown) for a word of the text vocabulary, else ``v`` unchanged."""
    s = v.strip().lower()
    if s in TEXT_ONE:
        return 1
    if s in TEXT_ZERO:
        return 0
    if s in TEXT_UNKNOWN:
        return None
    return v


def _cell(v: Any, where: str, *, text: bool = False) -> int | None:
    """One label cell: 1/0 (or true/false) is known, null, NaN or -1 unknown (as the
    column-wise readers read them); with ``text``, the words of :func:`text_cell` too."""
    if text and isinstance(v, str):
        v = text_cell(v)
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        if v == 1:
            return 1
        if v == 0:
            return 0
        if v == -1:
            return None
    raise DatasetError(f"{where}: label value must be 1, 0, -1 or null, got {v!r}")


def _cell_text(value: int | None) -> str:
    return "unknown" if value is None else str(value)


def _split_label_text(text: str, where: str) -> Any:
    s = text.strip()
    if s.startswith(("[", "{")):
        try:
            return json.loads(s)
        except (json.JSONDecodeError, RecursionError) as e:
            raise DatasetError(f"{where}: labels are not valid JSON: {e}") from None
    return [p.strip() for p in s.split(";") if p.strip()]


@dataclass
class RawRows:
    ids: Sequence[str]
    texts: Sequence[str]
    responses: Sequence[str] | None
    y: np.ndarray
    mask: np.ndarray
    counts: np.ndarray | None
    n_ann: np.ndarray | None
    has_labels: np.ndarray  # (N,) bool: row had explicit labels (these win over annotations)
    ignored: tuple[str, ...] = ()  # fields that gave no labels and are not schema fields
    extra: Mapping[str, Any] = field(default_factory=dict)  # their values: pyarrow arrays


def _combine(
    raw: RawRows, rule: Rule, min_annotators: int, coverage: np.ndarray
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


def claims_again(targets: tuple[int, ...], claimed: set[int], labels: LabelReader) -> bool:
    """Whether a second label field names a category already named (an id and its alias,
    two spellings), with no mapping to combine codes: then the row path compares their
    values row by row. Adds ``targets`` to ``claimed``."""
    again = labels.mapping is None and not claimed.isdisjoint(targets)
    claimed.update(targets)
    return again


def dataset_taxonomy(
    taxonomy: str | Path | Taxonomy | None, default: str = DEFAULT_TAXONOMY
) -> Taxonomy:
    try:
        return load_taxonomy(default if taxonomy is None else taxonomy)
    except TaxonomyError as e:
        raise DatasetError(str(e)) from None


def dataset_mapping(
    label_map: str | Path | LabelMapping | None, tax: Taxonomy
) -> LabelMapping | None:
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


def build_dataset(
    raw: RawRows,
    *,
    name: str,
    level: Level,
    tax: Taxonomy,
    labels: LabelReader,
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
        columns=dict(raw.extra),
    )
