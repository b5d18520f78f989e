"""What a chat judge is asked: the answer format of each scoring method, rendered into a
template's placeholders, and the JSON schema of structured output.

Every scoring method fixes the answer format the model is told to use (``$format``) and
the answer shown for each worked example (``$examples``):

- ``json``: one JSON object, one key per category id, each value a confidence in [0, 1];
- ``logprobs``: one line per category, ``<id>: yes`` or ``<id>: no``, in taxonomy order
  (the probabilities are read from the tokens of ``yes`` / ``no``);
- ``labels`` and ``sample``: the ids that apply, comma-separated, or ``none``.

``FORMAT_VERSION`` names this wording; it is part of every request fingerprint, so changed
wording never reuses answers given to the old one.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Literal

from toxeval.llm.templates import Template, TemplateError
from toxeval.taxonomy import Taxonomy

__all__ = [
    "FORMAT_VERSION",
    "ScoringMethod",
    "json_schema_format",
    "policy_text",
    "render_messages",
    "render_policy_messages",
]

ScoringMethod = Literal["json", "logprobs", "sample", "labels"]
FORMAT_VERSION = "1"

# Worked-example answers in json format: a clear positive and a clear negative confidence.
_EXAMPLE_YES = 0.95
_EXAMPLE_NO = 0.02
_WS_RE = re.compile(r"\s+")


def _format_text(taxonomy: Taxonomy, scoring: ScoringMethod) -> str:
    ids = taxonomy.ids
    if scoring == "json":
        keys = ", ".join(json.dumps(i) for i in ids)
        return (
            "Answer with only a JSON object and no other text. It has exactly one key per "
            f"category id ({keys}); each value is a number from 0 to 1: your confidence "
            "that the category applies."
        )
    if scoring == "logprobs":
        lines = "\n".join(f"{i}: yes|no" for i in ids)
        return (
            "Answer with exactly one line per category, in this order and nothing else; "
            "each line is the category id, a colon and a single word, yes or no:\n" + lines
        )
    return (
        "Answer with only the ids of the categories that apply, separated by commas "
        "(for example: " + ", ".join(ids[:2]) + "), or the single word none if no "
        "category applies."
    )


def _example_answer(taxonomy: Taxonomy, scoring: ScoringMethod, labels: frozenset[str]) -> str:
    ids = taxonomy.ids
    if scoring == "json":
        return json.dumps({i: _EXAMPLE_YES if i in labels else _EXAMPLE_NO for i in ids})
    if scoring == "logprobs":
        return "\n".join(f"{i}: {'yes' if i in labels else 'no'}" for i in ids)
    chosen = [i for i in ids if i in labels]
    return ", ".join(chosen) if chosen else "none"


def _examples_text(template: Template, taxonomy: Taxonomy, scoring: ScoringMethod) -> str:
    blocks = []
    for n, ex in enumerate(template.examples, 1):
        labels = set()
        for lab in ex.labels:
            cid = taxonomy.resolve(lab)
            if cid is None:
                raise TemplateError(
                    f"{template.source}: example #{n} label {lab!r} matches no category of "
                    f"taxonomy {taxonomy.name!r}; use a template whose examples fit it"
                )
            labels.add(cid)
        if ex.response is None:
            shown = f"Text:\n<<<TEXT\n{ex.text}\nTEXT>>>"
        else:
            shown = (
                f"User:\n<<<PROMPT\n{ex.text}\nPROMPT>>>\n"
                f"Chatbot response:\n<<<RESPONSE\n{ex.response}\nRESPONSE>>>"
            )
        answer = _example_answer(taxonomy, scoring, frozenset(labels))
        blocks.append(f"Example {n}\n{shown}\nAnswer:\n{answer}")
    return "\n\n".join(blocks)


def _categories_text(taxonomy: Taxonomy) -> str:
    lines = []
    for c in taxonomy.categories:
        desc = _WS_RE.sub(" ", c.description).strip()
        lines.append(f"- {c.id}: {c.name}: {desc}" if desc else f"- {c.id}: {c.name}")
    return "\n".join(lines)


def render_messages(
    template: Template,
    taxonomy: Taxonomy,
    scoring: ScoringMethod,
    text: str,
    response: str | None,
) -> list[dict[str, str]]:
    """The chat messages for one item: ``template`` filled for ``taxonomy`` and ``scoring``."""
    values = dict(_fixed_values(template, taxonomy, scoring))
    values["text"] = text
    if response is not None:
        values["response"] = response
    return template.render(values)


def policy_text(taxonomy: Taxonomy, category_id: str) -> str:
    """A category as a single-policy guard's policy: ``"Name": definition``."""
    cat = taxonomy.categories[taxonomy.index(category_id)]
    definition = _WS_RE.sub(" ", cat.description).strip()
    return f'"{cat.name}": {definition}' if definition else f'"{cat.name}"'


def render_policy_messages(
    template: Template, taxonomy: Taxonomy, category_id: str, text: str, response: str | None
) -> list[dict[str, str]]:
    """The chat messages asking a single-policy guard (a ``policy`` template) whether
    ``text`` (and ``response``) violates one category's policy."""
    cat = taxonomy.categories[taxonomy.index(category_id)]
    values = {"text": text, "policy": policy_text(taxonomy, category_id), "policy_name": cat.name}
    if response is not None:
        values["response"] = response
    return template.render(values)


@lru_cache(maxsize=64)
def _fixed_values(
    template: Template, taxonomy: Taxonomy, scoring: ScoringMethod
) -> tuple[tuple[str, str], ...]:
    """The placeholders that are the same for every item (rendered once per run)."""
    values: dict[str, str] = {}
    if template.kind == "llama-guard":
        values["hazards"] = "\n".join(f"{code}: {title}." for code, title in template.hazards)
    else:
        values["categories"] = _categories_text(taxonomy)
        values["category_ids"] = ", ".join(taxonomy.ids)
        values["format"] = _format_text(taxonomy, scoring)
        if template.examples:
            values["examples"] = _examples_text(template, taxonomy, scoring)
    return tuple(values.items())


def json_schema_format(taxonomy: Taxonomy) -> dict[str, Any]:
    """``response_format`` for structured output: one required number per category id."""
    props = {
        c.id: {"type": "number", "description": f"confidence in [0, 1] that {c.name} applies"}
        for c in taxonomy.categories
    }
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "toxicity_scores",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": props,
                "required": list(taxonomy.ids),
                "additionalProperties": False,
            },
        },
    }
