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
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

import numpy as np

from toxeval.taxonomy import (
    LabelMapping,
    Taxonomy,
    load_mapping,
    load_taxonomy,
    normalize_label,
    singular,
)

from .values import MARK_RE, NULL_VALUE, Reading, has_negation_cue, read_number, read_value

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

Status = Literal["ok", "partial", "empty", "unparseable"]
Policy = Literal["zeros", "exclude", "error"]
# What an explicit null value (``{"hate": null}``, ``hate: null``) does: "unparseable"
# (the default) makes the row unparseable, as any value that is not understood; "omit"
# reads the category as if the answer had left it out, for a caller that marks left-out
# categories unknown itself (toxeval.llm's JSON scoring).
NullPolicy = Literal["unparseable", "omit"]
NULL_POLICIES: tuple[NullPolicy, ...] = ("unparseable", "omit")
STATUSES: tuple[Status, ...] = ("ok", "partial", "empty", "unparseable")
POLICIES: tuple[Policy, ...] = ("zeros", "exclude", "error")
DEFAULT_THRESHOLD = 0.5
DEFAULT_LLAMA_GUARD_MAPPING = "llama-guard-3"

# Bounds that keep adversarial input cheap: JSON candidates tried per output, characters
# scanned per candidate, nesting followed when interpreting JSON, size of the caches.
_MAX_JSON_CANDIDATES = 8
_MAX_JSON_SCAN = 20_000
_MAX_DEPTH = 6
_MAX_CACHE = 200_000
_MAX_UNKNOWN_LEN = 60


class UnparseableOutputError(ValueError):
    """Raised by :meth:`ParsedBatch.apply_policy` with ``policy="error"``."""


@dataclass(frozen=True)
class ParseResult:
    """One output turned into a label vector.

    ``scores`` is a read-only (K,) float64 array in taxonomy column order: the given
    scores for graded outputs, else 1.0 for each label and 0.0 elsewhere (all zero for
    ``empty`` and ``unparseable``). ``labels`` are the ids with score ``>= threshold``.
    """

    status: Status
    labels: frozenset[str]
    scores: np.ndarray
    unknown: tuple[str, ...]
    reason: str | None
    graded: bool


@dataclass(frozen=True, eq=False)
class ParsedBatch:
    """Many outputs parsed at once; row ``i`` of every field belongs to ``texts[i]``.

    ``graded`` is True when at least one row carried real-valued scores; when it is
    False every score is 0 or 1 and ranking metrics see massive ties (docs/parsing.md).
    """

    taxonomy: Taxonomy
    scores: np.ndarray  # (N, K) float64
    statuses: np.ndarray  # (N,) str
    labels: list[frozenset[str]]
    unknown: list[tuple[str, ...]]
    reasons: list[str | None]
    graded: bool
    graded_rows: np.ndarray | None = field(default=None, repr=False)  # (N,) bool

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> ParseResult:
        row = self.scores[i].copy()
        row.flags.writeable = False
        return ParseResult(
            status=str(self.statuses[i]),  # type: ignore[arg-type]
            labels=self.labels[i],
            scores=row,
            unknown=self.unknown[i],
            reason=self.reasons[i],
            graded=bool(self.graded_rows[i]) if self.graded_rows is not None else self.graded,
        )

    @property
    def is_binary(self) -> bool:
        """True when every score is exactly 0.0 or 1.0 (heavy ties for ranking metrics)."""
        s = self.scores
        return bool(np.all((s == 0.0) | (s == 1.0)))

    def status_counts(self) -> dict[str, int]:
        """Rows per status, every status present (zero counts included), in STATUSES order."""
        values, counts = np.unique(self.statuses, return_counts=True)
        found = {str(v): int(c) for v, c in zip(values, counts, strict=True)}
        return {s: found.get(s, 0) for s in STATUSES}

    def apply_policy(self, policy: Policy = "exclude") -> tuple[np.ndarray, np.ndarray]:
        """Scores and the rows to score under the unparseable-row policy.

        Returns ``(scores, keep)`` with ``keep`` a (N,) bool array. ``exclude`` (the
        default): unparseable rows are dropped (``keep`` False; report
        ``status_counts()["unparseable"]``), since an answer that could not be read is
        not a "no". ``zeros``: every row is kept, unparseable rows score all-zero (an
        explicit choice; say so wherever the figures are reported). ``error``:
        raises :class:`UnparseableOutputError` if any row is unparseable. ``partial`` rows
        are always kept with the categories that resolved.
        """
        if policy not in POLICIES:
            raise ValueError(
                f"unknown unparseable-row policy {policy!r}; expected one of {', '.join(POLICIES)}"
            )
        bad = self.statuses == "unparseable"
        if policy == "zeros":
            return self.scores, np.ones(len(self), dtype=bool)
        if policy == "exclude":
            return self.scores, ~bad
        n_bad = int(bad.sum())
        if n_bad:
            rows = np.flatnonzero(bad)[:3]
            examples = "; ".join(f"row {int(r)}: {self.reasons[int(r)]}" for r in rows)
            raise UnparseableOutputError(
                f"{n_bad} of {len(self)} outputs are unparseable (policy 'error'): {examples}"
            )
        return self.scores, np.ones(len(self), dtype=bool)


# --------------------------------------------------------------------------- vocab

# Whole outputs (after normalize_label) that mean "no category applies".
_NONE_PHRASES = frozenset(
    normalize_label(p)
    for p in (
        "none",
        "safe",
        "no",
        "nothing",
        "null",
        "nil",
        "n/a",
        "na",
        "empty",
        "benign",
        "harmless",
        "clean",
        "not toxic",
        "non-toxic",
        "nontoxic",
        "not harmful",
        "not unsafe",
        "no categories",
        "no category",
        "no category applies",
        "no categories apply",
        "no labels",
        "no label",
        "no toxicity",
        "no toxicity detected",
        "no toxic content",
        "no harmful content",
        "no violations",
        "no violation",
        "no issues",
        "nothing to flag",
        "none of the above",
        "none apply",
        "none applies",
        "not applicable",
        "no toxic categories",
        "no harmful categories",
        "no unsafe content",
        "safe content",
    )
)
# "None of the categories apply", "None of these apply", "No category applies", "None of
# them", "No toxic categories found", ... (matched on the normalised text: plurals are
# singular, "applies" is "apply"). The whole answer (or list item) must be the phrase, so
# "None of the categories apply except hate" is not one and never hides "hate".
_NONE_OF_RE = re.compile(
    r"^(?:none(?: of (?:them|these|those|the above|the following"
    r"|(?:the |these |those )?(?:(?:above|following|listed|given|provided|specified|"
    r"mentioned|possible|defined) )?(?:(?:toxicity|toxic|harm|harmful|unsafe|safety|hazard) )?"
    r"(?:category|label|class|option|one)(?: listed| above| given| provided)?))?"
    r"|no (?:(?:toxicity|toxic|harm|harmful|unsafe|safety|hazard) )?(?:category|label|class))"
    r"(?: (?:apply|is applicable|are applicable|applicable|is relevant|are relevant|relevant"
    r"|found|detected|identified|flagged|present|match|matched))?"
    r"(?: here| to (?:this|the|it)(?: (?:text|content|input|message|prompt|response|output"
    r"|comment))?)?$"
)
_NONE_SENTENCE_RE = re.compile(
    r"^(?:the |this )?(?:text |content |input |message |prompt |response |output |comment )?"
    r"(?:is |seem |seems |appear |appears )?(?:to be )?(?:completely |entirely )?"
    r"(?:safe|benign|harmless|clean|not toxic|non toxic|nontoxic|not harmful)$"
)

# Lead-in words: "Categories: hate", "Final answer: ..." (matched on the normalised lead).
_LEAD_WORDS = frozenset(
    (
        "category",
        "label",
        "answer",
        "output",
        "result",
        "classification",
        "prediction",
        "predicted",
        "tag",
        "class",
        "violation",
        "verdict",
        "response",
        "assessment",
        "toxicity",
        "type",
        "detected",
        "flagged",
        "flag",
        "applicable",
        "harm",
        "violated",
    )
)

_REFUSAL_RE = re.compile(
    r"\b(?:i\s*(?:'|’)?\s*m\s+sorry|i\s+am\s+sorry|i\s+apologi[sz]e|sorry,?\s+but|"
    r"i\s+(?:can\s*(?:'|’)?\s*t|cannot|can\s+not|won\s*(?:'|’)?\s*t|will\s+not|must\s+decline)"
    r"|i\s*(?:'|’)?\s*m\s+(?:not\s+able|unable)|i\s+am\s+(?:not\s+able|unable)"
    r"|as\s+an\s+ai\b|as\s+a\s+(?:large\s+)?language\s+model|cannot\s+(?:assist|help|comply)"
    r"|not\s+able\s+to\s+(?:help|assist|comply))",
    re.IGNORECASE,
)

# Keys of JSON containers that hold the categories, in priority order.
_SCORE_CONTAINERS = ("category scores", "scores", "score", "probabilities", "probability")
_LABEL_CONTAINERS = (
    "categories",
    "category",
    "labels",
    "label",
    "flagged categories",
    "violated categories",
    "unsafe categories",
    "harmful categories",
    "toxic categories",
    "toxicity categories",
    "detected categories",
    "violations",
    "violation",
    "types",
    "type",
    "tags",
    "classes",
    "class",
    "predictions",
    "prediction",
    "results",
    "result",
    "output",
    "answer",
)
_CONTAINERS = tuple(normalize_label(k) for k in _SCORE_CONTAINERS + _LABEL_CONTAINERS)
_CONTAINER_KEYS = frozenset(_CONTAINERS)
# Boolean verdict keys: value True means "toxic" unless the key is in _SAFE_FLAGS.
_UNSAFE_FLAGS = frozenset(
    normalize_label(k)
    for k in ("unsafe", "flagged", "toxic", "is toxic", "is_unsafe", "harmful", "is harmful")
)
_SAFE_FLAGS = frozenset(normalize_label(k) for k in ("safe", "is safe", "is_safe", "benign"))
_SPECIAL_KEYS = _CONTAINER_KEYS | _UNSAFE_FLAGS | _SAFE_FLAGS
# Keys that carry commentary, not categories.
_META_KEYS = frozenset(
    normalize_label(k)
    for k in (
        "reason",
        "reasoning",
        "reasons",
        "explanation",
        "rationale",
        "justification",
        "analysis",
        "comment",
        "comments",
        "note",
        "notes",
        "thought",
        "thoughts",
        "summary",
        "confidence",
        "severity",
        "text",
        "input",
        "prompt",
        "id",
        "model",
        "verdict",
        "rating",
    )
)
# In a list of objects: which key names the category and which holds its score.
_ITEM_NAME_KEYS = ("category", "label", "name", "id", "type", "code", "class")
_ITEM_SCORE_KEYS = ("score", "probability", "prob", "confidence", "value", "likelihood")
_ITEM_FLAG_KEYS = ("flagged", "present", "applies", "value", "detected", "unsafe", "toxic")


_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_PLAIN_RE = re.compile(r"[A-Za-z0-9_ ,\-]+")
_LEAD_RE = re.compile(r"\A[ \t]*([^\n:{}\[\]]{1,60}?)[ \t]*[:=][ \t]*(.*)\Z", re.DOTALL)
_LEAD_LINE_RE = re.compile(r"^[ \t]*[*#>]*[ \t]*([A-Za-z][A-Za-z _*-]{0,59}?)[ \t]*[:=]", re.M)
_LG_RE = re.compile(r"\A\s*(unsafe|safe)\b[ \t]*[:.,-]?[ \t]*(.*)\Z", re.DOTALL | re.IGNORECASE)
_CODE_RE = re.compile(r"\A[Ss]\d{1,3}\Z")
_SPLIT_RE = re.compile(r"[\n\r,;|]+")
# The same separators when a comma stands between digits: that is a decimal comma
# ("hate: 0,7"), not a separator. Slower, so only used when such a comma is there.
_DIGIT_COMMA_RE = re.compile(r"\d,\d")
_SPLIT_KEEP_DECIMALS_RE = re.compile(r"(?:[\n\r;|]|(?<!\d),|,(?!\d))+")
_BULLET_RE = re.compile(r"\A(?:[-*•·‣>+]+|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)](?=\s))\s*")
_STRIP_CHARS = " \t-•*+·>#\"'“”‘’`()[]{}.:;!?<>"
# "name <sep> value": the first ":", "=", "(" or spaced dash splits a piece.
# The value is captured greedily and stripped in Python: a lazy group before "\s*\Z" is
# quadratic in a long run of spaces.
_NAME_VALUE_RE = re.compile(
    r"\A(.*?[^\s:=(])[ \t]{0,10}([:=]|\(|\s[-\u2013\u2014]\s)(.*)\Z", re.DOTALL
)
_HAS_SEPARATOR_RE = re.compile(r"[:=(]|\s[-\u2013\u2014]\s")
_QUOTE_CHARS = " \t\"'“”‘’`*"
# A leading reasoning block ("<think>...</think> answer"), as reasoning models write it.
_REASONING_OPEN_RE = re.compile(r"\A<(think|thinking|reasoning)>", re.IGNORECASE)
# Markdown tables: a row starts with "|"; a separator row is made of dashes and colons.
_TABLE_ROW_RE = re.compile(r"^[ \t]*\|", re.MULTILINE)
_TABLE_RULE_RE = re.compile(r":?-{2,}:?")
# Header words of the table column that holds the value ("| Category | Present |").
_VALUE_HEADER_WORDS = frozenset(
    normalize_label(w)
    for w in (
        "score",
        "probability",
        "likelihood",
        "confidence",
        "flag",
        "flagged",
        "present",
        "presence",
        "detected",
        "applies",
        "applicable",
        "value",
        "verdict",
        "severity",
        "risk",
        "rating",
        "result",
        "answer",
        "status",
        "decision",
        "yes",
        "violated",
        "violation",
    )
)
# Lead-ins of a verdict line ("Verdict: safe"), stripped before reading it.
_VERDICT_LEAD_RE = re.compile(
    r"\A(?:verdict|answer|final answer|result|assessment|classification|rating|label)\s*[:=-]\s*",
    re.IGNORECASE,
)
_SENTENCE_END_RE = re.compile(r"[.!\n]")
# A line that starts commentary after the answer ("Explanation: ..."): the answer ends there.
_COMMENTARY_RE = re.compile(
    r"^[ \t]*[-*#>]*[ \t]*(?:explanation|reason|reasoning|rationale|justification|analysis"
    r"|notes?|comments?)[ \t]*[:=]",
    re.IGNORECASE | re.MULTILINE,
)
_SUBSPLIT_RE = re.compile(r"\s*/\s*|\s+and\s+|\s*&\s*|\s+or\s+|\s*\+\s*", re.IGNORECASE)


# --------------------------------------------------------------------------- parser


class _Acc:
    """What one output said: scores per column, unknown names, errors, flags."""

    __slots__ = ("errors", "graded", "notes", "resolved", "scores", "unknown", "unsafe_flag")

    def __init__(self) -> None:
        self.scores: dict[int, float] = {}
        # a dict used as an insertion-ordered set: membership is O(1), order is kept
        self.unknown: dict[str, None] = {}
        self.errors: list[str] = []
        self.notes: list[str] = []
        self.resolved = False
        self.graded = False
        self.unsafe_flag: bool | None = None

    def add(self, cols: tuple[int, ...], value: float) -> None:
        self.resolved = True
        for c in cols:
            old = self.scores.get(c)
            if old is None or value > old:
                self.scores[c] = value

    def add_unknown(self, name: str) -> None:
        name = name.strip()
        if len(name) > _MAX_UNKNOWN_LEN:
            name = name[: _MAX_UNKNOWN_LEN - 3] + "..."
        if name:
            self.unknown[name] = None


# A parsed row: status, label columns, (cols, values) of non-zero scores, unknown, reason,
# graded. Kept as a plain tuple so that a million of them stay cheap.
_Row = tuple[
    str, tuple[int, ...], tuple[int, ...], tuple[float, ...], tuple[str, ...], "str | None", bool
]


def _unparseable(reason: str, unknown: tuple[str, ...] = ()) -> _Row:
    return ("unparseable", (), (), (), unknown, reason, False)


def _quote_list(names: Iterable[str]) -> str:
    return ", ".join(repr(n) for n in names)


class _Parser:
    """Parses outputs for one (taxonomy, mapping, threshold); caches names and outputs."""

    def __init__(
        self,
        taxonomy: Taxonomy,
        mapping: LabelMapping | None,
        threshold: float,
        null: NullPolicy = "unparseable",
    ) -> None:
        self.taxonomy = taxonomy
        self.mapping = mapping
        self.threshold = threshold
        self.omit_nulls = null == "omit"
        self.ids = taxonomy.ids
        self.col = {cid: i for i, cid in enumerate(self.ids)}
        # Taxonomy.resolve(x) is _lookup.get(normalize_label(x)); ``norm`` is already
        # normalised, so look it up directly when the table is there.
        lookup = getattr(taxonomy, "_lookup", None)
        self._lookup: dict[str, str] | None = lookup if isinstance(lookup, dict) else None
        self._names: dict[str, tuple[int, ...] | None] = {}
        self._rows: dict[str, _Row] = {}
        self._labelsets: dict[tuple[int, ...], frozenset[str]] = {}

    # ---- names

    def resolve(self, name: str) -> tuple[int, ...] | None:
        """Columns named by ``name`` (id, name, alias, mapped code); () for "none"; None if unknown."""
        hit = self._names.get(name, _MISS)
        if hit is not _MISS:
            return hit  # type: ignore[return-value]
        res = self._resolve_uncached(name)
        if len(self._names) >= _MAX_CACHE:
            self._names.clear()
        self._names[name] = res
        return res

    def _resolve_uncached(self, name: str) -> tuple[int, ...] | None:
        cid = self.col.get(name)
        if cid is not None:
            return (cid,)
        if not name.isascii() and MARK_RE.search(name):
            return None  # "hate ✘" is a name and a value, not a name
        norm = _norm(name)
        if not norm:
            return None
        hit = self._lookup.get(norm) if self._lookup is not None else self.taxonomy.resolve(norm)
        if hit is not None:
            return (self.col[hit],)
        if self.mapping is not None:
            mapped = self.mapping.map(name.strip())
            if mapped is not None:
                cols = tuple(self.col[i] for i in mapped if i in self.col)
                if len(cols) == len(mapped):
                    return cols
        if norm in _NONE_PHRASES or _NONE_SENTENCE_RE.match(norm) or _NONE_OF_RE.match(norm):
            return ()
        return None

    def labelset(self, cols: tuple[int, ...]) -> frozenset[str]:
        hit = self._labelsets.get(cols)
        if hit is None:
            hit = frozenset(self.ids[c] for c in cols)
            self._labelsets[cols] = hit
        return hit

    # ---- outputs

    def parse(self, text: str) -> _Row:
        row = self._rows.get(text)
        if row is not None:
            return row
        try:
            row = self._parse(text)
        except Exception as exc:  # a bug must not take down a million-row run
            row = _unparseable(f"parser error (please report): {type(exc).__name__}: {exc}")
        if len(self._rows) >= _MAX_CACHE:
            self._rows.clear()
        self._rows[text] = row
        return row

    def _parse(self, text: str) -> _Row:
        s = text.strip()
        if not s.isascii():
            s = _plain_unicode(s)
        if not s:
            return _unparseable("empty output")
        if s[0] == "<" or "</think>" in s:
            s, problem = _final_answer(s)
            if problem is not None:
                return _unparseable(problem)
        if _PLAIN_RE.fullmatch(s):
            fast = self._fast_list(s)
            if fast is not None:
                return fast
        acc = self._body(s, 0)
        return self._finish(acc, s)

    def _fast_list(self, s: str) -> _Row | None:
        """Comma-separated ids/names with nothing else: no regexes, cached names."""
        cols: list[int] = []
        any_piece = False
        for piece in s.split(","):
            p = piece.strip(" -")
            if not p:
                continue
            any_piece = True
            hit = self.resolve(p)
            if hit is None:
                return None
            cols.extend(hit)
        if not any_piece:
            return None
        if not cols:
            return ("empty", (), (), (), (), None, False)
        uniq = tuple(sorted(set(cols)))
        return ("ok", uniq, uniq, (1.0,) * len(uniq), (), None, False)

    def _finish(self, acc: _Acc, s: str) -> _Row:
        unknown = tuple(acc.unknown)
        if acc.errors:
            return _unparseable("; ".join(acc.errors), unknown)
        if not acc.resolved:
            if unknown:
                reason = f"no category recognised: {_quote_list(unknown)}"
                if _REFUSAL_RE.search(s[:500]):
                    return _unparseable(f"refusal: {s[:80]!r}")
                return _unparseable(reason, unknown)
            return _unparseable("no categories or scores found")
        items = sorted((c, v) for c, v in acc.scores.items() if v != 0.0)
        cols = tuple(c for c, _ in items)
        vals = tuple(v for _, v in items)
        if acc.graded:
            labels = tuple(c for c, v in items if v >= self.threshold)
        else:
            labels = tuple(c for c, v in items if v > 0.0)
        notes = "; ".join(acc.notes) or None
        if not cols and acc.unsafe_flag:
            return _unparseable("flagged unsafe but no category given", unknown)
        if acc.unsafe_flag is False and labels:
            named = ", ".join(self.ids[c] for c in labels)
            return _unparseable(f"contradictory: says safe but names {named}", unknown)
        if unknown:
            reason = f"unrecognised: {_quote_list(unknown)}"
            if notes:
                reason = f"{reason}; {notes}"
            return ("partial", labels, cols, vals, unknown, reason, acc.graded)
        status = "ok" if cols else "empty"
        return (status, labels, cols, vals, (), notes, acc.graded)

    def _body(self, s: str, depth: int) -> _Acc:
        """Interpret one block of text (the whole output, or a code fence's content)."""
        # 1. a code fence: its content is the answer (later fences must agree with it).
        if "```" in s and depth < _MAX_DEPTH:
            fenced = self._fences(s, depth)
            if fenced is not None:
                return fenced
        # 2. JSON: the whole text, or the first balanced object/array that means something.
        json_acc = self._json_anywhere(s, depth)
        if json_acc is not None:
            return json_acc
        # 3.-6. text; a leading "safe" verdict must not come with categories.
        acc = self._text(s, depth)
        if acc.scores and acc.unsafe_flag is None and self._says_safe_first(s):
            acc.unsafe_flag = False
        return acc

    def _fences(self, s: str, depth: int) -> _Acc | None:
        """The first non-empty code fence; a later one that reads differently is an error."""
        first: _Acc | None = None
        for n, m in enumerate(_FENCE_RE.finditer(s)):
            if n >= _MAX_JSON_CANDIDATES:
                break
            inner = m.group(2).strip()
            if not inner:
                continue
            acc = self._body(inner, depth + 1)
            if first is None:
                first = acc
                if first.errors:
                    return first
            elif acc.resolved and not acc.errors:
                self._agree(first, acc, "code fences")
        return first

    def _agree(self, first: _Acc, other: _Acc, what: str) -> None:
        """Record an error on ``first`` if ``other`` (a second answer) reads differently."""
        a, b = _vector(first), _vector(other)
        if a != b and not first.errors:
            first.errors.append(
                f"contradictory: two {what} disagree ({self._describe(a)} vs {self._describe(b)})"
            )

    def _describe(self, vec: tuple[tuple[int, float], ...]) -> str:
        if not vec:
            return "no category"
        return ", ".join(f"{self.ids[c]}={v:g}" for c, v in vec)

    def _says_safe_first(self, s: str) -> bool:
        """The answer opens with a "safe" verdict: "Safe. Categories: hate", "Verdict: safe"."""
        first = _SENTENCE_END_RE.split(s.lstrip(_STRIP_CHARS), maxsplit=1)[0]
        first = _VERDICT_LEAD_RE.sub("", first.replace("**", "").strip(_STRIP_CHARS))
        if not first or len(first) > 80 or self.resolve(first) != ():
            return False
        # A verdict, not a "none" list item ("None of these apply\nhate" is {hate}).
        return bool(_NONE_SENTENCE_RE.match(_norm(first)))

    def _text(self, s: str, depth: int) -> _Acc:
        """A block that is not JSON: a lead-in, a list, Llama Guard, a table."""
        # 3. strip markdown emphasis and a lead-in ("Categories: ...").
        body = s.replace("**", "").replace("`", "").strip()
        whole = self._whole(body)
        if whole is not None:
            return whole
        m = _LEAD_RE.match(body)
        if "\n" in body and depth < _MAX_DEPTH:
            leads = [x for x in _LEAD_LINE_RE.finditer(body) if self._is_lead(x.group(1))]
            if len(leads) >= 2:
                return self._lead_sections(body, [x.start() for x in leads], depth)
            if leads and (m is None or not self._is_lead(m.group(1))):
                # Reasoning first, answer last: "...\nFinal answer: hate".
                body = body[leads[-1].start() :].strip()
                m = _LEAD_RE.match(body)
        if m is not None and self._is_lead(m.group(1)):
            body = m.group(2).strip()
            if not body:
                acc = _Acc()
                acc.errors.append(f"lead-in {m.group(1).strip()!r} with nothing after it")
                return acc
            if body[:1] in "[{" and depth < _MAX_DEPTH:
                inner = self._json_anywhere(body, depth + 1)
                if inner is not None:
                    return inner
            whole = self._whole(body)
            if whole is not None:
                return whole
        # 4. commentary after the answer ("hate\nExplanation: ...") is not part of it.
        cm = _COMMENTARY_RE.search(body)
        if cm is not None and body[: cm.start()].strip():
            body = body[: cm.start()].strip()
            whole = self._whole(body)
            if whole is not None:
                return whole
        # 5. Llama Guard: "unsafe\nS1,S10".
        lg = _LG_RE.match(body)
        if lg is not None and lg.group(1).lower() == "unsafe":
            return self._llama_guard(lg.group(2))
        if (
            lg is not None
            and lg.group(2).strip()
            and all(_CODE_RE.match(c) for c in re.split(r"[\s,;]+", lg.group(2).strip()) if c)
        ):
            acc = self._llama_guard(lg.group(2))  # "safe\nS10": a verdict and codes
            acc.unsafe_flag = False
            return acc
        # 6. a list of names, ids, aliases or "name: score" pairs.
        return self._list(body)

    def _lead_sections(self, body: str, starts: list[int], depth: int) -> _Acc:
        """Several lead-in lines ("Categories: hate, violence\nAnswer: none"): the last
        one is the answer, as after reasoning, and every earlier one that reads as an
        answer must say the same thing. A category list quoted back from the prompt is
        then a disagreement, never a silent set of labels."""
        bounds = [*starts, len(body)]
        texts = [body[a:b].strip() for a, b in pairwise(bounds)]
        sections = [self._text(t, depth + 1) for t in texts]
        answer = sections[-1]
        for text, other in zip(texts[:-1], sections[:-1], strict=True):
            if answer.errors or not other.resolved or other.errors:
                continue
            if not _vector(other) and self._says_safe_first(text):
                answer.unsafe_flag = False  # "Verdict: safe\nCategories: hate"
            else:
                self._agree(answer, other, "lead-in answers")
        return answer

    def _whole(self, body: str) -> _Acc | None:
        """The whole block is one name or a "none" phrase."""
        if len(body) > 200 or ":" in body or "=" in body:
            return None  # "hate: no", "hate:" are a name and its value
        hit = self.resolve(body)
        if hit is None:
            return None
        acc = _Acc()
        acc.add(hit, 1.0)
        return acc

    def _is_lead(self, lead: str) -> bool:
        words = _norm(lead).split()
        if not words or len(words) > 8 or not any(w in _LEAD_WORDS for w in words):
            return False
        # "Privacy violations: no", "1. Self-harm: yes", "Privacy violations - risk: high"
        # name a category, not a lead-in
        head = _HAS_SEPARATOR_RE.split(_BULLET_RE.sub("", lead.strip(), count=1), maxsplit=1)[0]
        return self._resolve_name(head.strip(_STRIP_CHARS)) is None

    # ---- Llama Guard

    def _llama_guard(self, rest: str) -> _Acc:
        acc = _Acc()
        codes = [c for c in re.split(r"[\s,;]+", rest.strip()) if c]
        codes = [c.strip(_STRIP_CHARS) for c in codes]
        codes = [c for c in codes if c]
        if not codes:
            acc.errors.append("'unsafe' without category codes")
            return acc
        mapping = self.mapping
        looks_lg = all(_CODE_RE.match(c) for c in codes)
        if mapping is None or not looks_lg:
            if not looks_lg:
                # "unsafe\nhate, violence": names after the verdict.
                sub = self._list(rest)
                if not sub.resolved and not sub.unknown and not sub.errors:
                    sub.errors.append("'unsafe' without category codes")
                sub.unsafe_flag = True
                return sub
            mapping, err = _default_llama_guard_mapping(self.taxonomy)
            if mapping is None:
                acc.errors.append(
                    f"Llama Guard output ({', '.join(codes)}) needs a code mapping: {err}"
                )
                return acc
        acc.unsafe_flag = True
        empty_codes: list[str] = []
        for code in codes:
            mapped = mapping.map(code)
            if mapped is None:
                acc.add_unknown(code)
                continue
            cols = tuple(self.col[i] for i in mapped if i in self.col)
            missing = [i for i in mapped if i not in self.col]
            if missing:
                acc.add_unknown(f"{code}->{','.join(missing)}")
            if cols:
                acc.add(cols, 1.0)
            elif not missing:
                acc.resolved = True
                empty_codes.append(code)
        if empty_codes:
            acc.notes.append(
                f"code(s) {', '.join(empty_codes)} map to no {self.taxonomy.name} category"
            )
            if not acc.scores:
                acc.unsafe_flag = False
        return acc

    # ---- text lists

    def _list(self, body: str) -> _Acc:
        acc = _Acc()
        if "|" in body and _TABLE_ROW_RE.search(body):
            rows = [ln for ln in body.splitlines() if ln.lstrip().startswith("|")]
            if rows:
                self._table(rows, acc)  # the table is the answer; prose around it is not
                return acc
        split = _SPLIT_KEEP_DECIMALS_RE if _DIGIT_COMMA_RE.search(body) else _SPLIT_RE
        for raw in split.split(body):
            self._piece(raw, acc)
        return acc

    def _table(self, lines: list[str], acc: _Acc) -> None:
        """A markdown table: one row per category, its value in a column of the row."""
        rows = []
        for ln in lines:
            cells = [c.strip().strip("*`").strip() for c in ln.strip().strip("|").split("|")]
            if all(not c or _TABLE_RULE_RE.fullmatch(c) for c in cells):
                continue  # |---|:---:|
            rows.append(cells)
        if not rows:
            return
        value_col: int | None = None
        if self._resolve_name(rows[0][0]) is None:  # a header row: | Category | Present |
            header = rows.pop(0)
            for j, h in enumerate(header[1:], 1):
                if any(w in _VALUE_HEADER_WORDS for w in _norm(h).split()):
                    value_col = j
                    break
        for cells in rows:
            name, rest = cells[0], cells[1:]
            if value_col is not None and value_col < len(cells):
                rest = [cells[value_col]]
            rest = [c for c in rest if c]
            if not rest:
                self._piece(name, acc)
                continue
            value = next((c for c in rest if read_value(c)[0] is not None), None)
            if value is None and value_col is None:
                for c in cells:  # no value column: | hate | violence | is a list
                    self._piece(c, acc)
                continue
            self._piece(f"{name}: {value or rest[0]}", acc)

    def _resolve_name(self, name: str) -> tuple[int, ...] | None:
        """Columns of a category name, or of every part of "hate/harassment"; None if not."""
        hit = self.resolve(name)
        if hit is not None or len(name) > 120:
            return hit
        parts = [x.strip(_STRIP_CHARS) for x in _SUBSPLIT_RE.split(name)]
        parts = [x for x in parts if x]
        if len(parts) < 2:
            return None
        cols: list[int] = []
        for x in parts:
            h = self.resolve(x)
            if not h:
                return None  # "none/hate" names no pair of categories
            cols.extend(h)
        return tuple(cols)

    def _piece(self, raw: str, acc: _Acc) -> None:
        p = raw.strip()
        if not p:
            return
        p = _BULLET_RE.sub("", p, count=1)
        if "  " in p or "\t" in p or "\n" in p:
            p = " ".join(p.split())  # the splitting regexes are quadratic in long space runs
        if not p.isascii() and MARK_RE.search(p):
            p = _mark_as_value(p)
        has_value = ":" in p or "=" in p
        if not has_value:
            # a whole name first: "Sexual - minors" is one category, not sexual = "minors"
            hit = self.resolve(p.strip(_STRIP_CHARS))
            if hit is not None:
                acc.add(hit, 1.0)
                return
        if has_value or _HAS_SEPARATOR_RE.search(p):
            # "Hate: no", "hate (score 0.2)": read before the edges are stripped, so that
            # "hate:" or "hate: ???" is not mistaken for a bare "hate".
            nv = _NAME_VALUE_RE.match(p.strip(_QUOTE_CHARS))
            if nv is not None and self._name_value(nv, acc):
                return
        p = p.strip(_STRIP_CHARS)
        if not p:
            return
        hit = self.resolve(p) if has_value else None
        if hit is not None:
            acc.add(hit, 1.0)
            return
        # "hate/harassment", "violence and weapons", "hate violence": every part must be a
        # category ("no hate" is not {hate}).
        for parts in (_SUBSPLIT_RE.split(p), p.split()):
            if len(parts) < 2 or len(parts) > 20:
                continue
            hits = [self.resolve(x.strip(_STRIP_CHARS)) for x in parts if x.strip(_STRIP_CHARS)]
            if hits and all(hits):
                for h in hits:
                    acc.add(h or (), 1.0)
                return
        # The tail of a lead-in ("Detected: hate").
        if ":" in p:
            tail = p.rsplit(":", 1)[1].strip(_STRIP_CHARS)
            hit = self.resolve(tail) if tail else None
            if hit is not None:
                acc.add(hit, 1.0)
                return
        acc.add_unknown(p)

    def _name_value(self, nv: re.Match[str], acc: _Acc) -> bool:
        """A "name <sep> value" piece (``Hate: no``, ``hate (score 0.2)``, ``Hate - none
        detected``, ``Hate - attacks on a group``); False if it is not one."""
        name = nv.group(1).strip(_STRIP_CHARS)
        sep = nv.group(2).strip()
        text = nv.group(3).strip()
        if sep == "(" and text.endswith(")"):
            text = text[:-1]
        cols = self._resolve_name(name)
        score, graded, err = read_value(text)
        if cols is None:
            # Not a category: only an asserted name counts ("spam: yes", not "spam: no").
            if score is None and not graded:
                return False  # not a value either: "Detected: hate", prose
            if score or err is not None:
                acc.add_unknown(name)
            return True
        if score is not None:
            if graded:
                acc.graded = True
            acc.add(cols, score)
            return True
        if graded or err == NULL_VALUE:  # a number, but not a valid score; a null
            self._bad_value(name, err, acc)
            return True
        if sep not in ":=":
            tail = text.rstrip(")").strip(_STRIP_CHARS)
            more = self._resolve_name(tail) if tail else None
            if more is not None:  # "hate - violence": two categories
                acc.add(cols, 1.0)
                acc.add(more, 1.0)
                return True
            if tail and not has_negation_cue(tail):
                acc.add(cols, 1.0)  # a description: "Hate - attacks on a protected group"
                return True
        # The value after a category name is not understood: the category is unknown.
        acc.errors.append(f"{name!r}: {err}")
        return True

    def _bad_value(self, name: str, err: str | None, acc: _Acc) -> None:
        """A category given a value that is not a score: the row is unparseable. An
        explicit null under ``null="omit"`` instead leaves the category out."""
        if err == NULL_VALUE and self.omit_nulls:
            acc.resolved = True
            return
        acc.errors.append(f"{name!r}: {err}")

    # ---- JSON

    def _json_anywhere(self, s: str, depth: int) -> _Acc | None:
        """The whole text as JSON, else the first embedded JSON that resolves something."""
        if depth >= _MAX_DEPTH:
            return None
        starts_json = s[:1] in "[{"
        pos = 0
        tried = 0
        while tried < _MAX_JSON_CANDIDATES:
            i = _next_open(s, pos)
            if i < 0:
                return None
            tried += 1
            value, end, ok = _decode_at(s, i)
            whole = i == 0 and starts_json
            if not ok:
                if whole and (end < 0 or end >= len(s)):
                    acc = _Acc()
                    acc.errors.append(
                        "malformed JSON" + (" (unbalanced brackets)" if end < 0 else "")
                    )
                    return acc
                pos = i + 1
                continue
            acc = self._interpret_top(value, depth)
            if whole and (end >= len(s) or not s[end:].strip()):
                return acc  # the output IS this JSON: its verdict stands
            if acc.resolved and not acc.errors:
                self._later_json(s, end, acc, depth)
                return acc
            if whole and (acc.errors or acc.unknown):
                return acc
            pos = i + 1
        return None

    def _later_json(self, s: str, pos: int, first: _Acc, depth: int) -> None:
        """A second JSON answer after the first one must say the same thing."""
        for _ in range(_MAX_JSON_CANDIDATES):
            i = _next_open(s, pos)
            if i < 0:
                return
            value, end, ok = _decode_at(s, i)
            if ok:
                other = self._interpret_top(value, depth)
                if other.resolved and not other.errors:
                    self._agree(first, other, "JSON answers")
                    if first.errors:
                        return
            pos = end if ok and end > i else i + 1

    def _interpret_top(self, value: Any, depth: int) -> _Acc:
        acc = _Acc()
        if isinstance(value, (list, dict)) and not value:
            acc.resolved = True  # [] or {}: nothing applies
            return acc
        self._interpret(value, acc, depth)
        if not acc.resolved and not acc.unknown and not acc.errors:
            if acc.unsafe_flag:
                acc.errors.append("flagged unsafe but no category given")
            else:
                acc.errors.append(f"JSON {type(value).__name__} names no category")
        return acc

    def _interpret(self, value: Any, acc: _Acc, depth: int) -> None:
        if depth >= _MAX_DEPTH:
            acc.errors.append("JSON nested too deeply")
            return
        if isinstance(value, dict):
            self._interpret_dict(value, acc, depth)
        elif isinstance(value, list):
            if not value:
                acc.resolved = True
            for item in value:
                if isinstance(item, str):
                    self._piece(item, acc)
                elif isinstance(item, dict):
                    self._interpret_item(item, acc, depth + 1)
                elif isinstance(item, list):
                    self._interpret(item, acc, depth + 1)
                else:
                    acc.add_unknown(json.dumps(item))
        elif isinstance(value, str):
            sub = self._body(value.strip(), depth + 1) if value.strip() else None
            if sub is not None:
                _merge(acc, sub)
        else:
            acc.errors.append(f"JSON {json.dumps(value)[:40]} names no category")

    def _interpret_item(self, item: dict[str, Any], acc: _Acc, depth: int) -> None:
        """A list element like {"category": "hate", "score": 0.9}."""
        keys = {_norm(str(k)): k for k in item}
        name_key = next((keys[k] for k in _ITEM_NAME_KEYS if k in keys), None)
        if name_key is None or not isinstance(item[name_key], str):
            self._interpret_dict(item, acc, depth)
            return
        name = item[name_key]
        hit = self.resolve(name)
        score_key = next((keys[k] for k in _ITEM_SCORE_KEYS if k in keys and k != "value"), None)
        flag_key = next((keys[k] for k in _ITEM_FLAG_KEYS if k in keys), None)
        given = [item[k] for k in (score_key, flag_key) if k is not None]
        if not given:
            value: float | None = 1.0  # {"category": "hate"}: a bare mention
            graded = False
        else:
            # the first non-null of score and flag; all null: "no value given"
            value, graded, err = _json_value(next((v for v in given if v is not None), None))
            if err is not None:
                self._bad_value(name, err, acc)
                return
        if hit is None:
            if value:
                acc.add_unknown(name)
            return
        if value is None:
            return
        if graded:
            acc.graded = True
        acc.add(hit, value)

    def _interpret_dict(self, obj: dict[str, Any], acc: _Acc, depth: int) -> None:
        norm: dict[str, Any] = {}
        for k in obj:
            norm.setdefault(_norm(str(k)), k)
        special = norm.keys() & _SPECIAL_KEYS
        # Verdict flags ("unsafe": true / "safe": false / "flagged": true).
        for nk in special:
            if nk not in _UNSAFE_FLAGS and nk not in _SAFE_FLAGS:
                continue
            k = norm[nk]
            if self.resolve(str(k)):
                continue  # a category that happens to be called "toxic"
            flag, _, _ = _json_value(obj[k])
            if flag is not None:
                unsafe = bool(flag) if nk in _UNSAFE_FLAGS else not bool(flag)
                acc.unsafe_flag = unsafe
                if not unsafe:
                    acc.resolved = True
        # Containers ({"categories": [...]}, {"category_scores": {...}}): first that says something.
        for nk in _CONTAINERS if special else ():
            if nk in norm and not self.resolve(str(norm[nk])):
                sub = _Acc()
                inner = obj[norm[nk]]
                if isinstance(inner, (list, dict)) and not inner:
                    sub.resolved = True
                else:
                    self._interpret(inner, sub, depth + 1)
                if sub.resolved or sub.errors or sub.unknown:
                    _merge(acc, sub)
                    return
        # Otherwise a category -> score/bool object (a key given twice: the larger value).
        for k, v in _items(obj):
            ks = str(k)
            nk = _norm(ks)
            hit = self.resolve(ks)
            if not hit and (nk in _META_KEYS or nk in _SPECIAL_KEYS):
                continue
            if isinstance(v, dict):
                inner = _inner_value(v)
                if inner is _MISS:
                    if hit is None:
                        self._interpret(v, acc, depth + 1)
                        continue
                    acc.errors.append(f"{ks!r}: unsupported value {json.dumps(v)[:40]}")
                    continue
                v = inner
            value, graded, err = _json_value(v)
            if hit is None:
                if isinstance(v, list) and v and hit is None:
                    self._interpret(v, acc, depth + 1)  # {"hate speech detected": [...]}
                elif value or err is not None:
                    acc.add_unknown(ks)
                continue
            if err is not None or value is None:
                self._bad_value(ks, err or NULL_VALUE, acc)
                continue
            if graded:
                acc.graded = True
            acc.add(hit, value)


_MISS = object()
_NORM_CACHE: dict[str, str] = {}
_NON_ALNUM_RE = re.compile(r"[^a-z0-9]+")


def _norm(text: str) -> str:
    """normalize_label, cached (keys and names repeat across millions of outputs)."""
    hit = _NORM_CACHE.get(text)
    if hit is None:
        if text.isascii():
            # normalize_label without the Unicode steps (identity on ASCII), ~5x faster.
            hit = " ".join(map(singular, _NON_ALNUM_RE.sub(" ", text.lower()).split()))
        else:
            hit = normalize_label(text)
        if len(_NORM_CACHE) >= _MAX_CACHE:
            _NORM_CACHE.clear()
        _NORM_CACHE[text] = hit
    return hit


# Characters that change nothing a reader sees: zero-width spaces and joiners, the word
# joiner, the byte-order mark, the emoji variation selector, the soft hyphen.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\ufe0f\u00ad"))


def _plain_unicode(s: str) -> str:
    """NFKC (full-width letters, digits and colons, non-breaking spaces become their
    plain forms) without invisible characters, so that "ha\u200bte：０.９" reads as
    "hate:0.9". Only non-ASCII outputs pay for it."""
    return unicodedata.normalize("NFKC", s).translate(_INVISIBLE).strip()


def _mark_as_value(piece: str) -> str:
    """A list item with check marks or crosses, as "name: <marks> <value>": the marks are
    the value wherever they stand ("hate ✅", "❌ Violence", "Hate: ✅ yes")."""
    marks = " ".join(MARK_RE.findall(piece))
    rest = MARK_RE.sub(" ", piece).strip()
    nv = _NAME_VALUE_RE.match(rest.strip(_QUOTE_CHARS))
    if nv is not None:
        return f"{nv.group(1)}: {marks} {nv.group(3)}"
    return f"{rest}: {marks}"


def _merge(acc: _Acc, sub: _Acc) -> None:
    for c, v in sub.scores.items():
        acc.add((c,), v)
    acc.resolved = acc.resolved or sub.resolved
    acc.graded = acc.graded or sub.graded
    for u in sub.unknown:
        acc.add_unknown(u)
    acc.errors.extend(sub.errors)
    acc.notes.extend(sub.notes)
    if sub.unsafe_flag is not None:
        acc.unsafe_flag = sub.unsafe_flag


def _json_value(v: Any) -> Reading:
    """(value, graded, error) of a JSON value given for a category; null is an error
    (:data:`NULL_VALUE`), never a 0."""
    if v is None:
        return None, False, NULL_VALUE
    if isinstance(v, bool):
        return (1.0 if v else 0.0), False, None
    if isinstance(v, (int, float)):
        try:
            x = float(v)
        except OverflowError:
            return None, False, "score is not a finite number"
        return read_number(x)
    if isinstance(v, str):
        return read_value(v)
    return None, False, f"unsupported value {json.dumps(v)[:40]}"


def _vector(acc: _Acc) -> tuple[tuple[int, float], ...]:
    """The non-zero scores of an answer, in column order (to compare two answers)."""
    return tuple(sorted((c, v) for c, v in acc.scores.items() if v != 0.0))


def _final_answer(s: str) -> tuple[str, str | None]:
    """``s`` without a leading reasoning block (``<think>...</think>``), and a problem if
    there is no final answer. Reasoning models (DeepSeek-R1 and others) deliberate first;
    only what follows the block is the answer. A chat template may open the block in the
    prompt, so a closing ``</think>`` without an opening one ends the reasoning too."""
    m = _REASONING_OPEN_RE.match(s)
    if m is not None:
        tag = m.group(1).lower()
        close = s.lower().find(f"</{tag}>", m.end())
        if close < 0:
            return "", f"unterminated <{tag}> reasoning block: no final answer"
        rest = s[close + len(tag) + 3 :].strip()
    elif "</think>" in s:
        tag = "think"
        rest = s[s.rfind("</think>") + len("</think>") :].strip()
    else:
        return s, None
    if not rest:
        return "", f"no final answer after the </{tag}> reasoning block"
    return rest, None


def _inner_value(v: dict[str, Any]) -> Any:
    """{"score": 0.9, "flagged": true} -> 0.9; {"flagged": true} -> True; {"score": null}
    -> None; _MISS when no key holds a value."""
    keys = {_norm(str(k)): k for k in v}
    for name in (*_ITEM_SCORE_KEYS, *_ITEM_FLAG_KEYS):
        if name in keys:
            return v[keys[name]]
    return _MISS


class _RepeatedKeys(dict):  # type: ignore[type-arg]
    """A JSON object that names a key more than once: the dict holds the last value (as
    ``json`` does) and ``pairs`` every (key, value) in order, so that a category given
    twice keeps its larger value, as in text ("hate: 0.9, hate: 0.1")."""

    __slots__ = ("pairs",)
    pairs: list[tuple[str, Any]]


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    out = _RepeatedKeys(obj)
    out.pairs = pairs
    return out


def _items(obj: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    """Every (key, value) of a decoded JSON object, repeated keys included."""
    return obj.pairs if isinstance(obj, _RepeatedKeys) else obj.items()


_DECODER = json.JSONDecoder(object_pairs_hook=_object_pairs)


def _decode_at(s: str, i: int) -> tuple[Any, int, bool]:
    """(value, end, ok) for the JSON value starting at ``s[i]``; ``end`` is exclusive, -1 if
    the brackets never balance. Strict JSON first (C speed), then the repaired text."""
    try:
        value, end = _DECODER.raw_decode(s, i)
        return value, end, True
    except (ValueError, RecursionError):
        pass
    close = _balanced_end(s, i)
    if close < 0:
        return None, -1, False
    value, ok = _loads(s[i : close + 1])
    return value, close + 1, ok


def _next_open(s: str, pos: int) -> int:
    a = s.find("{", pos)
    b = s.find("[", pos)
    if a < 0:
        return b
    if b < 0:
        return a
    return min(a, b)


def _balanced_end(s: str, start: int) -> int:
    """Index of the bracket closing ``s[start]`` (string-aware, ' or "), or -1."""
    stack: list[str] = []
    quote = ""
    esc = False
    stop = min(len(s), start + _MAX_JSON_SCAN)
    i = start
    while i < stop:
        c = s[i]
        if quote:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == quote:
                quote = ""
            elif c == "\n" and quote == "'":
                return -1  # an apostrophe in prose, not a string
        elif c == '"' or (c == "'" and _opens_single_quote(s, i)):
            quote = c
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]":
            if not stack or stack.pop() != c:
                return -1
            if not stack:
                return i
        i += 1
    return -1


def _opens_single_quote(s: str, i: int) -> bool:
    """A ' starts a string only where a JSON value or key may start (not in "don't")."""
    j = i - 1
    while j >= 0 and s[j] in " \t\r\n":
        j -= 1
    return j < 0 or s[j] in "{[,:"


def _loads(text: str) -> tuple[Any, bool]:
    """Strict JSON, then a conservative repair (single quotes, trailing commas, bare words)."""
    try:
        return _DECODER.decode(text), True
    except (ValueError, RecursionError):
        pass
    fixed = _repair_json(text)
    if fixed is None or fixed == text:
        return None, False
    try:
        return _DECODER.decode(fixed), True
    except (ValueError, RecursionError):
        return None, False


_BARE_WORD_STOP = frozenset(',:]}[{"\n\r')
_JSON_WORDS = {
    "true": "true",
    "false": "false",
    "null": "null",
    "True": "true",
    "False": "false",
    "None": "null",
    "NaN": "NaN",
    "Infinity": "Infinity",
}


def _repair_json(s: str) -> str | None:
    """Rewrite near-JSON as JSON: 'single' -> "double" quotes, drop trailing commas,
    Python True/False/None -> JSON, bare words (``[hate, violence]``) quoted.

    Only tokens outside strings are touched; None if a string is left open.
    """
    out: list[str] = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        if c == '"' or (c == "'" and _opens_single_quote(s, i)):
            j = i + 1
            buf: list[str] = []
            while j < n and s[j] != c:
                if s[j] == "\\" and j + 1 < n:
                    if c == "'" and s[j + 1] == "'":
                        buf.append("'")
                    else:
                        buf.append(s[j : j + 2])
                    j += 2
                    continue
                if c == "'" and s[j] == '"':
                    buf.append('\\"')
                else:
                    buf.append(s[j])
                j += 1
            if j >= n:
                return None
            out.append('"' + "".join(buf) + '"')
            i = j + 1
        elif c == ",":
            k = i + 1
            while k < n and s[k] in " \t\r\n":
                k += 1
            if k < n and s[k] in "}]":
                i += 1
                continue
            out.append(c)
            i += 1
        elif c.isalpha() or c == "_":
            j = i
            while j < n and s[j] not in _BARE_WORD_STOP:
                j += 1
            word = s[i:j].rstrip()
            out.append(_JSON_WORDS.get(word) or json.dumps(word))
            out.append(s[i + len(word) : j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


# --------------------------------------------------------------------------- public API

_TAXONOMY_CACHE: dict[Any, Taxonomy] = {}
_PARSERS: dict[tuple[int, int, float, str], tuple[Taxonomy, LabelMapping | None, _Parser]] = {}
_DEFAULT_MAPPINGS: dict[tuple[str, tuple[str, ...]], tuple[LabelMapping | None, str]] = {}


def clear_caches() -> None:
    """Forget cached taxonomies, parsers, parsed outputs and the default Llama Guard mapping
    (e.g. after installing a mapping file in a running process)."""
    _TAXONOMY_CACHE.clear()
    _PARSERS.clear()
    _DEFAULT_MAPPINGS.clear()
    _NORM_CACHE.clear()


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


def _default_llama_guard_mapping(tax: Taxonomy) -> tuple[LabelMapping | None, str]:
    """The built-in Llama Guard 3 mapping if it exists and targets ``tax``; else a reason."""
    key = (tax.name, tax.ids)
    hit = _DEFAULT_MAPPINGS.get(key)
    if hit is not None:
        return hit
    try:
        m: LabelMapping | None = load_mapping(DEFAULT_LLAMA_GUARD_MAPPING)
        err = ""
    except Exception as exc:
        m, err = None, f"built-in mapping {DEFAULT_LLAMA_GUARD_MAPPING!r} is not available ({exc})"
    if m is not None:
        mapped = {i for ids in m.table.values() for i in ids}
        if m.target != tax.name and not mapped <= set(tax.ids):
            err = (
                f"built-in mapping {DEFAULT_LLAMA_GUARD_MAPPING!r} targets {m.target!r}, "
                f"not {tax.name!r}"
            )
            m = None
    if m is None:
        err += "; pass mapping= (a LabelMapping or a mapping TOML file)"
    _DEFAULT_MAPPINGS[key] = (m, err)
    return m, err


def _parser(
    taxonomy: Taxonomy | str | Path,
    mapping: LabelMapping | str | Path | None,
    threshold: float,
    null: NullPolicy = "unparseable",
) -> _Parser:
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
    parser = _Parser(tax, mp, float(threshold), null)
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


def _result(parser: _Parser, row: _Row) -> ParseResult:
    status, labels, cols, vals, unknown, reason, graded = row
    scores = np.zeros(parser.taxonomy.k, dtype=np.float64)
    if cols:
        scores[list(cols)] = vals
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
    rows: list[_Row] = []
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
