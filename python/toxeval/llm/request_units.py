"""What one request to a model server is, apart from how it is built: the dataset
:class:`Item` sent, one HTTP :class:`Call`, and the :class:`Unit` of calls whose answers
are read together; the chat path and the logprobs count every chat request uses.

A leaf of :mod:`toxeval.llm` (no toxeval imports), so that :mod:`toxeval.llm.requests`
and :mod:`toxeval.llm.policy_requests` both build units without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CHAT_PATH", "TOP_LOGPROBS", "Call", "Item", "Unit"]

CHAT_PATH = "/chat/completions"
TOP_LOGPROBS = 20  # alternatives requested per answer token for scoring="logprobs"


@dataclass(frozen=True)
class Item:
    """One dataset row to send."""

    id: str
    text: str
    response: str | None = None


@dataclass(frozen=True)
class Call:
    """One HTTP request: ``path`` (appended to the base URL) and the JSON ``body``."""

    path: str
    body: dict[str, Any]


@dataclass(frozen=True)
class Unit:
    """Calls whose answers are read together: one chat item, or a moderation batch."""

    item_ids: tuple[str, ...]
    calls: tuple[Call, ...]
