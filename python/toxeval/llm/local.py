"""Local systems (``lexicon``, ``python:module:attr``, ``onnx:PATH``, ``hf:PATH``): the
send stage of an in-process run. The keys not yet answered
(:func:`toxeval.llm.plan.plan_local_work`) are given to the system in batches, and the
row of each answer (:func:`toxeval.llm.rows.local_row`) is appended to the run file as a
remote one is (same rows, same resume rules), under the base URL ``local``. A
``python:`` detector whose code cannot be identified (no source file, no declared
``__version__``) is never resumed: reusing its rows could mix scores of an older version
of it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from toxeval.llm.detectors import LocalSystem
from toxeval.llm.local_answers import LOCAL_BATCH
from toxeval.llm.plan import LOCAL_BASE_URL, Key, plan_local_work
from toxeval.llm.progress import Progress, RunSummary
from toxeval.llm.rows import header_line, local_row
from toxeval.llm.runfile import RunWriter

if TYPE_CHECKING:
    from toxeval.llm.options import PredictOptions
    from toxeval.taxonomy import Taxonomy

__all__ = ["LOCAL_BASE_URL", "LOCAL_BATCH", "local_system", "run_local"]


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
    work = plan_local_work(system, keys, path)
    todo = work.todo
    summary = RunSummary(path=str(path), items=len(keys), skipped=len(keys) - len(todo))
    ids = system.taxonomy.ids
    header = header_line(LOCAL_BASE_URL, work.fingerprint, system.spec.text)
    with (
        RunWriter(path, header, last_header=work.state.header) as writer,
        Progress(len(keys), summary.skipped, quiet, summary) as bar,
    ):
        summary.repaired_bytes = writer.repaired_bytes
        step = system.chunk_rows
        for start in range(0, len(todo), step):
            chunk = todo[start : start + step]
            texts = [keys[i][2] if keys[i][2] is not None else keys[i][1] for i in chunk]
            t1 = time.monotonic()
            got = system(texts, ids=[keys[i][0] for i in chunk])  # type: ignore[arg-type]
            per = round((time.monotonic() - t1) / max(len(chunk), 1), 6)
            for j, i in enumerate(chunk):
                row, usable = local_row(got, j, keys[i][0], work.hashes[i], ids, per)
                writer.write(row)
                if got.truncated is not None:
                    summary.truncated += got.truncated[j]
                status = got.statuses[j]
                summary.written += 1
                summary.parse_counts[status] = summary.parse_counts.get(status, 0) + 1
                summary.ok += usable
            bar.advance(len(chunk))
    summary.elapsed_s = time.monotonic() - t0
    return summary
