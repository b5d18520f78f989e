"""Text the report's renderings share: one value formatter, a confidence level as text,
the one-line name of the evaluated system, why a figure has no interval.

The terminal and Markdown report (:mod:`toxeval.report`), the HTML page
(:mod:`toxeval.html_report`), the figures (:mod:`toxeval.plots`) and the comparison
tables (:mod:`toxeval.compare`) all write these, so they live in this leaf module, which
imports nothing from toxeval: the renderings use it without importing one another.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from toxeval.scoring import EvaluationResult

__all__ = ["format_value", "level_text", "system_line", "withheld_text"]


def format_value(x: Any, digits: int = 4) -> str:
    """A figure as report text: a real number at ``digits`` decimals, an integer as it
    is, ``yes``/``no`` for a flag (a known value is never ``n/a``), ``n/a`` for a value
    that is unknown or undefined (None, NaN, infinity), any other value as ``str``."""
    if x is None:
        return "n/a"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, numbers.Real):
        v = float(x)
        return f"{v:.{digits}f}" if math.isfinite(v) else "n/a"
    return str(x)


def level_text(level: float) -> str:
    """A confidence level as a percentage with the digits it has: ``95%``, ``97.5%``,
    ``99.9%`` (never rounded to ``98%`` or ``100%``)."""
    return f"{float(level) * 100:g}%"


#: How a run's scoring method reads in the report's "system" line: the LLM's
#: ``--scoring`` modes and the local detectors' answer kinds (``toxeval.llm.local_answers``).
SCORING_METHOD_TEXT = {
    "json": "json scoring",
    "logprobs": "logprobs scoring",
    "sample": "sample scoring",
    "labels": "label answers",
    "scores": "graded scores",
    "text": "text answers",
}


def system_line(result: EvaluationResult) -> str:
    """What was evaluated, in one line (a detector, an LLM run file, or a prediction
    dump with its format): the report's "system" row and the figures' titles."""
    sysd = result.system
    if sysd.get("kind") == "detector":
        return f"detector {sysd.get('detector')} {sysd.get('detector_version', '')}".strip()
    if sysd.get("kind") == "run":  # a run file of toxeval predict
        how = sysd.get("scoring_method") or ["unknown"]
        methods = ", ".join(SCORING_METHOD_TEXT.get(m, f"{m} scoring") for m in how)
        if sysd.get("batch_input"):  # a Batch API output, read through its input's sidecar
            return (
                f"{sysd.get('detector')} ({methods}), Batch API output "
                f"{sysd.get('source')} (requests {sysd.get('batch_input')})"
            )
        return f"{sysd.get('detector')} ({methods}), run file {sysd.get('source')}"
    return f"predictions {sysd.get('source')} ({sysd.get('format')}, {sysd.get('kind')})"


def withheld_text(intervals: Any, name: str) -> str | None:
    """Why a headline figure has no interval, e.g. ``undefined on 182 of 200
    resamples`` (``None`` when it has one, or the result has no intervals)."""
    if not intervals or intervals.get(name):
        return None
    undefined = (intervals.get("withheld") or {}).get(name, {}).get("n_undefined")
    if undefined is None:
        undefined = (intervals.get("n_undefined") or {}).get(name)
    if undefined is None:
        return None
    return f"undefined on {undefined} of {intervals['n_resamples']} resamples"
