//! Per-epoch cost of maintaining BFS: an R-MAT graph (scale 12, edge factor 16) is loaded as
//! epoch 0 into a single-worker timely dataflow, then a churn stream (half insertions, half
//! deletions of present copies) is applied in epochs of 1, 100 and 1000 updates. Each criterion
//! iteration is one epoch, timed from handing its updates over until the probe at the output has
//! passed it; the dataflow and its state persist across iterations (no reloading).
//!
//! The stream is `ripples::sources::stream::churn` over the initial graph; when criterion asks
//! for more epochs than it holds, it is replayed backwards with inverted signs (which undoes it
//! exactly, so every deletion stays valid), then forwards again, and so on.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use differential_dataflow::input::InputSession;
use timely::communication::allocator::{Allocator, Thread};
use timely::dataflow::operators::Probe;
use timely::dataflow::ProbeHandle;
use timely::worker::Worker;
use timely::WorkerConfig;

use ripples::dataflow::bfs::Bfs;
use ripples::dataflow::{Algorithm, GraphInput};
use ripples::sources::{generate, stream};
use ripples::types::{Diff, Edge, Node, Time, Update};

const SCALE: u32 = 12;
const STREAM_LEN: usize = 100_000;

/// A BFS dataflow on one worker, loaded with the initial graph, plus its update stream.
struct Bench {
    worker: Worker,
    edges: InputSession<Time, Edge, Diff>,
    probe: ProbeHandle<Time>,
    updates: Vec<Update>,
    /// Position in `updates` and direction (forwards applies, backwards undoes).
    next: usize,
    forwards: bool,
}

impl Bench {
    fn new(initial: &[(Node, Node)], source: Node, updates: Vec<Update>) -> Self {
        let mut worker =
            Worker::new(WorkerConfig::default(), Allocator::Thread(Thread::default()), Some(Instant::now()));
        let mut edges: InputSession<Time, Edge, Diff> = InputSession::new();
        let mut vertices: InputSession<Time, Node, Diff> = InputSession::new();
        let probe: ProbeHandle<Time> = ProbeHandle::new();
        {
            let (edges, vertices, probe) = (&mut edges, &mut vertices, probe.clone());
            worker.dataflow::<Time, _, _>(move |scope| {
                let input = GraphInput::new(edges.to_collection(scope), vertices.to_collection(scope), false);
                Bfs { source, undirected: false }.build(input).inner.probe_with(&probe);
            });
        }
        vertices.close();
        for &(s, d) in initial {
            edges.update((s, d, ripples::types::weight_bits(None)), 1);
        }
        let mut bench = Bench { worker, edges, probe, updates, next: 0, forwards: true };
        bench.settle();
        bench
    }

    /// Advances the input to the next epoch and steps until the output has passed the current.
    fn settle(&mut self) {
        let epoch = *self.edges.time();
        self.edges.advance_to(epoch + 1);
        self.edges.flush();
        while self.probe.less_than(&(epoch + 1)) {
            self.worker.step();
        }
    }

    /// Applies the next `batch` updates as one epoch; returns its latency.
    fn epoch(&mut self, batch: usize) -> Duration {
        let started = Instant::now();
        for _ in 0..batch {
            if self.forwards && self.next == self.updates.len() {
                self.forwards = false;
            } else if !self.forwards && self.next == 0 {
                self.forwards = true;
            }
            let (update, sign) = if self.forwards {
                self.next += 1;
                (self.updates[self.next - 1], 1)
            } else {
                self.next -= 1;
                (self.updates[self.next], -1)
            };
            self.edges.update(update.edge(), sign * update.diff as Diff);
        }
        self.settle();
        started.elapsed()
    }
}

impl Drop for Bench {
    fn drop(&mut self) {
        std::mem::replace(&mut self.edges, InputSession::new()).close();
        while self.worker.has_dataflows() {
            self.worker.step();
        }
    }
}

fn bench(c: &mut Criterion) {
    let initial = generate::rmat(SCALE, 16, 1);
    let updates = stream::churn(&initial, STREAM_LEN, 0.5, 42);
    // The vertex with the most out-edges, so that the BFS tree covers most of the graph.
    let mut degree = std::collections::HashMap::<Node, usize>::new();
    for &(s, _) in &initial {
        *degree.entry(s).or_default() += 1;
    }
    let source = degree.iter().max_by_key(|&(v, d)| (*d, std::cmp::Reverse(*v))).map(|(v, _)| *v).unwrap();

    let mut group = c.benchmark_group("bfs_epoch");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    for batch in [1usize, 100, 1000] {
        let mut state = Bench::new(&initial, source, updates.clone());
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_with_input(BenchmarkId::new("churn_rmat12_w1", batch), &batch, |b, &batch| {
            b.iter_custom(|iters| (0..iters).map(|_| state.epoch(batch)).sum())
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // No plots: the plotters backend needs system fonts, which build machines may lack.
    config = Criterion::default().without_plots();
    targets = bench
}
criterion_main!(benches);
