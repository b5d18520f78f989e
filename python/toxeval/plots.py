"""Figures of an evaluation: per-category precision-recall curves and AP bars (matplotlib).

Needs the optional ``plot`` extra (``pip install "toxeval[plot]"``, matplotlib >= 3.7).
matplotlib is imported when a function is called, never at import time, and only its
object API is used (``matplotlib.figure.Figure`` drawn by the Agg canvas): nothing here
imports ``pyplot``, opens a window, needs a display or changes the user's backend.

* :func:`plot_pr_curves` / :func:`pr_curves_figure`: one panel per category (taxonomy
  order), the precision-recall curve of that category over its *known* rows, computed
  with ``toxeval.metrics.precision_recall_curve`` and drawn as steps as scikit-learn's
  ``PrecisionRecallDisplay`` draws it; the panel title holds the category's AP
  (``toxeval.metrics.average_precision_score`` on the same rows) and a dashed line marks
  the positive rate (the no-skill baseline).
* :func:`plot_ap_by_category` / :func:`ap_by_category_figure`: per-category AP of an
  :class:`~toxeval.scoring.EvaluationResult` as horizontal bars, the mAP as a vertical
  line, categories left out of mAP hatched in grey.

A curve has one point per distinct score: on a million rows, up to a million points.
Curves are *thinned for drawing only* (at most ``max_points`` per curve, first and last
points and the largest jumps always kept); AP is computed on every point.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from toxeval.curve_thinning import MAX_CURVE_POINTS, thin_curve_indices
from toxeval.metrics import check_mask

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from toxeval.scoring import EvaluationResult
    from toxeval.taxonomy import Taxonomy

__all__ = [
    "MAX_CURVE_POINTS",
    "ap_by_category_figure",
    "plot_ap_by_category",
    "plot_pr_curves",
    "pr_curves_figure",
    "thin_curve_indices",
]

_DPI = 120
_NCOLS = 5
_PANEL_TITLE_CHARS = 38  # characters of 9-point text across a 3-inch panel
_INSTALL_HINT = 'pip install "toxeval[plot]"'


def require_matplotlib() -> None:
    """An ``ImportError`` that says how to install matplotlib when it is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise ImportError(
            f"toxeval's plots need matplotlib, which is not installed: {_INSTALL_HINT}",
            name="matplotlib",
        ) from e


def _new_figure(width: float, height: float) -> Figure:
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)  # attaches itself: savefig renders with Agg, whatever the backend
    return fig


def _save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` to ``path``: PNG, or the format its suffix names (``.svg``, ``.pdf``)."""
    p = Path(path)
    fmt = p.suffix[1:].lower() or "png"
    fig.savefig(p, format=fmt, dpi=_DPI)
    return p


# --------------------------------------------------------------------------- thinning


# --------------------------------------------------------------------------- PR curves


def _category_ids(taxonomy: Taxonomy | str | Path | Sequence[str]) -> tuple[str, ...]:
    from toxeval.taxonomy import Taxonomy, load_taxonomy

    if isinstance(taxonomy, (str, Path)):
        return load_taxonomy(taxonomy).ids
    if isinstance(taxonomy, Taxonomy):
        return taxonomy.ids
    ids = tuple(taxonomy)
    if not all(isinstance(c, str) for c in ids):
        raise TypeError(
            "taxonomy must be a Taxonomy, a taxonomy name or file, or a sequence of category "
            "ids (str)"
        )
    return ids


def _check_inputs(
    y_true: ArrayLike, y_score: ArrayLike, mask: ArrayLike | None, k: int
) -> tuple[NDArray[Any], NDArray[Any], NDArray[np.bool_]]:
    y = np.asarray(y_true)
    s = np.asarray(y_score)
    if y.ndim != 2:
        raise ValueError(f"y_true must be an (N, K) label matrix, got shape {y.shape}")
    if y.shape[1] != k:
        raise ValueError(
            f"y_true has {y.shape[1]} columns but the taxonomy has {k} categories "
            "(columns are categories, in taxonomy order)"
        )
    if s.shape != y.shape:
        raise ValueError(f"y_score has shape {s.shape}, y_true {y.shape}: they must match")
    m = check_mask(mask, y.shape)
    return y, s, np.ones(y.shape, dtype=bool) if m is None else m


def _wrap(text: str, width_in: float, fontsize: float) -> str:
    """``text`` wrapped to lines that fit ``width_in`` inches at ``fontsize`` points (a
    character is taken as ~0.6 em wide), so that constrained layout never clips a long
    title (a dataset path, a system description) at both ends."""
    chars = max(20, int(width_in * 72 / (0.6 * fontsize)) - 4)
    return "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))


def _panel_title(text: str) -> str:
    """A panel's first title line, wrapped at the words of a long category id so that it
    stays within its 3-inch panel instead of running into the next one."""
    from toxeval.figure_labels import wrap_label

    return "\n".join(wrap_label(text, _PANEL_TITLE_CHARS, max_lines=3))


def _pr_panel(
    ax: Axes,
    cid: str,
    y: NDArray[Any],
    s: NDArray[Any],
    max_points: int,
    why_na: str | None = None,
) -> tuple[int, int]:
    """Draw one category's panel from its known rows; (points of the curve, points drawn).
    ``why_na``: the report's reason an AP is n/a, said on a panel without a positive (a
    system that gives no score for the category is not a category without positives)."""
    from toxeval import metrics

    n_known = int(y.shape[0])
    n_pos = int(np.count_nonzero(y == 1))
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.05)
    ax.tick_params(labelsize=7)
    if n_pos == 0:
        ax.set_title(_panel_title(f"{cid}  AP=n/a"), fontsize=9)
        if why_na == "no score from the system":
            why = "no score from the system"
        else:
            why = "no known positive" + (
                f"\n({n_known} known rows)" if n_known else "\n(no known row)"
            )
        ax.text(0.5, 0.5, why, ha="center", va="center", fontsize=8, color="0.4")
        return 0, 0
    precision, recall, _ = metrics.precision_recall_curve(y, s)
    ap = float(metrics.average_precision_score(y, s))
    idx = thin_curve_indices(recall, precision, max_points)
    ax.plot(recall[idx], precision[idx], drawstyle="steps-post", color="C0", linewidth=1.3)
    ax.axhline(n_pos / n_known, color="0.5", linestyle="--", linewidth=0.9)
    # The counts go in the title's second line, outside the plotted area: a label inside
    # the axes would cover the low-recall end of the curve at toxicity-like positive rates.
    ax.set_title(
        _panel_title(f"{cid}  AP={ap:.3f}") + f"\n{n_pos} pos / {n_known} known", fontsize=9
    )
    return int(recall.shape[0]), int(idx.shape[0])


def pr_curves_figure(
    y_true: ArrayLike,
    y_score: ArrayLike,
    mask: ArrayLike | None,
    taxonomy: Taxonomy | str | Path | Sequence[str],
    *,
    title: str | None = None,
    max_points: int = MAX_CURVE_POINTS,
    ap_undefined_reasons: Sequence[str | None] | None = None,
) -> Figure:
    """The figure :func:`plot_pr_curves` writes: one ``Axes`` per category, in taxonomy
    order (``fig.axes[k]`` is category ``k``), not saved."""
    ids = _category_ids(taxonomy)
    if not ids:
        raise ValueError("the taxonomy has no category")
    y, s, m = _check_inputs(y_true, y_score, mask, len(ids))
    ncols = min(_NCOLS, len(ids))
    nrows = math.ceil(len(ids) / ncols)
    fig = _new_figure(3.0 * ncols, 2.5 * nrows + 0.9)
    grid = fig.add_gridspec(nrows, ncols)
    thinned = 0
    for k, cid in enumerate(ids):
        row, col = divmod(k, ncols)
        ax = fig.add_subplot(grid[row, col])
        known = m[:, k]
        why = None if ap_undefined_reasons is None else ap_undefined_reasons[k]
        n_points, n_drawn = _pr_panel(ax, cid, y[known, k], s[known, k], max_points, why)
        thinned += n_drawn < n_points
        if col == 0:
            ax.set_ylabel("precision", fontsize=8)
        if k + ncols >= len(ids):  # no panel below
            ax.set_xlabel("recall", fontsize=8)
    fig.suptitle(
        _wrap(title or "Precision-recall per category (known labels only)", 3.0 * ncols, 11),
        fontsize=11,
    )
    note = "dashed: positive rate (no-skill baseline); AP over the known rows"
    if thinned:
        note += (
            f"; {thinned} curve(s) thinned to at most {max_points} points for drawing "
            "(AP uses every point)"
        )
    fig.supxlabel(_wrap(note, 3.0 * ncols, 7), fontsize=7, color="0.35")
    return fig


def plot_pr_curves(
    y_true: ArrayLike,
    y_score: ArrayLike,
    mask: ArrayLike | None,
    taxonomy: Taxonomy | str | Path | Sequence[str],
    path: str | Path,
    *,
    title: str | None = None,
    max_points: int = MAX_CURVE_POINTS,
    ap_undefined_reasons: Sequence[str | None] | None = None,
) -> Path:
    """Write per-category precision-recall curves (small multiples) to ``path``.

    ``y_true``, ``y_score`` and ``mask`` are (N, K) with columns in taxonomy order;
    ``mask`` is ``True`` where a label is known (``None``: all known). Each category's
    curve and AP use its known rows only. ``taxonomy``: a ``Taxonomy``, a taxonomy name or
    file, or the K category ids. Written as PNG (or the format the suffix names,
    e.g. ``.svg``, ``.pdf``); returns ``Path(path)``. ``ap_undefined_reasons``: per
    category, results.json's ``ap_undefined_reason`` (a panel without a known positive
    says it). Raises ``ImportError`` without matplotlib, ``ValueError`` for shapes that
    do not match."""
    fig = pr_curves_figure(
        y_true,
        y_score,
        mask,
        taxonomy,
        title=title,
        max_points=max_points,
        ap_undefined_reasons=ap_undefined_reasons,
    )
    return _save(fig, path)


# --------------------------------------------------------------------------- AP bars


def _default_ap_title(result: EvaluationResult) -> str:
    from toxeval.report_text import system_line

    return f"AP per category: {result.dataset.get('name')}, {system_line(result)}"


def ap_by_category_figure(result: EvaluationResult, *, title: str | None = None) -> Figure:
    """The figure :func:`plot_ap_by_category` writes (one ``Axes``), not saved."""
    from toxeval.figure_labels import wrap_label

    rows = result.per_category
    if not rows:
        raise ValueError("the result has no per-category rows")
    # long ids wrapped at their words (up to three lines): the bars keep their width
    labels = ["\n".join(wrap_label(str(r["id"]), 32, max_lines=3)) for r in rows]
    lines = max(label.count("\n") + 1 for label in labels)
    fig = _new_figure(8.0, (0.32 if lines == 1 else 0.12 + 0.14 * lines) * len(rows) + 1.6)
    from matplotlib.patches import Patch

    ax = fig.add_subplot()
    ypos = np.arange(len(rows))
    excluded = []
    for i, r in enumerate(rows):
        y0 = float(i)
        ap = float(r["ap"])
        if r["in_map"] and math.isfinite(ap):
            ax.barh(y0, ap, color="C0", height=0.7)
            ax.text(ap + 0.01, y0, f"{ap:.3f}  ({r['support']} pos)", va="center", fontsize=7)
        else:
            excluded.append(str(r["id"]))
            why = r.get("ap_undefined_reason") or "no known positive"
            ax.barh(y0, 1.0, color="0.9", edgecolor="0.6", hatch="//", height=0.7)
            ax.text(0.02, y0, f"excluded from mAP: {why}", va="center", fontsize=7)
    handles: list[Any] = [Patch(color="C0", label="AP (in mAP)")]
    map_ = result.map
    if math.isfinite(map_):
        n_in = len(rows) - len(excluded)
        line = ax.axvline(map_, color="C3", linestyle="--", linewidth=1.2)
        line.set_label(f"mAP {map_:.3f} over {n_in} categories")
        handles.append(line)
    if excluded:
        handles.append(
            Patch(facecolor="0.9", edgecolor="0.6", hatch="//", label="excluded from mAP")
        )
    ax.set_yticks(ypos, labels, fontsize=8)
    ax.invert_yaxis()  # taxonomy order, top to bottom
    ax.set_xlim(0.0, 1.25)
    ax.set_xticks(np.linspace(0.0, 1.0, 6))
    xlabel = "average precision (known labels only)"
    if excluded:
        note = (
            f"{len(excluded)} categories have no known positive the system scored (none in the "
            "scored rows, or the system gives no score for them): their AP is undefined and "
            f"mAP leaves them out ({', '.join(excluded)})"
        )
        xlabel += "\n" + textwrap.fill(note, 120)
    ax.set_xlabel(xlabel, fontsize=8)
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=7)
    width = float(fig.get_figwidth())
    ax.set_title(_wrap(title or _default_ap_title(result), width, 10), fontsize=10)
    return fig


def plot_ap_by_category(
    result: EvaluationResult, path: str | Path, *, title: str | None = None
) -> Path:
    """Write the per-category AP of ``result`` as horizontal bars to ``path``.

    Categories in taxonomy order, top to bottom, each bar labelled with its AP and support;
    a dashed vertical line at the mAP; categories excluded from mAP (no known positive)
    hatched in grey. Written as PNG (or the format the suffix names); returns
    ``Path(path)``. Raises ``ImportError`` without matplotlib."""
    return _save(ap_by_category_figure(result, title=title), path)
