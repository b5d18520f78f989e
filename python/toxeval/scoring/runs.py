"""The report of a run file of ``toxeval predict``, and running a detector spec then
scoring its run file (``toxeval.evaluate(detector=...)`` for anything but the built-in
lexicon).

Scoring calls the runner (:func:`toxeval.llm.predict`), never the reverse: the runner
writes answers to a run file, :mod:`toxeval.predictions.run_file` reads that file as
predictions, and the report is made here as for any dump.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.scoring.result import EvaluationResult, Progress

__all__ = ["evaluate_spec", "score_run"]


def score_run(
    path: str | Path,
    dataset: Dataset,
    *,
    threshold: float = 0.5,
    config: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> EvaluationResult:
    """The full report of the run file ``path`` on ``dataset``."""
    import dataclasses

    from toxeval.predictions.run_file import run_scores
    from toxeval.scoring.figures import score_predictions

    if progress:
        progress("reading the run file")
    rs = run_scores(path, dataset)
    ds = dataset
    # cells the system gives no score for are left out of every figure, and counted
    # apart from the dataset's unknown labels (per category: "no_score")
    preds = dataclasses.replace(
        rs.predictions,
        notes=(*rs.predictions.notes, *rs.notes),
        unknown_cells=rs.unknown_cells if rs.unknown_cells.any() else None,
    )
    methods = rs.info["scoring_method"]
    cfg = {"scoring_method": methods, "run_fingerprint": rs.info["fingerprint"], **(config or {})}
    result = score_predictions(
        preds, ds, threshold=threshold, system=rs.info, config=cfg, progress=progress
    )
    result.cost = rs.cost
    return result


def evaluate_spec(
    dataset: Dataset,
    detector: str,
    run_file: str | Path | None,
    *,
    threshold: float = 0.5,
    config: dict[str, Any] | None = None,
    **options: Any,
) -> EvaluationResult:
    """:func:`predict` ``detector`` over ``dataset`` into ``run_file`` (a temporary file,
    removed afterwards, when None), then the report of the run file."""
    import tempfile

    from toxeval.llm import predict

    for name in ("dry_run", "batch_file"):
        if options.get(name):
            raise ValueError(f"{name}= applies to toxeval.llm.predict, not to evaluate")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(run_file) if run_file is not None else Path(tmp) / "run.jsonl"
        summary = predict(dataset, detector, path, **options)
        cfg = {**(config or {}), "run_file": str(run_file) if run_file is not None else None}
        try:
            result = score_run(path, dataset, threshold=threshold, config=cfg)
        except ValueError as e:
            if run_file is None:  # name the detector, not a temporary file that is gone
                e.args = (str(e).replace(str(path), f"the answers of {detector}"),)
            raise
    result.notes.extend(summary.notes)
    result.notes.append(
        f"run: {summary.written} rows asked now, {summary.skipped} already in the run file, "
        f"{summary.failed} failed, {summary.retries} retries"
    )
    return result
