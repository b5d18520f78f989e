//! Average precision under row multiplicities: one sort per label, then one walk
//! per resample.
//!
//! A bootstrap resample is an integer count per row (times the user's
//! `sample_weight`, if any), so scikit-learn's `average_precision_score` on the
//! materialised resample equals AP on the original rows with those row weights:
//! the sorted order of a label never changes, only the weights along it. A row
//! with weight 0 adds nothing to either cumulative count, which is exactly
//! scikit-learn's removal of zero-weight samples. Tie groups (equal scores, by the
//! keys of `crate::score`) form one threshold each, as in scikit-learn:
//!
//! `AP = sum_g (TP_g - TP_{g-1}) * TP_g / (TP_g + FP_g) / TP_last`
//!
//! over the tie groups `g` in descending score order, with cumulative weighted
//! true and false positives `TP_g`, `FP_g`. A label whose drawn (known) rows hold
//! no positive weight has no AP here (scikit-learn warns and returns 0): the
//! walk reports it as undefined and the caller decides (see `docs/statistics.md`).

use ndarray::{ArrayView1, ArrayView2};

use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::score::Score;
use crate::sort::sort_by_key_stable;

use super::Statistic;

const POS: u32 = 1 << 31;
const NEW_GROUP: u32 = 1 << 30;
const ROW: u32 = NEW_GROUP - 1;

/// One label's known rows in descending score order: each entry is the row index
/// with a positive flag and a flag marking the first row of a tie group. `keys`
/// (the descending order keys) are kept only when a caller needs to merge two
/// orders (the permutation test).
pub struct SortedLabel {
    entries: Vec<u32>,
    keys: Option<Vec<u64>>,
}

impl SortedLabel {
    /// Sort `(row, score, positive)` cells (at most `capacity` of them). The
    /// kept vectors are sized exactly: they live as long as the bootstrap.
    fn build<S: Score>(
        cells: impl Iterator<Item = (u32, S, bool)>,
        capacity: usize,
        keep_keys: bool,
    ) -> Self {
        let mut keys = Vec::with_capacity(capacity);
        let mut payload = Vec::with_capacity(capacity);
        for (row, s, pos) in cells {
            // Descending score order = ascending order of the complemented key.
            keys.push(!s.key());
            payload.push(if pos { row | POS } else { row });
        }
        sort_by_key_stable(&mut keys, &mut payload);
        let mut entries = payload;
        for i in 0..entries.len() {
            if i == 0 || keys[i] != keys[i - 1] {
                entries[i] |= NEW_GROUP;
            }
        }
        entries.shrink_to_fit();
        SortedLabel {
            entries,
            keys: keep_keys.then_some(keys).map(|mut k| {
                k.shrink_to_fit();
                k
            }),
        }
    }

    /// Weighted AP along this order and the positive weight; AP is NaN when the
    /// positive weight is 0.
    #[inline]
    pub fn ap(&self, w: &[f64]) -> (f64, f64) {
        let (mut tp, mut fp, mut prev_tp, mut sum) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for &e in &self.entries {
            if e & NEW_GROUP != 0 {
                close_group(tp, fp, &mut prev_tp, &mut sum);
            }
            add_entry(e, w, &mut tp, &mut fp);
        }
        close_group(tp, fp, &mut prev_tp, &mut sum);
        finish(sum, tp)
    }

    /// Weighted AP of the column that takes row `r`'s score from `self` when
    /// `!swapped[r]` and from `other` when `swapped[r]` (both orders of the same
    /// label, with keys): a merge of the two filtered orders, no sort.
    pub fn ap_merged(&self, other: &SortedLabel, swapped: &[bool], w: &[f64]) -> (f64, f64) {
        let (ka, kb) = match (&self.keys, &other.keys) {
            (Some(a), Some(b)) => (a, b),
            _ => return (f64::NAN, 0.0),
        };
        let (ea, eb) = (&self.entries, &other.entries);
        let (mut i, mut j) = (0usize, 0usize);
        let (mut tp, mut fp, mut prev_tp, mut sum) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let mut last_key: Option<u64> = None;
        loop {
            while i < ea.len() && swapped[(ea[i] & ROW) as usize] {
                i += 1;
            }
            while j < eb.len() && !swapped[(eb[j] & ROW) as usize] {
                j += 1;
            }
            let take_a = match (i < ea.len(), j < eb.len()) {
                (false, false) => break,
                (true, false) => true,
                (false, true) => false,
                (true, true) => ka[i] <= kb[j],
            };
            let (e, k) = if take_a {
                i += 1;
                (ea[i - 1], ka[i - 1])
            } else {
                j += 1;
                (eb[j - 1], kb[j - 1])
            };
            if last_key != Some(k) {
                close_group(tp, fp, &mut prev_tp, &mut sum);
                last_key = Some(k);
            }
            add_entry(e, w, &mut tp, &mut fp);
        }
        close_group(tp, fp, &mut prev_tp, &mut sum);
        finish(sum, tp)
    }

    /// Leave-one-out AP for every row of this order, in O(len): removing row `i`
    /// (weight `w_i`) lowers `FP` (a negative) or `TP` (a positive) by `w_i` in
    /// its own tie group and every later one, so the AP sum splits into a prefix
    /// over earlier groups, the changed own group and a suffix over later groups
    /// whose terms all shift by the same `w_i`; prefix and suffix sums of each
    /// shifted sequence give every leave-one-out value. Writes `out[row]`; rows not
    /// in this order keep their value.
    ///
    /// The suffix sums depend on `w_i`, so they are taken per distinct row weight;
    /// with no `sample_weight` every weight is 1 and this is one pass.
    pub fn leave_one_out(&self, w: &[f64], out: &mut [f64]) {
        // Group table: cumulative TP, FP at the end of each group.
        let mut groups: Vec<(f64, f64, f64)> = Vec::new(); // (TP_g, FP_g, dTP_g)
        let mut group_of = vec![0usize; self.entries.len()];
        let (mut tp, mut fp, mut prev_tp) = (0.0f64, 0.0f64, 0.0f64);
        for (k, &e) in self.entries.iter().enumerate() {
            if e & NEW_GROUP != 0 && k > 0 {
                groups.push((tp, fp, tp - prev_tp));
                prev_tp = tp;
            }
            group_of[k] = groups.len();
            add_entry(e, w, &mut tp, &mut fp);
        }
        if !self.entries.is_empty() {
            groups.push((tp, fp, tp - prev_tp));
        }
        let total_tp = tp;
        let g = groups.len();
        let term = |d: f64, t: f64, f: f64| {
            if d != 0.0 && t + f != 0.0 {
                d * (t / (t + f))
            } else {
                0.0
            }
        };
        // prefix[h] = sum over groups < h of the unchanged terms.
        let mut prefix = vec![0.0f64; g + 1];
        for (h, &(t, f, d)) in groups.iter().enumerate() {
            prefix[h + 1] = prefix[h] + term(d, t, f);
        }
        let mut weights: Vec<f64> = self
            .entries
            .iter()
            .map(|&e| w[(e & ROW) as usize])
            .filter(|&x| x != 0.0)
            .collect();
        weights.sort_by(f64::total_cmp);
        weights.dedup();
        let mut suffix_neg = vec![0.0f64; g + 1];
        let mut suffix_pos = vec![0.0f64; g + 1];
        for &wi in &weights {
            // Terms of groups > h with FP (negative removed) or TP (positive
            // removed) lowered by wi.
            for h in (0..g).rev() {
                let (t, f, d) = groups[h];
                suffix_neg[h] = suffix_neg[h + 1] + term(d, t, f - wi);
                suffix_pos[h] = suffix_pos[h + 1] + term(d, t - wi, f);
            }
            for (k, &e) in self.entries.iter().enumerate() {
                let row = (e & ROW) as usize;
                if w[row] != wi {
                    continue;
                }
                let h = group_of[k];
                let (t, f, d) = groups[h];
                let (sum, p) = if e & POS != 0 {
                    (
                        prefix[h] + term(d - wi, t - wi, f) + suffix_pos[h + 1],
                        total_tp - wi,
                    )
                } else {
                    (prefix[h] + term(d, t, f - wi) + suffix_neg[h + 1], total_tp)
                };
                out[row] = finish(sum, p).0;
            }
        }
        // Rows of weight 0: removing them changes nothing.
        let (full, _) = finish(prefix[g], total_tp);
        for &e in &self.entries {
            let row = (e & ROW) as usize;
            if w[row] == 0.0 {
                out[row] = full;
            }
        }
    }
}

/// Add entry `e`'s row weight to the true or false positives.
#[inline]
fn add_entry(e: u32, w: &[f64], tp: &mut f64, fp: &mut f64) {
    let wt = w[(e & ROW) as usize];
    if e & POS != 0 {
        *tp += wt;
    } else {
        *fp += wt;
    }
}

#[inline]
fn close_group(tp: f64, fp: f64, prev_tp: &mut f64, sum: &mut f64) {
    let d = tp - *prev_tp;
    if d != 0.0 {
        *sum += d * (tp / (tp + fp));
        *prev_tp = tp;
    }
}

#[inline]
pub(super) fn finish(sum: f64, tp: f64) -> (f64, f64) {
    if tp > 0.0 {
        ((sum / tp).max(0.0), tp)
    } else {
        (f64::NAN, tp)
    }
}

/// How per-label APs are combined (scikit-learn's `average`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApAverage {
    Macro,
    Weighted,
    PerLabel,
    Micro,
}

impl ApAverage {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "macro" => Ok(ApAverage::Macro),
            "weighted" => Ok(ApAverage::Weighted),
            "none" => Ok(ApAverage::PerLabel),
            "micro" => Ok(ApAverage::Micro),
            _ => Err(MetricError::value(format!("unknown AP average {s:?}"))),
        }
    }
}

/// AP of a multilabel score matrix as a bootstrap statistic.
pub struct ApStatistic {
    labels: Vec<SortedLabel>,
    average: ApAverage,
}

impl ApStatistic {
    /// Sort every label once (in parallel over labels). `y_pos`: positives;
    /// `mask`: `true` = known (unknown cells are left out of their label, or of
    /// the micro order). `keep_keys` keeps the order keys for `ap_merged`.
    pub fn new<S: Score>(
        y_score: ArrayView2<'_, S>,
        y_pos: ArrayView2<'_, bool>,
        mask: Option<ArrayView2<'_, bool>>,
        average: ApAverage,
        keep_keys: bool,
        par: &Parallelism,
    ) -> Result<Self> {
        let (n, k) = y_score.dim();
        if y_pos.dim() != (n, k) || mask.is_some_and(|m| m.dim() != (n, k)) {
            return Err(MetricError::shape(
                "y_true, y_score and mask have different shapes",
            ));
        }
        if n >= ROW as usize {
            return Err(MetricError::value(
                "too many rows to bootstrap (limit 2**30 - 1)",
            ));
        }
        let known = |i: usize, j: usize| mask.is_none_or(|m| m[(i, j)]);
        let labels = if average == ApAverage::Micro {
            let cells = (0..n).flat_map(|i| (0..k).map(move |j| (i, j)));
            vec![SortedLabel::build(
                cells
                    .filter(|&(i, j)| known(i, j))
                    .map(|(i, j)| (i as u32, y_score[(i, j)], y_pos[(i, j)])),
                n * k,
                keep_keys,
            )]
        } else {
            par.map(k, n * k, |j| {
                let col: ArrayView1<'_, S> = y_score.column(j);
                let pos = y_pos.column(j);
                SortedLabel::build(
                    (0..n)
                        .filter(|&i| known(i, j))
                        .map(|i| (i as u32, col[i], pos[i])),
                    n,
                    keep_keys,
                )
            })?
        };
        Ok(ApStatistic { labels, average })
    }

    /// AP of the mixed system (see [`SortedLabel::ap_merged`]).
    pub fn eval_merged(&self, other: &ApStatistic, swapped: &[bool], w: &[f64], out: &mut [f64]) {
        combine(
            self.average,
            self.labels
                .iter()
                .zip(&other.labels)
                .map(|(a, b)| a.ap_merged(b, swapped, w)),
            out,
        );
    }
}

/// Combine per-label `(AP, positive weight)` as `average` asks, into `out`.
pub(super) fn combine(
    average: ApAverage,
    per_label: impl Iterator<Item = (f64, f64)>,
    out: &mut [f64],
) {
    match average {
        ApAverage::PerLabel => {
            for (o, (ap, _)) in out.iter_mut().zip(per_label) {
                *o = ap;
            }
        }
        ApAverage::Micro => {
            out[0] = per_label.map(|(ap, _)| ap).next().unwrap_or(f64::NAN);
        }
        ApAverage::Macro => {
            let (mut sum, mut count) = (0.0f64, 0usize);
            for (ap, _) in per_label {
                sum += ap; // one NaN label makes the mean NaN: undefined
                count += 1;
            }
            out[0] = if count > 0 {
                sum / count as f64
            } else {
                f64::NAN
            };
        }
        ApAverage::Weighted => {
            // A label without a drawn positive makes the resample undefined,
            // as for "macro" (scikit-learn warns for it even at weight 0).
            let (mut num, mut den) = (0.0f64, 0.0f64);
            for (ap, support) in per_label {
                num += ap * support;
                den += support;
            }
            out[0] = if den > 0.0 { num / den } else { f64::NAN };
        }
    }
}

impl Statistic for ApStatistic {
    fn n_out(&self) -> usize {
        if self.average == ApAverage::PerLabel {
            self.labels.len()
        } else {
            1
        }
    }

    fn eval(&self, w: &[f64], out: &mut [f64]) {
        combine(self.average, self.labels.iter().map(|l| l.ap(w)), out);
    }

    fn jackknife(&self, w: &[f64], par: &Parallelism) -> Result<Vec<f64>> {
        let n = w.len();
        if self.average == ApAverage::Micro {
            return super::jackknife_by_removal(self, w, par);
        }
        // Per label: leave-one-out AP of every row (rows unknown for a label keep
        // the label's full AP), then combine per row.
        let per_label: Vec<Vec<f64>> = par.map(self.labels.len(), n * self.labels.len(), |j| {
            let label = &self.labels[j];
            let full = label.ap(w);
            let mut out = vec![full.0; n];
            label.leave_one_out(w, &mut out);
            out
        })?;
        let supports: Vec<Vec<f64>> = match self.average {
            ApAverage::Weighted => self.labels.iter().map(|l| loo_support(l, w)).collect(),
            _ => Vec::new(),
        };
        let k = self.n_out();
        let mut out = vec![0.0f64; n * k];
        for i in 0..n {
            let it = per_label.iter().enumerate().map(|(j, v)| {
                let s = supports.get(j).map_or(0.0, |s| s[i]);
                (v[i], s)
            });
            combine(self.average, it, &mut out[i * k..(i + 1) * k]);
        }
        Ok(out)
    }
}

/// Positive weight of `label` with each row left out.
fn loo_support(label: &SortedLabel, w: &[f64]) -> Vec<f64> {
    let total: f64 = label
        .entries
        .iter()
        .filter(|&&e| e & POS != 0)
        .map(|&e| w[(e & ROW) as usize])
        .sum();
    let mut out = vec![total; w.len()];
    for &e in &label.entries {
        if e & POS != 0 {
            let r = (e & ROW) as usize;
            out[r] = total - w[r];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array2};

    /// The test labels (5 rows x 2) with scores `s`, sorted for `avg`.
    fn stat_with(s: Array2<f64>, avg: ApAverage, keep_keys: bool) -> ApStatistic {
        let y = array![
            [true, false],
            [false, true],
            [true, false],
            [false, true],
            [true, true]
        ];
        let par = Parallelism::sequential();
        ApStatistic::new(s.view(), y.view(), None, avg, keep_keys, &par).unwrap()
    }

    fn stat(avg: ApAverage) -> ApStatistic {
        let s = array![[0.9, 0.1], [0.8, 0.8], [0.8, 0.3], [0.1, 0.7], [0.5, 0.5]];
        stat_with(s, avg, true)
    }

    #[test]
    fn unit_weights_give_plain_ap() {
        // Label 0: scores .9+ .8- .8+ .5+ .1- -> groups {.9+}, {.8+,.8-}, {.5+}, {.1-}
        // AP = (1*1 + 1*2/3 + 1*3/4) / 3
        let st = stat(ApAverage::PerLabel);
        let mut out = [0.0; 2];
        st.eval(&[1.0; 5], &mut out);
        assert!((out[0] - (1.0 + 2.0 / 3.0 + 0.75) / 3.0).abs() < 1e-15);
    }

    #[test]
    fn no_positive_is_undefined() {
        let st = stat(ApAverage::Macro);
        let mut out = [0.0];
        st.eval(&[0.0, 1.0, 0.0, 0.0, 0.0], &mut out);
        assert!(out[0].is_nan());
        let wst = stat(ApAverage::Weighted);
        wst.eval(&[0.0, 1.0, 0.0, 0.0, 0.0], &mut out);
        assert!(out[0].is_nan());
    }

    #[test]
    fn leave_one_out_matches_removal() {
        for avg in [ApAverage::Macro, ApAverage::Weighted, ApAverage::PerLabel] {
            let st = stat(avg);
            let w = [1.0, 2.0, 1.0, 0.5, 3.0];
            let k = st.n_out();
            let fast = st.jackknife(&w, &Parallelism::sequential()).unwrap();
            let slow =
                super::super::jackknife_by_removal(&st, &w, &Parallelism::sequential()).unwrap();
            for i in 0..5 * k {
                let (a, b) = (fast[i], slow[i]);
                assert!(
                    (a.is_nan() && b.is_nan()) || (a - b).abs() < 1e-14,
                    "{avg:?} {i}: {a} {b}"
                );
            }
        }
    }

    #[test]
    fn merged_order_equals_resorting() {
        let st = stat(ApAverage::PerLabel);
        let other = stat_with(
            array![[0.2, 0.6], [0.8, 0.1], [0.4, 0.3], [0.9, 0.7], [0.5, 0.5]],
            ApAverage::PerLabel,
            true,
        );
        let swapped = [true, false, true, true, false];
        // Row r's scores from `other` where swapped[r], else from `stat`'s.
        let mixed = stat_with(
            array![[0.2, 0.6], [0.8, 0.8], [0.4, 0.3], [0.9, 0.7], [0.5, 0.5]],
            ApAverage::PerLabel,
            false,
        );
        let w = [1.0, 0.0, 2.0, 1.0, 1.0];
        let (mut a, mut b) = ([0.0; 2], [0.0; 2]);
        st.eval_merged(&other, &swapped, &w, &mut a);
        mixed.eval(&w, &mut b);
        assert_eq!(a, b);
    }
}
