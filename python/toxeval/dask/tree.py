"""A tree reduction of Dask ``Delayed`` states: ``split_every`` states merged per
task, level by level, until one is left. The states are what travels between
tasks (pickled when they cross workers); the reduction itself is ordinary Dask
tasks, scheduled and retried by Dask."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import dask.base
from dask.delayed import Delayed, delayed

__all__ = ["compute_one", "task", "tree_reduce"]


def task(func: Callable[..., Any]) -> Callable[..., Delayed]:
    """``dask.delayed(func, pure=False)``: each call is one task with a fresh key."""
    made: Callable[..., Delayed] = delayed(func, pure=False)
    return made


def compute_one(graph: Delayed) -> Any:
    """The value of one ``Delayed``, on the scheduler Dask would use (the active
    ``distributed.Client`` if there is one)."""
    (value,) = dask.base.compute(graph)  # type: ignore[no-untyped-call]
    return value


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
    merge = task(combine)
    while len(level) > 1:
        level = [
            merge(*level[i : i + split_every], **kwargs) for i in range(0, len(level), split_every)
        ]
    if not isinstance(level[0], Delayed):  # pragma: no cover - states are Delayed
        raise TypeError("states must be Delayed")
    return level[0]
