//! The one set of shape checks the kernels run before reading their inputs, with
//! one wording per mismatch (scikit-learn's where scikit-learn has one). The Python
//! layer validates first with the same messages; these checks keep every kernel
//! memory-safe when it is called directly.

use ndarray::{ArrayView1, ArrayView2};

use crate::error::{MetricError, Result};

/// `y_true` and `y_score` have the same `(rows, labels)` shape.
pub fn same_shape(y_true: (usize, usize), y_score: (usize, usize)) -> Result<()> {
    if y_true != y_score {
        return Err(MetricError::shape(format!(
            "y_true and y_score have different shape: {y_true:?} vs {y_score:?}"
        )));
    }
    Ok(())
}

/// A mask has the shape of `y_true`.
pub fn mask_shape(mask: (usize, usize), y_true: (usize, usize)) -> Result<()> {
    if mask != y_true {
        return Err(MetricError::shape(format!(
            "mask has shape {mask:?}, expected {y_true:?} (the shape of y_true)"
        )));
    }
    Ok(())
}

/// Two per-sample inputs (rows of `y_true`, sample weights, ...) have the same
/// length; scikit-learn's `check_consistent_length` message.
pub fn same_length(a: usize, b: usize) -> Result<()> {
    if a != b {
        return Err(MetricError::shape(format!(
            "Found input variables with inconsistent numbers of samples: [{a}, {b}]"
        )));
    }
    Ok(())
}

/// The inputs of a multilabel metric: scores and labels of one shape, optional
/// per-row weights and an optional mask of that shape.
pub fn grid<S>(
    y_score: &ArrayView2<S>,
    y_dim: (usize, usize),
    weight: Option<&ArrayView1<f64>>,
    mask: Option<&ArrayView2<bool>>,
) -> Result<()> {
    same_shape(y_dim, y_score.dim())?;
    if let Some(w) = weight {
        same_length(y_dim.0, w.len())?;
    }
    if let Some(m) = mask {
        mask_shape(m.dim(), y_dim)?;
    }
    Ok(())
}
