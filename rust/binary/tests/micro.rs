//! The micro-average bucket stream against the one-sort path.

use super::*;
use crate::binary::micro::micro_streaming;
use crate::binary::micro_scan::{
    filter_cells, filter_cells_on, row_reciprocal, Buckets, FILTER_CELLS,
};
use crate::binary::per_label::{label_values, SplitKeys};

#[test]
fn micro_streaming_equals_one_sort() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let close = |a: f64, b: f64| {
        (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-13 * a.abs().max(b.abs())
    };
    for case in 0..16 {
        let n = [3usize, 400, 5000][case % 3];
        let k = [1usize, 4, 15][case % 3];
        let kind = case % 4;
        let s = Array2::from_shape_fn((n, k), |_| match kind {
            // uniform, heavy ties, narrow range (forces refinement), one value
            0 => rng.random::<f64>(),
            1 => f64::from(rng.random_range(0..7u32)) / 7.0,
            2 => 0.5 + rng.random::<f64>() * 1e-9,
            _ => 0.25,
        });
        let prev = [0.1, 0.0, 0.5, 1.0][(case / 4) % 4];
        let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < prev);
        let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.8);
        // float32 keys start their histogram below the top 32 bits
        let s32 = s.mapv(|v| v as f32);
        let mut buf = SplitKeys::new();
        buf.load_all(s32.view(), &y.view(), None);
        let (ra, ru) = label_values(&mut buf, true, true);
        let par = Parallelism::sequential();
        let (a, u) = micro_streaming(s32.view(), y.view(), None, 1000, &par).unwrap();
        assert!(
            close(a.value, ra.value) && close(u.value, ru.value),
            "f32 case {case}"
        );
        for mask in [None, Some(m.view())] {
            let mut buf = SplitKeys::new();
            buf.load_all(s.view(), &y.view(), mask.as_ref());
            let (ra, ru) = label_values(&mut buf, true, true);
            let mut first: Option<(u64, u64)> = None;
            let caps = if n * k > 10_000 {
                vec![3000usize, 20_000]
            } else {
                vec![4usize, 37, 1000]
            };
            for cap in caps {
                for threads in [1usize, 2, 3] {
                    let par = Parallelism { threads };
                    let (a, u) = micro_streaming(s.view(), y.view(), mask, cap, &par).unwrap();
                    assert!(
                        close(a.value, ra.value),
                        "case {case} cap {cap}: {a:?} {ra:?}"
                    );
                    assert!(
                        close(u.value, ru.value),
                        "case {case} cap {cap}: {u:?} {ru:?}"
                    );
                    assert_eq!((a.flags, u.flags), (ra.flags, ru.flags), "case {case}");
                    // never depends on the thread count
                    if threads == 1 {
                        first = Some((a.value.to_bits(), u.value.to_bits()));
                    } else {
                        assert_eq!(first, Some((a.value.to_bits(), u.value.to_bits())));
                    }
                }
            }
        }
    }
}

/// Two workers sharing each group (micro_group_pair: rows split between a
/// front and a back writer, buckets walked in two runs) give the one-worker
/// stream's values bit for bit, on inputs larger than a row block, with masks,
/// ties, a narrow range that forces refinement, and caps that make many groups.
#[test]
fn micro_pair_equals_one_worker() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    for case in 0..6 {
        let (n, k) = [(20_000usize, 4usize), (9_001, 15)][case % 2];
        let kind = case % 3;
        let s = Array2::from_shape_fn((n, k), |_| match kind {
            0 => rng.random::<f64>(),
            1 => f64::from(rng.random_range(0..50u32)) / 50.0,
            _ => 0.5 + rng.random::<f64>() * 1e-9,
        });
        let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.1);
        let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.9);
        let fortran = s.t().as_standard_layout().into_owned().reversed_axes();
        for mask in [None, Some(m.view())] {
            for cap in [5_000usize, 40_000] {
                let one =
                    micro_streaming(s.view(), y.view(), mask, cap, &Parallelism::sequential())
                        .unwrap();
                let bits =
                    |r: (MetricValue, MetricValue)| (r.0.value.to_bits(), r.1.value.to_bits());
                for threads in [2usize, 3] {
                    let par = Parallelism { threads };
                    let two = micro_streaming(s.view(), y.view(), mask, cap, &par).unwrap();
                    assert_eq!(
                        bits(two),
                        bits(one),
                        "case {case} cap {cap} threads {threads}"
                    );
                    let f = micro_streaming(fortran.view(), y.view(), mask, cap, &par).unwrap();
                    assert_eq!(bits(f), bits(one), "fortran case {case} cap {cap}");
                }
            }
        }
    }
}

#[test]
fn row_reciprocal_divides_exactly() {
    // Every cell index of a row block, for every row width the filter takes.
    for k in 1..=64usize {
        let r = row_reciprocal(k);
        for i in 0..ROW_BLOCK * k {
            assert_eq!(((i as u64 * r) >> 32) as usize, i / k, "k {k} i {i}");
        }
    }
}

#[test]
fn group_filter_matches_a_plain_loop() {
    use crate::labels::{pack_bool, PackedLabels};
    let mut rng = StdRng::seed_from_u64(33);
    for &k in &[1usize, 3, 15, 16, 63, 64] {
        // Sub-block edges: FILTER_CELLS / k rows per sub-block.
        let n = FILTER_CELLS / k * 2 + 7;
        let s = Array2::from_shape_fn((n, k), |_| match rng.random_range(0..6u32) {
            0 => 0.0,
            1 => -0.0,
            2 => -rng.random::<f64>(),
            _ => rng.random::<f64>(),
        });
        let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.3);
        let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.7);
        let packed = pack_bool(&y);
        let p = PackedLabels::new(packed.view(), k).unwrap();
        let sv = s.as_slice().unwrap();
        let rows = 0..n;
        // Buckets of the top 12 bits: a middle range, the zeros, and all.
        let zero = (!0.0f64.key()) >> 52;
        for (shift, first, span) in [(52u32, 0x400u64, 9u64), (52, zero, 1), (0, 0, u64::MAX)] {
            for mask in [None, Some(m.as_slice().unwrap())] {
                let mut want = Vec::new();
                for (i, &v) in sv.iter().enumerate() {
                    let (r, j) = (i / k, i % k);
                    let key = !v.key();
                    if mask.is_none_or(|mv| mv[i]) && (key >> shift).wrapping_sub(first) < span {
                        want.push((key, y[(r, j)]));
                    }
                }
                assert!(!want.is_empty(), "k {k} shift {shift}");
                let got_bool = |avx2: bool| {
                    let mut got = Vec::new();
                    let yv = y.as_slice().unwrap();
                    filter_cells_on::<f64, ArrayView2<bool>>(
                        avx2,
                        sv,
                        yv,
                        mask,
                        (k, k),
                        Buckets { shift, first, span },
                        |key, t| got.push((key, t)),
                    );
                    got
                };
                assert_eq!(got_bool(false), want, "bool k {k} shift {shift}");
                if has_avx2() {
                    assert_eq!(got_bool(true), want, "avx2 k {k} shift {shift}");
                }
                let mut got = Vec::new();
                let yv = p.block(rows.clone()).unwrap();
                filter_cells::<f64, PackedLabels>(
                    sv,
                    yv,
                    mask,
                    (k, k.div_ceil(8)),
                    Buckets { shift, first, span },
                    |key, t| got.push((key, t)),
                );
                assert_eq!(got, want, "packed k {k} shift {shift}");
            }
        }
    }
}

#[test]
fn micro_streaming_layouts_agree() {
    // C order takes the vectorised filter; Fortran order, strided views and
    // rows of more than 64 labels take the compaction path. Same buckets, so
    // the same bits.
    let mut rng = StdRng::seed_from_u64(41);
    for &(n, k) in &[(3000usize, 15usize), (400, 70)] {
        let s = Array2::from_shape_fn((n, k), |_| f64::from(rng.random_range(0..500u32)) / 500.0);
        let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.2);
        let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.8);
        let sf = s.t().as_standard_layout().t().to_owned();
        let yf = y.t().as_standard_layout().t().to_owned();
        let mf = m.t().as_standard_layout().t().to_owned();
        for threads in [1usize, 2] {
            let par = Parallelism { threads };
            for masked in [false, true] {
                let mc = masked.then(|| m.view());
                let mfv = masked.then(|| mf.view());
                let want = micro_streaming(s.view(), y.view(), mc, 1000, &par).unwrap();
                let f = micro_streaming(sf.view(), yf.view(), mfv, 1000, &par).unwrap();
                let mixed = micro_streaming(sf.view(), y.view(), mc, 1000, &par).unwrap();
                for got in [f, mixed] {
                    assert_eq!(got.0.value.to_bits(), want.0.value.to_bits(), "n {n} k {k}");
                    assert_eq!(got.1.value.to_bits(), want.1.value.to_bits(), "n {n} k {k}");
                }
            }
        }
    }
}
