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
//! * `ap_distribution`: which of the two AP statistics a distribution uses (the
//!   one place that chooses), and the distribution itself.
//!
//! Draws come from `resample` (a seeded stream per resample index), so results do
//! not depend on the thread count. A value the metric leaves undefined on a
//! resample (no positive drawn for a label) is NaN in the kernel's output; the
//! Python layer counts and excludes those resamples and never reports the NaN as a
//! score.

pub mod ap_distribution;
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
    /// The metric for [`LANES`] resamples at once: `packed[i][l]` is row `i`'s
    /// count in resample `l` (every count fits a byte); `out` holds `LANES` blocks
    /// of `n_out` values, resample `l` in block `l`. Equal to `eval_counts` on each
    /// lane, which is what this default does through `eval`; statistics that read
    /// a shared structure once per row for all lanes override it.
    fn eval_lanes(&self, packed: &[[u8; LANES]], scratch: &mut Scratch, out: &mut [f64]) {
        let k = self.n_out();
        if k == 0 {
            return;
        }
        for (l, o) in out.chunks_mut(k).enumerate() {
            scratch.w.clear();
            scratch.w.extend(packed.iter().map(|c| f64::from(c[l])));
            self.eval(&scratch.w, o);
        }
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
    /// Histograms of `bucket_ap` for [`LANES`] resamples, one slot of lanes per bucket.
    pub hist_lanes: Vec<[u32; LANES]>,
    /// Per-label `(AP, positives)` of `bucket_ap` for [`LANES`] resamples.
    pub ap_lanes: Vec<[(f64, f64); LANES]>,
}

/// Resamples drawn and evaluated together when there is no `sample_weight`: the
/// counts of a row in the `LANES` resamples are adjacent bytes, so a statistic
/// reads each row's fixed data (a bucket id) once for all of them.
pub const LANES: usize = 4;

/// Per-thread state of [`distribution`].
#[derive(Default)]
struct Worker {
    /// Row counts of one resample (only when a batch cannot be packed).
    counts: Vec<u32>,
    /// Row counts of a batch of `LANES` resamples, one byte each.
    packed: Vec<[u8; LANES]>,
    /// One statistic's values for a batch, lane after lane.
    lane_out: Vec<f64>,
    scratch: Scratch,
}

impl Worker {
    /// Draw resamples `first..first + LANES` into `packed`; false when a row is
    /// drawn `limit` times or more in one of them (the batch is then evaluated one
    /// resample at a time with `u32` counts).
    fn draw_packed(&mut self, strata: &Strata, seed: u64, first: usize, limit: u8) -> bool {
        self.packed.clear();
        self.packed.resize(strata.n_rows(), [0; LANES]);
        let mut fits = true;
        for l in 0..LANES {
            let packed = &mut self.packed;
            strata.draw(seed, (first + l) as u64, |r| {
                let c = &mut packed[r as usize][l];
                *c = c.saturating_add(1);
                fits &= *c < limit;
            });
        }
        fits
    }
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
    distribution_packing_below(
        stats,
        strata,
        sample_weight,
        seed,
        n_resamples,
        par,
        u8::MAX,
    )
}

/// [`distribution`], with batches packed only while every count is below
/// `limit` (a lower limit sends more batches to the one-resample path: tests).
fn distribution_packing_below(
    stats: &[&dyn Statistic],
    strata: &Strata,
    sample_weight: Option<&[f64]>,
    seed: u64,
    n_resamples: usize,
    par: &Parallelism,
    limit: u8,
) -> Result<Vec<f64>> {
    let n = strata.n_rows();
    let width: usize = stats.iter().map(|s| s.n_out()).sum();
    let mut out = vec![0.0f64; n_resamples * width];
    if width == 0 {
        return Ok(out);
    }
    let one = |st: &mut Worker, b: usize, row: &mut [f64]| {
        let Worker {
            counts, scratch, ..
        } = st;
        counts.resize(n, 0);
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
    // A batch of up to `LANES` consecutive resamples (`rows`: their output rows).
    // Every resample reads its own stream and the values are exact functions of
    // its counts, so batching changes no value.
    let batch = |st: &mut Worker, first: usize, rows: &mut [f64]| {
        let full = rows.len() == LANES * width;
        if sample_weight.is_none() && full && st.draw_packed(strata, seed, first, limit) {
            let mut at = 0;
            for s in stats {
                let k = s.n_out();
                st.lane_out.clear();
                st.lane_out.resize(LANES * k, 0.0);
                s.eval_lanes(&st.packed, &mut st.scratch, &mut st.lane_out);
                for (row, vals) in rows.chunks_mut(width).zip(st.lane_out.chunks(k.max(1))) {
                    row[at..at + k].copy_from_slice(&vals[..k]);
                }
                at += k;
            }
        } else {
            for (l, row) in rows.chunks_mut(width).enumerate() {
                one(st, first + l, row);
            }
        }
    };
    let per_batch = LANES * width;
    if par.threads > 1 && n_resamples > LANES && par.is_parallel_for(n.saturating_mul(n_resamples))
    {
        par.install(|| {
            out.par_chunks_mut(per_batch)
                .enumerate()
                .for_each_init(Worker::default, |st, (i, rows)| batch(st, i * LANES, rows));
        })?;
    } else {
        let mut st = Worker::default();
        for (i, rows) in out.chunks_mut(per_batch).enumerate() {
            batch(&mut st, i * LANES, rows);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::bucket_ap::BucketAp;
    use crate::bootstrap::row_values::RowMeans;
    use crate::bootstrap::weighted_ap::ApAverage;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};

    /// Batches of `LANES` resamples, the one-resample path (a partial last batch,
    /// or every batch with a packing limit of 2) and any thread count give the
    /// same values, bit for bit, as evaluating each resample's `u32` counts.
    #[test]
    fn batches_equal_one_resample_at_a_time() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let (n, k) = (700, 3);
        let s = Array2::from_shape_fn((n, k), |_| (rng.random::<f64>() * 50.0).floor());
        let t = Array2::from_shape_fn((n, k), |_| rng.random::<f64>());
        let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.2);
        let v = Array2::from_shape_fn((n, 2), |_| rng.random::<f64>());
        let codes: Vec<u32> = (0..n as u32).map(|i| i % 3).collect();
        let seq = Parallelism::sequential();
        for avg in [ApAverage::Macro, ApAverage::PerLabel, ApAverage::Micro] {
            let ap = BucketAp::new(&[s.view(), t.view()], y.view(), None, avg, &seq).unwrap();
            let means = RowMeans::new(v.view());
            let stats: [&dyn Statistic; 2] = [&ap, &means];
            let width = ap.n_out() + means.n_out();
            for strata in [
                Strata::single(n).unwrap(),
                Strata::from_codes(&codes, 3).unwrap(),
            ] {
                // 25 full batches and a partial one; n x n_resamples is past the
                // parallel threshold, so two threads do split the batches.
                let n_resamples = 103;
                let mut expected = vec![0.0; n_resamples * width];
                let mut counts = vec![0u32; n];
                let mut scratch = Scratch::default();
                for (b, row) in expected.chunks_mut(width).enumerate() {
                    strata.counts(9, b as u64, &mut counts);
                    ap.eval_counts(&counts, &mut scratch, &mut row[..ap.n_out()]);
                    means.eval_counts(&counts, &mut scratch, &mut row[ap.n_out()..]);
                }
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                for threads in [1, 2] {
                    let par = Parallelism { threads };
                    for limit in [u8::MAX, 2] {
                        let got = distribution_packing_below(
                            &stats,
                            &strata,
                            None,
                            9,
                            n_resamples,
                            &par,
                            limit,
                        )
                        .unwrap();
                        assert_eq!(bits(&got), bits(&expected), "{avg:?} {threads} {limit}");
                    }
                }
            }
        }
    }
}
