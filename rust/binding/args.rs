//! What the binding reads from Python arguments, in one place: the dtype dispatch
//! ([`with_array!`]: a NumPy array of any listed element type in, a zero-copy
//! `ndarray` view out), the message for an array of another dtype, and the metric
//! names the Python layer passes.
//!
//! Every kernel error becomes a `ValueError` through `From<MetricError> for PyErr`
//! (`binding/mod.rs`); an argument of the wrong dtype is a `TypeError`
//! ([`dtype_error`]); an unknown metric name is the `ValueError` or `TypeError` of
//! [`binary_metric`] / [`RankingMetricName::parse`].

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::binary::Metric;
use crate::ranking::RankingMetric;

/// Bind `$v` to the `ndarray` view of `$obj` read as a `numpy::$arr` (e.g.
/// `PyReadonlyArray2`) of the first element type of the list that it holds, and
/// evaluate `$body`: `Some(body)`, or `None` when `$obj` is none of them.
/// `$body` may use `?` and `return` of the enclosing function.
macro_rules! with_array {
    ($obj:expr, $arr:ident, [$($t:ty),+ $(,)?], |$v:ident| $body:expr) => {{
        'dtype: {
            $(
                if let Ok(a) = $obj.extract::<numpy::$arr<'_, $t>>() {
                    let $v = a.as_array();
                    break 'dtype Some($body);
                }
            )+
            None
        }
    }};
}
pub(crate) use with_array;

/// The `TypeError` of an array argument `name` that is not an `ndim`-D array of
/// one of `dtypes`.
pub(crate) fn dtype_error(name: &str, ndim: usize, dtypes: &str) -> PyErr {
    PyTypeError::new_err(format!("{name} must be a {ndim}-D {dtypes} array"))
}

/// Score dtypes read in place by every kernel.
pub(crate) const SCORE_DTYPES: &str = "float64, float32 or int64";

/// The binary metric named by the Python layer (`"average_precision"`,
/// `"roc_auc"` with its `max_fpr`).
pub(crate) fn binary_metric(name: &str, max_fpr: Option<f64>) -> PyResult<Metric> {
    match name {
        "average_precision" => Ok(Metric::AveragePrecision),
        "roc_auc" => Ok(Metric::RocAuc { max_fpr }),
        other => Err(PyValueError::new_err(format!(
            "unknown binary metric {other:?} (expected 'average_precision' or 'roc_auc')"
        ))),
    }
}

/// The label-ranking metric names of `ranking_sum` / `ranking_sum_checked`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RankingMetricName {
    /// One of the binary-relevance metrics (`"lrl"`, `"lrap"`, `"coverage"`,
    /// `"one_error"`).
    Binary(RankingMetric),
    /// `"dcg"`: (N)DCG, with discounts.
    Dcg,
}

impl RankingMetricName {
    /// Parse a name; an unknown one is a `TypeError` naming it.
    pub(crate) fn parse(name: &str) -> PyResult<Self> {
        match name {
            "lrl" => Ok(Self::Binary(RankingMetric::LabelRankingLoss)),
            "lrap" => Ok(Self::Binary(RankingMetric::Lrap)),
            "coverage" => Ok(Self::Binary(RankingMetric::Coverage)),
            "one_error" => Ok(Self::Binary(RankingMetric::OneError)),
            "dcg" => Ok(Self::Dcg),
            other => Err(PyTypeError::new_err(format!("unknown metric {other:?}"))),
        }
    }
}
