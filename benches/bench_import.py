"""Import time of ``toxeval.metrics`` against ``sklearn.metrics``.

Run: python benches/bench_import.py [--repeats N]

Each sample is a fresh interpreter that times only the import statement
(interpreter start-up is left out), so nothing is cached in ``sys.modules``.
The two imports alternate, so a burst of load on a shared machine hits both;
the minimum of the samples is reported, and the ratio of the minima. The target
is toxeval.metrics <= 0.2x sklearn.metrics. Each toxeval sample also reports
whether pyarrow, rich or aiohttp were loaded (they must not be).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

PROBE = """
import json, sys, time
t = time.perf_counter()
import {module}
dt = time.perf_counter() - t
heavy = sorted(m for m in ("pyarrow", "rich", "aiohttp", "sklearn", "scipy") if m in sys.modules)
print(json.dumps({{"seconds": dt, "heavy": heavy}}))
"""


def sample(module: str) -> tuple[float, list[str]]:
    """One fresh-process import of ``module``: (seconds, heavy modules it loaded)."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    data = json.loads(out.strip().splitlines()[-1])
    return float(data["seconds"]), list(data["heavy"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9, help="fresh processes per module")
    args = ap.parse_args(argv)
    modules = ("toxeval.metrics", "sklearn.metrics")
    times: dict[str, list[float]] = {m: [] for m in modules}
    loaded: set[str] = set()
    for m in modules:  # warm the OS file cache once, untimed
        sample(m)
    for _ in range(args.repeats):
        for m in modules:
            seconds, heavy = sample(m)
            times[m].append(seconds)
            if m == "toxeval.metrics":
                loaded.update(heavy)
    best = {m: min(v) for m, v in times.items()}
    for m in modules:
        med = sorted(times[m])[len(times[m]) // 2]
        print(f"{m:16s} min {best[m] * 1e3:7.1f} ms   median {med * 1e3:7.1f} ms")
    ratio = best["toxeval.metrics"] / best["sklearn.metrics"]
    print(f"ratio toxeval.metrics / sklearn.metrics (min): {ratio:.3f}x (target <= 0.2x)")
    print(
        f"loaded by toxeval.metrics: {', '.join(sorted(loaded)) or 'none of pyarrow/rich/aiohttp/sklearn/scipy'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
