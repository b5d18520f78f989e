"""Time ``toxeval score`` end to end on a 1,000,000-row prediction dump (JSONL and Parquet).

    python benches/bench_end_to_end.py [--rows 1M] [--formats jsonl,parquet] [--out bench-results/]
1. Generates (once; reused while rows/seed match) in ``--data-dir``:
   * ``dataset.jsonl`` / ``dataset.parquet``: rows ``{"id", "text", "labels": [category ids]}``
     with each of the 15 categories present with probability 0.10;
   * ``predictions.jsonl`` / ``predictions.parquet``: rows ``{"id", "scores": {category: float}}``
     (Parquet: ``scores`` is a struct column with one float64 field per category), scores
     correlated with the labels and rounded to 6 decimals, rows in a shuffled order.

2. Runs ``toxeval score PRED --dataset DATASET --out DIR --bootstrap N`` as a subprocess
   (``$TOXEVAL_BENCH_CLI`` may replace ``toxeval``), each format with the dataset of the
   same format, ``--repeats`` times, and records the wall time and the child's own peak
   RSS (``os.wait4``; ``getrusage(RUSAGE_CHILDREN)``, recorded too, is a running maximum
   over every child reaped so far).

   The child runs with ``TOXEVAL_TIMINGS=1`` (the CLI prints each step's wall and CPU
   time on stderr); the report splits each run into **reading + joining** (both files,
   id join, score matrix), **metrics** (the native ``multilabel_report``), **bootstrap
   intervals** (``--bootstrap 0``, the default here, turns them off), **other steps**
   (importing the scoring modules, summarising, writing the outputs) and **start-up +
   exit** (the rest of the wall time).

3. Times the reference: ``toxeval.metrics.multilabel_report`` on the same arrays (the
   labels and scores the CLI scores, in dataset order, all labels known, threshold 0.5),
   in a fresh child interpreter (``--reference``; the arrays are built before the clock
   starts), median of ``--repeats`` calls, in the same bench run.

4. Writes ``bench_end_to_end.json`` and ``.md`` with PASS/FAIL against the targets:
   median wall JSONL <= 1.8 s and <= 4x the reference, Parquet <= 1.2 s and <= 2.5x
   the reference, peak RSS <= 1 GiB, and the split of the median run.

If ``toxeval score`` is not available (the CLI is not built yet) the command prints a SKIP
message and exits 0 without generating anything (``--generate-only`` generates anyway).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

CATEGORIES: tuple[str, ...] = (
    "hate",
    "harassment",
    "violence",
    "self_harm",
    "sexual",
    "sexual_minors",
    "weapons",
    "drugs",
    "fraud",
    "cybercrime",
    "privacy",
    "crime",
    "extremism",
    "misinformation",
    "profanity",
)
PREVALENCE = 0.10
TARGETS_S = {"jsonl": 1.8, "parquet": 1.2}
# the CLI run over the in-process multilabel_report on the same arrays
MAX_RATIO = {"jsonl": 4.0, "parquet": 2.5}
MAX_PEAK_BYTES = 2**30
DEFAULT_SEED = 20251130
FORMAT_VERSION = 1  # bump when the generated files change shape
TIMINGS_PREFIX = "toxeval: timings: "
CPU_TIMINGS_PREFIX = "toxeval: cpu timings: "
# How the CLI's steps (TOXEVAL_TIMINGS) are grouped in the report.
PHASES: dict[str, tuple[str, ...]] = {
    "reading + joining": ("reading dataset", "reading predictions"),
    "metrics": ("computing metrics",),
    "bootstrap intervals": ("bootstrap intervals",),
    "other steps": ("importing", "scoring", "summarising", "writing outputs"),
}


# --------------------------------------------------------------------------- data


def _arrays(rows: int, seed: int) -> tuple[np.random.Generator, np.ndarray, np.ndarray]:
    """The generator (for what is drawn next), the (N, K) labels and scores in dataset order."""
    rng = np.random.default_rng(seed)
    labels = rng.random((rows, len(CATEGORIES))) < PREVALENCE
    scores = np.round(0.75 * rng.random((rows, len(CATEGORIES))) + 0.25 * labels, 6)
    return rng, labels, scores


def reference_child(rows: int, seed: int, repeats: int) -> None:
    """(In the child.) Time ``multilabel_report`` on the bench's arrays; print JSON."""
    import warnings

    from toxeval.metrics import multilabel_report

    _, labels, scores = _arrays(rows, seed)
    y = labels.astype(np.int8)
    mask = np.ones(y.shape, dtype=bool)
    walls, cpus = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            multilabel_report(y, scores, mask=mask, threshold=0.5)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    print(json.dumps({"wall_s": walls, "cpu_s": cpus}))


def reference_time(rows: int, seed: int, repeats: int, timeout: float) -> dict[str, Any]:
    """Median wall and CPU time of ``multilabel_report`` on the same arrays, timed in a
    fresh child interpreter (so the bench process's own memory and threads stay out)."""
    proc = subprocess.run(
        [sys.executable, __file__, "--reference", "--rows", str(rows), "--seed", str(seed),
         "--repeats", str(repeats)],
        capture_output=True, text=True, timeout=timeout, check=True,
    )  # fmt: skip
    doc = json.loads(proc.stdout.strip().splitlines()[-1])
    doc["where"] = "a child interpreter, arrays built before timing"
    doc.update({f"median_{k}": statistics.median(doc[k]) for k in ("wall_s", "cpu_s")})
    return dict(doc)


def _arrow_tables(rows: int, seed: int) -> tuple[Any, Any]:
    """(dataset, predictions) as pyarrow Tables; predictions in a shuffled row order."""
    import pyarrow as pa

    rng, labels, scores = _arrays(rows, seed)
    ids = pa.array([f"item-{i:07d}" for i in range(rows)], type=pa.string())
    texts = pa.array([f"synthetic prompt number {i}" for i in range(rows)], type=pa.string())

    # labels as list<string>: offsets from the per-row counts, values from the category names
    counts = labels.sum(axis=1)
    offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    _, cols = np.nonzero(labels)  # row-major: grouped by row, categories in taxonomy order
    values = pa.DictionaryArray.from_arrays(pa.array(cols.astype(np.int32)), pa.array(CATEGORIES))
    label_lists = pa.ListArray.from_arrays(pa.array(offsets), values.cast(pa.string()))
    dataset = pa.table({"id": ids, "text": texts, "labels": label_lists})

    order = rng.permutation(rows)
    struct = pa.StructArray.from_arrays(
        [pa.array(scores[order, j]) for j in range(len(CATEGORIES))], names=list(CATEGORIES)
    )
    predictions = pa.table({"id": ids.take(pa.array(order)), "scores": struct})
    return dataset, predictions


def _write_jsonl(table: Any, path: Path) -> None:
    """JSON Lines, one object per row; polars when present (fast), else the json module."""
    tmp = path.with_suffix(".tmp")
    try:
        import polars as pl

        pl.from_arrow(table).write_ndjson(tmp)  # type: ignore[union-attr]
    except ImportError:
        with tmp.open("w", encoding="utf-8") as fh:
            for batch in table.to_batches(max_chunksize=65536):
                fh.writelines(
                    json.dumps(row, separators=(",", ":")) + "\n" for row in batch.to_pylist()
                )
    tmp.replace(path)


def generate(rows: int, data_dir: Path, seed: int, force: bool = False) -> dict[str, Path]:
    """Write the four files (skipped when a matching manifest says they are there)."""
    import pyarrow.parquet as pq

    paths = {
        "dataset.jsonl": data_dir / "dataset.jsonl",
        "dataset.parquet": data_dir / "dataset.parquet",
        "predictions.jsonl": data_dir / "predictions.jsonl",
        "predictions.parquet": data_dir / "predictions.parquet",
    }
    manifest = data_dir / "manifest.json"
    want = {"rows": rows, "seed": seed, "categories": list(CATEGORIES), "version": FORMAT_VERSION}
    if not force and manifest.exists() and all(p.exists() for p in paths.values()):
        with contextlib.suppress(ValueError):
            if json.loads(manifest.read_text()) == want:
                return paths
    data_dir.mkdir(parents=True, exist_ok=True)
    manifest.unlink(missing_ok=True)
    t0 = time.perf_counter()
    dataset, predictions = _arrow_tables(rows, seed)
    pq.write_table(dataset, paths["dataset.parquet"])
    pq.write_table(predictions, paths["predictions.parquet"])
    _write_jsonl(dataset, paths["dataset.jsonl"])
    _write_jsonl(predictions, paths["predictions.jsonl"])
    manifest.write_text(json.dumps(want) + "\n")
    print(
        f"generated {rows:,} rows in {data_dir} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr
    )
    return paths


# --------------------------------------------------------------------------- the CLI


def toxeval_command() -> list[str]:
    """How to run the CLI: $TOXEVAL_BENCH_CLI, the `toxeval` script beside this Python, on PATH, or -c."""
    override = os.environ.get("TOXEVAL_BENCH_CLI")
    if override:
        return shlex.split(override)
    beside = Path(sys.executable).with_name("toxeval")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("toxeval")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from toxeval.cli import main; sys.exit(main())"]


def score_available(cmd: list[str]) -> tuple[bool, str]:
    """True when `toxeval score --help` runs; otherwise the reason."""
    try:
        proc = subprocess.run(
            [*cmd, "score", "--help"], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{type(exc).__name__}: {exc}"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["exit code " + str(proc.returncode)])[-1]
        return False, last
    return True, ""


def run_once(cmd: list[str], timeout: float) -> dict[str, Any]:
    """Wall time and peak RSS of one child process (its own rusage via os.wait4)."""
    t0 = time.perf_counter()
    env = {**os.environ, "TOXEVAL_TIMINGS": "1"}
    # Run as an installed toxeval runs: with its modules' bytecode cached (pip compiles it
    # at install). With PYTHONDONTWRITEBYTECODE inherited, an editable checkout would
    # recompile every toxeval module on each run (~0.1 s), which no user pays.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = t0 + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.005)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: keep Popen consistent
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere
    steps, steps_cpu, other_lines = parse_timings(stderr)
    return {
        "wall_s": wall,
        # user + system CPU time of the child (all its threads): less sensitive than wall
        # time to other processes sharing the cores
        "cpu_s": float(usage.ru_utime + usage.ru_stime),
        "steps_s": steps,
        "phases_s": phases(steps, wall),
        "steps_cpu_s": steps_cpu,
        "phases_cpu_s": phases(steps_cpu, float(usage.ru_utime + usage.ru_stime)),
        "peak_rss_bytes": int(usage.ru_maxrss) * scale,
        "rusage_children_maxrss_bytes": int(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        * scale,
        "returncode": proc.returncode,
        "timed_out": wall > timeout,
        "stderr_tail": other_lines[-5:],
    }


def parse_timings(stderr: str) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """The CLI's per-step wall and CPU times (its ``toxeval: timings:`` and
    ``toxeval: cpu timings:`` lines) and the other lines."""
    found: dict[str, dict[str, float]] = {TIMINGS_PREFIX: {}, CPU_TIMINGS_PREFIX: {}}
    rest = []
    for line in stderr.strip().splitlines():
        prefix = next((p for p in found if line.startswith(p)), None)
        if prefix is not None:
            with contextlib.suppress(ValueError, AttributeError):
                doc = json.loads(line[len(prefix) :])
                found[prefix] = {str(k): float(v) for k, v in doc.items()}
                continue
        rest.append(line)
    return found[TIMINGS_PREFIX], found[CPU_TIMINGS_PREFIX], rest


def phases(steps: dict[str, float], wall: float) -> dict[str, float] | None:
    """Steps grouped as in PHASES, plus start-up + exit = wall minus every step (None when
    the CLI printed no timings)."""
    if not steps:
        return None
    out = {name: sum(steps.get(s, 0.0) for s in members) for name, members in PHASES.items()}
    grouped = {s for members in PHASES.values() for s in members}
    out["other steps"] += sum(v for k, v in steps.items() if k not in grouped)
    out["start-up + exit"] = max(0.0, wall - sum(steps.values()))
    return out


# --------------------------------------------------------------------------- report


def render(doc: dict[str, Any]) -> str:
    lines = [
        "# toxeval score end to end",
        "",
        f"{doc['rows']:,} rows x {len(CATEGORIES)} categories; command `{' '.join(doc['command'])} score PRED --dataset DATASET --out DIR --bootstrap {doc.get('bootstrap', 0)}`.",
        "",
        "| format | prediction file | runs | median wall | / reference | peak RSS (max) | wall target | ratio target | memory target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["results"]:
        lines.append(
            f"| {r['format']} | {r['predictions_mib']:.0f} MiB | {len(r['runs'])} | "
            f"{r['median_wall_s']:.2f} s | {r['ratio']:.1f}x | "
            f"{r['max_peak_rss_bytes'] / 2**30:.2f} GiB | "
            f"<= {r['target_s']:g} s **{r['wall_result']}** | "
            f"<= {r['max_ratio']:g}x **{r['ratio_result']}** | "
            f"<= 1 GiB **{r['memory_result']}** |"
        )
    ref = doc["reference"]
    lines += [
        "",
        f"Reference: `toxeval.metrics.multilabel_report` on the same arrays, timed in "
        f"{ref['where']}: median {ref['median_wall_s']:.3f} s wall "
        f"({ref['median_cpu_s']:.3f} s CPU) of {len(ref['wall_s'])} calls.",
    ]
    split = [r for r in doc["results"] if r.get("median_phases_s")]
    if split:
        names = [*PHASES, "start-up + exit"]
        lines += [
            "",
            "Where the time goes (the median run; from the CLI's `TOXEVAL_TIMINGS` step times):",
            "",
            "| format | time | total | " + " | ".join(names) + " |",
            "|---|---|---|" + "---|" * len(names),
        ]
        for r in split:
            run = r["median_run"]
            for kind, total, ph in (
                ("wall", run["wall_s"], run["phases_s"]),
                ("CPU", run["cpu_s"], run.get("phases_cpu_s")),
            ):
                if not ph:
                    continue
                lines.append(
                    f"| {r['format']} | {kind} | {total:.2f} s | "
                    + " | ".join(f"{ph.get(n, 0.0):.2f} s" for n in names)
                    + " |"
                )
        lines += [
            "",
            "reading + joining: both files read, ids joined, score matrix built; metrics: "
            "the native multilabel_report; other steps: importing the scoring modules, "
            "summarising, writing the outputs; start-up + exit: the rest. CPU is the "
            "process's user + system time over all threads (the metrics run on every core), "
            "steadier than wall time when other jobs share the machine.",
        ]
    failed = [r for r in doc["results"] if r["failed_runs"]]
    for r in failed:
        lines += [
            "",
            f"{r['format']}: {r['failed_runs']} run(s) failed; last stderr: `{' / '.join(r['last_stderr'])}`",
        ]
    return "\n".join(lines) + "\n"


def parse_rows(text: str) -> int:
    t = text.strip().lower().replace("_", "")
    mult = 1_000_000 if t.endswith("m") else 1_000 if t.endswith("k") else 1
    return int(float(t.rstrip("mk")) * mult)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rows", default="1M", help="rows in the dump (default 1M)")
    p.add_argument("--formats", default="jsonl,parquet")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", type=Path, default=Path("bench-results"))
    p.add_argument("--data-dir", type=Path, default=None, help="default: OUT/e2e-data")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument(
        "--bootstrap",
        type=int,
        default=0,
        metavar="N",
        help="resamples of the report's intervals, passed to `toxeval score --bootstrap` "
        "(default 0: the targets time scoring alone; the CLI's own default is 1000)",
    )
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per CLI run")
    p.add_argument("--regenerate", action="store_true", help="rewrite the data files")
    p.add_argument("--generate-only", action="store_true", help="write the data files and stop")
    p.add_argument("--reference", action="store_true", help=argparse.SUPPRESS)  # the child
    a = p.parse_args(argv)
    rows = parse_rows(a.rows)
    if a.reference:
        reference_child(rows, a.seed, a.repeats)
        return 0
    formats = [f.strip() for f in a.formats.split(",") if f.strip()]
    unknown = set(formats) - set(TARGETS_S)
    if unknown:
        p.error(f"unknown format(s) {sorted(unknown)}")
    data_dir = a.data_dir or a.out / "e2e-data"

    cmd = toxeval_command()
    ok, reason = score_available(cmd)
    if not ok and not a.generate_only:
        print(f"SKIP: `toxeval score` is not available ({reason}); nothing was timed.")
        return 0
    paths = generate(rows, data_dir, a.seed, force=a.regenerate)
    if a.generate_only:
        print(f"wrote {', '.join(str(x) for x in paths.values())}")
        return 0

    reference = reference_time(rows, a.seed, a.repeats, a.timeout)
    print(
        f"[reference] multilabel_report {reference['median_wall_s']:.3f} s "
        f"(CPU {reference['median_cpu_s']:.3f} s)",
        file=sys.stderr,
    )
    results = []
    for fmt in formats:
        pred, ds = paths[f"predictions.{fmt}"], paths[f"dataset.{fmt}"]
        runs = []
        for i in range(a.repeats):
            out_dir = a.out / f"e2e-run-{fmt}"
            shutil.rmtree(out_dir, ignore_errors=True)
            args = ["score", str(pred), "--dataset", str(ds), "--out", str(out_dir)]
            run = run_once([*cmd, *args, "--bootstrap", str(a.bootstrap)], a.timeout)
            runs.append(run)
            split = run["phases_s"] or {}
            split_cpu = run["phases_cpu_s"] or {}
            print(
                f"[{fmt} {i + 1}/{a.repeats}] {run['wall_s']:.2f} s (CPU {run['cpu_s']:.2f} s), peak {run['peak_rss_bytes'] / 2**20:.0f} MiB, rc={run['returncode']}"
                + "".join(
                    f", {k} {v:.2f} s (CPU {split_cpu.get(k, float('nan')):.2f} s)"
                    for k, v in split.items()
                ),
                file=sys.stderr,
            )
        good = [r for r in runs if r["returncode"] == 0 and not r["timed_out"]]
        median = statistics.median(r["wall_s"] for r in good) if good else float("nan")
        # the split of the run whose wall time is the median (the lower one of an even count)
        by_wall = sorted(good, key=lambda r: r["wall_s"])
        median_run = by_wall[(len(by_wall) - 1) // 2] if by_wall else None
        peak = max((r["peak_rss_bytes"] for r in runs), default=0)
        ratio = median / reference["median_wall_s"]
        all_good = bool(good) and len(good) == len(runs)
        results.append(
            {
                "format": fmt,
                "predictions": str(pred),
                "dataset": str(ds),
                "predictions_mib": pred.stat().st_size / 2**20,
                "runs": runs,
                "failed_runs": len(runs) - len(good),
                "last_stderr": runs[-1]["stderr_tail"] if runs else [],
                "median_wall_s": median,
                "median_phases_s": median_run["phases_s"] if median_run else None,
                "median_run": median_run,
                "max_peak_rss_bytes": peak,
                "target_s": TARGETS_S[fmt],
                "wall_result": "PASS" if all_good and median <= TARGETS_S[fmt] else "FAIL",
                "ratio": ratio,
                "max_ratio": MAX_RATIO[fmt],
                "ratio_result": "PASS" if all_good and ratio <= MAX_RATIO[fmt] else "FAIL",
                "memory_result": "PASS" if good and peak <= MAX_PEAK_BYTES else "FAIL",
            }
        )
    doc = {
        "rows": rows,
        "seed": a.seed,
        "bootstrap": a.bootstrap,
        "command": cmd,
        "reference": reference,
        "results": results,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "bench_end_to_end.json").write_text(json.dumps(doc, indent=1) + "\n")
    report = render(doc)
    (a.out / "bench_end_to_end.md").write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
