//! Embedding a run in your own program: maintain connected components over a stream held in
//! memory, receive every change, and check the result at every epoch against a plain sequential
//! computation. No command line, no files.
//!
//! What it teaches: `driver::run` with `RunOptions::memory` (a `MemoryStream`: an initial graph
//! and updates cut into epochs), the report's per-epoch statistics and collected changes, and how
//! a change log accumulates to the result at each epoch (summing `diff`s of epochs `0..=e`).
//!
//! ```text
//! cargo run --release --example embedded_wcc -- 4     # with 4 workers (default 2)
//! ```
//!
//! It exits non-zero if any epoch disagrees with the sequential computation (CI runs it).

use std::collections::BTreeMap;

use ripples::dataflow::wcc::Wcc;
use ripples::driver::{self, MemoryStream, RunOptions};
use ripples::types::{Node, Update};

/// Components by a plain union-find over the edges present (smallest id per component).
fn components(edges: &BTreeMap<(Node, Node), i64>) -> BTreeMap<Node, Node> {
    let mut parent: BTreeMap<Node, Node> = BTreeMap::new();
    fn find(parent: &mut BTreeMap<Node, Node>, x: Node) -> Node {
        let p = *parent.entry(x).or_insert(x);
        if p == x {
            return x;
        }
        let root = find(parent, p);
        parent.insert(x, root);
        root
    }
    for (&(a, b), &count) in edges {
        if count > 0 {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            // Keep the smaller id as the root: the root is the component's label.
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            parent.insert(hi, lo);
        }
    }
    let vertices: Vec<Node> = parent.keys().copied().collect();
    vertices.into_iter().map(|v| (v, find(&mut parent, v))).collect()
}

fn main() {
    let workers: usize = std::env::args().nth(1).and_then(|w| w.parse().ok()).unwrap_or(2);
    // A small deterministic stream: a ring of 12 vertices, then epochs that cut and rejoin it.
    let initial: Vec<(Node, Node, Option<f64>)> = (0..12).map(|i| (i, (i + 1) % 12, None)).collect();
    let updates = vec![
        Update::delete(3, 4),
        Update::delete(9, 10), // the ring splits into {4..9} and {10..3}
        Update::insert(20, 21),
        Update::insert(21, 5), // 20, 21 join {4..9}
        Update::delete(0, 1),
        Update::insert(3, 4), // rejoin
    ];
    let stream = MemoryStream { vertices: vec![], initial: initial.clone(), updates: updates.clone(), batch: 2 };
    let report = driver::run(RunOptions::memory(stream, workers), Wcc)
        .expect("the run succeeds")
        .expect("this process writes the report");
    let changes = report.changes.expect("collected changes");

    // Replay the change log epoch by epoch and compare with the sequential computation.
    let mut edges: BTreeMap<(Node, Node), i64> = BTreeMap::new();
    for &(a, b, _) in &initial {
        *edges.entry((a, b)).or_insert(0) += 1;
    }
    let mut state: BTreeMap<(Node, u64), i64> = BTreeMap::new();
    let epochs = 1 + updates.len().div_ceil(2);
    for epoch in 0..epochs as u64 {
        if epoch > 0 {
            for u in &updates[(epoch as usize - 1) * 2..(epoch as usize * 2).min(updates.len())] {
                *edges.entry((u.src, u.dst)).or_insert(0) += u.diff as i64;
            }
        }
        for c in changes.iter().filter(|c| c.epoch == epoch) {
            *state.entry((c.key, c.value)).or_insert(0) += c.diff as i64;
        }
        let got: BTreeMap<Node, Node> = state.iter().filter(|(_, &n)| n > 0).map(|(&(k, v), _)| (k, v)).collect();
        let want = components(&edges);
        if got != want {
            eprintln!("epoch {}: ripples says {:?}, the sequential computation {:?}", epoch, got, want);
            std::process::exit(1);
        }
        let labels: std::collections::BTreeSet<Node> = got.values().copied().collect();
        println!("epoch {}: {} vertices in {} components {:?}", epoch, got.len(), labels.len(), labels);
    }
    println!(
        "{} epochs on {} worker(s), {} changes, p50 epoch latency {:.2} ms: every epoch agrees",
        report.epochs.len(),
        workers,
        changes.len(),
        report.summary.latency.p50_ms
    );
}
