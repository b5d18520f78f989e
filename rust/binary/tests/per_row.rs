//! The per-row sorting network against the per-row curve.

use super::*;

#[test]
fn per_row_fast_equals_general() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let par = Parallelism::sequential();
    for case in 0..48 {
        let n = [1usize, 3, 40, 500][case % 4];
        // K on both sides of the 16-cell sorting network
        let k = [1usize, 2, 15, 16, 17, 40, 70][case % 7];
        let levels = [2u32, 3, 1000, 0][case % 4];
        let s = Array2::from_shape_fn((n, k), |_| {
            if levels == 0 {
                rng.random::<f64>() - 0.5
            } else {
                f64::from(rng.random_range(0..levels)) / f64::from(levels) - 0.5
            }
        });
        let prev = [0.0, 0.1, 0.5, 1.0, 0.9][case % 5];
        let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < prev);
        let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.7);
        for mask in [None, Some(m.view())] {
            for metric in [
                Metric::AveragePrecision,
                Metric::RocAuc { max_fpr: None },
                Metric::RocAuc { max_fpr: Some(1.0) },
            ] {
                let a = per_row(s.view(), y.view(), mask, metric, &par).unwrap();
                let b = per_row_general(s.view(), y.view(), mask, metric).unwrap();
                let bits = |v: &[MetricValue]| -> Vec<(u64, u8)> {
                    v.iter().map(|m| (m.value.to_bits(), m.flags)).collect()
                };
                assert_eq!(bits(&a), bits(&b), "case {case} {metric:?}");
                let f = s.t().to_owned();
                let c = per_row(f.t(), y.view(), mask, metric, &par).unwrap();
                assert_eq!(bits(&a), bits(&c));
            }
        }
    }
    // -0.0 ties with 0.0 inside a row
    let s = arr2(&[[-0.0, 0.0, 0.5]]);
    let y = arr2(&[[true, false, false]]);
    let a = per_row(s.view(), y.view(), None, Metric::AveragePrecision, &par).unwrap();
    let b = per_row_general(s.view(), y.view(), None, Metric::AveragePrecision).unwrap();
    assert_eq!(a, b);
}

/// Integer labels read in place (positive = 1) give exactly the values of the
/// bool matrix `y == 1`, over several row blocks and thread counts.
#[test]
fn per_row_values_integer_labels_equal_bool() {
    let mut rng = StdRng::seed_from_u64(21);
    let n = ROW_BLOCK * 2 + 37;
    let s = Array2::from_shape_fn((n, 7), |_| f64::from(rng.random_range(0..5u8)));
    let yi = Array2::from_shape_fn((n, 7), |_| rng.random_range(-1..3i64));
    let yb = yi.mapv(|v| v == 1);
    let y32 = yi.mapv(|v| v as i32);
    for threads in [1, 2] {
        let par = Parallelism { threads };
        for metric in [
            Metric::AveragePrecision,
            Metric::RocAuc { max_fpr: None },
            Metric::RocAuc { max_fpr: Some(0.3) },
        ] {
            let a = per_row(s.view(), yb.view(), None, metric, &par).unwrap();
            let (v, f) = per_row_values(s.view(), yi.view(), None, metric, &par).unwrap();
            let (v32, f32_) = per_row_values(s.view(), y32.view(), None, metric, &par).unwrap();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let av: Vec<f64> = a.iter().map(|m| m.value).collect();
            let af: Vec<u8> = a.iter().map(|m| m.flags).collect();
            assert_eq!(bits(&v), bits(&av));
            assert_eq!(f, af);
            assert_eq!(bits(&v32), bits(&av));
            assert_eq!(f32_, af);
        }
    }
}
