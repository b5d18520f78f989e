"""P(yes) at one answer token of the ``logprobs`` scoring method, from the token's
``top_logprobs`` (docs/llm.md, "logprobs"): the yes and no variants among the candidates,
or why the category cannot be read (no alternatives, neither word, a logprob that is no
log-probability). Apart from :mod:`toxeval.llm.answers`, which finds the answer lines, so
that the arithmetic and its refusals are in one place."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["INVALID_LOGPROB", "NEITHER", "NO_TOP", "token_text", "yes_probability"]

# candidates are compared with these stripped from both ends, lower-cased
_TOKEN_STRIP = " \t\r\n:=-*\"'`"


def token_text(tok: Any) -> str | None:
    """The text of a logprobs entry (``{"token": ...}``), or None."""
    if isinstance(tok, dict) and isinstance(tok.get("token"), str):
        return str(tok["token"])
    return None


# Why a category's P(yes) could not be read (the reason lists the categories).
NO_TOP = "no top_logprobs for"
NEITHER = "neither yes nor no among the top tokens for"
INVALID_LOGPROB = "invalid logprob (not a finite number <= 0) for"
# A log-probability a little above 0 is float rounding of a near-certain token.
_LOGPROB_SLACK = 1e-4


def _logprob(entry: Any) -> float | None:
    lp = entry.get("logprob") if isinstance(entry, dict) else None
    if isinstance(lp, (int, float)) and not isinstance(lp, bool):
        return float(lp)
    return None


def _is_yes_no(token: str) -> bool:
    return token.strip(_TOKEN_STRIP).lower() in ("yes", "no")


def yes_probability(tok: dict[str, Any]) -> float | str:
    """P(yes) = e^yes / (e^yes + e^no) over the yes/no variants at this position, or why
    not: no usable alternatives (the chosen token alone would give a bare 0 or 1), no
    yes/no among them, or a yes/no logprob that is not a log-probability (NaN, infinite,
    above 0), which would otherwise read as a silent 0 or 1, or overflow."""
    cands: dict[str, float] = {}
    unread: set[str] = set()  # yes/no variants whose logprob is no number (a bool, a string)
    top = tok.get("top_logprobs")
    for alt in top if isinstance(top, list) else ():
        t, lp = token_text(alt), _logprob(alt)
        if t is not None and lp is not None:
            cands.setdefault(t, lp)
        elif t is not None and _is_yes_no(t):
            unread.add(t)
    if not cands:
        return NO_TOP
    lp_chosen = _logprob(tok)
    chosen = str(tok["token"])
    if lp_chosen is not None:
        cands.setdefault(chosen, lp_chosen)
    elif _is_yes_no(chosen):
        unread.add(chosen)
    if unread - cands.keys():
        # dropping it would leave the other word alone: a silent 0 or 1
        return INVALID_LOGPROB
    yes_lps: list[float] = []
    no_lps: list[float] = []
    for t, lp in cands.items():
        word = t.strip(_TOKEN_STRIP).lower()
        if word not in ("yes", "no"):
            continue
        if not (math.isfinite(lp) and lp <= _LOGPROB_SLACK):
            return INVALID_LOGPROB
        (yes_lps if word == "yes" else no_lps).append(min(lp, 0.0))
    if not yes_lps and not no_lps:
        return NEITHER
    yes = sum(math.exp(lp) for lp in yes_lps)
    no = sum(math.exp(lp) for lp in no_lps)
    if yes + no == 0.0:  # every candidate underflows: shift by the largest logprob
        top_lp = max(yes_lps + no_lps)
        yes = sum(math.exp(lp - top_lp) for lp in yes_lps)
        no = sum(math.exp(lp - top_lp) for lp in no_lps)
    return yes / (yes + no)
