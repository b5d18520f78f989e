"""Scoring: every figure of a toxeval report, from a dataset and aligned predictions.

Headline figures are the standard rank-based definitions with scikit-learn semantics,
computed by :mod:`toxeval.metrics` with ``mask=dataset.mask`` so that unknown labels are
never negatives:

* **mAP** (primary): macro average precision over the categories with at least one known
  positive among the scored rows; the other categories are listed and excluded (AP of a
  category without positives is undefined; scikit-learn would count it as 0).
* **label ranking loss**, **LRAP**, **coverage error**, **one-error**: per row over the
  known labels of that row.
* at a threshold (default 0.5, ``score >= threshold`` is a positive): **micro F1**,
  **macro F1** (over the same categories as mAP) and **Hamming loss**, all over known
  cells only.
* a per-category table: AP, ROC AUC (NaN where the known labels have one class only),
  F1, support (known positives), known negatives and unknown count.

Beside them, the benchmark card's reference recipe (:mod:`toxeval.card_recipe`) on the
predictions thresholded at ``threshold``, restricted to rows whose labels are all known,
labelled as the card's recipe with its caveats.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from toxeval import card_recipe
from toxeval.predictions import (
    Format,
    OnMismatch,
    ParsePolicy,
    PredictionError,
    Predictions,
    _all_binary,
    check_raw_outputs,
    is_frame,
    predictions_from_array,
    predictions_from_frame,
    predictions_from_texts,
    read_predictions,
)
from toxeval.taxonomy import LabelMapping, Taxonomy, load_taxonomy

if TYPE_CHECKING:
    from toxeval.datasets import Dataset, Rule
    from toxeval.detectors import Detector

__all__ = ["SCHEMA_VERSION", "EvaluationResult", "evaluate", "score", "score_predictions"]

SCHEMA_VERSION = "1"
Progress = Callable[[str], None]

CARD_CAVEATS = (
    "The card's recipe divides running true positives by the row index and walks rows in "
    "dataset order, so its 'AP' is not average precision (perfect predictions do not "
    "score 1, row order changes it; a category with no true positive gives NaN and then "
    "mAP is NaN). Its ranking loss is the strict pairwise inversion count (ties are free); "
    "the literal code raises a broadcasting error on rows with 2..K-2 positives, where "
    "toxeval still counts pairs. Computed on predictions thresholded at the threshold."
)


def _version() -> str:
    from toxeval._core import __version__

    return str(__version__)


# (y_true, scores, mask) of the rows a result's figures were computed on
_ScoredArrays = tuple[np.ndarray, np.ndarray, np.ndarray]
_SCORED_SINK: ContextVar[list[_ScoredArrays] | None] = ContextVar(
    "toxeval_scored_sink", default=None
)


@contextmanager
def _capture_scored_arrays() -> Iterator[list[_ScoredArrays]]:
    """Within the block, every successful ``score_predictions`` call (so every ``score``
    and ``evaluate``) appends the ``(y_true, scores, mask)`` of the rows it scored, the
    arrays its figures are computed on, to the list yielded. Private: the CLI's
    ``--plots`` draws its curves from them. The arrays may be views of the dataset's and
    the predictions' own: read them, do not write to them."""
    captured: list[_ScoredArrays] = []
    token = _SCORED_SINK.set(captured)
    try:
        yield captured
    finally:
        _SCORED_SINK.reset(token)


@dataclass(frozen=True)
class ScoredRowArrays:
    """The rows an evaluation scored: their dataset ids (a sequence of ``str`` or a
    pyarrow string array), ``y_true`` (N, K) with unknown cells 0, ``scores`` (N, K) and
    ``mask`` (N, K, True where the label is known). The arrays may be views of the
    dataset's and the predictions' own: read them, do not write to them."""

    ids: Any
    y_true: np.ndarray
    scores: np.ndarray
    mask: np.ndarray


@dataclass
class EvaluationResult:
    """Every figure of one evaluation, plus what was evaluated and how.

    ``to_dict()`` holds what ``results.json`` holds (see docs/cli.md for the schema),
    with NaN kept as float NaN: ``toxeval.report.results_json`` writes it as JSON, NaN
    as ``null``.
    """

    config: dict[str, Any]
    dataset: dict[str, Any]
    system: dict[str, Any]
    counts: dict[str, Any]
    figures: dict[str, Any]
    per_category: list[dict[str, Any]]
    excluded_categories: list[str]
    card_recipe: dict[str, Any]
    agreement: dict[str, Any] | None
    parse: dict[str, Any] | None
    binary_scores: bool
    notes: list[str] = field(default_factory=list)
    # the files read, each as {path (as given), name, sha256} or {builtin, sha256}
    inputs: dict[str, Any] = field(default_factory=dict)
    # the rows the figures were computed on (not in results.json; written beside it as
    # scored_rows.parquet, and read by the HTML report and `toxeval compare`)
    rows: ScoredRowArrays | None = field(default=None, repr=False, compare=False)

    @property
    def map(self) -> float:
        return float(self.figures["map"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "toxeval_version": _version(),
            "config": self.config,
            "dataset": self.dataset,
            "system": self.system,
            "counts": self.counts,
            "figures": self.figures,
            "per_category": self.per_category,
            "excluded_categories": self.excluded_categories,
            "card_recipe": self.card_recipe,
            "agreement": self.agreement,
            "parse": self.parse,
            "binary_scores": self.binary_scores,
            "notes": self.notes,
            "inputs": self.inputs,
        }

    def input_paths(self) -> list[str]:
        """The paths of the files this result was computed from (as given)."""
        return [r["path"] for r in self.inputs.values() if isinstance(r, dict) and "path" in r]


# --------------------------------------------------------------------------- figures


def _f(x: Any) -> float:
    return float(x)


def _masked_ap_auc(
    y: np.ndarray, s: np.ndarray, m: np.ndarray, included: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-category AP (on ``included``) and ROC AUC (where both classes are known)."""
    from toxeval import metrics

    k = y.shape[1]
    ap = np.full(k, np.nan)
    auc = np.full(k, np.nan)
    known_pos = ((y == 1) & m).sum(axis=0)
    known_neg = ((y == 0) & m).sum(axis=0)
    two = (known_pos > 0) & (known_neg > 0)
    for target, cols, fn in (
        (ap, np.flatnonzero(included), metrics.average_precision_score),
        (auc, np.flatnonzero(two), metrics.roc_auc_score),
    ):
        if cols.size >= 2:
            vals = fn(y[:, cols], s[:, cols], average=None, mask=m[:, cols])
            target[cols] = np.asarray(vals, dtype=np.float64)
        elif cols.size == 1:
            c = int(cols[0])
            known = m[:, c]
            target[c] = _f(fn(y[known, c], s[known, c]))
    return ap, auc


_ONE_ERROR_ROWS = 1 << 16  # rows per block: bounded temporaries on million-row dumps


def _one_error(y: np.ndarray, s: np.ndarray, m: np.ndarray) -> float:
    """The report's one-error, as docs/cli.md defines it.

    Per row with at least one known positive: 1 if the highest-scored known label is not
    relevant (a tie at the top with any irrelevant label counts as an error, as ties count
    against the system in the ranking loss), else 0; averaged over those rows. Rows
    without a known positive have no right answer and are left out. NaN when no row has a
    known positive.

    ``toxeval.metrics.one_error`` is the classical definition instead (a row without a
    relevant label is a full error, a tie counts its irrelevant share): on a toxicity set,
    mostly benign rows, that figure would mostly count the benign rows.
    """
    rows = errors = 0
    for start in range(0, y.shape[0], _ONE_ERROR_ROWS):
        block = slice(start, start + _ONE_ERROR_ROWS)
        mb, sb = m[block], s[block]
        pos = (y[block] == 1) & mb
        top_pos = np.where(pos, sb, -np.inf).max(axis=1, initial=-np.inf)
        top_neg = np.where(mb & ~pos, sb, -np.inf).max(axis=1, initial=-np.inf)
        has = pos.any(axis=1)
        rows += int(has.sum())
        errors += int((has & (top_neg >= top_pos)).sum())
    return errors / rows if rows else float("nan")


def _rowwise(y: np.ndarray, s: np.ndarray, m: np.ndarray) -> tuple[float, float, float, float]:
    """(label ranking loss, LRAP, coverage error, one-error) with ``mask=m``."""
    from toxeval import metrics

    if y.shape[0] == 0:
        nan = float("nan")
        return nan, nan, nan, nan
    lrl = _f(metrics.label_ranking_loss(y, s, mask=m))
    lrap = _f(metrics.label_ranking_average_precision_score(y, s, mask=m))
    cov = _f(metrics.coverage_error(y, s, mask=m))
    return lrl, lrap, cov, _one_error(y, s, m)


def _threshold_figures(
    y: np.ndarray, s: np.ndarray, m: np.ndarray, threshold: float, included: np.ndarray
) -> tuple[dict[str, float], np.ndarray]:
    """Micro / macro F1 and Hamming loss over known cells; per-category F1."""
    pred = s >= threshold
    pos = (y == 1) & m
    neg = (y == 0) & m
    tp = (pred & pos).sum(axis=0).astype(np.float64)
    fp = (pred & neg).sum(axis=0).astype(np.float64)
    fn = (~pred & pos).sum(axis=0).astype(np.float64)
    denom = 2 * tp + fp + fn
    # zero_division=0, as scikit-learn's f1_score returns by default
    f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    micro_den = float(denom.sum())
    n_known = int(m.sum())
    return {
        "micro_f1": 2 * float(tp.sum()) / micro_den if micro_den > 0 else 0.0,
        "macro_f1": float(f1[included].mean()) if included.any() else float("nan"),
        "hamming_loss": float(fp.sum() + fn.sum()) / n_known if n_known else float("nan"),
    }, f1


def _map(ap: np.ndarray, included: np.ndarray) -> float:
    return float(np.mean(ap[included])) if included.any() else float("nan")


def _agreement(
    dataset: Dataset, rows: np.ndarray, s: np.ndarray, y: np.ndarray, m: np.ndarray
) -> dict[str, Any] | None:
    """Annotator disagreement: share of contested cells, mAP on unanimous vs contested rows."""
    soft = getattr(dataset, "soft", None)
    n_ann = getattr(dataset, "n_annotators", None)
    if soft is None or n_ann is None:
        return None
    annotated = np.asarray(n_ann)[rows] > 0
    if not annotated.any():
        return None
    sf = np.asarray(soft, dtype=np.float64)[rows]
    cells = m & annotated[:, None]
    contested = cells & (sf > 0) & (sf < 1)
    contested_rows = contested.any(axis=1)
    out: dict[str, Any] = {
        "annotated_rows": int(annotated.sum()),
        "annotated_cells": int(cells.sum()),
        "contested_cells": int(contested.sum()),
        "contested_cell_fraction": float(contested.sum() / cells.sum()) if cells.any() else None,
        "contested_rows": int((contested_rows & annotated).sum()),
    }
    for name, sel in (
        ("unanimous", annotated & ~contested_rows),
        ("contested", annotated & contested_rows),
    ):
        inc = ((y[sel] == 1) & m[sel]).sum(axis=0) > 0
        if sel.sum() >= 2 and inc.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ap, _ = _masked_ap_auc(y[sel], s[sel], m[sel], inc)
            out[f"map_{name}_rows"] = _map(ap, inc)
        else:
            out[f"map_{name}_rows"] = None
        out[f"n_{name}_rows"] = int(sel.sum())
    return out


def _card(
    y: np.ndarray,
    s: np.ndarray,
    m: np.ndarray,
    threshold: float,
    ids: Sequence[str],
    all_known: bool = False,
) -> dict[str, Any]:
    full = np.ones(m.shape[0], dtype=bool) if all_known else m.all(axis=1)
    n_full = int(full.sum())
    out: dict[str, Any] = {
        "label": "benchmark card's reference recipe (compatibility mode; not standard AP)",
        "threshold": threshold,
        "rows_used": n_full,
        "rows_skipped_partial_labels": int((~full).sum()),
        "caveats": CARD_CAVEATS,
    }
    if n_full == 0:
        out.update(map=None, label_ranking_loss=None, per_category_ap={})
        return out
    everything = n_full == full.shape[0]
    yb = y if everything else y[full]
    pb = (s if everything else s[full]) >= threshold
    if pb.flags.f_contiguous and not pb.flags.c_contiguous:
        # scores joined from a table are column-major: labels in the same order make the
        # recipe's element-wise passes and per-row counts run along contiguous columns
        yb = np.asfortranarray(yb)
    aps, m_ap, lrl = card_recipe.card_figures(yb, pb)
    out.update(
        map=m_ap,
        label_ranking_loss=lrl,
        per_category_ap={c: float(a) for c, a in zip(ids, aps, strict=True)},
    )
    return out


def _check_aligned(preds: Predictions, dataset: Dataset) -> None:
    """A PredictionError unless ``preds`` are aligned to ``dataset``'s rows and categories."""
    n, k = len(dataset.ids), dataset.taxonomy.k
    shape = np.shape(preds.scores)
    if shape != (n, k) or np.shape(preds.scored) != (n,):
        raise PredictionError(
            f"{preds.source}: the predictions hold scores of shape {shape} but the dataset "
            f"{dataset.name!r} has {n} rows x {k} categories; build them from this dataset "
            "(read_predictions / predictions_from_array with it)"
        )
    if preds.dataset_sha256 is not None and preds.dataset_sha256 != dataset.sha256:
        raise PredictionError(
            f"{preds.source}: the predictions were aligned to another dataset (sha256 "
            f"{preds.dataset_sha256[:12]}...) than {dataset.name!r} ({dataset.sha256[:12]}...); "
            "build them from the dataset they are scored against"
        )


def score_predictions(
    preds: Predictions,
    dataset: Dataset,
    *,
    threshold: float = 0.5,
    system: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> EvaluationResult:
    """Compute every figure for predictions already aligned to ``dataset``.

    ``config`` entries are added to ``result.config``; they cannot set ``threshold`` or
    ``taxonomy`` (those record what was used)."""
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    reserved = sorted({"threshold", "taxonomy"} & set(config or ()))
    if reserved:
        raise ValueError(
            f"config cannot set {', '.join(map(repr, reserved))}: result.config records "
            "the threshold and taxonomy used (pass threshold=; the taxonomy is the dataset's)"
        )
    _check_aligned(preds, dataset)
    if progress:
        progress("scoring")
    tax = dataset.taxonomy
    rows = np.asarray(preds.scored, dtype=bool)
    y_all = np.asarray(dataset.y_true)
    m_all = np.asarray(dataset.mask, dtype=bool)
    if rows.all():  # every row scored: no copies (the metrics take C or Fortran order)
        y, s, m = y_all, np.asarray(preds.scores), m_all
    else:
        y = np.ascontiguousarray(y_all[rows])
        s = np.ascontiguousarray(preds.scores[rows])
        m = np.ascontiguousarray(m_all[rows])
    n = len(dataset.ids)
    n_scored = int(rows.sum())
    if n_scored == 0:
        unknown = (
            f" ({preds.n_null} null predictions, {preds.n_failed} failed requests)"
            if preds.n_null or preds.n_failed
            else ""
        )
        raise PredictionError(f"{preds.source}: no dataset row has a usable prediction{unknown}")
    notes = list(preds.notes)
    ignored = dataset.ignored_fields
    if ignored:
        shown = ", ".join(repr(f) for f in ignored[:20]) + (", ..." if len(ignored) > 20 else "")
        notes.append(
            f"dataset fields ignored (not schema fields, or per-category fields while the "
            f"labels come from 'labels'/'annotations'): {shown}"
        )

    if progress:
        progress("computing metrics")
    report = _multilabel_report(y, s, m, threshold)
    if progress:
        progress("summarising")
    if report is None:
        known_pos = ((y == 1) & m).sum(axis=0)
        known_neg = ((y == 0) & m).sum(axis=0)
        unknown = (~m).sum(axis=0)
        included = known_pos > 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ap, auc = _masked_ap_auc(y, s, m, included)
            lrl, lrap, cov, oe = _rowwise(y, s, m)
        thr, f1 = _threshold_figures(y, s, m, threshold, included)
    else:
        # the report's counts and thresholded figures are the ones _threshold_figures
        # computes (same integer counts, same float operations), without N x K passes
        known_pos, known_neg, unknown = report["support"], report["n_negative"], report["n_unknown"]
        included = known_pos > 0
        ap = np.asarray(report["ap"], dtype=np.float64)
        ap[~included] = np.nan
        auc = np.asarray(report["roc_auc"], dtype=np.float64)
        lrl, lrap, cov = (
            float(report[k]) for k in ("label_ranking_loss", "lrap", "coverage_error")
        )
        # the report's one_error is metrics.one_error's classical definition; the
        # figure docs/cli.md defines is its one_error_relevant
        oe = float(report["one_error_relevant"])
        f1 = np.asarray(report["f1"], dtype=np.float64)
        thr = {
            "micro_f1": float(report["f1_micro"]),
            "macro_f1": float(f1[included].mean()) if included.any() else float("nan"),
            "hamming_loss": float(report["hamming_loss"]),
        }
    excluded = [c for c, inc in zip(tax.ids, included, strict=True) if not inc]
    if excluded:
        notes.append(
            f"mAP and macro F1 average over {int(included.sum())} of {tax.k} categories; "
            f"excluded (no known positive among the scored rows): {', '.join(excluded)}"
        )
    one_class = [
        c for c, p, q in zip(tax.ids, known_pos, known_neg, strict=True) if p == 0 or q == 0
    ]
    if one_class:
        notes.append(
            "ROC AUC is undefined (NaN) where the known labels have one class only: "
            + ", ".join(one_class)
        )
    binary = _all_binary(s)
    if binary:
        notes.append(
            "scores are binary (0/1): ties are heavy, so AP, ROC AUC and the ranking figures "
            "describe a single operating point; graded scores rank better"
        )
    figures = {
        "map": _map(ap, included),
        "label_ranking_loss": lrl,
        "lrap": lrap,
        "coverage_error": cov,
        "one_error": oe,
        "threshold": threshold,
        **thr,
    }
    per_category = [
        {
            "id": c,
            "name": tax.category(c).name,
            "ap": float(ap[k]),
            "roc_auc": float(auc[k]),
            # F1 of a category without any known label is undefined, not 0
            "f1": float(f1[k]) if known_pos[k] + known_neg[k] else float("nan"),
            "support": int(known_pos[k]),
            "negatives": int(known_neg[k]),
            "unknown": int(unknown[k]),
            "in_map": bool(included[k]),
        }
        for k, c in enumerate(tax.ids)
    ]
    n_unknown_cells = int(np.sum(unknown))
    n_no_known = int((~m.any(axis=1)).sum()) if n_unknown_cells else 0
    if n_no_known:
        notes.append(f"{n_no_known} scored rows have no known label")
    counts = {
        "dataset_rows": n,
        "scored": n_scored,
        "excluded": n - n_scored,
        "missing_prediction": preds.n_missing,
        "excluded_by_parse_policy": preds.n_parse_excluded,
        "null_prediction": preds.n_null,
        "failed_request": preds.n_failed,
        "duplicate_rows_dropped": preds.n_duplicate,
        "unknown_ids_dropped": preds.n_unknown,
        "rows_without_known_labels": n_no_known,
        "known_cells": int(np.sum(known_pos) + np.sum(known_neg)),
        "unknown_cells": n_unknown_cells,
    }
    if preds.n_missing:
        notes.append(
            f"{preds.n_missing} dataset rows have no prediction and are not scored "
            f"(on_mismatch={preds.on_mismatch})"
        )
    if preds.n_null:
        notes.append(
            f"{preds.n_null} dataset rows have a null prediction (unknown: no scores, labels "
            f"or output) and are not scored; first: {', '.join(map(repr, preds.null_ids))}"
        )
    if preds.n_failed:
        first = "; ".join(f"{i!r}: {e}" for i, e in preds.failed)
        notes.append(
            f"{preds.n_failed} dataset rows come from failed requests (an 'error' field) and "
            f"are not scored; first: {first}"
        )
    if preds.n_duplicate or preds.n_unknown:
        notes.append(
            f"dropped {preds.n_duplicate} duplicate and {preds.n_unknown} unknown-id "
            f"prediction rows (on_mismatch={preds.on_mismatch})"
        )
    card = _card(y, s, m, threshold, tax.ids, all_known=n_unknown_cells == 0)
    if card["rows_skipped_partial_labels"]:
        notes.append(
            f"the card's recipe uses the {card['rows_used']} rows whose labels are all known "
            f"(it has no notion of unknown labels)"
        )
    parse = None
    if preds.parse_counts is not None:
        parse = {
            "policy": preds.parse_policy,
            "status_counts": preds.parse_counts,
            "excluded": preds.n_parse_excluded,
            "graded": preds.graded,
        }
    cfg = {
        "threshold": threshold,
        "taxonomy": {"name": tax.name, "version": tax.version, "k": tax.k, "ids": list(tax.ids)},
        **(config or {}),
    }
    ds = {
        "name": dataset.name,
        "level": dataset.level,
        "source": dataset.source,
        "sha256": dataset.sha256,
        "rows": n,
    }
    result = EvaluationResult(
        inputs=_input_records(dataset, preds),
        config=cfg,
        dataset=ds,
        system=system or preds.summary(),
        counts=counts,
        figures=figures,
        per_category=per_category,
        excluded_categories=excluded,
        card_recipe=card,
        agreement=_agreement(dataset, rows, s, y, m),
        parse=parse,
        binary_scores=binary,
        notes=notes,
    )
    result.rows = ScoredRowArrays(ids=_scored_ids(dataset, rows), y_true=y, scores=s, mask=m)
    sink = _SCORED_SINK.get()
    if sink is not None:
        sink.append((y, s, m))
    return result


def _scored_ids(dataset: Dataset, rows: np.ndarray) -> Any:
    """The ids of the scored rows, kept as Arrow strings for column-read datasets."""
    import pyarrow as pa

    ids = dataset.ids
    arrow = getattr(ids, "arrow", None)
    arr = arrow() if callable(arrow) else pa.array(list(ids), type=pa.string())
    return arr if bool(rows.all()) else arr.filter(pa.array(rows))


def _input_records(dataset: Dataset, preds: Predictions) -> dict[str, Any]:
    """``result.inputs``: each file the figures come from (see docs/cli.md); the
    mapping is filled in by :func:`score`, which knows the one given."""
    from toxeval.files import builtin_record, file_record

    def record(source: str, sha: str | None, kind: str) -> dict[str, Any] | None:
        if source.startswith("built-in:"):
            name = source.removeprefix("built-in:")
            return builtin_record(kind, name + (".jsonl" if kind == "datasets" else ".toml"))
        if source and Path(source).is_file():
            return file_record(source, sha)
        return None

    tax_source = dataset.taxonomy.source
    out: dict[str, Any] = {
        "dataset": record(dataset.source, dataset.sha256, "datasets"),
        "predictions": record(preds.source, preds.sha256, "") if preds.sha256 is not None else None,
        "taxonomy": record(tax_source, None, "taxonomies") if tax_source else None,
        "mapping": None,
    }
    return out


def _mapping_record(mapping: str | Path | LabelMapping | None) -> dict[str, Any] | None:
    """The ``inputs.mapping`` record of a mapping given by path or built-in name."""
    from toxeval.files import builtin_record, file_record

    if not isinstance(mapping, (str, Path)):
        return None
    if Path(mapping).is_file():
        return file_record(mapping)
    return builtin_record("mappings", f"{mapping}.toml")


def _multilabel_report(
    y: np.ndarray, s: np.ndarray, m: np.ndarray, threshold: float
) -> dict[str, Any] | None:
    """All ranking figures in one native pass, when toxeval.metrics provides it."""
    from toxeval import metrics

    fn = getattr(metrics, "multilabel_report", None)
    if fn is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(y, s, mask=m, threshold=threshold)
        except TypeError:
            return None  # an engine version without threshold=: compute figure by figure
    keys = (
        *("ap", "roc_auc", "label_ranking_loss", "lrap", "coverage_error", "one_error_relevant"),
        *("support", "n_negative", "n_unknown", "f1", "f1_micro", "hamming_loss"),
    )
    try:
        got = {k: out[k] for k in keys}
    except (KeyError, TypeError, IndexError):
        return None  # an engine version with another layout: compute figure by figure
    k = y.shape[1]
    for key in ("support", "n_negative", "n_unknown", "f1"):
        got[key] = np.asarray(got[key])
        if got[key].shape != (k,):
            return None
    return got


# --------------------------------------------------------------------------- API


def _load(
    dataset: Dataset | str | Path | None,
    taxonomy: str | Path | Taxonomy | None,
    data_dir: str | Path | None,
    rule: Rule,
    min_annotators: int,
    progress: Progress | None,
) -> Dataset:
    if dataset is not None and not isinstance(dataset, (str, Path)):  # a Dataset
        _reject_unused(
            {"data_dir": (data_dir, None), "rule": (rule, "majority")}
            | {"min_annotators": (min_annotators, 1)},
            "a Dataset (they apply when the dataset is loaded by name or path: pass them "
            "to load_dataset)",
        )
        if taxonomy is not None and load_taxonomy(taxonomy).ids != dataset.taxonomy.ids:
            raise ValueError(
                f"taxonomy {load_taxonomy(taxonomy).name!r} does not match the dataset's "
                f"{dataset.taxonomy.name!r}"
            )
        return dataset
    from toxeval.datasets import load_dataset

    if progress:
        progress("reading dataset")
    return load_dataset(
        dataset,
        taxonomy=taxonomy,
        data_dir=data_dir,
        rule=rule,
        min_annotators=min_annotators,
    )


def _reject_unused(given: dict[str, tuple[object, object]], what: str) -> None:
    """A ValueError naming the options of ``given`` (``name: (value, default)``) that
    were set to something else than their default although they do not apply to
    ``what``: nothing the caller asked for is silently ignored."""
    bad = [f"{k}={v!r}" for k, (v, default) in given.items() if v is not default and v != default]
    if bad:
        verb = "does" if len(bad) == 1 else "do"
        raise ValueError(f"{', '.join(bad)} {verb} not apply to {what}")


def score(
    predictions: str | Path | Predictions | np.ndarray | Sequence[str] | Any,
    dataset: Dataset | str | Path | None = None,
    *,
    taxonomy: str | Path | Taxonomy | None = None,
    threshold: float = 0.5,
    parse_policy: ParsePolicy = "exclude",
    on_mismatch: OnMismatch = "error",
    format: Format = "auto",
    mapping: str | Path | LabelMapping | None = None,
    data_dir: str | Path | None = None,
    rule: Rule = "majority",
    min_annotators: int = 1,
    progress: Progress | None = None,
) -> EvaluationResult:
    """Score predictions against a dataset.

    ``predictions``: a dump file (JSONL / CSV / Parquet / NPY / NPZ, see
    :func:`toxeval.predictions.read_predictions`), an (N, K) score array in dataset row
    order, a table of scores (a pandas or polars DataFrame or a pyarrow Table: one column
    per category, optionally ``id``; see
    :func:`toxeval.predictions.predictions_from_frame`), a list of N raw model outputs,
    or a :class:`Predictions`. ``dataset``: a
    :class:`~toxeval.datasets.Dataset`, a registry name or a path (``None`` = the embedded
    demo set). Unknown labels are masked in every figure.

    Options that do not apply to the form of ``predictions`` (``format`` for anything but
    a file; ``on_mismatch`` for anything but a file or a table; ``parse_policy`` and
    ``mapping`` for an array, a table or a ``Predictions``) and to a ``Dataset`` given (``data_dir``, ``rule``,
    ``min_annotators``) raise ``ValueError`` when set to another value than their
    default.
    """
    file_only: dict[str, tuple[object, object]] = {
        "format": (format, "auto"),
        "on_mismatch": (on_mismatch, "error"),
    }
    parsing: dict[str, tuple[object, object]] = {
        "parse_policy": (parse_policy, "exclude"),
        "mapping": (mapping, None),
    }
    if isinstance(predictions, Predictions):
        _reject_unused(file_only | parsing, "a Predictions (it is already read)")
    elif isinstance(predictions, np.ndarray):
        _reject_unused(file_only | parsing, "an array of scores")
    elif is_frame(predictions):
        _reject_unused({"format": (format, "auto")} | parsing, "a table of scores")
    elif not isinstance(predictions, (str, Path)):
        _reject_unused(file_only, "a sequence of outputs (they apply to a file)")
    ds = _load(dataset, taxonomy, data_dir, rule, min_annotators, progress)
    loaded = dataset is None or isinstance(dataset, (str, Path))
    if isinstance(predictions, Predictions):
        preds = predictions
    elif isinstance(predictions, (str, Path)):
        from toxeval.llm.runfile import is_run_file

        if is_run_file(predictions):  # toxeval predict's run file: read via its header
            from toxeval.llm.runscores import score_run

            _reject_unused(parsing | {"format": (format, "auto")}, "a run file")
            return score_run(predictions, ds, threshold=threshold, progress=progress)
        if progress:
            progress("reading predictions")
        preds = read_predictions(
            predictions,
            ds,
            format=format,
            on_mismatch=on_mismatch,
            parse_policy=parse_policy,
            mapping=mapping,
        )
        preds = _note_unused_by_dump(preds, parse_policy, mapping)
    elif isinstance(predictions, np.ndarray):
        preds = predictions_from_array(predictions, ds)
    elif is_frame(predictions):
        preds = predictions_from_frame(
            predictions, ds, source=type(predictions).__name__, on_mismatch=on_mismatch
        )
    else:
        texts = _output_list(predictions)
        if progress:
            progress("parsing outputs")
        preds = predictions_from_texts(texts, ds, parse_policy=parse_policy, mapping=mapping)
    # What was applied (None: not applicable, or not known for a Predictions given).
    config = {
        "parse_policy": preds.parse_policy if preds.kind == "text" else None,
        "on_mismatch": preds.on_mismatch,
        "format": preds.format,
        "mapping": _mapping_name(mapping) if preds.kind != "scores" else None,
        "rule": rule if loaded else None,
        "min_annotators": min_annotators if loaded else None,
    }
    result = score_predictions(preds, ds, threshold=threshold, config=config, progress=progress)
    if config["mapping"] is not None:
        result.inputs["mapping"] = _mapping_record(mapping)
    return result


def _note_unused_by_dump(
    preds: Predictions, parse_policy: str, mapping: str | Path | LabelMapping | None
) -> Predictions:
    """``preds`` with a note for each option the dump turned out to have no use for
    (known only once it is read): ``parse_policy`` applies to raw text, ``mapping`` to
    label lists and raw text. Not an error, so that one command line can score a mix of
    dumps; the report says so, and ``result.config`` records ``None`` for it."""
    unused = []
    if parse_policy != "exclude" and preds.kind != "text":
        unused.append(f"parse_policy={parse_policy!r}")
    if mapping is not None and preds.kind == "scores":
        unused.append(f"mapping={_mapping_name(mapping)!r}")
    if not unused:
        return preds
    note = f"{' and '.join(unused)} not used: the predictions are {preds.kind}, not raw text" + (
        " or label lists" if preds.kind == "scores" else ""
    )
    return dataclasses.replace(preds, notes=(*preds.notes, note))


def _output_list(predictions: object) -> list[str]:
    """``predictions`` as a list of raw outputs, or a TypeError saying what is accepted."""
    accepted = (
        "predictions must be a file path, an (N, K) numpy array of scores, a DataFrame or "
        "Arrow table of scores, a sequence of N raw model outputs (str) or a Predictions"
    )
    if isinstance(predictions, (bytes, dict)) or not isinstance(predictions, Iterable):
        raise TypeError(f"{accepted}; got {type(predictions).__name__}")
    texts = list(predictions)
    check_raw_outputs(texts, f"{accepted}; got a sequence that is none of these")
    return texts


def _mapping_name(mapping: str | Path | LabelMapping | None) -> str | None:
    if mapping is None:
        return None
    if isinstance(mapping, LabelMapping):
        return mapping.name
    return str(mapping)


def evaluate(
    dataset: Dataset | str | Path | None = None,
    detector: str | Detector = "lexicon",
    *,
    taxonomy: str | Path | Taxonomy | None = None,
    threshold: float = 0.5,
    data_dir: str | Path | None = None,
    rule: Rule = "majority",
    min_annotators: int = 1,
    progress: Progress | None = None,
    run_file: str | Path | None = None,
    **predict_options: Any,
) -> EvaluationResult:
    """Run a detector over a dataset and score it (default: the lexicon baseline on the
    embedded demo set, offline). Response-level datasets are scored on the responses.

    ``detector``: a detector spec (``lexicon``, ``openai:MODEL``,
    ``openai-moderation[:MODEL]``, ``llama-guard:MODEL``, ``python:module:attr``: see
    :func:`toxeval.llm.predict`) or any object with ``predict_scores(texts) -> (N, K)
    array`` and a ``taxonomy`` whose ids are the dataset's (the
    ``toxeval.detectors.Detector`` protocol). A spec other than ``lexicon``, or a
    ``run_file``, runs through :func:`toxeval.llm.predict` (``predict_options`` are its
    keyword arguments, e.g. ``base_url=``) into ``run_file`` (a temporary file when None),
    then scores the run file."""
    from toxeval.detectors import get_detector

    ds = _load(dataset, taxonomy, data_dir, rule, min_annotators, progress)
    loaded = dataset is None or isinstance(dataset, (str, Path))
    if isinstance(detector, str) and (
        run_file is not None or predict_options or detector.strip().lower() != "lexicon"
    ):
        from toxeval.llm import evaluate_spec

        config = {
            "detector": detector,
            "rule": rule if loaded else None,
            "min_annotators": min_annotators if loaded else None,
        }
        return evaluate_spec(
            ds, detector, run_file, threshold=threshold, config=config, **predict_options
        )
    if isinstance(detector, str):
        det = get_detector(detector, ds.taxonomy)
        asked = detector
    else:
        det = detector
        if not callable(getattr(det, "predict_scores", None)):
            raise TypeError(
                "detector must be a built-in detector's name or an object with "
                f"predict_scores(texts); got {type(detector).__name__}"
            )
        det_tax = getattr(det, "taxonomy", None)
        if not isinstance(det_tax, Taxonomy) or det_tax.ids != ds.taxonomy.ids:
            got = det_tax.name if isinstance(det_tax, Taxonomy) else type(det_tax).__name__
            raise ValueError(
                f"the detector's taxonomy ({got!r}) does not match the dataset's "
                f"{ds.taxonomy.name!r}: its score columns must be the dataset's categories"
            )
        asked = str(getattr(det, "name", type(det).__name__))
    if progress:
        progress("detecting")
    texts = ds.responses if ds.level == "response" and ds.responses is not None else ds.texts
    scores = np.asarray(det.predict_scores(texts), dtype=np.float64)
    preds = predictions_from_array(scores, ds, source=f"detector:{asked}")
    system = {
        "kind": "detector",
        "detector": str(getattr(det, "name", asked)),
        "detector_version": str(getattr(det, "version", _version())),
        "input": "responses" if texts is ds.responses else "texts",
    }
    config = {
        "detector": asked,
        "rule": rule if loaded else None,
        "min_annotators": min_annotators if loaded else None,
    }
    return score_predictions(
        preds, ds, threshold=threshold, system=system, config=config, progress=progress
    )
