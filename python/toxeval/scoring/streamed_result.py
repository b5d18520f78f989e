"""The :class:`~toxeval.scoring.EvaluationResult` of a scoring that never holds every
scored row (out of core, :mod:`toxeval.outofcore`; on Dask, :mod:`toxeval.dask`): the
figures come from the merged report, the row counts from the engine, and what needs
every row in memory (intervals, the card's recipe) is stated as not computed. Both
engines build their result here, so the two give the same shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from toxeval.scoring.figures import ReportFigures
from toxeval.scoring.result import EvaluationResult

if TYPE_CHECKING:
    from toxeval.metrics import MultilabelReport
    from toxeval.taxonomy import Taxonomy

__all__ = ["streamed_counts", "streamed_result"]


def streamed_counts(
    report: MultilabelReport | dict[str, Any],
    *,
    dataset_rows: int,
    scored: int,
    missing: int,
    null: int,
    failed: int,
    duplicate: int,
    unknown: int,
) -> dict[str, int]:
    """``result.counts`` from the row counts and the merged ``report`` (its known and
    unknown cells, its rows without a known label)."""
    return {
        "dataset_rows": dataset_rows,
        "scored": scored,
        "excluded": dataset_rows - scored,
        "missing_prediction": missing,
        "excluded_by_parse_policy": 0,
        "null_prediction": null,
        "failed_request": failed,
        "duplicate_rows_dropped": duplicate,
        "unknown_ids_dropped": unknown,
        "rows_without_known_labels": int(report["n_rows_without_known_label"]),
        "known_cells": int(np.sum(report["support"]) + np.sum(report["n_negative"])),
        "unknown_cells": int(np.sum(report["n_unknown"])),
    }


def streamed_result(
    summary: ReportFigures,
    *,
    tax: Taxonomy,
    threshold: float,
    on_mismatch: str | None,
    engine: tuple[str, dict[str, Any]],
    card_caveat: str,
    dataset: dict[str, Any],
    system: dict[str, Any],
    counts: dict[str, int],
    notes: list[str],
    binary_scores: bool,
) -> EvaluationResult:
    """The result of a streamed scoring of a Parquet dump: ``engine`` is the config key
    naming the engine (``out_of_core``, ``dask``) and what it ran; ``card_caveat`` says
    why the card's recipe was not computed."""
    config = {
        "threshold": threshold,
        "taxonomy": {"name": tax.name, "version": tax.version, "k": tax.k, "ids": list(tax.ids)},
        "parse_policy": None,
        "on_mismatch": on_mismatch,
        "format": "parquet",
        "mapping": None,
        "rule": None,
        "min_annotators": None,
        engine[0]: engine[1],
    }
    card = {
        "label": "benchmark card's reference recipe (compatibility mode; not standard AP)",
        "threshold": threshold,
        "rows_used": None,
        "rows_skipped_partial_labels": None,
        "map": None,
        "label_ranking_loss": None,
        "per_category_ap": {},
        "caveats": card_caveat,
    }
    return EvaluationResult(
        inputs={"dataset": None, "predictions": None, "taxonomy": None, "mapping": None},
        config=config,
        dataset=dataset,
        system=system,
        counts=counts,
        figures={**summary.figures, "intervals": None},
        per_category=[
            {**r, "ap_ci": None, "ap_ci_undefined": None, "ap_ci_withheld": None}
            for r in summary.per_category
        ],
        excluded_categories=summary.excluded,
        card_recipe=card,
        agreement=None,
        parse=None,
        binary_scores=binary_scores,
        notes=notes,
    )
