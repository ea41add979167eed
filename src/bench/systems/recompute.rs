//! `recompute`: a from-scratch computation over the live graph at every epoch: union-find over
//! dense ids for WCC, the sequential reference ([`crate::bench::reference`]) for the others.
//!
//! ```
//! use ripples::bench::{run_system, systems, Scenario};
//! // A tiny `bfs-churn`: random insertions and deletions on an R-MAT graph.
//! let scenario = Scenario { scale: 5, edge_factor: 4, batch: 10, epochs: 3, workers: 1, ..Scenario::new("bfs-churn").unwrap() };
//! let dir = tempfile::tempdir().unwrap();
//! let run = |name: &str| {
//!     let state = dir.path().join(name);
//!     let result = run_system(&scenario, systems::by_name(name).unwrap().as_ref(), Some(&state)).unwrap();
//!     assert!(!result.partial);
//!     std::fs::read_to_string(&state).unwrap()
//! };
//! // From scratch at every epoch, the sequential reference ends where the incremental dataflow does.
//! assert_eq!(run("recompute"), run("ripples"));
//! ```

use std::collections::HashMap;
use std::time::Duration;

use crate::bench::scenario::{Scenario, Stream};
use crate::bench::system::{Comparison, Outcome, System};
use crate::bench::timing::timed_epochs;
use crate::bench::{dense, reference, BenchError};
use crate::dataflow::union_find::DenseUnionFind;
use crate::dataflow::ValueFormat;
use crate::types::Node;

/// `recompute`.
pub struct Recompute;

impl System for Recompute {
    fn name(&self) -> &'static str {
        "recompute"
    }
    fn applies_to(&self, scenario: &Scenario) -> bool {
        scenario.algorithm() == "wcc" || reference::ALGORITHMS.contains(&scenario.algorithm())
    }
    /// Not on `wcc-insert`, whose default baselines are the union-find passes.
    fn by_default(&self, scenario: &Scenario) -> bool {
        self.applies_to(scenario) && !scenario.insert_only()
    }
    fn comparison(&self) -> Comparison {
        Comparison::Latency
    }
    fn run(&self, scenario: &Scenario, stream: Stream, limit: Duration) -> Result<Outcome, BenchError> {
        let algorithm = scenario.algorithm();
        // Live multiset of edges over dense ids (remapping is not timed).
        let dense = dense::remap(&stream.initial, &stream.updates);
        let ids = &dense.ids;
        let mut live: HashMap<(u32, u32), u64> = HashMap::new();
        for &e in &dense.initial {
            *live.entry(e).or_insert(0) += 1;
        }
        let source = Scenario::source(&stream.initial);
        let format = match algorithm {
            "pagerank" | "lcc" | "sssp" => ValueFormat::Float,
            _ => ValueFormat::Integer,
        };
        let mut last: Vec<(Node, u64)> = Vec::new();
        let measured = timed_epochs(&dense.updates, stream.batch, limit, |chunk| {
            for &(e, d) in chunk {
                let c = live.entry(e).or_insert(0);
                if d > 0 {
                    *c += 1;
                } else {
                    *c -= 1;
                    if *c == 0 {
                        live.remove(&e);
                    }
                }
            }
            last = if algorithm == "wcc" {
                let mut uf = DenseUnionFind::with_len(ids.len());
                let mut present = vec![false; ids.len()];
                for &(s, d) in live.keys() {
                    uf.union(s, d);
                    present[s as usize] = true;
                    present[d as usize] = true;
                }
                dense::labels(&mut uf, ids, |i| present[i as usize])
            } else {
                let edges: Vec<(Node, Node, f64)> =
                    live.keys().map(|&(s, d)| (ids[s as usize], ids[d as usize], 1.0)).collect();
                reference::from_scratch(algorithm, &edges, source).unwrap_or_default()
            };
        });
        Ok(Outcome { measured, state: last, format })
    }
}
