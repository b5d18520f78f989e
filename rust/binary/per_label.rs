//! Unweighted per-label AP and ROC AUC from two sorted runs per label.
//!
//! Without sample weights, AP and ROC AUC only need, for each tie block in
//! descending score order, how many positives and negatives it holds: tps/fps are
//! exact integer counts, whatever the order inside a block. So each label's keys are
//! gathered into two runs (positives from the front of one buffer, negatives from its
//! back), each run is sorted without payload (`sort_keys`), and the two sorted runs
//! are walked together block by block. The scratch half of the sort buffer then
//! holds the sum terms, so a label needs 16 bytes per row in total. Float32 scores
//! sort 4-byte keys and walk the runs again for the counts and terms instead of
//! storing them (8 bytes per row, [`super::streamed`]). Values are bit-identical to
//! the reference curve (same counts, same formulas, same pairwise summation order).
//! Large labels skip the sorts ([`super::count_walk`]); [`super::Path`] says when.

use ndarray::ArrayView2;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::curve::MAX_ITEMS;
use super::streamed::{label_values_fpr, label_values_streamed};
use super::{
    dispatch, too_many_items, Averaging, Gathered, Input, MetricValue, Path, FLAG_EMPTY,
    FLAG_NO_POSITIVE, FLAG_SINGLE_CLASS,
};
use crate::error::Result;
use crate::labels::LabelGrid;
use crate::numeric::{pairwise_map, Start};
use crate::parallel::Parallelism;
use crate::score::Score;
use crate::sort::{sort_keys, RadixKey};

/// One label's known keys, split by class, plus scratch space. `K` is `u64`, or
/// `u32` for 4-byte scores (per label, see [`Score::narrow_key`]): 8 bytes per row
/// instead of 16, the block counts and sum terms then being streamed
/// ([`label_values_streamed`]) since they no longer fit in the key buffers.
pub(super) struct SplitKeys<K: RadixKey = u64> {
    pub(super) keys: Vec<K>,
    pub(super) tmp: Vec<K>,
    pub(super) n_pos: usize,
    pub(super) n_neg: usize,
    /// Second label of a pair ([`SplitKeys::load_pair`]), swapped in by
    /// [`SplitKeys::take_spare`]; empty unless pairs are used.
    pub(super) spare: Vec<K>,
    pub(super) spare_pos: usize,
    pub(super) spare_neg: usize,
    /// Whether both runs are sorted (loading leaves them unsorted: large labels
    /// never sort them, see [`super::count_walk`]).
    pub(super) sorted: bool,
}

/// Writes one label's keys into a buffer of `n` slots: positives from the front,
/// negatives from the back.
pub(super) struct SplitWriter<'a, K> {
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
pub(super) fn scratch<K: Copy + Default>(v: &mut Vec<K>, n: usize) {
    if v.len() != n {
        v.clear();
        v.resize(n, K::default());
    }
}

impl<K: RadixKey> SplitKeys<K> {
    /// The path of this gathered label, as [`dispatch`] chooses it.
    pub(super) fn path(&self, max_fpr: Option<f64>) -> Path {
        dispatch(&Input {
            averaging: Averaging::PerLabel,
            weighted: false,
            max_fpr,
            fits: true,
            gathered: Some(Gathered {
                n_pos: self.n_pos,
                n_neg: self.n_neg,
                narrow: K::BITS < 64,
            }),
        })
    }

    pub(super) fn new() -> Self {
        Self::with_capacity(0, false)
    }

    /// Room for labels of `n` rows (and a pair's second label when `spare`),
    /// reserved but not touched: pages the passes never write cost no memory.
    pub(super) fn with_capacity(n: usize, spare: bool) -> Self {
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
    pub(super) fn fill(&mut self, n: usize, feed: impl FnOnce(&mut SplitWriter<'_, K>)) {
        scratch(&mut self.keys, n);
        let mut w = SplitWriter::new(&mut self.keys);
        feed(&mut w);
        (self.n_pos, self.n_neg) = w.counts();
        self.sorted = false;
    }

    /// Sort the positive and the negative run (ascending negated keys = descending
    /// scores), unless they already are.
    pub(super) fn sort_runs(&mut self) {
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
    pub(super) fn load<S: Score, L: LabelGrid>(
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
    pub(super) fn load_pair<S: Score, L: LabelGrid>(
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
    pub(super) fn take_spare(&mut self) {
        std::mem::swap(&mut self.keys, &mut self.spare);
        self.n_pos = self.spare_pos;
        self.n_neg = self.spare_neg;
        self.sorted = false;
    }
}

impl SplitKeys<u64> {
    /// Gather every known cell of a matrix (micro average).
    pub(super) fn load_all<S: Score, L: LabelGrid>(
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
pub(super) fn merge_blocks(pos: &[u64], neg: &[u64], out: &mut [u64]) -> usize {
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
pub(super) fn split_cum(x: u64) -> (f64, f64) {
    ((x >> 32) as f64, (x & 0xFFFF_FFFF) as f64)
}

/// Average precision from the block counts of [`merge_blocks`] (unweighted). Same
/// terms, same order and same pairwise sum as [`average_precision_from_curve`]:
/// `tps + fps` is the exact row count, so `precision = tps / rows`.
pub(super) fn ap_blocks(cum: &[u64], n_pos: u64, terms: &mut [u64]) -> MetricValue {
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
    let s = -pairwise_map(terms, Start::NegativeZero, f64::from_bits);
    MetricValue {
        value: if s > 0.0 { s } else { 0.0 },
        flags: 0,
    }
}

/// Full ROC AUC from the block counts of [`merge_blocks`] (unweighted). Same points
/// (drop_intermediate, (0, 0) prepended), same terms and pairwise sum as
/// [`roc_auc_from_curve`] with `max_fpr = None`.
pub(super) fn auc_blocks(cum: &[u64], n_pos: u64, n_neg: u64, terms: &mut [u64]) -> MetricValue {
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
        value: pairwise_map(&terms[..used], Start::NegativeZero, f64::from_bits),
        flags: 0,
    }
}

/// Run `f(unit, &mut SplitKeys)` for every unit `0..units` (a label or a pair of
/// labels) of `rows` rows each, `elements` cells in all, in parallel over units when
/// worthwhile; each worker reuses its own buffers (with room for a pair's second
/// label when `pairs`), reserved on the calling thread ([`Parallelism::map_init`]).
/// Results in unit order.
pub(super) fn for_each_unit<K: RadixKey, R: Send, F>(
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
pub(super) fn unit_workers(units: usize, elements: usize, par: &Parallelism) -> usize {
    if par.is_parallel_for(elements) {
        par.threads.min(units).max(1)
    } else {
        1
    }
}

/// The value of a metric that was not asked for (or of an empty label).
pub(super) const NOT_COMPUTED: MetricValue = MetricValue {
    value: f64::NAN,
    flags: FLAG_EMPTY,
};

/// Unweighted AP and full ROC AUC of one gathered label.
pub(super) fn label_values<K: RadixKey>(
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
    match buf.path(None) {
        Path::CountWalk => {
            scratch(&mut buf.tmp, nk);
            buf.sorted = false; // the walk clobbers the keys
            let (a, b) = super::count_walk::ap_auc(&mut buf.keys, n_pos, n_neg, &mut buf.tmp);
            (if ap { a } else { empty }, if auc { b } else { empty })
        }
        Path::NarrowRuns => {
            buf.sort_runs();
            let (pos, neg) = (&buf.keys[..n_pos], &buf.keys[nk - n_neg..]);
            label_values_streamed(pos, neg, ap, auc)
        }
        // `Path::SortedRuns`, the other path of a gathered full-area label.
        _ => sorted_label_values(buf, ap, auc),
    }
}

/// [`label_values`] of a non-empty label from the sorted runs (bit for bit
/// scikit-learn's sums): `Path::SortedRuns`, block counts and terms in the sort
/// buffers.
pub(super) fn sorted_label_values<K: RadixKey>(
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
        // [`dispatch`] sends only 8-byte keys here (4-byte keys are
        // `Path::NarrowRuns`); the streamed walk gives the same values for any key.
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
pub(super) struct Blocks<'a, K> {
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
    pub(super) fn pop_front(&mut self, cum: &mut u64) -> bool {
        let Some((p, q)) = self.next_front() else {
            return false;
        };
        *cum += ((p as u64) << 32) + (p + q) as u64;
        true
    }

    /// Remove the last block (lowest score); `cum` goes from the counts through
    /// it to the counts before it.
    pub(super) fn pop_back(&mut self, cum: &mut u64) -> bool {
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

/// Unweighted AP and/or ROC AUC of every label: each label gathered into its two
/// runs, then [`label_values_fpr`].
pub(super) fn unweighted_per_label<S: Score, L: LabelGrid>(
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
        return Err(too_many_items());
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
