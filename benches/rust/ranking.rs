//! Criterion benches of the per-row label-ranking kernels (`toxeval::ranking`).
//!
//! Workload of the Python benchmark (benches/README.md): y_true ~ Bernoulli(0.1) as
//! int64 (read in place by the checked kernels) and as bool, y_score ~ U(0, 1) float64,
//! K = 15 labels, 100,000 rows (1/10 of the target size, to keep a run short), one
//! thread, so that numbers are comparable on a loaded machine. Run with
//! `cargo bench --bench ranking` (or `make bench-rust`).
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ndarray::{Array1, Array2};
use rand::{rngs::StdRng, Rng, SeedableRng};
use toxeval::parallel::Parallelism;
use toxeval::ranking::{self, Discounts, RankingMetric, Rows};

const N: usize = 100_000;
const K: usize = 15;

fn data() -> (Array2<i64>, Array2<bool>, Array2<f64>) {
    let mut rng = StdRng::seed_from_u64(20251130);
    let t = Array2::from_shape_fn((N, K), |_| i64::from(rng.random::<f64>() < 0.1));
    let s = Array2::from_shape_fn((N, K), |_| rng.random::<f64>());
    let b = t.mapv(|v| v != 0);
    (t, b, s)
}

fn kernels(c: &mut Criterion) {
    let (t, b, s) = data();
    let par = Parallelism::sequential();
    let (d, cs) = ranking::discounts(K, None, 2.0);
    let dv = Array1::from(d);
    let disc = Discounts {
        discount: dv.view(),
        cumsum: ndarray::ArrayView1::from(&cs),
    };
    let rows_i64 = Rows {
        y_true: t.view(),
        y_score: s.view(),
        mask: None,
        sample_weight: None,
    };
    let rows_bool = Rows {
        y_true: b.view(),
        y_score: s.view(),
        mask: None,
        sample_weight: None,
    };
    let mut g = c.benchmark_group("ranking_rows_100k_x15");
    g.throughput(Throughput::Elements((N * K) as u64));
    g.sample_size(20);
    for (name, m) in [
        ("lrl", RankingMetric::LabelRankingLoss),
        ("lrap", RankingMetric::Lrap),
        ("coverage", RankingMetric::Coverage),
        ("one_error", RankingMetric::OneError),
    ] {
        g.bench_function(format!("{name}_checked_i64"), |bn| {
            bn.iter(|| ranking::metric_sum_checked(&rows_i64, m, &par).unwrap().0)
        });
    }
    g.bench_function("ndcg_checked_i64", |bn| {
        bn.iter(|| {
            ranking::dcg_sum_checked(&rows_i64, &disc, false, true, &par)
                .unwrap()
                .0
        })
    });
    g.bench_function("lrl_bool", |bn| {
        bn.iter(|| ranking::label_ranking_loss_sum(&rows_bool, &par).unwrap())
    });
    g.bench_function("report_bool", |bn| {
        bn.iter(|| ranking::report_sums(&rows_bool, &par).unwrap().sums[0])
    });
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
