"""Running systems over datasets: LLMs behind OpenAI-compatible APIs and local detectors.

:func:`predict` runs a detector spec (:mod:`toxeval.llm.detectors`) over a dataset and
appends every answer to a run file (:mod:`toxeval.llm.runfile`), resuming where an earlier
run of the same settings stopped. ``toxeval.evaluate(detector=...)`` and
``toxeval score RUNFILE`` turn a run file into the report (:mod:`toxeval.scoring.runs`,
reading it as predictions with :mod:`toxeval.predictions.run_file`): scoring calls the
runner, the runner never scores.
What is sent and how answers are read lives in :mod:`toxeval.llm.requests`; how it is sent
(retries, rate limits, concurrency) in :mod:`toxeval.llm.client` and
:mod:`toxeval.llm.engine`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from toxeval.llm.detectors import LocalSystem, parse_detector
from toxeval.llm.request_spec import (
    Scoring,
    build_request_spec,
    changed_from_defaults,
    flags_text,
)

if TYPE_CHECKING:  # the engine (aiohttp) is imported by predict, not by `import toxeval.llm`
    from toxeval.datasets import Dataset, Rule
    from toxeval.llm.engine import RunSummary
    from toxeval.taxonomy import Taxonomy

__all__ = [
    "DEFAULT_BASE_URL",
    "build_request_spec",
    "predict",
    "select_rows",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def checked_base_url(url: str) -> str:
    """``url`` without its trailing slash, or a ValueError when it is not an http(s) URL
    with a host (--base-url)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as e:
        raise ValueError(f"--base-url {url!r} is not a URL: {e}") from None
    if parts.scheme not in ("http", "https") or not host:
        raise ValueError(f"--base-url {url!r}: give an http:// or https:// URL with a host")
    return url.rstrip("/")


def _positive(name: str, value: Any, flag: str, *, integer: bool = False) -> None:
    bad = isinstance(value, bool) or not isinstance(value, (int, float) if not integer else int)
    if bad or not value > 0:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {kind} > 0 ({flag}), got {value!r}")


def select_rows(
    n: int, *, limit: int | None = None, sample: int | None = None, seed: int | None = None
) -> np.ndarray:
    """Row indices to run: all, the first ``limit``, or ``sample`` rows drawn without
    replacement with ``numpy.random.default_rng(seed or 0)`` (kept in dataset order)."""
    if limit is not None and sample is not None:
        raise ValueError("limit= (--limit) and sample= (--sample) cannot be combined: pick one")
    if limit is not None:
        _positive("limit", limit, "--limit", integer=True)
        return np.arange(min(limit, n))
    if sample is not None:
        _positive("sample", sample, "--sample", integer=True)
        rng = np.random.default_rng(0 if seed is None else seed)
        return np.sort(rng.choice(n, size=min(sample, n), replace=False))
    return np.arange(n)


def _timeouts(timeout: float | tuple[float, float]) -> tuple[float, float]:
    pair = timeout if isinstance(timeout, tuple) else (timeout, timeout)
    for v in pair:
        _positive("timeout", v, "--timeout")
    return float(pair[0]), float(pair[1])


def _dataset(
    dataset: Dataset | str | Path | None,
    taxonomy: str | Path | Taxonomy | None,
    data_dir: str | Path | None,
    rule: Rule,
    min_annotators: int,
) -> Dataset:
    from toxeval.datasets import Dataset, load_dataset

    if isinstance(dataset, Dataset):
        return dataset
    return load_dataset(
        dataset, taxonomy=taxonomy, data_dir=data_dir, rule=rule, min_annotators=min_annotators
    )


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
    from toxeval.llm.client import RetryPolicy
    from toxeval.llm.engine import RunOptions, dataset_keys, run_local, run_remote

    det = parse_detector(detector)
    model_values = {
        "mapping": mapping,
        "batch_size": batch_size,
        "batch_tokens": batch_tokens,
        "max_length": max_length,
        "threads": threads,
        "device": device,
        "dtype": dtype,
    }
    if not det.classifier:
        given = changed_from_defaults(predict, model_values)
        if given:
            raise ValueError(
                f"{flags_text(given)} apply to local classifiers (onnx:, hf:), not to {detector!r}"
            )
    _positive("concurrency", concurrency, "--concurrency", integer=True)
    if max_retries < 0 or isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise ValueError(
            f"max_retries must be an integer >= 0 (--max-retries), got {max_retries!r}"
        )
    for name, v, flag in (("rpm", rpm, "--rpm"), ("tpm", tpm, "--tpm")):
        if v is not None:
            _positive(name, v, flag)
    connect_t, read_t = _timeouts(timeout)
    _positive("request_deadline", request_deadline, "--request-deadline")
    ds = _dataset(dataset, taxonomy, data_dir, rule, min_annotators)
    keys = dataset_keys(ds)
    rows = select_rows(len(keys), limit=limit, sample=sample, seed=seed)
    notes = [] if sample is None else _sample_notes(sample, len(keys))
    keys = [keys[i] for i in rows]
    if not det.remote:
        if dry_run or batch_file is not None:
            raise ValueError(f"dry_run and batch_file apply to API detectors, not {detector!r}")
        values = {
            "base_url": base_url,
            "api_key_env": api_key_env,
            "scoring": scoring,
            "api": api,
            "structured": structured,
            "samples": samples,
            "template": template,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "max_completion_tokens": max_completion_tokens,
            "concurrency": concurrency,
            "rpm": rpm,
            "tpm": tpm,
            "timeout": (connect_t, read_t),
            "request_deadline": request_deadline,
            "max_retries": max_retries,
            "retry_base_delay": retry_base_delay,
        }
        if sample is None:  # without --sample the seed would only go to a model
            values["seed"] = seed
        given = changed_from_defaults(predict, values)
        if given:
            raise ValueError(
                f"{flags_text(given)} apply to model servers; {detector!r} runs in this process: "
                "drop them"
            )
        from toxeval.classifiers import ModelOptions

        model_options = ModelOptions(**model_values) if det.classifier else None  # type: ignore[arg-type]
        system = LocalSystem(det, ds.taxonomy, model_options)
        return _noted(run_local(system, keys, run_file, quiet=quiet), notes)
    url = checked_base_url(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
    spec = build_request_spec(
        det,
        ds.taxonomy,
        "response" if ds.level == "response" else "prompt",
        scoring=scoring,
        template=template,
        structured=structured,
        temperature=temperature,
        max_tokens=max_tokens,
        max_completion_tokens=max_completion_tokens,
        seed=seed,
        samples=samples,
        api=api,
    )
    if dry_run:
        from toxeval.llm.batch import dry_run_summary

        return _noted(dry_run_summary(spec, keys, url, str(run_file)), notes)
    if batch_file is not None:
        from toxeval.llm.batch import write_batch_file

        if api != "chat":
            raise ValueError(
                "batch_file (--batch-file) writes chat requests: drop api='completions'"
            )

        chat_options = {
            "scoring": scoring,
            "template": None if template is None else str(template),
            "structured": structured,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "seed": seed,
            "samples": samples,
        }
        if max_completion_tokens is not None:  # sidecars without it read as before
            chat_options["max_completion_tokens"] = max_completion_tokens
        written = write_batch_file(
            spec, keys, url, batch_file, detector=det, dataset=ds, options=chat_options
        )
        return _noted(written, notes)
    options = RunOptions(
        base_url=url,
        api_key=os.environ.get(api_key_env) or None,
        api_key_env=api_key_env,
        concurrency=concurrency,
        rpm=rpm,
        tpm=tpm,
        connect_timeout=connect_t,
        read_timeout=read_t,
        request_deadline=float(request_deadline),
        retry=RetryPolicy(max_retries=max_retries, base_delay=retry_base_delay),
        quiet=quiet,
    )
    return _noted(run_remote(spec, keys, run_file, options, detector=det), notes)


def _sample_notes(sample: int, n: int) -> list[str]:
    """What to tell the user about ``sample=`` (``--sample``) on ``n`` rows: a sample of at
    more than the dataset's size is the whole dataset, which they may not expect."""
    if sample <= n:
        return []
    return [
        f"--sample {sample} asks for more rows than the dataset has ({n}): "
        f"all {n} rows are run (a sample is drawn without replacement)"
    ]


def _noted(summary: RunSummary, notes: list[str]) -> RunSummary:
    summary.notes.extend(notes)
    return summary
