//! Per-epoch cost of maintaining WCC: an R-MAT graph (scale 14) is loaded as epoch 0, then a
//! churn stream (half insertions, half deletions of present edges) is applied in epochs of
//! 1, 100 and 10,000 updates. Each criterion iteration is one epoch; only update epochs are
//! timed (from handing the epoch over to the output frontier passing it).

mod common;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use ripples::dataflow::wcc::Wcc;
use ripples::sources::generate;

fn bench(c: &mut Criterion) {
    let initial = generate::rmat(14, 16, 1);
    let mut group = c.benchmark_group("wcc_epoch");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    for batch in [1usize, 100, 10_000] {
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_with_input(BenchmarkId::new("churn_rmat14_w1", batch), &batch, |b, &batch| {
            b.iter_custom(|iters| common::epochs_latency(&initial, batch, iters, 1, Wcc))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = bench
}
criterion_main!(benches);
