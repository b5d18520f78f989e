//! Binding of the Kendall tau kernel: 1-D float64 / float32 / int64 arrays of
//! any stride in (zero-copy), SciPy's intermediate counts out.
//! The Python layer (`toxeval.metrics._kendall`) handles dtypes, NaN policy,
//! axes and SciPy's final formulas.

use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use super::{parallelism, run_detached};
use crate::kendall::{kendall_counts as kernel, KendallCounts};

enum Sample<'py> {
    F64(PyReadonlyArray1<'py, f64>),
    F32(PyReadonlyArray1<'py, f32>),
    I64(PyReadonlyArray1<'py, i64>),
}

impl<'py> Sample<'py> {
    fn from_py(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Self> {
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, f64>>() {
            return Ok(Sample::F64(a));
        }
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, f32>>() {
            return Ok(Sample::F32(a));
        }
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, i64>>() {
            return Ok(Sample::I64(a));
        }
        Err(PyTypeError::new_err(format!(
            "{name} must be a 1-D float64, float32 or int64 array"
        )))
    }

    fn len(&self) -> usize {
        match self {
            Sample::F64(a) => a.as_array().len(),
            Sample::F32(a) => a.as_array().len(),
            Sample::I64(a) => a.as_array().len(),
        }
    }
}

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
    let xs = Sample::from_py(x, "x")?;
    let ys = Sample::from_py(y, "y")?;
    let n = xs.len();

    macro_rules! run {
        ($a:expr, $b:expr) => {{
            let (va, vb) = ($a.as_array(), $b.as_array());
            run_detached(py, n, || kernel(va, vb, par))
        }};
    }
    let c: KendallCounts = match (&xs, &ys) {
        (Sample::F64(a), Sample::F64(b)) => run!(a, b),
        (Sample::F64(a), Sample::F32(b)) => run!(a, b),
        (Sample::F64(a), Sample::I64(b)) => run!(a, b),
        (Sample::F32(a), Sample::F64(b)) => run!(a, b),
        (Sample::F32(a), Sample::F32(b)) => run!(a, b),
        (Sample::F32(a), Sample::I64(b)) => run!(a, b),
        (Sample::I64(a), Sample::F64(b)) => run!(a, b),
        (Sample::I64(a), Sample::F32(b)) => run!(a, b),
        (Sample::I64(a), Sample::I64(b)) => run!(a, b),
    }?;
    Ok((
        c.dis, c.ntie, c.xtie, c.ytie, c.x0, c.x1, c.y0, c.y1, c.x_unique, c.y_unique,
    ))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kendall_counts, m)?)?;
    Ok(())
}
