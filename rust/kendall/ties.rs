//! Tie statistics of one variable: tied pairs, distinct values and the two tie
//! moments, exact integers converted once, or NumPy's pairwise sum of the terms in
//! value order when the integers would not be exact in f64.

use super::*;

/// Tie statistics of one variable, accumulated exactly over its tie groups.
#[derive(Default, Clone, Copy)]
pub(super) struct Ties {
    /// Tied pairs `Σ t(t-1)/2`.
    pub(super) pairs: u64,
    /// Number of groups (distinct values).
    pub(super) groups: u64,
    /// Number of groups with `t > 1`.
    pub(super) multi: u64,
    /// Exact `Σ t(t-1)(t-2)` and `Σ t(t-1)(2t+5)`.
    pub(super) m0: u128,
    pub(super) m1: u128,
}

impl Ties {
    #[inline]
    pub(super) fn add(&mut self, t: u64) {
        self.groups += 1;
        if t > 1 {
            let w = u128::from(t);
            self.pairs += t * (t - 1) / 2;
            self.multi += 1;
            self.m0 += w * (w - 1) * (w - 2);
            self.m1 += w * (w - 1) * (2 * w + 5);
        }
    }

    pub(super) fn merge(&mut self, o: &Ties) {
        self.pairs += o.pairs;
        self.groups += o.groups;
        self.multi += o.multi;
        self.m0 += o.m0;
        self.m1 += o.m1;
    }

    /// The float64 moments as NumPy sums them, when that sum is exact: every term
    /// and every partial sum is an integer of at most 2^53, so any summation order
    /// gives the exact total. `None` when the order matters.
    pub(super) fn exact_moments(&self) -> Option<(f64, f64)> {
        const EXACT: u128 = 1 << 53;
        (self.m0 <= EXACT && self.m1 <= EXACT).then_some((self.m0 as f64, self.m1 as f64))
    }
}

/// NumPy's elementwise terms `cnt * (cnt - 1.) * (cnt - 2)` and
/// `cnt * (cnt - 1.) * (2*cnt + 5)` (int64 `cnt` times float64).
pub(super) fn moment_terms(t: u64) -> (f64, f64) {
    let tf = t as f64;
    let c2 = (t - 2) as f64;
    let c5 = (2 * t + 5) as f64;
    (tf * (tf - 1.0) * c2, tf * (tf - 1.0) * c5)
}

/// The moments in NumPy's order from the group sizes of `seq` (indices sorted by
/// `key` within each bucket): only needed when [`Ties::exact_moments`] is `None`, i.e. with tie groups
/// of hundreds of thousands of values. Streams the terms (no buffer).
pub(super) fn ordered_moments<I: Index>(
    seq: &mut [I],
    starts: &[usize],
    key: &impl Fn(usize) -> u64,
    multi: u64,
) -> (f64, f64) {
    // Buckets are in key order; sorting each one orders the whole sequence.
    for w in starts.windows(2) {
        if let Some(seg) = seq.get_mut(w[0]..w[1]) {
            seg.sort_unstable_by_key(|&i| key(i.get()));
        }
    }
    let seq: &[I] = seq;
    let groups = || {
        let mut pos = 0usize;
        std::iter::from_fn(move || {
            let first = *seq.get(pos)?;
            let k0 = key(first.get());
            let start = pos;
            pos += 1;
            while seq.get(pos).is_some_and(|&i| key(i.get()) == k0) {
                pos += 1;
            }
            Some((pos - start) as u64)
        })
        .filter(|&t| t > 1)
    };
    let len = usize::try_from(multi).unwrap_or(usize::MAX);
    let mut g0 = groups().map(|t| moment_terms(t).0);
    let m0 = pairwise_stream(len, Start::Zero, &mut || g0.next().unwrap_or(0.0));
    let mut g1 = groups().map(|t| moment_terms(t).1);
    let m1 = pairwise_stream(len, Start::Zero, &mut || g1.next().unwrap_or(0.0));
    (m0, m1)
}
