//! Bootstrap resampling of ranking metrics with one sort per label.
//!
//! A bootstrap resample draws `n` rows with replacement; it is fully described by
//! how many times each row was drawn. Every statistic here is evaluated from a
//! per-row weight vector `w_i = count_i * sample_weight_i`, which equals the
//! scikit-learn metric on the materialised resample (repeated rows, zero-count
//! rows removed):
//!
//! * `weighted_ap`: average precision (macro, weighted, per label, micro). Each
//!   label is sorted once; a resample is one walk along the fixed order.
//! * `bucket_ap`: the same AP for resamples without `sample_weight` (integer
//!   counts): a histogram of fixed per-(row, label) buckets per resample, all
//!   systems of a paired comparison in one statistic.
//! * `row_values`: per-row metrics (label ranking loss, LRAP, coverage, one-error,
//!   (N)DCG, samples-averaged AP). Each row's value is computed once by the
//!   existing kernels; a resample is a weighted mean.
//!
//! Draws come from `resample` (a seeded stream per resample index), so results do
//! not depend on the thread count. A value the metric leaves undefined on a
//! resample (no positive drawn for a label) is NaN in the kernel's output; the
//! Python layer counts and excludes those resamples and never reports the NaN as a
//! score.

pub mod bucket_ap;
pub mod resample;
pub mod row_values;
pub mod weighted_ap;

use rayon::prelude::*;

use crate::error::Result;
use crate::parallel::Parallelism;
use resample::Strata;

/// A metric evaluated from per-row weights.
pub trait Statistic: Sync {
    /// Number of values per evaluation (1, or one per label).
    fn n_out(&self) -> usize;
    /// The metric for row weights `w` into `out` (`n_out` values); NaN where the
    /// metric is undefined for these weights.
    fn eval(&self, w: &[f64], out: &mut [f64]);
    /// The metric for integer row counts (a resample without `sample_weight`):
    /// equal to `eval` on the counts as `f64` weights, which is what this default
    /// does; statistics with a faster integer path override it.
    fn eval_counts(&self, counts: &[u32], scratch: &mut Scratch, out: &mut [f64]) {
        scratch.w.clear();
        scratch.w.extend(counts.iter().map(|&c| f64::from(c)));
        self.eval(&scratch.w, out);
    }
    /// Leave-one-out values (row `i` given weight 0), `n_rows x n_out`, row-major.
    fn jackknife(&self, w: &[f64], par: &Parallelism) -> Result<Vec<f64>> {
        jackknife_by_removal(self, w, par)
    }
}

/// Per-thread buffers of a bootstrap, reused across resamples.
#[derive(Default)]
pub struct Scratch {
    /// Row weights.
    pub w: Vec<f64>,
    /// Histogram of `bucket_ap`.
    pub hist: Vec<u32>,
}

/// Leave-one-out values by evaluating the statistic once per removed row
/// (O(n) evaluations); statistics with a closed form override `jackknife`.
pub fn jackknife_by_removal<T: Statistic + ?Sized>(
    stat: &T,
    w: &[f64],
    par: &Parallelism,
) -> Result<Vec<f64>> {
    let n = w.len();
    let k = stat.n_out();
    let rows = par.map(n, n.saturating_mul(n), |i| {
        let mut wi = w.to_vec();
        wi[i] = 0.0;
        let mut out = vec![0.0; k];
        stat.eval(&wi, &mut out);
        out
    })?;
    Ok(rows.concat())
}

/// The bootstrap distribution of `stats` (evaluated on the same resamples):
/// `n_resamples x sum(n_out)` values, row-major, resample `b` in row `b`.
pub fn distribution(
    stats: &[&dyn Statistic],
    strata: &Strata,
    sample_weight: Option<&[f64]>,
    seed: u64,
    n_resamples: usize,
    par: &Parallelism,
) -> Result<Vec<f64>> {
    let n = strata.n_rows();
    let width: usize = stats.iter().map(|s| s.n_out()).sum();
    let mut out = vec![0.0f64; n_resamples * width];
    if width == 0 {
        return Ok(out);
    }
    let one = |(counts, scratch): &mut (Vec<u32>, Scratch), b: usize, row: &mut [f64]| {
        strata.counts(seed, b as u64, counts);
        let mut at = 0;
        match sample_weight {
            Some(sw) => {
                scratch.w.clear();
                scratch
                    .w
                    .extend(counts.iter().zip(sw).map(|(&c, &s)| f64::from(c) * s));
                for s in stats {
                    let k = s.n_out();
                    s.eval(&scratch.w, &mut row[at..at + k]);
                    at += k;
                }
            }
            None => {
                for s in stats {
                    let k = s.n_out();
                    s.eval_counts(counts, scratch, &mut row[at..at + k]);
                    at += k;
                }
            }
        }
    };
    let init = || (vec![0u32; n], Scratch::default());
    if par.threads > 1 && n_resamples > 1 && par.is_parallel_for(n.saturating_mul(n_resamples)) {
        par.install(|| {
            out.par_chunks_mut(width)
                .enumerate()
                .for_each_init(init, |s, (b, row)| one(s, b, row));
        })?;
    } else {
        let mut s = init();
        for (b, row) in out.chunks_mut(width).enumerate() {
            one(&mut s, b, row);
        }
    }
    Ok(out)
}

/// Approximate randomization (Noreen 1989): for permutation `p`, each row's two
/// systems are swapped with probability 1/2 (bit 0 of the row's draw from the
/// stream of index `p` of seed `seed`, see [`resample::Stream`]); returns, per
/// permutation, the AP of the mixed system A then of the mixed system B
/// (`n_perm x 2 n_out`).
pub fn ap_permutations(
    a: &weighted_ap::ApStatistic,
    b: &weighted_ap::ApStatistic,
    w: &[f64],
    seed: u64,
    n_perm: usize,
    par: &Parallelism,
) -> Result<Vec<f64>> {
    let k = a.n_out();
    permutations(w.len(), seed, n_perm, par, |swapped| {
        let mut out = vec![0.0f64; 2 * k];
        let (oa, ob) = out.split_at_mut(k);
        a.eval_merged(b, swapped, w, oa);
        let unswapped: Vec<bool> = swapped.iter().map(|s| !s).collect();
        a.eval_merged(b, &unswapped, w, ob);
        out
    })
}

/// `f(swap flags of permutation p)` for `p` in `0..n_perm` (in parallel when
/// worthwhile), concatenated in permutation order.
pub fn permutations<F>(
    n: usize,
    seed: u64,
    n_perm: usize,
    par: &Parallelism,
    f: F,
) -> Result<Vec<f64>>
where
    F: Fn(&[bool]) -> Vec<f64> + Sync + Send,
{
    let rows = par.map(n_perm, n.saturating_mul(n_perm), |p| {
        f(&swap_flags(seed, p as u64, n))
    })?;
    Ok(rows.concat())
}

/// The swap flags of permutation `p`: row `i` is swapped when bit 0 of the
/// `i`-th output of `Stream::new(seed, p)` is 1.
pub fn swap_flags(seed: u64, p: u64, n: usize) -> Vec<bool> {
    let mut stream = resample::Stream::new(seed, p);
    (0..n).map(|_| stream.next_u64() & 1 == 1).collect()
}
