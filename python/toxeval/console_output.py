"""The rich console every toxeval command prints its tables and reports on.

On a terminal, rich fits output to the terminal's width. Piped or redirected (not a
TTY), rich would assume 80 columns and cut long cells (paths, dataset names, system
names) with an ellipsis; a pipe has no width to fit, so there the console is wide
enough that nothing is cut, and each table takes the width its cells need. ``COLUMNS``,
when set, still decides the width, as rich reads it; a notebook keeps rich's own width.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["PIPE_WIDTH", "output_console", "print_table"]

PIPE_WIDTH = 100_000
"""Columns of a console that does not write to a terminal: wider than any cell."""


def output_console(*, stderr: bool = False) -> Console:
    """A rich ``Console`` on stdout (stderr with ``stderr=True``): rich's own width on a
    TTY, in a notebook or with ``COLUMNS`` set, else :data:`PIPE_WIDTH` columns, so that
    no cell is truncated when the output goes to a pipe or a file."""
    from rich.console import Console

    con = Console(stderr=stderr)
    if con.is_terminal or con.is_jupyter or os.environ.get("COLUMNS"):
        return con
    return Console(stderr=stderr, width=PIPE_WIDTH)


def print_table(
    con: Console,
    title: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    caption: str,
    *,
    text_columns: int,
) -> None:
    """A titled table of text cells (the first ``text_columns`` left-aligned, the rest
    numbers, right-aligned) with its caption; every cell, as user text, escaped."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title, caption=escape(caption), box=box.SIMPLE_HEAD)
    for i, h in enumerate(header):
        table.add_column(h, justify="left" if i < text_columns else "right")
    for cells in rows:
        table.add_row(*(escape(c) for c in cells))
    con.print(table)
