"""Slices (``--slice-by COLUMN``): the headline figures per value of a dataset column.

A slice is the scored rows whose value of a column (any field of the dataset file that
is not a schema field, e.g. ``language`` or ``source``, or the built-in ``text_length``
bucket) is one value; rows without a value (null, or an empty CSV cell) form the slice
``(missing)``. Each slice's figures are computed by the functions the whole report
uses (``toxeval.metrics.multilabel_report``, ``report_figures``, ``figure_intervals``)
on that slice's rows alone, so a slice's figures are what scoring its rows alone gives.
A slice with fewer than :data:`MIN_ROWS` scored rows, or with no category with a known
positive (mAP undefined), shows its row count and "too small" instead of figures.

The rendering helpers for report.md, the terminal, ``slices.csv`` and the HTML page live
here too, so that the report modules stay small.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from toxeval.report_text import level_text

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.scoring import EvaluationResult

#: The built-in column: the length of each row's text in characters, bucketed.
TEXT_LENGTH = "text_length"
#: The ``text_length`` buckets: (upper bound in characters, inclusive; label).
TEXT_LENGTH_BUCKETS = ((50, "<=50"), (200, "51-200"), (1000, "201-1000"), (None, ">1000"))
#: A slice with fewer scored rows shows "too small" instead of figures.
MIN_ROWS = 30
#: The most distinct values a ``--slice-by`` column may hold: a column of ids or free
#: text (one slice per row, each too small) is refused up front with this bound, not
#: scored into a report of thousands of empty slices.
MAX_SLICES = 1000
#: The slice of rows without a value.
MISSING = "(missing)"
#: slices.csv, written beside per_category.csv when slices were asked for.
SLICES_FILE = "slices.csv"
#: The headline figures of each slice (the keys of results.json's ``figures``).
FIGURES = (
    "map",
    "label_ranking_loss",
    "lrap",
    "coverage_error",
    "one_error",
    "micro_f1",
    "macro_f1",
    "hamming_loss",
)


def available_columns(dataset: Dataset) -> list[str]:
    """The columns ``--slice-by`` takes for ``dataset``: its non-schema fields, then the
    built-in ``text_length`` (unless the file has a field of that name)."""
    names = list(dataset.columns)
    return names + ([] if TEXT_LENGTH in names else [TEXT_LENGTH])


def check_slice_columns(dataset: Dataset, names: Sequence[str]) -> None:
    """Raise ``ValueError`` naming the available columns when a name in ``names`` is not
    one of them, or names a column of nested values (lists, objects)."""
    import pyarrow as pa

    have = available_columns(dataset)
    for name in names:
        if name not in have:
            raise ValueError(
                f"--slice-by {name}: the dataset has no such column (columns: {', '.join(have)})"
            )
        col = dataset.columns.get(name)
        if col is not None and pa.types.is_nested(col.type):
            raise ValueError(
                f"--slice-by {name}: the column holds lists or objects; slice by a column "
                "of single values"
            )
        if col is not None:
            n = len(slice_values(dataset, name)[1]) - 1  # without (missing)
            if n > MAX_SLICES:
                raise ValueError(
                    f"--slice-by {name}: the column has {n} distinct values; slices take a "
                    f"column of at most {MAX_SLICES} (an id or free-text column gives one "
                    "slice per row)"
                )


def slice_values(dataset: Dataset, name: str) -> tuple[np.ndarray, list[str]]:
    """Per dataset row, the index of its slice in the returned labels (values in sorted
    order, ``text_length`` buckets in length order, :data:`MISSING` last)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if name == TEXT_LENGTH and name not in dataset.columns:
        arrow = getattr(dataset.texts, "arrow", None)
        if isinstance(arrow, (pa.Array, pa.ChunkedArray)):
            lengths = np.asarray(pc.utf8_length(arrow).to_numpy(zero_copy_only=False))
        else:
            lengths = np.fromiter((len(t) for t in dataset.texts), np.int64, len(dataset))
        bounds = [b for b, _ in TEXT_LENGTH_BUCKETS if b is not None]
        codes = np.searchsorted(np.asarray(bounds), lengths, side="left")
        return codes.astype(np.intp), [label for _, label in TEXT_LENGTH_BUCKETS]
    col = dataset.columns[name]
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    try:
        text = pc.utf8_trim_whitespace(pc.cast(col, pa.string()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:  # bytes that are not UTF-8
        raise ValueError(
            f"--slice-by {name}: the column's values cannot be read as text ({e}); slice by a "
            "column of text, numbers or dates"
        ) from None
    text = pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text)
    enc = pc.dictionary_encode(text)
    values = [str(v) for v in enc.dictionary.to_pylist()]
    idx = np.asarray(enc.indices.fill_null(len(values)).to_numpy(zero_copy_only=False))
    order = sorted(range(len(values)), key=lambda i: values[i])
    rank = np.empty(len(values) + 1, dtype=np.intp)
    rank[order] = np.arange(len(values))
    rank[len(values)] = len(values)
    return rank[idx.astype(np.intp)], [values[i] for i in order] + [MISSING]


def slice_figures(
    y: np.ndarray,
    s: np.ndarray,
    m: np.ndarray,
    dataset: Dataset,
    threshold: float,
    *,
    n_resamples: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> dict[str, Any]:
    """One slice: its row count and, unless it is too small, its headline figures and
    (``n_resamples > 0``) the intervals of mAP and label ranking loss."""
    import warnings

    from toxeval import metrics
    from toxeval.scoring.figures import report_figures
    from toxeval.scoring.intervals import figure_intervals, map_columns

    n = int(y.shape[0])
    out: dict[str, Any] = {"rows": n, "too_small": False, "reason": None}
    if n < MIN_ROWS:
        reason = f"fewer than {MIN_ROWS} scored rows"
    elif map_columns(y, m).size == 0:
        reason = "no category with a known positive"
    else:
        reason = None
    if reason is not None:
        return {**out, "too_small": True, "reason": reason, "figures": None, "intervals": None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = metrics.multilabel_report(y, s, mask=m, threshold=threshold)
    figures = report_figures(report, dataset.taxonomy, threshold).figures
    out["figures"] = {k: figures[k] for k in FIGURES}
    out["intervals"] = None
    if n_resamples:
        fi = figure_intervals(
            y, s, m, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed
        )
        out["intervals"] = {
            "map": list(fi.map) if fi.map else None,
            "label_ranking_loss": list(fi.label_ranking_loss) if fi.label_ranking_loss else None,
            "n_undefined": fi.n_undefined,
        }
    return out


def add_slices(
    result: EvaluationResult,
    dataset: Dataset,
    columns: Sequence[str],
    *,
    n_resamples: int = 0,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> EvaluationResult:
    """Set ``result.slices`` to the figures per value of each of ``columns`` of
    ``dataset`` (the dataset ``result`` was scored on), from ``result.rows``; intervals
    with ``n_resamples`` bootstrap resamples (0: none). Returns ``result``."""
    check_slice_columns(dataset, columns)
    rows = result.rows
    if rows is None:
        raise ValueError("slices need the scored rows in memory (not out of core or on Dask)")
    if len(rows.scored) != len(dataset):
        raise ValueError("the result was not scored on this dataset (row counts differ)")
    threshold = float(result.config["threshold"])
    blocks = []
    for name in dict.fromkeys(columns):
        codes, labels = slice_values(dataset, name)
        codes = codes[rows.scored]
        # the scored rows grouped by value with one sort (a scan per value would be
        # quadratic in a column of many distinct values)
        order = np.argsort(codes, kind="stable")
        edges = np.searchsorted(codes[order], np.arange(len(labels) + 1))
        items = []
        for i, label in enumerate(labels):
            sel = order[edges[i] : edges[i + 1]]
            if not len(sel) and (label == MISSING or name != TEXT_LENGTH):
                continue  # no scored row has this value
            fig = slice_figures(
                rows.y_true[sel],
                rows.scores[sel],
                rows.mask[sel],
                dataset,
                threshold,
                n_resamples=n_resamples,
                seed=seed,
                confidence_level=confidence_level,
            )
            items.append({"value": label, **fig})
        blocks.append({"column": name, "slices": items})
    _name_slice_columns(result, dataset, columns)
    result.slices = {
        "min_rows": MIN_ROWS,
        "confidence_level": float(confidence_level) if n_resamples else None,
        "n_resamples": int(n_resamples),
        "columns": blocks,
    }
    return result


def _name_slice_columns(result: EvaluationResult, dataset: Dataset, columns: Sequence[str]) -> None:
    """The scoring's note on ignored dataset fields, less the columns the slices use
    (they give no labels, but they are not ignored)."""
    from toxeval.scoring.figures import IGNORED_FIELDS_NOTE, ignored_fields_note

    if not any(f in columns for f in dataset.ignored_fields):
        return
    notes = [n for n in result.notes if not n.startswith(IGNORED_FIELDS_NOTE)]
    if len(notes) == len(result.notes):
        return  # not a note of this scoring (the caller removed it)
    after = ignored_fields_note([f for f in dataset.ignored_fields if f not in columns])
    result.notes = [*notes, after] if after else notes


HEADER = ("column", "value", "rows", "mAP", "mAP interval", "LRL", "LRL interval", "macro F1")


def _num(v: Any, digits: int = 4) -> str:
    return (
        "n/a" if v is None or (isinstance(v, float) and not np.isfinite(v)) else f"{v:.{digits}f}"
    )


def _outside(ci: Mapping[str, Any], key: str, estimate: Any) -> bool:
    """Whether the figure ``key`` lies outside its own interval (a skewed bootstrap)."""
    v = ci.get(key)
    return v is not None and len(v) == 2 and estimate is not None and not v[0] <= estimate <= v[1]


def _ci(ci: Mapping[str, Any], key: str, n_resamples: int, estimate: Any = None) -> str:
    """An interval, with the resamples it leaves out (figure undefined) when any, and
    a mark when the estimate lies outside it."""
    v = ci.get(key)
    text = "n/a" if not v else f"[{v[0]:.3f}, {v[1]:.3f}]"
    if _outside(ci, key, estimate):
        text += " (estimate outside)"
    undefined = (ci.get("n_undefined") or {}).get(key)
    return f"{text} ({undefined}/{n_resamples} resamples undefined)" if undefined else text


def slices_header(block: Mapping[str, Any]) -> tuple[str, ...]:
    """The columns of the slices table: :data:`HEADER`, without the intervals when the
    run computed none."""
    return HEADER if block.get("n_resamples") else tuple(h for h in HEADER if "interval" not in h)


def slices_table(block: Mapping[str, Any]) -> list[list[str]]:
    """The cells (in :func:`slices_header` order) of the ``slices`` block, one list per
    slice, as report.md, the terminal and the HTML page show them."""
    keep = [i for i, h in enumerate(HEADER) if h in slices_header(block)]
    return [[cells[i] for i in keep] for cells in _cells(block)]


def _cells(block: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for col in block["columns"]:
        for sl in col["slices"]:
            cells = [str(col["column"]), str(sl["value"]), str(sl["rows"])]
            if sl["too_small"]:
                cells += [f"too small ({sl['reason']})"] + [""] * (len(HEADER) - 4)
            else:
                f, ci = sl["figures"], sl.get("intervals") or {}
                cells += [
                    _num(f["map"]),
                    _ci(ci, "map", block["n_resamples"], f["map"]),
                    _num(f["label_ranking_loss"]),
                    _ci(ci, "label_ranking_loss", block["n_resamples"], f["label_ranking_loss"]),
                    _num(f["macro_f1"]),
                ]
            rows.append(cells)
    return rows


def slices_caption(block: Mapping[str, Any]) -> str:
    """What the slices table shows, in one sentence."""
    level = block.get("confidence_level")
    how = (
        f"{level_text(level)} bootstrap intervals (n/a where the figure is undefined on "
        f"more than {level_text(1 - level)} of the resamples: a category's known positives "
        "too few in the slice)"
        if level
        else "no intervals (--bootstrap 0)"
    )
    skewed = any(
        _outside(sl.get("intervals") or {}, key, (sl.get("figures") or {}).get(key))
        for col in block["columns"]
        for sl in col["slices"]
        for key in ("map", "label_ranking_loss")
    )
    if skewed:
        how += (
            "; estimate outside: the slice's resampled values lie mostly on one side of its "
            "figure (a skewed bootstrap distribution), so read that interval as a rough guide"
        )
    return (
        f"Each slice scored on its own rows; {how}; a slice with fewer than "
        f"{block['min_rows']} scored rows or no known positive is too small for figures."
    )


def slices_lines(block: Mapping[str, Any], text: Any = str) -> list[str]:
    """The ``slices`` block as Markdown (``text`` escapes user text)."""
    from toxeval.compare_markup import markdown_table

    header, rows = slices_header(block), slices_table(block)
    return markdown_table(slices_caption(block), header, rows, text_columns=2, text=text)


def slices_csv(block: Mapping[str, Any]) -> str:
    """``slices.csv``: one row per slice with every headline figure and its intervals
    (empty cells for a slice too small, and for undefined values)."""
    from toxeval.compare_markup import csv_cell

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["column", "value", "rows", "too_small", "reason", *FIGURES]
    w.writerow(
        [
            *head,
            *("map_ci_low", "map_ci_high", "lrl_ci_low", "lrl_ci_high"),
            *("map_ci_undefined", "lrl_ci_undefined"),
        ]
    )
    for col in block["columns"]:
        for sl in col["slices"]:
            f = sl.get("figures") or {}
            ci = sl.get("intervals") or {}
            # values are user text: a spreadsheet must show them, not run them
            cells: list[Any] = [csv_cell(col["column"]), csv_cell(sl["value"])]
            cells += [sl["rows"], sl["too_small"]]
            cells.append(sl["reason"] or "")
            cells += [_csv_num(f.get(k)) for k in FIGURES]
            for key in ("map", "label_ranking_loss"):
                cells += list(ci[key]) if ci.get(key) else ["", ""]
            undefined = ci.get("n_undefined") or {}
            cells += [csv_cell(undefined.get(key)) for key in ("map", "label_ranking_loss")]
            w.writerow(cells)
    return buf.getvalue()


def _csv_num(v: Any) -> Any:
    return "" if v is None or (isinstance(v, float) and not np.isfinite(v)) else repr(float(v))


def render_slices(block: Mapping[str, Any], con: Any) -> None:
    """The slices as a terminal table (the rows of report.md's table)."""
    from toxeval.console_output import print_table

    rows = slices_table(block)
    print_table(con, "slices", slices_header(block), rows, slices_caption(block), text_columns=2)
