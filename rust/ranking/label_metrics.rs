//! The binary-relevance row metrics and their sums: label ranking loss, label
//! ranking average precision, coverage error and one-error.

use super::*;
use crate::error::Result;
use crate::parallel::Parallelism;
use crate::score::Score;

#[inline]
pub(super) fn ranking_loss_row(b: &mut RowBuf) -> f64 {
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
pub(super) fn lrap_row(b: &mut RowBuf) -> f64 {
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
pub(super) fn coverage_row(b: &mut RowBuf) -> f64 {
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
pub(super) fn one_error_row(b: &mut RowBuf) -> f64 {
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
