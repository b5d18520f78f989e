//! Binding of the mergeable AP/ROC AUC states (`runs/`): runs from a chunk of
//! cells, merges, AP/ROC AUC of runs (per label and micro), and the range-by-range
//! reducer, whose state travels through Python as a plain tuple so that it pickles.
//!
//! Runs cross the boundary as three 1-D arrays `(keys uint64, pos float64, neg
//! float64)`; runs that come from Python are checked (equal lengths, strictly
//! descending keys) before any kernel reads them.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use super::args::{dtype_error, with_array, SCORE_DTYPES};
use super::{parallelism, run_detached};
use crate::binary::MetricValue;
use crate::labels::PackedLabels;
use crate::numeric::CompSum;
use crate::runs::{self, Reducer, Runs, RunsRef};

type RunsArrays<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);
type RunsIn<'py> = (
    PyReadonlyArray1<'py, u64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
);
/// `(ap, roc_auc, ap_flags, roc_auc_flags)`.
type Pair = (f64, f64, u8, u8);
/// The reducer's state: `([tp, fp, ap_sum, ap_comp, auc_sum, auc_comp, pending_pos,
/// pending_neg, first_precision], pending_key, dec, inc, n_thresholds)`;
/// `pending_key` is `None` before the first run.
type ReducerState = (Vec<f64>, Option<u64>, bool, bool, u64);

fn to_py(py: Python<'_>, r: Runs) -> RunsArrays<'_> {
    (
        r.keys.into_pyarray(py),
        r.pos.into_pyarray(py),
        r.neg.into_pyarray(py),
    )
}

fn pair(v: (MetricValue, MetricValue)) -> Pair {
    (v.0.value, v.1.value, v.0.flags, v.1.flags)
}

fn checked<'a>(r: &'a RunsIn<'_>) -> PyResult<RunsRef<'a>> {
    Ok(RunsRef::checked(
        r.0.as_slice()?,
        r.1.as_slice()?,
        r.2.as_slice()?,
    )?)
}

/// Per label of an `n x k` chunk: its runs, and the known positives and negatives.
/// `y_true` is a 2-D bool array or packed label bits (as `binary_ap_auc_per_label`).
#[pyfunction]
#[pyo3(signature = (y_score, y_true, sample_weight=None, mask=None, n_jobs=None))]
#[allow(clippy::type_complexity)]
fn runs_build<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    y_true: &Bound<'py, PyAny>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    mask: Option<numpy::PyReadonlyArray2<'py, bool>>,
    n_jobs: Option<i64>,
) -> PyResult<(Vec<RunsArrays<'py>>, Vec<u64>, Vec<u64>)> {
    let par = parallelism(n_jobs)?;
    let w = sample_weight.as_ref().map(|a| a.as_array());
    let m = mask.as_ref().map(|a| a.as_array());
    let built = with_array!(y_score, PyReadonlyArray2, [f64, f32, i64], |s| {
        let n = s.len();
        match with_array!(y_true, PyReadonlyArray2, [bool], |y| {
            run_detached(py, n, || runs::build_runs(s, y, w, m, &par))
        }) {
            Some(r) => Ok(r?),
            None => with_array!(y_true, PyReadonlyArray2, [u8], |bits| {
                let y = PackedLabels::new(bits, s.ncols())?;
                Ok::<_, PyErr>(run_detached(py, n, || runs::build_runs(s, y, w, m, &par))?)
            })
            .unwrap_or_else(|| {
                Err(PyTypeError::new_err(
                    "y_true must be a 2-D bool array or packed uint8 label bits",
                ))
            }),
        }
    })
    .unwrap_or_else(|| Err(dtype_error("y_score", 2, SCORE_DTYPES)))?;
    let mut out = Vec::with_capacity(built.len());
    let (mut n_pos, mut n_neg) = (Vec::new(), Vec::new());
    for lr in built {
        n_pos.push(lr.n_pos);
        n_neg.push(lr.n_neg);
        out.push(to_py(py, lr.runs));
    }
    Ok((out, n_pos, n_neg))
}

/// Merge any number of runs into one (equal keys added).
#[pyfunction]
fn runs_merge<'py>(py: Python<'py>, parts: Vec<RunsIn<'py>>) -> PyResult<RunsArrays<'py>> {
    let views = parts.iter().map(checked).collect::<PyResult<Vec<_>>>()?;
    let total: usize = views.iter().map(|v| v.len()).sum();
    let merged = run_detached(py, total, || runs::merge_many(&views));
    Ok(to_py(py, merged))
}

/// AP and ROC AUC with flags of each label's runs, and of all labels' runs as one
/// problem (the micro average): `(ap, auc, ap_flags, auc_flags, micro)`.
#[pyfunction]
#[pyo3(signature = (parts, n_pos, n_neg, n_jobs=None))]
#[allow(clippy::type_complexity)]
fn runs_ap_auc<'py>(
    py: Python<'py>,
    parts: Vec<RunsIn<'py>>,
    n_pos: Vec<u64>,
    n_neg: Vec<u64>,
    n_jobs: Option<i64>,
) -> PyResult<(
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<u8>>,
    Pair,
)> {
    if n_pos.len() != parts.len() || n_neg.len() != parts.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "runs_ap_auc needs one positive and one negative count per label",
        ));
    }
    let par = parallelism(n_jobs)?;
    let views = parts.iter().map(checked).collect::<PyResult<Vec<_>>>()?;
    let total: usize = views.iter().map(|v| v.len()).sum();
    let (per, micro) = run_detached(py, total, || {
        let per = par.map(views.len(), total, |j| {
            runs::ap_auc(views[j], n_pos[j], n_neg[j])
        });
        let micro = runs::micro_ap_auc(&views, n_pos.iter().sum(), n_neg.iter().sum(), &par);
        (per, micro)
    });
    let per = per?;
    let ap: Vec<f64> = per.iter().map(|v| v.0.value).collect();
    let auc: Vec<f64> = per.iter().map(|v| v.1.value).collect();
    let apf: Vec<u8> = per.iter().map(|v| v.0.flags).collect();
    let aucf: Vec<u8> = per.iter().map(|v| v.1.flags).collect();
    Ok((
        ap.into_pyarray(py),
        auc.into_pyarray(py),
        apf.into_pyarray(py),
        aucf.into_pyarray(py),
        pair(micro),
    ))
}

fn reducer_of(s: ReducerState) -> PyResult<Reducer> {
    let (f, key, dec, inc, n_thresholds) = s;
    let [tp, fp, a, ac, u, uc, p, q, first_precision] = <[f64; 9]>::try_from(f)
        .map_err(|_| pyo3::exceptions::PyValueError::new_err("not a runs reducer state"))?;
    Ok(Reducer {
        tp,
        fp,
        ap: CompSum::from_parts(a, ac),
        auc: CompSum::from_parts(u, uc),
        pending: key.map(|k| (k, p, q)),
        dec,
        inc,
        n_thresholds,
        first_precision,
    })
}

fn state_of(r: &Reducer) -> ReducerState {
    let (a, ac) = r.ap.parts();
    let (u, uc) = r.auc.parts();
    let (k, p, q) = match r.pending {
        Some((k, p, q)) => (Some(k), p, q),
        None => (None, 0.0, 0.0),
    };
    (
        vec![r.tp, r.fp, a, ac, u, uc, p, q, r.first_precision],
        k,
        r.dec,
        r.inc,
        r.n_thresholds,
    )
}

/// The state of a reducer that has seen nothing.
#[pyfunction]
fn runs_reducer_new() -> ReducerState {
    state_of(&Reducer::new())
}

/// Feed runs (keys not above any fed before) to a reducer state; the new state.
#[pyfunction]
fn runs_reducer_feed<'py>(
    py: Python<'py>,
    state: ReducerState,
    runs: RunsIn<'py>,
) -> PyResult<ReducerState> {
    let mut red = reducer_of(state)?;
    let view = checked(&runs)?;
    run_detached(py, view.len(), || red.feed(view))?;
    Ok(state_of(&red))
}

/// The state of a reducer for a range below ranges holding `tp` positive and `fp`
/// negative weight (`Reducer::below`).
#[pyfunction]
fn runs_reducer_below(tp: f64, fp: f64) -> ReducerState {
    state_of(&Reducer::below(tp, fp))
}

/// A reducer state joined with the state of the next lower range
/// (`Reducer::then`); the new state.
#[pyfunction]
fn runs_reducer_then(upper: ReducerState, lower: ReducerState) -> PyResult<ReducerState> {
    let mut red = reducer_of(upper)?;
    red.then(&reducer_of(lower)?);
    Ok(state_of(&red))
}

/// AP and ROC AUC with flags of a reducer state, given the problem's known
/// positives and negatives.
#[pyfunction]
fn runs_reducer_finish(state: ReducerState, n_pos: u64, n_neg: u64) -> PyResult<Pair> {
    Ok(pair(reducer_of(state)?.finish(n_pos, n_neg)))
}

/// The order keys of 1-D scores (float64, float32 or int64): `a < b` iff
/// `key(a) < key(b)`, `-0.0` and `0.0` share a key; float32 keys are taken in
/// float32. The keys the runs hold, for choosing range boundaries.
#[pyfunction]
fn score_keys<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    use crate::score::Score;
    with_array!(y_score, PyReadonlyArray1, [f64, f32, i64], |s| {
        let keys: Vec<u64> = s.iter().map(|v| v.key()).collect();
        Ok(keys.into_pyarray(py))
    })
    .unwrap_or_else(|| Err(dtype_error("y_score", 1, SCORE_DTYPES)))
}

/// The range number of each score (float64, float32 or int64) given ascending order
/// keys `bounds` (`toxeval.streaming.score_keys`): how many bounds are at most its
/// key. Sequential (the callers run one task per core already).
#[pyfunction]
fn range_numbers<'py>(
    py: Python<'py>,
    y_score: &Bound<'py, PyAny>,
    bounds: PyReadonlyArray1<'py, u64>,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let b = bounds.as_slice()?.to_vec();
    with_array!(y_score, PyReadonlyArray1, [f64, f32, i64], |s| {
        let owned = s.to_vec();
        let out = run_detached(py, owned.len(), || runs::range_numbers(&owned, &b));
        Ok(out.into_pyarray(py))
    })
    .unwrap_or_else(|| Err(dtype_error("y_score", 1, SCORE_DTYPES)))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(runs_build, m)?)?;
    m.add_function(wrap_pyfunction!(runs_merge, m)?)?;
    m.add_function(wrap_pyfunction!(runs_ap_auc, m)?)?;
    m.add_function(wrap_pyfunction!(runs_reducer_new, m)?)?;
    m.add_function(wrap_pyfunction!(runs_reducer_feed, m)?)?;
    m.add_function(wrap_pyfunction!(runs_reducer_finish, m)?)?;
    m.add_function(wrap_pyfunction!(runs_reducer_below, m)?)?;
    m.add_function(wrap_pyfunction!(runs_reducer_then, m)?)?;
    m.add_function(wrap_pyfunction!(score_keys, m)?)?;
    m.add_function(wrap_pyfunction!(range_numbers, m)?)?;
    Ok(())
}
