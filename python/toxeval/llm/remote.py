"""The remote worker loop: ``concurrency`` workers send the planned units through one
:class:`~toxeval.llm.client.Client` and write each answer as it arrives.

The first unit is sent alone, so that a wrong key, base URL or model stops the run after
one request (:class:`~toxeval.llm.client.AuthenticationFailed`, never retried) and a
server that never answers stops it with :class:`Unreachable`. A unit whose request fails
after its retries gives rows with ``"error"`` (unscored; asked again by the next run); an
answer the reader cannot take keeps its bodies in a failed row.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from toxeval.llm.client import AuthenticationFailed, Client, RequestFailed
from toxeval.llm.plan import Planned
from toxeval.llm.progress import Progress, RunSummary
from toxeval.llm.rows import UnitReplies, failed_row, read_answers, total_usage, write_answers
from toxeval.llm.runfile import RunWriter

if TYPE_CHECKING:
    from toxeval.llm.requests import RequestSpec, Unit

__all__ = ["RemoteRun", "Unreachable"]


class Unreachable(Exception):
    """The first request got no HTTP answer at all after its retries."""


class RemoteRun:
    """One remote run: the client, the writer, the summary, the progress bar."""

    def __init__(
        self,
        spec: RequestSpec,
        client: Client,
        writer: RunWriter,
        summary: RunSummary,
        bar: Progress,
    ) -> None:
        self.spec = spec
        self.client = client
        self.writer = writer
        self.summary = summary
        self.bar = bar
        self.last_error: str | None = None

    def _failed(self, p: Planned, done: set[str], row: dict[str, Any]) -> None:
        n = 0
        size = len(p.unit.item_ids)
        for item_id in p.unit.item_ids:
            if item_id not in done:
                line = {"id": item_id, "request_hash": p.hashes[item_id], **row}
                if size > 1:  # the unit's attempts and retries are repeated on each row
                    line["unit_items"] = size
                self.writer.write(line)
                n += 1
        self.summary.written += n
        self.summary.failed += n
        self.bar.advance(n)

    async def send(self, unit: Unit) -> tuple[UnitReplies, RequestFailed | None]:
        """Send the calls of ``unit`` in turn (the send stage): what they got, and the
        error of a request that failed after its retries (returned, not raised; a refused
        key is raised, it stops the run)."""
        from toxeval.llm.requests import estimate_prompt_tokens

        sent = UnitReplies(calls=0)
        t0 = time.monotonic()
        try:
            for call in unit.calls:
                self.summary.requests += 1
                sent.calls = (sent.calls or 0) + 1
                # the size estimate only matters to a tokens-per-minute limit
                tokens = estimate_prompt_tokens(call) if self.client.tokens_limiter else 0
                reply = await self.client.post(call.path, call.body, tokens=tokens)
                # what the run file keeps (raw, and the output read from it) never holds
                # the key, even from a server that echoes the request
                sent.bodies.append(self.client.redact_body(reply.body))
                sent.attempts += reply.attempts
                sent.status = reply.status_code
                if len(sent.bodies) == 1:
                    sent.ttfb = None if reply.ttfb_s is None else round(reply.ttfb_s, 6)
        except AuthenticationFailed:
            raise
        except RequestFailed as e:
            sent.attempts += e.attempts
            return sent, e
        sent.latency = round(time.monotonic() - t0, 6)
        return sent, None

    async def unit(self, p: Planned, done: set[str]) -> None:
        """One planned unit through the stages: send its calls, read the answers, write
        a row per item not in ``done`` (a failed row when the request or the reading
        failed)."""
        sent, error = await self.send(p.unit)
        self.summary.retries = self.client.retries
        if error is not None:
            self.last_error = str(error)
            row = failed_row(str(error), error.status_code, sent.attempts, sent.calls)
            self._failed(p, done, row)
            return
        try:
            answers = read_answers(self.spec, p.unit, sent.bodies)
        except ValueError as e:  # a reader bug must not lose the bodies: keep them as a failure
            row = failed_row(str(e), sent.status, sent.attempts, sent.calls)
            self._failed(p, done, {**row, "raw": sent.bodies})
            return
        written = write_answers(self.writer, self.spec, p, sent, answers, skip=done)
        for a in written:
            self.summary.parse_counts[a.status] = self.summary.parse_counts.get(a.status, 0) + 1
            self.summary.ok += a.scores is not None
        self.summary.written += len(written)
        usage = total_usage(sent.bodies) or {}
        self.summary.prompt_tokens += usage.get("prompt_tokens", 0)
        self.summary.completion_tokens += usage.get("completion_tokens", 0)
        self.bar.advance(len(written))

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
