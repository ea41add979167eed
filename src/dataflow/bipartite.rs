//! Bipartiteness per connected component, with a 2-colouring, maintained under edge insertions
//! and deletions.
//!
//! **Semantics.** The graph is read as an undirected simple graph: edge direction, parallel
//! copies and weights are ignored, and **self-loops are ignored** (a loop is not an odd cycle
//! here). Every vertex of the epoch's vertex set ([`GraphInput::vertex_set`]: vertex-file
//! vertices ∪ endpoints of present edges) gets a value: if its connected component has no cycle
//! of odd length (is bipartite), its colour `0` or `1`, the parity of its distance to the
//! smallest vertex id of the component (so the smallest vertex has 0, its neighbours 1, ...); if
//! the component has an odd cycle, `2` for every vertex of the component. A vertex without
//! neighbours has 0. A vertex whose last edge is deleted and that is not in the vertex file
//! leaves the result. Values are integers
//! ([`ValueFormat::Integer`](super::ValueFormat::Integer)).
//!
//! **How.** The bipartite double cover: every vertex `v` becomes two vertices `(v, 0)` and
//! `(v, 1)`, every edge `{u, v}` the two edges `{(u, 0), (v, 1)}` and `{(u, 1), (v, 0)}`. A walk
//! from `(m, 0)` reaches `(v, p)` exactly when the graph has a walk from `m` to `v` of parity `p`,
//! so a component with smallest vertex `m` is bipartite iff `(m, 0)` and `(m, 1)` fall in
//! different components of the cover, and then `(v, 0)` is in the one of `(m, c)` where `c` is
//! the colour of `v`. Connected components of the cover by differential label propagation
//! (`propagate_at`, as the general path of [`super::wcc`]) label every `(v, p)` with the smallest
//! `(vertex, side)` of its component: `(m, 0)` or `(m, 1)`. A `reduce` per vertex reads the two
//! labels of `v`: equal means an odd cycle (2), different means colour = the side of `(v, 0)`'s
//! label.
//!
//! **Cost.** That of fully dynamic WCC on a graph twice the size: the arranged cover edges (four
//! records per present pair), two labels per vertex, and the vertex-set `distinct`; an update's
//! work is proportional to the cover vertices whose label changes times their degree. An
//! insertion that closes an odd cycle merges the two halves of the cover of the component (one
//! relabelled: every vertex of the component changes its value to 2); a deletion that breaks the
//! last odd cycle splits them again. The insert-only and windowed fast paths of `wcc` are not
//! used here.
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::bipartite::{Bipartite, ODD_CYCLE};
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::types::Update;
//! // The path 0 - 1 - 2 is 2-coloured from its smallest vertex; epoch 1 closes an odd cycle, and
//! // epoch 2 breaks it again (leaving the path 1 - 0 - 2).
//! let stream = MemoryStream {
//!     initial: vec![(0, 1, None), (1, 2, None)],
//!     updates: vec![Update::insert(2, 0), Update::delete(1, 2)],
//!     batch: 1,
//!     ..MemoryStream::default()
//! };
//! let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 1) };
//! let report = driver::run(options, Bipartite).unwrap().unwrap();
//! let changes = report.changes.unwrap();
//! let set = |epoch| {
//!     let mut v: Vec<_> = changes.iter().filter(|c| c.epoch == epoch && c.diff > 0).map(|c| (c.key, c.value)).collect();
//!     v.sort();
//!     v
//! };
//! assert_eq!(set(0), vec![(0, 0), (1, 1), (2, 0)]);
//! assert_eq!(set(1), vec![(0, ODD_CYCLE), (1, ODD_CYCLE), (2, ODD_CYCLE)]);
//! assert_eq!(report.final_state.unwrap(), vec![(0, 0), (1, 1), (2, 1)]);
//! ```

use differential_dataflow::algorithms::graphs::propagate::propagate_at;

use super::{Algorithm, GraphInput, ResultCollection};
use crate::types::Node;

/// Per vertex: its colour 0/1 in a bipartite component, 2 in a component with an odd cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bipartite;

/// The value of a vertex whose component has an odd cycle.
pub const ODD_CYCLE: u64 = 2;

impl Algorithm for Bipartite {
    fn name(&self) -> String {
        "bipartite".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        bipartite(input)
    }
}

/// `(vertex, colour or ODD_CYCLE)` for every vertex of the vertex set.
pub fn bipartite<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    let cover = input
        .edge_set(true)
        .filter(|(s, d)| s != d)
        .flat_map(|(s, d)| [((s, false), (d, true)), ((s, true), (d, false))]);
    let nodes = input.vertex_set().flat_map(|v| [((v, false), (v, false)), ((v, true), (v, true))]);
    let labels = propagate_at(cover, nodes, |label: &(Node, bool)| label.0);
    labels.map(|((v, side), label)| (v, (side, label))).reduce(|_v, input, output| {
        let label_of = |side: bool| input.iter().find(|((s, _), _)| *s == side).map(|((_, l), _)| *l);
        let value = match (label_of(false), label_of(true)) {
            (Some(even), Some(odd)) if even != odd => even.1 as u64,
            _ => ODD_CYCLE,
        };
        output.push((value, 1));
    })
}
