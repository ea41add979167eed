//! Criterion benches for the hot paths: line parsing, union-find merging (the insert-only WCC
//! fast path's inner loop), and one epoch of WCC on the fast path and on the general path at
//! batch sizes 1, 1,000 and 100,000.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use ripples::dataflow::union_find::{HashUnionFind, LabelledForest};
use ripples::dataflow::wcc::{Wcc, WccGeneral};
use ripples::dataflow::Algorithm;
use ripples::driver::{self, MemoryStream, RunOptions};
use ripples::sources::{generate, parse, stream};

fn parsing(c: &mut Criterion) {
    let edges = generate::rmat(14, 16, 1);
    let mut text = Vec::new();
    for &(s, d) in &edges {
        parse::push_edge_line(&mut text, s, d);
    }
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("edge_lines_rmat14", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for line in text.split(|&c| c == b'\n') {
                if let Ok(Some((s, d, _))) = parse::parse_edge_bytes(line) {
                    n = n.wrapping_add(s ^ d);
                }
            }
            n
        })
    });
    group.finish();
}

fn union_find(c: &mut Criterion) {
    let edges = generate::rmat(16, 16, 2);
    let mut group = c.benchmark_group("union_find");
    group.throughput(Throughput::Elements(edges.len() as u64));
    group.bench_function("hash_rmat16", |b| {
        b.iter(|| {
            let mut uf = HashUnionFind::new();
            for &(s, d) in &edges {
                uf.union(s, d);
            }
            uf.len()
        })
    });
    group.bench_function("labelled_merge_rmat16", |b| {
        b.iter(|| {
            let mut uf = LabelledForest::new();
            let mut changes = Vec::new();
            for chunk in edges.chunks(10_000) {
                for &(s, d) in chunk {
                    uf.union(s, d);
                }
                changes.clear();
                uf.drain_changes(&mut changes);
            }
            uf.len()
        })
    });
    group.finish();
}

/// Latency of `epochs` update epochs of `batch` insertions after an initial graph. When the
/// stream has fewer epochs than asked for, the mean of those run is scaled to `epochs`.
fn epochs<A: Algorithm>(alg: A, initial: &[(u64, u64)], extra: &[(u64, u64)], batch: usize, epochs: u64) -> Duration {
    let run = (epochs as usize).min(extra.len() / batch).max(1);
    let n = batch * run;
    let mem = MemoryStream {
        vertices: vec![],
        initial: initial.iter().map(|&(s, d)| (s, d, None)).collect(),
        updates: stream::insert_only(&extra[..n]),
        batch,
    };
    let mut options = RunOptions::memory(mem, 1);
    options.collect = false;
    let report = driver::run(options, alg).expect("run").expect("report");
    let total: f64 = report.epochs[1..].iter().map(|e| e.latency_ms).sum::<f64>() / 1000.0;
    Duration::from_secs_f64(total / run as f64 * epochs as f64)
}

fn wcc_epoch(c: &mut Criterion) {
    let edges = generate::rmat(15, 16, 3);
    let (initial, extra) = edges.split_at(edges.len() / 2);
    let mut group = c.benchmark_group("wcc_one_epoch");
    group.sample_size(10).measurement_time(Duration::from_secs(8));
    for batch in [1usize, 1_000, 100_000] {
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_with_input(BenchmarkId::new("fast_path", batch), &batch, |b, &batch| {
            b.iter_custom(|iters| epochs(Wcc, initial, extra, batch, iters))
        });
        if batch <= 1_000 {
            group.bench_with_input(BenchmarkId::new("general_path", batch), &batch, |b, &batch| {
                b.iter_custom(|iters| epochs(WccGeneral, initial, extra, batch, iters))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = parsing, union_find, wcc_epoch
}
criterion_main!(benches);
