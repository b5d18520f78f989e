//! What each path of [`dispatch`] costs against its neighbour (the computation that
//! would serve the same input without it), on the inputs where `dispatch` picks it.
//!
//! `path_cost` runs one case, named by `TOXEVAL_COST`, on `TOXEVAL_COST_ROWS` rows
//! (default 100,000) of U(0,1) scores, Bernoulli(0.1) labels, one thread. Run each
//! case under callgrind and subtract the `none` case (data only) of the same size:
//!
//! ```text
//! cargo test --release --lib --no-run   # note the test binary it prints
//! TOXEVAL_COST=walk TOXEVAL_COST_ROWS=1000000 valgrind --tool=callgrind \
//!   --callgrind-out-file=/dev/null <test binary> --ignored --exact \
//!   binary::tests::cost::path_cost
//! ```
//!
//! Without `TOXEVAL_COST` it runs every case on a few thousand rows and checks that
//! each path gives its neighbour's values. docs/dev/perf-notes.md has the counts.

use super::*;
use crate::binary::per_label::{label_values, sorted_label_values, SplitKeys};
use crate::binary::streamed::{label_values_fpr, label_values_streamed};
use crate::binary::{curve, micro, per_row};

/// One case: its name, how many labels its input has, what it computes.
type Case = (&'static str, usize, fn(&Input2) -> Vec<MetricValue>);

/// The generated input: the same scores as f64 and f32, and the labels.
struct Input2 {
    s64: Array2<f64>,
    s32: Array2<f32>,
    y: Array2<bool>,
}

fn input(n: usize, k: usize) -> Input2 {
    let mut rng = StdRng::seed_from_u64(3);
    let s64 = Array2::from_shape_fn((n, k), |_| rng.random::<f64>());
    let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.1);
    let s32 = s64.mapv(|v| v as f32);
    Input2 { s64, s32, y }
}

fn wide(x: &Input2) -> SplitKeys<u64> {
    let mut buf = SplitKeys::<u64>::new();
    buf.load(x.s64.view(), &x.y.view(), None, 0, f64::narrow_key);
    buf
}

fn both((a, b): (MetricValue, MetricValue)) -> Vec<MetricValue> {
    vec![a, b]
}

const PARTIAL: Option<f64> = Some(0.5);

/// Pairs of neighbours are adjacent; `none` is the baseline.
const CASES: [Case; 13] = [
    ("none", 1, |_| Vec::new()),
    // CountWalk (both classes, >= WALK_MIN rows) against SortedRuns.
    ("walk", 1, |x| both(label_values(&mut wide(x), true, true))),
    ("sorted", 1, |x| {
        both(sorted_label_values(&mut wide(x), true, true))
    }),
    // NarrowRuns (4-byte keys, streamed) against SortedRuns on the widened keys.
    ("narrow", 1, |x| {
        let mut buf = SplitKeys::<u32>::new();
        buf.load(x.s32.view(), &x.y.view(), None, 0, f32::narrow_key);
        both(sorted_label_values(&mut buf, true, true))
    }),
    ("narrow_widened", 1, |x| {
        let mut buf = SplitKeys::<u64>::new();
        buf.load(x.s32.view(), &x.y.view(), None, 0, f32::key);
        both(sorted_label_values(&mut buf, true, true))
    }),
    // SortedRuns (counts in the sort buffers) against the streamed walk of NarrowRuns
    // on the same 8-byte keys.
    ("sorted_8", 1, |x| {
        both(sorted_label_values(&mut wide(x), true, true))
    }),
    ("streamed_8", 1, |x| {
        let mut buf = wide(x);
        buf.sort_runs();
        let nk = buf.keys.len();
        let (pos, neg) = (&buf.keys[..buf.n_pos], &buf.keys[nk - buf.n_neg..]);
        both(label_values_streamed(pos, neg, true, true))
    }),
    // PartialRuns against the reference curve.
    ("partial_runs", 1, |x| {
        vec![label_values_fpr(&mut wide(x), false, true, PARTIAL).1]
    }),
    ("partial_curve", 1, |x| {
        let metric = Metric::RocAuc { max_fpr: PARTIAL };
        let (s, y) = (x.s64.column(0), x.y.column(0));
        let mut p = curve::Problem::with_capacity(s.len(), false);
        for (&v, &t) in s.iter().zip(y) {
            p.push(v, t, 1.0).unwrap();
        }
        vec![p.evaluate(metric).unwrap()]
    }),
    // RowNetwork against the curve of each row (15 labels).
    ("row_network", 15, |x| rows(x, false)),
    ("row_curve", 15, |x| rows(x, true)),
    // MicroStream (cells over the memory budget) against the one-sort micro path.
    ("micro_stream", 15, |x| {
        let (s, y) = (x.s64.view(), x.y.view());
        let cap = micro::micro_cap(s.len(), 8);
        both(micro::micro_streaming(s, y, None, cap, &Parallelism::sequential()).unwrap())
    }),
    ("micro_sorted", 15, |x| {
        let mut buf = SplitKeys::<u64>::new();
        buf.load_all(x.s64.view(), &x.y.view(), None);
        both(label_values(&mut buf, true, true))
    }),
];

fn rows(x: &Input2, curve: bool) -> Vec<MetricValue> {
    let par = Parallelism::sequential();
    let (s, y) = (x.s64.view(), x.y.view());
    let (v, f) = if curve {
        per_row::per_row_values_curve(s, y, None, Metric::AveragePrecision).unwrap()
    } else {
        per_row::per_row_values(s, y, None, Metric::AveragePrecision, &par).unwrap()
    };
    per_row::zip_values(v, f)
}

fn run(name: &str, n: usize) -> Vec<MetricValue> {
    let Some((_, k, f)) = CASES.iter().find(|c| c.0 == name) else {
        panic!("TOXEVAL_COST: no case {name}");
    };
    let out = f(&input(n, *k));
    // Rows without a positive have AP 0 with FLAG_NO_POSITIVE; every value is defined.
    for v in &out {
        assert!((0.0..=1.0).contains(&v.value), "{name}: {v:?}");
    }
    out
}

#[test]
#[ignore = "cost harness: run under callgrind, see the module docs"]
fn path_cost() {
    if let Ok(name) = std::env::var("TOXEVAL_COST") {
        let n = std::env::var("TOXEVAL_COST_ROWS").map_or(100_000, |v| v.parse().unwrap());
        run(&name, n);
        return;
    }
    let close = |a: &[MetricValue], b: &[MetricValue]| {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(a, b)| (a.value - b.value).abs() <= 1e-13 && a.flags == b.flags)
    };
    for pair in CASES[1..].chunks(2) {
        let (a, b) = (run(pair[0].0, 3000), run(pair[1].0, 3000));
        assert!(!a.is_empty() && close(&a, &b), "{}: {a:?} {b:?}", pair[0].0);
    }
}
