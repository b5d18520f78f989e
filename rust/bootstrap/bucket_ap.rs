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
//! so it is computed once: the positives are sorted (a few per cent of the rows)
//! and each negative's bucket is a binary search among the positive groups'
//! keys, written straight into the `u16` bucket column (no sort of the whole
//! label, no wider temporary). A resample then
//!
//! 1. adds each drawn row's count to its bucket, in row order (sequential reads
//!    of the drawn rows and of the bucket column, increments in a histogram of one
//!    slot per positive group, small enough for L1; the ~37% of rows a resample
//!    does not draw are skipped), and
//! 2. walks the positive groups: the false positives up to group `g` are the
//!    histogram's prefix sum, the true positives the counts of the positives (a
//!    list in descending score order).
//!
//! Both steps see the same integers as the sorted walk of `weighted_ap` and add
//! the same AP terms in the same order, so the values are bit-identical to it
//! (tested below). Positives, unknown cells and negatives below every positive
//! fall in discarded slots after the groups' (several, taken in turn, so that
//! their increments do not wait on each other).
//!
//! Several systems scored on the same rows (a paired comparison) share one
//! statistic and one pass: a label's bucket column interleaves the systems (row,
//! then cell, then system), each system's ids offset into its own part of one
//! histogram, so a resample reads each row's count once for all systems.

use ndarray::ArrayView2;

use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::score::Score;
use crate::sort::sort_by_key_stable;

use super::weighted_ap::{combine, finish, ApAverage};
use super::{Scratch, Statistic};

const NEW_GROUP: u32 = 1 << 31;
const ROW: u32 = NEW_GROUP - 1;
/// Discarded slots per system: cell `i` discards into slot `i % DUMP`, so that the
/// many discarded cells (positives, unknown cells, negatives below every positive)
/// do not chain every increment of a pass through one memory location.
const DUMP: usize = 8;

/// Bucket ids of every cell of every system: `u16` while all systems' slots fit,
/// else `u32`.
enum Buckets {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

/// One system's positives of one label.
struct Positives {
    /// Positive rows in descending score order, `NEW_GROUP` on the first of each
    /// positive group.
    rows: Vec<u32>,
    /// Number of positive groups (the discarded slots follow them).
    n_groups: usize,
    /// First histogram slot of this system.
    offset: usize,
}

/// One label (or, for the micro average, all cells) of every system.
struct BucketLabel {
    /// Histogram slot of every (cell, system): cells in row-major order,
    /// `width = cells_per_row * n_systems` ids per row, systems innermost.
    buckets: Buckets,
    width: usize,
    systems: Vec<Positives>,
    /// Histogram slots of all systems.
    n_slots: usize,
}

/// A system's positive groups: positives in descending score order and the
/// complemented key of each group (ascending).
fn positive_groups<S: Score>(
    cells: impl Iterator<Item = (u32, S, bool)>,
    cells_per_row: usize,
) -> (Vec<u32>, Vec<u64>) {
    let mut keys = Vec::new();
    let mut rows = Vec::new();
    for (cell, s, pos) in cells {
        if pos {
            keys.push(!s.key());
            rows.push((cell as usize / cells_per_row) as u32);
        }
    }
    sort_by_key_stable(&mut keys, &mut rows);
    let mut groups = Vec::new();
    for (i, r) in rows.iter_mut().enumerate() {
        if i == 0 || keys[i] != keys[i - 1] {
            *r |= NEW_GROUP;
            groups.push(keys[i]);
        }
    }
    rows.shrink_to_fit();
    groups.shrink_to_fit();
    (rows, groups)
}

impl BucketLabel {
    /// From each system's known cells `(cell, score, positive)` (`cells(s)` for
    /// system `s`, cells in increasing order); `n_cells` cells in all,
    /// `cells_per_row` of them per row.
    fn build<S: Score, I: Iterator<Item = (u32, S, bool)>>(
        cells: impl Fn(usize) -> I,
        n_systems: usize,
        n_cells: usize,
        cells_per_row: usize,
    ) -> Self {
        let groups: Vec<(Vec<u32>, Vec<u64>)> = (0..n_systems)
            .map(|s| positive_groups(cells(s), cells_per_row))
            .collect();
        let mut offset = 0;
        let systems: Vec<Positives> = groups
            .iter()
            .map(|(rows, g)| {
                let p = Positives {
                    rows: rows.clone(),
                    n_groups: g.len(),
                    offset,
                };
                offset += g.len() + DUMP;
                p
            })
            .collect();
        let n_slots = offset;
        // Every id starts as one of its system's discarded slots (positives,
        // unknown cells, negatives below every positive); known negatives above
        // the last positive group get the number of positive groups scoring
        // higher (a tied group included: the negative's key is not above it).
        let fill = |ids: &mut dyn FnMut(usize, usize)| {
            for (s, (_, g)) in groups.iter().enumerate() {
                for (cell, score, pos) in cells(s) {
                    if !pos {
                        let q = !score.key();
                        let b = g.partition_point(|&k| k < q);
                        if b < g.len() {
                            ids(cell as usize * n_systems + s, systems[s].offset + b);
                        }
                    }
                }
            }
        };
        let discard: Vec<usize> = systems.iter().map(|p| p.offset + p.n_groups).collect();
        let dump = |i: usize| discard[i % n_systems] + (i / n_systems) % DUMP;
        let buckets = if n_slots <= usize::from(u16::MAX) + 1 {
            let mut col: Vec<u16> = (0..n_cells * n_systems).map(|i| dump(i) as u16).collect();
            fill(&mut |i, b| col[i] = b as u16);
            Buckets::Narrow(col)
        } else {
            let mut col: Vec<u32> = (0..n_cells * n_systems).map(|i| dump(i) as u32).collect();
            fill(&mut |i, b| col[i] = b as u32);
            Buckets::Wide(col)
        };
        BucketLabel {
            buckets,
            width: cells_per_row * n_systems,
            systems,
            n_slots,
        }
    }

    /// AP and positive count of every system into `out` (one per system), for
    /// row counts `counts`, whose drawn rows are `drawn`; AP is NaN when no
    /// positive is drawn. `hist` is scratch.
    fn ap(&self, counts: &[u32], drawn: &Drawn, hist: &mut Vec<u32>, out: &mut [(f64, f64)]) {
        hist.clear();
        hist.resize(self.n_slots, 0);
        match &self.buckets {
            Buckets::Narrow(b) => add_counts(b, self.width, drawn, hist),
            Buckets::Wide(b) => add_counts(b, self.width, drawn, hist),
        }
        for (p, o) in self.systems.iter().zip(out) {
            *o = walk(&p.rows, &hist[p.offset..p.offset + p.n_groups], counts);
        }
    }
}

/// AP from one system's positives and false-positive histogram.
fn walk(positives: &[u32], hist: &[u32], counts: &[u32]) -> (f64, f64) {
    let (mut tp, mut fp, mut prev_tp, mut sum) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut g = 0usize;
    for (k, &e) in positives.iter().enumerate() {
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

#[inline]
fn close_group(tp: f64, fp: f64, prev_tp: &mut f64, sum: &mut f64) {
    let d = tp - *prev_tp;
    if d != 0.0 {
        *sum += d * (tp / (tp + fp));
        *prev_tp = tp;
    }
}

/// The rows a resample draws (count > 0) and their counts, in row order: a
/// resample leaves about 37% of the rows out, and those add nothing.
#[derive(Default)]
pub struct Drawn {
    rows: Vec<u32>,
    counts: Vec<u32>,
}

impl Drawn {
    fn set(&mut self, counts: &[u32]) {
        let n = counts.len();
        self.rows.resize(n, 0);
        self.counts.resize(n, 0);
        // Branch-free compaction: every row is written, the end moves past it
        // only when it was drawn.
        let mut end = 0;
        for (i, &c) in counts.iter().enumerate() {
            self.rows[end] = i as u32;
            self.counts[end] = c;
            end += usize::from(c != 0);
        }
        self.rows.truncate(end);
        self.counts.truncate(end);
    }
}

/// `hist[id] += count of the row` for every id of every drawn row, `width` ids
/// per row.
#[inline]
fn add_counts<B: Copy + Into<u32>>(buckets: &[B], width: usize, drawn: &Drawn, hist: &mut [u32]) {
    let rows = drawn.rows.iter().map(|&r| r as usize).zip(&drawn.counts);
    match width {
        1 => {
            for (r, &c) in rows {
                hist[buckets[r].into() as usize] += c;
            }
        }
        2 => {
            for (r, &c) in rows {
                hist[buckets[2 * r].into() as usize] += c;
                hist[buckets[2 * r + 1].into() as usize] += c;
            }
        }
        _ => {
            for (r, &c) in rows {
                for &b in &buckets[r * width..(r + 1) * width] {
                    hist[b.into() as usize] += c;
                }
            }
        }
    }
}

/// AP of one or more systems (score matrices on the same rows and labels) on
/// resamples drawn without `sample_weight`: `n_out` is the sum of the systems'.
pub struct BucketAp {
    labels: Vec<BucketLabel>,
    n_systems: usize,
    average: ApAverage,
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
        let n_systems = y_scores.len();
        let known = |i: usize, j: usize| mask.is_none_or(|m| m[(i, j)]);
        let labels = if micro {
            vec![BucketLabel::build(
                |s| {
                    let sc = y_scores[s];
                    (0..n)
                        .flat_map(move |i| (0..k).map(move |j| (i, j)))
                        .filter(move |&(i, j)| known(i, j))
                        .map(move |(i, j)| ((i * k + j) as u32, sc[(i, j)], y_pos[(i, j)]))
                },
                n_systems,
                cells,
                k,
            )]
        } else {
            par.map(k, n * k * n_systems, |j| {
                let pos = y_pos.column(j);
                BucketLabel::build(
                    |s| {
                        let col = y_scores[s].column(j);
                        (0..n)
                            .filter(move |&i| known(i, j))
                            .map(move |i| (i as u32, col[i], pos[i]))
                    },
                    n_systems,
                    n,
                    1,
                )
            })?
        };
        Ok(BucketAp {
            labels,
            n_systems,
            average,
        })
    }

    fn n_out_one(&self) -> usize {
        if self.average == ApAverage::PerLabel {
            self.labels.len()
        } else {
            1
        }
    }
}

impl Statistic for BucketAp {
    fn n_out(&self) -> usize {
        self.n_systems * self.n_out_one()
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
        let (s, n_labels) = (self.n_systems, self.labels.len());
        let per = &mut scratch.ap;
        per.clear();
        per.resize(s * n_labels, (0.0, 0.0));
        // `per` is label-major: label j's systems at j * s .. (j + 1) * s.
        scratch.drawn.set(counts);
        for (label, o) in self.labels.iter().zip(per.chunks_mut(s)) {
            label.ap(counts, &scratch.drawn, &mut scratch.hist, o);
        }
        let k = self.n_out_one();
        for (sys, o) in out.chunks_mut(k).enumerate() {
            combine(self.average, per.iter().skip(sys).step_by(s).copied(), o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::weighted_ap::ApStatistic;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};

    /// Random labels, two systems' scores with many ties, a mask, and random
    /// counts: the shared (interleaved) bucket pass equals the sorted walk of
    /// each system on its own, bit for bit, for every average.
    #[test]
    fn equals_the_sorted_walk() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        let par = Parallelism::sequential();
        for case in 0..60 {
            let (n, k) = (rng.random_range(1..300), rng.random_range(1..5));
            let levels = if case % 2 == 0 { 4.0 } else { 1e6 };
            let mut score =
                || Array2::from_shape_fn((n, k), |_| (rng.random::<f64>() * levels).floor());
            let (s, t) = (score(), score());
            let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.3);
            let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.8);
            let mask = (case % 3 != 0).then_some(m.view());
            let counts: Vec<u32> = (0..n).map(|_| rng.random_range(0..4)).collect();
            let w: Vec<f64> = counts.iter().map(|&c| f64::from(c)).collect();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            for avg in [
                ApAverage::Macro,
                ApAverage::Weighted,
                ApAverage::PerLabel,
                ApAverage::Micro,
            ] {
                let mut expected = Vec::new();
                for sys in [&s, &t] {
                    let old =
                        ApStatistic::new(sys.view(), y.view(), mask, avg, false, &par).unwrap();
                    let mut a = vec![0.0; old.n_out()];
                    old.eval(&w, &mut a);
                    expected.extend(a);
                }
                let one = BucketAp::new(&[s.view()], y.view(), mask, avg, &par).unwrap();
                let mut b = vec![0.0; one.n_out()];
                one.eval_counts(&counts, &mut Scratch::default(), &mut b);
                assert_eq!(bits(&b), bits(&expected[..b.len()]), "case {case} {avg:?}");
                let two = BucketAp::new(&[s.view(), t.view()], y.view(), mask, avg, &par).unwrap();
                let mut b = vec![0.0; two.n_out()];
                two.eval_counts(&counts, &mut Scratch::default(), &mut b);
                assert_eq!(bits(&b), bits(&expected), "case {case} {avg:?} paired");
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
        assert!(matches!(new.labels[0].buckets, Buckets::Wide(_)));
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
