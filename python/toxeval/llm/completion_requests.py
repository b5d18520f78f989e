"""Guard models through the completions API (``api="completions"``, ``--api completions``):
``POST /completions`` with a raw ``prompt`` string, as vLLM, llama.cpp and TGI serve it,
for servers (or models) without a chat template that builds the guard's prompt.

The request is the chat request's, its messages rendered into the model's raw prompt
by toxeval (:func:`raw_prompt`), with the legacy ``logprobs: N`` instead of the chat
``logprobs: true, top_logprobs: N``. The answer (``choices[].text``, logprobs in the
legacy ``{"tokens", "token_logprobs", "top_logprobs": [{token: logprob}]}`` form, or in
the ``{"content": [...]}`` form llama.cpp also sends here) is turned into a chat body
(:func:`as_chat_body`) and read by the very functions that read chat answers
(:mod:`toxeval.llm.guard_logprobs`), so both APIs give the same scores from the same
log-probabilities.

Raw prompt forms (a server adds the model's BOS token itself, so none is written), as the
template's ``completion`` key names them, else by its kind:

- ``llama-3``, the default of ``llama-guard`` templates: Llama 3's turns, ``<|start_header_id|>user<|end_header_id|>``
  ``\\n\\n`` + the message + ``<|eot_id|>``, then the assistant header (Llama Guard 3's
  model card prompt). The plain-conversation templates (``llama-guard-3-chat-*``, whose
  user message is only the text) are refused: the guard's instructions would be missing.
- ``granite``, the default of ``policy`` templates with a system message: Granite 3's
  roles, ``<|start_of_role|>system<|end_of_role|>`` ... ``<|end_of_text|>``, user, then
  ``<|start_of_role|>assistant<|end_of_role|>``. The shipped ``granite-guardian-raw-*``
  templates hold Granite Guardian's own prompt as one user message, so that this form
  gives the prompt its chat template builds.
- ``plain``, the default of ``policy`` templates of one user message (ShieldGemma): the
  message as written, which is ShieldGemma's documented prompt (its turn markers are
  inside the text).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toxeval.llm.request_units import TOP_LOGPROBS, Call, Unit

if TYPE_CHECKING:
    from toxeval.llm.requests import RequestSpec
    from toxeval.llm.templates import Template

__all__ = [
    "COMPLETIONS_PATH",
    "as_chat_body",
    "check_completions_spec",
    "completion_units",
    "raw_prompt",
]

COMPLETIONS_PATH = "/completions"


def _llama3(messages: Sequence[dict[str, str]]) -> str:
    turns = "".join(
        f"<|start_header_id|>{m['role']}<|end_header_id|>\n\n{m['content']}<|eot_id|>"
        for m in messages
    )
    return turns + "<|start_header_id|>assistant<|end_header_id|>\n\n"


def _granite(messages: Sequence[dict[str, str]]) -> str:
    turns = "".join(
        f"<|start_of_role|>{m['role']}<|end_of_role|>{m['content']}<|end_of_text|>\n"
        for m in messages
    )
    return turns + "<|start_of_role|>assistant<|end_of_role|>"


def _form(template: Template) -> str:
    if template.completion is not None:
        return template.completion
    if template.kind == "llama-guard":
        return "llama-3"
    return "granite" if template.system is not None else "plain"


def raw_prompt(template: Template, messages: Sequence[dict[str, str]]) -> str:
    """The raw prompt of ``messages`` rendered from ``template`` (module docstring)."""
    form = _form(template)
    if form == "llama-3":
        return _llama3(messages)
    if form == "granite":
        return _granite(messages)
    return messages[0]["content"]


def check_completions_spec(spec: RequestSpec) -> None:
    """Refuse (ValueError) what the completions API cannot carry: a system other than a
    guard, options of chat requests only, a template without a raw prompt form."""
    if not (spec.llama_guard or spec.policy_guard):
        raise ValueError(
            "api='completions' (--api completions) is for guard models whose prompt toxeval "
            "renders (llama-guard:MODEL, policy-guard:MODEL); chat judges use api='chat'"
        )
    if spec.max_completion_tokens is not None:
        raise ValueError(
            "max_completion_tokens is a chat parameter; the completions API takes max_tokens"
        )
    tpl = spec.chat_template
    only_text = tpl.system is None and tpl.user.strip() in ("$text", "${text}")
    if tpl.assistant is not None or only_text:
        raise ValueError(
            f"template {tpl.name!r} is a plain conversation for a server whose chat template "
            "builds the guard's prompt; the completions API needs the full prompt: use "
            f"{'llama-guard-3' if spec.llama_guard else 'shieldgemma'}-{spec.level}"
        )
    if _form(tpl) == "plain" and tpl.system is not None:
        raise ValueError(
            f"template {tpl.name!r}: completion = 'plain' sends one user message as the raw "
            "prompt, but the template also has a system message"
        )


def _completion_call(spec: RequestSpec, call: Call) -> Call:
    body = {k: v for k, v in call.body.items() if k not in ("messages", "top_logprobs")}
    body["prompt"] = raw_prompt(spec.chat_template, call.body["messages"])
    if call.body.get("logprobs"):
        body["logprobs"] = TOP_LOGPROBS  # the legacy form: alternatives per token
    return Call(COMPLETIONS_PATH, body)


def completion_units(spec: RequestSpec, units: Sequence[Unit]) -> list[Unit]:
    """``units`` of chat calls as completions calls: same items, same order, same
    parameters, the messages rendered into one raw prompt."""
    return [Unit(u.item_ids, tuple(_completion_call(spec, c) for c in u.calls)) for u in units]


def _chat_choice(choice: Any) -> Any:
    if not isinstance(choice, dict) or "message" in choice:
        return choice
    out = {k: v for k, v in choice.items() if k != "text"}
    text = choice.get("text")
    out["message"] = {"role": "assistant", "content": text if isinstance(text, str) else None}
    return out


def as_chat_body(body: Any) -> Any:
    """A completions response body as the chat body that says the same: each choice's
    ``text`` as its message content, its ``logprobs``, ``index`` and ``finish_reason``
    kept as they are (the logprobs are read in either form by
    :func:`toxeval.llm.guard_logprobs.logprob_positions`). Anything else (an error body,
    no choices) is returned unchanged for the chat reader to refuse as it does."""
    if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
        return body
    return {**body, "choices": [_chat_choice(c) for c in body["choices"]]}
