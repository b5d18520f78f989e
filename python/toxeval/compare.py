"""``toxeval compare``: several systems on several datasets, in the shape of the paper's
Table 2 (datasets x systems, mAP up and label ranking loss down), with bootstrap intervals
and paired significance tests against a baseline system.

Each input is a results folder written by ``toxeval evaluate/score --out DIR``: its
``results.json`` (figures, dataset identity) and ``scored_rows.parquet`` (ids, labels and
scores of the scored rows; see :mod:`toxeval.scored_rows`). Systems are grouped by
dataset (the dataset file's sha256); within a dataset every system must have scored the
same items (same ids, same labels), otherwise the comparison is refused: paired tests and
a shared interval need the same rows. Their order does not matter: every system's rows
are matched by id and sorted by it, whatever the order of the folders and their rows
(:mod:`toxeval.compare_inputs` reads and matches the folders).

Figures are recomputed from the rows with the report's definitions: mAP is the mean AP
over the categories with a known positive, label ranking loss ranks each row's known
labels. Intervals are the report's percentile bootstrap intervals over rows
(:func:`toxeval.scoring.intervals.figure_intervals`, on :func:`toxeval.stats.bootstrap`),
drawn over each folder's rows in its own order, so a folder's interval here equals the one
in its ``results.json`` for the same seed;
against ``baseline`` each system gets a paired bootstrap interval of the difference and
two p-values, paired bootstrap and approximate randomization
(:func:`toxeval.stats.compare`), with the Holm correction across the systems of a dataset.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toxeval import compare_reported as reported
from toxeval.compare_costs import COST_COLUMNS, cost_columns, cost_legend
from toxeval.compare_gate import ALPHA, Gate, GateTest, check_margin, dataset_tests, parse_figures
from toxeval.compare_inputs import (
    CompareError,
    SystemResult,
    aligned,
    check_reported,
    keep_common_rows,
    load_system,
    split_spec,
)
from toxeval.compare_markup import HTML, LATEX, MARKDOWN, RICH, Markup, csv_cell
from toxeval.compare_withheld import difference_withheld, na_legend, p_text
from toxeval.report import level_text
from toxeval.scoring.intervals import MAX_RESAMPLES, check_resamples, figure_intervals, map_columns

__all__ = [
    "MAX_RESAMPLES",
    "CompareError",
    "Comparison",
    "SystemResult",
    "compare",
    "load_system",
    "split_spec",
]

METRICS = ("map", "label_ranking_loss")
_HIGHER_IS_BETTER = {"map": True, "label_ranking_loss": False}
_LABELS = {"map": "mAP ↑", "label_ranking_loss": "LRL ↓"}


@dataclass
class Cell:
    """One system on one dataset: figures, intervals and the paired test vs the baseline."""

    value: dict[str, float]
    #: the rows the figures are computed on
    n_rows: int
    #: ``None``: the figure is undefined on too many resamples for an interval (n/a)
    interval: dict[str, tuple[float, float] | None]
    #: resamples on which each figure is undefined (``None``: undefined on the rows)
    n_undefined: dict[str, int | None] = field(default_factory=dict)
    #: the figures given no interval, with their undefined resamples
    withheld: dict[str, int] = field(default_factory=dict)
    best: dict[str, bool] = field(default_factory=dict)
    # vs the baseline: difference (system - baseline), its interval, p-values
    diff: dict[str, float] = field(default_factory=dict)
    diff_interval: dict[str, tuple[float, float]] = field(default_factory=dict)
    p_bootstrap: dict[str, float] = field(default_factory=dict)
    p_permutation: dict[str, float] = field(default_factory=dict)
    p_holm: dict[str, float] = field(default_factory=dict)
    #: the differences given no interval and no bootstrap p-value (undefined on too
    #: many resamples), with their undefined resamples
    withheld_diff: dict[str, int] = field(default_factory=dict)
    cost: Mapping[str, float | None] | None = None  # toxeval.compare_costs.cost_figures
    reported: Mapping[str, Any] | None = None  # toxeval.compare_reported.reported_blocks


@dataclass
class Comparison:
    """The datasets x systems matrix; ``cells[dataset][system]``."""

    datasets: list[str]
    systems: list[str]
    baseline: str | None
    cells: dict[str, dict[str, Cell]]
    n_resamples: int
    confidence_level: float
    seed: int
    alpha: float = ALPHA
    #: datasets the baseline was not scored on: no paired tests there (said in the legend)
    without_baseline: list[str] = field(default_factory=list)
    #: ``common_rows=True``: per dataset, the rows compared and the rows each system that
    #: scored more left out (said in the legend); empty where no system left any out
    common: dict[str, tuple[int, dict[str, int]]] = field(default_factory=dict)
    #: ``fail_if_worse``: the regression gate's tests and verdict (:mod:`toxeval.compare_gate`)
    gate: Gate | None = None

    # ----------------------------------------------------------------- formats
    def _fmt(self, cell: Cell, metric: str, markup: Markup) -> str:
        v = cell.value[metric]
        ci = cell.interval[metric]
        # no character special to any format
        text = f"{v:.4f} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else f"{v:.4f} [n/a]"
        if cell.best.get(metric):
            text = markup.bold(text)
        p = cell.p_holm.get(metric)
        if p is not None and p < self.alpha:
            text += markup.star
        return text

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per (dataset, system): every figure, interval and test (the CSV rows)."""
        out: list[dict[str, Any]] = []
        with_cost = cost_columns([c.cost for row in self.cells.values() for c in row.values()])
        with_cal = any(
            "calibration" in (c.reported or {}) for r in self.cells.values() for c in r.values()
        )
        for d in self.datasets:
            for s in self.systems:
                cell = self.cells[d].get(s)
                if cell is None:
                    continue
                rec: dict[str, Any] = {"dataset": d, "system": s}
                for m in METRICS:
                    rec[m] = cell.value[m]
                    rec[f"{m}_low"], rec[f"{m}_high"] = cell.interval[m] or (None, None)
                    rec[f"{m}_undefined"] = cell.n_undefined.get(m)
                    rec[f"{m}_best"] = cell.best.get(m, False)
                    rec[f"{m}_diff_vs_baseline"] = cell.diff.get(m)
                    lo_hi = cell.diff_interval.get(m)
                    rec[f"{m}_diff_low"] = lo_hi[0] if lo_hi else None
                    rec[f"{m}_diff_high"] = lo_hi[1] if lo_hi else None
                    rec[f"{m}_p_bootstrap"] = cell.p_bootstrap.get(m)
                    rec[f"{m}_p_permutation"] = cell.p_permutation.get(m)
                    rec[f"{m}_p_holm"] = cell.p_holm.get(m)
                rec["rows"] = cell.n_rows
                rec["rows_left_out"] = self.common.get(d, (0, {}))[1].get(s, 0)
                if with_cost:
                    rec.update({k: (cell.cost or {}).get(k) for k in COST_COLUMNS})
                if with_cal:
                    rec.update(reported.calibration_columns(cell.reported))
                out.append(rec)
        return out

    def to_csv(self) -> str:
        records = self.to_records()
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(records[0]), lineterminator="\n")
        writer.writeheader()
        for r in records:
            writer.writerow({k: csv_cell(v) for k, v in r.items()})
        return buf.getvalue()

    def _grid(self, markup: Markup) -> tuple[list[str], list[list[str]]]:
        """Header and rows in one output format: every text through ``markup.text``
        (names are user text), the best figure through ``markup.bold``."""
        header = ["system"]
        for d in self.datasets:
            header += [f"{d} {_LABELS[m]}" for m in METRICS]
        body = []
        for s in self.systems:
            row = [markup.text(s + (" (baseline)" if s == self.baseline else ""))]
            for d in self.datasets:
                cell = self.cells[d].get(s)
                row += (
                    [self._fmt(cell, m, markup) for m in METRICS]
                    if cell
                    else ["n/a"] * len(METRICS)
                )
            body.append(row)
        return [markup.text(h) for h in header], body

    def _legend(self, markup: Markup | None = None) -> str:
        """The table's legend; ``markup`` escapes the baseline's name (user text) in it."""
        text = (
            f"Point estimate [{level_text(self.confidence_level)} bootstrap interval, "
            f"{self.n_resamples} resamples, seed {self.seed}]; best per dataset in bold."
        )
        esc = markup.text if markup else str
        text += na_legend(
            self.cells, self.datasets, self.baseline, self.n_resamples, self.confidence_level, esc
        )
        if self.baseline:
            text += (
                f" (*): differs from {esc(self.baseline)}"
                " (paired bootstrap, Holm-corrected "
                f"p < {self.alpha:g} across the systems of a dataset)."
            )
        for d, (n, left_out) in self.common.items():
            each = ", ".join(f"{esc(name)} {k}" for name, k in left_out.items())
            text += (
                f" {esc(d)}: compared on the {n} rows every system scored (rows left out: "
                f"{each}); there these figures differ from the systems' own reports."
            )
        if self.baseline and self.without_baseline:
            where, them = ", ".join(map(esc, self.without_baseline)), len(self.without_baseline)
            text += f" No paired tests on {where}: {esc(self.baseline)} was not scored on "
            text += "it." if them == 1 else "them."
        return text + cost_legend(self.cells, esc)

    def to_markdown(self) -> str:
        header, body = self._grid(MARKDOWN)
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        tables = reported.tables_markdown(self._reported(), MARKDOWN.text)
        return "\n".join(lines) + "\n\n" + self._legend(MARKDOWN) + "\n" + tables

    def to_latex(self) -> str:
        header, body = self._grid(LATEX)
        cols = "l" + "c" * (len(header) - 1)
        lines = [rf"\begin{{tabular}}{{{cols}}}", r"\toprule", " & ".join(header) + r" \\"]
        lines += [r"\midrule", *(" & ".join(r) + r" \\" for r in body), r"\bottomrule"]
        lines += [r"\end{tabular}", "% " + " ".join(self._legend().splitlines())]
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        """A self-contained page: the matrix, then every paired test against the baseline."""
        from toxeval.html_report import page

        header, body = self._grid(HTML)
        e = HTML.text
        matrix = (
            "<table class=sortable><thead><tr>"
            + "".join(f"<th>{h}</th>" for h in header)
            + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in body)
            + "</tbody></table>"
        )
        tests = []
        for rec in self.to_records():
            for m in METRICS:
                if rec[f"{m}_p_permutation"] is None:
                    continue
                lo, hi = rec[f"{m}_diff_low"], rec[f"{m}_diff_high"]
                ci = f"[{lo:.4f}, {hi:.4f}]" if lo is not None else "n/a"
                tests.append(
                    f"<tr><td>{e(rec['dataset'])}</td><td>{e(rec['system'])}</td>"
                    f"<td>{e(_LABELS[m])}</td><td>{rec[f'{m}_diff_vs_baseline']:+.4f}</td>"
                    f"<td>{ci}</td><td>{p_text(rec[f'{m}_p_bootstrap'])}</td>"
                    f"<td>{p_text(rec[f'{m}_p_permutation'])}</td><td>{p_text(rec[f'{m}_p_holm'])}</td></tr>"
                )
        paired = (
            "<h2>Paired tests against the baseline</h2><table class=sortable><thead><tr>"
            "<th>dataset</th><th>system</th><th>metric</th><th>difference</th>"
            f"<th>{level_text(self.confidence_level)} CI</th><th>p (bootstrap)</th>"
            "<th>p (randomization)</th><th>p (Holm)</th></tr></thead><tbody>"
            + "".join(tests)
            + "</tbody></table>"
            if tests
            else ""
        )
        body_html = f"<h1>toxeval compare</h1>{matrix}<p class=note>{e(self._legend())}</p>"
        body_html += reported.tables_html(self._reported(), e) + paired
        if self.gate is not None:
            body_html += (
                "<h2>Regression gate</h2><pre>" + e("\n".join(self.gate.lines())) + "</pre>"
            )
        return page("toxeval compare", body_html)

    def write_html(self, path: str | Path) -> None:
        """Write :meth:`to_html` to ``path`` as toxeval writes every output: into a new file
        beside it, renamed over ``path`` once complete. The page appears whole or not at
        all, and a file already at ``path`` is replaced, never written through (a hard
        link to another file leaves that file as it was). A device, pipe or socket at
        ``path`` (``/dev/stdout``, a named pipe) is written to, not replaced: renaming
        over it would put a regular file where the device was."""
        from toxeval.output_dir import staged_file

        page = self.to_html()
        with staged_file(path) as f:
            f.write(page)

    def render(self, console: Any = None) -> None:
        """Print the matrix as a rich table."""
        from rich.table import Table

        from toxeval.console_output import output_console

        header, body = self._grid(RICH)
        table = Table(title="toxeval compare", caption=RICH.text(self._legend()))
        for i, h in enumerate(header):
            table.add_column(h, justify="left" if i == 0 else "right")
        for r in body:
            table.add_row(*r)
        con = console or output_console()
        con.print(table)
        reported.render_tables(self._reported(), con)

    def _reported(self) -> list[reported.ReportedTable]:
        """Calibration, slices and operating points from the systems' own reports."""
        return reported.reported_tables(self.cells, self.datasets, self.systems)


# --------------------------------------------------------------------------- figures


def compare(
    results: Sequence[str | Path] | str | Path,
    *,
    baseline: str | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    n_jobs: int | None = None,
    common_rows: bool = False,
    fail_if_worse: str | Sequence[str] | None = None,
    margin: float = 0.0,
) -> Comparison:
    """Compare results folders (``DIR`` or ``NAME=DIR``, or one of them alone); see the
    module docstring. ``common_rows=True`` (``--common-rows``) compares the systems of a
    dataset on the items all of them scored, instead of refusing systems that scored
    different items (a run file with failed rows); the legend says how many rows each
    system left out, and there the figures differ from each folder's results.json.
    ``fail_if_worse`` (``"map,lrl,ap:CATEGORY"``) with ``baseline`` adds the regression
    gate (``Comparison.gate``): one-sided paired tests of each other system being worse
    than the baseline by more than ``margin`` (:mod:`toxeval.compare_gate`)."""
    from toxeval import stats
    from toxeval.stats.bootstrap import conditioned_intervals_allowed

    try:
        check_resamples(n_resamples, allow_zero=False, option="--bootstrap")
        figures = parse_figures(fail_if_worse) if fail_if_worse is not None else []
        margin = check_margin(margin)
    except ValueError as e:
        raise CompareError(str(e)) from None
    if figures and baseline is None:
        raise CompareError(
            "--fail-if-worse needs --baseline: the system the others must not fall below"
        )
    if isinstance(results, (str, Path)):  # one folder, not a sequence of its characters
        results = [results]
    systems = [load_system(r) for r in results]
    if len(systems) < 1:
        raise CompareError("nothing to compare: give at least one results folder")
    names = list(dict.fromkeys(s.name for s in systems))
    if baseline is not None and baseline not in names:
        raise CompareError(f"--baseline {baseline!r} is none of the systems: {', '.join(names)}")
    by_dataset: dict[str, list[SystemResult]] = {}
    for s in systems:
        by_dataset.setdefault(s.dataset_sha256, []).append(s)
    datasets: list[str] = []
    without_baseline: list[str] = []
    common: dict[str, tuple[int, dict[str, int]]] = {}
    cells: dict[str, dict[str, Cell]] = {}
    gate_tests: list[GateTest] = []
    for group in by_dataset.values():
        dname = group[0].dataset
        if dname in cells:
            dname = f"{dname} ({group[0].dataset_sha256[:8]})"
        seen = [g.name for g in group]
        dup = {n for n in seen if seen.count(n) > 1}
        if dup:
            raise CompareError(
                f"{', '.join(sorted(dup))} appears twice on {dname}: name the folders NAME=DIR"
            )
        if common_rows:
            group, left_out = keep_common_rows(group)
            if left_out:
                common[dname] = (len(group[0].rows.ids), left_out)
        # each system's own interval is drawn over its rows in its own folder's order,
        # as its results.json was; only the paired tests need the rows matched by id
        own = {sr.name: sr.rows for sr in group}
        group = aligned(group)
        datasets.append(dname)
        row: dict[str, Cell] = {}
        y, m = group[0].rows.y_true, group[0].rows.mask
        _metric_call("map", y, m)  # refuses rows on which mAP is undefined
        for sr in group:
            rows = own[sr.name]
            fi = figure_intervals(
                rows.y_true,
                rows.scores,
                rows.mask,
                n_resamples=n_resamples,
                confidence_level=confidence_level,
                seed=seed,
                n_jobs=n_jobs,
            )
            value = {"map": fi.map_estimate, "label_ranking_loss": fi.label_ranking_loss_estimate}
            check_reported(sr, value)
            # a figure undefined on too many resamples has no interval (n/a), as in its report
            interval = {"map": fi.map, "label_ranking_loss": fi.label_ranking_loss}
            n_rows, undefined, withheld = len(rows.ids), dict(fi.n_undefined), fi.withheld()
            row[sr.name] = Cell(
                value, n_rows, interval, undefined, withheld, cost=sr.cost, reported=sr.blocks
            )
        for metric in METRICS:
            vals = {k: c.value[metric] for k, c in row.items() if not math.isnan(c.value[metric])}
            if vals:
                pick = max if _HIGHER_IS_BETTER[metric] else min
                best = pick(vals.values())
                for c in row.values():
                    c.best[metric] = c.value[metric] == best
        base = next((g for g in group if g.name == baseline), None)
        if baseline is not None and base is None:
            without_baseline.append(dname)
        if base is not None:
            dists: dict[tuple[str, str], Any] = {}
            for metric in METRICS:
                pvals: dict[str, float] = {}
                for sr in group:
                    if sr is base:
                        continue
                    name, cols, kwargs = _metric_call(metric, y, m)
                    c = row[sr.name]
                    if y.shape[0] < 2:  # one row: nothing to resample, no test (n/a)
                        c.diff[metric] = c.value[metric] - row[base.name].value[metric]
                        continue
                    try:
                        with conditioned_intervals_allowed():  # compare_withheld's rule
                            cmp = stats.compare(
                                name,
                                y[:, cols],
                                sr.rows.scores[:, cols],
                                base.rows.scores[:, cols],
                                mask=m[:, cols],
                                n_resamples=n_resamples,
                                n_permutations=n_resamples,
                                confidence_level=confidence_level,
                                seed=seed,
                                n_jobs=n_jobs,
                                **kwargs,
                            )
                    except stats.TooFewResamplesError:
                        # the difference has no interval and no test: n/a, not refused
                        c.diff[metric] = c.value[metric] - row[base.name].value[metric]
                        continue
                    c.diff[metric] = float(cmp.difference)
                    dists[sr.name, metric] = cmp.bootstrap_distribution
                    c.p_permutation[metric] = float(cmp.pvalue_permutation)
                    undefined_diff = difference_withheld(cmp, n_resamples, confidence_level)
                    if undefined_diff is not None:  # no interval, no bootstrap p-value
                        c.withheld_diff[metric] = undefined_diff
                        continue
                    dci = cmp.confidence_interval
                    if dci is not None:
                        c.diff_interval[metric] = (float(dci.low), float(dci.high))
                    c.p_bootstrap[metric] = float(cmp.pvalue_bootstrap)
                    pvals[sr.name] = float(cmp.pvalue_bootstrap)
                if pvals:
                    adjusted = stats.holm(list(pvals.values()))
                    for name, p in zip(pvals, adjusted, strict=True):
                        row[name].p_holm[metric] = float(p)
            if figures:
                gate_tests += dataset_tests(
                    dname, group, base, names, figures, margin,
                    {k: c.diff for k, c in row.items()}, dists,
                    n_resamples=n_resamples, seed=seed, n_jobs=n_jobs,
                )  # fmt: skip
        cells[dname] = row
    gate = None
    if figures and baseline is not None:
        gate = Gate.build(
            baseline, figures, margin, ALPHA, gate_tests, without_baseline,
            n_resamples=n_resamples, common=common,
        )  # fmt: skip
    return Comparison(
        datasets=datasets,
        systems=names,
        baseline=baseline,
        cells=cells,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        without_baseline=without_baseline,
        common=common,
        gate=gate,
    )


def _metric_call(
    metric: str, y: np.ndarray, m: np.ndarray
) -> tuple[str, np.ndarray, dict[str, Any]]:
    """The drop-in that computes ``metric`` as the report defines it, the label columns
    it runs on and its keywords: mAP = macro AP over the categories with a known
    positive; label ranking loss over every category."""
    if metric == "map":
        has_pos = map_columns(y, m)
        if has_pos.size == 0:
            raise CompareError("no category has a known positive: mAP is undefined")
        return "average_precision_score", has_pos, {"average": "macro"}
    return "label_ranking_loss", np.arange(y.shape[1]), {}
