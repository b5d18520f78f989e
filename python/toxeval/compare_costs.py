"""Latency, tokens and cost beside mAP in ``toxeval compare``: the figures read from a
results folder's ``cost`` block (a run file's: :func:`toxeval.llm.run_costs.cost_block`),
as the columns the comparison's records and CSV add.

They are the folder's own figures, over every item its run file answered: with
``--common-rows`` they are not cut to the common rows as mAP is. A folder without a
``cost`` block (a prediction dump) or a figure its run did not record gives None (an
empty CSV cell), never 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["COST_COLUMNS", "cost_columns", "cost_figures", "cost_legend"]

COST_COLUMNS = (
    "latency_p50_s",
    "latency_p95_s",
    "tokens_per_item",
    "usd_per_1000_items",
)


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            f = float(value)
        except OverflowError:  # an integer too large for a float: no figure
            return None
        return f if math.isfinite(f) else None
    return None


def _get(block: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(block, Mapping):
            return None
        block = block.get(k)
    return block


def cost_figures(cost: Any) -> dict[str, float | None] | None:
    """The :data:`COST_COLUMNS` of a results.json ``cost`` block (None: no block).
    ``tokens_per_item`` is prompt plus completion tokens per item that reported both."""
    if not isinstance(cost, Mapping):
        return None
    rows = _number(_get(cost, "billable", "rows"))
    used = [_number(_get(cost, "billable", k)) for k in ("prompt", "completion")]
    tokens = None
    if rows and all(u is not None for u in used):
        tokens = sum(u for u in used if u is not None) / rows
        tokens = tokens if math.isfinite(tokens) else None
    return {
        "latency_p50_s": _number(_get(cost, "latency_s", "p50")),
        "latency_p95_s": _number(_get(cost, "latency_s", "p95")),
        "tokens_per_item": tokens,
        "usd_per_1000_items": _number(_get(cost, "prices", "usd_per_1000_items")),
    }


def cost_columns(costs: Sequence[Mapping[str, float | None] | None]) -> bool:
    """Whether the comparison's records carry the cost columns: when any system has a
    cost block (then every record has them, None where a system has none)."""
    return any(c is not None for c in costs)


def cost_legend(cells: Mapping[str, Mapping[str, Any]], esc: Callable[[str], str] = str) -> str:
    """The legend's sentence on the runs' latency, tokens and cost (``cells[dataset]
    [system]``, each with a ``cost`` of :func:`cost_figures`); empty when none has one.
    ``esc`` escapes the names (user text) for the output format."""
    parts = []
    for d, row in cells.items():
        for s, cell in row.items():
            c = getattr(cell, "cost", None)
            if not c:
                continue
            said = []
            if c.get("latency_p50_s") is not None:
                said.append(f"latency p50 {c['latency_p50_s']:.3f} s")
            if c.get("tokens_per_item") is not None:
                said.append(f"{c['tokens_per_item']:.1f} tokens per item")
            if c.get("usd_per_1000_items") is not None:
                said.append(f"USD {c['usd_per_1000_items']:.4g} per 1,000 items")
            parts.append(f"{esc(s)} on {esc(d)}: {', '.join(said) or 'not recorded'}")
    if not parts:
        return ""
    return " Runs (their own reports, all items answered): " + "; ".join(parts) + "."
