//! Criterion benches for the Rust kernels (filled in with the kernels).
use criterion::{criterion_group, criterion_main, Criterion};

fn noop(c: &mut Criterion) {
    c.bench_function("noop", |b| b.iter(|| 1 + 1));
}

criterion_group!(benches, noop);
criterion_main!(benches);
