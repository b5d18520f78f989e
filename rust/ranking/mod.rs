//! Per-row label-ranking metrics: ranking loss, label ranking average precision
//! (LRAP), coverage error, (N)DCG and one-error.
//!
//! Every metric here is a weighted mean over rows of a quantity that depends on one
//! row only, so the work is split into fixed blocks of rows
//! (`Parallelism::map_row_blocks`); each block gathers a row's *known* entries into
//! a buffer it reuses for all its rows (no allocation per row), sorts them by score
//! key when the metric needs an order, and adds `w_i * metric_i` to a block sum. Block
//! sums are added in block order, so results do not depend on the thread count.
//!
//! The kernels return the numerator `sum_i w_i * metric_i` (or `sum_i metric_i`
//! without weights); the caller divides by the weight sum, because scikit-learn's
//! functions disagree on what an all-zero weight vector means (ZeroDivisionError for
//! most, NaN for LRAP).
//!
//! Ties follow scikit-learn 1.9.1 (`sklearn/metrics/_ranking.py`): scores are equal
//! when their `Score::key`s are equal (so `-0.0 == 0.0`). With a mask, a row is the
//! list of its known labels only, and each metric is scikit-learn's metric applied to
//! that shorter row; the degenerate cases (0 or 1 known label) fall out of the
//! definitions as documented on each function.

use std::ops::Range;

use ndarray::{ArrayView1, ArrayView2};

use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::score::Score;

/// Relevance of a label: `bool` for the binary label-ranking metrics, numeric gains
/// for (N)DCG. "Relevant" means non-zero, as in scikit-learn's CSR conversion.
///
/// Besides `bool` and `f64`, the integer and float32 types are accepted so that the
/// checked entry points (`*_checked`) read a user's `y_true` in place (no relevance
/// or gain array is materialised) while they check it.
pub trait Relevance: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
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

/// Up to two distinct values of `y_true` and whether there were more: what
/// scikit-learn's `type_of_target` needs to tell "multilabel-indicator" (at most two
/// distinct, integral values) from the multiclass/continuous types.
#[derive(Debug, Clone, Copy)]
pub struct Distinct<R> {
    vals: [R; 2],
    n: u8,
    /// A third distinct value was seen.
    pub more: bool,
}

impl<R: Relevance> Distinct<R> {
    fn new() -> Self {
        Distinct {
            vals: [R::zero(); 2],
            n: 0,
            more: false,
        }
    }

    #[inline(always)]
    fn see(&mut self, v: R) {
        // Common case: v is one of the (two) values already seen.
        if self.n == 0 || !(v == self.vals[0] || v == self.vals[1]) {
            self.insert(v);
        }
    }

    #[cold]
    #[inline(never)]
    fn insert(&mut self, v: R) {
        match self.n {
            0 => {
                self.vals = [v, v];
                self.n = 1;
            }
            1 => {
                if v != self.vals[0] {
                    self.vals[1] = v;
                    self.n = 2;
                }
            }
            _ => {
                if v != self.vals[0] && v != self.vals[1] {
                    self.more = true;
                }
            }
        }
    }

    fn merge(&mut self, other: &Self) {
        for &v in other.values() {
            self.see(v);
        }
        self.more |= other.more;
    }

    /// The distinct values seen (at most two; see `more`).
    pub fn values(&self) -> &[R] {
        &self.vals[..usize::from(self.n)]
    }
}

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
    fn new() -> Self {
        Seen {
            score_nonfinite: false,
            true_nonfinite: false,
            true_negative: false,
            labels: Distinct::new(),
        }
    }

    fn merge(&mut self, o: &Self) {
        self.score_nonfinite |= o.score_nonfinite;
        self.true_nonfinite |= o.true_nonfinite;
        self.true_negative |= o.true_negative;
        self.labels.merge(&o.labels);
    }
}

/// One known label of a row: its score key, column index and gain.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u64,
    idx: u32,
    gain: f64,
}

impl Entry {
    #[inline]
    fn relevant(&self) -> bool {
        self.gain != 0.0
    }
    #[inline]
    fn order(&self) -> (u64, u32) {
        (self.key, self.idx)
    }
}

/// Rows up to this many known labels are sorted by insertion sort.
const INSERTION_SORT_MAX: usize = 32;

/// Sort ascending by (key, column). The pair is unique, so the order is fully
/// determined; reading it backwards gives descending score with ties in descending
/// column order, which is what `np.argsort(s)[::-1]` gives when the sort is stable.
fn sort_entries(e: &mut [Entry]) {
    if e.len() <= INSERTION_SORT_MAX {
        for i in 1..e.len() {
            let x = e[i];
            let mut j = i;
            while j > 0 && e[j - 1].order() > x.order() {
                e[j] = e[j - 1];
                j -= 1;
            }
            e[j] = x;
        }
    } else {
        e.sort_unstable_by_key(Entry::order);
    }
}

/// Input arrays of a per-row metric (all views, any layout).
#[derive(Clone, Copy)]
pub struct Rows<'a, R, S> {
    pub y_true: ArrayView2<'a, R>,
    pub y_score: ArrayView2<'a, S>,
    /// `true` = label known. `None` = every label known.
    pub mask: Option<ArrayView2<'a, bool>>,
    pub sample_weight: Option<ArrayView1<'a, f64>>,
}

impl<R: Relevance, S: Score> Rows<'_, R, S> {
    fn check(&self) -> Result<()> {
        let shape = self.y_true.dim();
        if self.y_score.dim() != shape {
            return Err(MetricError::shape(
                "y_true and y_score have different shape",
            ));
        }
        if let Some(m) = &self.mask {
            if m.dim() != shape {
                return Err(MetricError::shape(format!(
                    "mask has shape {:?}, expected {:?} (the shape of y_true)",
                    m.dim(),
                    shape
                )));
            }
        }
        if let Some(w) = &self.sample_weight {
            if w.len() != shape.0 {
                return Err(MetricError::shape(format!(
                    "Found input variables with inconsistent numbers of samples: [{}, {}]",
                    shape.0,
                    w.len()
                )));
            }
        }
        if shape.1 > u32::MAX as usize {
            return Err(MetricError::shape("too many labels per row"));
        }
        Ok(())
    }

    /// Weighted sum over rows of `row_metric(row buffer holding the row's known
    /// entries)`, and what the pass saw (see `Seen`). Never fails on values: NaN
    /// scores only make the sum meaningless, and `Seen` says so.
    fn weighted_row_sum_checked<T, F>(
        &self,
        par: &Parallelism,
        row_metric: F,
    ) -> Result<(T, Seen<R>)>
    where
        T: RowSum,
        F: Fn(&mut RowBuf) -> T + Sync + Send,
    {
        self.check()?;
        let (n_rows, n_labels) = self.y_true.dim();
        let blocks = par.map_row_blocks(n_rows, n_labels, |rows| -> (T, Seen<R>) {
            #[cfg(target_arch = "x86_64")]
            if crate::cpu::has_avx2() {
                // SAFETY: the CPU supports the features `block_avx2` is compiled for
                // (checked just above); the function is otherwise safe.
                return unsafe { self.block_avx2(rows, n_labels, &row_metric) };
            }
            self.block(rows, n_labels, &row_metric)
        })?;
        let mut total = T::default();
        let mut seen = Seen::new();
        for (b, s) in &blocks {
            total.add(b);
            seen.merge(s);
        }
        Ok((total, seen))
    }

    /// One block of rows: gather each row, apply `row_metric`, add up with weights.
    #[inline(always)]
    fn block<T, F>(&self, rows: Range<usize>, n_labels: usize, row_metric: &F) -> (T, Seen<R>)
    where
        T: RowSum,
        F: Fn(&mut RowBuf) -> T,
    {
        let mut buf = RowBuf::with_capacity(n_labels);
        let mut seen = Seen::new();
        let mut acc = T::default();
        for i in rows {
            buf.gather(
                self.y_true.row(i),
                self.y_score.row(i),
                self.mask.as_ref().map(|m| m.row(i)),
                &mut seen,
            );
            let v = row_metric(&mut buf);
            match &self.sample_weight {
                Some(w) => acc.add_weighted(w[i], &v),
                None => acc.add(&v),
            }
        }
        (acc, seen)
    }

    /// `block` compiled for AVX2 (64-bit integer compares of the score keys, popcount,
    /// wider vectors), chosen at run time; same operations, so same results.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt,bmi1")]
    unsafe fn block_avx2<T, F>(
        &self,
        rows: Range<usize>,
        n_labels: usize,
        row_metric: &F,
    ) -> (T, Seen<R>)
    where
        T: RowSum,
        F: Fn(&mut RowBuf) -> T,
    {
        self.block(rows, n_labels, row_metric)
    }

    /// `weighted_row_sum_checked` for callers that validated the input already: a
    /// NaN among the known scores is an error.
    fn weighted_row_sum<F>(&self, par: &Parallelism, row_metric: F) -> Result<f64>
    where
        F: Fn(&mut RowBuf) -> f64 + Sync + Send,
    {
        let (total, seen) = self.weighted_row_sum_checked(par, row_metric)?;
        if seen.score_nonfinite && self.known_score_is_nan() {
            return Err(MetricError::value("Input contains NaN."));
        }
        Ok(total)
    }

    fn known_score_is_nan(&self) -> bool {
        match &self.mask {
            None => self.y_score.iter().any(|s| s.is_nan()),
            Some(m) => self
                .y_score
                .iter()
                .zip(m.iter())
                .any(|(s, &known)| known && s.is_nan()),
        }
    }
}

/// A per-row value that can be summed with weights (`f64`, or several metrics at once).
pub trait RowSum: Default + Send {
    fn add(&mut self, v: &Self);
    fn add_weighted(&mut self, w: f64, v: &Self);
}

impl RowSum for f64 {
    #[inline]
    fn add(&mut self, v: &Self) {
        *self += v;
    }
    #[inline]
    fn add_weighted(&mut self, w: f64, v: &Self) {
        *self += w * v;
    }
}

impl<const N: usize> RowSum for [f64; N]
where
    [f64; N]: Default,
{
    #[inline]
    fn add(&mut self, v: &Self) {
        for (a, b) in self.iter_mut().zip(v) {
            *a += b;
        }
    }
    #[inline]
    fn add_weighted(&mut self, w: f64, v: &Self) {
        for (a, b) in self.iter_mut().zip(v) {
            *a += w * b;
        }
    }
}

/// Above this many relevant (or non-zero-gain) labels in a row, a kernel sorts the
/// row (O(K log K)) instead of counting pairs directly (O(n_relevant * K)).
const DIRECT_MAX: usize = 12;

#[cfg(test)]
thread_local! {
    static FORCE_SORT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
fn force_sort() -> bool {
    FORCE_SORT.with(|f| f.get())
}

#[cfg(not(test))]
#[inline]
fn force_sort() -> bool {
    false
}

/// One row's known entries, in column order, in buffers reused across rows.
/// Positions in these buffers stand in for columns (same order).
pub(crate) struct RowBuf {
    keys: Vec<u64>,
    gains: Vec<f64>,
    entries: Vec<Entry>,
    scratch: Vec<f64>,
    /// Number of live entries in `keys`/`gains`.
    len: usize,
    /// Bit j set = entry j relevant (non-zero gain), when the gather computed it
    /// (contiguous unmasked rows of at most 64 labels).
    rel: Option<u64>,
    /// Force the sorting path (tests compare it with the direct path).
    always_sort: bool,
}

impl RowBuf {
    fn with_capacity(n: usize) -> Self {
        RowBuf {
            keys: Vec::with_capacity(n),
            gains: Vec::with_capacity(n),
            entries: Vec::with_capacity(n),
            scratch: Vec::with_capacity(n),
            len: 0,
            rel: None,
            always_sort: force_sort(),
        }
    }

    /// Load a row's known entries, recording in `seen` what the checks need.
    /// The buffers keep their full width; `len` says how many entries are live, so
    /// a row costs no allocation and no capacity checks.
    #[inline(always)]
    fn gather<R: Relevance, S: Score>(
        &mut self,
        t: ArrayView1<'_, R>,
        s: ArrayView1<'_, S>,
        m: Option<ArrayView1<'_, bool>>,
        seen: &mut Seen<R>,
    ) {
        let n = t.len();
        if self.keys.len() < n {
            self.keys.resize(n, 0);
            self.gains.resize(n, 0.0);
        }
        let mut bad_score = false;
        let mut bad_true = false;
        let mut negative = false;
        if n == 0 {
            self.len = 0;
            self.rel = Some(0);
            return;
        }
        self.rel = None;
        let slots = self.keys.iter_mut().zip(self.gains.iter_mut());
        match (t.as_slice(), s.as_slice(), m) {
            (Some(t), Some(s), None) => {
                // Branch-free: per row min/max of y_true instead of a distinct-value
                // test per entry; the (rare) strictly-between test only when the
                // row holds two different values that are not adjacent integers.
                let (keys, gains) = (&mut self.keys[..n], &mut self.gains[..n]);
                let (mut lo, mut hi) = (t[0], t[0]);
                let mut rel = 0u64;
                for (j, (((k, g), &tv), &sv)) in keys
                    .iter_mut()
                    .zip(gains.iter_mut())
                    .zip(t)
                    .zip(s)
                    .enumerate()
                {
                    bad_score |= !sv.is_finite();
                    bad_true |= !tv.finite();
                    lo = lo.lo(tv);
                    hi = hi.hi(tv);
                    *k = sv.key();
                    let gain = tv.gain();
                    *g = gain;
                    rel |= u64::from(gain != 0.0) << (j & 63);
                }
                if R::CAN_BE_MULTICLASS {
                    negative |= lo.negative();
                    seen.labels.see(lo);
                    seen.labels.see(hi);
                    if R::gap(lo, hi) && t.iter().any(|v| v.between(lo, hi)) {
                        seen.labels.more = true;
                    }
                }
                self.rel = if n <= 64 { Some(rel) } else { None };
                self.len = n;
                seen.score_nonfinite |= bad_score;
                seen.true_nonfinite |= bad_true;
                seen.true_negative |= negative;
                return;
            }
            (_, _, None) => {
                for ((k, g), (&tv, &sv)) in slots.zip(t.iter().zip(s.iter())) {
                    bad_score |= !sv.is_finite();
                    bad_true |= !tv.finite();
                    negative |= tv.negative();
                    if R::CAN_BE_MULTICLASS {
                        seen.labels.see(tv);
                    }
                    *k = sv.key();
                    *g = tv.gain();
                }
                self.len = n;
            }
            (_, _, Some(m)) => {
                let mut c = 0usize;
                for ((&tv, &sv), &known) in t.iter().zip(s.iter()).zip(m.iter()) {
                    if known {
                        bad_score |= !sv.is_finite();
                        bad_true |= !tv.finite();
                        negative |= tv.negative();
                        if R::CAN_BE_MULTICLASS {
                            seen.labels.see(tv);
                        }
                        self.keys[c] = sv.key();
                        self.gains[c] = tv.gain();
                        c += 1;
                    }
                }
                self.len = c;
                if c < n {
                    // Unknown entries count as 0 in the type check.
                    seen.labels.see(R::zero());
                }
            }
        }
        seen.score_nonfinite |= bad_score;
        seen.true_nonfinite |= bad_true;
        seen.true_negative |= negative;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn keys(&self) -> &[u64] {
        &self.keys[..self.len]
    }

    fn gains(&self) -> &[f64] {
        &self.gains[..self.len]
    }

    fn n_nonzero(&self) -> usize {
        match self.rel {
            Some(bits) => bits.count_ones() as usize,
            None => self.gains().iter().filter(|&&g| g != 0.0).count(),
        }
    }

    /// Calls `f(position)` for each relevant (non-zero gain) entry, in column order.
    #[inline]
    fn for_each_relevant(&self, mut f: impl FnMut(usize)) {
        match self.rel {
            Some(mut bits) => {
                while bits != 0 {
                    f(bits.trailing_zeros() as usize);
                    bits &= bits - 1;
                }
            }
            None => {
                for (j, &g) in self.gains().iter().enumerate() {
                    if g != 0.0 {
                        f(j);
                    }
                }
            }
        }
    }

    /// The entries sorted ascending by (key, position).
    fn sorted(&mut self) -> &[Entry] {
        self.entries.clear();
        for (p, (&key, &gain)) in self.keys[..self.len]
            .iter()
            .zip(&self.gains[..self.len])
            .enumerate()
        {
            self.entries.push(Entry {
                key,
                idx: p as u32,
                gain,
            });
        }
        sort_entries(&mut self.entries);
        &self.entries
    }
}

/// Walk the groups of equal keys of ascending-sorted entries from the highest score
/// down; `f(group)` is called once per group.
#[inline]
fn for_each_group_desc(e: &[Entry], mut f: impl FnMut(&[Entry])) {
    let mut end = e.len();
    while end > 0 {
        let key = e[end - 1].key;
        let mut start = end - 1;
        while start > 0 && e[start - 1].key == key {
            start -= 1;
        }
        f(&e[start..end]);
        end = start;
    }
}

#[inline]
fn ranking_loss_row(b: &mut RowBuf) -> f64 {
    let k = b.len() as u64;
    let n_pos = b.n_nonzero() as u64;
    let n_neg = k - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return 0.0;
    }
    let errors = if !b.always_sort && n_pos.min(n_neg) as usize <= DIRECT_MAX {
        // #{(p, n): s_p <= s_n}, counted from the smaller side (branch-free inner loop).
        let (keys, gains) = (b.keys(), b.gains());
        let mut errors = 0u64;
        if n_pos <= n_neg {
            b.for_each_relevant(|p| {
                let kp = keys[p];
                for (&kq, &gq) in keys.iter().zip(gains) {
                    errors += u64::from((gq == 0.0) & (kq >= kp));
                }
            });
        } else {
            for (&kn, _) in keys.iter().zip(gains).filter(|(_, &g)| g == 0.0) {
                for (&kq, &gq) in keys.iter().zip(gains) {
                    errors += u64::from((gq != 0.0) & (kq <= kn));
                }
            }
        }
        errors
    } else {
        let e = b.sorted();
        let mut irrelevant_at_or_above = 0u64;
        let mut errors = 0u64;
        for_each_group_desc(e, |g| {
            let rel = g.iter().filter(|x| x.relevant()).count() as u64;
            irrelevant_at_or_above += g.len() as u64 - rel;
            errors += rel * irrelevant_at_or_above;
        });
        errors
    };
    errors as f64 / (n_neg * n_pos) as f64
}

/// Sum over rows of scikit-learn's `label_ranking_loss` row term: the fraction of
/// (relevant, irrelevant) pairs with `s_relevant <= s_irrelevant`. **A tied pair is a
/// full error.** Rows with no relevant or only relevant known labels give 0 (so do
/// masked rows with fewer than 2 known labels).
pub fn label_ranking_loss_sum<R: Relevance, S: Score>(
    rows: &Rows<'_, R, S>,
    par: &Parallelism,
) -> Result<f64> {
    rows.weighted_row_sum(par, ranking_loss_row)
}

#[inline]
fn lrap_row(b: &mut RowBuf) -> f64 {
    let k = b.len();
    let n_pos = b.n_nonzero();
    if n_pos == 0 || n_pos == k {
        return 1.0;
    }
    let mut sum = 0.0f64;
    if !b.always_sort && n_pos <= DIRECT_MAX {
        // Relevant labels in column order, like scikit-learn's CSR indices.
        let (keys, gains) = (b.keys(), b.gains());
        b.for_each_relevant(|j| {
            let kj = keys[j];
            let mut rank = 0u64;
            let mut rel = 0u64;
            for (&kq, &gq) in keys.iter().zip(gains) {
                let ge = kq >= kj;
                rank += u64::from(ge);
                rel += u64::from(ge & (gq != 0.0));
            }
            sum += rel as f64 / rank as f64;
        });
    } else {
        let e = b.sorted();
        let mut all_at_or_above = 0u64;
        let mut rel_at_or_above = 0u64;
        for_each_group_desc(e, |g| {
            let rel = g.iter().filter(|x| x.relevant()).count();
            all_at_or_above += g.len() as u64;
            rel_at_or_above += rel as u64;
            let ratio = rel_at_or_above as f64 / all_at_or_above as f64;
            for _ in 0..rel {
                sum += ratio;
            }
        });
    }
    sum / n_pos as f64
}

/// Sum over rows of scikit-learn's `label_ranking_average_precision_score` row term:
/// mean over relevant labels j of `#{relevant k: s_k >= s_j} / #{k: s_k >= s_j}`.
/// **Ties take the maximal rank.** Rows with no relevant or only relevant known labels
/// give 1.0 (so do masked rows with fewer than 2 known labels).
pub fn lrap_sum<R: Relevance, S: Score>(rows: &Rows<'_, R, S>, par: &Parallelism) -> Result<f64> {
    rows.weighted_row_sum(par, lrap_row)
}

#[inline]
fn coverage_row(b: &mut RowBuf) -> f64 {
    let keys = b.keys();
    let mut min_rel = u64::MAX;
    let mut any_rel = false;
    b.for_each_relevant(|j| {
        any_rel = true;
        min_rel = min_rel.min(keys[j]);
    });
    if !any_rel {
        return 0.0;
    }
    keys.iter().map(|&k| u64::from(k >= min_rel)).sum::<u64>() as f64
}

/// Sum over rows of scikit-learn's `coverage_error` row term: the number of known
/// labels scored at least as high as the lowest-scored relevant label (**ties take the
/// maximal rank**). Rows without a relevant known label give 0.
pub fn coverage_sum<R: Relevance, S: Score>(
    rows: &Rows<'_, R, S>,
    par: &Parallelism,
) -> Result<f64> {
    rows.weighted_row_sum(par, coverage_row)
}

#[inline]
fn one_error_row(b: &mut RowBuf) -> f64 {
    let Some(&top) = b.keys().iter().max() else {
        return 1.0;
    };
    let mut n_top = 0u64;
    let mut n_top_irrelevant = 0u64;
    for (&k, &g) in b.keys().iter().zip(b.gains()) {
        let at_top = k == top;
        n_top += u64::from(at_top);
        n_top_irrelevant += u64::from(at_top & (g == 0.0));
    }
    n_top_irrelevant as f64 / n_top as f64
}

/// Sum over rows of the one-error (Schapire & Singer, 2000): 1 when the top-scored
/// known label is not relevant. **Ties at the top** count the fraction of the top tie
/// group that is irrelevant (the expected one-error under uniformly random
/// tie-breaking). Rows with no relevant known label (including rows with no known
/// label) count as one full error, as in the classical definition.
pub fn one_error_sum<R: Relevance, S: Score>(
    rows: &Rows<'_, R, S>,
    par: &Parallelism,
) -> Result<f64> {
    rows.weighted_row_sum(par, one_error_row)
}

/// Discounts for (N)DCG: `discount[r]` is the weight of rank `r` (0-based, already
/// zero beyond the cutoff `k`) and `cumsum[r] = discount[0] + ... + discount[r]`.
/// They are computed by the caller (scikit-learn's exact float expressions) and must
/// cover at least as many ranks as the row has labels.
#[derive(Clone, Copy)]
pub struct Discounts<'a> {
    pub discount: ArrayView1<'a, f64>,
    pub cumsum: ArrayView1<'a, f64>,
}

impl Discounts<'_> {
    fn check(&self, n_labels: usize) -> Result<()> {
        if self.discount.len() < n_labels || self.cumsum.len() < n_labels {
            return Err(MetricError::shape(format!(
                "discount arrays have {} and {} entries, need at least {n_labels}",
                self.discount.len(),
                self.cumsum.len()
            )));
        }
        Ok(())
    }
}

/// McSherry–Najork tie-averaged DCG of ascending-sorted entries: each group of tied
/// scores gets its mean gain times the sum of the discounts of the ranks it occupies.
#[inline]
fn dcg_tie_averaged(e: &[Entry], d: &Discounts<'_>) -> f64 {
    let mut first = 0usize;
    let mut dcg = 0.0f64;
    for_each_group_desc(e, |g| {
        let last = first + g.len() - 1;
        let hi = d.cumsum[last];
        let dsum = if first == 0 {
            hi
        } else {
            hi - d.cumsum[first - 1]
        };
        let mut gain = 0.0f64;
        for x in g.iter().rev() {
            gain += x.gain;
        }
        dcg += gain / g.len() as f64 * dsum;
        first = last + 1;
    });
    dcg
}

/// DCG in the order of ascending-sorted entries read backwards (ties: higher column
/// first).
#[inline]
fn dcg_in_order(e: &[Entry], d: &Discounts<'_>) -> f64 {
    e.iter()
        .rev()
        .enumerate()
        .map(|(r, x)| d.discount[r] * x.gain)
        .sum()
}

/// DCG of the ideal ranking (gains sorted decreasingly): positive gains take the
/// first ranks, negative gains the last ones, zeros (which add nothing) the middle.
#[inline]
fn ideal_dcg(b: &mut RowBuf, d: &Discounts<'_>) -> f64 {
    let k = b.len;
    // Common case (binary relevance): all non-zero gains equal and positive. The
    // sorted order is then the gains in any order, so skip the copy and the sort
    // (same operations, same result).
    let mut first = None;
    let mut n_nonzero = 0usize;
    let mut all_same = true;
    b.for_each_relevant(|j| {
        let g = b.gains[j];
        n_nonzero += 1;
        match first {
            None => first = Some(g),
            Some(f) => all_same &= g == f,
        }
    });
    if let Some(g) = first {
        if all_same && g > 0.0 {
            let mut dcg = 0.0f64;
            for r in 0..n_nonzero {
                dcg += d.discount[r] * g;
            }
            return dcg;
        }
    } else {
        return 0.0;
    }
    let nonzero = &mut b.scratch;
    nonzero.clear();
    nonzero.extend(b.gains[..b.len].iter().copied().filter(|&g| g != 0.0));
    nonzero.sort_unstable_by(|a, b| b.total_cmp(a));
    let n_neg = nonzero.iter().filter(|&&g| g < 0.0).count();
    let n_pos = nonzero.len() - n_neg;
    let mut dcg = 0.0f64;
    for (r, g) in nonzero[..n_pos].iter().enumerate() {
        dcg += d.discount[r] * g;
    }
    for (i, g) in nonzero[n_pos..].iter().enumerate() {
        dcg += d.discount[k - n_neg + i] * g;
    }
    dcg
}

/// DCG counting only the non-zero gains, each placed by counting (O(nnz * K)).
#[inline]
fn dcg_direct(b: &RowBuf, d: &Discounts<'_>, ignore_ties: bool) -> f64 {
    let (keys, gains) = (b.keys(), b.gains());
    let mut dcg = 0.0f64;
    b.for_each_relevant(|j| {
        let (kj, gj) = (keys[j], gains[j]);
        let mut above = 0usize;
        let mut same = 0usize;
        let mut same_after = 0usize;
        for (q, &kq) in keys.iter().enumerate() {
            let eq = kq == kj;
            above += usize::from(kq > kj);
            same += usize::from(eq);
            same_after += usize::from(eq & (q > j));
        }
        if ignore_ties {
            dcg += d.discount[above + same_after] * gj;
        } else {
            let last = above + same - 1;
            let hi = d.cumsum[last];
            let dsum = if above == 0 {
                hi
            } else {
                hi - d.cumsum[above - 1]
            };
            dcg += gj / same as f64 * dsum;
        }
    });
    dcg
}

#[inline]
fn dcg_row(b: &mut RowBuf, d: &Discounts<'_>, ignore_ties: bool) -> f64 {
    if !b.always_sort && b.n_nonzero() <= DIRECT_MAX {
        return dcg_direct(b, d, ignore_ties);
    }
    let e = b.sorted();
    if ignore_ties {
        dcg_in_order(e, d)
    } else {
        dcg_tie_averaged(e, d)
    }
}

/// Sum over rows of scikit-learn's `dcg_score` row term (`normalize = false`) or of
/// `ndcg_score`'s (`normalize = true`: DCG / ideal DCG, and 0 when the ideal DCG is 0).
///
/// Ties (default): McSherry–Najork averaging, including a group that straddles the
/// cutoff `k` (it only gets the discounts of its ranks within `k`). With
/// `ignore_ties`, scikit-learn's order inside a tie group is unspecified
/// (`np.argsort(s)[:, ::-1]` with an unstable sort); here it is fixed: descending
/// score, ties by descending column (what a stable argsort reversed gives). With a
/// mask, ranks count known labels only; a row with no known label has DCG 0 and NDCG 0.
pub fn dcg_sum<S: Score>(
    rows: &Rows<'_, f64, S>,
    discounts: &Discounts<'_>,
    ignore_ties: bool,
    normalize: bool,
    par: &Parallelism,
) -> Result<f64> {
    discounts.check(rows.y_true.ncols())?;
    rows.weighted_row_sum(par, |b| {
        dcg_or_ndcg_row(b, discounts, ignore_ties, normalize)
    })
}

/// The binary-relevance per-row metrics, for `metric_sum_checked`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankingMetric {
    LabelRankingLoss,
    Lrap,
    Coverage,
    OneError,
}

/// The weighted row sum of one of the four binary-relevance metrics.
pub fn metric_sum<R: Relevance, S: Score>(
    rows: &Rows<'_, R, S>,
    metric: RankingMetric,
    par: &Parallelism,
) -> Result<f64> {
    match metric {
        RankingMetric::LabelRankingLoss => label_ranking_loss_sum(rows, par),
        RankingMetric::Lrap => lrap_sum(rows, par),
        RankingMetric::Coverage => coverage_sum(rows, par),
        RankingMetric::OneError => one_error_sum(rows, par),
    }
}

/// `label_ranking_loss_sum`, `lrap_sum`, `coverage_sum` or `one_error_sum` in the same
/// pass as the input checks: returns the weighted row sum and what the pass saw in
/// `y_true` and `y_score` (`Seen`). Relevant = non-zero `y_true`. Fails only on
/// shapes; when `Seen` reports a problem the sum is meaningless and the caller
/// raises the matching error instead.
pub fn metric_sum_checked<R: Relevance, S: Score>(
    rows: &Rows<'_, R, S>,
    metric: RankingMetric,
    par: &Parallelism,
) -> Result<(f64, Seen<R>)> {
    match metric {
        RankingMetric::LabelRankingLoss => rows.weighted_row_sum_checked(par, ranking_loss_row),
        RankingMetric::Lrap => rows.weighted_row_sum_checked(par, lrap_row),
        RankingMetric::Coverage => rows.weighted_row_sum_checked(par, coverage_row),
        RankingMetric::OneError => rows.weighted_row_sum_checked(par, one_error_row),
    }
}

/// `dcg_sum` in the same pass as the input checks (see `metric_sum_checked`).
pub fn dcg_sum_checked<R: Relevance, S: Score>(
    rows: &Rows<'_, R, S>,
    discounts: &Discounts<'_>,
    ignore_ties: bool,
    normalize: bool,
    par: &Parallelism,
) -> Result<(f64, Seen<R>)> {
    discounts.check(rows.y_true.ncols())?;
    rows.weighted_row_sum_checked(par, |b| {
        dcg_or_ndcg_row(b, discounts, ignore_ties, normalize)
    })
}

#[inline]
fn dcg_or_ndcg_row(b: &mut RowBuf, d: &Discounts<'_>, ignore_ties: bool, normalize: bool) -> f64 {
    let dcg = dcg_row(b, d, ignore_ties);
    if !normalize {
        return dcg;
    }
    let ideal = ideal_dcg(b, d);
    if ideal == 0.0 {
        0.0
    } else {
        dcg / ideal
    }
}

/// Positions of the sums in `ReportSums::sums`: the five per-row metrics, then the
/// two sums of the "relevant rows" one-error (`report_row`).
pub const REPORT_KEYS: [&str; 7] = [
    "label_ranking_loss",
    "label_ranking_average_precision",
    "coverage_error",
    "one_error",
    "ndcg",
    "one_error_relevant_errors",
    "rows_with_relevant",
];

/// Weighted row sums of the per-row figures of `multilabel_report` (order of
/// `REPORT_KEYS`) and the weight sum (`n_rows` without weights).
#[derive(Debug, Clone, Copy)]
pub struct ReportSums {
    pub sums: [f64; 7],
    pub weight_sum: f64,
}

/// One row's five metrics, with the same definitions, tie rules, degenerate rules and
/// floating-point operations as the separate row functions (so each sum equals the
/// separate kernel's bit for bit when the discounts are the same).
///
/// Few relevant labels (<= `DIRECT_MAX`): one counting loop per relevant label j gives
/// `above_j = #{s > s_j}`, `same_j = #{s == s_j}` and `rel_j = #{relevant, s >= s_j}`,
/// from which: ranking-loss errors `sum_j (above_j + same_j - rel_j)`, LRAP
/// `mean_j rel_j / (above_j + same_j)`, coverage `max_j (above_j + same_j)`, one-error
/// `(same_j - rel_j) / same_j` for a relevant j at the top (else 1), and the
/// tie-averaged DCG term of j. Otherwise one sort and one walk over tie groups.
///
/// The last two entries are the one-error over rows with a relevant known label (the
/// figure of docs/cli.md): 1 when the top tie group holds any irrelevant label (the
/// classical one-error of such a row is then > 0), and 1 for "the row has a relevant
/// label" (both 0 otherwise), so their weighted sums give that figure's mean.
#[inline]
fn report_row(b: &mut RowBuf, d: &Discounts<'_>) -> [f64; 7] {
    let k = b.len() as u64;
    let n_pos = b.n_nonzero() as u64;
    let ideal = ideal_dcg(b, d);
    let (errors, lrap, cover, one_err, dcg);
    if !b.always_sort && n_pos as usize <= DIRECT_MAX {
        let (keys, gains) = (b.keys(), b.gains());
        let mut err = 0u64;
        let mut ap = 0.0f64;
        let mut cov = 0u64;
        let mut oe = 1.0f64;
        let mut g_sum = 0.0f64;
        b.for_each_relevant(|j| {
            let (kj, gj) = (keys[j], gains[j]);
            let mut above = 0u64;
            let mut same = 0u64;
            let mut rel = 0u64;
            for (&kq, &gq) in keys.iter().zip(gains) {
                above += u64::from(kq > kj);
                same += u64::from(kq == kj);
                rel += u64::from((kq >= kj) & (gq != 0.0));
            }
            let rank = above + same;
            err += rank - rel;
            ap += rel as f64 / rank as f64;
            cov = cov.max(rank);
            if above == 0 {
                oe = (same - rel) as f64 / same as f64;
            }
            // As `dcg_direct` (tie-averaged).
            let (above, same) = (above as usize, same as usize);
            let hi = d.cumsum[above + same - 1];
            let dsum = if above == 0 {
                hi
            } else {
                hi - d.cumsum[above - 1]
            };
            g_sum += gj / same as f64 * dsum;
        });
        errors = err;
        lrap = ap;
        cover = cov;
        one_err = oe;
        dcg = g_sum;
    } else {
        let e = b.sorted();
        let mut irr_above = 0u64;
        let mut err = 0u64;
        let mut all_above = 0u64;
        let mut rel_above = 0u64;
        let mut ap = 0.0f64;
        let mut cov = 0u64;
        let mut oe = 1.0f64;
        let mut first = 0usize;
        let mut g_sum = 0.0f64;
        for_each_group_desc(e, |g| {
            let rel = g.iter().filter(|x| x.relevant()).count() as u64;
            let len = g.len() as u64;
            if first == 0 {
                oe = (len - rel) as f64 / len as f64;
            }
            irr_above += len - rel;
            err += rel * irr_above;
            all_above += len;
            rel_above += rel;
            let ratio = rel_above as f64 / all_above as f64;
            for _ in 0..rel {
                ap += ratio;
            }
            if rel > 0 {
                cov = all_above;
            }
            // As `dcg_tie_averaged`.
            let last = first + g.len() - 1;
            let hi = d.cumsum[last];
            let dsum = if first == 0 {
                hi
            } else {
                hi - d.cumsum[first - 1]
            };
            let mut gain = 0.0f64;
            for x in g.iter().rev() {
                gain += x.gain;
            }
            g_sum += gain / g.len() as f64 * dsum;
            first = last + 1;
        });
        errors = err;
        lrap = ap;
        cover = cov;
        one_err = oe;
        dcg = g_sum;
    }
    let n_neg = k - n_pos;
    let lrl = if n_pos == 0 || n_neg == 0 {
        0.0
    } else {
        errors as f64 / (n_neg * n_pos) as f64
    };
    let lrap = if n_pos == 0 || n_pos == k {
        1.0
    } else {
        lrap / n_pos as f64
    };
    let ndcg = if ideal == 0.0 { 0.0 } else { dcg / ideal };
    let has_relevant = n_pos > 0;
    let top_error = has_relevant && one_err > 0.0;
    [
        lrl,
        lrap,
        cover as f64,
        one_err,
        ndcg,
        f64::from(u8::from(top_error)),
        f64::from(u8::from(has_relevant)),
    ]
}

/// The five per-row metrics of `multilabel_report` in one pass over the rows (one
/// counting loop or one sort per row): weighted sums of label ranking loss, LRAP,
/// coverage error, one-error and NDCG (tie-averaged, all ranks), each with the
/// definition, tie rule, mask rule and degenerate-row rule of its separate function
/// (`label_ranking_loss_sum`, `lrap_sum`, `coverage_sum`, `one_error_sum`,
/// `dcg_sum(normalize = true)` with `discounts(n_labels, None, 2.0)`). Scores must be
/// finite among the known entries (NaN is an error).
pub fn report_sums<R: Relevance, S: Score>(
    rows: &Rows<'_, R, S>,
    par: &Parallelism,
) -> Result<ReportSums> {
    let n_labels = rows.y_true.ncols();
    let (d, c) = discounts(n_labels, None, 2.0);
    let disc = Discounts {
        discount: ArrayView1::from(&d),
        cumsum: ArrayView1::from(&c),
    };
    let (sums, seen) = rows.weighted_row_sum_checked(par, |b| report_row(b, &disc))?;
    if seen.score_nonfinite && rows.known_score_is_nan() {
        return Err(MetricError::value("Input contains NaN."));
    }
    let weight_sum = match &rows.sample_weight {
        Some(w) => w.iter().sum(),
        None => rows.y_true.nrows() as f64,
    };
    Ok(ReportSums { sums, weight_sum })
}

/// scikit-learn's discount vector `1 / (ln(r + 2) / ln(log_base))` for ranks
/// `r = 0..n`, zero from rank `k` on, and its running sum. For Rust callers; the
/// Python layer computes the same arrays with NumPy so that they agree bit for bit.
pub fn discounts(n: usize, k: Option<usize>, log_base: f64) -> (Vec<f64>, Vec<f64>) {
    let ln_base = log_base.ln();
    let mut d: Vec<f64> = (0..n)
        .map(|r| 1.0 / (((r + 2) as f64).ln() / ln_base))
        .collect();
    if let Some(k) = k {
        for v in d.iter_mut().skip(k) {
            *v = 0.0;
        }
    }
    let mut c = Vec::with_capacity(n);
    let mut acc = 0.0;
    for v in &d {
        acc += v;
        c.push(acc);
    }
    (d, c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array1, Array2};

    fn seq() -> Parallelism {
        Parallelism::sequential()
    }

    fn rows<'a, R: Relevance, S: Score>(t: &'a Array2<R>, s: &'a Array2<S>) -> Rows<'a, R, S> {
        Rows {
            y_true: t.view(),
            y_score: s.view(),
            mask: None,
            sample_weight: None,
        }
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn ranking_loss_ties_are_full_errors() {
        // sklearn test_ranking_loss_ties_handling
        let t = array![[true, false, false]];
        for (s, want) in [
            (array![[0.5, 0.5, 0.5]], 1.0),
            (array![[0.25, 0.5, 0.5]], 1.0),
            (array![[0.5, 0.5, 0.25]], 0.5),
            (array![[0.5, 0.25, 0.25]], 0.0),
        ] {
            close(label_ranking_loss_sum(&rows(&t, &s), &seq()).unwrap(), want);
        }
        let t = array![[true, false]];
        let s = array![[0.5f32, 0.5]];
        close(label_ranking_loss_sum(&rows(&t, &s), &seq()).unwrap(), 1.0);
        // -0.0 ties with 0.0
        let s = array![[0.0, -0.0]];
        close(label_ranking_loss_sum(&rows(&t, &s), &seq()).unwrap(), 1.0);
    }

    #[test]
    fn ranking_loss_docstring_and_degenerate_rows() {
        let t = array![
            [true, false, false],
            [false, false, true],
            [false, false, false]
        ];
        let s = array![[0.75, 0.5, 1.0], [1.0, 0.2, 0.1], [0.3, 0.2, 0.1]];
        // 0.5 + 1.0 + 0 (no relevant)
        close(label_ranking_loss_sum(&rows(&t, &s), &seq()).unwrap(), 1.5);
    }

    #[test]
    fn lrap_max_rank_for_ties() {
        let t = array![[true, false, true]];
        let s = array![[0.5, 0.5, 0.2]];
        // relevant 0: 1/2; relevant 2: 2/3
        close(
            lrap_sum(&rows(&t, &s), &seq()).unwrap(),
            (0.5 + 2.0 / 3.0) / 2.0,
        );
        let t = array![[true, false, false], [false, false, true]];
        let s = array![[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]];
        close(lrap_sum(&rows(&t, &s), &seq()).unwrap(), 0.5 + 1.0 / 3.0);
        let t = array![[false, false], [true, true]];
        let s = array![[0.1, 0.2], [0.3, 0.3]];
        close(lrap_sum(&rows(&t, &s), &seq()).unwrap(), 2.0);
    }

    #[test]
    fn coverage_ties_take_max_rank() {
        // sklearn test_coverage_tie_handling
        let t = array![[false, true]];
        for (s, want) in [
            (array![[0.0, 0.0]], 2.0),
            (array![[1.0, 0.0]], 2.0),
            (array![[1.0, 1.0]], 2.0),
            (array![[0.0, 1.0]], 1.0),
        ] {
            close(coverage_sum(&rows(&t, &s), &seq()).unwrap(), want);
        }
        let t = array![[false, false, false]];
        let s = array![[0.1, 0.2, 0.3]];
        close(coverage_sum(&rows(&t, &s), &seq()).unwrap(), 0.0);
    }

    #[test]
    fn one_error_ties_and_empty_rows() {
        let t = array![
            [true, false, false],
            [false, false, false],
            [true, false, false]
        ];
        let s = array![[0.5, 0.5, 0.1], [0.3, 0.2, 0.1], [0.9, 0.2, 0.1]];
        // 1/2 + 1 + 0
        close(one_error_sum(&rows(&t, &s), &seq()).unwrap(), 1.5);
    }

    #[test]
    fn dcg_tie_averaging_with_cutoff() {
        // sklearn docstring: y_true=[[10,0,0,1,5]], scores [[1,0,0,0,1]], k=1 -> 7.5
        let t = array![[10.0, 0.0, 0.0, 1.0, 5.0]];
        let s = array![[1.0, 0.0, 0.0, 0.0, 1.0]];
        let (d, c) = discounts(5, Some(1), 2.0);
        let disc = Discounts {
            discount: ndarray::ArrayView1::from(&d),
            cumsum: ndarray::ArrayView1::from(&c),
        };
        close(
            dcg_sum(&rows(&t, &s), &disc, false, false, &seq()).unwrap(),
            7.5,
        );
        close(
            dcg_sum(&rows(&t, &s), &disc, false, true, &seq()).unwrap(),
            0.75,
        );
        // ignore_ties: column 4 (gain 5) first
        close(
            dcg_sum(&rows(&t, &s), &disc, true, false, &seq()).unwrap(),
            5.0,
        );
        close(
            dcg_sum(&rows(&t, &s), &disc, true, true, &seq()).unwrap(),
            0.5,
        );
        // no ties, no k: 9.49...
        let s = array![[0.1, 0.2, 0.3, 4.0, 70.0]];
        let (d, c) = discounts(5, None, 2.0);
        let disc = Discounts {
            discount: ndarray::ArrayView1::from(&d),
            cumsum: ndarray::ArrayView1::from(&c),
        };
        let want = 5.0 + 1.0 / 3f64.log2() + 10.0 / 6f64.log2();
        close(
            dcg_sum(&rows(&t, &s), &disc, false, false, &seq()).unwrap(),
            want,
        );
        close(
            dcg_sum(&rows(&t, &s), &disc, true, false, &seq()).unwrap(),
            want,
        );
    }

    #[test]
    fn ndcg_zero_ideal_gives_zero() {
        let t = array![[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]];
        let (d, c) = discounts(3, None, 2.0);
        let disc = Discounts {
            discount: ndarray::ArrayView1::from(&d),
            cumsum: ndarray::ArrayView1::from(&c),
        };
        close(
            dcg_sum(&rows(&t, &t), &disc, false, true, &seq()).unwrap(),
            1.0,
        );
    }

    #[test]
    fn mask_drops_unknown_labels_and_weights_apply() {
        let t = array![[true, false, true, false]];
        let s = array![[0.9, 0.8, 0.1, 0.95]];
        let m = array![[true, true, true, false]];
        let w = array![2.0];
        let r = Rows {
            y_true: t.view(),
            y_score: s.view(),
            mask: Some(m.view()),
            sample_weight: Some(w.view()),
        };
        // known: rel 0.9, irr 0.8, rel 0.1 -> one bad pair of 2
        close(label_ranking_loss_sum(&r, &seq()).unwrap(), 2.0 * 0.5);
        close(coverage_sum(&r, &seq()).unwrap(), 2.0 * 3.0);
        close(one_error_sum(&r, &seq()).unwrap(), 0.0);
        close(lrap_sum(&r, &seq()).unwrap(), 2.0 * (1.0 + 2.0 / 3.0) / 2.0);
    }

    #[test]
    fn shape_and_nan_errors() {
        let t = array![[true, false]];
        let s = array![[0.1, 0.2, 0.3]];
        assert!(label_ranking_loss_sum(&rows(&t, &s), &seq()).is_err());
        let s = array![[0.1, f64::NAN]];
        assert!(lrap_sum(&rows(&t, &s), &seq()).is_err());
    }

    #[test]
    fn large_k_sort_path_matches_insertion() {
        // K = 100 uses the library sort; compare against pair counting.
        let k = 100;
        let t = Array2::from_shape_fn((3, k), |(i, j)| (i + j * 7) % 3 == 0);
        let s = Array2::from_shape_fn((3, k), |(i, j)| ((i * 31 + j * 17) % 11) as f64);
        let mut want = 0.0;
        for i in 0..3 {
            let (mut bad, mut np) = (0u64, 0u64);
            for p in 0..k {
                if t[[i, p]] {
                    np += 1;
                    for n in 0..k {
                        if !t[[i, n]] && s[[i, p]] <= s[[i, n]] {
                            bad += 1;
                        }
                    }
                }
            }
            want += bad as f64 / (np * (k as u64 - np)) as f64;
        }
        close(label_ranking_loss_sum(&rows(&t, &s), &seq()).unwrap(), want);
    }

    /// Run `f` once on the direct (counting) paths and once forcing the sort paths.
    fn both_paths(f: impl Fn() -> f64) -> (f64, f64) {
        let direct = f();
        FORCE_SORT.with(|x| x.set(true));
        let sorted = f();
        FORCE_SORT.with(|x| x.set(false));
        (direct, sorted)
    }

    #[test]
    fn direct_and_sorted_paths_agree() {
        // tie-heavy rows, graded gains incl. negatives, a mask
        let (n, k) = (200, 9);
        let t = Array2::from_shape_fn((n, k), |(i, j)| (i * 7 + j * 3) % 5 < 1 + i % 4);
        let g = Array2::from_shape_fn((n, k), |(i, j)| {
            if (i + j) % 3 == 0 {
                ((i * j) % 7) as f64 - 2.0
            } else {
                0.0
            }
        });
        let s = Array2::from_shape_fn((n, k), |(i, j)| {
            ((i * 13 + j * 5) % 4) as f64 - 0.0 * j as f64
        });
        let m = Array2::from_shape_fn((n, k), |(i, j)| (i + 2 * j) % 7 != 0);
        for mask in [None, Some(m.view())] {
            let r = Rows {
                y_true: t.view(),
                y_score: s.view(),
                mask,
                sample_weight: None,
            };
            let rg = Rows {
                y_true: g.view(),
                y_score: s.view(),
                mask,
                sample_weight: None,
            };
            for (a, b) in [
                both_paths(|| label_ranking_loss_sum(&r, &seq()).unwrap()),
                both_paths(|| lrap_sum(&r, &seq()).unwrap()),
            ] {
                close(a, b);
            }
            for kk in [None, Some(1), Some(3), Some(20)] {
                let (d, c) = discounts(k, kk, 2.0);
                let disc = Discounts {
                    discount: ndarray::ArrayView1::from(&d),
                    cumsum: ndarray::ArrayView1::from(&c),
                };
                for ignore_ties in [false, true] {
                    for normalize in [false, true] {
                        let (a, b) = both_paths(|| {
                            dcg_sum(&rg, &disc, ignore_ties, normalize, &seq()).unwrap()
                        });
                        close(a, b);
                    }
                }
            }
        }
    }

    #[test]
    fn report_matches_separate_kernels() {
        let (n, k) = (300, 11);
        let t = Array2::from_shape_fn((n, k), |(i, j)| (i * 7 + j * 3) % 9 < i % 10);
        let s = Array2::from_shape_fn((n, k), |(i, j)| ((i * 13 + j * 5) % (2 + i % 5)) as f64);
        let g = t.mapv(|x| if x { 1.0 } else { 0.0 });
        let m = Array2::from_shape_fn((n, k), |(i, j)| (i + 2 * j) % 7 != 0 || i % 3 == 0);
        let w = Array1::from_shape_fn(n, |i| (i % 4) as f64 * 0.5);
        let (d, c) = discounts(k, None, 2.0);
        let disc = Discounts {
            discount: ndarray::ArrayView1::from(&d),
            cumsum: ndarray::ArrayView1::from(&c),
        };
        for mask in [None, Some(m.view())] {
            for sample_weight in [None, Some(w.view())] {
                let r = Rows {
                    y_true: t.view(),
                    y_score: s.view(),
                    mask,
                    sample_weight,
                };
                let rg = Rows {
                    y_true: g.view(),
                    y_score: s.view(),
                    mask,
                    sample_weight,
                };
                let want = [
                    label_ranking_loss_sum(&r, &seq()).unwrap(),
                    lrap_sum(&r, &seq()).unwrap(),
                    coverage_sum(&r, &seq()).unwrap(),
                    one_error_sum(&r, &seq()).unwrap(),
                    dcg_sum(&rg, &disc, false, true, &seq()).unwrap(),
                ];
                let (got, got_sorted) = {
                    let a = report_sums(&r, &seq()).unwrap();
                    FORCE_SORT.with(|x| x.set(true));
                    let b = report_sums(&r, &seq()).unwrap();
                    FORCE_SORT.with(|x| x.set(false));
                    (a, b)
                };
                for (i, w) in want.iter().enumerate() {
                    assert_eq!(got.sums[i].to_bits(), w.to_bits(), "{i}");
                    close(got_sorted.sums[i], *w);
                }
                // The "relevant rows" one-error, row by row from its definition: the
                // row counts when it has a relevant known label; it is an error when
                // an irrelevant known label scores at least the best relevant one.
                let (mut errors, mut rows_rel) = (0.0, 0.0);
                for i in 0..n {
                    let known = |j: usize| mask.is_none_or(|m| m[[i, j]]);
                    let best = |rel: bool| {
                        (0..k)
                            .filter(|&j| known(j) && t[[i, j]] == rel)
                            .map(|j| s[[i, j]])
                            .fold(f64::NEG_INFINITY, f64::max)
                    };
                    let wi = sample_weight.map_or(1.0, |w| w[i]);
                    if (0..k).any(|j| known(j) && t[[i, j]]) {
                        rows_rel += wi;
                        let no_irrelevant = !(0..k).any(|j| known(j) && !t[[i, j]]);
                        if !no_irrelevant && best(false) >= best(true) {
                            errors += wi;
                        }
                    }
                }
                assert!(
                    errors > 0.0 && errors < rows_rel,
                    "the case tests both outcomes"
                );
                for g in [&got, &got_sorted] {
                    close(g.sums[5], errors);
                    close(g.sums[6], rows_rel);
                }
                let ws = sample_weight.map_or(n as f64, |w| w.sum());
                close(got.weight_sum, ws);
            }
        }
    }

    #[test]
    fn checked_pass_reports_what_it_saw() {
        let t = array![[0i64, 1, 0], [2, 0, 1]];
        let s = array![[0.1, f64::INFINITY, 0.3], [0.1, 0.2, 0.3]];
        let r = Rows {
            y_true: t.view(),
            y_score: s.view(),
            mask: None,
            sample_weight: None,
        };
        let (_, seen) = metric_sum_checked(&r, RankingMetric::Lrap, &seq()).unwrap();
        assert!(seen.score_nonfinite && seen.labels.more && !seen.true_negative);
        // Masking out the 2 and the inf: two distinct labels (0 from the unknowns too).
        let m = array![[true, false, true], [false, true, true]];
        let r = Rows {
            mask: Some(m.view()),
            ..r
        };
        let (_, seen) = metric_sum_checked(&r, RankingMetric::Lrap, &seq()).unwrap();
        assert!(!seen.score_nonfinite && !seen.labels.more);
        assert_eq!(seen.labels.values(), &[0, 1]);
        let tf = array![[0.0, -1.0, f64::NAN]];
        let sf = array![[0.1f32, 0.2, 0.3]];
        let r = Rows {
            y_true: tf.view(),
            y_score: sf.view(),
            mask: None,
            sample_weight: None,
        };
        let (_, seen) = metric_sum_checked(&r, RankingMetric::Coverage, &seq()).unwrap();
        assert!(seen.true_nonfinite && seen.true_negative && !seen.score_nonfinite);
    }

    #[test]
    fn thread_count_does_not_change_results() {
        let n = 50_000;
        let t = Array2::from_shape_fn((n, 7), |(i, j)| (i * 13 + j * 5) % 4 == 0);
        let s = Array2::from_shape_fn((n, 7), |(i, j)| ((i * 7 + j * 3) % 5) as f64 / 4.0);
        let a = lrap_sum(&rows(&t, &s), &Parallelism { threads: 1 }).unwrap();
        let b = lrap_sum(&rows(&t, &s), &Parallelism { threads: 2 }).unwrap();
        assert_eq!(a.to_bits(), b.to_bits());
    }
}
