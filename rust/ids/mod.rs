//! Exact joins of string ids in Arrow's layout (offsets into UTF-8 bytes), without an
//! object per id: the position of each probe id among a set of ids, or none.
//!
//! Both sides are ordered by a 64-bit hash of the bytes (a sort of integers) and
//! walked together; every pair the hashes propose is confirmed on the bytes, so a
//! hash collision costs a comparison, never a wrong match. Both Arrow layouts are taken
//! (`string`: int32 offsets, `large_string`: int64), and a sliced array's offsets
//! need not start at zero. Hashing runs in parallel over blocks of ids.
//! `toxeval.ids` builds the join's report (missing, repeated, unknown ids) from the
//! positions, as it does from Arrow's `index_in`.

use crate::error::{MetricError, Result};
use crate::parallel::Parallelism;
use crate::sort::sort_keys;

#[cfg(test)]
mod tests;

/// Offsets of Arrow's string layouts: `i32` (`string`) or `i64` (`large_string`).
pub trait Offset: Copy + Send + Sync {
    /// The offset as an index, or None when negative (or beyond `usize`).
    fn index(self) -> Option<usize>;
}

impl Offset for i32 {
    fn index(self) -> Option<usize> {
        usize::try_from(self).ok()
    }
}

impl Offset for i64 {
    fn index(self) -> Option<usize> {
        usize::try_from(self).ok()
    }
}

/// A column of strings: string `i` is `data[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, Copy)]
pub struct Strings<'a> {
    starts: &'a [usize],
    data: &'a [u8],
}

/// The owned, checked offsets of a [`Strings`] (as indices into the data).
#[derive(Debug, Clone)]
pub struct Bounds {
    starts: Vec<usize>,
}

impl Bounds {
    /// Check Arrow offsets against the data: at least one offset, none negative,
    /// non-decreasing, the last within `data`. Anything else is a `Value` error
    /// (the arrays did not come from a valid Arrow string array).
    pub fn new<O: Offset>(offsets: &[O], data_len: usize) -> Result<Self> {
        let mut starts = Vec::with_capacity(offsets.len());
        let mut last = 0usize;
        for (i, o) in offsets.iter().enumerate() {
            let at = o
                .index()
                .ok_or_else(|| MetricError::value(format!("string offset {i} is negative")))?;
            if i > 0 && at < last {
                return Err(MetricError::value(format!("string offset {i} decreases")));
            }
            last = at;
            starts.push(at);
        }
        if starts.is_empty() {
            return Err(MetricError::value("string offsets are empty (need n + 1)"));
        }
        if last > data_len {
            return Err(MetricError::value(format!(
                "string offsets reach byte {last} of {data_len} bytes of data"
            )));
        }
        Ok(Bounds { starts })
    }

    /// The strings these bounds cut out of `data` (the data they were checked against).
    pub fn strings<'a>(&'a self, data: &'a [u8]) -> Strings<'a> {
        Strings {
            starts: &self.starts,
            data,
        }
    }
}

impl<'a> Strings<'a> {
    /// How many strings.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// String `i`'s bytes.
    #[inline]
    pub fn get(&self, i: usize) -> &'a [u8] {
        &self.data[self.starts[i]..self.starts[i + 1]]
    }
}

/// A 64-bit hash of a byte string: 8-byte little-endian words, each mixed in by a
/// multiply and xor-shift (the length first, so "a" and "a\0" differ).
#[inline]
pub fn hash_bytes(b: &[u8]) -> u64 {
    const K0: u64 = 0x9E37_79B9_7F4A_7C15;
    const K1: u64 = 0xBF58_476D_1CE4_E5B9;
    let mut h = (b.len() as u64).wrapping_mul(K0);
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(w);
        h ^= u64::from_le_bytes(buf);
        h = h.wrapping_mul(K1);
        h ^= h >> 31;
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        h ^= u64::from_le_bytes(buf);
        h = h.wrapping_mul(K1);
        h ^= h >> 31;
    }
    // a final mix so the table's low bits depend on every byte
    h ^= h >> 29;
    h = h.wrapping_mul(K0);
    h ^ (h >> 32)
}

/// The low bits of a sort key that hold the row (so at most 2^32 ids per column);
/// the high 32 bits hold the hash.
pub const ROW_MASK: u64 = u32::MAX as u64;

/// Sort keys of a column: `hash << 32 | row`, sorted. A sort of integers orders the
/// rows by (truncated) hash, rows ascending within a hash; no row array is moved.
/// A column of 2^32 ids or more is a `Value` error.
pub fn sorted_keys(s: Strings<'_>, par: Parallelism) -> Result<Vec<u64>> {
    let n = s.len();
    if n as u64 > ROW_MASK {
        return Err(MetricError::value(format!(
            "{n} ids: too many for one join"
        )));
    }
    let blocks = n.div_ceil(BLOCK);
    let parts = par.map(blocks, n, |b| {
        let lo = b * BLOCK;
        let hi = (lo + BLOCK).min(n);
        (lo..hi)
            .map(|i| (hash_bytes(s.get(i)) & !ROW_MASK) | i as u64)
            .collect::<Vec<u64>>()
    })?;
    let mut keys = Vec::with_capacity(n);
    for p in parts {
        keys.extend_from_slice(&p);
    }
    let mut tmp = vec![0u64; n];
    sort_keys(&mut keys, &mut tmp);
    Ok(keys)
}

/// Check keys given from outside (a cached [`sorted_keys`]) against their column:
/// as many as ids, every row in range, ascending. Keys of another column of the
/// same length could only make lookups miss, never read out of bounds.
pub fn check_keys(s: Strings<'_>, keys: &[u64]) -> Result<()> {
    let n = s.len();
    if keys.len() != n
        || keys.windows(2).any(|w| w[0] >= w[1])
        || keys.iter().any(|&k| (k & ROW_MASK) as usize >= n)
    {
        return Err(MetricError::value("sort keys do not belong to these ids"));
    }
    Ok(())
}

/// Whether some id of the column repeats (its [`sorted_keys`] given): runs of equal
/// hashes are compared on the bytes.
pub fn any_repeat(s: Strings<'_>, keys: &[u64]) -> bool {
    let mut i = 0;
    while i < keys.len() {
        let h = keys[i] & !ROW_MASK;
        let mut g = i + 1;
        while g < keys.len() && keys[g] & !ROW_MASK == h {
            g += 1;
        }
        let run = &keys[i..g];
        for (a, &ka) in run.iter().enumerate() {
            let b = s.get((ka & ROW_MASK) as usize);
            if run[a + 1..]
                .iter()
                .any(|&kb| s.get((kb & ROW_MASK) as usize) == b)
            {
                return true;
            }
        }
        i = g;
    }
    false
}

/// Walk the sorted keys of both sides together: a probe whose hash one set row has
/// takes that row, to be confirmed on the bytes afterwards in probe order (one stream
/// of random reads, into the set, instead of two); within a run of equal hashes on the
/// set's side (a collision or a repeated id) each probe takes the first set row (rows
/// ascend) with the same bytes at once.
fn join_sorted(probe: Strings<'_>, set: Strings<'_>, kp: &[u64], ks: &[u64]) -> Vec<i64> {
    let low = ROW_MASK;
    let mut out = vec![-1i64; kp.len()];
    let (mut i, mut j) = (0usize, 0usize);
    while j < kp.len() {
        let h = kp[j] & !low;
        while i < ks.len() && ks[i] & !low < h {
            i += 1;
        }
        let mut g = i;
        while g < ks.len() && ks[g] & !low == h {
            g += 1;
        }
        while j < kp.len() && kp[j] & !low == h {
            let row = (kp[j] & low) as usize;
            if g == i + 1 {
                out[row] = (ks[i] & low) as i64; // confirmed below
            } else if g > i {
                let b = probe.get(row);
                if let Some(k) = ks[i..g].iter().find(|&&k| set.get((k & low) as usize) == b) {
                    out[row] = (k & low) as i64;
                }
            }
            j += 1;
        }
        i = g;
    }
    for (row, o) in out.iter_mut().enumerate() {
        if *o >= 0 && set.get(*o as usize) != probe.get(row) {
            *o = -1; // the same hash, other bytes
        }
    }
    out
}

/// Ids per parallel block of hashing.
const BLOCK: usize = 1 << 16;

/// For each id of `probe`, the first row of `set` that holds the same bytes, or -1.
/// `set_keys`: the set's [`sorted_keys`] when already known (checked by
/// [`check_keys`]), else computed here.
///
/// Both sides are sorted by a hash with the row in the low bits (sorts of integers,
/// sequential in memory), then walked together; each hash match is confirmed on the
/// bytes, so a collision is only a comparison that fails. A hash table would do the
/// same with several dependent cache misses per id, which measured 6 times slower on
/// a million ids.
pub fn index_in(
    probe: Strings<'_>,
    set: Strings<'_>,
    set_keys: Option<&[u64]>,
    par: Parallelism,
) -> Result<Vec<i64>> {
    let owned;
    let ks = match set_keys {
        Some(k) => {
            check_keys(set, k)?;
            k
        }
        None => {
            owned = sorted_keys(set, par)?;
            &owned
        }
    };
    let kp = sorted_keys(probe, par)?;
    Ok(join_sorted(probe, set, &kp, ks))
}
