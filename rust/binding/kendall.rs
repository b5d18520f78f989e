//! Binding of the Kendall tau kernel: 1-D float64 / float32 / int64 arrays of
//! any stride in (zero-copy), SciPy's intermediate counts out.
//! The Python layer (`toxeval.metrics._kendall`) handles dtypes, NaN policy,
//! axes and SciPy's final formulas.

use pyo3::prelude::*;

use super::args::{dtype_error, with_array, SCORE_DTYPES};
use super::{parallelism, run_detached};
use crate::kendall::{kendall_counts as kernel, KendallCounts};

type CountsTuple = (u64, u64, u64, u64, f64, f64, f64, f64, u64, u64);

/// Counts behind `scipy.stats.kendalltau` for NaN-free 1-D samples:
/// `(dis, ntie, xtie, ytie, x0, x1, y0, y1, x_unique, y_unique)`
/// (see `toxeval::kendall::KendallCounts`).
#[pyfunction]
#[pyo3(signature = (x, y, n_jobs=None))]
fn kendall_counts(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    n_jobs: Option<i64>,
) -> PyResult<CountsTuple> {
    let par = parallelism(n_jobs)?;
    let c: KendallCounts = with_array!(x, PyReadonlyArray1, [f64, f32, i64], |va| {
        with_array!(y, PyReadonlyArray1, [f64, f32, i64], |vb| {
            run_detached(py, va.len(), || kernel(va, vb, par))
        })
        .ok_or_else(|| dtype_error("y", 1, SCORE_DTYPES))?
    })
    .ok_or_else(|| dtype_error("x", 1, SCORE_DTYPES))??;
    Ok((
        c.dis, c.ntie, c.xtie, c.ytie, c.x0, c.x1, c.y0, c.y1, c.x_unique, c.y_unique,
    ))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kendall_counts, m)?)?;
    Ok(())
}
