"""The entry points: :func:`parse_output` and :func:`parse_outputs` check their arguments,
find the cached :class:`~toxeval.parsing.parser.Parser` for (taxonomy, mapping,
threshold, null) and build the result; :func:`clear_caches` forgets every cache."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toxeval.taxonomy import LabelMapping, Taxonomy, load_mapping, load_taxonomy

from .answer import clear_norm_cache
from .llama_guard import clear_default_mappings
from .parser import Parser, Row
from .result import (
    DEFAULT_THRESHOLD,
    NULL_POLICIES,
    NullPolicy,
    ParsedBatch,
    ParseResult,
)

_TAXONOMY_CACHE: dict[Any, Taxonomy] = {}
_PARSERS: dict[tuple[int, int, float, str], tuple[Taxonomy, LabelMapping | None, Parser]] = {}


def clear_caches() -> None:
    """Forget cached taxonomies, parsers, parsed outputs and the default Llama Guard mapping
    (e.g. after installing a mapping file in a running process)."""
    _TAXONOMY_CACHE.clear()
    _PARSERS.clear()
    clear_default_mappings()
    clear_norm_cache()


def _taxonomy(taxonomy: Taxonomy | str | Path) -> Taxonomy:
    if isinstance(taxonomy, Taxonomy):
        return taxonomy
    if not isinstance(taxonomy, (str, Path)):
        raise TypeError(
            f"taxonomy must be a Taxonomy, a built-in name or a path, not {type(taxonomy).__name__}"
        )
    p = Path(taxonomy)
    try:
        key: Any = (str(p.resolve()), p.stat().st_mtime_ns) if p.is_file() else str(taxonomy)
    except OSError:
        key = str(taxonomy)
    hit = _TAXONOMY_CACHE.get(key)
    if hit is None:
        hit = load_taxonomy(taxonomy)
        _TAXONOMY_CACHE[key] = hit
    return hit


def _mapping(mapping: LabelMapping | str | Path | None) -> LabelMapping | None:
    if mapping is None or isinstance(mapping, LabelMapping):
        return mapping
    if not isinstance(mapping, (str, Path)):
        raise TypeError(
            f"mapping must be a LabelMapping, a built-in name or a path, not {type(mapping).__name__}"
        )
    return load_mapping(mapping)


def _parser(
    taxonomy: Taxonomy | str | Path,
    mapping: LabelMapping | str | Path | None,
    threshold: float,
    null: NullPolicy = "unparseable",
) -> Parser:
    if not isinstance(threshold, (int, float)) or not 0.0 <= float(threshold) <= 1.0:
        raise ValueError(f"threshold must be a number in [0, 1], got {threshold!r}")
    if null not in NULL_POLICIES:
        raise ValueError(f"null must be one of {', '.join(NULL_POLICIES)}, got {null!r}")
    tax = _taxonomy(taxonomy)
    mp = _mapping(mapping)
    key = (id(tax), id(mp), float(threshold), null)
    hit = _PARSERS.get(key)
    if hit is not None and hit[0] is tax and hit[1] is mp:
        return hit[2]
    parser = Parser(tax, mp, float(threshold), null)
    if len(_PARSERS) >= 16:
        _PARSERS.pop(next(iter(_PARSERS)))
    _PARSERS[key] = (tax, mp, parser)  # strong refs keep the id() keys valid
    return parser


def parse_output(
    text: str,
    taxonomy: Taxonomy | str | Path = "toxeval-15",
    *,
    mapping: LabelMapping | str | Path | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    null: NullPolicy = "unparseable",
) -> ParseResult:
    """Turn one model output into a :class:`ParseResult` over ``taxonomy``.

    ``mapping`` translates codes (Llama Guard ``S1``...) to category ids; without it a
    Llama Guard-shaped output (``unsafe`` then ``S<n>`` codes) uses the built-in
    ``llama-guard-3`` mapping when it exists and targets this taxonomy. ``threshold``
    decides ``labels`` for graded outputs (score ``>= threshold``). An explicit null value
    (``{"hate": null}``) is not a 0: with ``null="unparseable"`` (the default) the row is
    unparseable; ``null="omit"`` reads the category as left out, for a caller that marks
    left-out categories unknown itself.

    Whatever the ``text`` (a ``str``, however malformed), the outcome is a status, never
    an exception. The other arguments are checked: raises ``TypeError`` for a ``text``
    that is not a ``str`` (or a ``taxonomy`` / ``mapping`` of the wrong type),
    ``ValueError`` for a ``threshold`` outside [0, 1] or an unknown ``null``, and
    :class:`~toxeval.taxonomy.TaxonomyError` for an unknown or malformed ``taxonomy`` or
    ``mapping``.
    """
    if not isinstance(text, str):
        raise TypeError(
            f"parse_output expects the model output as a str, got {type(text).__name__}"
        )
    parser = _parser(taxonomy, mapping, threshold, null)
    return _result(parser, parser.parse(text))


def _result(parser: Parser, row: Row) -> ParseResult:
    status, labels, cols, vals, unknown, reason, graded, ucols = row
    scores = np.zeros(parser.taxonomy.k, dtype=np.float64)
    if cols:
        scores[list(cols)] = vals
    if ucols:
        scores[list(ucols)] = np.nan  # the answer says nothing about them: unknown
    scores.flags.writeable = False
    return ParseResult(
        status=status,  # type: ignore[arg-type]
        labels=parser.labelset(labels),
        scores=scores,
        unknown=unknown,
        reason=reason,
        graded=graded,
    )


def parse_outputs(
    texts: Sequence[str] | Iterable[str],
    taxonomy: Taxonomy | str | Path = "toxeval-15",
    *,
    mapping: LabelMapping | str | Path | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    null: NullPolicy = "unparseable",
) -> ParsedBatch:
    """Parse many outputs; identical outputs are parsed once.

    Returns a :class:`ParsedBatch` with ``scores`` (N, K) float64, ``statuses`` (N,),
    per-row ``labels`` / ``unknown`` / ``reasons`` and the batch's ``graded`` flag.
    No ``str`` output raises. Raises ``TypeError`` naming the first row that is not a
    ``str``, and, as :func:`parse_output` does, for a bad ``threshold``, ``taxonomy``,
    ``mapping`` or ``null``.
    """
    parser = _parser(taxonomy, mapping, threshold, null)
    parse = parser.parse
    rows: list[Row] = []
    append = rows.append
    for i, text in enumerate(texts):
        if type(text) is not str and not isinstance(text, str):
            raise TypeError(
                f"parse_outputs expects model outputs as str; row {i} is {type(text).__name__}"
                + (
                    " (a missing output: fill it with '' to mark it unparseable)"
                    if text is None
                    else ""
                )
            )
        append(parse(text))
    n = len(rows)
    k = parser.taxonomy.k
    scores = np.zeros((n, k), dtype=np.float64)
    r_idx: list[int] = []
    c_idx: list[int] = []
    v_all: list[float] = []
    graded_rows = np.zeros(n, dtype=bool)
    labelset = parser.labelset
    labels: list[frozenset[str]] = []
    for i, row in enumerate(rows):
        cols = row[2]
        if cols:
            r_idx.extend([i] * len(cols))
            c_idx.extend(cols)
            v_all.extend(row[3])
        ucols = row[7]
        if ucols:
            r_idx.extend([i] * len(ucols))
            c_idx.extend(ucols)
            v_all.extend([math.nan] * len(ucols))
        if row[6]:
            graded_rows[i] = True
        labels.append(labelset(row[1]))
    if r_idx:
        scores[np.asarray(r_idx, dtype=np.intp), np.asarray(c_idx, dtype=np.intp)] = v_all
    statuses = np.array([r[0] for r in rows], dtype="<U11")
    batch = ParsedBatch(
        taxonomy=parser.taxonomy,
        scores=scores,
        statuses=statuses,
        labels=labels,
        unknown=[r[4] for r in rows],
        reasons=[r[5] for r in rows],
        graded=bool(graded_rows.any()),
        graded_rows=graded_rows,
    )
    return batch
