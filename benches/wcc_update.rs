//! Per-epoch cost of maintaining WCC.
//!
//! * `wcc_epoch`: an R-MAT graph (scale 14) is loaded as epoch 0, then a churn stream (half
//!   insertions, half deletions of present edges) is applied in epochs of 1, 100 and 10,000
//!   updates through the whole dataflow. Each criterion iteration is one epoch; only update
//!   epochs are timed (from handing the epoch over to the output frontier passing it).
//! * `wcc_forest`: the fully dynamic path's sequential core alone ([`DynamicForest::apply`]) on
//!   an R-MAT graph of scale 18 (4 M edges, far larger than the caches), epochs of 1,000
//!   deletions of uniformly random present edges and 1,000 insertions of R-MAT edges, as
//!   `ripples bench wcc-churn` streams them. Each iteration is one epoch; only `apply` is timed.
//! * `wcc_insert`: the insert-only path's sequential cores on an R-MAT graph of scale 18 (4 M
//!   edges) inserted in batches of 50,000: the local forest ([`ForestUnionFind::insert_all`])
//!   against the `uf-hash` baseline's [`HashUnionFind`], and the merge ([`LabelledForest`]) over
//!   the forest edges the local forest forwarded, draining the label changes after each batch.
//!   Each iteration is the whole graph into an empty structure.

mod common;

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use ripples::dataflow::union_find::{ForestUnionFind, HashUnionFind, LabelledForest};
use ripples::dataflow::wcc::Wcc;
use ripples::dataflow::wcc_dynamic::DynamicForest;
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

fn forest(c: &mut Criterion) {
    let mut present = generate::rmat(18, 16, 1);
    // Inserted edges cycle through a second graph's (a repeat is one more parallel copy).
    let pool = generate::rmat(18, 16, 2);
    let mut next = 0usize;
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut forest = DynamicForest::new(1.0);
    let mut out = Vec::new();
    forest.apply(&[], &mut present.iter().map(|&(a, b)| (a, b, 1)).collect(), &mut out);
    let mut batch = Vec::new();
    let mut group = c.benchmark_group("wcc_forest");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(2_000));
    group.bench_function("churn_rmat18_2000", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                batch.clear();
                for _ in 0..1_000 {
                    let (a, b) = present.swap_remove(rng.gen_range(0..present.len()));
                    batch.push((a, b, -1));
                }
                for _ in 0..1_000 {
                    let e = pool[next % pool.len()];
                    next += 1;
                    present.push(e);
                    batch.push((e.0, e.1, 1));
                }
                out.clear();
                let started = Instant::now();
                forest.apply(&[], &mut batch, &mut out);
                total += started.elapsed();
            }
            total
        })
    });
    group.finish();
}

fn insert(c: &mut Criterion) {
    const BATCH: usize = 50_000;
    let edges = generate::rmat(18, 16, 1);
    let mut forwarded = Vec::new();
    ForestUnionFind::new().insert_all(&edges, |&p| p, |&p| forwarded.push(p));
    let mut group = c.benchmark_group("wcc_insert");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(edges.len() as u64));
    group.bench_function("forest_rmat18", |b| {
        b.iter(|| {
            let mut uf = ForestUnionFind::new();
            let mut joined = 0u64;
            for batch in edges.chunks(BATCH) {
                uf.insert_all(batch, |&p| p, |_| joined += 1);
            }
            joined
        })
    });
    group.bench_function("hash_rmat18", |b| {
        b.iter(|| {
            let mut uf = HashUnionFind::new();
            let mut joined = 0u64;
            for &(s, d) in &edges {
                joined += uf.union(s, d) as u64;
            }
            joined
        })
    });
    group.throughput(Throughput::Elements(forwarded.len() as u64));
    group.bench_function("merge_rmat18", |b| {
        let mut changes = Vec::new();
        b.iter(|| {
            let mut uf = LabelledForest::new();
            let mut total = 0usize;
            for batch in forwarded.chunks(BATCH) {
                uf.union_all(batch, |&p| p);
                changes.clear();
                uf.drain_changes(&mut changes);
                total += changes.len();
            }
            total
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = bench, forest, insert
}
criterion_main!(benches);
