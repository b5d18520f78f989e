//! The row pass shared by every metric: [`Rows`] (the inputs), the per-block
//! buffer [`RowBuf`] that gathers a row's known entries (sorted by score key when a
//! metric needs the order; rows of at most `DIRECT_MAX` labels are read without a
//! sort), and the fixed row blocks whose sums are added in block order. The block
//! has an AVX2 build chosen at run time through [`crate::cpu::has_avx2`].

use std::ops::Range;

use ndarray::{ArrayView1, ArrayView2};

use super::*;
use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::score::Score;

/// One known label of a row: its score key, column index and gain.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub(super) key: u64,
    pub(super) idx: u32,
    pub(super) gain: f64,
}

impl Entry {
    #[inline]
    pub(super) fn relevant(&self) -> bool {
        self.gain != 0.0
    }
    #[inline]
    pub(super) fn order(&self) -> (u64, u32) {
        (self.key, self.idx)
    }
}

/// Rows up to this many known labels are sorted by insertion sort.
pub(super) const INSERTION_SORT_MAX: usize = 32;

/// Sort ascending by (key, column). The pair is unique, so the order is fully
/// determined; reading it backwards gives descending score with ties in descending
/// column order, which is what `np.argsort(s)[::-1]` gives when the sort is stable.
pub(super) fn sort_entries(e: &mut [Entry]) {
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
    pub(super) fn check(&self) -> Result<()> {
        let shape = self.y_true.dim();
        crate::check::grid(
            &self.y_score,
            shape,
            self.sample_weight.as_ref(),
            self.mask.as_ref(),
        )?;
        if shape.1 > u32::MAX as usize {
            return Err(MetricError::shape("too many labels per row"));
        }
        Ok(())
    }

    /// Weighted sum over rows of `row_metric(row buffer holding the row's known
    /// entries)`, and what the pass saw (see `Seen`). Never fails on values: NaN
    /// scores only make the sum meaningless, and `Seen` says so.
    pub(super) fn weighted_row_sum_checked<T, F>(
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
    pub(super) fn block<T, F>(
        &self,
        rows: Range<usize>,
        n_labels: usize,
        row_metric: &F,
    ) -> (T, Seen<R>)
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
    pub(super) unsafe fn block_avx2<T, F>(
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
    pub(super) fn weighted_row_sum<F>(&self, par: &Parallelism, row_metric: F) -> Result<f64>
    where
        F: Fn(&mut RowBuf) -> f64 + Sync + Send,
    {
        let (total, seen) = self.weighted_row_sum_checked(par, row_metric)?;
        if seen.score_nonfinite && self.known_score_is_nan() {
            return Err(MetricError::value("Input contains NaN."));
        }
        Ok(total)
    }

    pub(super) fn known_score_is_nan(&self) -> bool {
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
pub(super) const DIRECT_MAX: usize = 12;

#[cfg(test)]
thread_local! {
    pub(super) static FORCE_SORT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
pub(super) fn force_sort() -> bool {
    FORCE_SORT.with(|f| f.get())
}

#[cfg(not(test))]
#[inline]
pub(super) fn force_sort() -> bool {
    false
}

/// One row's known entries, in column order, in buffers reused across rows.
/// Positions in these buffers stand in for columns (same order).
pub(crate) struct RowBuf {
    pub(super) keys: Vec<u64>,
    pub(super) gains: Vec<f64>,
    pub(super) entries: Vec<Entry>,
    pub(super) scratch: Vec<f64>,
    /// Number of live entries in `keys`/`gains`.
    pub(super) len: usize,
    /// Bit j set = entry j relevant (non-zero gain), when the gather computed it
    /// (contiguous unmasked rows of at most 64 labels).
    pub(super) rel: Option<u64>,
    /// Force the sorting path (tests compare it with the direct path).
    pub(super) always_sort: bool,
}

impl RowBuf {
    pub(super) fn with_capacity(n: usize) -> Self {
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
    pub(super) fn gather<R: Relevance, S: Score>(
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

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn keys(&self) -> &[u64] {
        &self.keys[..self.len]
    }

    pub(super) fn gains(&self) -> &[f64] {
        &self.gains[..self.len]
    }

    pub(super) fn n_nonzero(&self) -> usize {
        match self.rel {
            Some(bits) => bits.count_ones() as usize,
            None => self.gains().iter().filter(|&&g| g != 0.0).count(),
        }
    }

    /// Calls `f(position)` for each relevant (non-zero gain) entry, in column order.
    #[inline]
    pub(super) fn for_each_relevant(&self, mut f: impl FnMut(usize)) {
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
    pub(super) fn sorted(&mut self) -> &[Entry] {
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
pub(super) fn for_each_group_desc(e: &[Entry], mut f: impl FnMut(&[Entry])) {
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
