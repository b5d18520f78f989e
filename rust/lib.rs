//! toxeval's native core.
//!
//! Pure-Rust kernels for multi-label ranking metrics with scikit-learn's exact
//! semantics (tie rules, undefined cases) and SciPy's Kendall tau. Nothing in the
//! kernel modules knows about Python: they take `ndarray` views of any layout
//! (C order, Fortran order, strided) and return `Result<_, MetricError>`.
//! The PyO3 binding lives in `binding/` and is compiled only with the `python`
//! feature, so `cargo test` exercises the kernels without libpython.

pub mod binary;
pub mod bootstrap;
pub mod check;
pub mod cpu;
pub mod datasets;
pub mod dumps;
pub mod error;
pub mod ids;
pub mod indicator;
pub mod json_cursor;
pub mod kendall;
pub mod labels;
pub mod numeric;
pub mod parallel;
pub mod ranking;
pub mod runs;
pub mod score;
pub mod sort;
pub mod threshold;

#[cfg(feature = "python")]
mod binding;

pub use error::MetricError;
pub use score::Score;
