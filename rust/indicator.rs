//! Is a label matrix a multilabel indicator? scikit-learn's `type_of_target`
//! calls a 2-D `y_true` "multilabel-indicator" when it holds at most two distinct
//! (integral) values. [`Distinct`] tracks up to two values and whether a third
//! appeared; the label-ranking checked pass and the binary metrics' label scan
//! ([`indicator_values`], [`indicator_packed`]) both use it.

use ndarray::ArrayView2;

use crate::error::Result;
use crate::parallel::Parallelism;

/// Up to two distinct values and whether a third was seen.
#[derive(Debug, Clone, Copy, Default)]
pub struct Distinct<T> {
    vals: [T; 2],
    n: u8,
    /// A third distinct value was seen.
    pub more: bool,
}

impl<T: Copy + PartialEq + Default> Distinct<T> {
    /// No value seen yet.
    pub fn new() -> Self {
        Distinct {
            vals: [T::default(); 2],
            n: 0,
            more: false,
        }
    }

    /// Record the value `v`.
    #[inline(always)]
    pub fn see(&mut self, v: T) {
        // Common case: v is one of the (two) values already seen.
        if self.n == 0 || !(v == self.vals[0] || v == self.vals[1]) {
            self.insert(v);
        }
    }

    #[cold]
    #[inline(never)]
    fn insert(&mut self, v: T) {
        match self.n {
            0 => {
                self.vals = [v, v];
                self.n = 1;
            }
            1 => {
                if v != self.vals[0] {
                    self.vals[1] = v;
                    self.n = 2;
                }
            }
            _ => {
                if v != self.vals[0] && v != self.vals[1] {
                    self.more = true;
                }
            }
        }
    }

    /// Add what `other` saw.
    pub fn merge(&mut self, other: &Self) {
        for &v in other.values() {
            self.see(v);
        }
        self.more |= other.more;
    }

    /// The distinct values seen, in order of appearance (at most two; see `more`).
    pub fn values(&self) -> &[T] {
        &self.vals[..usize::from(self.n)]
    }
}

/// The distinct values of a label matrix when there are at most two:
/// `(min, max, false)`; `(_, _, true)` as soon as a third value appears. The
/// multilabel-indicator check of [`per_row_values`]'s callers, in parallel over
/// fixed row blocks (blocks are merged in order, so any thread count agrees).
pub fn indicator_values<T>(y: ArrayView2<T>, par: &Parallelism) -> Result<(T, T, bool)>
where
    T: Copy + PartialOrd + Send + Sync + Default + From<bool>,
{
    indicator_scan(y, par, false).map(|(lo, hi, third, _)| (lo, hi, third))
}

/// [`indicator_values`] plus, when there is no third value, the positives
/// `y == 1` packed eight labels per byte (`n x ceil(k / 8)`, C order, see
/// [`crate::labels::PackedLabels`]); empty otherwise. One parallel pass; replaces
/// min, max, a distinct-value scan and `y == 1` at 1/8 of the bool copy's size.
pub fn indicator_packed<T>(y: ArrayView2<T>, par: &Parallelism) -> Result<(T, T, bool, Vec<u8>)>
where
    T: Copy + PartialOrd + Send + Sync + Default + From<bool>,
{
    indicator_scan(y, par, true)
}

fn indicator_scan<T>(
    y: ArrayView2<T>,
    par: &Parallelism,
    pack: bool,
) -> Result<(T, T, bool, Vec<u8>)>
where
    T: Copy + PartialOrd + Send + Sync + Default + From<bool>,
{
    let (n, k) = y.dim();
    let one = T::from(true);
    let ck = k.div_ceil(8);
    let blocks = par.map_row_blocks(n, k, |rows| {
        let mut set = Distinct::default();
        let mut bits = Vec::new();
        let Some(&first) = y.row(rows.start).iter().next() else {
            return (set, bits);
        };
        // Two candidate values; a cell equal to neither is a new value.
        let (a, mut b) = (first, first);
        let block = y.slice(ndarray::s![rows.clone(), ..]);
        if pack && (1..=64).contains(&k) && block.as_slice().is_some() {
            // C order, at most 64 labels: each row's bits built in a word. Once
            // both candidates are known the row test is branch-free (vectorizes).
            bits = vec![0u8; rows.len() * ck];
            let cells = block.as_slice().unwrap_or(&[]);
            let mut ok = true;
            for (row, out) in cells.chunks_exact(k).zip(bits.chunks_exact_mut(ck)) {
                if a == b {
                    if let Some(&v) = row.iter().find(|&&v| v != a) {
                        b = v;
                    }
                }
                let mut w = 0u64;
                let mut good = true;
                for (j, &v) in row.iter().enumerate() {
                    good &= (v == a) | (v == b);
                    w |= u64::from(v == one) << j;
                }
                if !good {
                    ok = false;
                    break;
                }
                out.copy_from_slice(&w.to_le_bytes()[..ck]);
            }
            set.see(a);
            set.see(b);
            set.more |= !ok;
            return (set, bits);
        }
        let mut scan = |v: T| -> bool {
            if v != a && v != b {
                if a == b {
                    b = v;
                } else {
                    return false;
                }
            }
            true
        };
        let ok = if pack {
            bits = vec![0u8; rows.len() * ck];
            let mut ok = true;
            for (i, out) in rows.clone().zip(bits.chunks_exact_mut(ck.max(1))) {
                let row = y.row(i);
                if !row.iter().all(|&v| scan(v)) {
                    ok = false;
                    break;
                }
                crate::labels::pack_row(row.iter().copied(), out, |v| v == one);
            }
            ok
        } else {
            match block.as_slice() {
                Some(cells) => {
                    let (first_other, ok) = scan_c_order(cells, a);
                    b = first_other;
                    ok
                }
                None => rows.clone().all(|i| y.row(i).iter().all(|&v| scan(v))),
            }
        };
        set.see(a);
        set.see(b);
        set.more |= !ok;
        (set, bits)
    })?;
    let mut all = Distinct::default();
    for (b, _) in &blocks {
        all.merge(b);
    }
    let (lo, hi) = match *all.values() {
        [] => (T::default(), T::default()),
        [v] => (v, v),
        [a, b] if a < b => (a, b),
        [a, b, ..] => (b, a),
    };
    let packed = if pack && !all.more {
        let mut out = Vec::with_capacity(n * ck);
        for (_, bits) in blocks {
            out.extend_from_slice(&bits);
        }
        out
    } else {
        Vec::new()
    };
    Ok((lo, hi, all.more, packed))
}

/// Cells per group of [`scan_c_order`]: a third value stops the scan within a
/// group of where it is.
const SCAN_GROUP: usize = 4096;

/// The values of contiguous cells whose first cell is `a`: `(b, ok)`, `b` the
/// first cell different from `a` (`a` if none) and `ok` whether every cell is `a`
/// or `b`. Once `b` is known the test has no exit inside a group, so the compiler
/// vectorizes it: at 1M x 15 int64, about 14 ms of CPU time against 24 ms for a
/// per-cell test that could leave the loop (the finiteness check reads the same
/// bytes of float64 scores in about 10 ms).
fn scan_c_order<T: Copy + PartialEq>(cells: &[T], a: T) -> (T, bool) {
    let b = cells.iter().copied().find(|&v| v != a).unwrap_or(a);
    let ok = cells
        .chunks(SCAN_GROUP)
        .all(|group| group.iter().fold(true, |ok, &v| ok & ((v == a) | (v == b))));
    (b, ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::LabelGrid;
    use crate::parallel::ROW_BLOCK;
    use ndarray::{arr2, Array2};
    use rand::{rngs::StdRng, Rng, SeedableRng};

    #[test]
    fn indicator_values_over_blocks() {
        for threads in [1, 2] {
            let par = Parallelism { threads };
            let n = ROW_BLOCK * 3 + 5;
            let mut y = Array2::<i64>::zeros((n, 16));
            assert_eq!(indicator_values(y.view(), &par).unwrap(), (0, 0, false));
            y[[n - 1, 15]] = -1;
            assert_eq!(indicator_values(y.view(), &par).unwrap(), (-1, 0, false));
            y[[ROW_BLOCK + 1, 3]] = 1;
            assert!(indicator_values(y.view(), &par).unwrap().2);
            // Two values met in different blocks only.
            let mut z = Array2::<i32>::from_elem((n, 16), 7);
            z[[n - 1, 0]] = 2;
            assert_eq!(indicator_values(z.view(), &par).unwrap(), (2, 7, false));
            assert_eq!(indicator_values(z.t(), &par).unwrap(), (2, 7, false));
            z[[0, 0]] = 3;
            assert!(indicator_values(z.t(), &par).unwrap().2);
            let e = Array2::<i64>::zeros((0, 4));
            assert_eq!(indicator_values(e.view(), &par).unwrap(), (0, 0, false));
        }
    }

    #[test]
    fn indicator_packed_values() {
        let seq = Parallelism::sequential();
        let y = arr2(&[[0i64, 1], [1, 0]]);
        assert_eq!(
            indicator_packed(y.view(), &seq).unwrap(),
            (0, 1, false, vec![2, 1])
        );
        let y = arr2(&[[-1i64, -1], [-1, -1]]);
        assert_eq!(
            indicator_packed(y.view(), &seq).unwrap(),
            (-1, -1, false, vec![0, 0])
        );
        let y = arr2(&[[2i64, 0], [1, 0]]);
        let r = indicator_packed(y.view(), &seq).unwrap();
        assert!(r.2 && r.3.is_empty());
        // F order: positives still row-major
        let f = arr2(&[[0i64, 1], [1, 1]]).t().to_owned();
        assert_eq!(
            indicator_packed(f.t(), &seq).unwrap(),
            (0, 1, false, vec![2, 3])
        );
        let e = Array2::<i64>::zeros((0, 3));
        assert_eq!(
            indicator_packed(e.view(), &seq).unwrap(),
            (0, 0, false, vec![])
        );
        // Several row blocks, 10 labels (2 bytes per row), any thread count: the
        // bits equal y == 1 and unpack to the bool matrix.
        let mut rng = StdRng::seed_from_u64(5);
        let n = 3 * ROW_BLOCK + 11;
        let y = Array2::from_shape_fn((n, 10), |_| i32::from(rng.random_bool(0.3)));
        for threads in [1, 2, 3] {
            let par = Parallelism { threads };
            let (lo, hi, third, bits) = indicator_packed(y.view(), &par).unwrap();
            assert_eq!((lo, hi, third, bits.len()), (0, 1, false, 2 * n));
            let bits = Array2::from_shape_vec((n, 2), bits).unwrap();
            let p = crate::labels::PackedLabels::new(bits.view(), 10).unwrap();
            for i in 0..n {
                for j in 0..10 {
                    assert_eq!(p.get(i, j), y[[i, j]] == 1);
                }
            }
        }
        let mut y3 = y.clone();
        y3[[n - 1, 9]] = 7;
        let r = indicator_packed(y3.view(), &Parallelism { threads: 2 }).unwrap();
        assert!(r.2 && r.3.is_empty());
    }

    /// Every label count, both integer types and any pair of values, packed and
    /// not: the packed bits are `y == 1` bit by bit (`np.packbits(y == 1, axis=1,
    /// bitorder="little")`), the values are min and max, and a third value
    /// anywhere (first cell, a later group of cells, last cell) is seen.
    #[test]
    fn indicator_scan_every_width() {
        fn naive<T: Copy + PartialEq + From<bool>>(y: &Array2<T>) -> Vec<u8> {
            let (n, k) = y.dim();
            let mut out = vec![0u8; n * k.div_ceil(8)];
            for i in 0..n {
                for j in 0..k {
                    if y[[i, j]] == T::from(true) {
                        out[i * k.div_ceil(8) + j / 8] |= 1 << (j % 8);
                    }
                }
            }
            out
        }
        let mut rng = StdRng::seed_from_u64(11);
        let n = ROW_BLOCK + 700;
        for k in [1usize, 2, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 70] {
            for (lo, hi) in [(0i64, 1i64), (-1, 1), (1, 2), (0, 5)] {
                let y =
                    Array2::from_shape_fn((n, k), |_| if rng.random_bool(0.2) { hi } else { lo });
                let y32 = y.mapv(|v| v as i32);
                for threads in [1, 2] {
                    let par = Parallelism { threads };
                    let want = (lo, hi, false, naive(&y));
                    assert_eq!(indicator_packed(y.view(), &par).unwrap(), want, "k {k}");
                    let (l32, h32, third, bits) = indicator_packed(y32.view(), &par).unwrap();
                    assert_eq!((i64::from(l32), i64::from(h32), third, bits), want);
                    assert_eq!(indicator_values(y.view(), &par).unwrap(), (lo, hi, false));
                    let v32 = indicator_values(y32.view(), &par).unwrap();
                    assert_eq!(v32, (lo as i32, hi as i32, false));
                }
                let same = Array2::from_elem((n, k), hi);
                let seq = Parallelism::sequential();
                assert_eq!(
                    indicator_values(same.view(), &seq).unwrap(),
                    (hi, hi, false)
                );
                for (i, j) in [(0, 0), (300, k - 1), (n - 1, k - 1)] {
                    let mut bad = y.clone();
                    bad[[i, j]] = 9;
                    let par = Parallelism { threads: 2 };
                    let r = indicator_packed(bad.view(), &par).unwrap();
                    assert!(r.2 && r.3.is_empty(), "k {k}, third value at {i}, {j}");
                    assert!(indicator_values(bad.view(), &par).unwrap().2);
                }
            }
        }
    }
}
