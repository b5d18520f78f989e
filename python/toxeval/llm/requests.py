"""What is sent to an LLM or moderation endpoint, and how its answers become scores.

Pure functions, no I/O: :func:`plan` turns a :class:`RequestSpec` and dataset
:class:`Item` rows into :class:`Unit` s of HTTP :class:`Call` s (path + JSON body, no
transport details, no secrets); :func:`read` turns the decoded response bodies of a unit
into one :class:`Answer` per item. Malformed server JSON never raises in :func:`read`: it
gives ``unparseable`` Answers with a reason. Bad arguments (an unknown scoring method, a
template of the wrong level, ...) raise ``ValueError`` / ``TypeError`` when the spec is
built or planned, before anything is sent.

Scoring methods (``RequestSpec.scoring``, chat only), each documented in docs/llm.md:
``json`` (a JSON object of confidences, the default), ``logprobs`` (P(yes) per category
from token log-probabilities), ``sample`` (fraction of ``samples`` answers that flag a
category) and ``labels`` (label lists, 0/1). ``llama_guard=True`` reads Llama Guard's
``safe`` / ``unsafe\\nS1,S10`` through the ``llama-guard-3`` mapping; ``api="moderation"``
maps moderation ``category_scores`` onto the taxonomy (:mod:`toxeval.llm.moderation`);
``api="completions"`` sends a guard's requests to ``/completions`` as raw prompts
(:mod:`toxeval.llm.completion_requests`) and reads them as chat answers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from toxeval.llm.answers import (
    Answer,
    chat_replies,
    score_labels,
    score_logprobs,
    score_samples,
    unparseable,
)
from toxeval.llm.moderation import moderation_body, moderation_columns, read_moderation
from toxeval.llm.prompt_size import estimate_prompt_tokens
from toxeval.llm.prompts import FORMAT_VERSION, ScoringMethod, json_schema_format, render_messages
from toxeval.llm.request_units import CHAT_PATH, TOP_LOGPROBS, Call, Item, Unit
from toxeval.llm.templates import Template, TemplateError, list_templates, load_template
from toxeval.taxonomy import LabelMapping, Taxonomy, load_mapping

__all__ = [
    "Answer",
    "Call",
    "Item",
    "RequestSpec",
    "ScoringMethod",
    "Template",
    "TemplateError",
    "Unit",
    "endpoint",
    "estimate_prompt_tokens",
    "list_templates",
    "load_template",
    "plan",
    "public_url",
    "read",
    "taxonomy_fingerprint",
    "url_secrets",
]

MODERATION_PATH = "/moderations"
DEFAULT_MODERATION_MODEL = "omni-moderation-latest"
LLAMA_GUARD_MAPPING = "llama-guard-3"
SAMPLE_TEMPERATURE = 1.0  # scoring="sample" when temperature is unset
_SCORINGS: tuple[str, ...] = ("json", "logprobs", "sample", "labels")
_APIS = ("chat", "completions", "moderation")
_LEVELS = ("prompt", "response")


def _sha256_json(obj: Any) -> str:
    data = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


# Query parameter names that hold a secret, matched as whole words of the name
# (``api_key``, ``x-api-key``, ``apiKey``, ``subscription-key``, ``sig``), not as
# substrings: ``author`` or ``monkey`` are not secrets, and a redacted value is also left
# out of the request hash, so a false match would let two endpoints share rows.
_SECRET_WORDS = frozenset(
    "key apikey token accesstoken authtoken idtoken secret clientsecret sig signature "
    "password passwd pass pwd auth authorization credential credentials bearer jwt".split()
)
# Names that are a secret only as the whole name: Azure Functions' ``code=`` key, a
# ``session=`` token; ``language_code`` or ``session_length`` are not.
_SECRET_NAMES = frozenset("code session sessionid sessiontoken".split())
_NAME_WORD = re.compile(r"[A-Za-z][a-z0-9]*|[0-9]+")


def _is_secret_param(name: str) -> bool:
    whole = re.sub(r"[^a-z0-9]", "", name.lower())
    words = {w.lower() for w in _NAME_WORD.findall(name)}
    return whole in _SECRET_WORDS or whole in _SECRET_NAMES or not words.isdisjoint(_SECRET_WORDS)


def _redact_pairs(text: str) -> str:
    """``name=value&...`` with the values of secret names replaced by ``***``."""
    pairs = []
    for piece in text.split("&"):
        k, eq, _ = piece.partition("=")
        pairs.append(f"{k}=***" if eq and _is_secret_param(unquote(k)) else piece)
    return "&".join(pairs)


def public_url(url: str) -> str:
    """``url`` as toxeval writes it (sidecars, results, reports): a password in its user
    part, a user part that is a token alone, and the values of query (or fragment)
    parameters whose name says they are secret (``api_key``, ``token``, ``sig``,
    ``bearer``, ``code``, ...) are replaced by
    ``***`` (a URL still: ``[...]`` would read as an IPv6 host); everything else is kept
    as given."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        name, sep, _ = user.partition(":")
        netloc = f"{name}:***@{host}" if sep else f"***@{host}"
    # A fragment is never sent, but an OAuth redirect puts ``#access_token=...`` there.
    query, fragment = _redact_pairs(parts.query), _redact_pairs(parts.fragment)
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def url_secrets(url: str) -> tuple[str, ...]:
    """The secrets ``url`` carries, as a server may quote them back: the password (or a
    user part that is a token alone), as given and decoded, and the Basic credential
    the runner sends for it; the values of secret query (and fragment) parameters, as given
    and decoded. :func:`public_url` hides the same values. A value under four characters
    is left out: replacing it wherever it occurs would garble every message (``sig=1``)."""
    parts = urlsplit(url)
    found: list[str] = []
    if "@" in parts.netloc:
        user = parts.netloc.rsplit("@", 1)[0]
        name, sep, password = user.partition(":")
        secret = password if sep else name
        basic = f"{unquote(name)}:{unquote(password)}" if sep else f"{unquote(name)}:"
        found += [secret, unquote(secret), base64.b64encode(basic.encode()).decode()]
    for text in (parts.query, parts.fragment):
        for piece in text.split("&"):
            k, eq, v = piece.partition("=")
            if eq and _is_secret_param(unquote(k)):
                found += [v, unquote(v)]
    return tuple(dict.fromkeys(x for x in found if len(x) >= 4))


def endpoint(base_url: str, path: str) -> str:
    """``path`` (``/chat/completions``) under ``base_url``: appended to its path, before its
    query (``?api-version=...``, as Azure OpenAI and some gateways take it); a fragment is
    never sent."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + path, parts.query, ""))


def taxonomy_fingerprint(tax: Taxonomy) -> dict[str, str]:
    """The ``taxonomy`` entry of a fingerprint: its name and the sha256 of what the model
    is told about it (name, version, and each category's id, name, definition, aliases)."""
    return {"name": tax.name, "sha256": _taxonomy_sha256(tax)}


def _taxonomy_sha256(tax: Taxonomy) -> str:
    return _sha256_json(
        {
            "name": tax.name,
            "version": tax.version,
            "categories": [[c.id, c.name, c.description, list(c.aliases)] for c in tax.categories],
        }
    )


def _mapping_fingerprint(m: LabelMapping) -> dict[str, Any]:
    return {"name": m.name, "sha256": _sha256_json({k: list(v) for k, v in m.table.items()})}


def _check_number(name: str, value: object, *, integer: bool, minimum: float) -> None:
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (integer and not isinstance(value, int))
    ):
        what = "an integer" if integer else "a number"
        raise TypeError(f"{name} must be {what}, not {type(value).__name__}")
    if not math.isfinite(value) or value < minimum:
        raise ValueError(f"{name} must be >= {minimum:g}, got {value!r}")


@dataclass(frozen=True)
class RequestSpec:
    """Everything that determines the model's answer (see the module docs)."""

    api: Literal["chat", "completions", "moderation"]
    model: str
    taxonomy: Taxonomy
    scoring: ScoringMethod = "json"
    template: Template | None = None
    level: Literal["prompt", "response"] = "prompt"
    structured: bool = False
    llama_guard: bool = False
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    samples: int = 1
    batch_size: int = 32
    max_completion_tokens: int | None = None
    policy_guard: bool = False
    _mapping: LabelMapping | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.api not in _APIS:
            raise ValueError(f"api must be 'chat', 'completions' or 'moderation', got {self.api!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError("model must be a non-empty string")
        if not isinstance(self.taxonomy, Taxonomy):
            raise TypeError(
                f"taxonomy must be a Taxonomy (toxeval.taxonomy.load_taxonomy), "
                f"not {type(self.taxonomy).__name__}"
            )
        if self.level not in _LEVELS:
            raise ValueError(f"level must be 'prompt' or 'response', got {self.level!r}")
        if self.scoring not in _SCORINGS:
            raise ValueError(
                f"unknown scoring method {self.scoring!r}; expected one of {', '.join(_SCORINGS)}"
            )
        if self.template is not None and not isinstance(self.template, Template):
            raise TypeError(
                f"template must be a Template (load_template), not {type(self.template).__name__}"
            )
        _check_number("temperature", self.temperature, integer=False, minimum=0)
        _check_number("max_tokens", self.max_tokens, integer=True, minimum=1)
        _check_number("max_completion_tokens", self.max_completion_tokens, integer=True, minimum=1)
        if self.max_tokens is not None and self.max_completion_tokens is not None:
            raise ValueError(
                "give max_tokens or max_completion_tokens, not both (OpenAI's reasoning "
                "models take only max_completion_tokens; most other servers max_tokens)"
            )
        _check_number("seed", self.seed, integer=True, minimum=-(2**63))
        _check_number("samples", self.samples, integer=True, minimum=1)
        _check_number("batch_size", self.batch_size, integer=True, minimum=1)
        if self.samples != 1 and self.scoring != "sample":
            raise ValueError(f"samples={self.samples} needs scoring='sample'")
        if self.api == "moderation":
            self._check_moderation()
        else:
            self._check_chat()
        if self.api == "completions":
            from toxeval.llm.completion_requests import check_completions_spec

            check_completions_spec(self)

    def _check_moderation(self) -> None:
        chat_only = {
            "scoring": self.scoring != "json",
            "template": self.template is not None,
            "structured": self.structured,
            "llama_guard": self.llama_guard,
            "temperature": self.temperature is not None,
            "max_tokens": self.max_tokens is not None,
            "max_completion_tokens": self.max_completion_tokens is not None,
            "seed": self.seed is not None,
        }
        given = [k for k, v in chat_only.items() if v]
        if given:
            raise ValueError(f"{', '.join(given)} only apply to api='chat', not 'moderation'")
        moderation_columns(self.taxonomy)  # raises when nothing maps onto the taxonomy

    @property
    def mapping(self) -> LabelMapping | None:
        """The code mapping that answers are read through: the built-in Llama Guard mapping
        (checked against ``taxonomy`` when the spec is built) if ``llama_guard`` is set,
        else None."""
        return self._mapping

    def _check_chat(self) -> None:
        if self.policy_guard or self.chat_template.kind == "policy":
            from toxeval.llm.policy_requests import check_policy_spec

            return check_policy_spec(self)
        if self.structured and (self.scoring != "json" or self.llama_guard):
            raise ValueError(
                "structured=True (a JSON schema) needs scoring='json' without Llama Guard"
            )
        if self.llama_guard:
            if self.scoring not in ("json", "labels", "logprobs"):
                raise ValueError(
                    f"Llama Guard answers are label lists (safe / unsafe + codes), graded with "
                    f"logprobs; scoring={self.scoring!r} is not supported with llama_guard=True"
                )
            mapping = load_mapping(LLAMA_GUARD_MAPPING)
            lacking = sorted(mapping.targets - set(self.taxonomy.ids))
            if lacking:
                raise ValueError(
                    f"Llama Guard answers are read through mapping {LLAMA_GUARD_MAPPING!r} "
                    f"(target {mapping.target!r}); taxonomy {self.taxonomy.name!r} lacks "
                    f"its ids {', '.join(lacking)}"
                )
            object.__setattr__(self, "_mapping", mapping)
        tpl = self.chat_template
        if tpl.level != self.level:
            raise ValueError(
                f"template {tpl.name!r} is for level {tpl.level!r}, but the spec's level is "
                f"{self.level!r}"
            )
        if (tpl.kind == "llama-guard") != self.llama_guard:
            raise ValueError(
                f"template {tpl.name!r} is a {tpl.kind} template; "
                + (
                    "Llama Guard needs a llama-guard template"
                    if self.llama_guard
                    else "it needs llama_guard=True"
                )
            )
        # render once so that a template that cannot fit this taxonomy fails here
        render_messages(
            tpl, self.taxonomy, self.method_scoring, "", "" if self.level == "response" else None
        )

    @cached_property
    def chat_template(self) -> Template:
        """The template used: the given one, or the shipped default for level and scoring."""
        if self.template is not None:
            return self.template
        if self.policy_guard:
            return load_template(f"shieldgemma-{self.level}")
        if self.llama_guard:
            return load_template(f"llama-guard-3-{self.level}")
        if self.scoring == "labels":
            return load_template(f"label-list-{self.level}")
        return load_template(f"zero-shot-{self.level}")

    def as_chat(self) -> RequestSpec:
        """This spec with ``api="chat"``: the requests whose messages a completions
        request renders into its raw prompt."""
        return self if self.api == "chat" else replace(self, api="chat")

    @property
    def method_scoring(self) -> ScoringMethod:
        """The scoring actually used: Llama Guard answers are always read as labels."""
        return "logprobs" if self.policy_guard else "labels" if self.llama_guard else self.scoring

    @property
    def effective_temperature(self) -> float | None:
        if self.temperature is None and self.scoring == "sample":
            return SAMPLE_TEMPERATURE
        return self.temperature

    def fingerprint(self) -> dict[str, Any]:
        """JSON-ready identity of the answers: changing anything that can change an answer
        (model, template bytes, taxonomy, scoring, level, decoding parameters, the answer
        format wording, the mapping that reads answers) changes it. ``batch_size`` is
        left out: how moderation inputs are grouped does not change their scores."""
        fp: dict[str, Any] = {
            "requests_format": FORMAT_VERSION,
            "api": self.api,
            "model": self.model,
            "level": self.level,
            "taxonomy": taxonomy_fingerprint(self.taxonomy),
        }
        if self.api == "moderation":
            fp["mapping"] = _mapping_fingerprint(load_mapping("openai-moderation"))
            return fp
        tpl = self.chat_template
        fp.update(
            {
                "scoring": self.method_scoring,
                "llama_guard": self.llama_guard,
                "structured": self.structured,
                "template": {"name": tpl.name, "version": tpl.version, "sha256": tpl.sha256},
                "temperature": self.effective_temperature,
                "max_tokens": self.max_tokens,
                "seed": self.seed,
                "samples": self.samples,
                "top_logprobs": TOP_LOGPROBS if self.scoring == "logprobs" else None,
            }
        )
        if self.max_completion_tokens is not None:  # absent when unset: earlier hashes hold
            fp["max_completion_tokens"] = self.max_completion_tokens
        if self._mapping is not None:
            fp["mapping"] = _mapping_fingerprint(self._mapping)
        if self.policy_guard or (self.llama_guard and self.scoring == "logprobs"):
            fp["guard_scoring"] = "policy" if self.policy_guard else "logprobs"  # else absent
        return fp


def _check_items(spec: RequestSpec, items: Sequence[Item]) -> None:
    seen: set[str] = set()
    for n, it in enumerate(items):
        if not isinstance(it, Item):
            raise TypeError(f"item #{n} is a {type(it).__name__}, not an Item")
        if not isinstance(it.id, str) or not isinstance(it.text, str):
            raise TypeError(f"item #{n}: id and text must be strings")
        if it.id in seen:
            raise ValueError(f"duplicate item id {it.id!r}")
        seen.add(it.id)
        if spec.level == "response" and not isinstance(it.response, str):
            raise ValueError(f"item {it.id!r} has no response, but the level is 'response'")
        if spec.level == "prompt" and it.response is not None:
            raise ValueError(
                f"item {it.id!r} has a response, but the level is 'prompt' (the response "
                f"would not be sent); use level='response' to judge responses"
            )


def _chat_body(spec: RequestSpec, item: Item) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": spec.model,
        "messages": render_messages(
            spec.chat_template, spec.taxonomy, spec.method_scoring, item.text, item.response
        ),
    }
    temperature = spec.effective_temperature
    if temperature is not None:
        body["temperature"] = temperature
    if spec.max_tokens is not None:
        body["max_tokens"] = spec.max_tokens
    if spec.max_completion_tokens is not None:
        body["max_completion_tokens"] = spec.max_completion_tokens
    if spec.seed is not None:
        body["seed"] = spec.seed
    if spec.structured:
        body["response_format"] = json_schema_format(spec.taxonomy)
    if spec.scoring == "logprobs":
        body["logprobs"] = True
        body["top_logprobs"] = TOP_LOGPROBS
    if spec.scoring == "sample":
        body["n"] = spec.samples
    return body


def plan(spec: RequestSpec, items: Sequence[Item]) -> list[Unit]:
    """The units of calls that answer ``items``: one per chat item (K calls for a
    single-policy guard), one per moderation batch of up to ``spec.batch_size`` inputs
    (the response text at level ``response``)."""
    _check_items(spec, items)
    if spec.api == "completions":
        from toxeval.llm.completion_requests import completion_units

        return completion_units(spec, plan(spec.as_chat(), items))
    if spec.policy_guard:
        from toxeval.llm.policy_requests import plan_policy

        return plan_policy(spec, items)
    if spec.api == "moderation":
        units = []
        for lo in range(0, len(items), spec.batch_size):
            chunk = items[lo : lo + spec.batch_size]
            texts = [it.response if it.response is not None else it.text for it in chunk]
            call = Call(MODERATION_PATH, moderation_body(texts, spec.model))
            units.append(Unit(tuple(it.id for it in chunk), (call,)))
        return units
    return [Unit((it.id,), (Call(CHAT_PATH, _chat_body(spec, it)),)) for it in items]


def read(spec: RequestSpec, unit: Unit, responses: Sequence[dict[str, Any]]) -> list[Answer]:
    """One :class:`Answer` per ``unit.item_ids``, in order, from the decoded response bodies
    (``responses[i]`` answers ``unit.calls[i]``). Never raises on malformed bodies; raises
    ``ValueError`` if the number of bodies does not match the unit's calls (a caller bug)."""
    if len(responses) != len(unit.calls):
        raise ValueError(
            f"unit has {len(unit.calls)} call(s) but {len(responses)} response bodies were given"
        )
    if spec.api == "moderation":
        return read_moderation(responses[0], len(unit.item_ids), spec.taxonomy)
    if spec.api == "completions":
        from toxeval.llm.completion_requests import as_chat_body

        responses = [as_chat_body(r) for r in responses]
    if spec.policy_guard or (spec.llama_guard and spec.scoring == "logprobs"):
        from toxeval.llm.guard_logprobs import read_guard

        return [read_guard(spec.taxonomy, None if spec.policy_guard else spec.mapping, responses)]
    method = "llama-guard" if spec.llama_guard else spec.scoring
    replies, problem = chat_replies(responses[0])
    if problem is not None:
        return [unparseable(problem, method)]
    if spec.scoring == "sample":
        return [score_samples(replies, spec.taxonomy, spec.samples)]
    if spec.scoring == "logprobs":
        return [score_logprobs(replies[0], spec.taxonomy)]
    return [score_labels(replies[0], spec.taxonomy, method, spec.mapping)]
