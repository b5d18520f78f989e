"""The ``cost`` block of a run's results (:func:`toxeval.llm.run_costs.cost_block`) as
rows of (what, value) text, shared by the terminal report (:func:`render_cost`),
report.md and report.html so that all three say the same; a figure no row recorded reads "not recorded", never 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["COST_NOTE", "cost_rows", "render_cost"]

NOT_RECORDED = "not recorded"
COST_NOTE = (
    "latency: per answered item, from its unit's first request to its last answer read "
    "(waits and retries included); time to first byte: to the answer's head; tokens as "
    "the server reported them (reasoning tokens are part of the completion tokens)"
)


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def _seconds(block: Mapping[str, Any] | None, with_max: bool) -> str:
    if not block:
        return NOT_RECORDED
    text = f"p50 {block['p50']:.3f} s, p95 {block['p95']:.3f} s"
    if with_max:
        text += f", max {block['max']:.3f} s"
    return text + f" (over {_items(block['n'])})"


def _tokens(block: Mapping[str, Any] | None) -> str:
    if not block:
        return NOT_RECORDED
    return (
        f"{block['per_item']:.1f} per item, {block['total']} in all (over {_items(block['rows'])})"
    )


def cost_rows(cost: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(what, value) rows of a ``cost`` block."""
    retries = cost.get("retries")
    missing_retries = cost.get("rows_without_retries", 0)
    rows = [
        ("items read", f"{cost['rows']} ({cost['answered']} answered, {cost['failed']} failed)"),
        (
            "attempts, retries",
            f"{cost['attempts'] if cost.get('attempts') is not None else NOT_RECORDED}, "
            f"{retries if retries is not None else NOT_RECORDED}"
            + (f" ({missing_retries} items not recorded)" if missing_retries else ""),
        ),
        ("latency", _seconds(cost.get("latency_s"), True)),
        ("time to first byte", _seconds(cost.get("ttfb_s"), False)),
    ]
    tokens = cost.get("tokens") or {}
    for kind in ("prompt", "completion", "reasoning"):
        rows.append((f"{kind} tokens", _tokens(tokens.get(kind))))
    if cost.get("rows_without_usage"):
        rows.append(("items without usage", str(cost["rows_without_usage"])))
    priced = cost.get("prices")
    if priced:
        per_1000 = priced.get("usd_per_1000_items")
        rows.append(
            (
                f"cost ({priced['model']}, prices from {priced['file']})",
                f"USD {priced['usd_total']:.6g} in all, "
                + (f"USD {per_1000:.6g} per 1,000 items" if per_1000 is not None else "no item")
                + f" (over {_items(cost['billable']['rows'])} with usage)",
            )
        )
    return rows


def render_cost(block: Mapping[str, Any], con: Console) -> None:
    """The run's latency, tokens and (priced) cost as a terminal table."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    table = Table(
        title="latency and cost", caption=COST_NOTE, box=box.SIMPLE_HEAD, show_header=False
    )
    table.add_column("")
    table.add_column("")
    for what, value in cost_rows(block):
        table.add_row(escape(what), escape(value))
    con.print(table)
