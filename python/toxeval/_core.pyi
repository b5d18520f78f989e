"""Type stub for the native module ``toxeval._core`` (checked by ``mypy.stubtest``).

Private API: call the functions in ``toxeval.metrics`` instead. Arrays must already
be validated there (dtypes, shapes, finiteness).
"""

import os
from collections.abc import Sequence
from typing import Any, Literal, Protocol, TypeAlias, TypeVar

import numpy as np
from numpy.typing import NDArray

__version__: str

# Positives: a bool matrix, or the same bits packed eight labels per byte
# (``np.packbits(y, axis=1, bitorder="little")``, uint8, ceil(k / 8) bytes per row).
_Labels: TypeAlias = NDArray[np.bool_] | NDArray[np.uint8]

def resolve_threads(n_jobs: int | None = None) -> int: ...

_R = TypeVar("_R", covariant=True)

class _BinaryMetric(Protocol[_R]):
    """A binary metric of every label, of all cells, or of every row."""

    def __call__(
        self,
        y_score: NDArray[Any],
        y_true: _Labels,
        sample_weight: NDArray[np.float64] | None = None,
        mask: NDArray[np.bool_] | None = None,
        *,
        metric: str,
        max_fpr: float | None = None,
        n_jobs: int | None = None,
    ) -> _R: ...

class _BinaryApAuc(Protocol[_R]):
    """Average precision and full ROC AUC from one pass."""

    def __call__(
        self,
        y_score: NDArray[Any],
        y_true: _Labels,
        sample_weight: NDArray[np.float64] | None = None,
        mask: NDArray[np.bool_] | None = None,
        n_jobs: int | None = None,
    ) -> _R: ...

_Flags: TypeAlias = NDArray[np.uint8]

# Binary metrics (rust/binding/binary.rs). y_score: float64, float32 or int64; y_true
# and mask: bool; sample_weight: float64. Flags: see rust/binary/mod.rs.
binary_metric_per_label: _BinaryMetric[tuple[NDArray[np.float64], _Flags]]
binary_metric_micro: _BinaryMetric[tuple[float, int]]
binary_ap_auc_per_label: _BinaryApAuc[
    tuple[NDArray[np.float64], NDArray[np.float64], _Flags, _Flags]
]
binary_ap_auc_micro: _BinaryApAuc[tuple[float, float, int, int]]

def binary_metric_per_row(
    y_score: NDArray[Any],
    y_true: NDArray[Any],
    mask: NDArray[np.bool_] | None = None,
    *,
    metric: str,
    max_fpr: float | None = None,
    n_jobs: int | None = None,
) -> tuple[NDArray[np.float64], _Flags]: ...
def binary_support(
    y_true: _Labels,
    sample_weight: NDArray[np.float64] | None = None,
    mask: NDArray[np.bool_] | None = None,
    *,
    n_labels: int | None = None,
) -> NDArray[np.float64]: ...
def binary_counts(
    y_score: NDArray[Any],
    y_true: NDArray[np.bool_],
    sample_weight: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]: ...
def all_finite(x: NDArray[np.float64] | NDArray[np.float32], n_jobs: int | None = None) -> bool: ...
def binary_indicator_summary(
    y_true: Any,
    n_jobs: int | None = None,
) -> tuple[int, int, bool, NDArray[np.uint8] | None] | None: ...
def binary_indicator_values(
    y_true: Any,
    n_jobs: int | None = None,
) -> tuple[int, int, bool] | None: ...

# --- per-row label-ranking kernels (rust/binding/ranking.rs) --------------------------
# Each returns sum_i w_i * metric_i over rows (sum_i metric_i without weights).
# y_score: 2-D float64, float32 or int64 array (any strides).

def ranking_sum(
    metric: Literal["lrl", "lrap", "coverage", "one_error"],
    y_true: NDArray[np.bool_],
    y_score: NDArray[Any],
    mask: NDArray[np.bool_] | None = None,
    sample_weight: NDArray[np.float64] | None = None,
    n_jobs: int | None = None,
) -> float: ...
def dcg_sum(
    y_true: NDArray[np.float64],
    y_score: NDArray[Any],
    discount: NDArray[np.float64],
    discount_cumsum: NDArray[np.float64],
    ignore_ties: bool,
    normalize: bool,
    mask: NDArray[np.bool_] | None = None,
    sample_weight: NDArray[np.float64] | None = None,
    n_jobs: int | None = None,
) -> float: ...

# Kendall's tau counts (rust/binding/kendall.rs).
def kendall_counts(
    x: NDArray[np.float64] | NDArray[np.float32] | NDArray[np.int64],
    y: NDArray[np.float64] | NDArray[np.float32] | NDArray[np.int64],
    n_jobs: int | None = None,
) -> tuple[int, int, int, int, float, float, float, float, int, int]: ...

# Fast path of the public label-ranking functions: the weighted row sum of `metric`
# ("lrl", "lrap", "coverage", "one_error", "dcg") in the same pass as the value checks.
# y_true: 2-D bool, int64, int32, int8, uint8, float64 or float32; y_score: 2-D float64 or float32.
# None when a dtype is not handled; else (sum, flags, labels): flags bit 1 = a known
# score is not finite, 2 = a known y_true is not finite, 4 = a known y_true is negative,
# 8 = y_true has more than two distinct values (unknown entries count as 0); labels =
# its distinct values (at most two, as floats; empty for bool). Any flag set: sum is
# meaningless.
def ranking_sum_checked(
    metric: str,
    y_true: NDArray[Any],
    y_score: NDArray[Any],
    mask: NDArray[np.bool_] | None = None,
    sample_weight: NDArray[np.float64] | None = None,
    n_jobs: int | None = None,
    discount: NDArray[np.float64] | None = None,
    discount_cumsum: NDArray[np.float64] | None = None,
    ignore_ties: bool = False,
    normalize: bool = False,
) -> tuple[float, int, list[float]] | None: ...

# The per-row figures of multilabel_report in one pass over the rows (one counting
# loop or one sort per row). Returns a dict of weighted row sums with keys
# "label_ranking_loss", "label_ranking_average_precision", "coverage_error",
# "one_error", "ndcg" (tie-averaged, k=None, log base 2, discounts computed natively)
# and "weight_sum" (sum of sample_weight, or the number of rows). Each of these sums
# divided by weight_sum is the value of the separate public function (same
# definitions, masks, degenerate rows). Also "one_error_relevant_errors" and
# "rows_with_relevant": the weighted count of rows with a relevant known label whose
# top tie group holds an irrelevant one, and of rows with a relevant known label. y_score: 2-D float64, float32 or int64, finite on known entries.
# y_true is read in place: bool, or validated 0/1 int64, int32, float64 or float32.
def ranking_report_sums(
    y_true: NDArray[Any],
    y_score: NDArray[Any],
    mask: NDArray[np.bool_] | None = None,
    sample_weight: NDArray[np.float64] | None = None,
    n_jobs: int | None = None,
) -> dict[str, float]: ...

# Thresholded confusion counts of multilabel_report (rust/threshold.rs): per label
# (known, support, predicted, true_positive) over known cells, a cell being predicted
# when y_score >= threshold[0]. threshold: 1-D array of y_score's dtype holding the
# smallest predicted score, or empty (nothing predicted). y_true: bool or packed bits.
def threshold_counts(
    y_score: NDArray[Any],
    y_true: _Labels,
    threshold: NDArray[Any],
    mask: NDArray[np.bool_] | None = None,
    n_jobs: int | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]: ...

# Bootstrap kernels (rust/binding/bootstrap.rs), called by toxeval.stats. Scores:
# float64, float32 or int64; positives and mask: bool; weights: float64; strata:
# uint32 codes below n_strata. NaN in an output = undefined there.
def bootstrap_indices(
    n_rows: int,
    seed: int,
    resamples: list[int],
    strata: NDArray[np.uint32] | None = None,
    n_strata: int = 1,
) -> NDArray[np.int64]: ...
def bootstrap_ap(
    y_scores: list[NDArray[Any]],
    y_pos: NDArray[np.bool_],
    mask: NDArray[np.bool_] | None,
    sample_weight: NDArray[np.float64] | None,
    *,
    average: str,
    seed: int,
    n_resamples: int,
    strata: NDArray[np.uint32] | None = None,
    n_strata: int = 1,
    n_jobs: int | None = None,
) -> NDArray[np.float64]: ...
def bootstrap_ap_jackknife(
    y_score: NDArray[Any],
    y_pos: NDArray[np.bool_],
    mask: NDArray[np.bool_] | None,
    sample_weight: NDArray[np.float64] | None,
    *,
    average: str,
    n_jobs: int | None = None,
) -> NDArray[np.float64]: ...
def bootstrap_ap_permutations(
    score_a: NDArray[Any],
    score_b: NDArray[Any],
    y_pos: NDArray[np.bool_],
    mask: NDArray[np.bool_] | None,
    sample_weight: NDArray[np.float64] | None,
    *,
    average: str,
    seed: int,
    n_permutations: int,
    n_jobs: int | None = None,
) -> NDArray[np.float64]: ...
def bootstrap_row_values(
    metric: str,
    y_true: NDArray[np.bool_],
    y_score: NDArray[Any],
    mask: NDArray[np.bool_] | None = None,
    n_jobs: int | None = None,
) -> NDArray[np.float64]: ...
def bootstrap_dcg_row_values(
    gains: NDArray[np.float64],
    y_score: NDArray[Any],
    discount: NDArray[np.float64],
    cumsum: NDArray[np.float64],
    ignore_ties: bool,
    normalize: bool,
    mask: NDArray[np.bool_] | None = None,
    n_jobs: int | None = None,
) -> NDArray[np.float64]: ...
def bootstrap_row_means(
    values: NDArray[np.float64],
    sample_weight: NDArray[np.float64] | None,
    *,
    seed: int,
    n_resamples: int,
    strata: NDArray[np.uint32] | None = None,
    n_strata: int = 1,
    n_jobs: int | None = None,
) -> NDArray[np.float64]: ...
def bootstrap_row_mean_jackknife(
    values: NDArray[np.float64], sample_weight: NDArray[np.float64] | None = None
) -> NDArray[np.float64]: ...
def bootstrap_row_mean_permutations(
    values_a: NDArray[np.float64],
    values_b: NDArray[np.float64],
    sample_weight: NDArray[np.float64] | None,
    *,
    seed: int,
    n_permutations: int,
    n_jobs: int | None = None,
) -> NDArray[np.float64]: ...
def bootstrap_swap_flags(n_rows: int, seed: int, permutation: int) -> NDArray[np.bool_]: ...

# Mergeable AP/ROC AUC states (rust/runs/, rust/binding/runs.rs).
_Runs = tuple[NDArray[np.uint64], NDArray[np.float64], NDArray[np.float64]]
_RunsIn = tuple[NDArray[np.uint64], NDArray[np.float64], NDArray[np.float64]]
_ReducerState = tuple[list[float], int | None, bool, bool, int]

def runs_build(
    y_score: NDArray[Any],
    y_true: _Labels,
    sample_weight: NDArray[np.float64] | None = None,
    mask: NDArray[np.bool_] | None = None,
    n_jobs: int | None = None,
) -> tuple[list[_Runs], list[int], list[int]]: ...
def runs_merge(parts: Sequence[_RunsIn]) -> _Runs: ...
def runs_ap_auc(
    parts: Sequence[_RunsIn],
    n_pos: Sequence[int],
    n_neg: Sequence[int],
    n_jobs: int | None = None,
) -> tuple[
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.uint8],
    NDArray[np.uint8],
    tuple[float, float, int, int],
]: ...
def runs_reducer_new() -> _ReducerState: ...
def runs_reducer_feed(state: _ReducerState, runs: _RunsIn) -> _ReducerState: ...
def runs_reducer_below(tp: float, fp: float) -> _ReducerState: ...
def runs_reducer_then(upper: _ReducerState, lower: _ReducerState) -> _ReducerState: ...
def runs_reducer_finish(
    state: _ReducerState, n_pos: int, n_neg: int
) -> tuple[float, float, int, int]: ...
def score_keys(y_score: NDArray[Any]) -> NDArray[np.uint64]: ...
def range_numbers(y_score: NDArray[Any], bounds: NDArray[np.uint64]) -> NDArray[np.uint32]: ...
def read_jsonl_dump(path: str | os.PathLike[str], n_jobs: int | None = None) -> dict[str, Any]: ...
def read_jsonl_dump_bytes(body: bytes, n_jobs: int | None = None) -> dict[str, Any]: ...
def read_jsonl_dataset_bytes(body: bytes, n_jobs: int | None = None) -> dict[str, Any]: ...
def read_csv_dump(
    path: str | os.PathLike[str],
    delimiter: int,
    string_columns: Sequence[bytes],
    n_jobs: int | None = None,
) -> dict[str, Any]: ...
def read_csv_dump_bytes(
    body: bytes,
    delimiter: int,
    string_columns: Sequence[bytes],
    n_jobs: int | None = None,
) -> dict[str, Any]: ...
def ids_index_in(
    probe_offsets: NDArray[np.int32] | NDArray[np.int64],
    probe_data: NDArray[np.uint8],
    set_offsets: NDArray[np.int32] | NDArray[np.int64],
    set_data: NDArray[np.uint8],
    set_keys: NDArray[np.uint64] | None = None,
    n_jobs: int | None = None,
) -> NDArray[np.int64]: ...
def ids_sorted_keys(
    offsets: NDArray[np.int32] | NDArray[np.int64],
    data: NDArray[np.uint8],
    n_jobs: int | None = None,
) -> NDArray[np.uint64]: ...
def ids_any_repeat(
    offsets: NDArray[np.int32] | NDArray[np.int64],
    data: NDArray[np.uint8],
    keys: NDArray[np.uint64],
) -> bool: ...
