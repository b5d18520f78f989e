"""When ``toxeval score`` / :func:`toxeval.score` take the out-of-core path: a memory
limit given, a directory of shards, or a Parquet file (with a Parquet dataset, or
holding the labels itself) whose uncompressed size passes the default memory limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toxeval.file_formats import is_parquet_name

__all__ = ["out_of_core_reason"]


def _parquet_or_same(dataset: Any, predictions: Path) -> bool:
    if dataset is None:
        return True
    if not isinstance(dataset, (str, Path)):
        return False
    d = Path(dataset)
    if d.is_dir():
        return True
    try:
        if d.resolve() == predictions.resolve():
            return True
    except OSError:
        return False
    return d.is_file() and is_parquet_name(d)


def out_of_core_reason(predictions: Any, dataset: Any, memory_limit: Any) -> str | None:
    """Why these inputs are scored out of core, or None for the in-memory path."""
    if memory_limit is not None:
        return "a memory limit was given"
    if not isinstance(predictions, (str, Path)):
        return None
    p = Path(predictions)
    if p.is_dir():
        # a folder named like a file (preds.jsonl/) holding no Parquet shard is a file
        # path gone wrong: the in-memory reader says it is a directory, not a file
        from toxeval.shards import ShardError, shard_paths

        try:
            shard_paths(p)
        except ShardError:
            if p.suffix:
                return None
        return "the predictions are a directory of shards"

    if not is_parquet_name(p) or not p.is_file():
        return None
    if not _parquet_or_same(dataset, p) or dataset is None:
        return None
    from toxeval.outofcore.memory import default_memory_limit
    from toxeval.shards import ShardError, discover_shards

    try:
        size = discover_shards(p).uncompressed_bytes
    except ShardError:
        return None  # the in-memory reader gives its own error
    limit = default_memory_limit()
    if size > limit:
        return (
            f"the predictions hold {size} bytes uncompressed, over the {limit}-byte default limit"
        )
    return None
