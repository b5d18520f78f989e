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
    fn all_equal_keys_keep_order() {
        let mut k = vec![42u64; 1000];
        let mut p: Vec<u32> = (0..1000).collect();
        radix_sort(&mut k, &mut p);
        assert_eq!(p, (0..1000).collect::<Vec<u32>>());
    }
}
