""":func:`score_out_of_core`: a Parquet file or a directory of Parquet shards scored with
bounded memory, into the same :class:`~toxeval.scoring.EvaluationResult` as in-memory
scoring (docs/out-of-core.md).

Two inputs:

- one table holding labels and scores (``dataset`` is None or the same path): its
  batches go straight into the metric states; ids are checked to be distinct through
  hash partitions of their 64-bit hashes (:mod:`toxeval.outofcore.one_table`);
- a dataset and predictions joined by id (:mod:`toxeval.outofcore.join`): a grace hash join. Both sides are written to
  P partitions by a hash of the id (:mod:`toxeval.outofcore.spill`, P chosen so a
  partition fits a quarter of the limit; P = 1 keeps everything in memory), then each
  partition is joined in memory by :func:`toxeval.ids.join_ids` (rows in file order,
  so the first of repeated ids wins, as in memory) and its scored rows go into the
  states. Missing, repeated and unknown ids are counted over all partitions under
  ``on_mismatch`` as in memory; a dataset id given twice is an error.

The metric states take one of two paths (:mod:`toxeval.outofcore.states`): a tree
merge of mergeable states, or range partitions of each label's scores on disk for AP
and ROC AUC; ``result.config["out_of_core"]`` says which ran and what it held.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from toxeval.datasets import DatasetError
from toxeval.file_formats import input_stem
from toxeval.outofcore.join import score_joined
from toxeval.outofcore.memory import MemoryBudget, parse_memory_limit
from toxeval.outofcore.one_table import score_one_table
from toxeval.outofcore.run import ABSENT, RowCounts, RowProgress, Run
from toxeval.outofcore.spill_folder import spill_folder
from toxeval.outofcore.states import RANGES, TREE
from toxeval.predictions import PredictionError
from toxeval.predictions.schema import MISMATCH_POLICIES, OnMismatch, check_choice
from toxeval.scoring.figures import report_figures, row_count_notes
from toxeval.scoring.result import EvaluationResult, Progress
from toxeval.scoring.streamed_result import streamed_counts, streamed_result
from toxeval.shards import ShardSet, discover_shards
from toxeval.taxonomy import Taxonomy, load_taxonomy

__all__ = ["RowProgress", "score_out_of_core"]


def score_out_of_core(
    predictions: str | Path,
    dataset: str | Path | None = None,
    *,
    taxonomy: str | Path | Taxonomy | None = None,
    threshold: float = 0.5,
    on_mismatch: OnMismatch = "error",
    memory_limit: str | int | None = None,
    spill_dir: str | Path | None = None,
    progress: Progress | None = None,
    rows_progress: RowProgress | None = None,
    states_path: str | None = None,
) -> EvaluationResult:
    """Score a Parquet file or directory of shards with memory bounded by
    ``memory_limit`` (``"2GB"``, ``"512MiB"``, bytes; None: 2 GiB or half the
    available memory). ``dataset``: a Parquet file or directory of the labels, joined
    by ``id``; None or the same path: the one table holds labels and scores. Spill
    files go to a temporary folder in ``spill_dir`` (default: the system's temporary
    folder), removed at the end. ``states_path`` (``"tree merge"`` / ``"range
    partitions"``) overrides the automatic choice (tests). Intervals are not computed
    out of core."""
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    check_choice("on_mismatch", on_mismatch, MISMATCH_POLICIES, "--on-mismatch")
    if states_path not in (None, TREE, RANGES):
        raise ValueError(f"states_path must be {TREE!r} or {RANGES!r}, got {states_path!r}")
    limit = parse_memory_limit(memory_limit)
    tax = load_taxonomy(taxonomy if taxonomy is not None else "toxeval-15")
    started = time.perf_counter()
    combined = dataset is None or Path(dataset).resolve() == Path(predictions).resolve()
    if combined and on_mismatch != "error":
        raise ValueError(
            f"on_mismatch={on_mismatch!r} does not apply to one table holding labels and "
            "scores: nothing is joined, and an id given twice is an error"
        )
    step = progress
    if step:
        step("listing shards")
    for what, given in (("predictions", predictions), ("dataset", dataset)):
        if given is not None and not Path(given).exists():
            err = PredictionError if what == "predictions" else DatasetError
            raise err(
                f"{given}: no such file or directory; out-of-core scoring reads the {what} "
                "from a Parquet file or a directory of Parquet shards"
            )
    pred_shards = discover_shards(predictions)
    ds_shards = None if combined else discover_shards(dataset)  # type: ignore[arg-type]
    with spill_folder(spill_dir) as tmp:
        run = Run(
            taxonomy=tax,
            threshold=threshold,
            on_mismatch=on_mismatch,
            budget=MemoryBudget(limit),
            folder=Path(tmp),
            progress=progress,
            rows_progress=rows_progress,
            force_path=states_path,
        )
        if ds_shards is None:
            report, info, counts, notes = score_one_table(run, pred_shards)
        else:
            report, info, counts, notes = score_joined(run, ds_shards, pred_shards)
    info["seconds"] = round(time.perf_counter() - started, 3)
    info["memory_limit_bytes"] = limit
    return build_result(
        run, report, info, counts, notes, pred_shards, ds_shards, str(predictions), dataset
    )


def build_result(
    run: Run,
    report: dict[str, Any],
    info: dict[str, Any],
    c: RowCounts,
    notes: list[str],
    pred_shards: ShardSet,
    ds_shards: ShardSet | None,
    predictions: str,
    dataset: Any,
) -> EvaluationResult:
    tax = run.taxonomy
    if c.n_scored == 0:
        said = [
            f"{n} {what}"
            for n, what in ((c.n_null, "null predictions"), (c.n_failed, "failed requests"))
            if n
        ]
        extra = f" ({', '.join(said)})" if said else ""
        raise PredictionError(f"{predictions}: no dataset row has a usable prediction{extra}")
    summary = report_figures(report, tax, run.threshold)
    all_notes = list(notes)
    all_notes.extend(
        row_count_notes(
            missing=c.n_missing,
            null=c.n_null,
            null_ids=c.null_ids,
            failed=c.failed,
            n_failed=c.n_failed,
            duplicate=c.n_duplicate,
            unknown=c.n_unknown,
            on_mismatch=run.on_mismatch,
        )
    )
    if c.n_out_of_range:
        all_notes.append(
            f"{c.n_out_of_range} scores lie outside [0, 1] (logits?); ranking figures use "
            "them as they are, thresholded figures compare them with the threshold"
        )
    all_notes.extend(summary.notes)
    if c.binary:
        all_notes.append(
            "scores are binary (0/1): ties are heavy, so AP, ROC AUC and the ranking figures "
            "describe a single operating point; graded scores rank better"
        )
    n_no_known = int(report["n_rows_without_known_label"])
    if n_no_known:
        all_notes.append(
            f"{n_no_known} scored rows have no known label: they are left out of the "
            "per-row figures (ranking loss, LRAP, coverage error, one-error)"
        )
    all_notes.append(ABSENT)
    counts = streamed_counts(
        report,
        dataset_rows=c.n_dataset,
        scored=c.n_scored,
        missing=c.n_missing,
        null=c.n_null,
        failed=c.n_failed,
        duplicate=c.n_duplicate,
        unknown=c.n_unknown,
    )
    info["shards"] = {
        "predictions": len(pred_shards.shards),
        "dataset": None if ds_shards is None else len(ds_shards.shards),
    }
    info["intervals"] = "not computed out of core"
    info["absent"] = ["scored_rows.parquet", "report.html", "plots", "card_recipe"]
    ds_source = str(dataset) if ds_shards is not None else predictions
    system = {
        "kind": "predictions",
        "source": predictions,
        "format": "parquet",
        "predictions": c.kind,
        "rows_read": c.n_read,
        "shards": len(pred_shards.shards),
    }
    return streamed_result(
        summary,
        tax=tax,
        threshold=run.threshold,
        on_mismatch=run.on_mismatch if ds_shards is not None else None,
        engine=("out_of_core", info),
        card_caveat="not computed out of core: the card's recipe walks every row in "
        "dataset order in memory",
        dataset={
            "name": input_stem(ds_source),  # as the in-memory reader names it
            "level": "prompt",
            "source": ds_source,
            "sha256": None,
            "rows": c.n_dataset,
        },
        system=system,
        counts=counts,
        notes=all_notes,
        binary_scores=c.binary,
    )
