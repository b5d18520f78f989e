"""The reliability diagram of ``report.html``: small multiples, one panel per category,
of the calibration block's bins (:mod:`toxeval.calibration`): in each non-empty score
bin, the mean annotators' share (filled dots, joined) and the share of majority-positive
cells (hollow dots) against the mean score, over the diagonal a calibrated system
follows. A dot's tooltip gives its bin, count and means; a category without a figure
says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toxeval.figure_labels import wrap_label
from toxeval.html_figures import esc, finite, tspans

__all__ = ["svg_reliability"]


def _panel(cat: Mapping[str, Any], x0: float, y0: float, size: float) -> list[str]:
    """One category's panel: axes, ticks, the diagonal and the bins' dots."""
    title = wrap_label(str(cat.get("id")), 26)
    parts = [
        f'<text x="{x0}" y="{y0 - 6 - 13 * (len(title) - 1)}" font-size="12" '
        f'font-weight="600"><title>{esc(cat.get("id"))}</title>{tspans(title, x0, 13)}</text>',
        f'<rect x="{x0}" y="{y0}" width="{size}" height="{size}" fill="none" stroke="#c3c9d4"/>',
        f'<line x1="{x0}" y1="{y0 + size}" x2="{x0 + size}" y2="{y0}" stroke="#b9c0cc" '
        'stroke-dasharray="4 3"/>',
    ]
    for t in (0.0, 0.5, 1.0):
        parts.append(
            f'<text x="{x0 + size * t:.1f}" y="{y0 + size + 13}" font-size="10" '
            f'text-anchor="middle">{t:g}</text><text x="{x0 - 6}" y="{y0 + size * (1 - t) + 3:.1f}" '
            f'font-size="10" text-anchor="end">{t:g}</text>'
        )
    bins = cat.get("bins")
    if not bins:
        why = esc(cat.get("reason") or "no figure")
        parts.append(
            f'<text x="{x0 + 6}" y="{y0 + size / 2:.1f}" font-size="11" fill="#8a93a3">'
            f"n/a<title>{why}</title></text>"
        )
        return parts

    def xy(score: float, target: float) -> tuple[float, float]:
        return x0 + size * score, y0 + size * (1 - target)

    share_points = []
    for b, (count, mean_s, mean_sh, mean_mj) in enumerate(
        zip(
            bins["count"],
            bins["mean_score"],
            bins["mean_share"],
            bins["mean_majority"],
            strict=True,
        )
    ):
        s, sh, mj = finite(mean_s), finite(mean_sh), finite(mean_mj)
        if not count or s is None or sh is None or mj is None:
            continue
        tip = esc(
            f"{cat.get('id')}: scores {b / 10:.1f}-{(b + 1) / 10:.1f}, {count} cells; mean score "
            f"{s:.3f}, mean share {sh:.3f}, majority positive {mj:.3f}"
        )
        px, py = xy(s, sh)
        share_points.append(f"{px:.1f},{py:.1f}")
        qx, qy = xy(s, mj)
        radius = 2.5 + min(count, 400) ** 0.5 / 4
        parts.append(
            f'<circle cx="{qx:.1f}" cy="{qy:.1f}" r="{radius:.1f}" fill="none" stroke="#d8463b">'
            f"<title>{tip}</title></circle>"
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{radius:.1f}" fill="#3b6fd8" '
            f'fill-opacity="0.8"><title>{tip}</title></circle>'
        )
    if len(share_points) > 1:
        parts.insert(
            3,
            f'<path d="M{" L".join(share_points)}" fill="none" stroke="#3b6fd8" '
            'stroke-width="1.2"/>',
        )
    return parts


def svg_reliability(block: Mapping[str, Any]) -> str:
    """The reliability diagram of a calibration block: five panels a row; x the mean
    score of a bin, y the mean annotators' share (filled) and majority label (hollow)."""
    cats = list(block.get("per_category", []))
    cols, cell, size = 5, 190, 140
    rows = (len(cats) + cols - 1) // cols
    top, row_h = 44, size + 70
    width, height = cols * cell + 20, top + rows * row_h
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">',
        "<title>Reliability diagram per category</title>",
        '<text x="10" y="14" font-size="11" fill="#5b6475">x: mean score in the bin; y: mean '
        "annotators' share (filled, blue) and share of majority-positive cells (hollow, "
        "red); dashed: calibrated</text>",
    ]
    for i, cat in enumerate(cats):
        r, c = divmod(i, cols)
        parts += _panel(cat, 36 + c * cell, top + 16 + r * row_h, size)
    parts.append("</svg>")
    return "".join(parts)
