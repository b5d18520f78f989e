//! Discounted cumulative gain: the discount tables, tie-averaged and in-order
//! DCG, the ideal DCG of NDCG, and their sums.

use ndarray::ArrayView1;

use super::*;
use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::score::Score;

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
    pub(super) fn check(&self, n_labels: usize) -> Result<()> {
        if self.discount.len() < n_labels || self.cumsum.len() < n_labels {
            return Err(MetricError::shape(format!(
                "discount arrays have {} and {} entries, need at least {n_labels}",
                self.discount.len(),
                self.cumsum.len()
            )));
        }
        Ok(())
    }

    /// The sum of the discounts of ranks `first..first + len` (`len >= 1`), from the
    /// cumulative sums: what a group of `len` tied scores starting at rank `first`
    /// shares in tie-averaged DCG.
    #[inline]
    pub(super) fn ranks_sum(&self, first: usize, len: usize) -> f64 {
        let hi = self.cumsum[first + len - 1];
        if first == 0 {
            hi
        } else {
            hi - self.cumsum[first - 1]
        }
    }
}

/// McSherry–Najork tie-averaged DCG of ascending-sorted entries: each group of tied
/// scores gets its mean gain times the sum of the discounts of the ranks it occupies.
#[inline]
pub(super) fn dcg_tie_averaged(e: &[Entry], d: &Discounts<'_>) -> f64 {
    let mut first = 0usize;
    let mut dcg = 0.0f64;
    for_each_group_desc(e, |g| {
        dcg += tied_group_dcg(g, first, d);
        first += g.len();
    });
    dcg
}

/// The tie-averaged DCG of one non-empty group `g` of tied entries whose first
/// rank is `first`: the group's mean gain (summed from the highest column down)
/// times the sum of the discounts of ranks `first..first + g.len()`.
#[inline]
pub(super) fn tied_group_dcg(g: &[Entry], first: usize, d: &Discounts<'_>) -> f64 {
    let dsum = d.ranks_sum(first, g.len());
    let mut gain = 0.0f64;
    for x in g.iter().rev() {
        gain += x.gain;
    }
    gain / g.len() as f64 * dsum
}

/// DCG in the order of ascending-sorted entries read backwards (ties: higher column
/// first).
#[inline]
pub(super) fn dcg_in_order(e: &[Entry], d: &Discounts<'_>) -> f64 {
    e.iter()
        .rev()
        .enumerate()
        .map(|(r, x)| d.discount[r] * x.gain)
        .sum()
}

/// DCG of the ideal ranking (gains sorted decreasingly): positive gains take the
/// first ranks, negative gains the last ones, zeros (which add nothing) the middle.
#[inline]
pub(super) fn ideal_dcg(b: &mut RowBuf, d: &Discounts<'_>) -> f64 {
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
pub(super) fn dcg_direct(b: &RowBuf, d: &Discounts<'_>, ignore_ties: bool) -> f64 {
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
            dcg += gj / same as f64 * d.ranks_sum(above, same);
        }
    });
    dcg
}

#[inline]
pub(super) fn dcg_row(b: &mut RowBuf, d: &Discounts<'_>, ignore_ties: bool) -> f64 {
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
