"""Out-of-core scoring: Parquet inputs larger than memory scored with bounded memory
into the same report as in-memory scoring (docs/out-of-core.md).

The parts, each a module of this package: :mod:`~toxeval.outofcore.memory` (the
limit and how it is shared), :mod:`~toxeval.outofcore.columns` (a record batch into
ids, labels and scores, through the in-memory readers), :mod:`~toxeval.outofcore.spill`
(partition files and the id hash), :mod:`~toxeval.outofcore.ranges` (exact AP and ROC
AUC from range partitions), :mod:`~toxeval.outofcore.states` (the two metric paths),
:mod:`~toxeval.outofcore.run` (what the passes share), :mod:`~toxeval.outofcore.one_table`
(one table holding labels and scores), :mod:`~toxeval.outofcore.join` (the grace hash
join) and :mod:`~toxeval.outofcore.score` (:func:`score_out_of_core`, the result). The shards
themselves are read by :mod:`toxeval.shards`.

:func:`score_out_of_core` is imported on first use: the in-memory ``toxeval score`` asks
:mod:`~toxeval.outofcore.choice` whether to go out of core, and importing this package
for that must not load the whole out-of-core engine (0.1 s).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toxeval.outofcore.memory import DEFAULT_MEMORY_LIMIT as DEFAULT_MEMORY_LIMIT
from toxeval.outofcore.memory import parse_memory_limit as parse_memory_limit

if TYPE_CHECKING:
    from toxeval.outofcore.score import score_out_of_core as score_out_of_core

__all__ = ["DEFAULT_MEMORY_LIMIT", "parse_memory_limit", "score_out_of_core"]


def __getattr__(name: str) -> Any:
    """``score_out_of_core``, imported when first asked for (see the module docstring)."""
    if name == "score_out_of_core":
        from toxeval.outofcore.score import score_out_of_core

        return score_out_of_core
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
