//! Criterion benches of the binary-metric kernels at the scale
//! (1,000,000 rows x 15 labels, U(0,1) float64 scores, Bernoulli(0.1) labels).
//! The sort floor under `multilabel_report` (`sort_floor_1Mx15`). Kendall's tau
//! counts at n = 1,000,000. Small sample sizes keep a run short:
//! `cargo bench --bench kernels` (`make bench-rust` runs this and `ranking.rs`).
use criterion::{criterion_group, criterion_main, Criterion};
use ndarray::{Array1, Array2};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use toxeval::binary::{self, Metric};
use toxeval::kendall;
use toxeval::parallel::Parallelism;
use toxeval::{sort, Score};

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
                binary::per_label(
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
            b.iter(|| binary::per_label_ap_auc(s.view(), y.view(), None, None, &par))
        });
        g.bench_function(format!("per_row_ap_t{threads}"), |b| {
            b.iter(|| binary::per_row(s.view(), y.view(), None, Metric::AveragePrecision, &par))
        });
        g.bench_function(format!("per_row_auc_t{threads}"), |b| {
            b.iter(|| {
                binary::per_row(
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
                b.iter(|| binary::micro(s.view(), y.view(), None, None, metric, &par))
            });
        }
    }
    g.finish();
    sort_floor(c, &s);
    kendall(c);
}

/// The floor under `multilabel_report` (the "15x one `y_score.sum()`" target):
/// the crate's own key-only radix sort (`sort::sort_keys`, no payload, no labels, no
/// walk), on 2 threads, of (a) every 1M-key column, already gathered into contiguous
/// key buffers, and (b) all 15M cells as two 7.5M halves (the merge not counted).
/// Each timed sort copies its keys in first (as a gather would). `sum_t1` is
/// ndarray's one-thread sum of the matrix, the unit here; the unit is NumPy's
/// sum (slightly faster), which `benches/bench_sort_floor.py` times with NumPy's sort.
/// The report needs at least both orders; docs/performance.md quotes both benches.
fn sort_floor(c: &mut Criterion, s: &Array2<f64>) {
    let columns: Vec<Vec<u64>> = (0..K)
        .map(|j| s.column(j).iter().map(|v| v.key()).collect())
        .collect();
    let flat = s.as_slice().expect("C-ordered matrix");
    let halves: Vec<Vec<u64>> = flat
        .chunks(flat.len().div_ceil(2))
        .map(|h| h.iter().map(|v| v.key()).collect())
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("2-thread pool");
    // One key and one scratch buffer per sorted slice, allocated (and touched) once,
    // so the figures hold the sorts and the copy of keys in, not page faults.
    let buffers = |src: &[Vec<u64>]| -> Vec<(Vec<u64>, Vec<u64>)> {
        src.iter().map(|k| (k.clone(), k.clone())).collect()
    };
    let sort_all = |src: &[Vec<u64>], bufs: &mut [(Vec<u64>, Vec<u64>)]| {
        pool.install(|| {
            src.par_iter()
                .zip(bufs.par_iter_mut())
                .map(|(keys, (k, tmp))| {
                    k.copy_from_slice(keys);
                    sort::sort_keys(k, tmp);
                    k[k.len() / 2]
                })
                .collect::<Vec<u64>>()
        })
    };
    let (mut col_bufs, mut half_bufs) = (buffers(&columns), buffers(&halves));
    let mut g = c.benchmark_group("sort_floor_1Mx15");
    g.sample_size(10);
    g.bench_function("sum_t1", |b| b.iter(|| s.sum()));
    g.bench_function("sort_columns_t2", |b| {
        b.iter(|| sort_all(&columns, &mut col_bufs))
    });
    g.bench_function("sort_cells_halves_t2", |b| {
        b.iter(|| sort_all(&halves, &mut half_bufs))
    });
    g.finish();
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
