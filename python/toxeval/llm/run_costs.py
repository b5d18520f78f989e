"""What a run's answers cost: the ``cost`` block of a run file's results.

:func:`cost_block` summarises the rows a run file's report is computed from (the current
row of each dataset item, :func:`toxeval.predictions.run_file.run_scores`): attempts and
retries, the latency and time to first byte of the answered requests (p50, p95, max),
and the tokens the server reported (prompt, completion, reasoning: total and per item).
A figure a row does not record (a run file written before it was, a server that reports
no usage, a Batch API output with no latency) is counted as not recorded, never as 0.
Prices are never assumed: :mod:`toxeval.llm.prices` reads the user's price table and
:func:`toxeval.llm.prices.price_block` adds the cost to this block.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toxeval.llm.runfile import RunRecord

__all__ = ["cost_block", "spread", "token_totals"]


def spread(values: Sequence[float], *, with_max: bool = False) -> dict[str, Any] | None:
    """p50 and p95 (numpy's linear percentile), and the max when asked, of ``values``
    with how many there are; None for no values."""
    if not values:
        return None
    arr = np.asarray(values, dtype=np.float64)
    out: dict[str, Any] = {
        "n": int(arr.size),
        "p50": float(np.percentile(arr, 50)),
        "p95": float(np.percentile(arr, 95)),
    }
    if with_max:
        out["max"] = float(arr.max())
    return out


def token_totals(values: Sequence[int | None]) -> dict[str, Any] | None:
    """Total and mean per row of the counts that were reported (None entries are not
    reported), with how many rows reported one; None when no row did."""
    known = [v for v in values if v is not None]
    if not known:
        return None
    total = int(sum(known))
    return {"rows": len(known), "total": total, "per_item": total / len(known)}


def cost_block(records: Sequence[RunRecord]) -> dict[str, Any]:
    """The ``cost`` block of results.json from the current rows of a run (see the
    module docstring and docs/cli.md for its keys)."""
    answered = [r for r in records if r.error is None]
    # a unit of several items repeats its attempts and retries on each of its rows: each
    # row counts its share, so the unit counts once when all its rows are read
    attempts = [r.attempts / r.unit_items for r in records if r.attempts is not None]
    retries = [r.retries / r.unit_items for r in records if r.retries is not None]
    latency = [r.latency_s for r in answered if r.latency_s is not None]
    ttfb = [r.ttfb_s for r in answered if r.ttfb_s is not None]
    usage = [r.usage for r in answered if r.usage is not None]
    billable = [u for u in usage if u.prompt is not None and u.completion is not None]
    return {
        "rows": len(records),
        "answered": len(answered),
        "failed": len(records) - len(answered),
        "attempts": round(sum(attempts)) if attempts else None,
        "retries": round(sum(retries)) if retries else None,
        "rows_without_retries": len(records) - len(retries),
        "latency_s": spread(latency, with_max=True),
        "rows_without_latency": len(answered) - len(latency),
        "ttfb_s": spread(ttfb),
        "rows_without_ttfb": len(answered) - len(ttfb),
        "tokens": {
            "prompt": token_totals([u.prompt for u in usage]),
            "completion": token_totals([u.completion for u in usage]),
            "reasoning": token_totals([u.reasoning for u in usage]),
        },
        # the rows whose prompt and completion tokens are both known: what a price
        # table is applied to (reasoning tokens are part of the completion tokens)
        "billable": {
            "rows": len(billable),
            "prompt": sum(u.prompt or 0 for u in billable),
            "completion": sum(u.completion or 0 for u in billable),
            "reasoning": sum(u.reasoning or 0 for u in billable),
        },
        "rows_with_usage": len(usage),
        "rows_without_usage": len(answered) - len(usage),
    }
