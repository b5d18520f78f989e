"""Graded per-category scores of guard models from their answers' token log-probabilities:
Llama Guard (``llama-guard:MODEL --scoring logprobs``) and single-policy guards
(``policy-guard:MODEL``, ShieldGemma and Granite Guardian styles; see
:func:`score_policy_answers`).

Llama Guard answers ``safe``, or ``unsafe`` and a line of hazard codes (``S1,S10``). With
the server's logprobs (chat ``logprobs.content[].top_logprobs``, or the completions form
``logprobs.tokens`` / ``logprobs.top_logprobs``) each category gets

    score(c) = P(unsafe) x share(c)

- ``P(unsafe)``: at the first answer token, the probability of the ``unsafe`` variants
  (``unsafe``, ``un``, ``uns``, ...) over those of ``unsafe`` and ``safe`` (``safe``,
  ``sa``, ...) among its top alternatives.
- ``share(c)``: at each code position, the probability of each hazard code among the
  position's top alternatives that spell a code of the mapping, normalised over those;
  ``share(c)`` is the largest, over the answer's code positions, of the summed share of
  the codes that map to ``c``. A code split over tokens (``S`` ``1`` ``0``) is followed:
  the alternatives at the first digit spell the code with the text before them; when the
  chosen code continues into the next token (``1`` then ``0``, a tokenizer of single
  digits), the next position says whether ``S1`` ends there or goes on to ``S10``..``S14``.
  Alternatives at the first digit other than the chosen one are taken as whole codes
  (their continuation was not generated, so it cannot be read). A code position whose
  alternatives spell no code of the mapping gives the chosen code share 1.
- When the model answers ``safe`` no code was generated: every code of the mapping gets
  an equal share of ``P(unsafe)`` (a uniform prior, stated in the reason of each row).

The logprobs are read only when their tokens spell the answer (a prefix of it, when the
server sent logprobs for its first tokens only: the codes past them get share 1; or it
followed by a special token) and the first token's alternatives hold the verdict it chose;
else the answer is read as 0/1 with the reason. Categories no code maps to stay unknown
(NaN). Without logprobs in the answer (a server
that ignores the request), the answer is read as today, 0/1 and not graded, and the
row's reason says so; the report says a system's scores are binary.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toxeval.llm.answers import Answer, ChatReply, chat_replies, score_labels, unparseable
from toxeval.taxonomy import LabelMapping, Taxonomy

__all__ = [
    "Position",
    "first_choice_logprobs",
    "logprob_positions",
    "read_guard",
    "score_llama_guard_logprobs",
    "score_policy_answers",
]

METHOD = "llama-guard"
NO_LOGPROBS = "no logprobs in the response: read as 0/1"
UNIFORM = "answered safe: P(unsafe) shared equally among the hazard codes"
NO_CODE = "no hazard code of the mapping in the answer: P(unsafe) shared equally among them"
NOT_THIS_ANSWER = "the logprobs' tokens do not spell the answer: read as 0/1"
INVALID_VERDICT = "a verdict's logprob is not a log-probability: read as 0/1"
NO_CHOSEN = "the first token's top logprobs do not hold the verdict it chose: read as 0/1"
CUT_LOGPROBS = "the logprobs stop before the answer ends: codes past them read with share 1"
_LOGPROB_SLACK = 1e-4
_CODE_RE = re.compile(r"S(\d+)", re.IGNORECASE)
_LEAD = " \t\r\n,;"


@dataclass(frozen=True)
class Position:
    """One generated token: its ``text`` and the log-probabilities of its top
    ``alternatives`` (the chosen token included when the server gave its logprob);
    ``unread``: the alternatives (or the chosen token) whose logprob was not a
    log-probability and was dropped."""

    text: str
    alternatives: dict[str, float]
    unread: frozenset[str] = frozenset()


def _number(v: Any) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        f = float(v)
        if math.isfinite(f) and f <= _LOGPROB_SLACK:
            return min(f, 0.0)
    return None


def logprob_positions(logprobs: Any) -> list[Position] | None:
    """The token positions of a choice's ``logprobs`` object, in either form: chat
    (``{"content": [{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}]}``) or
    completions (``{"tokens": [...], "token_logprobs": [...], "top_logprobs": [{token:
    logprob}]}``); None when it holds no positions. Non-numeric, non-finite or positive
    log-probabilities are dropped, their tokens kept in ``unread``: a verdict or a Yes/No
    dropped so makes the position unreadable, never the other word certain."""
    if not isinstance(logprobs, dict):
        return None
    content = logprobs.get("content")
    out: list[Position] = []
    if isinstance(content, list):
        for entry in content:
            if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
                return None
            alts: dict[str, float] = {}
            unread: set[str] = set()
            for alt in entry.get("top_logprobs") or ():
                if isinstance(alt, dict) and isinstance(alt.get("token"), str):
                    lp = _number(alt.get("logprob"))
                    if lp is not None:
                        alts.setdefault(alt["token"], lp)
                    else:
                        unread.add(alt["token"])
            lp = _number(entry.get("logprob"))
            if lp is not None and alts:
                alts.setdefault(entry["token"], lp)
            elif lp is None:
                unread.add(entry["token"])
            out.append(Position(entry["token"], alts, frozenset(unread - alts.keys())))
        return out or None
    tokens = logprobs.get("tokens")
    tops = logprobs.get("top_logprobs")
    chosen = logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        return None
    tops = tops if isinstance(tops, list) else []
    chosen = chosen if isinstance(chosen, list) else []
    for i, tok in enumerate(tokens):
        top = tops[i] if i < len(tops) and isinstance(tops[i], dict) else {}
        alts = {}
        unread = set()
        for t, v in top.items():
            lp = _number(v)
            if isinstance(t, str) and lp is not None:
                alts[t] = lp
            elif isinstance(t, str):
                unread.add(t)
        lp = _number(chosen[i]) if i < len(chosen) else None
        if lp is not None and alts:
            alts.setdefault(tok, lp)
        elif lp is None and i < len(chosen):
            unread.add(tok)
        out.append(Position(tok, alts, frozenset(unread - alts.keys())))
    return out or None


def first_choice_logprobs(body: Any) -> Any:
    """The ``logprobs`` object of a response body's first choice (lowest ``index``), or
    None."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list):
        return None
    dicts = [c for c in choices if isinstance(c, dict)]
    if not dicts:
        return None
    # the choice chat_replies reads first: by ``index``, else by position in the list
    first = min(
        enumerate(choices),
        key=lambda ic: (
            ic[1]["index"]
            if isinstance(ic[1], dict) and isinstance(ic[1].get("index"), int)
            else ic[0]
        ),
    )[1]
    if not isinstance(first, dict):
        return None
    return first.get("logprobs")


def _verdict_word(token: str) -> str | None:
    w = token.strip().lower()
    if len(w) >= 2 and "unsafe".startswith(w):
        return "unsafe"
    if len(w) >= 2 and "safe".startswith(w):
        return "safe"
    return None


def _spells(joined: str, said: str) -> bool:
    """Whether the logprobs' tokens ``joined`` spell the answer ``said`` (stripped): one
    is a non-empty prefix of the other."""
    tokens = joined.strip()
    return bool(tokens) and (said.startswith(tokens) or tokens.startswith(said))


def _p_unsafe(pos: Position) -> float | None:
    """P(unsafe) over the unsafe/safe variants among ``pos``'s alternatives; None when
    there is none, or none of the verdict the token chose (its own logprob was not a
    number: the others alone would give it probability 0)."""
    sums = {"unsafe": [], "safe": []}  # type: dict[str, list[float]]
    for tok, lp in pos.alternatives.items():
        word = _verdict_word(tok)
        if word is not None:
            sums[word].append(lp)
    chosen = _verdict_word(pos.text)
    if (not sums["unsafe"] and not sums["safe"]) or (chosen is not None and not sums[chosen]):
        return None
    if any(_verdict_word(t) is not None and t != pos.text for t in pos.unread):
        return None  # a verdict dropped for its logprob: the rest alone would be biased
    top = max(sums["unsafe"] + sums["safe"])
    u = sum(math.exp(lp - top) for lp in sums["unsafe"])
    s = sum(math.exp(lp - top) for lp in sums["safe"])
    return u / (u + s)


def _code_of(text: str) -> str | None:
    """The code a candidate spells (``S`` and digits, leading separators dropped)."""
    m = _CODE_RE.match(text.lstrip(_LEAD))
    return f"S{m.group(1)}" if m else None


def _code_distribution(
    positions: Sequence[Position],
    starts: list[int],
    joined: str,
    code_start: int,
    chosen_code: str,
    mapping: LabelMapping,
) -> dict[str, float] | None:
    """{code: share} at one code position (see the module docstring), or None when its
    alternatives spell no code of the mapping."""
    digit = code_start + 1
    idx = bisect.bisect_right(starts, digit) - 1
    pos = positions[idx]
    before = joined[code_start : starts[idx]] if starts[idx] > code_start else ""
    chosen_here = _code_of(before + pos.text)
    nxt = positions[idx + 1] if idx + 1 < len(positions) else None
    continues = (
        chosen_here is not None
        and chosen_here != chosen_code
        and chosen_code.startswith(chosen_here)
        and nxt is not None
    )
    weights: dict[str, float] = {}
    for tok, lp in pos.alternatives.items():
        code = _code_of(before + tok)
        if code is None:
            continue
        p = math.exp(lp)
        if continues and code == chosen_here and nxt is not None:
            # the chosen digits went on into the next token: split p by what came next
            follow = {
                (code + m.group(0)) if (m := re.match(r"\d+", t)) else code: math.exp(q)
                for t, q in nxt.alternatives.items()
            }
            total = sum(follow.values())
            if total > 0:
                for c, q in follow.items():
                    weights[c] = weights.get(c, 0.0) + p * q / total
                continue
        weights[code] = weights.get(code, 0.0) + p
    known = {c: w for c, w in weights.items() if mapping.map(c) is not None}
    total = sum(known.values())
    if total <= 0.0:
        return None
    return {c: w / total for c, w in known.items()}


def score_llama_guard_logprobs(
    reply: ChatReply,
    logprobs: Any,
    taxonomy: Taxonomy,
    mapping: LabelMapping,
) -> Answer:
    """A Llama Guard answer's graded scores (module docstring); the 0/1 reading of
    :func:`~toxeval.llm.answers.score_labels` when the answer has no usable logprobs."""
    labels = score_labels(reply, taxonomy, METHOD, mapping)
    if labels.scores is None:
        return labels
    positions = logprob_positions(logprobs)
    first = next((p for p in positions or () if p.text.strip()), None)
    joined = "".join(p.text for p in positions or ())
    # the tokens must spell the answer read for the labels: a prefix of it (a server
    # that sent logprobs for the first tokens only) or it and more (a special token such
    # as <|eot_id|> in the logprobs only); else they are another answer's
    said = (reply.text or "").strip()
    spelled = _spells(joined, said)
    p_unsafe = _p_unsafe(first) if first is not None and first.alternatives and spelled else None
    if positions is None or first is None or p_unsafe is None:
        if not positions or first is None or not first.alternatives:
            why = NO_LOGPROBS
        elif not spelled:
            why = NOT_THIS_ANSWER
        elif any(_verdict_word(t) is not None and t != first.text for t in first.unread):
            why = INVALID_VERDICT
        elif (
            _verdict_word(first.text) is not None
            and _p_unsafe(Position("", first.alternatives)) is not None
        ):
            why = NO_CHOSEN
        else:
            why = "neither safe nor unsafe among the first token's top logprobs: read as 0/1"
        return Answer(
            labels.scores,
            labels.status,
            "; ".join(r for r in (labels.reason, why) if r),
            labels.text,
            labels.reasoning,
            False,
            METHOD,
        )
    starts: list[int] = []
    at = 0
    for p in positions:
        starts.append(at)
        at += len(p.text)
    covered = len(joined)  # the rest of the answer has no logprobs
    rest = said[len(joined.strip()) :]
    whole = joined.rstrip() + rest if rest else joined
    verdict_end = joined.find(first.text) + len(first.text)
    codes = [
        (m.start(), m.end(), f"S{m.group(1)}")
        for m in _CODE_RE.finditer(whole, verdict_end)
        if mapping.map(f"S{m.group(1)}") is not None
    ]
    share = np.zeros(taxonomy.k)
    reasons = [labels.reason] if labels.reason else []
    chosen_unsafe = _verdict_word(first.text) == "unsafe"
    if chosen_unsafe and codes:
        if codes[-1][1] > covered:
            reasons.append(CUT_LOGPROBS)
        for start, end, code in codes:
            dist = None
            if end <= covered:
                dist = _code_distribution(positions, starts, joined, start, code, mapping)
            dist = dist or {code: 1.0}
            per_cat = np.zeros(taxonomy.k)
            for c, q in dist.items():
                for cid in mapping.map(c) or ():
                    if cid in taxonomy.ids:
                        per_cat[taxonomy.index(cid)] += q
            share = np.maximum(share, per_cat)
    else:
        n_codes = len(mapping.table)
        for ids in mapping.table.values():
            for cid in ids:
                if cid in taxonomy.ids:
                    share[taxonomy.index(cid)] += 1.0 / n_codes
        reasons.append(UNIFORM if not chosen_unsafe else NO_CODE)
    scores = p_unsafe * np.minimum(share, 1.0)
    scores[np.isnan(labels.scores)] = np.nan  # unknown stays unknown
    return Answer(
        scores,
        labels.status,
        "; ".join(reasons) or None,
        labels.text,
        labels.reasoning,
        True,
        METHOD,
    )


POLICY_METHOD = "policy-guard"
_WORD_STRIP = " \t\r\n.,:;!\"'`*_"


def _yes_no(token: str) -> str | None:
    w = token.strip(_WORD_STRIP).lower()
    return w if w in ("yes", "no") else None


def _p_yes(pos: Position) -> float | None:
    """P(Yes) over the Yes/No variants (any case, spacing or punctuation) among
    ``pos``'s alternatives; None when neither is there, or none of the word the token
    chose (its own logprob was not a number)."""
    sums: dict[str, list[float]] = {"yes": [], "no": []}
    for tok, lp in pos.alternatives.items():
        word = _yes_no(tok)
        if word is not None:
            sums[word].append(lp)
    chosen = _yes_no(pos.text)
    if (not sums["yes"] and not sums["no"]) or (chosen is not None and not sums[chosen]):
        return None
    if any(_yes_no(t) is not None and t != pos.text for t in pos.unread):
        return None  # a Yes or No dropped for its logprob: the rest alone would be biased
    top = max(sums["yes"] + sums["no"])
    y = sum(math.exp(lp - top) for lp in sums["yes"])
    n = sum(math.exp(lp - top) for lp in sums["no"])
    return y / (y + n)


def score_policy_answers(responses: Sequence[Any], taxonomy: Taxonomy) -> Answer:
    """One item's scores from a single-policy guard's K answers (``responses[k]`` asked
    about category ``k``): P(Yes) at the first answer token, over the Yes and No variants
    among its top log-probabilities. An answer without logprobs is read from its first
    word, Yes 1 / No 0 (the row is then not graded, and its reason says which categories);
    an answer that is neither, or a failed choice, leaves its category unknown (NaN)."""
    k = taxonomy.k
    scores = np.full(k, np.nan)
    problems: dict[str, list[str]] = {}
    binary: list[str] = []
    said: list[str] = []
    for cid, body in zip(taxonomy.ids, responses, strict=True):
        replies, problem = chat_replies(body)
        reply = replies[0] if replies else None
        if reply is not None and reply.text is None:
            problem = reply.problem or "empty answer"
        if problem is not None or reply is None or reply.text is None:
            problems.setdefault(problem or "empty answer", []).append(cid)
            continue
        said.append(f"{cid}: {' '.join(reply.text.split())[:60]}")
        positions = logprob_positions(first_choice_logprobs(body))
        first = next((p for p in positions or () if p.text.strip()), None)
        # tokens that do not spell the answer are another answer's
        spelled = _spells("".join(p.text for p in positions or ()), reply.text.strip())
        p = _p_yes(first) if first is not None and first.alternatives and spelled else None
        if p is not None:
            scores[taxonomy.index(cid)] = p
            continue
        word = _yes_no(reply.text.split()[0]) if reply.text.split() else None
        if word is None:
            problems.setdefault("answer starts with neither Yes nor No", []).append(cid)
            continue
        scores[taxonomy.index(cid)] = 1.0 if word == "yes" else 0.0
        binary.append(cid)
    reasons = [f"{why}: {', '.join(ids)}" for why, ids in problems.items()]
    if binary:
        reasons.append(f"no logprobs, read as 0/1: {', '.join(binary)}")
    reason = "; ".join(reasons) or None
    text = "\n".join(said) or None
    if np.isnan(scores).all():
        return unparseable(reason or "no answer", POLICY_METHOD, text)
    status = "partial" if problems else "ok"
    return Answer(scores, status, reason, text, None, not binary, POLICY_METHOD)


def read_guard(
    taxonomy: Taxonomy, mapping: LabelMapping | None, responses: Sequence[Any]
) -> Answer:
    """One item's answer from a guard's response bodies: a single-policy guard's K bodies
    when ``mapping`` is None, else one Llama Guard body read through ``mapping``."""
    if mapping is None:
        return score_policy_answers(responses, taxonomy)
    replies, problem = chat_replies(responses[0])
    if problem is not None:
        return unparseable(problem, METHOD)
    return score_llama_guard_logprobs(
        replies[0], first_choice_logprobs(responses[0]), taxonomy, mapping
    )
