"""The LLM runner's own overhead, against the fake OpenAI server of the tests.

    python benches/bench_runner.py [--rows 2000] [--latency-rows 1920] [--client-posts 3000]
        [--memory-rows 100000] [--guard-rows 0] [--guard-rounds 3]

The server (tests/fake_openai.py) runs in its own process on 127.0.0.1; the runner is
``toxeval.llm.predict`` with ``openai:fake`` (json scoring, the shipped zero-shot
template), so each row costs what a real run costs on the client: building the request,
the HTTP round trip (aiohttp, docs/llm.md, "The HTTP transport"), reading the
answer, appending the row.

Each throughput run follows a 64-row warm-up run (imports, the template), so the figures
are a run's steady cost; the start-up a first run pays once (~0.5-1 s of imports) is not
in them. CPU ms/row is this process's CPU time over the timed run (the runner's cost,
which load on the machine inflates far less than rows/s) and the server process's.

1. **zero latency**, concurrency 64: rows/s (target >= 1,000), i.e. the runner's ceiling.
2. **100 ms latency**, concurrency 64: rows/s against the ideal 64 / 0.1 s = 640 rows/s
   (target >= 80 %), with the mean request time the runner saw, the requests in
   flight on average (rows/s x mean request time) and the runner's event-loop lag (how
   late a 5 ms sleep in the runner's loop wakes, on average): a request time well over
   100 ms with a small lag is time spent outside the runner (the server, the machine).
3. **the client alone**: ``--client-posts`` posts of a ~1.2 KB chat body through
   :class:`toxeval.llm.client.Client` at the same concurrency, nothing else of the
   runner: the transport's CPU ms per request (0 skips it).
4. **memory**: ``toxeval predict`` over ``--memory-rows`` rows in a subprocess, its RSS
   sampled every 0.5 s; the table shows the RSS after 10 %, 50 % and 100 % of the rows
   (flat: the 100 % figure within 10 % of the 10 % one).
5. **guard scoring overhead** (``--guard-rows N``; 0, the default, skips it): the
   client's CPU ms per request of a guard request read with logprobs against a plain
   chat request, all against one server process in the same run, alternated over
   ``--guard-rounds`` rounds (medians shown): ``openai:fake`` (json scoring, the plain
   request), ``llama-guard:guard --scoring logprobs`` through chat and through
   ``--api completions`` (the server answers ``unsafe\nS1,S10`` with 20 top logprobs
   per token, as a real server asked for 20 does), and ``policy-guard:policy``
   (15 requests per row, one Yes/No token with 20 alternatives each). A guard row's
   extra cost on the client is the longer answer body (its logprobs) and reading it.

Both processes share the machine's cores with each other (and with anything else that
runs): on a busy 2-core machine the figures are the machine's, not the runner's. The load
average is printed with the table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fake_openai import write_dataset  # noqa: E402
from toxeval.llm import predict  # noqa: E402
from toxeval.llm.remote import RemoteRun  # noqa: E402

LAGS: list[float] = []  # event-loop lag samples (s) of the current run


@contextmanager
def lag_probe() -> Iterator[list[float]]:
    """Record, while a run's workers run, how late a 5 ms sleep in its event loop wakes."""
    real = RemoteRun.all

    async def probed(self: RemoteRun, *args: object, **kw: object) -> None:
        async def probe() -> None:
            loop = asyncio.get_running_loop()
            while True:
                t = loop.time()
                await asyncio.sleep(0.005)
                LAGS.append(loop.time() - t - 0.005)

        task = asyncio.ensure_future(probe())
        try:
            await real(self, *args, **kw)  # type: ignore[arg-type]
        finally:
            task.cancel()

    LAGS.clear()
    RemoteRun.all = probed  # type: ignore[method-assign]
    try:
        yield LAGS
    finally:
        RemoteRun.all = real  # type: ignore[method-assign]


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (from /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def server(latency: float) -> Iterator[tuple[str, int]]:
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "fake_openai.py"), "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip(), proc.pid
    finally:
        proc.kill()
        proc.wait()


def throughput(
    tmp: Path, rows: int, latency: float, concurrency: int
) -> tuple[float, int, float, float, float, float]:
    """(rows/s, retries, the runner's CPU ms per row, the server's CPU ms per row, the
    mean request time in s, the mean event-loop lag in s) of one run after a warm-up
    run. On a busy machine the CPU
    times say what the runner and the server cost when rows/s cannot; rows/s times the
    mean request time is how many requests were in flight on average (Little's law):
    near ``concurrency``, the runner kept every slot busy and what is lost is in the
    round trip itself."""
    ds = tmp / f"ds-{rows}.jsonl"
    write_dataset(ds, rows)
    warm = tmp / "ds-warm.jsonl"
    write_dataset(warm, 64)
    run = tmp / f"run-{rows}-{latency}.jsonl"
    run.unlink(missing_ok=True)
    with server(latency) as (url, pid):
        predict(warm, "openai:fake", tmp / f"warm-{latency}.jsonl", base_url=url)
        with lag_probe() as lags:
            t0, c0, s0 = time.perf_counter(), time.process_time(), cpu_s(pid)
            s = predict(ds, "openai:fake", run, base_url=url, concurrency=concurrency)
            dt, cpu, scpu = time.perf_counter() - t0, time.process_time() - c0, cpu_s(pid) - s0
    if s.written != rows or s.failed:
        raise SystemExit(f"bench run incomplete: {s.line()}")
    with open(run, encoding="utf-8") as f:
        times = [r["latency_s"] for r in map(json.loads, f) if "latency_s" in r]
    lag = sum(lags) / max(1, len(lags))
    return rows / dt, s.retries, 1000.0 * cpu / rows, 1000.0 * scpu / rows, sum(times) / rows, lag


def client_alone(posts: int, concurrency: int) -> tuple[float, float]:
    """(posts/s, CPU ms per post) of ``posts`` posts through one Client, after 200."""
    from toxeval.llm.client import Client

    system = "judge the text " * 80  # with the user turn, a ~1.2 KB JSON body
    body = {"model": "m", "messages": [{"role": "system", "content": system}]}
    body["messages"].append({"role": "user", "content": "judge item-00007"})

    async def go(url: str, n: int) -> None:
        async with Client(url, concurrency=concurrency) as c:
            todo = iter(range(n))

            async def worker() -> None:
                for _ in todo:
                    await c.post("/chat/completions", body)

            await asyncio.gather(*(worker() for _ in range(concurrency)))

    with server(0.0) as (url, _):
        asyncio.run(go(url, 200))
        t0, c0 = time.perf_counter(), time.process_time()
        asyncio.run(go(url, posts))
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    return posts / dt, 1000.0 * cpu / posts


@contextmanager
def guard_server() -> Iterator[str]:
    """The fake server in its own process, answering model ``guard`` as Llama Guard and
    ``policy`` as a single-policy guard, both with logprobs (tests/fake_openai.py)."""
    cmd = [sys.executable, str(ROOT / "tests" / "fake_openai.py")]
    cmd += ["--guard-model", "guard", "--policy-model", "policy"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()


GUARD_CASES = {  # name: (detector, predict options, requests per row)
    "plain chat (openai:, json)": ("openai:fake", {}, 1),
    "Llama Guard, logprobs, chat": ("llama-guard:guard", {"scoring": "logprobs"}, 1),
    "Llama Guard, logprobs, completions": (
        "llama-guard:guard", {"scoring": "logprobs", "api": "completions"}, 1),
    "policy guard, logprobs, chat (15 per row)": ("policy-guard:policy", {}, 15),
}  # fmt: skip


def guard_overhead(tmp: Path, rows: int, rounds: int, concurrency: int) -> dict[str, list[float]]:
    """{case: client CPU ms per request of each round} of GUARD_CASES, alternated over
    ``rounds`` rounds against one server, each case warmed up on 64 requests first; a
    policy guard's rows are ``rows / 15``, so that every case sends about ``rows``
    requests."""
    out: dict[str, list[float]] = {name: [] for name in GUARD_CASES}
    with guard_server() as url:
        for name, (det, opts, per_row) in GUARD_CASES.items():
            warm = tmp / f"guard-warm-{per_row}.jsonl"
            write_dataset(warm, max(1, 64 // per_row))
            predict(warm, det, tmp / f"warm-{len(out[name])}-{hash(name)}.jsonl", base_url=url,
                    **opts)  # fmt: skip
        for r in range(rounds):
            for name, (det, opts, per_row) in GUARD_CASES.items():
                n = max(1, rows // per_row)
                ds = tmp / f"guard-ds-{n}.jsonl"
                if not ds.exists():
                    write_dataset(ds, n)
                run = tmp / f"guard-run-{r}-{hash(name)}.jsonl"
                c0 = time.process_time()
                s = predict(ds, det, run, base_url=url, concurrency=concurrency, **opts)
                cpu = time.process_time() - c0
                if s.written != n or s.failed:
                    raise SystemExit(f"guard bench run incomplete ({name}): {s.line()}")
                with open(run, encoding="utf-8") as f:
                    rows_read = [json.loads(line) for line in f][1:]
                if not all(row["graded"] for row in rows_read):  # measured what it says
                    raise SystemExit(f"guard bench rows not graded ({name})")
                out[name].append(1000.0 * cpu / (n * per_row))
    return out


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def memory(tmp: Path, rows: int) -> list[tuple[int, int]]:
    """(rows written, RSS kB) samples of a `toxeval predict` subprocess."""
    ds = tmp / f"ds-{rows}.jsonl"
    write_dataset(ds, rows)
    run = tmp / "run-memory.jsonl"
    run.unlink(missing_ok=True)
    samples: list[tuple[int, int]] = []
    with server(0.0) as (url, _):
        cmd = [sys.executable, "-m", "toxeval.cli", "predict", "--dataset", str(ds)]
        cmd += ["--detector", "openai:fake", "--base-url", url, "--out", str(run), "-q"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        while proc.poll() is None:
            try:
                kb = rss_kb(proc.pid)
            except OSError:
                break
            done = run.read_bytes().count(b"\n") - 1 if run.exists() else 0
            samples.append((max(done, 0), kb))
            time.sleep(0.5)
        if proc.wait() != 0:
            raise SystemExit("the memory run failed")
    return samples


def at(samples: list[tuple[int, int]], fraction: float, rows: int) -> int:
    """The largest RSS sampled up to ``fraction`` of the rows."""
    upto = [kb for done, kb in samples if done <= fraction * rows]
    return max(upto) if upto else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--latency-rows", type=int, default=1920)
    ap.add_argument("--memory-rows", type=int, default=100_000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--client-posts", type=int, default=3000)
    ap.add_argument("--guard-rows", type=int, default=0)
    ap.add_argument("--guard-rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        zero, zero_retries, zero_cpu, zero_srv, _, _ = throughput(
            tmp, args.rows, 0.0, args.concurrency
        )
        slow, slow_retries, slow_cpu, slow_srv, slow_s, slow_lag = throughput(
            tmp, args.latency_rows, 0.1, args.concurrency
        )
        ideal = args.concurrency / 0.1
        alone = client_alone(args.client_posts, args.concurrency) if args.client_posts else None
        mem = memory(tmp, args.memory_rows) if args.memory_rows else []
        guard = (
            guard_overhead(tmp, args.guard_rows, args.guard_rounds, args.concurrency)
            if args.guard_rows
            else {}
        )
    load = os.getloadavg()
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {load[0]:.1f} / {load[1]:.1f}; CPU bound on one free core: "
        f"{1000 / zero_cpu:.0f} rows/s (1000 / runner CPU ms per row)"
    )
    print("| case | figure | target |")
    print("| --- | --- | --- |")
    print(
        f"| zero latency, concurrency {args.concurrency}, {args.rows} rows | "
        f"{zero:.0f} rows/s ({zero_retries} retries; CPU ms/row: runner {zero_cpu:.2f}, "
        f"server {zero_srv:.2f}) | "
        ">= 1000 rows/s |"
    )
    print(
        f"| 100 ms latency, concurrency {args.concurrency}, {args.latency_rows} rows | "
        f"{slow:.0f} rows/s ({100 * slow / ideal:.0f} % of {ideal:.0f}; {slow_retries} retries; "
        f"CPU ms/row: runner {slow_cpu:.2f}, server {slow_srv:.2f}; mean request "
        f"{1000 * slow_s:.0f} ms, {slow * slow_s:.0f} in flight; event-loop lag "
        f"{1000 * slow_lag:.1f} ms) | >= 80 % |"
    )
    if alone:
        print(
            f"| the client alone, concurrency {args.concurrency}, {args.client_posts} posts | "
            f"{alone[0]:.0f} posts/s; CPU ms/post {alone[1]:.3f} | |"
        )
    if mem:
        n = args.memory_rows
        a, b, c = (at(mem, f, n) / 1024 for f in (0.1, 0.5, 1.0))
        print(
            f"| RSS of `toxeval predict` over {n} rows | {a:.0f} / {b:.0f} / {c:.0f} MB "
            f"after 10 / 50 / 100 % | flat |"
        )
    if guard:
        base = statistics.median(next(iter(guard.values())))
        for name, ms in guard.items():
            med = statistics.median(ms)
            spread = ", ".join(f"{m:.3f}" for m in ms)
            per_row = GUARD_CASES[name][2]
            print(
                f"| guard overhead: {name}, ~{args.guard_rows} requests x {args.guard_rounds} "
                f"| client CPU {med:.3f} ms/request, {med * per_row:.3f} ms/row (rounds: "
                f"{spread} ms/request); {med / base:.2f}x the plain chat request | |"
            )


if __name__ == "__main__":
    main()
