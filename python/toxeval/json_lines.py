"""One line of JSON Lines decoded the same way for every reader that goes line by line:
the dataset reader (:mod:`toxeval.datasets.readers`), the prediction dump scan
(:mod:`toxeval.predictions.readers`) and the OpenAI moderation reader. A line that is
not JSON, nests too deeply or gives a key twice in one object (ambiguous: pyarrow
refuses it too) is an error naming the source, the line and, for a syntax error, the
column.

Where lines end is the caller's: a dataset read whole splits at ``"\\n"`` only, a dump
streamed from a file at the line ends Python's text files see.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["decode_json_document", "decode_json_line", "json_line_values"]


class _RepeatedKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _RepeatedKey(k)
            seen.add(k)
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)

_JSON_SPACE = " \t\r\n"  # JSON's whitespace (RFC 8259, section 2)


def decode_json_line(line: str, lineno: int, source: str, error: type[Exception]) -> Any:
    """The JSON value on ``line`` (line ``lineno`` of ``source``; surrounding JSON
    whitespace allowed), or ``error`` saying what is wrong with it."""
    try:
        return _DECODER.decode(line)
    except json.JSONDecodeError as e:
        raise error(
            f"{source}: line {lineno}: malformed JSON ({e.msg} at column {e.colno})"
        ) from None
    except RecursionError:
        raise error(f"{source}: line {lineno}: JSON nested too deeply to read") from None
    except _RepeatedKey as e:
        raise error(
            f"{source}: line {lineno}: key {e.key!r} is specified twice in one object"
        ) from None


def decode_json_document(text: str) -> Any:
    """A whole JSON document (a thresholds file, a results.json) by the same rules as a
    line: ``ValueError`` for text that is not JSON, nesting too deep to read, or a key
    given twice in one object (the second would silently win)."""
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except _RepeatedKey as e:
        raise ValueError(f"the key {e.key!r} is given twice") from None


def json_line_values(
    lines: Iterable[str], source: str, error: type[Exception], first: int = 1
) -> Iterator[tuple[int, Any]]:
    """(1-based line number, value) of each line of ``lines`` that is not blank (JSON
    whitespace only), decoded by :func:`decode_json_line`; ``first`` is the number of
    the first of ``lines`` (a block read from further into a file)."""
    for no, line in enumerate(lines, start=first):
        if line.strip(_JSON_SPACE):
            # without its line end: an error at the end of the line is at a column of
            # this line, not column 1 of the next
            yield no, decode_json_line(line.removesuffix("\n"), no, source, error)
