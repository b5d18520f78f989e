//! Binding of the id join kernel (`crate::ids`): Arrow string arrays come in as their
//! offsets (int32 or int64) and UTF-8 bytes, NumPy views of pyarrow's buffers, so no
//! Python string is made per id. `toxeval.ids` passes them and reads the positions.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use super::args::{dtype_error, with_array};
use super::{parallelism, run_detached};
use crate::ids::{index_in, Bounds};

/// The checked offsets of one string array (int32 or int64 offsets, contiguous).
fn bounds(name: &str, offsets: &Bound<'_, PyAny>, data_len: usize) -> PyResult<Bounds> {
    let r = with_array!(offsets, PyReadonlyArray1, [i32, i64], |v| {
        let Some(s) = v.as_slice() else {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{name} must be contiguous"
            )));
        };
        Bounds::new(s, data_len)?
    });
    r.ok_or_else(|| dtype_error(name, 1, "int32 or int64"))
}

/// For each string of the probe array, the first row of the set array holding the
/// same bytes, or -1 (int64). Each array is given as Arrow's offsets (int32 for
/// `string`, int64 for `large_string`; a slice's offsets may start past zero) and
/// its data bytes (uint8).
#[pyfunction]
#[pyo3(signature = (probe_offsets, probe_data, set_offsets, set_data, n_jobs=None))]
fn ids_index_in<'py>(
    py: Python<'py>,
    probe_offsets: &Bound<'py, PyAny>,
    probe_data: PyReadonlyArray1<'py, u8>,
    set_offsets: &Bound<'py, PyAny>,
    set_data: PyReadonlyArray1<'py, u8>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let par = parallelism(n_jobs)?;
    let pd = probe_data.as_slice()?;
    let sd = set_data.as_slice()?;
    let pb = bounds("probe_offsets", probe_offsets, pd.len())?;
    let sb = bounds("set_offsets", set_offsets, sd.len())?;
    let (p, s) = (pb.strings(pd), sb.strings(sd));
    let out = run_detached(py, p.len() + s.len(), || index_in(p, s, par))?;
    Ok(out.into_pyarray(py))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ids_index_in, m)?)?;
    Ok(())
}
