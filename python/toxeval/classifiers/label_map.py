"""A classifier's labels onto a taxonomy's columns.

The mapping is a :class:`~toxeval.taxonomy.LabelMapping` (shipped: ``detoxify-original``,
``detoxify-unbiased``, ``detoxify-multilingual`` and their ``-openai-moderation-8``
versions; or a TOML file of the same form) whose codes are the model's labels. Without
one: when every label is a category id, name or alias of the taxonomy (a model trained on
it), the taxonomy itself; else the shipped mapping for the dataset's taxonomy whose codes
cover every label of the model (the one with fewest extra codes).

Rules: every model label must be in the mapping (a label mapped to ``[]`` is read and not
used), so a model whose heads are not what the mapping was written for is refused, not
half-read. A category's score is the **largest** probability of the labels that map to it
(a text is as likely to be in the category as its likeliest label says: Detoxify's
``threat`` and ``insult`` both speak to harassment). A category no label maps to is
unknown (NaN, masked in the report) on every row, never 0.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from toxeval.taxonomy import LabelMapping, Taxonomy, list_mappings, load_mapping

__all__ = ["ColumnMap", "column_map"]


@dataclass(frozen=True)
class ColumnMap:
    """``sources[k]``: the model-output indices whose maximum is taxonomy column ``k``
    (empty: the column is unknown). ``name`` and ``table`` identify the mapping."""

    name: str
    table: dict[str, list[str]]
    sources: tuple[tuple[int, ...], ...]

    def fingerprint(self) -> dict[str, Any]:
        """The mapping's name and the sha256 of its table (what a run file's hash holds)."""
        blob = json.dumps(self.table, sort_keys=True, separators=(",", ":"))
        return {"name": self.name, "sha256": hashlib.sha256(blob.encode()).hexdigest()}

    @property
    def unmapped(self) -> tuple[int, ...]:
        """Taxonomy columns no model label maps to."""
        return tuple(k for k, src in enumerate(self.sources) if not src)

    def apply(self, probs: np.ndarray) -> np.ndarray:
        """(n, K) scores from (n, L) label probabilities: the max over each column's
        labels, NaN where no label maps."""
        n = probs.shape[0]
        out = np.full((n, len(self.sources)), np.nan, dtype=np.float64)
        for k, src in enumerate(self.sources):
            if src:
                out[:, k] = probs[:, list(src)].max(axis=1)
        return out


def _fits(m: LabelMapping, tax: Taxonomy) -> bool:
    return m.target == tax.name and m.targets <= set(tax.ids)


def _from_mapping(m: LabelMapping, labels: tuple[str, ...], tax: Taxonomy) -> ColumnMap:
    missing = [lab for lab in labels if m.map(lab) is None]
    if missing:
        raise ValueError(
            f"mapping {m.name!r} has no entry for the model's label(s) "
            f"{', '.join(map(repr, missing))}; add them to a mapping file (map a label to [] "
            "to leave it unused) and pass it with --mapping"
        )
    outside = sorted(m.targets - set(tax.ids))
    if outside:
        raise ValueError(
            f"mapping {m.name!r} targets taxonomy {m.target!r}: {', '.join(outside)} are not "
            f"categories of {tax.name!r}; pick a mapping for {tax.name!r} (--mapping)"
        )
    cols: list[list[int]] = [[] for _ in tax.ids]
    for j, lab in enumerate(labels):
        for cid in m.map(lab) or ():
            cols[tax.index(cid)].append(j)
    table = {lab: list(m.map(lab) or ()) for lab in labels}
    return ColumnMap(m.name, table, tuple(tuple(c) for c in cols))


def _identity(labels: tuple[str, ...], tax: Taxonomy) -> ColumnMap | None:
    resolved = [tax.resolve(lab) for lab in labels]
    if any(r is None for r in resolved):
        return None
    cols: list[list[int]] = [[] for _ in tax.ids]
    for j, cid in enumerate(resolved):
        cols[tax.index(str(cid))].append(j)
    table = {lab: [str(cid)] for lab, cid in zip(labels, resolved, strict=True)}
    return ColumnMap(f"taxonomy:{tax.name}", table, tuple(tuple(c) for c in cols))


def column_map(labels: tuple[str, ...], tax: Taxonomy, mapping: str | Path | None) -> ColumnMap:
    """The :class:`ColumnMap` of a model's ``labels`` on ``tax`` (see the module
    docstring); a ValueError names what does not fit."""
    if mapping is not None:
        return _from_mapping(load_mapping(mapping), labels, tax)
    ident = _identity(labels, tax)
    if ident is not None:
        return ident
    candidates = []
    for name in list_mappings():
        m = load_mapping(name)
        if _fits(m, tax) and all(m.map(lab) is not None for lab in labels):
            candidates.append((len(m.table) - len(labels), name, m))
    if candidates:
        return _from_mapping(min(candidates)[2], labels, tax)
    raise ValueError(
        f"no shipped mapping for taxonomy {tax.name!r} covers the model's labels "
        f"({', '.join(labels)}), and they are not the taxonomy's categories; write a mapping "
        "file (name, target and a [map] table: label = [category ids]) and pass --mapping FILE"
    )
