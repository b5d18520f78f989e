//! The cell filter of the micro-average bucket stream: which cells of a row block
//! fall in a group's key range. A branch-free mask pass per sub-block (vectorised;
//! an AVX2/BMI1 build is chosen at run time through [`crate::cpu::has_avx2`]) then a
//! visit of the chosen cells only, in row-major order.

use ndarray::ArrayView2;

use super::micro::scan_cells;
use crate::labels::LabelGrid;
use crate::score::Score;

/// Cells per sub-block of the two-phase group filter: 4096 float64 scores (32 KiB)
/// stay in cache between the mask pass and the pass over the chosen cells.
pub(super) const FILTER_CELLS: usize = 4096;

/// `ceil(2**32 / k)`: `(i * r) >> 32 == i / k` for every `i < 2**32 / k`
/// (`k <= 64` and `i` below a row block's cells, `ROW_BLOCK * 64 = 2**19`).
#[inline]
pub(super) fn row_reciprocal(k: usize) -> u64 {
    ((1u64 << 32) + k as u64 - 1) / (k as u64).max(1)
}

/// A group's key range: buckets `first..first + span` of the digit at `shift`
/// (bucket id = negated key `>> shift`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Buckets {
    pub(super) shift: u32,
    pub(super) first: u64,
    pub(super) span: u64,
}

impl Buckets {
    /// Whether a negated key lies in these buckets.
    #[inline(always)]
    pub(super) fn holds(self, key: u64) -> bool {
        (key >> self.shift).wrapping_sub(self.first) < self.span
    }

    /// Whether a cell's negated key lies in these buckets.
    #[inline(always)]
    pub(super) fn holds_score<S: Score>(self, v: S) -> bool {
        self.holds(!v.key())
    }
}

/// Two-phase filter of contiguous rows (`sv`: `k` scores per row, `yv`: `ck` label
/// cells per row, `mv`: `k` mask cells per row when there is a mask,
/// `1 <= k <= 64`). Per sub-block, a branch-free pass sets bit `i` of a mask word
/// when cell `i` is known and in the group's buckets `g` (this pass vectorises, and
/// it is most of the work: a group holds a small share of the cells); then only the
/// chosen cells are visited, in row-major order, and passed to
/// `emit(negated key, class)`.
#[inline(always)]
pub(super) fn filter_cells<S: Score, L: LabelGrid>(
    sv: &[S],
    yv: &[L::Cell],
    mv: Option<&[bool]>,
    (k, ck): (usize, usize),
    g: Buckets,
    mut emit: impl FnMut(u64, bool),
) {
    // Callers pass a mask block of the same cells (micro_group: check_shapes).
    if k == 0 || ck == 0 || mv.is_some_and(|m| m.len() != sv.len()) {
        return;
    }
    let recip = row_reciprocal(k);
    let exact = (sv.len() as u64) < (1u64 << 32) / k as u64;
    let sub = (FILTER_CELLS / k).max(1) * k;
    let mut bits = [0u64; FILTER_CELLS.div_ceil(64) + 1];
    for (c, block) in sv.chunks(sub).enumerate() {
        let base = c * sub;
        let known = mv.map(|mv| mv.get(base..base + block.len()).unwrap_or_default());
        match known {
            None => {
                for (chunk, w) in block.chunks(64).zip(bits.iter_mut()) {
                    let mut m = 0u64;
                    for (i, &v) in chunk.iter().enumerate() {
                        m |= u64::from(g.holds_score(v)) << i;
                    }
                    *w = m;
                }
            }
            Some(known) => {
                for ((chunk, kc), w) in block.chunks(64).zip(known.chunks(64)).zip(bits.iter_mut())
                {
                    let mut m = 0u64;
                    for (i, (&v, &t)) in chunk.iter().zip(kc).enumerate() {
                        m |= u64::from(t & g.holds_score(v)) << i;
                    }
                    *w = m;
                }
            }
        }
        for (wi, &w0) in bits.iter().take(block.len().div_ceil(64)).enumerate() {
            let mut w = w0;
            while w != 0 {
                let i = base + wi * 64 + w.trailing_zeros() as usize;
                w &= w - 1;
                // Row and column of cell i without a division (see row_reciprocal;
                // callers pass one row block, far below the bound).
                let r = if exact {
                    ((i as u64 * recip) >> 32) as usize
                } else {
                    i / k
                };
                let j = i - r * k;
                if let (Some(&v), Some(&cell)) = (sv.get(i), yv.get(r * ck + L::cell_index(j))) {
                    emit(!v.key(), L::is_pos(cell, j));
                }
            }
        }
    }
}

/// `filter_cells` compiled for AVX2 (4-lane 64-bit compares and shifts) and BMI1
/// (`tzcnt`/`blsr` over the set bits), chosen at run time: the same operations on
/// the same cells in the same order.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1")]
pub(super) unsafe fn filter_cells_avx2<S: Score, L: LabelGrid>(
    sv: &[S],
    yv: &[L::Cell],
    mv: Option<&[bool]>,
    kk: (usize, usize),
    g: Buckets,
    emit: impl FnMut(u64, bool),
) {
    filter_cells::<S, L>(sv, yv, mv, kk, g, emit)
}

/// `filter_cells` through its AVX2 build when `avx2` is asked for and the CPU has it
/// (`false`: the generic build, for tests), else the generic build.
#[inline]
pub(super) fn filter_cells_on<S: Score, L: LabelGrid>(
    avx2: bool,
    sv: &[S],
    yv: &[L::Cell],
    mv: Option<&[bool]>,
    kk: (usize, usize),
    g: Buckets,
    emit: impl FnMut(u64, bool),
) {
    #[cfg(target_arch = "x86_64")]
    if avx2 && crate::cpu::has_avx2() {
        // SAFETY: the CPU has AVX2, BMI1 and POPCNT (checked just above; the
        // detection is cached); the function is otherwise safe.
        unsafe { filter_cells_avx2::<S, L>(sv, yv, mv, kk, g, emit) };
        return;
    }
    let _ = avx2;
    filter_cells::<S, L>(sv, yv, mv, kk, g, emit);
}

/// Pass every cell of `rows` that lies in the buckets `g` to `put(negated key,
/// positive)`, a row block at a time, in row-major order.
pub(super) fn filter_rows<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    rows: std::ops::Range<usize>,
    g: Buckets,
    mut put: impl FnMut(u64, bool),
) {
    let k = s.ncols();
    let chunk = crate::parallel::ROW_BLOCK;
    // Compaction buffers of the general path, allocated on first use.
    let (mut lk, mut lp) = (Vec::<u64>::new(), Vec::<bool>::new());
    for start in rows.clone().step_by(chunk) {
        let rows = start..(start + chunk).min(rows.end);
        let sr = s.slice(ndarray::s![rows.clone(), ..]);
        let yv = if k <= 64 { y.block(rows.clone()) } else { None };
        // Some(None): no mask; Some(Some(cells)): a contiguous mask block.
        let mv = match m {
            None => Some(None),
            Some(m) => m.slice(ndarray::s![rows.clone(), ..]).to_slice().map(Some),
        };
        // (check_shapes: a mask block holds exactly the score block's cells.)
        if let (Some(sv), Some(yv), Some(mv)) = (sr.as_slice(), yv, mv) {
            let ck = yv.len() / rows.len().max(1);
            filter_cells_on::<S, L>(true, sv, yv, mv, (k, ck), g, &mut put);
            continue;
        }
        // Strided or wide blocks: a branch-free compaction of the group's cells into
        // a small buffer (a branch on membership would mispredict on most groups),
        // then the scatter.
        if lk.is_empty() {
            (lk, lp) = (vec![0u64; chunk * k + 1], vec![false; chunk * k + 1]);
        }
        let mut c = 0usize;
        scan_cells(s, y, m, rows, |key, pos| {
            if let (Some(x), Some(t)) = (lk.get_mut(c), lp.get_mut(c)) {
                *x = key;
                *t = pos;
            }
            c += usize::from(g.holds(key));
        });
        for (&key, &pos) in lk.iter().zip(lp.iter()).take(c) {
            put(key, pos);
        }
    }
}
