//! The one error type of the kernels. Messages that users can trigger mirror
//! scikit-learn's wording; the binding maps every variant to `ValueError`.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum MetricError {
    /// Input arrays disagree in shape; the message is the full user-facing text.
    #[error("{0}")]
    Shape(String),
    /// A value that the metric cannot accept (NaN, inf, bad weights, ...).
    #[error("{0}")]
    Value(String),
    /// Thread pool could not be created.
    #[error("could not start a thread pool: {0}")]
    Threads(String),
}

impl MetricError {
    pub fn shape(msg: impl Into<String>) -> Self {
        MetricError::Shape(msg.into())
    }
    pub fn value(msg: impl Into<String>) -> Self {
        MetricError::Value(msg.into())
    }
}

pub type Result<T> = std::result::Result<T, MetricError>;
