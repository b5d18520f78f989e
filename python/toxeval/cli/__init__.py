"""The ``toxeval`` command line: evaluate, predict, score, datasets, taxonomy.

Exit codes: 0 ok; 2 bad usage or bad input (a one-line ``toxeval: error: ...`` on stderr,
no traceback); 1 internal error (one line and a hint to rerun with ``TOXEVAL_DEBUG=1``,
which prints the traceback). See docs/cli.md.

The parts, each a module of this package: :mod:`~toxeval.cli.parser` (arguments),
:mod:`~toxeval.cli.commands` (one function per subcommand), :mod:`~toxeval.cli.outputs`
(the ``--out`` folder), :mod:`~toxeval.cli.progress` (the terminal display) and
:mod:`~toxeval.cli.entry` (:func:`main` and exit codes).
"""

from __future__ import annotations

from toxeval.cli.entry import main as main
from toxeval.cli.parser import PLOT_FILES as PLOT_FILES
from toxeval.cli.parser import PROG as PROG

__all__ = ["main"]
