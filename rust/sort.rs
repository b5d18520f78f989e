//! Sorting helpers shared by the kernels.
//!
//! The per-label binary metrics are sort-bound: each label needs its scores in
//! descending order with ties kept in input order (NumPy's
//! `argsort(stable=True, descending=True)`). Scores arrive as `u64` order keys
//! (see `score.rs`), so an LSD radix sort on the keys is both stable and linear;
//! digit passes where every key has the same digit (common: probabilities share the
//! exponent bits) are skipped. Small inputs use the standard library's stable
//! merge sort, which is faster below a few hundred elements.

/// Below this length a comparison sort beats the radix passes.
pub const RADIX_MIN_LEN: usize = 256;

/// Sort `keys` ascending, carrying `payload` along; stable (equal keys keep their
/// relative input order). Both slices must have the same length; extra payload
/// entries are left untouched.
pub fn sort_by_key_stable(keys: &mut [u64], payload: &mut [u32]) {
    let n = keys.len().min(payload.len());
    let (keys, payload) = (&mut keys[..n], &mut payload[..n]);
    if n < 2 {
        return;
    }
    if n < RADIX_MIN_LEN {
        comparison_sort(keys, payload);
    } else {
        radix_sort(keys, payload);
    }
}

/// Stable comparison sort (merge sort from `std`), for short inputs.
pub fn comparison_sort(keys: &mut [u64], payload: &mut [u32]) {
    let mut pairs: Vec<(u64, u32)> = keys.iter().copied().zip(payload.iter().copied()).collect();
    pairs.sort_by_key(|p| p.0);
    for ((k, p), (sk, sp)) in keys.iter_mut().zip(payload.iter_mut()).zip(pairs) {
        *k = sk;
        *p = sp;
    }
}

/// Bits per radix digit: 11 bits gives 6 passes over a u64 key with a
/// 2048-bucket histogram that still fits in L1.
const DIGIT_BITS: usize = 11;
const BUCKETS: usize = 1 << DIGIT_BITS;
const PASSES: usize = 64usize.div_ceil(DIGIT_BITS);

/// LSD radix sort, 11 bits per pass; passes whose digit is constant are skipped.
pub fn radix_sort(keys: &mut [u64], payload: &mut [u32]) {
    let n = keys.len().min(payload.len());
    if n < 2 {
        return;
    }
    let mut counts = vec![[0usize; BUCKETS]; PASSES];
    for &k in keys[..n].iter() {
        for (b, c) in counts.iter_mut().enumerate() {
            c[((k >> (DIGIT_BITS * b)) as usize) & (BUCKETS - 1)] += 1;
        }
    }
    let mut tmp_keys = vec![0u64; n];
    let mut tmp_pay = vec![0u32; n];
    // `src_is_main`: where the current data lives.
    let mut src_is_main = true;
    for (b, c) in counts.iter().enumerate() {
        if c.contains(&n) {
            continue;
        }
        let mut offsets = [0usize; BUCKETS];
        let mut acc = 0usize;
        for (o, &x) in offsets.iter_mut().zip(c.iter()) {
            *o = acc;
            acc += x;
        }
        let shift = DIGIT_BITS * b;
        if src_is_main {
            scatter(
                &keys[..n],
                &payload[..n],
                &mut tmp_keys,
                &mut tmp_pay,
                &mut offsets,
                shift,
            );
        } else {
            scatter(
                &tmp_keys,
                &tmp_pay,
                &mut keys[..n],
                &mut payload[..n],
                &mut offsets,
                shift,
            );
        }
        src_is_main = !src_is_main;
    }
    if !src_is_main {
        keys[..n].copy_from_slice(&tmp_keys);
        payload[..n].copy_from_slice(&tmp_pay);
    }
}

#[inline]
fn scatter(
    src_k: &[u64],
    src_p: &[u32],
    dst_k: &mut [u64],
    dst_p: &mut [u32],
    offsets: &mut [usize; BUCKETS],
    shift: usize,
) {
    for (&k, &p) in src_k.iter().zip(src_p.iter()) {
        let d = ((k >> shift) as usize) & (BUCKETS - 1);
        let o = offsets[d];
        // `o < n` by construction of the offsets from the same keys' histogram.
        if let (Some(dk), Some(dp)) = (dst_k.get_mut(o), dst_p.get_mut(o)) {
            *dk = k;
            *dp = p;
        }
        offsets[d] = o + 1;
    }
}

/// A bare radix-sortable key: `u64` order keys, or `u32` keys for 4-byte scores
/// (half the memory and half the bytes moved per pass).
pub trait RadixKey:
    Copy + Ord + Send + Sync + Default + std::ops::Not<Output = Self> + 'static
{
    /// Key width in bits.
    const BITS: u32;
    /// The key as `u64` (for bit arithmetic; order preserved).
    fn wide(self) -> u64;
    /// The slice itself when the keys are `u64` (lets 8-byte key buffers double as
    /// `u64` scratch space), `None` for narrower keys.
    fn as_u64_mut(v: &mut [Self]) -> Option<&mut [u64]>;
}

impl RadixKey for u64 {
    const BITS: u32 = 64;
    #[inline(always)]
    fn wide(self) -> u64 {
        self
    }
    #[inline(always)]
    fn as_u64_mut(v: &mut [Self]) -> Option<&mut [u64]> {
        Some(v)
    }
}

impl RadixKey for u32 {
    const BITS: u32 = 32;
    #[inline(always)]
    fn wide(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn as_u64_mut(_: &mut [Self]) -> Option<&mut [u64]> {
        None
    }
}

/// Buckets at or below this length are finished by insertion sort.
const KEYS_SMALL: usize = 40;
/// Widest digit of the key-only sort: 2048 buckets, a histogram that stays in L1.
const KEY_DIGIT_MAX: u32 = 11;

/// Sort bare keys ascending. No payload: equal keys are indistinguishable, so
/// stability is moot. `tmp` is scratch space (at least `keys.len()` long, otherwise
/// `sort_unstable` is used); the result is always left in `keys`.
///
/// Recursive MSD radix sort. Each level looks only at the bits that vary inside
/// its bucket (bits shared by every key, e.g. the exponent bits of probabilities
/// in a narrow range, are skipped) and takes a digit of about `log2(len) - 3`
/// bits (at most 11), so buckets shrink to ~8 keys per level whatever the key
/// distribution: uniform probabilities, whose top varying bits are the skewed
/// exponent, get refined exactly where the keys are dense. Only the first level
/// runs out of cache; buckets of at most `KEYS_SMALL` keys finish by insertion
/// sort, buckets of equal keys stop at once.
pub fn sort_keys<K: RadixKey>(keys: &mut [K], tmp: &mut [K]) {
    let n = keys.len();
    if n < 2 {
        return;
    }
    if tmp.len() < n || u32::try_from(n).is_err() {
        keys.sort_unstable();
        return;
    }
    let diff = varying_bits(keys);
    sort_in_place(keys, &mut tmp[..n], 64 - diff.leading_zeros());
}

/// Insertion sort, for the tiny buckets at the bottom of the recursion.
#[inline]
pub(crate) fn insertion_sort<K: RadixKey>(a: &mut [K]) {
    for i in 1..a.len() {
        let x = a[i];
        let mut j = i;
        while j > 0 && a[j - 1] > x {
            a[j] = a[j - 1];
            j -= 1;
        }
        a[j] = x;
    }
}

/// Bits that vary across `a` (OR of every key XOR the first), as `u64`.
#[inline]
pub(crate) fn varying_bits<K: RadixKey>(a: &[K]) -> u64 {
    let first = a.first().map_or(0, |k| k.wide());
    a.iter().fold(0u64, |d, &k| d | (k.wide() ^ first))
}

/// Width of one MSD digit for `n` keys: about `log2(n)` bits (so most buckets
/// end with 0-2 keys), between 3 and `KEY_DIGIT_MAX`.
#[inline]
pub(crate) fn width_for(n: usize) -> u32 {
    let log = usize::BITS - n.max(1).leading_zeros(); // ceil-ish log2
    log.clamp(3, KEY_DIGIT_MAX)
}

/// One MSD level: histogram `src` on the top `width_for(n)` of the bits below
/// `top` (bits above `top` are equal across `src`), skipping digits that turn out
/// constant, and scatter into `dst`. Returns the bucket sizes and the shift of the
/// digit used, or `None` when all keys are equal (then `dst` is untouched).
fn msd_level<K: RadixKey>(src: &[K], dst: &mut [K], mut top: u32) -> Option<(Vec<u32>, u32)> {
    let n = src.len();
    let w = width_for(n);
    loop {
        let width = w.min(top);
        if width == 0 {
            return None;
        }
        let shift = top - width;
        let nb = 1usize << width;
        let mask = (nb - 1) as u64;
        let mut counts = vec![0u32; nb];
        let first = src.first().map_or(0, |k| k.wide());
        let mut diff = 0u64;
        for &k in src {
            let k = k.wide();
            diff |= k ^ first;
            if let Some(c) = counts.get_mut(((k >> shift) & mask) as usize) {
                *c += 1;
            }
        }
        if diff == 0 {
            return None;
        }
        if counts.iter().any(|&c| c as usize == n) {
            // Constant digit: restart below the highest varying bit.
            top = 64 - diff.leading_zeros();
            continue;
        }
        let mut offsets = vec![0u32; nb];
        let mut acc = 0u32;
        for (o, &c) in offsets.iter_mut().zip(counts.iter()) {
            *o = acc;
            acc += c;
        }
        for &k in src {
            let d = ((k.wide() >> shift) & mask) as usize;
            if let Some(o) = offsets.get_mut(d) {
                if let Some(t) = dst.get_mut(*o as usize) {
                    *t = k;
                }
                *o += 1;
            }
        }
        return Some((counts, shift));
    }
}

/// Sort `a` in place, `t` (same length) as scratch; bits at and above `top` are
/// equal across `a`.
fn sort_in_place<K: RadixKey>(a: &mut [K], t: &mut [K], top: u32) {
    let n = a.len().min(t.len());
    if n <= KEYS_SMALL {
        insertion_sort(a);
        return;
    }
    let Some((counts, shift)) = msd_level(&a[..n], &mut t[..n], top) else {
        return;
    };
    // Runs of consecutive small buckets are finished by one insertion pass each
    // (bucket order already holds, so no key moves across a bucket boundary).
    let (mut s, mut run) = (0usize, 0usize);
    for &c in &counts {
        let c = c as usize;
        if c > KEYS_SMALL {
            finish_run(&mut a[run..s], &t[run..s]);
            sort_into(&mut t[s..s + c], &mut a[s..s + c], shift);
            run = s + c;
        }
        s += c;
    }
    finish_run(&mut a[run..n], &t[run..n]);
}

/// Copy a run of small buckets back and sort it (insertion sort: the keys are
/// already ordered up to their small buckets).
#[inline]
fn finish_run<K: RadixKey>(dst: &mut [K], src: &[K]) {
    if !dst.is_empty() {
        dst.copy_from_slice(src);
        insertion_sort(dst);
    }
}

/// Sort the keys of `src` into `dst` (same length); `src` is clobbered. Bits at and
/// above `top` are equal across `src`.
fn sort_into<K: RadixKey>(src: &mut [K], dst: &mut [K], top: u32) {
    let n = src.len().min(dst.len());
    let (src, dst) = (&mut src[..n], &mut dst[..n]);
    if n <= KEYS_SMALL {
        dst.copy_from_slice(src);
        insertion_sort(dst);
        return;
    }
    let Some((counts, shift)) = msd_level(src, dst, top) else {
        dst.copy_from_slice(src);
        return;
    };
    let (mut s, mut run) = (0usize, 0usize);
    for &c in &counts {
        let c = c as usize;
        if c > KEYS_SMALL {
            insertion_sort(&mut dst[run..s]);
            sort_in_place(&mut dst[s..s + c], &mut src[s..s + c], shift);
            run = s + c;
        }
        s += c;
    }
    insertion_sort(&mut dst[run..n]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn check(keys: Vec<u64>) {
        let n = keys.len();
        let mut k1 = keys.clone();
        let mut p1: Vec<u32> = (0..n as u32).collect();
        radix_sort(&mut k1, &mut p1);
        let mut k2 = keys.clone();
        let mut p2: Vec<u32> = (0..n as u32).collect();
        comparison_sort(&mut k2, &mut p2);
        assert_eq!(k1, k2);
        assert_eq!(p1, p2, "radix sort must be stable");
        let mut k3 = keys.clone();
        let mut p3: Vec<u32> = (0..n as u32).collect();
        sort_by_key_stable(&mut k3, &mut p3);
        assert_eq!(p3, p2);
        for w in k1.windows(2) {
            assert!(w[0] <= w[1]);
        }
    }

    #[test]
    fn radix_matches_stable_merge_sort() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for &n in &[0usize, 1, 2, 3, 100, 255, 256, 1000, 5000] {
            // tie-heavy
            check((0..n).map(|_| rng.random_range(0..5u64)).collect());
            // full range
            check((0..n).map(|_| rng.random::<u64>()).collect());
            // one varying middle byte
            check((0..n).map(|_| (rng.random_range(0..3u64)) << 40).collect());
        }
    }

    #[test]
    fn key_sort_matches_std() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        type Gen = Box<dyn Fn(&mut rand::rngs::StdRng) -> u64>;
        let gens: Vec<Gen> = vec![
            Box::new(|r| r.random::<u64>()),
            Box::new(|r| r.random_range(0..7u64) << 33),
            Box::new(|r| (0.5f64 + r.random::<f64>()).to_bits()),
            Box::new(|r| r.random::<f64>().to_bits() | (1 << 63)),
            Box::new(|r| u64::from(r.random::<u32>())),
            Box::new(|r| ((r.random_range(0..100u64) as f64) / 100.0).to_bits()),
        ];
        for g in &gens {
            for &n in &[0usize, 1, 2, 100, 191, 192, 300, 5000, 70_000] {
                let keys: Vec<u64> = (0..n).map(|_| g(&mut rng)).collect();
                let mut a = keys.clone();
                let mut tmp = vec![0u64; n];
                sort_keys(&mut a, &mut tmp);
                let mut b = keys;
                b.sort_unstable();
                assert_eq!(a, b, "n = {n}");
            }
        }
    }

    #[test]
    fn key_sort_u32_and_skewed_buckets() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(12);
        for &n in &[0usize, 1, 41, 300, 5000, 70_000] {
            let keys: Vec<u32> = (0..n).map(|_| rng.random::<f32>().to_bits()).collect();
            let mut a = keys.clone();
            let mut tmp = vec![0u32; n];
            sort_keys(&mut a, &mut tmp);
            let mut b = keys;
            b.sort_unstable();
            assert_eq!(a, b, "n = {n}");
            // One key far above a dense cluster: the first digit holds all but one
            // key in one bucket (recursion must still make progress).
            let mut keys: Vec<u64> = (0..n).map(|_| rng.random_range(0..1000u64)).collect();
            if let Some(k) = keys.first_mut() {
                *k = u64::MAX;
            }
            let mut a = keys.clone();
            let mut tmp = vec![0u64; n];
            sort_keys(&mut a, &mut tmp);
            keys.sort_unstable();
            assert_eq!(a, keys, "n = {n}");
        }
    }

    #[test]
    fn all_equal_keys_keep_order() {
        let mut k = vec![42u64; 1000];
        let mut p: Vec<u32> = (0..1000).collect();
        radix_sort(&mut k, &mut p);
        assert_eq!(p, (0..1000).collect::<Vec<u32>>());
    }
}
