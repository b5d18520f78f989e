//! Multilabel positives as the binary kernels read them.
//!
//! A label matrix is either a `bool` matrix (`y_true == 1`) or the same bits packed
//! eight labels per byte, little bit order (`numpy.packbits(y, axis=1,
//! bitorder="little")`): label `j` of row `i` is bit `j % 8` of byte `[i, j / 8]`.
//! The packed form is 1/8 of the memory, and of the bytes every pass over the
//! labels reads: the per-label and micro kernels re-read the labels once per label
//! pair or stream group, so at 1M x 15 that is 2 MB per pass instead of 15 MB.
//! Kernels are generic over [`LabelGrid`]; both forms give identical results.

use ndarray::{ArrayView1, ArrayView2};

use crate::error::{MetricError, Result};

/// A read-only `n x k` matrix of positives.
///
/// Label `j` of row `i` lives in cell `[i, cell_index(j)]` of the view returned by
/// [`LabelGrid::cells`]; [`LabelGrid::is_pos`] extracts it from that cell.
pub trait LabelGrid: Copy + Send + Sync {
    /// Storage cell (`bool`, or a byte of eight labels).
    type Cell: Copy + Send + Sync;
    /// Whether this is the packed form (lets kernels spend the memory it saves).
    const PACKED: bool;
    /// `(rows, labels)`.
    fn dim(&self) -> (usize, usize);
    /// Column of cells holding label `j` (`j < labels`).
    fn column(&self, j: usize) -> ArrayView1<'_, Self::Cell>;
    /// Row `i` of cells.
    fn row(&self, i: usize) -> ArrayView1<'_, Self::Cell>;
    /// Cell of row-view index holding label `j`.
    fn cell_index(j: usize) -> usize;
    /// Whether label `j` is positive in `cell` (the cell holding it).
    fn is_pos(cell: Self::Cell, j: usize) -> bool;
    /// Cells of `rows` as one slice when they are contiguous (C order).
    fn block(&self, rows: std::ops::Range<usize>) -> Option<&[Self::Cell]>;
    /// Labels `0..min(k, 64)` of one row (`row` = that row's cells, contiguous) as
    /// the bits of a word, label `j` at bit `j`.
    fn row_word(row: &[Self::Cell]) -> u64;
    /// Label `j` of row `i` (false when out of range).
    #[inline]
    fn get(&self, i: usize, j: usize) -> bool {
        let (n, k) = self.dim();
        i < n
            && j < k
            && self
                .row(i)
                .get(Self::cell_index(j))
                .is_some_and(|&c| Self::is_pos(c, j))
    }
}

impl LabelGrid for ArrayView2<'_, bool> {
    type Cell = bool;
    const PACKED: bool = false;
    #[inline]
    fn dim(&self) -> (usize, usize) {
        (**self).dim()
    }
    #[inline]
    fn column(&self, j: usize) -> ArrayView1<'_, bool> {
        (**self).column(j)
    }
    #[inline]
    fn row(&self, i: usize) -> ArrayView1<'_, bool> {
        (**self).row(i)
    }
    #[inline(always)]
    fn cell_index(j: usize) -> usize {
        j
    }
    #[inline(always)]
    fn is_pos(cell: bool, _j: usize) -> bool {
        cell
    }
    fn block(&self, rows: std::ops::Range<usize>) -> Option<&[bool]> {
        c_order_rows(self, rows)
    }
    #[inline]
    fn row_word(row: &[bool]) -> u64 {
        row.iter()
            .take(64)
            .enumerate()
            .fold(0u64, |w, (j, &c)| w | (u64::from(c) << j))
    }
}

/// Positives packed eight labels per byte (see the module docs).
#[derive(Clone, Copy)]
pub struct PackedLabels<'a> {
    bits: ArrayView2<'a, u8>,
    k: usize,
}

impl<'a> PackedLabels<'a> {
    /// Wrap `bits` (`n x ceil(k / 8)` bytes) as `k` labels. Errors when the byte
    /// count does not match `k`; bits beyond label `k - 1` are ignored.
    pub fn new(bits: ArrayView2<'a, u8>, k: usize) -> Result<Self> {
        if bits.ncols() != k.div_ceil(8) {
            return Err(MetricError::shape(format!(
                "packed labels have {} bytes per row, {} labels need {}",
                bits.ncols(),
                k,
                k.div_ceil(8)
            )));
        }
        Ok(PackedLabels { bits, k })
    }
}

impl LabelGrid for PackedLabels<'_> {
    type Cell = u8;
    const PACKED: bool = true;
    #[inline]
    fn dim(&self) -> (usize, usize) {
        (self.bits.nrows(), self.k)
    }
    #[inline]
    fn column(&self, j: usize) -> ArrayView1<'_, u8> {
        self.bits.column(j >> 3)
    }
    #[inline]
    fn row(&self, i: usize) -> ArrayView1<'_, u8> {
        self.bits.row(i)
    }
    #[inline(always)]
    fn cell_index(j: usize) -> usize {
        j >> 3
    }
    #[inline(always)]
    fn is_pos(cell: u8, j: usize) -> bool {
        (cell >> (j & 7)) & 1 != 0
    }
    fn block(&self, rows: std::ops::Range<usize>) -> Option<&[u8]> {
        c_order_rows(&self.bits, rows)
    }
    #[inline]
    fn row_word(row: &[u8]) -> u64 {
        row.iter()
            .take(8)
            .enumerate()
            .fold(0u64, |w, (b, &c)| w | (u64::from(c) << (8 * b)))
    }
}

/// Rows `rows` of a C-ordered matrix as one slice (None for other layouts or an
/// out-of-range block).
fn c_order_rows<'s, T>(m: &'s ArrayView2<'_, T>, rows: std::ops::Range<usize>) -> Option<&'s [T]> {
    if rows.start > rows.end || rows.end > m.nrows() {
        return None;
    }
    let w = m.ncols();
    m.as_slice()?.get(rows.start * w..rows.end * w)
}

/// Pack a row of `bool`s (or anything tested by `pos`) into `out` (little bit
/// order, `out.len() == ceil(row.len() / 8)`).
#[inline]
pub fn pack_row<T: Copy>(row: impl Iterator<Item = T>, out: &mut [u8], pos: impl Fn(T) -> bool) {
    out.iter_mut().for_each(|b| *b = 0);
    for (j, v) in row.enumerate() {
        if let Some(b) = out.get_mut(j >> 3) {
            *b |= u8::from(pos(v)) << (j & 7);
        }
    }
}

/// `y` packed eight labels per byte, one row of bytes per row (test fixtures).
#[cfg(test)]
pub(crate) fn pack_bool(y: &ndarray::Array2<bool>) -> ndarray::Array2<u8> {
    let (n, k) = y.dim();
    let mut bits = ndarray::Array2::<u8>::zeros((n, k.div_ceil(8)));
    for (i, mut out) in bits.rows_mut().into_iter().enumerate() {
        let mut row = vec![0u8; k.div_ceil(8)];
        pack_row(y.row(i).iter().copied(), &mut row, |b| b);
        out.assign(&ArrayView1::from(&row));
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, ShapeBuilder};

    #[test]
    fn packed_equals_bool() {
        let k = 19;
        let y = Array2::from_shape_fn((5, k), |(i, j)| (i * 7 + j * 3) % 4 == 0);
        let bits = pack_bool(&y);
        let p = PackedLabels::new(bits.view(), k).unwrap();
        let b = y.view();
        assert_eq!(p.dim(), b.dim());
        for i in 0..5 {
            for j in 0..k {
                assert_eq!(p.get(i, j), b.get(i, j), "({i}, {j})");
                let cell = p.row(i)[PackedLabels::cell_index(j)];
                assert_eq!(PackedLabels::is_pos(cell, j), y[[i, j]]);
                assert_eq!(PackedLabels::is_pos(p.column(j)[i], j), y[[i, j]]);
            }
        }
        assert!(!p.get(5, 0) && !p.get(0, k));
        for i in 0..5 {
            let (wp, wb) = (
                PackedLabels::row_word(p.row(i).as_slice().unwrap()),
                <ArrayView2<bool> as LabelGrid>::row_word(b.row(i).as_slice().unwrap()),
            );
            assert_eq!(wp & ((1 << k) - 1), wb);
        }
        // C-ordered row blocks as slices; other layouts and bad ranges give None
        assert_eq!(p.block(1..3), bits.as_slice().map(|f| &f[3..9]));
        assert_eq!(b.block(2..5).map(<[bool]>::len), Some(3 * k));
        let (lo, hi) = (3, 2);
        assert!(b.block(4..6).is_none() && p.block(lo..hi).is_none());
        let mut f = Array2::<bool>::default((5, k).f());
        f.assign(&y);
        assert!(f.view().block(0..1).is_none());
        assert!(PackedLabels::new(bits.view(), 8).is_err());
        assert!(PackedLabels::new(bits.view(), 25).is_err());
        assert!(PackedLabels::new(bits.view(), 24).is_ok());
    }
}
