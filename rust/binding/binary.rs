//! Binding of the per-label binary metrics (`binary.rs`): average precision,
//! ROC AUC and the confusion counts behind the curves.
//!
//! Scores are accepted as float64, float32 or int64 arrays without copying (any
//! strides); the Python layer converts every other dtype first. Each function
//! returns raw values plus flags; averaging and warnings happen in Python with
//! scikit-learn's exact arithmetic and messages.

use ndarray::{Array2, ArrayView2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use super::args::{binary_metric, dtype_error, with_array, SCORE_DTYPES};
use super::{parallelism, run_detached};
use crate::binary::{self, MetricValue};
use crate::error::Result as KResult;
use crate::labels::{LabelGrid, PackedLabels};
use crate::parallel::Parallelism;
use crate::threshold::{self, AtLeast, ThresholdCounts};

type Values<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<u8>>);

fn split(py: Python<'_>, v: Vec<MetricValue>) -> Values<'_> {
    let values: Vec<f64> = v.iter().map(|m| m.value).collect();
    let flags: Vec<u8> = v.iter().map(|m| m.flags).collect();
    (values.into_pyarray(py), flags.into_pyarray(py))
}

/// Call `$body` with `$s` bound to an `ArrayView2` of the score array's own dtype;
/// a `TypeError` for another dtype.
macro_rules! with_scores2 {
    ($obj:expr, |$s:ident| $body:expr) => {
        with_array!($obj, PyReadonlyArray2, [f64, f32, i64], |$s| $body)
            .unwrap_or_else(|| Err(dtype_error("y_score", 2, SCORE_DTYPES)))
    };
}

/// Call `$body` with `$y` bound to the positives for `$k` labels: a 2-D bool
/// array, or the same bits packed eight labels per byte (a 2-D uint8 array of
/// `ceil(k / 8)` bytes per row, `numpy.packbits(y, axis=1, bitorder="little")`).
macro_rules! with_labels {
    ($obj:expr, $k:expr, |$y:ident| $body:expr) => {
        match with_array!($obj, PyReadonlyArray2, [bool], |$y| $body) {
            Some(r) => r,
            None => with_array!($obj, PyReadonlyArray2, [u8], |bits| {
                let $y = PackedLabels::new(bits, $k)?;
                $body
            })
            .unwrap_or_else(|| {
                Err(PyTypeError::new_err(
                    "y_true must be a 2-D bool array or packed uint8 label bits",
                ))
            }),
        }
    };
}

/// Run `$kernel` (an expression of `$s`, the scores, and `$y`, the positives) on a
/// call's score and label arrays, detached from the GIL.
macro_rules! on_grid {
    ($py:expr, $scores:expr, $labels:expr, |$s:ident, $y:ident| $kernel:expr) => {
        with_scores2!($scores, |$s| with_labels!($labels, $s.ncols(), |$y| {
            Ok::<_, PyErr>(run_detached($py, $s.len(), || $kernel)?)
        }))
    };
}

/// A `#[pyfunction]` over a score grid: `(y_score, y_true, sample_weight=None,
/// mask=None, <extra arguments>, n_jobs=None)`; the body sees the arrays, the
/// weight and mask views and the thread choice under the names it binds.
macro_rules! grid_pyfunction {
    (
        $(#[$doc:meta])*
        fn $name:ident[$($sig:tt)*]($($arg:ident: $ty:ty),*) -> $ret:ty;
        |$py:ident, $scores:ident, $labels:ident, $w:ident, $m:ident, $par:ident| $body:expr
    ) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (y_score, y_true, sample_weight=None, mask=None, $($sig)*))]
        #[allow(clippy::too_many_arguments)]
        fn $name<'py>(
            $py: Python<'py>,
            $scores: &Bound<'py, PyAny>,
            $labels: &Bound<'py, PyAny>,
            sample_weight: Option<PyReadonlyArray1<'py, f64>>,
            mask: Option<PyReadonlyArray2<'py, bool>>,
            $($arg: $ty,)*
            n_jobs: Option<i64>,
        ) -> PyResult<$ret> {
            let $par = parallelism(n_jobs)?;
            let $w = sample_weight.as_ref().map(|a| a.as_array());
            let $m = mask.as_ref().map(|a| a.as_array());
            $body
        }
    };
}

grid_pyfunction! {
    /// Per-label (per-column) metric values and flags.
    fn binary_metric_per_label[*, metric, max_fpr=None, n_jobs=None](
        metric: &str, max_fpr: Option<f64>
    ) -> Values<'py>;
    |py, y_score, y_true, w, m, par| {
        let metric = binary_metric(metric, max_fpr)?;
        let v = on_grid!(py, y_score, y_true, |s, y| binary::per_label(s, y, w, m, metric, &par))?;
        Ok(split(py, v))
    }
}

grid_pyfunction! {
    /// Micro-averaged metric value and flags (all known cells as one problem).
    fn binary_metric_micro[*, metric, max_fpr=None, n_jobs=None](
        metric: &str, max_fpr: Option<f64>
    ) -> (f64, u8);
    |py, y_score, y_true, w, m, par| {
        let metric = binary_metric(metric, max_fpr)?;
        let v = on_grid!(py, y_score, y_true, |s, y| binary::micro(s, y, w, m, metric, &par))?;
        Ok((v.value, v.flags))
    }
}

/// Per-row metric values and flags (unweighted, over each row's known labels).
/// `y_true` is read in place: bool, int64 or int32 (positive = `== 1`).
#[pyfunction]
#[pyo3(signature = (y_score, y_true, mask=None, *, metric, max_fpr=None, n_jobs=None))]
fn binary_metric_per_row<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    y_true: &Bound<'py, PyAny>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    metric: &str,
    max_fpr: Option<f64>,
    n_jobs: Option<i64>,
) -> PyResult<Values<'py>> {
    let metric = binary_metric(metric, max_fpr)?;
    let par = parallelism(n_jobs)?;
    let m = mask.as_ref().map(|a| a.as_array());
    let r = with_array!(y_true, PyReadonlyArray2, [bool, i64, i32], |y| {
        with_scores2!(y_score, |s| {
            let r: KResult<(Vec<f64>, Vec<u8>)> = run_detached(py, s.len(), || {
                binary::per_row_values(s, y, m, metric, &par)
            });
            Ok::<_, PyErr>(r?)
        })
    });
    let (v, f) = r.unwrap_or_else(|| Err(dtype_error("y_true", 2, "bool, int64 or int32")))?;
    Ok((v.into_pyarray(py), f.into_pyarray(py)))
}

/// `(lo, hi, third_value)` of an int64/int32 label matrix without copying it
/// (see `crate::indicator::indicator_values`); None for other dtypes.
#[pyfunction]
#[pyo3(signature = (y_true, n_jobs=None))]
fn binary_indicator_values(
    py: Python<'_>,
    y_true: &Bound<'_, PyAny>,
    n_jobs: Option<i64>,
) -> PyResult<Option<(i64, i64, bool)>> {
    let par = parallelism(n_jobs)?;
    with_array!(y_true, PyReadonlyArray2, [i64, i32], |y| {
        let (lo, hi, third) =
            run_detached(py, y.len(), || crate::indicator::indicator_values(y, &par))?;
        (wide(lo), wide(hi), third)
    })
    .map_or(Ok(None), |r| Ok(Some(r)))
}

/// A label value of either integer dtype, as the int64 Python receives.
fn wide<T: Into<i64>>(v: T) -> i64 {
    v.into()
}

type ApAuc<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<u8>>,
);

grid_pyfunction! {
    /// Per-label average precision and full ROC AUC from one sort per label:
    /// `(ap, auc, ap_flags, auc_flags)`.
    fn binary_ap_auc_per_label[n_jobs=None]() -> ApAuc<'py>;
    |py, y_score, y_true, w, m, par| {
        let (ap, auc) =
            on_grid!(py, y_score, y_true, |s, y| binary::per_label_ap_auc(s, y, w, m, &par))?;
        let (apv, apf) = split(py, ap);
        let (auv, auf) = split(py, auc);
        Ok((apv, auv, apf, auf))
    }
}

grid_pyfunction! {
    /// Micro-averaged average precision and full ROC AUC from one pass:
    /// `(ap, auc, ap_flag, auc_flag)`.
    fn binary_ap_auc_micro[n_jobs=None]() -> (f64, f64, u8, u8);
    |py, y_score, y_true, w, m, par| {
        let (a, b) = on_grid!(py, y_score, y_true, |s, y| binary::micro_ap_auc(s, y, w, m, &par))?;
        Ok((a.value, b.value, a.flags, b.flags))
    }
}

/// Per-label (weighted) positive count over known rows.
/// Packed `y_true` (uint8) needs `n_labels`.
#[pyfunction]
#[pyo3(signature = (y_true, sample_weight=None, mask=None, *, n_labels=None))]
fn binary_support<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    n_labels: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let w = sample_weight.as_ref().map(|a| a.as_array());
    let m = mask.as_ref().map(|a| a.as_array());
    let r = with_labels!(y_true, n_labels.unwrap_or(0), |y| {
        let n = y.dim().0.saturating_mul(y.dim().1);
        Ok::<_, PyErr>(run_detached(py, n, || binary::support(y, w, m))?)
    })?;
    Ok(r.into_pyarray(py))
}

type Counts<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i64>>,
);

/// `(fps, tps, threshold_rows)` of one binary problem (zero-weight rows dropped).
#[pyfunction]
#[pyo3(signature = (y_score, y_true, sample_weight=None))]
fn binary_counts<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    y_true: PyReadonlyArray1<'py, bool>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Counts<'py>> {
    let y = y_true.as_array();
    let w = sample_weight.as_ref().map(|a| a.as_array());
    let r = with_array!(y_score, PyReadonlyArray1, [f64, f32, i64], |s| {
        run_detached(py, s.len(), || binary::binary_counts(s, y, w))?
    });
    let (fps, tps, rows) = r.ok_or_else(|| dtype_error("y_score", 1, SCORE_DTYPES))?;
    let rows: Vec<i64> = rows
        .into_iter()
        .map(|r| i64::try_from(r).unwrap_or(i64::MAX))
        .collect();
    Ok((
        fps.into_pyarray(py),
        tps.into_pyarray(py),
        rows.into_pyarray(py),
    ))
}

type Indicator<'py> = (i64, i64, bool, Option<Bound<'py, PyArray2<u8>>>);

/// One parallel pass over an int64/int32 label matrix: `(lo, hi, third_value,
/// positives)`, `positives = (y == 1)` packed eight labels per byte (C order,
/// `numpy.packbits(y == 1, axis=1, bitorder="little")`) when the matrix holds at
/// most two distinct values, else None. Returns None for other dtypes.
#[pyfunction]
#[pyo3(signature = (y_true, n_jobs=None))]
fn binary_indicator_summary<'py>(
    py: Python<'py>,
    y_true: &Bound<'py, PyAny>,
    n_jobs: Option<i64>,
) -> PyResult<Option<Indicator<'py>>> {
    let par = parallelism(n_jobs)?;
    let r = with_array!(y_true, PyReadonlyArray2, [i64, i32], |y| {
        let (n, k) = y.dim();
        let (lo, hi, third, bits) =
            run_detached(py, y.len(), || crate::indicator::indicator_packed(y, &par))?;
        let arr = if third {
            None
        } else {
            let a = Array2::from_shape_vec((n, k.div_ceil(8)), bits)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            Some(a.into_pyarray(py))
        };
        (wide(lo), wide(hi), third, arr)
    });
    Ok(r)
}

type CountArrays<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
);

fn counts_any<S: AtLeast + numpy::Element, L: LabelGrid>(
    py: Python<'_>,
    s: ArrayView2<S>,
    y: L,
    cut: &Bound<'_, PyAny>,
    m: Option<ArrayView2<bool>>,
    par: Parallelism,
) -> PyResult<ThresholdCounts> {
    let t = cut
        .extract::<PyReadonlyArray1<'_, S>>()
        .map_err(|_| PyTypeError::new_err("threshold must be a 1-D array of y_score's dtype"))?;
    let t = t.as_array();
    if t.len() > 1 {
        return Err(PyValueError::new_err(
            "threshold must hold at most one value",
        ));
    }
    let t = t.first().copied();
    let r: KResult<ThresholdCounts> = run_detached(py, s.len(), || {
        threshold::threshold_counts(s, y, m, t, &par)
    });
    Ok(r?)
}

/// Per-label `(known, support, predicted, true_positive)` counts over known cells
/// (see `threshold::threshold_counts`). `threshold` is a 1-D array of y_score's
/// dtype holding the smallest predicted score, or empty when no score is predicted.
#[pyfunction]
#[pyo3(signature = (y_score, y_true, threshold, mask=None, n_jobs=None))]
fn threshold_counts<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    y_true: &Bound<'py, PyAny>,
    threshold: &Bound<'py, PyAny>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    n_jobs: Option<i64>,
) -> PyResult<CountArrays<'py>> {
    let par = parallelism(n_jobs)?;
    let m = mask.as_ref().map(|a| a.as_array());
    let r = with_scores2!(y_score, |s| with_labels!(y_true, s.ncols(), |y| {
        counts_any(py, s, y, threshold, m, par)
    }))?;
    let arr = |v: Vec<u64>| -> Bound<'py, PyArray1<i64>> {
        v.into_iter()
            .map(|c| i64::try_from(c).unwrap_or(i64::MAX))
            .collect::<Vec<i64>>()
            .into_pyarray(py)
    };
    Ok((
        arr(r.known),
        arr(r.support),
        arr(r.predicted),
        arr(r.true_positive),
    ))
}

/// Whether every value of a contiguous 1-D float64/float32 array is finite.
#[pyfunction]
#[pyo3(signature = (x, n_jobs=None))]
fn all_finite(py: Python<'_>, x: &Bound<'_, PyAny>, n_jobs: Option<i64>) -> PyResult<bool> {
    let par = parallelism(n_jobs)?;
    let r = with_array!(x, PyReadonlyArray1, [f64, f32], |v| {
        let Some(s) = v.as_slice() else {
            return Err(PyValueError::new_err("all_finite needs a contiguous array"));
        };
        run_detached(py, s.len(), || crate::score::all_finite(s, &par))?
    });
    r.ok_or_else(|| dtype_error("x", 1, "float64 or float32"))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(binary_metric_per_label, m)?)?;
    m.add_function(wrap_pyfunction!(binary_metric_micro, m)?)?;
    m.add_function(wrap_pyfunction!(binary_metric_per_row, m)?)?;
    m.add_function(wrap_pyfunction!(binary_support, m)?)?;
    m.add_function(wrap_pyfunction!(binary_ap_auc_per_label, m)?)?;
    m.add_function(wrap_pyfunction!(binary_ap_auc_micro, m)?)?;
    m.add_function(wrap_pyfunction!(binary_counts, m)?)?;
    m.add_function(wrap_pyfunction!(binary_indicator_summary, m)?)?;
    m.add_function(wrap_pyfunction!(binary_indicator_values, m)?)?;
    m.add_function(wrap_pyfunction!(threshold_counts, m)?)?;
    m.add_function(wrap_pyfunction!(all_finite, m)?)?;
    Ok(())
}
