//! Per-epoch cost of maintaining PageRank (10 iterations, d = 0.85): an R-MAT graph (scale 11,
//! edge factor 16) is loaded as epoch 0, then a churn stream (half insertions, half deletions of
//! present edges) is applied in epochs of 1, 100 and 1,000 updates. Each criterion iteration is
//! one epoch; only update epochs are timed (from handing the epoch over to the output frontier
//! passing it), the initial computation is not.
//!
//! PageRank's sink mass changes with almost every update, so every epoch re-derives every value;
//! the interesting number is how little the per-epoch cost grows with the batch size.

mod common;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput};

use ripples::dataflow::pagerank::PageRank;
use ripples::sources::generate;

fn bench(c: &mut Criterion) {
    let initial = generate::rmat(11, 16, 1);
    let mut group = c.benchmark_group("pagerank_epoch");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    for batch in [1usize, 100, 1_000] {
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_with_input(BenchmarkId::new("churn_rmat11_w1", batch), &batch, |b, &batch| {
            b.iter_custom(|iters| {
                common::epochs_latency(
                    &initial,
                    batch,
                    iters,
                    1,
                    PageRank { iterations: 10, damping: 0.85, undirected: false },
                )
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // No plots: the plotters backend needs system fonts, which build machines often lack.
    config = Criterion::default().without_plots();
    targets = bench
}
criterion_main!(benches);
