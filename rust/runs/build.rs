//! Runs from raw cells: per label, gather the known rows with non-zero weight, sort
//! their keys (radix sort, `sort.rs`) and add up each block of equal keys.

use std::sync::Mutex;

use ndarray::{ArrayView1, ArrayView2};

use super::Runs;
use crate::error::{MetricError, Result};
use crate::labels::LabelGrid;
use crate::parallel::Parallelism;
use crate::score::Score;
use crate::sort::{sort_by_key_stable, sort_keys, RadixKey};

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
    if weight.is_none() {
        return build_unweighted(s, y, mask, par);
    }
    // One pass over the rows in storage order scatters every known cell with
    // non-zero weight into its label's buffers (reading a C-order matrix column by
    // column would touch a cache line per cell); then each label is sorted and
    // collapsed on its own, labels in parallel.
    let mut keys: Vec<Vec<u64>> = (0..k).map(|_| Vec::with_capacity(n)).collect();
    let mut pay: Vec<Vec<u32>> = (0..k).map(|_| Vec::with_capacity(n)).collect();
    let mut n_pos = vec![0u64; k];
    let mut n_neg = vec![0u64; k];
    for i in 0..n {
        let zero_weight = weight.as_ref().is_some_and(|w| w[i] == 0.0);
        let srow = s.row(i);
        let yrow = y.row(i);
        let mrow = mask.as_ref().map(|m| m.row(i));
        for j in 0..k {
            if mrow.as_ref().is_some_and(|m| !m[j]) {
                continue;
            }
            let positive = L::is_pos(yrow[L::cell_index(j)], j);
            if positive {
                n_pos[j] += 1;
            } else {
                n_neg[j] += 1;
            }
            // Zero weights are counted (ROC AUC's single-class rule), never kept.
            if zero_weight {
                continue;
            }
            // Negated keys: the ascending stable sort gives descending scores, ties
            // in row order.
            keys[j].push(!srow[j].key());
            pay[j].push(i as u32 | if positive { POS_BIT } else { 0 });
        }
    }
    let slots: Vec<Mutex<(Vec<u64>, Vec<u32>)>> =
        keys.into_iter().zip(pay).map(Mutex::new).collect();
    let runs = par.map(k, n.saturating_mul(k), |j| {
        // Each label is taken once, so the lock is never contended.
        let mut slot = slots[j].lock().unwrap_or_else(|e| e.into_inner());
        let (keys, pay) = std::mem::take(&mut *slot);
        collapse(keys, pay, weight.as_ref())
    })?;
    Ok(runs
        .into_iter()
        .zip(n_pos.into_iter().zip(n_neg))
        .map(|(runs, (n_pos, n_neg))| LabelRuns { runs, n_pos, n_neg })
        .collect())
}

/// Sort one label's gathered cells and add up each block of equal keys.
fn collapse(mut keys: Vec<u64>, mut pay: Vec<u32>, weight: Option<&ArrayView1<f64>>) -> Runs {
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
    runs
}

/// Without weights a run is a key with two counts, so no payload is needed: per
/// label the positives' and the negatives' narrow keys (4 bytes for float32) are
/// sorted on their own (`sort_keys`, key-only MSD radix sort) and walked together
/// from the top, as the per-label AP kernel does.
fn build_unweighted<S: Score, L: LabelGrid>(
    s: ArrayView2<S>,
    y: L,
    mask: Option<ArrayView2<bool>>,
    par: &Parallelism,
) -> Result<Vec<LabelRuns>> {
    let (n, k) = s.dim();
    let mut pos: Vec<Vec<S::NarrowKey>> = (0..k).map(|_| Vec::new()).collect();
    let mut neg: Vec<Vec<S::NarrowKey>> = (0..k).map(|_| Vec::with_capacity(n)).collect();
    for i in 0..n {
        let srow = s.row(i);
        let yrow = y.row(i);
        let mrow = mask.as_ref().map(|m| m.row(i));
        for j in 0..k {
            if mrow.as_ref().is_some_and(|m| !m[j]) {
                continue;
            }
            let key = srow[j].narrow_key();
            if L::is_pos(yrow[L::cell_index(j)], j) {
                pos[j].push(key);
            } else {
                neg[j].push(key);
            }
        }
    }
    type Keys<S> = Vec<<S as Score>::NarrowKey>;
    let slots: Vec<Mutex<(Keys<S>, Keys<S>)>> = pos.into_iter().zip(neg).map(Mutex::new).collect();
    par.map(k, n.saturating_mul(k), |j| {
        // Each label is taken once, so the lock is never contended.
        let mut slot = slots[j].lock().unwrap_or_else(|e| e.into_inner());
        let (mut p, mut q) = std::mem::take(&mut *slot);
        let mut tmp = vec![S::NarrowKey::default(); p.len().max(q.len())];
        sort_keys(&mut p, &mut tmp);
        sort_keys(&mut q, &mut tmp);
        drop(tmp);
        let (n_pos, n_neg) = (p.len() as u64, q.len() as u64);
        LabelRuns {
            runs: walk_counts(&p, &q),
            n_pos,
            n_neg,
        }
    })
}

/// Runs of two ascending key arrays (positives, negatives), highest key first.
fn walk_counts<K: RadixKey>(p: &[K], q: &[K]) -> Runs {
    // At most one run per cell: one allocation, no growth copies (memory not written
    // is not touched); trimmed when ties left most of it unused.
    let mut runs = Runs::with_capacity(p.len() + q.len());
    let (mut a, mut b) = (p.len(), q.len());
    while a > 0 || b > 0 {
        let key = match (a > 0, b > 0) {
            (true, true) => p[a - 1].max(q[b - 1]),
            (true, false) => p[a - 1],
            _ => q[b - 1],
        };
        let (a0, b0) = (a, b);
        while a > 0 && p[a - 1] == key {
            a -= 1;
        }
        while b > 0 && q[b - 1] == key {
            b -= 1;
        }
        runs.push(key.wide(), (a0 - a) as f64, (b0 - b) as f64);
    }
    runs.trim();
    runs
}
