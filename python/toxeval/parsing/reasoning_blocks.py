"""A reasoning model's deliberation before its answer: ``<think>...</think>``.

Reasoning models (DeepSeek-R1 and others) think aloud first, naming categories they then
reject; only what follows the block is the answer. Kept apart from the dispatcher
(``parser``) so that each module stays small.
"""

from __future__ import annotations

import re

# A leading reasoning block ("<think>...</think> answer"), as reasoning models write it.
_REASONING_OPEN_RE = re.compile(r"\A<(think|thinking|reasoning)>", re.IGNORECASE)


def final_answer(s: str) -> tuple[str, str | None]:
    """``s`` without a leading reasoning block (``<think>...</think>``), and a problem if
    there is no final answer. A chat template may open the block in the prompt, so a
    closing ``</think>`` without an opening one ends the reasoning too."""
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
