//! Binding of the native JSONL prediction reader (`crate::dumps`): a path in, the
//! columns out as NumPy arrays (moved, not copied), or the line and reason it
//! declined the file. `toxeval.predictions.native_jsonl` turns them into the
//! pyarrow table the general reader would have produced.

use numpy::IntoPyArray;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use super::parallelism;
use crate::dumps::{read_jsonl_predictions, IdColumn, Outcome, ScoreColumn};

/// Read a JSONL prediction dump of the common forms. Returns a dict: either
/// `{"declined": (line, reason)}`, or the columns: `id_first`, `ids_int` (int64) or
/// `id_offsets` (int32) + `id_data` (uint8), `names` (bytes, for object scores)
/// with `values` / `valid` (one float64 / uint8 array per name), or `vec_offsets`
/// (int32) + `vec_values` (float64), and `row_valid` (uint8).
#[pyfunction]
#[pyo3(signature = (path, n_jobs=None))]
fn read_jsonl_dump<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let par = parallelism(n_jobs)?;
    let outcome = py
        .detach(|| read_jsonl_predictions(&path, par))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    let read = match outcome {
        Outcome::Declined { line, reason } => {
            d.set_item("declined", (line, reason))?;
            return Ok(d);
        }
        Outcome::Read(r) => r,
    };
    d.set_item("declined", py.None())?;
    d.set_item("id_first", read.id_first)?;
    match read.ids {
        IdColumn::Str { offsets, data } => {
            d.set_item("id_offsets", offsets.into_pyarray(py))?;
            d.set_item("id_data", data.into_pyarray(py))?;
        }
        IdColumn::Int(v) => d.set_item("ids_int", v.into_pyarray(py))?,
    }
    match read.scores {
        ScoreColumn::Fields {
            names,
            values,
            valid,
        } => {
            let names = PyList::new(py, names.iter().map(|n| PyBytes::new(py, n)))?;
            d.set_item("names", names)?;
            let values = PyList::new(py, values.into_iter().map(|v| v.into_pyarray(py)))?;
            d.set_item("values", values)?;
            let valid = PyList::new(py, valid.into_iter().map(|v| v.into_pyarray(py)))?;
            d.set_item("valid", valid)?;
        }
        ScoreColumn::Vector { offsets, values } => {
            d.set_item("vec_offsets", offsets.into_pyarray(py))?;
            d.set_item("vec_values", values.into_pyarray(py))?;
        }
    }
    d.set_item("row_valid", read.row_valid.into_pyarray(py))?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_jsonl_dump, m)?)?;
    Ok(())
}
