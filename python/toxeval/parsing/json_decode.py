"""Decoding the JSON in an answer: strict JSON at C speed, then a conservative repair of
near-JSON (single quotes, trailing commas, Python literals, bare words), with repeated
keys kept and scans bounded."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

# Characters scanned per JSON candidate while looking for its closing bracket.
_MAX_JSON_SCAN = 20_000


class _RepeatedKeys(dict):  # type: ignore[type-arg]
    """A JSON object that names a key more than once: the dict holds the last value (as
    ``json`` does) and ``pairs`` every (key, value) in order, so that a category given
    twice is read as in text ("hate: 0.9, hate: 0.7" keeps 0.9; "hate: 0.9, hate: 0.1"
    is a contradiction)."""

    __slots__ = ("pairs",)
    pairs: list[tuple[str, Any]]


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    out = _RepeatedKeys(obj)
    out.pairs = pairs
    return out


def json_items(obj: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    """Every (key, value) of a decoded JSON object, repeated keys included."""
    return obj.pairs if isinstance(obj, _RepeatedKeys) else obj.items()


_DECODER = json.JSONDecoder(object_pairs_hook=_object_pairs)


def decode_at(s: str, i: int) -> tuple[Any, int, bool]:
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


def next_open(s: str, pos: int) -> int:
    """Index of the first "{" or "[" at or after ``pos``, or -1."""
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
