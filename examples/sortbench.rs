use rand::{Rng, SeedableRng};
use std::time::Instant;
const RADIX_MIN_LEN: usize = 256;
const DIGIT_BITS: usize = 11;
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
pub fn old_sort_keys(keys: &mut [u64], tmp: &mut [u64]) {
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

fn main() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let n = 1_000_000;
    let keys: Vec<u64> = (0..n)
        .map(|_| !(rng.random::<f64>().to_bits() | (1 << 63)))
        .collect();
    let mut best = f64::MAX;
    let mut a = keys.clone();
    let mut t = vec![0u64; n];
    for _ in 0..7 {
        a.copy_from_slice(&keys);
        let t0 = Instant::now();
        toxeval::sort::sort_keys(&mut a, &mut t);
        best = best.min(t0.elapsed().as_secs_f64());
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
    }
    println!("sort_keys 1M: {:.2} ms", best * 1e3);
    let mut best = f64::MAX;
    let mut best2 = f64::MAX;
    for _ in 0..7 {
        a.copy_from_slice(&keys);
        let t0 = Instant::now();
        let mut counts = vec![0u32; 2048];
        for &k in a.iter() {
            counts[((k >> 51) & 2047) as usize] += 1;
        }
        let mut off = vec![0u32; 2048];
        let mut acc = 0;
        for i in 0..2048 {
            off[i] = acc;
            acc += counts[i];
        }
        for &k in a.iter() {
            let d = ((k >> 51) & 2047) as usize;
            t[off[d] as usize] = k;
            off[d] += 1;
        }
        best = best.min(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        let mut counts = vec![0u32; 2048];
        for &k in a.iter() {
            counts[((k >> 51) & 2047) as usize] += 1;
        }
        best2 = best2.min(t0.elapsed().as_secs_f64());
        std::hint::black_box(&counts);
    }
    println!(
        "one scatter pass 1M: {:.2} ms, histogram {:.2}",
        best * 1e3,
        best2 * 1e3
    );
    let mut best = f64::MAX;
    for _ in 0..7 {
        a.copy_from_slice(&keys);
        let t0 = Instant::now();
        old_sort_keys(&mut a, &mut t);
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!("old sort_keys 1M: {:.2} ms", best * 1e3);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let mut a = keys.clone();
        let t0 = Instant::now();
        a.sort_unstable();
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!("sort_unstable 1M: {:.2} ms", best * 1e3);
}
