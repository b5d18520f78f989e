"""Read throughput of the JSONL prediction readers on one dump, in one process.

    PYTHONPATH=python python benches/bench_jsonl_readers.py [FILE] [--repeats 3]

FILE defaults to the 1M-row dump ``bench_end_to_end.py`` generates
(``bench-results/e2e-data/predictions.jsonl``). Times, on the same file, median of
``--repeats`` runs, wall and CPU time (all threads of this process) with the 1-minute
load average beside each: the native reader (``toxeval._core.read_jsonl_dump``, all
cores and one), the table toxeval builds from it (``read_native_jsonl``),
``pyarrow.json.read_json`` with toxeval's explicit schema
(``read_pyarrow_jsonl_table``), and ``orjson.loads`` line by line (objects only, no
columns). MiB/s are file MiB per wall second and per CPU second. On a shared machine
wall times are inflated by other processes; CPU-time ratios measured in the same run
are the comparison to quote.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _orjson_lines(path: Path) -> int:
    import orjson

    n = 0
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                orjson.loads(line)
                n += 1
    return n


def _time(fn: Callable[[], Any], repeats: int) -> dict[str, float]:
    walls, cpus, loads = [], [], []
    for _ in range(repeats):
        c, w = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
        loads.append(os.getloadavg()[0])
    return {
        "wall_s": statistics.median(walls),
        "cpu_s": statistics.median(cpus),
        "load_1m": statistics.median(loads),
    }


def main(argv: list[str] | None = None) -> int:
    from toxeval import _core
    from toxeval.predictions.native_jsonl import read_native_jsonl
    from toxeval.predictions.readers import read_pyarrow_jsonl_table

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "file", nargs="?", type=Path, default=Path("bench-results/e2e-data/predictions.jsonl")
    )
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    mib = args.file.stat().st_size / 2**20
    cases: dict[str, Callable[[], Any]] = {
        "native reader (columns), all cores": lambda: _core.read_jsonl_dump(str(args.file)),
        "native reader (columns), 1 thread": lambda: _core.read_jsonl_dump(str(args.file), 1),
        "native reader -> pyarrow table": lambda: read_native_jsonl(args.file),
        "pyarrow.json.read_json (explicit schema)": lambda: read_pyarrow_jsonl_table(args.file),
        "orjson.loads line by line": lambda: _orjson_lines(args.file),
    }
    print(f"{args.file}: {mib:.1f} MiB, median of {args.repeats}")
    print("| reader | wall s | CPU s | MiB/s wall | MiB/s CPU | load 1m |")
    print("|---|---|---|---|---|---|")
    for name, fn in cases.items():
        r = _time(fn, args.repeats)
        print(
            f"| {name} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {mib / r['wall_s']:.0f} | "
            f"{mib / r['cpu_s']:.0f} | {r['load_1m']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
