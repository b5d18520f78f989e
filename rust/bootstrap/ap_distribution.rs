//! The bootstrap distribution of AP for one or more systems, and the choice of
//! the statistic that computes it.
//!
//! Two statistics give the same values: [`ApStatistic`] walks each label's fixed
//! order with `f64` row weights (needed when there is a `sample_weight`), and
//! [`BucketAp`] histograms integer draw counts, four resamples per pass (faster,
//! and only valid without `sample_weight`). `crate::binary::dispatch`, the one
//! place that chooses every path, chooses between them ([`ap_path`] asks it);
//! [`ap_distribution`] builds what it chose and runs the resamples, so the binding
//! only converts arrays and errors.

use ndarray::ArrayView2;

use super::bucket_ap::BucketAp;
use super::resample::Strata;
use super::weighted_ap::{ApAverage, ApStatistic};
use super::{distribution, Statistic};
use crate::binary::{dispatch, Averaging, Input, Path};
use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::score::Score;

/// One system's score matrix, in the dtype it was given (read in place).
#[derive(Debug, Clone, Copy)]
pub enum ScoreMatrix<'a> {
    F64(ArrayView2<'a, f64>),
    F32(ArrayView2<'a, f32>),
    I64(ArrayView2<'a, i64>),
}

/// Evaluate `$body` with `$s` bound to the view inside the [`ScoreMatrix`] `$m`.
macro_rules! with_matrix {
    ($m:expr, |$s:ident| $body:expr) => {
        match $m {
            ScoreMatrix::F64($s) => $body,
            ScoreMatrix::F32($s) => $body,
            ScoreMatrix::I64($s) => $body,
        }
    };
}

/// A score dtype of [`ScoreMatrix`]: how to take its view back out.
trait MatrixDtype: Score {
    fn view<'a>(m: &ScoreMatrix<'a>) -> Option<ArrayView2<'a, Self>>;
}

macro_rules! matrix_dtype {
    ($t:ty, $variant:ident) => {
        impl MatrixDtype for $t {
            fn view<'a>(m: &ScoreMatrix<'a>) -> Option<ArrayView2<'a, Self>> {
                match m {
                    ScoreMatrix::$variant(v) => Some(*v),
                    _ => None,
                }
            }
        }
    };
}
matrix_dtype!(f64, F64);
matrix_dtype!(f32, F32);
matrix_dtype!(i64, I64);

/// The statistic that computes the distribution, as [`dispatch`] chooses it (the one
/// place that chooses every path): weights need the weighted walk
/// ([`Path::BootstrapWeighted`]); integer counts take the buckets, shared by the
/// systems when their keys are of one type ([`Path::BootstrapBucketShared`]), else
/// one statistic per system ([`Path::BootstrapBucketEach`]).
pub(crate) fn ap_path(weighted: bool, y_scores: &[ScoreMatrix<'_>]) -> Path {
    let same =
        |p: &[ScoreMatrix<'_>]| std::mem::discriminant(&p[0]) == std::mem::discriminant(&p[1]);
    let mixed_dtypes = !y_scores.windows(2).all(same);
    dispatch(&Input::one(
        Averaging::BootstrapAp { mixed_dtypes },
        weighted,
        None,
    ))
}

/// One [`BucketAp`] over all `y_scores`, which are all of dtype `S`.
fn bucket_shared<S: MatrixDtype>(
    y_scores: &[ScoreMatrix<'_>],
    y_pos: ArrayView2<'_, bool>,
    mask: Option<ArrayView2<'_, bool>>,
    average: ApAverage,
    par: &Parallelism,
) -> Result<BucketAp> {
    let views: Vec<ArrayView2<'_, S>> = y_scores.iter().filter_map(S::view).collect();
    BucketAp::new(&views, y_pos, mask, average, par)
}

/// The bootstrap distribution of AP of every system in `y_scores` on the same
/// resamples (drawn within `strata` from `seed`): `n_resamples` rows of `width`
/// values, row-major, with `width` the systems' outputs side by side (one value
/// per system, or one per label with `ApAverage::PerLabel`). Returns
/// `(values, width)`; NaN where AP is undefined on a resample.
///
/// `y_pos`: positives; `mask`: `true` = known; `sample_weight`: one weight per
/// row. The statistic is [`ap_path`]'s choice; the values do not depend on it.
#[allow(clippy::too_many_arguments)]
pub fn ap_distribution(
    y_scores: &[ScoreMatrix<'_>],
    y_pos: ArrayView2<'_, bool>,
    mask: Option<ArrayView2<'_, bool>>,
    sample_weight: Option<&[f64]>,
    average: ApAverage,
    strata: &Strata,
    seed: u64,
    n_resamples: usize,
    par: &Parallelism,
) -> Result<(Vec<f64>, usize)> {
    let stats: Vec<Box<dyn Statistic>> = match ap_path(sample_weight.is_some(), y_scores) {
        Path::BootstrapWeighted => y_scores
            .iter()
            .map(|m| {
                with_matrix!(m, |s| ApStatistic::new(
                    *s, y_pos, mask, average, false, par
                )
                .map(|a| Box::new(a) as Box<dyn Statistic>))
            })
            .collect::<Result<_>>()?,
        Path::BootstrapBucketShared => {
            let shared = match y_scores.first() {
                Some(ScoreMatrix::F32(_)) => {
                    bucket_shared::<f32>(y_scores, y_pos, mask, average, par)
                }
                Some(ScoreMatrix::I64(_)) => {
                    bucket_shared::<i64>(y_scores, y_pos, mask, average, par)
                }
                _ => bucket_shared::<f64>(y_scores, y_pos, mask, average, par),
            };
            vec![Box::new(shared?)]
        }
        Path::BootstrapBucketEach => y_scores
            .iter()
            .map(|m| {
                with_matrix!(m, |s| BucketAp::new(
                    std::slice::from_ref(s),
                    y_pos,
                    mask,
                    average,
                    par
                )
                .map(|a| Box::new(a) as Box<dyn Statistic>))
            })
            .collect::<Result<_>>()?,
        other => {
            return Err(MetricError::value(format!(
                "internal: no bootstrap statistic for the path {other:?}"
            )))
        }
    };
    let width = stats.iter().map(|s| s.n_out()).sum();
    let dyns: Vec<&dyn Statistic> = stats.iter().map(|s| s.as_ref()).collect();
    let values = distribution(&dyns, strata, sample_weight, seed, n_resamples, par)?;
    Ok((values, width))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};

    /// Weights always take the weighted walk; without them the systems share one
    /// bucket statistic when their dtypes agree (or there is none), else one each.
    #[test]
    fn path_rules() {
        let a = Array2::<f64>::zeros((3, 2));
        let b = Array2::<f32>::zeros((3, 2));
        let c = Array2::<i64>::zeros((3, 2));
        let (a, b, c) = (
            ScoreMatrix::F64(a.view()),
            ScoreMatrix::F32(b.view()),
            ScoreMatrix::I64(c.view()),
        );
        for systems in [&[][..], &[a], &[a, a], &[a, b], &[c, b]] {
            assert_eq!(ap_path(true, systems), Path::BootstrapWeighted);
        }
        for systems in [&[][..], &[a], &[b, b], &[c, c, c]] {
            assert_eq!(ap_path(false, systems), Path::BootstrapBucketShared);
        }
        for systems in [&[a, b][..], &[b, b, c], &[c, a]] {
            assert_eq!(ap_path(false, systems), Path::BootstrapBucketEach);
        }
    }

    /// Every path gives, bit for bit, the distribution of its statistics built and
    /// run by hand; mixed dtypes equal the same systems converted to one dtype
    /// where the conversion is exact, and unit weights equal no weights.
    #[test]
    fn paths_equal_their_statistics() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let (n, k) = (300, 3);
        let s64 = Array2::from_shape_fn((n, k), |_| f64::from(rng.random_range(0..40u8)));
        let s32 = s64.mapv(|v| v as f32);
        let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.3);
        let st = Strata::single(n).unwrap();
        let par = Parallelism::sequential();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for avg in [ApAverage::Macro, ApAverage::PerLabel, ApAverage::Micro] {
            let shared =
                BucketAp::new(&[s64.view(), s64.view()], y.view(), None, avg, &par).unwrap();
            let expected = distribution(&[&shared], &st, None, 3, 9, &par).unwrap();
            let two = [ScoreMatrix::F64(s64.view()), ScoreMatrix::F64(s64.view())];
            let (got, width) =
                ap_distribution(&two, y.view(), None, None, avg, &st, 3, 9, &par).unwrap();
            assert_eq!(width, shared.n_out());
            assert_eq!(bits(&got), bits(&expected), "{avg:?} shared");
            let mixed = [ScoreMatrix::F64(s64.view()), ScoreMatrix::F32(s32.view())];
            let (each, _) =
                ap_distribution(&mixed, y.view(), None, None, avg, &st, 3, 9, &par).unwrap();
            assert_eq!(bits(&each), bits(&expected), "{avg:?} each");
            let ones = vec![1.0; n];
            let (weighted, w) =
                ap_distribution(&two, y.view(), None, Some(&ones), avg, &st, 3, 9, &par).unwrap();
            let a = ApStatistic::new(s64.view(), y.view(), None, avg, false, &par).unwrap();
            let by_hand = distribution(&[&a, &a], &st, Some(&ones), 3, 9, &par).unwrap();
            assert_eq!(w, width);
            assert_eq!(bits(&weighted), bits(&by_hand), "{avg:?} weighted");
            assert_eq!(
                bits(&weighted),
                bits(&expected),
                "{avg:?} weighted = buckets"
            );
        }
    }
}
