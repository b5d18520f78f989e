"""Workload shared by the metric benchmarks: the data, the benchmarked calls, their references.

`bench_metrics.py` (timings) and `_memprobe.py` (peak memory in a fresh process) must
build the *same* arrays and call the *same* functions with the same keywords, so both
take them from here. Nothing in this module times anything.

The data follow the measured baselines of ``shared/docs/metric-semantics.md`` section 2:
``y_true`` ~ Bernoulli(0.10) as int64 (N x 15), ``y_score`` ~ U(0, 1) float64, "ties" =
scores rounded to 2 decimals, float32 = the same scores cast to float32; kendalltau gets
two 1-D vectors of length N with ``x2 = 0.5 * x1 + U``.

The candidate (the implementation under test) is resolved lazily, one function at a
time, so that a metric not written yet is reported as "not available" instead of
breaking the whole run. ``candidate="sklearn"`` resolves to scikit-learn/SciPy
themselves: a debug mode that exercises the harness end to end before toxeval has any
metric (ratios come out near 1).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

K_LABELS = 15
PREVALENCE = 0.10
DEFAULT_SEED = 20251130

# Families decide which extra studies a case takes part in.
PER_LABEL = "per-label"  # parallel over the 15 columns (AP/AUC macro)
PER_ROW = "per-row"  # parallel over rows (samples averages, label-ranking metrics, NDCG)
GLOBAL = "global"  # one sort of N*K values (micro averages)
VECTOR = "vector"  # 1-D input of length N (kendalltau)
REPORT = "report"  # multilabel_report, compared with one y_score.sum()

Fn = Callable[..., Any]


@dataclass(frozen=True)
class Case:
    """One benchmarked call: ``candidate.<func>(*inputs, **kwargs)`` vs its reference."""

    key: str  # stable identifier used in the JSON and the target table
    label: str  # what the Markdown table shows
    func: str  # attribute name in toxeval.metrics
    family: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    ref_module: str = "sklearn.metrics"  # where the reference of the same name lives
    ref_func: str = ""  # defaults to `func`
    takes_n_jobs: bool = True
    # Set when values on tied scores differ from the reference by design (documented
    # in docs/deviations.md): such a difference is reported as that deviation, not
    # as a mismatch, and the call is still timed.
    tie_deviation: str = ""


CASES: tuple[Case, ...] = (
    Case("ap_macro", "average_precision_score (macro)", "average_precision_score", PER_LABEL),
    Case(
        "ap_micro",
        "average_precision_score (micro)",
        "average_precision_score",
        GLOBAL,
        {"average": "micro"},
    ),
    Case(
        "ap_samples",
        "average_precision_score (samples)",
        "average_precision_score",
        PER_ROW,
        {"average": "samples"},
    ),
    Case("auc_macro", "roc_auc_score (macro)", "roc_auc_score", PER_LABEL),
    Case("auc_micro", "roc_auc_score (micro)", "roc_auc_score", GLOBAL, {"average": "micro"}),
    Case(
        "auc_samples",
        "roc_auc_score (samples)",
        "roc_auc_score",
        PER_ROW,
        {"average": "samples"},
    ),
    Case(
        "auc_macro_maxfpr",
        "roc_auc_score (macro, max_fpr=0.1)",
        "roc_auc_score",
        PER_LABEL,
        {"max_fpr": 0.1},
    ),
    Case("lrl", "label_ranking_loss", "label_ranking_loss", PER_ROW),
    Case(
        "lrap",
        "label_ranking_average_precision_score",
        "label_ranking_average_precision_score",
        PER_ROW,
    ),
    Case("coverage", "coverage_error", "coverage_error", PER_ROW),
    Case("ndcg", "ndcg_score (default)", "ndcg_score", PER_ROW),
    Case(
        "ndcg_ignore_ties",
        "ndcg_score (ignore_ties=True)",
        "ndcg_score",
        PER_ROW,
        {"ignore_ties": True},
        tie_deviation="order inside ties (NumPy's unstable argsort in scikit-learn)",
    ),
    Case(
        "kendalltau",
        "kendalltau (1-D, length N)",
        "kendalltau",
        VECTOR,
        ref_module="scipy.stats",
        takes_n_jobs=False,
    ),
    Case(
        "report",
        "multilabel_report (vs one y_score.sum())",
        "multilabel_report",
        REPORT,
        ref_module="numpy",
        ref_func="sum",
        takes_n_jobs=False,
    ),
)

CASES_BY_KEY = {c.key: c for c in CASES}


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Variant:
    """Input flavour: score dtype and whether scores are rounded to 2 decimals."""

    dtype: str  # "float64" | "float32"
    ties: bool

    @property
    def name(self) -> str:
        return f"{self.dtype}{'-ties' if self.ties else ''}"


VARIANTS: tuple[Variant, ...] = (
    Variant("float64", False),
    Variant("float64", True),
    Variant("float32", False),
    Variant("float32", True),
)


def parse_variant(name: str) -> Variant:
    for v in VARIANTS:
        if v.name == name:
            return v
    raise ValueError(f"unknown variant {name!r}; choose from {[v.name for v in VARIANTS]}")


@dataclass
class Arrays:
    """The inputs of one (N, variant) cell; every case reads from the same arrays."""

    y_true: NDArray[np.int64]
    y_score: NDArray[np.floating[Any]]
    x1: NDArray[np.floating[Any]]
    x2: NDArray[np.floating[Any]]


_CHUNK = 1 << 16  # rows generated at a time: keeps transient float64 buffers small


def make_arrays(n: int, variant: Variant, seed: int = DEFAULT_SEED) -> Arrays:
    """Build the benchmark inputs deterministically (same seed => same arrays for every variant).

    Generated in row chunks so that building a float32 or int64 matrix never holds a
    full-size float64 temporary (keeps the memory probe's baseline honest).
    """
    rng = np.random.default_rng(seed)
    dtype = np.dtype(variant.dtype)
    y_true = np.empty((n, K_LABELS), dtype=np.int64)
    y_score = np.empty((n, K_LABELS), dtype=dtype)
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        y_true[start:stop] = rng.random((stop - start, K_LABELS)) < PREVALENCE
        s = rng.random((stop - start, K_LABELS))
        y_score[start:stop] = np.round(s, 2) if variant.ties else s
    x1 = np.empty(n, dtype=dtype)
    x2 = np.empty(n, dtype=dtype)
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        a = rng.random(stop - start)
        b = 0.5 * a + rng.random(stop - start)
        x1[start:stop] = np.round(a, 2) if variant.ties else a
        x2[start:stop] = np.round(b, 2) if variant.ties else b
    return Arrays(y_true, y_score, x1, x2)


def inputs_for(case: Case, arrays: Arrays) -> tuple[Any, ...]:
    """Positional arguments of `case` for the candidate."""
    if case.family == VECTOR:
        return (arrays.x1, arrays.x2)
    return (arrays.y_true, arrays.y_score)


# --------------------------------------------------------------------------- resolution


@dataclass(frozen=True)
class Resolved:
    """A callable, or the reason it is not available."""

    fn: Fn | None
    reason: str = ""


def _import_attr(module: str, name: str) -> Resolved:
    try:
        mod = importlib.import_module(module)
    except Exception as exc:
        return Resolved(None, f"cannot import {module}: {type(exc).__name__}: {exc}")
    fn = getattr(mod, name, None)
    if fn is None:
        return Resolved(None, f"{module} has no {name}")
    return Resolved(fn)


def resolve_candidate(case: Case, candidate: str, n_jobs: int | None = None) -> Resolved:
    """The function under test for `case`, imported only now (lazily, per function).

    ``candidate="toxeval"``: ``toxeval.metrics.<func>``; ``n_jobs`` is passed through
    when given. ``candidate="sklearn"`` (debug): the reference itself; ``n_jobs`` is
    ignored because scikit-learn's metrics do not take it.
    """
    if candidate == "toxeval":
        r = _import_attr("toxeval.metrics", case.func)
        if r.fn is None or n_jobs is None or not case.takes_n_jobs:
            return r
        fn = r.fn
        return Resolved(lambda *a, **kw: fn(*a, n_jobs=n_jobs, **kw))
    if candidate == "sklearn":
        if case.family == REPORT:
            return Resolved(None, "scikit-learn has no multilabel_report")
        return _import_attr(case.ref_module, case.ref_func or case.func)
    raise ValueError(f"unknown candidate {candidate!r}")


def resolve_reference(case: Case) -> Resolved:
    """scikit-learn / SciPy function of the same name (numpy.sum for the report)."""
    if case.family == REPORT:
        return Resolved(lambda _y_true, y_score: y_score.sum())
    return _import_attr(case.ref_module, case.ref_func or case.func)


def resolve_torchmetrics(case: Case) -> Resolved:
    """The torchmetrics equivalent (timed only: its semantics differ, see metric-semantics §1.8)."""
    try:
        import torch
        import torchmetrics.functional as tmf
    except Exception as exc:
        return Resolved(None, f"torchmetrics not installed ({type(exc).__name__})")
    fc = getattr(tmf, "classification", tmf)

    def t(a: NDArray[Any]) -> Any:
        return torch.from_numpy(np.ascontiguousarray(a))

    def multilabel(name: str, **kw: Any) -> Fn:
        f = getattr(fc, name)
        return lambda y, s: f(t(s), t(y), num_labels=y.shape[1], **kw)

    table: dict[str, Fn] = {
        "ap_macro": multilabel("multilabel_average_precision", average="macro"),
        "ap_micro": multilabel("multilabel_average_precision", average="micro"),
        "auc_macro": multilabel("multilabel_auroc", average="macro"),
        "auc_micro": multilabel("multilabel_auroc", average="micro"),
        "lrl": multilabel("multilabel_ranking_loss"),
        "lrap": multilabel("multilabel_ranking_average_precision"),
        "coverage": multilabel("multilabel_coverage_error"),
    }

    def ndcg(y: NDArray[Any], s: NDArray[Any]) -> Any:
        from torchmetrics.retrieval import RetrievalNormalizedDCG

        m = RetrievalNormalizedDCG()
        idx = torch.arange(y.shape[0]).repeat_interleave(y.shape[1])
        return m(t(s).reshape(-1), t(y).reshape(-1), indexes=idx)

    table["ndcg"] = ndcg
    table["kendalltau"] = lambda a, b: tmf.kendall_rank_corrcoef(t(a), t(b))
    fn = table.get(case.key)
    if fn is None:
        return Resolved(None, "no torchmetrics equivalent")
    return Resolved(fn)


def torchmetrics_exponent(case: Case) -> float:
    """Growth exponent that extrapolates a skipped torchmetrics run (its Kendall is O(n^2))."""
    return 2.0 if case.key == "kendalltau" else 1.0


# --------------------------------------------------------------------------- values


def as_values(result: Any) -> NDArray[np.float64]:
    """Flatten a metric result to float64 (kendalltau -> [statistic, pvalue])."""
    if hasattr(result, "statistic") and hasattr(result, "pvalue"):
        return np.array([float(result.statistic), float(result.pvalue)], dtype=np.float64)
    return np.atleast_1d(np.asarray(result, dtype=np.float64)).ravel()


def values_match(a: Any, b: Any, rtol: float = 1e-9) -> bool:
    """Equal within `rtol` (and 1e-15 absolute for exact zeros), NaN equal to NaN."""
    va, vb = as_values(a), as_values(b)
    if va.shape != vb.shape:
        return False
    return bool(np.allclose(va, vb, rtol=rtol, atol=1e-15, equal_nan=True))
