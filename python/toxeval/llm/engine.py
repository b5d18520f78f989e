"""The runner: sends a dataset's items to a system and appends every answer to a run file.

Remote systems (``openai:``, ``openai-moderation``, ``llama-guard:``): the items are
planned into units by :func:`toxeval.llm.plan.plan_remote_work`, units already answered
with the current request hash (see :mod:`toxeval.llm.runfile`) are skipped, and the rest
are sent by ``concurrency`` workers through one :class:`~toxeval.llm.client.Client`
(:mod:`toxeval.llm.remote`). The first unit is sent alone, so that a wrong key, base URL
or model stops the run after one request (:class:`RunStopped`). Each answer is read by
:func:`toxeval.llm.requests.read` and written at once (:mod:`toxeval.llm.rows`); a
request that fails after its retries gives rows with ``"error"`` (unscored; asked again
by the next run). Ctrl-C or SIGTERM cancels the requests in flight, closes the file
(complete rows only) and raises :class:`RunInterrupted`, whose message says how to
resume.

Local systems (``lexicon``, ``python:module:attr``) are run by
:func:`toxeval.llm.local.run_local`; the summary and progress bar are in
:mod:`toxeval.llm.progress`.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toxeval.llm.client import (
    DEFAULT_REQUEST_DEADLINE,
    AuthenticationFailed,
    Client,
    RetryPolicy,
)
from toxeval.llm.detectors import DetectorSpec
from toxeval.llm.local import LOCAL_BASE_URL, run_local
from toxeval.llm.plan import Key, dataset_keys, plan_remote_work
from toxeval.llm.progress import Progress, RunSummary
from toxeval.llm.remote import RemoteRun, Unreachable
from toxeval.llm.requests import public_url
from toxeval.llm.rows import header_line, taxonomy_sha256
from toxeval.llm.runfile import RunWriter

if TYPE_CHECKING:
    from toxeval.llm.options import PredictOptions
    from toxeval.llm.requests import RequestSpec

__all__ = [
    "LOCAL_BASE_URL",
    "RunInterrupted",
    "RunOptions",
    "RunStopped",
    "RunSummary",
    "dataset_keys",
    "run_local",
    "run_remote",
    "send_options",
    "taxonomy_sha256",
]


class RunStopped(ValueError):
    """The run stopped because the server refuses every request (401/403/404); the
    message says why (without the key). Rows already written stay."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM: the file holds every answer received; the message says how to
    resume. ``exit_code`` is 128 + the signal number (130 for Ctrl-C, 143 for SIGTERM)."""

    def __init__(self, message: str, exit_code: int = 130) -> None:
        super().__init__(message)
        self.exit_code = exit_code


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
    request_deadline: float = DEFAULT_REQUEST_DEADLINE  # one attempt, answer included
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    quiet: bool = False

    def __repr__(self) -> str:  # never show the key, nor a password in the URL
        url = public_url(self.base_url)
        return f"RunOptions(base_url={url!r}, concurrency={self.concurrency})"


def send_options(opts: PredictOptions) -> RunOptions:
    """How a run of ``opts`` sends its requests; the API key is read from the environment
    variable ``opts.api_key_env`` here, and kept nowhere else."""
    import os

    connect_t, read_t = opts.timeout
    return RunOptions(
        base_url=opts.url,
        api_key=os.environ.get(opts.api_key_env) or None,
        api_key_env=opts.api_key_env,
        concurrency=opts.concurrency,
        rpm=opts.rpm,
        tpm=opts.tpm,
        connect_timeout=connect_t,
        read_timeout=read_t,
        request_deadline=float(opts.request_deadline),
        retry=RetryPolicy(max_retries=opts.max_retries, base_delay=opts.retry_base_delay),
        quiet=opts.quiet,
    )


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
    work = plan_remote_work(spec, keys, options.base_url, path)
    state, done, todo = work.state, work.done, work.todo
    summary = RunSummary(path=str(path), items=len(keys), skipped=done)
    header = header_line(work.url, work.fingerprint, detector.text)

    async def main() -> None:
        client = Client(
            options.base_url,
            options.api_key,
            concurrency=options.concurrency,
            rpm=options.rpm,
            tpm=options.tpm,
            connect_timeout=options.connect_timeout,
            read_timeout=options.read_timeout,
            request_deadline=options.request_deadline,
            retry=options.retry,
        )
        async with client:
            with (
                RunWriter(path, header, last_header=state.header) as writer,
                Progress(len(keys), done, options.quiet, summary) as bar,
            ):
                summary.repaired_bytes = writer.repaired_bytes
                await RemoteRun(spec, client, writer, summary, bar).all(todo, options.concurrency)

    terminated: list[int] = [0]
    try:
        _run_async(main(), terminated)
    except Unreachable as e:
        raise RunStopped(
            f"no answer from {public_url(options.base_url)}, run stopped: {e}; check --base-url "
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
        # the caller's handlers, given back after the run (the loop resets to defaults)
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        if handled:
            for sig in previous:
                loop.add_signal_handler(sig, on_signal, sig)
        try:
            await coro
        finally:
            if handled:
                for sig, handler in previous.items():
                    loop.remove_signal_handler(sig)
                    if handler is not None:
                        signal.signal(sig, handler)

    try:
        asyncio.run(guarded())
    except asyncio.CancelledError:
        if terminated[0]:
            raise KeyboardInterrupt from None
        raise
