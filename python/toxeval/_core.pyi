"""Type stub for the native module ``toxeval._core`` (checked by ``mypy.stubtest``).

Private API: call the functions in ``toxeval.metrics`` instead. Arrays must already
be validated there (dtypes, shapes, finiteness).
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

__version__: str

def resolve_threads(n_jobs: int | None = None) -> int: ...

# Per-label binary metrics (rust/binding/binary.rs). y_score: float64, float32 or
# int64; y_true and mask: bool; sample_weight: float64. Flags: see rust/binary_curve.rs.
def binary_metric_per_label(
    y_score: NDArray[Any],
    y_true: NDArray[np.bool_],
    sample_weight: NDArray[np.float64] | None = None,
    mask: NDArray[np.bool_] | None = None,
    *,
    metric: str,
    max_fpr: float | None = None,
    n_jobs: int | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.uint8]]: ...
def binary_metric_micro(
    y_score: NDArray[Any],
    y_true: NDArray[np.bool_],
    sample_weight: NDArray[np.float64] | None = None,
    mask: NDArray[np.bool_] | None = None,
    *,
    metric: str,
    max_fpr: float | None = None,
) -> tuple[float, int]: ...
def binary_metric_per_row(
    y_score: NDArray[Any],
    y_true: NDArray[np.bool_],
    mask: NDArray[np.bool_] | None = None,
    *,
    metric: str,
    max_fpr: float | None = None,
    n_jobs: int | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.uint8]]: ...
def binary_support(
    y_true: NDArray[np.bool_],
    sample_weight: NDArray[np.float64] | None = None,
    mask: NDArray[np.bool_] | None = None,
) -> NDArray[np.float64]: ...
def binary_counts(
    y_score: NDArray[Any],
    y_true: NDArray[np.bool_],
    sample_weight: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]: ...
