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
use crate::parallel::Parallelism;
use crate::sort::{sort_by_key_stable, sort_keys};

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

    /// A reducer for one range of scores below ranges that hold `tp` positive and
    /// `fp` negative weight: fed that range's runs, it adds the terms the whole
    /// sequence would add over them, so ranges can be reduced independently (in
    /// parallel) once the totals above each are known, then joined by
    /// [`Reducer::then`].
    pub fn below(tp: f64, fp: f64) -> Self {
        Reducer {
            tp,
            fp,
            ..Self::default()
        }
    }

    /// Join the reducer of the next lower range, made by [`Reducer::below`] with
    /// this one's totals and sharing no key with it: the result is the reducer that
    /// was fed this one's runs and then the lower range's.
    pub fn then(&mut self, lower: &Reducer) {
        let mut lo = *lower;
        lo.commit();
        if lo.n_thresholds == 0 {
            return;
        }
        self.commit();
        self.ap.absorb(&lo.ap);
        self.auc.absorb(&lo.auc);
        if self.n_thresholds == 0 {
            self.first_precision = lo.first_precision;
        }
        self.n_thresholds += lo.n_thresholds;
        self.dec |= lo.dec;
        self.inc |= lo.inc;
        self.tp = lo.tp;
        self.fp = lo.fp;
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

    pub(crate) fn commit(&mut self) {
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

/// AP and ROC AUC of one problem's runs (distinct keys: no threshold to gather, so
/// a tight loop; terms are added in blocks of 64 into the compensated sums).
pub fn ap_auc(r: RunsRef<'_>, n_pos: u64, n_neg: u64) -> (MetricValue, MetricValue) {
    let mut red = Reducer::new();
    let n = r.len().min(r.pos.len()).min(r.neg.len());
    if n == 0 {
        return red.finish(n_pos, n_neg);
    }
    // The first threshold goes through `push` (it records the first precision);
    // the last is left pending, as `push` would leave it.
    red.push(r.keys[0], r.pos[0], r.neg[0]);
    red.commit();
    let (mut tp, mut fp) = (red.tp, red.fp);
    let (mut dec, mut inc) = (red.dec, red.inc);
    let last = n - 1;
    let mut t = 1;
    while t < last {
        let end = (t + 64).min(last);
        let (mut ap, mut auc) = (0.0f64, 0.0f64);
        for i in t..end {
            let (tp1, fp1) = (tp + r.pos[i], fp + r.neg[i]);
            let ps = tp1 + fp1;
            let prec = if ps != 0.0 { tp1 / ps } else { 0.0 };
            ap += (tp1 - tp) * prec;
            let dfp = fp1 - fp;
            dec |= dfp < 0.0;
            inc |= dfp > 0.0;
            auc += dfp * (tp1 + tp);
            tp = tp1;
            fp = fp1;
        }
        red.ap.add(ap);
        red.auc.add(auc);
        t = end;
    }
    red.tp = tp;
    red.fp = fp;
    red.dec = dec;
    red.inc = inc;
    red.n_thresholds += last.saturating_sub(1) as u64;
    if last > 0 {
        red.push(r.keys[last], r.pos[last], r.neg[last]);
    }
    red.finish(n_pos, n_neg)
}

/// AP and ROC AUC of the union of several problems (the micro average: every
/// label's runs as one problem), without materialising the merged runs.
///
/// The key range is cut into blocks of about [`MICRO_BLOCK`] entries at splitters
/// sampled from the parts; each block's slices (found by binary search) are gathered
/// and sorted by key (radix sort, stable: equal keys in part order), blocks in
/// parallel a few at a time, and fed to one [`Reducer`] in descending order. Same
/// result as a k-way merge, at the cost of a sort of small blocks.
pub fn micro_ap_auc(
    parts: &[RunsRef<'_>],
    n_pos: u64,
    n_neg: u64,
    par: &Parallelism,
) -> (MetricValue, MetricValue) {
    let mut red = Reducer::new();
    let total: usize = parts.iter().map(|r| r.len()).sum();
    // Splitters: every SAMPLE-th key of each part, sorted descending, every
    // (MICRO_BLOCK / SAMPLE)-th of those. A block holds keys in (lower, upper].
    let mut sample: Vec<u64> = parts
        .iter()
        .flat_map(|r| r.keys.iter().step_by(SAMPLE).copied())
        .collect();
    sample.sort_unstable_by(|a, b| b.cmp(a));
    sample.dedup();
    let mut uppers: Vec<Option<u64>> = vec![None];
    uppers.extend(
        sample
            .iter()
            .skip(MICRO_BLOCK / SAMPLE)
            .step_by(MICRO_BLOCK / SAMPLE)
            .map(|&k| Some(k)),
    );
    // Block b: keys <= uppers[b] (None: no bound) and > uppers[b + 1].
    let n_blocks = uppers.len();
    let bound = |b: usize| uppers.get(b).copied().flatten();
    let start_of = |r: &RunsRef<'_>, upper: Option<u64>| match upper {
        None => 0,
        Some(u) => r.keys.partition_point(|&k| k > u),
    };
    let batch = par.threads.max(1) * 2;
    let mut b0 = 0;
    while b0 < n_blocks {
        let b1 = (b0 + batch).min(n_blocks);
        let sorted = par
            .map(b1 - b0, total.min(MICRO_BLOCK * (b1 - b0)), |i| {
                let b = b0 + i;
                let (hi, lo) = (bound(b), bound(b + 1));
                let mut keys = Vec::new();
                let mut w = Vec::new();
                for r in parts {
                    let (a, z) = (
                        start_of(r, hi),
                        lo.map_or(r.len(), |l| start_of(r, Some(l))),
                    );
                    for t in a..z {
                        keys.push(r.keys[t]);
                        w.push((r.pos[t], r.neg[t]));
                    }
                }
                sort_block(keys, w)
            })
            .unwrap_or_default();
        for (order, keys, w) in sorted {
            for &i in &order {
                let (pos, neg) = w[i as usize];
                red.push(keys[i as usize], pos, neg);
            }
        }
        b0 = b1;
    }
    red.finish(n_pos, n_neg)
}

/// One block's gathered entries `(keys, weights)` with the order that reads them in
/// descending key order, equal keys in gather order (a stable sort).
#[allow(clippy::type_complexity)]
fn sort_block(keys: Vec<u64>, w: Vec<(f64, f64)>) -> (Vec<u32>, Vec<u64>, Vec<(f64, f64)>) {
    let n = keys.len();
    let order: Vec<u32> = if keys.iter().all(|&k| k < 1 << 32) && u32::try_from(n).is_ok() {
        // 4-byte keys (float32 scores): the negated key and the gather index in one
        // word, sorted by the key-only radix sort (no payload to carry).
        let mut packed: Vec<u64> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (u64::from(!(k as u32)) << 32) | i as u64)
            .collect();
        let mut tmp = vec![0u64; n];
        sort_keys(&mut packed, &mut tmp);
        packed.iter().map(|&x| x as u32).collect()
    } else {
        let mut negated: Vec<u64> = keys.iter().map(|&k| !k).collect();
        let mut pay: Vec<u32> = (0..n as u32).collect();
        sort_by_key_stable(&mut negated, &mut pay);
        pay
    };
    (order, keys, w)
}

/// Entries per block of [`micro_ap_auc`] (about; ties across parts can make a block
/// larger).
pub const MICRO_BLOCK: usize = 1 << 16;
const SAMPLE: usize = 64;

impl From<&Runs> for Reducer {
    fn from(r: &Runs) -> Self {
        let mut red = Reducer::new();
        for t in 0..r.len() {
            red.push(r.keys[t], r.pos[t], r.neg[t]);
        }
        red
    }
}
