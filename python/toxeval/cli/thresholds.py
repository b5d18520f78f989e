"""``toxeval thresholds``: per-category operating points of a results folder (chosen for a
target precision, recall or false-positive rate, and written as a thresholds file), or
the rates of a thresholds file chosen elsewhere applied to it
(:mod:`toxeval.operating_points`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from toxeval.cli.parser import PLOT_FILES, UsageError


def cmd_thresholds(args: argparse.Namespace) -> int:
    """Choose (``--operating-point``) or apply (``--apply``) per-category thresholds on
    the scored rows of one results folder; print the table, write ``--write FILE``."""
    from rich.markup import escape
    from rich.table import Table

    from toxeval.compare_inputs import load_system, split_spec
    from toxeval.console_output import output_console
    from toxeval.operating_points import (
        parse_target,
        points_for,
        thresholds_document,
        thresholds_of,
    )
    from toxeval.output_dir import staged_file

    if (args.operating_point is None) == (args.apply is None):
        raise UsageError("give --operating-point KIND=RATE (choose) or --apply FILE (measure)")
    if args.write is not None and args.apply is not None:
        raise UsageError("--write saves thresholds chosen with --operating-point, not applied ones")
    if args.write is not None:
        _check_write(Path(args.write), Path(split_spec(args.results)[1]))
    target = parse_target(args.operating_point) if args.operating_point else None
    given = thresholds_of(args.apply) if args.apply else None
    system = load_system(args.results)
    rows = system.rows
    try:
        points = points_for(
            rows.y_true, rows.scores, rows.mask, list(rows.category_ids),
            target=target, thresholds=given, source=f"--apply {args.apply}",
        )  # fmt: skip
    except ValueError as e:
        raise UsageError(str(e)) from None
    if given is not None:
        title = f"{system.name}: rates at the thresholds of {args.apply}"
    else:
        title = f"{system.name}: thresholds for {target} (chosen on these rows: optimistic here)"
    table = Table(title=escape(title), caption="[95% Wilson interval]; score >= threshold flags")
    for col in ("category", "threshold", "precision", "recall", "FPR", "TP/FP/FN/TN"):
        table.add_column(col, justify="left" if col == "category" else "right")
    for p in points:
        r = p.rates()
        cells = []
        for name in ("precision", "recall", "fpr"):
            ci = r[f"{name}_interval"]
            cells.append(f"{r[name]:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "n/a")
        thr = f"{p.threshold:.6g}" if p.threshold is not None else escape(f"none ({p.reason})")
        counts = f"{p.tp}/{p.fp}/{p.fn}/{p.tn}"
        table.add_row(escape(p.category), thr, *cells, counts)
    output_console().print(table)
    if args.write is not None and target is not None:
        doc = thresholds_document(
            points, target, {"results": str(args.results), "system": system.name,
                             "dataset": system.dataset, "dataset_sha256": system.dataset_sha256},
        )  # fmt: skip
        try:
            with staged_file(Path(args.write)) as f:
                f.write(json.dumps(doc, indent=2) + "\n")
        except OSError as e:
            raise UsageError(f"--write {args.write}: cannot write the file: {e}") from None
    return 0


def _check_write(target: Path, folder: Path) -> None:
    """--write names a file to create or an earlier thresholds file to replace, never one
    of the evaluation's own files in the results folder it reads nor any other file."""
    from toxeval.report import HTML_FILE, REPORT_FILES

    if target.is_dir():
        raise UsageError(f"--write {target}: is a directory; give a file name")
    if not target.parent.is_dir():
        raise UsageError(f"--write {target}: the folder {target.parent} does not exist")
    own = {*REPORT_FILES, HTML_FILE, *PLOT_FILES, "run.jsonl"}
    if folder.is_dir() and target.resolve().parent == folder.resolve() and target.name in own:
        raise UsageError(
            f"--write {target}: {target.name} is a file of the results folder being read; "
            "give another name (e.g. thresholds.json)"
        )
    if target.exists() or target.is_symlink():
        from toxeval.operating_points import read_thresholds

        try:  # replace an earlier thresholds file, never another file (results.json elsewhere)
            read_thresholds(target)
        except ValueError:
            raise UsageError(
                f"--write {target}: exists and is not a thresholds file; give a new name"
            ) from None
