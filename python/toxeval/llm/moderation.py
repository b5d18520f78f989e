"""OpenAI-style moderation endpoints: scores keyed by OpenAI's category names, mapped onto
a taxonomy.

For the taxonomy named ``openai-moderation-8`` an OpenAI category scores the taxonomy
category of the same name (``hate/threatening`` -> ``h2``); for any other taxonomy the
shipped mapping ``openai-moderation`` (OpenAI name -> toxeval-15 ids) is used, keeping the
ids the taxonomy has. A category's score is the maximum over the OpenAI categories mapped
to it; a category nothing maps to, or whose OpenAI categories are absent from a result,
is NaN (unknown) and the Answer is ``partial``. OpenAI categories that map to nothing in
the taxonomy (omni's ``illicit`` for ``openai-moderation-8``) are not used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from toxeval.llm.answers import Answer, unparseable
from toxeval.taxonomy import Taxonomy, load_mapping, normalize_label

__all__ = [
    "DIRECT_TAXONOMY",
    "MAPPING",
    "moderation_body",
    "moderation_columns",
    "read_moderation",
]

DIRECT_TAXONOMY = "openai-moderation-8"
MAPPING = "openai-moderation"
_METHOD = "moderation"


def moderation_columns(taxonomy: Taxonomy) -> dict[str, tuple[int, ...]]:
    """OpenAI category name -> taxonomy columns it scores.

    Raises ``ValueError`` when no OpenAI category reaches any column of ``taxonomy``.
    """
    out: dict[str, tuple[int, ...]] = {}
    if taxonomy.name == DIRECT_TAXONOMY:
        by_name = {normalize_label(c.name): k for k, c in enumerate(taxonomy.categories)}
        for key in load_mapping(MAPPING).table:
            col = by_name.get(normalize_label(key))
            if col is not None and key.islower():  # API names; upper-case keys are dataset keys
                out[key] = (col,)
    else:
        for key, ids in load_mapping(MAPPING).table.items():
            cols = tuple(taxonomy.ids.index(i) for i in ids if i in taxonomy.ids)
            if cols and key.islower():  # API names; upper-case keys are dataset keys
                out[key] = cols
    if not out:
        raise ValueError(
            f"no OpenAI moderation category maps onto taxonomy {taxonomy.name!r} "
            f"(mapping {MAPPING!r} targets toxeval-15 ids; taxonomy ids: "
            f"{', '.join(taxonomy.ids)})"
        )
    return out


def _item(result: Any, columns: dict[str, tuple[int, ...]], taxonomy: Taxonomy) -> Answer:
    if not isinstance(result, dict) or not isinstance(result.get("category_scores"), dict):
        return unparseable("no category_scores in moderation result", _METHOD)
    given: dict[str, Any] = result["category_scores"]
    scores = np.full(taxonomy.k, np.nan)
    for key, cols in columns.items():
        if key not in given or given[key] is None:
            continue
        v = given[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return unparseable(f"moderation score {key!r} is not a number: {v!r}", _METHOD)
        v = float(v)
        if not (math.isfinite(v) and 0.0 <= v <= 1.0):
            return unparseable(f"moderation score {key!r} = {v!r} is outside [0, 1]", _METHOD)
        for c in cols:
            if math.isnan(scores[c]) or v > scores[c]:
                scores[c] = v
    unknown = [taxonomy.ids[k] for k in range(taxonomy.k) if math.isnan(scores[k])]
    if len(unknown) == taxonomy.k:
        return unparseable("no mapped category in moderation result", _METHOD)
    if unknown:
        reason = f"no moderation score for: {', '.join(unknown)}"
        return Answer(scores, "partial", reason, None, None, True, _METHOD)
    return Answer(scores, "ok", None, None, None, True, _METHOD)


def read_moderation(body: Any, n_items: int, taxonomy: Taxonomy) -> list[Answer]:
    """One Answer per input of a moderation call, in input order."""
    columns = moderation_columns(taxonomy)
    if not isinstance(body, dict):
        why = f"response body is a {type(body).__name__}, not an object"
        return [unparseable(why, _METHOD)] * n_items
    results = body.get("results")
    if not isinstance(results, list):
        err = body.get("error")
        why = f"error in response: {err}" if err else "no results in moderation response"
        return [unparseable(why[:200], _METHOD)] * n_items
    if len(results) != n_items:
        why = f"moderation response has {len(results)} results for {n_items} inputs"
        return [unparseable(why, _METHOD)] * n_items
    return [_item(r, columns, taxonomy) for r in results]


def moderation_body(texts: Sequence[str], model: str) -> dict[str, Any]:
    """A moderation request body."""
    return {"model": model, "input": list(texts)}
