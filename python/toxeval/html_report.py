"""One self-contained ``report.html`` for an evaluation (``toxeval evaluate/score --html``).

The page needs nothing from the network and nothing beside it: styles and the small
table-sorting script are inline, and every figure is inline SVG
(:mod:`toxeval.html_figures`; no image files, no fonts, no JavaScript libraries). It shows:

* the headline figures (mAP, label ranking loss, ...) with their bootstrap intervals when
  the result carries them (``figures["intervals"]``);
* a per-category table, sortable by any column (click a header);
* per-category AP with interval bars, categories left out of mAP marked;
* a precision-recall curve per category over its known rows (from the scored arrays,
  when given: ``toxeval.metrics.precision_recall_curve``, thinned for drawing only);
* a true-vs-predicted label co-occurrence heatmap (rows: true label, columns: label
  predicted at the threshold, counted over rows where both cells are known);
* the parse-status breakdown (raw-text predictions) and the run configuration.

Every string that came from a user (dataset names, category names, paths) is escaped.
:func:`render_html` takes ``result.to_dict()`` (or a loaded ``results.json``), so a page
can be rebuilt from a results folder; the curves and the heatmap need the scored arrays.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval.html_figures import (
    cooccurrence,
    step_points,
    svg_ap_bars,
    svg_heatmap,
    svg_pr_curves,
)
from toxeval.html_figures import esc as _e
from toxeval.html_figures import finite as _num
from toxeval.html_figures import interval_pair as _interval
from toxeval.report_text import format_value as _fmt
from toxeval.report_text import withheld_text
from toxeval.slices import slices_caption, slices_header, slices_table

__all__ = [
    "cooccurrence",
    "page",
    "render_html",
    "step_points",
    "svg_ap_bars",
    "svg_pr_curves",
]

_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:72rem;
color:#1d2330;padding:0 1rem;line-height:1.4}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #d8dce4}
.sub{color:#5b6475;margin-top:0}
.cards{display:flex;flex-wrap:wrap;gap:.8rem}
.card{border:1px solid #d8dce4;border-radius:6px;padding:.6rem .9rem;min-width:10rem}
.card .v{font-size:1.4rem;font-weight:600}.card .ci{color:#5b6475;font-size:.85rem}
table{border-collapse:collapse;font-size:.9rem}th,td{padding:.25rem .6rem;text-align:right}
th{cursor:pointer;background:#f1f3f7;position:sticky;top:0;user-select:none}
th:first-child,td:first-child,th.l,td.l{text-align:left}
td.l{max-width:16rem;overflow-wrap:break-word}.wide{overflow-x:auto;max-width:100%}
svg{max-width:none}
tr:nth-child(even) td{background:#fafbfc}td.na{color:#8a93a3}
th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}
pre{background:#f6f8fa;padding:.8rem;overflow:auto;font-size:.8rem}
.note{color:#5b6475;font-size:.85rem}svg text{font-family:inherit}
"""

# Sorts a table by the clicked column: numbers numerically (empty cells last), text
# alphabetically; a second click reverses. A cell's key is its data-v attribute, else its
# text (whose leading number, if any, is the key: "0.61 [0.52, 0.70]"). No library, no
# network.
_SCRIPT = """
function sortKey(c){var v=c.getAttribute('data-v');return v===null?c.textContent:v;}
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){
    th.addEventListener('click',function(){
      var asc=th.getAttribute('aria-sort')!=='ascending';
      t.querySelectorAll('th').forEach(function(o){o.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',asc?'ascending':'descending');
      var body=t.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=sortKey(a.cells[i]),y=sortKey(b.cells[i]);
        var nx=parseFloat(x),ny=parseFloat(y);
        if(x===''||isNaN(nx)){if(y===''||isNaN(ny)){return String(x).localeCompare(String(y))*(asc?1:-1);}return 1;}
        if(y===''||isNaN(ny)){return -1;}
        return (nx-ny)*(asc?1:-1);
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
"""


# --------------------------------------------------------------------------- page


def _card(
    label: str,
    value: Any,
    ci: Any = None,
    *,
    digits: int = 4,
    level: str = "",
    why: str | None = None,
) -> str:
    """A headline figure with its interval, or with ``why`` it has none."""
    interval = _interval(ci)
    ci_html = (
        f'<div class="ci">{level} CI [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]</div>'
        if interval is not None
        else f'<div class="ci">no CI: {_e(why)}</div>'
        if why
        else ""
    )
    return (
        f'<div class="card"><div>{_e(label)}</div><div class="v">{_fmt(value, digits)}</div>'
        f"{ci_html}</div>"
    )


def _cell(value: Any, digits: int = 4) -> str:
    v = _num(value)
    if v is None:
        return '<td class="na" data-v="">n/a</td>'
    text = str(int(v)) if float(v).is_integer() and digits == 0 else f"{v:.{digits}f}"
    return f'<td data-v="{v!r}">{text}</td>'


def _breakable(text: object) -> str:
    """``text`` escaped, with a line-break opportunity after each ``_``, ``-`` and ``/``:
    a long id (``self_harm_and_suicide_instructions``) wraps at its words in a table
    cell instead of widening the table past the page."""
    return re.sub(r"([_\-/])", r"\1<wbr>", _e(text))


def _category_table(per_category: Sequence[Mapping[str, Any]], level: str) -> str:
    head = (
        f"<tr><th class=l>id</th><th class=l>name</th><th>AP</th><th>AP {level} CI</th>"
        "<th>ROC AUC</th><th>F1</th><th>support</th><th>negatives</th>"
        '<th title="the dataset\'s unknown labels">unknown</th>'
        '<th title="known labels the system gives no score for">no score</th>'
        "<th class=l>in mAP</th></tr>"
    )
    rows = []
    for c in per_category:
        ci = _interval(c.get("ap_ci"))
        undefined = c.get("ap_ci_undefined")
        ci_cell = (
            f'<td data-v="{ci[1] - ci[0]!r}">[{ci[0]:.3f}, {ci[1]:.3f}]</td>'
            if ci is not None
            else f'<td class="na" data-v="" title="undefined on {_e(undefined)} resamples: '
            'see the notes">n/a</td>'
            if c.get("ap_ci_withheld")
            else '<td class="na" data-v="">n/a</td>'
        )
        in_map = bool(c.get("in_map"))
        why = c.get("ap_undefined_reason")
        in_map_text = "yes" if in_map else f"no ({_e(why)})" if why else "no"
        rows.append(
            f'<tr><td class=l data-v="{_e(c.get("id"))}">{_breakable(c.get("id"))}</td>'
            f'<td class=l data-v="{_e(c.get("name"))}">{_breakable(c.get("name"))}</td>'
            f"{_cell(c.get('ap'))}{ci_cell}{_cell(c.get('roc_auc'))}{_cell(c.get('f1'))}"
            f"{_cell(c.get('support'), 0)}{_cell(c.get('negatives'), 0)}"
            f"{_cell(c.get('unknown'), 0)}{_cell(c.get('no_score', 0), 0)}"
            f'<td class=l data-v="{int(in_map)}">{in_map_text}</td></tr>'
        )
    return (
        f'<div class="wide"><table class="sortable" id="per-category"><thead>{head}</thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _parse_section(parse: Mapping[str, Any] | None) -> str:
    if not parse:
        return '<p class="note">Scores were given directly: no free text was parsed.</p>'
    counts = parse.get("status_counts") or parse.get("counts") or {}
    rows = "".join(
        f"<tr><td class=l>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in dict(counts).items()
    )
    extra = {k: v for k, v in parse.items() if k not in ("status_counts", "counts")}
    return (
        f"<table><thead><tr><th class=l>status</th><th>rows</th></tr></thead>"
        f"<tbody>{rows}</tbody></table><pre>{_e(json.dumps(extra, indent=2, default=str))}</pre>"
    )


def _operating_points_section(block: Mapping[str, Any] | None) -> str:
    """The operating points table (``--operating-point`` / ``--thresholds-from``), or
    nothing when none were asked for."""
    if not block:
        return ""
    from toxeval.operating_points import HEADER, operating_points_table

    caption, rows = operating_points_table(block)
    return _table_section("Operating points", HEADER, rows, caption, text_columns=1)


def _slices_section(block: Mapping[str, Any] | None) -> str:
    """The slices table (``--slice-by``), or nothing when none were asked for."""
    if not block:
        return ""
    header, rows = slices_header(block), slices_table(block)
    caption = slices_caption(block)
    return _table_section("Slices", header, rows, caption, text_columns=2, table_id="slices")


def _calibration_section(block: Mapping[str, Any] | None, agreement: Any) -> str:
    """The calibration table and reliability diagram (datasets with per-annotator
    labels), with the mAP intervals that resample annotators; nothing otherwise."""
    if not block:
        return ""
    from toxeval.calibration import HEADER, annotator_interval_line, calibration_table
    from toxeval.html_reliability import svg_reliability

    caption, rows = calibration_table(block)
    line = annotator_interval_line(agreement if isinstance(agreement, Mapping) else None)
    resampled = f"<p class=note>{_e(line)}.</p>" if line else ""
    if not rows:  # calibration does not apply: why, and the intervals (any scores)
        return f"<h2>Calibration against annotators</h2><p class=note>{_e(caption)}.</p>{resampled}"
    table = _table_section(
        "Calibration against annotators",
        HEADER,
        rows,
        caption,
        text_columns=1,
        table_id="calibration",
    )
    return table + f'<div class="wide">{svg_reliability(block)}</div>' + resampled


def _table_section(
    title: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    caption: str,
    *,
    text_columns: int,
    table_id: str | None = None,
) -> str:
    """A titled sortable table of text cells (the first ``text_columns`` left-aligned,
    the rest numbers) with its caption; every cell escaped."""

    def cls(i: int) -> str:
        return " class=l" if i < text_columns else ""

    head = "".join(f"<th{cls(i)}>{_e(h)}</th>" for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{_e(c)}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    ident = f" id={table_id}" if table_id else ""
    return (
        f"<h2>{_e(title)}</h2><table class=sortable{ident}><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table><p class=note>{_e(caption)}</p>"
    )


def _cost_section(block: Mapping[str, Any] | None) -> str:
    """A run's latency, tokens and (priced) cost, or nothing for a dump."""
    if block is None:
        return ""
    from toxeval.cost_table import COST_NOTE, cost_rows

    body = "".join(
        f"<tr><td class=l>{_e(what)}</td><td class=l>{_e(value)}</td></tr>"
        for what, value in cost_rows(block)
    )
    return f"<h2>Latency and cost</h2><table><tbody>{body}</tbody></table><p class=note>{_e(COST_NOTE)}</p>"


def render_html(
    result: Mapping[str, Any],
    arrays: tuple[NDArray[Any], NDArray[Any], NDArray[np.bool_]] | None = None,
) -> str:
    """The page for ``result`` (``EvaluationResult.to_dict()`` or a loaded results.json).

    ``arrays`` = ``(y_true, scores, mask)`` of the scored rows adds the precision-recall
    curves and the co-occurrence heatmap; without them those sections say they need them.
    """
    from toxeval.report_text import level_text

    figures = result.get("figures", {})
    per_category = list(result.get("per_category", []))
    intervals = figures.get("intervals") or {}
    dataset = result.get("dataset", {})
    system = result.get("system", {})
    counts = result.get("counts", {})
    names = [str(c.get("id")) for c in per_category]
    title = (
        f"toxeval: {dataset.get('name', '?')} / {system.get('detector') or system.get('kind', '?')}"
    )

    level = _num(intervals.get("confidence_level"))
    pct = level_text(level) if level is not None else "95%"
    ci_note = (
        f"Intervals: {_e(intervals.get('method', 'percentile'))} bootstrap over rows, "
        f"{_e(intervals.get('n_resamples'))} resamples, seed {_e(intervals.get('seed'))}, "
        f"confidence {pct}."
        if intervals and level is not None
        else "No bootstrap intervals in this result (run with --bootstrap N to add them)."
    )
    cards = "".join(
        [
            _card(
                "mAP",
                figures.get("map"),
                intervals.get("map"),
                level=pct,
                why=withheld_text(intervals, "map"),
            ),
            _card(
                "label ranking loss",
                figures.get("label_ranking_loss"),
                intervals.get("label_ranking_loss"),
                level=pct,
                why=withheld_text(intervals, "label_ranking_loss"),
            ),
            _card("LRAP", figures.get("lrap"), intervals.get("lrap"), level=pct),
            _card("coverage error", figures.get("coverage_error"), digits=3),
            _card("one-error", figures.get("one_error")),
            _card("micro F1", figures.get("micro_f1")),
            _card("macro F1", figures.get("macro_f1")),
        ]
    )
    if arrays is not None:
        y, s, m = arrays
        curves = svg_pr_curves(
            y,
            s,
            m,
            names,
            [c.get("ap") for c in per_category],
            [c.get("ap_undefined_reason") for c in per_category],
        )
        threshold = float(figures.get("threshold", result.get("config", {}).get("threshold", 0.5)))
        heat = svg_heatmap(cooccurrence(y, s, m, threshold), names)
        heat_note = (
            f'<p class="note">Rows: true label; columns: label predicted at score &ge; '
            f"{threshold:g}; counts over rows where both cells are known.</p>"
        )
    else:
        curves = '<p class="note">Needs the scored rows (not stored in results.json).</p>'
        heat, heat_note = curves, ""
    count_rows = "".join(
        f"<tr><td class=l>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in counts.items()
    )
    notes = "".join(f"<li>{_e(n)}</li>" for n in result.get("notes", []))
    config = {k: result.get(k) for k in ("config", "dataset", "system", "toxeval_version")}
    body = f"""<h1>{_e(title)}</h1>
<p class="sub">{_e(dataset.get("rows", "?"))} rows, {_e(counts.get("scored", "?"))} scored;
toxeval {_e(result.get("toxeval_version", "?"))}</p>
<h2>Headline figures</h2><div class="cards">{cards}</div><p class="note">{ci_note}</p>
<h2>Per category</h2>{_category_table(per_category, pct)}
<h2>Average precision per category</h2>{svg_ap_bars(per_category, _num(figures.get("map")))}
<p class="note">Grey bars: categories left out of mAP (no known positive, or no score from
the system: the reason is written beside each). Whiskers: the per-category bootstrap
interval. In the table, unknown counts the dataset's unknown labels and no score the known
labels the system gives no score for; both are left out of every figure.</p>
{_operating_points_section(result.get("operating_points"))}
{_cost_section(result.get("cost"))}
{_slices_section(result.get("slices"))}
{_calibration_section(result.get("calibration"), result.get("agreement"))}
<h2>Precision-recall curves</h2>{curves}
<p class="note">Known rows only; dashed line: the positive rate (no skill).</p>
<h2>Label co-occurrence (true vs predicted)</h2>{heat}{heat_note}
<h2>Rows</h2><table><tbody>{count_rows}</tbody></table>
<h2>Parsing</h2>{_parse_section(result.get("parse"))}
<h2>Notes</h2><ul>{notes or "<li>none</li>"}</ul>
<h2>Run configuration</h2><pre>{_e(json.dumps(config, indent=2, default=str))}</pre>"""
    return page(title, body)


def page(title: str, body: str) -> str:
    """A whole self-contained page: ``body`` (HTML) under the report's inline styles,
    with the table-sorting script (tables with class ``sortable``)."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>{body}"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
