//! Binding of the per-row label-ranking kernels (`crate::label_ranking`).
//!
//! Each function takes validated arrays from `toxeval.metrics._label_ranking`:
//! relevance as `bool` (ranking loss, LRAP, coverage, one-error) or float64 gains
//! ((N)DCG), scores as float64, float32 or int64 (dispatched here, never converted), an
//! optional `bool` mask and float64 weights, and returns the weighted row sum
//! `sum_i w_i * metric_i`; the Python layer divides by the weight sum.

use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::label_ranking::{self, Discounts, Rows};

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

/// Weighted sum over rows of the ranking loss (see `label_ranking::label_ranking_loss_sum`).
#[pyfunction]
#[pyo3(signature = (y_true, y_score, mask=None, sample_weight=None, n_jobs=None))]
fn label_ranking_loss_sum<'py>(
    py: Python<'py>,
    y_true: PyReadonlyArray2<'py, bool>,
    y_score: &Bound<'py, PyAny>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_jobs: Option<i64>,
) -> PyResult<f64> {
    with_rows!(
        py,
        y_true,
        y_score,
        mask,
        sample_weight,
        n_jobs,
        |rows, par| { label_ranking::label_ranking_loss_sum(&rows, &par) }
    )
}

/// Weighted sum over rows of LRAP (see `label_ranking::lrap_sum`).
#[pyfunction]
#[pyo3(signature = (y_true, y_score, mask=None, sample_weight=None, n_jobs=None))]
fn label_ranking_average_precision_sum<'py>(
    py: Python<'py>,
    y_true: PyReadonlyArray2<'py, bool>,
    y_score: &Bound<'py, PyAny>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_jobs: Option<i64>,
) -> PyResult<f64> {
    with_rows!(
        py,
        y_true,
        y_score,
        mask,
        sample_weight,
        n_jobs,
        |rows, par| { label_ranking::lrap_sum(&rows, &par) }
    )
}

/// Weighted sum over rows of the coverage (see `label_ranking::coverage_sum`).
#[pyfunction]
#[pyo3(signature = (y_true, y_score, mask=None, sample_weight=None, n_jobs=None))]
fn coverage_error_sum<'py>(
    py: Python<'py>,
    y_true: PyReadonlyArray2<'py, bool>,
    y_score: &Bound<'py, PyAny>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_jobs: Option<i64>,
) -> PyResult<f64> {
    with_rows!(
        py,
        y_true,
        y_score,
        mask,
        sample_weight,
        n_jobs,
        |rows, par| { label_ranking::coverage_sum(&rows, &par) }
    )
}

/// Weighted sum over rows of the one-error (see `label_ranking::one_error_sum`).
#[pyfunction]
#[pyo3(signature = (y_true, y_score, mask=None, sample_weight=None, n_jobs=None))]
fn one_error_sum<'py>(
    py: Python<'py>,
    y_true: PyReadonlyArray2<'py, bool>,
    y_score: &Bound<'py, PyAny>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    n_jobs: Option<i64>,
) -> PyResult<f64> {
    with_rows!(
        py,
        y_true,
        y_score,
        mask,
        sample_weight,
        n_jobs,
        |rows, par| { label_ranking::one_error_sum(&rows, &par) }
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

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(label_ranking_loss_sum, m)?)?;
    m.add_function(wrap_pyfunction!(label_ranking_average_precision_sum, m)?)?;
    m.add_function(wrap_pyfunction!(coverage_error_sum, m)?)?;
    m.add_function(wrap_pyfunction!(one_error_sum, m)?)?;
    m.add_function(wrap_pyfunction!(dcg_sum, m)?)?;
    Ok(())
}
