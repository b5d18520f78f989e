"""Bootstrap intervals: toxeval.stats vs the same bootstrap in NumPy + scikit-learn.

Run: python benches/bench_bootstrap.py [--rows 100000] [--labels 15]
     [--resamples 1000] [--slow-resamples 3] [--n-jobs N] [--memory-runs 5]
     [--memory-only | --report-only]

Workload: ``rows x labels`` float64 scores with 2-10 % positives per label.
Measures (wall time, best of ``--repeats``):

* ``toxeval.stats.bootstrap`` of macro AP and of label ranking loss, ``--resamples``
  resamples each, and their sum (the target is <= 3 s on 2 cores);
* the same bootstrap written with NumPy + scikit-learn (draw indices, materialise,
  call the metric): ``--slow-resamples`` resamples are timed and the time is
  **extrapolated** linearly to ``--resamples`` (the loop does the same work per
  resample);
* the paired bootstrap (``compare(..., method="bootstrap")``) of two systems for both
  metrics, against the single bootstraps;
* peak extra memory of one AP bootstrap, as RSS growth in fresh processes (this
  script re-run with ``--probe``, ``--memory-runs`` times), in units of
  ``y_score.nbytes`` next to the requested distribution's size, with glibc's malloc
  defaults and with large blocks mapped directly (``MALLOC_MMAP_THRESHOLD_``: the
  peak of what is allocated; see ``MALLOC_SETTINGS``); ``--memory-only`` runs just
  this;
* the report's intervals: ``toxeval.score`` of the scores against an in-memory
  dataset with ``bootstrap=--resamples`` (mAP, label ranking loss and per-category AP
  intervals) and with ``bootstrap=0``, in one run, and their ratio (``--report-only``
  runs just this).

Nothing here is asserted; run it on an otherwise idle machine (the load average is
printed).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def make_arrays(
    rows: int, labels: int, seed: int = 0
) -> tuple[NDArray[np.bool_], NDArray[np.float64], NDArray[np.float64]]:
    rng = np.random.default_rng(seed)
    prevalence = np.linspace(0.02, 0.10, labels)
    y = rng.random((rows, labels)) < prevalence
    a = np.clip(0.25 * y + rng.random((rows, labels)), 0, None)
    b = np.clip(0.20 * y + rng.random((rows, labels)), 0, None)
    return y, a, b


def best(fun: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(wall, CPU) seconds of the fastest of ``repeat`` calls; CPU time counts all
    threads, so on a loaded machine it is the steadier figure."""
    times = []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fun()
        times.append((time.perf_counter() - t, time.process_time() - c))
    return min(times)


def hwm_kib() -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def probe(args: argparse.Namespace) -> None:
    """Peak RSS growth of one AP bootstrap in this (fresh) process."""
    from toxeval.stats import bootstrap

    y, a, _ = make_arrays(args.rows, args.labels)
    libc = ctypes.util.find_library("c")
    if libc:
        ctypes.CDLL(libc).malloc_trim(0)
    bootstrap("average_precision_score", y[:200], a[:200], n_resamples=2, n_jobs=args.n_jobs)
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        pass
    base = hwm_kib()
    bootstrap("average_precision_score", y, a, n_resamples=args.resamples, n_jobs=args.n_jobs)
    peak = hwm_kib()
    print(json.dumps({"growth_bytes": (peak - base) * 1024, "y_score_bytes": a.nbytes}))


def sklearn_bootstrap(y: Any, s: Any, n: int, seed: int = 0) -> None:
    from sklearn.metrics import average_precision_score, label_ranking_loss

    rng = np.random.default_rng(seed)
    for _ in range(n):
        idx = rng.integers(0, y.shape[0], y.shape[0])
        average_precision_score(y[idx], s[idx])
        label_ranking_loss(y[idx], s[idx])


def report_times(
    y: NDArray[np.bool_], s: NDArray[np.float64], resamples: int, repeats: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(wall, CPU) of ``toxeval.score`` with ``resamples`` bootstrap resamples and
    with none, on the same in-memory dataset, measured alternately in one run."""
    import toxeval
    from toxeval.datasets import Dataset
    from toxeval.taxonomy import Category, Taxonomy

    n, k = y.shape
    tax = Taxonomy(
        name=f"bench-{k}",
        version="1",
        categories=tuple(Category(id=f"c{i}", name=f"c{i}", description="") for i in range(k)),
    )
    ds = Dataset(
        name="bench",
        level="prompt",
        taxonomy=tax,
        ids=[f"r{i}" for i in range(n)],
        texts=[""] * n,
        responses=None,
        y_true=y.astype(np.int8),
        mask=np.ones((n, k), dtype=bool),
        soft=None,
        n_annotators=None,
        source="bench",
        sha256="0" * 64,
    )
    with_ci, without = [], []
    for _ in range(repeats):
        without.append(best(lambda: toxeval.score(s, ds, bootstrap=0), 1))
        with_ci.append(best(lambda: toxeval.score(s, ds, bootstrap=resamples), 1))
    return min(with_ci), min(without)


def print_report_row(
    y: NDArray[np.bool_], s: NDArray[np.float64], resamples: int, repeats: int
) -> None:
    (w1, c1), (w0, c0) = report_times(y, s, resamples, repeats)
    print("| report (toxeval.score) | wall s | CPU s |\n|---|---:|---:|")
    print(f"| without intervals (bootstrap=0) | {w0:.3f} | {c0:.3f} |")
    print(f"| with intervals (bootstrap={resamples}) | {w1:.3f} | {c1:.3f} |")
    print(
        f"\nreport with intervals / without: wall {w1 / w0:.1f}x, CPU {c1 / c0:.1f}x "
        f"(extra: wall {w1 - w0:.2f} s, CPU {c1 - c0:.2f} s)"
    )


# glibc's default: a freed block raises the threshold above which memory is mapped
# directly, so later blocks come from its heap and may land on pages the process
# had released: the RSS growth then depends on where blocks land, not only on how
# much is allocated. With a fixed threshold every block of 64 KiB or more is its own
# mapping, so the RSS growth is the peak of what is allocated (page-rounded).
MALLOC_SETTINGS = {
    "glibc defaults": {},
    "MALLOC_MMAP_THRESHOLD_=65536": {"MALLOC_MMAP_THRESHOLD_": "65536"},
}


def print_memory(args: argparse.Namespace) -> None:
    """Peak RSS growth of one AP bootstrap over ``--memory-runs`` fresh processes,
    under each of ``MALLOC_SETTINGS``, in units of ``y_score.nbytes``."""
    cmd = [sys.executable, __file__, "--probe", "--rows", str(args.rows), "--labels"]
    cmd += [str(args.labels), "--resamples", str(args.resamples)]
    cmd += [] if args.n_jobs is None else ["--n-jobs", str(args.n_jobs)]
    print(
        f"peak extra memory of one AP bootstrap ({args.memory_runs} fresh processes each; "
        f"distribution {args.resamples * 8 / 2**10:.1f} KiB):"
    )
    for name, env in MALLOC_SETTINGS.items():
        ratios = []
        for _ in range(args.memory_runs):
            out = subprocess.run(
                cmd, capture_output=True, text=True, check=True, env={**os.environ, **env}
            )
            mem = json.loads(out.stdout.strip().splitlines()[-1])
            ratios.append(mem["growth_bytes"] / mem["y_score_bytes"])
        print(
            f"  {name}: {min(ratios):.2f}-{max(ratios):.2f}x y_score "
            f"(median {sorted(ratios)[len(ratios) // 2]:.2f}x; y_score "
            f"{mem['y_score_bytes'] / 2**20:.1f} MiB)"
        )


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--labels", type=int, default=15)
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--slow-resamples", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--n-jobs", type=int, default=None)
    p.add_argument("--memory-runs", type=int, default=5, help="fresh processes per memory probe")
    p.add_argument("--memory-only", action="store_true", help="only the memory probes")
    p.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--report-only", action="store_true", help="only the report with/without intervals"
    )
    args = p.parse_args()
    if args.probe:
        probe(args)
        return
    if args.memory_only:
        print_memory(args)
        return
    if args.report_only:
        y, a, _ = make_arrays(args.rows, args.labels)
        print(
            f"# report intervals: {args.rows} x {args.labels}, {args.resamples} resamples, "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n"
        )
        print_report_row(y, a, args.resamples, args.repeats)
        return

    from toxeval.stats import bootstrap, compare

    y, a, b = make_arrays(args.rows, args.labels)
    r, j = args.resamples, args.n_jobs

    def add(x: tuple[float, float], y: tuple[float, float]) -> tuple[float, float]:
        return x[0] + y[0], x[1] + y[1]

    t_ap = best(
        lambda: bootstrap("average_precision_score", y, a, n_resamples=r, n_jobs=j), args.repeats
    )
    t_lrl = best(
        lambda: bootstrap("label_ranking_loss", y, a, n_resamples=r, n_jobs=j), args.repeats
    )
    p_ap = best(
        lambda: compare(
            "average_precision_score", y, a, b, method="bootstrap", n_resamples=r, n_jobs=j
        ),
        args.repeats,
    )
    p_lrl = best(
        lambda: compare("label_ranking_loss", y, a, b, method="bootstrap", n_resamples=r, n_jobs=j),
        args.repeats,
    )
    wall, cpu = best(lambda: sklearn_bootstrap(y, a, args.slow_resamples), 1)
    slow = (wall / args.slow_resamples * r, cpu / args.slow_resamples * r)
    rows = [
        ("bootstrap mAP", t_ap),
        ("bootstrap LRL", t_lrl),
        ("bootstrap mAP + LRL", add(t_ap, t_lrl)),
        ("paired mAP", p_ap),
        ("paired LRL", p_lrl),
        ("paired mAP + LRL", add(p_ap, p_lrl)),
        (f"numpy+sklearn mAP + LRL (extrapolated from {args.slow_resamples})", slow),
    ]
    single, paired = add(t_ap, t_lrl), add(p_ap, p_lrl)

    print(
        f"# bootstrap benchmark: {args.rows} x {args.labels}, {r} resamples, n_jobs={j}, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n"
    )
    print("| what | wall s | CPU s |\n|---|---:|---:|")
    for name, (w, c) in rows:
        print(f"| {name} | {w:.3f} | {c:.3f} |")
    print()
    print(
        f"speed-up over numpy+sklearn (mAP + LRL): wall {slow[0] / single[0]:.0f}x, CPU {slow[1] / single[1]:.0f}x"
    )
    print(
        f"paired / single (mAP + LRL): wall {paired[0] / single[0]:.2f}x, CPU {paired[1] / single[1]:.2f}x "
        f"(CPU: mAP {p_ap[1] / t_ap[1]:.2f}x, LRL {p_lrl[1] / t_lrl[1]:.2f}x)"
    )
    print_memory(args)
    print()
    print_report_row(y, a, r, args.repeats)


if __name__ == "__main__":
    main()
