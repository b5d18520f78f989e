//! AP and ROC AUC from runs in descending key order, in one pass and O(1) state.
//!
//! With `tp_i`, `fp_i` the cumulative weights at the i-th distinct score, `P`/`N`
//! their totals and `prec_i = tp_i / (tp_i + fp_i)` (0 when that is 0):
//!
//! * AP = `sum_i (tp_i - tp_{i-1}) * prec_i / P`: scikit-learn's
//!   `sum (R_i - R_{i-1}) P_i` with the division by `P` taken out of the sum;
//! * ROC AUC = `sum_i (fp_i - fp_{i-1}) * (tp_i + tp_{i-1}) / (2 P N)`: its
//!   trapezoid over `(fpr, tpr)`; the collinear points `drop_intermediate` removes
//!   add nothing to the area.
//!
//! Both sums are compensated (`CompSum`), so the result agrees with scikit-learn's
//! pairwise sums over normalised terms to about 1e-16 relative, not bit for bit. The
//! undefined cases and their flags are exactly those of `binary::curve`.

use super::{Runs, RunsRef};
use crate::binary::{
    MetricValue, FLAG_ALL_ZERO_WEIGHT, FLAG_EMPTY, FLAG_NOT_MONOTONIC, FLAG_NO_NEGATIVE_LEFT,
    FLAG_NO_POSITIVE, FLAG_NO_POSITIVE_LEFT, FLAG_SINGLE_CLASS,
};
use crate::error::{MetricError, Result};
use crate::numeric::CompSum;

/// The running state of one binary problem's AP/ROC AUC over runs fed in
/// descending key order. Runs of equal key fed one after the other (e.g. one per
/// label for the micro average, or a score at a range boundary) are one threshold.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reducer {
    /// Cumulative weights up to the last committed threshold.
    pub tp: f64,
    pub fp: f64,
    /// Compensated sums: `sum dtp * prec` and `sum dfp * (tp + tp_prev)`.
    pub ap: CompSum,
    pub auc: CompSum,
    /// The threshold being gathered: its key and weights (`None` before any run).
    pub pending: Option<(u64, f64, f64)>,
    /// Signs of `dfp` seen (negative weights can make fpr decrease).
    pub dec: bool,
    pub inc: bool,
    /// Thresholds committed.
    pub n_thresholds: u64,
    /// Precision at the first threshold (AP when the positives' weights total 0).
    pub first_precision: f64,
}

impl Reducer {
    /// A reducer that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed runs whose keys do not exceed any key fed before (checked).
    pub fn feed(&mut self, r: RunsRef<'_>) -> Result<()> {
        if let (Some((last, _, _)), Some(&first)) = (self.pending, r.keys.first()) {
            if first > last {
                return Err(MetricError::value(
                    "runs must be fed in descending score order: a run scores higher than one fed before",
                ));
            }
        }
        for t in 0..r.len() {
            self.push(r.keys[t], r.pos[t], r.neg[t]);
        }
        Ok(())
    }

    /// Add one run (its key at most the previous one; not checked).
    #[inline]
    pub fn push(&mut self, key: u64, pos: f64, neg: f64) {
        match self.pending.as_mut() {
            Some((k, p, q)) if *k == key => {
                *p += pos;
                *q += neg;
            }
            _ => {
                self.commit();
                self.pending = Some((key, pos, neg));
            }
        }
    }

    fn commit(&mut self) {
        if let Some((_, p, q)) = self.pending.take() {
            let (tp0, fp0) = (self.tp, self.fp);
            let (tp, fp) = (tp0 + p, fp0 + q);
            let ps = tp + fp;
            let prec = if ps != 0.0 { tp / ps } else { 0.0 };
            self.ap.add((tp - tp0) * prec);
            let dfp = fp - fp0;
            self.dec |= dfp < 0.0;
            self.inc |= dfp > 0.0 || dfp.is_nan();
            self.auc.add(dfp * (tp + tp0));
            if self.n_thresholds == 0 {
                self.first_precision = prec;
            }
            self.tp = tp;
            self.fp = fp;
            self.n_thresholds += 1;
        }
    }

    /// AP and ROC AUC with their flags, given the known positives and negatives of
    /// the problem (all weights, zero included; they decide the undefined cases).
    pub fn finish(&self, n_pos: u64, n_neg: u64) -> (MetricValue, MetricValue) {
        let mut done = *self;
        done.commit();
        if n_pos + n_neg == 0 {
            let nan = |flags| MetricValue {
                value: f64::NAN,
                flags,
            };
            return (nan(FLAG_EMPTY), nan(FLAG_EMPTY | FLAG_SINGLE_CLASS));
        }
        let ap = if done.n_thresholds == 0 {
            MetricValue {
                value: f64::NAN,
                flags: FLAG_ALL_ZERO_WEIGHT,
            }
        } else if done.tp == 0.0 {
            // scikit-learn sets recall to one: AP = the precision at the top (0
            // unless negative weights cancel the positives).
            let s = done.first_precision;
            MetricValue {
                value: if s > 0.0 { s } else { 0.0 },
                flags: FLAG_NO_POSITIVE,
            }
        } else {
            let s = done.ap.value() / done.tp;
            MetricValue {
                value: if s > 0.0 { s } else { 0.0 },
                flags: 0,
            }
        };
        let auc = if n_pos == 0 || n_neg == 0 {
            MetricValue {
                value: f64::NAN,
                flags: FLAG_SINGLE_CLASS,
            }
        } else if done.n_thresholds == 0 {
            MetricValue {
                value: f64::NAN,
                flags: FLAG_ALL_ZERO_WEIGHT,
            }
        } else {
            let mut flags = 0;
            if done.fp <= 0.0 {
                flags |= FLAG_NO_NEGATIVE_LEFT;
            }
            if done.tp <= 0.0 {
                flags |= FLAG_NO_POSITIVE_LEFT;
            }
            // scikit-learn's `auc` checks the direction of fpr even when tpr is NaN
            // (a NaN fpr has no direction).
            if done.fp > 0.0 && done.dec && done.inc {
                MetricValue {
                    value: f64::NAN,
                    flags: flags | FLAG_NOT_MONOTONIC,
                }
            } else if flags != 0 {
                MetricValue {
                    value: f64::NAN,
                    flags,
                }
            } else {
                let direction = if done.dec { -1.0 } else { 1.0 };
                MetricValue {
                    value: direction * done.auc.value() / (2.0 * done.tp * done.fp),
                    flags: 0,
                }
            }
        };
        (ap, auc)
    }
}

/// AP and ROC AUC of one problem's runs.
pub fn ap_auc(r: RunsRef<'_>, n_pos: u64, n_neg: u64) -> (MetricValue, MetricValue) {
    let mut red = Reducer::new();
    for t in 0..r.len() {
        red.push(r.keys[t], r.pos[t], r.neg[t]);
    }
    red.finish(n_pos, n_neg)
}

/// AP and ROC AUC of the union of several problems (the micro average: every
/// label's runs as one problem), by a k-way merge feeding a [`Reducer`], without
/// materialising the merged runs.
pub fn micro_ap_auc(parts: &[RunsRef<'_>], n_pos: u64, n_neg: u64) -> (MetricValue, MetricValue) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut red = Reducer::new();
    // (key, Reverse(part)) max-heap: highest key first, ties in part order.
    let mut heap: BinaryHeap<(u64, Reverse<usize>)> = parts
        .iter()
        .enumerate()
        .filter_map(|(p, r)| r.keys.first().map(|&k| (k, Reverse(p))))
        .collect();
    let mut at = vec![0usize; parts.len()];
    while let Some((key, Reverse(p))) = heap.pop() {
        let r = parts[p];
        let t = at[p];
        red.push(key, r.pos[t], r.neg[t]);
        at[p] = t + 1;
        if let Some(&k) = r.keys.get(t + 1) {
            heap.push((k, Reverse(p)));
        }
    }
    red.finish(n_pos, n_neg)
}

impl From<&Runs> for Reducer {
    fn from(r: &Runs) -> Self {
        let mut red = Reducer::new();
        for t in 0..r.len() {
            red.push(r.keys[t], r.pos[t], r.neg[t]);
        }
        red
    }
}
