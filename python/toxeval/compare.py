"""``toxeval compare``: several systems on several datasets, in the shape of the paper's
Table 2 (datasets x systems, mAP up and label ranking loss down), with bootstrap intervals
and paired significance tests against a baseline system.

Each input is a results folder written by ``toxeval evaluate/score --out DIR``: its
``results.json`` (figures, dataset identity) and ``scored_rows.parquet`` (ids, labels and
scores of the scored rows; see :mod:`toxeval.scored_rows`). Systems are grouped by
dataset (the dataset file's sha256); within a dataset every system must have scored the
same items (same ids, same labels), otherwise the comparison is refused: paired tests and
a shared interval need the same rows.

Figures are recomputed from the rows with the report's definitions: mAP is the mean AP
over the categories with a known positive, label ranking loss ranks each row's known
labels. Intervals are the report's percentile bootstrap intervals over rows
(:func:`toxeval.scoring.intervals.figure_intervals`, on :func:`toxeval.stats.bootstrap`),
so a folder's interval here equals the one in its ``results.json`` for the same seed;
against ``baseline`` each system gets a paired bootstrap interval of the difference and
two p-values, paired bootstrap and approximate randomization
(:func:`toxeval.stats.compare`), with the Holm correction across the systems of a dataset.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from toxeval.compare_markup import HTML, LATEX, MARKDOWN, RICH, Markup, csv_cell
from toxeval.report import level_text
from toxeval.scored_rows import FILE_NAME, ScoredRows, read_scored_rows
from toxeval.scoring.intervals import MAX_RESAMPLES, check_resamples, figure_intervals, map_columns

__all__ = ["MAX_RESAMPLES", "Comparison", "SystemResult", "compare", "load_system"]

METRICS = ("map", "label_ranking_loss")
_HIGHER_IS_BETTER = {"map": True, "label_ranking_loss": False}
_LABELS = {"map": "mAP ↑", "label_ranking_loss": "LRL ↓"}


class CompareError(ValueError):
    """Results folders that cannot be compared; says which and why."""


@dataclass(frozen=True)
class SystemResult:
    """One results folder: a system's scored rows on one dataset."""

    name: str
    path: Path
    dataset: str
    dataset_sha256: str
    rows: ScoredRows


def _system_name(system: Mapping[str, Any], folder: Path) -> str:
    for key in ("label", "detector", "model"):
        if system.get(key):
            return str(system[key])
    source = system.get("source") or system.get("predictions")
    if source:
        return Path(str(source)).stem
    return folder.name


def split_spec(spec: str | Path) -> tuple[str | None, Path]:
    """``NAME=DIR`` as ``(NAME, DIR)``, ``DIR`` as ``(None, DIR)``. A name may itself hold
    ``=``: the split is at the first ``=`` after which an existing directory is named, so
    ``a=b=results/x`` is system ``a=b`` when ``results/x`` exists."""
    text = str(spec)
    if Path(text).exists():
        return None, Path(text)
    cuts = [i for i, ch in enumerate(text) if ch == "="]
    for i in cuts:
        if i > 0 and Path(text[i + 1 :]).is_dir():
            return text[:i], Path(text[i + 1 :])
    if cuts and cuts[0] > 0:
        return text[: cuts[0]], Path(text[cuts[0] + 1 :])
    return None, Path(text)


def load_system(spec: str | Path) -> SystemResult:
    """A results folder, given as ``DIR`` or ``NAME=DIR`` (``NAME`` labels the system)."""
    name, folder = split_spec(spec)
    if not folder.is_dir():
        raise CompareError(f"{folder}: not a results folder (no such directory)")
    rj = folder / "results.json"
    try:
        results = json.loads(rj.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CompareError(f"{folder}: no results.json (write it with --out)") from None
    except (OSError, ValueError) as e:
        raise CompareError(f"{rj}: not readable JSON ({e})") from None
    system = results.get("system", {}) if isinstance(results, dict) else None
    dataset = results.get("dataset", {}) if isinstance(results, dict) else None
    if not isinstance(system, dict) or not isinstance(dataset, dict):
        raise CompareError(
            f"{rj}: not a toxeval results.json (expected an object with "
            '"system" and "dataset" objects)'
        )
    try:
        rows = read_scored_rows(folder / FILE_NAME)
    except ValueError as e:
        raise CompareError(str(e)) from None
    _check_agreement(folder, results, rows)
    sha = rows.dataset_sha256 or dataset.get("sha256")
    if not sha:
        raise CompareError(f"{folder}: the dataset is not identified (no sha256)")
    if not rows.ids:
        raise CompareError(f"{folder}: no scored rows, nothing to compare")
    return SystemResult(
        name=name or _system_name(system, folder),
        path=folder,
        dataset=str(dataset.get("name") or sha[:12]),
        dataset_sha256=str(sha),
        rows=rows,
    )


def _check_agreement(folder: Path, results: Mapping[str, Any], rows: ScoredRows) -> None:
    """``results.json`` and ``scored_rows.parquet`` describe the same evaluation: the
    same dataset (sha256) and as many scored rows (when results.json says)."""
    dataset_sha = results.get("dataset", {}).get("sha256")
    if dataset_sha and rows.dataset_sha256 and dataset_sha != rows.dataset_sha256:
        raise CompareError(
            f"{folder}: results.json and {FILE_NAME} name different datasets "
            f"(sha256 {str(dataset_sha)[:12]} vs {rows.dataset_sha256[:12]})"
        )
    counts = results.get("counts")
    scored = counts.get("scored") if isinstance(counts, dict) else None
    if isinstance(scored, int) and scored != len(rows.ids):
        raise CompareError(
            f"{folder}: results.json counts {scored} scored rows, {FILE_NAME} holds "
            f"{len(rows.ids)}; they are not from the same evaluation"
        )


@dataclass
class Cell:
    """One system on one dataset: figures, intervals and the paired test vs the baseline."""

    value: dict[str, float]
    interval: dict[str, tuple[float, float]]
    best: dict[str, bool] = field(default_factory=dict)
    # vs the baseline: difference (system - baseline), its interval, p-values
    diff: dict[str, float] = field(default_factory=dict)
    diff_interval: dict[str, tuple[float, float]] = field(default_factory=dict)
    p_bootstrap: dict[str, float] = field(default_factory=dict)
    p_permutation: dict[str, float] = field(default_factory=dict)
    p_holm: dict[str, float] = field(default_factory=dict)


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
    alpha: float = 0.05
    #: datasets the baseline was not scored on: no paired tests there (said in the legend)
    without_baseline: list[str] = field(default_factory=list)

    # ----------------------------------------------------------------- formats
    def _fmt(self, cell: Cell, metric: str, markup: Markup) -> str:
        v = cell.value[metric]
        lo, hi = cell.interval[metric]
        text = f"{v:.4f} [{lo:.3f}, {hi:.3f}]"  # no character special to any format
        if cell.best.get(metric):
            text = markup.bold(text)
        p = cell.p_holm.get(metric)
        if p is not None and p < self.alpha:
            text += markup.star
        return text

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per (dataset, system): every figure, interval and test (the CSV rows)."""
        out: list[dict[str, Any]] = []
        for d in self.datasets:
            for s in self.systems:
                cell = self.cells[d].get(s)
                if cell is None:
                    continue
                rec: dict[str, Any] = {"dataset": d, "system": s}
                for m in METRICS:
                    rec[m] = cell.value[m]
                    rec[f"{m}_low"], rec[f"{m}_high"] = cell.interval[m]
                    rec[f"{m}_best"] = cell.best.get(m, False)
                    rec[f"{m}_diff_vs_baseline"] = cell.diff.get(m)
                    lo_hi = cell.diff_interval.get(m)
                    rec[f"{m}_diff_low"] = lo_hi[0] if lo_hi else None
                    rec[f"{m}_diff_high"] = lo_hi[1] if lo_hi else None
                    rec[f"{m}_p_bootstrap"] = cell.p_bootstrap.get(m)
                    rec[f"{m}_p_permutation"] = cell.p_permutation.get(m)
                    rec[f"{m}_p_holm"] = cell.p_holm.get(m)
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
        if self.baseline:
            text += (
                f" (*): differs from {esc(self.baseline)}"
                " (paired bootstrap, Holm-corrected "
                f"p < {self.alpha:g} across the systems of a dataset)."
            )
        if self.baseline and self.without_baseline:
            where, them = ", ".join(map(esc, self.without_baseline)), len(self.without_baseline)
            text += f" No paired tests on {where}: {esc(self.baseline)} was not scored on "
            text += "it." if them == 1 else "them."
        return text

    def to_markdown(self) -> str:
        header, body = self._grid(MARKDOWN)
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines) + "\n\n" + self._legend(MARKDOWN) + "\n"

    def to_latex(self) -> str:
        header, body = self._grid(LATEX)
        cols = "l" + "c" * (len(header) - 1)
        rows = [" & ".join(r) + r" \\" for r in body]
        return (
            "\n".join(
                [
                    rf"\begin{{tabular}}{{{cols}}}",
                    r"\toprule",
                    " & ".join(header) + r" \\",
                    r"\midrule",
                    *rows,
                    r"\bottomrule",
                    r"\end{tabular}",
                    "% " + " ".join(self._legend().splitlines()),
                ]
            )
            + "\n"
        )

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
                if rec[f"{m}_p_bootstrap"] is None:
                    continue
                lo, hi = rec[f"{m}_diff_low"], rec[f"{m}_diff_high"]
                ci = f"[{lo:.4f}, {hi:.4f}]" if lo is not None else "n/a"
                tests.append(
                    f"<tr><td>{e(rec['dataset'])}</td><td>{e(rec['system'])}</td>"
                    f"<td>{e(_LABELS[m])}</td><td>{rec[f'{m}_diff_vs_baseline']:+.4f}</td>"
                    f"<td>{ci}</td><td>{rec[f'{m}_p_bootstrap']:.4g}</td>"
                    f"<td>{rec[f'{m}_p_permutation']:.4g}</td><td>{rec[f'{m}_p_holm']:.4g}</td></tr>"
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
        body_html = f"<h1>toxeval compare</h1>{matrix}<p class=note>{e(self._legend())}</p>{paired}"
        return page("toxeval compare", body_html)

    def render(self, console: Any = None) -> None:
        """Print the matrix as a rich table."""
        from rich.console import Console
        from rich.table import Table

        header, body = self._grid(RICH)
        table = Table(title="toxeval compare", caption=RICH.text(self._legend()))
        for i, h in enumerate(header):
            table.add_column(h, justify="left" if i == 0 else "right")
        for r in body:
            table.add_row(*r)
        (console or Console()).print(table)


# --------------------------------------------------------------------------- figures


def _same_items(group: Sequence[SystemResult]) -> None:
    first = group[0]
    for other in group[1:]:
        a, b = first.rows, other.rows
        if a.ids != b.ids:
            only_a = len(set(a.ids) - set(b.ids))
            only_b = len(set(b.ids) - set(a.ids))
            raise CompareError(
                f"{first.name} ({first.path}) and {other.name} ({other.path}) were scored on "
                f"different items of {first.dataset}: {only_a} ids only in the first, "
                f"{only_b} only in the second"
                + (", same ids in another order" if not only_a and not only_b else "")
                + ". Paired comparison needs the same scored rows (rescore with the same "
                "dataset and --on-mismatch policy)."
            )
        if a.category_ids != b.category_ids:
            raise CompareError(
                f"{first.name} and {other.name} use different taxonomies on {first.dataset}"
            )
        if not (
            np.array_equal(a.mask, b.mask) and np.array_equal(a.y_true * a.mask, b.y_true * b.mask)
        ):
            raise CompareError(
                f"{first.name} and {other.name} have different labels for the same items of "
                f"{first.dataset} (another labelling rule?)"
            )


def compare(
    results: Sequence[str | Path] | str | Path,
    *,
    baseline: str | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    n_jobs: int | None = None,
) -> Comparison:
    """Compare results folders (``DIR`` or ``NAME=DIR``, or one of them alone); see the
    module docstring."""
    from toxeval import stats

    try:
        check_resamples(n_resamples, allow_zero=False, option="--bootstrap")
    except ValueError as e:
        raise CompareError(str(e)) from None
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
    cells: dict[str, dict[str, Cell]] = {}
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
        _same_items(group)
        datasets.append(dname)
        row: dict[str, Cell] = {}
        y, m = group[0].rows.y_true, group[0].rows.mask
        _metric_call("map", y, m)  # refuses rows on which mAP is undefined
        for sr in group:
            fi = figure_intervals(
                y,
                sr.rows.scores,
                m,
                n_resamples=n_resamples,
                confidence_level=confidence_level,
                seed=seed,
                n_jobs=n_jobs,
            )
            value = {"map": fi.map_estimate, "label_ranking_loss": fi.label_ranking_loss_estimate}
            interval = {}
            for metric, ci in (("map", fi.map), ("label_ranking_loss", fi.label_ranking_loss)):
                if ci is None:
                    raise CompareError(
                        f"{sr.name} on {dname}: {_LABELS[metric]} is defined on "
                        f"{n_resamples - (fi.n_undefined[metric] or 0)} of {n_resamples} "
                        "resamples, too few for an interval (more resamples, or more known "
                        "positives)"
                    )
                interval[metric] = ci
            row[sr.name] = Cell(value=value, interval=interval)
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
            for metric in METRICS:
                pvals: dict[str, float] = {}
                for sr in group:
                    if sr is base:
                        continue
                    name, cols, kwargs = _metric_call(metric, y, m)
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
                    c = row[sr.name]
                    c.diff[metric] = float(cmp.difference)
                    dci = cmp.confidence_interval
                    if dci is not None:
                        c.diff_interval[metric] = (float(dci.low), float(dci.high))
                    c.p_bootstrap[metric] = float(cmp.pvalue_bootstrap)
                    c.p_permutation[metric] = float(cmp.pvalue_permutation)
                    pvals[sr.name] = float(cmp.pvalue_bootstrap)
                if pvals:
                    adjusted = stats.holm(list(pvals.values()))
                    for name, p in zip(pvals, adjusted, strict=True):
                        row[name].p_holm[metric] = float(p)
        cells[dname] = row
    return Comparison(
        datasets=datasets,
        systems=names,
        baseline=baseline,
        cells=cells,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        seed=seed,
        without_baseline=without_baseline,
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
