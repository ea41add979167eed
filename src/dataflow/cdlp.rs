//! Community detection by label propagation (Graphalytics CDLP), maintained under edge
//! insertions and deletions.
//!
//! **Semantics.** Exactly the Graphalytics definition, recomputed for every epoch's graph:
//! synchronous label propagation for exactly `iterations` iterations. `L_0(v) = v`; in each
//! iteration every vertex takes the most frequent label of the multiset
//! `{ L(u) : u ∈ Nin(v) } ⊎ { L(u) : u ∈ Nout(v) }` of the previous iteration's labels, ties going
//! to the smallest label; a vertex without neighbours keeps its label (its own id). On a directed
//! graph a two-way neighbour therefore counts twice. `Nin`/`Nout` are over the *set* of present
//! edges: parallel copies and weights change nothing, and **self-loops are ignored** (they neither
//! make a vertex its own neighbour nor give it a neighbour). With `undirected`, every edge counts
//! in both directions; each neighbour is then counted once, which has the same most frequent
//! label and tie-break as counting it in both `Nin` and `Nout`. Every vertex of the epoch's
//! vertex set ([`GraphInput::vertex_set`]) gets exactly one label ([`ValueFormat::Integer`](super::ValueFormat::Integer)).
//!
//! **How.** The iterations are unrolled into `iterations` chained stages (so an update can never
//! cause more than `iterations` rounds of work). The neighbour relation — `(u, v)`: "`u`'s label
//! counts at `v`", one record per arc in each direction — is arranged once by `u`. Stage `i`
//! joins the labels `L_{i-1}` with it, giving `v` one `(v, label)` record per counted neighbour,
//! and a `reduce` per vertex picks the most frequent label (its input arrives consolidated and
//! sorted by label, so the first label with the largest count is the smallest such). Only
//! vertices with neighbours take part in the stages; vertices without neighbours are added to the
//! output with their own id.
//!
//! **Cost.** State: the arranged neighbour relation (two records per distinct non-loop arc), and
//! per stage the label arrangement (one record per non-isolated vertex) and the `reduce` input
//! (one record per distinct (vertex, neighbour label) pair). An update `(u, v)` re-evaluates `u`
//! and `v` in stage 1 (reading their whole label multisets, `O(deg)`); every label that changes
//! in stage `i` is sent to that vertex's neighbours, which are re-evaluated in stage `i + 1`. So
//! the work is bounded by the `iterations`-hop neighbourhood of the changed edges, and stops
//! early wherever the labels do not change. A vertex that appears or vanishes changes one output
//! record.
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::cdlp::Cdlp;
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::oracle;
//! use ripples::types::Update;
//! // A star with centre 0 that grows a leaf in epoch 1.
//! let stream = MemoryStream {
//!     initial: vec![(0, 1, None), (0, 2, None), (0, 3, None)],
//!     updates: vec![Update::insert(0, 4)],
//!     batch: 1,
//!     ..MemoryStream::default()
//! };
//! let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 2) };
//! let report = driver::run(options, Cdlp { iterations: 3, undirected: true }).unwrap().unwrap();
//! // The same labels as the Graphalytics definition computed from scratch on the final graph.
//! let edges = oracle::symmetrize(&[(0, 1, 1.0), (0, 2, 1.0), (0, 3, 1.0), (0, 4, 1.0)]);
//! let want: Vec<(u64, u64)> = oracle::cdlp(&oracle::vertex_set([], &edges), &edges, 3).into_iter().collect();
//! assert_eq!(report.final_state.unwrap(), want);
//! // Synchronous propagation on a star oscillates: after 3 iterations the centre holds 1.
//! assert_eq!(want, vec![(0, 1), (1, 0), (2, 0), (3, 0), (4, 0)]);
//! ```

use differential_dataflow::lattice::Lattice;
use differential_dataflow::VecCollection;
use timely::progress::Timestamp;

use super::registry::{keys, Orientation};
use super::wcc::ArrangedPairs;
use super::{Algorithm, GraphInput, ResultCollection};
use crate::types::{Diff, Node};

/// Graphalytics CDLP with a fixed number of iterations.
#[derive(Clone, Debug)]
pub struct Cdlp {
    /// Number of iterations (0 gives every vertex its own id).
    pub iterations: u32,
    /// Treat every edge as an edge in both directions.
    pub undirected: bool,
}

impl Algorithm for Cdlp {
    fn parameters(&self) -> String {
        format!("{:?}", self)
    }
    fn name(&self) -> String {
        "cdlp".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        cdlp(input, self.iterations, self.undirected)
    }
}

/// Builds the CDLP dataflow: `(vertex, label after `iterations` iterations)` for every vertex of
/// the vertex set. Undirected, it reads the shared arranged edge set
/// ([`GraphInput::arranged_edge_set`]); directed, it arranges its own neighbour relation (arcs
/// in both directions, a two-way neighbour counted twice).
pub fn cdlp<'a>(input: GraphInput<'a>, iterations: u32, undirected: bool) -> ResultCollection<'a> {
    if undirected {
        labels_arranged(input.arranged_edge_set(Orientation::Undirected), input.vertex_set(), iterations)
    } else {
        labels(input.edge_set(false).filter(|(s, d)| s != d), input.vertex_set(), iterations, false)
    }
}

/// **The collection rung**: CDLP labels after `iterations` iterations for every vertex of
/// `vertices`, over `arcs` — a *set* of `(src, dst)` pairs without self-loops (each once: use
/// `distinct`), symmetric when `undirected` — at any timestamp `T`. Semantics and cost as in the
/// module docs. Builds the neighbour relation (for a directed graph: the arcs and their
/// reversals, so that `Nin ⊎ Nout` is counted), arranges it and calls [`labels_arranged`].
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use differential_dataflow::input::Input;
/// use ripples::dataflow::cdlp::labels;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// timely::execute_directly(move |worker| {
///     worker.dataflow::<u64, _, _>(|scope| {
///         // Directed: 1 -> 3, 2 -> 3, 3 -> 4; and the isolated vertex 7.
///         let (_, arcs) = scope.new_collection_from(vec![(1u64, 3u64), (2, 3), (3, 4)]);
///         let (_, vertices) = scope.new_collection_from(vec![1u64, 2, 3, 4, 7]);
///         labels(arcs, vertices, 1, false).inspect(move |(label, _, diff)| sink.lock().unwrap().push((*label, *diff)));
///     });
/// });
/// // Consolidated: records the dataflow retracts again within the epoch cancel out.
/// let mut seen = seen.lock().unwrap().clone();
/// differential_dataflow::consolidation::consolidate(&mut seen);
/// let seen: Vec<(u64, u64)> = seen.into_iter().map(|(label, diff)| { assert_eq!(diff, 1); label }).collect();
/// // One round: 3 sees {1, 2, 4} (a tie, the smallest wins), the others see only 3.
/// assert_eq!(seen, vec![(1, 3), (2, 3), (3, 1), (4, 3), (7, 7)]);
/// ```
pub fn labels<'a, T>(
    arcs: VecCollection<'a, T, (Node, Node), Diff>,
    vertices: VecCollection<'a, T, Node, Diff>,
    iterations: u32,
    undirected: bool,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice,
{
    if iterations == 0 {
        return vertices.map(|v| (v, v));
    }
    // `(u, v)`: the label of `u` counts at `v`. An arc `s -> d` puts `s` in `Nin(d)` and `d` in
    // `Nout(s)`. Undirected arcs are already symmetric: one record per neighbour suffices.
    let counted = if undirected { arcs } else { arcs.clone().concat(arcs.map(|(s, d)| (d, s))) };
    labels_arranged(counted.arrange_by_key_named("Arrange: counted"), vertices, iterations)
}

/// **The arranged rung**: [`labels`] over the neighbour relation already arranged: `u → v`
/// whenever `u`'s label counts at `v`, one record per count — for an undirected graph the
/// symmetric edge set ([`GraphInput::arranged_edge_set`]`(Orientation::Undirected)`, the
/// registry's [`EDGES_UNDIRECTED`](super::registry::EDGES_UNDIRECTED)); for a directed graph the
/// arcs and their reversals. The vertices with neighbours are a `reduce` of the arrangement
/// itself, and every stage joins the labels with it, so the relation is never copied or
/// re-indexed. Vertices of `vertices` without neighbours keep their own id. Semantics and cost as
/// in the module docs.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use differential_dataflow::input::Input;
/// use ripples::dataflow::{cdlp::labels_arranged, lcc::coefficients_arranged};
/// use ripples::oracle;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// timely::execute_directly(move |worker| {
///     worker.dataflow::<u64, _, _>(|scope| {
///         // Two undirected triangles joined by the edge 3 - 4, both directions of every edge.
///         let edges = [(1u64, 2u64), (2, 3), (1, 3), (4, 5), (5, 6), (4, 6), (3, 4)];
///         let symmetric: Vec<(u64, u64)> = edges.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
///         let (_, arcs) = scope.new_collection_from(symmetric);
///         let (_, vertices) = scope.new_collection_from(1..=6u64);
///         let index = arcs.arrange_by_key();
///         // Labels and clustering coefficients over the one index.
///         let _lcc = coefficients_arranged(index.clone(), vertices.clone());
///         labels_arranged(index, vertices, 5).inspect(move |(label, _, diff)| sink.lock().unwrap().push((*label, *diff)));
///     });
/// });
/// // Consolidated: records the dataflow retracts again within the epoch cancel out.
/// let mut seen = seen.lock().unwrap().clone();
/// differential_dataflow::consolidation::consolidate(&mut seen);
/// let seen: Vec<(u64, u64)> = seen.into_iter().map(|(label, diff)| { assert_eq!(diff, 1); label }).collect();
/// let edges = oracle::symmetrize(&[(1, 2, 1.0), (2, 3, 1.0), (1, 3, 1.0), (4, 5, 1.0), (5, 6, 1.0), (4, 6, 1.0), (3, 4, 1.0)]);
/// let want: Vec<(u64, u64)> = oracle::cdlp(&oracle::vertex_set([], &edges), &edges, 5).into_iter().collect();
/// assert_eq!(seen, want);
/// ```
pub fn labels_arranged<'a, T>(
    counted: ArrangedPairs<'a, T>,
    vertices: VecCollection<'a, T, Node, Diff>,
    iterations: u32,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice,
{
    if iterations == 0 {
        return vertices.map(|v| (v, v));
    }
    let active = keys(counted.clone(), "Neighboured");
    let isolated = vertices.map(|v| (v, ())).antijoin(active.clone()).map(|(v, ())| (v, v));

    let mut labels = active.map(|v| (v, v));
    for _ in 0..iterations {
        labels = labels.join_core(counted.clone(), |_u, label, v| Some((*v, *label))).reduce(|_v, input, output| {
            // Sorted by label: keep the first of the largest counts.
            let mut best = &input[0];
            for entry in &input[1..] {
                if entry.1 > best.1 {
                    best = entry;
                }
            }
            output.push((*best.0, 1));
        });
    }
    labels.concat(isolated)
}
