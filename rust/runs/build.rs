//! Runs from raw cells: per label, gather the known rows with non-zero weight, sort
//! their keys (radix sort, `sort.rs`) and add up each block of equal keys.

use ndarray::{ArrayView1, ArrayView2};

use super::Runs;
use crate::error::{MetricError, Result};
use crate::labels::LabelGrid;
use crate::parallel::Parallelism;
use crate::score::Score;
use crate::sort::sort_by_key_stable;

const POS_BIT: u32 = 1 << 31;

/// One label's runs and its known positives and negatives (mask true, any weight,
/// zero included: ROC AUC's single-class check counts them, as scikit-learn does).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelRuns {
    pub runs: Runs,
    pub n_pos: u64,
    pub n_neg: u64,
}

/// The runs of every label of an `n x k` score grid (`y` the positives, `weight`
/// per row, `mask` true where a label is known). Labels are built in parallel;
/// within a block of equal scores weights are added in row order.
pub fn build_runs<S: Score, L: LabelGrid>(
    s: ArrayView2<S>,
    y: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
    par: &Parallelism,
) -> Result<Vec<LabelRuns>> {
    let (n, k) = s.dim();
    if y.dim() != (n, k) {
        return Err(MetricError::shape(format!(
            "y_true and y_score have different shape: {:?} vs {:?}",
            y.dim(),
            (n, k)
        )));
    }
    if mask.as_ref().is_some_and(|m| m.dim() != (n, k)) {
        return Err(MetricError::shape("mask and y_score have different shape"));
    }
    if weight.as_ref().is_some_and(|w| w.len() != n) {
        return Err(MetricError::shape(
            "sample_weight and y_score have different lengths",
        ));
    }
    if n >= POS_BIT as usize {
        return Err(MetricError::value(
            "too many rows in one chunk of runs (limit 2**31 - 1)",
        ));
    }
    let parts = par.map(k, n.saturating_mul(k), |j| {
        build_label(s.column(j), y, j, weight.as_ref(), mask.as_ref())
    })?;
    Ok(parts)
}

fn build_label<S: Score, L: LabelGrid>(
    col: ArrayView1<S>,
    y: L,
    j: usize,
    weight: Option<&ArrayView1<f64>>,
    mask: Option<&ArrayView2<bool>>,
) -> LabelRuns {
    let n = col.len();
    let cells = y.column(j);
    let mut keys: Vec<u64> = Vec::with_capacity(n);
    let mut pay: Vec<u32> = Vec::with_capacity(n);
    let (mut n_pos, mut n_neg) = (0u64, 0u64);
    for i in 0..n {
        if mask.is_some_and(|m| !m[[i, j]]) {
            continue;
        }
        let positive = L::is_pos(cells[i], j);
        if positive {
            n_pos += 1;
        } else {
            n_neg += 1;
        }
        if weight.is_some_and(|w| w[i] == 0.0) {
            continue;
        }
        // Negated keys: the ascending stable sort gives descending scores, ties in
        // row order.
        keys.push(!col[i].key());
        pay.push(i as u32 | if positive { POS_BIT } else { 0 });
    }
    sort_by_key_stable(&mut keys, &mut pay);
    let mut runs = Runs::with_capacity(0);
    let mut t = 0;
    while t < keys.len() {
        let key = keys[t];
        let (mut p, mut q) = (0.0f64, 0.0f64);
        while t < keys.len() && keys[t] == key {
            let row = (pay[t] & !POS_BIT) as usize;
            let w = weight.map_or(1.0, |w| w[row]);
            if pay[t] & POS_BIT != 0 {
                p += w;
            } else {
                q += w;
            }
            t += 1;
        }
        runs.push(!key, p, q);
    }
    runs.keys.shrink_to_fit();
    runs.pos.shrink_to_fit();
    runs.neg.shrink_to_fit();
    LabelRuns { runs, n_pos, n_neg }
}
