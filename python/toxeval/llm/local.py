"""Local systems (``lexicon``, ``python:module:attr``, ``onnx:PATH``, ``hf:PATH``): called
on batches of texts in this
process, each answer appended to the run file as a remote one is (same rows, same resume
rules), under the base URL ``local``. A ``python:`` detector whose code cannot be
identified (no source file, no declared ``__version__``) is never resumed: reusing its
rows could mix scores of an older version of it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from toxeval.llm.detectors import LocalSystem
from toxeval.llm.local_answers import LOCAL_BATCH
from toxeval.llm.plan import Key, answered
from toxeval.llm.progress import Progress, RunSummary
from toxeval.llm.rows import header_line
from toxeval.llm.runfile import RunWriter, json_scores, read_run, request_hash

if TYPE_CHECKING:
    from toxeval.llm.options import PredictOptions
    from toxeval.taxonomy import Taxonomy

__all__ = ["LOCAL_BASE_URL", "LOCAL_BATCH", "local_system", "run_local"]

LOCAL_BASE_URL = "local"


def local_system(opts: PredictOptions, taxonomy: Taxonomy) -> LocalSystem:
    """The in-process system of a local detector spec over ``taxonomy`` (a classifier
    with the options' model settings)."""
    model_options = None
    if opts.spec.classifier:
        from toxeval.classifiers import ModelOptions

        model_options = ModelOptions(**opts.model_options())
    return LocalSystem(opts.spec, taxonomy, model_options)


def run_local(
    system: LocalSystem,
    keys: Sequence[Key],
    path: str | Path,
    *,
    quiet: bool = True,
) -> RunSummary:
    """Run a local system over ``keys`` and append its answers to the run file ``path``."""
    t0 = time.monotonic()
    fp = system.fingerprint()
    state = read_run(path)
    hashes = [request_hash(LOCAL_BASE_URL, fp, t, r) for _, t, r in keys]
    todo = [
        i for i, (k, h) in enumerate(zip(keys, hashes, strict=True)) if not answered(state, k, h)
    ]
    if len(todo) < len(keys) and not system.versioned:
        raise ValueError(
            f"{path} already holds {len(keys) - len(todo)} rows of {system.spec.text}, but "
            "whether its code changed since cannot be told (a module that defines it has "
            "no file); declare __version__ on it or its module (change it with the code) "
            "so a rerun resumes, or use a new run file"
        )
    summary = RunSummary(path=str(path), items=len(keys), skipped=len(keys) - len(todo))
    ids = system.taxonomy.ids
    header = header_line(LOCAL_BASE_URL, fp, system.spec.text)
    with (
        RunWriter(path, header, last_header=state.header) as writer,
        Progress(len(keys), summary.skipped, quiet, summary) as bar,
    ):
        summary.repaired_bytes = writer.repaired_bytes
        step = system.chunk_rows
        for start in range(0, len(todo), step):
            chunk = todo[start : start + step]
            texts = [keys[i][2] if keys[i][2] is not None else keys[i][1] for i in chunk]
            t1 = time.monotonic()
            got = system(texts, ids=[keys[i][0] for i in chunk])  # type: ignore[arg-type]
            per = (time.monotonic() - t1) / max(len(chunk), 1)
            known = slice(None) if got.known is None else got.known
            for j, i in enumerate(chunk):
                row_scores = got.scores[j]
                status = got.statuses[j]
                # a NaN outside the columns the system scores, or in a category a partial
                # answer gave no value for, is an unknown cell (written as null); the
                # categories it gave a value for are kept
                usable = (
                    status != "unparseable"
                    and bool(np.isfinite(row_scores).any())
                    and (got.known is None or bool(np.isfinite(row_scores[known]).all()))
                )
                row: dict[str, Any] = {
                    "id": keys[i][0],
                    "request_hash": hashes[i],
                    "scores": json_scores(row_scores, ids) if usable else None,
                    "output": got.outputs[j],
                    "reasoning": None,
                    "raw": [],
                    "parse_status": status,
                    "parse_reason": got.reasons[j],
                    "method": got.method,
                    "graded": got.graded[j],
                    "status_code": None,
                    "attempts": 1,
                    "latency_s": round(per, 6),
                    "usage": None,
                    "error": None,
                }
                if got.truncated is not None:
                    row["truncated"] = got.truncated[j]
                    summary.truncated += got.truncated[j]
                writer.write(row)
                summary.written += 1
                summary.parse_counts[status] = summary.parse_counts.get(status, 0) + 1
                summary.ok += usable
            bar.advance(len(chunk))
    summary.elapsed_s = time.monotonic() - t0
    return summary
