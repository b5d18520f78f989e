"""The value grammar: what an answer says *about* one category, as a score in [0, 1].

An LLM that answers category by category writes a value after each name: ``Hate: no``,
``violence: not present``, ``self-harm (score 0.2)``, ``drugs: 7/10``, ``fraud: low``,
``{"hate": "20%"}``. :func:`read_value` turns such a value into a :data:`Reading`
``(score, graded, error)``:

- ``score`` is a float in [0, 1], or None when the value is not understood or invalid;
- ``graded`` is True when the value carried a degree (a number, a percentage, a fraction,
  a severity or likelihood word) rather than a plain yes/no;
- ``error`` is None, or a reason that names the value ("value 'maybe not' not
  understood", "score 1.7 is outside [0, 1]").

The grammar, in the order it is tried (docs/parsing.md has the full tables):

1. a word or phrase of the vocabulary: negations (``no``, ``none``, ``not present``,
   ``not detected``, ``negative``, ``absent``, ``N/A``...) give 0.0, presence words
   (``yes``, ``present``, ``detected``, ``flagged``, ``violated``, ``positive``...) give
   1.0, severity and likelihood words give the score of :data:`DEGREE_WORDS`
   (``low`` 0.2, ``likely`` 0.8...), optionally followed by a noun such as ``risk`` or
   ``likelihood`` (``low risk``);
2. a number in [0, 1], a percentage (``20%``, ``20 %``, ``20 percent``), a fraction
   (``7/10``, ``0.3/1``, ``3 out of 10``, ``3/5``);
3. a score phrase: ``score 0.2``, ``score: 0.2``, ``confidence 0.7``, ``probability of
   20%``, ``likelihood: low``: a score word, then any value of this grammar;
4. a value followed by a gloss in parentheses or after a dash (``no (neutral
   mention)``, ``yes - uses a slur``): the value counts; a gloss that is itself a value
   must be on the same side of 0.5 and then gives the score (``yes (0.9)`` is 0.9,
   ``no (0.02)`` is 0.02, ``no (0.9)`` and ``yes (0.3)`` are errors).

Anything else is not understood: an error, never a guess. Words that say the model does
not know (``unknown``, ``unclear``, ``unsure``, ``uncertain``) are deliberately not in
the vocabulary, so they are reported too.
"""

from __future__ import annotations

import math
import re
from typing import Final

from .value_words import (
    CUE_WORDS,
    DEGREE_NOUNS,
    DEGREE_WORDS,
    MARK_RE,
    MARKS,
    NEGATIVE_PHRASES,
    POSITIVE_PHRASES,
    PRESENCE_WORDS,
    SCORE_WORDS,
)

__all__ = [
    "DEGREE_WORDS",
    "MARKS",
    "MARK_RE",
    "NEGATIVE_PHRASES",
    "NULL_VALUE",
    "POSITIVE_PHRASES",
    "Reading",
    "check_score",
    "has_negation_cue",
    "named_scale",
    "read_number",
    "read_value",
]

Reading = tuple["float | None", bool, "str | None"]

# The error of an explicit null (JSON ``null``, ``hate: null``): the model gave the
# category no value. It is not a 0: the category is unknown (docs/parsing.md).
NULL_VALUE: Final = "null (no value given)"

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf(?:inity)?)"
_NUMBER_RE = re.compile(rf"(?:{_NUM})\Z")
_PERCENT_RE = re.compile(rf"({_NUM})\s*(?:%|percent|pct)\Z")
_FRACTION_RE = re.compile(rf"({_NUM})\s*(?:/|out of|of)\s*({_NUM})\Z")
# A decimal comma ("0,7"), read only below 1: "1,5" could be 1.5 or fifteen, "1,000" a
# thousand or 1.0, so those stay not understood.
_DECIMAL_COMMA_RE = re.compile(r"0,(\d+)\Z")
_SCORE_PHRASE_RE = re.compile(
    r"(?:"
    + "|".join(sorted((re.escape(w) for w in SCORE_WORDS), key=len, reverse=True))
    + r")\b\s*(?:[:=]|\bis\b|\bof\b)?\s*(.+)\Z"
)
_DEGREE_NOUN_RE = re.compile(r"(.+?)[ ](?:" + "|".join(DEGREE_NOUNS) + r")\Z")
_GLOSS_RE = re.compile(r"(.+?)\s*(?:\((.*?)\)?|\s[-\u2013\u2014]\s(.*)|,\s(.*)|:\s(.*))\Z")
_SPACES_RE = re.compile(r"[\s_]+")
_HYPHEN_RE = re.compile(r"(?<=[a-z])-(?=[a-z])")
# "no hate speech detected", "none of it found": a negation that spans a free phrase.
_NO_X_FOUND_RE = re.compile(
    r"(?:no|none|nothing|zero)\b[a-z ']{0,40}\b(?:" + "|".join(PRESENCE_WORDS) + r")\Z"
)
# Words that turn a gloss into a qualification: "no, but borderline" is not a plain no.
_CONTRAST_WORDS = frozenset(("but", "however", "although", "though", "except", "yet", "unless"))
# Words that say the model does not know: "yes (unclear)" is not a plain yes either.
_UNSURE_WORDS = frozenset(("unclear", "unsure", "uncertain", "unknown", "ambiguous"))
_QUALIFYING_WORDS = _CONTRAST_WORDS | _UNSURE_WORDS
_EDGE = " \t\r\n.!*\"'`“”‘’"
_EDGE_LEFT = _EDGE.replace(".", "")


def check_score(x: float) -> str | None:
    """None if ``x`` is a valid score, else why not (NaN, outside [0, 1])."""
    if math.isnan(x):
        return "score is NaN"
    if not 0.0 <= x <= 1.0:
        return f"score {x!r} is outside [0, 1]"
    return None


def read_number(x: float) -> Reading:
    """A number given as a score: kept as it is (graded) if in [0, 1], else an error."""
    err = check_score(x)
    return (None if err else x), True, err


def named_scale(text: str) -> float | None:
    """The top of a scale other than [0, 1] that an answer names ("Scores (1-5):",
    "on a 1-10 scale", ``"max": 5``, "3 = severe"), or None. Numbers on such a scale are
    not scores: a 1 on a 1-5 scale is its lowest value, not 1.0."""
    if text.isascii():  # (IGNORECASE also folds some non-ASCII letters, "\u017f" = "s")
        low = text.lower()
        if not any(w in low for w in _SCALE_NEEDS):
            return None
    for m in _SCALE_RE.finditer(text):
        top = float(next(g for g in m.groups() if g is not None))
        if top != 1.0:
            return top
    return None


def has_negation_cue(text: str) -> bool:
    """True if ``text`` contains a word that negates or hedges ("not", "no", "unlikely")."""
    return any(w in CUE_WORDS for w in _words(text))


def read_value(text: str) -> Reading:
    """The :data:`Reading` of a value written after a category name (see module docs)."""
    hit = _CACHE.get(text)
    if hit is None:
        v = _clean(text) if len(text) <= _MAX_VALUE_LEN else ""
        if len(text) > _MAX_VALUE_LEN:
            # a huge number ("9999...%") is an invalid score, not a description
            numeric = text.lstrip(_EDGE)[:1] in "0123456789+-."
            hit = None, numeric, f"value {_shown(text)} not understood"
        elif not v:
            hit = None, False, "no value given"
        elif _CENSORED_RE.match(text):
            # "f***", "s**t": a censored word quoted as the value, not "f" (false)
            hit = None, False, f"value {_shown(text)} is a censored word, not a value"
        else:
            hit = _read(v, 0) or (None, False, f"value {_shown(text)} not understood")
            if hit[0] is not None and _note_disagrees(v, hit[0], hit[1]):
                # "0.9 (not hateful)", "yes - not hateful", "0 - clearly present": the
                # value and the note beside it disagree
                hit = None, False, f"value {_shown(text)} contradicts itself"
        if len(_CACHE) >= _MAX_CACHE:
            _CACHE.clear()
        _CACHE[text] = hit
    return hit


def _note_disagrees(v: str, score: float, graded: bool) -> bool:
    """The note beside a value says the opposite: a denial beside a positive ("yes - not
    hateful"), a presence word beside a zero ("0 - clearly present")."""
    if score >= 0.5 and graded:
        note = _NOTE_RE.search(v)
        if note is not None and has_negation_cue(note.group(1)):
            return True
    if 0.0 < score < 0.5:
        return False
    m = _GLOSS_RE.match(v)
    if m is None or _read(_clean(m.group(1)), 1) is None:
        return False  # "score: 0.2": no value before the note
    gloss = _EMPHASIS_RE.sub(" ", next((g for g in m.groups()[1:] if g is not None), ""))
    words = set(_words(gloss))
    if score >= 0.5:
        return bool(words & _DENIALS)
    return bool(words & _AFFIRMS) and not words & CUE_WORDS


# Denial words that stress a yes: "yes (no doubt)", "yes, not just rude".
_EMPHASIS_RE = re.compile(
    r"\b(?:no\s+(?:doubt|question)|not\s+(?:just|only|merely)|without\s+(?:a\s+)?doubt)\b"
)
# Words that deny outright, and words that say a category is there.
_DENIALS = frozenset(
    "no not none nothing never isn't isnt doesn't doesnt nor absent false n/a neither".split()
)
_AFFIRMS = frozenset(
    "present detected flagged violated identified evident apparent triggered observed found".split()
)
_N = r"(\d+(?:\.\d+)?)"
_SCALE_RE = re.compile(
    rf"(?:scale|scores?|rating|rated|severity|range|from)\b\D{{0,20}}?\d+(?:\.\d+)?\s*(?:-|\u2013|to)\s*{_N}"
    rf"|\(\s*\d+(?:\.\d+)?\s*(?:-|\u2013|to)\s*{_N}\s*\)"
    rf"|\b(?:scale|max|maximum)\W{{0,3}}{_N}\b"
    # (?<!\d): not from inside a run of digits, where it would match only if it did from
    # the run's start, after trying every split of the run (quadratic in its length)
    rf"|(?<!\d)\d+(?:\.\d+)?\s*(?:-|\u2013|to)\s*{_N}[\s-]*(?:points?\s+)?scale\b"
    rf"|\b{_N}\s*=\s*(?:severe|extreme|high|highest|max|maximum)\b",
    re.IGNORECASE,
)
# What every alternative of _SCALE_RE needs (lower case): most answers hold none of these
# and need not be scanned.
_SCALE_NEEDS = ("scale", "score", "rating", "rated", "severity", "range", "from", "max", "(", "=")
# A censored word ("f***", "f*" once "**" emphasis is stripped): a letter, then "*".
_CENSORED_RE = re.compile(r"\s*[A-Za-z]\*")
# The note in parentheses after a score: "0.9 (not hateful)".
_NOTE_RE = re.compile(r"\(([^()]*)\)")
# Values repeat across millions of answers ("no", "yes", "0.1"): read each once.
_CACHE: dict[str, Reading] = {}
_MAX_CACHE = 100_000
# A value is a few words; longer text is prose, not understood (and never scanned twice).
_MAX_VALUE_LEN = 300


def _read(v: str, depth: int) -> Reading | None:
    """The reading of cleaned text ``v``, or None if it is not understood."""
    if v == "null":
        return None, False, NULL_VALUE
    if not v.isascii() and MARK_RE.search(v):
        return _read_marked(v, depth)
    if v in NEGATIVE_PHRASES:
        return 0.0, False, None
    if v in POSITIVE_PHRASES:
        return 1.0, False, None
    degree = DEGREE_WORDS.get(v)
    if degree is not None:
        return degree, True, None
    if v[:1].isdigit() or v[:1] in "-+." or v.startswith(("nan", "inf")):
        num = _read_numeric(v)
        if num is not None:
            return num
    m = _DEGREE_NOUN_RE.match(v)
    if m is not None and m.group(1) in DEGREE_WORDS:
        return DEGREE_WORDS[m.group(1)], True, None
    if m is not None and m.group(1) in NEGATIVE_PHRASES:
        return 0.0, False, None  # "no risk", "none level"
    if _NO_X_FOUND_RE.match(v) and not _CONTRAST_WORDS.intersection(_words(v)):
        return 0.0, False, None
    if depth >= 2:
        return None
    m = _SCORE_PHRASE_RE.match(v)
    if m is not None:
        inner = _read(_clean(m.group(1)), depth + 1)
        if inner is not None:
            return inner
    return _read_glossed(v, depth)


def _read_numeric(v: str) -> Reading | None:
    if _NUMBER_RE.match(v):
        return read_number(float(v))
    m = _PERCENT_RE.match(v)
    if m is not None:
        return read_number(float(m.group(1)) / 100.0)
    m = _DECIMAL_COMMA_RE.match(v)
    if m is not None:
        return read_number(float(f"0.{m.group(1)}"))
    m = _FRACTION_RE.match(v)
    if m is not None:
        a, b = float(m.group(1)), float(m.group(2))
        if not b > 0.0 or math.isinf(b):
            return None, True, f"fraction {v!r} has no positive finite denominator"
        if math.isnan(a) or not 0.0 <= a <= b:
            return None, True, f"fraction {v!r} is outside [0, 1]"
        return a / b, True, None
    return None


def _read_glossed(v: str, depth: int) -> Reading | None:
    """A value followed by a comment: "no (neutral mention)", "yes - uses a slur"."""
    m = _GLOSS_RE.match(v)
    if m is None:
        return None
    head = _read(_clean(m.group(1)), depth + 1)
    if head is None or head[2] is not None:
        return head
    gloss = next((g for g in m.groups()[1:] if g is not None), "")
    return _with_gloss(v, head, gloss, depth)


def _read_marked(v: str, depth: int) -> Reading | None:
    """A check mark or cross, alone or with words: "✅", "✅ yes", "❌ (not present)"."""
    words = {MARKS[c] for c in MARK_RE.findall(v)}
    if len(words) > 1:  # "✅ ❌"
        return None, False, f"value {_shown(v)} contradicts itself"
    head = _read(words.pop(), depth + 1)
    rest = _clean(MARK_RE.sub(" ", v))
    if head is None or not rest:
        return head
    return _with_gloss(v, head, rest, depth)


def _with_gloss(v: str, head: Reading, gloss: str, depth: int) -> Reading | None:
    """A value ``head`` and the text after it: a description keeps ``head``, another
    value must be on the same side of 0.5 and gives the score if it is graded."""
    tail = _read(_clean(gloss), depth + 1) if gloss.strip() else None
    if tail is None:
        if _QUALIFYING_WORDS.intersection(_words(gloss)):
            return None  # "no, but borderline", "yes (unclear)": qualified, not understood
        return head  # a description, not a value
    if tail[2] is not None:
        return tail
    if ((head[0] or 0.0) >= 0.5) != ((tail[0] or 0.0) >= 0.5):  # "no (0.9)", "high (0.3)"
        return None, False, f"value {_shown(v)} contradicts itself"
    return tail if tail[1] else head


def _lstrip_edge(text: str) -> str:
    """``text`` without leading edge characters, keeping the point of ".5"."""
    v = text.lstrip(_EDGE_LEFT)
    while v.startswith(".") and not v[1:2].isdigit():
        v = v[1:].lstrip(_EDGE_LEFT)
    return v


def _clean(text: str) -> str:
    v = _SPACES_RE.sub(" ", _lstrip_edge(text.rstrip(_EDGE)).lower())
    if "-" in v:
        v = _HYPHEN_RE.sub(" ", v)
    if v.startswith("(") and v.endswith(")") and v.count("(") == 1:
        v = _lstrip_edge(v[1:-1].rstrip(_EDGE))
    if v.endswith(")") and "(" not in v:
        v = v[:-1].rstrip(_EDGE)
    if v.startswith("(") and ")" not in v:
        v = _lstrip_edge(v[1:])
    return v


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z/']+", text.lower())


def _shown(text: str) -> str:
    t = text.strip()
    return repr(t if len(t) <= 40 else t[:37] + "...")
