"""The first stage of a run: what is asked.

:func:`plan_run` loads the dataset, picks its rows (``--limit``, ``--sample``) and, for a
remote detector, builds the request spec; what is already in the run file is skipped by
the stage that sends (:func:`toxeval.llm.rows.pending`, :func:`toxeval.llm.local.run_local`),
which reads the file it appends to. The stages after it: send
(:mod:`toxeval.llm.engine`, :mod:`toxeval.llm.local`, or a Batch API file in
:mod:`toxeval.llm.batch`), read each answer (:mod:`toxeval.llm.requests`) and write its row
(:mod:`toxeval.llm.rows`, :mod:`toxeval.llm.runfile`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from toxeval.llm.options import PredictOptions, check_rows
from toxeval.llm.request_spec import build_request_spec
from toxeval.llm.rows import Key, dataset_keys

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.llm.requests import RequestSpec

__all__ = ["RunPlan", "plan_run", "select_rows"]


@dataclass(frozen=True)
class RunPlan:
    """The rows a run asks: the dataset, the (id, text, response) of each row picked, the
    request spec of a remote detector (None for a local one) and notes for the user."""

    dataset: Dataset
    keys: list[Key]
    spec: RequestSpec | None = None
    notes: list[str] = field(default_factory=list)


def select_rows(
    n: int, *, limit: int | None = None, sample: int | None = None, seed: int | None = None
) -> np.ndarray:
    """Row indices to run: all, the first ``limit``, or ``sample`` rows drawn without
    replacement with ``numpy.random.default_rng(seed or 0)`` (kept in dataset order)."""
    check_rows(limit, sample)
    if limit is not None:
        return np.arange(min(limit, n))
    if sample is not None:
        rng = np.random.default_rng(0 if seed is None else seed)
        return np.sort(rng.choice(n, size=min(sample, n), replace=False))
    return np.arange(n)


def load_run_dataset(dataset: Dataset | str | Path | None, opts: PredictOptions) -> Dataset:
    """``dataset`` itself, or the dataset it names loaded with the options' taxonomy,
    data folder, label rule and annotator minimum."""
    from toxeval.datasets import Dataset, load_dataset

    if isinstance(dataset, Dataset):
        return dataset
    return load_dataset(
        dataset,
        taxonomy=opts.taxonomy,
        data_dir=opts.data_dir,
        rule=opts.rule,
        min_annotators=opts.min_annotators,
    )


def plan_run(dataset: Dataset | str | Path | None, opts: PredictOptions) -> RunPlan:
    """The plan of a run of ``opts`` over ``dataset``."""
    ds = load_run_dataset(dataset, opts)
    keys = dataset_keys(ds)
    rows = select_rows(len(keys), limit=opts.limit, sample=opts.sample, seed=opts.seed)
    notes = [] if opts.sample is None else sample_notes(opts.sample, len(keys))
    keys = [keys[i] for i in rows]
    if not opts.spec.remote:
        return RunPlan(ds, keys, None, notes)
    level: Literal["prompt", "response"] = "response" if ds.level == "response" else "prompt"
    spec = build_request_spec(opts.spec, ds.taxonomy, level, **opts.request_options())
    return RunPlan(ds, keys, spec, notes)


def sample_notes(sample: int, n: int) -> list[str]:
    """What to tell the user about ``sample=`` (``--sample``) on ``n`` rows: a sample of at
    more than the dataset's size is the whole dataset, which they may not expect."""
    if sample <= n:
        return []
    return [
        f"--sample {sample} asks for more rows than the dataset has ({n}): "
        f"all {n} rows are run (a sample is drawn without replacement)"
    ]
