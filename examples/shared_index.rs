//! Several algorithms over one stream in one dataflow, sharing one index: connected components,
//! BFS distances, degrees, and a dataflow of your own all read the same arrangements of the
//! edge set and vertex set, built once, maintained once per update.
//!
//! What it teaches: `driver::run_many` with a list of algorithms (built-in ones by name and a
//! `custom` one), `GraphInput::edge_set` / `vertex_set` as the shared derived collections
//! (the second user of `edge_set(true)` gets the first one's `distinct`, not a new one), and
//! the per-algorithm reports (`report.algorithms`: name, output changes, changes).
//!
//! ```text
//! cargo run --release --example shared_index -- 2     # with 2 workers (default 2)
//! ```
//!
//! It exits non-zero if any algorithm's final result differs from ripples' sequential oracles
//! (CI runs it).

use std::collections::{BTreeMap, BTreeSet};

use ripples::dataflow::{by_name, custom, Params};
use ripples::driver::{self, MemoryStream, RunOptions};
use ripples::sinks::Change;
use ripples::types::{Node, Update};

/// The final result a change log adds up to.
fn final_result(changes: &[Change]) -> BTreeMap<Node, u64> {
    let mut counts: BTreeMap<(Node, u64), i64> = BTreeMap::new();
    for c in changes {
        *counts.entry((c.key, c.value)).or_insert(0) += c.diff as i64;
    }
    counts.into_iter().filter(|(_, n)| *n > 0).map(|(kv, _)| kv).collect()
}

fn main() {
    let workers: usize = std::env::args().nth(1).and_then(|w| w.parse().ok()).unwrap_or(2);
    let params = Params { source: Some(0), undirected: true, ..Params::default() };
    // Your own: the number of distinct neighbours above a vertex's own id, from the shared
    // undirected edge set (the same arrangement `degree` and `wcc` use).
    let higher = custom("higher-neighbours", |input| {
        input.edge_set(true).filter(|(s, d)| d > s).map(|(s, _)| s).count().map(|(v, n)| (v, n as u64))
    });
    let algorithms = vec![
        by_name("wcc", &params).expect("built in"),
        by_name("bfs", &params).expect("built in"),
        by_name("degree", &params).expect("built in"),
        Box::new(higher) as Box<dyn ripples::dataflow::Algorithm>,
    ];

    // A fixed stream: a ring of 50 vertices, then 30 epochs that cut and add chords.
    let initial: Vec<(Node, Node, Option<f64>)> = (0..50).map(|i| (i, (i + 1) % 50, None)).collect();
    let mut present: BTreeSet<(Node, Node)> = initial.iter().map(|&(a, b, _)| (a, b)).collect();
    let mut updates = Vec::new();
    for e in 0..30u64 {
        let (a, b) = ((e * 7) % 50, (e * 13 + 5) % 50);
        if a != b && present.insert((a, b)) {
            updates.push(Update { src: a, dst: b, weight: None, diff: 1 });
        }
        let cut = ((e * 3) % 50, (e * 3 + 1) % 50);
        if present.remove(&cut) {
            updates.push(Update { src: cut.0, dst: cut.1, weight: None, diff: -1 });
        }
    }
    let stream = MemoryStream { vertices: vec![], initial, updates, batch: 2 };
    let report = match driver::run_many(RunOptions::memory(stream, workers), algorithms) {
        Ok(Some(report)) => report,
        Ok(None) => unreachable!("a single process reports"),
        Err(e) => {
            eprintln!("shared_index: {}", e);
            std::process::exit(1);
        }
    };

    let edges: Vec<(Node, Node, f64)> = present.iter().map(|&(a, b)| (a, b, 1.0)).collect();
    let undirected = ripples::oracle::symmetrize(&edges);
    let vertices = ripples::oracle::vertex_set([], &edges);
    let mut higher: BTreeMap<Node, u64> = BTreeMap::new();
    let pairs: BTreeSet<(Node, Node)> = undirected.iter().filter(|(a, b, _)| b > a).map(|&(a, b, _)| (a, b)).collect();
    for (a, _) in pairs {
        *higher.entry(a).or_insert(0) += 1;
    }
    let want: Vec<(&str, BTreeMap<Node, u64>)> = vec![
        ("wcc", ripples::oracle::wcc::wcc(&vertices, &edges)),
        ("bfs", ripples::oracle::bfs::bfs(&vertices, &undirected, 0)),
        ("degree", ripples::oracle::degree::degree(&vertices, &edges)),
        ("higher-neighbours", higher),
    ];
    for ((name, want), got) in want.iter().zip(&report.algorithms) {
        assert_eq!(&got.name, name);
        let result = final_result(got.changes.as_deref().unwrap_or_default());
        if &result != want {
            eprintln!("shared_index: {} disagrees with the oracle", name);
            std::process::exit(1);
        }
        println!(
            "{:>18}: {} output changes over {} epochs, final result agrees",
            name, got.output_changes, report.summary.epochs
        );
    }
    println!("shared_index: 4 algorithms over one shared index agree with the oracles ({} workers)", workers);
}
