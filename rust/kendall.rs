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

/// An element of the index buffer, the only buffer as long as the input.
trait Index: Copy + Default + Send + Sync + 'static {
    /// Largest input length the type can index.
    const LIMIT: usize;
    fn new(i: usize) -> Self;
    fn get(self) -> usize;
}

impl Index for u32 {
    const LIMIT: usize = u32::MAX as usize;
    #[inline(always)]
    fn new(i: usize) -> Self {
        i as u32
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

/// A 3-byte index (inputs below 2**24 elements): the buffer is then 3 bytes per
/// element, which keeps two float32 inputs' call within 0.5x of their size (a
/// `u32` buffer alone is exactly that).
#[derive(Clone, Copy, Default)]
struct U24([u8; 3]);

impl Index for U24 {
    const LIMIT: usize = 1 << 24;
    #[inline(always)]
    fn new(i: usize) -> Self {
        let b = (i as u32).to_le_bytes();
        U24([b[0], b[1], b[2]])
    }
    #[inline(always)]
    fn get(self) -> usize {
        let [a, b, c] = self.0;
        u32::from_le_bytes([a, b, c, 0]) as usize
    }
}

/// How far ahead the gathers prefetch.
const PREFETCH_AHEAD: usize = 16;

/// `(key(x), key(y))` of the indices in `seg`, into `out`.
#[inline]
fn gather<I: Index>(
    seg: &[I],
    kx: &impl Fn(usize) -> u64,
    ky: &impl Fn(usize) -> u64,
    pf: &impl Fn(usize),
    out: &mut Vec<(u64, u64)>,
) {
    out.clear();
    for &i in seg.iter().take(PREFETCH_AHEAD) {
        pf(i.get());
    }
    for (t, &i) in seg.iter().enumerate() {
        if let Some(&j) = seg.get(t + PREFETCH_AHEAD) {
            pf(j.get());
        }
        out.push((kx(i.get()), ky(i.get())));
    }
}

/// Bucket boundaries of one variable: a sorted set of distinct sample keys.
/// Bucket `2j` holds the keys strictly between splitters `j - 1` and `j`, bucket
/// `2j + 1` the keys equal to splitter `j`; bucket order is key order, and equal
/// keys always share a bucket (so no tie group straddles two buckets, and a
/// heavily repeated value gets a bucket of its own).
///
/// Finding a key's bucket is the inner loop of both phases, so a table over
/// `CELLS` equal slices of the key range `[s[0], s[last]]` gives, per slice, the
/// few splitters that can follow a key of that slice; the binary search then runs
/// over those only.
struct Splitters {
    s: Vec<u64>,
    lo: u64,
    shift: u32,
    /// `table[c]` = number of splitters below the first key of cell `c`;
    /// `table[CELLS] = s.len()`.
    table: Vec<u32>,
}

/// Cells of the bucket lookup table.
const CELLS: usize = 1 << 12;

impl Splitters {
    /// Splitters from `OVERSAMPLE` evenly spaced keys per wanted splitter. The
    /// choice only affects speed: every count is exact for any splitters.
    fn sample(n: usize, key: &(impl Fn(usize) -> u64 + Sync)) -> Self {
        let want = (n / BUCKET_TARGET).min(MAX_SPLITTERS);
        let mut sp = Vec::new();
        if want > 0 {
            let m = (want * OVERSAMPLE).min(n);
            let step = n / m;
            let mut s: Vec<u64> = (0..m)
                .map(|j| key(j * step + (j.wrapping_mul(2_654_435_761) % step)))
                .collect();
            s.sort_unstable();
            sp = s
                .iter()
                .skip(OVERSAMPLE / 2)
                .step_by(OVERSAMPLE)
                .copied()
                .collect();
            sp.dedup();
        }
        Self::new(sp)
    }

    fn new(s: Vec<u64>) -> Self {
        let lo = s.first().copied().unwrap_or(0);
        let range = s.last().copied().unwrap_or(0) - lo;
        let mut shift = 0u32;
        while shift < 64 && (range >> shift) >= CELLS as u64 {
            shift += 1;
        }
        let mut table: Vec<u32> = (0..CELLS)
            .map(|c| {
                let start = lo.saturating_add((c as u64).checked_shl(shift).unwrap_or(u64::MAX));
                s.partition_point(|&v| v < start) as u32
            })
            .collect();
        table.push(s.len() as u32);
        Splitters {
            s,
            lo,
            shift,
            table,
        }
    }

    fn n_buckets(&self) -> usize {
        2 * self.s.len() + 1
    }

    #[inline]
    fn bucket(&self, k: u64) -> usize {
        let c = (k
            .saturating_sub(self.lo)
            .checked_shr(self.shift)
            .unwrap_or(0) as usize)
            .min(CELLS - 1);
        let a = self.table.get(c).copied().unwrap_or(0) as usize;
        let b = self.table.get(c + 1).copied().unwrap_or(0) as usize;
        let j = a + self
            .s
            .get(a..b)
            .map_or(0, |w| w.partition_point(|&v| v < k));
        2 * j + usize::from(self.s.get(j) == Some(&k))
    }
}

/// Contiguous index chunks for the histogram and scatter passes, one per thread
/// (the scatter's output is the same for any chunking: indices ascend within a
/// bucket), so that the per-chunk tables stay small.
fn index_chunks(n: usize, parallel: bool) -> Vec<std::ops::Range<usize>> {
    let c = if parallel && n >= PAR_MIN {
        rayon::current_num_threads().clamp(1, UNITS)
    } else {
        1
    };
    (0..c).map(|i| i * n / c..(i + 1) * n / c).collect()
}

/// Write the indices `0..n` into `out` grouped by bucket (buckets in order,
/// indices ascending within a bucket); returns the bucket start offsets
/// (`n_buckets + 1` entries). `out` must have length `n`.
fn scatter<I: Index>(
    out: &mut [I],
    key: &(impl Fn(usize) -> u64 + Sync),
    sp: &Splitters,
    parallel: bool,
) -> Vec<usize> {
    let n = out.len();
    let nb = sp.n_buckets();
    let chunks = index_chunks(n, parallel);
    let hist_of = |r: &std::ops::Range<usize>| {
        let mut h = vec![0usize; nb];
        for i in r.clone() {
            if let Some(c) = h.get_mut(sp.bucket(key(i))) {
                *c += 1;
            }
        }
        h
    };
    let hists: Vec<Vec<usize>> = if parallel {
        chunks.par_iter().map(hist_of).collect()
    } else {
        chunks.iter().map(hist_of).collect()
    };
    let mut starts = Vec::with_capacity(nb + 1);
    let mut acc = 0usize;
    for b in 0..nb {
        starts.push(acc);
        acc += hists.iter().map(|h| h[b]).sum::<usize>();
    }
    starts.push(acc);
    // Carve `out` into one slice per (chunk, bucket), bucket-major: each chunk then
    // fills its own slices, in parallel, without sharing a cursor.
    let mut per_chunk: Vec<Vec<&mut [I]>> =
        (0..chunks.len()).map(|_| Vec::with_capacity(nb)).collect();
    let mut rest: &mut [I] = out;
    for b in 0..nb {
        for (c, h) in hists.iter().enumerate() {
            let r = std::mem::take(&mut rest);
            let (head, tail) = r.split_at_mut(h[b].min(r.len()));
            per_chunk[c].push(head);
            rest = tail;
        }
    }
    let fill = |(r, mut slots): (std::ops::Range<usize>, Vec<&mut [I]>)| {
        let mut cur = vec![0usize; nb];
        for i in r {
            let b = sp.bucket(key(i));
            if let (Some(s), Some(c)) = (slots.get_mut(b), cur.get_mut(b)) {
                if let Some(o) = s.get_mut(*c) {
                    *o = I::new(i);
                }
                *c += 1;
            }
        }
    };
    let work: Vec<_> = chunks.into_iter().zip(per_chunk).collect();
    if parallel {
        work.into_par_iter().for_each(fill);
    } else {
        work.into_iter().for_each(fill);
    }
    starts
}

/// Consecutive buckets grouped into work units of about `n / UNITS` elements:
/// each unit is `(its slice of the bucketed indices, its buckets as
/// (bucket id, start, end) relative to the slice)`.
type Unit<'a, I> = (&'a mut [I], Vec<(usize, usize, usize)>);

fn units<'a, I: Index>(v: &'a mut [I], starts: &[usize]) -> Vec<Unit<'a, I>> {
    let n = v.len();
    let target = n.div_ceil(UNITS).max(1);
    let mut out = Vec::new();
    let mut rest: &mut [I] = v;
    let mut unit_start = 0usize;
    let mut buckets = Vec::new();
    for (b, w) in starts.windows(2).enumerate() {
        let (s, e) = (w[0], w[1]);
        if e > s {
            buckets.push((b, s - unit_start, e - unit_start));
        }
        let last = b + 2 == starts.len();
        if (e - unit_start >= target || last) && !buckets.is_empty() {
            let r = std::mem::take(&mut rest);
            let (head, tail) = r.split_at_mut((e - unit_start).min(r.len()));
            out.push((head, std::mem::take(&mut buckets)));
            rest = tail;
            unit_start = e;
        }
    }
    out
}

/// Tie statistics of one variable, accumulated exactly over its tie groups.
#[derive(Default, Clone, Copy)]
struct Ties {
    /// Tied pairs `Σ t(t-1)/2`.
    pairs: u64,
    /// Number of groups (distinct values).
    groups: u64,
    /// Number of groups with `t > 1`.
    multi: u64,
    /// Exact `Σ t(t-1)(t-2)` and `Σ t(t-1)(2t+5)`.
    m0: u128,
    m1: u128,
}

impl Ties {
    #[inline]
    fn add(&mut self, t: u64) {
        self.groups += 1;
        if t > 1 {
            let w = u128::from(t);
            self.pairs += t * (t - 1) / 2;
            self.multi += 1;
            self.m0 += w * (w - 1) * (w - 2);
            self.m1 += w * (w - 1) * (2 * w + 5);
        }
    }

    fn merge(&mut self, o: &Ties) {
        self.pairs += o.pairs;
        self.groups += o.groups;
        self.multi += o.multi;
        self.m0 += o.m0;
        self.m1 += o.m1;
    }

    /// The float64 moments as NumPy sums them, when that sum is exact: every term
    /// and every partial sum is an integer of at most 2^53, so any summation order
    /// gives the exact total. `None` when the order matters.
    fn exact_moments(&self) -> Option<(f64, f64)> {
        const EXACT: u128 = 1 << 53;
        (self.m0 <= EXACT && self.m1 <= EXACT).then_some((self.m0 as f64, self.m1 as f64))
    }
}

/// NumPy's elementwise terms `cnt * (cnt - 1.) * (cnt - 2)` and
/// `cnt * (cnt - 1.) * (2*cnt + 5)` (int64 `cnt` times float64).
fn moment_terms(t: u64) -> (f64, f64) {
    let tf = t as f64;
    let c2 = (t - 2) as f64;
    let c5 = (2 * t + 5) as f64;
    (tf * (tf - 1.0) * c2, tf * (tf - 1.0) * c5)
}

/// The moments in NumPy's order from the group sizes of `seq` (indices sorted by
/// `key` within each bucket): only needed when [`Ties::exact_moments`] is `None`, i.e. with tie groups
/// of hundreds of thousands of values. Streams the terms (no buffer).
fn ordered_moments<I: Index>(
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
    let m0 = numpy_sum_stream(len, &mut || g0.next().unwrap_or(0.0));
    let mut g1 = groups().map(|t| moment_terms(t).1);
    let m1 = numpy_sum_stream(len, &mut || g1.next().unwrap_or(0.0));
    (m0, m1)
}

/// Stable merge sort of `v` by `key`; returns the number of strict inversions
/// (pairs `i < j` with `key(v[i]) > key(v[j])`). Needs `buf` for half of `v`.
fn merge_count<T: Copy, K: Ord>(v: &mut [T], buf: &mut Vec<T>, key: &impl Fn(&T) -> K) -> u64 {
    let n = v.len();
    if n <= 16 {
        let mut inv = 0u64;
        for i in 1..n {
            let x = v[i];
            let kx = key(&x);
            let mut j = i;
            while j > 0 && key(&v[j - 1]) > kx {
                v[j] = v[j - 1];
                j -= 1;
            }
            inv += (i - j) as u64;
            v[j] = x;
        }
        return inv;
    }
    let mid = n / 2;
    let mut inv = merge_count(&mut v[..mid], buf, key) + merge_count(&mut v[mid..], buf, key);
    if key(&v[mid - 1]) <= key(&v[mid]) {
        return inv;
    }
    buf.clear();
    buf.extend_from_slice(&v[..mid]);
    let (mut i, mut j, mut k) = (0usize, mid, 0usize);
    while i < buf.len() && j < n {
        if key(&buf[i]) <= key(&v[j]) {
            v[k] = buf[i];
            i += 1;
        } else {
            v[k] = v[j];
            j += 1;
            inv += (buf.len() - i) as u64;
        }
        k += 1;
    }
    let left = buf.len() - i;
    v[k..k + left].copy_from_slice(&buf[i..]);
    inv
}

/// What one unit of the x phase found.
struct XUnit {
    ties: Ties,
    /// Pairs tied in both variables.
    ntie: u64,
    /// Inversions of the y-bucket sequence inside the unit.
    inv: u64,
    /// Elements per y bucket.
    hist: Vec<u32>,
}

/// What one unit of the y phase found.
struct YUnit {
    ties: Ties,
    /// Discordant pairs whose two `y` share a bucket.
    inv: u64,
}

/// Sort pairs by `(first, second)`: by the first key, then each run of equal
/// first keys by the second (runs are rare, and one-key comparisons are cheaper).
fn sort_pairs(v: &mut [(u64, u64)]) {
    v.sort_unstable_by_key(|e| e.0);
    let mut i = 0;
    while i < v.len() {
        let k = v[i].0;
        let mut j = i + 1;
        while j < v.len() && v[j].0 == k {
            j += 1;
        }
        if j - i > 1 {
            v[i..j].sort_unstable_by_key(|e| e.1);
        }
        i = j;
    }
}

/// The walk of the x phase over `(key(x), key(y))` in increasing order.
struct XWalk<'a> {
    spy: &'a Splitters,
    prev: Option<(u64, u64)>,
    run_x: u64,
    run_xy: u64,
    seen: u64,
    fen: Vec<u32>,
    out: XUnit,
}

impl XWalk<'_> {
    #[inline]
    fn push(&mut self, a: u64, b: u64) {
        match self.prev {
            Some((px, py)) if px == a => {
                self.run_x += 1;
                if py == b {
                    self.run_xy += 1;
                } else {
                    self.out.ntie += self.run_xy * (self.run_xy - 1) / 2;
                    self.run_xy = 1;
                }
            }
            _ => {
                self.end_group();
                self.run_x = 1;
                self.run_xy = 1;
            }
        }
        self.prev = Some((a, b));
        let yb = self.spy.bucket(b);
        // Earlier elements of the unit in a higher y bucket: seen - #(<= yb).
        let mut k = yb + 1;
        let mut le = 0u64;
        while k > 0 {
            le += u64::from(self.fen.get(k).copied().unwrap_or(0));
            k &= k - 1;
        }
        self.out.inv += self.seen - le;
        let mut k = yb + 1;
        while let Some(f) = self.fen.get_mut(k) {
            *f += 1;
            k += k & k.wrapping_neg();
        }
        if let Some(h) = self.out.hist.get_mut(yb) {
            *h += 1;
        }
        self.seen += 1;
    }

    /// Close the current x group (at a new x value or the end of a bucket).
    fn end_group(&mut self) {
        if self.run_x > 0 {
            self.out.ties.add(self.run_x);
            self.out.ntie += self.run_xy * (self.run_xy - 1) / 2;
        }
        self.run_x = 0;
        self.run_xy = 0;
    }
}

/// Sort each x bucket of the unit by `(key(x), key(y))` (written back, so that
/// the unit's indices end in that order); count x ties and joint ties, and the
/// inversions of the y buckets along that order with a Fenwick tree over buckets.
fn x_unit<I: Index>(
    unit: Unit<'_, I>,
    kx: &impl Fn(usize) -> u64,
    ky: &impl Fn(usize) -> u64,
    pf: &impl Fn(usize),
    spy: &Splitters,
) -> XUnit {
    let (v, buckets) = unit;
    let nb = spy.n_buckets();
    let mut w = XWalk {
        spy,
        prev: None,
        run_x: 0,
        run_xy: 0,
        seen: 0,
        fen: vec![0u32; nb + 1],
        out: XUnit {
            ties: Ties::default(),
            ntie: 0,
            inv: 0,
            hist: vec![0u32; nb],
        },
    };
    let mut local: Vec<(u64, u64)> = Vec::new();
    for &(_, s, e) in &buckets {
        let Some(seg) = v.get_mut(s..e) else { continue };
        if seg.len() <= local_max() {
            local.clear();
            gather(seg, kx, ky, pf, &mut local);
            sort_pairs(&mut local);
            for &(a, b) in &local {
                w.push(a, b);
            }
        } else {
            seg.sort_unstable_by_key(|&i| (kx(i.get()), ky(i.get())));
            for &i in seg.iter() {
                w.push(kx(i.get()), ky(i.get()));
            }
        }
        // x groups never straddle buckets.
        w.end_group();
    }
    w.out
}

/// Sort each y bucket of the unit by `key(y)` (written back), count y ties and the
/// discordant pairs inside each bucket: the bucket is put in `(x, y)` order, then
/// merge-sorted by `y` counting strict inversions.
fn y_unit<I: Index>(
    unit: Unit<'_, I>,
    kx: &impl Fn(usize) -> u64,
    ky: &impl Fn(usize) -> u64,
    pf: &impl Fn(usize),
) -> YUnit {
    let (v, buckets) = unit;
    let mut out = YUnit {
        ties: Ties::default(),
        inv: 0,
    };
    let mut local: Vec<(u64, u64)> = Vec::new();
    let mut ys: Vec<u64> = Vec::new();
    let mut buf: Vec<u64> = Vec::new();
    for &(b, s, e) in &buckets {
        let Some(seg) = v.get_mut(s..e) else { continue };
        if b % 2 == 1 {
            // One value: a single tie group, no discordant pair inside.
            out.ties.add(seg.len() as u64);
            continue;
        }
        ys.clear();
        if seg.len() <= local_max() {
            local.clear();
            gather(seg, kx, ky, pf, &mut local);
            sort_pairs(&mut local);
            ys.extend(local.iter().map(|e| e.1));
            out.inv += merge_count(&mut ys, &mut buf, &|&k: &u64| k);
        } else {
            seg.sort_unstable_by_key(|&i| (kx(i.get()), ky(i.get())));
            let mut ibuf: Vec<I> = Vec::with_capacity(seg.len() / 2 + 1);
            out.inv += merge_count(seg, &mut ibuf, &|&i: &I| ky(i.get()));
            ys.extend(seg.iter().map(|&i| ky(i.get())));
        }
        let mut run = 0u64;
        let mut prev = None;
        for &k in &ys {
            if prev == Some(k) {
                run += 1;
            } else {
                if prev.is_some() {
                    out.ties.add(run);
                }
                run = 1;
                prev = Some(k);
            }
        }
        if prev.is_some() {
            out.ties.add(run);
        }
    }
    out
}

fn map_units<I: Index, R: Send, F>(units: Vec<Unit<'_, I>>, parallel: bool, f: F) -> Vec<R>
where
    F: Fn(Unit<'_, I>) -> R + Sync + Send,
{
    if parallel {
        units.into_par_iter().map(f).collect()
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

/// [`numpy_sum`] of the `len` values returned by successive calls of `next`, in
/// the same order and with the same association, without storing them.
fn numpy_sum_stream(len: usize, next: &mut impl FnMut() -> f64) -> f64 {
    if len < 8 {
        let mut r = 0.0;
        for _ in 0..len {
            r += next();
        }
        r
    } else if len <= 128 {
        let mut r = [0.0f64; 8];
        for acc in r.iter_mut() {
            *acc = next();
        }
        let mut i = 8;
        while i < len - (len % 8) {
            for acc in r.iter_mut() {
                *acc += next();
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < len {
            res += next();
            i += 1;
        }
        res
    } else {
        let mut n2 = len / 2;
        n2 -= n2 % 8;
        let a = numpy_sum_stream(n2, next);
        a + numpy_sum_stream(len - n2, next)
    }
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
    fn merge_count_equals_brute_and_sorts_stably() {
        let mut rng = StdRng::seed_from_u64(3);
        for n in (0..60).chain([500, 4097]) {
            for m in [1u32, 3, 1000] {
                let v: Vec<(u32, usize)> = (0..n).map(|i| (rng.random_range(0..m), i)).collect();
                let brute = (0..v.len())
                    .flat_map(|i| (i + 1..v.len()).map(move |j| (i, j)))
                    .filter(|&(i, j)| v[i].0 > v[j].0)
                    .count() as u64;
                let mut w = v.clone();
                let mut buf = Vec::new();
                assert_eq!(
                    merge_count(&mut w, &mut buf, &|e: &(u32, usize)| e.0),
                    brute
                );
                let mut expected = v.clone();
                expected.sort_by_key(|e| e.0);
                assert_eq!(w, expected);
            }
        }
    }

    #[test]
    fn numpy_sum_stream_matches_numpy_sum() {
        let mut rng = StdRng::seed_from_u64(4);
        for n in (0..300).chain([1000, 4099, 100_000]) {
            let v: Vec<f64> = (0..n)
                .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-5..20)))
                .collect();
            let mut it = v.iter().copied();
            let s = numpy_sum_stream(n, &mut || it.next().unwrap_or(f64::NAN));
            assert_eq!(s.to_bits(), numpy_sum(&v).to_bits(), "n = {n}");
        }
    }

    fn reference(x: &[f64], y: &[f64]) -> KendallCounts {
        let (dis, ntie, xtie, ytie) = brute(x, y);
        let groups = |v: &[f64]| {
            let mut s = v.to_vec();
            s.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let mut g = Vec::new();
            let mut i = 0;
            while i < s.len() {
                let j = s[i..].iter().take_while(|&&e| e == s[i]).count();
                g.push(j as u64);
                i += j;
            }
            g
        };
        let moments = |g: &[u64]| {
            let t: Vec<(f64, f64)> = g
                .iter()
                .filter(|&&t| t > 1)
                .map(|&t| moment_terms(t))
                .collect();
            let a: Vec<f64> = t.iter().map(|e| e.0).collect();
            let b: Vec<f64> = t.iter().map(|e| e.1).collect();
            (numpy_sum(&a), numpy_sum(&b))
        };
        let (gx, gy) = (groups(x), groups(y));
        let ((x0, x1), (y0, y1)) = (moments(&gx), moments(&gy));
        KendallCounts {
            n: x.len() as u64,
            dis,
            ntie,
            xtie,
            ytie,
            x0,
            x1,
            y0,
            y1,
            x_unique: gx.len() as u64,
            y_unique: gy.len() as u64,
        }
    }

    /// Inputs large enough for many buckets and units, with few to many ties, on
    /// both the local and the in-place sort paths and with forced ordered moments.
    #[test]
    fn bucketed_counts_match_brute_force() {
        use std::sync::atomic::Ordering::Relaxed;
        let mut rng = StdRng::seed_from_u64(11);
        for (n, kx, ky) in [
            (3000usize, 3u32, 1_000_000u32),
            (3000, 1_000_000, 1_000_000),
            (2500, 40, 7),
            (2600, 1, 1000),
            (2048, 1000, 1),
        ] {
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(0..kx) as f64).collect();
            // y partly follows x so that there are discordant and concordant pairs.
            let y: Vec<f64> = x
                .iter()
                .map(|&v| {
                    ((v as u64 * 7 + rng.random_range(0..u64::from(ky))) % u64::from(ky)) as f64
                })
                .collect();
            let expected = reference(&x, &y);
            for (local, ordered) in [(LOCAL_MAX, false), (40, false), (LOCAL_MAX, true)] {
                TEST_LOCAL_MAX.store(local, Relaxed);
                TEST_FORCE_ORDERED.store(ordered, Relaxed);
                for threads in [1, 2] {
                    let c =
                        kendall_counts(arr1(&x).view(), arr1(&y).view(), Parallelism { threads })
                            .unwrap();
                    assert_eq!(c, expected, "n={n} kx={kx} ky={ky} local={local}");
                }
                TEST_LOCAL_MAX.store(LOCAL_MAX, Relaxed);
                TEST_FORCE_ORDERED.store(false, Relaxed);
            }
        }
    }

    #[test]
    fn u24_indices_equal_u32_indices() {
        use std::sync::atomic::Ordering::Relaxed;
        for i in [0usize, 1, 255, 256, 65_535, 65_536, (1 << 24) - 1] {
            assert_eq!(U24::new(i).get(), i);
        }
        let mut rng = StdRng::seed_from_u64(12);
        for (n, kx, ky) in [(40_000usize, 50u32, 1_000_000u32), (40_000, 1_000_000, 30)] {
            let x = Array1::from_iter((0..n).map(|_| f64::from(rng.random_range(0..kx))));
            let y = Array1::from_iter((0..n).map(|_| rng.random_range(0..ky) as f32));
            // Small local buffers and the ordered moments: the in-place sorts and
            // merges run on the index buffer itself.
            for (local, ordered) in [(LOCAL_MAX, false), (40, true)] {
                TEST_LOCAL_MAX.store(local, Relaxed);
                TEST_FORCE_ORDERED.store(ordered, Relaxed);
                for parallel in [false, true] {
                    let a = counts_for::<u32, _, _>(&x.view(), &y.view(), parallel);
                    let b = counts_for::<U24, _, _>(&x.view(), &y.view(), parallel);
                    assert_eq!(a, b, "n={n} kx={kx} ky={ky} local={local}");
                }
                TEST_LOCAL_MAX.store(LOCAL_MAX, Relaxed);
                TEST_FORCE_ORDERED.store(false, Relaxed);
            }
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
    fn bucket_lookup_equals_binary_search() {
        let mut rng = StdRng::seed_from_u64(8);
        let shapes: [fn(u64) -> u64; 3] = [|v| v, |v| v.wrapping_mul(v) >> 3, |v| 1u64 << (v % 64)];
        for f in shapes {
            for m in [0usize, 1, 2, 5, 300, 1023] {
                let mut s: Vec<u64> = (0..m)
                    .map(|_| f(rng.random::<u64>() >> rng.random_range(0..64)))
                    .collect();
                s.sort_unstable();
                s.dedup();
                let sp = Splitters::new(s.clone());
                let probes = s
                    .iter()
                    .flat_map(|&v| [v.wrapping_sub(1), v, v.wrapping_add(1)]);
                for k in probes
                    .chain([0, u64::MAX])
                    .chain((0..200).map(|_| rng.random()))
                {
                    let j = s.partition_point(|&v| v < k);
                    let expected = 2 * j + usize::from(s.get(j) == Some(&k));
                    assert_eq!(sp.bucket(k), expected);
                }
            }
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
