//! The thin PyO3 layer: turn NumPy arrays into `ndarray` views (zero-copy, any
//! strides), release the GIL for large inputs, call a kernel, map its error.
//!
//! Validation with scikit-learn's messages happens in Python
//! (`python/toxeval/metrics/_validation.py`); this layer re-checks only what the
//! kernels rely on for memory safety (shapes), and every kernel error becomes a
//! `ValueError`. Nothing here may panic on user input.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::error::MetricError;
use crate::parallel::{Parallelism, PARALLEL_MIN_ELEMENTS};

mod args;
mod binary;
mod bootstrap;
mod datasets;
mod dumps;
mod ids;
mod kendall;
mod ranking;
mod runs;

impl From<MetricError> for PyErr {
    fn from(e: MetricError) -> PyErr {
        PyValueError::new_err(e.to_string())
    }
}

/// Run `f` with the GIL released when the input is large enough for the release
/// to pay off (and for other Python threads to benefit); small calls keep it.
pub(crate) fn run_detached<T, F>(py: Python<'_>, elements: usize, f: F) -> T
where
    T: Send,
    F: FnOnce() -> T + Send,
{
    if elements >= PARALLEL_MIN_ELEMENTS {
        py.detach(f)
    } else {
        f()
    }
}

/// Resolve the user's `n_jobs` once per call.
pub(crate) fn parallelism(n_jobs: Option<i64>) -> PyResult<Parallelism> {
    Ok(Parallelism::new(n_jobs)?)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(resolve_threads, m)?)?;
    binary::register(m)?;
    bootstrap::register(m)?;
    ranking::register(m)?;
    kendall::register(m)?;
    runs::register(m)?;
    datasets::register(m)?;
    dumps::register(m)?;
    ids::register(m)?;
    Ok(())
}

/// Number of threads a call with this `n_jobs` would use.
#[pyfunction]
#[pyo3(signature = (n_jobs=None))]
fn resolve_threads(n_jobs: Option<i64>) -> PyResult<usize> {
    Ok(crate::parallel::resolve_threads(n_jobs)?)
}
