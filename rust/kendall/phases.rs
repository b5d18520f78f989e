//! The two phases of the count over work units: the x phase (bucket sorted by
//! `(x, y)`, x ties, joint ties, inversions between y buckets through a Fenwick tree)
//! and the y phase (merge sort by `y` counting inversions inside y buckets).

use super::*;

/// Stable merge sort of `v` by `key`; returns the number of strict inversions
/// (pairs `i < j` with `key(v[i]) > key(v[j])`). Needs `buf` for half of `v`.
pub(super) fn merge_count<T: Copy, K: Ord>(
    v: &mut [T],
    buf: &mut Vec<T>,
    key: &impl Fn(&T) -> K,
) -> u64 {
    let n = v.len();
    if n <= 16 {
        let mut inv = 0u64;
        for i in 1..n {
            let x = v[i];
            let kx = key(&x);
            let mut j = i;
            while j > 0 && key(&v[j - 1]) > kx {
                v[j] = v[j - 1];
                j -= 1;
            }
            inv += (i - j) as u64;
            v[j] = x;
        }
        return inv;
    }
    let mid = n / 2;
    let mut inv = merge_count(&mut v[..mid], buf, key) + merge_count(&mut v[mid..], buf, key);
    if key(&v[mid - 1]) <= key(&v[mid]) {
        return inv;
    }
    buf.clear();
    buf.extend_from_slice(&v[..mid]);
    let (mut i, mut j, mut k) = (0usize, mid, 0usize);
    while i < buf.len() && j < n {
        if key(&buf[i]) <= key(&v[j]) {
            v[k] = buf[i];
            i += 1;
        } else {
            v[k] = v[j];
            j += 1;
            inv += (buf.len() - i) as u64;
        }
        k += 1;
    }
    let left = buf.len() - i;
    v[k..k + left].copy_from_slice(&buf[i..]);
    inv
}

/// What one unit of the x phase found.
pub(super) struct XUnit {
    pub(super) ties: Ties,
    /// Pairs tied in both variables.
    pub(super) ntie: u64,
    /// Inversions of the y-bucket sequence inside the unit.
    pub(super) inv: u64,
    /// Elements per y bucket.
    pub(super) hist: Vec<u32>,
}

/// What one unit of the y phase found.
pub(super) struct YUnit {
    pub(super) ties: Ties,
    /// Discordant pairs whose two `y` share a bucket.
    pub(super) inv: u64,
}

/// Sort pairs by `(first, second)`: by the first key, then each run of equal
/// first keys by the second (runs are rare, and one-key comparisons are cheaper).
pub(super) fn sort_pairs(v: &mut [(u64, u64)]) {
    v.sort_unstable_by_key(|e| e.0);
    let mut i = 0;
    while i < v.len() {
        let k = v[i].0;
        let mut j = i + 1;
        while j < v.len() && v[j].0 == k {
            j += 1;
        }
        if j - i > 1 {
            v[i..j].sort_unstable_by_key(|e| e.1);
        }
        i = j;
    }
}

/// The walk of the x phase over `(key(x), key(y))` in increasing order.
pub(super) struct XWalk<'a> {
    pub(super) spy: &'a Splitters,
    pub(super) prev: Option<(u64, u64)>,
    pub(super) run_x: u64,
    pub(super) run_xy: u64,
    pub(super) seen: u64,
    pub(super) fen: Vec<u32>,
    pub(super) out: XUnit,
}

impl XWalk<'_> {
    #[inline]
    pub(super) fn push(&mut self, a: u64, b: u64) {
        match self.prev {
            Some((px, py)) if px == a => {
                self.run_x += 1;
                if py == b {
                    self.run_xy += 1;
                } else {
                    self.out.ntie += self.run_xy * (self.run_xy - 1) / 2;
                    self.run_xy = 1;
                }
            }
            _ => {
                self.end_group();
                self.run_x = 1;
                self.run_xy = 1;
            }
        }
        self.prev = Some((a, b));
        let yb = self.spy.bucket(b);
        // Earlier elements of the unit in a higher y bucket: seen - #(<= yb).
        let mut k = yb + 1;
        let mut le = 0u64;
        while k > 0 {
            le += u64::from(self.fen.get(k).copied().unwrap_or(0));
            k &= k - 1;
        }
        self.out.inv += self.seen - le;
        let mut k = yb + 1;
        while let Some(f) = self.fen.get_mut(k) {
            *f += 1;
            k += k & k.wrapping_neg();
        }
        if let Some(h) = self.out.hist.get_mut(yb) {
            *h += 1;
        }
        self.seen += 1;
    }

    /// Close the current x group (at a new x value or the end of a bucket).
    pub(super) fn end_group(&mut self) {
        if self.run_x > 0 {
            self.out.ties.add(self.run_x);
            self.out.ntie += self.run_xy * (self.run_xy - 1) / 2;
        }
        self.run_x = 0;
        self.run_xy = 0;
    }
}

/// Sort each x bucket of the unit by `(key(x), key(y))` (written back, so that
/// the unit's indices end in that order); count x ties and joint ties, and the
/// inversions of the y buckets along that order with a Fenwick tree over buckets.
pub(super) fn x_unit<I: Index>(
    unit: Unit<'_, I>,
    kx: &impl Fn(usize) -> u64,
    ky: &impl Fn(usize) -> u64,
    pf: &impl Fn(usize),
    spy: &Splitters,
) -> XUnit {
    let (v, buckets) = unit;
    let nb = spy.n_buckets();
    let mut w = XWalk {
        spy,
        prev: None,
        run_x: 0,
        run_xy: 0,
        seen: 0,
        fen: vec![0u32; nb + 1],
        out: XUnit {
            ties: Ties::default(),
            ntie: 0,
            inv: 0,
            hist: vec![0u32; nb],
        },
    };
    let mut local: Vec<(u64, u64)> = Vec::new();
    for &(_, s, e) in &buckets {
        let Some(seg) = v.get_mut(s..e) else { continue };
        if seg.len() <= local_max() {
            local.clear();
            gather(seg, kx, ky, pf, &mut local);
            sort_pairs(&mut local);
            for &(a, b) in &local {
                w.push(a, b);
            }
        } else {
            seg.sort_unstable_by_key(|&i| (kx(i.get()), ky(i.get())));
            for &i in seg.iter() {
                w.push(kx(i.get()), ky(i.get()));
            }
        }
        // x groups never straddle buckets.
        w.end_group();
    }
    w.out
}

/// Sort each y bucket of the unit by `key(y)` (written back), count y ties and the
/// discordant pairs inside each bucket: the bucket is put in `(x, y)` order, then
/// merge-sorted by `y` counting strict inversions.
pub(super) fn y_unit<I: Index>(
    unit: Unit<'_, I>,
    kx: &impl Fn(usize) -> u64,
    ky: &impl Fn(usize) -> u64,
    pf: &impl Fn(usize),
) -> YUnit {
    let (v, buckets) = unit;
    let mut out = YUnit {
        ties: Ties::default(),
        inv: 0,
    };
    let mut local: Vec<(u64, u64)> = Vec::new();
    let mut ys: Vec<u64> = Vec::new();
    let mut buf: Vec<u64> = Vec::new();
    for &(b, s, e) in &buckets {
        let Some(seg) = v.get_mut(s..e) else { continue };
        if b % 2 == 1 {
            // One value: a single tie group, no discordant pair inside.
            out.ties.add(seg.len() as u64);
            continue;
        }
        ys.clear();
        if seg.len() <= local_max() {
            local.clear();
            gather(seg, kx, ky, pf, &mut local);
            sort_pairs(&mut local);
            ys.extend(local.iter().map(|e| e.1));
            out.inv += merge_count(&mut ys, &mut buf, &|&k: &u64| k);
        } else {
            seg.sort_unstable_by_key(|&i| (kx(i.get()), ky(i.get())));
            let mut ibuf: Vec<I> = Vec::with_capacity(seg.len() / 2 + 1);
            out.inv += merge_count(seg, &mut ibuf, &|&i: &I| ky(i.get()));
            ys.extend(seg.iter().map(|&i| ky(i.get())));
        }
        let mut run = 0u64;
        let mut prev = None;
        for &k in &ys {
            if prev == Some(k) {
                run += 1;
            } else {
                if prev.is_some() {
                    out.ties.add(run);
                }
                run = 1;
                prev = Some(k);
            }
        }
        if prev.is_some() {
            out.ties.add(run);
        }
    }
    out
}
