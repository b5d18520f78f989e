"""The lock that serialises changes to one ``MultilabelAccumulator`` when several
threads update, merge or compute it, and the fork hooks that keep a forked child
from inheriting a state half-changed by another thread (or its held lock).

An object opts in by holding a ``threading.RLock`` as ``_lock`` and calling
:func:`track` once; :func:`locked` wraps a method to run under that lock.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

__all__ = ["locked", "track"]

_F = TypeVar("_F", bound=Callable[..., Any])
# Every live accumulator, so that a fork never copies one in the middle of a change
# made by another thread (the child would inherit a held lock and a half-made state).
_LIVE: weakref.WeakSet[Any] = weakref.WeakSet()


def locked(method: _F) -> _F:
    """Run ``method`` holding the accumulator's lock: updates, merges and
    ``compute()`` from several threads are serialised, never interleaved (an
    interleaved ``+=`` on the totals or a flush racing an append loses rows)."""

    @wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return run  # type: ignore[return-value]


def _before_fork() -> None:
    for acc in list(_LIVE):
        acc._lock.acquire()


def _after_fork_in_parent() -> None:
    for acc in list(_LIVE):
        acc._lock.release()


def _after_fork_in_child() -> None:
    for acc in list(_LIVE):
        acc._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )


def track(obj: Any) -> None:
    """Give ``obj`` a fresh lock and hold its lock across every ``os.fork()``."""
    obj._lock = threading.RLock()
    _LIVE.add(obj)
