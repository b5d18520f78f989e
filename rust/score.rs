//! Score types and their order keys.
//!
//! Every ranking metric only needs to *order* scores and decide which scores are
//! *equal*. Each supported score type maps to a `u64` key such that
//! `a < b  <=>  key(a) < key(b)` and `a == b  <=>  key(a) == key(b)` for all
//! non-NaN values. In particular `-0.0` and `0.0` get the same key (IEEE equality,
//! as NumPy's `diff`/`unique` see them), unlike `f64::total_cmp`. Keys are computed
//! in the input's own precision: float32 scores are never widened in a way that could
//! split or merge ties.

/// A score type the kernels accept.
pub trait Score: Copy + Send + Sync + 'static {
    /// Order-preserving, tie-preserving key (see module docs). NaN must be rejected
    /// before keys are taken; its key is unspecified.
    fn key(self) -> u64;
    /// The narrowest key type with the same properties (`u32` for `f32`).
    type NarrowKey: crate::sort::RadixKey;
    /// Order- and tie-preserving key in [`Score::NarrowKey`]; `key()` is a monotone
    /// function of it, so both give the same order and the same tie blocks. 4-byte
    /// scores sort 4-byte keys: half the memory and bytes moved of `u64` keys.
    fn narrow_key(self) -> Self::NarrowKey;
    /// False for NaN and +-inf (integers are always finite).
    fn is_finite(self) -> bool;
    /// True for NaN only.
    fn is_nan(self) -> bool;
    /// The value as f64, for metrics that need magnitudes (never for ordering).
    fn to_f64(self) -> f64;
}

/// Whether every value of `x` (float64 or float32) is finite (no NaN, no +-inf),
/// checked in fixed chunks in parallel when `x` is large: the validation pass
/// every call over a score matrix makes first, which a single-threaded NumPy
/// reduction would otherwise serialise.
pub trait FiniteCheck: Copy + Sync {
    /// Whether every value of `x` is finite (branch-free, vectorises).
    fn all_finite_seq(x: &[Self]) -> bool;
}

/// `FiniteCheck` for a float type whose exponent field is `exp` (mask) with its
/// lowest bit at `low`: exponent bits all ones (NaN or inf) is the only case where
/// adding one to the exponent carries into the sign bit.
macro_rules! finite_check {
    ($t:ty, $bits:ty, $exp:expr, $low:expr) => {
        impl FiniteCheck for $t {
            fn all_finite_seq(x: &[$t]) -> bool {
                let acc = x
                    .iter()
                    .fold(0, |a: $bits, v| a | ((v.to_bits() & $exp) + (1 << $low)));
                acc >> (<$bits>::BITS - 1) == 0
            }
        }
    };
}

finite_check!(f64, u64, 0x7ff0_0000_0000_0000u64, 52);
finite_check!(f32, u32, 0x7f80_0000u32, 23);

pub fn all_finite<S: FiniteCheck>(
    x: &[S],
    par: &crate::parallel::Parallelism,
) -> crate::error::Result<bool> {
    const CHUNK: usize = 1 << 16;
    let n = x.len();
    let parts = par.map(n.div_ceil(CHUNK), n, |c| {
        S::all_finite_seq(x.get(c * CHUNK..((c + 1) * CHUNK).min(n)).unwrap_or(&[]))
    })?;
    Ok(parts.into_iter().all(|ok| ok))
}

/// `Score` for a float type `$t` whose bit pattern is `$bits` (the narrow key):
/// both zeros map to `+0.0`, then negative values have every bit flipped and
/// non-negative ones the sign bit set, so that unsigned order matches float order.
/// `key()` widens the narrow key, which keeps order and ties.
macro_rules! float_score {
    ($t:ty, $bits:ty) => {
        impl Score for $t {
            type NarrowKey = $bits;
            #[inline]
            fn key(self) -> u64 {
                u64::from(self.narrow_key())
            }
            #[inline]
            fn narrow_key(self) -> $bits {
                let x = if self == 0.0 { 0.0 } else { self };
                let bits = x.to_bits();
                if bits >> (<$bits>::BITS - 1) == 1 {
                    !bits
                } else {
                    bits | (1 << (<$bits>::BITS - 1))
                }
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline]
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
        }
    };
}

float_score!(f64, u64);
float_score!(f32, u32);

impl Score for i64 {
    type NarrowKey = u64;
    #[inline]
    fn narrow_key(self) -> u64 {
        self.key()
    }
    #[inline]
    fn key(self) -> u64 {
        (self as u64) ^ (1u64 << 63)
    }
    #[inline]
    fn is_finite(self) -> bool {
        true
    }
    #[inline]
    fn is_nan(self) -> bool {
        false
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_keys_order_and_tie() {
        let xs = [
            -f64::INFINITY,
            -1e300,
            -1.0,
            -1e-300,
            -0.0,
            0.0,
            1e-300,
            1.0,
            2.0,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            if w[0] == w[1] {
                assert_eq!(w[0].key(), w[1].key());
            } else {
                assert!(w[0].key() < w[1].key(), "{} {}", w[0], w[1]);
            }
        }
        assert_eq!((-0.0f64).key(), 0.0f64.key());
    }

    #[test]
    fn f32_keys_order_and_tie() {
        let xs = [
            -f32::INFINITY,
            -1.0f32,
            -0.0,
            0.0,
            f32::MIN_POSITIVE,
            0.5,
            f32::MAX,
        ];
        for w in xs.windows(2) {
            if w[0] == w[1] {
                assert_eq!(w[0].key(), w[1].key());
            } else {
                assert!(w[0].key() < w[1].key());
            }
        }
    }

    #[test]
    fn i64_keys_order() {
        let xs = [i64::MIN, -1, 0, 1, (1i64 << 53), (1i64 << 53) + 1, i64::MAX];
        for w in xs.windows(2) {
            assert!(w[0].key() < w[1].key());
        }
    }

    #[test]
    fn all_finite_in_every_chunk() {
        use crate::parallel::Parallelism;
        let n = (1 << 16) * 3 + 5;
        for threads in [1, 2] {
            let par = Parallelism { threads };
            let mut x = vec![0.25f64; n];
            assert!(all_finite(&x, &par).unwrap());
            for (at, bad) in [
                (0, f64::NAN),
                (n - 1, f64::INFINITY),
                (1 << 16, f64::NEG_INFINITY),
            ] {
                x[at] = bad;
                assert!(!all_finite(&x, &par).unwrap(), "{at} {bad}");
                x[at] = 0.25;
            }
            let mut y = vec![f32::MAX; n];
            y[3] = -f32::MAX;
            assert!(all_finite(&y, &par).unwrap());
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                y[70_000] = bad;
                assert!(!all_finite(&y, &par).unwrap(), "{bad}");
            }
            assert!(all_finite::<f64>(&[], &par).unwrap());
        }
    }
}
