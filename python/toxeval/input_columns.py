"""The column-name check every input table passes, whichever reader made it: a dataset
(JSONL, CSV, Parquet), a prediction dump or DataFrame, or a Parquet shard. A name given
twice is refused, with the same message everywhere, because each column must mean one
thing.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["check_column_names"]


def check_column_names(names: Sequence[str], source: str, error: type[Exception]) -> None:
    """Raise ``error`` naming ``source`` and every repeated name when ``names`` (a
    table's column names) holds a name more than once."""
    if len(set(names)) == len(names):
        return
    dup = sorted({n for n in names if list(names).count(n) > 1})
    many = len(dup) > 1
    raise error(
        f"{source}: column{'s' if many else ''} {', '.join(map(repr, dup))} "
        f"appear{'' if many else 's'} more than once; every column name must be unique"
    )
