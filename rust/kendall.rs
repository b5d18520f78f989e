//! Kendall's tau with SciPy's semantics: the pair counts behind
//! `scipy.stats.kendalltau` (SciPy 1.17.1), in O(n log n).
//!
//! SciPy computes the statistic and the p-value from a handful of integers
//! (discordant pairs, joint/x/y tied pairs) and four float64 tie moments. This
//! module computes exactly those numbers; the Python layer
//! (`toxeval.metrics._kendall`) then evaluates SciPy's formulas with the same
//! Python-int / float64 arithmetic, so the results agree to the last bit.
//!
//! Algorithm: dense-rank `y` by sorting `(key(y), index)`; sort the pairs
//! `(key(x), rank(y))` lexicographically; count x ties, joint ties and the
//! moments from the runs of that order; the discordant pairs are the strict
//! inversions of the rank sequence (counted by a merge sort). Within a run of
//! tied `x` the `y` ranks are ascending, so x-tied pairs are never counted,
//! and y-tied pairs are not inversions. Both sorts and the merge sort use the
//! thread pool; every count is an integer or a sequential float sum, so results
//! do not depend on the thread count.

use ndarray::ArrayView1;
use rayon::prelude::*;

use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::score::Score;

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

/// Below this many elements the sorts and the merge sort stay sequential.
const PAR_MIN: usize = 1 << 15;
/// Runs shorter than this are sorted by insertion.
const INSERTION_MAX: usize = 24;

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
    let run = || counts_unchecked(x, y, par.is_parallel_for(n));
    if par.is_parallel_for(n) {
        par.install(run)
    } else {
        Ok(run())
    }
}

fn sort_pairs(v: &mut [(u64, u64)], parallel: bool) {
    if parallel {
        v.par_sort_unstable();
    } else {
        v.sort_unstable();
    }
}

/// Tie statistics of one variable, from its group sizes in value order.
struct TieStats {
    pairs: u64,
    m0: f64,
    m1: f64,
}

fn tie_stats(groups: &[u64]) -> TieStats {
    let mut pairs = 0u64;
    let mut t0 = Vec::new();
    let mut t1 = Vec::new();
    for &t in groups.iter().filter(|&&t| t > 1) {
        pairs += t * (t - 1) / 2;
        // NumPy: int64 `cnt` times float64 `(cnt - 1.)`, times int64 converted.
        let tf = t as f64;
        let c2 = (t - 2) as f64;
        let c5 = (2 * t + 5) as f64;
        t0.push(tf * (tf - 1.0) * c2);
        t1.push(tf * (tf - 1.0) * c5);
    }
    TieStats {
        pairs,
        m0: numpy_sum(&t0),
        m1: numpy_sum(&t1),
    }
}

fn counts_unchecked<X: Score, Y: Score>(
    x: ArrayView1<'_, X>,
    y: ArrayView1<'_, Y>,
    parallel: bool,
) -> KendallCounts {
    let n = x.len();
    // Dense ranks of y: sort (key, index), then number the runs.
    let mut by_y: Vec<(u64, u64)> = if parallel {
        (0..n)
            .into_par_iter()
            .map(|i| (y[i].key(), i as u64))
            .collect()
    } else {
        y.iter()
            .enumerate()
            .map(|(i, v)| (v.key(), i as u64))
            .collect()
    };
    sort_pairs(&mut by_y, parallel);
    let mut rank_y = vec![0u64; n];
    let mut y_groups = Vec::new();
    let mut rank = 0u64;
    let mut start = 0usize;
    for i in 0..n {
        if i > 0 && by_y[i].0 != by_y[i - 1].0 {
            y_groups.push((i - start) as u64);
            start = i;
            rank += 1;
        }
        // by_y[i].1 < n by construction.
        rank_y[by_y[i].1 as usize] = rank;
    }
    if n > 0 {
        y_groups.push((n - start) as u64);
    }
    drop(by_y);

    // Sort (key(x), rank(y)) lexicographically.
    let mut by_x: Vec<(u64, u64)> = if parallel {
        (0..n)
            .into_par_iter()
            .map(|i| (x[i].key(), rank_y[i]))
            .collect()
    } else {
        x.iter()
            .zip(rank_y.iter())
            .map(|(v, &r)| (v.key(), r))
            .collect()
    };
    drop(rank_y);
    sort_pairs(&mut by_x, parallel);

    let mut x_groups = Vec::new();
    let mut ntie = 0u64;
    let mut x_start = 0usize;
    let mut j_start = 0usize;
    for i in 1..=n {
        let new_x = i == n || by_x[i].0 != by_x[i - 1].0;
        if new_x || by_x[i].1 != by_x[i - 1].1 {
            let t = (i - j_start) as u64;
            ntie += t * (t - 1) / 2;
            j_start = i;
        }
        if new_x {
            x_groups.push((i - x_start) as u64);
            x_start = i;
        }
    }

    // u32 is enough: ranks are < n < 2^32 (checked by the caller).
    let mut seq: Vec<u32> = by_x.iter().map(|&(_, r)| r as u32).collect();
    drop(by_x);
    let mut buf = vec![0u32; n];
    let dis = sort_count_inversions(&mut seq, &mut buf, parallel);

    let xs = tie_stats(&x_groups);
    let ys = tie_stats(&y_groups);
    KendallCounts {
        n: n as u64,
        dis,
        ntie,
        xtie: xs.pairs,
        ytie: ys.pairs,
        x0: xs.m0,
        x1: xs.m1,
        y0: ys.m0,
        y1: ys.m1,
        x_unique: x_groups.len() as u64,
        y_unique: y_groups.len() as u64,
    }
}

/// Sort `v` ascending and return the number of pairs `i < j` with `v[i] > v[j]`
/// (strict: equal values are not inversions). `buf` is scratch of the same length.
pub fn sort_count_inversions(v: &mut [u32], buf: &mut [u32], parallel: bool) -> u64 {
    let n = v.len();
    if n <= INSERTION_MAX {
        let mut inv = 0u64;
        for i in 1..n {
            let cur = v[i];
            let mut j = i;
            while j > 0 && v[j - 1] > cur {
                v[j] = v[j - 1];
                j -= 1;
            }
            inv += (i - j) as u64;
            v[j] = cur;
        }
        return inv;
    }
    let mid = n / 2;
    let (left, right) = v.split_at_mut(mid);
    let (bl, br) = buf.split_at_mut(mid);
    let (a, b) = if parallel && n >= PAR_MIN {
        rayon::join(
            || sort_count_inversions(left, bl, true),
            || sort_count_inversions(right, br, true),
        )
    } else {
        (
            sort_count_inversions(left, bl, false),
            sort_count_inversions(right, br, false),
        )
    };
    if left[mid - 1] <= right[0] {
        return a + b;
    }
    let mut inv = 0u64;
    let (mut i, mut j, mut k) = (0usize, 0usize, 0usize);
    while i < left.len() && j < right.len() {
        if left[i] <= right[j] {
            buf[k] = left[i];
            i += 1;
        } else {
            buf[k] = right[j];
            j += 1;
            inv += (left.len() - i) as u64;
        }
        k += 1;
    }
    buf[k..k + left.len() - i].copy_from_slice(&left[i..]);
    k += left.len() - i;
    buf[k..].copy_from_slice(&right[j..]);
    v.copy_from_slice(buf);
    a + b + inv
}

/// `np.sum` of a contiguous float64 array: NumPy's pairwise summation
/// (blocks of 128 with eight accumulators, unrolled by 8, halves split at a
/// multiple of 8).
pub fn numpy_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        // NumPy starts the reduction at the identity and adds each element.
        let mut r = 0.0;
        for &v in a {
            r += v;
        }
        r
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - (n % 8) {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &a[i..] {
            res += v;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        numpy_sum(&a[..n2]) + numpy_sum(&a[n2..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr1, Array1};
    use rand::{rngs::StdRng, Rng, SeedableRng};

    fn brute(x: &[f64], y: &[f64]) -> (u64, u64, u64, u64) {
        let (mut dis, mut ntie, mut xtie, mut ytie) = (0, 0, 0, 0);
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                let dx = x[i].partial_cmp(&x[j]).unwrap();
                let dy = y[i].partial_cmp(&y[j]).unwrap();
                use std::cmp::Ordering::*;
                match (dx, dy) {
                    (Equal, Equal) => {
                        ntie += 1;
                        xtie += 1;
                        ytie += 1
                    }
                    (Equal, _) => xtie += 1,
                    (_, Equal) => ytie += 1,
                    (a, b) if a != b => dis += 1,
                    _ => {}
                }
            }
        }
        (dis, ntie, xtie, ytie)
    }

    #[test]
    fn matches_brute_force() {
        let mut rng = StdRng::seed_from_u64(7);
        for trial in 0..300 {
            let n = rng.random_range(0..80);
            let k = if trial % 3 == 0 { 3 } else { 1000 };
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(0..k) as f64).collect();
            let y: Vec<f64> = (0..n)
                .map(|_| rng.random_range(0..k) as f64 - 1.5)
                .collect();
            for threads in [1, 2] {
                let par = Parallelism { threads };
                let c = kendall_counts(arr1(&x).view(), arr1(&y).view(), par).unwrap();
                let (dis, ntie, xtie, ytie) = brute(&x, &y);
                assert_eq!((c.dis, c.ntie, c.xtie, c.ytie), (dis, ntie, xtie, ytie));
            }
        }
    }

    #[test]
    fn zeros_tie_and_infinities_order() {
        let x = arr1(&[-0.0f64, 0.0, f64::INFINITY, -f64::INFINITY]);
        let y = arr1(&[1i64, 2, 3, 0]);
        let c = kendall_counts(x.view(), y.view(), Parallelism::sequential()).unwrap();
        assert_eq!((c.xtie, c.dis, c.x_unique, c.y_unique), (1, 0, 3, 4));
    }

    #[test]
    fn errors() {
        let x = arr1(&[1.0f64, f64::NAN]);
        let y = arr1(&[1.0f32, 2.0]);
        assert!(kendall_counts(x.view(), y.view(), Parallelism::sequential()).is_err());
        let y3 = arr1(&[1.0f32, 2.0, 3.0]);
        let x2 = arr1(&[1.0f64, 2.0]);
        assert_eq!(
            kendall_counts(x2.view(), y3.view(), Parallelism::sequential()).unwrap_err(),
            MetricError::shape("Array shapes are incompatible for broadcasting.")
        );
    }

    #[test]
    fn strided_view() {
        let a = Array1::from_iter((0..20).map(|v| v as f64));
        let x = a.slice(ndarray::s![..;2]);
        let y = a.slice(ndarray::s![..;-2]);
        let c = kendall_counts(x, y, Parallelism::sequential()).unwrap();
        assert_eq!(c.dis, 45);
    }

    #[test]
    fn inversions_parallel_equals_sequential() {
        let mut rng = StdRng::seed_from_u64(3);
        let v: Vec<u32> = (0..200_000).map(|_| rng.random_range(0..1000)).collect();
        let mut a = v.clone();
        let mut b = v.clone();
        let mut buf = vec![0; v.len()];
        let ia = sort_count_inversions(&mut a, &mut buf, false);
        let ib = Parallelism { threads: 2 }
            .install(|| sort_count_inversions(&mut b, &mut buf, true))
            .unwrap();
        assert_eq!(ia, ib);
        assert_eq!(a, b);
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn numpy_sum_small_exact() {
        assert_eq!(numpy_sum(&[]), 0.0);
        let v: Vec<f64> = (1..=1000).map(f64::from).collect();
        assert_eq!(numpy_sum(&v), 500_500.0);
    }

    /// One huge tie block: pair counts near 10^13 and moments near 10^21 must not
    /// overflow, and the closed forms must hold.
    #[test]
    fn large_tie_block_no_overflow() {
        // 10^7 in release; debug builds (plain `cargo test`) use a smaller n.
        let n = if cfg!(debug_assertions) {
            2_000_000
        } else {
            10_000_000usize
        };
        let x = Array1::from_iter((0..n).map(|i| if i < n / 2 { 0i64 } else { i as i64 }));
        let y = Array1::from_iter((0..n).map(|i| (n - i) as f64));
        let c = kendall_counts(x.view(), y.view(), Parallelism { threads: 2 }).unwrap();
        let t = (n / 2) as u64;
        let nn = n as u64;
        assert_eq!(c.xtie, t * (t - 1) / 2);
        assert_eq!(c.ytie, 0);
        assert_eq!(c.ntie, 0);
        // All pairs not tied in x are discordant.
        assert_eq!(c.dis, nn * (nn - 1) / 2 - c.xtie);
        let tf = t as f64;
        assert_eq!(c.x0, tf * (tf - 1.0) * (tf - 2.0));
        assert_eq!(c.x_unique, nn - t + 1);
    }
}
