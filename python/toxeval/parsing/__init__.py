"""Free-text model outputs turned into label vectors over a taxonomy.

An LLM asked "which toxicity categories apply?" answers in free text: a JSON object of
scores, a JSON list, JSON inside a code fence or in prose, a comma- or newline-separated
list of ids, names or aliases, Llama Guard's ``safe`` / ``unsafe\\nS1,S10``, "none", or a
refusal. Ranking metrics need an (N, K) score matrix, so every output is turned into a
K-vector and a *status*:

- ``ok``: the output named categories (or gave scores) and every name was understood;
- ``partial``: some names resolved, others matched no category (listed in ``unknown``);
- ``empty``: the model said none / safe / no categories, or gave an all-zero vector:
  a valid all-zero answer;
- ``unparseable``: a refusal, nothing recognisable, names that all match no category,
  or invalid scores (NaN, outside [0, 1]); ``reason`` says why. The row's vector is zero;
  what happens to it is the caller's policy (``exclude``, the default / ``zeros`` / ``error``, see
  :meth:`ParsedBatch.apply_policy` and docs/parsing.md).

The value after a category name (``Hate: no``, ``hate (score 0.2)``, ``{"hate": "low"}``,
a table cell) is read by :func:`toxeval.parsing.values.read_value`: negations are 0,
presence words 1, severity and likelihood words, numbers, percentages and fractions are
graded scores; a value it does not understand makes the row ``unparseable`` with a reason
naming the category and the value. A leading ``<think>...</think>`` reasoning block is
not part of the answer; a safe verdict that names a category, or a second JSON answer
that disagrees with the first, is ``unparseable`` ("contradictory: ...").

Scores: numeric JSON (or ``name: 0.7`` lines) keep their values and mark the row
``graded``; label sets and booleans give 1.0 / 0.0. For a graded row ``labels`` are the
categories whose score is ``>= threshold`` (0.5 by default); the score vector itself is
never thresholded.

No output text raises, however malformed: it gets a status. Non-``str`` outputs raise
``TypeError``; a threshold outside [0, 1] (``ValueError``) and an unknown taxonomy or
mapping (``TaxonomyError``) are argument errors, raised before any output is read.
Matching goes through :meth:`Taxonomy.resolve` (case-, punctuation-, accent- and
plural-insensitive), cached per parser, with a fast path for plain id lists and a
whole-output cache, so a million short outputs parse in seconds.

The package's parts, each importable but not API (the API is what this module exports):
``result`` (statuses, :class:`ParseResult`, :class:`ParsedBatch`), ``api`` (the entry
points and their caches), ``parser`` (the dispatcher), ``base`` (name resolution),
``lists`` (lists and tables), ``table_prose`` (prose beside a table), ``llama_guard``, ``json_answers`` and ``json_decode``,
``reasoning_blocks`` (a leading ``<think>`` block),
``answer`` (what one output said, while it is read), ``values`` and ``value_words`` (the
value grammar and its vocabulary).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .result import (
    DEFAULT_THRESHOLD,
    NULL_POLICIES,
    POLICIES,
    STATUSES,
    NullPolicy,
    ParsedBatch,
    ParseResult,
    Policy,
    Status,
    UnparseableOutputError,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "NULL_POLICIES",
    "POLICIES",
    "STATUSES",
    "NullPolicy",
    "ParseResult",
    "ParsedBatch",
    "Policy",
    "Status",
    "UnparseableOutputError",
    "clear_caches",
    "parse_output",
    "parse_outputs",
]

if TYPE_CHECKING:
    from .api import clear_caches, parse_output, parse_outputs
    from .llama_guard import DEFAULT_LLAMA_GUARD_MAPPING as DEFAULT_LLAMA_GUARD_MAPPING

# The parser itself is imported on first use: the statuses and the error type above are
# all that code reading prediction files needs, and the parser's modules take a tenth
# of a second to import.
_LAZY = {
    "clear_caches": "api",
    "parse_output": "api",
    "parse_outputs": "api",
    "DEFAULT_LLAMA_GUARD_MAPPING": "llama_guard",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
