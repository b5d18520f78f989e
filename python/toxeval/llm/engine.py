"""The runner: sends a dataset's items to a system and appends every answer to a run file.

Remote systems (``openai:``, ``openai-moderation``, ``llama-guard:``): the items are
planned into units by :func:`toxeval.llm.requests.plan`, units already answered with the
current request hash (see :mod:`toxeval.llm.runfile`) are skipped, and the rest are sent
by ``concurrency`` workers through one :class:`~toxeval.llm.client.Client`. The first unit
is sent alone, so that a wrong key, base URL or model stops the run after one request
(:class:`~toxeval.llm.client.AuthenticationFailed`, never retried). Each answer is read by
:func:`toxeval.llm.requests.read` and written at once; a request that fails after its
retries gives rows with ``"error"`` (unscored; asked again by the next run). Ctrl-C
cancels the requests in flight, closes the file (complete rows only) and raises
:class:`RunInterrupted`, whose message says how to resume.

Local systems (``lexicon``, ``python:module:attr``) are called on batches of texts in this
process and written the same way.
"""

from __future__ import annotations

import asyncio
import hashlib
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from toxeval.llm.client import AuthenticationFailed, Client, RequestFailed, RetryPolicy
from toxeval.llm.detectors import DetectorSpec, LocalSystem
from toxeval.llm.runfile import (
    RUN_FORMAT,
    RunState,
    RunWriter,
    canonical_json,
    json_scores,
    read_run,
    request_hash,
)
from toxeval.taxonomy import Taxonomy

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.llm.requests import Answer, RequestSpec, Unit

__all__ = [
    "LOCAL_BASE_URL",
    "RunInterrupted",
    "RunOptions",
    "RunStopped",
    "RunSummary",
    "dataset_keys",
    "run_local",
    "run_remote",
    "taxonomy_sha256",
]

LOCAL_BASE_URL = "local"
LOCAL_BATCH = 256


class RunStopped(ValueError):
    """The run stopped because the server refuses every request (401/403/404); the
    message says why (without the key). Rows already written stay."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM: the file holds every answer received; the message says how to
    resume. ``exit_code`` is 128 + the signal number (130 for Ctrl-C, 143 for SIGTERM)."""

    def __init__(self, message: str, exit_code: int = 130) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class Unreachable(Exception):
    """The first request got no HTTP answer at all after its retries."""


@dataclass(frozen=True)
class RunOptions:
    """How a remote run sends its requests (not what it asks: that is the RequestSpec)."""

    base_url: str = "https://api.openai.com/v1"
    api_key: str | None = None
    api_key_env: str = "OPENAI_API_KEY"  # the variable's name, for messages
    concurrency: int = 32
    rpm: float | None = None
    tpm: float | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    quiet: bool = False

    def __repr__(self) -> str:  # never show the key
        return f"RunOptions(base_url={self.base_url!r}, concurrency={self.concurrency})"


@dataclass
class RunSummary:
    """What a run did. ``skipped``: items already answered with the current hash."""

    path: str
    items: int = 0
    skipped: int = 0
    written: int = 0
    ok: int = 0
    failed: int = 0
    requests: int = 0
    retries: int = 0
    parse_counts: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    repaired_bytes: int = 0
    elapsed_s: float = 0.0
    dry_run: bool = False

    def line(self) -> str:
        if self.dry_run:
            return (
                f"dry run: {self.items} items, {self.requests} requests, about "
                f"{self.prompt_tokens} prompt tokens; nothing was sent"
            )
        parsed = sum(v for k, v in self.parse_counts.items() if k in ("ok", "partial"))
        return (
            f"{self.written} rows written to {self.path} ({self.skipped} already done), "
            f"{self.failed} failed, {parsed} parsed, {self.retries} retries, "
            f"{self.prompt_tokens + self.completion_tokens} tokens, {self.elapsed_s:.1f} s"
        )


def taxonomy_sha256(taxonomy: Taxonomy) -> str:
    """sha256 of a taxonomy's ids, names and definitions (what a prompt may show)."""
    parts = [[c.id, c.name, c.description, list(c.aliases)] for c in taxonomy.categories]
    return hashlib.sha256(canonical_json([taxonomy.name, parts]).encode()).hexdigest()


Key = tuple[str, str, "str | None"]  # (id, text, response)


def dataset_keys(dataset: Dataset) -> list[Key]:
    """(id, text, response) of every dataset row; the response only at response level."""
    responses = dataset.responses if dataset.level == "response" else None
    ids, texts = list(dataset.ids), list(dataset.texts)
    if responses is None:
        return [(i, t, None) for i, t in zip(ids, texts, strict=True)]
    return [(i, t, r) for i, t, r in zip(ids, texts, list(responses), strict=True)]


def header_line(base_url: str, fingerprint: dict[str, Any], detector: str) -> dict[str, Any]:
    from toxeval._core import __version__

    return {
        "toxeval_run": RUN_FORMAT,
        "detector": detector,
        "base_url": base_url,
        "fingerprint": fingerprint,
        "toxeval_version": str(__version__),
    }


# --------------------------------------------------------------------------- progress


class _Progress:
    """A rich progress bar on stderr (done/total, rate, ETA, retries, failures, parse
    rate, tokens); nothing when quiet."""

    def __init__(self, total: int, done: int, quiet: bool) -> None:
        self._bar: Any = None
        self._task: Any = None
        if quiet:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[info]}"),
            console=Console(stderr=True),
            transient=False,
        )
        self._task = self._bar.add_task("predict", total=total, completed=done, rate="", info="")
        self._start = time.monotonic()
        self._new = 0

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self, n: int, summary: RunSummary) -> None:
        if self._bar is None:
            return
        self._new += n
        rate = self._new / max(time.monotonic() - self._start, 1e-9)
        answered = summary.ok + summary.failed
        parsed = sum(v for k, v in summary.parse_counts.items() if k in ("ok", "partial"))
        info = (
            f"retries {summary.retries}  failed {summary.failed}  "
            f"parsed {100.0 * parsed / max(answered, 1):.0f}%  "
            f"tokens {summary.prompt_tokens + summary.completion_tokens}"
        )
        self._bar.update(self._task, advance=n, rate=f"{rate:.1f} rows/s", info=info)


# --------------------------------------------------------------------------- local


def run_local(
    system: LocalSystem,
    keys: Sequence[Key],
    path: str | Path,
    *,
    quiet: bool = True,
) -> RunSummary:
    """Run a local system over ``keys`` and append its answers to the run file ``path``."""
    t0 = time.monotonic()
    fp = system.fingerprint()
    state = read_run(path)
    hashes = [request_hash(LOCAL_BASE_URL, fp, t, r) for _, t, r in keys]
    todo = [i for i, (k, h) in enumerate(zip(keys, hashes, strict=True)) if not _done(state, k, h)]
    summary = RunSummary(path=str(path), items=len(keys), skipped=len(keys) - len(todo))
    ids = system.taxonomy.ids
    header = header_line(LOCAL_BASE_URL, fp, system.spec.text)
    with (
        RunWriter(path, header, last_header=state.header) as writer,
        _Progress(len(keys), summary.skipped, quiet) as bar,
    ):
        summary.repaired_bytes = writer.repaired_bytes
        for start in range(0, len(todo), LOCAL_BATCH):
            chunk = todo[start : start + LOCAL_BATCH]
            texts = [keys[i][2] if keys[i][2] is not None else keys[i][1] for i in chunk]
            t1 = time.monotonic()
            got = system(texts)  # type: ignore[arg-type]
            per = (time.monotonic() - t1) / max(len(chunk), 1)
            for j, i in enumerate(chunk):
                row_scores = got.scores[j]
                usable = bool(np.isfinite(row_scores).all())
                status = got.statuses[j]
                writer.write(
                    {
                        "id": keys[i][0],
                        "request_hash": hashes[i],
                        "scores": json_scores(row_scores, ids) if usable else None,
                        "output": got.outputs[j],
                        "reasoning": None,
                        "raw": [],
                        "parse_status": status,
                        "parse_reason": got.reasons[j],
                        "method": got.method,
                        "graded": got.graded[j],
                        "status_code": None,
                        "attempts": 1,
                        "latency_s": round(per, 6),
                        "usage": None,
                        "error": None,
                    }
                )
                summary.written += 1
                summary.parse_counts[status] = summary.parse_counts.get(status, 0) + 1
                summary.ok += usable
            bar.advance(len(chunk), summary)
    summary.elapsed_s = time.monotonic() - t0
    return summary


def _done(state: RunState, key: Key, h: str) -> bool:
    rec = state.current(key[0], h)
    return rec is not None and rec.error is None


# --------------------------------------------------------------------------- remote


PLAN_CHUNK = 1024  # items planned at a time: request bodies are built as they are needed


@dataclass(frozen=True)
class Planned:
    """A unit and the request hash of each of its items."""

    unit: Unit
    hashes: dict[str, str]


def plan_remote(spec: RequestSpec, keys: Sequence[Key], base_url: str) -> Iterator[Planned]:
    """The units of ``keys`` in order, planned a chunk at a time so that memory does not
    grow with the dataset (chunks are whole moderation batches, so the grouping is the
    one ``plan`` gives for the whole list)."""
    from toxeval.llm.requests import Item, plan

    fp = spec.fingerprint()
    step = spec.batch_size * max(1, -(-PLAN_CHUNK // spec.batch_size))
    for lo in range(0, len(keys), step):
        part = keys[lo : lo + step]
        items = [Item(id=i, text=t, response=r) for i, t, r in part]
        hashes = {i: request_hash(base_url, fp, t, r) for i, t, r in part}
        for unit in plan(spec, items):
            yield Planned(unit, {i: hashes[i] for i in unit.item_ids})


def _raw_for(body: dict[str, Any], position: int, n_items: int) -> dict[str, Any]:
    """The part of a response body about one item: a moderation answer for several
    inputs keeps only that input's result."""
    results = body.get("results")
    if n_items > 1 and isinstance(results, list) and len(results) == n_items:
        return {**body, "results": [results[position]]}
    return body


def _usage(bodies: Sequence[dict[str, Any]]) -> dict[str, int] | None:
    total: dict[str, int] = {}
    for b in bodies:
        u = b.get("usage")
        if isinstance(u, dict):
            for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
                v = u.get(k)
                if isinstance(v, int) and not isinstance(v, bool):
                    total[k] = total.get(k, 0) + v
    return total or None


class _Remote:
    """One remote run: the client, the writer, the summary, the progress bar."""

    def __init__(
        self,
        spec: RequestSpec,
        client: Client,
        writer: RunWriter,
        summary: RunSummary,
        bar: _Progress,
    ) -> None:
        self.spec = spec
        self.client = client
        self.writer = writer
        self.summary = summary
        self.bar = bar
        self.last_error: str | None = None

    def _failed(self, p: Planned, done: set[str], row: dict[str, Any]) -> None:
        n = 0
        for item_id in p.unit.item_ids:
            if item_id not in done:
                self.writer.write({"id": item_id, "request_hash": p.hashes[item_id], **row})
                n += 1
        self.summary.written += n
        self.summary.failed += n
        self.bar.advance(n, self.summary)

    async def unit(self, p: Planned, done: set[str]) -> None:
        unit = p.unit
        from toxeval.llm.requests import estimate_prompt_tokens

        bodies: list[dict[str, Any]] = []
        attempts = 0
        status: int | None = None
        t0 = time.monotonic()
        try:
            for call in unit.calls:
                self.summary.requests += 1
                reply = await self.client.post(
                    call.path, call.body, tokens=estimate_prompt_tokens(call)
                )
                bodies.append(reply.body)
                attempts += reply.attempts
                status = reply.status_code
        except AuthenticationFailed:
            raise
        except RequestFailed as e:
            self.last_error = str(e)
            self.summary.retries = self.client.retries
            self._failed(p, done, failed_row(str(e), e.status_code, attempts + e.attempts))
            return
        latency = round(time.monotonic() - t0, 6)
        try:
            answers = read_answers(self.spec, unit, bodies)
        except ValueError as e:  # a reader bug must not lose the bodies: keep them as a failure
            self._failed(p, done, {**failed_row(str(e), status, attempts), "raw": bodies})
            return
        written = write_answers(
            self.writer, self.spec, p, bodies, status, attempts, latency, answers, skip=done
        )
        for a in written:
            self.summary.parse_counts[a.status] = self.summary.parse_counts.get(a.status, 0) + 1
            self.summary.ok += a.scores is not None
        self.summary.written += len(written)
        usage = _usage(bodies) or {}
        self.summary.prompt_tokens += usage.get("prompt_tokens", 0)
        self.summary.completion_tokens += usage.get("completion_tokens", 0)
        self.summary.retries = self.client.retries
        self.bar.advance(len(written), self.summary)

    async def all(self, todo: Iterator[tuple[Planned, set[str]]], concurrency: int) -> None:
        first = next(todo, None)
        if first is None:
            return
        await self.unit(*first)  # alone: a refused key stops the run after one request
        if self.client.responses == 0:
            raise Unreachable(self.last_error or "no answer")

        async def worker() -> None:
            for p, done in todo:  # one shared iterator: each unit goes to one worker
                await self.unit(p, done)

        tasks = [asyncio.ensure_future(worker()) for _ in range(max(1, concurrency))]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def read_answers(spec: RequestSpec, unit: Unit, bodies: Sequence[dict[str, Any]]) -> list[Answer]:
    """:func:`toxeval.llm.requests.read`, with anything it raises (it should not) as a
    ValueError naming it, and one answer per item checked."""
    from toxeval.llm.requests import read

    try:
        answers = list(read(spec, unit, bodies))
    except Exception as e:
        raise ValueError(f"reading the answer failed: {type(e).__name__}: {e}") from None
    if len(answers) != len(unit.item_ids):
        raise ValueError(
            f"reading the answer failed: {len(answers)} answers for {len(unit.item_ids)} items"
        )
    return answers


def write_answers(
    writer: RunWriter,
    spec: RequestSpec,
    planned: Planned,
    bodies: Sequence[dict[str, Any]],
    status: int | None,
    attempts: int,
    latency: float | None,
    answers: Sequence[Answer],
    *,
    skip: set[str] | frozenset[str] = frozenset(),
) -> list[Answer]:
    """Write one row per item of the unit (but those in ``skip``) from the answers to
    its calls; returns the answers written."""
    unit = planned.unit
    n = len(unit.item_ids)
    usage = _usage(bodies)
    ids = spec.taxonomy.ids
    out: list[Answer] = []
    for pos, (item_id, a) in enumerate(zip(unit.item_ids, answers, strict=True)):
        if item_id in skip:
            continue
        out.append(a)
        writer.write(
            {
                "id": item_id,
                "request_hash": planned.hashes[item_id],
                "scores": json_scores(a.scores, ids),
                "output": a.text,
                "reasoning": a.reasoning,
                "raw": [_raw_for(b, pos, n) for b in bodies],
                "parse_status": a.status,
                "parse_reason": a.reason,
                "method": a.method,
                "graded": a.graded,
                "status_code": status,
                "attempts": attempts,
                "latency_s": latency,
                "usage": usage if n == 1 else None,
                "error": None,
            }
        )
    return out


def failed_row(message: str, status: int | None, attempts: int) -> dict[str, Any]:
    return {
        "scores": None,
        "output": None,
        "reasoning": None,
        "raw": [],
        "parse_status": None,
        "parse_reason": None,
        "method": None,
        "graded": None,
        "status_code": status,
        "attempts": attempts,
        "latency_s": None,
        "usage": None,
        "error": message,
    }


def count_done(keys: Sequence[Key], state: RunState, base_url: str, fp: dict[str, Any]) -> int:
    """How many of ``keys`` already have an answer with their current hash."""
    return sum(_done(state, k, request_hash(base_url, fp, k[1], k[2])) for k in keys)


def pending(planned: Iterator[Planned], state: RunState) -> Iterator[tuple[Planned, set[str]]]:
    """The units with an item not yet answered with its current hash, each with the ids
    of its items that are (a moderation batch is sent whole; those rows are not
    written twice)."""
    for p in planned:
        done = {
            i
            for i in p.unit.item_ids
            if (rec := state.current(i, p.hashes[i])) is not None and rec.error is None
        }
        if len(done) < len(p.unit.item_ids):
            yield p, done


def run_remote(
    spec: RequestSpec,
    keys: Sequence[Key],
    path: str | Path,
    options: RunOptions,
    *,
    detector: DetectorSpec,
) -> RunSummary:
    """Send ``keys`` as ``spec`` says and append every answer to ``path``; resumes."""
    t0 = time.monotonic()
    fp = spec.fingerprint()
    state = read_run(path, light=True)
    done = count_done(keys, state, options.base_url, fp)
    todo = pending(plan_remote(spec, keys, options.base_url), state)
    summary = RunSummary(path=str(path), items=len(keys), skipped=done)
    header = header_line(options.base_url, fp, detector.text)

    async def main() -> None:
        client = Client(
            options.base_url,
            options.api_key,
            concurrency=options.concurrency,
            rpm=options.rpm,
            tpm=options.tpm,
            connect_timeout=options.connect_timeout,
            read_timeout=options.read_timeout,
            retry=options.retry,
        )
        async with client:
            with (
                RunWriter(path, header, last_header=state.header) as writer,
                _Progress(len(keys), done, options.quiet) as bar,
            ):
                summary.repaired_bytes = writer.repaired_bytes
                await _Remote(spec, client, writer, summary, bar).all(todo, options.concurrency)

    terminated: list[int] = [0]
    try:
        _run_async(main(), terminated)
    except Unreachable as e:
        raise RunStopped(
            f"no answer from {options.base_url}, run stopped: {e}; check --base-url "
            f"(rerun the same command to resume)"
        ) from None
    except AuthenticationFailed as e:
        unset = e.status_code == 401 and options.api_key is None
        raise RunStopped(
            f"the server refused the request, run stopped: {e}"
            + (f" (${options.api_key_env} is not set)" if unset else "")
            + f"; {summary.written} rows were "
            f"written to {path}; fix the cause and rerun the same command to resume"
        ) from None
    except KeyboardInterrupt:
        summary.elapsed_s = time.monotonic() - t0
        raise RunInterrupted(
            f"interrupted: {summary.skipped + summary.written} of {summary.items} items are "
            f"in {path}; rerun the same command to resume (answered items are not sent again)",
            exit_code=128 + int(terminated[0] or signal.SIGINT),
        ) from None
    summary.elapsed_s = time.monotonic() - t0
    return summary


def _run_async(coro: Any, terminated: list[int]) -> None:
    """``asyncio.run``: on Ctrl-C or SIGTERM it cancels the run (requests in flight,
    then the file is closed by its ``with``), puts the signal's number in ``terminated``
    and raises KeyboardInterrupt.

    Both signals are handled by the loop when it runs in the main thread. Python 3.10's
    ``asyncio.run`` has no Ctrl-C handling of its own: the KeyboardInterrupt lands in
    whichever task runs, and its shutdown then logs that task's traceback. A second
    Ctrl-C while the run winds down interrupts as Python's default handler does."""

    async def guarded() -> None:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()

        def on_signal(sig: int) -> None:
            if not terminated[0]:
                terminated[0] = sig
            if sig == signal.SIGINT:
                loop.remove_signal_handler(signal.SIGINT)  # the next one is Python's
            if task is not None:
                task.cancel()

        handled = threading.current_thread() is threading.main_thread()
        if handled:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, on_signal, sig)
        try:
            await coro
        finally:
            if handled:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    loop.remove_signal_handler(sig)

    try:
        asyncio.run(guarded())
    except asyncio.CancelledError:
        if terminated[0]:
            raise KeyboardInterrupt from None
        raise
