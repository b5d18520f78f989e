"""Time toxeval.metrics against scikit-learn, SciPy and torchmetrics on the same arrays.

One command, one run, every number in one JSON file and one Markdown report::

    python benches/bench_metrics.py [--sizes 10k,100k,1M] [--quick] [--out bench-results/]

What is timed is what a user calls (validation included), with warnings silenced for
every implementation alike. Before anything is timed the candidate's value is compared
with the reference (rtol 1e-9, NaN equal to NaN): a mismatch is reported as MISMATCH
and never timed. References predicted to run longer than ``--cap`` seconds (from the
previous size, linearly) are skipped and their time is extrapolated and marked.

Studies in the same run: the main grid (sizes x {float64, float32} x {ties, no ties}),
``n_jobs=1`` vs ``n_jobs=2`` at the largest size, the per-call time at N = 100
(small-input overhead), and the peak memory of each call in a fresh process
(``_memprobe.py``). The targets are judged on the float64, no-ties grid at N = 1M.
See benches/README.md for how to read the output.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _workload import (
    CASES,
    K_LABELS,
    PER_LABEL,
    PER_ROW,
    REPORT,
    VARIANTS,
    VECTOR,
    Arrays,
    Case,
    Fn,
    Variant,
    as_values,
    inputs_for,
    make_arrays,
    parse_variant,
    resolve_candidate,
    resolve_reference,
    resolve_torchmetrics,
    torchmetrics_exponent,
    values_match,
)

HERE = Path(__file__).resolve().parent
TARGET_N = 1_000_000
SMALL_N = 100
RTOL = 1e-9

# Required speedups (reference time / toxeval time) at 1M x 15 float64, no ties.
SPEEDUP_TARGETS: dict[str, float] = {
    "ap_macro": 25,
    "ap_micro": 25,
    "auc_macro": 25,
    "auc_micro": 25,
    "ap_samples": 500,
    "auc_samples": 500,
    "lrl": 150,
    "lrap": 500,
    "coverage": 10,
    "ndcg": 200,
    "kendalltau": 2,
}
REPORT_MAX_MULTIPLE = 15.0  # multilabel_report time <= 15 x one y_score.sum()
NJOBS_MIN_SPEEDUP = 1.6
MEMORY_MAX_RATIO = 0.5  # peak RSS growth <= 0.5 x y_score.nbytes (kendalltau: x and y together)


# --------------------------------------------------------------------------- timing


class CapExceeded(Exception):
    """A reference call ran past the time cap."""


@contextlib.contextmanager
def time_cap(seconds: float | None) -> Iterator[None]:
    """Raise CapExceeded in the main thread after `seconds` (SIGALRM; no-op without it)."""
    if not seconds or not hasattr(signal, "SIGALRM"):
        yield
        return

    def on_alarm(_signum: int, _frame: Any) -> None:
        raise CapExceeded

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def timed_call(
    fn: Fn, args: tuple[Any, ...], kwargs: dict[str, Any], cap: float | None = None
) -> tuple[float, Any]:
    """Wall time of one call (perf_counter), warnings silenced, under an optional cap."""
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with time_cap(cap):
            t0 = time.perf_counter()
            result = fn(*args, **kwargs)
            elapsed = time.perf_counter() - t0
    return elapsed, result


def repeats_for(first: float, max_repeats: int) -> int:
    """Median of 5 for sub-second calls, of 3 up to 5 s, a single run beyond."""
    n = 5 if first < 1.0 else 3 if first < 5.0 else 1
    return max(1, min(n, max_repeats))


def sample_more(
    fn: Fn,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    samples: list[float],
    max_repeats: int,
    cap: float | None = None,
) -> list[float]:
    while len(samples) < repeats_for(samples[0], max_repeats):
        try:
            samples.append(timed_call(fn, args, kwargs, cap)[0])
        except CapExceeded:
            break  # a repeat past the cap: the samples taken stand (the first was under it)
    return samples


# Pairs per function: enough alternating pairs to fill NJOBS_BUDGET_S, at least
# NJOBS_PAIRS_MIN, at most NJOBS_PAIRS_MAX, always odd (a median of pair ratios).
NJOBS_PAIRS_MIN = 9
NJOBS_PAIRS_MAX = 41
NJOBS_BUDGET_S = 4.0


def njobs_pairs(pair_s: float) -> int:
    """How many (f1, f2) pairs to time, given one warm-up pair's time in seconds.

    A fixed 9 pairs of label_ranking_loss at 1M (~55 ms + ~35 ms) span ~0.8 s, less
    than the seconds-long swings of a shared VM's speed, so the median of so few ratios
    moved between 1.15x and 2.0x from run to run for the same build; a time budget
    gives every function about the same span of wall time.
    """
    want = math.ceil(NJOBS_BUDGET_S / pair_s) if pair_s > 0 else NJOBS_PAIRS_MAX
    n = max(NJOBS_PAIRS_MIN, min(NJOBS_PAIRS_MAX, want))
    return n if n % 2 else n + 1


def paired_times(
    f1: Fn, f2: Fn, args: tuple[Any, ...], kwargs: dict[str, Any], pairs: int | None = None
) -> list[tuple[float, float]]:
    """Times of back-to-back (f1, f2) calls, after one warm-up call of each.

    A ratio of two separately sampled medians moves with whatever else the machine is
    doing between the two samples (on a shared VM, steal time comes and goes over
    seconds); calls that alternate see the same load, so the median of the per-pair
    ratios is the steadier estimate of f1's time over f2's. `pairs` defaults to
    `njobs_pairs` of the warm-up pair's time.
    """
    warm = sum(timed_call(fn, args, kwargs)[0] for fn in (f1, f2))
    n = njobs_pairs(warm) if pairs is None else pairs
    return [(timed_call(f1, args, kwargs)[0], timed_call(f2, args, kwargs)[0]) for _ in range(n)]


def per_call_pair(
    fa: Fn,
    fb: Fn,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    batch_s: float = 0.05,
    batches: int = 7,
) -> tuple[float, float]:
    """Best per-call time of two fast calls, timeit-style.

    Batches of about `batch_s` alternate between the two functions so that a change of
    machine load hits both alike; the minimum over batches is the least noisy estimate
    of a call's own cost (as in `timeit`).
    """
    loops = []
    for fn in (fa, fb):
        t, _ = timed_call(fn, args, kwargs)
        loops.append(max(1, int(batch_s / max(t, 1e-7))))
    best = [float("inf"), float("inf")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(batches):
            for i, fn in enumerate((fa, fb)):
                t0 = time.perf_counter()
                for _ in range(loops[i]):
                    fn(*args, **kwargs)
                best[i] = min(best[i], (time.perf_counter() - t0) / loops[i])
    return best[0], best[1]


# --------------------------------------------------------------------------- records


@dataclass
class Timing:
    """Timing of one implementation on one cell."""

    status: str  # measured | extrapolated | over cap | not available | error | MISMATCH | not run
    median_s: float | None = None
    samples: list[float] = field(default_factory=list)
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "median_s": self.median_s,
            "samples": self.samples,
            "note": self.note,
        }


def measured(samples: list[float]) -> Timing:
    return Timing("measured", statistics.median(samples), samples)


def ratio(ref: Timing, cand: Timing) -> float | None:
    if (
        ref.median_s is None
        or cand.median_s is None
        or cand.status != "measured"
        or cand.median_s <= 0
    ):
        return None
    return ref.median_s / cand.median_s


def over_cap_bound(row: dict[str, Any], cap: float) -> float | None:
    """Lower bound of the speedup when the reference was stopped at the cap (it ran
    at least ``cap`` seconds): ``cap`` / the candidate's median; None otherwise."""
    cand, ref = row.get("candidate", {}), row.get("reference", {})
    t = cand.get("median_s")
    if ref.get("status") != "over cap" or cand.get("status") != "measured" or not t or t <= 0:
        return None
    return float(cap / t)


# --------------------------------------------------------------------------- the run


@dataclass
class Config:
    sizes: list[int]
    variants: list[Variant]
    cases: list[Case]
    candidate: str
    cap: float
    max_repeats: int
    out: Path
    seed: int
    torchmetrics: bool
    memory: bool
    small: bool
    njobs: bool


class Bench:
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.rows: list[dict[str, Any]] = []
        self.njobs_rows: list[dict[str, Any]] = []
        self.small_rows: list[dict[str, Any]] = []
        self.memory_rows: list[dict[str, Any]] = []
        # (case key, variant name, implementation) -> (n, median or extrapolated seconds)
        self._last: dict[tuple[str, str, str], tuple[int, float]] = {}
        self._checked: set[tuple[str, str]] = set()  # (case, variant) verified at some N
        self._load_at_start = os.getloadavg() if hasattr(os, "getloadavg") else None
        # What is timed is the tree as it is when the run starts (a commit made while
        # it runs must not be recorded as the one measured).
        self._source_at_start = source_state()

    # -- helpers ---------------------------------------------------------------

    def _torchmetrics_status(self) -> str:
        if not self.cfg.torchmetrics:
            return "disabled with --no-torchmetrics"
        probe = resolve_torchmetrics(CASES[0])
        return "installed" if probe.fn is not None else probe.reason

    def log(self, msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    def _predict(
        self, key: tuple[str, str, str], n: int, exponent: float
    ) -> tuple[float, int] | None:
        prev = self._last.get(key)
        if prev is None:
            return None
        n0, t0 = prev
        return t0 * (n / n0) ** exponent, n0

    def _reference_first(
        self,
        impl: str,
        fn: Fn,
        case: Case,
        variant: Variant,
        n: int,
        args: tuple[Any, ...],
        exponent: float = 1.0,
    ) -> tuple[Timing, Any]:
        """First run of a reference (or an extrapolation instead of it). Returns (timing, value)."""
        key = (case.key, variant.name, impl)
        pred = self._predict(key, n, exponent)
        if pred is not None and pred[0] > self.cfg.cap:
            est, n0 = pred
            self._last[key] = (n, est)
            how = "linearly" if exponent == 1.0 else f"as n^{exponent:g}"
            return Timing(
                "extrapolated",
                est,
                note=f"skipped: predicted over the {self.cfg.cap:g} s cap; extrapolated {how} from N={n0:,}",
            ), None
        try:
            t, value = timed_call(fn, args, case.kwargs, self.cfg.cap)
        except CapExceeded:
            return Timing("over cap", None, note=f"stopped at the {self.cfg.cap:g} s cap"), None
        except Exception as exc:
            return Timing("error", None, note=f"{type(exc).__name__}: {exc}"), None
        self._last[key] = (n, t)
        return Timing("measured", t, [t]), value

    # -- main grid ---------------------------------------------------------------

    def run_cell(self, case: Case, variant: Variant, n: int, arrays: Arrays) -> dict[str, Any]:
        args = inputs_for(case, arrays)
        row: dict[str, Any] = {
            "case": case.key,
            "label": case.label,
            "family": case.family,
            "variant": variant.name,
            "n": n,
            "k": 1 if case.family == VECTOR else K_LABELS,
        }
        cand = resolve_candidate(case, self.cfg.candidate)
        if cand.fn is None:
            row.update(
                candidate=Timing("not available", note=cand.reason).as_dict(),
                reference=Timing("not run").as_dict(),
                torchmetrics=Timing("not run").as_dict(),
                check="not available",
            )
            return row
        # 1. candidate value (also its warm-up call, not timed)
        try:
            _, cand_value = timed_call(cand.fn, args, case.kwargs)
        except Exception as exc:
            row.update(
                candidate=Timing("error", note=f"{type(exc).__name__}: {exc}").as_dict(),
                reference=Timing("not run").as_dict(),
                torchmetrics=Timing("not run").as_dict(),
                check="error",
            )
            return row
        # 2. reference first run (gives the value to check against)
        ref = resolve_reference(case)
        ref_timing, ref_value = (
            (Timing("not available", note=ref.reason), None)
            if ref.fn is None
            else self._reference_first("reference", ref.fn, case, variant, n, args)
        )
        # 3. value check before any candidate timing
        if case.family == REPORT:
            check = "n/a (no reference value)"
        elif ref_value is not None:
            ok = values_match(cand_value, ref_value, RTOL)
            check = "equal" if ok else "MISMATCH"
            if ok:
                self._checked.add((case.key, variant.name))
            elif variant.ties and case.tie_deviation:
                check = f"documented deviation: {case.tie_deviation}"
        elif (case.key, variant.name) in self._checked:
            check = "equal at smaller N (reference skipped or stopped here)"
        else:
            check = "unchecked (no reference value)"
        row["check"] = check
        row["values"] = {
            "candidate": as_values(cand_value).tolist() if case.family != REPORT else None,
            "reference": None
            if ref_value is None or case.family == REPORT
            else as_values(ref_value).tolist(),
        }
        # 4. candidate timing, only for a verified (or unverifiable) answer
        if check == "MISMATCH":
            cand_timing = Timing("MISMATCH", note=f"values differ beyond rtol={RTOL:g}")
        else:
            first = timed_call(cand.fn, args, case.kwargs)[0]
            cand_timing = measured(
                sample_more(cand.fn, args, case.kwargs, [first], self.cfg.max_repeats)
            )
        # 5. more reference repeats
        if ref.fn is not None and ref_timing.status == "measured":
            ref_timing = measured(
                sample_more(
                    ref.fn,
                    args,
                    case.kwargs,
                    ref_timing.samples,
                    self.cfg.max_repeats,
                    self.cfg.cap,
                )
            )
            self._last[(case.key, variant.name, "reference")] = (
                n,
                float(ref_timing.median_s or 0.0),
            )
        # 6. torchmetrics, timed only (different semantics, float32 results)
        tm_timing = Timing("not run", note="disabled")
        if self.cfg.torchmetrics:
            tm = resolve_torchmetrics(case)
            if tm.fn is None:
                tm_timing = Timing("not available", note=tm.reason)
            else:
                case_tm = Case(case.key, case.label, case.func, case.family, {}, case.ref_module)
                tm_timing, _ = self._reference_first(
                    "torchmetrics", tm.fn, case_tm, variant, n, args, torchmetrics_exponent(case)
                )
                if tm_timing.status == "measured":
                    tm_timing = measured(
                        sample_more(
                            tm.fn, args, {}, tm_timing.samples, self.cfg.max_repeats, self.cfg.cap
                        )
                    )
        row.update(
            candidate=cand_timing.as_dict(),
            reference=ref_timing.as_dict(),
            torchmetrics=tm_timing.as_dict(),
            ratio_reference=ratio(ref_timing, cand_timing),
            ratio_torchmetrics=ratio(tm_timing, cand_timing),
        )
        return row

    def run_grid(self) -> None:
        for n in self.cfg.sizes:
            for variant in self.cfg.variants:
                arrays = make_arrays(n, variant, self.cfg.seed)
                for case in self.cfg.cases:
                    t0 = time.perf_counter()
                    row = self.run_cell(case, variant, n, arrays)
                    self.rows.append(row)
                    self.log(
                        f"[{n:>9,} {variant.name:<13}] {case.key:<18} cand={fmt_timing(row['candidate'])} ref={fmt_timing(row['reference'])} check={row['check']} ({time.perf_counter() - t0:.1f} s)"
                    )
                del arrays
                self.save()

    # -- extra studies -------------------------------------------------------------

    def run_njobs(self) -> None:
        n = max(self.cfg.sizes)
        variant = Variant("float64", False)
        arrays = make_arrays(n, variant, self.cfg.seed)
        for case in self.cfg.cases:
            if case.family not in (PER_LABEL, PER_ROW):
                continue
            row: dict[str, Any] = {"case": case.key, "label": case.label, "n": n}
            if self.cfg.candidate != "toxeval":
                row.update(status="n/a", note="n_jobs is a toxeval keyword")
                self.njobs_rows.append(row)
                continue
            fns = [resolve_candidate(case, "toxeval", n_jobs=jobs).fn for jobs in (1, 2)]
            if fns[0] is None or fns[1] is None:
                row.setdefault("status", "not available")
            else:
                try:
                    pairs = paired_times(fns[0], fns[1], inputs_for(case, arrays), case.kwargs)
                except Exception as exc:
                    row.update(status="error", note=f"{type(exc).__name__}: {exc}")
                else:
                    row.update(
                        status="measured",
                        n_jobs_1_s=statistics.median(a for a, _ in pairs),
                        n_jobs_2_s=statistics.median(b for _, b in pairs),
                        speedup=statistics.median(a / b for a, b in pairs),
                        pairs=len(pairs),
                    )
            self.njobs_rows.append(row)
            self.log(f"[n_jobs] {case.key:<18} {row.get('speedup', row['status'])}")

    def run_small(self) -> None:
        for variant in (Variant("float64", False),):
            arrays = make_arrays(SMALL_N, variant, self.cfg.seed)
            for case in self.cfg.cases:
                if case.family == REPORT:
                    continue
                row: dict[str, Any] = {"case": case.key, "label": case.label, "n": SMALL_N}
                cand, ref = resolve_candidate(case, self.cfg.candidate), resolve_reference(case)
                if cand.fn is None or ref.fn is None:
                    row.update(status="not available", note=cand.reason or ref.reason)
                    self.small_rows.append(row)
                    continue
                args = inputs_for(case, arrays)
                try:
                    ok = values_match(
                        timed_call(cand.fn, args, case.kwargs)[1],
                        timed_call(ref.fn, args, case.kwargs)[1],
                        RTOL,
                    )
                    if not ok:
                        row.update(status="MISMATCH")
                    else:
                        tc, tr = per_call_pair(cand.fn, ref.fn, args, case.kwargs)
                        row.update(status="measured", candidate_s=tc, reference_s=tr, ratio=tr / tc)
                except Exception as exc:
                    row.update(status="error", note=f"{type(exc).__name__}: {exc}")
                self.small_rows.append(row)
                self.log(f"[N=100] {case.key:<18} {row.get('ratio', row['status'])}")

    def run_memory(self) -> None:
        n = max(self.cfg.sizes)
        for variant in (Variant("float64", False), Variant("float32", False)):
            for case in self.cfg.cases:
                if resolve_candidate(case, self.cfg.candidate).fn is None:
                    continue
                grid = next(
                    (
                        r
                        for r in self.rows
                        if r["case"] == case.key and r["variant"] == variant.name and r["n"] == n
                    ),
                    None,
                )
                if grid is not None and (
                    grid["candidate"]["status"] != "measured"
                    or grid["candidate"]["median_s"] > self.cfg.cap
                ):
                    self.memory_rows.append(
                        {
                            "case": case.key,
                            "label": case.label,
                            "variant": variant.name,
                            "n": n,
                            "status": "not run",
                            "reason": f"candidate {grid['candidate']['status']} or slower than the cap",
                        }
                    )
                    continue
                cmd = [
                    sys.executable,
                    str(HERE / "_memprobe.py"),
                    case.key,
                    str(n),
                    variant.name,
                    "--candidate",
                    self.cfg.candidate,
                    "--seed",
                    str(self.cfg.seed),
                ]
                try:
                    proc = subprocess.run(
                        cmd,
                        capture_output=True,
                        text=True,
                        timeout=max(600.0, 5 * self.cfg.cap),
                        check=False,
                    )
                    row = json.loads(proc.stdout.strip().splitlines()[-1])
                except (subprocess.TimeoutExpired, json.JSONDecodeError, IndexError) as exc:
                    row = {"case": case.key, "status": "error", "reason": f"{type(exc).__name__}"}
                row.update(case=case.key, label=case.label, variant=variant.name, n=n)
                self.memory_rows.append(row)
                self.log(
                    f"[memory {variant.name}] {case.key:<18} {row.get('growth_over_y_score', row.get('status'))}"
                )

    # -- output --------------------------------------------------------------------

    def targets(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        at = {(r["case"], r["variant"], r["n"]): r for r in self.rows}
        have_1m = TARGET_N in self.cfg.sizes

        def add(
            name: str,
            measured_value: float | None,
            required: str,
            passed: bool | None,
            note: str = "",
        ) -> None:
            result = "n/a" if passed is None else ("PASS" if passed else "FAIL")
            out.append(
                {
                    "target": name,
                    "measured": measured_value,
                    "required": required,
                    "result": result,
                    "note": note,
                }
            )

        for key, need in SPEEDUP_TARGETS.items():
            row = at.get((key, "float64", TARGET_N))
            label = next((c.label for c in CASES if c.key == key), key)
            vs = "SciPy" if key == "kendalltau" else "scikit-learn"
            if row is None:
                add(
                    f"{label} speedup vs {vs} at 1M",
                    None,
                    f">= {need:g}x",
                    None,
                    "1M not run" if not have_1m else "not run",
                )
                continue
            r = row.get("ratio_reference")
            note = (
                row["candidate"]["status"]
                if r is None
                else (
                    "reference extrapolated" if row["reference"]["status"] == "extrapolated" else ""
                )
            )
            bound = over_cap_bound(row, self.cfg.cap)
            if r is None and bound is not None:
                # The reference ran for the whole cap: the ratio is at least this.
                add(
                    f"{label} speedup vs {vs} at 1M",
                    bound,
                    f">= {need:g}x",
                    True if bound >= need else None,
                    f"lower bound: reference stopped at the {self.cfg.cap:g} s cap",
                )
            elif row.get("check") == "MISMATCH":
                add(f"{label} speedup vs {vs} at 1M", None, f">= {need:g}x", False, "MISMATCH")
            else:
                add(
                    f"{label} speedup vs {vs} at 1M",
                    r,
                    f">= {need:g}x",
                    None if r is None else r >= need,
                    note,
                )
        rep = at.get(("report", "float64", TARGET_N))
        if rep is not None and rep.get("ratio_reference"):
            multiple = 1.0 / rep["ratio_reference"]
            add(
                "multilabel_report time / y_score.sum() at 1M",
                multiple,
                f"<= {REPORT_MAX_MULTIPLE:g}x",
                multiple <= REPORT_MAX_MULTIPLE,
            )
        else:
            add(
                "multilabel_report time / y_score.sum() at 1M",
                None,
                f"<= {REPORT_MAX_MULTIPLE:g}x",
                None,
                "not available" if rep is not None else "1M not run",
            )
        for r in self.njobs_rows:
            s = r.get("speedup")
            add(
                f"n_jobs=2 vs n_jobs=1: {r['label']} (N={r['n']:,})",
                s,
                f">= {NJOBS_MIN_SPEEDUP:g}x",
                None if s is None or r["n"] != TARGET_N else s >= NJOBS_MIN_SPEEDUP,
                (r.get("note") or r["status"]) if s is None else _below_target_n(r["n"]),
            )
        for r in self.small_rows:
            s = r.get("ratio")
            add(
                f"N=100 per call vs reference: {r['label']}",
                s,
                ">= 1x",
                None if s is None else s >= 1.0,
                "" if s is not None else r["status"],
            )
        for r in self.memory_rows:
            g = r.get("growth_over_y_score")
            add(
                f"peak memory {r['variant']}: {r['label']} (N={r['n']:,})",
                g,
                f"<= {MEMORY_MAX_RATIO:g}x y_score",
                None if g is None or r["n"] != TARGET_N else g <= MEMORY_MAX_RATIO,
                str(r.get("status")) if g is None else _below_target_n(r["n"]),
            )
        return out

    def save(self) -> None:
        self.cfg.out.mkdir(parents=True, exist_ok=True)
        targets = self.targets()
        machine = machine_info()
        machine["load_average_at_start"] = self._load_at_start
        machine.update(self._source_at_start)
        doc = {
            "machine": machine,
            "config": {
                "sizes": self.cfg.sizes,
                "k": K_LABELS,
                "variants": [v.name for v in self.cfg.variants],
                "cases": [c.key for c in self.cfg.cases],
                "candidate": self.cfg.candidate,
                "cap_s": self.cfg.cap,
                "max_repeats": self.cfg.max_repeats,
                "seed": self.cfg.seed,
                "rtol": RTOL,
                "torchmetrics": self._torchmetrics_status(),
                "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
            },
            "results": self.rows,
            "n_jobs": self.njobs_rows,
            "small_input": self.small_rows,
            "memory": self.memory_rows,
            "targets": targets,
        }
        (self.cfg.out / "bench_metrics.json").write_text(
            json.dumps(doc, indent=1, default=float) + "\n"
        )
        (self.cfg.out / "bench_metrics.md").write_text(render_markdown(doc))


def _below_target_n(n: int) -> str:
    return "" if n == TARGET_N else "informational: judged at N = 1M only"


# --------------------------------------------------------------------------- formatting


def fmt_s(t: float | None) -> str:
    if t is None:
        return "—"
    if t < 1e-3:
        return f"{t * 1e6:.0f} µs"
    if t < 1.0:
        return f"{t * 1e3:.3g} ms"
    return f"{t:.3g} s"


def fmt_timing(t: dict[str, Any]) -> str:
    status = str(t["status"])
    if status == "measured":
        return fmt_s(t["median_s"])
    if status == "extrapolated":
        return f"≈{fmt_s(t['median_s'])} (extrap.)"
    if status == "over cap":
        return "> cap"
    return status


def fmt_x(r: float | None) -> str:
    if r is None:
        return "—"
    return f"{r:.3g}×" if r < 100 else f"{r:,.0f}×"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def size_name(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def render_markdown(doc: dict[str, Any]) -> str:
    cfg, m = doc["config"], doc["machine"]
    cand = "toxeval" if cfg["candidate"] == "toxeval" else "candidate (sklearn, debug)"
    loads = [x for x in (m.get("load_average_at_start"), m.get("load_average")) if x]
    load = max(loads, key=lambda x: x[0]) if loads else None
    busy = load is not None and load[0] > max(1, m["cpus_available"])
    parts = [
        "# toxeval.metrics benchmark",
        "",
        f"`{cfg['command']}` — candidate: **{cfg['candidate']}**, K = {cfg['k']}, cap {cfg['cap_s']:g} s, seed {cfg['seed']}.",
        "",
        f"Machine: {m['cpu_model']}, {m['cpus_available']} usable cores, {m['mem_total_gib']} GiB; "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
        + ".",
        "",
        f"Source: commit {m.get('git_commit') or 'unknown'} when the run started"
        + (" (with uncommitted changes to tracked files)" if m.get("git_dirty") else "")
        + f"; results written {m.get('date', '?')}.",
        "",
        *(
            [
                f"**Warning: the machine was busy during this run (load average "
                f"{load[0]:.1f} on {m['cpus_available']} cores): times are inflated and ratios noisy.**",
                "",
            ]
            if busy and load is not None
            else []
        ),
        f"Times are medians (at most {cfg['max_repeats']} runs: up to 5 under 1 s, 3 under 5 s, else 1) "
        "of what a user calls, validation included. "
        "`×` = reference time / toxeval time (higher is better). `≈… (extrap.)` = reference skipped and "
        "extrapolated from the previous size.",
        "",
        "## Targets (1M × 15, float64, no ties)",
        "",
        md_table(
            ["target", "measured", "required", "result", "note"],
            [
                [
                    t["target"],
                    "—" if t["measured"] is None else f"{t['measured']:.3g}",
                    t["required"],
                    f"**{t['result']}**",
                    t["note"],
                ]
                for t in doc["targets"]
            ],
        ),
    ]
    sizes = cfg["sizes"]
    has_tm = any(
        r.get("torchmetrics", {}).get("status") in ("measured", "extrapolated")
        for r in doc["results"]
    )
    for vname in cfg["variants"]:
        rows_v = [r for r in doc["results"] if r["variant"] == vname]
        if not rows_v:
            continue
        header = ["function"]
        for n in sizes:
            header += [f"{size_name(n)} reference", f"{size_name(n)} {cand}", f"{size_name(n)} ×"]
        header.append("value check")
        body = []
        for case_key in cfg["cases"]:
            cells = [r for r in rows_v if r["case"] == case_key]
            if not cells:
                continue
            line = [cells[0]["label"]]
            for n in sizes:
                r = next((c for c in cells if c["n"] == n), None)
                if r is None:
                    line += ["", "", ""]
                    continue
                line += [
                    fmt_timing(r["reference"]),
                    fmt_timing(r["candidate"]),
                    fmt_x(r.get("ratio_reference")),
                ]
            checks = sorted({c["check"] for c in cells})
            line.append("; ".join(checks))
            body.append(line)
        parts += ["", f"## {vname}", "", md_table(header, body)]
        if has_tm:
            tm_body = []
            for case_key in cfg["cases"]:
                cells = [r for r in rows_v if r["case"] == case_key]
                if not cells:
                    continue
                line = [cells[0]["label"]]
                for n in sizes:
                    r = next((c for c in cells if c["n"] == n), None)
                    line += (
                        ["", ""]
                        if r is None
                        else [fmt_timing(r["torchmetrics"]), fmt_x(r.get("ratio_torchmetrics"))]
                    )
                tm_body.append(line)
            tm_header = ["function"] + [
                h for n in sizes for h in (f"{size_name(n)} torchmetrics", f"{size_name(n)} ×")
            ]
            parts += [
                "",
                f"torchmetrics ({vname}, timed only: semantics differ):",
                "",
                md_table(tm_header, tm_body),
            ]
    if not has_tm:
        parts += ["", f"torchmetrics: not timed ({cfg['torchmetrics']})."]
    if doc["n_jobs"]:
        parts += [
            "",
            "## n_jobs=1 vs n_jobs=2 (float64, no ties)",
            "",
            "Alternating (n_jobs=1, n_jobs=2) call pairs per function, as many as fill "
            f"{NJOBS_BUDGET_S:g} s ({NJOBS_PAIRS_MIN}-{NJOBS_PAIRS_MAX}, odd); times are medians, "
            "the speedup is the median of the per-pair ratios.",
            "",
            md_table(
                ["function", "N", "pairs", "n_jobs=1", "n_jobs=2", "speedup"],
                [
                    [
                        r["label"],
                        f"{r['n']:,}",
                        str(r.get("pairs", "")),
                        fmt_s(r.get("n_jobs_1_s")),
                        fmt_s(r.get("n_jobs_2_s")),
                        fmt_x(r.get("speedup")) if "speedup" in r else r["status"],
                    ]
                    for r in doc["n_jobs"]
                ],
            ),
        ]
    if doc["small_input"]:
        parts += [
            "",
            "## Small input: per-call time at N = 100 × 15 (float64)",
            "",
            md_table(
                ["function", "reference", cand, "×"],
                [
                    [
                        r["label"],
                        fmt_s(r.get("reference_s")),
                        fmt_s(r.get("candidate_s")),
                        fmt_x(r.get("ratio")) if "ratio" in r else r["status"],
                    ]
                    for r in doc["small_input"]
                ],
            ),
        ]
    if doc["memory"]:
        parts += [
            "",
            "## Peak memory of one call (fresh process, RSS growth / y_score.nbytes)",
            "",
            'For kendalltau the score input ("y_score") is x and y together: the nbytes of '
            "both length-N vectors. The probe starts the thread pool before measuring "
            "(see benches/_memprobe.py).",
            "",
            md_table(
                ["function", "variant", "N", "growth", "÷ y_score", "status"],
                [
                    [
                        r["label"],
                        r["variant"],
                        f"{r['n']:,}",
                        "—"
                        if r.get("growth_bytes") is None
                        else f"{r['growth_bytes'] / 2**20:.1f} MiB",
                        "—"
                        if r.get("growth_over_y_score") is None
                        else f"{r['growth_over_y_score']:.3f}",
                        r.get("status", "")
                        if r.get("status") == "ok"
                        else f"{r.get('status')}: {r.get('reason', '')}",
                    ]
                    for r in doc["memory"]
                ],
            ),
        ]
    return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------- machine


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _toxeval_version() -> str:
    """The version of the toxeval that is imported (a build in place under
    ``PYTHONPATH=python`` has no installed distribution metadata)."""
    try:
        import toxeval

        return f"{toxeval.__version__} ({Path(toxeval.__file__).parent})"
    except ImportError:
        return _version("toxeval")


def _git(*args: str) -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run(
            ["git", "-C", str(HERE), *args], capture_output=True, text=True, check=False
        ).stdout.strip()
    return ""


def source_state() -> dict[str, Any]:
    """The commit checked out when the run starts and whether tracked files differ
    from it (``git_dirty``: the timed build may not be that commit)."""
    return {
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
    }


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or "unknown"
    mem_gib = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gib = f"{int(line.split()[1]) / 2**20:.1f}"
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:
        available = os.cpu_count() or 0
    return {
        "cpu_model": cpu,
        "cpus": os.cpu_count(),
        "cpus_available": available,
        "mem_total_gib": mem_gib,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {
            name: _version(dist)
            for name, dist in (
                ("numpy", "numpy"),
                ("scikit-learn", "scikit-learn"),
                ("scipy", "scipy"),
                ("torch", "torch"),
                ("torchmetrics", "torchmetrics"),
            )
        }
        | {"toxeval": _toxeval_version()},
        "env": {
            k: os.environ[k]
            for k in (
                "OPENBLAS_CORETYPE",
                "OPENBLAS_L2_SIZE",
                "OMP_NUM_THREADS",
                "RAYON_NUM_THREADS",
                "TOXEVAL_NUM_THREADS",
            )
            if k in os.environ
        },
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


# --------------------------------------------------------------------------- CLI


def parse_sizes(text: str) -> list[int]:
    """'10k,100k,1M' -> [10000, 100000, 1000000]."""
    out = []
    for part in text.split(","):
        p = part.strip().lower().replace("_", "")
        mult = 1
        if p.endswith("k"):
            mult, p = 1_000, p[:-1]
        elif p.endswith("m"):
            mult, p = 1_000_000, p[:-1]
        out.append(int(float(p) * mult))
    return sorted(set(out))


def build_config(argv: list[str] | None) -> Config:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--sizes", default=None, help="comma list, e.g. 10k,100k,1M (default; --quick: 10k,100k)"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 10k,100k, float64 only, <= 3 repeats, 10 s cap",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("bench-results"),
        help="directory for bench_metrics.json/.md",
    )
    p.add_argument(
        "--cap",
        type=float,
        default=None,
        help="seconds a reference may take (default 120; --quick 10)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="max repeats per measurement (default 5; --quick 3)",
    )
    p.add_argument(
        "--variants", default=None, help=f"comma list of {[v.name for v in VARIANTS]} (default all)"
    )
    p.add_argument(
        "--only", default=None, help="comma list of case keys: " + ",".join(c.key for c in CASES)
    )
    p.add_argument(
        "--candidate",
        default="toxeval",
        choices=["toxeval", "sklearn"],
        help="sklearn = debug the harness against the reference itself",
    )
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--no-torchmetrics", action="store_true")
    p.add_argument("--no-memory", action="store_true", help="skip the fresh-process memory probes")
    p.add_argument("--no-small", action="store_true", help="skip the N=100 per-call study")
    p.add_argument("--no-njobs", action="store_true", help="skip the n_jobs=1 vs 2 study")
    a = p.parse_args(argv)
    from _workload import DEFAULT_SEED

    sizes = parse_sizes(a.sizes or ("10k,100k" if a.quick else "10k,100k,1M"))
    if a.variants:
        variants = [parse_variant(v.strip()) for v in a.variants.split(",")]
    else:
        variants = [v for v in VARIANTS if v.dtype == "float64"] if a.quick else list(VARIANTS)
    cases = list(CASES)
    if a.only:
        keys = [k.strip() for k in a.only.split(",")]
        unknown = set(keys) - {c.key for c in CASES}
        if unknown:
            p.error(f"unknown case(s) {sorted(unknown)}")
        cases = [c for c in CASES if c.key in keys]
    return Config(
        sizes=sizes,
        variants=variants,
        cases=cases,
        candidate=a.candidate,
        cap=a.cap if a.cap is not None else (10.0 if a.quick else 120.0),
        max_repeats=a.repeats if a.repeats is not None else (3 if a.quick else 5),
        out=a.out,
        seed=a.seed if a.seed is not None else DEFAULT_SEED,
        torchmetrics=not a.no_torchmetrics,
        memory=not a.no_memory,
        small=not a.no_small,
        njobs=not a.no_njobs,
    )


def main(argv: list[str] | None = None) -> int:
    cfg = build_config(argv)
    bench = Bench(cfg)
    t0 = time.perf_counter()
    bench.run_grid()
    if cfg.small:
        bench.run_small()
    if cfg.njobs:
        bench.run_njobs()
    if cfg.memory:
        bench.run_memory()
    bench.save()
    print((cfg.out / "bench_metrics.md").read_text())
    bench.log(
        f"done in {time.perf_counter() - t0:.0f} s; wrote {cfg.out / 'bench_metrics.json'} and {cfg.out / 'bench_metrics.md'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
