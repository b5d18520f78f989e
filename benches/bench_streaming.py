"""MultilabelAccumulator: many small updates, then compute(), against one
multilabel_report on the concatenated matrix (same run, same arrays).

Run: python benches/bench_streaming.py [--updates 1000] [--rows 1000] [--labels 15]
[--repeats 3] [--variants continuous,ties] [--dtype float32] [--out DIR]

Per variant (continuous U(0, 1) scores; ties = rounded to 2 decimals), the values are
checked first (every key of the report, rtol 1e-12), then timed (median of
``--repeats``, wall and CPU):

* reference: ``multilabel_report`` on the concatenated (updates x rows) x labels matrix;
* accumulator: ``updates`` calls of ``update`` with (rows x labels) chunks, then
  ``compute()`` (the whole stream, a fresh accumulator each repeat).

Target: accumulator <= 2x the reference. State size: ``nbytes`` after the updates (runs
plus the raw buffer not yet sorted), after ``compute()`` (runs only), the pickled bytes
(what a DDP ``all_gather_object`` moves) and the saved NPZ, against keeping every
score and label as torchmetrics' exact ``MultilabelAveragePrecision`` does (its
``preds`` float32 and ``target`` int64 lists: 12 bytes a cell; analytic, measured only
when torchmetrics is installed). The load average is printed with the timings: the
machine's cores may be shared, and a load above the core count inflates both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from toxeval.metrics import multilabel_report
from toxeval.streaming import MultilabelAccumulator

TARGET = 2.0
TORCHMETRICS_BYTES_PER_CELL = 4 + 8  # float32 preds + int64 target, every cell kept
INT_KEYS = (
    "n_samples",
    "n_labels",
    "n_rows_without_known_label",
    "support",
    "n_negative",
    "n_unknown",
)


def timed(fun: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """Median wall and CPU seconds of ``repeats`` calls, and the last result."""
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        out = fun()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), out


def equal_reports(a: dict[str, Any], b: dict[str, Any]) -> bool:
    for key in a:
        x, y = np.asarray(a[key], dtype=float), np.asarray(b[key], dtype=float)
        if key in INT_KEYS:
            if not np.array_equal(x, y):
                return False
        elif not np.allclose(x, y, rtol=1e-12, atol=0, equal_nan=True):
            return False
    return True


def torchmetrics_bytes(y: np.ndarray, s: np.ndarray, updates: int) -> int | None:
    """Bytes torchmetrics' exact MultilabelAveragePrecision holds after the same
    updates, when torchmetrics is installed (None otherwise)."""
    try:
        import torch
        from torchmetrics.classification import MultilabelAveragePrecision
    except ImportError:
        return None
    metric = MultilabelAveragePrecision(num_labels=s.shape[1], thresholds=None)
    rows = s.shape[0] // updates
    for i in range(updates):
        sl = slice(i * rows, (i + 1) * rows)
        metric.update(torch.from_numpy(s[sl]), torch.from_numpy(y[sl]))
    held = [t for name in ("preds", "target") for t in getattr(metric, name)]
    return int(sum(t.element_size() * t.nelement() for t in held))


def run_variant(
    name: str, y: np.ndarray, s: np.ndarray, args: argparse.Namespace
) -> dict[str, Any]:
    rows = args.rows

    def stream() -> tuple[MultilabelAccumulator, int]:
        acc = MultilabelAccumulator(args.labels)
        for i in range(args.updates):
            acc.update(y[i * rows : (i + 1) * rows], s[i * rows : (i + 1) * rows])
        return acc, acc.nbytes

    def stream_and_compute() -> dict[str, Any]:
        acc, _ = stream()
        return acc.compute()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = multilabel_report(y, s)
        got = stream_and_compute()
        if not equal_reports(got, want):
            return {"variant": name, "check": "MISMATCH"}
        load_before = os.getloadavg()
        ref_wall, ref_cpu, _ = timed(lambda: multilabel_report(y, s), args.repeats)
        acc_wall, acc_cpu, _ = timed(stream_and_compute, args.repeats)
        upd_wall, _, (acc, buffered) = timed(stream, 1)
        compute_wall, _, _ = timed(acc.compute, 1)
        load_after = os.getloadavg()
    pickled = len(pickle.dumps(acc))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.npz"
        acc.save(path)
        saved = path.stat().st_size
    cells = y.size
    return {
        "variant": name,
        "check": "equal",
        "reference_wall_s": ref_wall,
        "reference_cpu_s": ref_cpu,
        "accumulator_wall_s": acc_wall,
        "accumulator_cpu_s": acc_cpu,
        "updates_only_wall_s": upd_wall,
        "compute_only_wall_s": compute_wall,
        "ratio_wall": acc_wall / ref_wall,
        "target": TARGET,
        "pass": acc_wall / ref_wall <= TARGET,
        "distinct_scores_per_label": float(np.mean([len(r) for r in acc.label_runs()])),
        "nbytes_after_updates": buffered,
        "nbytes_after_compute": acc.nbytes,
        "pickled_bytes": pickled,
        "saved_npz_bytes": saved,
        "all_scores_bytes_analytic": cells * TORCHMETRICS_BYTES_PER_CELL,
        "torchmetrics_bytes_measured": torchmetrics_bytes(y, s, args.updates),
        "loadavg_1min_before_after": [load_before[0], load_after[0]],
    }


def markdown(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    n = args.updates * args.rows
    lines = [
        f"# MultilabelAccumulator: {args.updates} updates of {args.rows} x {args.labels} "
        f"({args.dtype}), then compute(), vs one multilabel_report on {n:,} x {args.labels}",
        "",
        "| variant | check | report (s) | accumulator (s) | ratio | target | updates / compute (s) "
        "| load 1 min | state after updates | after compute | pickled | NPZ | all scores kept |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    mb = 1e6
    for r in results:
        if r["check"] != "equal":
            lines.append(f"| {r['variant']} | {r['check']} |" + " |" * 11)
            continue
        kept = r["torchmetrics_bytes_measured"] or r["all_scores_bytes_analytic"]
        how = "measured" if r["torchmetrics_bytes_measured"] else "analytic"
        lines.append(
            f"| {r['variant']} | equal | {r['reference_wall_s']:.3f} | "
            f"{r['accumulator_wall_s']:.3f} | {r['ratio_wall']:.2f}× | "
            f"≤ {r['target']:.0f}× {'PASS' if r['pass'] else 'MISS'} | "
            f"{r['updates_only_wall_s']:.3f} / {r['compute_only_wall_s']:.3f} | "
            f"{r['loadavg_1min_before_after'][0]:.1f}–{r['loadavg_1min_before_after'][1]:.1f} | "
            f"{r['nbytes_after_updates'] / mb:.1f} MB | {r['nbytes_after_compute'] / mb:.1f} MB | "
            f"{r['pickled_bytes'] / mb:.1f} MB | {r['saved_npz_bytes'] / mb:.1f} MB | "
            f"{kept / mb:.1f} MB ({how}) |"
        )
    lines += [
        "",
        f"CPU: {os.cpu_count()} cores; times are medians of {args.repeats} (wall). "
        "'all scores kept' is torchmetrics' exact MultilabelAveragePrecision state "
        f"({TORCHMETRICS_BYTES_PER_CELL} bytes a cell: float32 preds, int64 target).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--updates", type=int, default=1000)
    p.add_argument("--rows", type=int, default=1000)
    p.add_argument("--labels", type=int, default=15)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--variants", default="continuous,ties")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    n = args.updates * args.rows
    y = (rng.random((n, args.labels)) < 0.1).astype(np.int64)
    base = rng.random((n, args.labels))
    results = []
    for name in args.variants.split(","):
        scores = np.round(base, 2) if name == "ties" else base
        results.append(run_variant(name, y, scores.astype(args.dtype), args))
    md = markdown(results, args)
    print(md)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_streaming.json").write_text(json.dumps(results, indent=2))
        (args.out / "bench_streaming.md").write_text(md)
    return results


if __name__ == "__main__":
    main()
