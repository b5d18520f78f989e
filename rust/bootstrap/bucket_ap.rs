//! Average precision of bootstrap resamples without `sample_weight`: one
//! histogram per label instead of a walk along the sorted order.
//!
//! Without `sample_weight` a resample's row weights are integer draw counts, so
//! every cumulative count AP needs is an exact integer and may be summed in any
//! order. AP only reads the cumulative counts at the tie groups that hold a
//! positive (the other groups add 0 to the sum, see `weighted_ap`). A negative row
//! therefore matters only through its *bucket*: the number of positive groups
//! with a strictly higher score (negatives tied with a positive group fall in
//! that group's bucket). The bucket of every (row, label) is fixed by the scores,
//! so it is computed once; a resample then
//!
//! 1. adds each row's count to its bucket, in row order (sequential reads of the
//!    counts and of a `u16` bucket column, increments in a histogram of one slot
//!    per positive group, small enough for L1), and
//! 2. walks the positive groups: the false positives up to group `g` are the
//!    histogram's prefix sum, the true positives the counts of the positives (a
//!    list in descending score order).
//!
//! Both steps see the same integers as the sorted walk of `weighted_ap` and add
//! the same AP terms in the same order, so the values are bit-identical to it
//! (tested below). Positives, unknown cells and negatives below every positive
//! fall in a discarded last slot.
//!
//! Several systems scored on the same rows (a paired comparison) share one
//! statistic: their labels are evaluated on the same counts, one system after the
//! other within each label.

use ndarray::ArrayView2;

use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::score::Score;
use crate::sort::sort_by_key_stable;

use super::weighted_ap::{combine, finish, ApAverage};
use super::{Scratch, Statistic};

const NEW_GROUP: u32 = 1 << 31;
const ROW: u32 = NEW_GROUP - 1;

/// One bucket per cell: `u16` while the positive groups fit, else `u32`.
enum Buckets {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

/// One label (or, for the micro average, all cells) of one system.
struct BucketLabel {
    /// Bucket of every cell, cells in row-major order; `cells_per_row` per row.
    buckets: Buckets,
    cells_per_row: usize,
    /// Positive rows in descending score order, `NEW_GROUP` on the first of each
    /// positive group.
    positives: Vec<u32>,
    /// Number of positive groups (the discarded slot is `n_groups`).
    n_groups: usize,
}

impl BucketLabel {
    /// From the label's known cells `(cell, score, positive)`; `n_cells` cells in
    /// all, `cells_per_row` of them per row.
    fn build<S: Score>(
        cells: impl Iterator<Item = (u32, S, bool)>,
        n_cells: usize,
        cells_per_row: usize,
    ) -> Self {
        const POS: u32 = 1 << 31;
        let mut keys = Vec::with_capacity(n_cells);
        let mut payload = Vec::with_capacity(n_cells);
        for (cell, s, pos) in cells {
            keys.push(!s.key());
            payload.push(if pos { cell | POS } else { cell });
        }
        sort_by_key_stable(&mut keys, &mut payload);
        // Walk the tie groups in descending order: a group with a positive is
        // positive group `g`; its negatives, and those of the groups above it
        // since the previous positive group, fall in bucket `g`.
        let mut bucket_of = vec![u32::MAX; n_cells]; // MAX: discarded slot
        let mut positives = Vec::new();
        let mut g = 0u32;
        let mut start = 0;
        while start < keys.len() {
            let mut end = start + 1;
            while end < keys.len() && keys[end] == keys[start] {
                end += 1;
            }
            let group = &payload[start..end];
            let mut first = true;
            for &e in group {
                if e & POS != 0 {
                    let row = ((e & !POS) as usize / cells_per_row) as u32;
                    positives.push(if first { row | NEW_GROUP } else { row });
                    first = false;
                }
            }
            // Negatives of a positive group are in it; the others wait for the
            // next positive group (bucket g either way).
            for &e in group {
                if e & POS == 0 {
                    bucket_of[e as usize] = g;
                }
            }
            if !first {
                g += 1;
            }
            start = end;
        }
        drop(keys);
        drop(payload);
        let n_groups = g as usize;
        // Negatives after the last positive group, positives and unknown cells:
        // the discarded slot.
        let discard = |b: u32| if b >= g { g } else { b };
        let buckets = if n_groups < usize::from(u16::MAX) {
            Buckets::Narrow(bucket_of.iter().map(|&b| discard(b) as u16).collect())
        } else {
            for b in bucket_of.iter_mut() {
                *b = discard(*b);
            }
            Buckets::Wide(bucket_of)
        };
        positives.shrink_to_fit();
        BucketLabel {
            buckets,
            cells_per_row,
            positives,
            n_groups,
        }
    }

    /// AP for row counts `counts` and the positive count; AP is NaN when no
    /// positive is drawn. `hist` is scratch.
    fn ap(&self, counts: &[u32], hist: &mut Vec<u32>) -> (f64, f64) {
        hist.clear();
        hist.resize(self.n_groups + 1, 0);
        match &self.buckets {
            Buckets::Narrow(b) => add_counts(b, self.cells_per_row, counts, hist),
            Buckets::Wide(b) => add_counts(b, self.cells_per_row, counts, hist),
        }
        let (mut tp, mut fp, mut prev_tp, mut sum) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let mut g = 0usize;
        for (k, &e) in self.positives.iter().enumerate() {
            if e & NEW_GROUP != 0 {
                if k > 0 {
                    close_group(tp, fp, &mut prev_tp, &mut sum);
                }
                fp += f64::from(hist[g]);
                g += 1;
            }
            tp += f64::from(counts[(e & ROW) as usize]);
        }
        close_group(tp, fp, &mut prev_tp, &mut sum);
        finish(sum, tp)
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

/// `hist[bucket] += count of the cell's row` for every cell.
#[inline]
fn add_counts<B: Copy + Into<u32>>(
    buckets: &[B],
    cells_per_row: usize,
    counts: &[u32],
    hist: &mut [u32],
) {
    if cells_per_row == 1 {
        for (&b, &c) in buckets.iter().zip(counts) {
            hist[b.into() as usize] += c;
        }
    } else {
        for (row, &c) in buckets.chunks_exact(cells_per_row).zip(counts) {
            for &b in row {
                hist[b.into() as usize] += c;
            }
        }
    }
}

/// AP of one or more systems (score matrices on the same rows and labels) on
/// resamples drawn without `sample_weight`: `n_out` is the sum of the systems'.
pub struct BucketAp {
    systems: Vec<Vec<BucketLabel>>,
    average: ApAverage,
    n_labels: usize,
}

impl BucketAp {
    /// Bucket every label of every system (in parallel over labels). `y_pos`:
    /// positives; `mask`: `true` = known.
    pub fn new<S: Score>(
        y_scores: &[ArrayView2<'_, S>],
        y_pos: ArrayView2<'_, bool>,
        mask: Option<ArrayView2<'_, bool>>,
        average: ApAverage,
        par: &Parallelism,
    ) -> Result<Self> {
        let (n, k) = y_pos.dim();
        if y_scores.iter().any(|s| s.dim() != (n, k)) || mask.is_some_and(|m| m.dim() != (n, k)) {
            return Err(MetricError::shape(
                "y_true, y_score and mask have different shapes",
            ));
        }
        let micro = average == ApAverage::Micro;
        let cells = if micro { n.saturating_mul(k) } else { n };
        if cells >= ROW as usize {
            return Err(MetricError::value(
                "too many rows to bootstrap (limit 2**30 - 1)",
            ));
        }
        let known = |i: usize, j: usize| mask.is_none_or(|m| m[(i, j)]);
        let mut systems = Vec::with_capacity(y_scores.len());
        for s in y_scores {
            let labels = if micro {
                let all = (0..n).flat_map(|i| (0..k).map(move |j| (i, j)));
                vec![BucketLabel::build(
                    all.filter(|&(i, j)| known(i, j))
                        .map(|(i, j)| ((i * k + j) as u32, s[(i, j)], y_pos[(i, j)])),
                    cells,
                    k,
                )]
            } else {
                par.map(k, n * k, |j| {
                    let (col, pos) = (s.column(j), y_pos.column(j));
                    BucketLabel::build(
                        (0..n)
                            .filter(|&i| known(i, j))
                            .map(|i| (i as u32, col[i], pos[i])),
                        n,
                        1,
                    )
                })?
            };
            systems.push(labels);
        }
        Ok(BucketAp {
            systems,
            average,
            n_labels: if micro { 1 } else { k },
        })
    }

    fn n_out_one(&self) -> usize {
        if self.average == ApAverage::PerLabel {
            self.n_labels
        } else {
            1
        }
    }
}

impl Statistic for BucketAp {
    fn n_out(&self) -> usize {
        self.systems.len() * self.n_out_one()
    }

    /// Only integer weights have buckets: other weights are an error of the
    /// caller, reported as undefined values.
    fn eval(&self, w: &[f64], out: &mut [f64]) {
        let counts: Option<Vec<u32>> = w
            .iter()
            .map(|&x| {
                ((0.0..=f64::from(u32::MAX)).contains(&x) && x.fract() == 0.0).then_some(x as u32)
            })
            .collect();
        match counts {
            Some(c) => self.eval_counts(&c, &mut Scratch::default(), out),
            None => out.fill(f64::NAN),
        }
    }

    fn eval_counts(&self, counts: &[u32], scratch: &mut Scratch, out: &mut [f64]) {
        let k = self.n_out_one();
        for (labels, o) in self.systems.iter().zip(out.chunks_mut(k)) {
            let hist = &mut scratch.hist;
            combine(self.average, labels.iter().map(|l| l.ap(counts, hist)), o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::weighted_ap::ApStatistic;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};

    /// Random labels, scores with many ties, a mask, and random counts: the
    /// bucket path equals the sorted walk bit for bit, for every average.
    #[test]
    fn equals_the_sorted_walk() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let par = Parallelism::sequential();
        for case in 0..60 {
            let (n, k) = (rng.random_range(1..300), rng.random_range(1..5));
            let levels = if case % 2 == 0 { 4.0 } else { 1e6 };
            let s = Array2::from_shape_fn((n, k), |_| (rng.random::<f64>() * levels).floor());
            let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.3);
            let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.8);
            let mask = (case % 3 != 0).then_some(m.view());
            let counts: Vec<u32> = (0..n).map(|_| rng.random_range(0..4)).collect();
            let w: Vec<f64> = counts.iter().map(|&c| f64::from(c)).collect();
            for avg in [
                ApAverage::Macro,
                ApAverage::Weighted,
                ApAverage::PerLabel,
                ApAverage::Micro,
            ] {
                let old = ApStatistic::new(s.view(), y.view(), mask, avg, false, &par).unwrap();
                let new = BucketAp::new(&[s.view(), s.view()], y.view(), mask, avg, &par).unwrap();
                let mut a = vec![0.0; old.n_out()];
                let mut b = vec![0.0; new.n_out()];
                old.eval(&w, &mut a);
                new.eval_counts(&counts, &mut Scratch::default(), &mut b);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                let twice: Vec<f64> = a.iter().chain(&a).copied().collect();
                assert_eq!(bits(&b), bits(&twice), "case {case} {avg:?}");
            }
        }
    }

    #[test]
    fn wide_buckets_when_groups_exceed_u16() {
        let n = 140_000; // 70,000 positive groups
        let s = Array2::from_shape_fn((n, 1), |(i, _)| i as f64);
        let y = Array2::from_shape_fn((n, 1), |(i, _)| i % 2 == 0);
        let par = Parallelism::sequential();
        let new = BucketAp::new(&[s.view()], y.view(), None, ApAverage::Macro, &par).unwrap();
        assert!(matches!(new.systems[0][0].buckets, Buckets::Wide(_)));
        let old =
            ApStatistic::new(s.view(), y.view(), None, ApAverage::Macro, false, &par).unwrap();
        let counts: Vec<u32> = (0..n as u32).map(|i| (i * 7 + 3) % 3).collect();
        let w: Vec<f64> = counts.iter().map(|&c| f64::from(c)).collect();
        let (mut a, mut b) = ([0.0], [0.0]);
        old.eval(&w, &mut a);
        new.eval_counts(&counts, &mut Scratch::default(), &mut b);
        assert_eq!(a[0].to_bits(), b[0].to_bits());
    }
}
