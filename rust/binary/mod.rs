//! Binary metrics of multilabel problems: average precision, ROC AUC (full and
//! McClish partial) per label, micro-averaged and per row, and the raw confusion
//! counts behind `precision_recall_curve` / `roc_curve`.
//!
//! Every metric reduces one binary problem (scores, positive flags, optional
//! weights) to scikit-learn's curve: rows are sorted by score descending, ties keep
//! input order (NumPy's stable descending argsort), and each block of tied scores is
//! one operating point (`tps`/`fps` taken at the block's last row). Unweighted
//! counts are `u64`; weighted counts are sequential `f64` cumulative sums in that
//! order, like `np.cumsum`. The final sums use NumPy's pairwise summation, so results
//! agree with scikit-learn to the last bit or nearly so.
//!
//! Masks: a row whose mask entry is `false` is left out of that label's problem;
//! zero-weight rows are left out too (after the single-class check of ROC AUC, as in
//! scikit-learn). Undefined cases are reported through per-problem flags, so that the
//! caller (Python) emits scikit-learn's warnings once per call.
//!
//! Several computations give these values; [`dispatch`] alone chooses among them
//! ([`Path`] lists them, with where each lives and how exact it is), and it also
//! chooses the statistic of the bootstrap's AP distribution
//! (`crate::bootstrap::ap_distribution`), so every path choice of the crate's
//! ranking metrics is made in one function:
//!
//! - `curve`: the reference (stable sort with payload, scikit-learn's curve);
//! - `per_label`: unweighted labels from two sorted key runs per label;
//! - `streamed`: the same runs walked without buffers (4-byte keys, partial AUC);
//! - `count_walk`: unweighted large labels without a full sort;
//! - `micro` (+ `micro_scan`): the unweighted micro average in bounded memory;
//! - `per_row`: rows of a few labels through a sorting network.
//!
//! Invariants: the sort-based paths are bit-identical to the curve; `count_walk`
//! and `micro` differ from it by about 1e-16 relative (compensated AP sum, exact
//! Mann-Whitney area; docs/deviations.md); no value depends on the thread count.

use ndarray::{ArrayView1, ArrayView2};

use crate::error::{MetricError, Result};
use crate::labels::LabelGrid;
use crate::parallel::Parallelism;
use crate::score::Score;

mod count_walk;
mod curve;
mod micro;
mod micro_scan;
mod per_label;
mod per_row;
mod streamed;
#[cfg(test)]
mod tests;

pub use curve::{average_precision_from_curve, binary_counts, roc_auc_from_curve, Curve};
pub use per_row::{per_row, per_row_values, RowLabel};

// The computations share their building blocks (the gathered runs, the block
// walks, the bucket filter) within this module.

/// AP: no positive among the rows used ("recall is set to one"), AP = 0.
pub const FLAG_NO_POSITIVE: u8 = 1;
/// ROC AUC: only one class among the known rows (checked before zero weights are
/// dropped), AUC = NaN.
pub const FLAG_SINGLE_CLASS: u8 = 2;
/// ROC: no negative weight left after dropping zero-weight rows (fpr is NaN).
pub const FLAG_NO_NEGATIVE_LEFT: u8 = 4;
/// ROC: no positive weight left after dropping zero-weight rows (tpr is NaN).
pub const FLAG_NO_POSITIVE_LEFT: u8 = 8;
/// The problem has no known rows at all (mask all false): value NaN.
pub const FLAG_EMPTY: u8 = 16;
/// Known rows exist but all their weights are zero: scikit-learn raises
/// "Sample weights must contain at least one non-zero number."
pub const FLAG_ALL_ZERO_WEIGHT: u8 = 32;
/// ROC: fpr neither increasing nor decreasing (only with negative weights);
/// scikit-learn's `auc` raises.
pub const FLAG_NOT_MONOTONIC: u8 = 64;
/// ROC with `max_fpr`: fewer than two points below `max_fpr` (fpr is NaN), where
/// scikit-learn's `auc` raises "At least 2 points are needed ...".
pub const FLAG_TOO_FEW_POINTS: u8 = 128;

/// Which binary metric to compute per problem.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// Non-interpolated average precision `sum_n (R_n - R_{n-1}) P_n`.
    AveragePrecision,
    /// Area under the ROC curve; `max_fpr` in (0, 1) gives McClish's standardized
    /// partial AUC.
    RocAuc { max_fpr: Option<f64> },
}

impl Metric {
    /// Whether it is AP, and the `max_fpr` of a ROC AUC.
    pub(crate) fn ap_max_fpr(self) -> (bool, Option<f64>) {
        match self {
            Metric::AveragePrecision => (true, None),
            Metric::RocAuc { max_fpr } => (false, max_fpr),
        }
    }
}

/// One metric value plus the flags that explain undefined cases.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricValue {
    pub value: f64,
    pub flags: u8,
}

// ------------------------------------------------------------------ dispatch

/// What an entry point computes: one averaging of a binary metric, or the
/// bootstrap's AP distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Averaging {
    /// One problem per label (column).
    PerLabel,
    /// All known cells as one problem.
    Micro,
    /// One problem per row (`average="samples"`).
    PerRow,
    /// The bootstrap distribution of AP (any averaging, chosen inside the
    /// statistic): which statistic runs the resamples. `mixed_dtypes`: the
    /// systems' score matrices are not all of one dtype.
    BootstrapAp { mixed_dtypes: bool },
}

/// One gathered problem: its known rows by class and whether its keys are 4 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gathered {
    pub(crate) n_pos: usize,
    pub(crate) n_neg: usize,
    pub(crate) narrow: bool,
}

/// What is known when [`dispatch`] is asked: at an entry point (`gathered: None`),
/// then again for each problem once its keys are gathered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Input {
    pub(crate) averaging: Averaging,
    pub(crate) weighted: bool,
    /// `max_fpr` of a ROC AUC (`None`: full area, and for AP).
    pub(crate) max_fpr: Option<f64>,
    /// Micro: whether the gathered cells fit the memory budget ([`micro::micro_cap`]).
    pub(crate) fits: bool,
    pub(crate) gathered: Option<Gathered>,
}

impl Input {
    /// A joint AP and full ROC AUC call before any gathering: only the averaging and
    /// whether there are weights can send it to the reference curve.
    fn ap_auc(averaging: Averaging, weighted: bool) -> Self {
        Self::one(averaging, weighted, None)
    }

    /// A call of one metric (`max_fpr` of a ROC AUC) before any gathering.
    pub(crate) fn one(averaging: Averaging, weighted: bool, max_fpr: Option<f64>) -> Self {
        Input {
            averaging,
            weighted,
            max_fpr,
            fits: true,
            gathered: None,
        }
    }
}

/// The computations, each with where it lives and how exact it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Path {
    /// `curve`: gather with weights and row payload, stable sort, scikit-learn's
    /// curve and formulas. Bit for bit scikit-learn.
    Curve,
    /// Gather the problem's keys into two runs (positives, negatives), then ask
    /// again with [`Input::gathered`] set.
    Gather,
    /// `micro`: histogram the keys, stream the cells in bucket groups of bounded
    /// size, walk each bucket. ~1e-16 relative.
    MicroStream,
    /// `per_row`: each row's keys through a sorting network, block counts.
    /// Bit for bit the curve.
    RowNetwork,
    /// `streamed::partial_auc_streamed`: the McClish partial area from the
    /// sorted runs, walking only the curve below `max_fpr`. Bit for bit.
    PartialRuns,
    /// `count_walk`: partition both runs together, refining only buckets that
    /// hold positives; no full sort. ~1e-16 relative.
    CountWalk,
    /// `per_label::sorted_label_values`: sort both runs (8-byte keys), block
    /// counts and terms in the sort buffers. Bit for bit.
    SortedRuns,
    /// `streamed::label_values_streamed`: sort both runs (4-byte keys), counts
    /// and terms streamed (no room for them). Bit for bit.
    NarrowRuns,
    /// `bootstrap::weighted_ap::ApStatistic`, one per system: each resample walks
    /// every label's sorted rows with `count * sample_weight` weights.
    BootstrapWeighted,
    /// `bootstrap::bucket_ap::BucketAp`, one for all systems (one dtype, or no
    /// system): integer draw counts histogrammed, the passes shared. Bit for bit
    /// the weighted walk.
    BootstrapBucketShared,
    /// `bootstrap::bucket_ap::BucketAp`, one per system (a statistic holds one key
    /// type). Bit for bit the weighted walk.
    BootstrapBucketEach,
}

/// Known rows (both classes present) from which a label takes the count walk:
/// below it the sorts are as fast and give bit-identical values.
pub(crate) const WALK_MIN: usize = 1 << 17;

/// Choose the computation for `x`; the only place that does.
///
/// | input | path | why |
/// |---|---|---|
/// | bootstrap AP, weights | `BootstrapWeighted` | `f64` weights per resample |
/// | bootstrap AP, one dtype | `BootstrapBucketShared` | integer counts, shared passes |
/// | bootstrap AP, mixed dtypes | `BootstrapBucketEach` | one key type per statistic |
/// | any weights | `Curve` | weighted counts are `np.cumsum` in row order |
/// | per row, partial AUC | `Curve` | the network gives full-area counts only |
/// | per row, AP or full AUC | `RowNetwork` | few labels per row: no sort call |
/// | micro, any `max_fpr` | `Curve` | the stream has no partial area |
/// | micro, cells over the budget | `MicroStream` | 16 bytes per cell would not fit |
/// | otherwise, not gathered | `Gather` | the choice depends on the counts |
/// | gathered, partial AUC | `PartialRuns` | stops at `max_fpr` |
/// | gathered, both classes, >= `WALK_MIN` rows | `CountWalk` | no full sort |
/// | gathered, 4-byte keys | `NarrowRuns` | 8 bytes per row in all |
/// | gathered, 8-byte keys | `SortedRuns` | bit for bit, counts in place |
///
/// A partial AUC is a `max_fpr` other than `None` and `1.0` (scikit-learn's full
/// area); the micro average sends `Some(1.0)` to the curve too, which gives the
/// same area.
pub(crate) fn dispatch(x: &Input) -> Path {
    let partial = x.max_fpr.is_some_and(|v| v != 1.0);
    match (x.averaging, x.gathered) {
        (Averaging::BootstrapAp { .. }, _) if x.weighted => Path::BootstrapWeighted,
        (Averaging::BootstrapAp { mixed_dtypes }, _) if mixed_dtypes => Path::BootstrapBucketEach,
        (Averaging::BootstrapAp { .. }, _) => Path::BootstrapBucketShared,
        _ if x.weighted => Path::Curve,
        (Averaging::PerRow, _) if partial => Path::Curve,
        (Averaging::PerRow, _) => Path::RowNetwork,
        (Averaging::Micro, None) if x.max_fpr.is_some() => Path::Curve,
        (Averaging::Micro, None) if !x.fits => Path::MicroStream,
        (_, None) => Path::Gather,
        (_, Some(_)) if partial => Path::PartialRuns,
        (_, Some(g)) if g.n_pos > 0 && g.n_neg > 0 && g.n_pos + g.n_neg >= WALK_MIN => {
            Path::CountWalk
        }
        (_, Some(g)) if g.narrow => Path::NarrowRuns,
        (_, Some(_)) => Path::SortedRuns,
    }
}

/// Too many rows for the 31-bit row payload of the gathered problems.
pub(crate) fn too_many_items() -> MetricError {
    MetricError::value("too many elements in one binary problem (limit 2**31 - 1)")
}

// ------------------------------------------------------------------ entry points

/// Average precision and full ROC AUC of every label from one sort per label.
///
/// Same definitions, tie rule and masks as [`per_label`] with
/// `Metric::AveragePrecision` and `Metric::RocAuc { max_fpr: None }`; the values are
/// identical to those two calls. With weights it falls back to them.
pub fn per_label_ap_auc<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
    par: &Parallelism,
) -> Result<(Vec<MetricValue>, Vec<MetricValue>)> {
    if dispatch(&Input::ap_auc(Averaging::PerLabel, weight.is_some())) == Path::Curve {
        return curve_ap_auc(|m| per_label(y_score, y_pos, weight, mask, m, par));
    }
    crate::check::grid(&y_score, y_pos.dim(), None, mask.as_ref())?;
    let both = per_label::unweighted_per_label(y_score, &y_pos, mask, true, true, None, par)?;
    Ok(both.into_iter().unzip())
}
/// The metric for each column (label) of a multilabel problem.
///
/// Label `j` uses the rows where `mask[i, j]` is true (all rows without a mask) and
/// `weight[i] != 0`; it is scikit-learn's binary metric on that column restricted
/// to those rows. Parallel over labels; each label is computed sequentially.
pub fn per_label<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
    par: &Parallelism,
) -> Result<Vec<MetricValue>> {
    crate::check::grid(&y_score, y_pos.dim(), weight.as_ref(), mask.as_ref())?;
    let (ap, max_fpr) = metric.ap_max_fpr();
    if dispatch(&Input::one(Averaging::PerLabel, weight.is_some(), max_fpr)) != Path::Curve {
        let v = per_label::unweighted_per_label(y_score, &y_pos, mask, ap, !ap, max_fpr, par)?;
        return Ok(v.into_iter().map(|(a, b)| if ap { a } else { b }).collect());
    }
    let (n, k) = y_score.dim();
    let results = par.map(k, n.saturating_mul(k), |j| {
        let s = y_score.column(j);
        let mut p = curve::Problem::with_capacity(n, weight.is_some());
        for i in 0..n {
            let known = mask.as_ref().is_none_or(|m| m[[i, j]]);
            if known {
                let w = weight.as_ref().map_or(1.0, |w| w[i]);
                p.push(s[i], y_pos.get(i, j), w)?;
            }
        }
        p.evaluate(metric)
    })?;
    results.into_iter().collect()
}

/// Micro average: all known cells as one binary problem, raveled row-major, each
/// cell weighted by its row's weight (scikit-learn repeats the weights per label).
pub fn micro<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
    metric: Metric,
    par: &Parallelism,
) -> Result<MetricValue> {
    crate::check::grid(&y_score, y_pos.dim(), weight.as_ref(), mask.as_ref())?;
    let (ap, max_fpr) = metric.ap_max_fpr();
    if dispatch(&Input::one(Averaging::Micro, weight.is_some(), max_fpr)) != Path::Curve {
        let v = micro_unweighted(y_score, y_pos, mask, ap, !ap, par)?;
        return Ok(if ap { v.0 } else { v.1 });
    }
    let (n, k) = y_score.dim();
    let mut p = curve::Problem::with_capacity(n.saturating_mul(k), weight.is_some());
    for i in 0..n {
        let w = weight.as_ref().map_or(1.0, |w| w[i]);
        for j in 0..k {
            if mask.as_ref().is_none_or(|m| m[[i, j]]) {
                p.push(y_score[[i, j]], y_pos.get(i, j), w)?;
            }
        }
    }
    p.evaluate(metric)
}

fn micro_unweighted<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    mask: Option<ArrayView2<bool>>,
    ap: bool,
    auc: bool,
    par: &Parallelism,
) -> Result<(MetricValue, MetricValue)> {
    if y_score.len() >= curve::MAX_ITEMS {
        return Err(too_many_items());
    }
    let cells = y_score.len();
    let cap = micro::micro_cap(cells, std::mem::size_of::<S>());
    let input = Input {
        averaging: Averaging::Micro,
        weighted: false,
        max_fpr: None,
        fits: cap >= cells,
        gathered: None,
    };
    if dispatch(&input) == Path::MicroStream {
        return micro::micro_streaming(y_score, y_pos, mask, cap, par);
    }
    let mut buf = per_label::SplitKeys::new();
    buf.load_all(y_score, &y_pos, mask.as_ref());
    Ok(per_label::label_values(&mut buf, ap, auc))
}

/// Micro-averaged average precision and full ROC AUC from one pass: the values of
/// [`micro`] with `Metric::AveragePrecision` and `Metric::RocAuc { max_fpr: None }`.
pub fn micro_ap_auc<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
    par: &Parallelism,
) -> Result<(MetricValue, MetricValue)> {
    crate::check::grid(&y_score, y_pos.dim(), weight.as_ref(), mask.as_ref())?;
    if dispatch(&Input::ap_auc(Averaging::Micro, weight.is_some())) == Path::Curve {
        return curve_ap_auc(|m| micro(y_score, y_pos, weight, mask, m, par));
    }
    micro_unweighted(y_score, y_pos, mask, true, true, par)
}

/// AP and full ROC AUC through the reference curve, one call each: the path of
/// [`per_label_ap_auc`] and [`micro_ap_auc`] when [`dispatch`] sends them to the curve.
fn curve_ap_auc<T>(one: impl Fn(Metric) -> Result<T>) -> Result<(T, T)> {
    Ok((
        one(Metric::AveragePrecision)?,
        one(Metric::RocAuc { max_fpr: None })?,
    ))
}

/// Per-label support: the (weighted) number of positives among known rows, summed
/// in row order like `(y_true * w[:, None]).sum(0)`.
pub fn support<L: LabelGrid>(
    y_pos: L,
    weight: Option<ArrayView1<f64>>,
    mask: Option<ArrayView2<bool>>,
) -> Result<Vec<f64>> {
    if let Some(m) = mask.as_ref() {
        crate::check::mask_shape(m.dim(), y_pos.dim())?;
    }
    if let Some(w) = weight.as_ref() {
        crate::check::same_length(y_pos.dim().0, w.len())?;
    }
    let (n, k) = y_pos.dim();
    let mut out = vec![0.0f64; k];
    for i in 0..n {
        let w = weight.as_ref().map_or(1.0, |w| w[i]);
        for (j, o) in out.iter_mut().enumerate() {
            if mask.as_ref().is_none_or(|m| m[[i, j]]) {
                *o += if y_pos.get(i, j) { w } else { 0.0 * w };
            }
        }
    }
    Ok(out)
}
