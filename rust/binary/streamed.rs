//! Values from sorted runs without term buffers: the narrow-key (4-byte) labels,
//! whose buffers have no room for 8-byte counts and terms, and the McClish partial
//! ROC AUC, which only walks the part of the curve below `max_fpr`. Counting walks
//! first (the pairwise tree depends on the number of terms), then the terms are
//! streamed into [`crate::numeric::pairwise_stream`]: bit-identical to the curve.

use super::curve::interp2;
use super::per_label::{label_values, split_cum, Blocks, SplitKeys, NOT_COMPUTED};
use super::{
    MetricValue, Path, FLAG_EMPTY, FLAG_NOT_MONOTONIC, FLAG_NO_POSITIVE, FLAG_SINGLE_CLASS,
    FLAG_TOO_FEW_POINTS,
};
use crate::numeric::{pairwise_stream, Start};
use crate::sort::RadixKey;

/// Whether the point of the block with cumulative counts `c` (after a block ending
/// at `prev`, before one ending at `next`, if any) survives drop_intermediate, as in
/// [`auc_blocks`] (the first point is always kept).
#[inline]
pub(super) fn keep_point(prev: u64, c: u64, next: Option<u64>) -> bool {
    next.is_none_or(|nx| nx.wrapping_sub(c) != c.wrapping_sub(prev))
}

/// ROC points kept by [`auc_blocks`] (drop_intermediate), walked block by block.
pub(super) struct AucPoints<'a, K> {
    pub(super) blocks: Blocks<'a, K>,
    pub(super) i: usize,
    pub(super) prev: u64,
    pub(super) cur: Option<u64>,
    pub(super) px: f64,
    pub(super) py: f64,
}

impl<'a, K: RadixKey> AucPoints<'a, K> {
    pub(super) fn new(pos: &'a [K], neg: &'a [K]) -> Self {
        let mut blocks = Blocks { pos, neg };
        let mut c = 0u64;
        let cur = blocks.pop_front(&mut c).then_some(c);
        AucPoints {
            blocks,
            i: 0,
            prev: 0,
            cur,
            px: 0.0,
            py: 0.0,
        }
    }

    /// The next trapezoid term of [`auc_blocks`].
    pub(super) fn next_term(&mut self, tl: f64, fl: f64) -> Option<f64> {
        loop {
            let c = self.cur?;
            let mut nx = c;
            let nx = self.blocks.pop_front(&mut nx).then_some(nx);
            let keep = self.i == 0 || keep_point(self.prev, c, nx);
            self.prev = c;
            self.cur = nx;
            self.i += 1;
            if keep {
                let (tp, rows) = split_cum(c);
                let x = (rows - tp) / fl;
                let y = tp / tl;
                let term = (x - self.px) * (y + self.py) / 2.0;
                self.px = x;
                self.py = y;
                return Some(term);
            }
        }
    }
}

/// [`label_values`] for keys too narrow to hold the block counts and terms: the
/// same counts, terms and pairwise sums (hence bit-identical values), computed by
/// walking the sorted runs again instead of storing them (a counting walk first,
/// since the pairwise tree depends on the number of terms).
pub(super) fn label_values_streamed<K: RadixKey>(
    pos: &[K],
    neg: &[K],
    ap: bool,
    auc: bool,
) -> (MetricValue, MetricValue) {
    let empty = NOT_COMPUTED;
    let (np, nn) = (pos.len() as u64, neg.len() as u64);
    // One counting walk: blocks (AP terms) and kept ROC points (AUC terms).
    let (mut t, mut u) = (0usize, 0usize);
    let mut blocks = Blocks { pos, neg };
    let (mut prev, mut c) = (0u64, 0u64);
    if blocks.pop_front(&mut c) {
        t = 1;
        u = 1;
        loop {
            let mut nx = c;
            let more = blocks.pop_front(&mut nx);
            if t > 1 {
                u += usize::from(keep_point(prev, c, more.then_some(nx)));
            }
            if !more {
                break;
            }
            t += 1;
            prev = c;
            c = nx;
        }
    }
    let a = if !ap || t == 0 {
        empty
    } else if np == 0 {
        MetricValue {
            value: 0.0,
            flags: FLAG_NO_POSITIVE,
        }
    } else {
        // Terms in the order of the reversed curve = ascending score order.
        let pf = np as f64;
        let mut blocks = Blocks { pos, neg };
        let mut c = (np << 32) + np + nn;
        let mut next = || {
            let (tps, rows) = split_cum(c);
            blocks.pop_back(&mut c);
            let prev_r = split_cum(c).0 / pf;
            let r = tps / pf;
            (prev_r - r) * (tps / rows)
        };
        let s = -pairwise_stream(t, Start::NegativeZero, &mut next);
        MetricValue {
            value: if s > 0.0 { s } else { 0.0 },
            flags: 0,
        }
    };
    let b = if !auc {
        empty
    } else if np == 0 || nn == 0 {
        MetricValue {
            value: f64::NAN,
            flags: FLAG_SINGLE_CLASS,
        }
    } else {
        let (tl, fl) = (np as f64, nn as f64);
        let mut pts = AucPoints::new(pos, neg);
        let mut next = || pts.next_term(tl, fl).unwrap_or(0.0);
        MetricValue {
            value: pairwise_stream(u, Start::NegativeZero, &mut next),
            flags: 0,
        }
    };
    (a, b)
}

/// ROC points kept by drop_intermediate, walked block by block: the cumulative
/// counts `(positives << 32) | rows` of each kept point in descending score order,
/// the same points as [`auc_blocks`] and [`roc_auc_from_curve`] (without the
/// prepended origin).
pub(super) struct KeptPoints<'a, K> {
    pub(super) blocks: Blocks<'a, K>,
    pub(super) first: bool,
    pub(super) prev: u64,
    pub(super) cur: Option<u64>,
}

impl<'a, K: RadixKey> KeptPoints<'a, K> {
    pub(super) fn new(pos: &'a [K], neg: &'a [K]) -> Self {
        let mut blocks = Blocks { pos, neg };
        let mut c = 0u64;
        let cur = blocks.pop_front(&mut c).then_some(c);
        KeptPoints {
            blocks,
            first: true,
            prev: 0,
            cur,
        }
    }

    /// Counts of the next kept point.
    pub(super) fn next_point(&mut self) -> Option<u64> {
        loop {
            let c = self.cur?;
            let mut nx = c;
            let nx = self.blocks.pop_front(&mut nx).then_some(nx);
            let keep = self.first || keep_point(self.prev, c, nx);
            self.first = false;
            self.prev = c;
            self.cur = nx;
            if keep {
                return Some(c);
            }
        }
    }
}

/// McClish-standardised partial ROC AUC up to `mf` of one label from its sorted
/// runs (unweighted), bit-identical to [`roc_auc_from_curve`] with `Some(mf)`:
/// the same kept points, the same `searchsorted(fpr, mf, "right")` and
/// interpolation at `mf`, the same trapezoid terms in the same order and the same
/// pairwise sum. Nothing is stored: a first walk counts the points up to `mf` (the
/// pairwise tree depends on the number of terms) and finds the two around it, a
/// second one streams the terms; both stop at the first point beyond `mf`, so
/// the work is proportional to the part of the curve that is used.
pub(super) fn partial_auc_streamed<K: RadixKey>(pos: &[K], neg: &[K], mf: f64) -> MetricValue {
    let (np, nn) = (pos.len() as u64, neg.len() as u64);
    if np + nn == 0 {
        return MetricValue {
            value: f64::NAN,
            flags: FLAG_EMPTY | FLAG_SINGLE_CLASS,
        };
    }
    if np == 0 || nn == 0 {
        return MetricValue {
            value: f64::NAN,
            flags: FLAG_SINGLE_CLASS,
        };
    }
    let (tl, fl) = (np as f64, nn as f64);
    // (fpr, tpr) of a point, as `fps / fps[-1]`, `tps / tps[-1]`.
    let point = |c: u64| {
        let (tp, rows) = split_cum(c);
        ((rows - tp) / fl, tp / tl)
    };
    // `stop` = searchsorted(fpr, mf, "right") over the origin and the kept points
    // (fpr is non-decreasing here); `(xa, ya)` = point stop - 1, `(xb, yb)` =
    // point stop (NaN past the end, as the general path reads it).
    if mf.is_nan() || mf < 0.0 {
        // Even the origin (fpr 0) is not <= mf: stop = 0, only the interpolated
        // point is left (fewer than two points).
        return MetricValue {
            value: f64::NAN,
            flags: FLAG_TOO_FEW_POINTS,
        };
    }
    let mut stop = 1usize;
    let (mut xa, mut ya) = (0.0f64, 0.0f64);
    let (mut xb, mut yb) = (f64::NAN, f64::NAN);
    let mut pts = KeptPoints::new(pos, neg);
    while let Some(c) = pts.next_point() {
        let (x, y) = point(c);
        if x <= mf {
            stop += 1;
            (xa, ya) = (x, y);
        } else {
            (xb, yb) = (x, y);
            break;
        }
    }
    let y_new = interp2(mf, xa, xb, ya, yb);
    // Terms of `auc(xs, ys)` with xs = fpr[..stop] + [mf], ys = tpr[..stop] + [y_new]:
    // stop - 1 terms between kept points, then the one up to `mf`.
    let mut pts = KeptPoints::new(pos, neg);
    let (mut px, mut py) = (0.0f64, 0.0f64);
    let mut left = stop - 1;
    let (mut any_neg, mut all_nonpos) = (false, true);
    let mut next = || {
        let (x, y) = if left > 0 {
            left -= 1;
            pts.next_point().map_or((f64::NAN, f64::NAN), point)
        } else {
            (mf, y_new)
        };
        let dx = x - px;
        if dx < 0.0 {
            any_neg = true;
        }
        if dx > 0.0 || dx.is_nan() {
            all_nonpos = false;
        }
        let term = dx * (y + py) / 2.0;
        px = x;
        py = y;
        term
    };
    let sum = pairwise_stream(stop, Start::NegativeZero, &mut next);
    let direction = if any_neg {
        if all_nonpos {
            -1.0
        } else {
            return MetricValue {
                value: f64::NAN,
                flags: FLAG_NOT_MONOTONIC,
            };
        }
    } else {
        1.0
    };
    let p = direction * sum;
    let min_area = 0.5 * mf * mf;
    let max_area = mf;
    MetricValue {
        value: 0.5 * (1.0 + (p - min_area) / (max_area - min_area)),
        flags: 0,
    }
}

/// [`label_values`] with the ROC AUC optionally partial: `max_fpr` other than
/// `None` and `1.0` (which scikit-learn treats as the full area) gives
/// [`partial_auc_streamed`], computed from the sorted runs before AP (which may
/// reuse the key buffer for its terms).
pub(super) fn label_values_fpr<K: RadixKey>(
    buf: &mut SplitKeys<K>,
    ap: bool,
    auc: bool,
    max_fpr: Option<f64>,
) -> (MetricValue, MetricValue) {
    let mf = match max_fpr {
        Some(v) if auc && buf.path(max_fpr) == Path::PartialRuns => v,
        _ => return label_values(buf, ap, auc),
    };
    buf.sort_runs();
    let nk = buf.keys.len();
    let pos = buf.keys.get(..buf.n_pos).unwrap_or(&[]);
    let neg = buf.keys.get(nk.saturating_sub(buf.n_neg)..).unwrap_or(&[]);
    let b = partial_auc_streamed(pos, neg, mf);
    let a = if ap {
        label_values(buf, true, false).0
    } else {
        MetricValue {
            value: f64::NAN,
            flags: FLAG_EMPTY,
        }
    };
    (a, b)
}
