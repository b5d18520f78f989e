"""Reports: the rich terminal view of an :class:`EvaluationResult` and its output files.

``write_outputs(result, out_dir)`` writes ``results.json`` (the versioned schema in
docs/cli.md: sorted keys, no timestamps, NaN as ``null``, so two runs of the same command
give identical bytes), ``report.md`` and ``per_category.csv``, all at once through
:func:`toxeval.output_dir.staged_outputs` (inputs never overwritten, toxeval's stale
files removed, the folder untouched when a write fails).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toxeval.calibration import (
    annotator_interval_line,
    calibration_lines,
    render_calibration,
)
from toxeval.console_output import print_table
from toxeval.cost_table import render_cost
from toxeval.per_category_csv import per_category_csv
from toxeval.report_text import format_value as _fmt
from toxeval.report_text import level_text, system_line, withheld_text
from toxeval.slices import SLICES_FILE, render_slices, slices_csv, slices_lines

if TYPE_CHECKING:
    from rich.console import Console

    from toxeval.scoring import EvaluationResult

__all__ = [
    "HTML_FILE",
    "REPORT_FILES",
    "figure_with_interval",
    "interval_line",
    "level_text",
    "out_of_core_line",
    "quiet_intervals",
    "quiet_line",
    "render",
    "report_file_names",
    "results_json",
    "system_line",
    "write_html_report",
    "write_outputs",
    "write_report_files",
    "write_scored_rows_file",
]

REPORT_FILES = ("results.json", "report.md", "per_category.csv", "scored_rows.parquet")
HTML_FILE = "report.html"


def _clean(obj: Any) -> Any:
    """JSON-ready copy: NaN/inf -> None, numpy scalars -> Python, tuples -> lists."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def results_json(result: EvaluationResult) -> str:
    """The deterministic ``results.json`` text."""
    return json.dumps(_clean(result.to_dict()), sort_keys=True, indent=2, allow_nan=False) + "\n"


def _ci(ci: Any, digits: int = 4) -> str:
    """``[low, high]``, or ``""`` for no interval."""
    if not ci:
        return ""
    return f"[{_fmt(ci[0], digits)}, {_fmt(ci[1], digits)}]"


def _compact_ci(ci: Any) -> str:
    """``low–high`` at two decimals (``0.84–1.00``), or ``"n/a"`` for no interval: the
    per-category table's form, one unbreakable word narrow enough for 80 columns."""
    if not ci:
        return "n/a"
    return f"{_fmt(ci[0], 2)}\u2013{_fmt(ci[1], 2)}"


def figure_with_interval(result: EvaluationResult, name: str) -> str:
    """A headline figure with its interval when the result has one, e.g.
    ``0.6123 [0.5871, 0.6380]``, or with why it has none, e.g. ``0.0430 (no interval:
    undefined on 182 of 200 resamples)``."""
    intervals = result.figures.get("intervals") or {}
    text = _fmt(result.figures[name])
    ci, why = _ci(intervals.get(name)), withheld_text(intervals, name)
    return f"{text} {ci}" if ci else f"{text} (no interval: {why})" if why else text


def interval_line(result: EvaluationResult) -> str | None:
    """How the intervals were made, e.g. ``95% percentile bootstrap, 1000 resamples,
    seed 0`` (``None`` without intervals)."""
    iv = result.figures.get("intervals")
    if not iv:
        return None
    return (
        f"{level_text(iv['confidence_level'])} {iv['method']} bootstrap over the scored rows, "
        f"{iv['n_resamples']} resamples, seed {iv['seed']}"
    )


def quiet_line(result: EvaluationResult) -> str:
    """The ``--quiet`` line: mAP, label ranking loss (``n/a`` when undefined), the row
    counts and the intervals."""
    f, c = result.figures, result.counts
    return (
        f"mAP {_fmt(f['map'])}  label ranking loss {_fmt(f['label_ranking_loss'])}  "
        f"({c['scored']} scored, {c['excluded']} excluded)" + quiet_intervals(result)
    )


def quiet_intervals(result: EvaluationResult) -> str:
    """The intervals at the end of the ``--quiet`` line, e.g. ``  95% CI: mAP [0.5871,
    0.6380], LRL [0.0394, 0.0734]``, ``n/a (undefined on 182 of 200 resamples)`` for a
    figure without one (``""`` without intervals)."""
    iv = result.figures.get("intervals")
    if not iv:
        return ""

    def ci(name: str) -> str:
        why = withheld_text(iv, name)
        return _ci(iv.get(name)) or (f"n/a ({why})" if why else "n/a")

    level = level_text(iv["confidence_level"])
    return f"  {level} CI: mAP {ci('map')}, LRL {ci('label_ranking_loss')}"


def _summary_rows(
    result: EvaluationResult, text: Callable[[str], str] = str
) -> list[tuple[str, str]]:
    """The summary's (name, value) rows; ``text`` shows user text (dataset, system and
    taxonomy names, file names) in the output's format (escaped for Markdown)."""
    f = result.figures
    c = result.counts
    inc = sum(1 for r in result.per_category if r["in_map"])
    rows = [
        (
            "dataset",
            f"{text(result.dataset['name'])} ({result.dataset['level']}, {c['dataset_rows']} rows)",
        ),
        ("system", text(system_line(result))),
        (
            "taxonomy",
            f"{text(result.config['taxonomy']['name'])} (K={result.config['taxonomy']['k']})",
        ),
        ("scored / excluded", f"{c['scored']} / {c['excluded']}"),
        *(
            [
                (
                    "rows without a known label",
                    f"{c['rows_without_known_labels']} (left out of the per-row figures: "
                    "ranking loss, LRAP, coverage error, one-error)",
                )
            ]
            if c.get("rows_without_known_labels")
            else []
        ),
        (
            "mAP",
            f"{figure_with_interval(result, 'map')}  "
            f"(macro AP over {inc} categories with a known positive)",
        ),
        ("label ranking loss", figure_with_interval(result, "label_ranking_loss")),
        *([("intervals", line)] if (line := interval_line(result)) else []),
        ("LRAP", _fmt(f["lrap"])),
        ("coverage error", _fmt(f["coverage_error"])),
        ("one-error", _fmt(f["one_error"])),
        (f"micro F1 @ {f['threshold']:g}", _fmt(f["micro_f1"])),
        (f"macro F1 @ {f['threshold']:g}", _fmt(f["macro_f1"])),
        (f"Hamming loss @ {f['threshold']:g}", _fmt(f["hamming_loss"])),
    ]
    if result.parse is not None:
        counts = ", ".join(f"{k} {v}" for k, v in result.parse["status_counts"].items())
        rows.append(("parse status", f"{counts}; policy {result.parse['policy']}"))
    card = result.card_recipe
    rows.append(
        (
            "card recipe (compat.)",
            f"mAP {_fmt(card.get('map'))}, LRL {_fmt(card.get('label_ranking_loss'))} "
            f"on {card['rows_used']} fully labelled rows"
            if card.get("rows_used") is not None
            else "not computed out of core",
        )
    )
    ooc = result.config.get("out_of_core")
    if ooc:
        rows.append(("out of core", out_of_core_line(ooc)))
    if result.agreement is not None:
        a = result.agreement
        rows.append(
            (
                "annotator agreement",
                f"contested cells {_fmt(a.get('contested_cell_fraction'))}; mAP unanimous rows "
                f"{_fmt(a.get('map_unanimous_rows'))}, contested rows "
                f"{_fmt(a.get('map_contested_rows'))}",
            )
        )
        line = annotator_interval_line(a)
        if line:
            rows.append(("annotator resampling", line))
    return rows


def out_of_core_line(info: dict[str, Any]) -> str:
    """One line on how an out-of-core run went: the AP/ROC AUC path, the id join, the
    memory limit (``config.out_of_core`` of results.json)."""
    path = str(info.get("path", "?"))
    if path == "range partitions":
        path += f" ({info.get('ranges_per_label')} per label)"
    limit = int(info.get("memory_limit_bytes", 0))
    return f"AP/ROC AUC by {path}; join: {info.get('join')}; memory limit {limit / 2**20:.0f} MiB"


def report_file_names(result: EvaluationResult) -> tuple[str, ...]:
    """The files :func:`write_report_files` writes for ``result``: ``REPORT_FILES``, less
    ``scored_rows.parquet`` for an out-of-core or Dask result (it has no rows in memory),
    plus ``slices.csv`` when it has slices."""
    sliced = (SLICES_FILE,) if result.slices else ()
    if result.rows is None and (result.config.get("out_of_core") or result.config.get("dask")):
        return REPORT_FILES[:3] + sliced
    return REPORT_FILES + sliced


def render(result: EvaluationResult, console: Console | None = None) -> None:
    """Print the summary panel, the per-category table and the notes."""
    from rich import box
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    from toxeval.console_output import output_console

    # every string printed may hold user text (file names, category ids, notes): escaped,
    # so that "ds[bold]1.jsonl" prints as written, not as markup
    con = console or output_console()
    summary = Table.grid(padding=(0, 2))
    summary.add_column(style="bold")
    summary.add_column()
    for k, v in _summary_rows(result):
        summary.add_row(escape(k), escape(v))
    con.print(Panel(summary, title="toxeval", expand=False))

    with_ci = bool(result.figures.get("intervals"))
    # a header rule and no column borders: with the interval column the table still
    # fits an 80-column terminal, category names whole and each interval on one line
    table = Table(
        title="per category (known labels only)",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    names = [r["id"] if r["in_map"] else f"{r['id']} (excluded)" for r in result.per_category]
    # the known labels a system gives no score for (a moderation API's unmapped
    # categories), apart from the dataset's unknown labels; a column only when there are
    with_no_score = any(r.get("no_score") for r in result.per_category)
    for col, just in (
        ("category", "left"),
        ("AP", "right"),
        *([("AP interval", "right")] if with_ci else []),
        ("ROC AUC", "right"),
        ("F1", "right"),
        ("support", "right"),
        ("negatives", "right"),
        ("unknown", "right"),
        *([("no score", "right")] if with_no_score else []),
    ):
        width = max(map(len, names), default=0) if col == "category" else None
        table.add_column(col, justify=just, min_width=width, no_wrap=col == "category")  # type: ignore[arg-type]
    for r, name in zip(result.per_category, names, strict=True):
        table.add_row(
            escape(name),
            _fmt(r["ap"]),
            *([_compact_ci(r.get("ap_ci"))] if with_ci else []),
            _fmt(r["roc_auc"]),
            _fmt(r["f1"]),
            str(r["support"]),
            str(r["negatives"]),
            str(r["unknown"]),
            *([str(r.get("no_score", 0))] if with_no_score else []),
        )
    con.print(table)
    if with_no_score:
        con.print(
            "[dim]unknown: the dataset's unknown labels; no score: known labels the system "
            "gives no score for[/dim]",
            highlight=False,
        )
    if result.operating_points:
        _render_operating_points(result.operating_points, con)
    if result.cost is not None:
        render_cost(result.cost, con)
    if result.slices:
        render_slices(result.slices, con)
    if result.calibration is not None:
        render_calibration(result.calibration, con)
    notes = [*result.notes, "card recipe: " + result.card_recipe["caveats"]]
    for note in notes:
        con.print(f"[dim]note:[/dim] {escape(note)}", highlight=False)


def _render_operating_points(block: dict[str, Any], con: Console) -> None:
    """The operating points as a terminal table (the rows of report.md's table)."""
    from toxeval.operating_points import HEADER, operating_points_table

    caption, rows = operating_points_table(block)
    print_table(con, "operating points", HEADER, rows, caption, text_columns=1)


def report_markdown(result: EvaluationResult) -> str:
    """``report.md``; user text (names, file names, category ids, notes) escaped, so
    that a ``|`` stays in its cell and ``*``, ``_``, ``[``, ``<`` show as written."""
    from toxeval.compare_markup import MARKDOWN

    md = MARKDOWN.text
    lines = ["# toxeval report", ""]
    lines += ["| | |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in _summary_rows(result, md)]
    lines += ["", "## Per category (known labels only)", ""]
    with_ci = bool(iv := result.figures.get("intervals"))
    n = iv["n_resamples"] if iv else 0
    lines += [
        "| category | AP |"
        + (" AP interval |" if with_ci else "")
        + " ROC AUC | F1 | support | negatives | unknown | no score | in mAP |",
        "| --- | ---: |"
        + (" ---: |" if with_ci else "")
        + " ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in result.per_category:
        na = f"n/a ({r['ap_ci_undefined']} of {n} undefined)" if r.get("ap_ci_withheld") else "n/a"
        ci = f" {_ci(r.get('ap_ci'), 3) or na} |" if with_ci else ""
        lines.append(
            f"| {md(r['id'])} | {_fmt(r['ap'])} |{ci} {_fmt(r['roc_auc'])} | {_fmt(r['f1'])} | "
            f"{r['support']} | {r['negatives']} | {r['unknown']} | {r.get('no_score', 0)} | "
            f"{_fmt(r['in_map'])} |"
        )
    lines += [
        "",
        "unknown: the dataset's unknown labels; no score: known labels the system gives no "
        "score for. Both are left out of every figure.",
    ]
    if result.excluded_categories:
        by_reason: dict[str, list[str]] = {}
        for r in result.per_category:
            if not r["in_map"]:
                why = r.get("ap_undefined_reason") or "no known positive"
                by_reason.setdefault(why, []).append(md(r["id"]))
        lines += [
            "",
            "Excluded from mAP and macro F1: "
            + "; ".join(f"{why}: {', '.join(ids)}" for why, ids in by_reason.items()),
        ]
    if result.operating_points:
        from toxeval.operating_points import operating_points_lines

        lines += ["", "## Operating points", ""]
        lines += operating_points_lines(result.operating_points, md)
    if result.cost is not None:
        from toxeval.cost_table import COST_NOTE, cost_rows

        lines += ["", "## Latency and cost", "", "| | |", "| --- | --- |"]
        lines += [f"| {md(what)} | {md(value)} |" for what, value in cost_rows(result.cost)]
        lines += ["", COST_NOTE + "."]
    if result.slices:
        lines += ["", "## Slices", ""]
        lines += slices_lines(result.slices, md)
    if result.calibration is not None:
        lines += ["", "## Calibration against annotators", ""]
        lines += calibration_lines(result.calibration, md)
    lines += ["", "## Card's reference recipe (compatibility mode)", ""]
    card = result.card_recipe
    if card.get("rows_used") is None:
        lines.append("Not computed out of core.")
    else:
        lines.append(
            f"mAP {_fmt(card.get('map'))}, label ranking loss "
            f"{_fmt(card.get('label_ranking_loss'))}, on {card['rows_used']} fully labelled "
            f"rows (threshold {card['threshold']:g})."
        )
    lines += ["", card["caveats"], "", "## Notes", ""]
    lines += [f"- {md(n)}" for n in result.notes] or ["- none"]
    return "\n".join(lines) + "\n"


def write_report_files(result: EvaluationResult, folder: Path) -> None:
    """Write ``REPORT_FILES`` into ``folder`` (a staging folder: see
    :func:`write_outputs`)."""
    texts = (results_json, report_markdown, per_category_csv)
    for name, render_text in zip(REPORT_FILES, texts, strict=False):
        (folder / name).write_text(render_text(result), encoding="utf-8", newline="\n")
    if "scored_rows.parquet" in report_file_names(result):
        write_scored_rows_file(result, folder)
    if result.slices:
        (folder / SLICES_FILE).write_text(slices_csv(result.slices), encoding="utf-8", newline="\n")


def write_scored_rows_file(result: EvaluationResult, folder: Path) -> Path:
    """``scored_rows.parquet``: ids, labels and scores of the scored rows (see
    :mod:`toxeval.scored_rows`), what ``toxeval compare`` resamples."""
    from toxeval.scored_rows import FILE_NAME, write_scored_rows

    rows = result.rows
    if rows is None:
        raise ValueError("this result carries no scored rows (it was not made by scoring)")
    return write_scored_rows(
        folder / FILE_NAME,
        rows.ids,
        result.config["taxonomy"]["ids"],
        rows.y_true,
        rows.mask,
        rows.scores,
        dataset_sha256=result.dataset.get("sha256"),
    )


def write_html_report(result: EvaluationResult, folder: Path) -> Path:
    """``report.html``: the self-contained page of :mod:`toxeval.html_report`."""
    from toxeval.html_report import render_html

    rows = result.rows
    arrays = None if rows is None else (rows.y_true, rows.scores, rows.mask)
    path = folder / HTML_FILE
    path.write_text(render_html(result.to_dict(), arrays), encoding="utf-8", newline="\n")
    return path


def write_outputs(result: EvaluationResult, out_dir: str | Path) -> list[Path]:
    """Write ``results.json``, ``report.md`` and ``per_category.csv`` into ``out_dir``
    (created if needed) and return their paths. All three appear at once, or none on
    an error; raises :class:`toxeval.output_dir.OutputError` (a ``ValueError``) when a
    file would overwrite one of the result's inputs, or when the folder holds another
    output (a figure) that toxeval did not write. Figures toxeval wrote there on an
    earlier run are removed (see docs/cli.md, "Output files")."""
    from toxeval.output_dir import staged_outputs

    names = report_file_names(result)
    with staged_outputs(out_dir, names, result.input_paths()) as stage:
        write_report_files(result, stage)
    return [Path(out_dir) / name for name in names]
