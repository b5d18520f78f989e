"""Calibration against the annotators: per category, the expected calibration error (ECE)
and the Brier score of a system's scores against (a) the annotators' share (the fraction
of annotators who marked the category, ``Dataset.soft``) and (b) their majority label
(more than half of them marked it), with the reliability diagram's bins.

Definitions (docs/statistics.md, "Calibration against annotators"), over the known cells
of the scored rows that have per-annotator labels (``n_annotators > 0``):

* **Brier score**: ``mean((score - target) ** 2)``; against the majority label it is
  scikit-learn's ``brier_score_loss``.
* **ECE**: 10 equal-width score bins on [0, 1] (a score on an inner edge belongs to the
  lower bin, as in scikit-learn's ``calibration_curve(strategy="uniform")``);
  ``sum over bins of (n_bin / n) * |mean target in bin - mean score in bin|``.

Unknown cells (the dataset's unknown labels, known labels the system gives no score for)
are left out and counted per category; rows without annotations are left out and
counted. Scores that are not probabilities (any known score outside [0, 1], or not
finite: ranks, logits) get no figure: the block says calibration does not apply, and why.

The rendering helpers for the terminal, report.md, ``per_category.csv`` and the HTML
page live here too, so that the report modules stay small.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: Equal-width bins of the ECE and the reliability diagram.
N_BINS = 10
#: The targets the scores are compared with, in the order the tables show them.
TARGETS = ("share", "majority")
#: The per-category figures, in the order of the tables and of per_category.csv.
FIGURES = ("ece_share", "brier_share", "ece_majority", "brier_majority")
#: The reliability diagram's per-bin lists in each category's ``bins``.
BIN_FIELDS = ("count", "mean_score", "mean_share", "mean_majority")

NOT_PROBABILITIES = "scores outside [0, 1] are not probabilities"
NO_CELL = "no annotated known label"


def bin_ids(scores: NDArray[np.float64], n_bins: int = N_BINS) -> NDArray[np.intp]:
    """The bin of each score in [0, 1]: ``n_bins`` equal-width bins, a score on an inner
    edge in the lower bin (scikit-learn's ``calibration_curve`` rule)."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.searchsorted(edges[1:-1], scores).astype(np.intp)


def expected_calibration_error(
    scores: NDArray[np.float64], target: NDArray[np.float64], n_bins: int = N_BINS
) -> float:
    """ECE of ``scores`` (in [0, 1]) against ``target`` (0/1 labels or shares in [0, 1]):
    the bin-count-weighted mean of ``|mean target - mean score|`` over the non-empty
    equal-width bins. NaN for no cell."""
    n = scores.shape[0]
    if n == 0:
        return float("nan")
    ids = bin_ids(scores, n_bins)
    count = np.bincount(ids, minlength=n_bins)
    gap = np.bincount(ids, weights=target, minlength=n_bins) - np.bincount(
        ids, weights=scores, minlength=n_bins
    )
    # sum_b (n_b / n) * |sum_b(target - score) / n_b| = sum_b |sum_b(target - score)| / n
    return float(np.abs(gap[count > 0]).sum() / n)


def brier_score(scores: NDArray[np.float64], target: NDArray[np.float64]) -> float:
    """Mean squared difference between ``scores`` and ``target``; NaN for no cell."""
    if scores.shape[0] == 0:
        return float("nan")
    return float(np.mean((scores - target) ** 2))


def _bins(s: NDArray[np.float64], share: NDArray[np.float64]) -> dict[str, list[Any]]:
    """The reliability diagram of one category: per bin the cell count and the mean
    score, share and majority label (None for an empty bin)."""
    ids = bin_ids(s)
    count = np.bincount(ids, minlength=N_BINS)

    def mean(values: NDArray[np.float64]) -> list[float | None]:
        sums = np.bincount(ids, weights=values, minlength=N_BINS)
        return [float(t / c) if c else None for t, c in zip(sums, count, strict=True)]

    return {
        "count": [int(c) for c in count],
        "mean_score": mean(s),
        "mean_share": mean(share),
        "mean_majority": mean((share > 0.5).astype(np.float64)),
    }


def _range_reason(s: NDArray[Any], m: NDArray[np.bool_]) -> str | None:
    """Why the known scores are not probabilities, or None when they all are."""
    known = np.asarray(s, dtype=np.float64)[m]
    if known.size == 0:
        return None
    finite = np.isfinite(known)
    if not finite.all():
        return f"{NOT_PROBABILITIES} ({int((~finite).sum())} known scores are not finite)"
    lo, hi = float(known.min()), float(known.max())
    if lo < 0.0 or hi > 1.0:
        return f"{NOT_PROBABILITIES} (the known scores run from {_end(lo)} to {_end(hi)})"
    return None


def _end(x: float) -> str:
    """``x`` to 6 significant digits, or in full where those would round it into [0, 1]
    (a float32 sigmoid's 1.0000001 is not "1")."""
    short = f"{x:.6g}"
    return repr(x) if (x < 0.0 or x > 1.0) and 0.0 <= float(short) <= 1.0 else short


def calibration_block(
    y: NDArray[Any],
    s: NDArray[Any],
    m: NDArray[np.bool_],
    soft: NDArray[np.float64] | None,
    n_annotators: NDArray[np.int64] | None,
    categories: Sequence[str],
) -> dict[str, Any] | None:
    """``results.json``'s ``calibration`` block for the scored rows (``y``, ``s``, ``m``,
    and the same rows' ``soft`` shares and ``n_annotators``), or None when no scored row
    has per-annotator labels. ``macro``: each figure averaged over the categories that
    have it."""
    if soft is None or n_annotators is None:
        return None
    annotated = np.asarray(n_annotators) > 0
    if not annotated.any():
        return None
    m = np.asarray(m, dtype=bool)
    share_all = np.asarray(soft, dtype=np.float64)
    reason = _range_reason(s, m)
    cells = m & annotated[:, None] & np.isfinite(share_all)
    per_category: list[dict[str, Any]] = []
    for k, cat in enumerate(categories):
        col = cells[:, k]
        row: dict[str, Any] = {
            "id": cat,
            "cells": int(col.sum()),
            "excluded_unknown": int((annotated & ~col).sum()),
            **dict.fromkeys(FIGURES),
            "reason": reason,
            "bins": None,
        }
        if reason is None and not col.any():
            row["reason"] = NO_CELL
        if row["reason"] is None:
            sk = np.asarray(s[col, k], dtype=np.float64)
            share = share_all[col, k]
            major = (share > 0.5).astype(np.float64)
            row["ece_share"] = expected_calibration_error(sk, share)
            row["brier_share"] = brier_score(sk, share)
            row["ece_majority"] = expected_calibration_error(sk, major)
            row["brier_majority"] = brier_score(sk, major)
            row["bins"] = _bins(sk, share)
        per_category.append(row)
    macro = {
        f: (
            float(np.mean(vals))
            if (vals := [r[f] for r in per_category if r[f] is not None])
            else None
        )
        for f in FIGURES
    }
    return {
        "n_bins": N_BINS,
        "binning": "equal-width on [0, 1], an inner edge in the lower bin",
        "applicable": reason is None,
        "reason": reason,
        "annotated_rows": int(annotated.sum()),
        "rows_without_annotations": int((~annotated).sum()),
        "macro": macro,
        "per_category": per_category,
    }


# ---- rendering: the terminal, report.md, per_category.csv and the HTML page ----

HEADER = ("category", "cells", "ECE share", "Brier share", "ECE majority", "Brier majority")


def _fmt(x: Any) -> str:
    return "n/a" if x is None else f"{float(x):.4f}"


def calibration_table(block: Mapping[str, Any]) -> tuple[str, list[list[str]]]:
    """(caption, rows) of the calibration table: one row per category, then the
    macro average; a category without a figure says why. No rows when calibration does
    not apply (the caption says why)."""
    rows: list[list[str]] = []
    if not block.get("applicable"):
        return calibration_caption(block), rows
    for r in block.get("per_category", []):
        if r.get("ece_share") is None:
            rows.append([str(r["id"]), str(r["cells"]), f"n/a: {r.get('reason')}", "", "", ""])
        else:
            rows.append([str(r["id"]), str(r["cells"]), *(_fmt(r[f]) for f in FIGURES)])
    macro = block.get("macro") or {}
    rows.append(["(mean)", "", *(_fmt(macro.get(f)) for f in FIGURES)])
    return calibration_caption(block), rows


def calibration_caption(block: Mapping[str, Any]) -> str:
    """What the calibration figures are computed on, and how."""
    if not block.get("applicable"):
        return f"calibration does not apply: {block.get('reason')}"
    n_out = block.get("rows_without_annotations", 0)
    out = f"; {n_out} scored rows without annotations left out" if n_out else ""
    return (
        f"scores against the annotators' share and their majority label (more than half), "
        f"on the known cells of {block.get('annotated_rows')} annotated rows{out}; ECE over "
        f"{block.get('n_bins', N_BINS)} equal-width score bins; lower is better"
    )


def calibration_lines(block: Mapping[str, Any], md: Callable[[str], str]) -> list[str]:
    """report.md's calibration section (after its heading); ``md`` escapes user text."""
    caption, rows = calibration_table(block)
    if not rows:
        return [md(caption) + "."]
    lines = [
        "| " + " | ".join(HEADER) + " |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += ["| " + " | ".join(md(c) for c in r) + " |" for r in rows]
    return [*lines, "", md(caption) + "."]


def render_calibration(block: Mapping[str, Any], con: Any) -> None:
    """The calibration table in the terminal (headers on two lines, to fit 80 columns),
    or the reason it does not apply."""
    from rich.markup import escape

    from toxeval.console_output import print_table

    caption, rows = calibration_table(block)
    if not rows:
        con.print(f"calibration against annotators: {escape(caption)}", highlight=False)
        return
    header = [h.replace(" ", "\n") for h in HEADER]
    print_table(con, "calibration against annotators", header, rows, caption, text_columns=1)


def csv_values(block: Mapping[str, Any] | None, category: str) -> dict[str, Any]:
    """The calibration columns of ``per_category.csv`` for one category (None: empty)."""
    for r in (block or {}).get("per_category", []):
        if r["id"] == category:
            return {f: r.get(f) for f in FIGURES}
    return dict.fromkeys(FIGURES)


def annotator_interval_line(agreement: Mapping[str, Any] | None) -> str | None:
    """The agreement block's mAP against the annotators' majority with its two intervals
    (:mod:`toxeval.scoring.annotator_intervals`), as one line; None without them."""
    ai = (agreement or {}).get("annotator_intervals")
    if not ai:
        return None
    pct = f"{100 * float(ai['confidence_level']):g}%"

    undefined = ai.get("n_undefined") or {}

    def ci(x: Any, which: str) -> str:
        if x:
            return f"[{x[0]:.4f}, {x[1]:.4f}]"
        u = undefined.get(which)  # withheld by the report's rule: say on how many
        return f"n/a (undefined on {u} of {ai.get('n_resamples')} resamples)" if u else "n/a"

    # the rows-and-annotators resamples score against redrawn majorities: their own
    # median goes with their range, which may lie below the estimate
    med = ai.get("median_rows_and_annotators")
    both = ci(ai.get("ci_rows_and_annotators"), "rows_and_annotators")
    rows, est = ai.get("ci_rows"), ai.get("map")
    # as the report's notes say of its own intervals: a skewed bootstrap distribution
    skewed = (
        "; the estimate lies outside its rows interval (a skewed bootstrap distribution: "
        "read that interval as a rough guide)"
        if rows and est is not None and not rows[0] <= est <= rows[1]
        else ""
    )
    return (
        f"mAP against the annotators' majority {_fmt(est)}, {pct} interval "
        f"resampling rows {ci(rows, 'rows')}; against redrawn annotators' majorities "
        + (f"median {_fmt(med)} {both}" if med is not None else both)
        + skewed
    )
