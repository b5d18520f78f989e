//! Criterion benches of the binary-metric kernels at the scale
//! (1,000,000 rows x 15 labels, U(0,1) float64 scores, Bernoulli(0.1) labels).
//! Kendall's tau counts at n = 1,000,000. Small sample sizes keep a run short:
//! `cargo bench --bench kernels` (`make bench-rust` runs this and `ranking.rs`).
use criterion::{criterion_group, criterion_main, Criterion};
use ndarray::{Array1, Array2};
use rand::{Rng, SeedableRng};
use toxeval::binary_curve::{self, Metric};
use toxeval::kendall;
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
        for (name, metric) in [
            ("micro_ap", Metric::AveragePrecision),
            ("micro_auc", Metric::RocAuc { max_fpr: None }),
        ] {
            g.bench_function(format!("{name}_t{threads}"), |b| {
                b.iter(|| binary_curve::micro(s.view(), y.view(), None, None, metric, &par))
            });
        }
    }
    g.finish();
    kendall(c);
}

/// Kendall's tau counts of two vectors of 1,000,000 (the Python bench's kendalltau
/// workload: `x2 = 0.5 * x1 + U(0, 1)`), without and with ties (rounded to 2 decimals).
fn kendall(c: &mut Criterion) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let x = Array1::from_shape_fn(N, |_| rng.random::<f64>());
    let y = Array1::from_shape_fn(N, |i| 0.5 * x[i] + rng.random::<f64>());
    let round = |a: &Array1<f64>| a.mapv(|v| (v * 100.0).round() / 100.0);
    let (xt, yt) = (round(&x), round(&y));
    let mut g = c.benchmark_group("kendall_1M");
    g.sample_size(10);
    for threads in [1usize, 2] {
        let par = Parallelism { threads };
        g.bench_function(format!("counts_t{threads}"), |b| {
            b.iter(|| kendall::kendall_counts(x.view(), y.view(), par))
        });
        g.bench_function(format!("counts_ties_t{threads}"), |b| {
            b.iter(|| kendall::kendall_counts(xt.view(), yt.view(), par))
        });
    }
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
