//! Per-row AP and ROC AUC (`average="samples"`): each row is a binary problem over its known labels.
//!
//! A row is a binary problem over its (typically ~15) known labels. As for the
//! per-label fast path, AP and full ROC AUC only need the cumulative (positives, rows)
//! counts at the end of each tie block in descending score order, so the row's keys
//! are sorted *without payload*: up to 16 cells by a branch-free sorting network
//! (Batcher's odd-even merge sort, padded with `u64::MAX`), longer rows by
//! `sort_unstable`. The sorted keys give the blocks and their row counts; each
//! positive (there are few per row) then adds one to the block holding its key,
//! found by a branch-free count of the smaller block keys. All buffers are allocated
//! once per block of rows. Values are bit-identical to the general path: the same
//! block counts go through the same formulas as for the per-label fast path.

use ndarray::{ArrayView1, ArrayView2};

use super::curve::{Problem, MAX_ITEMS};
use super::per_label::{ap_blocks, auc_blocks};
use super::{
    dispatch, too_many_items, Averaging, Input, Metric, MetricValue, Path, FLAG_EMPTY,
    FLAG_SINGLE_CLASS,
};
use crate::error::Result;
use crate::labels::LabelGrid;
use crate::parallel::{map_in_pool, Parallelism, ROW_BLOCK};
use crate::score::Score;

/// Batcher's odd-even merge sort network for 16 inputs (63 compare-exchanges),
/// written out so that the array lives in registers.
#[inline(always)]
pub(super) fn sort16(a: &mut [u64; 16]) {
    #[inline(always)]
    fn ce(a: &mut [u64; 16], i: usize, j: usize) {
        let (x, y) = (a[i], a[j]);
        a[i] = x.min(y);
        a[j] = x.max(y);
    }
    ce(a, 0, 1);
    ce(a, 2, 3);
    ce(a, 0, 2);
    ce(a, 1, 3);
    ce(a, 1, 2);
    ce(a, 4, 5);
    ce(a, 6, 7);
    ce(a, 4, 6);
    ce(a, 5, 7);
    ce(a, 5, 6);
    ce(a, 0, 4);
    ce(a, 2, 6);
    ce(a, 2, 4);
    ce(a, 1, 5);
    ce(a, 3, 7);
    ce(a, 3, 5);
    ce(a, 1, 2);
    ce(a, 3, 4);
    ce(a, 5, 6);
    ce(a, 8, 9);
    ce(a, 10, 11);
    ce(a, 8, 10);
    ce(a, 9, 11);
    ce(a, 9, 10);
    ce(a, 12, 13);
    ce(a, 14, 15);
    ce(a, 12, 14);
    ce(a, 13, 15);
    ce(a, 13, 14);
    ce(a, 8, 12);
    ce(a, 10, 14);
    ce(a, 10, 12);
    ce(a, 9, 13);
    ce(a, 11, 15);
    ce(a, 11, 13);
    ce(a, 9, 10);
    ce(a, 11, 12);
    ce(a, 13, 14);
    ce(a, 0, 8);
    ce(a, 4, 12);
    ce(a, 4, 8);
    ce(a, 2, 10);
    ce(a, 6, 14);
    ce(a, 6, 10);
    ce(a, 2, 4);
    ce(a, 6, 8);
    ce(a, 10, 12);
    ce(a, 1, 9);
    ce(a, 5, 13);
    ce(a, 5, 9);
    ce(a, 3, 11);
    ce(a, 7, 15);
    ce(a, 7, 11);
    ce(a, 3, 5);
    ce(a, 7, 9);
    ce(a, 11, 13);
    ce(a, 1, 2);
    ce(a, 3, 4);
    ce(a, 5, 6);
    ce(a, 7, 8);
    ce(a, 9, 10);
    ce(a, 11, 12);
    ce(a, 13, 14);
}

/// Per-block scratch of the per-row fast path; the loaded row occupies the first
/// `n` keys (negated: ascending = descending score) and the first `np` entries of
/// `pkeys` (the positives' keys).
pub(super) struct RowScratch {
    pub(super) n: usize,
    pub(super) np: usize,
    pub(super) keys: Vec<u64>,
    pub(super) pkeys: Vec<u64>,
    pub(super) bkeys: Vec<u64>,
    pub(super) rows: Vec<u64>,
    pub(super) pcount: Vec<u64>,
    pub(super) cum: Vec<u64>,
    pub(super) terms: Vec<u64>,
}

impl RowScratch {
    pub(super) fn new(k: usize) -> Self {
        let kk = k.max(16);
        RowScratch {
            n: 0,
            np: 0,
            keys: vec![0; kk],
            pkeys: vec![0; k],
            bkeys: vec![0; k],
            rows: vec![0; k],
            pcount: vec![0; k],
            cum: vec![0; k],
            terms: vec![0; k],
        }
    }

    /// Load the known cells of one row (branch-free: every cell is written at the
    /// cursors, which advance for known cells / known positives only).
    #[inline]
    pub(super) fn load<S: Score, T: RowLabel>(
        &mut self,
        s: ArrayView1<S>,
        y: ArrayView1<T>,
        m: Option<ArrayView1<bool>>,
    ) {
        let (mut c, mut cp) = (0usize, 0usize);
        let (keys, pkeys) = (&mut self.keys, &mut self.pkeys);
        let mut put = |v: S, t: T, known: bool| {
            let t = t.is_positive();
            let key = !v.key();
            if let Some(x) = keys.get_mut(c) {
                *x = key;
            }
            if let Some(x) = pkeys.get_mut(cp) {
                *x = key;
            }
            c += usize::from(known);
            cp += usize::from(known & t);
        };
        match (m, s.as_slice(), y.as_slice()) {
            (None, Some(s), Some(y)) => {
                for (&v, &t) in s.iter().zip(y.iter()) {
                    put(v, t, true);
                }
            }
            (None, _, _) => ndarray::Zip::from(s)
                .and(y)
                .for_each(|&v, &t| put(v, t, true)),
            (Some(m), _, _) => ndarray::Zip::from(s)
                .and(y)
                .and(m)
                .for_each(|&v, &t, &k| put(v, t, k)),
        }
        self.n = c;
        self.np = cp;
    }

    /// Block-end cumulative counts `(positives << 32) | rows` of the loaded row in
    /// descending score order, into `self.cum`; returns the number of blocks.
    pub(super) fn blocks(&mut self) -> usize {
        let n = self.n.min(self.keys.len());
        if n <= 16 {
            // u64::MAX padding sorts last; equal keys are interchangeable.
            let mut a = [u64::MAX; 16];
            for (x, &k) in a.iter_mut().zip(self.keys.iter().take(n)) {
                *x = k;
            }
            sort16(&mut a);
            for (x, &k) in self.keys.iter_mut().zip(a.iter()).take(n) {
                *x = k;
            }
        } else {
            self.keys[..n].sort_unstable();
        }
        let keys = &self.keys[..n];
        // Blocks: key and row count at each block end.
        let mut t = 0usize;
        for (r, &k) in keys.iter().enumerate() {
            let end = keys.get(r + 1).is_none_or(|&nx| nx != k);
            if let (Some(b), Some(w)) = (self.bkeys.get_mut(t), self.rows.get_mut(t)) {
                *b = k;
                *w = r as u64 + 1;
            }
            t += usize::from(end);
        }
        let t = t.min(self.bkeys.len());
        let (bkeys, pcount) = (&self.bkeys[..t], &mut self.pcount[..t]);
        pcount.fill(0);
        for &q in &self.pkeys[..self.np.min(self.pkeys.len())] {
            let b: usize = bkeys.iter().map(|&bk| usize::from(bk < q)).sum();
            if let Some(c) = pcount.get_mut(b) {
                *c += 1;
            }
        }
        let mut cp = 0u64;
        for ((o, &pc), &w) in self.cum.iter_mut().zip(pcount.iter()).zip(self.rows.iter()) {
            cp += pc;
            *o = (cp << 32) | w;
        }
        t
    }
}

/// A `y_true` element type the per-row kernels read in place: positive means
/// `== 1` (`true` for bool), scikit-learn's `y_true == pos_label` with the
/// multilabel `pos_label = 1`. Reading int64 labels directly spares the caller a
/// bool copy of the whole matrix.
pub trait RowLabel: Copy + Send + Sync {
    fn is_positive(self) -> bool;
}

impl RowLabel for bool {
    #[inline(always)]
    fn is_positive(self) -> bool {
        self
    }
}

impl RowLabel for i64 {
    #[inline(always)]
    fn is_positive(self) -> bool {
        self == 1
    }
}

impl RowLabel for i32 {
    #[inline(always)]
    fn is_positive(self) -> bool {
        self == 1
    }
}

/// Unweighted per-row AP (`ap`) or full ROC AUC (`!ap`) of the rows `start..`,
/// one per element of `values`/`flags`; see the section comment.
pub(super) fn per_row_unweighted_block<S: Score, T: RowLabel>(
    y_score: &ArrayView2<S>,
    y_true: &ArrayView2<T>,
    mask: Option<&ArrayView2<bool>>,
    ap: bool,
    start: usize,
    values: &mut [f64],
    flags: &mut [u8],
) {
    let k = y_score.ncols();
    let empty = MetricValue {
        value: f64::NAN,
        flags: if ap {
            FLAG_EMPTY
        } else {
            FLAG_EMPTY | FLAG_SINGLE_CLASS
        },
    };
    let mut sc = RowScratch::new(k);
    for (i, (v, f)) in (start..).zip(values.iter_mut().zip(flags.iter_mut())) {
        sc.load(y_score.row(i), y_true.row(i), mask.map(|m| m.row(i)));
        let nk = sc.n;
        let r = if nk == 0 {
            empty
        } else {
            let np = sc.np as u64;
            let t = sc.blocks();
            let cum = &sc.cum[..t.min(sc.cum.len())];
            if ap {
                ap_blocks(cum, np, &mut sc.terms)
            } else {
                auc_blocks(cum, np, nk as u64 - np, &mut sc.terms)
            }
        };
        *v = r.value;
        *f = r.flags;
    }
}

/// [`per_row_values`] through the general (sort + curve) path for the rows
/// `start..`: partial ROC AUC, and the reference of the fast path in the tests.
pub(super) fn per_row_general_block<S: Score, T: RowLabel>(
    y_score: &ArrayView2<S>,
    y_true: &ArrayView2<T>,
    mask: Option<&ArrayView2<bool>>,
    metric: Metric,
    start: usize,
    values: &mut [f64],
    flags: &mut [u8],
) -> Result<()> {
    let k = y_score.ncols();
    let mut p = Problem::with_capacity(k, false);
    for (i, (v, f)) in (start..).zip(values.iter_mut().zip(flags.iter_mut())) {
        p.clear();
        for j in 0..k {
            if mask.is_none_or(|m| m[[i, j]]) {
                p.push(y_score[[i, j]], y_true[[i, j]].is_positive(), 1.0)?;
            }
        }
        let r = p.evaluate(metric)?;
        *v = r.value;
        *f = r.flags;
    }
    Ok(())
}

/// Samples average, per row: the unweighted binary metric over the row's known
/// labels (scikit-learn's `average="samples"` uses `sample_weight` only to average
/// the row values, which the caller does), as `(values, flags)`, one per row.
///
/// `y_true` is read in place (positive = `== 1`, see [`RowLabel`]). The two output
/// vectors are the only allocations of the size of the input: fixed blocks of
/// `ROW_BLOCK` rows write their own slices, in parallel, so the result does not
/// depend on the thread count and nothing is gathered or copied afterwards.
pub fn per_row_values<S: Score, T: RowLabel>(
    y_score: ArrayView2<S>,
    y_true: ArrayView2<T>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
    par: &Parallelism,
) -> Result<(Vec<f64>, Vec<u8>)> {
    let (n, k) = y_score.dim();
    crate::check::same_shape(y_true.dim(), (n, k))?;
    if let Some(m) = mask.as_ref() {
        crate::check::mask_shape(m.dim(), (n, k))?;
    }
    let (ap, max_fpr) = metric.ap_max_fpr();
    let path = dispatch(&Input::one(Averaging::PerRow, false, max_fpr));
    if path == Path::RowNetwork && k >= MAX_ITEMS {
        return Err(too_many_items());
    }
    let mut values = vec![0.0f64; n];
    let mut flags = vec![0u8; n];
    let block = |b: usize, vs: &mut [f64], fs: &mut [u8]| -> Result<()> {
        let start = b * ROW_BLOCK;
        match path {
            Path::RowNetwork => {
                per_row_unweighted_block(&y_score, &y_true, mask.as_ref(), ap, start, vs, fs);
                Ok(())
            }
            // `Path::Curve`, the other path of a row.
            _ => per_row_general_block(&y_score, &y_true, mask.as_ref(), metric, start, vs, fs),
        }
    };
    let chunks = values
        .chunks_mut(ROW_BLOCK)
        .zip(flags.chunks_mut(ROW_BLOCK))
        .enumerate();
    let results: Vec<Result<()>> = if par.is_parallel_for(n.saturating_mul(k)) && n > ROW_BLOCK {
        let work: Vec<_> = chunks.collect();
        par.install(|| map_in_pool(work, |(b, (vs, fs))| block(b, vs, fs)))?
    } else {
        chunks.map(|(b, (vs, fs))| block(b, vs, fs)).collect()
    };
    // The first error in row order, whatever the thread count.
    results.into_iter().collect::<Result<()>>()?;
    Ok((values, flags))
}

/// [`per_row_values`] through the curve of each row, whatever [`dispatch`]
/// chooses: the reference of the sorting network in the tests.
#[cfg(test)]
pub(super) fn per_row_values_curve<S: Score, T: RowLabel>(
    y_score: ArrayView2<S>,
    y_true: ArrayView2<T>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
) -> Result<(Vec<f64>, Vec<u8>)> {
    let n = y_score.nrows();
    let mut values = vec![0.0f64; n];
    let mut flags = vec![0u8; n];
    per_row_general_block(
        &y_score,
        &y_true,
        mask.as_ref(),
        metric,
        0,
        &mut values,
        &mut flags,
    )?;
    Ok((values, flags))
}

/// [`per_row_values`] as one `MetricValue` per row, for a bool `y_true`.
pub fn per_row<S: Score>(
    y_score: ArrayView2<S>,
    y_pos: ArrayView2<bool>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
    par: &Parallelism,
) -> Result<Vec<MetricValue>> {
    crate::check::grid(&y_score, y_pos.dim(), None, mask.as_ref())?;
    let (values, flags) = per_row_values(y_score, y_pos, mask, metric, par)?;
    Ok(zip_values(values, flags))
}

pub(super) fn zip_values(values: Vec<f64>, flags: Vec<u8>) -> Vec<MetricValue> {
    values
        .into_iter()
        .zip(flags)
        .map(|(value, flags)| MetricValue { value, flags })
        .collect()
}

/// [`per_row`] through the curve of each row ([`per_row_values_curve`]).
#[cfg(test)]
pub(super) fn per_row_general<S: Score>(
    y_score: ArrayView2<S>,
    y_pos: ArrayView2<bool>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
) -> Result<Vec<MetricValue>> {
    let (values, flags) = per_row_values_curve(y_score, y_pos, mask, metric)?;
    Ok(zip_values(values, flags))
}
