//! Bucketing by sampled splitters: the index buffer (3-byte or 4-byte indices),
//! the splitters and their lookup table, the scatter of indices into buckets
//! (parallel over chunks) and the grouping of consecutive buckets into work units.

use super::*;

/// An element of the index buffer, the only buffer as long as the input.
pub(super) trait Index: Copy + Default + Send + Sync + 'static {
    /// Largest input length the type can index.
    const LIMIT: usize;
    fn new(i: usize) -> Self;
    fn get(self) -> usize;
}

impl Index for u32 {
    const LIMIT: usize = u32::MAX as usize;
    #[inline(always)]
    fn new(i: usize) -> Self {
        i as u32
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

/// A 3-byte index (inputs below 2**24 elements): the buffer is then 3 bytes per
/// element, which keeps two float32 inputs' call within 0.5x of their size (a
/// `u32` buffer alone is exactly that).
#[derive(Clone, Copy, Default)]
pub(super) struct U24([u8; 3]);

impl Index for U24 {
    const LIMIT: usize = 1 << 24;
    #[inline(always)]
    fn new(i: usize) -> Self {
        let b = (i as u32).to_le_bytes();
        U24([b[0], b[1], b[2]])
    }
    #[inline(always)]
    fn get(self) -> usize {
        let [a, b, c] = self.0;
        u32::from_le_bytes([a, b, c, 0]) as usize
    }
}

/// How far ahead the gathers prefetch.
pub(super) const PREFETCH_AHEAD: usize = 16;

/// `(key(x), key(y))` of the indices in `seg`, into `out`.
#[inline]
pub(super) fn gather<I: Index>(
    seg: &[I],
    kx: &impl Fn(usize) -> u64,
    ky: &impl Fn(usize) -> u64,
    pf: &impl Fn(usize),
    out: &mut Vec<(u64, u64)>,
) {
    out.clear();
    for &i in seg.iter().take(PREFETCH_AHEAD) {
        pf(i.get());
    }
    for (t, &i) in seg.iter().enumerate() {
        if let Some(&j) = seg.get(t + PREFETCH_AHEAD) {
            pf(j.get());
        }
        out.push((kx(i.get()), ky(i.get())));
    }
}

/// Bucket boundaries of one variable: a sorted set of distinct sample keys.
/// Bucket `2j` holds the keys strictly between splitters `j - 1` and `j`, bucket
/// `2j + 1` the keys equal to splitter `j`; bucket order is key order, and equal
/// keys always share a bucket (so no tie group straddles two buckets, and a
/// heavily repeated value gets a bucket of its own).
///
/// Finding a key's bucket is the inner loop of both phases, so a table over
/// `CELLS` equal slices of the key range `[s[0], s[last]]` gives, per slice, the
/// few splitters that can follow a key of that slice; the binary search then runs
/// over those only.
pub(super) struct Splitters {
    pub(super) s: Vec<u64>,
    pub(super) lo: u64,
    pub(super) shift: u32,
    /// `table[c]` = number of splitters below the first key of cell `c`;
    /// `table[CELLS] = s.len()`.
    pub(super) table: Vec<u32>,
}

/// Cells of the bucket lookup table.
pub(super) const CELLS: usize = 1 << 12;

impl Splitters {
    /// Splitters from `OVERSAMPLE` evenly spaced keys per wanted splitter. The
    /// choice only affects speed: every count is exact for any splitters.
    pub(super) fn sample(n: usize, key: &(impl Fn(usize) -> u64 + Sync)) -> Self {
        let want = (n / BUCKET_TARGET).min(MAX_SPLITTERS);
        let mut sp = Vec::new();
        if want > 0 {
            let m = (want * OVERSAMPLE).min(n);
            let step = n / m;
            let mut s: Vec<u64> = (0..m)
                .map(|j| key(j * step + (j.wrapping_mul(2_654_435_761) % step)))
                .collect();
            s.sort_unstable();
            sp = s
                .iter()
                .skip(OVERSAMPLE / 2)
                .step_by(OVERSAMPLE)
                .copied()
                .collect();
            sp.dedup();
        }
        Self::new(sp)
    }

    pub(super) fn new(s: Vec<u64>) -> Self {
        let lo = s.first().copied().unwrap_or(0);
        let range = s.last().copied().unwrap_or(0) - lo;
        let mut shift = 0u32;
        while shift < 64 && (range >> shift) >= CELLS as u64 {
            shift += 1;
        }
        let mut table: Vec<u32> = (0..CELLS)
            .map(|c| {
                let start = lo.saturating_add((c as u64).checked_shl(shift).unwrap_or(u64::MAX));
                s.partition_point(|&v| v < start) as u32
            })
            .collect();
        table.push(s.len() as u32);
        Splitters {
            s,
            lo,
            shift,
            table,
        }
    }

    pub(super) fn n_buckets(&self) -> usize {
        2 * self.s.len() + 1
    }

    #[inline]
    pub(super) fn bucket(&self, k: u64) -> usize {
        let c = (k
            .saturating_sub(self.lo)
            .checked_shr(self.shift)
            .unwrap_or(0) as usize)
            .min(CELLS - 1);
        let a = self.table.get(c).copied().unwrap_or(0) as usize;
        let b = self.table.get(c + 1).copied().unwrap_or(0) as usize;
        let j = a + self
            .s
            .get(a..b)
            .map_or(0, |w| w.partition_point(|&v| v < k));
        2 * j + usize::from(self.s.get(j) == Some(&k))
    }
}

/// Contiguous index chunks for the histogram and scatter passes, one per thread
/// (the scatter's output is the same for any chunking: indices ascend within a
/// bucket), so that the per-chunk tables stay small.
pub(super) fn index_chunks(n: usize, parallel: bool) -> Vec<std::ops::Range<usize>> {
    let c = if parallel && n >= PAR_MIN {
        rayon::current_num_threads().clamp(1, UNITS)
    } else {
        1
    };
    (0..c).map(|i| i * n / c..(i + 1) * n / c).collect()
}

/// Write the indices `0..n` into `out` grouped by bucket (buckets in order,
/// indices ascending within a bucket); returns the bucket start offsets
/// (`n_buckets + 1` entries). `out` must have length `n`.
pub(super) fn scatter<I: Index>(
    out: &mut [I],
    key: &(impl Fn(usize) -> u64 + Sync),
    sp: &Splitters,
    parallel: bool,
) -> Vec<usize> {
    let n = out.len();
    let nb = sp.n_buckets();
    let chunks = index_chunks(n, parallel);
    let hist_of = |r: &std::ops::Range<usize>| {
        let mut h = vec![0usize; nb];
        for i in r.clone() {
            if let Some(c) = h.get_mut(sp.bucket(key(i))) {
                *c += 1;
            }
        }
        h
    };
    let hists: Vec<Vec<usize>> = if parallel {
        map_in_pool(chunks.iter().collect(), hist_of)
    } else {
        chunks.iter().map(hist_of).collect()
    };
    let mut starts = Vec::with_capacity(nb + 1);
    let mut acc = 0usize;
    for b in 0..nb {
        starts.push(acc);
        acc += hists.iter().map(|h| h[b]).sum::<usize>();
    }
    starts.push(acc);
    // Carve `out` into one slice per (chunk, bucket), bucket-major: each chunk then
    // fills its own slices, in parallel, without sharing a cursor.
    let mut per_chunk: Vec<Vec<&mut [I]>> =
        (0..chunks.len()).map(|_| Vec::with_capacity(nb)).collect();
    let mut rest: &mut [I] = out;
    for b in 0..nb {
        for (c, h) in hists.iter().enumerate() {
            let r = std::mem::take(&mut rest);
            let (head, tail) = r.split_at_mut(h[b].min(r.len()));
            per_chunk[c].push(head);
            rest = tail;
        }
    }
    let fill = |(r, mut slots): (std::ops::Range<usize>, Vec<&mut [I]>)| {
        let mut cur = vec![0usize; nb];
        for i in r {
            let b = sp.bucket(key(i));
            if let (Some(s), Some(c)) = (slots.get_mut(b), cur.get_mut(b)) {
                if let Some(o) = s.get_mut(*c) {
                    *o = I::new(i);
                }
                *c += 1;
            }
        }
    };
    let work: Vec<_> = chunks.into_iter().zip(per_chunk).collect();
    if parallel {
        map_in_pool(work, fill);
    } else {
        work.into_iter().for_each(fill);
    }
    starts
}

/// Consecutive buckets grouped into work units of about `n / UNITS` elements:
/// each unit is `(its slice of the bucketed indices, its buckets as
/// (bucket id, start, end) relative to the slice)`.
pub(super) type Unit<'a, I> = (&'a mut [I], Vec<(usize, usize, usize)>);

pub(super) fn units<'a, I: Index>(v: &'a mut [I], starts: &[usize]) -> Vec<Unit<'a, I>> {
    let n = v.len();
    let target = n.div_ceil(UNITS).max(1);
    let mut out = Vec::new();
    let mut rest: &mut [I] = v;
    let mut unit_start = 0usize;
    let mut buckets = Vec::new();
    for (b, w) in starts.windows(2).enumerate() {
        let (s, e) = (w[0], w[1]);
        if e > s {
            buckets.push((b, s - unit_start, e - unit_start));
        }
        let last = b + 2 == starts.len();
        if (e - unit_start >= target || last) && !buckets.is_empty() {
            let r = std::mem::take(&mut rest);
            let (head, tail) = r.split_at_mut((e - unit_start).min(r.len()));
            out.push((head, std::mem::take(&mut buckets)));
            rest = tail;
            unit_start = e;
        }
    }
    out
}
