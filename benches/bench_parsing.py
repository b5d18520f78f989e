"""Throughput of ``toxeval.parse_outputs`` on synthetic LLM answers, one style at a time.

    python benches/bench_parsing.py               # 100,000 answers per style
    python benches/bench_parsing.py -n 20000 json values

Styles: ``json`` (an object of five scores), ``list`` (comma-separated ids or "none"),
``values`` ("Category: value" lines with yes/no/numbers, the value grammar's common
case), ``fenced`` (prose around a fenced JSON object), ``table`` (a markdown table of
likelihood words). Answers are generated with a fixed seed and are mostly distinct, so the
whole-output cache helps little; caches are cleared before each style. Prints rows/s.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable

from toxeval.parsing import clear_caches, parse_outputs
from toxeval.taxonomy import load_taxonomy

IDS = load_taxonomy("toxeval-15").ids
WORDS = ["no", "low", "unlikely", "possible", "likely", "high", "not present", "yes"]


def _json(rng: random.Random, i: int) -> str:
    return json.dumps({c: round(rng.random(), 4) for c in rng.sample(IDS, 5)})


def _list(rng: random.Random, i: int) -> str:
    return ", ".join(rng.sample(IDS, rng.randint(0, 4))) or "none"


def _values(rng: random.Random, i: int) -> str:
    vals = ["yes", "no", str(round(rng.random(), 3))]
    return "\n".join(f"{c}: {rng.choice(vals)}" for c in IDS[:8])


def _fenced(rng: random.Random, i: int) -> str:
    body = json.dumps({"categories": rng.sample(IDS, rng.randint(0, 3))})
    return f"Here is the answer {i}.\n```json\n{body}\n```"


def _table(rng: random.Random, i: int) -> str:
    rows = [f"| {c} | {rng.choice(WORDS)} |" for c in rng.sample(IDS, 6)]
    return "\n".join(["| Category | Likelihood |", "|---|---|", *rows])


STYLES: dict[str, Callable[[random.Random, int], str]] = {
    "json": _json,
    "list": _list,
    "values": _values,
    "fenced": _fenced,
    "table": _table,
}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-n", type=int, default=100_000, help="answers per style")
    p.add_argument("styles", nargs="*", choices=[*STYLES, []], help="default: all")
    a = p.parse_args(argv)
    for name in a.styles or list(STYLES):
        rng = random.Random(0)
        texts = [STYLES[name](rng, i) for i in range(a.n)]
        clear_caches()
        t0 = time.perf_counter()
        batch = parse_outputs(texts)
        dt = time.perf_counter() - t0
        print(
            f"{name:7s} {a.n:>9,} answers  {dt:6.2f} s  {a.n / dt:>9,.0f} rows/s  "
            f"{batch.status_counts()}"
        )


if __name__ == "__main__":
    main()
