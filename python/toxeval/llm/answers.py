"""Chat-completion answers read into per-category scores.

A response body is untrusted server JSON: nothing here raises on its shape. A body with
no usable answer gives an :class:`Answer` with status ``unparseable``, ``scores`` None and
a reason (no choices, a refusal, a tool call, a truncated answer, ...). Reasoning models'
``<think>...</think>`` blocks and ``reasoning_content`` / ``reasoning`` fields are kept in
``Answer.reasoning``; only the final answer is scored. Scores are (K,) float64 in taxonomy
order; a category the answer gives no value for is NaN (unknown, never a negative) and the
Answer is ``partial`` with a reason naming it.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toxeval.llm.yes_no import INVALID_LOGPROB, NEITHER, NO_TOP, token_text, yes_probability
from toxeval.parsing import NullPolicy, parse_output
from toxeval.parsing.llama_guard import CODE_RE, default_llama_guard_mapping
from toxeval.taxonomy import LabelMapping, Taxonomy, normalize_label

__all__ = [
    "Answer",
    "ChatReply",
    "chat_replies",
    "score_labels",
    "score_logprobs",
    "score_samples",
    "unparseable",
]

TRUNCATED = "truncated (max_tokens)"
FILTERED = "cut by the server's content filter"
# finish_reason values that stop an answer before its end: the text is what came before
# the stop (Azure OpenAI's output filter can leave a partial answer with "content_filter";
# Mistral says "model_length" when the context window cut it, "error" when an error did)
_CUT = {
    "length": TRUNCATED,
    "content_filter": FILTERED,
    "model_length": "truncated (context length)",
    "error": "cut by a server error",
}
_MAX_REASON = 200
_MAX_LITERAL = 20_000  # characters of a non-JSON object literal worth evaluating
_THINK_OPEN_RE = re.compile(r"\A\s*<(think|thinking)>", re.IGNORECASE)
_THINK_CLOSE_RE = re.compile(r"</(think|thinking)>", re.IGNORECASE)
_FENCE_RE = re.compile(r"```[A-Za-z]*\s*\n?(.*?)```", re.DOTALL)
_CONTAINER_KEYS = frozenset(("scores", "score", "category scores", "probabilities"))
# "<name>: yes|no" lines of the logprobs answer format; group 2 is the yes/no word.
_YES_NO_LINE_RE = re.compile(
    r"^[ \t]*[-*]*[ \t]*([A-Za-z0-9_][A-Za-z0-9_ /-]{0,60}?)[ \t]*[:=][ \t]*(yes|no)\b",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class Answer:
    """One item's reading (see :mod:`toxeval.llm.requests`)."""

    scores: np.ndarray | None
    status: str
    reason: str | None
    text: str | None
    reasoning: str | None
    graded: bool
    method: str


def unparseable(
    reason: str, method: str, text: str | None = None, reasoning: str | None = None
) -> Answer:
    """An Answer with no usable scores (never zeros)."""
    return Answer(None, "unparseable", reason, text, reasoning, False, method)


def _clip(s: str) -> str:
    s = " ".join(s.split())
    return s if len(s) <= _MAX_REASON else s[: _MAX_REASON - 3] + "..."


def _join_reasons(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    return "; ".join(kept) if kept else None


@dataclass(frozen=True)
class ChatReply:
    """One choice of a chat completion: the final answer text and what came with it.

    ``problem`` is set (and ``text`` may be None) when the choice holds no usable answer.
    ``tokens`` are the choice's logprobs content entries when the server sent them.
    """

    text: str | None
    reasoning: str | None
    finish_reason: str | None
    tokens: list[Any] | None
    problem: str | None


def _split_reasoning(content: str) -> tuple[str, str | None, int]:
    """(final answer, reasoning block or None, offset of the final answer in content)."""
    opened = _THINK_OPEN_RE.match(content)
    close = _THINK_CLOSE_RE.search(content, opened.end() if opened else 0)
    if opened and close is None:  # the answer ended inside the reasoning block
        return "", content[opened.end() :].strip(), len(content)
    if close is None:
        return content, None, 0
    start = opened.end() if opened else 0
    reasoning = content[start : close.start()].strip()
    rest = content[close.end() :]
    offset = close.end() + (len(rest) - len(rest.lstrip()))
    return content[offset:].strip(), reasoning or None, offset


def _content_refusal(content: Any) -> str | None:
    """The refusal parts of a content-part list (``{"type": "refusal", "refusal": ...}``)."""
    if not isinstance(content, list):
        return None
    parts = [
        p["refusal"]
        for p in content
        if isinstance(p, dict) and p.get("type") == "refusal" and isinstance(p.get("refusal"), str)
    ]
    text = " ".join(parts).strip()
    return text or None


def _content_text(content: Any) -> str | None:
    """Message content as text: a string, or the text parts of a content-part list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
        return "".join(parts) if parts else None
    return None


def _reply(choice: Any) -> ChatReply:
    if not isinstance(choice, dict):
        return ChatReply(None, None, None, None, "choice is not an object")
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    msg = choice.get("message")
    if not isinstance(msg, dict):
        return ChatReply(None, None, finish, None, "no message in choice")
    lp = choice.get("logprobs")
    tokens = lp.get("content") if isinstance(lp, dict) else None
    tokens = tokens if isinstance(tokens, list) else None
    separate = msg.get("reasoning_content")
    if not isinstance(separate, str) or not separate.strip():
        separate = msg.get("reasoning")
    separate = separate.strip() if isinstance(separate, str) and separate.strip() else None
    refusal = msg.get("refusal")
    if not isinstance(refusal, str) or not refusal.strip():
        refusal = _content_refusal(msg.get("content"))
    if isinstance(refusal, str) and refusal.strip():
        return ChatReply(None, separate, finish, tokens, f"refused: {_clip(refusal)}")
    content = _content_text(msg.get("content"))
    if content is None or not content.strip():
        if msg.get("tool_calls") or msg.get("function_call"):
            problem = "tool call instead of an answer"
        elif finish == "content_filter":
            problem = "refused: the server's content filter stopped the answer"
        elif finish in _CUT:
            problem = _CUT[finish]
        else:
            problem = "empty answer"
        return ChatReply(None, separate, finish, tokens, problem)
    final, inline, _ = _split_reasoning(content)
    reasoning = _join_reasons(separate, inline)
    if not final:
        problem = _CUT.get(finish or "", "no final answer after the reasoning")
        return ChatReply(None, reasoning, finish, tokens, problem)
    return ChatReply(final, reasoning, finish, tokens, None)


def chat_replies(body: Any) -> tuple[list[ChatReply], str | None]:
    """Every choice of a chat completion body, or ([], reason) when it has none."""
    if not isinstance(body, dict):
        return [], f"response body is a {type(body).__name__}, not an object"
    err = body.get("error")
    if err:
        msg = err.get("message") if isinstance(err, dict) else err
        return [], f"error in response: {_clip(str(msg))}"
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        return [], "no choices in response"
    indexed = sorted(
        enumerate(choices),
        key=lambda ic: (
            ic[1].get("index", ic[0])
            if isinstance(ic[1], dict) and isinstance(ic[1].get("index"), int)
            else ic[0]
        ),
    )
    return [_reply(c) for _, c in indexed], None


def _truncation_note(reply: ChatReply) -> str | None:
    """Why the answer stopped before its end (max_tokens, the content filter), or None."""
    return _CUT.get(reply.finish_reason or "")


def _object_literal(text: str) -> Any:
    """JSON, else a Python literal (``{'hate': 0.9, 'v': None,}``, as some local models
    write); ``ast.literal_eval`` evaluates literals only, never code. None if neither."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    if len(text) > _MAX_LITERAL:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _score_object_keys(text: str, taxonomy: Taxonomy) -> tuple[set[str], bool] | None:
    """Category ids given a non-null value in the answer's JSON object, and whether a
    category was given an explicit null; None when the answer is not a JSON object of
    scores (then parse_output's reading stands alone)."""
    fenced = _FENCE_RE.search(text)
    body = fenced.group(1) if fenced else text
    lo, hi = body.find("{"), body.rfind("}")
    if lo < 0 or hi <= lo:
        return None
    obj = _object_literal(body[lo : hi + 1])
    if not isinstance(obj, dict):
        return None
    for key, value in obj.items():
        if isinstance(value, dict) and normalize_label(str(key)) in _CONTAINER_KEYS:
            obj = value
            break
    ids: set[str] = set()
    nulls = False
    for key, value in obj.items():  # one lookup per key: this runs on every answer
        found = taxonomy.resolve(str(key))
        if found is None:
            continue
        if value is None:
            nulls = True
        else:
            ids.add(found)
    return (ids, nulls) if ids or nulls else None


def score_labels(
    reply: ChatReply,
    taxonomy: Taxonomy,
    method: str,
    mapping: LabelMapping | None = None,
) -> Answer:
    """One answer read with toxeval's parser (methods ``json``, ``labels``, ``llama-guard``).

    What the answer says nothing about is NaN, as the parser leaves it, for every method.
    ``json``: categories the JSON object leaves out (or gives null) are NaN, whether its
    values are scores, booleans or yes/no words. With a ``mapping`` (Llama Guard),
    categories no code maps to are NaN. Other methods have no per-category unknown: a
    null there makes the answer unparseable, as in :func:`~toxeval.parsing.parse_output`.
    An answer cut short (``finish_reason`` ``length``, or ``content_filter`` with the part
    written before the filter stopped it) that flags categories without being a JSON object of
    scores (a list of the categories that apply, an ``unsafe`` Llama Guard verdict) may
    have lost names after the cut: the categories it does not flag are NaN, not
    negatives ("none" and "safe" are whole answers and stand). Its last name or code,
    when the cut may have fallen inside it (``S1`` of ``S10``), flags nothing known.
    """
    if reply.text is None:
        return unparseable(reply.problem or "empty answer", method, None, reply.reasoning)
    null: NullPolicy = "omit" if method == "json" else "unparseable"
    r = parse_output(reply.text, taxonomy, mapping=mapping, null=null)
    if r.status == "unparseable":
        reason = _join_reasons(_truncation_note(reply), r.reason)
        return unparseable(reason or "unparseable", method, reply.text, reply.reasoning)
    scores = np.array(r.scores, dtype=np.float64)
    unknown_ids: list[str] = []
    found = _score_object_keys(reply.text, taxonomy) if method == "json" else None
    if found is not None:  # a JSON object with a value (or a null) per category it names
        unknown_ids = [i for i in taxonomy.ids if i not in found[0]]
    if mapping is not None:
        unknown_ids = [i for i in taxonomy.ids if i not in mapping.targets]
    nan = np.isnan(scores)  # what the answer says nothing about (its reason: said below)
    unknown_ids = [i for j, i in enumerate(taxonomy.ids) if nan[j] or i in unknown_ids]
    kept = [p for p in (r.reason or "").split("; ") if p and not p.startswith("no value for ")]
    status, reason = r.status, "; ".join(kept) or None
    cut_by = _truncation_note(reply)
    if cut_by is not None and found is None and r.status != "empty":
        torn = _torn_last_word(reply.text, taxonomy, mapping, null, scores)
        cut = [i for i in taxonomy.ids if scores[taxonomy.index(i)] == 0.0]
        if len(cut) + len(torn) == taxonomy.k:
            reason = _join_reasons(cut_by, "no category flagged before the cut", reason)
            return unparseable(reason or cut_by, method, reply.text, reply.reasoning)
        scores[[taxonomy.index(i) for i in cut + torn]] = np.nan
        reason = _join_reasons(reason, f"{cut_by}: not flagged before the cut: {', '.join(cut)}")
        if torn:
            reason = _join_reasons(reason, f"the last name may be cut: {', '.join(torn)}")
        status = "partial"
    if unknown_ids:
        scores[[taxonomy.index(i) for i in unknown_ids]] = np.nan
        status = "partial"
        what = "no Llama Guard code maps to" if mapping is not None else "no score for"
        reason = _join_reasons(reason, f"{what}: {', '.join(unknown_ids)}")
    return Answer(scores, status, reason, reply.text, reply.reasoning, bool(r.graded), method)


def _torn_last_word(
    text: str,
    taxonomy: Taxonomy,
    mapping: LabelMapping | None,
    null: NullPolicy,
    scores: np.ndarray,
) -> list[str]:
    """The categories a cut answer flags only by its last name or code when the cut may
    have fallen inside it: the text ends in a letter or digit and that name or code is
    the start of a longer one (``S1`` of ``S10``, ``sexual`` of ``sexual_minors``), so
    what the answer meant there is not known."""
    if not text[-1:].isalnum():
        return []
    piece = re.split(r"[\n\r,;|]", text)[-1].strip()
    word = piece.split()[-1]
    lookup = taxonomy.labels()
    longer = [
        k
        for n in {normalize_label(piece), normalize_label(word)}
        for k, cat in lookup.items()
        if k != n and k.startswith(n) and cat != lookup.get(n)
    ]
    if not longer and CODE_RE.match(word):
        lg = mapping or default_llama_guard_mapping(taxonomy)[0]
        codes = {str(c).upper(): ids for c, ids in (lg.table if lg else {}).items()}
        w = word.upper()
        longer = [c for c in codes if c != w and c.startswith(w) and codes[c] != codes.get(w)]
    if not longer:
        return []
    head = parse_output(text[: len(text) - len(word)], taxonomy, mapping=mapping, null=null)
    before = np.array(head.scores, dtype=np.float64) if head.status != "unparseable" else None
    return [
        i
        for i in taxonomy.ids
        if scores[taxonomy.index(i)] > 0.0
        and (before is None or not before[taxonomy.index(i)] > 0.0)
    ]


def score_logprobs(reply: ChatReply, taxonomy: Taxonomy) -> Answer:
    """Per-category P(yes) from the answer tokens' log-probabilities (docs/llm.md)."""
    method = "logprobs"
    if reply.text is None:
        return unparseable(reply.problem or "empty answer", method, None, reply.reasoning)
    if not reply.tokens:
        return unparseable(
            "no logprobs in response (does the server support logprobs?)",
            method,
            reply.text,
            reply.reasoning,
        )
    texts = [token_text(t) for t in reply.tokens]
    if any(t is None for t in texts):
        return unparseable("malformed logprobs content", method, reply.text, reply.reasoning)
    starts: list[int] = []
    pos = 0
    for t in texts:
        starts.append(pos)
        pos += len(t or "")
    joined = "".join(t or "" for t in texts)
    _, _, offset = _split_reasoning(joined)
    scores = np.full(taxonomy.k, np.nan)
    seen: set[str] = set()
    problems: dict[str, list[str]] = {NEITHER: [], NO_TOP: [], INVALID_LOGPROB: []}
    for m in _YES_NO_LINE_RE.finditer(joined, offset):
        cid = taxonomy.resolve(m.group(1))
        if cid is None or cid in seen:
            continue
        seen.add(cid)
        tok = reply.tokens[bisect.bisect_right(starts, m.start(2)) - 1]
        p = yes_probability(tok)
        if isinstance(p, str):
            problems[p].append(cid)
        else:
            scores[taxonomy.index(cid)] = p
    if not seen:
        reason = _join_reasons(_truncation_note(reply), "no '<id>: yes|no' lines in the answer")
        return unparseable(reason or "", method, reply.text, reply.reasoning)
    missing = [i for i in taxonomy.ids if i not in seen]
    reason = _join_reasons(
        _truncation_note(reply) if missing else None,
        f"no line for: {', '.join(missing)}" if missing else None,
        *(f"{why}: {', '.join(ids)}" if ids else None for why, ids in problems.items()),
    )
    if np.isnan(scores).all():
        return unparseable(reason or "", method, reply.text, reply.reasoning)
    status = "partial" if reason else "ok"
    return Answer(scores, status, reason, reply.text, reply.reasoning, True, method)


def score_samples(replies: Sequence[ChatReply], taxonomy: Taxonomy, requested: int) -> Answer:
    """Score = the fraction of the samples giving a category a value that flag it (docs/llm.md)."""
    method = "sample"
    text = json.dumps([r.text for r in replies], ensure_ascii=False)
    thoughts = [r.reasoning for r in replies]
    reasoning = json.dumps(thoughts, ensure_ascii=False) if any(thoughts) else None
    flags, said = np.zeros(taxonomy.k), np.zeros(taxonomy.k)  # flagged, given a value
    parsed = 0
    first_bad: str | None = None
    for r in replies:
        if r.text is None or _truncation_note(r):  # a cut list may lack names
            first_bad = first_bad or r.problem or _truncation_note(r)
            continue
        res = parse_output(r.text, taxonomy)
        if res.status == "unparseable":
            first_bad = first_bad or res.reason
            continue
        parsed += 1
        said += res.known  # a sample silent about a category does not count against it
        for cid in res.labels:
            flags[taxonomy.index(cid)] += 1.0
    bad = len(replies) - parsed
    notes = []
    if len(replies) != requested:
        notes.append(f"the server returned {len(replies)} of {requested} requested samples")
    if bad:
        notes.append(f"{bad} of {len(replies)} samples unparseable (first: {first_bad})")
    if parsed and not said.all():
        notes.append(f"no sample gives a value for: {', '.join(np.array(taxonomy.ids)[said == 0])}")
    reason = _join_reasons(*notes)
    if parsed == 0:
        return unparseable(reason or "no samples", method, text, reasoning)
    status = "partial" if reason else "ok"
    scores = np.divide(flags, said, out=np.full(taxonomy.k, np.nan), where=said > 0)
    return Answer(scores, status, reason, text, reasoning, parsed > 1, method)
