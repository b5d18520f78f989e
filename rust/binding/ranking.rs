//! Binding of the per-row label-ranking kernels (`crate::label_ranking`).
//!
//! Each function takes validated arrays from `toxeval.metrics._label_ranking`:
//! relevance as `bool` (ranking loss, LRAP, coverage, one-error) or float64 gains
//! ((N)DCG), scores as float64, float32 or int64 (dispatched here, never converted), an
//! optional `bool` mask and float64 weights, and returns the weighted row sum
//! `sum_i w_i * metric_i`; the Python layer divides by the weight sum.
//!
//! `ranking_sum_checked` is the fast path of the public functions: it reads the
//! user's own `y_true` (bool, int64, int32, int8, uint8, float64 or float32) and `y_score`
//! (float64 or float32) in place and does the value checks (finiteness, distinct
//! labels, negative gains) in the same pass as the metric, so a large call reads its
//! inputs once. `ranking_report_sums` computes the per-row figures of
//! `multilabel_report` in one pass.

use ndarray::{ArrayView1, ArrayView2};
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::label_ranking::{self, Discounts, RankingMetric, Relevance, Rows, Seen};
use crate::parallel::Parallelism;
use crate::score::Score;

use super::{parallelism, run_detached};

/// Borrow `$y_score` as float64 or float32 (no copy), build `Rows` and evaluate
/// `$body` (which sees `$rows` and `$par`) with the GIL released for large inputs.
macro_rules! with_rows {
    ($py:expr, $y_true:expr, $y_score:expr, $mask:expr, $w:expr, $n_jobs:expr,
     |$rows:ident, $par:ident| $body:expr) => {{
        let $par = parallelism($n_jobs)?;
        let y_true = $y_true.as_array();
        let mask = $mask.as_ref().map(|m| m.as_array());
        let sample_weight = $w.as_ref().map(|w| w.as_array());
        let elements = y_true.len();
        let out = if let Ok(s) = $y_score.extract::<PyReadonlyArray2<'_, f64>>() {
            let $rows = Rows {
                y_true,
                y_score: s.as_array(),
                mask,
                sample_weight,
            };
            run_detached($py, elements, || $body)
        } else if let Ok(s) = $y_score.extract::<PyReadonlyArray2<'_, f32>>() {
            let $rows = Rows {
                y_true,
                y_score: s.as_array(),
                mask,
                sample_weight,
            };
            run_detached($py, elements, || $body)
        } else if let Ok(s) = $y_score.extract::<PyReadonlyArray2<'_, i64>>() {
            let $rows = Rows {
                y_true,
                y_score: s.as_array(),
                mask,
                sample_weight,
            };
            run_detached($py, elements, || $body)
        } else {
            return Err(PyTypeError::new_err(
                "y_score must be a 2-D float64, float32 or int64 numpy array",
            ));
        };
        Ok(out?)
    }};
}

/// The metric named by `metric` (`"lrl"`, `"lrap"`, `"coverage"`, `"one_error"`).
fn binary_metric(metric: &str) -> Option<RankingMetric> {
    match metric {
        "lrl" => Some(RankingMetric::LabelRankingLoss),
        "lrap" => Some(RankingMetric::Lrap),
        "coverage" => Some(RankingMetric::Coverage),
        "one_error" => Some(RankingMetric::OneError),
        _ => None,
    }
}

/// Weighted sum over rows of ranking loss, LRAP, coverage or one-error (see
/// `label_ranking::metric_sum`); the general path behind the checked fast path.
#[pyfunction]
#[pyo3(signature = (metric, y_true, y_score, mask=None, sample_weight=None, n_jobs=None))]
fn ranking_sum<'py>(
    py: Python<'py>,
    metric: &str,
    y_true: PyReadonlyArray2<'py, bool>,
    y_score: &Bound<'py, PyAny>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_jobs: Option<i64>,
) -> PyResult<f64> {
    let which = binary_metric(metric)
        .ok_or_else(|| PyTypeError::new_err(format!("unknown ranking metric {metric:?}")))?;
    with_rows!(
        py,
        y_true,
        y_score,
        mask,
        sample_weight,
        n_jobs,
        |rows, par| { label_ranking::metric_sum(&rows, which, &par) }
    )
}

/// Weighted sum over rows of DCG (`normalize=False`) or NDCG (`normalize=True`)
/// with the caller's discount vector and its running sum (see `label_ranking::dcg_sum`).
#[pyfunction]
#[pyo3(signature = (y_true, y_score, discount, discount_cumsum, ignore_ties, normalize,
                    mask=None, sample_weight=None, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn dcg_sum<'py>(
    py: Python<'py>,
    y_true: PyReadonlyArray2<'py, f64>,
    y_score: &Bound<'py, PyAny>,
    discount: PyReadonlyArray1<'py, f64>,
    discount_cumsum: PyReadonlyArray1<'py, f64>,
    ignore_ties: bool,
    normalize: bool,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_jobs: Option<i64>,
) -> PyResult<f64> {
    let discounts = Discounts {
        discount: discount.as_array(),
        cumsum: discount_cumsum.as_array(),
    };
    with_rows!(
        py,
        y_true,
        y_score,
        mask,
        sample_weight,
        n_jobs,
        |rows, par| { label_ranking::dcg_sum(&rows, &discounts, ignore_ties, normalize, &par) }
    )
}

/// Bits of the `flags` returned by `ranking_sum_checked`.
const SCORE_NONFINITE: u32 = 1;
const TRUE_NONFINITE: u32 = 2;
const TRUE_NEGATIVE: u32 = 4;
const MORE_THAN_TWO_LABELS: u32 = 8;

/// The metric a checked call computes, with the (N)DCG parameters.
enum Checked<'a> {
    Binary(RankingMetric),
    Dcg {
        discounts: Discounts<'a>,
        ignore_ties: bool,
        normalize: bool,
    },
}

fn run_checked<R: Relevance, S: Score>(
    rows: &Rows<'_, R, S>,
    what: &Checked<'_>,
    par: &Parallelism,
) -> crate::error::Result<(f64, u32, Vec<f64>)> {
    let (total, seen): (f64, Seen<R>) = match what {
        Checked::Binary(m) => label_ranking::metric_sum_checked(rows, *m, par)?,
        Checked::Dcg {
            discounts,
            ignore_ties,
            normalize,
        } => label_ranking::dcg_sum_checked(rows, discounts, *ignore_ties, *normalize, par)?,
    };
    let mut flags = 0;
    if seen.score_nonfinite {
        flags |= SCORE_NONFINITE;
    }
    if seen.true_nonfinite {
        flags |= TRUE_NONFINITE;
    }
    if seen.true_negative {
        flags |= TRUE_NEGATIVE;
    }
    if seen.labels.more {
        flags |= MORE_THAN_TWO_LABELS;
    }
    let labels = seen.labels.values().iter().map(|v| v.gain()).collect();
    Ok((total, flags, labels))
}

/// Call `run_checked` with `y_true` as `$t` and `y_score` borrowed as f64 or f32.
macro_rules! checked_for_scores {
    ($py:expr, $y_true:expr, $y_score:expr, $mask:expr, $w:expr, $what:expr, $par:expr) => {{
        let y_true: ArrayView2<'_, _> = $y_true.as_array();
        if let Ok(s) = $y_score.extract::<PyReadonlyArray2<'_, f64>>() {
            let rows = Rows {
                y_true,
                y_score: s.as_array(),
                mask: $mask,
                sample_weight: $w,
            };
            Some(run_detached($py, y_true.len(), || {
                run_checked(&rows, $what, $par)
            }))
        } else if let Ok(s) = $y_score.extract::<PyReadonlyArray2<'_, f32>>() {
            let rows = Rows {
                y_true,
                y_score: s.as_array(),
                mask: $mask,
                sample_weight: $w,
            };
            Some(run_detached($py, y_true.len(), || {
                run_checked(&rows, $what, $par)
            }))
        } else {
            None
        }
    }};
}

/// The fast path of the public label-ranking functions: the weighted row sum of
/// `metric` (`"lrl"`, `"lrap"`, `"coverage"`, `"one_error"` or `"dcg"`) computed in the
/// same pass as the value checks. Returns `None` when a dtype is not handled here
/// (the caller takes its general path), else `(sum, flags, labels)`: `flags` has bit
/// 1 = a known score is not finite, 2 = a known `y_true` is not finite, 4 = a known
/// `y_true` is negative, 8 = `y_true` has more than two distinct values (unknown
/// entries count as 0); `labels` are its (at most two) distinct values as float64
/// (empty for bool). When any flag is set, `sum` is meaningless.
#[pyfunction]
#[pyo3(signature = (metric, y_true, y_score, mask=None, sample_weight=None, n_jobs=None,
                    discount=None, discount_cumsum=None, ignore_ties=false, normalize=false))]
#[allow(clippy::too_many_arguments)]
fn ranking_sum_checked<'py>(
    py: Python<'py>,
    metric: &str,
    y_true: &Bound<'py, PyAny>,
    y_score: &Bound<'py, PyAny>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_jobs: Option<i64>,
    discount: Option<PyReadonlyArray1<'py, f64>>,
    discount_cumsum: Option<PyReadonlyArray1<'py, f64>>,
    ignore_ties: bool,
    normalize: bool,
) -> PyResult<Option<(f64, u32, Vec<f64>)>> {
    let what = match (binary_metric(metric), metric) {
        (Some(b), _) => Checked::Binary(b),
        (None, "dcg") => match (&discount, &discount_cumsum) {
            (Some(d), Some(c)) => Checked::Dcg {
                discounts: Discounts {
                    discount: d.as_array(),
                    cumsum: c.as_array(),
                },
                ignore_ties,
                normalize,
            },
            _ => {
                return Err(PyTypeError::new_err(
                    "metric 'dcg' needs discount and discount_cumsum",
                ))
            }
        },
        (None, other) => return Err(PyTypeError::new_err(format!("unknown metric {other:?}"))),
    };
    let par = parallelism(n_jobs)?;
    let mask: Option<ArrayView2<'_, bool>> = mask.as_ref().map(|m| m.as_array());
    let w: Option<ArrayView1<'_, f64>> = sample_weight.as_ref().map(|w| w.as_array());
    let out = if let Ok(t) = y_true.extract::<PyReadonlyArray2<'_, bool>>() {
        checked_for_scores!(py, t, y_score, mask, w, &what, &par)
    } else if let Ok(t) = y_true.extract::<PyReadonlyArray2<'_, i64>>() {
        checked_for_scores!(py, t, y_score, mask, w, &what, &par)
    } else if let Ok(t) = y_true.extract::<PyReadonlyArray2<'_, f64>>() {
        checked_for_scores!(py, t, y_score, mask, w, &what, &par)
    } else if let Ok(t) = y_true.extract::<PyReadonlyArray2<'_, i32>>() {
        checked_for_scores!(py, t, y_score, mask, w, &what, &par)
    } else if let Ok(t) = y_true.extract::<PyReadonlyArray2<'_, f32>>() {
        checked_for_scores!(py, t, y_score, mask, w, &what, &par)
    } else if let Ok(t) = y_true.extract::<PyReadonlyArray2<'_, u8>>() {
        checked_for_scores!(py, t, y_score, mask, w, &what, &par)
    } else if let Ok(t) = y_true.extract::<PyReadonlyArray2<'_, i8>>() {
        checked_for_scores!(py, t, y_score, mask, w, &what, &par)
    } else {
        None
    };
    match out {
        None => Ok(None),
        Some(r) => Ok(Some(r?)),
    }
}

/// The per-row figures of `multilabel_report` in one pass (see
/// `label_ranking::report_sums`): a dict with the weighted sums under
/// `label_ranking_loss`, `label_ranking_average_precision`, `coverage_error`,
/// `one_error`, `ndcg`, `one_error_relevant_errors`, `rows_with_relevant`, and
/// `weight_sum` (the number of rows without weights).
/// `y_true` is read in place: bool, or validated 0/1 int64, int32, float64 or
/// float32 (relevant = non-zero), so the report needs no bool copy of it.
#[pyfunction]
#[pyo3(signature = (y_true, y_score, mask=None, sample_weight=None, n_jobs=None))]
fn ranking_report_sums<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    y_score: &Bound<'py, PyAny>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    macro_rules! sums_for {
        ($t:ty) => {
            if let Ok(t) = y_true.extract::<PyReadonlyArray2<'py, $t>>() {
                let sums = || -> PyResult<label_ranking::ReportSums> {
                    with_rows!(py, t, y_score, mask, sample_weight, n_jobs, |rows, par| {
                        label_ranking::report_sums(&rows, &par)
                    })
                };
                Some(sums()?)
            } else {
                None
            }
        };
    }
    let r =
        match sums_for!(bool) {
            Some(r) => r,
            None => match sums_for!(i64) {
                Some(r) => r,
                None => match sums_for!(i32) {
                    Some(r) => r,
                    None => match sums_for!(f64) {
                        Some(r) => r,
                        None => match sums_for!(f32) {
                            Some(r) => r,
                            None => return Err(PyTypeError::new_err(
                                "y_true must be a 2-D bool, int64, int32, float64 or float32 array",
                            )),
                        },
                    },
                },
            },
        };
    let d = PyDict::new(py);
    for (key, v) in label_ranking::REPORT_KEYS.iter().zip(r.sums) {
        d.set_item(*key, v)?;
    }
    d.set_item("weight_sum", r.weight_sum)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ranking_sum, m)?)?;
    m.add_function(wrap_pyfunction!(dcg_sum, m)?)?;
    m.add_function(wrap_pyfunction!(ranking_sum_checked, m)?)?;
    m.add_function(wrap_pyfunction!(ranking_report_sums, m)?)?;
    Ok(())
}
