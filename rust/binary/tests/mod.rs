//! Tests of the binary metrics: every fast path against the reference curve or a
//! brute-force count, masks, weights, dtypes, thread counts and the dispatch table.

use super::per_row::per_row_general;
use super::*;
use crate::binary::curve::searchsorted_right;
use crate::binary::micro::micro_streaming;
use crate::binary::per_label::{
    label_values, merge_blocks, scratch, sorted_label_values, SplitKeys,
};
use crate::cpu::has_avx2;
use crate::numeric::pairwise_sum;
use crate::parallel::ROW_BLOCK;
use crate::sort::RadixKey;
use ndarray::{arr1, arr2, Array1, Array2, ArrayView1};
use rand::{rngs::StdRng, Rng, SeedableRng};

mod cost;
mod micro;
mod per_row;

/// The count walk (large labels) against the sorted runs (bit for bit
/// scikit-learn) and, for ROC AUC, a brute-force Mann-Whitney count: uniform,
/// tied, rounded, extreme and skewed scores, rare to dominant positives, masks
/// (a gap between the runs), and the same values as f32 under 4-byte keys
/// (identical walk results: same positive blocks, same counts).
#[test]
fn count_walk_matches_sorted_runs() {
    let mut rng = StdRng::seed_from_u64(11);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-13 * b.abs() + 1e-300;
    for case in 0..180 {
        let n = [2usize, 3, 10, 33, 64, 200, 1000, 5000, 40_000][case % 9];
        let kind = (case / 9) % 5;
        let s: Vec<f32> = (0..n)
            .map(|_| {
                let u = rng.random::<f32>();
                match kind {
                    0 => u,
                    1 => [-0.0f32, 0.0, 0.5, -0.5, 1.0][rng.random_range(0..5usize)],
                    2 => (u * 100.0).round() / 100.0,
                    3 => [f32::MIN, -f32::MIN_POSITIVE, 0.0, f32::MAX, 1e-30, u]
                        [rng.random_range(0..6usize)],
                    _ => u.powi(12),
                }
            })
            .collect();
        let prev = [0.002, 0.1, 0.5, 0.97][(case / 45) % 4];
        let mut y: Vec<bool> = (0..n).map(|_| rng.random::<f64>() < prev).collect();
        (y[0], y[1]) = (true, false);
        let m: Vec<bool> = (0..n).map(|i| i < 2 || rng.random::<f64>() < 0.7).collect();
        let (s, y, m) = (Array1::from(s), Array1::from(y), Array1::from(m));
        let sc = s.view().insert_axis(ndarray::Axis(1));
        let s64 = s.mapv(f64::from);
        let sw = s64.view().insert_axis(ndarray::Axis(1));
        let yc = y.view().insert_axis(ndarray::Axis(1));
        let mc = m.view().insert_axis(ndarray::Axis(1));
        let mask = (case % 2 == 1).then_some(mc);
        let mut exact = SplitKeys::<u64>::new();
        exact.load(sw, &yc, mask.as_ref(), 0, f64::narrow_key);
        let (np, nn) = (exact.n_pos, exact.n_neg);
        let (ra, ru) = sorted_label_values(&mut exact, true, true);
        let mut walks = Vec::new();
        let mut wide = SplitKeys::<u64>::new();
        wide.load(sw, &yc, mask.as_ref(), 0, f64::narrow_key);
        let mut narrow = SplitKeys::<u32>::new();
        narrow.load(sc, &yc, mask.as_ref(), 0, f32::narrow_key);
        for buf in [&mut wide as &mut dyn WalkBuf, &mut narrow] {
            walks.push(buf.walk());
        }
        let (a, u) = walks[0];
        assert_eq!((bits(&a), bits(&u)), (bits(&walks[1].0), bits(&walks[1].1)));
        assert!(close(a.value, ra.value), "case {case}: {a:?} {ra:?}");
        assert!(close(u.value, ru.value), "case {case}: {u:?} {ru:?}");
        assert_eq!((a.flags, u.flags), (0, 0));
        if n <= 1000 {
            // Mann-Whitney by brute force over the known rows.
            let known: Vec<usize> = (0..n).filter(|&i| mask.is_none() || m[i]).collect();
            let mut u2 = 0u64;
            for &i in known.iter().filter(|&&i| y[i]) {
                for &j in known.iter().filter(|&&j| !y[j]) {
                    u2 += match s64[i].partial_cmp(&s64[j]) {
                        Some(std::cmp::Ordering::Greater) => 2,
                        Some(std::cmp::Ordering::Equal) => 1,
                        _ => 0,
                    };
                }
            }
            let want = u2 as f64 / (2.0 * np as f64 * nn as f64);
            assert_eq!(u.value, want, "case {case}");
        }
    }
}

/// On sorted input (NaN last, as fpr is) the binary search is the count of leading
/// values `<= key`, i.e. the cut of a monotone curve.
#[test]
fn searchsorted_right_on_sorted_input() {
    let a = [0.0, 0.0, 0.25, 0.5, 0.5, 1.0, f64::NAN, f64::NAN];
    for key in [-1.0, 0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 2.0] {
        for n in 0..=a.len() {
            let want = a[..n].iter().take_while(|&&f| f <= key).count();
            assert_eq!(searchsorted_right(&a[..n], key), want, "{key} {n}");
        }
    }
    // Unsorted (negative weights): NumPy's probes, not the first value above.
    assert_eq!(searchsorted_right(&[0.0, 1.0, 0.0, 0.5, 1.0], 0.5), 4); // NumPy: 4
}

const AP: Metric = Metric::AveragePrecision;
const AUC: Metric = Metric::RocAuc { max_fpr: None };

fn bits(v: &MetricValue) -> (u64, u8) {
    (v.value.to_bits(), v.flags)
}

fn all_bits(v: &[MetricValue]) -> Vec<(u64, u8)> {
    v.iter().map(bits).collect()
}

/// Runs the count walk on a loaded buffer, whatever its key width.
trait WalkBuf {
    fn walk(&mut self) -> (MetricValue, MetricValue);
}

impl<K: RadixKey> WalkBuf for SplitKeys<K> {
    fn walk(&mut self) -> (MetricValue, MetricValue) {
        let nk = self.keys.len();
        scratch(&mut self.tmp, nk);
        super::count_walk::ap_auc(&mut self.keys, self.n_pos, self.n_neg, &mut self.tmp)
    }
}

/// Large labels take the walk through the public entry points: equal to the
/// general (weighted, all weights 1) path to 1e-13, packed labels bit for bit
/// equal to bool labels, f32 bit for bit equal to the same values as f64.
#[test]
fn large_labels_take_the_walk() {
    let mut rng = StdRng::seed_from_u64(5);
    let n = WALK_MIN + 1000;
    let s = Array2::from_shape_fn((n, 3), |(_, j)| {
        let u = rng.random::<f32>();
        if j == 1 {
            (u * 100.0).round() / 100.0
        } else {
            u
        }
    });
    let y = Array2::from_shape_fn((n, 3), |(i, j)| {
        rng.random::<f64>() < [0.1, 0.3, 0.01][j] || i == j
    });
    let w64 = s.mapv(f64::from);
    let ones = Array1::from_elem(n, 1.0);
    let par = Parallelism { threads: 2 };
    let (a, u) = per_label_ap_auc(w64.view(), y.view(), None, None, &par).unwrap();
    let (ga, gu) = per_label_ap_auc(w64.view(), y.view(), Some(ones.view()), None, &par).unwrap();
    let (fa, fu) = per_label_ap_auc(s.view(), y.view(), None, None, &par).unwrap();
    for j in 0..3 {
        assert!(
            (a[j].value - ga[j].value).abs() <= 1e-13 * ga[j].value,
            "{j}"
        );
        assert!(
            (u[j].value - gu[j].value).abs() <= 1e-13 * gu[j].value,
            "{j}"
        );
        assert_eq!(bits(&a[j]), bits(&fa[j]));
        assert_eq!(bits(&u[j]), bits(&fu[j]));
    }
}

/// `metric` of one label given as slices.
fn one_label(y: &[bool], s: &[f64], metric: Metric) -> MetricValue {
    let ya = Array2::from_shape_vec((y.len(), 1), y.to_vec()).unwrap();
    let sa = Array2::from_shape_vec((s.len(), 1), s.to_vec()).unwrap();
    let par = Parallelism::sequential();
    per_label(sa.view(), ya.view(), None, None, metric, &par).unwrap()[0]
}

fn ap1(y: &[bool], s: &[f64]) -> MetricValue {
    one_label(y, s, AP)
}

fn auc1(y: &[bool], s: &[f64], max_fpr: Option<f64>) -> MetricValue {
    one_label(y, s, Metric::RocAuc { max_fpr })
}

/// Brute-force Mann-Whitney AUC with half credit for ties.
fn mw(y: &[bool], s: &[f64]) -> f64 {
    let mut num = 0.0;
    let mut den = 0.0;
    for i in 0..y.len() {
        for j in 0..y.len() {
            if y[i] && !y[j] {
                den += 1.0;
                if s[i] > s[j] {
                    num += 1.0
                } else if s[i] == s[j] {
                    num += 0.5
                }
            }
        }
    }
    num / den
}

#[test]
fn ap_known_values() {
    let y = [false, false, true, true];
    let s = [0.1, 0.4, 0.35, 0.8];
    assert!((ap1(&y, &s).value - 0.8333333333333333).abs() < 1e-15);
    // constant scores: prevalence, exactly
    assert_eq!(ap1(&[true, false, false, false], &[0.5; 4]).value, 0.25);
    // tied pair, both orders
    assert_eq!(ap1(&[true, false], &[0.5, 0.5]).value, 0.5);
    assert_eq!(ap1(&[false, true], &[0.5, 0.5]).value, 0.5);
    // -0.0 ties with 0.0
    assert_eq!(ap1(&[true, false], &[-0.0, 0.0]).value, 0.5);
    // all positives
    assert_eq!(ap1(&[true, true], &[0.1, 0.2]).value, 1.0);
    // no positives
    let r = ap1(&[false, false], &[0.1, 0.2]);
    assert_eq!(r.value, 0.0);
    assert_eq!(r.flags, FLAG_NO_POSITIVE);
}

#[test]
fn auc_matches_mann_whitney() {
    let y = [true, false, true, false, false, true, true, false];
    let s = [0.1, 0.1, 0.5, 0.5, 0.3, 0.9, 0.3, 0.0];
    assert!((auc1(&y, &s, None).value - mw(&y, &s)).abs() < 1e-15);
    let r = auc1(&[true, true], &[0.1, 0.2], None);
    assert!(r.value.is_nan());
    assert_eq!(r.flags, FLAG_SINGLE_CLASS);
}

#[test]
fn partial_auc_mcclish() {
    // Perfect ranking -> 1 for any max_fpr; reversed -> 0.5 * (1 + (0 - m²/2)/(m - m²/2)).
    let y = [true, true, false, false];
    let s = [0.9, 0.8, 0.2, 0.1];
    assert!((auc1(&y, &s, Some(0.5)).value - 1.0).abs() < 1e-15);
    let r = auc1(&y, &[0.1, 0.2, 0.8, 0.9], Some(0.5)).value;
    let m: f64 = 0.5;
    let expect = 0.5 * (1.0 + (0.0 - 0.5 * m * m) / (m - 0.5 * m * m));
    assert!((r - expect).abs() < 1e-15);
    // random classifier (constant score) -> 0.5
    assert!((auc1(&y, &[0.5; 4], Some(0.3)).value - 0.5).abs() < 1e-15);
}

#[test]
fn weights_and_mask() {
    let y = arr2(&[[true], [false], [true], [false]]);
    let s = arr2(&[[0.9], [0.8], [0.1], [0.2]]);
    let par = Parallelism::sequential();
    let one = |w: &[f64], m: &[bool], metric| {
        let w = (!w.is_empty()).then(|| arr1(w));
        let m = (!m.is_empty()).then(|| Array2::from_shape_vec((4, 1), m.to_vec()).unwrap());
        let (w, m) = (w.as_ref().map(|w| w.view()), m.as_ref().map(|m| m.view()));
        per_label(s.view(), y.view(), w, m, metric, &par).unwrap()[0]
    };
    let ap = Metric::AveragePrecision;
    // zero weight == row deleted; the mask does the same
    let with_w = one(&[1.0, 0.0, 1.0, 1.0], &[], ap);
    let with_m = one(&[], &[true, false, true, true], ap);
    assert_eq!(with_w.value, with_m.value);
    // all weights zero
    assert_eq!(one(&[0.0; 4], &[], ap).flags, FLAG_ALL_ZERO_WEIGHT);
    // AUC: single-class check happens before zero-weight filtering
    let r = one(&[1.0, 0.0, 1.0, 0.0], &[], Metric::RocAuc { max_fpr: None });
    assert!(r.value.is_nan());
    assert_eq!(r.flags, FLAG_NO_NEGATIVE_LEFT);
    // empty mask
    let r = one(&[], &[false; 4], ap);
    assert!(r.value.is_nan() && r.flags & FLAG_EMPTY != 0);
}

#[test]
fn micro_and_rows() {
    let y = arr2(&[[true, false], [false, true]]);
    let s = arr2(&[[0.9, 0.1], [0.2, 0.8]]);
    let par = Parallelism::sequential();
    let m = micro(s.view(), y.view(), None, None, AP, &par).unwrap();
    assert_eq!(m.value, 1.0);
    let r = per_row(s.view(), y.view(), None, AUC, &par).unwrap();
    let values: Vec<f64> = r.iter().map(|v| v.value).collect();
    assert_eq!(values, vec![1.0, 1.0]);
    // F-order and strided views give the same answers
    let f = s.t().to_owned();
    let m2 = micro(f.t(), y.view(), None, None, AP, &par).unwrap();
    assert_eq!(m, m2);
}

#[test]
fn f32_and_i64_keep_their_ties() {
    let y = arr2(&[[false], [true]]);
    let s32 = arr2(&[[0.1f32], [(0.1f64 + 1e-10) as f32]]);
    let par = Parallelism::sequential();
    let r = per_label(s32.view(), y.view(), None, None, AP, &par).unwrap();
    assert_eq!(r[0].value, 0.5);
    let s64 = arr2(&[[1i64 << 53], [(1i64 << 53) + 1]]);
    let r = per_label(s64.view(), y.view(), None, None, AP, &par).unwrap();
    assert_eq!(r[0].value, 1.0);
}

#[test]
fn parallel_equals_sequential() {
    let n = 20_000;
    let k = 6;
    let s = Array2::from_shape_fn((n, k), |(i, j)| ((i * 7919 + j * 31) % 97) as f64 / 97.0);
    let y = Array2::from_shape_fn((n, k), |(i, j)| (i * 13 + j) % 5 == 0);
    let seq = Parallelism::sequential();
    let par = Parallelism { threads: 2 };
    for metric in [
        Metric::AveragePrecision,
        Metric::RocAuc { max_fpr: Some(0.3) },
    ] {
        let a = per_label(s.view(), y.view(), None, None, metric, &seq).unwrap();
        let b = per_label(s.view(), y.view(), None, None, metric, &par).unwrap();
        assert_eq!(a, b);
        let a = per_row(s.view(), y.view(), None, metric, &seq).unwrap();
        let b = per_row(s.view(), y.view(), None, metric, &par).unwrap();
        assert_eq!(a.len(), n);
        for (x, z) in a.iter().zip(b.iter()) {
            assert!(x.value.to_bits() == z.value.to_bits() && x.flags == z.flags);
        }
    }
}

/// Packed labels (pairs of labels per pass, packed micro scans) give exactly
/// the values of the bool matrix (singles), for every path that reads them.
#[test]
fn packed_labels_equal_bool_labels() {
    use crate::labels::{pack_bool, PackedLabels};
    let mut rng = StdRng::seed_from_u64(21);
    for case in 0..8 {
        let n = [70usize, 1200, 2500][case % 3];
        let k = [9usize, 15, 16, 17][case % 4];
        let s = Array2::from_shape_fn((n, k), |_| match case % 2 {
            0 => rng.random::<f64>(),
            _ => f64::from(rng.random_range(0..9u32)) / 9.0,
        });
        let y = Array2::from_shape_fn((n, k), |(_, j)| {
            // one label without positives, one without negatives
            j != 3 && (j == 5 || rng.random::<f64>() < 0.2)
        });
        let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.85);
        let packed = pack_bool(&y);
        let p = PackedLabels::new(packed.view(), k).unwrap();
        let s32 = s.mapv(|v| v as f32);
        for threads in [1, 2] {
            // 2 threads, k >= 8: pairs of labels per pass
            let par = Parallelism { threads };
            for mask in [None, Some(m.view())] {
                let (a1, u1) = per_label_ap_auc(s.view(), y.view(), None, mask, &par).unwrap();
                let (a2, u2) = per_label_ap_auc(s.view(), p, None, mask, &par).unwrap();
                assert_eq!(all_bits(&a1), all_bits(&a2), "case {case}");
                assert_eq!(all_bits(&u1), all_bits(&u2), "case {case}");
                let (a1, u1) = per_label_ap_auc(s32.view(), y.view(), None, mask, &par).unwrap();
                let (a2, u2) = per_label_ap_auc(s32.view(), p, None, mask, &par).unwrap();
                assert_eq!(all_bits(&a1), all_bits(&a2), "f32 case {case}");
                assert_eq!(all_bits(&u1), all_bits(&u2), "f32 case {case}");
                let metric = Metric::RocAuc { max_fpr: Some(0.4) };
                let r1 = per_label(s.view(), y.view(), None, mask, metric, &par).unwrap();
                let r2 = per_label(s.view(), p, None, mask, metric, &par).unwrap();
                assert_eq!(all_bits(&r1), all_bits(&r2));
                // several stream groups, and one
                for cap in [(n * k / 6).max(64), 1 << 20] {
                    let r1 = micro_streaming(s.view(), y.view(), mask, cap, &par).unwrap();
                    let r2 = micro_streaming(s.view(), p, mask, cap, &par).unwrap();
                    assert_eq!(
                        all_bits(&[r1.0, r1.1]),
                        all_bits(&[r2.0, r2.1]),
                        "micro {cap}"
                    );
                }
                let r1 = micro_ap_auc(s.view(), y.view(), None, mask, &par).unwrap();
                let r2 = micro_ap_auc(s.view(), p, None, mask, &par).unwrap();
                assert_eq!(all_bits(&[r1.0, r1.1]), all_bits(&[r2.0, r2.1]));
                let w = Array1::from_shape_fn(n, |i| (i % 5) as f64 * 0.5);
                let s1 = support(y.view(), Some(w.view()), mask).unwrap();
                let s2 = support(p, Some(w.view()), mask).unwrap();
                assert_eq!(s1, s2);
            }
        }
    }
}

#[test]
fn narrow_f32_keys_equal_wide_keys() {
    // The u32-key path (streamed counts and terms) must give exactly the values
    // of the u64-key path (stored counts and terms) on the same f32 scores.
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let bits = |v: &(MetricValue, MetricValue)| {
        (
            v.0.value.to_bits(),
            v.0.flags,
            v.1.value.to_bits(),
            v.1.flags,
        )
    };
    let mut blocks_seen = 0usize;
    for case in 0..48 {
        let n = [0usize, 1, 2, 7, 9, 130, 257, 3000][case % 8];
        let kind = (case / 8) % 3;
        let s: Vec<f32> = (0..n)
            .map(|_| match kind {
                // uniform, heavy ties incl. both zeros, extremes
                0 => rng.random::<f32>() * 2.0 - 1.0,
                1 => [-0.0f32, 0.0, 0.5, -0.5, 1.0][rng.random_range(0..5usize)],
                _ => [f32::MIN, -f32::MIN_POSITIVE, -0.0, 0.0, f32::MAX, 0.25]
                    [rng.random_range(0..6usize)],
            })
            .collect();
        let prev = [0.0, 0.1, 0.5, 1.0][(case / 24 + case) % 4];
        let y: Vec<bool> = (0..n).map(|_| rng.random::<f64>() < prev).collect();
        let m: Vec<bool> = (0..n).map(|_| rng.random::<f64>() < 0.7).collect();
        let (s, y, m) = (Array1::from(s), Array1::from(y), Array1::from(m));
        for mask in [None, Some(m.view())] {
            for (ap, auc) in [(true, true), (true, false), (false, true)] {
                let sc = s.view().insert_axis(ndarray::Axis(1));
                let yc = y.view().insert_axis(ndarray::Axis(1));
                let mc = mask.map(|m| m.insert_axis(ndarray::Axis(1)));
                let mut wide = SplitKeys::<u64>::new();
                wide.load(sc, &yc, mc.as_ref(), 0, |v: f32| v.key());
                let mut narrow = SplitKeys::<u32>::new();
                narrow.load(sc, &yc, mc.as_ref(), 0, f32::narrow_key);
                assert_eq!((wide.n_pos, wide.n_neg), (narrow.n_pos, narrow.n_neg));
                let nk = wide.keys.len();
                let (np, nn) = (wide.n_pos, wide.n_neg);
                let mut cum = vec![0u64; nk];
                wide.sort_runs();
                blocks_seen += merge_blocks(&wide.keys[..np], &wide.keys[nk - nn..], &mut cum);
                let a = label_values(&mut wide, ap, auc);
                let b = label_values(&mut narrow, ap, auc);
                assert_eq!(bits(&a), bits(&b), "case {case} {ap} {auc}: {a:?} {b:?}");
            }
        }
        // whole path: f32 scores equal to the same values widened to f64
        let s2 = Array2::from_shape_fn((n, 3), |(i, j)| s[(i + j) % n.max(1)]);
        let y2 = Array2::from_shape_fn((n, 3), |(i, j)| y[(i * 7 + j) % n.max(1)]);
        let par = Parallelism::sequential();
        let a = per_label_ap_auc(s2.view(), y2.view(), None, None, &par).unwrap();
        let w = s2.mapv(f64::from);
        let b = per_label_ap_auc(w.view(), y2.view(), None, None, &par).unwrap();
        for (x, z) in
            a.0.iter()
                .chain(a.1.iter())
                .zip(b.0.iter().chain(b.1.iter()))
        {
            assert_eq!((x.value.to_bits(), x.flags), (z.value.to_bits(), z.flags));
        }
    }
    assert!(blocks_seen > 1000);
}

/// AP and full ROC AUC through the reference curve: `f(weights, metric)` with unit
/// weights (the unweighted counts, computed by the weighted path).
fn curve_pair<T>(n: usize, f: impl Fn(Option<ArrayView1<f64>>, Metric) -> T) -> (T, T) {
    let ones = Array1::from_elem(n, 1.0);
    (
        f(Some(ones.view()), Metric::AveragePrecision),
        f(Some(ones.view()), Metric::RocAuc { max_fpr: None }),
    )
}

#[test]
fn fast_path_equals_general_path() {
    let mut rng = StdRng::seed_from_u64(5);
    let par = Parallelism::sequential();
    let p2 = Parallelism { threads: 2 };
    for case in 0..40 {
        let n = [1usize, 2, 7, 50, 300, 3000][case % 6];
        let k = 1 + case % 4;
        let levels = [2u32, 5, 1000, 0][case % 4];
        let s = Array2::from_shape_fn((n, k), |_| {
            if levels == 0 {
                rng.random::<f64>()
            } else {
                f64::from(rng.random_range(0..levels)) / f64::from(levels)
            }
        });
        let prev = [0.0, 0.1, 0.5, 1.0][case % 4];
        let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < prev);
        let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.8);
        for mask in [None, Some(m.view())] {
            let general = curve_pair(n, |w, metric| {
                let v = per_label(s.view(), y.view(), w, mask, metric, &par).unwrap();
                all_bits(&v)
            });
            // sequential and parallel (forced) give the same
            for p in [&par, &p2] {
                let (ap, auc) = per_label_ap_auc(s.view(), y.view(), None, mask, p).unwrap();
                assert_eq!((all_bits(&ap), all_bits(&auc)), general, "case {case}");
            }
            let general = curve_pair(n, |w, metric| {
                bits(&micro(s.view(), y.view(), w, mask, metric, &par).unwrap())
            });
            let (ma, mu) = micro_ap_auc(s.view(), y.view(), None, mask, &par).unwrap();
            assert_eq!((bits(&ma), bits(&mu)), general, "micro case {case}");
        }
        // strided view
        let (sv, yv) = (
            s.slice(ndarray::s![..;2, ..]),
            y.slice(ndarray::s![..;2, ..]),
        );
        let (ap, _) = per_label_ap_auc(sv, yv, None, None, &par).unwrap();
        let (ap_g, _) = curve_pair(sv.nrows(), |w, metric| {
            all_bits(&per_label(sv, yv, w, None, metric, &par).unwrap())
        });
        assert_eq!(all_bits(&ap), ap_g, "strided case {case}");
    }
}

#[test]
fn partial_auc_fast_path_equals_general_path() {
    use crate::labels::{pack_bool, PackedLabels};
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    // Tiny values (few or no points below them), usual ones, 1.0 (full area),
    // and out-of-range ones the kernel still has to agree on (fewer than two
    // points, every point below max_fpr, 0/0 standardisation).
    let fprs = [
        1e-300,
        1e-9,
        1e-3,
        0.05,
        0.1,
        1.0 / 3.0,
        0.5,
        0.75,
        0.999,
        1.0,
        0.0,
        -0.5,
        2.0,
        f64::NAN,
    ];
    let mut checked = 0usize;
    for case in 0..36 {
        let n = [1usize, 2, 3, 7, 50, 300, 2000][case % 7];
        let k = [1usize, 2, 3, 9][case % 4];
        let levels = [2u32, 5, 1000, 0, 3][case % 5];
        let s = Array2::from_shape_fn((n, k), |_| {
            if levels == 0 {
                rng.random::<f64>()
            } else {
                f64::from(rng.random_range(0..levels)) / f64::from(levels)
            }
        });
        let prev = [0.0, 0.1, 0.5, 1.0, 0.9][case % 5];
        let y = Array2::from_shape_fn((n, k), |(_, j)| match j {
            // one label without negatives, one without positives
            1 => true,
            2 => false,
            _ => rng.random::<f64>() < prev,
        });
        let m = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.8);
        let packed = pack_bool(&y);
        let p = PackedLabels::new(packed.view(), k).unwrap();
        let s32 = s.mapv(|v| v as f32);
        let ones = ndarray::Array1::from_elem(n, 1.0);
        for mask in [None, Some(m.view())] {
            for &mf in &fprs {
                let metric = Metric::RocAuc { max_fpr: Some(mf) };
                let seq = Parallelism::sequential();
                // general path: unit weights (the same counts as unweighted)
                let g =
                    per_label(s.view(), y.view(), Some(ones.view()), mask, metric, &seq).unwrap();
                let g32 =
                    per_label(s32.view(), y.view(), Some(ones.view()), mask, metric, &seq).unwrap();
                for threads in [1, 2] {
                    let par = Parallelism { threads };
                    // packed labels: pairs of labels per pass when k >= 4; f32:
                    // narrow (u32) keys
                    let fast = [
                        per_label(s.view(), y.view(), None, mask, metric, &par),
                        per_label(s.view(), p, None, mask, metric, &par),
                        per_label(s32.view(), y.view(), None, mask, metric, &par),
                        per_label(s32.view(), p, None, mask, metric, &par),
                    ];
                    let what = ["bool", "packed", "f32", "f32 packed"];
                    for ((f, what), want) in fast.into_iter().zip(what).zip([&g, &g, &g32, &g32]) {
                        let f = all_bits(&f.unwrap());
                        assert_eq!(f, all_bits(want), "{what} case {case} max_fpr {mf}");
                    }
                }
                checked += g.iter().filter(|v| v.flags == 0).count();
            }
        }
    }
    assert!(checked > 500, "too few defined values compared: {checked}");
}

#[test]
fn counts_and_threshold_rows() {
    let y = arr1(&[false, false, true, true]);
    let s = arr1(&[0.1, 0.4, 0.35, 0.8]);
    let (fps, tps, rows) = binary_counts(s.view(), y.view(), None).unwrap();
    assert_eq!(fps, vec![0.0, 1.0, 1.0, 2.0]);
    assert_eq!(tps, vec![1.0, 1.0, 2.0, 2.0]);
    assert_eq!(rows, vec![3, 1, 2, 0]);
    let z = arr1(&[0.0; 4]);
    assert!(binary_counts(s.view(), y.view(), Some(z.view())).is_err());
}

#[test]
fn support_counts() {
    let y = arr2(&[[true, false], [true, true]]);
    let w = arr1(&[2.0, 0.5]);
    assert_eq!(
        support(y.view(), Some(w.view()), None).unwrap(),
        vec![2.5, 0.5]
    );
}

#[test]
fn pairwise_sum_small_and_large() {
    let v: Vec<f64> = (0..1000).map(|i| i as f64).collect();
    assert_eq!(pairwise_sum(&v), 499500.0);
    assert_eq!(pairwise_sum(&[]), -0.0);
}

#[test]
fn shape_errors() {
    let y = arr2(&[[true, false]]);
    let s = arr2(&[[0.1]]);
    assert!(per_label(
        s.view(),
        y.view(),
        None,
        None,
        Metric::AveragePrecision,
        &Parallelism::sequential()
    )
    .is_err());
}

/// The dispatch table: weights always take the curve (the bootstrap's weighted
/// walk for its AP), the micro stream only when the cells do not fit, the count
/// walk only for large labels with both classes, and 4-byte keys the narrow runs.
#[test]
fn dispatch_rules() {
    let at = |averaging, weighted, max_fpr, fits, gathered| {
        dispatch(&Input {
            averaging,
            weighted,
            max_fpr,
            fits,
            gathered,
        })
    };
    let g = |n_pos, n_neg, narrow| {
        Some(Gathered {
            n_pos,
            n_neg,
            narrow,
        })
    };
    use Averaging::*;
    for a in [PerLabel, Micro, PerRow] {
        assert_eq!(at(a, true, None, true, None), Path::Curve);
    }
    // the bootstrap's AP statistic: weights the weighted walk, else the buckets,
    // one per system when the dtypes are mixed; nothing else sways it
    for mixed_dtypes in [false, true] {
        let boot = BootstrapAp { mixed_dtypes };
        for (max_fpr, fits, gathered) in [(None, true, None), (Some(0.5), false, g(9, 9, true))] {
            assert_eq!(
                at(boot, true, max_fpr, fits, gathered),
                Path::BootstrapWeighted
            );
            let unweighted = if mixed_dtypes {
                Path::BootstrapBucketEach
            } else {
                Path::BootstrapBucketShared
            };
            assert_eq!(at(boot, false, max_fpr, fits, gathered), unweighted);
        }
    }
    assert_eq!(at(PerRow, false, None, true, None), Path::RowNetwork);
    assert_eq!(at(PerRow, false, Some(1.0), true, None), Path::RowNetwork);
    assert_eq!(at(PerRow, false, Some(0.5), true, None), Path::Curve);
    assert_eq!(at(Micro, false, Some(1.0), true, None), Path::Curve);
    assert_eq!(at(Micro, false, None, false, None), Path::MicroStream);
    assert_eq!(at(Micro, false, None, true, None), Path::Gather);
    assert_eq!(at(PerLabel, false, Some(0.5), true, None), Path::Gather);
    let big = WALK_MIN;
    assert_eq!(
        at(PerLabel, false, Some(0.5), true, g(big, big, false)),
        Path::PartialRuns
    );
    assert_eq!(
        at(PerLabel, false, Some(1.0), true, g(big, big, true)),
        Path::CountWalk
    );
    assert_eq!(
        at(PerLabel, false, None, true, g(big, 0, false)),
        Path::SortedRuns
    );
    assert_eq!(
        at(PerLabel, false, None, true, g(big - 1, 0, true)),
        Path::NarrowRuns
    );
    assert_eq!(
        at(PerLabel, false, None, true, g(1, big - 2, false)),
        Path::SortedRuns
    );
    assert_eq!(
        at(PerLabel, false, None, true, g(1, big - 1, false)),
        Path::CountWalk
    );
}

/// A gathered label asks [`dispatch`] with its key width: 4-byte keys take the
/// narrow runs, 8-byte keys the sorted runs, both the count walk when large.
#[test]
fn gathered_label_paths_by_key_width() {
    let label = |n_pos, n_neg| {
        let mut wide = SplitKeys::<u64>::new();
        let mut narrow = SplitKeys::<u32>::new();
        (wide.n_pos, wide.n_neg) = (n_pos, n_neg);
        (narrow.n_pos, narrow.n_neg) = (n_pos, n_neg);
        (wide.path(None), narrow.path(None), narrow.path(Some(0.5)))
    };
    assert_eq!(
        label(3, 5),
        (Path::SortedRuns, Path::NarrowRuns, Path::PartialRuns)
    );
    assert_eq!(
        label(WALK_MIN, 1),
        (Path::CountWalk, Path::CountWalk, Path::PartialRuns)
    );
}
