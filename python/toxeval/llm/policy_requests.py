"""What a single-policy guard (``policy-guard:MODEL``: ShieldGemma, Granite Guardian) is
sent: one chat request per category, each carrying that category's name and definition
as the policy (a ``policy`` template), with logprobs asked for so that P(Yes) can be read
(:func:`toxeval.llm.guard_logprobs.score_policy_answers`). Kept beside
:mod:`toxeval.llm.requests`, whose :class:`RequestSpec` and :func:`plan` call it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toxeval.llm.prompts import render_policy_messages
from toxeval.llm.request_units import CHAT_PATH, TOP_LOGPROBS, Call, Unit

if TYPE_CHECKING:
    from toxeval.llm.request_units import Item
    from toxeval.llm.requests import RequestSpec

__all__ = ["check_policy_spec", "plan_policy"]


def check_policy_spec(spec: RequestSpec) -> None:
    """Refuse what a single-policy guard cannot take (a ValueError), and a ``policy``
    template given to any other system; render the template once so that one that cannot
    fit the taxonomy fails before anything is sent."""
    tpl = spec.chat_template
    if not spec.policy_guard:
        raise ValueError(
            f"template {tpl.name!r} is a policy template (one category per request): use "
            "it with a single-policy guard, policy-guard:MODEL"
        )
    if spec.llama_guard or spec.structured or spec.scoring not in ("json", "logprobs"):
        raise ValueError(
            "a single-policy guard is asked Yes/No once per category and read from "
            "logprobs: it takes no llama_guard, structured or scoring other than logprobs "
            "(the default json is read as logprobs)"
        )
    if tpl.kind != "policy":
        raise ValueError(
            f"template {tpl.name!r} is a {tpl.kind} template; a single-policy guard needs "
            "a policy template (shieldgemma-prompt, granite-guardian-prompt, ...)"
        )
    if tpl.level != spec.level:
        raise ValueError(
            f"template {tpl.name!r} is for level {tpl.level!r}, but the spec's level is "
            f"{spec.level!r}"
        )
    render_policy_messages(
        tpl, spec.taxonomy, spec.taxonomy.ids[0], "", "" if spec.level == "response" else None
    )


def _body(spec: RequestSpec, item: Item, category_id: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": spec.model,
        "messages": render_policy_messages(
            spec.chat_template, spec.taxonomy, category_id, item.text, item.response
        ),
        "logprobs": True,
        "top_logprobs": TOP_LOGPROBS,
    }
    for name in ("temperature", "max_tokens", "max_completion_tokens", "seed"):
        value = getattr(spec, name)
        if value is not None:
            body[name] = value
    return body


def plan_policy(spec: RequestSpec, items: Sequence[Item]) -> list[Unit]:
    """One unit per item, of K calls: call ``k`` asks about category ``k``."""
    return [
        Unit((it.id,), tuple(Call(CHAT_PATH, _body(spec, it, c)) for c in spec.taxonomy.ids))
        for it in items
    ]
