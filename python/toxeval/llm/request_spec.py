"""The request settings of a remote detector spec (:class:`~toxeval.llm.requests.RequestSpec`)
built from the keyword arguments of :func:`toxeval.llm.predict`, and the check that names
the arguments a detector does not take.

Used by :func:`toxeval.llm.predict` and by :mod:`toxeval.llm.batch` (a Batch API output
read back with the settings its requests were written with); a module of its own so that
neither imports the other.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from toxeval.llm.detectors import DetectorSpec
    from toxeval.llm.requests import RequestSpec
    from toxeval.taxonomy import Taxonomy

__all__ = ["Scoring", "build_request_spec", "changed_from_defaults", "flags_text"]

Scoring = Literal["json", "logprobs", "sample", "labels"]


def build_request_spec(
    det: DetectorSpec,
    taxonomy: Taxonomy,
    level: Literal["prompt", "response"],
    *,
    scoring: Scoring = "json",
    template: str | Path | None = None,
    structured: bool = False,
    temperature: float | None = None,
    max_tokens: int | None = None,
    max_completion_tokens: int | None = None,
    seed: int | None = None,
    samples: int = 1,
    api: Literal["chat", "completions"] = "chat",
) -> RequestSpec:
    """The :class:`~toxeval.llm.requests.RequestSpec` of a remote detector spec; ``api``
    is the endpoint a chat-kind detector's requests go to (``completions``: a guard's
    raw prompt to ``/completions``, :mod:`toxeval.llm.completion_requests`)."""
    from toxeval.llm.requests import RequestSpec, load_template

    if det.kind == "openai-moderation":
        chat_only = {
            "scoring": scoring,
            "template": template,
            "structured": structured,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "max_completion_tokens": max_completion_tokens,
            "samples": samples,
            "api": api,
        }
        given = changed_from_defaults(build_request_spec, chat_only)
        if given:
            raise ValueError(f"{flags_text(given)} do not apply to {det.text!r} (a moderation API)")
    return RequestSpec(
        api="moderation" if det.kind == "openai-moderation" else api,
        model=str(det.model),
        taxonomy=taxonomy,
        scoring=scoring,
        template=None if template is None else load_template(template),
        level=level,
        structured=structured,
        llama_guard=det.kind == "llama-guard",
        policy_guard=det.kind == "policy-guard",
        temperature=temperature,
        max_tokens=max_tokens,
        max_completion_tokens=max_completion_tokens,
        # a moderation request has no seed: there it only draws the sample of rows
        seed=None if det.kind == "openai-moderation" else seed,
        samples=samples,
    )


def changed_from_defaults(func: Callable[..., Any], values: dict[str, Any]) -> list[str]:
    """The names among ``values`` whose value differs from ``func``'s default for that
    keyword (a timeout given as one number compares as its (connect, read) pair)."""
    params = inspect.signature(func).parameters
    given = []
    for name, value in values.items():
        if name == "timeout" and not isinstance(value, tuple):
            value = (value, value)
        if value != params[name].default:
            given.append(name)
    return given


#: runner keywords the command line has no flag for: messages name them as keywords
API_ONLY = ("retry_base_delay",)


def flags_text(names: list[str]) -> str:
    """Keyword names as the command line's flags: ``max_tokens`` -> ``--max-tokens``;
    a keyword without a flag (:data:`API_ONLY`) as itself: ``retry_base_delay=``."""
    return ", ".join(
        f"{name}=" if name in API_ONLY else f"--{name.replace('_', '-')}" for name in names
    )
