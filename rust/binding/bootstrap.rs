//! Binding of the bootstrap kernels (`crate::bootstrap`).
//!
//! Inputs come validated from `toxeval.stats` (positives as `bool`, scores as
//! float64, float32 or int64 read in place, optional `bool` mask, float64 weights,
//! strata as `uint32` codes). Outputs are float64 arrays with NaN where the metric
//! is undefined; the Python layer counts and excludes those.

use ndarray::{Array2, ArrayView1};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::bootstrap::ap_distribution::{ap_distribution, ScoreMatrix};
use crate::bootstrap::resample::Strata;
use crate::bootstrap::row_values::{self, RowMean, RowMeans};
use crate::bootstrap::weighted_ap::{ApAverage, ApStatistic};
use crate::bootstrap::{self, Statistic};
use crate::parallel::Parallelism;
use crate::ranking::RankingMetric;

use super::{parallelism, run_detached};

/// Evaluate `$body` with `$s` bound to `$obj` as a 2-D float64, float32 or int64 view.
macro_rules! with_score {
    ($obj:expr, |$s:ident| $body:expr) => {{
        if let Ok(a) = $obj.extract::<PyReadonlyArray2<'_, f64>>() {
            let $s = a.as_array();
            $body
        } else if let Ok(a) = $obj.extract::<PyReadonlyArray2<'_, f32>>() {
            let $s = a.as_array();
            $body
        } else if let Ok(a) = $obj.extract::<PyReadonlyArray2<'_, i64>>() {
            let $s = a.as_array();
            $body
        } else {
            return Err(PyTypeError::new_err(
                "y_score must be a 2-D float64, float32 or int64 numpy array",
            ));
        }
    }};
}

fn strata_of(
    n_rows: usize,
    codes: Option<PyReadonlyArray1<'_, u32>>,
    n_strata: usize,
) -> PyResult<Strata> {
    Ok(match codes {
        None => Strata::single(n_rows)?,
        Some(c) => {
            let c = c.as_array();
            if c.len() != n_rows {
                return Err(PyValueError::new_err("strata must have one entry per row"));
            }
            Strata::from_codes(&c.to_vec(), n_strata)?
        }
    })
}

fn weights(n: usize, sample_weight: Option<&PyReadonlyArray1<'_, f64>>) -> PyResult<Vec<f64>> {
    match sample_weight {
        None => Ok(vec![1.0; n]),
        Some(w) => {
            let w = w.as_array();
            if w.len() != n {
                return Err(PyValueError::new_err(
                    "sample_weight must have one entry per row",
                ));
            }
            Ok(w.to_vec())
        }
    }
}

fn to_2d(py: Python<'_>, v: Vec<f64>, cols: usize) -> PyResult<Bound<'_, PyArray2<f64>>> {
    let rows = v.len().checked_div(cols).unwrap_or(0);
    let a = Array2::from_shape_vec((rows, cols), v)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(a.into_pyarray(py))
}

fn ap_statistic(
    py: Python<'_>,
    y_score: &Bound<'_, PyAny>,
    y_pos: &PyReadonlyArray2<'_, bool>,
    mask: Option<&PyReadonlyArray2<'_, bool>>,
    average: ApAverage,
    keep_keys: bool,
    par: &Parallelism,
) -> PyResult<ApStatistic> {
    let y = y_pos.as_array();
    let m = mask.map(|m| m.as_array());
    with_score!(y_score, |s| Ok(run_detached(py, s.len(), || {
        ApStatistic::new(s, y, m, average, keep_keys, par)
    })?))
}

/// One system's scores as read from Python, kept borrowed while the kernel runs.
enum ReadScores<'py> {
    F64(PyReadonlyArray2<'py, f64>),
    F32(PyReadonlyArray2<'py, f32>),
    I64(PyReadonlyArray2<'py, i64>),
}

impl<'py> ReadScores<'py> {
    /// `obj` as a 2-D float64, float32 or int64 array, or the dtype `TypeError`.
    fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = obj.extract() {
            Ok(ReadScores::F64(a))
        } else if let Ok(a) = obj.extract() {
            Ok(ReadScores::F32(a))
        } else if let Ok(a) = obj.extract() {
            Ok(ReadScores::I64(a))
        } else {
            Err(PyTypeError::new_err(
                "y_score must be a 2-D float64, float32 or int64 numpy array",
            ))
        }
    }

    fn view(&self) -> ScoreMatrix<'_> {
        match self {
            ReadScores::F64(a) => ScoreMatrix::F64(a.as_array()),
            ReadScores::F32(a) => ScoreMatrix::F32(a.as_array()),
            ReadScores::I64(a) => ScoreMatrix::I64(a.as_array()),
        }
    }
}

/// The drawn row indices of the given resamples (`len(resamples) x n_rows`).
#[pyfunction]
#[pyo3(signature = (n_rows, seed, resamples, strata=None, n_strata=1))]
fn bootstrap_indices<'py>(
    py: Python<'py>,
    n_rows: usize,
    seed: u64,
    resamples: Vec<u64>,
    strata: Option<PyReadonlyArray1<'py, u32>>,
    n_strata: usize,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let st = strata_of(n_rows, strata, n_strata)?;
    let mut out = Vec::with_capacity(resamples.len() * n_rows);
    for &b in &resamples {
        out.extend(st.indices(seed, b).into_iter().map(i64::from));
    }
    let a = Array2::from_shape_vec((resamples.len(), n_rows), out)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(a.into_pyarray(py))
}

/// Bootstrap distribution of AP for one or two systems on the same resamples:
/// `n_resamples x (k_a + k_b)`.
#[pyfunction]
#[pyo3(signature = (y_scores, y_pos, mask, sample_weight, *, average, seed, n_resamples, strata=None, n_strata=1, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn bootstrap_ap<'py>(
    py: Python<'py>,
    y_scores: Vec<Bound<'py, PyAny>>,
    y_pos: PyReadonlyArray2<'py, bool>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    average: &str,
    seed: u64,
    n_resamples: usize,
    strata: Option<PyReadonlyArray1<'py, u32>>,
    n_strata: usize,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let par = parallelism(n_jobs)?;
    let average = ApAverage::parse(average)?;
    let y = y_pos.as_array();
    let st = strata_of(y.nrows(), strata, n_strata)?;
    let read = y_scores
        .iter()
        .map(ReadScores::extract)
        .collect::<PyResult<Vec<_>>>()?;
    let scores: Vec<ScoreMatrix<'_>> = read.iter().map(ReadScores::view).collect();
    let m = mask.as_ref().map(|m| m.as_array());
    let sw = sample_weight.map(|w| w.as_array().to_vec());
    let (out, width) = py.detach(|| {
        ap_distribution(
            &scores,
            y,
            m,
            sw.as_deref(),
            average,
            &st,
            seed,
            n_resamples,
            &par,
        )
    })?;
    to_2d(py, out, width)
}

/// The bootstrap distribution of `stats` on shared resamples, GIL released.
fn run_distribution<'py, T: Statistic>(
    py: Python<'py>,
    stats: &[T],
    strata: &Strata,
    sample_weight: Option<&PyReadonlyArray1<'_, f64>>,
    seed: u64,
    n_resamples: usize,
    par: &Parallelism,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let sw = sample_weight.map(|w| w.as_array().to_vec());
    let width: usize = stats.iter().map(|s| s.n_out()).sum();
    let dyns: Vec<&dyn Statistic> = stats.iter().map(|s| s as &dyn Statistic).collect();
    let out = py
        .detach(|| bootstrap::distribution(&dyns, strata, sw.as_deref(), seed, n_resamples, par))?;
    to_2d(py, out, width)
}

/// Leave-one-out AP values (`n_rows x k`).
#[pyfunction]
#[pyo3(signature = (y_score, y_pos, mask, sample_weight, *, average, n_jobs=None))]
fn bootstrap_ap_jackknife<'py>(
    py: Python<'py>,
    y_score: Bound<'py, PyAny>,
    y_pos: PyReadonlyArray2<'py, bool>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    average: &str,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let par = parallelism(n_jobs)?;
    let average = ApAverage::parse(average)?;
    let w = weights(y_pos.as_array().nrows(), sample_weight.as_ref())?;
    let st = ap_statistic(py, &y_score, &y_pos, mask.as_ref(), average, false, &par)?;
    let out = py.detach(|| st.jackknife(&w, &par))?;
    to_2d(py, out, st.n_out())
}

/// Approximate randomization for AP: per permutation, the AP of the mixed
/// systems A and B (`n_perm x 2k`).
#[pyfunction]
#[pyo3(signature = (score_a, score_b, y_pos, mask, sample_weight, *, average, seed, n_permutations, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn bootstrap_ap_permutations<'py>(
    py: Python<'py>,
    score_a: Bound<'py, PyAny>,
    score_b: Bound<'py, PyAny>,
    y_pos: PyReadonlyArray2<'py, bool>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    average: &str,
    seed: u64,
    n_permutations: usize,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    // The permutations merge the two systems' sort keys, and a key encodes its dtype:
    // mixed systems are compared in one dtype, which the caller chooses.
    let (da, db) = (score_a.getattr("dtype")?, score_b.getattr("dtype")?);
    if !da.eq(&db)? {
        return Err(PyTypeError::new_err(format!(
            "score_a and score_b have different dtypes ({da} and {db}): convert both to one"
        )));
    }
    let par = parallelism(n_jobs)?;
    let average = ApAverage::parse(average)?;
    let w = weights(y_pos.as_array().nrows(), sample_weight.as_ref())?;
    let a = ap_statistic(py, &score_a, &y_pos, mask.as_ref(), average, true, &par)?;
    let b = ap_statistic(py, &score_b, &y_pos, mask.as_ref(), average, true, &par)?;
    let out = py.detach(|| bootstrap::ap_permutations(&a, &b, &w, seed, n_permutations, &par))?;
    to_2d(py, out, 2 * a.n_out())
}

/// Per-row values of `"lrl"`, `"lrap"`, `"coverage"` or `"one_error"`.
#[pyfunction]
#[pyo3(signature = (metric, y_true, y_score, mask=None, n_jobs=None))]
fn bootstrap_row_values<'py>(
    py: Python<'py>,
    metric: &str,
    y_true: PyReadonlyArray2<'py, bool>,
    y_score: Bound<'py, PyAny>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let par = parallelism(n_jobs)?;
    let metric = match metric {
        "lrl" => RankingMetric::LabelRankingLoss,
        "lrap" => RankingMetric::Lrap,
        "coverage" => RankingMetric::Coverage,
        "one_error" => RankingMetric::OneError,
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown row metric {metric:?}"
            )))
        }
    };
    let y = y_true.as_array();
    let m = mask.as_ref().map(|m| m.as_array());
    let v = with_score!(y_score, |s| run_detached(py, s.len(), || {
        row_values::ranking_row_values(y, s, m, metric, &par)
    }))?;
    Ok(v.into_pyarray(py))
}

/// Per-row values of DCG or NDCG (`discount`, `cumsum` as in `_core.dcg_sum`).
#[pyfunction]
#[pyo3(signature = (gains, y_score, discount, cumsum, ignore_ties, normalize, mask=None, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn bootstrap_dcg_row_values<'py>(
    py: Python<'py>,
    gains: PyReadonlyArray2<'py, f64>,
    y_score: Bound<'py, PyAny>,
    discount: PyReadonlyArray1<'py, f64>,
    cumsum: PyReadonlyArray1<'py, f64>,
    ignore_ties: bool,
    normalize: bool,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let par = parallelism(n_jobs)?;
    let g = gains.as_array();
    let (d, c) = (discount.as_array(), cumsum.as_array());
    let m = mask.as_ref().map(|m| m.as_array());
    let v = with_score!(y_score, |s| run_detached(py, s.len(), || {
        row_values::dcg_row_values(g, s, m, d, c, ignore_ties, normalize, &par)
    }))?;
    Ok(v.into_pyarray(py))
}

/// Bootstrap distribution of the weighted mean of each column of `values`
/// (one column per system): `n_resamples x n_columns`.
#[pyfunction]
#[pyo3(signature = (values, sample_weight, *, seed, n_resamples, strata=None, n_strata=1, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn bootstrap_row_means<'py>(
    py: Python<'py>,
    values: PyReadonlyArray2<'py, f64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    seed: u64,
    n_resamples: usize,
    strata: Option<PyReadonlyArray1<'py, u32>>,
    n_strata: usize,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let par = parallelism(n_jobs)?;
    let v = values.as_array();
    let st = strata_of(v.nrows(), strata, n_strata)?;
    let stats = [RowMeans::new(v)];
    run_distribution(
        py,
        &stats,
        &st,
        sample_weight.as_ref(),
        seed,
        n_resamples,
        &par,
    )
}

/// Leave-one-out weighted means of `values`.
#[pyfunction]
#[pyo3(signature = (values, sample_weight=None))]
fn bootstrap_row_mean_jackknife<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let v: ArrayView1<'_, f64> = values.as_array();
    let w = weights(v.len(), sample_weight.as_ref())?;
    let out = RowMean::new(v).jackknife(&w, &Parallelism::sequential())?;
    Ok(out.into_pyarray(py))
}

/// Approximate randomization for per-row metrics (`n_perm x 2`).
#[pyfunction]
#[pyo3(signature = (values_a, values_b, sample_weight, *, seed, n_permutations, n_jobs=None))]
fn bootstrap_row_mean_permutations<'py>(
    py: Python<'py>,
    values_a: PyReadonlyArray1<'py, f64>,
    values_b: PyReadonlyArray1<'py, f64>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    seed: u64,
    n_permutations: usize,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let par = parallelism(n_jobs)?;
    let (va, vb) = (values_a.as_array(), values_b.as_array());
    if va.len() != vb.len() {
        return Err(PyValueError::new_err(
            "the two systems have different numbers of rows",
        ));
    }
    let w = weights(va.len(), sample_weight.as_ref())?;
    let (a, b) = (RowMean::new(va), RowMean::new(vb));
    let out =
        py.detach(|| row_values::row_mean_permutations(&a, &b, &w, seed, n_permutations, &par))?;
    to_2d(py, out, 2)
}

/// The swap flags of permutation `permutation` (see `crate::bootstrap::swap_flags`).
#[pyfunction]
fn bootstrap_swap_flags<'py>(
    py: Python<'py>,
    n_rows: usize,
    seed: u64,
    permutation: u64,
) -> Bound<'py, PyArray1<bool>> {
    bootstrap::swap_flags(seed, permutation, n_rows).into_pyarray(py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bootstrap_indices, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_ap, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_ap_jackknife, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_ap_permutations, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_row_values, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_dcg_row_values, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_row_means, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_row_mean_jackknife, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_row_mean_permutations, m)?)?;
    m.add_function(wrap_pyfunction!(bootstrap_swap_flags, m)?)?;
    Ok(())
}
