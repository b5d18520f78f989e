"""What a command shows on the terminal while it runs: a rich spinner naming the current
step on stderr, and with ``TOXEVAL_TIMINGS=1`` the wall and CPU time of each step.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from toxeval.cli.parser import PROG

if TYPE_CHECKING:
    pass


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


class _Timings:
    """Wall time per named step, printed as one JSON line on stderr at exit when
    ``$TOXEVAL_TIMINGS`` is set (benches/bench_end_to_end.py reads it), followed by a
    second line with the process CPU time (all threads) of each step."""

    def __init__(self) -> None:
        self.enabled = False
        self._marks: list[tuple[str, float, float]] = []

    def reset(self) -> None:
        self.enabled = os.environ.get("TOXEVAL_TIMINGS", "") not in ("", "0")
        self._marks = []

    def mark(self, name: str) -> None:
        if self.enabled:
            self._marks.append((name, time.perf_counter(), time.process_time()))

    def emit(self) -> None:
        if not self.enabled or not self._marks:
            return
        end = ("", time.perf_counter(), time.process_time())
        wall: dict[str, float] = {}
        cpu: dict[str, float] = {}
        for (name, w0, c0), (_, w1, c1) in zip(self._marks, [*self._marks[1:], end], strict=True):
            wall[name] = round(wall.get(name, 0.0) + w1 - w0, 4)
            cpu[name] = round(cpu.get(name, 0.0) + c1 - c0, 4)
        print(f"{PROG}: timings: {json.dumps(wall)}", file=sys.stderr)
        print(f"{PROG}: cpu timings: {json.dumps(cpu)}", file=sys.stderr)


TIMINGS = _Timings()


@contextmanager
def progress_steps(quiet: bool) -> Iterator[Callable[[str], None]]:
    """A transient spinner on stderr naming the current step (off when quiet or no TTY).

    With ``--quiet`` rich is not imported at all (it costs ~0.1 s of start-up)."""
    enabled = False
    if not quiet:
        console = _stderr_console()
        enabled = console.is_terminal
    if not enabled:
        yield TIMINGS.mark
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as prog:
        task = prog.add_task("starting", total=None)

        def step(name: str) -> None:
            TIMINGS.mark(name)
            prog.update(task, description=name)

        yield step


@contextmanager
def progress_rows(
    quiet: bool,
) -> Iterator[tuple[Callable[[str], None], Callable[[int, int], None]]]:
    """Like :func:`progress_steps`, with a bar of rows done out of the step's total:
    yields ``(step, advance)``; ``advance(done, total)`` moves the bar of the current
    step (out-of-core scoring: shards read, partitions joined)."""
    enabled = False
    if not quiet:
        console = _stderr_console()
        enabled = console.is_terminal
    if not enabled:
        yield TIMINGS.mark, _no_rows
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as prog:
        tasks = [prog.add_task("starting", total=None)]

        def step(name: str) -> None:
            # a new task per step: its bar starts empty, with no total until told
            TIMINGS.mark(name)
            prog.remove_task(tasks[-1])
            tasks.append(prog.add_task(name, total=None))

        def advance(done: int, total: int) -> None:
            prog.update(tasks[-1], total=total, completed=done)

        yield step, advance


def _no_rows(done: int, total: int) -> None:
    """No bar to move (quiet, or not a terminal)."""
