"""Running systems over datasets: LLMs behind OpenAI-compatible APIs and local detectors.

:func:`predict` runs a detector spec (:mod:`toxeval.llm.detectors`) over a dataset and
appends every answer to a run file (:mod:`toxeval.llm.runfile`), resuming where an earlier
run of the same settings stopped. ``toxeval.evaluate(detector=...)`` and
``toxeval score RUNFILE`` turn a run file into the report (:mod:`toxeval.scoring.runs`,
reading it as predictions with :mod:`toxeval.predictions.run_file`): scoring calls the
runner, the runner never scores.

:func:`predict` runs as stages, each with one input and one output, over one
:class:`~toxeval.llm.options.PredictOptions` (its keywords, checked once): plan the rows
to ask (:mod:`toxeval.llm.plan`: dataset, rows, request spec, what the run file already
answers) → send them (:mod:`toxeval.llm.engine` and :mod:`toxeval.llm.remote` through
:mod:`toxeval.llm.client`; :mod:`toxeval.llm.local` in this process; or a Batch API file,
:mod:`toxeval.llm.batch`) → read each answer into scores (:mod:`toxeval.llm.rows` over
:mod:`toxeval.llm.requests`) → write its row (:mod:`toxeval.llm.rows`,
:mod:`toxeval.llm.runfile`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from toxeval.llm.options import DEFAULT_BASE_URL, predict_options
from toxeval.llm.plan import select_rows
from toxeval.llm.request_spec import Scoring, build_request_spec

if TYPE_CHECKING:  # the engine (aiohttp) is imported by predict, not by `import toxeval.llm`
    from toxeval.datasets import Dataset, Rule
    from toxeval.llm.engine import RunSummary
    from toxeval.llm.options import PredictOptions
    from toxeval.llm.plan import RunPlan
    from toxeval.taxonomy import Taxonomy

__all__ = [
    "DEFAULT_BASE_URL",
    "build_request_spec",
    "predict",
    "select_rows",
]


def predict(
    dataset: Dataset | str | Path | None = None,
    detector: str = "lexicon",
    run_file: str | Path = "run.jsonl",
    *,
    taxonomy: str | Path | Taxonomy | None = None,
    data_dir: str | Path | None = None,
    rule: Rule = "majority",
    min_annotators: int = 1,
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    scoring: Scoring = "json",
    api: Literal["chat", "completions"] = "chat",
    structured: bool = False,
    samples: int = 1,
    template: str | Path | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    max_completion_tokens: int | None = None,
    seed: int | None = None,
    concurrency: int = 32,
    rpm: float | None = None,
    tpm: float | None = None,
    timeout: float | tuple[float, float] = (10.0, 120.0),
    request_deadline: float = 600.0,
    max_retries: int = 6,
    retry_base_delay: float = 0.5,
    limit: int | None = None,
    sample: int | None = None,
    dry_run: bool = False,
    batch_file: str | Path | None = None,
    quiet: bool = True,
    mapping: str | Path | None = None,
    batch_size: int = 32,
    batch_tokens: int | None = None,
    max_length: int | None = None,
    threads: int | None = None,
    device: Literal["auto", "cpu", "cuda"] = "auto",
    dtype: Literal["float32", "float16", "bfloat16"] = "float32",
) -> RunSummary:
    """Run ``detector`` over ``dataset`` and append every answer to ``run_file``.

    Rerunning with the same arguments resumes: rows already answered with the same
    request hash are not sent again; failed rows are retried. ``dry_run`` sends nothing
    and returns the number of requests and estimated prompt tokens; ``batch_file``
    writes OpenAI Batch API requests instead of sending them (:mod:`toxeval.llm.batch`).
    The API key is read from the environment variable ``api_key_env`` only (a server
    that needs no key works without it). ``mapping``, ``batch_size``, ``batch_tokens``,
    ``max_length``,
    ``threads``, ``device`` and ``dtype`` are the options of a local classifier (``onnx:PATH``,
    ``hf:PATH``; :class:`toxeval.classifiers.ModelOptions`). See docs/python-api.md for
    every option.
    """
    # every keyword but the dataset, taken before any other local name exists (a test
    # keeps PredictOptions' fields and defaults those of this signature)
    keywords = {name: value for name, value in locals().items() if name != "dataset"}
    from toxeval.llm.plan import plan_run

    opts = predict_options(**keywords)  # the options, checked once
    plan = plan_run(dataset, opts)  # stage 1: the rows to ask
    summary = _send(plan, opts)  # stages 2-4: send, read each answer, write its row
    summary.notes.extend(plan.notes)
    return summary


def _send(plan: RunPlan, opts: PredictOptions) -> RunSummary:
    """The run of ``plan``: in this process, as a dry run, as a Batch API file or through
    the engine."""
    if plan.spec is None:
        from toxeval.llm.local import local_system, run_local

        system = local_system(opts, plan.dataset.taxonomy)
        return run_local(system, plan.keys, opts.run_file, quiet=opts.quiet)
    if opts.dry_run:
        from toxeval.llm.batch import dry_run_summary

        return dry_run_summary(plan.spec, plan.keys, opts.url, str(opts.run_file))
    if opts.batch_file is not None:
        from toxeval.llm.batch import write_batch_file

        if opts.api != "chat":
            raise ValueError(
                "batch_file (--batch-file) writes chat requests: drop api='completions'"
            )
        return write_batch_file(
            plan.spec,
            plan.keys,
            opts.url,
            opts.batch_file,
            detector=opts.spec,
            dataset=plan.dataset,
            options=opts.chat_options(),
        )
    from toxeval.llm.engine import run_remote, send_options

    return run_remote(plan.spec, plan.keys, opts.run_file, send_options(opts), detector=opts.spec)
