"""What an HTTP error answer says, read for :mod:`toxeval.llm.client`: the server's own
words on one line (an OpenAI error body, vLLM's and FastAPI's forms, the title or text of
a proxy's HTML page, read in one forward pass), the errors every request of a run would
get alike (no quota, an option the model does not take), and the error a 200 carries
instead of an answer (OpenRouter's, in the body or in a choice)."""

from __future__ import annotations

import html
import json
import re
from typing import Any

__all__ = ["error_detail", "fails_alike", "in_band_detail", "in_band_error"]

_BODY_SHOWN = 300  # characters of an error body quoted in a message
_HTML_SCANNED = 64 * 1024  # bytes of an error page searched for its title
_HTML_START = re.compile(r"\s*(<!doctype|<html|<head|<body|<!--)", re.IGNORECASE)
# an element whose content is code, not words; its end is searched for, not matched
_HTML_RAW = re.compile(r"<(script|style)\b", re.IGNORECASE)


def _error_object(content: bytes) -> dict[str, Any] | None:
    try:
        body = json.loads(content)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return body if isinstance(body, dict) else None


def _error_code(content: bytes) -> set[str]:
    """``error.code`` and ``error.type`` of an OpenAI error body, those that are strings."""
    err = (_error_object(content) or {}).get("error")
    said = (err.get("code"), err.get("type")) if isinstance(err, dict) else ()
    return {x for x in said if isinstance(x, str)}


def fails_alike(status: int, content: bytes) -> str | None:
    """Why every request of the run would get this error answer too (a hint for the
    user), or None: OpenAI's 429 ``insufficient_quota`` (an account without credit) and
    400 ``unsupported_parameter`` / ``unsupported_value`` (an option the model does not
    take, such as ``max_tokens`` or a temperature for a reasoning model)."""
    codes = _error_code(content)
    if status == 429 and "insufficient_quota" in codes:
        return "the account has no quota left: check its plan and billing"
    if status == 400 and codes & {"unsupported_parameter", "unsupported_value"}:
        err = (_error_object(content) or {}).get("error")
        if isinstance(err, dict) and err.get("param") == "max_tokens":
            return "this model takes its token limit as --max-completion-tokens, not --max-tokens"
        return "the model does not take an option toxeval sends: leave that option out"
    return None


def error_detail(content: bytes) -> str:
    """The server's own words, on one line: ``error.message`` of an OpenAI error body
    (``error`` as a string: Ollama, TGI), a top-level ``message`` (vLLM's
    ``{"object": "error", ...}``) or ``detail`` (FastAPI); the title of an HTML error page
    (a proxy's, a CDN's), else its text; else the start of the body."""
    body = _error_object(content)
    if body is not None:
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return _one_line(err["message"])
        for said in (err, body.get("message"), body.get("detail")):
            if isinstance(said, str) and said.strip():
                return _one_line(said)
    text = content[:_HTML_SCANNED].decode("utf-8", "replace")
    if _HTML_START.match(text):
        text = html.unescape(_page_title(text) or _page_text(text))
    return _one_line(text)


def in_band_detail(body: dict[str, Any] | None, content: bytes) -> str:
    """The words of a 200's in-band error: its ``message``, else :func:`error_detail`."""
    err = _body_error(body)
    said = err.get("message") if isinstance(err, dict) else None
    if isinstance(said, str) and said.strip():
        return _one_line(said)
    if body is not None and not body.get("error"):
        return "a server error ended the answer before its first word (finish_reason error)"
    return error_detail(content)


def _page_title(page: str) -> str | None:
    """The text of the first ``<title>`` of an HTML page, or None. One forward search
    (a page of many unclosed tags costs its length, not its length squared)."""
    low = page.lower()
    start = re.search(r"<title\b", low)
    opened = low.find(">", start.end()) if start else -1
    end = low.find("</title", opened) if opened >= 0 else -1
    return page[opened + 1 : end] if end >= 0 else None


def _page_text(page: str) -> str:
    """The words of an HTML page: its comments, scripts, styles and tags dropped, in one
    forward pass; a comment, element or tag left open drops the rest of the page."""
    low = page.lower()
    words = []
    i = 0
    while (lt := page.find("<", i)) >= 0:
        words.append(page[i:lt])
        raw = _HTML_RAW.match(low, lt)
        if low.startswith("<!--", lt):
            end, after = low.find("-->", lt + 4), 3
        elif raw is not None:
            close = low.find(f"</{raw.group(1).lower()}", raw.end())
            end, after = (low.find(">", close) if close >= 0 else -1), 1
        else:
            end, after = low.find(">", lt + 1), 1
        if end < 0:
            return "".join(words)
        words.append(" ")
        i = end + after
    words.append(page[i:])
    return "".join(words)


def _one_line(text: str) -> str:
    """The server's words on one line of at most ``_BODY_SHOWN`` characters, every
    character that does not print (an ANSI escape, NUL, a bidi override) written as its
    escape: they reach the terminal in error lines, where a hostile server's escape
    sequences would otherwise recolour, hide or rewrite what the user reads."""
    line = " ".join(text[: _BODY_SHOWN * 4].split())
    if not line.isprintable():
        line = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in line)
    return line[:_BODY_SHOWN]


def in_band_error(body: dict[str, Any] | None) -> int | None:
    """For a 200 body that holds an ``error`` (beside ``choices`` or not; a moderation
    ``results`` list is read as it is), whose ``choices`` list is empty, or whose every
    choice a server error ended before any word: the error's HTTP-like ``code``
    (100-599), else 0; None for any other body.
    OpenRouter puts an error beside an empty choice that ``finish_reason`` ``error``
    ended, and the answer reader refuses any body with an error, so such a body is never
    an answer."""
    err = _body_error(body)
    if err is None:
        return None
    code = err.get("code") if isinstance(err, dict) else None
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599:
        return code
    return 0


def _body_error(body: dict[str, Any] | None) -> Any:
    """The error a 200 body carries instead of an answer (see :func:`in_band_error`):
    its ``error``, else the ``error`` of its first choice when every choice has
    ``finish_reason`` ``error`` and no content (``{}`` when that choice names none);
    None when the body is an answer. An empty ``choices`` list is such an error too: the
    model said nothing, so it is a failed attempt, not an answer to charge to the model."""
    if body is None or isinstance(body.get("results"), list):
        return None
    if body.get("error"):
        return body["error"]
    choices = body.get("choices")
    if isinstance(choices, list) and not choices:
        return {"message": "the answer holds no choices"}
    if not isinstance(choices, list) or not choices:
        return None
    for c in choices:
        msg = c.get("message") if isinstance(c, dict) else None
        if not isinstance(msg, dict) or c.get("finish_reason") != "error" or msg.get("content"):
            return None
    return choices[0].get("error") or {}
