"""What a run did (:class:`RunSummary`) and the progress bar that shows it while it runs.

The bar is redrawn by rich's own thread ten times a second; :meth:`Progress.advance`
only adds to a counter and hands rich the new figures at most as often, so a fast run
does not pay for a bar update per row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Progress", "RunSummary"]

REFRESH_S = 0.1  # seconds between updates handed to rich (it redraws 10 times a second)


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
    truncated: int = 0  # texts cut to a local classifier's token limit
    elapsed_s: float = 0.0
    dry_run: bool = False
    # what the user should know about the rows run (a --sample larger than the dataset)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        if self.dry_run:
            per = ""
            if self.items and self.requests > self.items:  # a single-policy guard: K each
                per = f" ({self.requests / self.items:g} per item)"
            return (
                f"dry run: {self.items} items, {self.requests} requests{per}, about "
                f"{self.prompt_tokens} prompt tokens; nothing was sent"
            )
        parsed = sum(v for k, v in self.parse_counts.items() if k in ("ok", "partial"))
        cut = f", {self.truncated} truncated to the model's token limit" if self.truncated else ""
        return (
            f"{self.written} rows written to {self.path} ({self.skipped} already done), "
            f"{self.failed} failed, {parsed} parsed, {self.retries} retries, "
            f"{self.prompt_tokens + self.completion_tokens} tokens{cut}, {self.elapsed_s:.1f} s"
        )


class Progress:
    """A rich progress bar on stderr (done/total, rate, ETA, retries, failures, parse
    rate, tokens); nothing when quiet."""

    def __init__(self, total: int, done: int, quiet: bool, summary: RunSummary) -> None:
        self._bar: Any = None
        self._summary = summary
        self._task: Any = None
        if quiet:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
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
        self._new = 0  # rows this run added
        self._pending = 0  # of those, rows rich has not been told about
        self._shown = 0.0

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._show(time.monotonic())  # the last rows and figures
            self._bar.stop()

    def advance(self, n: int) -> None:
        """``n`` more rows written (the figures are read from the run's summary)."""
        if self._bar is None:
            return
        self._new += n
        self._pending += n
        now = time.monotonic()
        if now - self._shown >= REFRESH_S:
            self._show(now)

    def _show(self, now: float) -> None:
        """Hand rich the rows counted since the last update and the current figures."""
        summary = self._summary
        answered = summary.ok + summary.failed
        parsed = sum(v for k, v in summary.parse_counts.items() if k in ("ok", "partial"))
        # no answer yet (or none to ask: a resumed run already done): no share, no rate
        share = f"{100.0 * parsed / answered:.0f}%" if answered else "-"
        rate = f"{self._new / max(now - self._start, 1e-9):.1f} rows/s" if self._new else "-"
        info = (
            f"retries {summary.retries}  failed {summary.failed}  parsed {share}  "
            f"tokens {summary.prompt_tokens + summary.completion_tokens}"
        )
        self._bar.update(self._task, advance=self._pending, rate=rate, info=info)
        self._pending = 0
        self._shown = now
