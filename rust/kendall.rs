//! Kendall's tau with SciPy's semantics: the pair counts behind
//! `scipy.stats.kendalltau` (SciPy 1.17.1), in O(n log n).
//!
//! SciPy computes the statistic and the p-value from a handful of integers
//! (discordant pairs, joint/x/y tied pairs) and four float64 tie moments. This
//! module computes exactly those numbers; the Python layer
//! (`toxeval.metrics._kendall`) then evaluates SciPy's formulas with the same
//! Python-int / float64 arithmetic, so the results agree to the last bit.
//!
//! Algorithm: dense-rank `y` by sorting `(key(y), key(x))` by `y`; list the pairs
//! `(key(x), rank(y))` in increasing `y` order and sort them stably by `x`
//! (LSD radix sorts), which orders them by `(x, y)`; count x ties, joint ties and the
//! moments from the runs of that order; the discordant pairs are the strict
//! inversions of the rank sequence (counted with a Fenwick tree). Within a run of
//! tied `x` the `y` ranks are ascending, so x-tied pairs are never counted,
//! and y-tied pairs are not inversions. Both sorts and the inversion count use
//! the thread pool; every count is an integer or a sequential float sum, so results
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

/// An order key with a payload carried along by the sort.
type Keyed<P> = (u64, P);

/// Stable LSD radix sort of `v` by key (8-bit digits; digits on which all keys
/// agree are skipped, so few distinct or clustered values take few passes).
/// `scratch` has the same length; the result is in `v`.
fn radix_sort<P: Copy>(v: &mut [Keyed<P>], scratch: &mut [Keyed<P>]) {
    let n = v.len();
    let mut hist = [[0usize; 256]; 8];
    for &(k, _) in v.iter() {
        for (d, h) in hist.iter_mut().enumerate() {
            h[((k >> (8 * d)) & 0xff) as usize] += 1;
        }
    }
    let mut in_scratch = false;
    for (d, h) in hist.iter().enumerate() {
        if h.contains(&n) {
            continue;
        }
        let mut offs = [0usize; 256];
        let mut acc = 0usize;
        for (o, &c) in offs.iter_mut().zip(h.iter()) {
            *o = acc;
            acc += c;
        }
        let (src, dst): (&[Keyed<P>], &mut [Keyed<P>]) = if in_scratch {
            (&*scratch, &mut *v)
        } else {
            (&*v, &mut *scratch)
        };
        for &item in src {
            let b = ((item.0 >> (8 * d)) & 0xff) as usize;
            dst[offs[b]] = item;
            offs[b] += 1;
        }
        in_scratch = !in_scratch;
    }
    if in_scratch {
        v.copy_from_slice(scratch);
    }
}

/// Stable sort of `v` by key. In parallel: both halves are radix-sorted
/// concurrently, then merged (left first on equal keys, which keeps stability).
fn stable_sort_by_key<P: Copy + Default + Send + Sync>(v: &mut [Keyed<P>], parallel: bool) {
    let n = v.len();
    let mut scratch = vec![(0u64, P::default()); n];
    if !parallel || n < PAR_MIN {
        radix_sort(v, &mut scratch);
        return;
    }
    let mid = n / 2;
    {
        let (vl, vr) = v.split_at_mut(mid);
        let (sl, sr) = scratch.split_at_mut(mid);
        rayon::join(|| radix_sort(vl, sl), || radix_sort(vr, sr));
    }
    let (left, right) = v.split_at(mid);
    let (mut i, mut j) = (0usize, 0usize);
    for out in scratch.iter_mut() {
        let take_left = j == right.len() || (i < left.len() && left[i].0 <= right[j].0);
        if take_left {
            *out = left[i];
            i += 1;
        } else {
            *out = right[j];
            j += 1;
        }
    }
    v.copy_from_slice(&scratch);
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
    let keys = |i: usize| (y[i].key(), x[i].key());
    // Sort (key(y), key(x)) by y and number the runs: dense ranks of y.
    let mut by_y: Vec<Keyed<u64>> = if parallel {
        (0..n).into_par_iter().map(keys).collect()
    } else {
        (0..n).map(keys).collect()
    };
    stable_sort_by_key(&mut by_y, parallel);
    // (key(x), rank(y)) in increasing y order; a stable sort by key(x) then
    // orders them by (x, y).
    let mut by_x: Vec<Keyed<u32>> = Vec::with_capacity(n);
    let mut y_groups = Vec::new();
    let mut rank = 0u32;
    let mut start = 0usize;
    for i in 0..n {
        if i > 0 && by_y[i].0 != by_y[i - 1].0 {
            y_groups.push((i - start) as u64);
            start = i;
            rank += 1;
        }
        by_x.push((by_y[i].1, rank));
    }
    if n > 0 {
        y_groups.push((n - start) as u64);
    }
    drop(by_y);
    stable_sort_by_key(&mut by_x, parallel);

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

    let seq: Vec<u32> = by_x.iter().map(|&(_, r)| r).collect();
    drop(by_x);
    let dis = count_inversions(&seq, y_groups.len(), parallel);

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

/// Fenwick tree of counts over ranks `0..m`.
struct Fenwick {
    tree: Vec<u32>,
}

impl Fenwick {
    fn new(m: usize) -> Self {
        Fenwick {
            tree: vec![0; m + 1],
        }
    }

    fn add(&mut self, rank: u32) {
        let mut k = rank as usize + 1;
        while k < self.tree.len() {
            self.tree[k] += 1;
            k += k & k.wrapping_neg();
        }
    }

    /// Number of added ranks `<= rank`.
    fn count_le(&self, rank: u32) -> u64 {
        let mut k = (rank as usize + 1).min(self.tree.len() - 1);
        let mut s = 0u64;
        while k > 0 {
            s += u64::from(self.tree[k]);
            k &= k - 1;
        }
        s
    }
}

/// Inversions of `seq` with a Fenwick tree; returns the count and the tree
/// holding all of `seq`.
fn fenwick_inversions(seq: &[u32], m: usize) -> (u64, Fenwick) {
    let mut f = Fenwick::new(m);
    let mut inv = 0u64;
    for (i, &r) in seq.iter().enumerate() {
        inv += i as u64 - f.count_le(r);
        f.add(r);
    }
    (inv, f)
}

/// Number of pairs `i < j` with `seq[i] > seq[j]` (strict: equal values are not
/// inversions), for values in `0..m`. O(n log m) with a Fenwick tree, like
/// SciPy's `_kendall_dis`.
///
/// In parallel the sequence is cut in two halves: each half's own inversions
/// are counted concurrently, then the cross pairs (left value > right value)
/// are counted against the left half's finished tree, the right half split
/// between the two threads. Exact integer counts: the result is the same for
/// any thread count.
pub fn count_inversions(seq: &[u32], m: usize, parallel: bool) -> u64 {
    if !parallel || seq.len() < PAR_MIN {
        return fenwick_inversions(seq, m).0;
    }
    let (left, right) = seq.split_at(seq.len() / 2);
    let ((inv_l, tree_l), (inv_r, _)) = rayon::join(
        || fenwick_inversions(left, m),
        || fenwick_inversions(right, m),
    );
    let n_left = left.len() as u64;
    let cross = |part: &[u32]| -> u64 {
        part.iter()
            .map(|&r| n_left - tree_l.count_le(r))
            .sum::<u64>()
    };
    let (r1, r2) = right.split_at(right.len() / 2);
    let (c1, c2) = rayon::join(|| cross(r1), || cross(r2));
    inv_l + inv_r + c1 + c2
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
    fn inversions_parallel_equals_sequential_and_brute() {
        let mut rng = StdRng::seed_from_u64(3);
        for m in [1u32, 3, 1000, 200_000] {
            let v: Vec<u32> = (0..200_000).map(|_| rng.random_range(0..m)).collect();
            let a = count_inversions(&v, m as usize, false);
            let b = Parallelism { threads: 2 }
                .install(|| count_inversions(&v, m as usize, true))
                .unwrap();
            assert_eq!(a, b);
        }
        for n in 0..40 {
            let v: Vec<u32> = (0..n).map(|_| rng.random_range(0..5)).collect();
            let brute = (0..v.len())
                .flat_map(|i| (i + 1..v.len()).map(move |j| (i, j)))
                .filter(|&(i, j)| v[i] > v[j])
                .count() as u64;
            assert_eq!(count_inversions(&v, 5, false), brute);
        }
    }

    #[test]
    fn parallel_counts_equal_sequential() {
        let mut rng = StdRng::seed_from_u64(9);
        for k in [2i64, 50, 1 << 40] {
            let n = 150_000;
            let x = Array1::from_iter((0..n).map(|_| rng.random_range(0..k)));
            let y = Array1::from_iter((0..n).map(|_| rng.random_range(0..k) as f32 * 0.5));
            let a = kendall_counts(x.view(), y.view(), Parallelism::sequential()).unwrap();
            let b = kendall_counts(x.view(), y.view(), Parallelism { threads: 2 }).unwrap();
            assert_eq!(a, b);
        }
    }

    #[test]
    fn radix_sort_is_stable_and_sorted() {
        let mut rng = StdRng::seed_from_u64(5);
        for (k, n) in [
            (1u64, 5000u32),
            (7, 70_000),
            (1 << 20, 70_000),
            (u64::MAX, 5000),
        ] {
            let mut v: Vec<Keyed<u32>> = (0..n)
                .map(|i| {
                    (
                        rng.random_range(0..=k.saturating_sub(1))
                            .wrapping_mul(0x9E37),
                        i,
                    )
                })
                .collect();
            let mut expected = v.clone();
            expected.sort_by_key(|e| e.0); // std's stable sort
            for parallel in [false, true] {
                let mut w = v.clone();
                Parallelism { threads: 2 }
                    .install(|| stable_sort_by_key(&mut w, parallel))
                    .unwrap();
                assert_eq!(w, expected);
            }
            let mut scratch = vec![(0, 0); v.len()];
            radix_sort(&mut v, &mut scratch);
            assert_eq!(v, expected);
        }
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
