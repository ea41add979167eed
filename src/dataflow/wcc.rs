//! Weakly connected components, maintained under edge insertions and deletions.
//!
//! **Semantics.** Edge direction is ignored. Every vertex of the epoch's vertex set (vertex-file
//! vertices ∪ endpoints of present edges) gets the **smallest vertex id in its component**. An
//! edge counts while its multiplicity is positive; self-loops and parallel edges change nothing.
//! A vertex that loses its last edge and is not in the vertex file leaves the result.
//!
//! **How.** Differential label propagation with prioritised label introduction
//! (`differential_dataflow::algorithms::graphs::propagate_at`) over the symmetrised edge
//! multiset: each vertex starts with its own id as label, labels flow along edges and every vertex
//! keeps the minimum it has seen; smaller labels are introduced in earlier rounds so that the
//! winning label usually floods the component before larger ones are tried.
//!
//! **Cost.** State: one arrangement of the symmetrised edges (2 records per edge copy), the label
//! arrangement (1 record per vertex) and the vertex-set `distinct`. An update's work is
//! proportional to the number of vertices whose label changes times their degree, plus the
//! rounds to re-flood: an insertion that merges two components relabels the one with the larger
//! minimum; a deletion that splits a component relabels the part that lost the minimum (and, as
//! in any label propagation, retracts the old label along that part first, up to its diameter in
//! rounds). Deletions inside a component that do not split it usually cost little.

use differential_dataflow::algorithms::graphs::propagate::propagate_at;

use super::{Algorithm, GraphInput, ResultCollection};

/// Weakly connected components (general path: insertions and deletions).
#[derive(Clone, Copy, Debug, Default)]
pub struct Wcc;

impl Algorithm for Wcc {
    fn name(&self) -> String {
        "wcc".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        wcc(input)
    }
}

/// Builds the WCC dataflow: `(vertex, smallest id in its component)`.
pub fn wcc<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    let nodes = input.vertex_set().map(|n| (n, n));
    let edges = input.edges.clone().map(|(s, d, _)| (s, d));
    let symmetric = edges.clone().concat(edges.map(|(s, d)| (d, s)));
    propagate_at(symmetric, nodes, |label: &u64| *label)
}
