//! What a `y_true` cell can be ([`Relevance`]: bool, float and integer gains)
//! and what a checked pass saw in it ([`Seen`]): the inputs scikit-learn's
//! `type_of_target` and value checks need, gathered in the same pass as the metric.

use super::*;

/// Relevance of a label: `bool` for the binary label-ranking metrics, numeric gains
/// for (N)DCG. "Relevant" means non-zero, as in scikit-learn's CSR conversion.
///
/// Besides `bool` and `f64`, the integer and float32 types are accepted so that the
/// checked entry points (`*_checked`) read a user's `y_true` in place (no relevance
/// or gain array is materialised) while they check it.
pub trait Relevance: Copy + Send + Sync + PartialEq + Default + std::fmt::Debug + 'static {
    /// Whether a `y_true` of this type can hold more than two distinct values (and so
    /// fail scikit-learn's "multilabel-indicator" test). False for `bool`.
    const CAN_BE_MULTICLASS: bool = true;
    fn gain(self) -> f64;
    fn zero() -> Self;
    /// False for NaN and +-inf (integers and bools are always finite).
    #[inline]
    fn finite(self) -> bool {
        true
    }
    #[inline]
    fn negative(self) -> bool {
        false
    }
    /// The smaller / larger of two values (any result if one is NaN: NaN is
    /// reported through `finite` anyway).
    fn lo(self, o: Self) -> Self;
    fn hi(self, o: Self) -> Self;
    /// Whether `lo < self < hi`.
    #[inline]
    fn between(self, lo: Self, hi: Self) -> bool {
        let _ = (lo, hi);
        false
    }
    /// Whether some value of the type lies strictly between `lo <= hi`.
    #[inline]
    fn gap(lo: Self, hi: Self) -> bool {
        lo != hi
    }
}

impl Relevance for bool {
    const CAN_BE_MULTICLASS: bool = false;
    #[inline]
    fn gain(self) -> f64 {
        if self {
            1.0
        } else {
            0.0
        }
    }
    #[inline]
    fn zero() -> Self {
        false
    }
    #[inline]
    fn lo(self, o: Self) -> Self {
        self & o
    }
    #[inline]
    fn hi(self, o: Self) -> Self {
        self | o
    }
}

macro_rules! float_relevance {
    ($t:ty) => {
        impl Relevance for $t {
            #[inline]
            fn gain(self) -> f64 {
                f64::from(self)
            }
            #[inline]
            fn zero() -> Self {
                0.0
            }
            #[inline]
            fn finite(self) -> bool {
                self.is_finite()
            }
            #[inline]
            fn negative(self) -> bool {
                self < 0.0
            }
            #[inline]
            fn lo(self, o: Self) -> Self {
                if o < self {
                    o
                } else {
                    self
                }
            }
            #[inline]
            fn hi(self, o: Self) -> Self {
                if o > self {
                    o
                } else {
                    self
                }
            }
            #[inline]
            fn between(self, lo: Self, hi: Self) -> bool {
                (self > lo) & (self < hi)
            }
        }
    };
}
float_relevance!(f64);
float_relevance!(f32);

/// Integer relevance types, read in place; `gain` is NumPy's cast to float64 (exact
/// below 2^53, round-to-nearest beyond, as `int64 -> float64`).
macro_rules! int_relevance {
    ($t:ty, signed = $signed:expr) => {
        impl Relevance for $t {
            #[inline]
            fn gap(lo: Self, hi: Self) -> bool {
                // No integer lies strictly between adjacent integers (e.g. 0 and 1).
                i128::from(hi) - i128::from(lo) > 1
            }
            #[inline]
            fn lo(self, o: Self) -> Self {
                self.min(o)
            }
            #[inline]
            fn hi(self, o: Self) -> Self {
                self.max(o)
            }
            #[inline]
            fn between(self, lo: Self, hi: Self) -> bool {
                (self > lo) & (self < hi)
            }
            #[inline]
            fn gain(self) -> f64 {
                self as f64
            }
            #[inline]
            fn zero() -> Self {
                0
            }
            #[inline]
            fn negative(self) -> bool {
                $signed && self < Self::default()
            }
        }
    };
}
int_relevance!(i64, signed = true);
int_relevance!(i32, signed = true);
int_relevance!(i8, signed = true);
int_relevance!(u8, signed = false);

/// What a checked pass saw in the *known* entries (unknown entries of `y_true` count
/// as 0, as the Python layer's `np.where(mask, y_true, 0)`); the Python layer turns it
/// into scikit-learn's errors, in scikit-learn's order.
#[derive(Debug, Clone, Copy)]
pub struct Seen<R> {
    /// A known score is NaN or +-inf.
    pub score_nonfinite: bool,
    /// A known `y_true` value is NaN or +-inf.
    pub true_nonfinite: bool,
    /// A known `y_true` value is negative.
    pub true_negative: bool,
    /// Distinct values of `y_true` (known entries, and 0 if any entry is unknown).
    pub labels: Distinct<R>,
}

impl<R: Relevance> Seen<R> {
    pub(super) fn new() -> Self {
        Seen {
            score_nonfinite: false,
            true_nonfinite: false,
            true_negative: false,
            labels: Distinct::new(),
        }
    }

    pub(super) fn merge(&mut self, o: &Self) {
        self.score_nonfinite |= o.score_nonfinite;
        self.true_nonfinite |= o.true_nonfinite;
        self.true_negative |= o.true_negative;
        self.labels.merge(&o.labels);
    }
}
