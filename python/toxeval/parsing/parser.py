"""The dispatcher: one output, after its reasoning block, is a code fence, JSON, a
lead-in ("Categories: ..."), a Llama Guard verdict or a list, tried in that order;
:class:`Parser` caches whole outputs and turns what was read into a :data:`Row`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

from toxeval.taxonomy import LabelMapping, Taxonomy

from .answer import MAX_CACHE, MAX_DEPTH, MAX_JSON_CANDIDATES, Acc, conflict, norm_name, vector
from .base import NONE_SENTENCE_RE, STRIP_CHARS
from .json_answers import JsonReader
from .lists import BULLET_RE, DANGLING_DASH_RE, HAS_SEPARATOR_RE, UNSURE_HEAD_RE
from .llama_guard import CODE_RE, LG_RE, says_unsafe_first, verdict_flag
from .negations import CUE_RE as NEG_CUE_RE
from .negations import EXCEPT_RE, REST, UNSAFE, Negation
from .reasoning_blocks import final_answer
from .result import NullPolicy
from .unicode_forms import plain_unicode
from .values import named_scale

# Lead-in words: "Categories: hate", "Final answer: ..." (matched on the normalised lead).
_LEAD_WORDS = frozenset(
    (
        "category label answer output result classification prediction predicted tag "
        "class violation verdict response assessment toxicity type detected flagged flag "
        "applicable harm violated "
        # positive leads ("Applies: fraud", "Present: hate") and other languages' words
        "apply present positive contain found identified triggered categoria categorie "
        "kategorie kategorien etiqueta respuesta reponse resultado resultat antwort "
        "ergebnis presente vorhanden detectada detectado detectee "
    ).split()
)

_REFUSAL_RE = re.compile(
    r"\b(?:i\s*(?:'|’)?\s*m\s+sorry|i\s+am\s+sorry|i\s+apologi[sz]e|sorry,?\s+but|"
    r"i\s+(?:can\s*(?:'|’)?\s*t|cannot|can\s+not|won\s*(?:'|’)?\s*t|will\s+not|must\s+decline)"
    r"|i\s*(?:'|’)?\s*m\s+(?:not\s+able|unable)|i\s+am\s+(?:not\s+able|unable)"
    r"|as\s+an\s+ai\b|as\s+a\s+(?:large\s+)?language\s+model|cannot\s+(?:assist|help|comply)"
    r"|not\s+able\s+to\s+(?:help|assist|comply))",
    re.IGNORECASE,
)
_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_PLAIN_RE = re.compile(r"[A-Za-z0-9_ ,\-]+")
_LEAD_RE = re.compile(r"\A[ \t]*([^\n:{}\[\]]{1,60}?)[ \t]*[:=][ \t]*(.*)\Z", re.DOTALL)
_LEAD_LINE_RE = re.compile(r"^[ \t]*[*#>]*[ \t]*([A-Za-z][A-Za-z _*-]{0,59}?)[ \t]*[:=]", re.M)
# A lead-in after the end of a sentence on the same line ("Categories: hate. Answer: none").
_LEAD_INLINE_RE = re.compile(r"[.!;][ \t]+[*#>]*[ \t]*([A-Za-z][A-Za-z _*-]{0,59}?)[ \t]*[:=]")
# Lead-ins of a verdict line ("Verdict: safe"), stripped before reading it.
_VERDICT_LEAD_RE = re.compile(
    r"\A(?:verdict|answer|final answer|result|assessment|classification|rating|label)\s*[:=-]\s*",
    re.IGNORECASE,
)
_UNSAFE = frozenset(("unsafe", "toxic", "harmful", "not safe", "flagged"))
_OTHERS_RE = re.compile(r"\b(?:other|others|remaining|rest|else)\b", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.!\n]")
# A line that starts commentary after the answer ("Explanation: ..."): the answer ends there.
_COMMENTARY_RE = re.compile(
    r"^[ \t]*[-*#>]*[ \t]*(?:explanation|reason|reasoning|rationale|justification|analysis"
    r"|notes?|comments?)[ \t]*[:=]",
    re.IGNORECASE | re.MULTILINE,
)

# A parsed row: status, label columns, (cols, values) of non-zero scores, unknown, reason,
# graded, and the columns the answer says nothing about (unknown: NaN in the scores, never
# 0). Kept as a plain tuple so that a million of them stay cheap.
Row = tuple[
    str,
    tuple[int, ...],
    tuple[int, ...],
    tuple[float, ...],
    tuple[str, ...],
    "str | None",
    bool,
    tuple[int, ...],
]


def _unparseable(reason: str, unknown: tuple[str, ...] = ()) -> Row:
    return ("unparseable", (), (), (), unknown, reason, False, ())


def _quote_list(names: Iterable[str]) -> str:
    return ", ".join(repr(n) for n in names)


def _silent_note(parser: Parser, cols: tuple[int, ...]) -> str:
    """ "no value for 13 of 15 categories: ...", cached per set of columns."""
    hit = parser.silent_notes.get(cols)
    if hit is None:
        shown = ", ".join(parser.ids[c] for c in cols[:8])
        shown += f" and {len(cols) - 8} more" if len(cols) > 8 else ""
        hit = f"no value for {len(cols)} of {parser.taxonomy.k} categories: {shown}"
        if len(parser.silent_notes) >= MAX_CACHE:
            parser.silent_notes.clear()
        parser.silent_notes[cols] = hit
    return hit


class Parser(JsonReader):
    """Parses outputs for one (taxonomy, mapping, threshold); caches names and outputs."""

    def __init__(
        self,
        taxonomy: Taxonomy,
        mapping: LabelMapping | None,
        threshold: float,
        null: NullPolicy = "unparseable",
    ) -> None:
        super().__init__(taxonomy, mapping, threshold, null)
        self._rows: dict[str, Row] = {}
        self.silent_notes: dict[tuple[int, ...], str] = {}

    # ---- outputs

    def parse(self, text: str) -> Row:
        """One output as a :data:`Row`; never raises, cached per output text."""
        row = self._rows.get(text)
        if row is not None:
            return row
        try:
            row = self._parse(text)
        except Exception as exc:  # a bug must not take down a million-row run
            row = _unparseable(f"parser error (please report): {type(exc).__name__}: {exc}")
        if len(self._rows) >= MAX_CACHE:
            self._rows.clear()
        self._rows[text] = row
        return row

    def _parse(self, text: str) -> Row:
        s = text.strip()
        if not s.isascii():
            s = plain_unicode(s)
        if not s:
            return _unparseable("empty output")
        if s[0] == "<" or "</think>" in s:
            s, problem = final_answer(s)
            if problem is not None:
                return _unparseable(problem)
        if _PLAIN_RE.fullmatch(s):
            fast = self._fast_list(s)
            if fast is not None:
                return fast
        acc = self.body(s, 0)
        return self._finish(acc, s)

    def _fast_list(self, s: str) -> Row | None:
        """Comma-separated ids/names with nothing else: no regexes, cached names."""
        cols: list[int] = []
        any_piece = False
        for piece in s.split(","):
            p = piece.strip(" -")
            if p and piece.rstrip().endswith(" -"):
                return None  # "Hate -": a name whose value is missing
            if not p:
                continue
            any_piece = True
            hit = self.resolve(p)
            if hit is None or (not hit and cols):
                return None  # "hate, none": the list reader refuses a "none" after names
            cols.extend(hit)
        if not any_piece:
            return None
        if not cols:
            return ("empty", (), (), (), (), None, False, ())
        uniq = tuple(sorted(set(cols)))
        return ("ok", uniq, uniq, (1.0,) * len(uniq), (), None, False, ())

    def _finish(self, acc: Acc, s: str) -> Row:
        unknown = tuple(acc.unknown)
        if acc.sentences and acc.resolved and not acc.errors:
            acc.errors.append(acc.sentences[0])
        if acc.conflicts and not acc.errors:
            named = ", ".join(self.ids[c] for c in sorted(acc.conflicts))
            acc.errors.append(f"contradictory: {named} given both a positive and a negative value")
        if acc.errors:
            if not acc.scores and _REFUSAL_RE.search(s[:500]):
                return _unparseable(f"refusal: {s[:80]!r}")
            return _unparseable("; ".join(acc.errors), unknown)
        if acc.graded and (top := named_scale(s)) is not None:
            return _unparseable(f"scores on a scale to {top:g} that the answer names, not [0, 1]")
        if not acc.resolved:
            if unknown:
                reason = f"no category recognised: {_quote_list(unknown)}"
                if _REFUSAL_RE.search(s[:500]):
                    return _unparseable(f"refusal: {s[:80]!r}")
                return _unparseable(reason, unknown)
            return _unparseable("no categories or scores found")
        for c in [c for c in acc.unsure if c in acc.scores]:
            del acc.scores[c]  # "Violence: no ... violence also applies": a value, then a
            # phrase that speaks of the category again, is not known to be the answer
        items = sorted((c, v) for c, v in acc.scores.items() if v != 0.0)
        cols = tuple(c for c, _ in items)
        vals = tuple(v for _, v in items)
        if acc.graded:
            labels = tuple(c for c, v in items if v >= self.threshold)
        else:
            labels = tuple(c for c, v in items if v > 0.0)
        if not cols and (acc.unsafe_flag or any(norm_name(u) in _UNSAFE for u in unknown)):
            # "safe\nunsafe\nS1": an unsafe verdict beside a none answer
            return _unparseable("flagged unsafe but no category given", unknown)
        if labels and acc.complete and (denial := _denial(unknown)) is not None:
            # "- hate\n- violence\n\nThese are not present": words outside the list that
            # deny something; read as unrecognised, they left the list's positives standing
            return _unparseable(
                f"a negation beside the list ({denial[:40]!r}): what it denies is not known",
                unknown,
            )
        if acc.unsafe_flag is False and labels:
            named = ", ".join(self.ids[c] for c in labels)
            return _unparseable(f"contradictory: says safe but names {named}", unknown)
        # What the answer says about each category: a label list (or "none", "safe") is
        # a complete statement, so what it does not list is negative; "name: value"
        # pairs, a JSON object or a table speak only for the categories they name.
        # A name that looks like a category ("violance") leaves that category unknown.
        k = self.taxonomy.k
        complete = acc.complete or acc.unsafe_flag is False
        unsure = [c for c in acc.unsure if c not in acc.scores]
        if complete and acc.unplaced and labels:  # "haine, violence": hate is not a 0
            unsure = [c for c in range(k) if c not in acc.scores]
            acc.notes.append(f"{_quote_list(tuple(acc.unplaced))} may name any category")
        if complete and not unsure:
            ucols: tuple[int, ...] = ()
        else:
            known = set(range(k)) if complete else set(acc.scores)
            known.difference_update(unsure)
            if not known:
                what = "; ".join(acc.notes) or "no category is given a value"
                return _unparseable(f"nothing said about any category: {what}", unknown)
            ucols = tuple(c for c in range(k) if c not in known)
        notes = list(acc.notes)
        if ucols:
            notes.append(_silent_note(self, ucols))
        why = "; ".join(notes) or None
        if unknown:
            why = f"unrecognised: {_quote_list(unknown)}" + (f"; {why}" if why else "")
        if unknown or ucols:
            return ("partial", labels, cols, vals, unknown, why, acc.graded, ucols)
        status = "ok" if cols else "empty"
        return (status, labels, cols, vals, (), why, acc.graded, ())

    def body(self, s: str, depth: int) -> Acc:
        """Interpret one block of text (the whole output, or a code fence's content)."""
        # 1. a code fence: its content is the answer (later fences must agree with it).
        if "```" in s and depth < MAX_DEPTH:
            fenced = self._fences(s, depth)
            if fenced is not None:
                return fenced
        # 2. JSON: the whole text, or the first balanced object/array that means something.
        json_acc = self.json_anywhere(s, depth)
        if json_acc is not None:
            return json_acc
        # 3.-6. text; a leading "safe" verdict must not come with categories.
        acc = self._text(s, depth)
        if acc.scores and acc.unsafe_flag is None and self._says_safe_first(s):
            acc.unsafe_flag = False
        if acc.resolved and acc.unsafe_flag is None and ":" in s:
            acc.unsafe_flag = verdict_flag(s)  # "Toxic: yes\nCategories: none"
        if acc.resolved and acc.unsafe_flag is None and says_unsafe_first(s):
            acc.unsafe_flag = True  # "Unsafe. Categories: none"
        return acc

    def _fences(self, s: str, depth: int) -> Acc | None:
        """The first non-empty code fence; a later one that reads differently is an error."""
        first: Acc | None = None
        for n, m in enumerate(_FENCE_RE.finditer(s)):
            if n >= MAX_JSON_CANDIDATES:
                break
            inner = m.group(2).strip()
            if not inner:
                continue
            acc = self.body(inner, depth + 1)
            if first is None:
                first = acc
                if first.errors:
                    return first
            elif acc.resolved and not acc.errors:
                self.agree(first, acc, "code fences")
        outside = _FENCE_RE.sub("\n", s).strip()
        if first is not None and not first.errors and outside:
            # "```hate```\nActually, violence.": words around the fence that read as
            # an answer must not contradict it
            other = self._compared_text(outside, depth + 1)
            if other.resolved and not other.errors and conflict(first, other):
                first.errors.append("contradictory: the text around the code fence disagrees")
            elif not first.errors:  # "On reflection hate does not apply" after the fence
                self.prose_beside_answer(outside.splitlines(), first)
        return first

    def _compared_text(self, s: str, depth: int) -> Acc:
        """:meth:`_text` for text read only to compare with the answer: its values and
        errors count, not the notes on its unknown names (a costly fuzzy look-up)."""
        was, self._comparing = self._comparing, True
        try:
            return self._text(s, depth)
        finally:
            self._comparing = was

    def _says_safe_first(self, s: str) -> bool:
        """The answer opens with a "safe" verdict: "Safe. Categories: hate", "Verdict: safe"."""
        first = _SENTENCE_END_RE.split(s.lstrip(STRIP_CHARS), maxsplit=1)[0]
        first = _VERDICT_LEAD_RE.sub("", first.replace("**", "").strip(STRIP_CHARS))
        if not first or len(first) > 80 or self.resolve(first) != ():
            return False
        # A verdict, not a "none" list item ("None of these apply\nhate" is {hate}).
        return bool(NONE_SENTENCE_RE.match(norm_name(first)))

    def _text(self, s: str, depth: int) -> Acc:
        """A block that is not JSON: a lead-in, a list, Llama Guard, a table."""
        # 3. strip markdown emphasis and a lead-in ("Categories: ...").
        body = s.replace("**", "").replace("`", "").strip()
        whole = self._whole(body)
        if whole is not None:
            return whole
        final = _FINAL_RE.search(body)
        if final is not None and final.start() > 0 and "\n" not in body[: final.start()]:
            # "Initial thought: hate. Final answer: harassment.": the final answer is the
            # answer, what comes before it on its line is reasoning (answers on lines of
            # their own are compared by _lead_sections)
            body = body[final.start() :].strip()
        m = _LEAD_RE.match(body)
        if "\n" not in body and depth < MAX_DEPTH and m is not None and self._is_lead(m.group(1)):
            # several lead-ins on one line are several answers, as on lines of their own
            inline = [
                x.start(1) for x in _LEAD_INLINE_RE.finditer(body) if self._is_lead(x.group(1))
            ]
            if inline:
                return self._lead_sections(body, [0, *inline], depth)
        if "\n" in body and depth < MAX_DEPTH:
            leads = [x for x in _LEAD_LINE_RE.finditer(body) if self._is_lead(x.group(1))]
            if len(leads) >= 2:
                return self._lead_sections(body, [x.start() for x in leads], depth)
            if leads and (m is None or not self._is_lead(m.group(1))):
                # Reasoning first, answer last: "...\nFinal answer: hate"; what comes
                # before must not contradict the answer if it reads as one ("Hate: yes")
                acc = self._text(body[leads[-1].start() :].strip(), depth + 1)
                before = self._text(body[: leads[-1].start()].strip(), depth + 1)
                if before.resolved and not before.errors and conflict(acc, before):
                    acc.errors.append("contradictory: the lines before the answer disagree")
                return acc
        # 4. commentary after the answer ("hate\nExplanation: ...") is not part of it,
        # nor are the negations in it ("Hate: no\nReason: not hate, but violence")
        cm = _COMMENTARY_RE.search(body)
        if cm is not None and body[: cm.start()].strip():
            body = body[: cm.start()].strip()
            m = _LEAD_RE.match(body)
        # negated lists ("Not present: hate, violence") apart, the rest read as usual
        if depth < MAX_DEPTH and "|" not in body:
            neg = self.negations(body)
            if neg is not None:
                return self._with_negations(neg, depth)
        if m is not None and self._is_lead(m.group(1)):
            body = m.group(2).strip()
            if not body:
                acc = Acc()
                acc.errors.append(f"lead-in {m.group(1).strip()!r} with nothing after it")
                return acc
            if body[:1] in "[{" and depth < MAX_DEPTH:
                inner = self.json_anywhere(body, depth + 1)
                if inner is not None:
                    return inner
            whole = self._whole(body)
            if whole is not None:
                return whole
        # 5. Llama Guard: "unsafe\nS1,S10".
        lg = LG_RE.match(body)
        if lg is not None and lg.group(1).lower() == "unsafe":
            return self.llama_guard(lg.group(2))
        if (
            lg is not None
            and lg.group(2).strip()
            and all(CODE_RE.match(c) for c in re.split(r"[\s,;]+", lg.group(2).strip()) if c)
        ):
            acc = self.llama_guard(lg.group(2))  # "safe\nS10": a verdict and codes
            acc.unsafe_flag = False
            return acc
        # 6. a list of names, ids, aliases or "name: score" pairs.
        return self.read_list(body)

    def _with_negations(self, neg: Negation, depth: int) -> Acc:
        """The answer without its negated lists, read as usual, and the negated
        categories as known negatives; one named both ways is a contradiction."""
        cols, kept, errors = neg
        rest = "\n".join(k.strip() for k in kept if k.strip())
        acc = self._text(rest, depth + 1) if rest else Acc()
        if UNSAFE in cols:  # "Not safe": a verdict that some category applies
            cols = tuple(c for c in cols if c != UNSAFE)
            acc.unsafe_flag = True
            acc.resolved = True
        if REST in cols:  # "All other categories: no": what it does not name is negative
            cols = tuple(c for c in cols if c != REST)
            acc.complete = True
            acc.resolved = True
        if rest and not acc.resolved and not acc.unknown and not acc.errors:
            acc.add_unknown(rest)  # words the answer holds that say nothing readable
        both = sorted({c for c in cols if acc.scores.get(c, 0.0) > 0.0})
        if both:
            named = ", ".join(self.ids[c] for c in both)
            acc.errors.append(f"contradictory: {named} both named and negated")
        for c in cols:
            acc.add((c,), 0.0)
        acc.resolved = acc.resolved or bool(cols)
        acc.errors.extend(errors)
        return acc

    def _lead_sections(self, body: str, starts: list[int], depth: int) -> Acc:
        """Several lead-in lines ("Categories: hate, violence\nAnswer: none"): the last
        one is the answer, as after reasoning, and every earlier one that reads as an
        answer must say the same thing. A category list quoted back from the prompt is
        then a disagreement, never a silent set of labels."""
        bounds = [*starts, len(body)]
        texts = [body[a:b].strip() for a, b in pairwise(bounds)]
        sections = [self._text(t, depth + 1) for t in texts]
        answer = sections[-1]
        for text, other in zip(texts[:-1], sections[:-1], strict=True):
            if answer.errors or not other.resolved or other.errors:
                continue
            if not vector(other) and self._says_safe_first(text):
                answer.unsafe_flag = False  # "Verdict: safe\nCategories: hate"
            else:
                self.agree(answer, other, "lead-in answers")
        return answer

    def _whole(self, body: str) -> Acc | None:
        """The whole block is one name or a "none" phrase."""
        if len(body) > 200 or ":" in body or "=" in body or body.endswith("?"):
            return None  # "hate: no", "hate:" are a name and its value; "hate?" asks
        if DANGLING_DASH_RE.search(body):
            return None  # "Hate -": a name whose value is missing
        hit = self.resolve(body)
        if hit is None:
            return None
        acc = Acc()
        acc.add(hit, 1.0)
        acc.resolved = True
        acc.complete = True  # one name, or "none": a label list
        return acc

    def _is_lead(self, lead: str) -> bool:
        words = norm_name(lead).split()
        if not words or len(words) > 8 or not any(w in _LEAD_WORDS for w in words):
            return False
        if NEG_CUE_RE.search(lead) or _OTHERS_RE.search(lead):
            return False  # "Categories not present: hate" negates its list; "All other
            # categories: no" speaks for the rest
        if UNSURE_HEAD_RE.search(lead):
            return False  # "Possibly present: hate", "Initial answer: hate" assert nothing
        if EXCEPT_RE.search(lead) or re.search(r"\bbut\b", lead, re.IGNORECASE):
            return False  # "All categories except hate: no" leaves hate out of its answer
        # "Privacy violations: no", "1. Self-harm: yes", "Privacy violations - risk: high"
        # name a category, not a lead-in
        head = HAS_SEPARATOR_RE.split(BULLET_RE.sub("", lead.strip(), count=1), maxsplit=1)[0]
        return self.resolve_name(head.strip(STRIP_CHARS)) is None


# "Final answer:" in the middle of a block: the answer starts there.
_FINAL_RE = re.compile(
    r"(?<![\w])final\s+(?:answer|verdict|classification|labels?|categor(?:y|ies)|output)\s*:",
    re.IGNORECASE,
)


def _denial(unknown: tuple[str, ...]) -> str | None:
    """The first of the unrecognised pieces of an answer that holds a negation cue."""
    return next((u for u in unknown if NEG_CUE_RE.search(u) is not None), None)
