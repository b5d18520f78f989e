//! Unweighted average precision and ROC AUC of one label without sorting it.
//!
//! Both metrics only need, for each tie block in descending score order, how many
//! positives and negatives it holds, and a block without positives adds no AP term
//! and credits every positive above it in the Mann-Whitney count. So the keys of
//! both classes are partitioned together, MSD radix style (in cache after the first
//! level), and a bucket that holds no positive is not refined any further: its
//! negatives are counted as one group. Only buckets with positives are split again,
//! down to small ranges that are finished by insertion sort and a merge. With few
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

use crate::binary_curve::{Blocks, CompSum, MetricValue};
use crate::sort::{insertion_sort, varying_bits, width_for, RadixKey};

/// Ranges of at most this many keys are finished by insertion sort and a merge.
const LEAF: usize = 32;
/// Levels with at most this many buckets keep their counts on the stack.
const STACK_BUCKETS: usize = 128;

/// Running counts of a walk over tie blocks in descending score order.
pub(crate) struct Walk {
    tps: u64,
    fps: u64,
    /// Twice the Mann-Whitney count: each negative scores 2 per positive ranked
    /// strictly above it and 1 per positive tied with it.
    pub(crate) u2: u128,
    pf: f64,
    prev_r: f64,
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
        walk_range(keys, np, tmp, self);
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
}

/// Walk the tie blocks of `src` (positives in `src[..np]`, negatives after them)
/// in ascending key order (descending score). `dst` is scratch of the same length;
/// both are clobbered.
fn walk_range<K: RadixKey>(src: &mut [K], np: usize, dst: &mut [K], w: &mut Walk) {
    let n = src.len().min(dst.len());
    let nn = n.saturating_sub(np);
    if np == 0 || n <= LEAF {
        if np == 0 {
            if nn > 0 {
                w.group(0, nn as u64);
            }
        } else {
            leaf(&mut src[..n], np, w);
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
    // Counts per bucket, then each bucket's range in `dst`: positives first. Small
    // tables live on the stack (the deep levels are many and small).
    let mut stack = [0u32; 4 * STACK_BUCKETS];
    let mut heap = Vec::new();
    let table: &mut [u32] = if nb <= STACK_BUCKETS {
        &mut stack[..4 * nb]
    } else {
        heap.resize(4 * nb, 0u32);
        &mut heap
    };
    let (cp, rest) = table.split_at_mut(nb);
    let (cn, rest) = rest.split_at_mut(nb);
    let (op, on) = rest.split_at_mut(nb);
    for &k in pos {
        if let Some(c) = cp.get_mut(digit(k)) {
            *c += 1;
        }
    }
    for &k in neg {
        if let Some(c) = cn.get_mut(digit(k)) {
            *c += 1;
        }
    }
    let mut acc = 0u32;
    for d in 0..nb {
        op[d] = acc;
        on[d] = acc + cp[d];
        acc += cp[d] + cn[d];
    }
    for (run, offs) in [(pos, op), (neg, on)] {
        for &k in run {
            if let Some(o) = offs.get_mut(digit(k)) {
                if let Some(t) = dst.get_mut(*o as usize) {
                    *t = k;
                }
                *o += 1;
            }
        }
    }
    let mut s = 0usize;
    for d in 0..nb {
        let (p, q) = (cp[d] as usize, cn[d] as usize);
        if p == 0 {
            if q > 0 {
                w.group(0, q as u64);
            }
        } else {
            walk_range(&mut dst[s..s + p + q], p, &mut src[s..s + p + q], w);
        }
        s += p + q;
    }
}

/// A small range: sort both classes and merge them block by block.
fn leaf<K: RadixKey>(a: &mut [K], np: usize, w: &mut Walk) {
    let (pos, neg) = a.split_at_mut(np.min(a.len()));
    insertion_sort(pos);
    insertion_sort(neg);
    let mut blocks = Blocks { pos, neg };
    while let Some((p, q)) = blocks.next_front() {
        w.group(p as u64, q as u64);
    }
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
