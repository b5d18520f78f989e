//! Binding of the id join kernel (`crate::ids`): Arrow string arrays come in as their
//! offsets (int32 or int64) and UTF-8 bytes, NumPy views of pyarrow's buffers, so no
//! Python string is made per id. `toxeval.ids` passes them and reads the positions.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use super::args::{dtype_error, with_array};
use super::{parallelism, run_detached};
use crate::ids::{any_repeat, check_keys, index_in, sorted_keys, Bounds};

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
/// its data bytes (uint8); `set_keys`, the set's `ids_sorted_keys` when known.
#[pyfunction]
#[pyo3(signature = (probe_offsets, probe_data, set_offsets, set_data, set_keys=None, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn ids_index_in<'py>(
    py: Python<'py>,
    probe_offsets: &Bound<'py, PyAny>,
    probe_data: PyReadonlyArray1<'py, u8>,
    set_offsets: &Bound<'py, PyAny>,
    set_data: PyReadonlyArray1<'py, u8>,
    set_keys: Option<PyReadonlyArray1<'py, u64>>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let par = parallelism(n_jobs)?;
    let pd = probe_data.as_slice()?;
    let sd = set_data.as_slice()?;
    let pb = bounds("probe_offsets", probe_offsets, pd.len())?;
    let sb = bounds("set_offsets", set_offsets, sd.len())?;
    let keys = match &set_keys {
        Some(k) => Some(k.as_slice()?),
        None => None,
    };
    let (p, s) = (pb.strings(pd), sb.strings(sd));
    let out = run_detached(py, p.len() + s.len(), || index_in(p, s, keys, par))?;
    Ok(out.into_pyarray(py))
}

/// The sort keys of a string array (offsets and data as for `ids_index_in`): its
/// rows ordered by a hash of their bytes, `hash << 32 | row` (uint64).
#[pyfunction]
#[pyo3(signature = (offsets, data, n_jobs=None))]
fn ids_sorted_keys<'py>(
    py: Python<'py>,
    offsets: &Bound<'py, PyAny>,
    data: PyReadonlyArray1<'py, u8>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let par = parallelism(n_jobs)?;
    let d = data.as_slice()?;
    let b = bounds("offsets", offsets, d.len())?;
    let s = b.strings(d);
    let out = run_detached(py, s.len(), || sorted_keys(s, par))?;
    Ok(out.into_pyarray(py))
}

/// Whether some string of the array repeats, from its `ids_sorted_keys`.
#[pyfunction]
fn ids_any_repeat<'py>(
    py: Python<'py>,
    offsets: &Bound<'py, PyAny>,
    data: PyReadonlyArray1<'py, u8>,
    keys: PyReadonlyArray1<'py, u64>,
) -> PyResult<bool> {
    let d = data.as_slice()?;
    let b = bounds("offsets", offsets, d.len())?;
    let k = keys.as_slice()?;
    let s = b.strings(d);
    check_keys(s, k)?;
    Ok(run_detached(py, s.len(), || any_repeat(s, k)))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ids_index_in, m)?)?;
    m.add_function(wrap_pyfunction!(ids_sorted_keys, m)?)?;
    m.add_function(wrap_pyfunction!(ids_any_repeat, m)?)?;
    Ok(())
}
