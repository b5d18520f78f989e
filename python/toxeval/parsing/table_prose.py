"""Prose beside a markdown table answer. The table is the answer and the prose around it
is not, unless the prose takes part of the table back ("On reflection, hate does not
apply", "violence also applies", "Correction: none apply": a contradiction, which
answer the model means is not known) or speaks for the categories the table leaves out
("All other categories: no": they are negative)."""

from __future__ import annotations

import re

from .answer import Acc, norm_name, shown
from .base import STRIP_CHARS
from .negations import CUE_RE as NEG_CUE_RE
from .negations import NegationReader

# "All other categories", "the rest", "everything else": what the answer does not name.
_OTHERS_RE = re.compile(r"\b(?:other|others|rest|remaining|else)\b", re.IGNORECASE)
# Words with which prose beside an answer takes part of it back or adds to it.
_TAKE_BACK_RE = re.compile(
    r"\b(?:actually|correction|corrected|on (?:second thought|reflection)|also|either|"
    r"instead|rather|however|but|except|retract|revise|revised|mistake|wrong)\b",
    re.IGNORECASE,
)


class TableProseReader(NegationReader):
    """Reads the prose lines beside a table answer."""

    def piece(self, raw: str, acc: Acc) -> None:
        """One item of a list answer (``ListReader.piece``), read into ``acc``."""
        raise NotImplementedError

    def prose_beside_table(self, body: str, acc: Acc) -> None:
        """Prose around a table that takes part of it back ("On reflection, hate does
        not apply", "violence also applies", "Correction: none apply") contradicts it:
        which answer the model means is not known."""
        for ln in body.splitlines():
            if "|" in ln or not ln.strip():
                continue
            said = Acc()
            self.piece(ln, said)
            if said.scores:  # an answer line ("Crime: not present"): its values must agree
                named = sorted(
                    c
                    for c, v in said.scores.items()
                    if c in acc.scores and (v >= 0.5) != (acc.scores[c] >= 0.5)
                )
            else:
                named = sorted(self.mentions(norm_name(ln)) & set(acc.scores))
                if not (NEG_CUE_RE.search(ln) or _TAKE_BACK_RE.search(ln)):
                    named = []
            if named:
                ids = ", ".join(self.ids[c] for c in named)
                acc.errors.append(f"contradictory: {shown(ln.strip())} beside the table ({ids})")
                return
            tail = ln.rsplit(":", 1)[-1].strip(STRIP_CHARS)
            says_none = bool(tail) and self.resolve_name(tail) == ()
            if says_none and _OTHERS_RE.search(ln):
                acc.complete = True  # "All other categories: no": the rest are negative
                continue
            if says_none and any(v > 0 for v in acc.scores.values()):
                acc.errors.append(f"contradictory: {shown(ln.strip())} beside the table's labels")
                return
