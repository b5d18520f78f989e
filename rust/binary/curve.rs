//! The reference computation: one binary problem gathered with its weights,
//! sorted stably by descending score with its row payload, and reduced to
//! scikit-learn's curve (`tps`/`fps` at the last row of each tie block), from which
//! AP and ROC AUC (full or McClish partial) follow with scikit-learn's formulas and
//! NumPy's pairwise sums. Every weighted call runs here, and so do
//! `binary_counts` (the counts behind `precision_recall_curve` / `roc_curve`) and the
//! per-row general path.

use ndarray::ArrayView1;

use super::{
    too_many_items, Metric, MetricValue, FLAG_ALL_ZERO_WEIGHT, FLAG_EMPTY, FLAG_NOT_MONOTONIC,
    FLAG_NO_NEGATIVE_LEFT, FLAG_NO_POSITIVE, FLAG_NO_POSITIVE_LEFT, FLAG_SINGLE_CLASS,
    FLAG_TOO_FEW_POINTS,
};
use crate::error::{MetricError, Result};
use crate::numeric::pairwise_sum;
use crate::score::Score;
use crate::sort::sort_by_key_stable;

/// Distinct-threshold confusion counts, in descending score order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Curve {
    /// Cumulative (weighted) positives at each distinct threshold.
    pub tps: Vec<f64>,
    /// Cumulative (weighted) negatives at each distinct threshold.
    pub fps: Vec<f64>,
    /// For each threshold, the gathered position of the block's last row.
    pub last: Vec<u32>,
}

pub(super) const POS_BIT: u32 = 1 << 31;
pub(super) const MAX_ITEMS: usize = (POS_BIT - 1) as usize;

/// One binary problem with the left-out rows removed, ready to sort.
/// `keys` are negated order keys (ascending sort = descending score); the payload is
/// the gathered position with the positive flag in the top bit.
#[derive(Default)]
pub(super) struct Problem {
    pub(super) keys: Vec<u64>,
    pub(super) pay: Vec<u32>,
    pub(super) weights: Option<Vec<f64>>,
    /// Known rows (before the zero-weight filter), split by class.
    pub(super) known_pos: u64,
    pub(super) known_neg: u64,
}

impl Problem {
    pub(super) fn with_capacity(n: usize, weighted: bool) -> Self {
        Problem {
            keys: Vec::with_capacity(n),
            pay: Vec::with_capacity(n),
            weights: if weighted {
                Some(Vec::with_capacity(n))
            } else {
                None
            },
            known_pos: 0,
            known_neg: 0,
        }
    }

    pub(super) fn clear(&mut self) {
        self.keys.clear();
        self.pay.clear();
        if let Some(w) = self.weights.as_mut() {
            w.clear();
        }
        self.known_pos = 0;
        self.known_neg = 0;
    }

    /// Add a known row; rows with weight 0 are counted (for the single-class check)
    /// but not kept.
    #[inline]
    pub(super) fn push<S: Score>(&mut self, score: S, positive: bool, weight: f64) -> Result<()> {
        if positive {
            self.known_pos += 1;
        } else {
            self.known_neg += 1;
        }
        if weight == 0.0 {
            return Ok(());
        }
        let pos = self.keys.len();
        if pos >= MAX_ITEMS {
            return Err(too_many_items());
        }
        self.keys.push(!score.key());
        self.pay
            .push(pos as u32 | if positive { POS_BIT } else { 0 });
        if let Some(w) = self.weights.as_mut() {
            w.push(weight);
        }
        Ok(())
    }

    pub(super) fn n_known(&self) -> u64 {
        self.known_pos + self.known_neg
    }

    /// Sort and build the curve (consumes the sort order, keeps buffers).
    pub(super) fn curve(&mut self) -> Curve {
        sort_by_key_stable(&mut self.keys, &mut self.pay);
        match &self.weights {
            None => walk_unweighted(&self.keys, &self.pay),
            Some(w) => walk_weighted(&self.keys, &self.pay, w),
        }
    }

    pub(super) fn evaluate(&mut self, metric: Metric) -> Result<MetricValue> {
        if self.n_known() == 0 {
            return Ok(MetricValue {
                value: f64::NAN,
                flags: FLAG_EMPTY
                    | if matches!(metric, Metric::RocAuc { .. }) {
                        FLAG_SINGLE_CLASS
                    } else {
                        0
                    },
            });
        }
        match metric {
            Metric::AveragePrecision => {
                if self.keys.is_empty() {
                    return Ok(MetricValue {
                        value: f64::NAN,
                        flags: FLAG_ALL_ZERO_WEIGHT,
                    });
                }
                let c = self.curve();
                Ok(average_precision_from_curve(&c))
            }
            Metric::RocAuc { max_fpr } => {
                if self.known_pos == 0 || self.known_neg == 0 {
                    return Ok(MetricValue {
                        value: f64::NAN,
                        flags: FLAG_SINGLE_CLASS,
                    });
                }
                if self.keys.is_empty() {
                    return Ok(MetricValue {
                        value: f64::NAN,
                        flags: FLAG_ALL_ZERO_WEIGHT,
                    });
                }
                let c = self.curve();
                Ok(roc_auc_from_curve(&c, max_fpr))
            }
        }
    }
}

pub(super) fn walk_unweighted(keys: &[u64], pay: &[u32]) -> Curve {
    let n = keys.len().min(pay.len());
    let mut c = Curve::default();
    let mut tp: u64 = 0;
    for i in 0..n {
        tp += u64::from(pay[i] >> 31);
        if i + 1 == n || keys[i + 1] != keys[i] {
            let tpf = tp as f64;
            c.tps.push(tpf);
            // sklearn: fps = 1 + threshold_idx - tps (exact in f64 below 2**53)
            c.fps.push(((i as u64 + 1) - tp) as f64);
            c.last.push(pay[i] & !POS_BIT);
        }
    }
    c
}

pub(super) fn walk_weighted(keys: &[u64], pay: &[u32], weights: &[f64]) -> Curve {
    let n = keys.len().min(pay.len());
    let mut c = Curve::default();
    let (mut tp, mut fp) = (0.0f64, 0.0f64);
    for i in 0..n {
        let p = pay[i];
        let w = weights.get((p & !POS_BIT) as usize).copied().unwrap_or(0.0);
        if p & POS_BIT != 0 {
            tp += w;
            fp += 0.0 * w;
        } else {
            tp += 0.0 * w;
            fp += w;
        }
        if i + 1 == n || keys[i + 1] != keys[i] {
            c.tps.push(tp);
            c.fps.push(fp);
            c.last.push(p & !POS_BIT);
        }
    }
    c
}

/// Average precision of one curve, exactly as scikit-learn's
/// `max(0, -sum(diff(recall) * precision[:-1]))` over the reversed
/// precision-recall curve. Ties: one operating point per distinct score.
/// No positives: recall is one everywhere, so AP = 0 (flag `FLAG_NO_POSITIVE`).
pub fn average_precision_from_curve(c: &Curve) -> MetricValue {
    let t = c.tps.len().min(c.fps.len());
    if t == 0 {
        return MetricValue {
            value: f64::NAN,
            flags: FLAG_EMPTY,
        };
    }
    let total = c.tps[t - 1];
    let mut flags = 0;
    let recall = |j: usize| -> f64 {
        if total == 0.0 {
            1.0
        } else {
            c.tps[j] / total
        }
    };
    if total == 0.0 {
        flags |= FLAG_NO_POSITIVE;
    }
    let precision = |j: usize| -> f64 {
        let ps = c.tps[j] + c.fps[j];
        if ps != 0.0 {
            c.tps[j] / ps
        } else {
            0.0
        }
    };
    // Reversed arrays: rec_rev[i] = recall[t-1-i], rec_rev[t] = 0.
    let mut terms = Vec::with_capacity(t);
    for i in 0..t {
        let j = t - 1 - i;
        let next = if j == 0 { 0.0 } else { recall(j - 1) };
        terms.push((next - recall(j)) * precision(j));
    }
    let s = -pairwise_sum(&terms);
    MetricValue {
        value: if s > 0.0 { s } else { 0.0 },
        flags,
    }
}

/// `np.interp(x, [x0, x1], [y0, y1])` for one point.
pub(super) fn interp2(x: f64, x0: f64, x1: f64, y0: f64, y1: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > x1 {
        return y1;
    }
    if x < x0 {
        return y0;
    }
    if x == x1 {
        return y1;
    }
    if x == x0 {
        return y0;
    }
    let slope = (y1 - y0) / (x1 - x0);
    let mut r = slope * (x - x0) + y0;
    if r.is_nan() {
        r = slope * (x - x1) + y1;
        if r.is_nan() && y0 == y1 {
            r = y0;
        }
    }
    r
}

/// `np.searchsorted(a, key, "right")` for one key: NumPy's binary search with its
/// order (NaN last). On a sorted `a` this is the number of leading values `<= key`;
/// negative weights can make fpr unsorted, and then only the same probes give
/// scikit-learn's cut (and its "neither increasing nor decreasing" error).
pub(super) fn searchsorted_right(a: &[f64], key: f64) -> usize {
    let less = |x: f64, y: f64| x < y || (y.is_nan() && !x.is_nan());
    let (mut lo, mut hi) = (0usize, a.len());
    while lo < hi {
        let mid = lo + ((hi - lo) >> 1);
        if a.get(mid).is_some_and(|&v| less(key, v)) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// scikit-learn's `auc(x, y)`: trapezoid with the direction check. `None` when x is
/// neither increasing nor decreasing.
pub(super) fn trapezoid_auc(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    let mut any_neg = false;
    let mut all_nonpos = true;
    let mut terms = Vec::with_capacity(n.saturating_sub(1));
    for i in 1..n {
        let dx = x[i] - x[i - 1];
        if dx < 0.0 {
            any_neg = true;
        }
        if dx > 0.0 || dx.is_nan() {
            all_nonpos = false;
        }
        terms.push(dx * (y[i] + y[i - 1]) / 2.0);
    }
    let direction = if any_neg {
        if all_nonpos {
            -1.0
        } else {
            return None;
        }
    } else {
        1.0
    };
    Some(direction * pairwise_sum(&terms))
}

/// ROC AUC of one curve as scikit-learn's `_binary_roc_auc_score` computes it:
/// `roc_curve(drop_intermediate=True)` (collinear points dropped, (0, 0) prepended),
/// trapezoid `auc(fpr, tpr)`. Ties: one point per distinct score, i.e. a tied
/// positive/negative pair counts 1/2 (Mann-Whitney). With `max_fpr` in (0, 1):
/// partial area up to `max_fpr` with tpr linearly interpolated there, then
/// McClish's correction `0.5 * (1 + (pAUC - m²/2) / (m - m²/2))`.
pub fn roc_auc_from_curve(c: &Curve, max_fpr: Option<f64>) -> MetricValue {
    let t = c.tps.len().min(c.fps.len());
    let mut flags = 0;
    // drop_intermediate (only when more than two thresholds)
    let mut fps = Vec::with_capacity(t + 1);
    let mut tps = Vec::with_capacity(t + 1);
    fps.push(0.0);
    tps.push(0.0);
    for i in 0..t {
        let keep = if t > 2 && i > 0 && i + 1 < t {
            let d2f = (c.fps[i + 1] - c.fps[i]) - (c.fps[i] - c.fps[i - 1]);
            let d2t = (c.tps[i + 1] - c.tps[i]) - (c.tps[i] - c.tps[i - 1]);
            d2f != 0.0 || d2t != 0.0
        } else {
            true
        };
        if keep {
            fps.push(c.fps[i]);
            tps.push(c.tps[i]);
        }
    }
    let m = fps.len();
    let (fl, tl) = (fps[m - 1], tps[m - 1]);
    // `!(x > 0)` mirrors `if fps[-1] <= 0` (NaN does not warn but divides to NaN).
    let fpr: Vec<f64> = if fl <= 0.0 {
        flags |= FLAG_NO_NEGATIVE_LEFT;
        vec![f64::NAN; m]
    } else {
        fps.iter().map(|&f| f / fl).collect()
    };
    let tpr: Vec<f64> = if tl <= 0.0 {
        flags |= FLAG_NO_POSITIVE_LEFT;
        vec![f64::NAN; m]
    } else {
        tps.iter().map(|&x| x / tl).collect()
    };
    let full = match max_fpr {
        None => true,
        Some(v) => v == 1.0,
    };
    let value = if full {
        trapezoid_auc(&fpr, &tpr)
    } else {
        let mf = max_fpr.unwrap_or(1.0);
        // A NaN max_fpr (rejected before the kernels, as scikit-learn does) keeps no
        // point, as the unweighted path decides it.
        let stop = if mf.is_nan() {
            0
        } else {
            searchsorted_right(&fpr, mf)
        };
        let at = |i: isize| -> f64 {
            let idx = if i < 0 { m as isize + i } else { i } as usize;
            fpr.get(idx).copied().unwrap_or(f64::NAN)
        };
        let at_t = |i: isize| -> f64 {
            let idx = if i < 0 { m as isize + i } else { i } as usize;
            tpr.get(idx).copied().unwrap_or(f64::NAN)
        };
        let s = stop as isize;
        let y_new = interp2(mf, at(s - 1), at(s), at_t(s - 1), at_t(s));
        let mut xs: Vec<f64> = fpr[..stop].to_vec();
        let mut ys: Vec<f64> = tpr[..stop].to_vec();
        xs.push(mf);
        ys.push(y_new);
        if xs.len() < 2 {
            return MetricValue {
                value: f64::NAN,
                flags: flags | FLAG_TOO_FEW_POINTS,
            };
        }
        trapezoid_auc(&xs, &ys).map(|p| {
            let min_area = 0.5 * mf * mf;
            let max_area = mf;
            0.5 * (1.0 + (p - min_area) / (max_area - min_area))
        })
    };
    match value {
        Some(v) => MetricValue { value: v, flags },
        None => MetricValue {
            value: f64::NAN,
            flags: flags | FLAG_NOT_MONOTONIC,
        },
    }
}

/// The confusion counts of scikit-learn's `confusion_matrix_at_thresholds` for one
/// binary problem: `(fps, tps, rows)` per distinct threshold in descending score
/// order, `rows[t]` being the input row whose score is threshold `t`. Rows with
/// zero weight are dropped first. Errors when every weight is zero.
pub fn binary_counts<S: Score>(
    y_score: ArrayView1<S>,
    y_pos: ArrayView1<bool>,
    weight: Option<ArrayView1<f64>>,
) -> Result<(Vec<f64>, Vec<f64>, Vec<usize>)> {
    let n = y_score.len();
    if y_pos.len() != n || weight.as_ref().is_some_and(|w| w.len() != n) {
        return Err(MetricError::shape(
            "y_true, y_score and sample_weight have different lengths",
        ));
    }
    let mut p = Problem::with_capacity(n, weight.is_some());
    let mut rows: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        let w = weight.as_ref().map_or(1.0, |w| w[i]);
        if w != 0.0 {
            rows.push(i);
        }
        p.push(y_score[i], y_pos[i], w)?;
    }
    if p.keys.is_empty() && n > 0 {
        return Err(MetricError::value(
            "Sample weights must contain at least one non-zero number.",
        ));
    }
    let c = p.curve();
    let r = c
        .last
        .iter()
        .map(|&q| rows.get(q as usize).copied().unwrap_or(0))
        .collect();
    Ok((c.fps, c.tps, r))
}
