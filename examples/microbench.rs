use ndarray::Array2;
use rand::{Rng, SeedableRng};
use std::time::Instant;
use toxeval::binary_curve::{self, Metric};
use toxeval::parallel::Parallelism;
fn main() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let (n, k) = (1_000_000, 15);
    let s = Array2::from_shape_fn((n, k), |_| rng.random::<f64>());
    let y = Array2::from_shape_fn((n, k), |_| rng.random::<f64>() < 0.1);
    for threads in [1usize, 2] {
        let par = Parallelism { threads };
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t0 = Instant::now();
            let v = binary_curve::micro(
                s.view(),
                y.view(),
                None,
                None,
                Metric::AveragePrecision,
                &par,
            )
            .unwrap();
            best = best.min(t0.elapsed().as_secs_f64());
            std::hint::black_box(v);
        }
        println!("micro t{threads}: {:.1} ms", best * 1e3);
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t0 = Instant::now();
            let v = binary_curve::per_label_ap_auc(s.view(), y.view(), None, None, &par).unwrap();
            best = best.min(t0.elapsed().as_secs_f64());
            std::hint::black_box(v);
        }
        println!("per_label_ap_auc t{threads}: {:.1} ms", best * 1e3);
    }
}
