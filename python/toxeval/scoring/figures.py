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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from toxeval.calibration import calibration_block
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
    no_score_all = None  # known labels the system gives no score for (a moderation API's)
    if preds.unknown_cells is not None:  # cells the predictions cannot speak to
        no_score_all = m_all & np.asarray(preds.unknown_cells, dtype=bool)
        m_all = m_all & ~no_score_all
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
    ignored = ignored_fields_note(dataset.ignored_fields)
    if ignored:
        notes.append(ignored)

    if progress:
        progress("computing metrics")
    report = _multilabel_report(y, s, m, threshold)
    if progress:
        progress("summarising")
    no_score, no_score_pos = _no_score_counts(no_score_all, rows, y_all, tax.k)
    summary = report_figures(report, tax, threshold, no_score=no_score, no_score_pos=no_score_pos)
    figures, per_category, excluded = summary.figures, summary.per_category, summary.excluded
    notes.extend(summary.notes)
    unknown = report["n_unknown"]
    known_pos, known_neg = report["support"], report["n_negative"]
    unknown_label = np.asarray(unknown) - no_score
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
        "unknown_cells": int(np.sum(unknown_label)),
        "no_score_cells": int(np.sum(no_score)),
    }
    notes.extend(
        row_count_notes(
            missing=preds.n_missing,
            null=preds.n_null,
            null_ids=preds.null_ids,
            failed=preds.failed,
            n_failed=preds.n_failed,
            duplicate=preds.n_duplicate,
            unknown=preds.n_unknown,
            on_mismatch=preds.on_mismatch,
        )
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
    soft, n_ann = _annotator_rows(dataset, rows)
    result.calibration = calibration_block(y, s, m, soft, n_ann, tax.ids)
    result.rows = ScoredRowArrays(
        y_true=y,
        scores=s,
        mask=m,
        dataset_ids=dataset.ids,
        scored=rows,
        soft=soft,
        n_annotators=n_ann,
    )
    return result


#: How the note on ignored dataset fields begins (slices rewrite it: a column they use
#: gives no labels but is not ignored).
IGNORED_FIELDS_NOTE = "dataset fields ignored"


def ignored_fields_note(ignored: Sequence[str]) -> str | None:
    """The note naming the dataset fields that gave no labels (None when there are none)."""
    if not ignored:
        return None
    shown = ", ".join(repr(f) for f in ignored[:20]) + (", ..." if len(ignored) > 20 else "")
    return (
        f"{IGNORED_FIELDS_NOTE} (not schema fields, or per-category fields while the "
        f"labels come from 'labels'/'annotations'): {shown}"
    )


def _annotator_rows(
    dataset: Dataset, rows: NDArray[np.bool_]
) -> tuple[NDArray[np.float64] | None, NDArray[np.int64] | None]:
    """The scored rows' annotator shares and counts (None, None without annotations)."""
    soft, n_ann = getattr(dataset, "soft", None), getattr(dataset, "n_annotators", None)
    if soft is None or n_ann is None:
        return None, None
    if rows.all():
        return np.asarray(soft, dtype=np.float64), np.asarray(n_ann, dtype=np.int64)
    return np.asarray(soft, dtype=np.float64)[rows], np.asarray(n_ann, dtype=np.int64)[rows]


def _no_score_counts(
    no_score: np.ndarray | None, rows: np.ndarray, y: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per category, over the scored rows: the known labels the system gives no score
    for, and how many of them are positive."""
    if no_score is None:
        return np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
    cells = no_score[rows]
    positives = cells & (np.asarray(y)[rows] == 1)
    return cells.sum(axis=0).astype(np.int64), positives.sum(axis=0).astype(np.int64)


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


def row_count_notes(
    *,
    missing: int,
    null: int,
    null_ids: Sequence[str],
    failed: Sequence[tuple[str, str]],
    n_failed: int,
    duplicate: int,
    unknown: int,
    on_mismatch: str,
) -> list[str]:
    """The report's notes on rows left unscored (no prediction, a null or failed one) and
    prediction rows dropped (duplicate or unknown ids): counted, never scored."""
    notes: list[str] = []
    if missing:
        notes.append(
            f"{missing} dataset rows have no prediction and are not scored "
            f"(on_mismatch={on_mismatch})"
        )
    if null:
        notes.append(
            f"{null} dataset rows have a null prediction (unknown: no scores, labels "
            f"or output) and are not scored; first: {', '.join(map(repr, null_ids))}"
        )
    if n_failed:
        first = "; ".join(f"{i!r}: {e}" for i, e in failed)
        notes.append(
            f"{n_failed} dataset rows come from failed requests (an 'error' field) and "
            f"are not scored; first: {first}"
        )
    if duplicate or unknown:
        notes.append(
            f"dropped {duplicate} duplicate and {unknown} unknown-id "
            f"prediction rows (on_mismatch={on_mismatch})"
        )
    return notes


def report_figures(
    report: MultilabelReport | dict[str, Any],
    tax: Taxonomy,
    threshold: float,
    *,
    no_score: NDArray[np.int64] | None = None,
    no_score_pos: NDArray[np.int64] | None = None,
) -> ReportFigures:
    """The figures every report shows, from a ``multilabel_report`` dict (computed in
    memory, or merged from streamed states out of core): mAP over the categories with a
    known positive, per-category AP / ROC AUC / F1 and counts, and the notes on
    excluded and one-class categories.

    ``no_score`` / ``no_score_pos``: per category, the known labels (and known positives)
    the system gives no score for. The report's unknown cells are the dataset's unknown
    labels plus those; the two are told apart in every output (``unknown``, ``no_score``,
    and why an AP is n/a)."""
    notes: list[str] = []
    known_pos, known_neg, unknown = report["support"], report["n_negative"], report["n_unknown"]
    zeros = np.zeros(tax.k, dtype=np.int64)
    no_score = zeros if no_score is None else np.asarray(no_score, dtype=np.int64)
    no_score_pos = zeros if no_score_pos is None else np.asarray(no_score_pos, dtype=np.int64)
    unknown_label = np.asarray(unknown) - no_score
    included = known_pos > 0
    why_na = [
        None if inc else "no score from the system" if p else "no known positive"
        for inc, p in zip(included, no_score_pos, strict=True)
    ]
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
        no_pos = [c for c, w in zip(tax.ids, why_na, strict=True) if w == "no known positive"]
        unscored = [
            f"{c} ({int(n)} known positives)"
            for c, w, n in zip(tax.ids, why_na, no_score_pos, strict=True)
            if w == "no score from the system"
        ]
        why = [
            *([f"no known positive among the scored rows: {', '.join(no_pos)}"] if no_pos else []),
            *(
                [f"the system gives no score for their known positives: {', '.join(unscored)}"]
                if unscored
                else []
            ),
        ]
        notes.append(
            f"mAP and macro F1 average over {int(included.sum())} of {tax.k} categories; "
            f"excluded ({'; '.join(why)})"
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
    # a category with no scored known label is undefined for want of scores, said above
    one_class = [
        c
        for c, p, q, ns in zip(tax.ids, known_pos, known_neg, no_score, strict=True)
        if (p == 0 or q == 0) and not (p + q == 0 and ns > 0)
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
            "unknown": int(unknown_label[k]),
            "no_score": int(no_score[k]),
            "in_map": bool(included[k]),
            "ap_undefined_reason": why_na[k],
        }
        for k, c in enumerate(tax.ids)
    ]
    return ReportFigures(figures, per_category, excluded, notes)
