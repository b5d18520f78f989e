"""A tree reduction of Dask ``Delayed`` states: ``split_every`` states merged per
task, level by level, until one is left. The states are what travels between
tasks (pickled when they cross workers); the reduction itself is ordinary Dask
tasks, scheduled and retried by Dask."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import dask
from dask.delayed import Delayed

__all__ = ["tree_reduce"]


def tree_reduce(
    states: Sequence[Delayed], combine: Callable[..., Any], *, split_every: int = 8, **kwargs: Any
) -> Delayed:
    """One ``Delayed`` holding ``combine`` of every state, merged ``split_every`` at
    a time (``combine(*states, **kwargs)`` must accept 1..split_every states)."""
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ValueError(f"split_every must be an int >= 2; got {split_every!r}")
    level = list(states)
    if not level:
        raise ValueError("toxeval.dask: the input has no blocks")
    merge = dask.delayed(combine, pure=False)
    while len(level) > 1:
        level = [
            merge(*level[i : i + split_every], **kwargs)
            for i in range(0, len(level), split_every)
        ]
    if not isinstance(level[0], Delayed):  # pragma: no cover - states are Delayed
        raise TypeError("states must be Delayed")
    return level[0]
