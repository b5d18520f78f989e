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

use crate::error::Result;
pub use crate::indicator::Distinct;
use crate::parallel::Parallelism;
use crate::score::Score;

mod dcg;
mod label_metrics;
mod relevance;
mod report;
mod rows;
#[cfg(test)]
mod tests;

pub use dcg::{dcg_sum, discounts, Discounts};
pub use label_metrics::{coverage_sum, label_ranking_loss_sum, lrap_sum, one_error_sum};
pub use relevance::{Relevance, Seen};
pub use report::{report_sums, ReportSums, REPORT_KEYS};
pub use rows::{RowSum, Rows};

use dcg::*;
use label_metrics::*;
use rows::*;

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
