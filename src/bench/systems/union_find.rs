//! `uf-hash` and `uf-dense`: one sequential pass of union-find over an insert-only WCC stream,
//! with a hash map from `u64` ids, or over dense array ids remapped beforehand (the remap is not
//! timed).
//!
//! ```
//! use ripples::bench::{run_system, systems, Scenario};
//! // A tiny `wcc-insert`: every edge of an R-MAT graph inserted, 64 per epoch.
//! let scenario = Scenario { scale: 6, edge_factor: 4, batch: 64, workers: 1, ..Scenario::new("wcc-insert").unwrap() };
//! let dir = tempfile::tempdir().unwrap();
//! let run = |name: &str| {
//!     let state = dir.path().join(name);
//!     let result = run_system(&scenario, systems::by_name(name).unwrap().as_ref(), Some(&state)).unwrap();
//!     assert!(!result.partial);
//!     std::fs::read_to_string(&state).unwrap()
//! };
//! // Hash-map ids and dense ids give the same labels.
//! assert_eq!(run("uf-hash"), run("uf-dense"));
//! ```

use std::time::Duration;

use crate::bench::dense;
use crate::bench::scenario::{Scenario, Stream};
use crate::bench::system::{Comparison, Outcome, System};
use crate::bench::timing::timed_epochs;
use crate::bench::BenchError;
use crate::dataflow::union_find::{DenseUnionFind, HashUnionFind};
use crate::dataflow::ValueFormat;

/// `uf-hash`.
pub struct UfHash;

/// `uf-dense`.
pub struct UfDense;

/// Insert-only WCC.
fn applies(scenario: &Scenario) -> bool {
    scenario.algorithm() == "wcc" && scenario.insert_only()
}

impl System for UfHash {
    fn name(&self) -> &'static str {
        "uf-hash"
    }
    fn applies_to(&self, scenario: &Scenario) -> bool {
        applies(scenario)
    }
    fn comparison(&self) -> Comparison {
        Comparison::Throughput { line: 0 }
    }
    fn run(&self, _: &Scenario, stream: Stream, limit: Duration) -> Result<Outcome, BenchError> {
        let mut uf = HashUnionFind::new();
        for &(s, d) in &stream.initial {
            uf.union(s, d);
        }
        let measured = timed_epochs(&stream.updates, stream.batch, limit, |chunk| {
            for u in chunk {
                uf.union(u.src, u.dst);
            }
        });
        Ok(Outcome { measured, state: uf.labels(), format: ValueFormat::Integer })
    }
}

impl System for UfDense {
    fn name(&self) -> &'static str {
        "uf-dense"
    }
    fn applies_to(&self, scenario: &Scenario) -> bool {
        applies(scenario)
    }
    fn comparison(&self) -> Comparison {
        Comparison::Throughput { line: 1 }
    }
    fn run(&self, _: &Scenario, stream: Stream, limit: Duration) -> Result<Outcome, BenchError> {
        let dense = dense::remap(&stream.initial, &stream.updates);
        let mut uf = DenseUnionFind::with_len(dense.ids.len());
        for &(s, d) in &dense.initial {
            uf.union(s, d);
        }
        let measured = timed_epochs(&dense.updates, stream.batch, limit, |chunk| {
            for &((s, d), _) in chunk {
                uf.union(s, d);
            }
        });
        Ok(Outcome { measured, state: dense::labels(&mut uf, &dense.ids, |_| true), format: ValueFormat::Integer })
    }
}
