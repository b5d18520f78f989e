use super::*;
use crate::numeric::numpy_sum;
use ndarray::{arr1, Array1};
use rand::{rngs::StdRng, Rng, SeedableRng};

fn brute(x: &[f64], y: &[f64]) -> (u64, u64, u64, u64) {
    let (mut dis, mut ntie, mut xtie, mut ytie) = (0, 0, 0, 0);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let dx = x[i].partial_cmp(&x[j]).unwrap();
            let dy = y[i].partial_cmp(&y[j]).unwrap();
            use std::cmp::Ordering::*;
            match (dx, dy) {
                (Equal, Equal) => {
                    ntie += 1;
                    xtie += 1;
                    ytie += 1
                }
                (Equal, _) => xtie += 1,
                (_, Equal) => ytie += 1,
                (a, b) if a != b => dis += 1,
                _ => {}
            }
        }
    }
    (dis, ntie, xtie, ytie)
}

#[test]
fn matches_brute_force() {
    let mut rng = StdRng::seed_from_u64(7);
    for trial in 0..300 {
        let n = rng.random_range(0..80);
        let k = if trial % 3 == 0 { 3 } else { 1000 };
        let x: Vec<f64> = (0..n).map(|_| rng.random_range(0..k) as f64).collect();
        let y: Vec<f64> = (0..n)
            .map(|_| rng.random_range(0..k) as f64 - 1.5)
            .collect();
        for threads in [1, 2] {
            let par = Parallelism { threads };
            let c = kendall_counts(arr1(&x).view(), arr1(&y).view(), par).unwrap();
            let (dis, ntie, xtie, ytie) = brute(&x, &y);
            assert_eq!((c.dis, c.ntie, c.xtie, c.ytie), (dis, ntie, xtie, ytie));
        }
    }
}

#[test]
fn zeros_tie_and_infinities_order() {
    let x = arr1(&[-0.0f64, 0.0, f64::INFINITY, -f64::INFINITY]);
    let y = arr1(&[1i64, 2, 3, 0]);
    let c = kendall_counts(x.view(), y.view(), Parallelism::sequential()).unwrap();
    assert_eq!((c.xtie, c.dis, c.x_unique, c.y_unique), (1, 0, 3, 4));
}

#[test]
fn errors() {
    let x = arr1(&[1.0f64, f64::NAN]);
    let y = arr1(&[1.0f32, 2.0]);
    assert!(kendall_counts(x.view(), y.view(), Parallelism::sequential()).is_err());
    let y3 = arr1(&[1.0f32, 2.0, 3.0]);
    let x2 = arr1(&[1.0f64, 2.0]);
    assert_eq!(
        kendall_counts(x2.view(), y3.view(), Parallelism::sequential()).unwrap_err(),
        MetricError::shape("Array shapes are incompatible for broadcasting.")
    );
}

#[test]
fn strided_view() {
    let a = Array1::from_iter((0..20).map(|v| v as f64));
    let x = a.slice(ndarray::s![..;2]);
    let y = a.slice(ndarray::s![..;-2]);
    let c = kendall_counts(x, y, Parallelism::sequential()).unwrap();
    assert_eq!(c.dis, 45);
}

#[test]
fn merge_count_equals_brute_and_sorts_stably() {
    let mut rng = StdRng::seed_from_u64(3);
    for n in (0..60).chain([500, 4097]) {
        for m in [1u32, 3, 1000] {
            let v: Vec<(u32, usize)> = (0..n).map(|i| (rng.random_range(0..m), i)).collect();
            let brute = (0..v.len())
                .flat_map(|i| (i + 1..v.len()).map(move |j| (i, j)))
                .filter(|&(i, j)| v[i].0 > v[j].0)
                .count() as u64;
            let mut w = v.clone();
            let mut buf = Vec::new();
            assert_eq!(
                merge_count(&mut w, &mut buf, &|e: &(u32, usize)| e.0),
                brute
            );
            let mut expected = v.clone();
            expected.sort_by_key(|e| e.0);
            assert_eq!(w, expected);
        }
    }
}

fn reference(x: &[f64], y: &[f64]) -> KendallCounts {
    let (dis, ntie, xtie, ytie) = brute(x, y);
    let groups = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let mut g = Vec::new();
        let mut i = 0;
        while i < s.len() {
            let j = s[i..].iter().take_while(|&&e| e == s[i]).count();
            g.push(j as u64);
            i += j;
        }
        g
    };
    let moments = |g: &[u64]| {
        let t: Vec<(f64, f64)> = g
            .iter()
            .filter(|&&t| t > 1)
            .map(|&t| moment_terms(t))
            .collect();
        let a: Vec<f64> = t.iter().map(|e| e.0).collect();
        let b: Vec<f64> = t.iter().map(|e| e.1).collect();
        (numpy_sum(&a), numpy_sum(&b))
    };
    let (gx, gy) = (groups(x), groups(y));
    let ((x0, x1), (y0, y1)) = (moments(&gx), moments(&gy));
    KendallCounts {
        n: x.len() as u64,
        dis,
        ntie,
        xtie,
        ytie,
        x0,
        x1,
        y0,
        y1,
        x_unique: gx.len() as u64,
        y_unique: gy.len() as u64,
    }
}

/// Inputs large enough for many buckets and units, with few to many ties, on
/// both the local and the in-place sort paths and with forced ordered moments.
#[test]
fn bucketed_counts_match_brute_force() {
    use std::sync::atomic::Ordering::Relaxed;
    let mut rng = StdRng::seed_from_u64(11);
    for (n, kx, ky) in [
        (3000usize, 3u32, 1_000_000u32),
        (3000, 1_000_000, 1_000_000),
        (2500, 40, 7),
        (2600, 1, 1000),
        (2048, 1000, 1),
    ] {
        let x: Vec<f64> = (0..n).map(|_| rng.random_range(0..kx) as f64).collect();
        // y partly follows x so that there are discordant and concordant pairs.
        let y: Vec<f64> = x
            .iter()
            .map(|&v| ((v as u64 * 7 + rng.random_range(0..u64::from(ky))) % u64::from(ky)) as f64)
            .collect();
        let expected = reference(&x, &y);
        for (local, ordered) in [(LOCAL_MAX, false), (40, false), (LOCAL_MAX, true)] {
            TEST_LOCAL_MAX.store(local, Relaxed);
            TEST_FORCE_ORDERED.store(ordered, Relaxed);
            for threads in [1, 2] {
                let c = kendall_counts(arr1(&x).view(), arr1(&y).view(), Parallelism { threads })
                    .unwrap();
                assert_eq!(c, expected, "n={n} kx={kx} ky={ky} local={local}");
            }
            TEST_LOCAL_MAX.store(LOCAL_MAX, Relaxed);
            TEST_FORCE_ORDERED.store(false, Relaxed);
        }
    }
}

#[test]
fn u24_indices_equal_u32_indices() {
    use std::sync::atomic::Ordering::Relaxed;
    for i in [0usize, 1, 255, 256, 65_535, 65_536, (1 << 24) - 1] {
        assert_eq!(U24::new(i).get(), i);
    }
    let mut rng = StdRng::seed_from_u64(12);
    for (n, kx, ky) in [(40_000usize, 50u32, 1_000_000u32), (40_000, 1_000_000, 30)] {
        let x = Array1::from_iter((0..n).map(|_| f64::from(rng.random_range(0..kx))));
        let y = Array1::from_iter((0..n).map(|_| rng.random_range(0..ky) as f32));
        // Small local buffers and the ordered moments: the in-place sorts and
        // merges run on the index buffer itself.
        for (local, ordered) in [(LOCAL_MAX, false), (40, true)] {
            TEST_LOCAL_MAX.store(local, Relaxed);
            TEST_FORCE_ORDERED.store(ordered, Relaxed);
            for parallel in [false, true] {
                let a = counts_for::<u32, _, _>(&x.view(), &y.view(), parallel);
                let b = counts_for::<U24, _, _>(&x.view(), &y.view(), parallel);
                assert_eq!(a, b, "n={n} kx={kx} ky={ky} local={local}");
            }
            TEST_LOCAL_MAX.store(LOCAL_MAX, Relaxed);
            TEST_FORCE_ORDERED.store(false, Relaxed);
        }
    }
}

#[test]
fn parallel_counts_equal_sequential() {
    let mut rng = StdRng::seed_from_u64(9);
    for k in [2i64, 50, 1 << 40] {
        let n = 150_000;
        let x = Array1::from_iter((0..n).map(|_| rng.random_range(0..k)));
        let y = Array1::from_iter((0..n).map(|_| rng.random_range(0..k) as f32 * 0.5));
        let a = kendall_counts(x.view(), y.view(), Parallelism::sequential()).unwrap();
        let b = kendall_counts(x.view(), y.view(), Parallelism { threads: 2 }).unwrap();
        assert_eq!(a, b);
    }
}

#[test]
fn bucket_lookup_equals_binary_search() {
    let mut rng = StdRng::seed_from_u64(8);
    let shapes: [fn(u64) -> u64; 3] = [|v| v, |v| v.wrapping_mul(v) >> 3, |v| 1u64 << (v % 64)];
    for f in shapes {
        for m in [0usize, 1, 2, 5, 300, 1023] {
            let mut s: Vec<u64> = (0..m)
                .map(|_| f(rng.random::<u64>() >> rng.random_range(0..64)))
                .collect();
            s.sort_unstable();
            s.dedup();
            let sp = Splitters::new(s.clone());
            let probes = s
                .iter()
                .flat_map(|&v| [v.wrapping_sub(1), v, v.wrapping_add(1)]);
            for k in probes
                .chain([0, u64::MAX])
                .chain((0..200).map(|_| rng.random()))
            {
                let j = s.partition_point(|&v| v < k);
                let expected = 2 * j + usize::from(s.get(j) == Some(&k));
                assert_eq!(sp.bucket(k), expected);
            }
        }
    }
}

#[test]
fn numpy_sum_small_exact() {
    assert_eq!(numpy_sum(&[]), 0.0);
    let v: Vec<f64> = (1..=1000).map(f64::from).collect();
    assert_eq!(numpy_sum(&v), 500_500.0);
}

/// One huge tie block: pair counts near 10^13 and moments near 10^21 must not
/// overflow, and the closed forms must hold.
#[test]
fn large_tie_block_no_overflow() {
    // 10^7 in release; debug builds (plain `cargo test`) use a smaller n.
    let n = if cfg!(debug_assertions) {
        2_000_000
    } else {
        10_000_000usize
    };
    let x = Array1::from_iter((0..n).map(|i| if i < n / 2 { 0i64 } else { i as i64 }));
    let y = Array1::from_iter((0..n).map(|i| (n - i) as f64));
    let c = kendall_counts(x.view(), y.view(), Parallelism { threads: 2 }).unwrap();
    let t = (n / 2) as u64;
    let nn = n as u64;
    assert_eq!(c.xtie, t * (t - 1) / 2);
    assert_eq!(c.ytie, 0);
    assert_eq!(c.ntie, 0);
    // All pairs not tied in x are discordant.
    assert_eq!(c.dis, nn * (nn - 1) / 2 - c.xtie);
    let tf = t as f64;
    assert_eq!(c.x0, tf * (tf - 1.0) * (tf - 2.0));
    assert_eq!(c.x_unique, nn - t + 1);
}
