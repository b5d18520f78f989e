"""kendalltau: toxeval vs SciPy at n = 1M (distinct values and heavy ties).

Run: python benches/bench_kendall.py. Prints best-of-7 wall and CPU times;
CPU time is the fairer number on a shared machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats
from toxeval.stats import kendalltau


def best(fun: Callable[[], Any], repeat: int = 7) -> tuple[float, float]:
    fun()
    walls, cpus = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fun()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus)


def main() -> None:
    rng = np.random.default_rng(0)
    n = 1_000_000
    x = rng.normal(size=n)
    cases = {
        "distinct": (x, x + rng.normal(size=n)),
        "ties": (rng.integers(0, 20, n).astype(float), rng.integers(0, 20, n).astype(float)),
    }
    for name, (a, b) in cases.items():
        ref = best(lambda a=a, b=b: stats.kendalltau(a, b))
        print(f"{name:9s} scipy        wall {ref[0]:.4f}s  cpu {ref[1]:.4f}s")
        for jobs in (1, 2):
            got = best(lambda a=a, b=b, jobs=jobs: kendalltau(a, b, n_jobs=jobs))
            print(
                f"{name:9s} toxeval n_jobs={jobs} wall {got[0]:.4f}s  cpu {got[1]:.4f}s"
                f"  speed-up (wall) {ref[0] / got[0]:.2f}x"
            )


if __name__ == "__main__":
    main()
