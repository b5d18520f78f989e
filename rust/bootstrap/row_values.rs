//! Per-row metrics as bootstrap statistics.
//!
//! Label ranking loss, LRAP, coverage error, one-error and (N)DCG are weighted
//! means of one value per row, and a row's value does not depend on the other
//! rows. So each row's value is computed once, by the existing kernels of
//! `crate::label_ranking` (this module only adapts them: each row is handed to the
//! public `*_sum` functions as a one-row input), and a resample is the weighted
//! mean `sum_i w_i v_i / sum_i w_i`. Leave-one-out values have the closed form
//! `(S - w_i v_i) / (W - w_i)`.

use ndarray::{s, ArrayView1, ArrayView2};

use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::ranking::{self as label_ranking, Discounts, RankingMetric, Rows};
use crate::score::Score;

use super::{Scratch, Statistic, LANES};

/// The row value of a binary-relevance ranking metric, for every row.
pub fn ranking_row_values<S: Score>(
    y_true: ArrayView2<'_, bool>,
    y_score: ArrayView2<'_, S>,
    mask: Option<ArrayView2<'_, bool>>,
    metric: RankingMetric,
    par: &Parallelism,
) -> Result<Vec<f64>> {
    check(y_true.dim(), y_score.dim(), mask.map(|m| m.dim()))?;
    let seq = Parallelism::sequential();
    per_row(y_true.nrows(), y_true.ncols(), par, |i| {
        let rows = Rows {
            y_true: y_true.slice(s![i..i + 1, ..]),
            y_score: y_score.slice(s![i..i + 1, ..]),
            mask: mask.map(|m| m.slice_move(s![i..i + 1, ..])),
            sample_weight: None,
        };
        label_ranking::metric_sum(&rows, metric, &seq)
    })
}

/// The row value of DCG (`normalize = false`) or NDCG, for every row.
#[allow(clippy::too_many_arguments)]
pub fn dcg_row_values<S: Score>(
    gains: ArrayView2<'_, f64>,
    y_score: ArrayView2<'_, S>,
    mask: Option<ArrayView2<'_, bool>>,
    discount: ArrayView1<'_, f64>,
    cumsum: ArrayView1<'_, f64>,
    ignore_ties: bool,
    normalize: bool,
    par: &Parallelism,
) -> Result<Vec<f64>> {
    check(gains.dim(), y_score.dim(), mask.map(|m| m.dim()))?;
    let seq = Parallelism::sequential();
    let d = Discounts { discount, cumsum };
    per_row(gains.nrows(), gains.ncols(), par, |i| {
        let rows = Rows {
            y_true: gains.slice(s![i..i + 1, ..]),
            y_score: y_score.slice(s![i..i + 1, ..]),
            mask: mask.map(|m| m.slice_move(s![i..i + 1, ..])),
            sample_weight: None,
        };
        label_ranking::dcg_sum(&rows, &d, ignore_ties, normalize, &seq)
    })
}

fn check(t: (usize, usize), s: (usize, usize), m: Option<(usize, usize)>) -> Result<()> {
    if t != s || m.is_some_and(|m| m != t) {
        return Err(MetricError::shape(
            "y_true, y_score and mask have different shapes",
        ));
    }
    Ok(())
}

fn per_row<F>(n: usize, width: usize, par: &Parallelism, f: F) -> Result<Vec<f64>>
where
    F: Fn(usize) -> Result<f64> + Sync + Send,
{
    let blocks = par.map_row_blocks(n, width, |r| r.map(&f).collect::<Result<Vec<f64>>>())?;
    let mut out = Vec::with_capacity(n);
    for b in blocks {
        out.extend(b?);
    }
    Ok(out)
}

/// Weighted mean of fixed per-row values: one column per system.
pub struct RowMean<'a> {
    values: ArrayView1<'a, f64>,
}

impl<'a> RowMean<'a> {
    pub fn new(values: ArrayView1<'a, f64>) -> Self {
        RowMean { values }
    }

    /// `(sum_i w_i v_i, sum_i w_i)`.
    fn sums(&self, w: &[f64]) -> (f64, f64) {
        let (mut num, mut den) = (0.0f64, 0.0f64);
        for (&wi, &v) in w.iter().zip(self.values.iter()) {
            num += wi * v;
            den += wi;
        }
        (num, den)
    }

    /// The means of the two mixed systems of one permutation: system A takes
    /// `other`'s value on swapped rows, system B the reverse.
    pub fn eval_swapped(&self, other: &RowMean<'_>, swapped: &[bool], w: &[f64]) -> [f64; 2] {
        let (mut sa, mut sb, mut den) = (0.0f64, 0.0f64, 0.0f64);
        for (i, (&wi, &sw)) in w.iter().zip(swapped).enumerate() {
            let (va, vb) = (self.values[i], other.values[i]);
            let (xa, xb) = if sw { (vb, va) } else { (va, vb) };
            sa += wi * xa;
            sb += wi * xb;
            den += wi;
        }
        if den == 0.0 {
            [f64::NAN, f64::NAN]
        } else {
            [sa / den, sb / den]
        }
    }
}

impl Statistic for RowMean<'_> {
    fn n_out(&self) -> usize {
        1
    }

    fn eval(&self, w: &[f64], out: &mut [f64]) {
        let (num, den) = self.sums(w);
        out[0] = if den == 0.0 { f64::NAN } else { num / den };
    }

    fn eval_counts(&self, counts: &[u32], _scratch: &mut Scratch, out: &mut [f64]) {
        let (mut num, mut den) = (0.0f64, 0.0f64);
        for (&c, &v) in counts.iter().zip(self.values.iter()) {
            let wi = f64::from(c);
            num += wi * v;
            den += wi;
        }
        out[0] = if den == 0.0 { f64::NAN } else { num / den };
    }

    fn jackknife(&self, w: &[f64], _par: &Parallelism) -> Result<Vec<f64>> {
        let (num, den) = self.sums(w);
        Ok(w.iter()
            .zip(self.values.iter())
            .map(|(&wi, &v)| {
                let d = den - wi;
                if d == 0.0 {
                    f64::NAN
                } else {
                    (num - wi * v) / d
                }
            })
            .collect())
    }
}

/// Weighted means of several systems' per-row values (`n_rows x n_systems`,
/// one column per system) in one pass over the rows; each column's sums run in
/// row order, as [`RowMean`]'s.
pub struct RowMeans<'a> {
    values: ArrayView2<'a, f64>,
}

impl<'a> RowMeans<'a> {
    pub fn new(values: ArrayView2<'a, f64>) -> Self {
        RowMeans { values }
    }

    fn mean_of<I: Iterator<Item = f64> + Clone>(&self, w: I, out: &mut [f64]) {
        let s = self.values.ncols();
        let mut num = [0.0f64; 4];
        if s > num.len() {
            // Rare (more than four systems): one pass per system.
            for (j, o) in out.iter_mut().enumerate() {
                let col = RowMean::new(self.values.column(j));
                let (mut a, mut d) = (0.0f64, 0.0f64);
                for (wi, &v) in w.clone().zip(col.values.iter()) {
                    a += wi * v;
                    d += wi;
                }
                *o = if d == 0.0 { f64::NAN } else { a / d };
            }
            return;
        }
        let mut den = 0.0f64;
        for (wi, row) in w.zip(self.values.rows()) {
            for (acc, &v) in num.iter_mut().zip(row.iter()) {
                *acc += wi * v;
            }
            den += wi;
        }
        for (o, &a) in out.iter_mut().zip(&num) {
            *o = if den == 0.0 { f64::NAN } else { a / den };
        }
    }
}

impl Statistic for RowMeans<'_> {
    fn n_out(&self) -> usize {
        self.values.ncols()
    }

    fn eval(&self, w: &[f64], out: &mut [f64]) {
        self.mean_of(w.iter().copied(), out);
    }

    fn eval_counts(&self, counts: &[u32], _scratch: &mut Scratch, out: &mut [f64]) {
        self.mean_of(counts.iter().map(|&c| f64::from(c)), out);
    }

    fn eval_lanes(&self, packed: &[[u8; LANES]], _scratch: &mut Scratch, out: &mut [f64]) {
        let k = self.n_out();
        if k == 0 {
            return;
        }
        for (l, o) in out.chunks_mut(k).enumerate() {
            self.mean_of(packed.iter().map(|c| f64::from(c[l])), o);
        }
    }
}

/// Per permutation, the means of the mixed systems A and B (`n_perm x 2`); swap
/// flags from [`super::swap_flags`].
pub fn row_mean_permutations(
    a: &RowMean<'_>,
    b: &RowMean<'_>,
    w: &[f64],
    seed: u64,
    n_perm: usize,
    par: &Parallelism,
) -> Result<Vec<f64>> {
    super::permutations(w.len(), seed, n_perm, par, |swapped| {
        a.eval_swapped(b, swapped, w).to_vec()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn jackknife_matches_removal() {
        let v = array![0.5, 0.25, 1.0, 0.0];
        let st = RowMean::new(v.view());
        let w = [1.0, 2.0, 0.5, 1.0];
        let fast = st.jackknife(&w, &Parallelism::sequential()).unwrap();
        let slow = super::super::jackknife_by_removal(&st, &w, &Parallelism::sequential()).unwrap();
        for (a, b) in fast.iter().zip(&slow) {
            assert!((a - b).abs() < 1e-15);
        }
    }

    #[test]
    fn row_values_sum_to_the_metric_sum() {
        let y = array![
            [true, false, true],
            [false, false, true],
            [true, true, false]
        ];
        let s = array![[0.1, 0.5, 0.3], [0.2, 0.2, 0.2], [0.9, 0.1, 0.4]];
        let par = Parallelism::sequential();
        for m in [
            RankingMetric::LabelRankingLoss,
            RankingMetric::Lrap,
            RankingMetric::Coverage,
            RankingMetric::OneError,
        ] {
            let v = ranking_row_values(y.view(), s.view(), None, m, &par).unwrap();
            let rows = Rows {
                y_true: y.view(),
                y_score: s.view(),
                mask: None,
                sample_weight: None,
            };
            let total = label_ranking::metric_sum(&rows, m, &par).unwrap();
            assert!((v.iter().sum::<f64>() - total).abs() < 1e-14, "{m:?}");
        }
    }
}
