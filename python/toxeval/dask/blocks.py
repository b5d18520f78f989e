"""Row blocks of Dask collections: the inputs of one metric (labels, scores, mask,
weights) cut into matching row blocks, each a ``Delayed`` that refers to a block of
the user's graph (nothing is computed or embedded here).

Dask arrays are rechunked to the row chunks of ``y_score`` and to one chunk across
columns; dask dataframes (and series) are taken partition by partition and must
then have the same number of partitions (their row counts are checked inside the
block tasks). A mix of arrays and frames turns the frames into arrays
(``to_dask_array(lengths=True)``, which computes the partition lengths).
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import dask.dataframe as dd
import numpy as np
from dask.delayed import Delayed

__all__ = ["as_numpy", "row_blocks"]

_FRAME_TYPES: tuple[type, ...] = (dd.DataFrame, dd.Series)


def _name(i: int) -> str:
    return ("y_true", "y_score", "mask", "sample_weight")[i] if i < 4 else f"input {i}"


def row_blocks(*inputs: Any) -> list[tuple[Delayed | None, ...]]:
    """One tuple per row block: the block of each input (None where the input is
    None). Raises ``TypeError`` for inputs that are not Dask collections and
    ``ValueError`` for inputs whose rows cannot be matched."""
    present = [(i, x) for i, x in enumerate(inputs) if x is not None]
    for i, x in present:
        if not isinstance(x, (da.Array, *_FRAME_TYPES)):
            raise TypeError(
                f"toxeval.dask: {_name(i)} must be a dask.array or dask.dataframe collection; "
                f"got {type(x).__name__} (use toxeval.metrics for in-memory arrays)"
            )
    if all(isinstance(x, _FRAME_TYPES) for _, x in present):
        counts = {x.npartitions for _, x in present}
        if len(counts) > 1:
            raise ValueError(
                "toxeval.dask: the dataframes have different numbers of partitions "
                f"({', '.join(f'{_name(i)}: {x.npartitions}' for i, x in present)}); "
                "take the columns from one frame or repartition them alike"
            )
        parts = {i: list(x.to_delayed()) for i, x in present}
        n = counts.pop()
    else:
        arrays = {i: _as_array(x) for i, x in present}
        base = arrays[1] if 1 in arrays else next(iter(arrays.values()))
        rows = {a.shape[0] for a in arrays.values()}
        if len(rows) > 1:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"{[a.shape[0] for a in arrays.values()]}"
            )
        chunks = base.chunks[0]
        parts = {}
        for i, a in arrays.items():
            if a.ndim > 2:
                raise ValueError(f"toxeval.dask: {_name(i)} must be 1-D or 2-D; got {a.ndim}-D")
            target = (chunks,) if a.ndim == 1 else (chunks, (a.shape[1],))
            if a.chunks != target:
                a = a.rechunk(target)  # type: ignore[no-untyped-call]
            parts[i] = list(a.to_delayed().ravel())  # type: ignore[no-untyped-call]
        n = len(chunks)
    return [
        tuple(parts[i][b] if i in parts else None for i in range(len(inputs))) for b in range(n)
    ]


def _as_array(x: Any) -> da.Array:
    """A dask array with known row chunks."""
    a: da.Array = x.to_dask_array(lengths=True) if isinstance(x, _FRAME_TYPES) else x  # type: ignore[attr-defined]
    if any(np.isnan(c) for c in a.chunks[0]):
        raise ValueError(
            "toxeval.dask: an array has unknown chunk sizes; call compute_chunk_sizes() first"
        )
    return a


def as_numpy(x: Any) -> Any:
    """A block as NumPy: pandas frames and series through ``to_numpy()``."""
    if x is None:
        return None
    if hasattr(x, "to_numpy"):
        return x.to_numpy()
    return np.asarray(x)
