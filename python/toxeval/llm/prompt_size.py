"""The rough prompt size of a request, for dry runs and the tokens-per-minute limiter:
characters over four plus a fixed cost per chat message (no tokenizer is loaded). Kept
out of :mod:`toxeval.llm.requests`, which re-exports it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toxeval.llm.requests import Call

__all__ = ["CHARS_PER_TOKEN", "TOKENS_PER_MESSAGE", "estimate_prompt_tokens"]

CHARS_PER_TOKEN = 4  # estimate_prompt_tokens heuristic
TOKENS_PER_MESSAGE = 4  # role and separators of one chat message


def estimate_prompt_tokens(call: Call) -> int:
    """A rough prompt size for dry runs: characters / 4 (rounded up) over every message
    content, completions prompt or moderation input, plus 4 per chat message. Real
    tokenizers differ (by roughly +-30% on English text, more on other scripts and code)."""
    body = call.body
    chars = 0
    overhead = 0
    messages = body.get("messages")
    if isinstance(messages, list):
        for m in messages:
            content = m.get("content") if isinstance(m, dict) else None
            chars += len(content) if isinstance(content, str) else 0
            overhead += TOKENS_PER_MESSAGE
    prompt = body.get("prompt")  # a completions request's raw prompt
    if isinstance(prompt, str):
        chars += len(prompt)
    inputs = body.get("input")
    if isinstance(inputs, str):
        chars += len(inputs)
    elif isinstance(inputs, list):
        chars += sum(len(x) for x in inputs if isinstance(x, str))
    return -(-chars // CHARS_PER_TOKEN) + overhead
