"""Taxonomies and label mappings, loaded from TOML data files.

A taxonomy is an ordered list of categories; its order fixes the column order of
every (N x K) label and score matrix toxeval builds. toxeval ships ``toxeval-15``
(its own 15-category taxonomy; the paper's list is not public) and
``openai-moderation-8``; any TOML file of the same format works (K >= 2).

Format::

    name = "toxeval-15"
    version = "1.0"
    description = "..."

    [[category]]
    id = "hate"                 # [a-z0-9_]+, unique
    name = "Hate"
    description = "Attacks on people for a protected attribute ..."
    aliases = ["hateful", "hate speech"]

A mapping translates another scheme's codes to a taxonomy's ids::

    name = "llama-guard-3"
    source = "Llama Guard 3 hazard codes"
    target = "toxeval-15"

    [map]
    S1 = ["violence", "crime"]  # one code may map to several ids, or to []
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Mapping as AbcMapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toxeval.files import decode_utf8, require_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = [
    "Category",
    "LabelMapping",
    "Taxonomy",
    "TaxonomyError",
    "list_mappings",
    "list_taxonomies",
    "load_mapping",
    "load_taxonomy",
    "normalize_label",
    "singular",
]

DEFAULT_TAXONOMY = "toxeval-15"
_ID_RE = re.compile(r"^[a-z0-9_]+$")


class TaxonomyError(ValueError):
    """A taxonomy or mapping file is missing, malformed, or refers to unknown ids."""


def normalize_label(text: str) -> str:
    """Canonical form for matching names and aliases.

    Case-, accent-, punctuation- and plural-insensitive: ``"Self-Harm"``,
    ``"self harm"`` and ``"self_harms"`` all become ``"self harm"``.
    """
    if len(text) <= _CACHED_LABEL_LEN:  # keys and names recur on every answer read
        return _normalize_short(text)
    return _normalize(text)


_CACHED_LABEL_LEN = 64


@lru_cache(maxsize=8192)
def _normalize_short(text: str) -> str:
    return _normalize(text)


def _normalize(text: str) -> str:
    t = unicodedata.normalize("NFKD", text)
    t = "".join(c for c in t if not unicodedata.combining(c)).lower()
    t = re.sub(r"[^a-z0-9]+", " ", t).strip()
    words = [singular(w) for w in t.split()]
    return " ".join(words)


def singular(word: str) -> str:
    """``word`` without an English plural ending ("threats" -> "threat", "categories"
    -> "category"): the rule label names are normalised with, shared with the answer
    parser so both read a category name the same way."""
    if len(word) <= 3 or word.endswith("ss") or word.endswith("us") or word.endswith("is"):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "ses", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


@dataclass(frozen=True)
class Category:
    """One category of a taxonomy."""

    id: str
    name: str
    description: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Taxonomy:
    """An ordered set of categories; ``ids[k]`` is column ``k`` of every matrix."""

    name: str
    version: str
    categories: tuple[Category, ...]
    description: str = ""
    source: str = ""
    _lookup: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        # a taxonomy read from a file names the file (docs/taxonomy.md)
        what = (
            f"{self.source}: taxonomy {self.name!r}" if self.source else f"taxonomy {self.name!r}"
        )
        if len(self.categories) < 2:
            raise TaxonomyError(
                f"{what} has {len(self.categories)} categories; at least 2 are needed"
            )
        seen: dict[str, str] = {}
        for cat in self.categories:
            if not _ID_RE.match(cat.id):
                raise TaxonomyError(f"{what}: category id {cat.id!r} must match [a-z0-9_]+")
            if cat.id in seen:
                raise TaxonomyError(f"{what}: duplicate category id {cat.id!r}")
            seen[cat.id] = cat.id
        lookup: dict[str, str] = {}
        # ids first, then names, then aliases: an id always resolves to itself.
        for pass_ in ("id", "name", "aliases"):
            for cat in self.categories:
                keys = cat.aliases if pass_ == "aliases" else (getattr(cat, pass_),)
                for key in keys:
                    norm = normalize_label(key)
                    if not norm:
                        continue
                    other = lookup.get(norm)
                    if other is not None and other != cat.id:
                        if pass_ == "id":
                            raise TaxonomyError(
                                f"taxonomy {self.name!r}: {key!r} is ambiguous between "
                                f"{other!r} and {cat.id!r}"
                            )
                        continue  # an earlier, stronger match wins
                    lookup[norm] = cat.id
        object.__setattr__(self, "_lookup", lookup)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.categories)

    @property
    def k(self) -> int:
        return len(self.categories)

    def __len__(self) -> int:
        return len(self.categories)

    def index(self, category_id: str) -> int:
        """Column of ``category_id``; ``KeyError`` with the known ids otherwise."""
        try:
            return self.ids.index(category_id)
        except ValueError:
            raise KeyError(
                f"unknown category {category_id!r} for taxonomy {self.name!r}; "
                f"known: {', '.join(self.ids)}"
            ) from None

    def resolve(self, label: str) -> str | None:
        """The category id that ``label`` names (id, name or alias), or None."""
        return self._lookup.get(normalize_label(label))

    def resolve_normalized(self, label: str) -> str | None:
        """:meth:`resolve` for a label already passed through :func:`normalize_label`
        (the parser's hot path normalises once and looks up many times)."""
        return self._lookup.get(label)

    def labels(self) -> AbcMapping[str, str]:
        """Every label the taxonomy reads (each id, name and alias, as
        :func:`normalize_label` gives it) and the category id it names; read-only."""
        return MappingProxyType(self._lookup)

    def category(self, category_id: str) -> Category:
        return self.categories[self.index(category_id)]

    def suggest(self, label: str) -> str | None:
        """The category id ``label`` most likely misspells (``violance`` for
        ``violence``), or None: the closest id, name or alias by
        :func:`difflib.get_close_matches` (cutoff 0.8), on the label as written, then
        normalised. Used wherever a name that is not a category is reported (dataset
        fields, parsed answers), so that both suggest the same category."""
        return _suggest(self, label)


@lru_cache(maxsize=8192)
def _suggest(tax: Taxonomy, label: str) -> str | None:
    cands = _suggestion_keys(tax)
    index = _suggestion_index(tax)
    hit = _closest(label.lower(), index)
    if hit is None:
        hit = _closest(normalize_label(label), index)
    return cands[hit] if hit is not None else None


_CUTOFF = 0.8


@dataclass(frozen=True)
class _KeyIndex:
    """The suggestion keys with what the two cheap bounds of
    :func:`difflib.get_close_matches` read: each key's length and letter counts."""

    keys: tuple[str, ...]
    lengths: Any  # (n,) int64
    counts: Any  # (n, letters) int64: how often each letter of ``letter`` is in a key
    letter: dict[str, int]


@lru_cache(maxsize=64)
def _suggestion_index(tax: Taxonomy) -> _KeyIndex:
    import numpy as np

    keys = tuple(_suggestion_keys(tax))
    letter = {ch: i for i, ch in enumerate(sorted({ch for k in keys for ch in k}))}
    counts = np.zeros((len(keys), max(1, len(letter))), dtype=np.int64)
    for row, key in enumerate(keys):
        for ch in key:
            counts[row, letter[ch]] += 1
    lengths = np.array([len(k) for k in keys], dtype=np.int64)
    return _KeyIndex(keys, lengths, counts, letter)


def _closest(word: str, index: _KeyIndex) -> str | None:
    """``difflib.get_close_matches(word, keys, n=1, cutoff=0.8)``, the same answer
    computed faster. difflib tests each key with two bounds before its exact ratio:
    ``real_quick_ratio`` (2 min(la, lb) / (la + lb)) and ``quick_ratio`` (2 x the letters
    the two share, with multiplicity, / (la + lb)). Here both are computed for every
    key at once from letter counts made once per taxonomy, with the same float
    arithmetic, and only the keys that pass both get difflib's exact ``ratio``; the
    best (ratio, key) wins, as in ``get_close_matches``. A name that is not a category
    is looked up in every answer that holds one, so the per-key loop cost most of the
    time of such answers."""
    import difflib

    import numpy as np

    lw = len(word)
    wcounts = np.zeros(index.counts.shape[1], dtype=np.int64)
    for ch in word:
        j = index.letter.get(ch)
        if j is not None:
            wcounts[j] += 1
    total = (index.lengths + lw).astype(np.float64)
    shared = np.minimum(index.counts, wcounts).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # difflib._calculate_ratio: 2.0 * matches / length, 1.0 when both are empty
        real_quick = np.where(total > 0, 2.0 * np.minimum(index.lengths, lw) / total, 1.0)
        quick = np.where(total > 0, 2.0 * shared / total, 1.0)
    passed = np.flatnonzero((real_quick >= _CUTOFF) & (quick >= _CUTOFF))
    best: tuple[float, str] | None = None
    if len(passed):
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(word)
        for row in passed.tolist():
            key = index.keys[row]
            matcher.set_seq1(key)
            r = matcher.ratio()
            if r >= _CUTOFF and (best is None or (r, key) > best):
                best = (r, key)
    return best[1] if best is not None else None


@lru_cache(maxsize=64)
def _suggestion_keys(tax: Taxonomy) -> dict[str, str]:
    cands: dict[str, str] = {}
    for cat in tax.categories:
        for x in (cat.id, cat.name, *cat.aliases):
            cands.setdefault(x.lower(), cat.id)
            cands.setdefault(normalize_label(x), cat.id)
    return cands


@dataclass(frozen=True)
class LabelMapping:
    """Codes of another scheme (e.g. Llama Guard ``S1``) mapped to taxonomy ids."""

    name: str
    source: str
    target: str
    table: AbcMapping[str, tuple[str, ...]]

    def map(self, code: str) -> tuple[str, ...] | None:
        """Ids for ``code`` (case-insensitive), or None if the code is unknown."""
        hit = self.table.get(code)
        if hit is None:
            hit = self._upper.get(code.strip().upper())
        return hit

    @cached_property
    def targets(self) -> frozenset[str]:
        """Every taxonomy id some code maps to; a category outside it is one no answer
        in this scheme can speak to."""
        return frozenset(i for ids in self.table.values() for i in ids)

    @cached_property
    def _upper(self) -> dict[str, tuple[str, ...]]:
        return {k.upper(): v for k, v in self.table.items()}


def _data_dir(kind: str) -> Any:
    return resources.files("toxeval") / "data" / kind


def list_taxonomies() -> list[str]:
    """Names of the taxonomies shipped with toxeval."""
    return sorted(
        p.name.removesuffix(".toml")
        for p in _data_dir("taxonomies").iterdir()
        if p.name.endswith(".toml")
    )


def list_mappings() -> list[str]:
    """Names of the label mappings shipped with toxeval."""
    return sorted(
        p.name.removesuffix(".toml")
        for p in _data_dir("mappings").iterdir()
        if p.name.endswith(".toml")
    )


def _read_toml(name_or_path: str | Path, kind: str) -> tuple[dict[str, Any], str]:
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists():
        require_file(p, f"{kind} file", TaxonomyError)
        text = decode_utf8(p.read_bytes(), str(p), TaxonomyError)
        origin = str(p)
    else:
        res = _data_dir("taxonomies" if kind == "taxonomy" else "mappings") / f"{name_or_path}.toml"
        if not res.is_file():
            known = list_taxonomies() if kind == "taxonomy" else list_mappings()
            raise TaxonomyError(
                f"unknown {kind} {str(name_or_path)!r}; built-in: {', '.join(known)} "
                f"(or pass a path to a .toml file)"
            )
        text = res.read_text(encoding="utf-8")
        origin = f"built-in:{name_or_path}"
    try:
        return tomllib.loads(text), origin
    except tomllib.TOMLDecodeError as e:
        raise TaxonomyError(f"{origin}: not valid TOML: {e}") from None


def load_taxonomy(name_or_path: str | Path | Taxonomy = DEFAULT_TAXONOMY) -> Taxonomy:
    """A built-in taxonomy by name (``toxeval-15``, ``openai-moderation-8``) or a TOML file."""
    if isinstance(name_or_path, Taxonomy):
        return name_or_path
    doc, origin = _read_toml(name_or_path, "taxonomy")
    cats = doc.get("category")
    if not isinstance(cats, list) or not cats:
        raise TaxonomyError(f"{origin}: no [[category]] tables")
    out = []
    for i, c in enumerate(cats):
        if not isinstance(c, dict) or not isinstance(c.get("id"), str):
            raise TaxonomyError(f"{origin}: category #{i + 1} has no string 'id'")
        aliases = c.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise TaxonomyError(
                f"{origin}: category {c['id']!r}: 'aliases' must be a list of strings"
            )
        out.append(
            Category(
                id=c["id"],
                name=str(c.get("name", c["id"])),
                description=str(c.get("description", "")),
                aliases=tuple(aliases),
            )
        )
    return Taxonomy(
        name=str(doc.get("name", Path(str(name_or_path)).stem)),
        version=str(doc.get("version", "")),
        categories=tuple(out),
        description=str(doc.get("description", "")),
        source=origin,
    )


def load_mapping(name_or_path: str | Path) -> LabelMapping:
    """A built-in mapping (``llama-guard-3``, ``openai-moderation``) or a TOML file.

    Every target id is checked against the target taxonomy.
    """
    doc, origin = _read_toml(name_or_path, "mapping")
    table = doc.get("map")
    target = doc.get("target", DEFAULT_TAXONOMY)
    if not isinstance(table, dict):
        raise TaxonomyError(f"{origin}: no [map] table")
    tax = load_taxonomy(target)
    clean: dict[str, tuple[str, ...]] = {}
    for code, ids in table.items():
        if isinstance(ids, str):
            ids = [ids]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise TaxonomyError(f"{origin}: {code!r} must map to a list of category ids")
        for i in ids:
            if i not in tax.ids:
                raise TaxonomyError(
                    f"{origin}: {code!r} maps to {i!r}, which is not in taxonomy {tax.name!r}"
                )
        clean[str(code)] = tuple(ids)
    return LabelMapping(
        name=str(doc.get("name", Path(str(name_or_path)).stem)),
        source=str(doc.get("source", "")),
        target=str(target),
        table=clean,
    )
