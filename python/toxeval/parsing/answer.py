"""What one output said, while it is being read: :class:`Acc` gathers the scores, unknown
names, errors and verdict flags that the readers (lists, tables, Llama Guard, JSON) find;
:func:`norm_name` is the cached name normaliser they share; the bounds below keep adversarial
input cheap."""

from __future__ import annotations

import re

from toxeval.taxonomy import normalize_label, singular

# Bounds that keep adversarial input cheap: JSON candidates tried per output, nesting
# followed when interpreting JSON, size of the caches (names, outputs, normalised text).
MAX_JSON_CANDIDATES = 8
MAX_DEPTH = 6
MAX_CACHE = 200_000
_MAX_UNKNOWN_LEN = 60

# "Not given": the default of a cache lookup, a JSON object with no value key.
MISS = object()


class Acc:
    """What one output said: scores per column, unknown names, errors, flags."""

    __slots__ = (
        "complete",
        "conflicts",
        "errors",
        "graded",
        "notes",
        "resolved",
        "scores",
        "sentences",
        "unknown",
        "unplaced",
        "unsafe_flag",
        "unsure",
    )

    def __init__(self) -> None:
        # a value per column the answer spoke for (0.0 included: an explicit "no")
        self.scores: dict[int, float] = {}
        # True when the answer is a complete statement (a label list, "none", "safe"):
        # the columns it does not list are negatives. Otherwise ("name: value" pairs, a
        # JSON object, a table) the columns it does not name are unknown.
        self.complete = False
        # columns an unrecognised name may stand for ("violance"): unknown, never 0
        self.unsure: dict[int, None] = {}
        # asserted names that match no category and look like no one in particular
        # ("haine", "Hass", "spam"): any category may be meant, so a list that holds
        # one does not say the categories it leaves out are negative
        self.unplaced: list[str] = []
        # a dict used as an insertion-ordered set: membership is O(1), order is kept
        self.unknown: dict[str, None] = {}
        self.errors: list[str] = []
        self.notes: list[str] = []
        # columns given a positive value and a negative one ("hate: false" and
        # "racism: true", a key given twice): which one the answer means is not known
        self.conflicts: dict[int, None] = {}
        # unrecognised items that are sentences mentioning a category: beside a name
        # that was read, they show a sentence split at its commas, not a label list
        self.sentences: list[str] = []
        self.resolved = False
        self.graded = False
        self.unsafe_flag: bool | None = None

    def add(self, cols: tuple[int, ...], value: float) -> None:
        self.resolved = True
        for c in cols:
            old = self.scores.get(c)
            if old is not None and (old >= 0.5) != (value >= 0.5):
                self.conflicts[c] = None
            if old is None or value > old:
                self.scores[c] = value

    def add_unknown(self, name: str) -> None:
        name = name.strip()
        if len(name) > _MAX_UNKNOWN_LEN:
            name = name[: _MAX_UNKNOWN_LEN - 3] + "..."
        if name:
            self.unknown[name] = None


def shown(text: str) -> str:
    """A piece of an answer quoted in a reason: whitespace collapsed, at most 40 chars."""
    t = " ".join(text.split())
    return repr(t if len(t) <= 40 else t[:37] + "...")


def vector(acc: Acc) -> tuple[tuple[int, float], ...]:
    """The non-zero scores of an answer, in column order (to compare two answers)."""
    return tuple(sorted((c, v) for c, v in acc.scores.items() if v != 0.0))


def conflict(a: Acc, b: Acc) -> bool:
    """True if a category is on either side of 0.5 in two answers (a complete one says 0
    for what it does not name; an incomplete one says nothing of it)."""
    for c in set(a.scores) | set(b.scores):
        x = a.scores.get(c, 0.0 if a.complete else None)
        y = b.scores.get(c, 0.0 if b.complete else None)
        if x is not None and y is not None and (x >= 0.5) != (y >= 0.5):
            return True
    return False


_NORM_CACHE: dict[str, str] = {}
_NON_ALNUM_RE = re.compile(r"[^a-z0-9]+")


def norm_name(text: str) -> str:
    """normalize_label, cached (keys and names repeat across millions of outputs)."""
    hit = _NORM_CACHE.get(text)
    if hit is None:
        if text.isascii():
            # normalize_label without the Unicode steps (identity on ASCII), ~5x faster.
            hit = " ".join(map(singular, _NON_ALNUM_RE.sub(" ", text.lower()).split()))
        else:
            hit = normalize_label(text)
        if len(_NORM_CACHE) >= MAX_CACHE:
            _NORM_CACHE.clear()
        _NORM_CACHE[text] = hit
    return hit


def clear_norm_cache() -> None:
    """Forget the normalised names cached by :func:`norm_name`."""
    _NORM_CACHE.clear()
