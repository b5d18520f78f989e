"""Prompt templates: versioned TOML files that say what an LLM judge is asked.

A template file has a ``name``, a ``version``, a ``level`` (``prompt`` or ``response``), an
optional ``system`` string and a ``user`` string. Placeholders use :class:`string.Template`
syntax (``$text`` or ``${text}``; ``$$`` is a literal ``$``), so JSON braces in a prompt
need no escaping and nothing in a template can run code. Substitution is a single pass:
a ``$format`` inside the text being classified stays literal.

Two kinds of template exist (``kind``, default ``judge``):

- ``judge``: ``$text``, ``$categories`` and ``$format`` are required, ``$response`` is
  required at response level (and not allowed at prompt level); ``$examples`` is required
  exactly when the file has ``[[example]]`` tables (``text``, ``response`` at response
  level, ``labels``: category ids, names or aliases); ``$category_ids`` is optional.
- ``llama-guard``: ``$text`` is required, ``$response`` as for judges; ``$hazards``
  (rendered from the file's ``[hazards]`` table of Llama Guard codes) is required exactly
  when the file has that table. An optional ``assistant`` string becomes an assistant
  message after the user message, for servers whose chat template builds the Llama Guard
  prompt from a plain conversation.
- ``policy``: a single-policy guard (ShieldGemma, Granite Guardian styles), asked once per
  category: ``$text`` and ``$policy`` (the category's name and definition) are required,
  ``$response`` as for judges, ``$policy_name`` (the category's name) is optional. The
  answer's first word, Yes or No, is read with its log-probabilities.

A guard template (``llama-guard`` or ``policy``) may say how the completions API renders
its messages into one raw prompt: ``completion = "llama-3"`` (Llama 3's turns),
``"granite"`` (Granite's roles) or ``"plain"`` (the one user message as written); without
it, the form follows the kind (:mod:`toxeval.llm.completion_requests`).

A template's ``sha256`` is the hash of its file bytes; it is part of a request
fingerprint, so an edited template never reuses answers given to the old one.
"""

from __future__ import annotations

import hashlib
import re
import string
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = [
    "Example",
    "Level",
    "Template",
    "TemplateError",
    "list_templates",
    "load_template",
]

Level = Literal["prompt", "response"]
TemplateKind = Literal["judge", "llama-guard", "policy"]
LEVELS: tuple[Level, ...] = ("prompt", "response")
_KINDS: tuple[TemplateKind, ...] = ("judge", "llama-guard", "policy")

_ALLOWED: dict[TemplateKind, frozenset[str]] = {
    "judge": frozenset(("text", "response", "categories", "format", "examples", "category_ids")),
    "llama-guard": frozenset(("text", "response", "hazards")),
    "policy": frozenset(("text", "response", "policy", "policy_name")),
}
_REQUIRED: dict[TemplateKind, frozenset[str]] = {
    "judge": frozenset(("text", "categories", "format")),
    "llama-guard": frozenset(("text",)),
    "policy": frozenset(("text", "policy")),
}
_KEYS = frozenset(
    (
        "name",
        "version",
        "level",
        "kind",
        "system",
        "user",
        "assistant",
        "description",
        "example",
        "hazards",
        "completion",
    )
)
# the raw prompt forms of the completions API (toxeval.llm.completion_requests)
COMPLETION_FORMS = ("llama-3", "granite", "plain")
_CODE_RE = re.compile(r"^S\d{1,3}$")


class TemplateError(ValueError):
    """A template file is missing, malformed, or uses placeholders wrongly."""


@dataclass(frozen=True)
class Example:
    """One worked example of a few-shot template; ``labels`` are resolved per taxonomy."""

    text: str
    response: str | None
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Template:
    """A loaded, validated prompt template (see the module docs for the file format)."""

    name: str
    version: str
    level: Level
    kind: TemplateKind
    system: str | None
    user: str
    sha256: str
    source: str
    examples: tuple[Example, ...] = ()
    hazards: tuple[tuple[str, str], ...] = ()
    assistant: str | None = None
    completion: str | None = None

    @property
    def placeholders(self) -> frozenset[str]:
        """Names used in ``system``, ``user`` and ``assistant``."""
        names = _identifiers(self.user, self.source)
        for extra in (self.system, self.assistant):
            if extra:
                names |= _identifiers(extra, self.source)
        return names

    def render(self, values: Mapping[str, str]) -> list[dict[str, str]]:
        """Chat messages (``system`` if any, ``user``, then ``assistant`` if any) with
        ``values`` substituted.

        ``values`` must give every placeholder the template uses; extra keys are ignored.
        """
        missing = sorted(self.placeholders - set(values))
        if missing:
            raise TemplateError(
                f"{self.source}: no value for placeholder(s) {', '.join('$' + m for m in missing)}"
            )
        out: list[dict[str, str]] = []
        if self.system:
            out.append(
                {"role": "system", "content": string.Template(self.system).substitute(values)}
            )
        out.append({"role": "user", "content": string.Template(self.user).substitute(values)})
        if self.assistant:
            out.append(
                {"role": "assistant", "content": string.Template(self.assistant).substitute(values)}
            )
        return out


def _identifiers(text: str, origin: str) -> frozenset[str]:
    """Placeholder names in ``text``; a ``$`` that starts no placeholder is an error."""
    names: set[str] = set()
    for m in string.Template.pattern.finditer(text):
        if m.group("invalid") is not None:
            line = text.count("\n", 0, m.start()) + 1
            raise TemplateError(
                f"{origin}: '$' at line {line} of a message starts no placeholder "
                f"(write $$ for a literal '$', or $name / ${{name}})"
            )
        name = m.group("named") or m.group("braced")
        if name:
            names.add(name)
    return frozenset(names)


def _templates_dir() -> Any:
    return resources.files("toxeval") / "data" / "templates"


def list_templates() -> list[str]:
    """Names of the templates shipped with toxeval."""
    return sorted(
        p.name.removesuffix(".toml") for p in _templates_dir().iterdir() if p.name.endswith(".toml")
    )


def load_template(name_or_path: str | Path) -> Template:
    """A shipped template by name (see :func:`list_templates`) or a user TOML file."""
    if not isinstance(name_or_path, (str, Path)):
        raise TypeError(
            f"template must be a shipped name or a path, not {type(name_or_path).__name__}"
        )
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists():
        if not p.is_file():
            raise TemplateError(f"template file not found: {p}")
        data = p.read_bytes()
        origin = str(p)
    else:
        res = _templates_dir() / f"{name_or_path}.toml"
        if not res.is_file():
            raise TemplateError(
                f"unknown template {str(name_or_path)!r}; shipped: {', '.join(list_templates())} "
                f"(or pass a path to a .toml file)"
            )
        data = res.read_bytes()
        origin = f"built-in:{name_or_path}"
    return _parse(data, origin, default_name=p.stem)


def _parse(data: bytes, origin: str, default_name: str) -> Template:
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise TemplateError(f"{origin}: not UTF-8 text ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise TemplateError(f"{origin}: not valid TOML: {e}") from None
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise TemplateError(
            f"{origin}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_KEYS))}"
        )
    level = doc.get("level")
    if level not in LEVELS:
        raise TemplateError(f"{origin}: 'level' must be 'prompt' or 'response', got {level!r}")
    kind = doc.get("kind", "judge")
    if kind not in _KINDS:
        raise TemplateError(f"{origin}: 'kind' must be one of {', '.join(_KINDS)}, got {kind!r}")
    user = doc.get("user")
    if not isinstance(user, str) or not user.strip():
        raise TemplateError(f"{origin}: 'user' must be a non-empty string")
    system = doc.get("system")
    if system is not None and not isinstance(system, str):
        raise TemplateError(f"{origin}: 'system' must be a string")
    assistant = doc.get("assistant")
    if assistant is not None and (kind != "llama-guard" or not isinstance(assistant, str)):
        raise TemplateError(
            f"{origin}: 'assistant' (a string) is only for kind = 'llama-guard' templates"
        )
    completion = doc.get("completion")
    if completion is not None and (kind == "judge" or completion not in COMPLETION_FORMS):
        raise TemplateError(
            f"{origin}: 'completion' (a guard template's raw prompt form for the completions "
            f"API) must be one of {', '.join(COMPLETION_FORMS)}, got {completion!r}"
        )
    examples = _examples(doc.get("example", []), level, origin)
    hazards = _hazards(doc.get("hazards", {}), origin)
    tpl = Template(
        name=str(doc.get("name", default_name)),
        version=str(doc.get("version", "")),
        level=level,
        kind=kind,
        system=system or None,
        user=user,
        sha256=hashlib.sha256(data).hexdigest(),
        source=origin,
        examples=examples,
        hazards=hazards,
        assistant=assistant or None,
        completion=completion,
    )
    _check_placeholders(tpl)
    return tpl


def _examples(raw: Any, level: Level, origin: str) -> tuple[Example, ...]:
    if not isinstance(raw, list):
        raise TemplateError(f"{origin}: 'example' must be an array of tables ([[example]])")
    out = []
    for i, ex in enumerate(raw, 1):
        if not isinstance(ex, dict) or not isinstance(ex.get("text"), str):
            raise TemplateError(f"{origin}: example #{i} needs a string 'text'")
        labels = ex.get("labels")
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise TemplateError(f"{origin}: example #{i} needs 'labels', a list of strings")
        response = ex.get("response")
        if level == "response" and not isinstance(response, str):
            raise TemplateError(
                f"{origin}: example #{i} needs a string 'response' (level response)"
            )
        if level == "prompt" and response is not None:
            raise TemplateError(f"{origin}: example #{i} has a 'response' but level is prompt")
        out.append(Example(text=ex["text"], response=response, labels=tuple(labels)))
    return tuple(out)


def _hazards(raw: Any, origin: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, dict):
        raise TemplateError(f"{origin}: 'hazards' must be a table of code = name")
    out = []
    for code, title in raw.items():
        if not _CODE_RE.match(code) or not isinstance(title, str):
            raise TemplateError(
                f"{origin}: hazard {code!r} must be a Llama Guard code (S1, S2, ...) = name"
            )
        out.append((code, title))
    return tuple(out)


def _check_placeholders(tpl: Template) -> None:
    used = tpl.placeholders
    allowed = set(_ALLOWED[tpl.kind])
    required = set(_REQUIRED[tpl.kind])
    if tpl.level == "response":
        required.add("response")
    else:
        allowed.discard("response")
    if tpl.kind == "judge":
        if tpl.examples:
            required.add("examples")
        else:
            allowed.discard("examples")
        if tpl.hazards:
            raise TemplateError(f"{tpl.source}: [hazards] is only for kind = 'llama-guard'")
    else:
        if tpl.examples:
            raise TemplateError(f"{tpl.source}: [[example]] is only for kind = 'judge'")
        if tpl.hazards and tpl.kind == "policy":
            raise TemplateError(f"{tpl.source}: [hazards] is only for kind = 'llama-guard'")
        if tpl.hazards:
            required.add("hazards")
        else:
            allowed.discard("hazards")
    bad = sorted(used - allowed)
    if bad:
        why = ""
        if "response" in bad:
            why = " ($response needs level = 'response')"
        elif "examples" in bad:
            why = " ($examples needs [[example]] tables)"
        elif "hazards" in bad and tpl.kind == "llama-guard":
            why = " ($hazards needs a [hazards] table)"
        raise TemplateError(
            f"{tpl.source}: unknown placeholder(s) {', '.join('$' + b for b in bad)}{why}; "
            f"allowed here: {', '.join('$' + a for a in sorted(allowed))}"
        )
    missing = sorted(required - used)
    if missing:
        raise TemplateError(
            f"{tpl.source}: missing required placeholder(s) "
            f"{', '.join('$' + m for m in missing)} (level {tpl.level}, kind {tpl.kind})"
        )
