//! Binding of the native JSONL dataset reader (`crate::datasets`): the file's
//! (decompressed) bytes in, the columns out as NumPy arrays (moved, not copied),
//! or the line and reason it declined the file. `toxeval.datasets.native_jsonl`
//! turns them into the pyarrow table the general reader would have produced.

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::parallelism;
use crate::datasets::{read_jsonl_dataset, IdColumn, Outcome};

/// Read a JSONL dataset of the common form from its bytes. Returns a dict: either
/// `{"declined": (line, reason)}`, or the columns: `ids_int` (int64) or
/// `id_offsets` (int32) + `id_data` (uint8), `text_offsets` + `text_data`,
/// `label_offsets` + `label_codes` (int32), `dict_offsets` + `dict_data`.
#[pyfunction]
#[pyo3(signature = (body, n_jobs=None))]
fn read_jsonl_dataset_bytes<'py>(
    py: Python<'py>,
    body: &[u8],
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let par = parallelism(n_jobs)?;
    let outcome = py.detach(|| read_jsonl_dataset(body, par));
    let d = PyDict::new(py);
    let read = match outcome {
        Outcome::Declined { line, reason } => {
            d.set_item("declined", (line, reason))?;
            return Ok(d);
        }
        Outcome::Read(r) => r,
    };
    d.set_item("declined", py.None())?;
    match read.ids {
        IdColumn::Str { offsets, data } => {
            d.set_item("id_offsets", offsets.into_pyarray(py))?;
            d.set_item("id_data", data.into_pyarray(py))?;
        }
        IdColumn::Int(v) => d.set_item("ids_int", v.into_pyarray(py))?,
    }
    d.set_item("text_offsets", read.text_offsets.into_pyarray(py))?;
    d.set_item("text_data", read.text_data.into_pyarray(py))?;
    d.set_item("label_offsets", read.label_offsets.into_pyarray(py))?;
    d.set_item("label_codes", read.label_codes.into_pyarray(py))?;
    d.set_item("dict_offsets", read.dict_offsets.into_pyarray(py))?;
    d.set_item("dict_data", read.dict_data.into_pyarray(py))?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_jsonl_dataset_bytes, m)?)?;
    Ok(())
}
