"""The parser's confident-wrong and refusal rates on the held-out chat-answer corpus.

Run from the repository root: ``python tools/parsing_corpus_rates.py`` (``-v`` lists
every answer that is read wrong or refused). tests/test_parsing_chat_corpus.py runs the
same measurement and requires a confident-wrong rate of 0.

Each answer of tests/data/chat_answers.jsonl has a hand-written reading: per category
positive, negative, unknown or "any" (a hedge), or no reading at all (a refusal, a
question back). The parser's row is compared with it at the default threshold (0.5):

- confident wrong: the row is ``ok`` or ``partial`` and some category has a known label
  the reading contradicts (positive for a negative, negative for a positive, or a known
  label where the reading is unknown), or the answer has no reading and the row still
  gives a known label;
- refused: the row is ``unparseable`` (or ``empty`` would be a reading) although the
  answer has a reading;
- left unknown: a category the reading knows that the row leaves unknown (NaN), in a row
  that is not refused: lossy, never wrong.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "chat_answers.jsonl"


@dataclass
class Rates:
    """What the parser did with the corpus."""

    answers: int = 0
    with_reading: int = 0
    confident_wrong: list[tuple[str, str]] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    cells_known: int = 0
    cells_left_unknown: int = 0

    def summary(self) -> str:
        n, r = self.answers, self.with_reading
        return (
            f"{n} answers ({r} with a reading): confident wrong {len(self.confident_wrong)} "
            f"({len(self.confident_wrong) / n:.1%}), refused {len(self.refused)} of {r} "
            f"({len(self.refused) / r:.1%}), known cells left unknown "
            f"{self.cells_left_unknown} of {self.cells_known} "
            f"({self.cells_left_unknown / max(self.cells_known, 1):.1%})"
        )


def load(path: Path = CORPUS) -> list[dict[str, Any]]:
    """The corpus entries."""
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln]


def measure(entries: list[dict[str, Any]]) -> Rates:
    """Parse every answer and compare it with its reading."""
    from toxeval.parsing import parse_outputs
    from toxeval.taxonomy import load_taxonomy

    tax = load_taxonomy("toxeval-15")
    batch = parse_outputs([e["text"] for e in entries], tax)
    out = Rates(answers=len(entries))
    for i, e in enumerate(entries):
        status = str(batch.statuses[i])
        scores = batch.scores[i]
        reading = e["reading"]
        text = e["text"]
        if reading is None:
            if status in ("ok", "partial", "empty") and (~np.isnan(scores)).any():
                out.confident_wrong.append((text, f"{status}: a reading of an answer with none"))
            continue
        out.with_reading += 1
        if status == "unparseable":
            out.refused.append((text, str(batch.reasons[i])))
            continue
        wrong: list[str] = []
        for c, cid in enumerate(tax.ids):
            s = scores[c]
            known = not np.isnan(s)
            if cid in reading["any"]:
                continue
            if cid in reading["unknown"]:
                if known:
                    wrong.append(f"{cid}={s:g} (unknown)")
                continue
            out.cells_known += 1
            if not known:
                out.cells_left_unknown += 1
                continue
            want = cid in reading["positive"]
            if (s >= 0.5) != want:
                wrong.append(f"{cid}={s:g} ({'positive' if want else 'negative'})")
        if wrong:
            out.confident_wrong.append((text, f"{status}: " + ", ".join(wrong)))
    return out


def main(argv: list[str]) -> int:
    rates = measure(load())
    print(rates.summary())
    if "-v" in argv:
        for text, why in rates.confident_wrong:
            print(f"WRONG   {text!r}\n        {why}")
        for text, why in rates.refused:
            print(f"REFUSED {text!r}\n        {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
