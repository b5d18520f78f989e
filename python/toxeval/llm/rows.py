"""The rows of a run file: which items a run asks, and the row written for each answer.

Shared by the live runner (:mod:`toxeval.llm.remote`, :mod:`toxeval.llm.local`) and the
batch-file path (:mod:`toxeval.llm.batch`), so that a row means the same whichever way
its answer came: the dataset's keys, the header line, the plan of units with each item's
request hash, which items are already answered (and skipped), and the row of an answer
or of a failure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toxeval.llm.runfile import (
    RUN_FORMAT,
    RunState,
    RunWriter,
    canonical_json,
    json_scores,
    request_hasher,
)
from toxeval.taxonomy import Taxonomy

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.llm.requests import Answer, RequestSpec, Unit

__all__ = [
    "Key",
    "Planned",
    "answered",
    "count_done",
    "dataset_keys",
    "failed_row",
    "header_line",
    "pending",
    "plan_remote",
    "read_answers",
    "taxonomy_sha256",
    "total_usage",
    "write_answers",
]


def taxonomy_sha256(taxonomy: Taxonomy) -> str:
    """sha256 of a taxonomy's ids, names and definitions (what a prompt may show)."""
    parts = [[c.id, c.name, c.description, list(c.aliases)] for c in taxonomy.categories]
    return hashlib.sha256(canonical_json([taxonomy.name, parts]).encode()).hexdigest()


Key = tuple[str, str, "str | None"]  # (id, text, response)


def dataset_keys(dataset: Dataset) -> list[Key]:
    """(id, text, response) of every dataset row; the response only at response level."""
    responses = dataset.responses if dataset.level == "response" else None
    ids, texts = list(dataset.ids), list(dataset.texts)
    if responses is None:
        return [(i, t, None) for i, t in zip(ids, texts, strict=True)]
    return [(i, t, r) for i, t, r in zip(ids, texts, list(responses), strict=True)]


def header_line(base_url: str, fingerprint: dict[str, Any], detector: str) -> dict[str, Any]:
    from toxeval._core import __version__

    return {
        "toxeval_run": RUN_FORMAT,
        "detector": detector,
        "base_url": base_url,
        "fingerprint": fingerprint,
        "toxeval_version": str(__version__),
    }


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


def _raw_for(body: dict[str, Any], position: int, n_items: int) -> dict[str, Any]:
    """The part of a response body about one item: a moderation answer for several
    inputs keeps only that input's result."""
    results = body.get("results")
    if n_items > 1 and isinstance(results, list) and len(results) == n_items:
        return {**body, "results": [results[position]]}
    return body


def total_usage(bodies: Sequence[dict[str, Any]]) -> dict[str, int] | None:
    total: dict[str, int] = {}
    for b in bodies:
        u = b.get("usage")
        if isinstance(u, dict):
            for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
                v = u.get(k)
                if isinstance(v, int) and not isinstance(v, bool):
                    total[k] = total.get(k, 0) + v
    return total or None


def read_answers(spec: RequestSpec, unit: Unit, bodies: Sequence[dict[str, Any]]) -> list[Answer]:
    """:func:`toxeval.llm.requests.read`, with anything it raises (it should not) as a
    ValueError naming it, and one answer per item checked."""
    from toxeval.llm.requests import read

    try:
        answers = list(read(spec, unit, bodies))
    except Exception as e:
        raise ValueError(f"reading the answer failed: {type(e).__name__}: {e}") from None
    if len(answers) != len(unit.item_ids):
        raise ValueError(
            f"reading the answer failed: {len(answers)} answers for {len(unit.item_ids)} items"
        )
    return answers


def write_answers(
    writer: RunWriter,
    spec: RequestSpec,
    planned: Planned,
    bodies: Sequence[dict[str, Any]],
    status: int | None,
    attempts: int,
    latency: float | None,
    answers: Sequence[Answer],
    *,
    skip: set[str] | frozenset[str] = frozenset(),
) -> list[Answer]:
    """Write one row per item of the unit (but those in ``skip``) from the answers to
    its calls; returns the answers written."""
    unit = planned.unit
    n = len(unit.item_ids)
    usage = total_usage(bodies)
    ids = spec.taxonomy.ids
    out: list[Answer] = []
    for pos, (item_id, a) in enumerate(zip(unit.item_ids, answers, strict=True)):
        if item_id in skip:
            continue
        out.append(a)
        writer.write(
            {
                "id": item_id,
                "request_hash": planned.hashes[item_id],
                "scores": json_scores(a.scores, ids),
                "output": a.text,
                "reasoning": a.reasoning,
                "raw": [_raw_for(b, pos, n) for b in bodies],
                "parse_status": a.status,
                "parse_reason": a.reason,
                "method": a.method,
                "graded": a.graded,
                "status_code": status,
                "attempts": attempts,
                "latency_s": latency,
                "usage": usage if n == 1 else None,
                "error": None,
            }
        )
    return out


def failed_row(message: str, status: int | None, attempts: int) -> dict[str, Any]:
    return {
        "scores": None,
        "output": None,
        "reasoning": None,
        "raw": [],
        "parse_status": None,
        "parse_reason": None,
        "method": None,
        "graded": None,
        "status_code": status,
        "attempts": attempts,
        "latency_s": None,
        "usage": None,
        "error": message,
    }


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
