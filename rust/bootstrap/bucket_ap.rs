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
//! `distribution` draws resamples in batches of `LANES` with a byte per row and
//! resample; `eval_lanes` then reads each bucket id once and adds the row's
//! `LANES` counts to `LANES` adjacent histogram slots, which costs little more
//! than one resample's pass.
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
use super::{Scratch, Statistic, LANES};

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

/// A label's positives in descending score order and its positive groups' keys.
struct Groups {
    /// `!key` of each positive group, ascending (descending scores).
    keys: Vec<u64>,
    /// As [`BucketLabel::positives`].
    positives: Vec<u32>,
}

impl Groups {
    /// From the label's known cells `(cell, score, positive)`, `cells_per_row` per
    /// row. Only the positives are sorted; the stable sort keeps the cells of a tie
    /// group in cell order.
    fn of<S: Score>(cells: impl Iterator<Item = (u32, S, bool)>, cells_per_row: usize) -> Self {
        let mut keys = Vec::new();
        let mut rows = Vec::new();
        for (cell, s, pos) in cells {
            if pos {
                keys.push(!s.key());
                rows.push((cell as usize / cells_per_row) as u32);
            }
        }
        sort_by_key_stable(&mut keys, &mut rows);
        let mut group_keys: Vec<u64> = Vec::new();
        let mut positives = Vec::with_capacity(rows.len());
        for (&key, &row) in keys.iter().zip(&rows) {
            if group_keys.last() != Some(&key) {
                group_keys.push(key);
                positives.push(row | NEW_GROUP);
            } else {
                positives.push(row);
            }
        }
        Groups {
            keys: group_keys,
            positives,
        }
    }
}

impl Buckets {
    /// A column of `n_cells` buckets, all in the discarded slot `n_groups`.
    fn discarded(n_cells: usize, n_groups: usize) -> Self {
        if n_groups < usize::from(u16::MAX) {
            Buckets::Narrow(vec![n_groups as u16; n_cells])
        } else {
            Buckets::Wide(vec![n_groups as u32; n_cells])
        }
    }

    /// Write the bucket of every known negative cell: the number of positive
    /// groups with a strictly higher score (a binary search among the groups'
    /// keys). Positives, unknown cells and negatives below every positive group
    /// keep the discarded slot.
    fn fill<S: Score>(&mut self, cells: impl Iterator<Item = (u32, S, bool)>, groups: &Groups) {
        let bucket = |s: S| groups.keys.partition_point(|&g| g < !s.key());
        match self {
            Buckets::Narrow(b) => {
                for (cell, s, pos) in cells {
                    if !pos {
                        b[cell as usize] = bucket(s) as u16;
                    }
                }
            }
            Buckets::Wide(b) => {
                for (cell, s, pos) in cells {
                    if !pos {
                        b[cell as usize] = bucket(s) as u32;
                    }
                }
            }
        }
    }
}

/// The labels of one system (in parallel over labels); `cells(j)`: label `j`'s
/// known cells `(cell, score, positive)`, `n_cells` cells per label in all,
/// `cells_per_row` per row. Only the positives are sorted; beside its bucket
/// column (made once, in its final width) a label allocates memory for its
/// positives only.
fn build_labels<S, I>(
    n_labels: usize,
    cells: impl Fn(usize) -> I + Sync + Send,
    n_cells: usize,
    cells_per_row: usize,
    par: &Parallelism,
) -> Result<Vec<BucketLabel>>
where
    S: Score,
    I: Iterator<Item = (u32, S, bool)>,
{
    par.map(n_labels, n_labels.saturating_mul(n_cells), |j| {
        let g = Groups::of(cells(j), cells_per_row);
        let mut buckets = Buckets::discarded(n_cells, g.keys.len());
        buckets.fill(cells(j), &g);
        BucketLabel {
            buckets,
            cells_per_row,
            n_groups: g.keys.len(),
            positives: g.positives,
        }
    })
}

impl BucketLabel {
    /// AP for row counts `counts` and the positive count; AP is NaN when no
    /// positive is drawn. `hist` is scratch.
    fn ap(&self, counts: &[u32], hist: &mut Vec<u32>) -> (f64, f64) {
        hist.clear();
        hist.resize(self.n_groups + 1, 0);
        match &self.buckets {
            Buckets::Narrow(b) => add_counts(b, self.cells_per_row, counts, hist),
            Buckets::Wide(b) => add_counts(b, self.cells_per_row, counts, hist),
        }
        self.walk(|g| hist[g], |row| counts[row])
    }

    /// `ap` for the `LANES` resamples of `packed` (row counts, one byte per
    /// resample): one pass over the bucket column fills all lanes' histograms.
    fn ap_lanes(
        &self,
        packed: &[[u8; LANES]],
        hist: &mut Vec<[u32; LANES]>,
    ) -> [(f64, f64); LANES] {
        hist.clear();
        hist.resize(self.n_groups + 1, [0; LANES]);
        match &self.buckets {
            Buckets::Narrow(b) => add_lanes(b, self.cells_per_row, packed, hist),
            Buckets::Wide(b) => add_lanes(b, self.cells_per_row, packed, hist),
        }
        self.walk_lanes(hist, packed)
    }

    /// The walk along the positive groups, from the false positives of bucket
    /// `g` (`fp(g)`) and the count of row `row` (`count(row)`).
    #[inline]
    fn walk(&self, fp_of: impl Fn(usize) -> u32, count: impl Fn(usize) -> u32) -> (f64, f64) {
        let (mut tp, mut fp, mut prev_tp, mut sum) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let mut g = 0usize;
        for (k, &e) in self.positives.iter().enumerate() {
            if e & NEW_GROUP != 0 {
                if k > 0 {
                    close_group(tp, fp, &mut prev_tp, &mut sum);
                }
                fp += f64::from(fp_of(g));
                g += 1;
            }
            tp += f64::from(count((e & ROW) as usize));
        }
        close_group(tp, fp, &mut prev_tp, &mut sum);
        finish(sum, tp)
    }

    /// [`Self::walk`] of the `LANES` resamples side by side: one pass over the
    /// positives, each lane's arithmetic in the same order as its own walk (so
    /// bit-identical to it), the lanes' independent divisions in flight together.
    #[inline]
    #[allow(clippy::needless_range_loop)] // lanes side by side: indexing vectorizes
    fn walk_lanes(&self, hist: &[[u32; LANES]], packed: &[[u8; LANES]]) -> [(f64, f64); LANES] {
        let mut tp = [0.0f64; LANES];
        let mut fp = [0.0f64; LANES];
        let mut prev_tp = [0.0f64; LANES];
        let mut sum = [0.0f64; LANES];
        let mut g = 0usize;
        for (k, &e) in self.positives.iter().enumerate() {
            if e & NEW_GROUP != 0 {
                if k > 0 {
                    for l in 0..LANES {
                        close_group(tp[l], fp[l], &mut prev_tp[l], &mut sum[l]);
                    }
                }
                let h = &hist[g];
                for l in 0..LANES {
                    fp[l] += f64::from(h[l]);
                }
                g += 1;
            }
            let c = &packed[(e & ROW) as usize];
            for l in 0..LANES {
                tp[l] += f64::from(c[l]);
            }
        }
        for l in 0..LANES {
            close_group(tp[l], fp[l], &mut prev_tp[l], &mut sum[l]);
        }
        std::array::from_fn(|l| finish(sum[l], tp[l]))
    }
}

/// Add a closed group's AP term `(tp - prev_tp) * precision`. Counts are
/// integers, so `tp + fp` is 0 or at least 1, and it is 0 only when `tp` equals
/// `prev_tp` (0): dividing by `max(tp + fp, 1)` then adds `+0.0`, which leaves
/// `sum` bit for bit as skipping the group would. Without a branch on whether a
/// positive of the group was drawn (about one in three is not), the walk does
/// not mispredict.
#[inline(always)]
fn close_group(tp: f64, fp: f64, prev_tp: &mut f64, sum: &mut f64) {
    let all = tp + fp;
    let all = if all < 1.0 { 1.0 } else { all };
    *sum += (tp - *prev_tp) * (tp / all);
    *prev_tp = tp;
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

/// `hist[bucket][l] += count of the cell's row in lane l` for every cell.
#[inline]
fn add_lanes<B: Copy + Into<u32>>(
    buckets: &[B],
    cells_per_row: usize,
    packed: &[[u8; LANES]],
    hist: &mut [[u32; LANES]],
) {
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // plain indexing: no iterator to inline per cell
    fn add(h: &mut [u32; LANES], c: &[u8; LANES]) {
        for l in 0..LANES {
            h[l] += u32::from(c[l]);
        }
    }
    if cells_per_row == 1 {
        for (&b, c) in buckets.iter().zip(packed) {
            add(&mut hist[b.into() as usize], c);
        }
    } else {
        for (row, c) in buckets.chunks_exact(cells_per_row).zip(packed) {
            for &b in row {
                add(&mut hist[b.into() as usize], c);
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
                let all = move |_| {
                    (0..n)
                        .flat_map(move |i| (0..k).map(move |j| (i, j)))
                        .filter(move |&(i, j)| known(i, j))
                        .map(move |(i, j)| ((i * k + j) as u32, s[(i, j)], y_pos[(i, j)]))
                };
                build_labels(1, all, cells, k, par)?
            } else {
                let column = |j: usize| {
                    let (col, pos) = (s.column(j), y_pos.column(j));
                    (0..n)
                        .filter(move |&i| known(i, j))
                        .map(move |i| (i as u32, col[i], pos[i]))
                };
                build_labels(k, column, n, 1, par)?
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

    fn eval_lanes(&self, packed: &[[u8; LANES]], scratch: &mut Scratch, out: &mut [f64]) {
        let (k, width) = (self.n_out_one(), self.n_out());
        if width == 0 {
            return;
        }
        for (s, labels) in self.systems.iter().enumerate() {
            let aps = &mut scratch.ap_lanes;
            aps.clear();
            aps.extend(
                labels
                    .iter()
                    .map(|l| l.ap_lanes(packed, &mut scratch.hist_lanes)),
            );
            for (lane, o) in out.chunks_mut(width).enumerate() {
                let o = &mut o[s * k..(s + 1) * k];
                combine(self.average, aps.iter().map(|a| a[lane]), o);
            }
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
                assert_lanes_equal_counts(&new, n, &mut rng);
            }
        }
    }

    /// The top positive group is not drawn and no negative is above it: the walk
    /// closes a group with `tp + fp == 0`, which must add nothing (not 0 / 0).
    #[test]
    fn undrawn_top_group_adds_nothing() {
        let s = Array2::from_shape_vec((4, 1), vec![0.9, 0.8, 0.7, 0.1]).unwrap();
        let y = Array2::from_shape_vec((4, 1), vec![true, false, true, true]).unwrap();
        let par = Parallelism::sequential();
        let stat = BucketAp::new(&[s.view()], y.view(), None, ApAverage::Macro, &par).unwrap();
        let old =
            ApStatistic::new(s.view(), y.view(), None, ApAverage::Macro, false, &par).unwrap();
        let counts = [0u32, 1, 2, 1];
        let (mut a, mut b) = ([0.0], [0.0]);
        old.eval(&[0.0, 1.0, 2.0, 1.0], &mut a);
        stat.eval_counts(&counts, &mut Scratch::default(), &mut b);
        // Drawn: negative 0.8 once, positive 0.7 twice, positive 0.1 once.
        let want = (2.0 * (2.0 / 3.0) + 1.0 * (3.0 / 4.0)) / 3.0;
        assert_eq!(b[0].to_bits(), a[0].to_bits());
        assert!((b[0] - want).abs() < 1e-15, "{} vs {want}", b[0]);
        let packed: Vec<[u8; LANES]> = counts.iter().map(|&c| [c as u8, 0, 1, c as u8]).collect();
        let mut lanes = [0.0; LANES];
        stat.eval_lanes(&packed, &mut Scratch::default(), &mut lanes);
        assert_eq!(lanes[0].to_bits(), b[0].to_bits());
        assert!(lanes[1].is_nan(), "no positive drawn: undefined");
        assert_eq!(lanes[3].to_bits(), b[0].to_bits());
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
        assert_lanes_equal_counts(&new, n, &mut rand::rngs::StdRng::seed_from_u64(3));
    }

    /// `eval_lanes` on `LANES` packed resamples (counts up to 255) equals
    /// `eval_counts` on each, bit for bit.
    fn assert_lanes_equal_counts(stat: &BucketAp, n: usize, rng: &mut impl Rng) {
        let max = if rng.random::<bool>() { 3 } else { 255 };
        let packed: Vec<[u8; LANES]> = (0..n)
            .map(|_| std::array::from_fn(|_| rng.random_range(0..=max)))
            .collect();
        let k = stat.n_out();
        let mut lanes = vec![0.0; LANES * k];
        stat.eval_lanes(&packed, &mut Scratch::default(), &mut lanes);
        for (l, got) in lanes.chunks(k).enumerate() {
            let counts: Vec<u32> = packed.iter().map(|c| u32::from(c[l])).collect();
            let mut one = vec![0.0; k];
            stat.eval_counts(&counts, &mut Scratch::default(), &mut one);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(got), bits(&one), "lane {l}");
        }
    }
}
