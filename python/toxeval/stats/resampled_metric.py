"""How each metric of ``toxeval.metrics`` is evaluated on bootstrap resamples.

A resample is a count per row (how many times the row was drawn); the drawn rows
come from the native seeded stream (``bootstrap_indices``), so every path below
sees the same resamples for the same seed.

* ``native-ap``: ``average_precision_score`` with ``average`` in ``"macro"``,
  ``"weighted"``, ``None``, ``"micro"`` (and binary 1-D input): each label is
  sorted once in Rust and each resample is one walk with the counts as weights.
* ``native-rows``: ``label_ranking_loss``, ``label_ranking_average_precision_score``,
  ``coverage_error``, ``one_error``, ``ndcg_score``, ``dcg_score``: per-row values
  computed once in Rust, each resample a weighted mean.
* ``materialised``: everything else (ROC AUC, ``average="samples"``, sparse or
  list input, ...): the resampled rows are materialised and the metric is called on
  them (correct, much slower).

On every path a resample's value equals the metric on the materialised resample.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from toxeval import _core
from toxeval import metrics as _metrics
from toxeval.stats.undefined import (
    LABEL_WISE,
    evaluate_defined,
    no_label_weight,
    per_column,
    tiny_label_weight,
)

MetricFunc = Callable[..., Any]

METRICS: dict[str, MetricFunc] = {
    "average_precision_score": _metrics.average_precision_score,
    "roc_auc_score": _metrics.roc_auc_score,
    "label_ranking_loss": _metrics.label_ranking_loss,
    "label_ranking_average_precision_score": _metrics.label_ranking_average_precision_score,
    "coverage_error": _metrics.coverage_error,
    "one_error": _metrics.one_error,
    "ndcg_score": _metrics.ndcg_score,
    "dcg_score": _metrics.dcg_score,
}

_ROW_METRICS = {
    "label_ranking_loss": "lrl",
    "label_ranking_average_precision_score": "lrap",
    "coverage_error": "coverage",
    "one_error": "one_error",
}
_SCORE_DTYPES = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64))


class UndefinedError(ValueError):
    """The metric is undefined on the full data, so no interval has a meaning."""


def resolve_metric(metric: str | MetricFunc) -> tuple[str, MetricFunc]:
    """The metric's name and function, from either."""
    if isinstance(metric, str):
        if metric not in METRICS:
            raise ValueError(
                f"unknown metric {metric!r}; expected a function of toxeval.metrics or "
                f"one of {sorted(METRICS)}"
            )
        return metric, METRICS[metric]
    for name, func in METRICS.items():
        if metric is func:
            return name, func
    if callable(metric):
        return getattr(metric, "__name__", "metric"), metric
    raise TypeError(f"metric must be a metric name or a callable, got {type(metric).__name__}")


def strata_codes(strata: Any, n_rows: int) -> tuple[NDArray[np.uint32] | None, int]:
    """Stratum labels as ``uint32`` codes and the number of strata."""
    if strata is None:
        return None, 1
    arr = np.asarray(strata)
    if arr.ndim != 1 or arr.shape[0] != n_rows:
        raise ValueError(
            f"strata must be 1-D with one entry per row ({n_rows}), got shape {arr.shape}"
        )
    try:
        groups, codes = np.unique(arr, return_inverse=True)
    except TypeError as e:
        raise ValueError(f"strata values cannot be ordered: {e}") from None
    return codes.astype(np.uint32).reshape(-1), int(groups.shape[0])


def _zeros_and_ones(y: NDArray[Any]) -> bool:
    """Whether every value of ``y`` is 0 or 1, without sorting a copy (``np.unique``):
    a bool array always; integers by their minimum and maximum; floats block by block
    (NaN is neither)."""
    if y.dtype == np.bool_ or y.size == 0:
        return True
    if y.dtype.kind in "iu":
        return bool(y.min() >= 0 and y.max() <= 1)
    rows = max(1, 65536 // max(1, y.shape[-1]))
    return all(
        bool(np.all((block == 0) | (block == 1)))
        for block in (y[i : i + rows] for i in range(0, y.shape[0], rows))
    )


def num_rows(y: Any) -> int:
    """Number of rows of an array-like (``ValueError`` for a scalar)."""
    shape = getattr(y, "shape", None)
    if shape is not None and len(shape) > 0:
        return int(shape[0])
    try:
        return len(y)
    except TypeError:
        raise ValueError(f"y_true must be an array of rows, got {type(y).__name__}") from None


@dataclass
class ResampledMetric:
    """One metric with its fixed inputs (everything but the scores)."""

    name: str
    func: MetricFunc
    y_true: Any
    sample_weight: NDArray[np.float64] | None
    mask: Any
    kwargs: dict[str, Any]
    n_jobs: int | None
    n_rows: int = 0
    path: str = "materialised"
    _ap_average: str = ""
    _y_pos: NDArray[np.bool_] | None = None
    _mask: NDArray[np.bool_] | None = None
    _binary: bool = False
    _dcg: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None = None
    _row_weight: NDArray[np.float64] | None = None

    def __post_init__(self) -> None:
        self.n_rows = num_rows(self.y_true)
        self._choose_path()

    def check_rows(self) -> None:
        """``ValueError`` for fewer than two rows (after the metric's own checks, which
        refuse none): every resample of one row is that row, so an interval would be
        the estimate; scipy.stats.bootstrap refuses one observation as well."""
        if self.n_rows < 2:
            raise ValueError(
                f"resampling needs two or more rows, got {self.n_rows} (each sample must "
                "contain two or more observations, as in scipy.stats.bootstrap)"
            )

    # -- the point estimate -------------------------------------------------------
    def call(self, y_score: Any) -> Any:
        """The metric on all rows, exactly as the drop-in computes it."""
        kw = dict(self.kwargs)
        if self.sample_weight is not None:
            kw["sample_weight"] = self.sample_weight
        if self.mask is not None:
            kw["mask"] = self.mask
        if self.n_jobs is not None and self.func in METRICS.values():
            kw["n_jobs"] = self.n_jobs
        return self.func(self.y_true, y_score, **kw)

    def estimate(self, y_score: Any) -> tuple[NDArray[np.float64], bool]:
        """The point estimate as a float64 array (one value, or one per label) and
        whether the metric returned a scalar; raises ``UndefinedError`` when the
        metric is undefined on the full data."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = self.call(y_score)
        out = np.atleast_1d(np.asarray(value, dtype=np.float64))
        silent = no_label_weight(
            self.func, self.kwargs.get("average"), self.y_true, self.sample_weight, self.mask
        )
        if caught or silent or not np.all(np.isfinite(out)):
            why = (
                str(caught[0].message)
                if caught
                else "the label weights of average='weighted' sum to about 0, where "
                "scikit-learn returns 0"
                if silent
                else "it is NaN"
            )
            raise UndefinedError(
                f"{self.name} is undefined on the full data ({why}); a confidence "
                "interval needs a defined estimate (leave out labels without a known "
                "positive, or bootstrap them per label with average=None on the others)"
            )
        return out, np.ndim(value) == 0

    # -- path selection -----------------------------------------------------------
    def _choose_path(self) -> None:
        if self.sample_weight is not None and np.any(self.sample_weight < 0):
            raise ValueError("sample_weight must be non-negative to bootstrap")
        y = self.y_true
        if not isinstance(y, np.ndarray) or y.dtype.kind not in "biuf":
            return
        mask = self.mask
        if mask is not None:
            mask = np.asarray(mask)
            if mask.dtype != np.bool_ or mask.shape != y.shape:
                return
        if self.name == "average_precision_score":
            self._choose_ap(y, mask)
        elif self.name in _ROW_METRICS and not self.kwargs:
            if y.ndim == 2:
                self._mask = mask
                self.path = "native-rows"
        elif self.name in ("ndcg_score", "dcg_score"):
            self._choose_dcg(y, mask)
        if self.path == "native-rows":
            self._row_weight = self._known_row_weight(y.shape[0])

    def _known_row_weight(self, n_rows: int) -> NDArray[np.float64] | None:
        """The row weights of the per-row means: ``sample_weight`` with the rows that
        have no known label weighted 0. Such rows are not rows of a per-row metric
        (their value is not defined; the drop-ins leave them out), so a resample that
        draws them must not count them in its mean's denominator either."""
        if self._mask is None:
            return self.sample_weight
        known = self._mask.any(axis=1)
        if bool(known.all()):
            return self.sample_weight
        base = np.ones(n_rows) if self.sample_weight is None else self.sample_weight
        return np.where(known, base, 0.0)

    def _choose_ap(self, y: NDArray[Any], mask: NDArray[np.bool_] | None) -> None:
        average = self.kwargs.get("average", "macro")
        pos_label = self.kwargs.get("pos_label", 1)
        if set(self.kwargs) - {"average", "pos_label"}:
            return
        if y.ndim == 1:
            values = np.unique(y)
            if values.shape[0] != 2 or pos_label not in values:
                return
            self._y_pos = (y == pos_label).reshape(-1, 1)
            self._mask = None if mask is None else mask.reshape(-1, 1)
            self._binary = True
            self._ap_average = "macro"
        elif y.ndim == 2 and pos_label == 1 and _zeros_and_ones(y):
            if average not in ("macro", "weighted", "micro", None):
                return
            if average == "weighted" and tiny_label_weight(self.sample_weight, y == 1, mask):
                return
            # A bool y_true is the positives already: no copy.
            self._y_pos = y if y.dtype == np.bool_ else y == 1
            self._mask = mask
            self._ap_average = "none" if average is None else str(average)
        else:
            return
        self.path = "native-ap"

    def _choose_dcg(self, y: NDArray[Any], mask: NDArray[np.bool_] | None) -> None:
        kw = dict(self.kwargs)
        k = kw.pop("k", None)
        ignore_ties = kw.pop("ignore_ties", False)
        log_base = kw.pop("log_base", 2) if self.name == "dcg_score" else 2
        if kw or y.ndim != 2 or y.shape[1] < 2 or not isinstance(ignore_ties, bool):
            return
        n_labels = y.shape[1]
        discount = 1 / (np.log(np.arange(n_labels) + 2) / np.log(log_base))
        if k is not None:
            discount[k:] = 0
        gains = np.asarray(y, dtype=np.float64)
        self._dcg = (gains, discount, np.cumsum(discount))
        self._mask = mask
        self.path = "native-rows"

    # -- scores for the native kernels --------------------------------------------
    def _scores(self, y_score: Any) -> NDArray[Any] | None:
        s = np.asarray(y_score)
        if s.dtype.kind not in "biuf":
            return None
        if s.dtype not in _SCORE_DTYPES:
            s = s.astype(np.float32 if s.dtype.kind == "f" and s.itemsize < 4 else np.float64)
        if self._binary:
            s = s.reshape(-1, 1)
        expected = None if self._y_pos is None else self._y_pos.shape
        if self.path == "native-rows":
            expected = np.shape(self.y_true)
        return s if s.ndim == 2 and s.shape == expected else None

    def native(self, scores: Sequence[Any]) -> list[NDArray[Any]] | None:
        """The score matrices as the native kernels take them, or None when some
        input needs the materialised path."""
        if self.path == "materialised":
            return None
        out = [self._scores(s) for s in scores]
        if any(s is None for s in out):
            return None
        return [s for s in out if s is not None]

    def _positives(self) -> NDArray[np.bool_]:
        if self._y_pos is None:  # pragma: no cover - only called on the native-ap path
            raise RuntimeError("positives are prepared for the native AP path only")
        return self._y_pos

    def row_values(self, score: NDArray[Any]) -> NDArray[np.float64]:
        """Per-row metric values (``native-rows`` path)."""
        if self._dcg is not None:
            gains, discount, cumsum = self._dcg
            dcg: NDArray[np.float64] = _core.bootstrap_dcg_row_values(
                gains,
                score,
                discount,
                cumsum,
                bool(self.kwargs.get("ignore_ties", False)),
                self.name == "ndcg_score",
                self._mask,
                self.n_jobs,
            )
            return dcg
        rel = np.asarray(self.y_true) != 0
        values: NDArray[np.float64] = _core.bootstrap_row_values(
            _ROW_METRICS[self.name], rel, score, self._mask, self.n_jobs
        )
        return values

    # -- distributions --------------------------------------------------------------
    def distribution(
        self,
        scores: Sequence[Any],
        *,
        seed: int,
        n_resamples: int,
        strata: tuple[NDArray[np.uint32] | None, int],
    ) -> NDArray[np.float64]:
        """Resample values, shape ``(n_resamples, len(scores), n_out)``; NaN where
        the metric is undefined on a resample."""
        codes, n_strata = strata
        native = self.native(scores)
        if native is not None and self.path == "native-ap":
            flat = _core.bootstrap_ap(
                native,
                self._positives(),
                self._mask,
                self.sample_weight,
                average=self._ap_average,
                seed=seed,
                n_resamples=n_resamples,
                strata=codes,
                n_strata=n_strata,
                n_jobs=self.n_jobs,
            )
            return flat.reshape(n_resamples, len(scores), -1)
        if native is not None:
            values = np.column_stack([self.row_values(s) for s in native])
            flat = _core.bootstrap_row_means(
                values,
                self._row_weight,
                seed=seed,
                n_resamples=n_resamples,
                strata=codes,
                n_strata=n_strata,
                n_jobs=self.n_jobs,
            )
            return flat.reshape(n_resamples, len(scores), 1)
        return self._materialised(scores, seed, n_resamples, codes, n_strata)

    def _take(self, idx: NDArray[np.intp], y_score: Any) -> tuple[Any, Any, dict[str, Any]]:
        kw = dict(self.kwargs)
        if self.sample_weight is not None:
            kw["sample_weight"] = self.sample_weight[idx]
        if self.mask is not None:
            kw["mask"] = np.asarray(self.mask)[idx]
        return _take_rows(self.y_true, idx), _take_rows(y_score, idx), kw

    def value_on(self, idx: NDArray[np.intp], y_score: Any) -> NDArray[np.float64] | None:
        """The metric on the materialised rows ``idx``: None when undefined; with
        ``average=None`` of AP or ROC AUC, NaN for the labels undefined there only
        (``undefined.per_column``; a callable of the user's gives no such promise, so
        a resample on which it is undefined is left out for every label)."""
        yt, ys, kw = self._take(idx, y_score)
        average = self.kwargs.get("average", "macro")
        if no_label_weight(self.func, average, yt, kw.get("sample_weight"), kw.get("mask")):
            return None
        value = evaluate_defined(self.func, yt, ys, **kw)
        if value is None and self.func in LABEL_WISE and average is None and len(yt.shape) == 2:
            return per_column(self.func, yt, ys, kw)
        return value

    def _materialised(
        self,
        scores: Sequence[Any],
        seed: int,
        n_resamples: int,
        codes: NDArray[np.uint32] | None,
        n_strata: int,
    ) -> NDArray[np.float64]:
        rows: list[list[NDArray[np.float64] | None]] = []
        for b in range(n_resamples):
            idx = _core.bootstrap_indices(self.n_rows, seed, [b], codes, n_strata)[0]
            rows.append([self.value_on(idx, s) for s in scores])
        return _stack(rows)

    def jackknife(self, y_score: Any) -> NDArray[np.float64]:
        """Leave-one-out values, shape ``(n_rows, n_out)``; NaN where undefined."""
        native = self.native([y_score])
        if native is not None and self.path == "native-ap":
            out: NDArray[np.float64] = _core.bootstrap_ap_jackknife(
                native[0],
                self._positives(),
                self._mask,
                self.sample_weight,
                average=self._ap_average,
                n_jobs=self.n_jobs,
            )
            return out
        if native is not None:
            loo = _core.bootstrap_row_mean_jackknife(self.row_values(native[0]), self._row_weight)
            return loo.reshape(-1, 1)
        all_rows = np.arange(self.n_rows)
        return _stack([[self.value_on(np.delete(all_rows, i), y_score)] for i in all_rows])[:, 0, :]

    def permutations(
        self, score_a: Any, score_b: Any, *, seed: int, n_permutations: int
    ) -> NDArray[np.float64]:
        """Approximate randomization: per permutation, the metric of the two mixed
        systems, shape ``(n_permutations, 2, n_out)``; NaN where undefined."""
        native = self.native([score_a, score_b])
        if native is not None and self.path == "native-ap":
            # A permutation's system mixes rows of both: the kernel merges the two
            # systems' sort keys, which only compare within one dtype, so both are
            # given in their common dtype (the mixed array's, as np.where makes it).
            common = np.result_type(native[0], native[1])
            native = [s if s.dtype == common else s.astype(common) for s in native]
            flat = _core.bootstrap_ap_permutations(
                native[0],
                native[1],
                self._positives(),
                self._mask,
                self.sample_weight,
                average=self._ap_average,
                seed=seed,
                n_permutations=n_permutations,
                n_jobs=self.n_jobs,
            )
            return flat.reshape(n_permutations, 2, -1)
        if native is not None:
            flat = _core.bootstrap_row_mean_permutations(
                self.row_values(native[0]),
                self.row_values(native[1]),
                self._row_weight,
                seed=seed,
                n_permutations=n_permutations,
                n_jobs=self.n_jobs,
            )
            return flat.reshape(n_permutations, 2, 1)
        a, b = np.asarray(score_a), np.asarray(score_b)
        rows: list[list[NDArray[np.float64] | None]] = []
        all_rows = np.arange(self.n_rows)
        for p in range(n_permutations):
            swap = mixed_swap(self.n_rows, seed, p, a.ndim)
            mixed_a, mixed_b = np.where(swap, b, a), np.where(swap, a, b)
            rows.append([self.value_on(all_rows, mixed_a), self.value_on(all_rows, mixed_b)])
        return _stack(rows)


def mixed_swap(n_rows: int, seed: int, permutation: int, ndim: int) -> NDArray[np.bool_]:
    """The swap flags of one permutation, shaped to broadcast over the scores."""
    flags: NDArray[np.bool_] = _core.bootstrap_swap_flags(n_rows, seed, permutation)
    return flags.reshape((-1,) + (1,) * (ndim - 1))


def _take_rows(y: Any, idx: NDArray[np.intp]) -> Any:
    if hasattr(y, "tocsr"):
        return y.tocsr()[idx]
    return np.asarray(y)[idx]


def _stack(rows: list[list[NDArray[np.float64] | None]]) -> NDArray[np.float64]:
    """Per-resample values (None = undefined) as ``(B, S, n_out)`` with NaN."""
    width = max((v.shape[0] for r in rows for v in r if v is not None), default=1)
    out = np.full((len(rows), len(rows[0]) if rows else 0, width), np.nan)
    for b, r in enumerate(rows):
        for s, v in enumerate(r):
            if v is not None and v.shape[0] == width:
                out[b, s] = v
    return out
