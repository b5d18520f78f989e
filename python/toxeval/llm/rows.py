"""The last stages of a run: an answer read, and the row written for it.

:func:`read_answers` reads the bodies of a unit's calls into one answer per item
(:func:`toxeval.llm.requests.read`); :func:`write_answers` appends the row of each to the
run file, :func:`failed_row` is the row of a request that failed. Shared by the live
runner (:mod:`toxeval.llm.remote`, :mod:`toxeval.llm.local`) and the batch-file path
(:mod:`toxeval.llm.batch`), so that a row means the same whichever way its answer came;
what is asked, and each item's request hash, is planned before (:mod:`toxeval.llm.plan`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from toxeval.llm.runfile import RUN_FORMAT, RunWriter, canonical_json, json_scores
from toxeval.taxonomy import Taxonomy

if TYPE_CHECKING:
    from toxeval.llm.local_answers import LocalAnswers
    from toxeval.llm.plan import Planned
    from toxeval.llm.requests import Answer, RequestSpec, Unit

__all__ = [
    "UnitReplies",
    "failed_row",
    "header_line",
    "local_row",
    "read_answers",
    "taxonomy_sha256",
    "total_usage",
    "write_answers",
]


def taxonomy_sha256(taxonomy: Taxonomy) -> str:
    """sha256 of a taxonomy's ids, names and definitions (what a prompt may show)."""
    parts = [[c.id, c.name, c.description, list(c.aliases)] for c in taxonomy.categories]
    return hashlib.sha256(canonical_json([taxonomy.name, parts]).encode()).hexdigest()


def header_line(base_url: str, fingerprint: dict[str, Any], detector: str) -> dict[str, Any]:
    from toxeval._core import __version__

    return {
        "toxeval_run": RUN_FORMAT,
        "detector": detector,
        "base_url": base_url,
        "fingerprint": fingerprint,
        "toxeval_version": str(__version__),
    }


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


@dataclass
class UnitReplies:
    """What the calls of one unit got, the input of the read and write stages: the
    answer bodies (the key redacted), the last status, the attempts (HTTP requests sent)
    and the calls they were for (``attempts - calls`` are retries), the latency of the
    whole unit and the time to the first call's answer head (``ttfb``; None: not
    measured)."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    status: int | None = None
    attempts: int = 0
    latency: float | None = None
    ttfb: float | None = None
    calls: int | None = None


def write_answers(
    writer: RunWriter,
    spec: RequestSpec,
    planned: Planned,
    reply: UnitReplies,
    answers: Sequence[Answer],
    *,
    skip: set[str] | frozenset[str] = frozenset(),
) -> list[Answer]:
    """Write one row per item of the unit (but those in ``skip``) from the answers to
    its calls; returns the answers written."""
    bodies, status, attempts, latency = reply.bodies, reply.status, reply.attempts, reply.latency
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
                "retries": None if reply.calls is None else attempts - reply.calls,
                "latency_s": latency,
                "ttfb_s": reply.ttfb,
                "usage": usage if n == 1 else None,
                "error": None,
                # the unit's attempts and retries are repeated on each of its n rows
                **({"unit_items": n} if n > 1 else {}),
            }
        )
    return out


def failed_row(
    message: str, status: int | None, attempts: int, calls: int | None = None
) -> dict[str, Any]:
    """The row of a unit whose request failed (``calls``: the calls it sent, the failed
    one included, so ``attempts - calls`` are its retries; None: not known)."""
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
        "retries": None if calls is None else attempts - calls,
        "latency_s": None,
        "usage": None,
        "error": message,
    }


def local_row(
    got: LocalAnswers,
    j: int,
    item_id: str,
    request_hash: str,
    ids: tuple[str, ...],
    latency: float,
) -> tuple[dict[str, Any], bool]:
    """The row of the ``j``-th answer of a local system's batch, and whether it scores
    the item."""
    row_scores = got.scores[j]
    status = got.statuses[j]
    known = slice(None) if got.known is None else got.known
    # a NaN outside the columns the system scores, or in a category a partial answer
    # gave no value for, is an unknown cell (written as null); the categories it gave a
    # value for are kept
    usable = (
        status != "unparseable"
        and bool(np.isfinite(row_scores).any())
        and (got.known is None or bool(np.isfinite(row_scores[known]).all()))
    )
    row: dict[str, Any] = {
        "id": item_id,
        "request_hash": request_hash,
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
        "latency_s": latency,
        "usage": None,
        "error": None,
    }
    if got.truncated is not None:
        row["truncated"] = got.truncated[j]
    return row, usable
