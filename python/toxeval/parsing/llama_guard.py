"""Llama Guard's answers: ``safe``, or ``unsafe`` then ``S<n>`` codes translated to
categories by a :class:`~toxeval.taxonomy.LabelMapping` (by default the built-in
``llama-guard-3`` mapping, when it targets the taxonomy)."""

from __future__ import annotations

import re

from toxeval.taxonomy import LabelMapping, Taxonomy, load_mapping

from .answer import Acc
from .base import STRIP_CHARS
from .lists import ListReader
from .values import read_value

# The mapping used for S<n> codes when the caller gave none.
DEFAULT_LLAMA_GUARD_MAPPING = "llama-guard-3"
# A verdict ("safe" / "unsafe") and what follows it; one Llama Guard code.
LG_RE = re.compile(r"\A\s*(unsafe|safe)\b[ \t]*[:.,-]?[ \t]*(.*)\Z", re.DOTALL | re.IGNORECASE)
CODE_RE = re.compile(r"\A[Ss]\d{1,3}\Z")
# A verdict line of a text answer: "Toxic: yes", "Unsafe: no", "Safe: false".
_VERDICT_LINE_RE = re.compile(
    r"^[ \t>*#-]*(?:is[ _])?(?:(toxic|unsafe|harmful|flagged)|(safe|benign))[ \t]*[:=][ \t]*"
    r"([^\n]{1,40}?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_DEFAULT_MAPPINGS: dict[tuple[str, tuple[str, ...]], tuple[LabelMapping | None, str]] = {}


def default_llama_guard_mapping(tax: Taxonomy) -> tuple[LabelMapping | None, str]:
    """The built-in Llama Guard 3 mapping if it exists and targets ``tax``; else a reason."""
    key = (tax.name, tax.ids)
    hit = _DEFAULT_MAPPINGS.get(key)
    if hit is not None:
        return hit
    try:
        m: LabelMapping | None = load_mapping(DEFAULT_LLAMA_GUARD_MAPPING)
        err = ""
    except Exception as exc:
        m, err = None, f"built-in mapping {DEFAULT_LLAMA_GUARD_MAPPING!r} is not available ({exc})"
    if m is not None:
        if m.target != tax.name and not m.targets <= set(tax.ids):
            err = (
                f"built-in mapping {DEFAULT_LLAMA_GUARD_MAPPING!r} targets {m.target!r}, "
                f"not {tax.name!r}"
            )
            m = None
    if m is None:
        err += "; pass mapping= (a LabelMapping or a mapping TOML file)"
    _DEFAULT_MAPPINGS[key] = (m, err)
    return m, err


# An answer that opens with an unsafe verdict: "Unsafe. Categories: ...", "Verdict: toxic".
_UNSAFE_FIRST_RE = re.compile(
    r"\A[\s*#>_-]*(?:(?:final\s+)?(?:verdict|answer|classification|rating|label|result"
    r"|assessment)\s*[:=-]\s*)?[*_]*(?:unsafe|toxic|harmful|not\s+safe)[*_]*\s*(?:[.!\n]|\Z)",
    re.IGNORECASE,
)


def says_unsafe_first(text: str) -> bool:
    """The answer opens with an unsafe verdict ("Unsafe.", "Verdict: toxic")."""
    return _UNSAFE_FIRST_RE.match(text) is not None


def verdict_flag(text: str) -> bool | None:
    """What the verdict lines of a text answer say: True for "Toxic: yes" / "Safe: no",
    False for "Toxic: no" / "Safe: yes", None when there is none, one is not a plain yes
    or no, or two disagree. The categories beside it must agree with it."""
    flag: bool | None = None
    for m in _VERDICT_LINE_RE.finditer(text):
        score, graded, err = read_value(m.group(3))
        if err is not None or graded or score is None:
            return None
        unsafe = (score == 1.0) == (m.group(1) is not None)
        if flag is not None and flag != unsafe:
            return None
        flag = unsafe
    return flag


def clear_default_mappings() -> None:
    """Forget the default Llama Guard mapping found per taxonomy."""
    _DEFAULT_MAPPINGS.clear()


class LlamaGuardReader(ListReader):
    """Reads the codes after a Llama Guard verdict."""

    def llama_guard(self, rest: str) -> Acc:
        """What follows an ``unsafe`` verdict (``rest``): codes through the mapping, or
        category names."""
        acc = Acc()
        codes = [c for c in re.split(r"[\s,;]+", rest.strip()) if c]
        codes = [c.strip(STRIP_CHARS) for c in codes]
        codes = [c for c in codes if c]
        if not codes:
            acc.errors.append("'unsafe' without category codes")
            return acc
        mapping = self.mapping
        looks_lg = all(CODE_RE.match(c) for c in codes)
        if mapping is None or not looks_lg:
            if not looks_lg:
                # "unsafe\nhate, violence": names after the verdict.
                sub = self.read_list(rest)
                if not sub.resolved and not sub.unknown and not sub.errors:
                    sub.errors.append("'unsafe' without category codes")
                sub.unsafe_flag = True
                return sub
            mapping, err = default_llama_guard_mapping(self.taxonomy)
            if mapping is None:
                acc.errors.append(
                    f"Llama Guard output ({', '.join(codes)}) needs a code mapping: {err}"
                )
                return acc
        acc.unsafe_flag = True
        acc.complete = True  # a verdict's codes are its whole list
        empty_codes: list[str] = []
        for code in codes:
            mapped = mapping.map(code)
            if mapped is None:
                # Unlike a name that matches no category, a code says nothing of what it
                # covers: it may be one of the taxonomy's categories, so the row's other
                # zeros could be silent negatives. Left to the unparseable-row policy.
                acc.errors.append(
                    f"code {code!r} is not in mapping {mapping.name!r}: the categories it "
                    "covers are unknown"
                )
                continue
            cols = tuple(self.col[i] for i in mapped if i in self.col)
            missing = [i for i in mapped if i not in self.col]
            if missing:
                acc.add_unknown(f"{code}->{','.join(missing)}")
            if cols:
                acc.add(cols, 1.0)
            elif not missing:
                acc.resolved = True
                empty_codes.append(code)
        if empty_codes:
            acc.notes.append(
                f"code(s) {', '.join(empty_codes)} map to no {self.taxonomy.name} category"
            )
            if not acc.scores:
                acc.unsafe_flag = False
        return acc
