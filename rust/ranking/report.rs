//! All seven label-ranking values of `multilabel_report` from one pass over the
//! rows ([`report_sums`]).

use ndarray::ArrayView1;

use super::*;
use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::score::Score;

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
pub(super) fn report_row(b: &mut RowBuf, d: &Discounts<'_>) -> [f64; 7] {
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
            g_sum += gj / same as f64 * d.ranks_sum(above, same);
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
            g_sum += tied_group_dcg(g, first, d);
            first += g.len();
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
