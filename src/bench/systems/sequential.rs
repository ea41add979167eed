//! `sequential`: the order-dependent summaries (`spanner-insert`, `matching-insert`) as plain
//! loops on one thread, with no dataflow: the same per-edge code the dataflow runs on the one
//! worker every arrival goes to ([`SpannerState`], [`MatchingState`]), fed the same edges in the
//! same order. The COST-style baseline: what ripples' dataflow adds around that code.
//!
//! ```
//! use ripples::bench::{run_system, systems, Scenario};
//! for name in ["spanner-insert", "matching-insert"] {
//!     let scenario = Scenario { scale: 6, edge_factor: 4, batch: 50, workers: 2, ..Scenario::new(name).unwrap() };
//!     let dir = tempfile::tempdir().unwrap();
//!     let run = |system: &str| {
//!         let state = dir.path().join(system);
//!         run_system(&scenario, systems::by_name(system).unwrap().as_ref(), Some(&state)).unwrap();
//!         std::fs::read_to_string(&state).unwrap()
//!     };
//!     let kept = run("sequential");
//!     assert!(kept.lines().count() > 10, "{name}");
//!     assert_eq!(kept, run("ripples"), "{name}");
//! }
//! ```

use std::time::Duration;

use crate::bench::scenario::{Scenario, Stream};
use crate::bench::system::{Comparison, Outcome, System};
use crate::bench::timing::timed_epochs;
use crate::bench::BenchError;
use crate::dataflow::matching::MatchingState;
use crate::dataflow::spanner::SpannerState;
use crate::dataflow::ValueFormat;
use crate::types::{Node, DEFAULT_WEIGHT};

/// The distance bound of `spanner-insert`.
pub const SPANNER_K: u32 = 3;

/// `sequential`.
pub struct Sequential;

impl System for Sequential {
    fn name(&self) -> &'static str {
        "sequential"
    }
    fn applies_to(&self, scenario: &Scenario) -> bool {
        matches!(scenario.name.as_str(), "spanner-insert" | "matching-insert")
    }
    fn comparison(&self) -> Comparison {
        Comparison::Throughput { line: 0 }
    }
    fn run(&self, scenario: &Scenario, stream: Stream, limit: Duration) -> Result<Outcome, BenchError> {
        let edges: Vec<(Node, Node)> =
            stream.initial.iter().copied().chain(stream.updates.iter().map(|u| (u.src, u.dst))).collect();
        let mut state: Vec<(Node, u64)> = Vec::new();
        let measured = if scenario.name == "spanner-insert" {
            let mut spanner = SpannerState::new(SPANNER_K);
            timed_epochs(&edges, stream.batch, limit, |chunk| {
                for &(u, v) in chunk {
                    if spanner.arrive(u, v) {
                        state.push((u.min(v), u.max(v)));
                    }
                }
            })
        } else {
            let mut matching = MatchingState::default();
            let measured = timed_epochs(&edges, stream.batch, limit, |chunk| {
                for &(u, v) in chunk {
                    matching.arrive(u, v, DEFAULT_WEIGHT);
                }
            });
            state = matching.matched().into_iter().flat_map(|(u, v)| [(u, v), (v, u)]).collect();
            measured
        };
        state.sort_unstable();
        Ok(Outcome { measured, state, format: ValueFormat::Integer })
    }
}
