"""The scoring entry points: :func:`score` (predictions in any accepted form: a dump path,
an array, a DataFrame or Arrow table, raw model outputs) and :func:`evaluate` (a
dataset by name or path, scored with a built-in detector, a prediction dump, an LLM run
file or a live model). Both load and check their inputs, then call
:func:`~toxeval.scoring.figures.score_predictions`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from toxeval.predictions import (
    Format,
    OnMismatch,
    ParsePolicy,
    Predictions,
    is_frame,
    predictions_from_array,
    predictions_from_frame,
    predictions_from_texts,
    read_predictions,
)
from toxeval.scoring.decisions import (
    DecisionOptions,
    add_decisions,
    check_dataset,
    check_prices_model,
    decision_options,
)
from toxeval.scoring.figures import score_predictions
from toxeval.scoring.intervals import DEFAULT_RESAMPLES, add_intervals, check_options
from toxeval.scoring.prediction_inputs import (
    mapping_name,
    mapping_record,
    note_unused_by_dump,
    output_list,
    unmasked_scores,
)
from toxeval.scoring.result import EvaluationResult, Progress, toxeval_version
from toxeval.taxonomy import LabelMapping, Taxonomy, load_taxonomy

if TYPE_CHECKING:
    from toxeval.datasets import Dataset, Rule
    from toxeval.detectors import Detector


#: Called with (rows done, rows in the step) as out-of-core scoring streams.
RowProgress = Callable[[int, int], None]


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
    bootstrap: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = 0,
    confidence_level: float = 0.95,
    memory_limit: str | int | None = None,
    spill_dir: str | Path | None = None,
    rows_progress: RowProgress | None = None,
    slice_by: Sequence[str] | str | None = None,
    operating_point: str | None = None,
    thresholds_from: str | Path | Mapping[str, float | None] | None = None,
    prices: str | Path | None = None,
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

    ``bootstrap`` resamples of the scored rows (seeded by ``bootstrap_seed``) give
    ``confidence_level`` percentile intervals of mAP, label ranking loss and each
    category's AP (``figures["intervals"]``, ``per_category[i]["ap_ci"]``; see
    :func:`toxeval.scoring.intervals.add_intervals`); ``bootstrap=0`` computes none.

    Out of core (docs/out-of-core.md): with ``memory_limit`` (``"2GB"``, bytes), or when
    ``predictions`` is a directory of Parquet shards, or a Parquet file over the
    default limit with a Parquet ``dataset``, the rows stream through mergeable states
    with memory bounded by the limit (spill files in ``spill_dir``).
    ``dataset`` is then a Parquet file or directory joined by id, or None / the same
    path when the one table holds labels and scores. The result has no scored rows and
    no intervals (a note says so); ``rows_progress(done, total)`` follows the rows.

    ``slice_by``, ``operating_point``, ``thresholds_from`` and ``prices`` add what the
    command line's ``--slice-by``, ``--operating-point``, ``--thresholds-from`` and
    ``--prices`` add (``result.slices``, ``result.operating_points``,
    ``result.cost["prices"]``; see :func:`toxeval.scoring.decisions.decision_options`),
    in memory only.
    """
    n_resamples = check_options(bootstrap, bootstrap_seed, confidence_level)
    decisions = decision_options(slice_by, operating_point, thresholds_from, prices)
    from toxeval.outofcore.choice import out_of_core_reason

    reason = out_of_core_reason(predictions, dataset, memory_limit)
    if reason is not None:
        if decisions:
            raise ValueError(
                "slice_by, operating_point, thresholds_from and prices need the scored rows "
                f"in memory; out-of-core scoring ({reason}) keeps none"
            )
        return _score_out_of_core(
            predictions,
            dataset,
            reason,
            taxonomy=taxonomy,
            threshold=threshold,
            on_mismatch=on_mismatch,
            memory_limit=memory_limit,
            spill_dir=spill_dir,
            progress=progress,
            rows_progress=rows_progress,
            n_resamples=n_resamples,
            unused={
                "parse_policy": (parse_policy, "exclude"),
                "format": (format, "auto"),
                "mapping": (mapping, None),
                "data_dir": (data_dir, None),
                "rule": (rule, "majority"),
                "min_annotators": (min_annotators, 1),
            },
        )
    if spill_dir is not None:
        raise ValueError("spill_dir applies to out-of-core scoring only (see memory_limit)")
    result, ds = _score(
        predictions,
        dataset,
        taxonomy=taxonomy,
        threshold=threshold,
        parse_policy=parse_policy,
        on_mismatch=on_mismatch,
        format=format,
        mapping=mapping,
        data_dir=data_dir,
        rule=rule,
        min_annotators=min_annotators,
        progress=progress,
        decisions=decisions,
    )
    result = _with_intervals(result, n_resamples, bootstrap_seed, confidence_level, progress)
    return _with_decisions(result, ds, decisions, n_resamples, bootstrap_seed, confidence_level)


def _score_out_of_core(
    predictions: Any,
    dataset: Any,
    reason: str,
    *,
    unused: dict[str, tuple[object, object]],
    n_resamples: int,
    **options: Any,
) -> EvaluationResult:
    """:func:`toxeval.outofcore.score_out_of_core`, with the options that do not apply
    out of core refused, and the note on intervals."""
    from toxeval.outofcore import score_out_of_core
    from toxeval.scoring.intervals import NOTE_PREFIX

    _reject_unused(unused, f"out-of-core scoring ({reason})")
    if not isinstance(predictions, (str, Path)):
        raise TypeError(
            f"out-of-core scoring ({reason}) reads a Parquet file or directory of shards; "
            f"got {type(predictions).__name__}"
        )
    if dataset is not None and not isinstance(dataset, (str, Path)):
        raise TypeError(
            f"out-of-core scoring ({reason}) reads the dataset from a Parquet file or "
            f"directory (or none: the predictions hold the labels); got {type(dataset).__name__}"
        )
    result = score_out_of_core(predictions, dataset, **options)
    result.config["out_of_core"]["reason"] = reason
    if n_resamples:
        result.notes.append(
            f"{NOTE_PREFIX}no intervals out of core ({result.counts['scored']} scored rows): "
            "the report's bootstrap resamples the scored rows in memory; a category's "
            "support (known positives) says how far its AP can be trusted"
        )
    return result


def _with_intervals(
    result: EvaluationResult,
    n_resamples: int,
    seed: int,
    confidence_level: float,
    progress: Progress | None,
) -> EvaluationResult:
    if progress and n_resamples:
        progress("bootstrap intervals")
    return add_intervals(result, n_resamples, seed=seed, confidence_level=confidence_level)


def _with_decisions(
    result: EvaluationResult,
    ds: Dataset,
    decisions: DecisionOptions,
    n_resamples: int,
    seed: int,
    confidence_level: float,
) -> EvaluationResult:
    if not decisions:
        return result
    return add_decisions(
        result, ds, decisions, n_resamples=n_resamples, seed=seed, confidence_level=confidence_level
    )


def _score(
    predictions: Any,
    dataset: Dataset | str | Path | None,
    *,
    taxonomy: str | Path | Taxonomy | None,
    threshold: float,
    parse_policy: ParsePolicy,
    on_mismatch: OnMismatch,
    format: Format,
    mapping: str | Path | LabelMapping | None,
    data_dir: str | Path | None,
    rule: Rule,
    min_annotators: int,
    progress: Progress | None,
    decisions: DecisionOptions,
) -> tuple[EvaluationResult, Dataset]:
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
    check_dataset(decisions, ds)
    loaded = dataset is None or isinstance(dataset, (str, Path))
    if isinstance(predictions, Predictions):
        preds = predictions
    elif isinstance(predictions, (str, Path)):
        from toxeval.llm.runfile import is_run_file

        if is_run_file(predictions):  # toxeval predict's run file: read via its header
            from toxeval.scoring.runs import score_run

            _reject_unused(parsing | {"format": (format, "auto")}, "a run file")
            return score_run(predictions, ds, threshold=threshold, progress=progress), ds
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
        preds = note_unused_by_dump(preds, parse_policy, mapping)
    elif isinstance(predictions, np.ndarray):
        preds = predictions_from_array(unmasked_scores(predictions), ds)
    elif is_frame(predictions):
        preds = predictions_from_frame(
            predictions, ds, source=type(predictions).__name__, on_mismatch=on_mismatch
        )
    else:
        texts = output_list(predictions)
        if progress:
            progress("parsing outputs")
        preds = predictions_from_texts(texts, ds, parse_policy=parse_policy, mapping=mapping)
    # What was applied (None: not applicable, or not known for a Predictions given).
    config = {
        "parse_policy": preds.parse_policy if preds.kind == "text" else None,
        "on_mismatch": preds.on_mismatch,
        "format": preds.format,
        "mapping": mapping_name(mapping) if preds.kind != "scores" else None,
        "rule": rule if loaded else None,
        "min_annotators": min_annotators if loaded else None,
    }
    result = score_predictions(preds, ds, threshold=threshold, config=config, progress=progress)
    if config["mapping"] is not None:
        result.inputs["mapping"] = mapping_record(mapping)
    return result, ds


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
    bootstrap: int = DEFAULT_RESAMPLES,
    bootstrap_seed: int = 0,
    confidence_level: float = 0.95,
    slice_by: Sequence[str] | str | None = None,
    operating_point: str | None = None,
    thresholds_from: str | Path | Mapping[str, float | None] | None = None,
    prices: str | Path | None = None,
    **predict_options: Any,
) -> EvaluationResult:
    """Run a detector over a dataset and score it (default: the lexicon baseline on the
    embedded demo set, offline). Response-level datasets are scored on the responses.

    ``detector``: a detector spec (``lexicon``, ``openai:MODEL``,
    ``openai-moderation[:MODEL]``, ``llama-guard:MODEL``, ``policy-guard:MODEL``,
    ``python:module:attr``, ``onnx:DIR``, ``hf:DIR``: see
    :func:`toxeval.llm.predict`) or any object with ``predict_scores(texts) -> (N, K)
    array`` and a ``taxonomy`` whose ids are the dataset's (the
    ``toxeval.detectors.Detector`` protocol). A spec other than ``lexicon``, or a
    ``run_file``, runs through :func:`toxeval.llm.predict` (``predict_options`` are its
    keyword arguments, e.g. ``base_url=``) into ``run_file`` (a temporary file when None),
    then scores the run file. ``bootstrap``, ``bootstrap_seed`` and
    ``confidence_level``: the intervals, as for :func:`score` (``seed`` among
    ``predict_options`` is the model's sampling seed, not the bootstrap's). ``slice_by``,
    ``operating_point``, ``thresholds_from`` and ``prices``: as for :func:`score`, read
    and checked before the detector runs."""
    n_resamples = check_options(bootstrap, bootstrap_seed, confidence_level)
    decisions = decision_options(slice_by, operating_point, thresholds_from, prices)
    runs = isinstance(detector, str) and (
        run_file is not None or bool(predict_options) or detector.strip().lower() != "lexicon"
    )  # as _evaluate chooses: through toxeval.llm.predict into a run file
    check_prices_model(decisions, detector, runs=runs)
    result, ds = _evaluate(
        dataset,
        detector,
        taxonomy=taxonomy,
        threshold=threshold,
        data_dir=data_dir,
        rule=rule,
        min_annotators=min_annotators,
        progress=progress,
        run_file=run_file,
        decisions=decisions,
        **predict_options,
    )
    result = _with_intervals(result, n_resamples, bootstrap_seed, confidence_level, progress)
    return _with_decisions(result, ds, decisions, n_resamples, bootstrap_seed, confidence_level)


def _evaluate(
    dataset: Dataset | str | Path | None,
    detector: str | Detector,
    *,
    taxonomy: str | Path | Taxonomy | None,
    threshold: float,
    data_dir: str | Path | None,
    rule: Rule,
    min_annotators: int,
    progress: Progress | None,
    run_file: str | Path | None,
    decisions: DecisionOptions,
    **predict_options: Any,
) -> tuple[EvaluationResult, Dataset]:
    from toxeval.detectors import get_detector

    ds = _load(dataset, taxonomy, data_dir, rule, min_annotators, progress)
    check_dataset(decisions, ds)
    loaded = dataset is None or isinstance(dataset, (str, Path))
    if isinstance(detector, str) and (
        run_file is not None or predict_options or detector.strip().lower() != "lexicon"
    ):
        from toxeval.scoring.runs import evaluate_spec

        config = {
            "detector": detector,
            "rule": rule if loaded else None,
            "min_annotators": min_annotators if loaded else None,
        }
        spec = evaluate_spec(
            ds, detector, run_file, threshold=threshold, config=config, **predict_options
        )
        return spec, ds
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
        "detector_version": str(getattr(det, "version", toxeval_version())),
        "input": "responses" if texts is ds.responses else "texts",
    }
    config = {
        "detector": asked,
        "rule": rule if loaded else None,
        "min_annotators": min_annotators if loaded else None,
    }
    result = score_predictions(
        preds, ds, threshold=threshold, system=system, config=config, progress=progress
    )
    return result, ds
