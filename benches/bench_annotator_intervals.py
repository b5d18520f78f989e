"""The mAP intervals that resample annotators (toxeval.scoring.annotator_intervals) against
the report's own intervals and against the two-stage bootstrap written out in NumPy +
scikit-learn, in one run.

Run: python benches/bench_annotator_intervals.py [--rows 100000] [--labels 15]
     [--annotators 5] [--resamples 200] [--slow-resamples 3] [--contested 0.15]

Workload: ``rows x labels`` float64 scores; every row has ``--annotators`` annotators, a
category's share drawn so that about ``--contested`` of the cells are contested (neither
0 nor 1); scores are the share plus noise, clipped to [0, 1]. Measures (wall time):

* ``figure_intervals`` (the report's mAP, label ranking loss and per-category AP
  intervals) with ``--resamples``;
* ``annotator_map_intervals`` with ``--resamples`` (setup: the sorts, once; then per
  resample the draws and two walks per category);
* the two-stage side written out (draw rows, redraw every copy's annotators'
  votes, materialise, scikit-learn's AP per category): ``--slow-resamples`` timed and
  extrapolated linearly to ``--resamples``.

Nothing here is asserted; run it on an otherwise idle machine (the load average is
printed).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--labels", type=int, default=15)
    p.add_argument("--annotators", type=int, default=5)
    p.add_argument("--resamples", type=int, default=200)
    p.add_argument("--slow-resamples", type=int, default=3)
    p.add_argument("--contested", type=float, default=0.15)
    a = p.parse_args()

    from sklearn.metrics import average_precision_score
    from toxeval.scoring.annotator_intervals import annotator_map_intervals
    from toxeval.scoring.intervals import figure_intervals

    rng = np.random.default_rng(0)
    n, k, n_ann = a.rows, a.labels, a.annotators
    # P(0 < Binomial(n_ann, q) < n_ann) is about --contested for a small q
    q = np.full(k, 1 - (1 - a.contested) ** (1 / n_ann))
    share = rng.binomial(n_ann, q, size=(n, k)) / n_ann
    y = (share > 0.5).astype(np.int8)
    m = np.ones((n, k), dtype=bool)
    s = np.clip(share + rng.normal(0, 0.3, (n, k)), 0, 1)
    votes = np.full(n, n_ann)
    print(f"load average {os.getloadavg()[0]:.2f}; {n} rows x {k} categories, {n_ann} "
          f"annotators, {((share > 0) & (share < 1)).mean():.1%} cells contested")  # fmt: skip

    t = time.perf_counter()
    figure_intervals(y, s, m, n_resamples=a.resamples, seed=0)
    report = time.perf_counter() - t
    t = time.perf_counter()
    annotator_map_intervals(
        y, s, m, share, votes, n_resamples=a.resamples, seed=0, confidence_level=0.95
    )
    ours = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(a.slow_resamples):
        idx = rng.integers(0, n, n)
        redrawn = rng.binomial(n_ann, share[idx]) * 2 > n_ann
        for c in range(k):
            if redrawn[:, c].any():
                average_precision_score(redrawn[:, c], s[idx, c])
    written_out = (time.perf_counter() - t) / a.slow_resamples * a.resamples
    print(f"report intervals ({a.resamples} resamples): {report:.2f} s")
    print(f"annotator intervals ({a.resamples} resamples): {ours:.2f} s "
          f"({ours / report:.2f}x the report's intervals)")  # fmt: skip
    print(f"written out in NumPy + scikit-learn (extrapolated from {a.slow_resamples}): "
          f"{written_out:.2f} s ({written_out / ours:.1f}x the annotator intervals)")  # fmt: skip


if __name__ == "__main__":
    main()
