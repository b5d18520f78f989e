"""Reading back the parts of a saved ``MultilabelAccumulator`` state that need more
than a dtype cast: the threshold in its own NumPy type, and the per-label runs from
their concatenated arrays (checked: dtypes, offsets, counts)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval.streaming.runs import LabelRuns

__all__ = ["runs_of_arrays", "threshold_of"]


def threshold_of(text: str, fallback: float) -> Any:
    """The threshold as given (a NumPy float32 scalar stays one: its comparisons
    with float32 scores differ from a Python float's)."""
    for t in (np.float32, np.float16, np.float64):
        if repr(t(fallback)) == text:
            return t(fallback)
    return fallback


def runs_of_arrays(arrays: Any, k: int, kind: str) -> list[LabelRuns]:
    """The per-label runs of :meth:`MultilabelAccumulator.to_arrays`."""

    def typed(name: str, kinds: str) -> NDArray[Any]:
        a = np.asarray(arrays[name])
        if a.dtype.kind not in kinds:
            raise ValueError(f"{name} has dtype {a.dtype}")
        return a

    off = typed("runs.offsets", "iu").astype(np.int64)
    # Keys are order keys (uint64; uint32 for float32 scores): a float would round them.
    keys = typed("runs.keys", "u").astype(np.uint64)
    pos = typed("runs.pos", "uif").astype(np.float64)
    neg = typed("runs.neg", "uif").astype(np.float64)
    n_pos, n_neg = typed("runs.n_pos", "iu"), typed("runs.n_neg", "iu")
    if n_pos.shape != (k,) or n_neg.shape != (k,):
        raise ValueError(f"runs.n_pos and runs.n_neg must have shape ({k},)")
    if off.shape != (k + 1,) or off[0] != 0 or off[-1] != keys.size or np.any(np.diff(off) < 0):
        raise ValueError("runs.offsets do not match the runs")
    return [
        LabelRuns(
            keys[off[j] : off[j + 1]],
            pos[off[j] : off[j + 1]],
            neg[off[j] : off[j + 1]],
            n_pos=int(n_pos[j]),
            n_neg=int(n_neg[j]),
            score_kind=kind,
        )
        for j in range(k)
    ]
