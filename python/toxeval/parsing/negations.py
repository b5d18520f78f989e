"""Negated lists: what a negation cue says about the categories after it.

"Not present: hate, violence", "Negative for: ...", "None of: ...", "No hate, violence or
harassment", "Free of hate", "Neither hate nor violence", "Without hate", "Does not
apply: ...", "Excluded: ...", "❌ hate, violence", "hate, violence: not present", and the
Spanish, French and German forms ("Sin hate ni violence", "Aucune des catégories: ...",
"Keine der Kategorien: ..."). A cue scopes over the list it introduces, up to the end of
its sentence or a contrast word ("but", "except", "pero", "mais", "aber"): those
categories are negatives (0, known). The rest of the answer is read as usual
(:meth:`NegationReader.negations` hands it back), so "Applies: fraud. Does not apply:
hate, violence." is fraud positive and hate, violence negative.

A list-introducing cue whose scope is not a clean list of categories ("no issues with
hate speech that I could see") is an error, so the row is unparseable: which categories
the negation covers is not known, and a guess would be a confident wrong label. A cue in
the place of a value ("Hate: no", "violence (not present)") is left to the value grammar.
"""

from __future__ import annotations

import re

from .answer import norm_name, shown
from .base import STRIP_CHARS, ParserBase
from .values import MARK_RE, MARKS, read_value

_CROSSES = "".join(c for c, w in MARKS.items() if w == "no")
# Cues that introduce a negated list, longest first within each language.
_CUES = (
    # English
    r"not\s+(?:present|detected|found|flagged|identified|observed|applicable|relevant"
    r"|triggered|violated|indicated|evident|met|included|seen|noted|applying|apply)",
    r"(?:does|do|did)\s+not\s+(?:apply|contain|include|involve|show|exhibit|feature|match"
    r"|qualify(?:\s+as)?|fall\s+(?:under|into))(?:\s+to\s+(?:this|the)\s+\w+)?",
    r"(?:doesn|don|didn)['’]?t\s+(?:apply|contain|include|involve|show|exhibit|feature"
    r"|match|qualify(?:\s+as)?|fall\s+(?:under|into))(?:\s+to\s+(?:this|the)\s+\w+)?",
    r"(?:contains?|containing|shows?|showing|has|have)\s+no",
    r"there\s+(?:is|are|was|were)\s+no",
    r"no\s+(?:evidence|signs?|indications?|instances?|mentions?|traces?|elements?"
    r"|presence|hint)\s+(?:of|for)",
    r"(?:negative|neg)\s+(?:for|on)",
    r"(?:free|clear)\s+(?:of|from)",
    r"devoid\s+of",
    r"absence\s+of",
    r"lack(?:s|ing)?(?:\s+of)?",
    r"none\s+of(?:\s+the\s+following)?",
    r"ruled\s+out",
    r"not\s+flagged",
    r"neither",
    r"without",
    r"exclud(?:ed|es|e|ing)",
    r"absent",
    r"negative",
    r"false",
    r"n/a",
    r"zero",
    r"none",
    r"no",
    r"not",
    # Spanish
    r"no\s+(?:hay|se\s+detecta(?:n|ron)?|se\s+encontr(?:ó|o|aron)|presentes?|aplica(?:n)?"
    r"|contiene)",
    r"ningun[oa]?\s+de(?:\s+(?:las|los))?",
    r"ningun[oa]?|ningún",
    r"sin",
    r"ausen(?:tes?|cia\s+de)",
    # French
    r"ne\s+s['’]applique(?:nt)?\s+pas(?:\s+[àa])?",
    r"ne\s+contient\s+(?:pas|aucune?)(?:\s+de)?",
    r"non\s+(?:pr[ée]sente?s?|d[ée]tect[ée]e?s?|applicables?)",
    r"aucune?s?(?:\s+des?)?",
    r"absence\s+d[e']",
    r"absente?s?",
    r"pas\s+d[e']",
    r"sans",
    r"ni",
    # German
    r"nicht\s+(?:vorhanden|zutreffend|erkannt|festgestellt|gefunden|enthalten)",
    r"(?:trifft|treffen)\s+nicht\s+zu",
    r"enth[äa]lt\s+keine?[nrs]?",
    r"keine?[nrs]?(?:\s+der)?",
    r"ohne",
    r"weder",
    r"nicht",
)
# A cue of several words is tried before any one-word cue it starts with ("no se
# detecta" before "no", "none of" before "none").
_PHRASES = tuple(c for c in _CUES if "\\s" in c or "['’]" in c)
_WORDS = tuple(c for c in _CUES if c not in _PHRASES)
CUE_RE = re.compile(
    r"(?<![\w/-])(?:" + "|".join(_PHRASES + _WORDS) + r")(?![\w/-])|[" + _CROSSES + "]",
    re.IGNORECASE,
)
# Clause boundaries: lines and sentences; within a clause that holds a cue, a contrast
# word, or a ";" before another "lead:" ("Present: fraud; absent: hate").
_LINE_RE = re.compile(r"\n+|(?<=[.!?])\s+")
_CONTRAST_RE = re.compile(
    r"\s*[,;]?\s*\b(?:but|however|although|though|whereas|while|except(?:\s+for)?|yet"
    r"|pero|aunque|excepto|salvo|mais|cependant|sauf|aber|jedoch|au[sß]er)\b[,:]?\s*"
    r"|;\s*(?=[^;:,]{1,30}:)",
    re.IGNORECASE,
)
# Separators of the names in a negated list ("hate, violence or harassment", "hate nor
# violence", "hate y violence", "hate et violence", "hate und violence").
_ITEM_SPLIT_RE = re.compile(
    r"\s*(?:[,;/&+]|\s-\s)\s*(?:(?:and|or|nor|y|o|ni|et|ou|und|oder|noch)\s+)?"
    r"|\s+(?:and|or|nor|y|o|ni|et|ou|und|oder|noch|as\s+well\s+as|and/or)\s+",
    re.IGNORECASE,
)
# Words around the names of a negated list that are not names: "no signs of any hate
# content were found", "sin contenido de violence".
_LEADING_FILLER_RE = re.compile(
    r"\A(?:(?:of|for|from|in|the|any|all|these|those|such|following|categories|category"
    r"|labels?|content|kind|type|types|sign|signs|evidence|indication|form|forms"
    r"|instances?|mentions?|as|a|an|de|d['’]|la|le|les|el|los|las|del|der|die|das|des|du"
    r"|den|contenido|contenu|inhalt|categor[ií]as?|cat[ée]gories?|kategorien?"
    r"|following|suivantes?|siguientes?|folgenden|listed|apply|applies|applicable"
    r"|present|detected|found"
    r"|no|not|nor|neither|ni|sin|sans|kein|keine|keiner|keinen|aucun|aucune|pas)\b"
    r"[\s:,]*)+",
    re.IGNORECASE,
)
_TRAILING_FILLER_RE = re.compile(
    r"(?:[\s:,]*(?:(?:was|were|is|are|has\s+been|have\s+been|could\s+be|can\s+be)\s+)?"
    r"(?:found|detected|present|identified|flagged|observed|noted|evident|apparent"
    r"|applicable|relevant|apply|applies|here|content|categories|category|involved"
    r"|at\s+all|whatsoever|either|in\s+(?:this|the|it)(?:\s+(?:text|content|message|input"
    r"|response|prompt|comment|post))?|detectad[oa]s?|presentes?|d[ée]tect[ée]e?s?"
    r"|pr[ée]sente?s?|vorhanden|erkannt|gefunden)\b)+[\s.!,;:]*\Z",
    re.IGNORECASE,
)
_PUNCT_SEP_RE = re.compile(r"(?:[:=(|]|\s[-\u2013\u2014])\s*\Z")
# A value that runs on into more items ("none, Violence: yes") is not one value.
_MORE_RE = re.compile(r"[,;:|\n]")
_NAMES_END_RE = re.compile(r"(?:[\s:=(|\u2013\u2014-]|\b(?:is|are|was|were)\b)+\Z")

_ITEM_END_RE = re.compile(r"[,;]")
_NAME_END_RE = re.compile(r"[,;:=(]")
# An item line under a lead: a bullet or a short line with no ":" of its own.
_ITEM_LINE_RE = re.compile(r"[ \t]*(?:[-*•+]|\d{1,2}[.)])?[ \t]*[^\s:][^:\n]{0,60}\Z")
_BULLET_RE = re.compile(r"\A(?:[-*•+]|\d{1,2}[.)])\s*")
EXCEPT_RE = re.compile(
    r"\b(?:except|excepting|apart\s+from|other\s+than|besides|excepto|salvo|sauf|au[sß]er)\b"
    # "but" after a word for every category ("Everything but hate is absent"): an exception,
    # not a contrast between two clauses
    r"|\b(?:everything|anything|all(?:\s+(?:the|of\s+them|categories|labels|of\s+the\s+\w+))?"
    r"|every\s+(?:category|label))\s+but\b",
    re.IGNORECASE,
)
# A scope that opens with a denial of its own ("not not violent", "no non-violent").
_NOT_RE = re.compile(r"(?:not|non|never|no)\b(?![\s.!,]*\Z)", re.I)
_NONE_WORD_RE = re.compile(r"(?:none|nothing|no|nil|zero|ninguna?|aucune?|keine?)\b", re.I)
# Words before a negated list that leave open whether it is denied: "I can't say it's
# not hate speech", "unable to say whether there is no violence".
_UNSURE_FRAME_RE = re.compile(
    r"\b(?:can['’]?t|cannot|can\s+not|couldn['’]?t|unable|not\s+sure|unsure|uncertain"
    r"|whether|doubt|wouldn['’]?t\s+say|hard\s+to\s+(?:say|tell))\b",
    re.IGNORECASE,
)
# A clause longer than this is prose, not a list: it is read as it is, unscanned.
_MAX_CLAUSE = 400

# "All other categories: no", "No other categories apply", "Everything else: none",
# "The rest: N/A": the categories the answer does not name are negatives.
_REST_NEG_RE = re.compile(
    r"\A[\s*_>-]*(?:(?:all|any|the)\s+)?(?:(?:other|remaining)\s+(?:toxicity\s+|harm\s+)?"
    r"(?:categories|category|labels|ones|issues|classes)|others|the\s+rest|rest|everything\s+else"
    r"|anything\s+else)\s*(?:[:=]|\s[-\u2013\u2014]|\s+(?:are|is))\s*(?P<value>.{1,40})\Z"
    r"|\A[\s*_>-]*(?:no|none\s+of\s+the)\s+other\s+(?:toxicity\s+|harm\s+)?(?:categories"
    r"|category|labels|issues|ones|concerns|violations)(?:\s+(?:apply|applies|are\s+present"
    r"|is\s+present|were\s+found|was\s+found|detected|found|identified|present))?[\s.!]*\Z",
    re.IGNORECASE,
)
# The marker of a "the rest are negative" clause among the negated columns, and of a
# denied "safe" ("Not safe": the answer says it is unsafe).
REST = -1
UNSAFE = -2

Negation = tuple[tuple[int, ...], list[str], list[str]]


class NegationReader(ParserBase):
    """Finds the negated lists of a text answer."""

    def negations(self, body: str) -> Negation | None:
        """``(negated columns, the rest of the answer as clauses, errors)``, or None when
        no clause of ``body`` holds a negated list (then it is read as it is)."""
        if "_" in body:
            # "not_present:" (a YAML key) is the cue "not present"
            body = _SNAKE_KEY_RE.sub(lambda m: m.group().replace("_", " "), body)
        if CUE_RE.search(body) is None:
            return None
        if ":\n" in body or "#" in body:
            body = _join_items(body)
        negated: list[int] = []
        kept: list[str] = []
        errors: list[str] = []
        found = False
        for clause in _LINE_RE.split(body):
            if not clause.strip():
                continue
            if len(clause) > _MAX_CLAUSE or self._a_pair(clause) or not CUE_RE.search(clause):
                kept.append(clause)  # prose too long to be a list, "Hate: no" (a cue as the
                continue  # value of one category), or no cue
            if "  " in clause or "\t" in clause:
                clause = " ".join(clause.split())  # keeps the regexes below linear
            parts = [p for p in _CONTRAST_RE.split(clause) if p and p.strip()]
            readings = [self._clause(p) for p in parts]
            if all(r is None for r in readings):
                kept.append(clause)  # "Hate: no, but borderline" stays one value
                continue
            found = True
            if EXCEPT_RE.search(clause) and any(isinstance(r, tuple) and r[0] for r in readings):
                # "Everything except profanity is absent": the exception turns the
                # denial around; which categories are denied is not read
                errors.append(f"a negation with an exception: {shown(clause)}")
                continue
            for part, r in zip(parts, readings, strict=True):
                if r is None:
                    kept.append(part)
                elif isinstance(r, str):
                    errors.append(r)
                else:
                    negated.extend(r[0])
                    if r[1]:
                        kept.append(r[1])
        if not found:
            return None
        return tuple(negated), kept, errors

    def _a_pair(self, clause: str) -> bool:
        """A quick test for the commonest clause with a cue: one "name: value" pair whose
        value holds the cue ("Hate: no", "- violence: not present")."""
        head, sep, value = clause.partition(":")
        if not sep or "," in value or ";" in value:
            return False
        return bool(self.resolve(head.strip(STRIP_CHARS)))  # a name: never a cue

    def _clause(self, part: str) -> tuple[tuple[int, ...], str] | str | None:
        """One clause: (negated columns, text before the cue to read as usual), an error,
        or None when it holds no negated list."""
        text = part.replace("**", "").replace("__", "").strip()
        rest = _REST_NEG_RE.match(text)
        if rest is not None:
            value = rest.group("value")
            if value is None or read_value(value)[:2] == (0.0, False):
                return (REST,), ""  # "All other categories: no"
            return f"a value for the other categories that is not a no: {shown(text)}"
        if self.resolve(text.strip(STRIP_CHARS)) is not None:
            return None  # a name or a "none" phrase: "None of the above", "No categories"
        head = _ITEM_END_RE.split(text, maxsplit=1)[0].strip(STRIP_CHARS)
        if head != text and self.resolve(head) == ():
            return None  # "None of the categories apply; hate": a list with a "none" item
        n_marks = len(MARK_RE.findall(text)) if not text.isascii() else 0
        for m in CUE_RE.finditer(text):
            pre, after = text[: m.start()], text[m.end() :]
            if m.group() in MARKS and (pre.strip(STRIP_CHARS) or n_marks > 1):
                continue  # "hate ❌", "✅ fraud ❌ hate": marks are values of items
            if pre.count("(") > pre.count(")"):
                continue  # "Hate: no (the slur is quoted, not used)": a gloss
            item = _NAME_END_RE.split(text[m.start() :], maxsplit=1)[0]
            if self.resolve_name(item.strip(STRIP_CHARS)):
                continue  # the cue word starts a name: "false information" (misinformation)
            names = _NAMES_END_RE.sub("", pre).strip(STRIP_CHARS)
            value_sep = _PUNCT_SEP_RE.search(pre) is not None
            mid_list = pre.rstrip()[-1:] in (",", ";")
            if mid_list:
                names = ""  # "harassment; no hate": the cue starts an item of its own
            if names and ";" in names:
                return f"negation {m.group()!r} after a ';': {shown(text)} is not one list"
            if names:
                cols = self._name_list(names)
                if cols is not None:  # "hate, violence: not present", "hate absent"
                    if value_sep and len(set(cols)) == 1:
                        continue  # "Hate: no", "Hate: none, Violence: yes": a pair
                    value, more = text[m.start() :], ""
                    cut = _MORE_RE.search(value)
                    if cut is not None:  # "hate absent, violence present"
                        value, more = value[: cut.start()], value[cut.end() :]
                    score, _, err = read_value(value)
                    if score == 0.0 and err is None and not _PUNCT_SEP_RE.search(more):
                        return cols, more.strip()
                    if value_sep:
                        continue  # "hate, violence: no, fraud: yes": not one value
                    return f"negation {m.group()!r} after {names!r} not understood"
                if value_sep and self.mentions(norm_name(names)):
                    continue  # "Hate: yes, Violence: no": a value of a pair
            if not after.strip(" \t.!") or after.lstrip(" \t")[:1] in ",.!)":
                continue  # "No.", "No, ...": an interjection or a whole-answer "no"
            if self.resolve(text[m.start() :].strip(STRIP_CHARS)) == ():
                continue  # "Categories: not toxic", "Answer: no categories": a "none"
            scope = after.strip(STRIP_CHARS)
            if self.resolve(scope) == () and self.resolve(f"no {scope}") != ():
                # "Not safe", "not benign": the denial of a "none" says something is there
                return (UNSAFE,), ""
            if _NONE_WORD_RE.match(scope) and self.resolve(scope) == ():
                # "Not present: none": a negated "none" says that nothing is absent
                return f"negation {m.group()!r} of {shown(scope)}: a double negation"
            if _NOT_RE.match(scope):
                # "This is not not violent": the second denial undoes the first
                return f"negation {m.group()!r} of {shown(scope)}: a double negation"
            if self.resolve(f"no {scope}") == () or self.resolve(scope) == ():
                return (REST,), ""  # "There are no violations", "contains no toxic content"
            cols = self._negated_list(after)
            if cols is None:
                return (
                    f"negation {m.group()!r} before {shown(after)} that is not a list of "
                    "categories: which categories it covers is not known"
                )
            if not cols:
                continue  # "no categories apply" after a lead: a "none" answer
            if mid_list and len(set(cols)) > 1:
                # "Hate, not violence, and harassment": is harassment denied too?
                return f"negation {m.group()!r} in the middle of a list: how far it reaches is not known"
            frame = _UNSURE_FRAME_RE.search(pre)
            if frame is not None:
                return (
                    f"negation {m.group()!r} under {frame.group()!r}: whether the answer "
                    "denies the categories is not known"
                )
            # text before the cue is read as usual only if it names a category
            keep = pre.strip(" \t,;:-") if self.mentions(norm_name(pre)) else ""
            return cols, keep
        return None

    def _negated_list(self, after: str) -> tuple[int, ...] | None:
        """The columns of the list a cue introduces; () for a "none" phrase; None if the
        scope is not a clean list of category names."""
        p = after.strip(" \t:=-\u2013\u2014,")
        if ";" in p.rstrip(" ;."):
            return None  # "not violence; profanity": where the denial ends is not known
        p = _TRAILING_FILLER_RE.sub("", p)
        p = _LEADING_FILLER_RE.sub("", p).strip(STRIP_CHARS)
        if not p:
            return ()
        whole = self.resolve(p)
        if whole is not None:
            return whole
        return self._name_list(p)

    def _name_list(self, text: str) -> tuple[int, ...] | None:
        """Columns of a list of category names ("hate, violence or harassment"), or None
        if one of its items is not a category name."""
        cols: list[int] = []
        items = _ITEM_SPLIT_RE.split(text)
        if len(items) > 40:
            return None
        for raw in items:
            item = _TRAILING_FILLER_RE.sub("", raw.strip(STRIP_CHARS))
            item = _LEADING_FILLER_RE.sub("", item).strip(STRIP_CHARS)
            if not item:
                continue
            hit = self.resolve_name(item)
            if hit is None:
                return None
            cols.extend(hit)
        return tuple(cols) if cols else None


# A snake_case key at the start of a line ("not_present:", "- no_evidence_of:").
_SNAKE_KEY_RE = re.compile(r"^[ \t>*-]*[A-Za-z]+(?:_[A-Za-z]+)+(?=[ \t]*:)", re.MULTILINE)
# A markdown heading ("### Not present").
_HEADING_RE = re.compile(r"^[ \t]*#{1,6}[ \t]+(.*\S)[ \t]*$")


def _join_items(body: str) -> str:
    """A cue lead on a line of its own and the items under it as one clause:
    "Not present:\n- hate\n- violence" is "Not present: hate, violence"."""
    lines = body.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        heading = _HEADING_RE.match(line)
        if heading is not None and CUE_RE.search(line) is not None:
            line = heading.group(1).rstrip(" :") + ":"  # "### Not present" is a lead
        if not line.rstrip().endswith(":") or CUE_RE.search(line) is None:
            out.append(line)
            continue
        items: list[str] = []
        while i < len(lines):
            if not lines[i].strip():
                # blank lines between bullets (a loose markdown list) keep the list going
                j = i
                while j < len(lines) and not lines[j].strip():
                    j += 1
                if j < len(lines) and _BULLET_RE.match(lines[j].strip()):
                    i = j
                    continue
                break
            if not _ITEM_LINE_RE.match(lines[i]) or _HEADING_RE.match(lines[i]):
                break
            items.append(_BULLET_RE.sub("", lines[i].strip()))
            i += 1
        out.append(f"{line.rstrip()} {', '.join(items)}" if items else line)
    return "\n".join(out)
