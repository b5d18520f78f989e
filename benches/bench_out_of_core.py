"""Out-of-core scoring against the I/O floor: N rows x 15 float32 scores with labels in
Parquet shards, scored by ``toxeval score DIR --dataset DIR --memory-limit 2GB``.

    python benches/bench_out_of_core.py [--sizes 1e6,1e7,1e8] [--memory-limit 2GB]
        [--rows-per-shard 1000000] [--data-dir DIR] [--out bench-results/] [--clean]

1. Generates (once per N; reused while N and the seed match) in ``--data-dir``/``N``/ one
   table in shards of ``--rows-per-shard`` rows: ``id`` (text), ``labels`` (a K-vector of
   0/1 int8, each category positive with probability 0.10) and one float32 score column
   per category of toxeval-15 (uniform, shifted up by 0.3 on positives, so AP is
   neither 0 nor 1), uncompressed, row groups of 262,144 rows.
2. The **I/O floor**: a fresh interpreter reads the same columns of the same shards with
   ``ParquetFile.iter_batches`` and sums every column (the labels' values, the scores,
   the ids' byte lengths). Run before and after the scoring; the faster counts.
3. **Scoring**: ``python -m toxeval score DIR --dataset DIR --memory-limit LIMIT
   --bootstrap 0 -q --out OUT`` in a fresh process; wall time and that child's peak RSS
   (``os.wait4``), and from ``results.json`` which AP/ROC AUC path ran.
4. The load average (1 minute) is read before each timing and printed beside it: the
   machine's 2 cores may be shared, which inflates both times.

Writes ``bench_out_of_core.json``, ``.md`` (the table of docs/performance.md) and
``bench_out_of_core.png`` (time and peak RSS against N; needs matplotlib) into ``--out``.
Targets: peak RSS <= 2 GB at any N, wall time <= 3x the I/O floor.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

K = 15
SEED = 0
ROW_GROUP = 262_144
RSS_TARGET = 2 * 10**9
TIME_TARGET = 3.0

FLOOR = r"""
import sys, pyarrow.parquet as pq, pyarrow.compute as pc, pyarrow as pa
from pathlib import Path
total = 0.0
for p in sorted(Path(sys.argv[1]).glob("*.parquet")):
    with open(p, "rb") as f:
        for b in pq.ParquetFile(f).iter_batches(batch_size=262144):
            for name, col in zip(b.schema.names, b.columns):
                if name == "id":
                    total += pc.sum(pc.binary_length(col)).as_py() or 0
                elif name == "labels":
                    total += pc.sum(pc.list_flatten(col)).as_py() or 0
                else:
                    total += pc.sum(col).as_py() or 0
print(total)
"""


def _categories() -> list[str]:
    from toxeval.taxonomy import load_taxonomy

    return list(load_taxonomy("toxeval-15").ids)


def generate(folder: Path, n: int, rows_per_shard: int) -> None:
    """The shards of N rows in ``folder`` (skipped when a marker says they are there)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    marker = folder / "_generated.json"
    want = {"n": n, "seed": SEED, "rows_per_shard": rows_per_shard}
    if marker.exists() and json.loads(marker.read_text()) == want:
        return
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    cats = _categories()
    rng = np.random.default_rng(SEED)
    for i, start in enumerate(range(0, n, rows_per_shard)):
        m = min(rows_per_shard, n - start)
        y = (rng.random((m, K), dtype=np.float32) < 0.10).astype(np.int8)
        s = rng.random((m, K), dtype=np.float32) * np.float32(0.7) + y * np.float32(0.3)
        ids = pa.array(np.char.add("row-", np.arange(start, start + m).astype(str)))
        labels = pa.FixedSizeListArray.from_arrays(pa.array(y.ravel()), K)
        cols = {"id": ids, "labels": labels.cast(pa.list_(pa.int8()))}
        cols.update({c: pa.array(s[:, j]) for j, c in enumerate(cats)})
        pq.write_table(
            pa.table(cols),
            folder / f"part-{i:05d}.parquet",
            row_group_size=ROW_GROUP,
            compression="none",
        )
    marker.write_text(json.dumps(want))


def _timed(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {code}: {err.strip()[-2000:]}")
    return {
        "wall_s": round(wall, 3),
        "peak_rss_bytes": usage.ru_maxrss * 1024,
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
        "load_1min_before": round(load, 2),
        "stdout": out.strip()[-500:],
    }


def run_one(folder: Path, n: int, limit: str, out: Path) -> dict[str, Any]:
    py = sys.executable
    env = dict(os.environ)
    floor1 = _timed([py, "-c", FLOOR, str(folder)], env)
    res_dir = Path(tempfile.mkdtemp(prefix=f"ooc-{n}-", dir=out))
    cmd = [py, "-m", "toxeval", "score", str(folder), "--dataset", str(folder)]
    cmd += ["--memory-limit", limit, "--bootstrap", "0", "-q", "--out", str(res_dir / "r")]
    scored = _timed(cmd, env)
    floor2 = _timed([py, "-c", FLOOR, str(folder)], env)
    results = json.loads((res_dir / "r" / "results.json").read_text())
    shutil.rmtree(res_dir, ignore_errors=True)
    floor = min(floor1, floor2, key=lambda r: r["wall_s"])
    info = results["config"]["out_of_core"]
    return {
        "n": n,
        "disk_bytes": sum(p.stat().st_size for p in folder.glob("*.parquet")),
        "scoring": scored,
        "floor": floor,
        "floor_runs": [floor1, floor2],
        "ratio": round(scored["wall_s"] / floor["wall_s"], 2),
        "map": results["figures"]["map"],
        "path": info["path"],
        "ooc": {k: v for k, v in info.items() if k not in ("reason",)},
    }


def _fmt_n(n: int) -> str:
    e = round(float(np.log10(n)))
    return f"10^{e}" if n >= 10 and 10**e == n else str(n)


def markdown(rows: list[dict[str, Any]], limit: str) -> str:
    lines = [
        f"| N rows (x 15) | data on disk | scoring wall (load) | I/O floor wall (load) | "
        f"ratio (target <= {TIME_TARGET:g}x) | peak RSS (target <= 2 GB) | AP/AUC path | mAP |",
        "|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        s, f = r["scoring"], r["floor"]
        path = r["path"]
        if path == "range partitions":
            path += f" ({r['ooc'].get('ranges_per_label')}/label)"
        ok_t = "PASS" if r["ratio"] <= TIME_TARGET else "FAIL"
        ok_m = "PASS" if s["peak_rss_bytes"] <= RSS_TARGET else "FAIL"
        lines.append(
            f"| {_fmt_n(r['n'])} | {r['disk_bytes'] / 1e9:.2f} GB | {s['wall_s']:.1f} s "
            f"({s['load_1min_before']:.1f}) | {f['wall_s']:.1f} s ({f['load_1min_before']:.1f}) | "
            f"{r['ratio']:.2f}x {ok_t} | {s['peak_rss_bytes'] / 1e9:.2f} GB {ok_m} | {path} | "
            f"{r['map']:.4f} |"
        )
    lines.append("")
    lines.append(
        f"`--memory-limit {limit}`; load = 1-minute load average before the run (2 cores)."
    )
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ns = [r["n"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.loglog(ns, [r["scoring"]["wall_s"] for r in rows], "o-", label="toxeval score (out of core)")
    a.loglog(ns, [r["floor"]["wall_s"] for r in rows], "s--", label="I/O floor (read + sum)")
    a.loglog(ns, [3 * r["floor"]["wall_s"] for r in rows], ":", color="grey", label="3x floor")
    a.set_xlabel("rows (x 15 float32 scores)")
    a.set_ylabel("wall time (s)")
    a.legend()
    a.grid(True, which="both", alpha=0.3)
    b.semilogx(ns, [r["scoring"]["peak_rss_bytes"] / 1e9 for r in rows], "o-", label="scoring")
    b.semilogx(ns, [r["floor"]["peak_rss_bytes"] / 1e9 for r in rows], "s--", label="I/O floor")
    b.axhline(2.0, color="grey", linestyle=":", label="2 GB target")
    b.set_xlabel("rows (x 15 float32 scores)")
    b.set_ylabel("peak RSS (GB)")
    b.set_ylim(bottom=0)
    b.legend()
    b.grid(True, which="both", alpha=0.3)
    fig.suptitle("toxeval score out of core, --memory-limit 2GB, 2 shared cores")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1e6,1e7")
    ap.add_argument("--memory-limit", default="2GB")
    ap.add_argument("--rows-per-shard", type=int, default=1_000_000)
    ap.add_argument("--data-dir", default=None, help="default: <out>/ooc-data")
    ap.add_argument("--out", default="bench-results")
    ap.add_argument("--clean", action="store_true", help="remove each N's shards after its run")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(args.data_dir) if args.data_dir else out / "ooc-data"
    sizes = [int(float(x)) for x in args.sizes.split(",") if x]
    rows: list[dict[str, Any]] = []
    for n in sizes:
        folder = data / str(n)
        t0 = time.perf_counter()
        generate(folder, n, args.rows_per_shard)
        print(f"N={n}: data ready in {time.perf_counter() - t0:.1f} s", flush=True)
        r = run_one(folder, n, args.memory_limit, out)
        rows.append(r)
        print(
            f"N={n}: scoring {r['scoring']['wall_s']:.1f} s (load {r['scoring']['load_1min_before']}), "
            f"floor {r['floor']['wall_s']:.1f} s, ratio {r['ratio']}x, "
            f"peak RSS {r['scoring']['peak_rss_bytes'] / 1e9:.2f} GB, path {r['path']}",
            flush=True,
        )
        (out / "bench_out_of_core.json").write_text(json.dumps(rows, indent=1))
        if args.clean:
            shutil.rmtree(folder, ignore_errors=True)
    md = markdown(rows, args.memory_limit)
    (out / "bench_out_of_core.md").write_text(md)
    plotted = plot(rows, out / "bench_out_of_core.png")
    print(md)
    if plotted:
        print(f"plot: {out / 'bench_out_of_core.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
