"""The first stage of a run: what is asked.

:func:`plan_run` loads the dataset, picks its rows (``--limit``, ``--sample``) and, for a
remote detector, builds the request spec. :func:`plan_remote_work` then reads the run
file and gives the units still to send, each item with its request hash (items already
answered with the same hash are skipped). Shared by the live runner and the batch-file
path (:mod:`toxeval.llm.batch`), so that an item is asked, and hashed, the same whichever
way its answer comes. The stages after it: send (:mod:`toxeval.llm.engine` and
:mod:`toxeval.llm.remote`, :mod:`toxeval.llm.local`, or a Batch API file in
:mod:`toxeval.llm.batch`), read each answer and write its row (:mod:`toxeval.llm.rows`,
:mod:`toxeval.llm.runfile`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from toxeval.llm.options import PredictOptions, check_rows
from toxeval.llm.request_spec import build_request_spec
from toxeval.llm.runfile import RunState, read_run, request_hash, request_hasher

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.llm.detectors import LocalSystem
    from toxeval.llm.requests import RequestSpec, Unit

__all__ = [
    "LOCAL_BASE_URL",
    "Key",
    "LocalWork",
    "Planned",
    "RemoteWork",
    "RunPlan",
    "answered",
    "count_done",
    "dataset_keys",
    "pending",
    "plan_local_work",
    "plan_remote",
    "plan_remote_work",
    "plan_run",
    "run_url",
    "select_rows",
]

Key = tuple[str, str, "str | None"]  # (id, text, response)


def dataset_keys(dataset: Dataset) -> list[Key]:
    """(id, text, response) of every dataset row; the response only at response level."""
    responses = dataset.responses if dataset.level == "response" else None
    ids, texts = list(dataset.ids), list(dataset.texts)
    if responses is None:
        return [(i, t, None) for i, t in zip(ids, texts, strict=True)]
    return [(i, t, r) for i, t, r in zip(ids, texts, list(responses), strict=True)]


def run_url(base_url: str, last_header: Any) -> str:
    """The base URL a run file's header carries and its request hashes are made of:
    ``base_url`` as :func:`toxeval.llm.requests.public_url` writes it (a password or a
    secret query value replaced by ``***``), so the file never holds the secret and
    ``score`` computes the same hashes from the header. A URL without a secret is
    unchanged. A file whose last header holds ``base_url`` itself, secret included
    (written by an older toxeval), keeps being hashed with it: it resumes and scores
    exactly, and with the same fingerprint no header is written again. Run with other
    options, its new header holds that URL too (the hashes are made of it, so rows of
    the file's earlier headers can still be reused)."""
    from toxeval.llm.requests import public_url

    if isinstance(last_header, dict) and last_header.get("base_url") == base_url:
        return base_url
    return public_url(base_url)


def answered(state: RunState, key: Key, h: str) -> bool:
    """True when ``key`` has a row with hash ``h`` and no error (it is not asked again)."""
    rec = state.current(key[0], h)
    return rec is not None and rec.error is None


PLAN_CHUNK = 1024  # items planned at a time: request bodies are built as they are needed


@dataclass(frozen=True)
class Planned:
    """A unit and the request hash of each of its items."""

    unit: Unit
    hashes: dict[str, str]


def plan_remote(spec: RequestSpec, keys: Sequence[Key], base_url: str) -> Iterator[Planned]:
    """The units of ``keys`` in order, planned a chunk at a time so that memory does not
    grow with the dataset (chunks are whole moderation batches, so the grouping is the
    one ``plan`` gives for the whole list)."""
    from toxeval.llm.requests import Item, plan

    hash_item = request_hasher(base_url, spec.fingerprint())
    step = spec.batch_size * max(1, -(-PLAN_CHUNK // spec.batch_size))
    for lo in range(0, len(keys), step):
        part = keys[lo : lo + step]
        items = [Item(id=i, text=t, response=r) for i, t, r in part]
        hashes = {i: hash_item(t, r) for i, t, r in part}
        for unit in plan(spec, items):
            yield Planned(unit, {i: hashes[i] for i in unit.item_ids})


def count_done(keys: Sequence[Key], state: RunState, base_url: str, fp: dict[str, Any]) -> int:
    """How many of ``keys`` already have an answer with their current hash."""
    if not state.by_hash:  # a new run file: nothing to look up
        return 0
    hash_item = request_hasher(base_url, fp)
    return sum(answered(state, k, hash_item(k[1], k[2])) for k in keys)


def pending(planned: Iterator[Planned], state: RunState) -> Iterator[tuple[Planned, set[str]]]:
    """The units with an item not yet answered with its current hash, each with the ids
    of its items that are (a moderation batch is sent whole; those rows are not
    written twice)."""
    for p in planned:
        done = {
            i
            for i in p.unit.item_ids
            if (rec := state.current(i, p.hashes[i])) is not None and rec.error is None
        }
        if len(done) < len(p.unit.item_ids):
            yield p, done


@dataclass
class RemoteWork:
    """What a remote run sends: the run file's state, the base URL and fingerprint its
    hashes are made of, how many items are already answered and the units still to send
    (a lazy iterator, each unit with the ids of its items already answered)."""

    state: RunState
    url: str
    fingerprint: dict[str, Any]
    done: int
    todo: Iterator[tuple[Planned, set[str]]]


def plan_remote_work(
    spec: RequestSpec, keys: Sequence[Key], base_url: str, path: str | Path
) -> RemoteWork:
    """The units of ``keys`` not yet answered in the run file ``path``."""
    state = read_run(path, light=True)
    url = run_url(base_url, state.header)  # no secret unless the file has it
    fp = spec.fingerprint()
    done = count_done(keys, state, url, fp)
    return RemoteWork(state, url, fp, done, pending(plan_remote(spec, keys, url), state))


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


LOCAL_BASE_URL = "local"  # the base URL of an in-process system's rows and hashes


@dataclass(frozen=True)
class LocalWork:
    """What a local run asks: the run file's state, the system's fingerprint, the request
    hash of every key and the positions of the keys not yet answered with it."""

    state: RunState
    fingerprint: dict[str, Any]
    hashes: list[str]
    todo: list[int]


def plan_local_work(system: LocalSystem, keys: Sequence[Key], path: str | Path) -> LocalWork:
    """The keys a local ``system`` has not answered yet in the run file ``path``; a
    ValueError when some are answered but the system's code cannot be identified (its
    rows could be those of an older version of it)."""
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
    return LocalWork(state, fp, hashes, todo)
