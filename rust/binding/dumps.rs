//! Binding of the native JSONL and CSV prediction readers (`crate::dumps`): a
//! path in, the columns out as NumPy arrays (moved, not copied), or the line and
//! reason it declined the file. `toxeval.predictions.native_jsonl` and
//! `toxeval.predictions.native_csv` turn them into the pyarrow table the general
//! reader would have produced.

use numpy::IntoPyArray;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use super::parallelism;
use crate::dumps::csv::{
    read_csv_predictions, read_csv_predictions_from, CsvOutcome, NumberColumn,
};
use crate::dumps::{
    read_jsonl_predictions, read_jsonl_predictions_from, IdColumn, Outcome, ScoreColumn,
};

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
    jsonl_dict(py, outcome)
}

/// [`read_jsonl_dump`] of a dump's bytes (a compressed file, decompressed by the
/// caller); the same dict.
#[pyfunction]
#[pyo3(signature = (body, n_jobs=None))]
fn read_jsonl_dump_bytes<'py>(
    py: Python<'py>,
    body: &[u8],
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let par = parallelism(n_jobs)?;
    let outcome = py
        .detach(|| read_jsonl_predictions_from(body, par))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    jsonl_dict(py, outcome)
}

fn jsonl_dict(py: Python<'_>, outcome: Outcome) -> PyResult<Bound<'_, PyDict>> {
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

/// Read a CSV / TSV prediction dump of the common form (`crate::dumps::csv`),
/// cells split at `delimiter` (one byte), `string_columns` the names pyarrow reads
/// as strings. Returns a dict: either `{"declined": (line, reason)}`, or `names`
/// (bytes, header order), `id_column` (its place, or None) with `id_offsets`
/// (int32) + `id_data` (uint8), and `columns`: per other column in header order a
/// tuple (values: float64 or int64 array, valid: uint8 array).
#[pyfunction]
#[pyo3(signature = (path, delimiter, string_columns, n_jobs=None))]
fn read_csv_dump<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    delimiter: u8,
    string_columns: Vec<Vec<u8>>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let par = parallelism(n_jobs)?;
    let outcome = py
        .detach(|| read_csv_predictions(&path, delimiter, &string_columns, par))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    csv_dict(py, outcome)
}

/// [`read_csv_dump`] of a dump's bytes (a compressed file, decompressed by the
/// caller); the same dict.
#[pyfunction]
#[pyo3(signature = (body, delimiter, string_columns, n_jobs=None))]
fn read_csv_dump_bytes<'py>(
    py: Python<'py>,
    body: &[u8],
    delimiter: u8,
    string_columns: Vec<Vec<u8>>,
    n_jobs: Option<i64>,
) -> PyResult<Bound<'py, PyDict>> {
    let par = parallelism(n_jobs)?;
    let outcome = py
        .detach(|| read_csv_predictions_from(body, delimiter, &string_columns, par))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    csv_dict(py, outcome)
}

fn csv_dict(py: Python<'_>, outcome: CsvOutcome) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    let read = match outcome {
        CsvOutcome::Declined { line, reason } => {
            d.set_item("declined", (line, reason))?;
            return Ok(d);
        }
        CsvOutcome::Read(r) => r,
    };
    d.set_item("declined", py.None())?;
    let names = PyList::new(py, read.names.iter().map(|n| PyBytes::new(py, n)))?;
    d.set_item("names", names)?;
    d.set_item("id_column", read.id_column)?;
    d.set_item("id_offsets", read.id_offsets.into_pyarray(py))?;
    d.set_item("id_data", read.id_data.into_pyarray(py))?;
    let columns = PyList::empty(py);
    for c in read.columns {
        match c {
            NumberColumn::Float { values, valid } => {
                columns.append((values.into_pyarray(py), valid.into_pyarray(py)))?
            }
            NumberColumn::Int { values, valid } => {
                columns.append((values.into_pyarray(py), valid.into_pyarray(py)))?
            }
        }
    }
    d.set_item("columns", columns)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_jsonl_dump, m)?)?;
    m.add_function(wrap_pyfunction!(read_jsonl_dump_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(read_csv_dump, m)?)?;
    m.add_function(wrap_pyfunction!(read_csv_dump_bytes, m)?)?;
    Ok(())
}
