"""The memory target of the range-partitioned path on a Dask cluster: how many bytes
of metric state one worker (and the client) may hold, and over how many workers the
data's cells spread. The same sizes (and shares) as out-of-core scoring
(``toxeval.outofcore.memory``): a limit per process, of which the states get half of
what the interpreter's baseline leaves.
"""

from __future__ import annotations

from typing import Any

from toxeval.outofcore.memory import (
    DEFAULT_MEMORY_LIMIT,
    MIN_LIMIT,
    MemoryBudget,
    parse_memory_limit,
)

__all__ = ["state_budget"]


def _cluster() -> tuple[int, int | None]:
    """Workers of the active ``distributed.Client`` and the smallest worker memory
    limit it reports (1 and None without a client, or with the limits unset)."""
    try:
        from distributed import default_client

        client: Any = default_client()  # type: ignore[no-untyped-call]
    except (ImportError, ValueError):
        return 1, None
    workers = max(1, len(client.nthreads()))
    info: dict[str, Any] = client.scheduler_info().get("workers", {})
    limits = [int(w["memory_limit"]) for w in info.values() if w.get("memory_limit")]
    return workers, min(limits) if limits else None


def state_budget(memory_limit: str | int | None) -> tuple[int, int]:
    """(bytes of state per worker, workers). ``memory_limit`` per worker (``2GB``,
    ``512MiB``, bytes); by default 2 GiB, or half the smallest worker's memory limit
    when that is less."""
    workers, smallest = _cluster()
    if memory_limit is not None:
        limit = parse_memory_limit(memory_limit)
    elif smallest is None:
        limit = DEFAULT_MEMORY_LIMIT
    else:
        limit = max(MIN_LIMIT, min(DEFAULT_MEMORY_LIMIT, smallest // 2))
    return MemoryBudget(limit).state_bytes, workers
