//! Criterion benches of the binary-metric kernels at the scale
//! (1,000,000 rows x 15 labels, U(0,1) float64 scores, Bernoulli(0.1) labels).
//! Small sample sizes keep a run short: `cargo bench --bench kernels`.
use criterion::{criterion_group, criterion_main, Criterion};
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use toxeval::binary_curve::{self, Metric};
use toxeval::parallel::Parallelism;

const N: usize = 1_000_000;
const K: usize = 15;

fn data() -> (Array2<f64>, Array2<bool>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let s = Array2::from_shape_fn((N, K), |_| rng.random::<f64>());
    let y = Array2::from_shape_fn((N, K), |_| rng.random::<f64>() < 0.1);
    (s, y)
}

fn kernels(c: &mut Criterion) {
    let (s, y) = data();
    let mut g = c.benchmark_group("binary_1Mx15");
    g.sample_size(10);
    for threads in [1usize, 2] {
        let par = Parallelism { threads };
        g.bench_function(format!("per_label_ap_t{threads}"), |b| {
            b.iter(|| {
                binary_curve::per_label(
                    s.view(),
                    y.view(),
                    None,
                    None,
                    Metric::AveragePrecision,
                    &par,
                )
            })
        });
        g.bench_function(format!("per_label_ap_auc_t{threads}"), |b| {
            b.iter(|| binary_curve::per_label_ap_auc(s.view(), y.view(), None, None, &par))
        });
        g.bench_function(format!("per_row_ap_t{threads}"), |b| {
            b.iter(|| {
                binary_curve::per_row(s.view(), y.view(), None, Metric::AveragePrecision, &par)
            })
        });
        g.bench_function(format!("per_row_auc_t{threads}"), |b| {
            b.iter(|| {
                binary_curve::per_row(
                    s.view(),
                    y.view(),
                    None,
                    Metric::RocAuc { max_fpr: None },
                    &par,
                )
            })
        });
    }
    for threads in [1usize, 2] {
        let par = Parallelism { threads };
        g.bench_function(format!("micro_ap_t{threads}"), |b| {
            b.iter(|| {
                binary_curve::micro(
                    s.view(),
                    y.view(),
                    None,
                    None,
                    Metric::AveragePrecision,
                    &par,
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
