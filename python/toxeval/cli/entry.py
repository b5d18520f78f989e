""":func:`main`, the ``toxeval`` command's entry point: parses the arguments, runs the
subcommand, and turns every error into an exit code and one line on stderr (2 for bad
usage or input, 1 for an internal error, 130 for Ctrl-C, 143 for SIGTERM).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toxeval.cli.commands import COMMANDS
from toxeval.cli.parser import PROG, UsageError, build_parser
from toxeval.cli.progress import TIMINGS

if TYPE_CHECKING:
    pass


def _error(msg: str) -> None:
    line = " ".join(str(msg).split())  # one line, whatever the message holds
    print(f"{PROG}: error: {line}", file=sys.stderr)


def _no_hugepage_madvise() -> None:
    """Ask numpy not to madvise its large arrays into transparent huge pages.

    A command touches each of its large arrays about once, so huge pages save little,
    while with the kernel's usual ``defrag=madvise`` setting every huge-page fault on a
    busy machine with fragmented memory may stall in direct compaction: on the 1M-row
    benchmark that cost 0.5-1.5 s of system time (of a 3-6 s run). numpy's own switch,
    ``NUMPY_MADVISE_HUGEPAGE``, wins when the user sets it."""
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        return
    try:
        from numpy._core import multiarray
    except ImportError:  # numpy < 2
        from numpy.core import multiarray  # type: ignore[no-redef,unused-ignore]
    setter = getattr(multiarray, "_set_madvise_hugepage", None)
    if setter is not None:
        setter(False)


class Terminated(KeyboardInterrupt):
    """SIGTERM (``timeout``, ``docker stop``, a batch scheduler): the command stops as on
    Ctrl-C, its ``finally`` blocks run (a half-written output folder is removed), and it
    exits with 143."""

    exit_code = 128 + signal.SIGTERM


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated("terminated")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toxeval`` command; returns the exit code."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main else None
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: Sequence[str] | None) -> int:
    debug = os.environ.get("TOXEVAL_DEBUG", "") not in ("", "0")
    TIMINGS.reset()
    _no_hugepage_madvise()
    try:
        args = build_parser().parse_args(argv)
        command = args.command or "evaluate"
        if args.command is None:
            rest = list(sys.argv[1:] if argv is None else argv)
            args = build_parser().parse_args(["evaluate", *rest])
        code = COMMANDS[command](args)
        TIMINGS.emit()
        return code
    except UsageError as e:
        _error(str(e))
        return 2
    except (ValueError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
        # DatasetError, PredictionError, TaxonomyError and validation errors are ValueErrors.
        if debug:
            traceback.print_exc()
        _error(str(e) or type(e).__name__)
        return 2
    except OSError as e:
        # the file system refused (a name too long, a full disk, a read-only mount, a
        # link loop): what the user gave or where it runs, not a failure of toxeval
        if debug:
            traceback.print_exc()
        said = e.strerror or str(e) or type(e).__name__
        _error(f"{e.filename}: {said}" if e.filename is not None else said)
        return 2
    except KeyboardInterrupt as e:
        _error(str(e) or "interrupted")
        code = getattr(e, "exit_code", 130)  # a run stopped by SIGTERM says 143
        return code if isinstance(code, int) else 130
    except Exception as e:
        if debug:
            traceback.print_exc()
        _error(
            f"internal error: {type(e).__name__}: {e} "
            f"(rerun with TOXEVAL_DEBUG=1 for the traceback, and please report it)"
        )
        return 1
