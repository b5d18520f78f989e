"""Calibration, slices and operating points in ``toxeval compare``: the figures each
results folder's own report holds (``calibration``, ``slices``, ``operating_points`` of
its ``results.json``), side by side per dataset, as tables under the matrix (terminal,
Markdown, HTML) and, for calibration, as columns of the records and CSV.

They are the folders' own figures, over the rows each report scored: ``--common-rows``
does not cut them to the common rows, as it cuts mAP (the tables' captions say so). A
folder without a block (no per-annotator labels, no ``--slice-by``, no
``--operating-point``) or a figure it does not have reads n/a, never 0. Calibration
needs the dataset's per-annotator labels, which the scored rows do not keep, and slices
need the dataset's columns, so neither is recomputed here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "CALIBRATION_COLUMNS",
    "ReportedTable",
    "calibration_columns",
    "render_tables",
    "reported_blocks",
    "reported_tables",
    "tables_html",
    "tables_markdown",
]

#: The calibration columns of the records and CSV: each system's mean over categories.
CALIBRATION_COLUMNS = ("ece_share", "brier_share", "ece_majority", "brier_majority")

#: (title, header, rows, caption, text columns) of one table under the matrix.
ReportedTable = tuple[str, list[str], list[list[str]], str, int]

OWN = "each system's own report (all the rows it scored)"


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            f = float(value)
        except OverflowError:
            return None
        return f if math.isfinite(f) else None
    return None


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list (a block's ``columns``, ``slices``, ``points``), else
    empty: a malformed block reads n/a."""
    return value if isinstance(value, list) else []


def _fmt(value: Any, digits: int = 4) -> str:
    v = _number(value)
    return "n/a" if v is None else f"{v:.{digits}f}"


def reported_blocks(results: Mapping[str, Any]) -> dict[str, Any]:
    """The ``calibration``, ``slices`` and ``operating_points`` blocks of a results.json
    that has them (objects only; anything else is left out)."""
    keys = ("calibration", "slices", "operating_points")
    return {k: results[k] for k in keys if isinstance(results.get(k), Mapping)}


def calibration_columns(blocks: Mapping[str, Any] | None) -> dict[str, float | None]:
    """A system's :data:`CALIBRATION_COLUMNS` (its report's ``calibration.macro``); all
    None without one, or where calibration does not apply."""
    macro = ((blocks or {}).get("calibration") or {}).get("macro")
    macro = macro if isinstance(macro, Mapping) else {}
    return {k: _number(macro.get(k)) for k in CALIBRATION_COLUMNS}


def _calibration(cells: Cells, datasets: Sequence[str], systems: Sequence[str]) -> list[list[str]]:
    rows = []
    for d in datasets:
        for s in systems:
            block = _blocks(cells, d, s).get("calibration")
            if not isinstance(block, Mapping):
                continue
            if not block.get("applicable"):
                rows.append([d, s, f"n/a: {block.get('reason') or 'does not apply'}", "", "", ""])
                continue
            cols = calibration_columns({"calibration": block})
            rows.append([d, s, *(_fmt(cols[k]) for k in CALIBRATION_COLUMNS)])
    return rows


def _slices(cells: Cells, d: str, systems: Sequence[str]) -> list[list[str]]:
    """One row per (column, value) any system of dataset ``d`` reports; per system its
    mAP and row count there ("too small" where its report said so)."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    for s in systems:
        block = _blocks(cells, d, s).get("slices") or {}
        for col in _list(block.get("columns")):
            for sl in _list(col.get("slices")) if isinstance(col, Mapping) else []:
                if not isinstance(sl, Mapping):
                    continue
                key = (str(col.get("column")), str(sl.get("value")))
                fig = sl.get("figures")
                fig = fig if isinstance(fig, Mapping) else {}
                shown = "too small" if sl.get("too_small") else _fmt(fig.get("map"))
                found.setdefault(key, {})[s] = f"{shown} ({sl.get('rows')} rows)"
    return [[d, c, v, *(by.get(s, "n/a") for s in systems)] for (c, v), by in found.items()]


def _points(cells: Cells, d: str, systems: Sequence[str]) -> tuple[list[list[str]], set[str]]:
    """One row per category any system of ``d`` has an operating point for: per system
    its threshold, precision and recall there; and the targets or sources they came from."""
    found: dict[str, dict[str, str]] = {}
    how: set[str] = set()
    for s in systems:
        block = _blocks(cells, d, s).get("operating_points") or {}
        source = block.get("thresholds_from") or "an unnamed source"
        how.add(str(block.get("target") or f"thresholds from {source}"))
        for p in _list(block.get("points")):
            if not isinstance(p, Mapping):
                continue
            cell = (
                f"{_fmt(p.get('threshold'))}: P {_fmt(p.get('precision'), 3)}, "
                f"R {_fmt(p.get('recall'), 3)}"
                if _number(p.get("threshold")) is not None
                else f"n/a ({p.get('reason') or 'no threshold'})"
            )
            found.setdefault(str(p.get("category") or "(unnamed)"), {})[s] = cell
    rows = [[d, c, *(by.get(s, "n/a") for s in systems)] for c, by in found.items()]
    return rows, how if rows else set()


Cells = Mapping[str, Mapping[str, Any]]


def _blocks(cells: Cells, d: str, s: str) -> Mapping[str, Any]:
    return getattr(cells.get(d, {}).get(s), "reported", None) or {}


def reported_tables(
    cells: Cells, datasets: Sequence[str], systems: Sequence[str]
) -> list[ReportedTable]:
    """The tables under the comparison's matrix (``cells[dataset][system]``, each with a
    ``reported`` of :func:`reported_blocks`): calibration, slices and operating points,
    each only when some system's report has it."""
    tables: list[ReportedTable] = []
    cal = _calibration(cells, datasets, systems)
    if cal:
        tables.append((
            "Calibration against annotators",
            ["dataset", "system", "ECE share", "Brier share", "ECE majority", "Brier majority"],
            cal,
            f"Mean over categories, from {OWN}; lower is better (docs/statistics.md).",
            2,
        ))  # fmt: skip
    sliced = [r for d in datasets for r in _slices(cells, d, systems)]
    if sliced:
        tables.append((
            "Slices",
            ["dataset", "column", "value", *(f"{s} mAP" for s in systems)],
            sliced,
            f"mAP per slice and its scored rows, from {OWN}.",
            3,
        ))  # fmt: skip
    points: list[list[str]] = []
    how: set[str] = set()
    for d in datasets:
        rows, said = _points(cells, d, systems)
        points += rows
        how |= said
    if points:
        tables.append((
            "Operating points",
            ["dataset", "category", *systems],
            points,
            f"Threshold: precision (P), recall (R) there, from {OWN}; "
            f"{'; '.join(sorted(how))}.",
            2,
        ))  # fmt: skip
    return tables


def tables_markdown(tables: Sequence[ReportedTable], text: Callable[[str], str]) -> str:
    """The tables as Markdown sections (``text`` escapes every cell and caption)."""
    from toxeval.compare_markup import markdown_table

    out: list[str] = []
    for title, header, rows, caption, n_text in tables:
        out += ["", f"## {title}", ""]
        out += markdown_table(
            caption, [text(h) for h in header], rows, text_columns=n_text, text=text
        )
    return "\n".join(out) + ("\n" if out else "")


def tables_html(tables: Sequence[ReportedTable], text: Callable[[str], str]) -> str:
    """The tables as HTML sections (``text`` escapes every cell and caption)."""
    parts = []
    for title, header, rows, caption, _ in tables:
        head = "".join(f"<th>{text(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{text(c)}</td>" for c in r) + "</tr>" for r in rows)
        parts.append(
            f"<h2>{text(title)}</h2><table class=sortable><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table><p class=note>{text(caption)}</p>"
        )
    return "".join(parts)


def render_tables(tables: Sequence[ReportedTable], console: Any) -> None:
    """The tables in the terminal (every cell escaped)."""
    from toxeval.console_output import print_table

    for title, header, rows, caption, n_text in tables:
        print_table(console, title, header, rows, caption, text_columns=n_text)
