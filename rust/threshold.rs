//! Per-label confusion counts of thresholded scores, for `multilabel_report`'s F1
//! and Hamming loss.
//!
//! A cell is *predicted* when its score is `>= threshold`, *known* when the mask
//! says so (every cell without a mask), *positive* when its label is. Per label the
//! kernel counts known cells, known positives (support), known predicted cells and
//! known predicted positives (true positives) in one pass over scores, labels and
//! mask, instead of the several N x K boolean temporaries (`s >= t`, `pred & m`,
//! `pos & m`, ...) the same counts cost in NumPy. Counts are integers, added per
//! fixed row block, so they do not depend on the thread count.
//!
//! The threshold is given as a value of the score type (the smallest score that is
//! predicted; the Python layer derives it from NumPy's own `y_score >= threshold`
//! so that its promotion rules hold exactly), or `None` when no score is predicted.
//! Comparison is the score type's own `>=` ([`AtLeast`]): for floats IEEE, so
//! `-0.0` and `0.0` are the same score, as [`Score::key`] has it.
//!
//! Fast path (C-order rows, at most 64 labels): each row becomes three words of
//! label bits (positive, known, predicted) and per-label counters in byte lanes
//! take a whole word with a few word operations per eight labels, instead of four
//! counter updates per cell; other layouts count cell by cell. Same integers.

use ndarray::ArrayView2;

use crate::error::{MetricError, Result};
use crate::labels::LabelGrid;
use crate::parallel::Parallelism;
use crate::score::Score;

/// `score >= cut` in the score's own type. For floats this is IEEE `>=`, so
/// `-0.0 >= 0.0` (the same score, as [`Score::key`] has it); NaN is never predicted
/// (the callers reject NaN scores anyway).
pub trait AtLeast: Score {
    fn at_least(self, cut: Self) -> bool;
}

macro_rules! at_least {
    ($($t:ty),*) => {$(
        impl AtLeast for $t {
            #[inline(always)]
            fn at_least(self, cut: Self) -> bool {
                self >= cut
            }
        }
    )*};
}
at_least!(f64, f32, i64);

/// Per-label counts over known cells (length `k` each).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ThresholdCounts {
    /// Known cells.
    pub known: Vec<u64>,
    /// Known positive cells.
    pub support: Vec<u64>,
    /// Known cells with `score >= threshold`.
    pub predicted: Vec<u64>,
    /// Known positive cells with `score >= threshold`.
    pub true_positive: Vec<u64>,
}

/// `[known, support, predicted, true_positive]` of one label.
type Cell4 = [u64; 4];

/// Bit `i` of `b` to byte `i` (0 or 1) of the result.
#[inline(always)]
fn spread(b: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = (u64::from(b).wrapping_mul(ONES)) & 0x8040_2010_0804_0201;
    (x.wrapping_add(0x7f7f_7f7f_7f7f_7f7f) >> 7) & ONES
}

/// Per-label counters in byte lanes, for up to 64 labels: lane `j % 8` of word
/// `j / 8` counts label `j`. One row adds a whole word of label bits with a few
/// word operations per eight labels; lanes are flushed into `u64` totals before
/// they can overflow (every 255 rows).
struct Lanes {
    lanes: [u64; 8],
    totals: [u64; 64],
    rows: u32,
}

impl Lanes {
    fn new() -> Self {
        Lanes {
            lanes: [0; 8],
            totals: [0; 64],
            rows: 0,
        }
    }

    #[inline(always)]
    fn add(&mut self, word: u64, n_bytes: usize) {
        for (b, lane) in self.lanes.iter_mut().take(n_bytes).enumerate() {
            *lane += spread((word >> (8 * b)) as u8);
        }
        self.rows += 1;
        if self.rows == 255 {
            self.flush();
        }
    }

    fn flush(&mut self) {
        for (b, lane) in self.lanes.iter_mut().enumerate() {
            for (i, t) in self.totals.iter_mut().skip(8 * b).take(8).enumerate() {
                *t += (*lane >> (8 * i)) & 0xff;
            }
            *lane = 0;
        }
        self.rows = 0;
    }

    fn into_totals(mut self) -> [u64; 64] {
        self.flush();
        self.totals
    }
}

/// The fast path of one row block: every row contiguous, `1 <= k <= 64`. Each row
/// becomes three words (positives, known, predicted) and the counters take words.
fn count_block_words<S: AtLeast, L: LabelGrid>(
    y_score: ArrayView2<'_, S>,
    y_true: L,
    mask: Option<ArrayView2<'_, bool>>,
    cut: Option<S>,
    rows: std::ops::Range<usize>,
) -> Option<Vec<Cell4>> {
    let k = y_true.dim().1;
    if !(1..=64).contains(&k) {
        return None;
    }
    let s = y_score
        .slice(ndarray::s![rows.clone(), ..])
        .to_slice()
        .filter(|_| y_score.ncols() == k)?;
    let y = y_true.block(rows.clone())?;
    let m = match &mask {
        Some(m) => Some(m.slice(ndarray::s![rows.clone(), ..]).to_slice()?),
        None => None,
    };
    let n_rows = rows.len();
    let y_width = y.len().checked_div(n_rows).unwrap_or(0);
    if y_width == 0 && n_rows > 0 {
        return None;
    }
    let all = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
    let n_bytes = k.div_ceil(8);
    let (mut known, mut support, mut predicted, mut tp) =
        (Lanes::new(), Lanes::new(), Lanes::new(), Lanes::new());
    for (i, (srow, yrow)) in s
        .chunks_exact(k)
        .zip(y.chunks_exact(y_width.max(1)))
        .enumerate()
    {
        let kw = match m {
            Some(m) => {
                let row = m.get(i * k..(i + 1) * k).unwrap_or(&[]);
                let w = <ArrayView2<'_, bool> as LabelGrid>::row_word(row);
                known.add(w, n_bytes);
                w
            }
            None => all,
        };
        let pos = L::row_word(yrow) & all & kw;
        let mut pw = 0u64;
        if let Some(c) = cut {
            for (j, &v) in srow.iter().enumerate() {
                pw |= u64::from(v.at_least(c)) << j;
            }
        }
        pw &= kw;
        support.add(pos, n_bytes);
        predicted.add(pw, n_bytes);
        tp.add(pw & pos, n_bytes);
    }
    let (kn, su, pr, t) = (
        known.into_totals(),
        support.into_totals(),
        predicted.into_totals(),
        tp.into_totals(),
    );
    Some(
        (0..k)
            .map(|j| {
                [
                    if mask.is_some() { kn[j] } else { n_rows as u64 },
                    su[j],
                    pr[j],
                    t[j],
                ]
            })
            .collect(),
    )
}

#[inline(always)]
fn count_row<S: AtLeast, L: LabelGrid>(
    acc: &mut [Cell4],
    s: impl Iterator<Item = S>,
    y: &[L::Cell],
    m: Option<ndarray::ArrayView1<'_, bool>>,
    cut: Option<S>,
) {
    match m {
        None => {
            for (j, (c, sv)) in acc.iter_mut().zip(s).enumerate() {
                let pos = y
                    .get(L::cell_index(j))
                    .is_some_and(|&cell| L::is_pos(cell, j));
                let pred = u64::from(cut.is_some_and(|c| sv.at_least(c)));
                let pos = u64::from(pos);
                c[1] += pos;
                c[2] += pred;
                c[3] += pred & pos;
            }
        }
        Some(m) => {
            for (j, ((c, sv), &known)) in acc.iter_mut().zip(s).zip(m.iter()).enumerate() {
                let pos = y
                    .get(L::cell_index(j))
                    .is_some_and(|&cell| L::is_pos(cell, j));
                let known = u64::from(known);
                let pred = u64::from(cut.is_some_and(|c| sv.at_least(c))) & known;
                let pos = u64::from(pos) & known;
                c[0] += known;
                c[1] += pos;
                c[2] += pred;
                c[3] += pred & pos;
            }
        }
    }
}

/// Per-label counts of known cells, known positives, known cells with
/// `y_score >= threshold` and known positives among them (see the module docs).
/// `threshold = None` predicts nothing.
pub fn threshold_counts<S: AtLeast, L: LabelGrid>(
    y_score: ArrayView2<'_, S>,
    y_true: L,
    mask: Option<ArrayView2<'_, bool>>,
    threshold: Option<S>,
    par: &Parallelism,
) -> Result<ThresholdCounts> {
    let (n, k) = y_true.dim();
    if y_score.dim() != (n, k) {
        return Err(MetricError::shape(format!(
            "y_true and y_score have different shape: {:?} vs {:?}",
            (n, k),
            y_score.dim()
        )));
    }
    if let Some(m) = &mask {
        if m.dim() != (n, k) {
            return Err(MetricError::shape(format!(
                "mask has shape {:?}, expected {:?} (the shape of y_true)",
                m.dim(),
                (n, k)
            )));
        }
    }
    let cut = threshold;
    let blocks = par.map_row_blocks(n, k, |rows| -> Vec<Cell4> {
        if let Some(acc) = count_block_words(y_score, y_true, mask, cut, rows.clone()) {
            return acc;
        }
        let mut acc = vec![[0u64; 4]; k];
        let mut cells = Vec::new();
        for i in rows {
            let yrow = y_true.row(i);
            let y: &[L::Cell] = match yrow.as_slice() {
                Some(c) => c,
                None => {
                    cells.clear();
                    cells.extend(yrow.iter().copied());
                    &cells
                }
            };
            let srow = y_score.row(i);
            let m = mask.as_ref().map(|m| m.row(i));
            match srow.as_slice() {
                Some(s) => count_row::<S, L>(&mut acc, s.iter().copied(), y, m, cut),
                None => count_row::<S, L>(&mut acc, srow.iter().copied(), y, m, cut),
            }
            if mask.is_none() {
                for c in acc.iter_mut() {
                    c[0] += 1;
                }
            }
        }
        acc
    })?;
    let mut out = ThresholdCounts {
        known: vec![0; k],
        support: vec![0; k],
        predicted: vec![0; k],
        true_positive: vec![0; k],
    };
    for block in &blocks {
        for (j, c) in block.iter().enumerate() {
            if let (Some(a), Some(b), Some(p), Some(t)) = (
                out.known.get_mut(j),
                out.support.get_mut(j),
                out.predicted.get_mut(j),
                out.true_positive.get_mut(j),
            ) {
                *a += c[0];
                *b += c[1];
                *p += c[2];
                *t += c[3];
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::{pack_bool, PackedLabels};
    use crate::parallel::ROW_BLOCK;
    use ndarray::{arr2, Array2};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// The counts by definition, cell by cell.
    fn naive(
        s: &Array2<f64>,
        y: &Array2<bool>,
        m: Option<&Array2<bool>>,
        t: Option<f64>,
    ) -> ThresholdCounts {
        let (n, k) = y.dim();
        let mut out = ThresholdCounts {
            known: vec![0; k],
            support: vec![0; k],
            predicted: vec![0; k],
            true_positive: vec![0; k],
        };
        for i in 0..n {
            for j in 0..k {
                if m.is_some_and(|m| !m[[i, j]]) {
                    continue;
                }
                let pred = t.is_some_and(|t| s[[i, j]] >= t);
                out.known[j] += 1;
                out.support[j] += u64::from(y[[i, j]]);
                out.predicted[j] += u64::from(pred);
                out.true_positive[j] += u64::from(pred && y[[i, j]]);
            }
        }
        out
    }

    #[test]
    fn small_case_by_hand() {
        let s = arr2(&[[0.5, 0.2, -0.0], [0.7, 0.5, 0.0], [0.1, 0.9, 1.0]]);
        let y = arr2(&[
            [true, false, false],
            [false, true, true],
            [true, true, false],
        ]);
        let m = arr2(&[[true, true, false], [true, true, true], [false, true, true]]);
        let seq = Parallelism::sequential();
        let r = threshold_counts(s.view(), y.view(), None, Some(0.5), &seq).unwrap();
        assert_eq!(r.known, vec![3, 3, 3]);
        assert_eq!(r.support, vec![2, 2, 1]);
        assert_eq!(r.predicted, vec![2, 2, 1]);
        assert_eq!(r.true_positive, vec![1, 2, 0]);
        let r = threshold_counts(s.view(), y.view(), Some(m.view()), Some(0.5), &seq).unwrap();
        assert_eq!(r.known, vec![2, 3, 2]);
        assert_eq!(r.support, vec![1, 2, 1]);
        assert_eq!(r.predicted, vec![2, 2, 1]);
        assert_eq!(r.true_positive, vec![1, 2, 0]);
        // -0.0 and 0.0 are the same score: a threshold of 0.0 predicts both.
        let r = threshold_counts(s.view(), y.view(), None, Some(-0.0), &seq).unwrap();
        assert_eq!(r.predicted, vec![3, 3, 3]);
        // No threshold: nothing predicted.
        let r = threshold_counts(s.view(), y.view(), None, None, &seq).unwrap();
        assert_eq!(r.predicted, vec![0, 0, 0]);
        assert_eq!(r.true_positive, vec![0, 0, 0]);
        // Shapes are checked.
        let bad = Array2::<f64>::zeros((3, 2));
        assert!(threshold_counts(bad.view(), y.view(), None, Some(0.5), &seq).is_err());
        let badm = Array2::<bool>::from_elem((2, 3), true);
        assert!(threshold_counts(s.view(), y.view(), Some(badm.view()), None, &seq).is_err());
    }

    #[test]
    fn bool_packed_layouts_and_threads_agree_with_definition() {
        let mut rng = StdRng::seed_from_u64(11);
        for k in [2usize, 9, 15, 64, 70] {
            let n = 2 * ROW_BLOCK + 37;
            let s = Array2::from_shape_fn((n, k), |_| f64::from(rng.random_range(0..5u8)) / 4.0);
            let y = Array2::from_shape_fn((n, k), |_| rng.random_bool(0.3));
            let m = Array2::from_shape_fn((n, k), |_| rng.random_bool(0.8));
            let bits = pack_bool(&y);
            let packed = PackedLabels::new(bits.view(), k).unwrap();
            let sf = s.t().as_standard_layout().t().to_owned(); // F order scores
            let yf = y.t().as_standard_layout().t().to_owned(); // F order labels
            for mask in [None, Some(&m)] {
                for t in [None, Some(0.0), Some(0.5), Some(0.6), Some(2.0)] {
                    let want = naive(&s, &y, mask, t);
                    for threads in [1, 2, 3] {
                        let par = Parallelism { threads };
                        let mv = mask.map(|m| m.view());
                        let a = threshold_counts(s.view(), y.view(), mv, t, &par).unwrap();
                        let b = threshold_counts(s.view(), packed, mv, t, &par).unwrap();
                        let c = threshold_counts(sf.view(), yf.view(), mv, t, &par).unwrap();
                        assert_eq!(a, want, "k={k} t={t:?} threads={threads}");
                        assert_eq!(b, want, "packed k={k} t={t:?}");
                        assert_eq!(c, want, "F order k={k} t={t:?}");
                    }
                }
            }
            // float32 and int64 scores compare in their own type.
            let s32 = s.mapv(|v| v as f32);
            let si = s.mapv(|v| (v * 4.0) as i64);
            let want = naive(&s, &y, None, Some(0.5));
            let seq = Parallelism::sequential();
            let a = threshold_counts(s32.view(), packed, None, Some(0.5f32), &seq).unwrap();
            let b = threshold_counts(si.view(), packed, None, Some(2i64), &seq).unwrap();
            assert_eq!(a, want);
            assert_eq!(b, want);
        }
    }

    #[test]
    fn spread_puts_bit_i_in_byte_i() {
        for b in 0..=255u8 {
            let v = spread(b);
            for i in 0..8 {
                assert_eq!((v >> (8 * i)) & 0xff, u64::from((b >> i) & 1), "{b} {i}");
            }
        }
    }

    #[test]
    fn empty_inputs() {
        let s = Array2::<f64>::zeros((0, 3));
        let y = Array2::<bool>::from_elem((0, 3), false);
        let r = threshold_counts(
            s.view(),
            y.view(),
            None,
            Some(0.5),
            &Parallelism::sequential(),
        )
        .unwrap();
        assert_eq!(r.known, vec![0, 0, 0]);
    }
}
