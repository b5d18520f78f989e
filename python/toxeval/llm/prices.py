"""The user's price table (``--prices FILE``) and the cost of a run priced with it.

toxeval ships no prices: they change, differ by provider and contract, and a stale one
would be a silent wrong answer. The table is a small TOML (``.toml``) or JSON file::

    [models."gpt-4o-mini"]
    usd_per_1m_input = 0.15       # USD per 1M prompt tokens
    usd_per_1m_output = 0.60      # USD per 1M completion tokens
    usd_per_1m_reasoning = 0.60   # optional: USD per 1M reasoning tokens

The model of the run (its fingerprint's ``model``) must be in it. Reasoning tokens are
part of the completion tokens (OpenAI's usage): without ``usd_per_1m_reasoning`` they
are priced as output; with it, the completion tokens less the reasoning ones are priced
as output and the reasoning ones at that price.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only (tomllib is 3.11's)
    import tomli as tomllib

__all__ = ["PriceError", "Prices", "price_block", "read_prices"]

KEYS = ("usd_per_1m_input", "usd_per_1m_output", "usd_per_1m_reasoning")
REQUIRED = KEYS[:2]

Prices = dict[str, dict[str, float]]


class PriceError(ValueError):
    """A price table that cannot be read or used."""


def read_prices(path: str | Path) -> Prices:
    """The price table of ``path``, checked: ``{model: {key: USD per 1M tokens}}``."""
    from toxeval.json_lines import decode_json_document

    p = Path(path)
    if p.exists() and not p.is_file():  # a FIFO would block the read forever
        raise PriceError(f"{p}: cannot read the price table: not a regular file")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PriceError(f"{p}: cannot read the price table: {e}") from None
    try:
        if p.suffix.lower() == ".toml":
            data: Any = tomllib.loads(text)
        else:  # a model given twice would silently take the second price
            data = decode_json_document(text)
    except ValueError as e:
        kind = "TOML" if p.suffix.lower() == ".toml" else "JSON (name a TOML file *.toml)"
        raise PriceError(f"{p}: not valid {kind}: {e}") from None
    if (
        not isinstance(data, dict)
        or set(data) != {"models"}
        or not isinstance(data["models"], dict)
    ):
        raise PriceError(f"{p}: a price table holds one table 'models' of models (docs/llm.md)")
    if not data["models"]:
        raise PriceError(f"{p}: the price table names no model")
    table: Prices = {}
    for model, row in data["models"].items():
        if not isinstance(row, dict):
            raise PriceError(f"{p}: model {model!r}: expected a table of prices")
        unknown = sorted(set(row) - set(KEYS))
        if unknown:
            raise PriceError(
                f"{p}: model {model!r}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})"
            )
        for key in REQUIRED:
            if key not in row:
                raise PriceError(f"{p}: model {model!r}: {key} is missing")
        prices: dict[str, float] = {}
        for key, value in row.items():
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if ok and isinstance(value, int) and abs(value) > 2**53:
                ok = False  # an integer too large for math.isfinite (OverflowError)
            if not ok or not math.isfinite(value) or value < 0:
                raise PriceError(
                    f"{p}: model {model!r}: {key} is {value!r}; a price is a finite number >= 0 "
                    "(USD per 1M tokens)"
                )
            prices[key] = float(value)
        table[str(model)] = prices
    return table


def price_block(cost: dict[str, Any], table: Prices, model: Any, source: str) -> dict[str, Any]:
    """The priced part of a ``cost`` block (:func:`toxeval.llm.run_costs.cost_block`):
    the prices used, the USD total over the billable rows and per 1,000 of them."""
    if not isinstance(model, str) or not model:
        raise PriceError(f"--prices {source}: the run names no model to price")
    prices = table.get(model)
    if prices is None:
        raise PriceError(
            f"--prices {source}: no prices for model {model!r} (the table has: "
            f"{', '.join(sorted(table))})"
        )
    billable = cost["billable"]
    rows = int(billable["rows"])
    prompt, completion, reasoning = (
        int(billable[k]) for k in ("prompt", "completion", "reasoning")
    )
    per_reasoning = prices.get("usd_per_1m_reasoning")
    if per_reasoning is None:
        usd = prompt * prices["usd_per_1m_input"] + completion * prices["usd_per_1m_output"]
    else:
        usd = (
            prompt * prices["usd_per_1m_input"]
            + (completion - reasoning) * prices["usd_per_1m_output"]
            + reasoning * per_reasoning
        )
    usd /= 1e6
    if not math.isfinite(usd):
        raise PriceError(
            f"--prices {source}: the prices of model {model!r} give a total too large to "
            "compute (not finite)"
        )
    return {
        "file": source,
        "model": model,
        **prices,
        "usd_total": usd,
        "usd_per_1000_items": usd / rows * 1000 if rows else None,
    }
