//! Runs against the reference: AP/ROC AUC of merged runs, of runs fed range by
//! range, and the micro k-way merge equal `binary::per_label_ap_auc` / `binary::micro`
//! on the same cells (ties, weights, masks, zero weights, negative weights).

use ndarray::{Array1, Array2, ArrayView2};
use rand::{rngs::StdRng, Rng, SeedableRng};

use super::*;
use crate::binary::{self, Metric, MetricValue};
use crate::parallel::Parallelism;

fn close(a: MetricValue, b: MetricValue) -> bool {
    a.flags == b.flags
        && ((a.value.is_nan() && b.value.is_nan())
            || (a.value - b.value).abs() <= 1e-12 * a.value.abs().max(1e-300))
}

struct Case {
    s: Array2<f64>,
    y: Array2<bool>,
    w: Option<Array1<f64>>,
    m: Option<Array2<bool>>,
}

fn case(rng: &mut StdRng, n: usize, k: usize) -> Case {
    let levels = [2u32, 5, 1000][rng.random_range(0..3)];
    let s = Array2::from_shape_fn((n, k), |_| {
        f64::from(rng.random_range(0..levels)) / f64::from(levels) - 0.5
    });
    let y = Array2::from_shape_fn((n, k), |_| rng.random_bool(0.3));
    let w = match rng.random_range(0..3) {
        0 => None,
        1 => Some(Array1::from_shape_fn(n, |_| {
            f64::from(rng.random_range(0..4u8))
        })),
        _ => Some(Array1::from_shape_fn(n, |_| rng.random_range(-0.2..1.0))),
    };
    let m = rng
        .random_bool(0.5)
        .then(|| Array2::from_shape_fn((n, k), |_| rng.random_bool(0.8)));
    Case { s, y, w, m }
}

fn runs_of(c: &Case, rows: std::ops::Range<usize>) -> Vec<LabelRuns> {
    let s = c.s.slice(ndarray::s![rows.clone(), ..]);
    let y = c.y.slice(ndarray::s![rows.clone(), ..]);
    let w = c.w.as_ref().map(|w| w.slice(ndarray::s![rows.clone()]));
    let m = c.m.as_ref().map(|m| m.slice(ndarray::s![rows.clone(), ..]));
    build_runs(s, y, w, m, &Parallelism::sequential()).unwrap()
}

fn reference(c: &Case) -> (Vec<MetricValue>, Vec<MetricValue>) {
    let y: ArrayView2<bool> = c.y.view();
    binary::per_label_ap_auc(
        c.s.view(),
        y,
        c.w.as_ref().map(|w| w.view()),
        c.m.as_ref().map(|m| m.view()),
        &Parallelism::sequential(),
    )
    .unwrap()
}

#[test]
fn merged_runs_of_any_split_give_the_reference() {
    let mut rng = StdRng::seed_from_u64(35);
    for _ in 0..300 {
        let n = rng.random_range(0..60);
        let k = rng.random_range(1..4);
        let c = case(&mut rng, n, k);
        let cut = rng.random_range(0..=n);
        let (a, b) = (runs_of(&c, 0..cut), runs_of(&c, cut..n));
        let whole = runs_of(&c, 0..n);
        let (ap, auc) = reference(&c);
        for j in 0..k {
            let merged = merge(b[j].runs.view(), a[j].runs.view());
            assert_eq!(merged.keys, whole[j].runs.keys);
            let (n_pos, n_neg) = (a[j].n_pos + b[j].n_pos, a[j].n_neg + b[j].n_neg);
            assert_eq!((n_pos, n_neg), (whole[j].n_pos, whole[j].n_neg));
            let (x, u) = ap_auc(merged.view(), n_pos, n_neg);
            assert!(close(x, ap[j]), "AP {x:?} vs {:?}", ap[j]);
            assert!(close(u, auc[j]), "AUC {u:?} vs {:?}", auc[j]);
        }
    }
}

#[test]
fn reducer_fed_range_by_range_equals_one_pass() {
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..300 {
        let n = rng.random_range(1..80);
        let c = case(&mut rng, n, 1);
        let whole = &runs_of(&c, 0..n)[0];
        let (ap, auc) = reference(&c);
        // Split the runs at random positions; a boundary inside a run is allowed too
        // (the same key fed in two pieces is one threshold).
        let r = &whole.runs;
        let mut red = Reducer::new();
        let mut at = 0;
        while at < r.len() {
            let end = (at + rng.random_range(1..5)).min(r.len());
            let piece =
                RunsRef::checked(&r.keys[at..end], &r.pos[at..end], &r.neg[at..end]).unwrap();
            red.feed(piece).unwrap();
            at = end;
        }
        let (x, u) = red.finish(whole.n_pos, whole.n_neg);
        assert!(close(x, ap[0]), "AP {x:?} vs {:?}", ap[0]);
        assert!(close(u, auc[0]), "AUC {u:?} vs {:?}", auc[0]);
    }
}

#[test]
fn ranges_reduced_apart_and_joined_equal_one_pass() {
    let mut rng = StdRng::seed_from_u64(11);
    for _ in 0..300 {
        let n = rng.random_range(1..80);
        let c = case(&mut rng, n, 1);
        let whole = &runs_of(&c, 0..n)[0];
        let (ap, auc) = reference(&c);
        // Cut the runs (never inside one: ranges share no key) into pieces, each
        // reduced from the totals above it alone, some pieces empty; join in order.
        let r = &whole.runs;
        let mut joined = Reducer::new();
        let (mut tp, mut fp) = (0.0, 0.0);
        let mut at = 0;
        while at <= r.len() {
            let end = (at + rng.random_range(0..5)).min(r.len());
            let piece =
                RunsRef::checked(&r.keys[at..end], &r.pos[at..end], &r.neg[at..end]).unwrap();
            let mut lower = Reducer::below(tp, fp);
            lower.feed(piece).unwrap();
            tp += r.pos[at..end].iter().sum::<f64>();
            fp += r.neg[at..end].iter().sum::<f64>();
            joined.then(&lower);
            if end == r.len() {
                break;
            }
            at = end;
        }
        let (x, u) = joined.finish(whole.n_pos, whole.n_neg);
        assert!(close(x, ap[0]), "AP {x:?} vs {:?}", ap[0]);
        assert!(close(u, auc[0]), "AUC {u:?} vs {:?}", auc[0]);
        assert_eq!(x.flags, ap[0].flags);
        assert_eq!(u.flags, auc[0].flags);
    }
}

#[test]
fn split_tie_is_one_threshold_and_order_is_checked() {
    let mut red = Reducer::new();
    red.push(10, 1.0, 0.0);
    red.push(10, 0.0, 1.0);
    red.push(5, 0.0, 1.0);
    let (ap, auc) = red.finish(1, 2);
    // One threshold holds the positive and a negative: precision 1/2 at recall 1.
    assert_eq!(ap.value, 0.5);
    assert_eq!(auc.value, 0.75);
    let higher = [11u64];
    let one = [1.0];
    let err = red.feed(RunsRef::checked(&higher, &one, &one).unwrap());
    assert!(err.is_err());
    assert!(RunsRef::checked(&[1, 2], &[1.0, 1.0], &[0.0, 0.0]).is_err());
    assert!(RunsRef::checked(&[2, 2], &[1.0, 1.0], &[0.0, 0.0]).is_err());
    assert!(RunsRef::checked(&[2], &[1.0, 1.0], &[0.0]).is_err());
}

#[test]
fn merge_is_associative_and_commutative_on_keys_and_counts() {
    let mut rng = StdRng::seed_from_u64(3);
    let c = case(&mut rng, 90, 1);
    let parts: Vec<_> = [0..30, 30..60, 60..90]
        .into_iter()
        .map(|r| runs_of(&c, r).remove(0).runs)
        .collect();
    let ab_c = merge(
        merge(parts[0].view(), parts[1].view()).view(),
        parts[2].view(),
    );
    let c_ba = merge(
        parts[2].view(),
        merge(parts[1].view(), parts[0].view()).view(),
    );
    let many = merge_many(&[parts[1].view(), parts[2].view(), parts[0].view()]);
    assert_eq!(ab_c.keys, c_ba.keys);
    assert_eq!(ab_c.keys, many.keys);
    for t in 0..ab_c.len() {
        assert!((ab_c.pos[t] - c_ba.pos[t]).abs() <= 1e-12);
        assert!((ab_c.neg[t] - many.neg[t]).abs() <= 1e-12);
    }
}

#[test]
fn micro_merge_equals_the_micro_reference() {
    let mut rng = StdRng::seed_from_u64(99);
    for _ in 0..100 {
        let n = rng.random_range(0..50);
        let k = rng.random_range(1..5);
        let c = case(&mut rng, n, k);
        let runs = runs_of(&c, 0..n);
        let views: Vec<_> = runs.iter().map(|r| r.runs.view()).collect();
        let n_pos = runs.iter().map(|r| r.n_pos).sum();
        let n_neg = runs.iter().map(|r| r.n_neg).sum();
        let (x, u) = micro_ap_auc(&views, n_pos, n_neg, &Parallelism::sequential());
        let y: ArrayView2<bool> = c.y.view();
        let w = c.w.as_ref().map(|w| w.view());
        let m = c.m.as_ref().map(|m| m.view());
        let par = Parallelism::sequential();
        let ap = binary::micro(c.s.view(), y, w, m, Metric::AveragePrecision, &par).unwrap();
        let auc =
            binary::micro(c.s.view(), y, w, m, Metric::RocAuc { max_fpr: None }, &par).unwrap();
        assert!(close(x, ap), "micro AP {x:?} vs {ap:?}");
        assert!(close(u, auc), "micro AUC {u:?} vs {auc:?}");
    }
}

#[test]
fn micro_blocks_equal_the_materialised_merge() {
    // Several blocks of `MICRO_BLOCK`: parts over overlapping and disjoint key ranges,
    // with keys shared across parts.
    let mut rng = StdRng::seed_from_u64(12);
    let mut parts = Vec::new();
    for (lo, hi, n) in [
        (0u64, 400_000, 90_000),
        (100_000, 150_000, 40_000),
        (0, 1_000, 900),
    ] {
        let mut keys: Vec<u64> = (0..n).map(|_| rng.random_range(lo..hi)).collect();
        keys.sort_unstable_by(|a, b| b.cmp(a));
        keys.dedup();
        let pos = keys
            .iter()
            .map(|_| f64::from(rng.random_range(0..3u8)))
            .collect();
        let neg = keys.iter().map(|_| rng.random_range(0.0..2.0)).collect();
        parts.push(Runs { keys, pos, neg });
    }
    let views: Vec<_> = parts.iter().map(|r| r.view()).collect();
    let merged = merge_many(&views);
    let want = ap_auc(merged.view(), 10, 10);
    for threads in [1, 2] {
        let par = Parallelism { threads };
        let got = micro_ap_auc(&views, 10, 10, &par);
        assert!(close(got.0, want.0), "{:?} vs {:?}", got.0, want.0);
        assert!(close(got.1, want.1), "{:?} vs {:?}", got.1, want.1);
    }
}
