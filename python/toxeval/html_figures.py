"""The inline SVG figures of ``report.html`` (:mod:`toxeval.html_report`): per-category
AP bars with interval whiskers, precision-recall curves as steps on labelled axes, and the
true-vs-predicted label co-occurrence heatmap.

SVG text is not measured before it is drawn, so each figure sizes its margins from its
labels' lengths (:func:`text_px`) and wraps long category names at their words
(:func:`toxeval.figure_labels.wrap_label`); a name cut short is whole in its tooltip.
Every string from a user is escaped (:func:`esc`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval.figure_labels import wrap_label

__all__ = [
    "MAX_CURVE_POINTS",
    "cooccurrence",
    "esc",
    "finite",
    "interval_pair",
    "short",
    "step_points",
    "svg_ap_bars",
    "svg_heatmap",
    "svg_pr_curves",
    "text_px",
    "tspans",
]

MAX_CURVE_POINTS = 400  # points drawn per precision-recall curve (AP is not computed from them)


def short(text: str, n: int) -> str:
    """``text`` cut to ``n`` characters, the last an ellipsis, when it is longer."""
    return text if len(text) <= n else text[: n - 1] + "\u2026"


# SVG text is not measured before it is drawn: a character is taken as this many em wide
# (an upper bound for the page's sans-serif at these sizes), and figures leave room for
# their longest label from it
_EM_PER_CHAR = 0.62


def text_px(n_chars: int, font_px: float) -> float:
    """Width in pixels taken by ``n_chars`` characters of text at ``font_px``."""
    return n_chars * font_px * _EM_PER_CHAR


def tspans(lines: Sequence[str], x: float, line_px: float) -> str:
    """SVG ``<tspan>`` lines at ``x``, the first on the text's baseline."""
    return "".join(
        f'<tspan x="{x:.1f}" dy="{0 if i == 0 else line_px}">{esc(t)}</tspan>'
        for i, t in enumerate(lines)
    )


def esc(x: object) -> str:
    """``x`` as text escaped for HTML and SVG (quotes included: safe in attributes)."""
    return html.escape(str(x), quote=True)


def finite(x: Any) -> float | None:
    """A finite float, or None (NaN, None and non-numbers are 'not available')."""
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def interval_pair(ci: Any) -> tuple[float, float] | None:
    """``(low, high)`` of an interval given as a two-item sequence of finite numbers,
    else None."""
    if not isinstance(ci, Sequence) or isinstance(ci, str) or len(ci) != 2:
        return None
    lo, hi = finite(ci[0]), finite(ci[1])
    return None if lo is None or hi is None else (lo, hi)


# --------------------------------------------------------------------------- figures


def svg_ap_bars(per_category: Sequence[Mapping[str, Any]], map_value: float | None) -> str:
    """Horizontal AP bars with interval whiskers (``ap_ci``) and the mAP as a line.

    Category names are wrapped to two lines of at most 32 characters (the full name in
    the bar's tooltip) and the left margin is sized to the longest line, so no name is
    cut at the figure's edge."""
    n = len(per_category)
    fullnames = [str(c.get("name") or c.get("id")) for c in per_category]
    wrapped = [wrap_label(name, 32) for name in fullnames]
    two_lines = any(len(lines) > 1 for lines in wrapped)
    row_h = 32 if two_lines else 22
    longest = max((len(t) for lines in wrapped for t in lines), default=1)
    left = int(max(60.0, text_px(longest, 12)) + 14)
    width = 420
    height = 30 + n * row_h + 24
    total = left + width + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{total}" '
        f'height="{height}" viewBox="0 0 {total} {height}">',
        "<title>Average precision per category</title>",
    ]
    x0 = left
    for t in range(0, 11, 2):
        x = x0 + width * t / 10
        parts.append(
            f'<line x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{20 + n * row_h}" stroke="#e3e6ec"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{34 + n * row_h}" font-size="11" text-anchor="middle">'
            f"{t / 10:.1f}</text>"
        )
    for i, c in enumerate(per_category):
        y = 22 + i * row_h
        label = esc(fullnames[i])
        lines = wrapped[i]
        first = y + row_h / 2 + 4 - (len(lines) - 1) * 7
        parts.append(
            f'<text x="{left - 8}" y="{first:.1f}" font-size="12" text-anchor="end">'
            f"<title>{label}</title>{tspans(lines, left - 8, 14)}</text>"
        )
        ap = finite(c.get("ap"))
        included = bool(c.get("in_map", ap is not None))
        bar_y = y + (row_h - 14) / 2
        if ap is None:
            why = esc(c.get("ap_undefined_reason") or "no known positive")
            parts.append(
                f'<text x="{x0 + 4}" y="{bar_y + 11:.1f}" font-size="11" fill="#8a93a3">'
                f"n/a ({why})</text>"
            )
            continue
        fill = "#3b6fd8" if included else "#b9c0cc"
        parts.append(
            f'<rect x="{x0}" y="{bar_y:.1f}" width="{width * ap:.1f}" height="14" '
            f'fill="{fill}"><title>{label}: AP {ap:.4f}</title></rect>'
        )
        ci = interval_pair(c.get("ap_ci"))
        if ci is not None:
            a, b = (x0 + width * min(max(v, 0.0), 1.0) for v in ci)
            ym = bar_y + 7
            parts.append(
                f'<path d="M{a:.1f} {ym - 4:.1f}v8M{a:.1f} {ym:.1f}H{b:.1f}M{b:.1f} {ym - 4:.1f}v8" '
                f'stroke="#1d2330" stroke-width="1.3" fill="none"/>'
            )
    if map_value is not None:
        x = x0 + width * map_value
        parts.append(
            f'<line x1="{x:.1f}" y1="16" x2="{x:.1f}" y2="{20 + n * row_h}" stroke="#d8463b" '
            f'stroke-dasharray="4 3"/><text x="{x:.1f}" y="13" font-size="11" fill="#d8463b" '
            f'text-anchor="middle">mAP {map_value:.3f}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def step_points(x: NDArray[Any], y: NDArray[Any]) -> tuple[NDArray[Any], NDArray[Any]]:
    """The vertices of a curve drawn as steps after each point, matplotlib's
    ``drawstyle="steps-post"``: from ``(x[i], y[i])`` across to ``x[i + 1]``, then to
    ``y[i + 1]``. ``PrecisionRecallDisplay`` draws recall/precision so, and so do the
    PNG figures (:mod:`toxeval.plots`)."""
    n = int(x.shape[0])
    if n == 0:
        return x, y
    sx = np.empty(2 * n - 1, dtype=np.float64)
    sy = np.empty(2 * n - 1, dtype=np.float64)
    sx[0::2], sy[0::2] = x, y
    sx[1::2], sy[1::2] = x[1:], y[:-1]
    return sx, sy


def svg_pr_curves(
    y_true: NDArray[Any],
    y_score: NDArray[Any],
    mask: NDArray[np.bool_],
    names: Sequence[str],
    aps: Sequence[Any],
    reasons: Sequence[str | None] | None = None,
) -> str:
    """Small multiples: one precision-recall curve per category over its known rows, drawn
    as steps (:func:`step_points`, as ``PrecisionRecallDisplay`` and the PNG figure draw
    it), on axes with ticks at 0, 0.5 and 1 and labelled recall and precision. Each panel's
    title is the category (wrapped to two lines, full in its tooltip) and its AP; a
    category without a curve says why (``reasons[j]``, default "no known positive")."""
    from toxeval.curve_thinning import thin_curve_indices
    from toxeval.metrics import precision_recall_curve

    cols, w = 5, 210
    k = len(names)
    titles = [wrap_label(str(name), 30) for name in names]
    title_lines = max((len(t) for t in titles), default=1) + 1  # the name, then the AP
    top = 8 + 13 * title_lines
    left, right, bottom = 50, 12, 40
    pw, ph = w - left - right, 120
    h = top + ph + bottom
    rows = max(1, math.ceil(k / cols))
    W, H = min(cols, max(k, 1)) * w, rows * h
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}"><title>Precision-recall curves per category</title>'
    ]
    for j in range(k):
        ox, oy = (j % cols) * w, (j // cols) * h
        x0, y0 = ox + left, oy + top
        ap = finite(aps[j]) if j < len(aps) else None
        cx = x0 + pw / 2
        head = [*titles[j], f"AP {ap:.3f}" if ap is not None else "AP n/a"]
        parts.append(
            f'<text x="{cx:.1f}" y="{oy + 14}" font-size="11" text-anchor="middle">'
            f"<title>{esc(names[j])}</title>{tspans(head, cx, 13)}</text>"
            f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#c5cad4"/>'
        )
        for t in (0.0, 0.5, 1.0):  # ticks, tick labels and light grid lines
            tx, ty = x0 + pw * t, y0 + ph * (1 - t)
            label = f"{t:g}"
            parts.append(
                f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{y0 + ph}" y2="{y0 + ph + 4}" '
                'stroke="#5b6475"/>'
                f'<line x1="{x0 - 4}" x2="{x0}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#5b6475"/>'
                f'<text x="{tx:.1f}" y="{y0 + ph + 15}" font-size="9" '
                f'text-anchor="middle">{label}</text>'
                f'<text x="{x0 - 6}" y="{ty + 3:.1f}" font-size="9" '
                f'text-anchor="end">{label}</text>'
            )
            if 0 < t < 1:
                parts.append(
                    f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{y0}" y2="{y0 + ph}" stroke="#eef0f4"/>'
                    f'<line x1="{x0}" x2="{x0 + pw}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#eef0f4"/>'
                )
        parts.append(
            f'<text x="{cx:.1f}" y="{y0 + ph + 30}" font-size="10" text-anchor="middle" '
            'fill="#5b6475">recall</text>'
            f'<text transform="translate({ox + 14},{y0 + ph / 2:.1f}) rotate(-90)" '
            'font-size="10" text-anchor="middle" fill="#5b6475">precision</text>'
        )
        known = mask[:, j]
        yt = np.asarray(y_true[known, j]) == 1
        if not yt.any():
            why = (reasons[j] if reasons is not None and j < len(reasons) else None) or (
                "no known positive"
            )
            parts.append(
                f'<text x="{cx:.1f}" y="{y0 + ph / 2:.1f}" font-size="10" '
                f'fill="#8a93a3" text-anchor="middle">{esc(why)}</text>'
            )
            continue
        precision, recall, _ = precision_recall_curve(yt, y_score[known, j])
        keep = thin_curve_indices(recall, precision, MAX_CURVE_POINTS)
        sx, sy = step_points(recall[keep], precision[keep])
        pts = " ".join(
            f"{x0 + pw * float(r):.1f},{y0 + ph * (1 - float(p)):.1f}"
            for r, p in zip(sx, sy, strict=True)
        )
        base = float(yt.mean())
        parts.append(
            f'<line x1="{x0}" x2="{x0 + pw}" y1="{y0 + ph * (1 - base):.1f}" '
            f'y2="{y0 + ph * (1 - base):.1f}" stroke="#b9c0cc" stroke-dasharray="3 3"/>'
            f'<polyline points="{pts}" fill="none" stroke="#3b6fd8" stroke-width="1.4"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def cooccurrence(
    y_true: NDArray[Any], y_score: NDArray[Any], mask: NDArray[np.bool_], threshold: float
) -> NDArray[np.int64]:
    """``C[i, j]`` = rows whose true label ``i`` is positive and whose score for ``j`` is
    ``>= threshold``, counting only rows where both cells are known."""
    t = (np.asarray(y_true) == 1) & mask
    p = (np.asarray(y_score) >= threshold) & mask
    out: NDArray[np.int64] = t.T.astype(np.int64) @ p.astype(np.int64)
    return out


def svg_heatmap(counts: NDArray[np.int64], names: Sequence[str]) -> str:
    """The co-occurrence matrix as a heatmap. Labels longer than 40 characters are cut
    (the full name is in each cell's tooltip); the margins are sized to the longest label,
    row labels at the left and column labels slanted above, so none is cut at the edge."""
    k = counts.shape[0]
    cell, font = 26, 11
    shown = [short(str(name), 40) for name in names]
    longest = text_px(max((len(t) for t in shown), default=1), font)
    slant = math.radians(60)
    left = int(longest + 16)
    top = int(longest * math.sin(slant) + 16)
    spill = int(longest * math.cos(slant))  # the last column label reaches right of the grid
    W, H = left + k * cell + max(10, spill), top + k * cell + 10
    vmax = max(int(counts.max()), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}"><title>True vs predicted label co-occurrence</title>'
    ]
    for i, name in enumerate(shown):
        full = esc(names[i])
        parts.append(
            f'<text x="{left - 6}" y="{top + i * cell + 17}" font-size="{font}" '
            f'text-anchor="end"><title>true {full}</title>{esc(name)}</text>'
            f'<text transform="translate({left + i * cell + 17},{top - 6}) rotate(-60)" '
            f'font-size="{font}"><title>predicted {full}</title>{esc(name)}</text>'
        )
    for i in range(k):
        for j in range(k):
            v = int(counts[i, j])
            a = v / vmax
            fill = f"rgb({int(255 - 196 * a)},{int(255 - 144 * a)},{int(255 - 39 * a)})"
            parts.append(
                f'<rect x="{left + j * cell}" y="{top + i * cell}" width="{cell - 1}" '
                f'height="{cell - 1}" fill="{fill}"><title>true {esc(names[i])}, predicted '
                f"{esc(names[j])}: {v}</title></rect>"
            )
            if v:
                color = "#fff" if a > 0.55 else "#1d2330"
                parts.append(
                    f'<text x="{left + j * cell + cell / 2 - 0.5:.1f}" y="{top + i * cell + 17}" '
                    f'font-size="9" fill="{color}" text-anchor="middle">{v}</text>'
                )
    parts.append("</svg>")
    return "".join(parts)
