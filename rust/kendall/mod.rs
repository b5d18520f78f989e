//! Kendall's tau with SciPy's semantics: the pair counts behind
//! `scipy.stats.kendalltau` (SciPy 1.17.1), in O(n log n).
//!
//! SciPy computes the statistic and the p-value from a handful of integers
//! (discordant pairs, joint/x/y tied pairs) and four float64 tie moments. This
//! module computes exactly those numbers; the Python layer
//! (`toxeval.metrics._kendall`) then evaluates SciPy's formulas with the same
//! Python-int / float64 arithmetic, so the results agree to the last bit.
//!
//! Algorithm (see [`counts_unchecked`]): the discordant pairs are the strict
//! inversions of the `y` values listed in `(x, y)` order. Both variables are cut
//! into buckets by sampled splitters (equal keys always share a bucket), and one
//! index array of length n (3-byte indices below 2**24 elements, else `u32`) is the
//! only large buffer. The x phase groups the indices by x bucket and sorts each
//! bucket by `(x, y)`; walking that order gives the x ties, the joint ties and the
//! inversions between y buckets (a Fenwick tree over bucket numbers per work unit,
//! plus unit-to-unit pairs from bucket histograms). The y phase groups the same
//! indices by y bucket and merge-sorts each bucket, put in `(x, y)` order, by `y`,
//! counting the inversions inside buckets and the y ties. Work units (runs of
//! consecutive buckets) run on the thread pool; every count is an exact integer
//! and the tie moments are exact integer sums converted once (or, for tie groups
//! of hundreds of thousands of values, NumPy's pairwise sum of the terms in value
//! order), so results do not depend on the thread count.

use ndarray::ArrayView1;

use crate::error::{MetricError, Result};
use crate::numeric::{pairwise_stream, Start};
use crate::parallel::{map_in_pool, Parallelism};
use crate::score::Score;

mod buckets;
mod phases;
#[cfg(test)]
mod tests;
mod ties;

use buckets::*;
use phases::*;
use ties::*;

/// The numbers SciPy's `kendalltau` derives from the data.
///
/// Pair counts are exact integers (`u64`: `n(n-1)/2` fits for any `n < 2^32`).
/// The moments `x0 = Σ t(t-1)(t-2)` and `x1 = Σ t(t-1)(2t+5)` over the tie
/// groups of `x` (sizes `t > 1`, in increasing value order) are float64 sums
/// computed exactly as NumPy does (`cnt * (cnt - 1.) * (cnt - 2)` elementwise,
/// then NumPy's pairwise summation), because that is what SciPy uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KendallCounts {
    /// Number of observations.
    pub n: u64,
    /// Pairs with `x_i < x_j` and `y_i > y_j` (strictly in both).
    pub dis: u64,
    /// Pairs tied in both `x` and `y`.
    pub ntie: u64,
    /// Pairs tied in `x` (including joint ties).
    pub xtie: u64,
    /// Pairs tied in `y` (including joint ties).
    pub ytie: u64,
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
    /// Number of distinct values of `x` and of `y`.
    pub x_unique: u64,
    pub y_unique: u64,
}

/// Below this many elements the work stays sequential.
const PAR_MIN: usize = 1 << 15;
/// Elements per bucket the splitters aim at (small in tests, so that small
/// inputs get many buckets and units).
#[cfg(not(test))]
const BUCKET_TARGET: usize = 2048;
#[cfg(test)]
const BUCKET_TARGET: usize = 64;
/// Most splitters (a variable has `2 * splitters + 1` buckets).
const MAX_SPLITTERS: usize = 1024;
/// Sampled keys per splitter.
const OVERSAMPLE: usize = 8;
/// A bucket up to this size is sorted in a small per-unit buffer of keys; a larger
/// one (only with heavily tied or adversarial data) is sorted in place through the
/// indices, which needs no memory but reads the keys at random.
const LOCAL_MAX: usize = 1 << 15;
/// Work units (runs of consecutive buckets) per phase.
const UNITS: usize = 16;

#[cfg(not(test))]
#[inline]
fn local_max() -> usize {
    LOCAL_MAX
}

/// Tests lower the local-sort limit to exercise the in-place path on small data
/// (any limit gives the same counts).
#[cfg(test)]
static TEST_LOCAL_MAX: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(LOCAL_MAX);

#[cfg(test)]
fn local_max() -> usize {
    TEST_LOCAL_MAX.load(std::sync::atomic::Ordering::Relaxed)
}

/// Tests force the streamed, order-exact moment sums (which otherwise only run
/// for tie groups of hundreds of thousands of values).
#[cfg(test)]
static TEST_FORCE_ORDERED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

#[cfg(test)]
fn exact_allowed() -> bool {
    !TEST_FORCE_ORDERED.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(not(test))]
#[inline]
fn exact_allowed() -> bool {
    true
}

/// Compute [`KendallCounts`] for paired samples `x`, `y`.
///
/// Equal values (by [`Score::key`], so `-0.0 == 0.0`) are ties; `±inf` are
/// ordinary values. NaN is rejected (SciPy's `nan_policy` is handled before the
/// counts are taken), as are samples of different lengths.
pub fn kendall_counts<X: Score, Y: Score>(
    x: ArrayView1<'_, X>,
    y: ArrayView1<'_, Y>,
    par: Parallelism,
) -> Result<KendallCounts> {
    let n = x.len();
    if y.len() != n {
        return Err(MetricError::shape(
            "Array shapes are incompatible for broadcasting.",
        ));
    }
    if u32::try_from(n).is_err() {
        return Err(MetricError::value(format!(
            "kendalltau supports at most {} observations, got {n}",
            u32::MAX
        )));
    }
    if x.iter().any(|v| v.is_nan()) || y.iter().any(|v| v.is_nan()) {
        return Err(MetricError::value("The input contains nan values"));
    }
    let parallel = par.is_parallel_for(n);
    let run = || {
        if n < U24::LIMIT {
            counts_for::<U24, X, Y>(&x, &y, parallel)
        } else {
            counts_for::<u32, X, Y>(&x, &y, parallel)
        }
    };
    if parallel {
        par.install(run)
    } else {
        Ok(run())
    }
}

/// [`counts_unchecked`] with index type `I`, reading contiguous inputs as slices.
fn counts_for<I: Index, X: Score, Y: Score>(
    x: &ArrayView1<'_, X>,
    y: &ArrayView1<'_, Y>,
    parallel: bool,
) -> KendallCounts {
    let n = x.len();
    match (x.as_slice(), y.as_slice()) {
        (Some(xs), Some(ys)) => counts_unchecked::<I, _, _, _>(
            n,
            |i| xs[i].key(),
            |i| ys[i].key(),
            prefetcher(x, y),
            parallel,
        ),
        (Some(xs), None) => counts_unchecked::<I, _, _, _>(
            n,
            |i| xs[i].key(),
            |i| y[i].key(),
            prefetcher(x, y),
            parallel,
        ),
        (None, Some(ys)) => counts_unchecked::<I, _, _, _>(
            n,
            |i| x[i].key(),
            |i| ys[i].key(),
            prefetcher(x, y),
            parallel,
        ),
        (None, None) => counts_unchecked::<I, _, _, _>(
            n,
            |i| x[i].key(),
            |i| y[i].key(),
            prefetcher(x, y),
            parallel,
        ),
    }
}

/// Hint that element `i` of `x` and of `y` will be read soon. The buckets list
/// indices scattered over the whole input, so gathering their values is a chain
/// of cache misses; prefetching a few elements ahead overlaps them.
fn prefetcher<X, Y>(
    x: &ArrayView1<'_, X>,
    y: &ArrayView1<'_, Y>,
) -> impl Fn(usize) + Sync + use<X, Y> {
    let (px, sx) = (
        x.as_ptr() as usize,
        x.strides().first().copied().unwrap_or(0),
    );
    let (py, sy) = (
        y.as_ptr() as usize,
        y.strides().first().copied().unwrap_or(0),
    );
    let (bx, by) = (size_of::<X>() as isize, size_of::<Y>() as isize);
    move |i: usize| {
        let i = i as isize;
        prefetch(px.wrapping_add_signed(i.wrapping_mul(sx).wrapping_mul(bx)));
        prefetch(py.wrapping_add_signed(i.wrapping_mul(sy).wrapping_mul(by)));
    }
}

#[inline(always)]
fn prefetch(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of the x86_64 baseline, and a prefetch is only a hint:
        // it never faults and never reads memory visibly, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(addr as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

fn map_units<I: Index, R: Send, F>(units: Vec<Unit<'_, I>>, parallel: bool, f: F) -> Vec<R>
where
    F: Fn(Unit<'_, I>) -> R + Sync + Send,
{
    if parallel {
        map_in_pool(units, f)
    } else {
        units.into_iter().map(f).collect()
    }
}

/// The counts with one index array of length n (`I`: `u32`, or 3 bytes below
/// 2**24 elements) as the only large buffer.
///
/// Discordant pairs are the strict inversions of the `y` values listed in `(x, y)`
/// order. Both variables are cut into buckets by sampled splitters. x phase: the
/// indices are grouped by x bucket and each bucket is sorted by `(x, y)`; walking
/// that order gives the x ties, the joint ties, and the inversions *between* y
/// buckets (a Fenwick tree over the few thousand bucket numbers per unit, plus the
/// unit-to-unit pairs from the bucket histograms). y phase (same buffer): the
/// indices are grouped by y bucket; inside each bucket the values are put in
/// `(x, y)` order and merge-sorted by `y`, which counts the inversions *inside*
/// buckets and leaves the y ties. Everything is an exact integer (or an
/// order-independent exact float sum), so the thread count cannot change a result.
fn counts_unchecked<I, KX, KY, PF>(
    n: usize,
    kx: KX,
    ky: KY,
    pf: PF,
    parallel: bool,
) -> KendallCounts
where
    I: Index,
    KX: Fn(usize) -> u64 + Sync,
    KY: Fn(usize) -> u64 + Sync,
    PF: Fn(usize) + Sync,
{
    let spx = Splitters::sample(n, &kx);
    let spy = Splitters::sample(n, &ky);
    let mut idx = vec![I::default(); n];

    // x phase.
    let starts = scatter(&mut idx, &kx, &spx, parallel);
    let xs = map_units(units(&mut idx, &starts), parallel, |u| {
        x_unit(u, &kx, &ky, &pf, &spy)
    });
    let nby = spy.n_buckets();
    let mut xties = Ties::default();
    let mut ntie = 0u64;
    let mut dis = 0u64;
    // Elements of earlier units per y bucket; pairs (earlier in a higher bucket,
    // later in a lower one) are discordant.
    let mut before = vec![0u64; nby];
    for u in &xs {
        xties.merge(&u.ties);
        ntie += u.ntie;
        dis += u.inv;
        let mut above = 0u64;
        for b in (0..nby).rev() {
            dis += u64::from(u.hist[b]) * above;
            above += before[b];
        }
        for (c, &h) in before.iter_mut().zip(u.hist.iter()) {
            *c += u64::from(h);
        }
    }
    drop(xs);
    let (x0, x1) = xties
        .exact_moments()
        .filter(|_| exact_allowed())
        .unwrap_or_else(|| ordered_moments(&mut idx, &starts, &kx, xties.multi));

    // y phase, reusing the index buffer.
    let starts = scatter(&mut idx, &ky, &spy, parallel);
    let ys = map_units(units(&mut idx, &starts), parallel, |u| {
        y_unit(u, &kx, &ky, &pf)
    });
    let mut yties = Ties::default();
    for u in &ys {
        yties.merge(&u.ties);
        dis += u.inv;
    }
    let (y0, y1) = yties
        .exact_moments()
        .filter(|_| exact_allowed())
        .unwrap_or_else(|| ordered_moments(&mut idx, &starts, &ky, yties.multi));

    KendallCounts {
        n: n as u64,
        dis,
        ntie,
        xtie: xties.pairs,
        ytie: yties.pairs,
        x0,
        x1,
        y0,
        y1,
        x_unique: xties.groups,
        y_unique: yties.groups,
    }
}
