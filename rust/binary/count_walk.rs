//! Unweighted average precision and ROC AUC of one label without sorting it.
//!
//! Both metrics only need, for each tie block in descending score order, how many
//! positives and negatives it holds, and a block without positives adds no AP term
//! and credits every positive above it in the Mann-Whitney count. So the keys of
//! both classes are partitioned together, MSD radix style (in cache after the first
//! level), and a bucket that holds no positive is not refined any further: its
//! negatives are counted as one group. Only buckets with positives are split again,
//! down to small ranges whose positives are sorted and whose negatives are placed
//! among them by a binary search (never sorted). Below the first level a bucket is
//! refined against a small scratch that stays in cache rather than its cold range
//! of the second buffer. With few
//! positives most of the negatives stop at the first or second level, and the
//! walk produces AP terms only for the positive blocks instead of one per block.
//!
//! The AP terms are scikit-learn's (same `tps`, `fps`, same formulas) but they are
//! added with a compensated sum, without the zero terms of negative-only blocks,
//! instead of `np.sum`'s pairwise tree over the full curve (about 1e-16 relative,
//! and no buffer of terms); ROC AUC is the
//! exact Mann-Whitney count (ties 1/2) over `2 * P * N`, the area of the same curve,
//! rather than its trapezoid sum. `label_values` uses this for large labels only;
//! docs/deviations.md says so.

use super::MetricValue;
use crate::numeric::CompSum;
use crate::sort::{insertion_sort, varying_bits, width_for, RadixKey};

/// Ranges of at most this many keys are finished by [`rank_leaf`].
const LEAF: usize = 32;
/// Buckets of at most this many keys are refined against a scratch of this size
/// that stays in cache (32 KiB of `u64` keys).
const HOT: usize = 4096;
/// Levels with at most this many buckets keep their counts on the stack.
const STACK_BUCKETS: usize = 512;

/// Running counts of a walk over tie blocks in descending score order.
pub(crate) struct Walk {
    pub(super) tps: u64,
    pub(super) fps: u64,
    /// Twice the Mann-Whitney count: each negative scores 2 per positive ranked
    /// strictly above it and 1 per positive tied with it.
    pub(crate) u2: u128,
    pub(super) pf: f64,
    pub(super) prev_r: f64,
    /// Compensated sum of the AP terms of the positive blocks (no term buffer:
    /// a label with mostly positives would need 8 bytes per row for it).
    pub(crate) ap: CompSum,
}

impl Walk {
    /// A walk that starts below `tps` positives and `fps` negatives (ranked
    /// above everything it will see) out of `n_pos` positives in all.
    pub(crate) fn new((tps, fps): (u64, u64), n_pos: u64) -> Self {
        let pf = n_pos as f64;
        Walk {
            tps,
            fps,
            u2: 0,
            pf,
            prev_r: tps as f64 / pf,
            ap: CompSum::default(),
        }
    }

    /// Walk the tie blocks of `keys` (negated keys: positives in `keys[..np]`,
    /// negatives after them, all ranked below what the walk has seen); `tmp` (as
    /// long) is scratch; both are clobbered.
    pub(crate) fn run<K: RadixKey>(&mut self, keys: &mut [K], np: usize, tmp: &mut [K]) {
        // A range that fits the hot scratch is in cache already: no scratch.
        let mut hot = if keys.len() > HOT {
            vec![K::default(); HOT]
        } else {
            Vec::new()
        };
        walk_range(keys, np, tmp, self, &mut hot);
    }

    /// The next tie block in descending score order: `p` positives and `q`
    /// negatives with equal scores (or, with `p == 0`, any run of negatives between
    /// two positive blocks: they add no AP term and the same count each).
    #[inline]
    pub(crate) fn group(&mut self, p: u64, q: u64) {
        self.u2 += u128::from(q) * u128::from(2 * self.tps + p);
        self.tps += p;
        self.fps += q;
        if p > 0 {
            // ap_blocks' term: (previous recall - recall) * precision.
            let r = self.tps as f64 / self.pf;
            let precision = self.tps as f64 / (self.tps + self.fps) as f64;
            self.ap.add((self.prev_r - r) * precision);
            self.prev_r = r;
        }
    }

    /// The blocks of a leaf, in order: `mult[i]` positives share the i-th distinct
    /// positive key; `slots[2i]` negatives rank strictly between keys i - 1 and i,
    /// `slots[2i + 1]` are tied with key i, `slots[2 mult.len()]` rank below all.
    #[inline]
    pub(super) fn leaf(&mut self, mult: &[u32], slots: &[u32]) {
        for (i, &m) in mult.iter().enumerate() {
            if let (Some(&between), Some(&tied)) = (slots.get(2 * i), slots.get(2 * i + 1)) {
                if between > 0 {
                    self.group(0, u64::from(between));
                }
                self.group(u64::from(m), u64::from(tied));
            }
        }
        if let Some(&below) = slots.get(2 * mult.len()) {
            if below > 0 {
                self.group(0, u64::from(below));
            }
        }
    }
}

/// Walk the tie blocks of `src` (positives in `src[..np]`, negatives after them)
/// in ascending key order (descending score). `dst` is scratch of the same length;
/// both are clobbered.
fn walk_range<K: RadixKey>(src: &mut [K], np: usize, dst: &mut [K], w: &mut Walk, hot: &mut [K]) {
    let n = src.len().min(dst.len());
    let nn = n.saturating_sub(np);
    if np == 0 || n <= LEAF {
        if np == 0 {
            if nn > 0 {
                w.group(0, nn as u64);
            }
        } else if np == 1 {
            one_positive(&src[..n], w);
        } else {
            rank_leaf(&mut src[..n], np, w);
        }
        return;
    }
    let (src, dst) = (&mut src[..n], &mut dst[..n]);
    let diff = varying_bits(src);
    if diff == 0 {
        w.group(np as u64, nn as u64);
        return;
    }
    let top = 64 - diff.leading_zeros();
    let width = width_for(n).min(top);
    let shift = top - width;
    let nb = 1usize << width;
    let mask = (nb - 1) as u64;
    let digit = |k: K| ((k.wide() >> shift) & mask) as usize;
    let (pos, neg) = src.split_at(np);
    // Per bucket d: t[2d] counts its positives, t[2d + 1] its negatives; then they
    // become the write cursors of its positives and negatives (positives first),
    // and after the scatter the end of its positives and the end of the bucket.
    // Tables of up to STACK_BUCKETS buckets live on the stack (the deep levels
    // are many and small: a heap table would cost an allocation each).
    let mut stack = [0u32; 2 * STACK_BUCKETS];
    let mut heap = Vec::new();
    let t: &mut [u32] = if nb <= STACK_BUCKETS {
        &mut stack[..2 * nb]
    } else {
        heap.resize(2 * nb, 0u32);
        &mut heap
    };
    for (run, class) in [(pos, 0usize), (neg, 1usize)] {
        for &k in run {
            if let Some(c) = t.get_mut(2 * digit(k) + class) {
                *c += 1;
            }
        }
    }
    let mut acc = 0u32;
    for c in t.chunks_exact_mut(2) {
        let (p, q) = (c[0], c[1]);
        c[0] = acc;
        c[1] = acc + p;
        acc += p + q;
    }
    for (run, class) in [(pos, 0usize), (neg, 1usize)] {
        for &k in run {
            if let Some(o) = t.get_mut(2 * digit(k) + class) {
                if let Some(x) = dst.get_mut(*o as usize) {
                    *x = k;
                }
                *o += 1;
            }
        }
    }
    // Buckets in order; runs of buckets without positives are one group.
    let mut start = 0usize;
    let mut negatives = 0u64;
    for c in t.chunks_exact(2) {
        let (mid, end) = (c[0] as usize, c[1] as usize);
        if mid > start {
            if negatives > 0 {
                w.group(0, negatives);
                negatives = 0;
            }
            let d = &mut dst[start..end];
            if d.len() <= hot.len() {
                // Below this level the bucket alternates with a small scratch that
                // stays in cache, instead of its cold range of `src`.
                walk_range(d, mid - start, &mut hot[..end - start], w, &mut []);
            } else {
                walk_range(d, mid - start, &mut src[start..end], w, hot);
            }
        } else {
            negatives += (end - start) as u64;
        }
        start = end;
    }
    if negatives > 0 {
        w.group(0, negatives);
    }
}

/// A small range whose only positive is `a[0]` (the most common leaf: deep
/// buckets hold a key or two): the negatives ranked above it, tied with it and
/// below it, as [`rank_leaf`] would walk them, without its tables.
#[inline]
fn one_positive<K: RadixKey>(a: &[K], w: &mut Walk) {
    let Some((&p, neg)) = a.split_first() else {
        return;
    };
    let (mut above, mut tied) = (0u32, 0u32);
    for &k in neg {
        above += u32::from(k < p);
        tied += u32::from(k == p);
    }
    let below = neg.len() as u32 - above - tied;
    w.leaf(&[1], &[above, tied, below]);
}

/// A small range (at most `LEAF` keys): sort the positives, then count the
/// negatives between and tied with each distinct positive key by a branch-free
/// binary search, and walk the blocks in order. The negatives are never sorted: a
/// run of them between two positive blocks is one group.
fn rank_leaf<K: RadixKey>(a: &mut [K], np: usize, w: &mut Walk) {
    let (pos, neg) = a.split_at_mut(np.min(a.len()).min(LEAF));
    insertion_sort(pos);
    // Distinct positive keys (padded to a power of two with the largest key, which
    // no negative exceeds) and how many positives hold each.
    let mut vals = [!K::default(); LEAF];
    let mut mult = [0u32; LEAF];
    let mut dp = 0usize;
    for &k in pos.iter() {
        let new = dp == 0 || vals[dp - 1] != k;
        dp += usize::from(new);
        if let (Some(v), Some(c)) = (vals.get_mut(dp - 1), mult.get_mut(dp - 1)) {
            *v = k;
            *c += 1;
        }
    }
    let size = dp.next_power_of_two().min(LEAF);
    let vals = &vals[..size];
    // slots[2i]: negatives ranked strictly between distinct positive keys i - 1
    // and i; slots[2i + 1]: negatives tied with key i; slots[2 dp]: below them all.
    let mut slots = [0u32; 2 * LEAF + 1];
    for &k in neg.iter() {
        // Lower bound: how many distinct positive keys rank above `k`.
        let mut base = 0usize;
        let mut len = size;
        while len > 1 {
            let half = len / 2;
            base += half * usize::from(vals[base + half - 1] < k);
            len -= half;
        }
        base += usize::from(vals[base] < k);
        let tied = base < dp && vals[base.min(size - 1)] == k;
        if let Some(s) = slots.get_mut(2 * base + usize::from(tied)) {
            *s += 1;
        }
    }
    w.leaf(&mult[..dp], &slots[..2 * dp + 1]);
}

/// Average precision and full ROC AUC of one label whose (negated) keys are
/// `keys[..np]` (positives) and the last `nn` of `keys` (negatives), unsorted;
/// `np` and `nn` must both be positive. `tmp` (at least `np + nn` long) is scratch,
/// `keys` is clobbered.
pub(crate) fn ap_auc<K: RadixKey>(
    keys: &mut [K],
    np: usize,
    nn: usize,
    tmp: &mut [K],
) -> (MetricValue, MetricValue) {
    let len = keys.len();
    let n = np + nn;
    if n < len {
        // Masked rows left a gap between the runs.
        keys.copy_within(len - nn.., np);
    }
    let mut w = Walk::new((0, 0), np as u64);
    let n = n.min(len).min(tmp.len());
    w.run(&mut keys[..n], np, &mut tmp[..n]);
    debug_assert_eq!((w.tps, w.fps), (np as u64, nn as u64));
    let u2 = w.u2;
    let s = -w.ap.value();
    let ap = MetricValue {
        value: if s > 0.0 { s } else { 0.0 },
        flags: 0,
    };
    let den = 2u128 * np as u128 * nn as u128;
    let auc = MetricValue {
        value: u2 as f64 / den as f64,
        flags: 0,
    };
    (ap, auc)
}
