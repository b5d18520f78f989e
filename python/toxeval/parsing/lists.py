"""Text answers read item by item: comma-, newline- or bullet-separated names, ids and
aliases, "name: value" pairs (the value read by :func:`toxeval.parsing.values.read_value`),
check marks, and markdown tables with one row per category."""

from __future__ import annotations

import re

from toxeval.taxonomy import normalize_label

from .answer import Acc, norm_name, shown
from .base import STRIP_CHARS, SUBSPLIT_RE
from .negations import CUE_RE as NEG_CUE_RE
from .table_prose import TableProseReader
from .values import MARK_RE, NULL_VALUE, has_negation_cue, read_value

_SPLIT_RE = re.compile(r"[\n\r,;|]+|(?<=[a-z)])\.\s+(?=[A-Z])")
# The same separators when a comma stands between digits: that is a decimal comma
# ("hate: 0,7"), not a separator. Slower, so only used when such a comma is there.
_DIGIT_COMMA_RE = re.compile(r"\d,\d")
_SPLIT_KEEP_DECIMALS_RE = re.compile(r"(?:[\n\r;|]|(?<!\d),|,(?!\d))+|(?<=[a-z)])\.\s+(?=[A-Z])")
# A list item's bullet or number: "- ", "* ", "1. ", "(a) ".
BULLET_RE = re.compile(r"\A(?:[-*•·‣>+]+|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)](?=\s))\s*")
# "name <sep> value": the first ":", "=", "(" or spaced dash splits a piece.
# The value is captured greedily and stripped in Python: a lazy group before "\s*\Z" is
# quadratic in a long run of spaces.
_NAME_VALUE_RE = re.compile(
    r"\A(.*?[^\s:=(])[ \t]{0,10}([:=]|\(|\s[-\u2013\u2014]\s)(.*)\Z", re.DOTALL
)
# A piece that may be "name <sep> value".
HAS_SEPARATOR_RE = re.compile(r"[:=(]|\s[-\u2013\u2014]\s")
# A name and a dash with nothing after it ("Hate -", "Violence —"): a missing value.
DANGLING_DASH_RE = re.compile(r"\S\s+[-\u2013\u2014]+\s*\Z")
_QUOTE_CHARS = " \t\"'“”‘’`*"
# Words of a lead-in that show the names after it are not the answer: rejected or
# weighed candidates, a first or earlier answer, a condition or a hedge.
UNSURE_HEAD_RE = re.compile(
    r"\b(?:rejected|dismissed|discarded|eliminated|considered|consider|candidates?"
    r"|initial(?:ly)?|original(?:ly)?|previous(?:ly)?|earlier|draft|first\s+(?:thought|guess)"
    r"|if|would|could|might|may|maybe|perhaps|possibl[ey]|borderline|uncertain|unsure"
    r"|potential(?:ly)?|suspected|probabl[ey]"
    r"|unlikely|least)\b",
    re.IGNORECASE,
)
# The top of a scale named in a column header: "(1-5)", "0 to 10", "/5", "out of 10".
_SCALE_RE = re.compile(
    r"\d+(?:\.\d+)?\s*(?:-|\u2013|to)\s*(\d+(?:\.\d+)?)|(?:/|out\s+of)\s*(\d+(?:\.\d+)?)", re.I
)
# A name that is a score of the whole answer ("Score: 0.1"), not a category.
_SCORE_NAMES = frozenset(("score", "probability", "confidence", "likelihood", "certainty"))
_SCORE_PIECE_RE = re.compile(r"(?:" + "|".join(_SCORE_NAMES) + r")\s+(.+)\Z", re.IGNORECASE)
# A task-list check box before an item: "[x]" checked, "[ ]" not.
_CHECKBOX_RE = re.compile(r"\[([ xX✓✔])\]\s*")
# An item that qualifies the one before it ("..., but borderline", "..., although unclear").
# A bare verdict word as a list item: after a name, it is that name's value on a line of
# its own ("Hate\nNo", "**Violence**\nYes"), not an item of a label list.
BARE_VERDICT_RE = re.compile(r"(?:yes|no|true|false|y|n)", re.IGNORECASE)
_QUALIFIER_RE = re.compile(r"(?:but|however|although|though|except|unless)\b", re.IGNORECASE)
# "hate is present", "hate and violence are not detected": names, a verb, a value.
_COPULA_RE = re.compile(r"\A(.{1,120}?)\s+(?:is|are|was|were|has been|have been)\s+(.{1,80})\Z")
# Markdown tables: a row starts with "|"; a separator row is made of dashes and colons.
_TABLE_ROW_RE = re.compile(r"^[ \t]*\|", re.MULTILINE)
_TABLE_RULE_RE = re.compile(r":?-+:?")
# Header words of the table column that holds the value ("| Category | Present |").
_VALUE_HEADER_WORDS = frozenset(
    normalize_label(w)
    for w in (
        "score",
        "probability",
        "likelihood",
        "confidence",
        "flag",
        "flagged",
        "present",
        "presence",
        "detected",
        "applies",
        "applicable",
        "value",
        "verdict",
        "severity",
        "risk",
        "rating",
        "result",
        "answer",
        "status",
        "decision",
        "yes",
        "violated",
        "violation",
    )
)


# Signs that say something about the item they stand beside (colours, prohibitions),
# unlike a decorative bullet ("🔹 hate"); the check and cross marks are values (MARKS).
_SIGN_RE = re.compile("[\U0001f534-\U0001f535\U0001f7e0-\U0001f7eb\U0001f6ab\u26d4\U0001f6d1]")
# A censored word after a name ("Profanity: f***", "f*" once "**" emphasis is stripped).
_CENSORED_VALUE_RE = re.compile(r"[:=]\s*[A-Za-z]\*")
# The end of a list that says it goes on: "etc.", "...", "and more", "among others".
_GOES_ON_RE = re.compile(
    r"\s*(?:(?:and|or|among|amongst|plus)\s+)?(?:etc\.?|\.{3}|…|(?:many\s+)?more|others?"
    r"|so\s+on|the\s+like|similar)\s*[.!]?\s*",
    re.IGNORECASE,
)
_CONFIDENCE = frozenset(normalize_label(w) for w in ("confidence", "certainty"))
# The rule line of a table written without outer pipes ("--- | ---").
_BARE_RULE_RE = re.compile(r"^[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$", re.M)


class ListReader(TableProseReader):
    """Reads a text answer as a list or a table of categories."""

    def read_list(self, body: str) -> Acc:
        """A block of text as a markdown table, else as separated items."""
        acc = Acc()
        if "|" in body and _BARE_RULE_RE.search(body):
            # "Category | Present\n--- | ---\nHate | No": a table without outer pipes
            rows = [ln for ln in body.splitlines() if "|" in ln]
            self._table(rows, acc)
            self.prose_beside_table(body, acc)
            return acc
        if "|" in body and _TABLE_ROW_RE.search(body):
            rows = [ln for ln in body.splitlines() if ln.lstrip().startswith("|")]
            if rows:
                self._table(rows, acc)  # the table is the answer; prose around it is not,
                self.prose_beside_table(body, acc)  # unless it takes the table back
                return acc
        split = _SPLIT_KEEP_DECIMALS_RE if _DIGIT_COMMA_RE.search(body) else _SPLIT_RE
        for raw in split.split(body):
            self.piece(raw, acc)
        return acc

    def _table(self, lines: list[str], acc: Acc) -> None:
        """A markdown table: one row per category, its value in a column of the row."""
        rows = []
        for ln in lines:
            cells = [c.strip().strip("*`").strip() for c in ln.strip().strip("|").split("|")]
            if all(not c or _TABLE_RULE_RE.fullmatch(c) for c in cells):
                continue  # |---|:---:|
            rows.append(cells)
        if not rows:
            return
        if self._across(rows, acc):
            return
        value_col: int | None = None
        verdicts: list[int] = []
        if self.resolve_name(rows[0][0]) is None:  # a header row: | Category | Present |
            header = rows.pop(0)
            value_cols = [
                j
                for j, h in enumerate(header[1:], 1)
                if any(w in _VALUE_HEADER_WORDS for w in norm_name(h).split())
            ]
            # "| Category | Confidence | Present |": the confidence is how sure the
            # verdict beside it is, so the verdict column holds the value.
            verdicts = [j for j in value_cols if norm_name(header[j]) not in _CONFIDENCE]
            picked = verdicts or value_cols
            value_col = picked[0] if picked else None
            shown = header[value_col] if value_col is not None else ""
            scale = _SCALE_RE.search(shown) if "%" not in shown else None  # "(0-100%)"
            if scale is not None and float(scale.group(1) or scale.group(2)) != 1.0:
                # "| Category | Score (1-5) |": a 1 there is the lowest score, not 1.0
                acc.errors.append(f"table column {shown!r} is on another scale")
                return
            negated = [j for j in range(1, len(header)) if NEG_CUE_RE.search(header[j])]
            if negated and (value_col is None or value_col in negated):
                # "| Category | Absent |": a "yes" there says the category is not present
                acc.errors.append(
                    f"table column {header[(negated if value_col is None else [value_col])[0]]!r}"
                    " is negated: its values are not read as presence"
                )
                return
        both = verdicts if value_col is not None and len(verdicts) > 1 else []
        for cells in rows:
            name, rest = cells[0], cells[1:]
            said = [read_value(cells[j])[0] for j in both if j < len(cells)]
            if len({v >= 0.5 for v in said if v is not None}) > 1:
                # "| Hate | no | 0.7 |" under "Flagged | Score": two verdicts disagree
                acc.errors.append(f"{name!r}: the table's verdict columns disagree")
                continue
            if value_col is not None and value_col < len(cells):
                rest = [cells[value_col]]
            rest = [c for c in rest if c]
            if not rest:
                if value_col is not None and self.resolve_name(name):
                    acc.errors.append(f"{name!r}: no value given")  # an empty value cell
                    continue
                self.piece(name, acc)
                continue
            value = next((c for c in rest if read_value(c)[0] is not None), None)
            if value is None and value_col is None:
                for c in cells:  # no value column: | hate | violence | is a list
                    self.piece(c, acc)
                continue
            self.piece(f"{name}: {value or rest[0]}", acc)

    def _across(self, rows: list[list[str]], acc: Acc) -> bool:
        """A table read across: a header row of category names (``| Hate | Violence |``,
        maybe after a label cell such as ``Category``) and one row of values under them
        (``| no | yes |``, ``| ❌ | ✅ |``, ``| 0.1 | 0.9 |``). False if the first row is
        not such a header. Several value rows, a row of another width, or a cell that is
        not a value make the row unparseable: which value belongs to which category, or
        which row is the answer, is not known."""
        header = rows[0]
        named = [self.resolve_name(c) if c else None for c in header]
        first = 0 if named[0] else 1  # "| Category | Hate | Violence |"
        if len(header) - first < 2 or not all(named[first:]):
            return False
        values = rows[1:]
        if not values:
            return False  # a row of names only is a list
        if len(values) > 1:
            acc.errors.append(
                f"a table with categories across and {len(values)} rows of values: "
                "which row is the answer is not known"
            )
            return True
        cells = values[0]
        if len(cells) != len(header):
            acc.errors.append(
                f"a table with {len(header)} header cells and {len(cells)} value cells"
            )
            return True
        for name, cols, cell in zip(header[first:], named[first:], cells[first:], strict=True):
            score, graded, err = read_value(cell) if cell else (None, False, "no value given")
            if score is None:
                acc.errors.append(f"{name!r}: {err}")
                continue
            acc.graded = acc.graded or graded
            acc.add(cols or (), score)
        return True

    def piece(self, raw: str, acc: Acc) -> None:
        """One item of a list (or a JSON string in a list): a name, a "name: value" pair,
        several names ("hate/harassment"), or something unknown, added to ``acc``."""
        p = raw.strip()
        if not p:
            return
        p = BULLET_RE.sub("", p, count=1)
        if "*" in p and _CENSORED_VALUE_RE.search(p):
            # "Profanity: f***": a censored word as the value, not "f" (false)
            acc.errors.append(f"a censored word as the value: {shown(p)}")
            return
        if _GOES_ON_RE.fullmatch(p):
            # "hate, violence, etc.": the list says it is not complete, so what it does
            # not name is not known to be negative
            acc.errors.append(f"a list that goes on ({shown(p)}): it is not complete")
            return
        box = _CHECKBOX_RE.match(p)
        if box is not None:  # a task list: "- [x] violence", "- [ ] hate"
            p = f"{p[box.end() :].strip()}: {'no' if box.group(1) == ' ' else 'yes'}"
        if p.rstrip().endswith("?") and ":" not in p and "=" not in p:
            acc.errors.append(f"a question, not an answer: {shown(p)}")  # "hate?"
            return
        if acc.scores and BARE_VERDICT_RE.fullmatch(p.strip(STRIP_CHARS)):
            # "Hate\nNo": read as the list {hate}, the "no" dropped as a "none" item
            acc.errors.append(f"a bare {shown(p)} after a name: a value, not a label")
            return
        if _QUALIFIER_RE.match(p):
            # "Hate: no, but borderline": the item before it is qualified, not plain
            acc.errors.append(f"qualified answer: {shown(p)}")
            return
        if "  " in p or "\t" in p or "\n" in p:
            p = " ".join(p.split())  # the splitting regexes are quadratic in long space runs
        if not p.isascii() and MARK_RE.search(p):
            p = _mark_as_value(p)
        elif not p.isascii() and (sign := _SIGN_RE.search(p)) is not None:
            # "🔴 Hate", "🟢 Violence", "🚫 hate": a sign that carries a verdict the
            # parser does not know (red may be "flagged" or "stop"; 🚫 "absent" or
            # "forbidden"); the item is not read as a bare name
            acc.errors.append(f"sign {sign.group()!r} whose meaning is not known: {shown(p)}")
            return
        has_value = ":" in p or "=" in p
        if not has_value and DANGLING_DASH_RE.search(p):
            head = p.rstrip(" \t-\u2013\u2014")
            if self.resolve_name(head.strip(STRIP_CHARS)):
                acc.errors.append(f"{head!r}: no value given")  # "Hate -": not {hate}
                return
        if not has_value:
            # a whole name first: "Sexual - minors" is one category, not sexual = "minors"
            hit = self.resolve(p.strip(STRIP_CHARS))
            if (
                hit == ()
                and any(v > 0.0 for v in acc.scores.values())
                and not norm_name(p).startswith("none of")
            ):
                # "hate. Actually, none.": the "none" takes back the names before it
                # ("hate, none of them" may be "none of the others": read as before)
                acc.errors.append(f"contradictory: {shown(p)} after the categories")
                return
            if hit is not None:
                acc.add(hit, 1.0)
                acc.complete = True  # a label list: what it does not list is negative
                return
            cv = _COPULA_RE.match(p.strip(_QUOTE_CHARS))
            if cv is not None and self._copula(cv, acc):
                return
        if has_value or HAS_SEPARATOR_RE.search(p):
            # "Hate: no", "hate (score 0.2)": read before the edges are stripped, so that
            # "hate:" or "hate: ???" is not mistaken for a bare "hate".
            nv = _NAME_VALUE_RE.match(p.strip(_QUOTE_CHARS))
            if nv is not None and self._name_value(nv, acc):
                return
        p = p.strip(STRIP_CHARS)
        if not p:
            return
        joined = _LIST_JOIN_RE.match(p)
        last = self.resolve(p[joined.end() :].strip(STRIP_CHARS)) if joined else None
        if joined and last is not None:
            # the last item of "hate, violence, and harassment" / "..., or harassment"
            if joined.group(1).lower() == "or":
                acc.errors.append(f"{shown(p)}: one of these categories, not which")
                return
            acc.add(last, 1.0)
            acc.complete = True
            return
        hit = self.resolve(p) if has_value else None
        if hit is not None:
            acc.add(hit, 1.0)
            acc.complete = True
            return
        # "hate/harassment", "violence and weapons", "hate violence": every part must be a
        # category ("no hate" is not {hate}).
        for parts in (SUBSPLIT_RE.split(p), p.split()):
            if len(parts) < 2 or len(parts) > 20:
                continue
            hits = [self.resolve(x.strip(STRIP_CHARS)) for x in parts if x.strip(STRIP_CHARS)]
            if hits and all(hits) and len(hits) > 1 and _hedged(p):
                # "hate or violence", "Hate/Harassment": one of them, not which
                acc.errors.append(f"{shown(p)}: one of these categories, not which")
                return
            if hits and all(hits):
                for h in hits:
                    acc.add(h or (), 1.0)
                acc.complete = True
                return
        # The tail of a lead-in ("Detected: hate").
        if ":" in p:
            head, tail = p.rsplit(":", 1)
            tail = tail.strip(STRIP_CHARS)
            hit = self.resolve(tail) if tail else None
            # a category after a lead-in, never "none" after prose that names one
            # ("This one is tricky. Hate: possibly. Violence: no" says nothing of the rest)
            if hit and (UNSURE_HEAD_RE.search(head) or _hedge_value(head)):
                # "Unlikely: hate", "Rejected: violence", "Initially: hate": the names
                # after the lead are not asserted
                acc.errors.append(f"a lead-in that does not assert its list: {shown(p)}")
                return
            if hit and not self.mentions(norm_name(head)):
                acc.add(hit, 1.0)
                acc.complete = True
                return
        sp = _SCORE_PIECE_RE.match(p)
        if (
            sp is not None
            and (sp_score := read_value(sp.group(1))[0]) is not None
            and sp_score < 0.5
        ):
            acc.errors.append(f"{shown(p)} beside the answer: is it a yes?")  # "confidence 0.1"
            return
        self.unknown_name(acc, p)

    def _name_value(self, nv: re.Match[str], acc: Acc) -> bool:
        """A "name <sep> value" piece (``Hate: no``, ``hate (score 0.2)``, ``Hate - none
        detected``, ``Hate - attacks on a group``); False if it is not one."""
        name = nv.group(1).strip(STRIP_CHARS)
        sep = nv.group(2).strip()
        text = nv.group(3).strip()
        if sep == "(" and text.endswith(")"):
            text = text[:-1]
        cols = self.resolve_name(name)
        score, graded, err = read_value(text)
        if cols is None:
            # Not a category: only an asserted name counts ("spam: yes", not "spam: no"),
            # unless it looks like one ("violance: no"): that category is unknown.
            if score is None and not graded:
                return False  # not a value either: "Detected: hate", prose
            if score is not None and score < 0.5 and norm_name(name) in _SCORE_NAMES:
                # "Label: hate\nScore: 0.1": a low score may take the answer back
                acc.errors.append(f"{name!r} {shown(text)} beside the answer: is it a yes?")
                return True
            if score or err is not None or self.suggest(name)[0]:
                self.unknown_name(acc, name)
            return True
        if score is not None:
            if score > 0 and len(cols) > 1 and _hedged(name):
                # "Hate/Harassment: yes", "hate or violence: 0.8": at least one of them,
                # not which; "hate/harassment: no" is a negative for both
                acc.errors.append(f"{name!r}: {shown(text)} for one of them, not which")
                return True
            if graded:
                acc.graded = True
            acc.add(cols, score)
            return True
        if graded or err == NULL_VALUE:  # a number, but not a valid score; a null
            self.bad_value(name, err, acc)
            return True
        if sep not in ":=" and (":" in text or "=" in text):
            # "Cybercrime (hacking): yes", "Crime — theft: yes": a name with a gloss,
            # then its value; a pair, so the other categories stay unknown
            gloss = re.split("[:=]", text)[0].rstrip(")").strip(STRIP_CHARS)
            named = self.resolve_name(gloss)
            named = named if named is not None else self.suggest(gloss)[0]
            score, graded, err = read_value(re.split("[:=]", text)[-1].strip())
            if set(named) - set(cols):  # "Sexual (minors): no": which category is meant?
                score, err = None, f"gloss {gloss!r} names another category"
            if score is not None and err is None:
                acc.graded = acc.graded or graded
                acc.add(cols, score)
                return True
            err = err or f"value {shown(text)} not understood"
        elif sep not in ":=":
            tail = text.rstrip(")").strip(STRIP_CHARS)
            more = self.resolve_name(tail) if tail else None
            if more is not None:  # "hate - violence": two categories
                acc.add(cols, 1.0)
                acc.add(more, 1.0)
                acc.complete = True
                return True
            others = self.mentions(norm_name(tail)) - set(cols) if tail else set()
            if tail and " " in tail and not has_negation_cue(tail) and not others:
                # a description: "Hate - attacks on a protected group"; one that names
                # another category ("hate (or violence)") is not read as one, nor is one
                # word ("Violence - clearly": a value not understood)
                acc.add(cols, 1.0)
                acc.complete = True
                return True
        # The value after a category name is not understood: the category is unknown.
        acc.errors.append(f"{name!r}: {err}")
        return True

    def _copula(self, cv: re.Match[str], acc: Acc) -> bool:
        """ "hate is present", "hate and violence are not present": names and a value
        joined by a verb; False if the names or the value are not understood."""
        cols = self.resolve_name(cv.group(1).strip(STRIP_CHARS))
        if not cols:
            return False
        score, graded, err = read_value(cv.group(2))
        if score is None or err is not None:
            return False
        acc.graded = acc.graded or graded
        acc.add(cols, score)
        return True

    def bad_value(self, name: str, err: str | None, acc: Acc) -> None:
        """A category given a value that is not a score: the row is unparseable. An
        explicit null under ``null="omit"`` instead leaves the category out."""
        if err == NULL_VALUE and self.omit_nulls:
            acc.resolved = True
            return
        acc.errors.append(f"{name!r}: {err}")


_LIST_JOIN_RE = re.compile(r"(and|or)\s+", re.IGNORECASE)
_HEDGE_RE = re.compile(r"\s*/\s*|\s+or\s+", re.IGNORECASE)


def _hedge_value(head: str) -> bool:
    """The lead-in before a list is a value that is not a plain yes: "Unlikely",
    "Possible", "Least likely", "Absent"."""
    score, graded, err = read_value(head)
    return err is None and score is not None and (graded or score < 1.0)


def _hedged(names: str) -> bool:
    """Names joined by "/" or "or" ("hate/harassment", "hate or violence"): an answer
    that says one of them, not which; "and", "&" and "+" join categories that all apply."""
    return _HEDGE_RE.search(names) is not None


def _mark_as_value(piece: str) -> str:
    """A list item with check marks or crosses, as "name: <marks> <value>": the marks are
    the value wherever they stand ("hate ✅", "❌ Violence", "Hate: ✅ yes")."""
    marks = " ".join(MARK_RE.findall(piece))
    rest = MARK_RE.sub(" ", piece).strip()
    nv = _NAME_VALUE_RE.match(rest.strip(_QUOTE_CHARS))
    if nv is not None:
        return f"{nv.group(1)}: {marks} {nv.group(3)}"
    return f"{rest}: {marks}"
