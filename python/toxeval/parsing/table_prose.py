"""Prose beside a structured answer (a markdown table, JSON in prose, a code fence). The
structured part is the answer and the prose around it is not, unless the prose takes part
of it back ("On reflection, hate does not apply", "violence also applies", "wait, remove
hate", "Correction: none apply": a contradiction, which answer the model means is not
known) or speaks for the categories the answer leaves out ("All other categories: no":
they are negative)."""

from __future__ import annotations

import re

from .answer import Acc, norm_name, shown
from .base import STRIP_CHARS
from .negations import CUE_RE as NEG_CUE_RE
from .negations import NegationReader
from .value_words import TAKE_BACK_RE

# "All other categories", "the rest", "everything else": what the answer does not name.
_OTHERS_RE = re.compile(r"\b(?:other|others|rest|remaining|else)\b", re.IGNORECASE)


class TableProseReader(NegationReader):
    """Reads the prose lines beside a table answer."""

    def piece(self, raw: str, acc: Acc) -> None:
        """One item of a list answer (``ListReader.piece``), read into ``acc``."""
        raise NotImplementedError

    def prose_beside_table(self, body: str, acc: Acc) -> None:
        """The prose lines of a block holding a markdown table (``acc``, read from it)."""
        self.prose_beside_answer([ln for ln in body.splitlines() if "|" not in ln], acc)

    def prose_beside_answer(self, lines: list[str], acc: Acc) -> None:
        """Prose lines beside an answer read into ``acc``: one that takes part of it back
        (a negation or correction naming a category the answer gives a value, a
        ``name: value`` line or a negated list that disagrees, "none" beside positives)
        makes the answer contradictory; "All other categories: no" completes it."""
        for ln in lines:
            if not ln.strip():
                continue
            named = list(self.mentions(norm_name(ln)) & set(acc.scores))
            if named:  # only a line naming what the answer gave a value can disagree
                named = self._disagreeing(ln, named, acc)
            if named:
                ids = ", ".join(self.ids[c] for c in sorted(named))
                acc.errors.append(f"contradictory: {shown(ln.strip())} beside the answer ({ids})")
                return
            tail = ln.rsplit(":", 1)[-1].strip(STRIP_CHARS)
            says_none = bool(tail) and self.resolve_name(tail) == ()
            if says_none and _OTHERS_RE.search(ln):
                acc.complete = True  # "All other categories: no": the rest are negative
                continue
            if says_none and any(v > 0 for v in acc.scores.values()):
                acc.errors.append(f"contradictory: {shown(ln.strip())} beside the answer's labels")
                return

    def _disagreeing(self, ln: str, named: list[int], acc: Acc) -> list[int]:
        """The categories of ``named`` (given a value by ``acc``) that the prose line
        ``ln`` contradicts: its own value for them, a negated list, or a negation or a
        correction word beside them. Read without looking up close names (as text read
        only to compare)."""
        said = Acc()
        was, self._comparing = self._comparing, True
        try:
            self.piece(ln, said)
            neg = None if said.scores else self.negations(ln)
        finally:
            self._comparing = was
        if said.scores:  # an answer line ("Crime: not present"): its values must agree
            return [
                c
                for c, v in said.scores.items()
                if c in acc.scores and (v >= 0.5) != (acc.scores[c] >= 0.5)
            ]
        if neg is not None and neg[0]:  # "not violent": a negated positive disagrees
            return [c for c in neg[0] if acc.scores.get(c, 0.0) >= 0.5]
        return named if (NEG_CUE_RE.search(ln) or TAKE_BACK_RE.search(ln)) else []
