"""Peak memory of ONE metric call, measured as RSS growth in a fresh process.

Run by `bench_metrics.py` as a child process (one per measurement) so that nothing
allocated by earlier calls (allocator caches, other arrays) hides or inflates the
peak. The child:

1. builds the benchmark arrays (``_workload.make_arrays``, generated in chunks) and
   hands the memory their chunked generation freed back to the system
   (``malloc_trim(0)`` with glibc): left resident, the measured call would reuse it
   without any RSS growth (about 8.6 MiB for the 1M x 15 float32 arrays, 0.14x of
   their ``y_score``);
2. imports the candidate and warms it on a tiny input (lazy initialisation), then on
   the smallest input that runs in parallel (65,536 scalars: starts the thread pool and
   its threads' allocator arenas, one-time costs of a process, not of a call; what that
   call leaves in allocator caches is at most 1/15 of the measured call's own buffers);
3. resets the kernel's high-water mark (``echo 5 > /proc/self/clear_refs``, Linux >= 4.0)
   and reads the baseline RSS; where the reset is not possible it falls back to the
   current high-water mark (``VmHWM`` or ``ru_maxrss``) as baseline;
4. calls the function once and reads ``VmHWM`` (``ru_maxrss`` elsewhere) again;
5. prints one JSON object: baseline, peak, growth and growth / ``y_score.nbytes``. For
   kendalltau "y_score" is its score input, x and y together (the nbytes of both
   length-N vectors).

Usage (normally called by the bench)::

    python benches/_memprobe.py CASE_KEY N VARIANT [--candidate toxeval|sklearn] [--n-jobs J]
        [--seed S]
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import resource
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _workload import (
    CASES_BY_KEY,
    DEFAULT_SEED,
    K_LABELS,
    VECTOR,
    inputs_for,
    make_arrays,
    parse_variant,
    resolve_candidate,
)

# toxeval's parallel threshold (rust/parallel.rs PARALLEL_MIN_ELEMENTS).
PARALLEL_MIN_ELEMENTS = 65_536

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_kib(field: str) -> int | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _maxrss_bytes() -> int:
    kib = _status_kib("VmHWM")
    if kib is None:  # not Linux: ru_maxrss is KiB on Linux, bytes on macOS
        r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(r if sys.platform == "darwin" else r * 1024)
    return kib * 1024


def _trim() -> bool:
    """Return the allocator's free memory to the system (glibc's ``malloc_trim``);
    False where there is no such call (not glibc)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        if libc is None:
            return False
        libc.malloc_trim(0)  # returns whether anything was released: either is fine
    except (OSError, AttributeError):
        return False
    return True


def _reset_peak() -> bool:
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def probe(
    case_key: str,
    n: int,
    variant_name: str,
    candidate: str,
    n_jobs: int | None,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    case = CASES_BY_KEY[case_key]
    variant = parse_variant(variant_name)
    resolved = resolve_candidate(case, candidate, n_jobs)
    out: dict[str, Any] = {
        "case": case_key,
        "n": n,
        "variant": variant_name,
        "candidate": candidate,
    }
    if resolved.fn is None:
        out["status"] = "not available"
        out["reason"] = resolved.reason
        return out
    fn = resolved.fn
    warnings.simplefilter("ignore")
    arrays = make_arrays(n, variant, seed)
    trimmed = _trim()
    fn(*inputs_for(case, make_arrays(64, variant)), **case.kwargs)  # warm-up
    pool_n = (
        PARALLEL_MIN_ELEMENTS if case.family == VECTOR else -(-PARALLEL_MIN_ELEMENTS // K_LABELS)
    )
    if pool_n < n:
        fn(*inputs_for(case, make_arrays(pool_n, variant)), **case.kwargs)  # thread pool

    args = inputs_for(case, arrays)
    reset = _reset_peak()
    rss_kib = _status_kib("VmRSS")
    baseline = rss_kib * 1024 if reset and rss_kib is not None else _maxrss_bytes()
    fn(*args, **case.kwargs)
    peak = _maxrss_bytes()
    growth = max(0, peak - baseline)
    # The scores argument: y_score (N x 15), or x and y together for kendalltau.
    scores_nbytes = int(
        args[0].nbytes + args[1].nbytes if case.family == VECTOR else args[1].nbytes
    )
    out.update(
        status="ok",
        peak_reset=reset,
        trimmed=trimmed,
        baseline_bytes=baseline,
        peak_bytes=peak,
        growth_bytes=growth,
        y_score_nbytes=scores_nbytes,
        input_nbytes=int(sum(a.nbytes for a in args)),
        growth_over_y_score=growth / scores_nbytes,
    )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("case", choices=sorted(CASES_BY_KEY))
    p.add_argument("n", type=int)
    p.add_argument("variant")
    p.add_argument("--candidate", default="toxeval", choices=["toxeval", "sklearn"])
    p.add_argument("--n-jobs", type=int, default=None)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    a = p.parse_args(argv)
    try:
        result = probe(a.case, a.n, a.variant, a.candidate, a.n_jobs, a.seed)
    except Exception as exc:
        result = {"case": a.case, "status": "error", "reason": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
