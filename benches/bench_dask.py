"""toxeval.dask against the single-process report: N rows x 15 float32 scores with
0/1 labels in Parquet shards, on a local cluster of 1 and 2 worker processes.

    python benches/bench_dask.py [--sizes 1e6,1e7] [--workers 1,2]
        [--rows-per-shard 1000000] [--data-dir DIR] [--out bench-results/]

1. Generates (once per N, in ``--data-dir``/``N``/) shards of ``--rows-per-shard``
   rows: ``y0..y14`` (int8, positive with probability 0.10) and ``s0..s14`` (float32,
   uniform, shifted up by 0.3 on positives; continuous: nearly every score distinct).
2. **In memory**: reads every shard with pyarrow into two (N, 15) arrays and calls
   ``toxeval.metrics.multilabel_report`` once (read and report timed apart); then
   ``MultilabelAccumulator`` fed shard by shard (the one-machine streaming state).
   Peak RSS growth of this process over each step (``VmHWM`` after a reset through
   ``/proc/self/clear_refs``).
3. **Dask**: ``LocalCluster(n_workers=W, threads_per_worker=1, processes=True)`` on
   127.0.0.1; ``dd.read_parquet`` of the shards and
   ``toxeval.dask.multilabel_report(df[y], df[s])`` (read included), timed; each
   worker's peak RSS over the call (reset first), and the client's growth.
4. Each result must equal the in-memory report (AP per label to 1e-12 relative,
   supports exactly); the load average (1 minute) is printed beside each timing: the
   machine's cores may be shared, which inflates every time.
   ``multilabel_report`` chooses its path from a first pass (range partitions for
   these continuous scores; ``--memory-limit`` sets the per-worker target, default
   2 GiB): the path, ranges per label and passes are recorded. With ``--tree``: also
   the tree merge of runs (``toxeval.dask.accumulate(...).compute()``), same peaks.
5. With ``--ranges R``: also ``toxeval.dask.average_precision_score(average=None)``
   by the tree merge and with ``n_ranges=R`` (time, worker and client peaks).
6. ``--no-accumulator`` skips the single-process ``MultilabelAccumulator`` step;
   ``--no-in-memory`` skips the in-memory report too (for N too large for one
   process: then nothing checks the result against it).
7. ``--ooc``: the shards are **the out-of-core benchmark's** (``bench_out_of_core.py``'s
   layout: ``id``, a ``labels`` K-vector, one float32 column per category; generated
   by its code into ``--data-dir``/``N``/ when absent), and in the same run, before
   the Dask calls, ``toxeval score DIR --dataset DIR --memory-limit LIMIT --bootstrap
   0`` (out-of-core scoring, the CLI in a fresh process) is timed on them: the table
   gives each Dask time as a ratio to it, and each Dask result's AP and ROC AUC per
   label must equal the out-of-core run's (1e-12 relative). Dask reads the shards with
   ``dd.from_map`` (pyarrow per shard, the labels vector into 15 int8 columns); no
   in-memory report is made.
8. ``--plot A.json,B.json`` draws ``bench_dask.png`` (time and worker peak against N,
   per worker count) from the JSON of earlier runs, and exits.

Writes ``bench_dask.json`` and ``bench_dask.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

K = 15
RANGES = 0  # --ranges: also time average_precision_score(average=None), tree vs ranges
OPTS: dict[str, Any] = {
    "tree": False,
    "accumulator": True,
    "in_memory": True,
    "memory_limit": None,
    "ooc": False,
}


def _hwm_reset() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _hwm() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def make_shards(folder: Path, n: int, rows_per_shard: int, seed: int = 0) -> list[Path]:
    """The shards of N rows (reused when present)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    done = folder / "DONE"
    paths = []
    rng = np.random.default_rng(seed)
    for i, start in enumerate(range(0, n, rows_per_shard)):
        path = folder / f"part-{i:05d}.parquet"
        paths.append(path)
        if done.exists():
            continue
        m = min(rows_per_shard, n - start)
        y = (rng.random((m, K)) < 0.10).astype(np.int8)
        s = (rng.random((m, K), dtype=np.float32) * np.float32(0.7) + y * np.float32(0.3)).astype(
            np.float32
        )
        cols = {f"y{j}": y[:, j] for j in range(K)} | {f"s{j}": s[:, j] for j in range(K)}
        pq.write_table(pa.table(cols), path, row_group_size=262_144, compression="none")
    done.touch()
    return paths


def in_memory(paths: list[Path]) -> dict[str, Any]:
    import pyarrow.parquet as pq
    from toxeval.metrics import multilabel_report
    from toxeval.streaming import MultilabelAccumulator

    ycols, scols = [f"y{j}" for j in range(K)], [f"s{j}" for j in range(K)]
    if not OPTS["in_memory"]:
        return {
            "report": None,
            "read_s": None,
            "report_s": None,
            "report_peak_bytes": None,
            "accumulator_s": None,
            "accumulator_peak_bytes": None,
            "accumulator_state_bytes": None,
            "load": _load(),
        }
    base = _rss()
    _hwm_reset()
    t0 = time.perf_counter()
    tables = [pq.read_table(p, columns=ycols + scols) for p in paths]
    y = np.concatenate([np.column_stack([t[c].to_numpy() for c in ycols]) for t in tables])
    s = np.concatenate([np.column_stack([t[c].to_numpy() for c in scols]) for t in tables])
    del tables
    t_read = time.perf_counter() - t0
    load = _load()
    t0 = time.perf_counter()
    report = multilabel_report(y, s)
    t_report = time.perf_counter() - t0
    peak = _hwm() - base
    del y, s
    out = {
        "report": report,
        "read_s": round(t_read, 3),
        "report_s": round(t_report, 3),
        "report_peak_bytes": peak,
        "accumulator_s": None,
        "accumulator_peak_bytes": None,
        "accumulator_state_bytes": None,
        "load": load,
    }
    if not OPTS["accumulator"]:
        return out
    _hwm_reset()
    base = _rss()
    t0 = time.perf_counter()
    acc = MultilabelAccumulator()
    for p in paths:
        t = pq.read_table(p, columns=ycols + scols)
        acc.update(
            np.column_stack([t[c].to_numpy() for c in ycols]),
            np.column_stack([t[c].to_numpy() for c in scols]),
        )
    streamed = acc.compute()
    t_acc = time.perf_counter() - t0
    acc_peak = _hwm() - base
    assert np.allclose(streamed["ap"], report["ap"], rtol=1e-12, atol=0)
    out.update(
        accumulator_s=round(t_acc, 3),
        accumulator_peak_bytes=acc_peak,
        accumulator_state_bytes=acc.nbytes,
    )
    return out


def _spy_plan(record: dict[str, Any]) -> None:
    """Record the range plan ``multilabel_report`` chose (ranges per label, passes)."""
    import toxeval.dask.metrics as tdm
    from toxeval.dask.ranges import ranged_report

    def spy(blocks: Any, survey: Any, plan: Any) -> Any:
        record.update(path="ranges", ranges=plan.n_ranges, passes=len(plan.passes))
        return ranged_report(blocks, survey, plan)

    tdm.ranged_report = spy  # type: ignore[assignment]


def _ooc_shard(path: str, cats: list[str]) -> Any:
    """One shard of the out-of-core bench as a pandas frame of y0..y14 (int8) and
    s0..s14 (float32); ``cats``: its score columns (runs on the workers, which do not
    import this script's neighbours)."""
    import pandas as pd
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["labels", *cats])
    y = t["labels"].combine_chunks().flatten().to_numpy().reshape(-1, K)
    cols: dict[str, Any] = {f"y{j}": y[:, j] for j in range(K)}
    cols |= {f"s{j}": t[c].to_numpy() for j, c in enumerate(cats)}
    return pd.DataFrame(cols)


def _frame(folder: Path) -> Any:
    import dask.dataframe as dd

    if not OPTS["ooc"]:
        return dd.read_parquet(str(folder))
    import functools

    import bench_out_of_core as ooc

    paths = sorted(str(p) for p in folder.glob("*.parquet"))
    return dd.from_map(functools.partial(_ooc_shard, cats=list(ooc._categories())), paths)


def ooc_cli(folder: Path, out: Path) -> dict[str, Any]:
    """Out-of-core scoring of the shards by the CLI in a fresh process (the
    out-of-core bench's own scoring step)."""
    import shutil
    import sys
    import tempfile

    import bench_out_of_core as ooc

    res = Path(tempfile.mkdtemp(prefix="ooc-", dir=out))
    cmd = [sys.executable, "-m", "toxeval", "score", str(folder), "--dataset", str(folder)]
    cmd += ["--memory-limit", OPTS["memory_limit"] or "2GB", "--bootstrap", "0", "-q"]
    cmd += ["--out", str(res / "r")]
    timed = ooc._timed(cmd, dict(os.environ, TOXEVAL_TIMINGS="1"))
    results = json.loads((res / "r" / "results.json").read_text())
    shutil.rmtree(res, ignore_errors=True)
    per = results["per_category"]
    return {
        "seconds": timed["wall_s"],
        "cpu_s": timed["cpu_s"],
        "peak_rss_bytes": timed["peak_rss_bytes"],
        "load": timed["load_1min_before"],
        "steps_cpu": timed["steps_cpu"],
        "ap": [c["ap"] for c in per],
        "roc_auc": [c["roc_auc"] for c in per],
        "support": [c["support"] for c in per],
        "path": results["config"]["out_of_core"]["path"],
    }


def on_dask(folder: Path, workers: int, want: Any) -> dict[str, Any]:
    import toxeval.dask as td
    from distributed import Client, LocalCluster

    ycols, scols = [f"y{j}" for j in range(K)], [f"s{j}" for j in range(K)]
    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            memory_limit=0,
            silence_logs=40,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(_hwm_reset)
        base = client.run(_rss)
        _hwm_reset()
        client_base = _rss()
        load = _load()
        plan: dict[str, Any] = {"path": "tree"}
        _spy_plan(plan)
        t0 = time.perf_counter()
        df = _frame(folder)
        report = td.multilabel_report(df[ycols], df[scols], memory_limit=OPTS["memory_limit"])
        seconds = time.perf_counter() - t0
        peaks = client.run(_hwm)
        client_peak = _hwm() - client_base
        tree: dict[str, Any] = {}
        if OPTS["tree"]:
            client.run(_hwm_reset)
            _hwm_reset()
            c0 = _rss()
            t0 = time.perf_counter()
            tree_report = td.accumulate(df[ycols], df[scols]).compute()
            tree = {
                "seconds": round(time.perf_counter() - t0, 3),
                "worker_peak_bytes": max(client.run(_hwm).values()),
                "client_peak_growth_bytes": _hwm() - c0,
                "load": _load(),
            }
            if want is not None:
                np.testing.assert_allclose(tree_report["ap"], want["ap"], rtol=1e-12, atol=0)
            del tree_report
        ap_runs = {}
        for label, n_ranges in (("tree", None), (f"{RANGES} ranges", RANGES)):
            if not RANGES:
                break
            client.run(_hwm_reset)
            _hwm_reset()
            c0 = _rss()
            t0 = time.perf_counter()
            ap = td.average_precision_score(df[ycols], df[scols], average=None, n_ranges=n_ranges)
            ap_runs[label] = {
                "seconds": round(time.perf_counter() - t0, 3),
                "worker_peak_bytes": max(client.run(_hwm).values()),
                "client_peak_growth_bytes": _hwm() - c0,
            }
            if want is not None:
                np.testing.assert_allclose(ap, want["ap"], rtol=1e-12, atol=0)
    if want is not None and OPTS["ooc"]:
        for key in ("ap", "roc_auc"):
            np.testing.assert_allclose(report[key], want[key], rtol=1e-12, atol=0)
        assert np.array_equal(report["support"], want["support"])
    elif want is not None:
        for key in ("ap", "roc_auc", "f1", "ap_micro", "roc_auc_micro", "label_ranking_loss"):
            np.testing.assert_allclose(report[key], want[key], rtol=1e-12, atol=0)
        assert np.array_equal(report["support"], want["support"])
    return {
        "workers": workers,
        "plan": plan,
        "tree": tree,
        "seconds": round(seconds, 3),
        "worker_peak_bytes": max(peaks.values()),
        "worker_peak_growth_bytes": max(peaks[a] - base[a] for a in peaks),
        "client_peak_growth_bytes": client_peak,
        "load": load,
        "average_precision_score": ap_runs,
    }


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Wall time and the larger worker's peak RSS against N, one line per worker count
    (the range path as chosen; the tree merge where it was timed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for w in sorted({r["workers"] for r in rows}):
        rs = sorted((r for r in rows if r["workers"] == w), key=lambda r: r["n"])
        ns = [r["n"] for r in rs]
        a.loglog(ns, [r["seconds"] for r in rs], "o-", label=f"multilabel_report, {w} worker(s)")
        b.semilogx(ns, [r["worker_peak_bytes"] / 1e9 for r in rs], "o-", label=f"{w} worker(s)")
        tr = [r for r in rs if r.get("tree")]
        if tr:
            a.loglog(
                [r["n"] for r in tr],
                [r["tree"]["seconds"] for r in tr],
                "x:",
                label=f"tree merge, {w} worker(s)",
            )
    mem = sorted((r for r in rows if r.get("mem_report_s") is not None), key=lambda r: r["n"])
    if mem:
        a.loglog(
            [r["n"] for r in mem],
            [r["mem_read_s"] + r["mem_report_s"] for r in mem],
            "s--",
            color="grey",
            label="in memory (read + report)",
        )
    ooc = sorted({r["n"]: r for r in rows if r.get("ooc")}.values(), key=lambda r: r["n"])
    if ooc:
        a.loglog(
            [r["n"] for r in ooc],
            [r["ooc"]["seconds"] for r in ooc],
            "s--",
            color="black",
            label="out of core (toxeval score), same shards",
        )
    a.set_xlabel("rows (x 15 float32 continuous scores)")
    a.set_ylabel("wall time (s)")
    a.legend(fontsize=8)
    a.grid(True, which="both", alpha=0.3)
    b.axhline(2.0, color="grey", linestyle=":", label="2 GB target")
    b.set_xlabel("rows (x 15 float32 continuous scores)")
    b.set_ylabel("larger worker's peak RSS (GB)")
    b.set_ylim(bottom=0)
    b.legend(fontsize=8)
    b.grid(True, which="both", alpha=0.3)
    fig.suptitle("toxeval.dask.multilabel_report on a LocalCluster, 2 shared cores")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1e6,1e7")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--rows-per-shard", type=int, default=1_000_000)
    ap.add_argument("--data-dir", default="bench-data/dask")
    ap.add_argument("--out", default="bench-results")
    ap.add_argument("--ranges", type=int, default=0)
    ap.add_argument("--tree", action="store_true", help="also time the tree merge of runs")
    ap.add_argument("--no-accumulator", action="store_true")
    ap.add_argument("--memory-limit", default=None, help="per-worker target (default 2 GiB)")
    ap.add_argument("--no-in-memory", action="store_true")
    ap.add_argument(
        "--ooc", action="store_true", help="the out-of-core bench's shards, timed against it"
    )
    ap.add_argument("--plot", default=None, help="JSON files of earlier runs, comma-separated")
    args = ap.parse_args()
    if args.plot:
        rows = [r for f in args.plot.split(",") for r in json.loads(Path(f).read_text())]
        Path(args.out).mkdir(parents=True, exist_ok=True)
        plot(rows, Path(args.out) / "bench_dask.png")
        return
    global RANGES
    RANGES = args.ranges
    OPTS.update(
        tree=args.tree,
        accumulator=not args.no_accumulator,
        in_memory=not args.no_in_memory,
        memory_limit=args.memory_limit,
        ooc=args.ooc,
    )
    sizes = [int(float(x)) for x in args.sizes.split(",")]
    workers = [int(x) for x in args.workers.split(",")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sizes:
        folder = Path(args.data_dir) / str(n)
        ooc: dict[str, Any] | None = None
        if args.ooc:
            import bench_out_of_core

            bench_out_of_core.generate(folder, n, args.rows_per_shard)
            OPTS["in_memory"] = False
            mem = in_memory([])
            ooc = ooc_cli(folder, out)
            want: Any = {k: np.asarray(ooc[k]) for k in ("ap", "roc_auc", "support")}
            print(f"N={n:.0e} out of core: {ooc}", flush=True)
        else:
            paths = make_shards(folder, n, args.rows_per_shard)
            mem = in_memory(paths)
            want = mem.pop("report")
            print(f"N={n:.0e} in memory: {mem}", flush=True)
        for w in workers:
            d = on_dask(folder, w, want)
            print(f"N={n:.0e} dask {w} workers: {d}", flush=True)
            mem.pop("report", None)
            row = {"n": n, **{f"mem_{k}": v for k, v in mem.items()}, **d}
            if ooc is not None:
                row["ooc"] = {k: v for k, v in ooc.items() if k not in ("ap", "roc_auc", "support")}
            rows.append(row)
    (out / "bench_dask.json").write_text(json.dumps(rows, indent=1))
    mib = 1 << 20
    lines = [
        "| N | workers | path | Dask (s) | worker peak (MiB) | client growth (MiB) "
        "| tree merge (s / worker peak MiB) | in-memory read + report (s) "
        "| report peak (MiB) | accumulator (s) | out of core (s, load) | Dask / out of core "
        "| load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        plan = r["plan"]
        path = (
            f"{plan['ranges']} ranges, {plan['passes']} pass(es)"
            if plan["path"] == "ranges"
            else "tree"
        )
        tree = (
            f"{r['tree']['seconds']:.2f} / {r['tree']['worker_peak_bytes'] / mib:.0f}"
            if r["tree"]
            else "-"
        )
        acc = "-" if r["mem_accumulator_s"] is None else f"{r['mem_accumulator_s']:.2f}"
        mem = "-" if r["mem_read_s"] is None else f"{r['mem_read_s']:.2f} + {r['mem_report_s']:.2f}"
        mem_peak = (
            "-" if r["mem_report_peak_bytes"] is None else f"{r['mem_report_peak_bytes'] / mib:.0f}"
        )
        o = r.get("ooc")
        ooc_cell = "-" if o is None else f"{o['seconds']:.2f} ({o['load']})"
        ratio = "-" if o is None else f"{r['seconds'] / o['seconds']:.2f}x"
        lines.append(
            f"| {r['n']:.0e} | {r['workers']} | {path} | {r['seconds']:.2f} | "
            f"{r['worker_peak_bytes'] / mib:.0f} | {r['client_peak_growth_bytes'] / mib:.0f} | "
            f"{tree} | {mem} | {mem_peak} | {acc} | {ooc_cell} | {ratio} | "
            f"{r['mem_load']} / {r['load']} |"
        )
    (out / "bench_dask.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
