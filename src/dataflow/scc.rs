//! Strongly connected components, maintained under edge insertions and deletions.
//!
//! **Semantics.** Every vertex of the epoch's vertex set (vertex-file vertices ∪ endpoints of
//! present edges) gets the **smallest vertex id of its strongly connected component**, where `u`
//! and `v` share a component iff each reaches the other along out-edges. A vertex on no cycle is
//! its own component (its label is its id). An edge counts while its multiplicity is positive;
//! parallel copies, weights and self-loops change nothing (the edge *set* is used and self-loops
//! are dropped). A vertex that loses its last edge and is not in the vertex file leaves the
//! result. Vertex ids are full `u64`.
//!
//! **How.** Two stages.
//! 1. The edges inside components, from differential dataflow's
//!    [`strongly_connected_at`]: an outer iteration alternately trims the edge set with
//!    forward and backward min-label reachability (an edge `(u, v)` stays only while `u` and `v`
//!    get the same smallest label reaching them along the remaining edges, forwards and then
//!    backwards); its fixed point is exactly the set of intra-component edges. Labels are
//!    introduced smallest first (prioritised propagation).
//! 2. Label propagation along those intra-component edges from every vertex of the vertex set,
//!    keeping minima ([`propagate_at`]): inside a component every vertex reaches every other, so
//!    the smallest id floods it; no edge leaves a component, so nothing else arrives.
//!
//! **Cost.** State: the distinct edge set, the edge and label arrangements of each trim stage
//! (a few records per edge and per vertex, per outer round in which they change) and the label
//! propagation of stage 2 (an arrangement of intra-component edges and one label per vertex).
//! An update's work is proportional to the labels that change in the trims and their degrees:
//! * an insertion between two components that creates no cycle changes two reachability labels
//!   at most downstream of its head, and nothing in stage 2;
//! * an insertion that closes a cycle (merging components) re-labels the vertices downstream of
//!   the merged component in the trims and the merged component in stage 2;
//! * a deletion inside a component that splits it retracts the labels that relied on the edge
//!   (re-flooding the affected part, as in any label propagation, up to its diameter in rounds);
//!   a deletion of an edge between components changes reachability labels downstream only.
//!
//! Forward reachability labels can reach far beyond a component (to everything downstream), so
//! on graphs with a giant component and long tails an update can touch many labels even when the
//! components do not change; the result changes only where a component does. When the
//! smallest id of a large component changes (its minimum leaves it, or a smaller vertex joins),
//! every member's label changes: two output lines per member and a re-flood of the component in
//! both stages. On an R-MAT graph of scale 14 (a giant component of about 10,000 vertices) that
//! happened once in 170 epochs of 100 churn updates and took 1.4 s, against 10 ms for a typical
//! epoch. Prioritised label introduction (smallest ids first) in both stages made typical
//! epochs 3–9 times cheaper than introducing all labels at once.
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::scc::Scc;
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::types::Update;
//! // The path 0 -> 1 -> 2; epoch 1 closes the cycle 2 -> 0, epoch 2 opens it at 1 -> 2.
//! let stream = MemoryStream {
//!     initial: vec![(0, 1, None), (1, 2, None)],
//!     updates: vec![Update::insert(2, 0), Update::delete(1, 2)],
//!     batch: 1,
//!     ..MemoryStream::default()
//! };
//! let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 2) };
//! let report = driver::run(options, Scc).unwrap().unwrap();
//! let changes = report.changes.unwrap();
//! let inserted = |epoch| changes.iter().filter(|c| c.epoch == epoch && c.diff > 0).map(|c| (c.key, c.value)).collect::<Vec<_>>();
//! assert_eq!(inserted(0), vec![(0, 0), (1, 1), (2, 2)]);
//! // One component, labelled by its smallest vertex.
//! assert_eq!(inserted(1), vec![(1, 0), (2, 0)]);
//! // 2 -> 0 -> 1 is a path again: every vertex is its own component.
//! assert_eq!(report.final_state.unwrap(), vec![(0, 0), (1, 1), (2, 2)]);
//! ```

use differential_dataflow::algorithms::graphs::propagate::propagate_at;
use differential_dataflow::algorithms::graphs::scc::strongly_connected_at;
use differential_dataflow::lattice::Lattice;
use differential_dataflow::VecCollection;
use timely::progress::Timestamp;

use super::{Algorithm, GraphInput, ResultCollection};
use crate::types::{Diff, Node};

/// Strongly connected components, labelled with their smallest vertex id.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scc;

impl Algorithm for Scc {
    fn name(&self) -> String {
        "scc".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        scc(input)
    }
}

/// Builds the SCC dataflow: `(vertex, smallest id in its strongly connected component)`.
pub fn scc<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    strong_components(input.edge_set(false).filter(|(s, d)| s != d), input.vertex_set())
}

/// **The collection rung**: `(vertex, smallest id of its strongly connected component)` for
/// every vertex of `vertices`, over directed `(src, dst)` edges (a set or a multiset; self-loops
/// change nothing), at any timestamp `T`. Semantics and cost as in the module docs.
pub fn strong_components<'a, T>(
    edges: VecCollection<'a, T, (Node, Node), Diff>,
    vertices: VecCollection<'a, T, Node, Diff>,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice + std::hash::Hash,
{
    let inside = strongly_connected_at(edges, |label: &u64| *label);
    propagate_at(inside, vertices.map(|v| (v, v)), |label: &u64| *label)
}
