"""What sorting alone costs at 1M x 15, in units of one ``y_score.sum()``.

The multilabel_report target is 15x the time of one NumPy sum over the score
matrix. The report needs, at the least, every label's scores in order (per-label AP and
ROC AUC) and all cells in one order (the micro averages). This measures NumPy's own
sort (x86-simd-sort on AVX2 machines: a vectorised quicksort of bare keys, no labels
carried) on exactly that work, on the same 2 threads:

* the 15 columns of 1M sorted by 2 threads;
* the 15M cells sorted as two halves of 7.5M by 2 threads (a lower bound for one
  order of all cells: the merge of the halves is not even counted).

Run: ``python benches/bench_sort_floor.py [--rows 1000000] [--labels 15] [--repeats 7]``.
Nothing is asserted; the numbers are quoted in docs/performance.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np


def best_ms(fn: Callable[[], Any], repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


def measure(rows: int, labels: int, repeats: int, seed: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    y_score = rng.random((rows, labels))
    columns = [np.ascontiguousarray(y_score[:, j]) for j in range(labels)]
    flat = y_score.ravel()
    halves = [flat[: flat.size // 2], flat[flat.size // 2 :]]
    out = {"sum_ms": best_ms(y_score.sum, repeats)}
    out["sort_one_column_ms"] = best_ms(lambda: np.sort(columns[0]), repeats)
    with ThreadPoolExecutor(2) as pool:
        out["sort_columns_2threads_ms"] = best_ms(lambda: list(pool.map(np.sort, columns)), repeats)
        out["sort_cells_2threads_ms"] = best_ms(
            lambda: list(pool.map(np.sort, halves)), max(1, repeats // 2)
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--labels", type=int, default=15)
    ap.add_argument("--repeats", type=int, default=7)
    a = ap.parse_args(argv)
    r = measure(a.rows, a.labels, a.repeats)
    s = r["sum_ms"]
    cols, cells = r["sort_columns_2threads_ms"], r["sort_cells_2threads_ms"]
    print(f"{a.rows:,} x {a.labels} float64, best of {a.repeats}")
    print(f"  y_score.sum():                              {s:8.1f} ms")
    print(f"  np.sort of one column:                      {r['sort_one_column_ms']:8.1f} ms")
    print(f"  np.sort of every column, 2 threads:         {cols:8.1f} ms = {cols / s:5.1f}x sum")
    print(f"  np.sort of all cells (2 halves), 2 threads: {cells:8.1f} ms = {cells / s:5.1f}x sum")
    print(
        f"  both (per-label + micro order):             {cols + cells:8.1f} ms = {(cols + cells) / s:5.1f}x sum"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
