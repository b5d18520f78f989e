"""The native thread pools survive fork(), threads and many calls.

After ``fork()`` the child has only the thread that forked: a thread pool made in the
parent has no workers there, and a call that queues work on it waits forever. Forked
workers are common (``multiprocessing`` on Linux, PyTorch ``DataLoader``, joblib,
gunicorn), so each child must build its own pools. Every test bounds its wait, so a
regression fails instead of hanging the run.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import _parallel_kernels as kernels
import numpy as np
import pytest
from toxeval import metrics

TIMEOUT = 120  # seconds for a child's whole run: minutes below a hang, far above a run


@pytest.fixture(scope="module")
def parent_results() -> dict[str, Any]:
    """Every kernel's result in this process, with the default ``n_jobs`` (so the pools
    exist before any child is started)."""
    return kernels.all_kernel_results()


def _in_child(method: str, fn: Any, *args: Any) -> Any:
    ctx = multiprocessing.get_context(method)
    pool = ctx.Pool(1)
    try:
        result = pool.apply_async(fn, args).get(timeout=TIMEOUT)
    except multiprocessing.TimeoutError:
        pytest.fail(f"a {method} child did not finish in {TIMEOUT} s: the pool hung")
    finally:
        pool.terminate()
        pool.join()
    return result


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_child_process_results_equal_the_parents(
    method: str, parent_results: dict[str, Any]
) -> None:
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"start method {method} is not available here")
    child = _in_child(method, kernels.all_kernel_results)
    assert kernels.same_results(parent_results, child) == []


def test_forked_child_of_a_single_call_does_not_hang() -> None:
    """The reported case: one ``label_ranking_loss`` call at 20,000 x 15 in the
    parent, then the same call in a forked child."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("fork is not available here")
    d = kernels.inputs(1)
    want = metrics.label_ranking_loss(d["y"], d["s"])
    got = _in_child("fork", metrics.label_ranking_loss, d["y"], d["s"])
    assert got == want


def test_grandchild_of_a_fork_does_not_hang() -> None:
    """A child that calls (building its own pools) and then forks again."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("fork is not available here")
    d = kernels.inputs(2)
    want = metrics.label_ranking_loss(d["y"], d["s"])
    got = _in_child("fork", _call_then_fork, d["y"], d["s"])
    assert got == (want, want)


def _call_then_fork(y: np.ndarray, s: np.ndarray) -> tuple[float, float | None]:
    """In a pool worker (daemonic: no multiprocessing children), call, then ``os.fork``
    and call again in the grandchild; its result comes back through a pipe, or ``None``
    if it did not answer within the timeout."""
    first = metrics.label_ranking_loss(y, s)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the grandchild
        try:
            os.write(write_end, repr(metrics.label_ranking_loss(y, s)).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    ready, _, _ = select.select([read_end], [], [], TIMEOUT)
    answer = os.read(read_end, 100).decode() if ready else ""
    os.close(read_end)
    if not answer:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return first, float(answer) if answer else None


def test_eight_threads_calling_every_kernel_get_the_same_results(
    parent_results: dict[str, Any],
) -> None:
    with ThreadPoolExecutor(max_workers=8) as ex:
        futures = [ex.submit(kernels.all_kernel_results) for _ in range(8)]
        results = [f.result(timeout=TIMEOUT * 4) for f in futures]
    for got in results:
        assert kernels.same_results(parent_results, got) == []


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS line")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_memory_stays_flat_over_ten_thousand_parallel_calls() -> None:
    """No leak per call (pool lookup, per-call buffers): RSS after 10,000 calls that use
    the pool is within a generous margin of RSS after a warm-up."""
    rng = np.random.default_rng(3)
    # 8,200 x 8 = 65,600 scores in two blocks of rows: just above the size from which
    # a call uses the pool.
    y = (rng.random((8200, 8)) < 0.3).astype(np.int64)
    s = rng.random((8200, 8))
    want = metrics.label_ranking_loss(y, s, n_jobs=1)
    for _ in range(500):
        metrics.label_ranking_loss(y, s)
    before = _rss_kib()
    for _ in range(10_000):
        got = metrics.label_ranking_loss(y, s)
    grown_mib = (_rss_kib() - before) / 1024
    assert got == want
    # One leaked byte per scored value would be 626 MiB; allocator noise is a few MiB.
    assert grown_mib < 32, f"RSS grew {grown_mib:.1f} MiB over 10,000 calls"
