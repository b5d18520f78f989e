"""Compare two builds of the native module (e.g. two release profiles) on the metric calls.

    python benches/bench_native_ab.py A.so B.so [--n 200000] [--rounds 5] [--repeats 3]

Each build is put beside a copy of the ``toxeval`` package that this interpreter
imports (run from the repository with ``PYTHONPATH=python`` for the tree's code) as
``toxeval/_core.abi3.so``; every round runs one fresh interpreter per build, in
alternating order (A B, then B A, ...), so that a change of machine load hits both
alike. Each interpreter times every case of ``_workload.CASES`` (float64 and float32
scores, no ties, N x 15) with ``n_jobs=1`` where the call takes it and reports its
**CPU time** (``time.process_time``, all threads, min of ``--repeats``): on a shared
machine CPU time is far steadier than wall time. The table gives, per case, the median
over rounds of each build's time and the median of the per-round ratios B / A. The
values are checked identical between the builds (bit for bit) in every round.
Nothing is asserted: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
VARIANTS = ("float64", "float32")

CHILD = r"""
import json, sys, time, warnings
import numpy as np
sys.path.insert(0, sys.argv[1])
import _workload as w
import toxeval._core
n, repeats = int(sys.argv[2]), int(sys.argv[3])
out = {"module": toxeval._core.__file__, "cases": {}}
warnings.simplefilter("ignore")
def flat(v):
    if isinstance(v, dict):
        return {k: flat(x) for k, x in v.items()}
    return w.as_values(v).tolist()
for vname in sys.argv[4].split(","):
    arrays = w.make_arrays(n, w.parse_variant(vname))
    for case in w.CASES:
        fn = w.resolve_candidate(case, "toxeval", n_jobs=1 if case.takes_n_jobs else None).fn
        args = w.inputs_for(case, arrays)
        best, value = float("inf"), None
        for _ in range(repeats):
            t0 = time.process_time()
            value = fn(*args, **case.kwargs)
            best = min(best, time.process_time() - t0)
        out["cases"][f"{case.key}/{vname}"] = {"cpu_s": best, "value": flat(value)}
print(json.dumps(out))
"""


def stage(so: Path, root: Path) -> Path:
    """A directory holding the ``toxeval`` package found here, with ``so`` as its core."""
    spec = importlib.util.find_spec("toxeval")  # finds the package without importing it
    if spec is None or spec.origin is None:
        raise SystemExit("error: no toxeval package on sys.path (PYTHONPATH=python?)")
    src = Path(spec.origin).parent
    shutil.copytree(src, root / "toxeval", ignore=shutil.ignore_patterns("*.so", "*.pyd"))
    shutil.copy2(so, root / "toxeval" / "_core.abi3.so")
    return root


def run_once(pkg: Path, args: argparse.Namespace) -> dict[str, dict[str, object]]:
    cmd = [sys.executable, "-c", CHILD, str(BENCHES), str(args.n), str(args.repeats)]
    cmd.append(",".join(args.variants))
    env = {"PYTHONPATH": str(pkg), "PATH": ""}
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode:
        raise SystemExit(f"error: the run of {pkg.name} failed:\n{r.stderr}")
    data = json.loads(r.stdout)
    if not str(data["module"]).startswith(str(pkg)):
        raise SystemExit(f"error: imported {data['module']}, not the staged build in {pkg}")
    return data["cases"]  # type: ignore[no-any-return]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path, help="build A (the baseline): a _core .so file")
    ap.add_argument("b", type=Path, help="build B (the candidate)")
    ap.add_argument("--n", type=int, default=200_000, help="rows (15 labels)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3, help="calls per case per run (min)")
    ap.add_argument("--variants", type=lambda s: s.split(","), default=list(VARIANTS))
    args = ap.parse_args()
    for so in (args.a, args.b):
        if not so.is_file():
            print(f"error: {so} is not a file", file=sys.stderr)
            return 2
    times: dict[str, dict[str, list[float]]] = {"A": {}, "B": {}}
    ratios: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="toxeval-ab-") as tmp:
        pkgs = {k: stage(so, Path(tmp) / k) for k, so in (("A", args.a), ("B", args.b))}
        for rnd in range(args.rounds):
            order = ("A", "B") if rnd % 2 == 0 else ("B", "A")
            got = {k: run_once(pkgs[k], args) for k in order}
            for case, ra in got["A"].items():
                rb = got["B"][case]
                if json.dumps(ra["value"]) != json.dumps(rb["value"]):  # bitwise, NaN == NaN
                    print(f"error: {case}: values differ between the builds", file=sys.stderr)
                    return 1
                ta, tb = float(ra["cpu_s"]), float(rb["cpu_s"])  # type: ignore[arg-type]
                times["A"].setdefault(case, []).append(ta)
                times["B"].setdefault(case, []).append(tb)
                ratios.setdefault(case, []).append(tb / ta if ta > 0 else float("nan"))
            print(f"round {rnd + 1}/{args.rounds} done ({' '.join(order)})", file=sys.stderr)
    print(f"A = {args.a}\nB = {args.b}\nN = {args.n} x 15, n_jobs=1, CPU s, median of rounds\n")
    print("| case | A (ms) | B (ms) | B / A |\n|---|---:|---:|---:|")
    for case, rs in ratios.items():
        ma = statistics.median(times["A"][case]) * 1e3
        mb = statistics.median(times["B"][case]) * 1e3
        print(f"| {case} | {ma:.1f} | {mb:.1f} | {statistics.median(rs):.3f} |")
    geo = statistics.geometric_mean([statistics.median(r) for r in ratios.values()])
    print(f"\ngeometric mean of the median ratios B / A: {geo:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
