"""Type stub for the native module ``toxeval._core`` (checked by ``mypy.stubtest``).

Private API: call the functions in ``toxeval.metrics`` instead. Arrays must already
be validated there (dtypes, shapes, finiteness).
"""

import numpy as np
from numpy.typing import NDArray

__version__: str

def resolve_threads(n_jobs: int | None = None) -> int: ...
def kendall_counts(
    x: NDArray[np.float64] | NDArray[np.float32] | NDArray[np.int64],
    y: NDArray[np.float64] | NDArray[np.float32] | NDArray[np.int64],
    n_jobs: int | None = None,
) -> tuple[int, int, int, int, float, float, float, float, int, int]: ...
