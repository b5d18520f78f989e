//! Binding of the per-row label-ranking kernels (`crate::ranking`).
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

use crate::parallel::Parallelism;
use crate::ranking::{self, Discounts, RankingMetric, Relevance, Rows, Seen};
use crate::score::Score;

use super::args::{dtype_error, with_array, RankingMetricName, SCORE_DTYPES};
use super::{parallelism, run_detached};

/// Bind `$rows` to the [`Rows`] of the `y_true` view, the score array (any score
/// dtype), and the `(mask, sample_weight, n_jobs)` arguments in `$options`, and
/// `$par` to the call's parallelism; run `$body` with the GIL released for large
/// inputs.
macro_rules! with_rows {
    ($py:expr, $y_true:expr, $y_score:expr, $options:expr,
     |$rows:ident, $par:ident| $body:expr) => {{
        let (mask, sample_weight, n_jobs) = &$options;
        let $par = parallelism(*n_jobs)?;
        let y_true = $y_true;
        let mask = mask.as_ref().map(|m| m.as_array());
        let sample_weight = sample_weight.as_ref().map(|w| w.as_array());
        let elements = y_true.len();
        let out = with_array!($y_score, PyReadonlyArray2, [f64, f32, i64], |y_score| {
            let $rows = Rows {
                y_true,
                y_score,
                mask,
                sample_weight,
            };
            run_detached($py, elements, || $body)
        })
        .ok_or_else(|| dtype_error("y_score", 2, SCORE_DTYPES))?;
        Ok(out?)
    }};
}

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
    let which = match RankingMetricName::parse(metric) {
        Ok(RankingMetricName::Binary(m)) => m,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "unknown ranking metric {metric:?}"
            )))
        }
    };
    let (y, options) = (y_true.as_array(), (mask, sample_weight, n_jobs));
    with_rows!(py, y, y_score, options, |rows, par| {
        ranking::metric_sum(&rows, which, &par)
    })
}

/// Weighted sum over rows of DCG (`normalize=False`) or NDCG (`normalize=True`)
/// with the caller's discount vector and its running sum (see `ranking::dcg_sum`).
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
    let (y, options) = (y_true.as_array(), (mask, sample_weight, n_jobs));
    with_rows!(py, y, y_score, options, |rows, par| {
        ranking::dcg_sum(&rows, &discounts, ignore_ties, normalize, &par)
    })
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
        Checked::Binary(m) => ranking::metric_sum_checked(rows, *m, par)?,
        Checked::Dcg {
            discounts,
            ignore_ties,
            normalize,
        } => ranking::dcg_sum_checked(rows, discounts, *ignore_ties, *normalize, par)?,
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
    let what = match RankingMetricName::parse(metric)? {
        RankingMetricName::Binary(b) => Checked::Binary(b),
        RankingMetricName::Dcg => match (&discount, &discount_cumsum) {
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
    };
    let par = parallelism(n_jobs)?;
    let mask: Option<ArrayView2<'_, bool>> = mask.as_ref().map(|m| m.as_array());
    let w: Option<ArrayView1<'_, f64>> = sample_weight.as_ref().map(|w| w.as_array());
    let out = with_array!(
        y_true,
        PyReadonlyArray2,
        [bool, i64, f64, i32, f32, u8, i8],
        |y_true| {
            with_array!(y_score, PyReadonlyArray2, [f64, f32], |y_score| {
                let rows = Rows {
                    y_true,
                    y_score,
                    mask,
                    sample_weight: w,
                };
                run_detached(py, y_true.len(), || run_checked(&rows, &what, &par))
            })
        }
    )
    .flatten();
    match out {
        None => Ok(None),
        Some(r) => Ok(Some(r?)),
    }
}

/// The per-row figures of `multilabel_report` in one pass (see
/// `ranking::report_sums`): a dict with the weighted sums under
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
    let options = (mask, sample_weight, n_jobs);
    let r = with_array!(
        y_true,
        PyReadonlyArray2,
        [bool, i64, i32, f64, f32],
        |y_true| {
            let sums: PyResult<ranking::ReportSums> =
                with_rows!(py, y_true, y_score, options, |rows, par| {
                    ranking::report_sums(&rows, &par)
                });
            sums?
        }
    )
    .ok_or_else(|| dtype_error("y_true", 2, "bool, int64, int32, float64 or float32"))?;
    let d = PyDict::new(py);
    for (key, v) in ranking::REPORT_KEYS.iter().zip(r.sums) {
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
