""":func:`score_predictions`: every figure of a report, from a dataset and predictions
already aligned to it (:func:`toxeval.metrics.multilabel_report` in one native pass, then
the notes, counts, per-category table, agreement and card figures).
:func:`report_figures` turns a ``multilabel_report`` dict into the report's figures,
per-category rows and their notes; out-of-core scoring (:mod:`toxeval.outofcore`) uses
it on the dict its merged states give.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from toxeval.predictions import PredictionError, Predictions
from toxeval.predictions.forms import all_binary
from toxeval.scoring.agreement import agreement_figures, mean_ap
from toxeval.scoring.card import card_figures
from toxeval.scoring.result import EvaluationResult, Progress, ScoredRowArrays

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.metrics import MultilabelReport
    from toxeval.taxonomy import Taxonomy


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
    if preds.unknown_cells is not None:  # cells the predictions cannot speak to
        m_all = m_all & ~np.asarray(preds.unknown_cells, dtype=bool)
    if rows.all():  # every row scored: no copies (the metrics take C or Fortran order)
        y, s, m = y_all, np.asarray(preds.scores), m_all
    else:
        y = np.ascontiguousarray(y_all[rows])
        s = np.ascontiguousarray(preds.scores[rows])
        m = np.ascontiguousarray(m_all[rows])
    n = len(dataset.ids)
    n_scored = int(rows.sum())
    if n_scored == 0:
        counted = [
            (preds.n_null, "null predictions"),
            (preds.n_failed, "failed requests"),
            (preds.n_parse_excluded, "unparseable answers"),
        ]
        said = [f"{n} {what}" for n, what in counted if n]
        unknown_note = f" ({', '.join(said)})" if said else ""
        raise PredictionError(
            f"{preds.source}: no dataset row has a usable prediction{unknown_note}"
        )
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
    summary = report_figures(report, tax, threshold)
    figures, per_category, excluded = summary.figures, summary.per_category, summary.excluded
    notes.extend(summary.notes)
    unknown = report["n_unknown"]
    known_pos, known_neg = report["support"], report["n_negative"]
    binary = all_binary(s)
    if binary:
        notes.append(
            "scores are binary (0/1): ties are heavy, so AP, ROC AUC and the ranking figures "
            "describe a single operating point; graded scores rank better"
        )
    n_unknown_cells = int(np.sum(unknown))
    n_no_known = int((~m.any(axis=1)).sum()) if n_unknown_cells else 0
    if n_no_known:
        notes.append(
            f"{n_no_known} scored rows have no known label: they are left out of the "
            "per-row figures (ranking loss, LRAP, coverage error, one-error)"
        )
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
    card = card_figures(y, s, m, threshold, tax.ids, all_known=n_unknown_cells == 0)
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
        agreement=agreement_figures(dataset, rows, s, y, m),
        parse=parse,
        binary_scores=binary,
        notes=notes,
    )
    result.rows = ScoredRowArrays(y_true=y, scores=s, mask=m, dataset_ids=dataset.ids, scored=rows)
    return result


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


def _multilabel_report(
    y: np.ndarray, s: np.ndarray, m: np.ndarray, threshold: float
) -> MultilabelReport:
    """Every ranking and thresholded figure in one native pass (with ``mask=m``)."""
    from toxeval import metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return metrics.multilabel_report(y, s, mask=m, threshold=threshold)


@dataclass(frozen=True)
class ReportFigures:
    """The report's figures from a ``multilabel_report`` dict: the headline figures,
    the per-category rows, the categories left out of mAP, and the notes they call for."""

    figures: dict[str, Any]
    per_category: list[dict[str, Any]]
    excluded: list[str]
    notes: list[str]


def report_figures(
    report: MultilabelReport | dict[str, Any], tax: Taxonomy, threshold: float
) -> ReportFigures:
    """The figures every report shows, from a ``multilabel_report`` dict (computed in
    memory, or merged from streamed states out of core): mAP over the categories with a
    known positive, per-category AP / ROC AUC / F1 and counts, and the notes on
    excluded and one-class categories."""
    notes: list[str] = []
    known_pos, known_neg, unknown = report["support"], report["n_negative"], report["n_unknown"]
    included = known_pos > 0
    ap = np.asarray(report["ap"], dtype=np.float64)
    ap[~included] = np.nan
    auc = np.asarray(report["roc_auc"], dtype=np.float64)
    lrl, lrap, cov = (float(report[k]) for k in ("label_ranking_loss", "lrap", "coverage_error"))
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
    no_negative = [
        c
        for c, p, q, inc in zip(tax.ids, known_pos, known_neg, included, strict=True)
        if inc and q == 0
    ]
    if no_negative:
        notes.append(
            "AP is 1 whatever the scores where every known label is positive (no known "
            f"negative among the scored rows): {', '.join(no_negative)}; null and -1 label "
            "cells are unknown, not negative (write negatives as 0)"
        )
    one_class = [
        c for c, p, q in zip(tax.ids, known_pos, known_neg, strict=True) if p == 0 or q == 0
    ]
    if one_class:
        notes.append(
            "ROC AUC is undefined (NaN) where the known labels have one class only: "
            + ", ".join(one_class)
        )
    figures = {
        "map": mean_ap(ap, included),
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
    return ReportFigures(figures, per_category, excluded, notes)
