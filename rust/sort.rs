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

/// Below this length a bucket of the key-only sort uses `sort_unstable`.
const KEYS_SMALL: usize = 192;

/// Sort bare `u64` keys ascending. No payload: equal keys are indistinguishable, so
/// stability is moot. `tmp` is scratch space (at least `keys.len()` long, otherwise
/// a comparison sort is used); the result is always left in `keys`.
///
/// Hybrid radix sort: one MSD pass on the (up to) 11 highest bits that vary across
/// the input scatters the keys into cache-sized buckets; each bucket is then sorted
/// by an LSD radix sort over its own varying low bits (constant digits skipped), so
/// that all later passes run in cache. Uniform probabilities (1M keys) need one
/// out-of-cache pass instead of six.
pub fn sort_keys(keys: &mut [u64], tmp: &mut [u64]) {
    let n = keys.len();
    if n < 2 {
        return;
    }
    if n < RADIX_MIN_LEN || tmp.len() < n {
        keys.sort_unstable();
        return;
    }
    let tmp = &mut tmp[..n];
    let first = keys[0];
    let diff = keys.iter().fold(0u64, |d, &k| d | (k ^ first));
    if diff == 0 {
        return;
    }
    let top = 64 - diff.leading_zeros() as usize; // number of low bits that vary
    let width = top.min(DIGIT_BITS);
    let shift = top - width;
    let nb = 1usize << width;
    let mask = (nb - 1) as u64;
    let mut counts = vec![0usize; nb];
    for &k in keys.iter() {
        if let Some(c) = counts.get_mut(((k >> shift) & mask) as usize) {
            *c += 1;
        }
    }
    let mut starts = vec![0usize; nb];
    let mut acc = 0usize;
    for (s, &c) in starts.iter_mut().zip(counts.iter()) {
        *s = acc;
        acc += c;
    }
    let mut offsets = starts.clone();
    for &k in keys.iter() {
        let d = ((k >> shift) & mask) as usize;
        if let Some(o) = offsets.get_mut(d) {
            if let Some(t) = tmp.get_mut(*o) {
                *t = k;
            }
            *o += 1;
        }
    }
    for (&s, &c) in starts.iter().zip(counts.iter()) {
        if c == 0 {
            continue;
        }
        let (src, dst) = (&mut tmp[s..s + c], &mut keys[s..s + c]);
        if shift == 0 || c == 1 {
            dst.copy_from_slice(src);
        } else {
            sort_bucket(src, dst);
        }
    }
}

/// Sort the keys in `src` into `dst` (same length; `src` is clobbered). LSD radix
/// over the bits that vary inside the bucket, 8-bit digits (the histograms stay in
/// L1 for cache-resident buckets); small buckets use `sort_unstable`.
fn sort_bucket(src: &mut [u64], dst: &mut [u64]) {
    let n = src.len().min(dst.len());
    let (src, dst) = (&mut src[..n], &mut dst[..n]);
    if n < KEYS_SMALL {
        dst.copy_from_slice(src);
        dst.sort_unstable();
        return;
    }
    let first = src[0];
    let diff = src.iter().fold(0u64, |d, &k| d | (k ^ first));
    if diff == 0 {
        dst.copy_from_slice(src);
        return;
    }
    const W: usize = 8;
    const B: usize = 1 << W;
    let top = 64 - diff.leading_zeros() as usize;
    let passes = top.div_ceil(W);
    let mut counts = [[0u32; B]; 8];
    for &k in src.iter() {
        for (p, c) in counts.iter_mut().enumerate().take(passes) {
            c[((k >> (W * p)) as usize) & (B - 1)] += 1;
        }
    }
    let mut in_src = true;
    for (p, c) in counts.iter().enumerate().take(passes) {
        if (diff >> (W * p)) & (B as u64 - 1) == 0 {
            continue;
        }
        let mut off = [0u32; B];
        let mut acc = 0u32;
        for (o, &x) in off.iter_mut().zip(c.iter()) {
            *o = acc;
            acc += x;
        }
        let shift = W * p;
        let (from, to): (&[u64], &mut [u64]) = if in_src {
            (&*src, &mut *dst)
        } else {
            (&*dst, &mut *src)
        };
        for &k in from {
            let d = ((k >> shift) as usize) & (B - 1);
            let o = off[d] as usize;
            if let Some(t) = to.get_mut(o) {
                *t = k;
            }
            off[d] += 1;
        }
        in_src = !in_src;
    }
    if in_src {
        dst.copy_from_slice(src);
    }
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
    fn all_equal_keys_keep_order() {
        let mut k = vec![42u64; 1000];
        let mut p: Vec<u32> = (0..1000).collect();
        radix_sort(&mut k, &mut p);
        assert_eq!(p, (0..1000).collect::<Vec<u32>>());
    }
}
