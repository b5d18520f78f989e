//! Per-label binary metrics: average precision, ROC AUC (full and McClish partial)
//! and the raw confusion counts behind `precision_recall_curve` / `roc_curve`.
//!
//! Every metric reduces one binary problem (scores, positive flags, optional
//! weights) to scikit-learn's curve: rows are sorted by score descending, ties keep
//! input order (NumPy's stable descending argsort), and each block of tied scores is
//! one operating point (`tps`/`fps` taken at the block's last row). Unweighted
//! counts are `u64`; weighted counts are sequential `f64` cumulative sums in that
//! order, like `np.cumsum`. The final sums use NumPy's pairwise summation, so results
//! agree with scikit-learn to the last bit or nearly so.
//!
//! Masks: a row whose mask entry is `false` is left out of that label's problem;
//! zero-weight rows are left out too (after the single-class check of ROC AUC, as in
//! scikit-learn). Undefined cases are reported through per-problem flags, so that the
//! caller (Python) emits scikit-learn's warnings once per call.

use ndarray::{ArrayView1, ArrayView2};

use crate::error::{MetricError, Result};
use crate::labels::LabelGrid;
use crate::parallel::{Parallelism, ROW_BLOCK};
use crate::score::Score;
use crate::sort::{sort_by_key_stable, sort_keys, RadixKey};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// AP: no positive among the rows used ("recall is set to one"), AP = 0.
pub const FLAG_NO_POSITIVE: u8 = 1;
/// ROC AUC: only one class among the known rows (checked before zero weights are
/// dropped), AUC = NaN.
pub const FLAG_SINGLE_CLASS: u8 = 2;
/// ROC: no negative weight left after dropping zero-weight rows (fpr is NaN).
pub const FLAG_NO_NEGATIVE_LEFT: u8 = 4;
/// ROC: no positive weight left after dropping zero-weight rows (tpr is NaN).
pub const FLAG_NO_POSITIVE_LEFT: u8 = 8;
/// The problem has no known rows at all (mask all false): value NaN.
pub const FLAG_EMPTY: u8 = 16;
/// Known rows exist but all their weights are zero: scikit-learn raises
/// "Sample weights must contain at least one non-zero number."
pub const FLAG_ALL_ZERO_WEIGHT: u8 = 32;
/// ROC: fpr neither increasing nor decreasing (only with negative weights);
/// scikit-learn's `auc` raises.
pub const FLAG_NOT_MONOTONIC: u8 = 64;
/// ROC with `max_fpr`: fewer than two points below `max_fpr` (fpr is NaN), where
/// scikit-learn's `auc` raises "At least 2 points are needed ...".
pub const FLAG_TOO_FEW_POINTS: u8 = 128;

/// Which binary metric to compute per problem.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// Non-interpolated average precision `sum_n (R_n - R_{n-1}) P_n`.
    AveragePrecision,
    /// Area under the ROC curve; `max_fpr` in (0, 1) gives McClish's standardized
    /// partial AUC.
    RocAuc { max_fpr: Option<f64> },
}

/// One metric value plus the flags that explain undefined cases.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricValue {
    pub value: f64,
    pub flags: u8,
}

/// Distinct-threshold confusion counts, in descending score order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Curve {
    /// Cumulative (weighted) positives at each distinct threshold.
    pub tps: Vec<f64>,
    /// Cumulative (weighted) negatives at each distinct threshold.
    pub fps: Vec<f64>,
    /// For each threshold, the gathered position of the block's last row.
    pub last: Vec<u32>,
}

const POS_BIT: u32 = 1 << 31;
const MAX_ITEMS: usize = (POS_BIT - 1) as usize;

/// One binary problem with the left-out rows removed, ready to sort.
/// `keys` are negated order keys (ascending sort = descending score); the payload is
/// the gathered position with the positive flag in the top bit.
#[derive(Default)]
struct Problem {
    keys: Vec<u64>,
    pay: Vec<u32>,
    weights: Option<Vec<f64>>,
    /// Known rows (before the zero-weight filter), split by class.
    known_pos: u64,
    known_neg: u64,
}

impl Problem {
    fn with_capacity(n: usize, weighted: bool) -> Self {
        Problem {
            keys: Vec::with_capacity(n),
            pay: Vec::with_capacity(n),
            weights: if weighted {
                Some(Vec::with_capacity(n))
            } else {
                None
            },
            known_pos: 0,
            known_neg: 0,
        }
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.pay.clear();
        if let Some(w) = self.weights.as_mut() {
            w.clear();
        }
        self.known_pos = 0;
        self.known_neg = 0;
    }

    /// Add a known row; rows with weight 0 are counted (for the single-class check)
    /// but not kept.
    #[inline]
    fn push<S: Score>(&mut self, score: S, positive: bool, weight: f64) -> Result<()> {
        if positive {
            self.known_pos += 1;
        } else {
            self.known_neg += 1;
        }
        if weight == 0.0 {
            return Ok(());
        }
        let pos = self.keys.len();
        if pos >= MAX_ITEMS {
            return Err(MetricError::value(
                "too many elements in one binary problem (limit 2**31 - 1)",
            ));
        }
        self.keys.push(!score.key());
        self.pay
            .push(pos as u32 | if positive { POS_BIT } else { 0 });
        if let Some(w) = self.weights.as_mut() {
            w.push(weight);
        }
        Ok(())
    }

    fn n_known(&self) -> u64 {
        self.known_pos + self.known_neg
    }

    /// Sort and build the curve (consumes the sort order, keeps buffers).
    fn curve(&mut self) -> Curve {
        sort_by_key_stable(&mut self.keys, &mut self.pay);
        match &self.weights {
            None => walk_unweighted(&self.keys, &self.pay),
            Some(w) => walk_weighted(&self.keys, &self.pay, w),
        }
    }

    fn evaluate(&mut self, metric: Metric) -> Result<MetricValue> {
        if self.n_known() == 0 {
            return Ok(MetricValue {
                value: f64::NAN,
                flags: FLAG_EMPTY
                    | if matches!(metric, Metric::RocAuc { .. }) {
                        FLAG_SINGLE_CLASS
                    } else {
                        0
                    },
            });
        }
        match metric {
            Metric::AveragePrecision => {
                if self.keys.is_empty() {
                    return Ok(MetricValue {
                        value: f64::NAN,
                        flags: FLAG_ALL_ZERO_WEIGHT,
                    });
                }
                let c = self.curve();
                Ok(average_precision_from_curve(&c))
            }
            Metric::RocAuc { max_fpr } => {
                if self.known_pos == 0 || self.known_neg == 0 {
                    return Ok(MetricValue {
                        value: f64::NAN,
                        flags: FLAG_SINGLE_CLASS,
                    });
                }
                if self.keys.is_empty() {
                    return Ok(MetricValue {
                        value: f64::NAN,
                        flags: FLAG_ALL_ZERO_WEIGHT,
                    });
                }
                let c = self.curve();
                Ok(roc_auc_from_curve(&c, max_fpr))
            }
        }
    }
}

fn walk_unweighted(keys: &[u64], pay: &[u32]) -> Curve {
    let n = keys.len().min(pay.len());
    let mut c = Curve::default();
    let mut tp: u64 = 0;
    for i in 0..n {
        tp += u64::from(pay[i] >> 31);
        if i + 1 == n || keys[i + 1] != keys[i] {
            let tpf = tp as f64;
            c.tps.push(tpf);
            // sklearn: fps = 1 + threshold_idx - tps (exact in f64 below 2**53)
            c.fps.push(((i as u64 + 1) - tp) as f64);
            c.last.push(pay[i] & !POS_BIT);
        }
    }
    c
}

fn walk_weighted(keys: &[u64], pay: &[u32], weights: &[f64]) -> Curve {
    let n = keys.len().min(pay.len());
    let mut c = Curve::default();
    let (mut tp, mut fp) = (0.0f64, 0.0f64);
    for i in 0..n {
        let p = pay[i];
        let w = weights.get((p & !POS_BIT) as usize).copied().unwrap_or(0.0);
        if p & POS_BIT != 0 {
            tp += w;
            fp += 0.0 * w;
        } else {
            tp += 0.0 * w;
            fp += w;
        }
        if i + 1 == n || keys[i + 1] != keys[i] {
            c.tps.push(tp);
            c.fps.push(fp);
            c.last.push(p & !POS_BIT);
        }
    }
    c
}

/// NumPy's pairwise summation (`np.add.reduce` on a contiguous float64 array).
pub fn pairwise_sum(a: &[f64]) -> f64 {
    pairwise_by(a, |x| x)
}

/// [`pairwise_sum`] over f64 values stored as their bits (scratch buffers of the
/// sort are reused for the terms).
fn pairwise_sum_bits(a: &[u64]) -> f64 {
    pairwise_by(a, f64::from_bits)
}

#[inline]
fn pairwise_by<T: Copy, F: Fn(T) -> f64 + Copy>(a: &[T], f: F) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = -0.0f64;
        for &x in a {
            res += f(x);
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        for (rj, &x) in r.iter_mut().zip(a.iter()) {
            *rj = f(x);
        }
        let full = n - (n % 8);
        for c in a[8..full].chunks_exact(8) {
            for (rj, &x) in r.iter_mut().zip(c.iter()) {
                *rj += f(x);
            }
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &x in &a[full..] {
            res += f(x);
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_by(&a[..n2], f) + pairwise_by(&a[n2..], f)
    }
}

/// Average precision of one curve, exactly as scikit-learn's
/// `max(0, -sum(diff(recall) * precision[:-1]))` over the reversed
/// precision-recall curve. Ties: one operating point per distinct score.
/// No positives: recall is one everywhere, so AP = 0 (flag `FLAG_NO_POSITIVE`).
pub fn average_precision_from_curve(c: &Curve) -> MetricValue {
    let t = c.tps.len().min(c.fps.len());
    if t == 0 {
        return MetricValue {
            value: f64::NAN,
            flags: FLAG_EMPTY,
        };
    }
    let total = c.tps[t - 1];
    let mut flags = 0;
    let recall = |j: usize| -> f64 {
        if total == 0.0 {
            1.0
        } else {
            c.tps[j] / total
        }
    };
    if total == 0.0 {
        flags |= FLAG_NO_POSITIVE;
    }
    let precision = |j: usize| -> f64 {
        let ps = c.tps[j] + c.fps[j];
        if ps != 0.0 {
            c.tps[j] / ps
        } else {
            0.0
        }
    };
    // Reversed arrays: rec_rev[i] = recall[t-1-i], rec_rev[t] = 0.
    let mut terms = Vec::with_capacity(t);
    for i in 0..t {
        let j = t - 1 - i;
        let next = if j == 0 { 0.0 } else { recall(j - 1) };
        terms.push((next - recall(j)) * precision(j));
    }
    let s = -pairwise_sum(&terms);
    MetricValue {
        value: if s > 0.0 { s } else { 0.0 },
        flags,
    }
}

/// `np.interp(x, [x0, x1], [y0, y1])` for one point.
fn interp2(x: f64, x0: f64, x1: f64, y0: f64, y1: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > x1 {
        return y1;
    }
    if x < x0 {
        return y0;
    }
    if x == x1 {
        return y1;
    }
    if x == x0 {
        return y0;
    }
    let slope = (y1 - y0) / (x1 - x0);
    let mut r = slope * (x - x0) + y0;
    if r.is_nan() {
        r = slope * (x - x1) + y1;
        if r.is_nan() && y0 == y1 {
            r = y0;
        }
    }
    r
}

/// `np.searchsorted(a, key, "right")` for one key: NumPy's binary search with its
/// order (NaN last). On a sorted `a` this is the number of leading values `<= key`;
/// negative weights can make fpr unsorted, and then only the same probes give
/// scikit-learn's cut (and its "neither increasing nor decreasing" error).
fn searchsorted_right(a: &[f64], key: f64) -> usize {
    let less = |x: f64, y: f64| x < y || (y.is_nan() && !x.is_nan());
    let (mut lo, mut hi) = (0usize, a.len());
    while lo < hi {
        let mid = lo + ((hi - lo) >> 1);
        if a.get(mid).is_some_and(|&v| less(key, v)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// scikit-learn's `auc(x, y)`: trapezoid with the direction check. `None` when x is
/// neither increasing nor decreasing.
fn trapezoid_auc(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    let mut any_neg = false;
    let mut all_nonpos = true;
    let mut terms = Vec::with_capacity(n.saturating_sub(1));
    for i in 1..n {
        let dx = x[i] - x[i - 1];
        if dx < 0.0 {
            any_neg = true;
        }
        if dx > 0.0 || dx.is_nan() {
            all_nonpos = false;
        }
        terms.push(dx * (y[i] + y[i - 1]) / 2.0);
    }
    let direction = if any_neg {
        if all_nonpos {
            -1.0
        } else {
            return None;
        }
    } else {
        1.0
    };
    Some(direction * pairwise_sum(&terms))
}

/// ROC AUC of one curve as scikit-learn's `_binary_roc_auc_score` computes it:
/// `roc_curve(drop_intermediate=True)` (collinear points dropped, (0, 0) prepended),
/// trapezoid `auc(fpr, tpr)`. Ties: one point per distinct score, i.e. a tied
/// positive/negative pair counts 1/2 (Mann-Whitney). With `max_fpr` in (0, 1):
/// partial area up to `max_fpr` with tpr linearly interpolated there, then
/// McClish's correction `0.5 * (1 + (pAUC - m²/2) / (m - m²/2))`.
pub fn roc_auc_from_curve(c: &Curve, max_fpr: Option<f64>) -> MetricValue {
    let t = c.tps.len().min(c.fps.len());
    let mut flags = 0;
    // drop_intermediate (only when more than two thresholds)
    let mut fps = Vec::with_capacity(t + 1);
    let mut tps = Vec::with_capacity(t + 1);
    fps.push(0.0);
    tps.push(0.0);
    for i in 0..t {
        let keep = if t > 2 && i > 0 && i + 1 < t {
            let d2f = (c.fps[i + 1] - c.fps[i]) - (c.fps[i] - c.fps[i - 1]);
            let d2t = (c.tps[i + 1] - c.tps[i]) - (c.tps[i] - c.tps[i - 1]);
            d2f != 0.0 || d2t != 0.0
        } else {
            true
        };
        if keep {
            fps.push(c.fps[i]);
            tps.push(c.tps[i]);
        }
    }
    let m = fps.len();
    let (fl, tl) = (fps[m - 1], tps[m - 1]);
    // `!(x > 0)` mirrors `if fps[-1] <= 0` (NaN does not warn but divides to NaN).
    let fpr: Vec<f64> = if fl <= 0.0 {
        flags |= FLAG_NO_NEGATIVE_LEFT;
        vec![f64::NAN; m]
    } else {
        fps.iter().map(|&f| f / fl).collect()
    };
    let tpr: Vec<f64> = if tl <= 0.0 {
        flags |= FLAG_NO_POSITIVE_LEFT;
        vec![f64::NAN; m]
    } else {
        tps.iter().map(|&x| x / tl).collect()
    };
    let full = match max_fpr {
        None => true,
        Some(v) => v == 1.0,
    };
    let value = if full {
        trapezoid_auc(&fpr, &tpr)
    } else {
        let mf = max_fpr.unwrap_or(1.0);
        // A NaN max_fpr (rejected before the kernels, as scikit-learn does) keeps no
        // point, as the unweighted path decides it.
        let stop = if mf.is_nan() {
            0
        } else {
            searchsorted_right(&fpr, mf)
        };
        let at = |i: isize| -> f64 {
            let idx = if i < 0 { m as isize + i } else { i } as usize;
            fpr.get(idx).copied().unwrap_or(f64::NAN)
        };
        let at_t = |i: isize| -> f64 {
            let idx = if i < 0 { m as isize + i } else { i } as usize;
            tpr.get(idx).copied().unwrap_or(f64::NAN)
        };
        let s = stop as isize;
        let y_new = interp2(mf, at(s - 1), at(s), at_t(s - 1), at_t(s));
        let mut xs: Vec<f64> = fpr[..stop].to_vec();
        let mut ys: Vec<f64> = tpr[..stop].to_vec();
        xs.push(mf);
        ys.push(y_new);
        if xs.len() < 2 {
            return MetricValue {
                value: f64::NAN,
                flags: flags | FLAG_TOO_FEW_POINTS,
            };
        }
        trapezoid_auc(&xs, &ys).map(|p| {
            let min_area = 0.5 * mf * mf;
            let max_area = mf;
            0.5 * (1.0 + (p - min_area) / (max_area - min_area))
        })
    };
    match value {
        Some(v) => MetricValue { value: v, flags },
        None => MetricValue {
            value: f64::NAN,
            flags: flags | FLAG_NOT_MONOTONIC,
        },
    }
}

fn check_shapes<S>(
    y_score: &ArrayView2<S>,
    y_dim: (usize, usize),
    weight: Option<&ArrayView1<f64>>,
    mask: Option<&ArrayView2<bool>>,
) -> Result<()> {
    if y_score.dim() != y_dim {
        return Err(MetricError::shape(format!(
            "y_true and y_score have different shape: {:?} vs {:?}",
            y_dim,
            y_score.dim()
        )));
    }
    if let Some(w) = weight {
        if w.len() != y_dim.0 {
            return Err(MetricError::shape(format!(
                "Found input variables with inconsistent numbers of samples: [{}, {}]",
                y_dim.0,
                w.len()
            )));
        }
    }
    if let Some(m) = mask {
        if m.dim() != y_dim {
            return Err(MetricError::shape(format!(
                "mask has shape {:?} but y_true has shape {:?}",
                m.dim(),
                y_dim
            )));
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ unweighted fast path
//
// Without sample weights, AP and ROC AUC only need, for each tie block in descending
// score order, how many positives and negatives it holds: tps/fps are exact integer
// counts, whatever the order inside a block. So each label's keys are gathered into
// two runs (positives from the front of one buffer, negatives from its back), each
// run is sorted without payload (`sort_keys`), and the two sorted runs are walked
// together block by block. The scratch half of the sort buffer then holds the sum
// terms, so a label needs 16 bytes per row in total. Float32 scores sort 4-byte keys
// and walk the runs again for the counts and terms instead of storing them (8 bytes
// per row: issue 3 bounds float32 calls at 0.5x the score matrix). Values are
// bit-identical to the general path (same counts, same formulas, same pairwise
// summation order). Labels of at least `WALK_MIN` known rows with both classes skip
// the sorts: `crate::count_walk` partitions the two runs together and refines only
// ranges that hold positives (same counts and terms, compensated sum, ~1e-16).

/// One label's known keys, split by class, plus scratch space. `K` is `u64`, or
/// `u32` for 4-byte scores (per label, see [`Score::narrow_key`]): 8 bytes per row
/// instead of 16, the block counts and sum terms then being streamed
/// ([`label_values_streamed`]) since they no longer fit in the key buffers.
struct SplitKeys<K: RadixKey = u64> {
    keys: Vec<K>,
    tmp: Vec<K>,
    n_pos: usize,
    n_neg: usize,
    /// Second label of a pair ([`SplitKeys::load_pair`]), swapped in by
    /// [`SplitKeys::take_spare`]; empty unless pairs are used.
    spare: Vec<K>,
    spare_pos: usize,
    spare_neg: usize,
    /// Whether both runs are sorted (loading leaves them unsorted: large labels
    /// never sort them, see [`crate::count_walk`]).
    sorted: bool,
}

/// Writes one label's keys into a buffer of `n` slots: positives from the front,
/// negatives from the back.
struct SplitWriter<'a, K> {
    keys: &'a mut [K],
    p: usize,
    back: usize,
}

impl<'a, K: Copy> SplitWriter<'a, K> {
    fn new(keys: &'a mut [K]) -> Self {
        let back = keys.len();
        SplitWriter { keys, p: 0, back }
    }

    /// Branch-free: write the key at both ends, advance the end of its class.
    /// Invariant: p < back before each call (at most `n` calls).
    #[inline(always)]
    fn put(&mut self, k: K, pos: bool) {
        if let Some(x) = self.keys.get_mut(self.p) {
            *x = k;
        }
        if let Some(x) = self.keys.get_mut(self.back.wrapping_sub(1)) {
            *x = k;
        }
        self.p += usize::from(pos);
        self.back -= usize::from(!pos);
    }

    /// `(positives, negatives)` written.
    fn counts(&self) -> (usize, usize) {
        (self.p, self.keys.len() - self.back)
    }
}

/// Make `v` exactly `n` long; its contents are scratch (reused buffers of the
/// right length are not cleared again).
fn scratch<K: Copy + Default>(v: &mut Vec<K>, n: usize) {
    if v.len() != n {
        v.clear();
        v.resize(n, K::default());
    }
}

impl<K: RadixKey> SplitKeys<K> {
    fn new() -> Self {
        Self::with_capacity(0, false)
    }

    /// Room for labels of `n` rows (and a pair's second label when `spare`),
    /// reserved but not touched: pages the passes never write cost no memory.
    fn with_capacity(n: usize, spare: bool) -> Self {
        SplitKeys {
            keys: Vec::with_capacity(n),
            tmp: Vec::with_capacity(n),
            n_pos: 0,
            n_neg: 0,
            spare: Vec::with_capacity(if spare { n } else { 0 }),
            spare_pos: 0,
            spare_neg: 0,
            sorted: false,
        }
    }

    /// `feed` calls `put(negated key, positive)` at most `n` times (both runs are
    /// left unsorted).
    fn fill(&mut self, n: usize, feed: impl FnOnce(&mut SplitWriter<'_, K>)) {
        scratch(&mut self.keys, n);
        let mut w = SplitWriter::new(&mut self.keys);
        feed(&mut w);
        (self.n_pos, self.n_neg) = w.counts();
        self.sorted = false;
    }

    /// Sort the positive and the negative run (ascending negated keys = descending
    /// scores), unless they already are.
    fn sort_runs(&mut self) {
        if self.sorted {
            return;
        }
        self.sorted = true;
        let n = self.keys.len();
        scratch(&mut self.tmp, n);
        let (p, back) = (self.n_pos, n - self.n_neg);
        let (front, rest) = self.keys.split_at_mut(p);
        let (tf, trest) = self.tmp.split_at_mut(p);
        sort_keys(front, tf);
        let negs = &mut rest[back - p..];
        let tn = &mut trest[back - p..];
        sort_keys(negs, tn);
    }

    /// Gather column `j` (known rows only) under the order key `key` (a
    /// tie-preserving key of [`Score`]).
    fn load<S: Score, L: LabelGrid>(
        &mut self,
        s: ArrayView2<S>,
        y: &L,
        m: Option<&ArrayView2<bool>>,
        j: usize,
        key: impl Fn(S) -> K + Copy,
    ) {
        let (sc, yc) = (s.column(j), y.column(j));
        self.fill(sc.len(), |w| match m {
            None => ndarray::Zip::from(sc)
                .and(yc)
                .for_each(|&v, &t| w.put(!key(v), L::is_pos(t, j))),
            Some(m) => ndarray::Zip::from(sc)
                .and(yc)
                .and(m.column(j))
                .for_each(|&v, &t, &k| {
                    if k {
                        w.put(!key(v), L::is_pos(t, j))
                    }
                }),
        });
    }

    /// Gather columns `j` and `j + 1` in one pass over the rows (each score row is
    /// read once for both labels: the gather from a row-major matrix is bound by
    /// the cache lines it touches). Label `j` is left in `keys`, label `j + 1` in
    /// `spare` for [`SplitKeys::take_spare`].
    fn load_pair<S: Score, L: LabelGrid>(
        &mut self,
        s: ArrayView2<S>,
        y: &L,
        m: Option<&ArrayView2<bool>>,
        j: usize,
        key: impl Fn(S) -> K + Copy,
    ) {
        let n = s.nrows();
        scratch(&mut self.keys, n);
        scratch(&mut self.spare, n);
        let mut a = SplitWriter::new(&mut self.keys);
        let mut b = SplitWriter::new(&mut self.spare);
        let (s0, s1) = (s.column(j), s.column(j + 1));
        let (y0, y1) = (y.column(j), y.column(j + 1));
        match m {
            None => ndarray::Zip::from(s0)
                .and(s1)
                .and(y0)
                .and(y1)
                .for_each(|&u, &v, &t, &r| {
                    a.put(!key(u), L::is_pos(t, j));
                    b.put(!key(v), L::is_pos(r, j + 1));
                }),
            Some(m) => ndarray::Zip::from(s0)
                .and(s1)
                .and(y0)
                .and(y1)
                .and(m.column(j))
                .and(m.column(j + 1))
                .for_each(|&u, &v, &t, &r, &k0, &k1| {
                    if k0 {
                        a.put(!key(u), L::is_pos(t, j));
                    }
                    if k1 {
                        b.put(!key(v), L::is_pos(r, j + 1));
                    }
                }),
        }
        (self.n_pos, self.n_neg) = a.counts();
        (self.spare_pos, self.spare_neg) = b.counts();
        self.sorted = false;
    }

    /// Make the second label of [`SplitKeys::load_pair`] current.
    fn take_spare(&mut self) {
        std::mem::swap(&mut self.keys, &mut self.spare);
        self.n_pos = self.spare_pos;
        self.n_neg = self.spare_neg;
        self.sorted = false;
    }
}

impl SplitKeys<u64> {
    /// Gather every known cell of a matrix (micro average).
    fn load_all<S: Score, L: LabelGrid>(
        &mut self,
        s: ArrayView2<S>,
        y: &L,
        m: Option<&ArrayView2<bool>>,
    ) {
        let (n, k) = s.dim();
        self.fill(s.len(), |w| {
            for i in 0..n {
                let (sr, yr) = (s.row(i), y.row(i));
                let mr = m.map(|m| m.row(i));
                for j in 0..k {
                    let known = mr
                        .as_ref()
                        .is_none_or(|r| r.get(j).copied().unwrap_or(false));
                    let t = yr.get(L::cell_index(j)).is_some_and(|&c| L::is_pos(c, j));
                    if let (true, Some(&v)) = (known, sr.get(j)) {
                        w.put(!v.key(), t);
                    }
                }
            }
        });
    }
}

/// Merge two ascending runs of (negated) keys into tie blocks in descending score
/// order, writing for each block its cumulative counts `(positives << 32) | rows`
/// (both below 2**31) into `out`; returns the number of blocks. Branch-free merge:
/// ties between the runs are taken from `pos` first (the order inside a block does
/// not matter for counts).
fn merge_blocks(pos: &[u64], neg: &[u64], out: &mut [u64]) -> usize {
    let (np, nn) = (pos.len(), neg.len());
    let total = np + nn;
    let (mut i, mut j, mut t) = (0usize, 0usize, 0usize);
    let (mut cp, mut ca) = (0u64, 0u64);
    // Heads, u64::MAX when exhausted (validity is decided by the indices).
    let head = |r: &[u64], x: usize| r.get(x).copied().unwrap_or(u64::MAX);
    let (mut a, mut b) = (head(pos, 0), head(neg, 0));
    for step in 0..total {
        let take_pos = i < np && (j >= nn || a <= b);
        let k = if take_pos { a } else { b };
        i += usize::from(take_pos);
        j += usize::from(!take_pos);
        cp += u64::from(take_pos);
        ca += 1;
        a = head(pos, i);
        b = head(neg, j);
        let next = a.min(b);
        let boundary = step + 1 == total || next != k;
        if let Some(o) = out.get_mut(t) {
            *o = (cp << 32) | ca;
        }
        t += usize::from(boundary);
    }
    t
}

#[inline]
fn split_cum(x: u64) -> (f64, f64) {
    ((x >> 32) as f64, (x & 0xFFFF_FFFF) as f64)
}

/// Average precision from the block counts of [`merge_blocks`] (unweighted). Same
/// terms, same order and same pairwise sum as [`average_precision_from_curve`]:
/// `tps + fps` is the exact row count, so `precision = tps / rows`.
fn ap_blocks(cum: &[u64], n_pos: u64, terms: &mut [u64]) -> MetricValue {
    let t = cum.len().min(terms.len());
    if t == 0 {
        return MetricValue {
            value: f64::NAN,
            flags: FLAG_EMPTY,
        };
    }
    if n_pos == 0 {
        return MetricValue {
            value: 0.0,
            flags: FLAG_NO_POSITIVE,
        };
    }
    let pf = n_pos as f64;
    let (cum, terms) = (&cum[..t], &mut terms[..t]);
    // Reversed curve: term for block j goes to t - 1 - j.
    // `prev_r` is the previous block's `tps / pf` (0 / pf = 0 before the first).
    let mut prev_r = 0.0f64;
    for (&c, o) in cum.iter().zip(terms.iter_mut().rev()) {
        let (tps, rows) = split_cum(c);
        let r = tps / pf;
        let term = (prev_r - r) * (tps / rows);
        *o = term.to_bits();
        prev_r = r;
    }
    let s = -pairwise_sum_bits(terms);
    MetricValue {
        value: if s > 0.0 { s } else { 0.0 },
        flags: 0,
    }
}

/// Full ROC AUC from the block counts of [`merge_blocks`] (unweighted). Same points
/// (drop_intermediate, (0, 0) prepended), same terms and pairwise sum as
/// [`roc_auc_from_curve`] with `max_fpr = None`.
fn auc_blocks(cum: &[u64], n_pos: u64, n_neg: u64, terms: &mut [u64]) -> MetricValue {
    if n_pos == 0 || n_neg == 0 {
        return MetricValue {
            value: f64::NAN,
            flags: FLAG_SINGLE_CLASS,
        };
    }
    let t = cum.len();
    let (tl, fl) = (n_pos as f64, n_neg as f64);
    let (mut px, mut py) = (0.0f64, 0.0f64); // last kept point (fpr, tpr)
    let mut u = 0usize;
    let mut prev = 0u64; // cumulative counts before block i
    for i in 0..t {
        let c = cum[i];
        // Point i is collinear with its neighbours (dropped) iff blocks i and i+1
        // have the same composition: both second differences are zero.
        let keep = i == 0
            || i + 1 == t
            || cum
                .get(i + 1)
                .is_some_and(|&nx| nx.wrapping_sub(c) != c.wrapping_sub(prev));
        prev = c;
        if keep {
            let (tp, rows) = split_cum(c);
            let x = (rows - tp) / fl;
            let y = tp / tl;
            if let Some(o) = terms.get_mut(u) {
                *o = ((x - px) * (y + py) / 2.0).to_bits();
            }
            u += 1;
            px = x;
            py = y;
        }
    }
    let used = u.min(terms.len());
    MetricValue {
        value: pairwise_sum_bits(&terms[..used]),
        flags: 0,
    }
}

/// Run `f(unit, &mut SplitKeys)` for every unit `0..units` (a label or a pair of
/// labels) of `rows` rows each, `elements` cells in all, in parallel over units when
/// worthwhile; each worker reuses its own buffers (with room for a pair's second
/// label when `pairs`), reserved on the calling thread ([`Parallelism::map_init`]).
/// Results in unit order.
fn for_each_unit<K: RadixKey, R: Send, F>(
    units: usize,
    elements: usize,
    rows: usize,
    pairs: bool,
    par: &Parallelism,
    f: F,
) -> Result<Vec<R>>
where
    F: Fn(usize, &mut SplitKeys<K>) -> R + Sync + Send,
{
    let workers = unit_workers(units, elements, par);
    let next = AtomicUsize::new(0);
    let init = || SplitKeys::with_capacity(rows, pairs);
    let parts = par.map_init(workers, elements, init, |buf| {
        let mut out = Vec::new();
        loop {
            let j = next.fetch_add(1, Ordering::Relaxed);
            if j >= units {
                break;
            }
            out.push((j, f(j, buf)));
        }
        out
    })?;
    let mut all: Vec<(usize, R)> = parts.into_iter().flatten().collect();
    all.sort_by_key(|x| x.0);
    Ok(all.into_iter().map(|x| x.1).collect())
}

/// Workers for `units` independent units of `elements` cells in total.
fn unit_workers(units: usize, elements: usize, par: &Parallelism) -> usize {
    if par.is_parallel_for(elements) {
        par.threads.min(units).max(1)
    } else {
        1
    }
}

/// Labels with at least this many known rows (and both classes) take
/// [`crate::count_walk`]: no full sort, values within ~1e-15 of the sorted path
/// instead of bit for bit (docs/deviations.md).
const WALK_MIN: usize = 1 << 17;

/// The value of a metric that was not asked for (or of an empty label).
const NOT_COMPUTED: MetricValue = MetricValue {
    value: f64::NAN,
    flags: FLAG_EMPTY,
};

/// Unweighted AP and full ROC AUC of one gathered label.
fn label_values<K: RadixKey>(
    buf: &mut SplitKeys<K>,
    ap: bool,
    auc: bool,
) -> (MetricValue, MetricValue) {
    let empty = NOT_COMPUTED;
    if buf.n_pos + buf.n_neg == 0 {
        let e_auc = MetricValue {
            value: f64::NAN,
            flags: FLAG_EMPTY | FLAG_SINGLE_CLASS,
        };
        return (empty, e_auc);
    }
    let nk = buf.keys.len();
    let (n_pos, n_neg) = (buf.n_pos, buf.n_neg);
    if n_pos > 0 && n_neg > 0 && n_pos + n_neg >= WALK_MIN {
        scratch(&mut buf.tmp, nk);
        buf.sorted = false; // the walk clobbers the keys
        let (a, b) = crate::count_walk::ap_auc(&mut buf.keys, n_pos, n_neg, &mut buf.tmp);
        return (if ap { a } else { empty }, if auc { b } else { empty });
    }
    sorted_label_values(buf, ap, auc)
}

/// [`label_values`] of a non-empty label from the sorted runs (bit for bit
/// scikit-learn's sums).
fn sorted_label_values<K: RadixKey>(
    buf: &mut SplitKeys<K>,
    ap: bool,
    auc: bool,
) -> (MetricValue, MetricValue) {
    let empty = NOT_COMPUTED;
    buf.sort_runs();
    let (np, nn) = (buf.n_pos as u64, buf.n_neg as u64);
    let nk = buf.keys.len();
    let (n_pos, n_neg) = (buf.n_pos, buf.n_neg);
    let (Some(keys), Some(tmp)) = (K::as_u64_mut(&mut buf.keys), K::as_u64_mut(&mut buf.tmp))
    else {
        // Narrow keys: no room for 8-byte counts and terms, stream them.
        let (pos, neg) = (&buf.keys[..n_pos], &buf.keys[nk - n_neg..]);
        return label_values_streamed(pos, neg, ap, auc);
    };
    // Block counts go to the sort's scratch buffer, the terms to the key buffer
    // (the keys are no longer needed once merged).
    let t = merge_blocks(&keys[..n_pos], &keys[nk - n_neg..], tmp);
    let cum = &tmp[..t.min(tmp.len())];
    let a = if ap { ap_blocks(cum, np, keys) } else { empty };
    let b = if auc {
        auc_blocks(cum, np, nn, keys)
    } else {
        empty
    };
    (a, b)
}

/// Tie blocks of two ascending runs of (negated) keys, as [`merge_blocks`] writes
/// them (cumulative `(positives << 32) | rows`), one at a time, from either end.
pub(crate) struct Blocks<'a, K> {
    pub(crate) pos: &'a [K],
    pub(crate) neg: &'a [K],
}

impl<K: RadixKey> Blocks<'_, K> {
    /// Remove the next block in descending score order: its (positives,
    /// negatives), `None` when both runs are exhausted.
    pub(crate) fn next_front(&mut self) -> Option<(usize, usize)> {
        let k = match (self.pos.first(), self.neg.first()) {
            (Some(&a), Some(&b)) => a.min(b),
            (Some(&a), None) => a,
            (None, Some(&b)) => b,
            (None, None) => return None,
        };
        let p = self.pos.iter().take_while(|&&x| x == k).count();
        let q = self.neg.iter().take_while(|&&x| x == k).count();
        self.pos = &self.pos[p..];
        self.neg = &self.neg[q..];
        Some((p, q))
    }

    /// Cumulative counts through the next block in descending score order.
    fn pop_front(&mut self, cum: &mut u64) -> bool {
        let Some((p, q)) = self.next_front() else {
            return false;
        };
        *cum += ((p as u64) << 32) + (p + q) as u64;
        true
    }

    /// Remove the last block (lowest score); `cum` goes from the counts through
    /// it to the counts before it.
    fn pop_back(&mut self, cum: &mut u64) -> bool {
        let k = match (self.pos.last(), self.neg.last()) {
            (Some(&a), Some(&b)) => a.max(b),
            (Some(&a), None) => a,
            (None, Some(&b)) => b,
            (None, None) => return false,
        };
        let p = self.pos.iter().rev().take_while(|&&x| x == k).count();
        let q = self.neg.iter().rev().take_while(|&&x| x == k).count();
        self.pos = &self.pos[..self.pos.len() - p];
        self.neg = &self.neg[..self.neg.len() - q];
        *cum -= ((p as u64) << 32) + (p + q) as u64;
        true
    }
}

/// NumPy's pairwise sum (as [`pairwise_by`]) of `n` values taken in order from
/// `next`: the same tree, without storing the values.
fn pairwise_stream(n: usize, next: &mut impl FnMut() -> f64) -> f64 {
    if n < 8 {
        let mut res = -0.0f64;
        for _ in 0..n {
            res += next();
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        for rj in r.iter_mut() {
            *rj = next();
        }
        let full = n - (n % 8);
        for _ in (8..full).step_by(8) {
            for rj in r.iter_mut() {
                *rj += next();
            }
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for _ in full..n {
            res += next();
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        let a = pairwise_stream(n2, next);
        a + pairwise_stream(n - n2, next)
    }
}

/// Whether the point of the block with cumulative counts `c` (after a block ending
/// at `prev`, before one ending at `next`, if any) survives drop_intermediate, as in
/// [`auc_blocks`] (the first point is always kept).
#[inline]
fn keep_point(prev: u64, c: u64, next: Option<u64>) -> bool {
    next.is_none_or(|nx| nx.wrapping_sub(c) != c.wrapping_sub(prev))
}

/// ROC points kept by [`auc_blocks`] (drop_intermediate), walked block by block.
struct AucPoints<'a, K> {
    blocks: Blocks<'a, K>,
    i: usize,
    prev: u64,
    cur: Option<u64>,
    px: f64,
    py: f64,
}

impl<'a, K: RadixKey> AucPoints<'a, K> {
    fn new(pos: &'a [K], neg: &'a [K]) -> Self {
        let mut blocks = Blocks { pos, neg };
        let mut c = 0u64;
        let cur = blocks.pop_front(&mut c).then_some(c);
        AucPoints {
            blocks,
            i: 0,
            prev: 0,
            cur,
            px: 0.0,
            py: 0.0,
        }
    }

    /// The next trapezoid term of [`auc_blocks`].
    fn next_term(&mut self, tl: f64, fl: f64) -> Option<f64> {
        loop {
            let c = self.cur?;
            let mut nx = c;
            let nx = self.blocks.pop_front(&mut nx).then_some(nx);
            let keep = self.i == 0 || keep_point(self.prev, c, nx);
            self.prev = c;
            self.cur = nx;
            self.i += 1;
            if keep {
                let (tp, rows) = split_cum(c);
                let x = (rows - tp) / fl;
                let y = tp / tl;
                let term = (x - self.px) * (y + self.py) / 2.0;
                self.px = x;
                self.py = y;
                return Some(term);
            }
        }
    }
}

/// [`label_values`] for keys too narrow to hold the block counts and terms: the
/// same counts, terms and pairwise sums (hence bit-identical values), computed by
/// walking the sorted runs again instead of storing them (a counting walk first,
/// since the pairwise tree depends on the number of terms).
fn label_values_streamed<K: RadixKey>(
    pos: &[K],
    neg: &[K],
    ap: bool,
    auc: bool,
) -> (MetricValue, MetricValue) {
    let empty = NOT_COMPUTED;
    let (np, nn) = (pos.len() as u64, neg.len() as u64);
    // One counting walk: blocks (AP terms) and kept ROC points (AUC terms).
    let (mut t, mut u) = (0usize, 0usize);
    let mut blocks = Blocks { pos, neg };
    let (mut prev, mut c) = (0u64, 0u64);
    if blocks.pop_front(&mut c) {
        t = 1;
        u = 1;
        loop {
            let mut nx = c;
            let more = blocks.pop_front(&mut nx);
            if t > 1 {
                u += usize::from(keep_point(prev, c, more.then_some(nx)));
            }
            if !more {
                break;
            }
            t += 1;
            prev = c;
            c = nx;
        }
    }
    let a = if !ap || t == 0 {
        empty
    } else if np == 0 {
        MetricValue {
            value: 0.0,
            flags: FLAG_NO_POSITIVE,
        }
    } else {
        // Terms in the order of the reversed curve = ascending score order.
        let pf = np as f64;
        let mut blocks = Blocks { pos, neg };
        let mut c = (np << 32) + np + nn;
        let mut next = || {
            let (tps, rows) = split_cum(c);
            blocks.pop_back(&mut c);
            let prev_r = split_cum(c).0 / pf;
            let r = tps / pf;
            (prev_r - r) * (tps / rows)
        };
        let s = -pairwise_stream(t, &mut next);
        MetricValue {
            value: if s > 0.0 { s } else { 0.0 },
            flags: 0,
        }
    };
    let b = if !auc {
        empty
    } else if np == 0 || nn == 0 {
        MetricValue {
            value: f64::NAN,
            flags: FLAG_SINGLE_CLASS,
        }
    } else {
        let (tl, fl) = (np as f64, nn as f64);
        let mut pts = AucPoints::new(pos, neg);
        let mut next = || pts.next_term(tl, fl).unwrap_or(0.0);
        MetricValue {
            value: pairwise_stream(u, &mut next),
            flags: 0,
        }
    };
    (a, b)
}

/// ROC points kept by drop_intermediate, walked block by block: the cumulative
/// counts `(positives << 32) | rows` of each kept point in descending score order,
/// the same points as [`auc_blocks`] and [`roc_auc_from_curve`] (without the
/// prepended origin).
struct KeptPoints<'a, K> {
    blocks: Blocks<'a, K>,
    first: bool,
    prev: u64,
    cur: Option<u64>,
}

impl<'a, K: RadixKey> KeptPoints<'a, K> {
    fn new(pos: &'a [K], neg: &'a [K]) -> Self {
        let mut blocks = Blocks { pos, neg };
        let mut c = 0u64;
        let cur = blocks.pop_front(&mut c).then_some(c);
        KeptPoints {
            blocks,
            first: true,
            prev: 0,
            cur,
        }
    }

    /// Counts of the next kept point.
    fn next_point(&mut self) -> Option<u64> {
        loop {
            let c = self.cur?;
            let mut nx = c;
            let nx = self.blocks.pop_front(&mut nx).then_some(nx);
            let keep = self.first || keep_point(self.prev, c, nx);
            self.first = false;
            self.prev = c;
            self.cur = nx;
            if keep {
                return Some(c);
            }
        }
    }
}

/// McClish-standardised partial ROC AUC up to `mf` of one label from its sorted
/// runs (unweighted), bit-identical to [`roc_auc_from_curve`] with `Some(mf)`:
/// the same kept points, the same `searchsorted(fpr, mf, "right")` and
/// interpolation at `mf`, the same trapezoid terms in the same order and the same
/// pairwise sum. Nothing is stored: a first walk counts the points up to `mf` (the
/// pairwise tree depends on the number of terms) and finds the two around it, a
/// second one streams the terms; both stop at the first point beyond `mf`, so
/// the work is proportional to the part of the curve that is used.
fn partial_auc_streamed<K: RadixKey>(pos: &[K], neg: &[K], mf: f64) -> MetricValue {
    let (np, nn) = (pos.len() as u64, neg.len() as u64);
    if np + nn == 0 {
        return MetricValue {
            value: f64::NAN,
            flags: FLAG_EMPTY | FLAG_SINGLE_CLASS,
        };
    }
    if np == 0 || nn == 0 {
        return MetricValue {
            value: f64::NAN,
            flags: FLAG_SINGLE_CLASS,
        };
    }
    let (tl, fl) = (np as f64, nn as f64);
    // (fpr, tpr) of a point, as `fps / fps[-1]`, `tps / tps[-1]`.
    let point = |c: u64| {
        let (tp, rows) = split_cum(c);
        ((rows - tp) / fl, tp / tl)
    };
    // `stop` = searchsorted(fpr, mf, "right") over the origin and the kept points
    // (fpr is non-decreasing here); `(xa, ya)` = point stop - 1, `(xb, yb)` =
    // point stop (NaN past the end, as the general path reads it).
    if mf.is_nan() || mf < 0.0 {
        // Even the origin (fpr 0) is not <= mf: stop = 0, only the interpolated
        // point is left (fewer than two points).
        return MetricValue {
            value: f64::NAN,
            flags: FLAG_TOO_FEW_POINTS,
        };
    }
    let mut stop = 1usize;
    let (mut xa, mut ya) = (0.0f64, 0.0f64);
    let (mut xb, mut yb) = (f64::NAN, f64::NAN);
    let mut pts = KeptPoints::new(pos, neg);
    while let Some(c) = pts.next_point() {
        let (x, y) = point(c);
        if x <= mf {
            stop += 1;
            (xa, ya) = (x, y);
        } else {
            (xb, yb) = (x, y);
            break;
        }
    }
    let y_new = interp2(mf, xa, xb, ya, yb);
    // Terms of `auc(xs, ys)` with xs = fpr[..stop] + [mf], ys = tpr[..stop] + [y_new]:
    // stop - 1 terms between kept points, then the one up to `mf`.
    let mut pts = KeptPoints::new(pos, neg);
    let (mut px, mut py) = (0.0f64, 0.0f64);
    let mut left = stop - 1;
    let (mut any_neg, mut all_nonpos) = (false, true);
    let mut next = || {
        let (x, y) = if left > 0 {
            left -= 1;
            pts.next_point().map_or((f64::NAN, f64::NAN), point)
        } else {
            (mf, y_new)
        };
        let dx = x - px;
        if dx < 0.0 {
            any_neg = true;
        }
        if dx > 0.0 || dx.is_nan() {
            all_nonpos = false;
        }
        let term = dx * (y + py) / 2.0;
        px = x;
        py = y;
        term
    };
    let sum = pairwise_stream(stop, &mut next);
    let direction = if any_neg {
        if all_nonpos {
            -1.0
        } else {
            return MetricValue {
                value: f64::NAN,
                flags: FLAG_NOT_MONOTONIC,
            };
        }
    } else {
        1.0
    };
    let p = direction * sum;
    let min_area = 0.5 * mf * mf;
    let max_area = mf;
    MetricValue {
        value: 0.5 * (1.0 + (p - min_area) / (max_area - min_area)),
        flags: 0,
    }
}

/// [`label_values`] with the ROC AUC optionally partial: `max_fpr` other than
/// `None` and `1.0` (which scikit-learn treats as the full area) gives
/// [`partial_auc_streamed`], computed from the sorted runs before AP (which may
/// reuse the key buffer for its terms).
fn label_values_fpr<K: RadixKey>(
    buf: &mut SplitKeys<K>,
    ap: bool,
    auc: bool,
    max_fpr: Option<f64>,
) -> (MetricValue, MetricValue) {
    let mf = match max_fpr {
        Some(v) if auc && v != 1.0 => v,
        _ => return label_values(buf, ap, auc),
    };
    buf.sort_runs();
    let nk = buf.keys.len();
    let pos = buf.keys.get(..buf.n_pos).unwrap_or(&[]);
    let neg = buf.keys.get(nk.saturating_sub(buf.n_neg)..).unwrap_or(&[]);
    let b = partial_auc_streamed(pos, neg, mf);
    let a = if ap {
        label_values(buf, true, false).0
    } else {
        MetricValue {
            value: f64::NAN,
            flags: FLAG_EMPTY,
        }
    };
    (a, b)
}

/// Average precision and full ROC AUC of every label from one sort per label.
///
/// Same definitions, tie rule and masks as [`per_label`] with
/// `Metric::AveragePrecision` and `Metric::RocAuc { max_fpr: None }`; the values are
/// identical to those two calls. With weights it falls back to them.
pub fn per_label_ap_auc<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
    par: &Parallelism,
) -> Result<(Vec<MetricValue>, Vec<MetricValue>)> {
    if weight.is_some() {
        let ap = per_label(y_score, y_pos, weight, mask, Metric::AveragePrecision, par)?;
        let auc = per_label(
            y_score,
            y_pos,
            weight,
            mask,
            Metric::RocAuc { max_fpr: None },
            par,
        )?;
        return Ok((ap, auc));
    }
    check_shapes(&y_score, y_pos.dim(), None, mask.as_ref())?;
    let both = unweighted_per_label(y_score, &y_pos, mask, true, true, None, par)?;
    Ok(both.into_iter().unzip())
}

fn unweighted_per_label<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: &L,
    mask: Option<ArrayView2<bool>>,
    ap: bool,
    auc: bool,
    max_fpr: Option<f64>,
    par: &Parallelism,
) -> Result<Vec<(MetricValue, MetricValue)>> {
    let (n, k) = y_score.dim();
    if n >= MAX_ITEMS {
        return Err(MetricError::value(
            "too many elements in one binary problem (limit 2**31 - 1)",
        ));
    }
    let elements = n.saturating_mul(k);
    let m = mask.as_ref();
    // Pairs of labels share one pass over the score rows but hold a third key
    // buffer per worker: used when the labels are packed (so that the peak stays
    // within half the score matrix) and there are enough pairs to keep every
    // worker busy.
    let pairs = L::PACKED && k >= 4 * unit_workers(k, elements, par);
    if !pairs {
        return for_each_unit(k, elements, n, false, par, |j, buf| {
            buf.load(y_score, y_pos, m, j, S::narrow_key);
            label_values_fpr(buf, ap, auc, max_fpr)
        });
    }
    let units = for_each_unit(k.div_ceil(2), elements, n, true, par, |u, buf| {
        let j = 2 * u;
        if j + 1 < k {
            buf.load_pair(y_score, y_pos, m, j, S::narrow_key);
            let first = label_values_fpr(buf, ap, auc, max_fpr);
            buf.take_spare();
            vec![first, label_values_fpr(buf, ap, auc, max_fpr)]
        } else {
            buf.load(y_score, y_pos, m, j, S::narrow_key);
            vec![label_values_fpr(buf, ap, auc, max_fpr)]
        }
    })?;
    Ok(units.into_iter().flatten().collect())
}

/// The metric for each column (label) of a multilabel problem.
///
/// Label `j` uses the rows where `mask[i, j]` is true (all rows without a mask) and
/// `weight[i] != 0`; it is scikit-learn's binary metric on that column restricted
/// to those rows. Parallel over labels; each label is computed sequentially.
pub fn per_label<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
    par: &Parallelism,
) -> Result<Vec<MetricValue>> {
    check_shapes(&y_score, y_pos.dim(), weight.as_ref(), mask.as_ref())?;
    if weight.is_none() {
        let (ap, max_fpr) = match metric {
            Metric::AveragePrecision => (true, None),
            Metric::RocAuc { max_fpr } => (false, max_fpr),
        };
        let v = unweighted_per_label(y_score, &y_pos, mask, ap, !ap, max_fpr, par)?;
        return Ok(v.into_iter().map(|(a, b)| if ap { a } else { b }).collect());
    }
    let (n, k) = y_score.dim();
    let results = par.map(k, n.saturating_mul(k), |j| {
        let s = y_score.column(j);
        let mut p = Problem::with_capacity(n, weight.is_some());
        for i in 0..n {
            let known = mask.as_ref().is_none_or(|m| m[[i, j]]);
            if known {
                let w = weight.as_ref().map_or(1.0, |w| w[i]);
                p.push(s[i], y_pos.get(i, j), w)?;
            }
        }
        p.evaluate(metric)
    })?;
    results.into_iter().collect()
}

/// Micro average: all known cells as one binary problem, raveled row-major, each
/// cell weighted by its row's weight (scikit-learn repeats the weights per label).
pub fn micro<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
    par: &Parallelism,
) -> Result<MetricValue> {
    check_shapes(&y_score, y_pos.dim(), weight.as_ref(), mask.as_ref())?;
    if weight.is_none() {
        match metric {
            Metric::AveragePrecision => {
                return micro_unweighted(y_score, y_pos, mask, true, false, par).map(|v| v.0)
            }
            Metric::RocAuc { max_fpr: None } => {
                return micro_unweighted(y_score, y_pos, mask, false, true, par).map(|v| v.1)
            }
            Metric::RocAuc { .. } => {}
        }
    }
    let (n, k) = y_score.dim();
    let mut p = Problem::with_capacity(n.saturating_mul(k), weight.is_some());
    for i in 0..n {
        let w = weight.as_ref().map_or(1.0, |w| w[i]);
        for j in 0..k {
            if mask.as_ref().is_none_or(|m| m[[i, j]]) {
                p.push(y_score[[i, j]], y_pos.get(i, j), w)?;
            }
        }
    }
    p.evaluate(metric)
}

fn micro_unweighted<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    mask: Option<ArrayView2<bool>>,
    ap: bool,
    auc: bool,
    par: &Parallelism,
) -> Result<(MetricValue, MetricValue)> {
    if y_score.len() >= MAX_ITEMS {
        return Err(MetricError::value(
            "too many elements in one binary problem (limit 2**31 - 1)",
        ));
    }
    let cells = y_score.len();
    let cap = micro_cap(cells, std::mem::size_of::<S>());
    if cap < cells {
        return micro_streaming(y_score, y_pos, mask, cap, par);
    }
    let mut buf = SplitKeys::new();
    buf.load_all(y_score, &y_pos, mask.as_ref());
    Ok(label_values(&mut buf, ap, auc))
}

/// Micro-averaged average precision and full ROC AUC from one pass: the values of
/// [`micro`] with `Metric::AveragePrecision` and `Metric::RocAuc { max_fpr: None }`.
pub fn micro_ap_auc<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
    par: &Parallelism,
) -> Result<(MetricValue, MetricValue)> {
    check_shapes(&y_score, y_pos.dim(), weight.as_ref(), mask.as_ref())?;
    if weight.is_some() {
        let ap = micro(y_score, y_pos, weight, mask, Metric::AveragePrecision, par)?;
        let auc = micro(
            y_score,
            y_pos,
            weight,
            mask,
            Metric::RocAuc { max_fpr: None },
            par,
        )?;
        return Ok((ap, auc));
    }
    micro_unweighted(y_score, y_pos, mask, true, true, par)
}

// ------------------------------------------------------------------ micro, bounded memory
//
// The micro average treats all N x K known cells as one binary problem. Gathering
// and sorting every key at once costs 16 bytes per cell (keys + scratch), twice the
// size of a float64 score matrix. Instead the cells are streamed in key ranges:
//
// 1. one pass (parallel over row blocks) histograms the top 18 bits of the negated
//    keys, counting positives and negatives per bucket;
// 2. consecutive buckets (ascending negated key = descending score) are grouped so
//    that a group's cells plus its largest bucket fit in a fixed budget of `cap`
//    keys; a bucket too big for that is refined by another pass over its cells on
//    the next 18 bits (a bucket of one key value needs no keys at all, only counts);
// 3. each group re-scans the matrix, placing its cells directly at their bucket
//    (positives then negatives, offsets from the histogram), and walks each bucket
//    into tie blocks (crate::count_walk). The scan of C-ordered rows is a
//    vectorised mask pass (one bit per cell: known and in the group) followed by a
//    visit of the set bits only (`filter_cells`), so a group that holds an eighth of
//    the cells costs about one read of the matrix. The cumulative counts before
//    every bucket are known from the histogram, so groups are independent: they run
//    in parallel (at most `MICRO_WORKERS` buffers alive) and are reduced in order.
//
// AP terms are the same values as in the one-sort path (same counts, same formula);
// they are summed pairwise per bucket and the bucket sums with Neumaier's
// compensated sum (the term count is unknown until the end, so NumPy's pairwise tree
// over all terms cannot be reproduced). ROC AUC is the exact Mann-Whitney count
// `sum over blocks of neg * (2 * pos_before + pos)` in integers divided by
// `2 * P * N`, the area of the same curve. Both stay within 1e-15 relative of the
// one-sort values (docs/deviations.md); neither depends on the thread count, since
// groups are fixed by the input and `cap` alone.

/// Histogram digit of the micro streaming pass: 2**18 buckets (2 MiB of counters
/// per worker) make buckets small enough (1/128 of [0.5, 1) for uniform
/// probabilities) that groups fill their buffer closely, hence few re-scans.
const MICRO_DIGIT: u32 = 18;
/// The same for 4-byte scores: 2**17 buckets. Over 32-bit keys that still splits
/// [0.5, 1) into 64 buckets, and it halves the tables, which are 4x larger relative
/// to a float32 matrix than to a float64 one (`multilabel_report`'s float32 peak
/// went past 0.5x of the scores with 2**18).
const MICRO_DIGIT_NARROW: u32 = 17;
/// Groups processed at once (each holds one `cap`-key buffer).
const MICRO_WORKERS: usize = 2;
/// Inputs with at most this many cells take the one-sort path.
const MICRO_MIN_CAP: usize = 1 << 18;

/// Keys per group buffer for `cells` cells of `score_bytes` bytes each: an eighth
/// of the cells for 8-byte scores (a sixteenth for 4-byte ones), so that
/// `MICRO_WORKERS` buffers of 8-byte keys (scratch included) stay at 0.25x the
/// score matrix.
fn micro_cap(cells: usize, score_bytes: usize) -> usize {
    (cells / 64 * score_bytes.clamp(1, 8)).max(MICRO_MIN_CAP)
}

/// Call `f(negated key, positive)` for every known cell of `rows`, row-major.
#[inline]
fn scan_cells<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    rows: std::ops::Range<usize>,
    mut f: impl FnMut(u64, bool),
) {
    let k = s.ncols();
    let sr = s.slice(ndarray::s![rows.clone(), ..]);
    if m.is_none() && (1..=64).contains(&k) && !rows.is_empty() {
        if let (Some(sv), Some(yv)) = (sr.as_slice(), y.block(rows.clone())) {
            // C-ordered blocks: each row's labels as one word.
            let ck = yv.len() / rows.len();
            if ck > 0 {
                for (srow, yrow) in sv.chunks_exact(k).zip(yv.chunks_exact(ck)) {
                    let w = L::row_word(yrow);
                    for (j, &v) in srow.iter().enumerate() {
                        f(!v.key(), (w >> j) & 1 != 0);
                    }
                }
                return;
            }
        }
    }
    for i in rows {
        let (srow, yrow) = (s.row(i), y.row(i));
        let mrow = m.map(|m| m.row(i));
        for (j, &v) in srow.iter().enumerate() {
            let known = mrow
                .as_ref()
                .is_none_or(|r| r.get(j).copied().unwrap_or(false));
            if known {
                let t = yrow.get(L::cell_index(j)).is_some_and(|&c| L::is_pos(c, j));
                f(!v.key(), t);
            }
        }
    }
}

/// Bucket histogram of the cells whose key has `k >> top == prefix` (`top == 64`:
/// all cells), on the `width` bits below `top`: positives at `2d`, negatives at
/// `2d + 1` for bucket `d`.
#[allow(clippy::too_many_arguments)]
fn micro_histogram<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    top: u32,
    prefix: u64,
    width: u32,
    par: &Parallelism,
) -> Result<Vec<u32>> {
    let nb = 1usize << width;
    let shift = top - width;
    let mask = (nb - 1) as u64;
    let (n, k) = s.dim();
    let blocks = n.div_ceil(crate::parallel::ROW_BLOCK);
    let elements = n.saturating_mul(k);
    let workers = if par.is_parallel_for(elements) {
        par.threads.min(blocks).max(1)
    } else {
        1
    };
    let next = AtomicUsize::new(0);
    // One interleaved array per worker: [pos, neg] per bucket. u32 is enough: the
    // caller checked that there are fewer than 2**31 cells.
    let init = || vec![0u32; 2 * nb];
    let parts = par.map_init(workers, elements, init, |h| {
        loop {
            let b = next.fetch_add(1, Ordering::Relaxed);
            if b >= blocks {
                break;
            }
            let start = b * crate::parallel::ROW_BLOCK;
            let rows = start..(start + crate::parallel::ROW_BLOCK).min(n);
            scan_cells(s, y, m, rows, |key, pos| {
                let inside = top >= 64 || key >> top == prefix;
                let d = ((key >> shift) & mask) as usize;
                if inside {
                    if let Some(c) = h.get_mut(2 * d + usize::from(!pos)) {
                        *c += 1;
                    }
                }
            });
        }
        std::mem::take(h)
    })?;
    // Summed into the first worker's table (u32 still: fewer than 2**31 cells), with
    // no wider copy: at 2**18 buckets each table is 2 MiB, and two u64 copies would
    // add 4 MiB to the peak (0.07x of a 1M x 15 float32 matrix).
    let mut parts = parts.into_iter();
    let mut sum = parts.next().unwrap_or_else(|| vec![0u32; 2 * nb]);
    for part in parts {
        for (a, b) in sum.iter_mut().zip(part) {
            *a += b;
        }
    }
    Ok(sum)
}

/// One unit of the micro stream, in descending score order.
enum MicroTask {
    /// Buckets `first..first + counts.len()` of digit `shift` (bucket id = the key
    /// shifted right by `shift`), with their (positives, negatives).
    Group {
        shift: u32,
        first: u64,
        counts: Vec<(u64, u64)>,
        pos_before: u64,
        rows_before: u64,
    },
    /// One tie block (all keys equal).
    Block {
        pos: u64,
        neg: u64,
        pos_before: u64,
        rows_before: u64,
    },
}

/// Plan the tasks for the cells with `k >> top == prefix` (`top == 64`: all),
/// appending them to `tasks`; `before` = (positives, rows) ranked above them.
/// Buckets of more than `refine / 2` cells are refined (this fixes the buckets, and
/// so the result); groups hold at most `cap` keys with `copies` scratch copies of
/// their largest bucket (this only decides how many re-scans are needed).
#[allow(clippy::too_many_arguments)]
fn micro_plan<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    top: u32,
    prefix: u64,
    before: (u64, u64),
    (refine, cap, copies): (usize, usize, usize),
    par: &Parallelism,
    tasks: &mut Vec<MicroTask>,
) -> Result<()> {
    let digit = if std::mem::size_of::<S>() == 4 {
        MICRO_DIGIT_NARROW
    } else {
        MICRO_DIGIT
    };
    let width = digit.min(top);
    let shift = top - width;
    let hist = micro_histogram(s, y, m, top, prefix, width, par)?;
    let base = if top >= 64 { 0 } else { prefix << width };
    let (mut cp, mut cr) = before;
    // Current group: first bucket id, counts, running total and largest bucket.
    let mut group: Vec<(u64, u64)> = Vec::new();
    let mut first = 0u64;
    let (mut g_pos, mut g_rows) = (0u64, 0u64);
    let (mut g_total, mut g_max) = (0usize, 0usize);
    let refine64 = refine as u64;
    let flush = |group: &mut Vec<(u64, u64)>,
                 first: u64,
                 g_pos: u64,
                 g_rows: u64,
                 tasks: &mut Vec<MicroTask>| {
        if !group.is_empty() {
            tasks.push(MicroTask::Group {
                shift,
                first,
                counts: std::mem::take(group),
                pos_before: g_pos,
                rows_before: g_rows,
            });
        }
    };
    for (d, pq) in hist.chunks_exact(2).enumerate() {
        let (p, q) = (u64::from(pq[0]), u64::from(pq[1]));
        let c = p + q;
        let id = base | d as u64;
        if c == 0 {
            // Empty buckets keep a group contiguous only if it is empty.
            if !group.is_empty() {
                group.push((0, 0));
            }
            continue;
        }
        let cu = usize::try_from(c).unwrap_or(usize::MAX);
        if shift == 0 || c.saturating_mul(2) > refine64 {
            flush(&mut group, first, g_pos, g_rows, tasks);
            (g_total, g_max) = (0, 0);
            if shift == 0 {
                tasks.push(MicroTask::Block {
                    pos: p,
                    neg: q,
                    pos_before: cp,
                    rows_before: cr,
                });
            } else {
                micro_plan(
                    s,
                    y,
                    m,
                    shift,
                    id,
                    (cp, cr),
                    (refine, cap, copies),
                    par,
                    tasks,
                )?;
            }
        } else {
            if g_total + cu + copies * g_max.max(cu) > cap {
                flush(&mut group, first, g_pos, g_rows, tasks);
                (g_total, g_max) = (0, 0);
            }
            if group.is_empty() {
                first = id;
                (g_pos, g_rows) = (cp, cr);
            }
            group.push((p, q));
            g_total += cu;
            g_max = g_max.max(cu);
        }
        cp += p;
        cr += c;
    }
    flush(&mut group, first, g_pos, g_rows, tasks);
    Ok(())
}

/// Neumaier's compensated sum accumulator.
#[derive(Clone, Copy, Default)]
pub(crate) struct CompSum {
    s: f64,
    c: f64,
}

impl CompSum {
    pub(crate) fn add(&mut self, x: f64) {
        let t = self.s + x;
        if self.s.abs() >= x.abs() {
            self.c += (self.s - t) + x;
        } else {
            self.c += (x - t) + self.s;
        }
        self.s = t;
    }
    pub(crate) fn value(&self) -> f64 {
        self.s + self.c
    }
}

/// What one task contributes: the AP term sum of each of its buckets that holds
/// a positive (a [`crate::count_walk::Walk`] each; the caller adds them up with a
/// compensated sum, so that the result depends on the buckets only, not on how
/// they were grouped) and twice the Mann-Whitney count.
#[derive(Default)]
struct MicroPart {
    ap: Vec<f64>,
    u2: u128,
}

/// Cells per sub-block of the two-phase group filter: 4096 float64 scores (32 KiB)
/// stay in cache between the mask pass and the pass over the chosen cells.
const FILTER_CELLS: usize = 4096;

/// `ceil(2**32 / k)`: `(i * r) >> 32 == i / k` for every `i < 2**32 / k`
/// (`k <= 64` and `i` below a row block's cells, `ROW_BLOCK * 64 = 2**19`).
#[inline]
fn row_reciprocal(k: usize) -> u64 {
    ((1u64 << 32) + k as u64 - 1) / (k as u64).max(1)
}

/// A group's key range: buckets `first..first + span` of the digit at `shift`
/// (bucket id = negated key `>> shift`).
#[derive(Clone, Copy, Debug)]
struct Buckets {
    shift: u32,
    first: u64,
    span: u64,
}

impl Buckets {
    /// Whether a negated key lies in these buckets.
    #[inline(always)]
    fn holds(self, key: u64) -> bool {
        (key >> self.shift).wrapping_sub(self.first) < self.span
    }

    /// Whether a cell's negated key lies in these buckets.
    #[inline(always)]
    fn holds_score<S: Score>(self, v: S) -> bool {
        self.holds(!v.key())
    }
}

/// Two-phase filter of contiguous rows (`sv`: `k` scores per row, `yv`: `ck` label
/// cells per row, `mv`: `k` mask cells per row when there is a mask,
/// `1 <= k <= 64`). Per sub-block, a branch-free pass sets bit `i` of a mask word
/// when cell `i` is known and in the group's buckets `g` (this pass vectorises, and
/// it is most of the work: a group holds a small share of the cells); then only the
/// chosen cells are visited, in row-major order, and passed to
/// `emit(negated key, class)`.
#[inline(always)]
fn filter_cells<S: Score, L: LabelGrid>(
    sv: &[S],
    yv: &[L::Cell],
    mv: Option<&[bool]>,
    (k, ck): (usize, usize),
    g: Buckets,
    mut emit: impl FnMut(u64, bool),
) {
    // Callers pass a mask block of the same cells (micro_group: check_shapes).
    if k == 0 || ck == 0 || mv.is_some_and(|m| m.len() != sv.len()) {
        return;
    }
    let recip = row_reciprocal(k);
    let exact = (sv.len() as u64) < (1u64 << 32) / k as u64;
    let sub = (FILTER_CELLS / k).max(1) * k;
    let mut bits = [0u64; FILTER_CELLS.div_ceil(64) + 1];
    for (c, block) in sv.chunks(sub).enumerate() {
        let base = c * sub;
        let known = mv.map(|mv| mv.get(base..base + block.len()).unwrap_or_default());
        match known {
            None => {
                for (chunk, w) in block.chunks(64).zip(bits.iter_mut()) {
                    let mut m = 0u64;
                    for (i, &v) in chunk.iter().enumerate() {
                        m |= u64::from(g.holds_score(v)) << i;
                    }
                    *w = m;
                }
            }
            Some(known) => {
                for ((chunk, kc), w) in block.chunks(64).zip(known.chunks(64)).zip(bits.iter_mut())
                {
                    let mut m = 0u64;
                    for (i, (&v, &t)) in chunk.iter().zip(kc).enumerate() {
                        m |= u64::from(t & g.holds_score(v)) << i;
                    }
                    *w = m;
                }
            }
        }
        for (wi, &w0) in bits.iter().take(block.len().div_ceil(64)).enumerate() {
            let mut w = w0;
            while w != 0 {
                let i = base + wi * 64 + w.trailing_zeros() as usize;
                w &= w - 1;
                // Row and column of cell i without a division (see row_reciprocal;
                // callers pass one row block, far below the bound).
                let r = if exact {
                    ((i as u64 * recip) >> 32) as usize
                } else {
                    i / k
                };
                let j = i - r * k;
                if let (Some(&v), Some(&cell)) = (sv.get(i), yv.get(r * ck + L::cell_index(j))) {
                    emit(!v.key(), L::is_pos(cell, j));
                }
            }
        }
    }
}

/// `filter_cells` compiled for AVX2 (4-lane 64-bit compares and shifts) and BMI1
/// (`tzcnt`/`blsr` over the set bits), chosen at run time: the same operations on
/// the same cells in the same order.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1")]
unsafe fn filter_cells_avx2<S: Score, L: LabelGrid>(
    sv: &[S],
    yv: &[L::Cell],
    mv: Option<&[bool]>,
    kk: (usize, usize),
    g: Buckets,
    emit: impl FnMut(u64, bool),
) {
    filter_cells::<S, L>(sv, yv, mv, kk, g, emit)
}

/// `filter_cells` through its AVX2 build when `avx2` is asked for and the CPU has it
/// (`false`: the generic build, for tests), else the generic build.
#[inline]
fn filter_cells_on<S: Score, L: LabelGrid>(
    avx2: bool,
    sv: &[S],
    yv: &[L::Cell],
    mv: Option<&[bool]>,
    kk: (usize, usize),
    g: Buckets,
    emit: impl FnMut(u64, bool),
) {
    #[cfg(target_arch = "x86_64")]
    if avx2 && has_avx2() {
        // SAFETY: the CPU has AVX2, BMI1 and POPCNT (checked just above; the
        // detection is cached); the function is otherwise safe.
        unsafe { filter_cells_avx2::<S, L>(sv, yv, mv, kk, g, emit) };
        return;
    }
    let _ = avx2;
    filter_cells::<S, L>(sv, yv, mv, kk, g, emit);
}

/// Whether the CPU has AVX2, BMI1 and POPCNT: the features of the run-time
/// dispatched kernels (`filter_cells_avx2`, `label_ranking`'s `block_avx2`).
pub(crate) fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Run one group: gather its cells by bucket into `buf` (at least the group's cells
/// plus its largest bucket long: the rest is sort scratch), sort and walk each
/// bucket.
#[allow(clippy::too_many_arguments)]
fn micro_group<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    g: Buckets,
    counts: &[(u64, u64)],
    before: (u64, u64),
    n_pos: u64,
    buf: &mut [u64],
) -> MicroPart {
    let nb = counts.len();
    let total: u64 = counts.iter().map(|&(p, q)| p + q).sum();
    let total = usize::try_from(total).unwrap_or(0);
    let biggest = counts.iter().map(|&(p, q)| p + q).max().unwrap_or(0);
    // offsets[2d] = positives cursor, offsets[2d + 1] = negatives cursor.
    let mut offsets = vec![0usize; 2 * nb];
    let mut acc = 0usize;
    for (d, &(p, q)) in counts.iter().enumerate() {
        offsets[2 * d] = acc;
        offsets[2 * d + 1] = acc + p as usize;
        acc += (p + q) as usize;
    }
    let biggest = usize::try_from(biggest).unwrap_or(0);
    if buf.len() < total + biggest {
        return MicroPart::default(); // unreachable: the caller sizes `buf`
    }
    let (keys, rest) = buf.split_at_mut(total);
    let tmp = &mut rest[..biggest];
    let (shift, first) = (g.shift, g.first);
    let n_rows = s.nrows();
    // Place one chosen cell at its bucket's cursor (positives, then negatives).
    let mut put = |key: u64, pos: bool| {
        let d = ((key >> shift).wrapping_sub(first)) as usize;
        if let Some(o) = offsets.get_mut(2 * d + usize::from(!pos)) {
            if let Some(x) = keys.get_mut(*o) {
                *x = key;
            }
            *o += 1;
        }
    };
    filter_rows(s, y, m, 0..n_rows, g, &mut put);
    walk_buckets(counts, keys, tmp, before, n_pos)
}

/// Pass every cell of `rows` that lies in the buckets `g` to `put(negated key,
/// positive)`, a row block at a time, in row-major order.
fn filter_rows<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    rows: std::ops::Range<usize>,
    g: Buckets,
    mut put: impl FnMut(u64, bool),
) {
    let k = s.ncols();
    let chunk = crate::parallel::ROW_BLOCK;
    // Compaction buffers of the general path, allocated on first use.
    let (mut lk, mut lp) = (Vec::<u64>::new(), Vec::<bool>::new());
    for start in rows.clone().step_by(chunk) {
        let rows = start..(start + chunk).min(rows.end);
        let sr = s.slice(ndarray::s![rows.clone(), ..]);
        let yv = if k <= 64 { y.block(rows.clone()) } else { None };
        // Some(None): no mask; Some(Some(cells)): a contiguous mask block.
        let mv = match m {
            None => Some(None),
            Some(m) => m.slice(ndarray::s![rows.clone(), ..]).to_slice().map(Some),
        };
        // (check_shapes: a mask block holds exactly the score block's cells.)
        if let (Some(sv), Some(yv), Some(mv)) = (sr.as_slice(), yv, mv) {
            let ck = yv.len() / rows.len().max(1);
            filter_cells_on::<S, L>(true, sv, yv, mv, (k, ck), g, &mut put);
            continue;
        }
        // Strided or wide blocks: a branch-free compaction of the group's cells into
        // a small buffer (a branch on membership would mispredict on most groups),
        // then the scatter.
        if lk.is_empty() {
            (lk, lp) = (vec![0u64; chunk * k + 1], vec![false; chunk * k + 1]);
        }
        let mut c = 0usize;
        scan_cells(s, y, m, rows, |key, pos| {
            if let (Some(x), Some(t)) = (lk.get_mut(c), lp.get_mut(c)) {
                *x = key;
                *t = pos;
            }
            c += usize::from(g.holds(key));
        });
        for (&key, &pos) in lk.iter().zip(lp.iter()).take(c) {
            put(key, pos);
        }
    }
}

/// Walk the buckets `counts` whose keys lie in `keys` in bucket order (each
/// bucket's positives, then its negatives), `before` = (positives, rows) ranked
/// above the first; `tmp` holds the largest bucket. Each bucket is walked without
/// sorting (crate::count_walk); its AP terms are summed with a compensated sum,
/// the bucket sums by the caller.
fn walk_buckets(
    counts: &[(u64, u64)],
    keys: &mut [u64],
    tmp: &mut [u64],
    before: (u64, u64),
    n_pos: u64,
) -> MicroPart {
    let mut part = MicroPart::default();
    let (mut bp, mut br) = before;
    let mut start = 0usize;
    for &(p, q) in counts {
        let (pu, qu) = (p as usize, q as usize);
        let c = pu + qu;
        if c > 0 {
            let (Some(kb), Some(tb)) = (keys.get_mut(start..start + c), tmp.get_mut(..c)) else {
                break; // unreachable: the caller sizes both buffers
            };
            let mut walk = crate::count_walk::Walk::new((bp, br - bp), n_pos);
            walk.run(kb, pu, tb);
            part.u2 += walk.u2;
            if pu > 0 {
                part.ap.push(walk.ap.value());
            }
        }
        bp += p;
        br += p + q;
        start += c;
    }
    part
}

/// [`micro_group`] by two threads at once, for a group up to twice as large in
/// the same memory as two groups run side by side, so the matrix is read half as
/// often. `buf` holds the group's cells plus two of its largest buckets.
///
/// The filter pass is split by rows: the first thread fills each bucket's
/// positives and negatives from the front, the second from the back, and the
/// histogram's exact counts make them meet (a bucket's cells end up in another
/// order than one thread's row-major pass would leave them, which the walk does
/// not see: it depends on each bucket's keys and classes only). The cells are
/// written as relaxed atomics, so that scores changed by another thread during
/// the call can garble the answer but never make two threads write one place
/// unsynchronised. Then the buckets are cut in two runs of about equal cells and
/// each thread walks one; their parts are joined in bucket order, so the result is
/// [`micro_group`]'s, bit for bit.
#[allow(clippy::too_many_arguments)]
fn micro_group_pair<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    g: Buckets,
    counts: &[(u64, u64)],
    before: (u64, u64),
    n_pos: u64,
    buf: &mut [u64],
    par: &Parallelism,
) -> Result<MicroPart> {
    use std::sync::atomic::AtomicU64;
    let nb = counts.len();
    let sizes: Vec<usize> = counts.iter().map(|&(p, q)| (p + q) as usize).collect();
    let total: usize = sizes.iter().sum();
    let biggest = sizes.iter().copied().max().unwrap_or(0);
    if buf.len() < total + 2 * biggest {
        return Ok(MicroPart::default()); // unreachable: the caller sizes `buf`
    }
    // starts[2d], starts[2d + 1]: where bucket d's positives and negatives begin;
    // starts[2nb] = total.
    let mut starts = vec![0usize; 2 * nb + 1];
    let mut acc = 0usize;
    for (d, &(p, _)) in counts.iter().enumerate() {
        starts[2 * d] = acc;
        starts[2 * d + 1] = acc + p as usize;
        acc += sizes[d];
    }
    starts[2 * nb] = acc;
    let (keys, rest) = buf.split_at_mut(total);
    {
        // SAFETY: AtomicU64 has the size and bit validity of u64, and a Vec<u64>'s
        // buffer is aligned for it on the targets with 64-bit atomics; `keys` is
        // borrowed mutably for the whole scope, so nothing else reads it meanwhile.
        let cells: &[AtomicU64] = unsafe {
            debug_assert_eq!(
                keys.as_ptr()
                    .align_offset(std::mem::align_of::<AtomicU64>()),
                0
            );
            std::slice::from_raw_parts(keys.as_mut_ptr().cast::<AtomicU64>(), keys.len())
        };
        let starts = &starts;
        let n_rows = s.nrows();
        let half = n_rows / 2;
        par.map(2, s.len(), |w| {
            // Cursor per region: the front for the first half, one past the back
            // for the second; a write outside its region is dropped (the counts
            // are exact unless the scores changed under the call).
            let mut cur: Vec<usize> = if w == 0 {
                starts[..2 * nb].to_vec()
            } else {
                starts[1..].to_vec()
            };
            let put = |key: u64, pos: bool| {
                let d = ((key >> g.shift).wrapping_sub(g.first)) as usize;
                let r = 2 * d + usize::from(!pos);
                let (Some(c), Some(&lo), Some(&hi)) =
                    (cur.get_mut(r), starts.get(r), starts.get(r + 1))
                else {
                    return;
                };
                if w == 0 {
                    if *c < hi {
                        if let Some(x) = cells.get(*c) {
                            x.store(key, Ordering::Relaxed);
                        }
                        *c += 1;
                    }
                } else if *c > lo {
                    *c -= 1;
                    if let Some(x) = cells.get(*c) {
                        x.store(key, Ordering::Relaxed);
                    }
                }
            };
            let rows = if w == 0 { 0..half } else { half..n_rows };
            filter_rows(s, y, m, rows, g, put);
        })?;
    }
    // Two runs of buckets of about total / 2 cells each.
    let mut cut = 0usize;
    let mut cells_a = 0usize;
    while cut < nb && 2 * (cells_a + sizes[cut]) <= total {
        cells_a += sizes[cut];
        cut += 1;
    }
    let (pos_a, rows_a) = counts[..cut]
        .iter()
        .fold((0u64, 0u64), |(a, b), &(p, q)| (a + p, b + p + q));
    let (ka, kb) = keys.split_at_mut(cells_a);
    let (ta, tb) = rest.split_at_mut(biggest);
    let runs = [
        (&counts[..cut], ka, ta, before),
        (
            &counts[cut..],
            kb,
            &mut tb[..biggest],
            (before.0 + pos_a, before.1 + rows_a),
        ),
    ];
    let mut runs = runs.into_iter();
    let parts = par.map_init(
        2,
        total,
        || runs.next(),
        |run| {
            run.take()
                .map(|(c, k, t, b)| walk_buckets(c, k, t, b, n_pos))
                .unwrap_or_default()
        },
    )?;
    let mut part = MicroPart::default();
    for p in parts {
        part.ap.extend(p.ap);
        part.u2 += p.u2;
    }
    Ok(part)
}

/// Micro AP and full ROC AUC, unweighted, in bounded memory (see the section
/// comment); `cap` = keys per group buffer when `MICRO_WORKERS` groups run at once
/// (a single worker gets `MICRO_WORKERS` times more).
fn micro_streaming<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    mask: Option<ArrayView2<bool>>,
    cap: usize,
    par: &Parallelism,
) -> Result<(MetricValue, MetricValue)> {
    let (s, y, m) = (&y_score, &y_pos, mask.as_ref());
    let mut tasks = Vec::new();
    // 4-byte scores have 32-bit keys: the top 32 bits of every negated key are ones,
    // so the first histogram starts below them.
    let (top, prefix) = if std::mem::size_of::<S>() == 4 {
        (32, u64::from(u32::MAX))
    } else {
        (64, 0)
    };
    // The buckets (and so the value) depend on `cap` only; fewer workers get
    // bigger groups within the same memory, hence fewer re-scans.
    let workers = if par.is_parallel_for(y_score.len()) {
        par.threads.clamp(1, MICRO_WORKERS)
    } else {
        1
    };
    // Two workers share each group (micro_group_pair): one buffer of twice the
    // cells, with a walk scratch for each of them.
    let pair = workers >= 2;
    let copies = if pair { 2 } else { 1 };
    let group_cap = cap.saturating_mul(MICRO_WORKERS) / if pair { 1 } else { workers };
    micro_plan(
        s,
        y,
        m,
        top,
        prefix,
        (0, 0),
        (cap, group_cap, copies),
        par,
        &mut tasks,
    )?;
    let (mut n_pos, mut n_all) = (0u64, 0u64);
    for t in &tasks {
        match t {
            MicroTask::Group { counts, .. } => {
                for &(p, q) in counts {
                    n_pos += p;
                    n_all += p + q;
                }
            }
            MicroTask::Block { pos, neg, .. } => {
                n_pos += pos;
                n_all += pos + neg;
            }
        }
    }
    let n_neg = n_all - n_pos;
    // Largest buffer a group needs: its cells plus its largest bucket (<= cap).
    let need = tasks
        .iter()
        .map(|t| match t {
            MicroTask::Group { counts, .. } => {
                let total: u64 = counts.iter().map(|&(p, q)| p + q).sum();
                let big = counts.iter().map(|&(p, q)| p + q).max().unwrap_or(0);
                usize::try_from(total + copies as u64 * big).unwrap_or(usize::MAX)
            }
            MicroTask::Block { .. } => 0,
        })
        .max()
        .unwrap_or(0);
    if n_all == 0 {
        return Ok((
            MetricValue {
                value: f64::NAN,
                flags: FLAG_EMPTY,
            },
            MetricValue {
                value: f64::NAN,
                flags: FLAG_EMPTY | FLAG_SINGLE_CLASS,
            },
        ));
    }
    let block = |pos: u64, neg: u64, pos_before: u64, rows_before: u64| {
        let mut walk = crate::count_walk::Walk::new((pos_before, rows_before - pos_before), n_pos);
        walk.group(pos, neg);
        MicroPart {
            ap: if pos > 0 {
                vec![walk.ap.value()]
            } else {
                Vec::new()
            },
            u2: walk.u2,
        }
    };
    // One group at a time: both workers on it (micro_group_pair), or the one.
    let mut all: Vec<MicroPart> = Vec::with_capacity(tasks.len());
    let mut buf = vec![0u64; need];
    for task in &tasks {
        all.push(match task {
            MicroTask::Group {
                shift,
                first,
                counts,
                pos_before,
                rows_before,
            } => {
                let g = Buckets {
                    shift: *shift,
                    first: *first,
                    span: counts.len() as u64,
                };
                let before = (*pos_before, *rows_before);
                if pair {
                    micro_group_pair(s, y, m, g, counts, before, n_pos, &mut buf, par)?
                } else {
                    micro_group(s, y, m, g, counts, before, n_pos, &mut buf)
                }
            }
            MicroTask::Block {
                pos,
                neg,
                pos_before,
                rows_before,
            } => block(*pos, *neg, *pos_before, *rows_before),
        });
    }
    let mut ap = CompSum::default();
    let mut u2 = 0u128;
    for p in &all {
        for &x in &p.ap {
            ap.add(x);
        }
        u2 += p.u2;
    }
    let ap_v = if n_pos == 0 {
        MetricValue {
            value: 0.0,
            flags: FLAG_NO_POSITIVE,
        }
    } else {
        let v = -ap.value();
        MetricValue {
            value: if v > 0.0 { v } else { 0.0 },
            flags: 0,
        }
    };
    let auc_v = if n_pos == 0 || n_neg == 0 {
        MetricValue {
            value: f64::NAN,
            flags: FLAG_SINGLE_CLASS,
        }
    } else {
        let den = 2u128 * u128::from(n_pos) * u128::from(n_neg);
        MetricValue {
            value: u2 as f64 / den as f64,
            flags: 0,
        }
    };
    Ok((ap_v, auc_v))
}

// ------------------------------------------------------------------ per-row fast path
//
// A row is a binary problem over its (typically ~15) known labels. As for the
// per-label fast path, AP and full ROC AUC only need the cumulative (positives, rows)
// counts at the end of each tie block in descending score order, so the row's keys
// are sorted *without payload*: up to 16 cells by a branch-free sorting network
// (Batcher's odd-even merge sort, padded with `u64::MAX`), longer rows by
// `sort_unstable`. The sorted keys give the blocks and their row counts; each
// positive (there are few per row) then adds one to the block holding its key,
// found by a branch-free count of the smaller block keys. All buffers are allocated
// once per block of rows. Values are bit-identical to the general path: the same
// block counts go through the same formulas as for the per-label fast path.

/// Batcher's odd-even merge sort network for 16 inputs (63 compare-exchanges),
/// written out so that the array lives in registers.
#[inline(always)]
fn sort16(a: &mut [u64; 16]) {
    #[inline(always)]
    fn ce(a: &mut [u64; 16], i: usize, j: usize) {
        let (x, y) = (a[i], a[j]);
        a[i] = x.min(y);
        a[j] = x.max(y);
    }
    ce(a, 0, 1);
    ce(a, 2, 3);
    ce(a, 0, 2);
    ce(a, 1, 3);
    ce(a, 1, 2);
    ce(a, 4, 5);
    ce(a, 6, 7);
    ce(a, 4, 6);
    ce(a, 5, 7);
    ce(a, 5, 6);
    ce(a, 0, 4);
    ce(a, 2, 6);
    ce(a, 2, 4);
    ce(a, 1, 5);
    ce(a, 3, 7);
    ce(a, 3, 5);
    ce(a, 1, 2);
    ce(a, 3, 4);
    ce(a, 5, 6);
    ce(a, 8, 9);
    ce(a, 10, 11);
    ce(a, 8, 10);
    ce(a, 9, 11);
    ce(a, 9, 10);
    ce(a, 12, 13);
    ce(a, 14, 15);
    ce(a, 12, 14);
    ce(a, 13, 15);
    ce(a, 13, 14);
    ce(a, 8, 12);
    ce(a, 10, 14);
    ce(a, 10, 12);
    ce(a, 9, 13);
    ce(a, 11, 15);
    ce(a, 11, 13);
    ce(a, 9, 10);
    ce(a, 11, 12);
    ce(a, 13, 14);
    ce(a, 0, 8);
    ce(a, 4, 12);
    ce(a, 4, 8);
    ce(a, 2, 10);
    ce(a, 6, 14);
    ce(a, 6, 10);
    ce(a, 2, 4);
    ce(a, 6, 8);
    ce(a, 10, 12);
    ce(a, 1, 9);
    ce(a, 5, 13);
    ce(a, 5, 9);
    ce(a, 3, 11);
    ce(a, 7, 15);
    ce(a, 7, 11);
    ce(a, 3, 5);
    ce(a, 7, 9);
    ce(a, 11, 13);
    ce(a, 1, 2);
    ce(a, 3, 4);
    ce(a, 5, 6);
    ce(a, 7, 8);
    ce(a, 9, 10);
    ce(a, 11, 12);
    ce(a, 13, 14);
}

/// Per-block scratch of the per-row fast path; the loaded row occupies the first
/// `n` keys (negated: ascending = descending score) and the first `np` entries of
/// `pkeys` (the positives' keys).
struct RowScratch {
    n: usize,
    np: usize,
    keys: Vec<u64>,
    pkeys: Vec<u64>,
    bkeys: Vec<u64>,
    rows: Vec<u64>,
    pcount: Vec<u64>,
    cum: Vec<u64>,
    terms: Vec<u64>,
}

impl RowScratch {
    fn new(k: usize) -> Self {
        let kk = k.max(16);
        RowScratch {
            n: 0,
            np: 0,
            keys: vec![0; kk],
            pkeys: vec![0; k],
            bkeys: vec![0; k],
            rows: vec![0; k],
            pcount: vec![0; k],
            cum: vec![0; k],
            terms: vec![0; k],
        }
    }

    /// Load the known cells of one row (branch-free: every cell is written at the
    /// cursors, which advance for known cells / known positives only).
    #[inline]
    fn load<S: Score, T: RowLabel>(
        &mut self,
        s: ArrayView1<S>,
        y: ArrayView1<T>,
        m: Option<ArrayView1<bool>>,
    ) {
        let (mut c, mut cp) = (0usize, 0usize);
        let (keys, pkeys) = (&mut self.keys, &mut self.pkeys);
        let mut put = |v: S, t: T, known: bool| {
            let t = t.is_positive();
            let key = !v.key();
            if let Some(x) = keys.get_mut(c) {
                *x = key;
            }
            if let Some(x) = pkeys.get_mut(cp) {
                *x = key;
            }
            c += usize::from(known);
            cp += usize::from(known & t);
        };
        match (m, s.as_slice(), y.as_slice()) {
            (None, Some(s), Some(y)) => {
                for (&v, &t) in s.iter().zip(y.iter()) {
                    put(v, t, true);
                }
            }
            (None, _, _) => ndarray::Zip::from(s)
                .and(y)
                .for_each(|&v, &t| put(v, t, true)),
            (Some(m), _, _) => ndarray::Zip::from(s)
                .and(y)
                .and(m)
                .for_each(|&v, &t, &k| put(v, t, k)),
        }
        self.n = c;
        self.np = cp;
    }

    /// Block-end cumulative counts `(positives << 32) | rows` of the loaded row in
    /// descending score order, into `self.cum`; returns the number of blocks.
    fn blocks(&mut self) -> usize {
        let n = self.n.min(self.keys.len());
        if n <= 16 {
            // u64::MAX padding sorts last; equal keys are interchangeable.
            let mut a = [u64::MAX; 16];
            for (x, &k) in a.iter_mut().zip(self.keys.iter().take(n)) {
                *x = k;
            }
            sort16(&mut a);
            for (x, &k) in self.keys.iter_mut().zip(a.iter()).take(n) {
                *x = k;
            }
        } else {
            self.keys[..n].sort_unstable();
        }
        let keys = &self.keys[..n];
        // Blocks: key and row count at each block end.
        let mut t = 0usize;
        for (r, &k) in keys.iter().enumerate() {
            let end = keys.get(r + 1).is_none_or(|&nx| nx != k);
            if let (Some(b), Some(w)) = (self.bkeys.get_mut(t), self.rows.get_mut(t)) {
                *b = k;
                *w = r as u64 + 1;
            }
            t += usize::from(end);
        }
        let t = t.min(self.bkeys.len());
        let (bkeys, pcount) = (&self.bkeys[..t], &mut self.pcount[..t]);
        pcount.fill(0);
        for &q in &self.pkeys[..self.np.min(self.pkeys.len())] {
            let b: usize = bkeys.iter().map(|&bk| usize::from(bk < q)).sum();
            if let Some(c) = pcount.get_mut(b) {
                *c += 1;
            }
        }
        let mut cp = 0u64;
        for ((o, &pc), &w) in self.cum.iter_mut().zip(pcount.iter()).zip(self.rows.iter()) {
            cp += pc;
            *o = (cp << 32) | w;
        }
        t
    }
}

/// A `y_true` element type the per-row kernels read in place: positive means
/// `== 1` (`true` for bool), scikit-learn's `y_true == pos_label` with the
/// multilabel `pos_label = 1`. Reading int64 labels directly spares the caller a
/// bool copy of the whole matrix.
pub trait RowLabel: Copy + Send + Sync {
    fn is_positive(self) -> bool;
}

impl RowLabel for bool {
    #[inline(always)]
    fn is_positive(self) -> bool {
        self
    }
}

impl RowLabel for i64 {
    #[inline(always)]
    fn is_positive(self) -> bool {
        self == 1
    }
}

impl RowLabel for i32 {
    #[inline(always)]
    fn is_positive(self) -> bool {
        self == 1
    }
}

/// Unweighted per-row AP (`ap`) or full ROC AUC (`!ap`) of the rows `start..`,
/// one per element of `values`/`flags`; see the section comment.
fn per_row_unweighted_block<S: Score, T: RowLabel>(
    y_score: &ArrayView2<S>,
    y_true: &ArrayView2<T>,
    mask: Option<&ArrayView2<bool>>,
    ap: bool,
    start: usize,
    values: &mut [f64],
    flags: &mut [u8],
) {
    let k = y_score.ncols();
    let empty = MetricValue {
        value: f64::NAN,
        flags: if ap {
            FLAG_EMPTY
        } else {
            FLAG_EMPTY | FLAG_SINGLE_CLASS
        },
    };
    let mut sc = RowScratch::new(k);
    for (i, (v, f)) in (start..).zip(values.iter_mut().zip(flags.iter_mut())) {
        sc.load(y_score.row(i), y_true.row(i), mask.map(|m| m.row(i)));
        let nk = sc.n;
        let r = if nk == 0 {
            empty
        } else {
            let np = sc.np as u64;
            let t = sc.blocks();
            let cum = &sc.cum[..t.min(sc.cum.len())];
            if ap {
                ap_blocks(cum, np, &mut sc.terms)
            } else {
                auc_blocks(cum, np, nk as u64 - np, &mut sc.terms)
            }
        };
        *v = r.value;
        *f = r.flags;
    }
}

/// [`per_row_values`] through the general (sort + curve) path for the rows
/// `start..`: partial ROC AUC, and the reference of the fast path in the tests.
fn per_row_general_block<S: Score, T: RowLabel>(
    y_score: &ArrayView2<S>,
    y_true: &ArrayView2<T>,
    mask: Option<&ArrayView2<bool>>,
    metric: Metric,
    start: usize,
    values: &mut [f64],
    flags: &mut [u8],
) -> Result<()> {
    let k = y_score.ncols();
    let mut p = Problem::with_capacity(k, false);
    for (i, (v, f)) in (start..).zip(values.iter_mut().zip(flags.iter_mut())) {
        p.clear();
        for j in 0..k {
            if mask.is_none_or(|m| m[[i, j]]) {
                p.push(y_score[[i, j]], y_true[[i, j]].is_positive(), 1.0)?;
            }
        }
        let r = p.evaluate(metric)?;
        *v = r.value;
        *f = r.flags;
    }
    Ok(())
}

/// Samples average, per row: the unweighted binary metric over the row's known
/// labels (scikit-learn's `average="samples"` uses `sample_weight` only to average
/// the row values, which the caller does), as `(values, flags)`, one per row.
///
/// `y_true` is read in place (positive = `== 1`, see [`RowLabel`]). The two output
/// vectors are the only allocations of the size of the input: fixed blocks of
/// `ROW_BLOCK` rows write their own slices, in parallel, so the result does not
/// depend on the thread count and nothing is gathered or copied afterwards.
pub fn per_row_values<S: Score, T: RowLabel>(
    y_score: ArrayView2<S>,
    y_true: ArrayView2<T>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
    par: &Parallelism,
) -> Result<(Vec<f64>, Vec<u8>)> {
    per_row_values_with(y_score, y_true, mask, metric, par, false)
}

fn per_row_values_with<S: Score, T: RowLabel>(
    y_score: ArrayView2<S>,
    y_true: ArrayView2<T>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
    par: &Parallelism,
    force_general: bool,
) -> Result<(Vec<f64>, Vec<u8>)> {
    let (n, k) = y_score.dim();
    if y_true.dim() != (n, k) {
        return Err(MetricError::shape(
            "y_true and y_score have different shapes",
        ));
    }
    if mask.as_ref().is_some_and(|m| m.dim() != (n, k)) {
        return Err(MetricError::shape("mask and y_true have different shapes"));
    }
    let fast = match metric {
        _ if force_general => None,
        Metric::AveragePrecision => Some(true),
        Metric::RocAuc { max_fpr } if max_fpr.is_none_or(|v| v == 1.0) => Some(false),
        Metric::RocAuc { .. } => None,
    };
    if fast.is_some() && k >= MAX_ITEMS {
        return Err(MetricError::value(
            "too many elements in one binary problem (limit 2**31 - 1)",
        ));
    }
    let mut values = vec![0.0f64; n];
    let mut flags = vec![0u8; n];
    let block = |b: usize, vs: &mut [f64], fs: &mut [u8]| -> Result<()> {
        let start = b * ROW_BLOCK;
        match fast {
            Some(ap) => {
                per_row_unweighted_block(&y_score, &y_true, mask.as_ref(), ap, start, vs, fs);
                Ok(())
            }
            None => per_row_general_block(&y_score, &y_true, mask.as_ref(), metric, start, vs, fs),
        }
    };
    let chunks = values
        .chunks_mut(ROW_BLOCK)
        .zip(flags.chunks_mut(ROW_BLOCK))
        .enumerate();
    let results: Vec<Result<()>> = if par.is_parallel_for(n.saturating_mul(k)) && n > ROW_BLOCK {
        let work: Vec<_> = chunks.collect();
        par.install(|| {
            work.into_par_iter()
                .map(|(b, (vs, fs))| block(b, vs, fs))
                .collect()
        })?
    } else {
        chunks.map(|(b, (vs, fs))| block(b, vs, fs)).collect()
    };
    // The first error in row order, whatever the thread count.
    results.into_iter().collect::<Result<()>>()?;
    Ok((values, flags))
}

/// [`per_row_values`] as one `MetricValue` per row, for a bool `y_true`.
pub fn per_row<S: Score>(
    y_score: ArrayView2<S>,
    y_pos: ArrayView2<bool>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
    par: &Parallelism,
) -> Result<Vec<MetricValue>> {
    check_shapes(&y_score, y_pos.dim(), None, mask.as_ref())?;
    let (values, flags) = per_row_values(y_score, y_pos, mask, metric, par)?;
    Ok(zip_values(values, flags))
}

fn zip_values(values: Vec<f64>, flags: Vec<u8>) -> Vec<MetricValue> {
    values
        .into_iter()
        .zip(flags)
        .map(|(value, flags)| MetricValue { value, flags })
        .collect()
}

/// [`per_row`] through the general (sort + curve) path.
#[cfg(test)]
fn per_row_general<S: Score>(
    y_score: ArrayView2<S>,
    y_pos: ArrayView2<bool>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
    par: &Parallelism,
) -> Result<Vec<MetricValue>> {
    let (values, flags) = per_row_values_with(y_score, y_pos, mask, metric, par, true)?;
    Ok(zip_values(values, flags))
}

/// The distinct values of a label matrix when there are at most two:
/// `(min, max, false)`; `(_, _, true)` as soon as a third value appears. The
/// multilabel-indicator check of [`per_row_values`]'s callers, in parallel over
/// fixed row blocks (blocks are merged in order, so any thread count agrees).
pub fn indicator_values<T>(y: ArrayView2<T>, par: &Parallelism) -> Result<(T, T, bool)>
where
    T: Copy + PartialOrd + Send + Sync + Default + From<bool>,
{
    indicator_scan(y, par, false).map(|(lo, hi, third, _)| (lo, hi, third))
}

/// [`indicator_values`] plus, when there is no third value, the positives
/// `y == 1` packed eight labels per byte (`n x ceil(k / 8)`, C order, see
/// [`crate::labels::PackedLabels`]); empty otherwise. One parallel pass; replaces
/// min, max, a distinct-value scan and `y == 1` at 1/8 of the bool copy's size.
pub fn indicator_packed<T>(y: ArrayView2<T>, par: &Parallelism) -> Result<(T, T, bool, Vec<u8>)>
where
    T: Copy + PartialOrd + Send + Sync + Default + From<bool>,
{
    indicator_scan(y, par, true)
}

fn indicator_scan<T>(
    y: ArrayView2<T>,
    par: &Parallelism,
    pack: bool,
) -> Result<(T, T, bool, Vec<u8>)>
where
    T: Copy + PartialOrd + Send + Sync + Default + From<bool>,
{
    let (n, k) = y.dim();
    let one = T::from(true);
    let ck = k.div_ceil(8);
    let blocks = par.map_row_blocks(n, k, |rows| {
        let mut set = Distinct::default();
        let mut bits = Vec::new();
        let Some(&first) = y.row(rows.start).iter().next() else {
            return (set, bits);
        };
        // Two candidate values; a cell equal to neither is a new value.
        let (a, mut b) = (first, first);
        let block = y.slice(ndarray::s![rows.clone(), ..]);
        if pack && (1..=64).contains(&k) && block.as_slice().is_some() {
            // C order, at most 64 labels: each row's bits built in a word. Once
            // both candidates are known the row test is branch-free (vectorizes).
            bits = vec![0u8; rows.len() * ck];
            let cells = block.as_slice().unwrap_or(&[]);
            let mut ok = true;
            for (row, out) in cells.chunks_exact(k).zip(bits.chunks_exact_mut(ck)) {
                if a == b {
                    if let Some(&v) = row.iter().find(|&&v| v != a) {
                        b = v;
                    }
                }
                let mut w = 0u64;
                let mut good = true;
                for (j, &v) in row.iter().enumerate() {
                    good &= (v == a) | (v == b);
                    w |= u64::from(v == one) << j;
                }
                if !good {
                    ok = false;
                    break;
                }
                out.copy_from_slice(&w.to_le_bytes()[..ck]);
            }
            set.insert(a);
            set.insert(b);
            set.third = !ok;
            return (set, bits);
        }
        let mut scan = |v: T| -> bool {
            if v != a && v != b {
                if a == b {
                    b = v;
                } else {
                    return false;
                }
            }
            true
        };
        let ok = if pack {
            bits = vec![0u8; rows.len() * ck];
            let mut ok = true;
            for (i, out) in rows.clone().zip(bits.chunks_exact_mut(ck.max(1))) {
                let row = y.row(i);
                if !row.iter().all(|&v| scan(v)) {
                    ok = false;
                    break;
                }
                crate::labels::pack_row(row.iter().copied(), out, |v| v == one);
            }
            ok
        } else {
            match block.as_slice() {
                // Branch-light pass over contiguous memory: only a value that is
                // neither candidate leaves the fast test.
                Some(cells) => cells.iter().all(|&v| scan(v)),
                None => rows.clone().all(|i| y.row(i).iter().all(|&v| scan(v))),
            }
        };
        set.insert(a);
        set.insert(b);
        set.third = !ok;
        (set, bits)
    })?;
    let mut all = Distinct::default();
    for (b, _) in &blocks {
        if b.third {
            all.third = true;
        }
        for &v in b.vals.iter().take(b.len) {
            all.insert(v);
        }
    }
    let (lo, hi) = match all.len {
        0 => (T::default(), T::default()),
        1 => (all.vals[0], all.vals[0]),
        _ if all.vals[0] < all.vals[1] => (all.vals[0], all.vals[1]),
        _ => (all.vals[1], all.vals[0]),
    };
    let packed = if pack && !all.third {
        let mut out = Vec::with_capacity(n * ck);
        for (_, bits) in blocks {
            out.extend_from_slice(&bits);
        }
        out
    } else {
        Vec::new()
    };
    Ok((lo, hi, all.third, packed))
}

/// Up to two distinct values, and whether a third was seen.
#[derive(Default, Clone, Copy)]
struct Distinct<T> {
    vals: [T; 2],
    len: usize,
    third: bool,
}

impl<T: Copy + PartialOrd> Distinct<T> {
    /// Add `v`; false once there are three distinct values.
    #[inline]
    fn insert(&mut self, v: T) -> bool {
        if self.vals.iter().take(self.len).any(|&u| u == v) {
            return !self.third;
        }
        if self.len < 2 {
            self.vals[self.len] = v;
            self.len += 1;
            true
        } else {
            self.third = true;
            false
        }
    }
}

/// Per-label support: the (weighted) number of positives among known rows, summed
/// in row order like `(y_true * w[:, None]).sum(0)`.
pub fn support<L: LabelGrid>(
    y_pos: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
) -> Result<Vec<f64>> {
    if let Some(m) = mask.as_ref() {
        if m.dim() != y_pos.dim() {
            return Err(MetricError::shape("mask and y_true have different shapes"));
        }
    }
    if let Some(w) = weight.as_ref() {
        if w.len() != y_pos.dim().0 {
            return Err(MetricError::shape(
                "sample_weight and y_true have different lengths",
            ));
        }
    }
    let (n, k) = y_pos.dim();
    let mut out = vec![0.0f64; k];
    for i in 0..n {
        let w = weight.as_ref().map_or(1.0, |w| w[i]);
        for (j, o) in out.iter_mut().enumerate() {
            if mask.as_ref().is_none_or(|m| m[[i, j]]) {
                *o += if y_pos.get(i, j) { w } else { 0.0 * w };
            }
        }
    }
    Ok(out)
}

/// The confusion counts of scikit-learn's `confusion_matrix_at_thresholds` for one
/// binary problem: `(fps, tps, rows)` per distinct threshold in descending score
/// order, `rows[t]` being the input row whose score is threshold `t`. Rows with
/// zero weight are dropped first. Errors when every weight is zero.
pub fn binary_counts<S: Score>(
    y_score: ArrayView1<S>,
    y_pos: ArrayView1<bool>,
    weight: Option<ArrayView1<f64>>,
) -> Result<(Vec<f64>, Vec<f64>, Vec<usize>)> {
    let n = y_score.len();
    if y_pos.len() != n || weight.as_ref().is_some_and(|w| w.len() != n) {
        return Err(MetricError::shape(
            "y_true, y_score and sample_weight have different lengths",
        ));
    }
    let mut p = Problem::with_capacity(n, weight.is_some());
    let mut rows: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        let w = weight.as_ref().map_or(1.0, |w| w[i]);
        if w != 0.0 {
            rows.push(i);
        }
        p.push(y_score[i], y_pos[i], w)?;
    }
    if p.keys.is_empty() && n > 0 {
        return Err(MetricError::value(
            "Sample weights must contain at least one non-zero number.",
        ));
    }
    let c = p.curve();
    let r = c
        .last
        .iter()
        .map(|&q| rows.get(q as usize).copied().unwrap_or(0))
        .collect();
    Ok((c.fps, c.tps, r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr1, arr2, Array1, Array2};
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// The count walk (large labels) against the sorted runs (bit for bit
    /// scikit-learn) and, for ROC AUC, a brute-force Mann-Whitney count: uniform,
    /// tied, rounded, extreme and skewed scores, rare to dominant positives, masks
    /// (a gap between the runs), and the same values as f32 under 4-byte keys
    /// (identical walk results: same positive blocks, same counts).
    #[test]
    fn count_walk_matches_sorted_runs() {
        let mut rng = StdRng::seed_from_u64(11);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-13 * b.abs() + 1e-300;
        for case in 0..180 {
            let n = [2usize, 3, 10, 33, 64, 200, 1000, 5000, 40_000][case % 9];
            let kind = (case / 9) % 5;
            let s: Vec<f32> = (0..n)
                .map(|_| {
                    let u = rng.random::<f32>();
                    match kind {
                        0 => u,
                        1 => [-0.0f32, 0.0, 0.5, -0.5, 1.0][rng.random_range(0..5usize)],
                        2 => (u * 100.0).round() / 100.0,
                        3 => [f32::MIN, -f32::MIN_POSITIVE, 0.0, f32::MAX, 1e-30, u]
                            [rng.random_range(0..6usize)],
                        _ => u.powi(12),
                    }
                })
                .collect();
            let prev = [0.002, 0.1, 0.5, 0.97][(case / 45) % 4];
            let mut y: Vec<bool> = (0..n).map(|_| rng.random::<f64>() < prev).collect();
            (y[0], y[1]) = (true, false);
            let m: Vec<bool> = (0..n).map(|i| i < 2 || rng.random::<f64>() < 0.7).collect();
            let (s, y, m) = (Array1::from(s), Array1::from(y), Array1::from(m));
            let sc = s.view().insert_axis(ndarray::Axis(1));
            let s64 = s.mapv(f64::from);
            let sw = s64.view().insert_axis(ndarray::Axis(1));
            let yc = y.view().insert_axis(ndarray::Axis(1));
            let mc = m.view().insert_axis(ndarray::Axis(1));
            let mask = (case % 2 == 1).then_some(mc);
            let mut exact = SplitKeys::<u64>::new();
            exact.load(sw, &yc, mask.as_ref(), 0, f64::narrow_key);
            let (np, nn) = (exact.n_pos, exact.n_neg);
            let (ra, ru) = sorted_label_values(&mut exact, true, true);
            let mut walks = Vec::new();
            let mut wide = SplitKeys::<u64>::new();
            wide.load(sw, &yc, mask.as_ref(), 0, f64::narrow_key);
            let mut narrow = SplitKeys::<u32>::new();
            narrow.load(sc, &yc, mask.as_ref(), 0, f32::narrow_key);
            for buf in [&mut wide as &mut dyn WalkBuf, &mut narrow] {
                walks.push(buf.walk());
            }
            let (a, u) = walks[0];
            assert_eq!((bits(&a), bits(&u)), (bits(&walks[1].0), bits(&walks[1].1)));
            assert!(close(a.value, ra.value), "case {case}: {a:?} {ra:?}");
            assert!(close(u.value, ru.value), "case {case}: {u:?} {ru:?}");
            assert_eq!((a.flags, u.flags), (0, 0));
            if n <= 1000 {
                // Mann-Whitney by brute force over the known rows.
                let known: Vec<usize> = (0..n).filter(|&i| mask.is_none() || m[i]).collect();
                let mut u2 = 0u64;
                for &i in known.iter().filter(|&&i| y[i]) {
                    for &j in known.iter().filter(|&&j| !y[j]) {
                        u2 += match s64[i].partial_cmp(&s64[j]) {
                            Some(std::cmp::Ordering::Greater) => 2,
                            Some(std::cmp::Ordering::Equal) => 1,
                            _ => 0,
                        };
                    }
                }
                let want = u2 as f64 / (2.0 * np as f64 * nn as f64);
                assert_eq!(u.value, want, "case {case}");
            }
        }
    }

    /// On sorted input (NaN last, as fpr is) the binary search is the count of leading
    /// values `<= key`, i.e. the cut of a monotone curve.
    #[test]
    fn searchsorted_right_on_sorted_input() {
        let a = [0.0, 0.0, 0.25, 0.5, 0.5, 1.0, f64::NAN, f64::NAN];
        for key in [-1.0, 0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 2.0] {
            for n in 0..=a.len() {
                let want = a[..n].iter().take_while(|&&f| f <= key).count();
                assert_eq!(searchsorted_right(&a[..n], key), want, "{key} {n}");
            }
        }
        // Unsorted (negative weights): NumPy's probes, not the first value above.
        assert_eq!(searchsorted_right(&[0.0, 1.0, 0.0, 0.5, 1.0], 0.5), 4); // NumPy: 4
    }

    fn bits(v: &MetricValue) -> (u64, u8) {
        (v.value.to_bits(), v.flags)
    }

    /// Runs the count walk on a loaded buffer, whatever its key width.
    trait WalkBuf {
        fn walk(&mut self) -> (MetricValue, MetricValue);
    }

    impl<K: RadixKey> WalkBuf for SplitKeys<K> {
        fn walk(&mut self) -> (MetricValue, MetricValue) {
            let nk = self.keys.len();
            scratch(&mut self.tmp, nk);
            crate::count_walk::ap_auc(&mut self.keys, self.n_pos, self.n_neg, &mut self.tmp)
        }
    }

    /// Large labels take the walk through the public entry points: equal to the
    /// general (weighted, all weights 1) path to 1e-13, packed labels bit for bit
    /// equal to bool labels, f32 bit for bit equal to the same values as f64.
    #[test]
    fn large_labels_take_the_walk() {
        let mut rng = StdRng::seed_from_u64(5);
        let n = WALK_MIN + 1000;
        let s = Array2::from_shape_fn((n, 3), |(_, j)| {
            let u = rng.random::<f32>();
            if j == 1 {
                (u * 100.0).round() / 100.0
            } else {
                u
            }
        });
        let y = Array2::from_shape_fn((n, 3), |(i, j)| {
            rng.random::<f64>() < [0.1, 0.3, 0.01][j] || i == j
        });
        let w64 = s.mapv(f64::from);
        let ones = Array1::from_elem(n, 1.0);
        let par = Parallelism { threads: 2 };
        let (a, u) = per_label_ap_auc(w64.view(), y.view(), None, None, &par).unwrap();
        let (ga, gu) =
            per_label_ap_auc(w64.view(), y.view(), Some(ones.view()), None, &par).unwrap();
        let (fa, fu) = per_label_ap_auc(s.view(), y.view(), None, None, &par).unwrap();
        for j in 0..3 {
            assert!(
                (a[j].value - ga[j].value).abs() <= 1e-13 * ga[j].value,
                "{j}"
            );
            assert!(
                (u[j].value - gu[j].value).abs() <= 1e-13 * gu[j].value,
                "{j}"
            );
            assert_eq!(bits(&a[j]), bits(&fa[j]));
            assert_eq!(bits(&u[j]), bits(&fu[j]));
        }
    }

    fn ap1(y: &[bool], s: &[f64]) -> MetricValue {
        let ya = Array2::from_shape_vec((y.len(), 1), y.to_vec()).unwrap();
        let sa = Array2::from_shape_vec((s.len(), 1), s.to_vec()).unwrap();
        per_label(
            sa.view(),
            ya.view(),
            None,
            None,
            Metric::AveragePrecision,
            &Parallelism::sequential(),
        )
        .unwrap()[0]
    }

    fn auc1(y: &[bool], s: &[f64], max_fpr: Option<f64>) -> MetricValue {
        let ya = Array2::from_shape_vec((y.len(), 1), y.to_vec()).unwrap();
        let sa = Array2::from_shape_vec((s.len(), 1), s.to_vec()).unwrap();
        per_label(
            sa.view(),
            ya.view(),
            None,
            None,
            Metric::RocAuc { max_fpr },
            &Parallelism::sequential(),
        )
        .unwrap()[0]
    }

    /// Brute-force Mann-Whitney AUC with half credit for ties.
    fn mw(y: &[bool], s: &[f64]) -> f64 {
        let mut num = 0.0;
        let mut den = 0.0;
        for i in 0..y.len() {
            for j in 0..y.len() {
                if y[i] && !y[j] {
                    den += 1.0;
                    if s[i] > s[j] {
                        num += 1.0
                    } else if s[i] == s[j] {
                        num += 0.5
                    }
                }
            }
        }
        num / den
    }

    #[test]
    fn ap_known_values() {
        let y = [false, false, true, true];
        let s = [0.1, 0.4, 0.35, 0.8];
        assert!((ap1(&y, &s).value - 0.8333333333333333).abs() < 1e-15);
        // constant scores: prevalence, exactly
        assert_eq!(ap1(&[true, false, false, false], &[0.5; 4]).value, 0.25);
        // tied pair, both orders
        assert_eq!(ap1(&[true, false], &[0.5, 0.5]).value, 0.5);
        assert_eq!(ap1(&[false, true], &[0.5, 0.5]).value, 0.5);
        // -0.0 ties with 0.0
        assert_eq!(ap1(&[true, false], &[-0.0, 0.0]).value, 0.5);
        // all positives
        assert_eq!(ap1(&[true, true], &[0.1, 0.2]).value, 1.0);
        // no positives
        let r = ap1(&[false, false], &[0.1, 0.2]);
        assert_eq!(r.value, 0.0);
        assert_eq!(r.flags, FLAG_NO_POSITIVE);
    }

    #[test]
    fn auc_matches_mann_whitney() {
        let y = [true, false, true, false, false, true, true, false];
        let s = [0.1, 0.1, 0.5, 0.5, 0.3, 0.9, 0.3, 0.0];
        assert!((auc1(&y, &s, None).value - mw(&y, &s)).abs() < 1e-15);
        let r = auc1(&[true, true], &[0.1, 0.2], None);
        assert!(r.value.is_nan());
        assert_eq!(r.flags, FLAG_SINGLE_CLASS);
    }

    #[test]
    fn partial_auc_mcclish() {
        // Perfect ranking -> 1 for any max_fpr; reversed -> 0.5 * (1 + (0 - m²/2)/(m - m²/2)).
        let y = [true, true, false, false];
        let s = [0.9, 0.8, 0.2, 0.1];
        assert!((auc1(&y, &s, Some(0.5)).value - 1.0).abs() < 1e-15);
        let r = auc1(&y, &[0.1, 0.2, 0.8, 0.9], Some(0.5)).value;
        let m: f64 = 0.5;
        let expect = 0.5 * (1.0 + (0.0 - 0.5 * m * m) / (m - 0.5 * m * m));
        assert!((r - expect).abs() < 1e-15);
        // random classifier (constant score) -> 0.5
        assert!((auc1(&y, &[0.5; 4], Some(0.3)).value - 0.5).abs() < 1e-15);
    }

    #[test]
    fn weights_and_mask() {
        let y = arr2(&[[true], [false], [true], [false]]);
        let s = arr2(&[[0.9], [0.8], [0.1], [0.2]]);
        let w = arr1(&[1.0, 0.0, 1.0, 1.0]);
        let par = Parallelism::sequential();
        let with_w = per_label(
            s.view(),
            y.view(),
            Some(w.view()),
            None,
            Metric::AveragePrecision,
            &par,
        )
        .unwrap()[0];
        // zero weight == row deleted; the mask does the same
        let m = arr2(&[[true], [false], [true], [true]]);
        let with_m = per_label(
            s.view(),
            y.view(),
            None,
            Some(m.view()),
            Metric::AveragePrecision,
            &par,
        )
        .unwrap()[0];
        assert_eq!(with_w.value, with_m.value);
        // all weights zero
        let z = arr1(&[0.0; 4]);
        let r = per_label(
            s.view(),
            y.view(),
            Some(z.view()),
            None,
            Metric::AveragePrecision,
            &par,
        )
        .unwrap()[0];
        assert_eq!(r.flags, FLAG_ALL_ZERO_WEIGHT);
        // AUC: single-class check happens before zero-weight filtering
        let w2 = arr1(&[1.0, 0.0, 1.0, 0.0]);
        let r = per_label(
            s.view(),
            y.view(),
            Some(w2.view()),
            None,
            Metric::RocAuc { max_fpr: None },
            &par,
        )
        .unwrap()[0];
        assert!(r.value.is_nan());
        assert_eq!(r.flags, FLAG_NO_NEGATIVE_LEFT);
        // empty mask
        let none = arr2(&[[false], [false], [false], [false]]);
        let r = per_label(
            s.view(),
            y.view(),
            None,
            Some(none.view()),
            Metric::AveragePrecision,
            &par,
        )
        .unwrap()[0];
        assert!(r.value.is_nan() && r.flags & FLAG_EMPTY != 0);
    }

    #[test]
    fn micro_and_rows() {
        let y = arr2(&[[true, false], [false, true]]);
        let s = arr2(&[[0.9, 0.1], [0.2, 0.8]]);
        let par = Parallelism::sequential();
        let m = micro(
            s.view(),
            y.view(),
            None,
            None,
            Metric::AveragePrecision,
            &par,
        )
        .unwrap();
        assert_eq!(m.value, 1.0);
        let r = per_row(
            s.view(),
            y.view(),
            None,
            Metric::RocAuc { max_fpr: None },
            &par,
        )
        .unwrap();
        assert_eq!(
            r.iter().map(|v| v.value).collect::<Vec<_>>(),
            vec![1.0, 1.0]
        );
        // F-order and strided views give the same answers
        let f = s.t().to_owned();
        let fv = f.t();
        let m2 = micro(fv, y.view(), None, None, Metric::AveragePrecision, &par).unwrap();
        assert_eq!(m, m2);
    }

    #[test]
    fn f32_and_i64_keep_their_ties() {
        let y = arr2(&[[false], [true]]);
        let s32 = arr2(&[[0.1f32], [(0.1f64 + 1e-10) as f32]]);
        let par = Parallelism::sequential();
        let r = per_label(
            s32.view(),
            y.view(),
            None,
            None,
            Metric::AveragePrecision,
            &par,
        )
        .unwrap();
        assert_eq!(r[0].value, 0.5);
        let s64 = arr2(&[[1i64 << 53], [(1i64 << 53) + 1]]);
        let r = per_label(
            s64.view(),
            y.view(),
            None,
            None,
            Metric::AveragePrecision,
            &par,
        )
        .unwrap();
        assert_eq!(r[0].value, 1.0);
    }

    #[test]
    fn parallel_equals_sequential() {
        let n = 20_000;
        let k = 6;
        let s = Array2::from_shape_fn((n, k), |(i, j)| ((i * 7919 + j * 31) % 97) as f64 / 97.0);
        let y = Array2::from_shape_fn((n, k), |(i, j)| (i * 13 + j) % 5 == 0);
        let seq = Parallelism::sequential();
        let par = Parallelism { threads: 2 };
        for metric in [
            Metric::AveragePrecision,
            Metric::RocAuc { max_fpr: Some(0.3) },
        ] {
            let a = per_label(s.view(), y.view(), None, None, metric, &seq).unwrap();
            let b = per_label(s.view(), y.view(), None, None, metric, &par).unwrap();
            assert_eq!(a, b);
            let a = per_row(s.view(), y.view(), None, metric, &seq).unwrap();
            let b = per_row(s.view(), y.view(), None, metric, &par).unwrap();
            assert_eq!(a.len(), n);
            for (x, z) in a.iter().zip(b.iter()) {
                assert!(x.value.to_bits() == z.value.to_bits() && x.flags == z.flags);
            }
        }
    }

    /// Packed labels (pairs of labels per pass, packed micro scans) give exactly
    /// the values of the bool matrix (singles), for every path that reads them.
    #[test]
    fn packed_labels_equal_bool_labels() {
        use crate::labels::{pack_bool, PackedLabels};
        let mut rng = StdRng::seed_from_u64(21);
        let bits = |v: &[MetricValue]| -> Vec<(u64, u8)> {
            v.iter().map(|m| (m.value.to_bits(), m.flags)).collect()
        };
        for case in 0..8 {
            let n = [70usize, 1200, 2500][case % 3];
            let k = [9usize, 15, 16, 17][case % 4];
            let s = Array2::from_shape_fn((n, k), |_| match case % 2 {
                0 => rng.random::<f64>(),
                _ => f64::from(rng.random_range(0..9u32)) / 9.0,
            });
            let y = Array2::from_shape_fn((n, k), |(_, j)| {
                // one label without positives, one without negatives
                j != 3 && (j == 5 || rng.random::<f64>() < 0.2)
            });
            let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.85);
            let packed = pack_bool(&y);
            let p = PackedLabels::new(packed.view(), k).unwrap();
            let s32 = s.mapv(|v| v as f32);
            for threads in [1, 2] {
                // 2 threads, k >= 8: pairs of labels per pass
                let par = Parallelism { threads };
                for mask in [None, Some(m.view())] {
                    let (a1, u1) = per_label_ap_auc(s.view(), y.view(), None, mask, &par).unwrap();
                    let (a2, u2) = per_label_ap_auc(s.view(), p, None, mask, &par).unwrap();
                    assert_eq!(bits(&a1), bits(&a2), "case {case}");
                    assert_eq!(bits(&u1), bits(&u2), "case {case}");
                    let (a1, u1) =
                        per_label_ap_auc(s32.view(), y.view(), None, mask, &par).unwrap();
                    let (a2, u2) = per_label_ap_auc(s32.view(), p, None, mask, &par).unwrap();
                    assert_eq!(bits(&a1), bits(&a2), "f32 case {case}");
                    assert_eq!(bits(&u1), bits(&u2), "f32 case {case}");
                    let metric = Metric::RocAuc { max_fpr: Some(0.4) };
                    let r1 = per_label(s.view(), y.view(), None, mask, metric, &par).unwrap();
                    let r2 = per_label(s.view(), p, None, mask, metric, &par).unwrap();
                    assert_eq!(bits(&r1), bits(&r2));
                    // several stream groups, and one
                    for cap in [(n * k / 6).max(64), 1 << 20] {
                        let r1 = micro_streaming(s.view(), y.view(), mask, cap, &par).unwrap();
                        let r2 = micro_streaming(s.view(), p, mask, cap, &par).unwrap();
                        assert_eq!(bits(&[r1.0, r1.1]), bits(&[r2.0, r2.1]), "micro {cap}");
                    }
                    let r1 = micro_ap_auc(s.view(), y.view(), None, mask, &par).unwrap();
                    let r2 = micro_ap_auc(s.view(), p, None, mask, &par).unwrap();
                    assert_eq!(bits(&[r1.0, r1.1]), bits(&[r2.0, r2.1]));
                    let w = Array1::from_shape_fn(n, |i| (i % 5) as f64 * 0.5);
                    let s1 = support(y.view(), Some(w.view()), mask).unwrap();
                    let s2 = support(p, Some(w.view()), mask).unwrap();
                    assert_eq!(s1, s2);
                }
            }
        }
    }

    #[test]
    fn micro_streaming_equals_one_sort() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let close = |a: f64, b: f64| {
            (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-13 * a.abs().max(b.abs())
        };
        for case in 0..16 {
            let n = [3usize, 400, 5000][case % 3];
            let k = [1usize, 4, 15][case % 3];
            let kind = case % 4;
            let s = Array2::from_shape_fn((n, k), |_| match kind {
                // uniform, heavy ties, narrow range (forces refinement), one value
                0 => rng.random::<f64>(),
                1 => f64::from(rng.random_range(0..7u32)) / 7.0,
                2 => 0.5 + rng.random::<f64>() * 1e-9,
                _ => 0.25,
            });
            let prev = [0.1, 0.0, 0.5, 1.0][(case / 4) % 4];
            let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < prev);
            let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.8);
            // float32 keys start their histogram below the top 32 bits
            let s32 = s.mapv(|v| v as f32);
            let mut buf = SplitKeys::new();
            buf.load_all(s32.view(), &y.view(), None);
            let (ra, ru) = label_values(&mut buf, true, true);
            let par = Parallelism::sequential();
            let (a, u) = micro_streaming(s32.view(), y.view(), None, 1000, &par).unwrap();
            assert!(
                close(a.value, ra.value) && close(u.value, ru.value),
                "f32 case {case}"
            );
            for mask in [None, Some(m.view())] {
                let mut buf = SplitKeys::new();
                buf.load_all(s.view(), &y.view(), mask.as_ref());
                let (ra, ru) = label_values(&mut buf, true, true);
                let mut first: Option<(u64, u64)> = None;
                let caps = if n * k > 10_000 {
                    vec![3000usize, 20_000]
                } else {
                    vec![4usize, 37, 1000]
                };
                for cap in caps {
                    for threads in [1usize, 2, 3] {
                        let par = Parallelism { threads };
                        let (a, u) = micro_streaming(s.view(), y.view(), mask, cap, &par).unwrap();
                        assert!(
                            close(a.value, ra.value),
                            "case {case} cap {cap}: {a:?} {ra:?}"
                        );
                        assert!(
                            close(u.value, ru.value),
                            "case {case} cap {cap}: {u:?} {ru:?}"
                        );
                        assert_eq!((a.flags, u.flags), (ra.flags, ru.flags), "case {case}");
                        // never depends on the thread count
                        if threads == 1 {
                            first = Some((a.value.to_bits(), u.value.to_bits()));
                        } else {
                            assert_eq!(first, Some((a.value.to_bits(), u.value.to_bits())));
                        }
                    }
                }
            }
        }
    }

    /// Two workers sharing each group (micro_group_pair: rows split between a
    /// front and a back writer, buckets walked in two runs) give the one-worker
    /// stream's values bit for bit, on inputs larger than a row block, with masks,
    /// ties, a narrow range that forces refinement, and caps that make many groups.
    #[test]
    fn micro_pair_equals_one_worker() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(21);
        for case in 0..6 {
            let (n, k) = [(20_000usize, 4usize), (9_001, 15)][case % 2];
            let kind = case % 3;
            let s = Array2::from_shape_fn((n, k), |_| match kind {
                0 => rng.random::<f64>(),
                1 => f64::from(rng.random_range(0..50u32)) / 50.0,
                _ => 0.5 + rng.random::<f64>() * 1e-9,
            });
            let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.1);
            let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.9);
            let fortran = s.t().as_standard_layout().into_owned().reversed_axes();
            for mask in [None, Some(m.view())] {
                for cap in [5_000usize, 40_000] {
                    let one =
                        micro_streaming(s.view(), y.view(), mask, cap, &Parallelism::sequential())
                            .unwrap();
                    let bits =
                        |r: (MetricValue, MetricValue)| (r.0.value.to_bits(), r.1.value.to_bits());
                    for threads in [2usize, 3] {
                        let par = Parallelism { threads };
                        let two = micro_streaming(s.view(), y.view(), mask, cap, &par).unwrap();
                        assert_eq!(
                            bits(two),
                            bits(one),
                            "case {case} cap {cap} threads {threads}"
                        );
                        let f = micro_streaming(fortran.view(), y.view(), mask, cap, &par).unwrap();
                        assert_eq!(bits(f), bits(one), "fortran case {case} cap {cap}");
                    }
                }
            }
        }
    }

    #[test]
    fn row_reciprocal_divides_exactly() {
        // Every cell index of a row block, for every row width the filter takes.
        for k in 1..=64usize {
            let r = row_reciprocal(k);
            for i in 0..ROW_BLOCK * k {
                assert_eq!(((i as u64 * r) >> 32) as usize, i / k, "k {k} i {i}");
            }
        }
    }

    #[test]
    fn group_filter_matches_a_plain_loop() {
        use crate::labels::{pack_bool, PackedLabels};
        let mut rng = StdRng::seed_from_u64(33);
        for &k in &[1usize, 3, 15, 16, 63, 64] {
            // Sub-block edges: FILTER_CELLS / k rows per sub-block.
            let n = FILTER_CELLS / k * 2 + 7;
            let s = Array2::from_shape_fn((n, k), |_| match rng.random_range(0..6u32) {
                0 => 0.0,
                1 => -0.0,
                2 => -rng.random::<f64>(),
                _ => rng.random::<f64>(),
            });
            let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.3);
            let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.7);
            let packed = pack_bool(&y);
            let p = PackedLabels::new(packed.view(), k).unwrap();
            let sv = s.as_slice().unwrap();
            let rows = 0..n;
            // Buckets of the top 12 bits: a middle range, the zeros, and all.
            let zero = (!0.0f64.key()) >> 52;
            for (shift, first, span) in [(52u32, 0x400u64, 9u64), (52, zero, 1), (0, 0, u64::MAX)] {
                for mask in [None, Some(m.as_slice().unwrap())] {
                    let mut want = Vec::new();
                    for (i, &v) in sv.iter().enumerate() {
                        let (r, j) = (i / k, i % k);
                        let key = !v.key();
                        if mask.is_none_or(|mv| mv[i]) && (key >> shift).wrapping_sub(first) < span
                        {
                            want.push((key, y[(r, j)]));
                        }
                    }
                    assert!(!want.is_empty(), "k {k} shift {shift}");
                    let got_bool = |avx2: bool| {
                        let mut got = Vec::new();
                        let yv = y.as_slice().unwrap();
                        filter_cells_on::<f64, ArrayView2<bool>>(
                            avx2,
                            sv,
                            yv,
                            mask,
                            (k, k),
                            Buckets { shift, first, span },
                            |key, t| got.push((key, t)),
                        );
                        got
                    };
                    assert_eq!(got_bool(false), want, "bool k {k} shift {shift}");
                    if has_avx2() {
                        assert_eq!(got_bool(true), want, "avx2 k {k} shift {shift}");
                    }
                    let mut got = Vec::new();
                    let yv = p.block(rows.clone()).unwrap();
                    filter_cells::<f64, PackedLabels>(
                        sv,
                        yv,
                        mask,
                        (k, k.div_ceil(8)),
                        Buckets { shift, first, span },
                        |key, t| got.push((key, t)),
                    );
                    assert_eq!(got, want, "packed k {k} shift {shift}");
                }
            }
        }
    }

    #[test]
    fn micro_streaming_layouts_agree() {
        // C order takes the vectorised filter; Fortran order, strided views and
        // rows of more than 64 labels take the compaction path. Same buckets, so
        // the same bits.
        let mut rng = StdRng::seed_from_u64(41);
        for &(n, k) in &[(3000usize, 15usize), (400, 70)] {
            let s =
                Array2::from_shape_fn((n, k), |_| f64::from(rng.random_range(0..500u32)) / 500.0);
            let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.2);
            let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.8);
            let sf = s.t().as_standard_layout().t().to_owned();
            let yf = y.t().as_standard_layout().t().to_owned();
            let mf = m.t().as_standard_layout().t().to_owned();
            for threads in [1usize, 2] {
                let par = Parallelism { threads };
                for masked in [false, true] {
                    let mc = masked.then(|| m.view());
                    let mfv = masked.then(|| mf.view());
                    let want = micro_streaming(s.view(), y.view(), mc, 1000, &par).unwrap();
                    let f = micro_streaming(sf.view(), yf.view(), mfv, 1000, &par).unwrap();
                    let mixed = micro_streaming(sf.view(), y.view(), mc, 1000, &par).unwrap();
                    for got in [f, mixed] {
                        assert_eq!(got.0.value.to_bits(), want.0.value.to_bits(), "n {n} k {k}");
                        assert_eq!(got.1.value.to_bits(), want.1.value.to_bits(), "n {n} k {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn narrow_f32_keys_equal_wide_keys() {
        // The u32-key path (streamed counts and terms) must give exactly the values
        // of the u64-key path (stored counts and terms) on the same f32 scores.
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(17);
        let bits = |v: &(MetricValue, MetricValue)| {
            (
                v.0.value.to_bits(),
                v.0.flags,
                v.1.value.to_bits(),
                v.1.flags,
            )
        };
        let mut blocks_seen = 0usize;
        for case in 0..48 {
            let n = [0usize, 1, 2, 7, 9, 130, 257, 3000][case % 8];
            let kind = (case / 8) % 3;
            let s: Vec<f32> = (0..n)
                .map(|_| match kind {
                    // uniform, heavy ties incl. both zeros, extremes
                    0 => rng.random::<f32>() * 2.0 - 1.0,
                    1 => [-0.0f32, 0.0, 0.5, -0.5, 1.0][rng.random_range(0..5usize)],
                    _ => [f32::MIN, -f32::MIN_POSITIVE, -0.0, 0.0, f32::MAX, 0.25]
                        [rng.random_range(0..6usize)],
                })
                .collect();
            let prev = [0.0, 0.1, 0.5, 1.0][(case / 24 + case) % 4];
            let y: Vec<bool> = (0..n).map(|_| rng.random::<f64>() < prev).collect();
            let m: Vec<bool> = (0..n).map(|_| rng.random::<f64>() < 0.7).collect();
            let (s, y, m) = (Array1::from(s), Array1::from(y), Array1::from(m));
            for mask in [None, Some(m.view())] {
                for (ap, auc) in [(true, true), (true, false), (false, true)] {
                    let sc = s.view().insert_axis(ndarray::Axis(1));
                    let yc = y.view().insert_axis(ndarray::Axis(1));
                    let mc = mask.map(|m| m.insert_axis(ndarray::Axis(1)));
                    let mut wide = SplitKeys::<u64>::new();
                    wide.load(sc, &yc, mc.as_ref(), 0, |v: f32| v.key());
                    let mut narrow = SplitKeys::<u32>::new();
                    narrow.load(sc, &yc, mc.as_ref(), 0, f32::narrow_key);
                    assert_eq!((wide.n_pos, wide.n_neg), (narrow.n_pos, narrow.n_neg));
                    let nk = wide.keys.len();
                    let (np, nn) = (wide.n_pos, wide.n_neg);
                    let mut cum = vec![0u64; nk];
                    wide.sort_runs();
                    blocks_seen += merge_blocks(&wide.keys[..np], &wide.keys[nk - nn..], &mut cum);
                    let a = label_values(&mut wide, ap, auc);
                    let b = label_values(&mut narrow, ap, auc);
                    assert_eq!(bits(&a), bits(&b), "case {case} {ap} {auc}: {a:?} {b:?}");
                }
            }
            // whole path: f32 scores equal to the same values widened to f64
            let s2 = Array2::from_shape_fn((n, 3), |(i, j)| s[(i + j) % n.max(1)]);
            let y2 = Array2::from_shape_fn((n, 3), |(i, j)| y[(i * 7 + j) % n.max(1)]);
            let par = Parallelism::sequential();
            let a = per_label_ap_auc(s2.view(), y2.view(), None, None, &par).unwrap();
            let w = s2.mapv(f64::from);
            let b = per_label_ap_auc(w.view(), y2.view(), None, None, &par).unwrap();
            for (x, z) in
                a.0.iter()
                    .chain(a.1.iter())
                    .zip(b.0.iter().chain(b.1.iter()))
            {
                assert_eq!((x.value.to_bits(), x.flags), (z.value.to_bits(), z.flags));
            }
        }
        assert!(blocks_seen > 1000);
    }

    #[test]
    fn fast_path_equals_general_path() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let par = Parallelism::sequential();
        for case in 0..40 {
            let n = [1usize, 2, 7, 50, 300, 3000][case % 6];
            let k = 1 + case % 4;
            let levels = [2u32, 5, 1000, 0][case % 4];
            let s = Array2::from_shape_fn((n, k), |_| {
                if levels == 0 {
                    rng.random::<f64>()
                } else {
                    f64::from(rng.random_range(0..levels)) / f64::from(levels)
                }
            });
            let prev = [0.0, 0.1, 0.5, 1.0][case % 4];
            let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < prev);
            let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.8);
            let ones = ndarray::Array1::from_elem(n, 1.0);
            for mask in [None, Some(m.view())] {
                let (ap, auc) = per_label_ap_auc(s.view(), y.view(), None, mask, &par).unwrap();
                let ap_g = per_label(
                    s.view(),
                    y.view(),
                    Some(ones.view()),
                    mask,
                    Metric::AveragePrecision,
                    &par,
                )
                .unwrap();
                let auc_g = per_label(
                    s.view(),
                    y.view(),
                    Some(ones.view()),
                    mask,
                    Metric::RocAuc { max_fpr: None },
                    &par,
                )
                .unwrap();
                for (a, b) in ap
                    .iter()
                    .zip(ap_g.iter())
                    .chain(auc.iter().zip(auc_g.iter()))
                {
                    assert_eq!(a.value.to_bits(), b.value.to_bits(), "case {case}");
                    assert_eq!(a.flags, b.flags, "case {case}");
                }
                // parallel (forced) gives the same
                let p2 = Parallelism { threads: 2 };
                let (ap2, auc2) = per_label_ap_auc(s.view(), y.view(), None, mask, &p2).unwrap();
                let bits = |v: &[MetricValue]| -> Vec<(u64, u8)> {
                    v.iter().map(|m| (m.value.to_bits(), m.flags)).collect()
                };
                assert_eq!(bits(&ap2), bits(&ap));
                assert_eq!(bits(&auc2), bits(&auc));
            }
            for mask in [None, Some(m.view())] {
                let (ma, mu) = micro_ap_auc(s.view(), y.view(), None, mask, &par).unwrap();
                let ga = micro(
                    s.view(),
                    y.view(),
                    Some(ones.view()),
                    mask,
                    Metric::AveragePrecision,
                    &par,
                )
                .unwrap();
                let gu = micro(
                    s.view(),
                    y.view(),
                    Some(ones.view()),
                    mask,
                    Metric::RocAuc { max_fpr: None },
                    &par,
                )
                .unwrap();
                assert_eq!(
                    (ma.value.to_bits(), ma.flags),
                    (ga.value.to_bits(), ga.flags)
                );
                assert_eq!(
                    (mu.value.to_bits(), mu.flags),
                    (gu.value.to_bits(), gu.flags)
                );
            }
            // strided view
            let sv = s.slice(ndarray::s![..;2, ..]);
            let yv = y.slice(ndarray::s![..;2, ..]);
            let (ap, _) = per_label_ap_auc(sv, yv, None, None, &par).unwrap();
            let ap_g = per_label(
                sv,
                yv,
                Some(ndarray::Array1::from_elem(sv.nrows(), 1.0).view()),
                None,
                Metric::AveragePrecision,
                &par,
            )
            .unwrap();
            for (a, b) in ap.iter().zip(ap_g.iter()) {
                assert_eq!((a.value.to_bits(), a.flags), (b.value.to_bits(), b.flags));
            }
        }
    }

    #[test]
    fn partial_auc_fast_path_equals_general_path() {
        use crate::labels::{pack_bool, PackedLabels};
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(17);
        let bits = |v: &[MetricValue]| -> Vec<(u64, u8)> {
            v.iter().map(|m| (m.value.to_bits(), m.flags)).collect()
        };
        // Tiny values (few or no points below them), usual ones, 1.0 (full area),
        // and out-of-range ones the kernel still has to agree on (fewer than two
        // points, every point below max_fpr, 0/0 standardisation).
        let fprs = [
            1e-300,
            1e-9,
            1e-3,
            0.05,
            0.1,
            1.0 / 3.0,
            0.5,
            0.75,
            0.999,
            1.0,
            0.0,
            -0.5,
            2.0,
            f64::NAN,
        ];
        let mut checked = 0usize;
        for case in 0..36 {
            let n = [1usize, 2, 3, 7, 50, 300, 2000][case % 7];
            let k = [1usize, 2, 3, 9][case % 4];
            let levels = [2u32, 5, 1000, 0, 3][case % 5];
            let s = Array2::from_shape_fn((n, k), |_| {
                if levels == 0 {
                    rng.random::<f64>()
                } else {
                    f64::from(rng.random_range(0..levels)) / f64::from(levels)
                }
            });
            let prev = [0.0, 0.1, 0.5, 1.0, 0.9][case % 5];
            let y = Array2::from_shape_fn((n, k), |(_, j)| match j {
                // one label without negatives, one without positives
                1 => true,
                2 => false,
                _ => rng.random::<f64>() < prev,
            });
            let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.8);
            let packed = pack_bool(&y);
            let p = PackedLabels::new(packed.view(), k).unwrap();
            let s32 = s.mapv(|v| v as f32);
            let ones = ndarray::Array1::from_elem(n, 1.0);
            for mask in [None, Some(m.view())] {
                for &mf in &fprs {
                    let metric = Metric::RocAuc { max_fpr: Some(mf) };
                    let seq = Parallelism::sequential();
                    // general path: unit weights (the same counts as unweighted)
                    let g = per_label(s.view(), y.view(), Some(ones.view()), mask, metric, &seq)
                        .unwrap();
                    let g32 =
                        per_label(s32.view(), y.view(), Some(ones.view()), mask, metric, &seq)
                            .unwrap();
                    for threads in [1, 2] {
                        let par = Parallelism { threads };
                        let f = per_label(s.view(), y.view(), None, mask, metric, &par).unwrap();
                        assert_eq!(bits(&f), bits(&g), "case {case} max_fpr {mf}");
                        // packed labels: pairs of labels per pass when k >= 4
                        let f = per_label(s.view(), p, None, mask, metric, &par).unwrap();
                        assert_eq!(bits(&f), bits(&g), "packed case {case} max_fpr {mf}");
                        // f32: narrow (u32) keys
                        let f = per_label(s32.view(), y.view(), None, mask, metric, &par).unwrap();
                        assert_eq!(bits(&f), bits(&g32), "f32 case {case} max_fpr {mf}");
                        let f = per_label(s32.view(), p, None, mask, metric, &par).unwrap();
                        assert_eq!(bits(&f), bits(&g32), "f32 packed {case} max_fpr {mf}");
                    }
                    checked += g.iter().filter(|v| v.flags == 0).count();
                }
            }
        }
        assert!(checked > 500, "too few defined values compared: {checked}");
    }

    #[test]
    fn per_row_fast_equals_general() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let par = Parallelism::sequential();
        for case in 0..48 {
            let n = [1usize, 3, 40, 500][case % 4];
            // K on both sides of the 16-cell sorting network
            let k = [1usize, 2, 15, 16, 17, 40, 70][case % 7];
            let levels = [2u32, 3, 1000, 0][case % 4];
            let s = Array2::from_shape_fn((n, k), |_| {
                if levels == 0 {
                    rng.random::<f64>() - 0.5
                } else {
                    f64::from(rng.random_range(0..levels)) / f64::from(levels) - 0.5
                }
            });
            let prev = [0.0, 0.1, 0.5, 1.0, 0.9][case % 5];
            let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < prev);
            let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.7);
            for mask in [None, Some(m.view())] {
                for metric in [
                    Metric::AveragePrecision,
                    Metric::RocAuc { max_fpr: None },
                    Metric::RocAuc { max_fpr: Some(1.0) },
                ] {
                    let a = per_row(s.view(), y.view(), mask, metric, &par).unwrap();
                    let b = per_row_general(s.view(), y.view(), mask, metric, &par).unwrap();
                    let bits = |v: &[MetricValue]| -> Vec<(u64, u8)> {
                        v.iter().map(|m| (m.value.to_bits(), m.flags)).collect()
                    };
                    assert_eq!(bits(&a), bits(&b), "case {case} {metric:?}");
                    let f = s.t().to_owned();
                    let c = per_row(f.t(), y.view(), mask, metric, &par).unwrap();
                    assert_eq!(bits(&a), bits(&c));
                }
            }
        }
        // -0.0 ties with 0.0 inside a row
        let s = arr2(&[[-0.0, 0.0, 0.5]]);
        let y = arr2(&[[true, false, false]]);
        let a = per_row(s.view(), y.view(), None, Metric::AveragePrecision, &par).unwrap();
        let b = per_row_general(s.view(), y.view(), None, Metric::AveragePrecision, &par).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn indicator_values_over_blocks() {
        for threads in [1, 2] {
            let par = Parallelism { threads };
            let n = ROW_BLOCK * 3 + 5;
            let mut y = Array2::<i64>::zeros((n, 16));
            assert_eq!(indicator_values(y.view(), &par).unwrap(), (0, 0, false));
            y[[n - 1, 15]] = -1;
            assert_eq!(indicator_values(y.view(), &par).unwrap(), (-1, 0, false));
            y[[ROW_BLOCK + 1, 3]] = 1;
            assert!(indicator_values(y.view(), &par).unwrap().2);
            // Two values met in different blocks only.
            let mut z = Array2::<i32>::from_elem((n, 16), 7);
            z[[n - 1, 0]] = 2;
            assert_eq!(indicator_values(z.view(), &par).unwrap(), (2, 7, false));
            assert_eq!(indicator_values(z.t(), &par).unwrap(), (2, 7, false));
            z[[0, 0]] = 3;
            assert!(indicator_values(z.t(), &par).unwrap().2);
            let e = Array2::<i64>::zeros((0, 4));
            assert_eq!(indicator_values(e.view(), &par).unwrap(), (0, 0, false));
        }
    }

    /// Integer labels read in place (positive = 1) give exactly the values of the
    /// bool matrix `y == 1`, over several row blocks and thread counts.
    #[test]
    fn per_row_values_integer_labels_equal_bool() {
        let mut rng = StdRng::seed_from_u64(21);
        let n = ROW_BLOCK * 2 + 37;
        let s = Array2::from_shape_fn((n, 7), |_| f64::from(rng.random_range(0..5u8)));
        let yi = Array2::from_shape_fn((n, 7), |_| rng.random_range(-1..3i64));
        let yb = yi.mapv(|v| v == 1);
        let y32 = yi.mapv(|v| v as i32);
        for threads in [1, 2] {
            let par = Parallelism { threads };
            for metric in [
                Metric::AveragePrecision,
                Metric::RocAuc { max_fpr: None },
                Metric::RocAuc { max_fpr: Some(0.3) },
            ] {
                let a = per_row(s.view(), yb.view(), None, metric, &par).unwrap();
                let (v, f) = per_row_values(s.view(), yi.view(), None, metric, &par).unwrap();
                let (v32, f32_) = per_row_values(s.view(), y32.view(), None, metric, &par).unwrap();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                let av: Vec<f64> = a.iter().map(|m| m.value).collect();
                let af: Vec<u8> = a.iter().map(|m| m.flags).collect();
                assert_eq!(bits(&v), bits(&av));
                assert_eq!(f, af);
                assert_eq!(bits(&v32), bits(&av));
                assert_eq!(f32_, af);
            }
        }
    }

    #[test]
    fn indicator_packed_values() {
        let seq = Parallelism::sequential();
        let y = arr2(&[[0i64, 1], [1, 0]]);
        assert_eq!(
            indicator_packed(y.view(), &seq).unwrap(),
            (0, 1, false, vec![2, 1])
        );
        let y = arr2(&[[-1i64, -1], [-1, -1]]);
        assert_eq!(
            indicator_packed(y.view(), &seq).unwrap(),
            (-1, -1, false, vec![0, 0])
        );
        let y = arr2(&[[2i64, 0], [1, 0]]);
        let r = indicator_packed(y.view(), &seq).unwrap();
        assert!(r.2 && r.3.is_empty());
        // F order: positives still row-major
        let f = arr2(&[[0i64, 1], [1, 1]]).t().to_owned();
        assert_eq!(
            indicator_packed(f.t(), &seq).unwrap(),
            (0, 1, false, vec![2, 3])
        );
        let e = Array2::<i64>::zeros((0, 3));
        assert_eq!(
            indicator_packed(e.view(), &seq).unwrap(),
            (0, 0, false, vec![])
        );
        // Several row blocks, 10 labels (2 bytes per row), any thread count: the
        // bits equal y == 1 and unpack to the bool matrix.
        let mut rng = StdRng::seed_from_u64(5);
        let n = 3 * ROW_BLOCK + 11;
        let y = Array2::from_shape_fn((n, 10), |_| i32::from(rng.random_bool(0.3)));
        for threads in [1, 2, 3] {
            let par = Parallelism { threads };
            let (lo, hi, third, bits) = indicator_packed(y.view(), &par).unwrap();
            assert_eq!((lo, hi, third, bits.len()), (0, 1, false, 2 * n));
            let bits = Array2::from_shape_vec((n, 2), bits).unwrap();
            let p = crate::labels::PackedLabels::new(bits.view(), 10).unwrap();
            for i in 0..n {
                for j in 0..10 {
                    assert_eq!(p.get(i, j), y[[i, j]] == 1);
                }
            }
        }
        let mut y3 = y.clone();
        y3[[n - 1, 9]] = 7;
        let r = indicator_packed(y3.view(), &Parallelism { threads: 2 }).unwrap();
        assert!(r.2 && r.3.is_empty());
    }

    #[test]
    fn counts_and_threshold_rows() {
        let y = arr1(&[false, false, true, true]);
        let s = arr1(&[0.1, 0.4, 0.35, 0.8]);
        let (fps, tps, rows) = binary_counts(s.view(), y.view(), None).unwrap();
        assert_eq!(fps, vec![0.0, 1.0, 1.0, 2.0]);
        assert_eq!(tps, vec![1.0, 1.0, 2.0, 2.0]);
        assert_eq!(rows, vec![3, 1, 2, 0]);
        let z = arr1(&[0.0; 4]);
        assert!(binary_counts(s.view(), y.view(), Some(z.view())).is_err());
    }

    #[test]
    fn support_counts() {
        let y = arr2(&[[true, false], [true, true]]);
        let w = arr1(&[2.0, 0.5]);
        assert_eq!(
            support(y.view(), Some(w.view()), None).unwrap(),
            vec![2.5, 0.5]
        );
    }

    #[test]
    fn pairwise_sum_small_and_large() {
        let v: Vec<f64> = (0..1000).map(|i| i as f64).collect();
        assert_eq!(pairwise_sum(&v), 499500.0);
        assert_eq!(pairwise_sum(&[]), -0.0);
    }

    #[test]
    fn shape_errors() {
        let y = arr2(&[[true, false]]);
        let s = arr2(&[[0.1]]);
        assert!(per_label(
            s.view(),
            y.view(),
            None,
            None,
            Metric::AveragePrecision,
            &Parallelism::sequential()
        )
        .is_err());
    }
}
