//! Floating-point sums that reproduce NumPy's and SciPy's results bit for bit.
//!
//! NumPy reduces a contiguous float64 array with a pairwise tree: runs of at most
//! 128 values go through eight interleaved accumulators (unrolled by 8), longer runs
//! are split in two at a multiple of 8 and the halves added. A run of fewer than
//! eight values is added one by one to a start value, which is where the two NumPy
//! entry points differ: the inner loop of `np.add.reduce` starts at `-0.0`
//! ([`Start::NegativeZero`], so that a sum of `-0.0` values stays `-0.0`), while
//! `np.sum` as called by SciPy starts at the identity `0.0` ([`Start::Zero`]).
//! The tree is written once, over a stream of values ([`pairwise_stream`]), so a
//! caller can sum terms it never stores; the slice functions feed it from memory.
//!
//! [`CompSum`] is Neumaier's compensated sum, for term sequences whose length is
//! unknown until the end (the pairwise tree depends on it).

/// The value a run of fewer than eight terms is added to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// `0.0`: `np.sum` (the reduction's identity), as SciPy calls it.
    Zero,
    /// `-0.0`: NumPy's pairwise inner loop (`np.add.reduce`, `np.sum` inside
    /// scikit-learn's metrics on non-empty arrays).
    NegativeZero,
}

impl Start {
    #[inline(always)]
    fn value(self) -> f64 {
        match self {
            Start::Zero => 0.0,
            Start::NegativeZero => -0.0,
        }
    }
}

/// NumPy's pairwise sum of `n` values taken in order from `next`: the same tree
/// and association as NumPy's over a stored array, without storing the values.
#[inline]
pub fn pairwise_stream(n: usize, start: Start, next: &mut impl FnMut() -> f64) -> f64 {
    if n < 8 {
        let mut res = start.value();
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
        let a = pairwise_stream(n2, start, next);
        a + pairwise_stream(n - n2, start, next)
    }
}

/// NumPy's pairwise sum of `f(x)` over `a`, in order.
#[inline]
pub fn pairwise_map<T: Copy>(a: &[T], start: Start, f: impl Fn(T) -> f64) -> f64 {
    let mut it = a.iter();
    pairwise_stream(a.len(), start, &mut || it.next().map_or(0.0, |&x| f(x)))
}

/// `np.add.reduce` of a contiguous float64 array (NumPy's pairwise inner loop,
/// short runs start at `-0.0`): the final sums of scikit-learn's curve metrics.
pub fn pairwise_sum(a: &[f64]) -> f64 {
    pairwise_map(a, Start::NegativeZero, |x| x)
}

/// `np.sum` of a contiguous float64 array as SciPy calls it (short runs start at
/// the identity `0.0`, so the sum of nothing is `0.0`).
pub fn numpy_sum(a: &[f64]) -> f64 {
    pairwise_map(a, Start::Zero, |x| x)
}

/// Neumaier's compensated sum accumulator.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompSum {
    s: f64,
    c: f64,
}

impl CompSum {
    /// Add one term.
    #[inline]
    pub fn add(&mut self, x: f64) {
        let t = self.s + x;
        if self.s.abs() >= x.abs() {
            self.c += (self.s - t) + x;
        } else {
            self.c += (x - t) + self.s;
        }
        self.s = t;
    }

    /// The compensated total of the terms added so far.
    pub fn value(&self) -> f64 {
        self.s + self.c
    }

    /// The running sum and its compensation (to carry the state elsewhere).
    pub fn parts(&self) -> (f64, f64) {
        (self.s, self.c)
    }

    /// Add another accumulator's terms (its sum, then its compensation).
    pub fn absorb(&mut self, other: &CompSum) {
        self.add(other.s);
        self.add(other.c);
    }

    /// An accumulator resumed from [`CompSum::parts`].
    pub fn from_parts(s: f64, c: f64) -> Self {
        CompSum { s, c }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree written out for a stored array, as NumPy's `pairwise_sum`
    /// (numpy/_core/src/umath/loops_utils.h.src): the stream must agree with it.
    fn numpy_tree(a: &[f64], start: f64) -> f64 {
        let n = a.len();
        if n < 8 {
            a.iter().fold(start, |r, &x| r + x)
        } else if n <= 128 {
            let mut r = [0.0f64; 8];
            r.copy_from_slice(&a[..8]);
            let full = n - n % 8;
            for c in a[8..full].chunks_exact(8) {
                for (rj, &x) in r.iter_mut().zip(c) {
                    *rj += x;
                }
            }
            let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
            a[full..].iter().fold(res, |r, &x| r + x)
        } else {
            let mut n2 = n / 2;
            n2 -= n2 % 8;
            numpy_tree(&a[..n2], start) + numpy_tree(&a[n2..], start)
        }
    }

    #[test]
    fn stream_matches_the_stored_tree() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for n in [0, 1, 7, 8, 9, 127, 128, 129, 136, 1000, 4097] {
            let v: Vec<f64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 11) as f64 * 1e-10 - 3e5
                })
                .collect();
            assert_eq!(pairwise_sum(&v).to_bits(), numpy_tree(&v, -0.0).to_bits());
            assert_eq!(numpy_sum(&v).to_bits(), numpy_tree(&v, 0.0).to_bits());
        }
    }

    #[test]
    fn starts_differ_only_on_signed_zero() {
        assert!(pairwise_sum(&[]).is_sign_negative());
        assert!(numpy_sum(&[]).is_sign_positive());
        assert!(pairwise_sum(&[-0.0, -0.0]).is_sign_negative());
        assert!(numpy_sum(&[-0.0, -0.0]).is_sign_positive());
        assert_eq!(numpy_sum(&[1.0, 2.0, 3.0]), 6.0);
    }

    #[test]
    fn compensated_sum_keeps_small_terms() {
        let mut c = CompSum::default();
        for x in [1e16, 1.0, -1e16, 1.0] {
            c.add(x);
        }
        assert_eq!(c.value(), 2.0);
    }
}
