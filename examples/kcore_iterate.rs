//! Your own iterative algorithm: core numbers (k-core) written with differential's `iterate`, run
//! by the ripples driver over a stream with insertions and deletions, checked at every epoch
//! against ripples' sequential oracle.
//!
//! What it teaches:
//!
//! * `ripples::dataflow::custom` turns a closure from the graph's input collections to a
//!   `(vertex, value)` collection into an algorithm with every driver feature (workers,
//!   processes, `--changes`, windows, stats);
//! * `iterate` is a feedback loop with progress-tracked rounds: the inner timestamp is
//!   `(epoch, round)`, each round's records are complete once the frontier passes it, and
//!   differential maintains the fixpoint incrementally: a new epoch re-runs only the rounds and
//!   vertices its changes reach (the `inspect` below counts the deepest round per epoch);
//! * the core number is the fixpoint of `core(v) = h-index of the neighbours' cores`, starting
//!   from the degrees (Lü et al., Nature Communications 7, 2016).
//!
//! ```text
//! cargo run --release --example kcore_iterate -- 2     # with 2 workers (default 2)
//! ```
//!
//! It exits non-zero if any epoch disagrees with the oracle (CI runs it).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use differential_dataflow::operators::Iterate;
use ripples::dataflow::custom;
use ripples::driver::{self, MemoryStream, RunOptions};
use ripples::types::{Diff, Node, Update};

/// The h-index of values given in increasing order with their counts: the largest `h` such
/// that at least `h` of them are `>= h`.
fn h_index(values: &[(&u64, Diff)]) -> u64 {
    let (mut at_least, mut h) = (0u64, 0u64);
    for &(&value, count) in values.iter().rev() {
        at_least += count.max(0) as u64;
        h = h.max(at_least.min(value));
    }
    h
}

fn main() {
    let workers: usize = std::env::args().nth(1).and_then(|w| w.parse().ok()).unwrap_or(2);
    let deepest = Arc::new(AtomicU64::new(0));
    let rounds = deepest.clone();
    let kcore = custom("kcore-by-iterate", move |input| {
        // Undirected neighbour pairs without self-loops, each once.
        let arcs = input.edge_set(true).filter(|(s, d)| s != d);
        let degrees = arcs.clone().map(|(s, _)| s).count().map(|(v, d)| (v, d as u64));
        let arcs = arcs.arrange_by_key();
        let rounds = rounds.clone();
        let cores = degrees.iterate(|scope, cores| {
            let arcs = arcs.enter(scope);
            cores
                .inspect(move |(_, time, _)| {
                    rounds.fetch_max(time.inner, Ordering::Relaxed);
                })
                // Every vertex tells its neighbours its current value...
                .join_core(arcs, |_v, core, u| Some((*u, *core)))
                // ...and takes the h-index of what it hears.
                .reduce(|_u, heard, output| output.push((h_index(heard), 1)))
        });
        // Vertices without neighbours (a vertex-file vertex, or a lone self-loop) have core 0.
        cores
            .concat(input.vertex_set().map(|v| (v, 0)))
            .reduce(|_v, values, output| output.push((*values[values.len() - 1].0, 1)))
    });

    // A random stream (fixed seed): 80 vertices, 200 initial edges, 40 epochs of 10 updates
    // each, deleting present edges a third of the time.
    let mut x = 11u64;
    let mut next = move |n: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let initial: Vec<(Node, Node, Option<f64>)> = (0..200).map(|_| (next(80), next(80), None)).collect();
    let mut present: BTreeMap<(Node, Node), i64> = BTreeMap::new();
    for &(a, b, _) in &initial {
        *present.entry((a, b)).or_insert(0) += 1;
    }
    let mut states = vec![present.clone()];
    let mut updates = Vec::new();
    for _ in 0..40 {
        for _ in 0..10 {
            if next(3) == 0 && !present.is_empty() {
                let i = next(present.len() as u64) as usize;
                let (&(a, b), _) = present.iter().nth(i).expect("in range");
                updates.push(Update { src: a, dst: b, weight: None, diff: -1 });
                let n = present.get_mut(&(a, b)).expect("present");
                *n -= 1;
                if *n == 0 {
                    present.remove(&(a, b));
                }
            } else {
                let (a, b) = (next(80), next(80));
                updates.push(Update { src: a, dst: b, weight: None, diff: 1 });
                *present.entry((a, b)).or_insert(0) += 1;
            }
        }
        states.push(present.clone());
    }
    let stream = MemoryStream { vertices: vec![], initial, updates, batch: 10 };
    let report = match driver::run(RunOptions::memory(stream, workers), kcore) {
        Ok(Some(report)) => report,
        Ok(None) => unreachable!("a single process reports"),
        Err(e) => {
            eprintln!("kcore_iterate: {}", e);
            std::process::exit(1);
        }
    };

    // Sum the change log up to each epoch and compare with the oracle.
    let changes = report.changes.unwrap_or_default();
    let mut result: BTreeMap<Node, u64> = BTreeMap::new();
    let mut i = 0;
    for (epoch, edges) in states.iter().enumerate() {
        while i < changes.len() && changes[i].epoch == epoch as u64 {
            let c = changes[i];
            if c.diff > 0 {
                result.insert(c.key, c.value);
            } else if result.get(&c.key) == Some(&c.value) {
                result.remove(&c.key);
            }
            i += 1;
        }
        let edges: Vec<(Node, Node, f64)> = edges.keys().map(|&(a, b)| (a, b, 1.0)).collect();
        let vertices: BTreeSet<Node> = ripples::oracle::vertex_set([], &edges);
        let want = ripples::oracle::kcore::kcore(&vertices, &edges);
        if result != want {
            eprintln!("kcore_iterate: epoch {} disagrees with the oracle", epoch);
            std::process::exit(1);
        }
    }
    println!(
        "kcore_iterate: {} epochs agree with the oracle; largest core {}; deepest round {}; p50 {:.2} ms ({} workers)",
        states.len(),
        result.values().max().unwrap_or(&0),
        deepest.load(Ordering::Relaxed),
        report.summary.latency.p50_ms,
        workers
    );
}
