//! Breadth-first search (Graphalytics BFS), maintained under edge insertions and deletions.
//!
//! **Semantics.** Every vertex of the epoch's vertex set (vertex-file vertices ∪ endpoints of
//! present edges, [`GraphInput::vertex_set`]) gets the hop count of a shortest path from
//! `source` along out-edges (along edges in both directions with `undirected`). The source has
//! 0; a vertex the source does not reach has [`BFS_UNREACHABLE`] = `i64::MAX` =
//! 9223372036854775807. If the source is not in the epoch's vertex set (never named, or its last
//! edge was deleted and it is not in the vertex file), every vertex is unreachable; when it
//! returns, distances are recomputed from it. An edge counts while its multiplicity is positive;
//! parallel copies, weights and self-loops change nothing (self-loops are dropped on entry).
//! Vertex ids are full `u64` (0 and ids above 2^32 are ordinary). Values are integers
//! ([`ValueFormat::Integer`](super::ValueFormat::Integer)).
//!
//! **How.** Differential min-plus label propagation ([`min_distances`]): inside an iterative
//! scope, the source proposes 0 to itself, every vertex keeps the minimum proposal it has seen
//! (a `reduce` whose arrangement is reused), and every kept distance `d` is proposed as `d + 1`
//! to the out-neighbours (a `join` against the arranged edges). Round `i` of the iteration holds
//! the distances of the vertices within `i` hops, so each vertex changes in exactly one round.
//! Vertices the iteration does not reach get [`BFS_UNREACHABLE`] from a final `reduce` (minimum)
//! over the vertex set with that default.
//!
//! **Cost.** State: the arranged edge copies (two records per copy when `undirected`), the
//! distance arrangement (one record per reached vertex, per round at which it changed), the
//! vertex-set `distinct` and the final `reduce` (about two records per vertex). An update's work
//! is proportional to the vertices whose distance changes, times their out-degree, in the rounds
//! where they change:
//! * an insertion `(u, v)` with `d(u) + 1 < d(v)` re-labels `v` and whatever it shortens
//!   downstream; otherwise it costs one proposal to `v` (a look at `v`'s proposals) and stops;
//! * a deletion of an edge no shortest path uses stops at `v` the same way; one on a shortest
//!   path retracts `v`'s distance and everything derived from it, which then settles at its next
//!   best distance (or unreachable), so the work is the size of the affected BFS sub-tree, and
//!   the number of rounds up to its depth;
//! * a vertex that appears or vanishes also changes one record of the output `reduce`.
//!
//! Deleting the source's last edge (when it is not in the vertex file) retracts every distance;
//! that is inherent in the semantics.
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::bfs::{Bfs, BFS_UNREACHABLE};
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::types::Update;
//! // The path 0 -> 1 -> 2 -> 3, and vertex 9 from a vertex file; epoch 1 adds the shortcut 0 -> 2.
//! let stream = MemoryStream {
//!     vertices: vec![9],
//!     initial: vec![(0, 1, None), (1, 2, None), (2, 3, None)],
//!     updates: vec![Update::insert(0, 2)],
//!     batch: 1,
//! };
//! let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 1) };
//! let report = driver::run(options, Bfs { source: 0, undirected: false }).unwrap().unwrap();
//! assert_eq!(report.final_state.unwrap(), vec![(0, 0), (1, 1), (2, 1), (3, 2), (9, BFS_UNREACHABLE)]);
//! // The shortcut changed the hop counts of 2 and 3 only.
//! let epoch1: Vec<_> =
//!     report.changes.unwrap().iter().filter(|c| c.epoch == 1).map(|c| (c.key, c.value, c.diff)).collect();
//! assert_eq!(epoch1, vec![(2, 2, -1), (2, 1, 1), (3, 3, -1), (3, 2, 1)]);
//! ```

use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::operators::iterate::Variable;
use differential_dataflow::trace::implementations::{ValBuilder, ValSpine};
use differential_dataflow::{AsCollection, ExchangeData, VecCollection};
use timely::dataflow::operators::vec::Map;
use timely::order::Product;
use timely::progress::Timestamp;

use super::{Algorithm, GraphInput, NodeCollection, ResultCollection};
use crate::types::{Diff, Node};

pub use crate::types::format::BFS_UNREACHABLE;

/// Breadth-first search hop counts from `source`.
#[derive(Clone, Debug)]
pub struct Bfs {
    /// The source vertex.
    pub source: Node,
    /// Follow every edge in both directions.
    pub undirected: bool,
}

impl Algorithm for Bfs {
    fn parameters(&self) -> String {
        format!("{:?}", self)
    }
    fn name(&self) -> String {
        "bfs".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        bfs(input, self.source, self.undirected)
    }
}

/// Builds the BFS dataflow: `(vertex, hop count from source or BFS_UNREACHABLE)` for every
/// vertex of the vertex set.
pub fn bfs<'a>(input: GraphInput<'a>, source: Node, undirected: bool) -> ResultCollection<'a> {
    let vertices = input.vertex_set();
    let edges = input.edges.clone().flat_map(move |(s, d, _)| {
        let forward = (s != d).then_some((s, (d, ())));
        let backward = (undirected && s != d).then_some((d, (s, ())));
        forward.into_iter().chain(backward)
    });
    let roots = vertices.clone().filter(move |v| *v == source).map(|v| (v, 0u64));
    // Round `i` holds the vertices within `i` hops already: no priority needed.
    let distances = min_distances(edges, roots, |d: &u64, _: &()| d + 1, |_| 0);
    with_default(vertices, distances, BFS_UNREACHABLE)
}

/// **The collection rung**: hop counts from a *collection* of roots, over `(src, dst)` edges
/// followed in their direction (give both directions for an undirected graph), at any timestamp
/// `T` — in a user's own dataflow, or inside an `iterate` scope. Roots are data: changing a root
/// is an update like any other, not a new dataflow. Vertices no root reaches are absent (the
/// [`Bfs`] algorithm completes them with [`BFS_UNREACHABLE`]); with several roots a vertex gets
/// its distance to the nearest one. Self-loops never shorten a path and are skipped.
///
/// Cost: as [`min_distances`]: per round, the vertices whose distance changed times their degree.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use differential_dataflow::input::Input;
/// use ripples::dataflow::bfs::hops;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// timely::execute_directly(move |worker| {
///     worker.dataflow::<u64, _, _>(|scope| {
///         let (_, edges) = scope.new_collection_from(vec![(1u64, 2u64), (2, 3), (3, 4), (9, 9)]);
///         let (_, roots) = scope.new_collection_from(vec![1u64]);
///         hops(edges, roots).inspect(move |(hop, _time, diff)| sink.lock().unwrap().push((*hop, *diff)));
///     });
/// });
/// let mut seen = seen.lock().unwrap().clone();
/// seen.sort();
/// assert_eq!(seen, vec![((1, 0), 1), ((2, 1), 1), ((3, 2), 1), ((4, 3), 1)]); // 9 is not reached
/// ```
pub fn hops<'a, T>(
    edges: VecCollection<'a, T, (Node, Node), Diff>,
    roots: VecCollection<'a, T, Node, Diff>,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice,
{
    let edges = edges.flat_map(|(s, d)| (s != d).then_some((s, (d, ()))));
    hops_arranged(edges.arrange_by_key_named("ArrangeEdges"), roots)
}

/// [`hops`] over an edge arrangement `src → (dst, ())` built (and shared) elsewhere.
pub fn hops_arranged<'a, T>(
    edges: ArrangedEdges<'a, T, ()>,
    roots: VecCollection<'a, T, Node, Diff>,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice,
{
    min_distances_arranged(edges, roots.map(|r| (r, 0u64)), |d: &u64, _: &()| d + 1, |_| 0)
}

/// Min-plus propagation from `roots` along `edges`: `(vertex, smallest value)` over every walk
/// from a root `(r, v0)`, a walk's value being `extend` applied edge by edge. `extend` must be
/// monotone (`extend(d, e) >= d`), so that the minimum is reached by a path and the iteration
/// stops; the values' `Ord` is the one minimised.
///
/// `edges` are `(src, (dst, payload))`, one record per copy (copies only add redundant
/// proposals). Unreached vertices are absent from the result.
///
/// `priority` orders the work, as in delta-stepping: a proposal of value `d` made in round `r`
/// is considered in round `max(r, priority(d)) + 1`, so smaller values settle before larger ones
/// are tried and a vertex's value changes fewer times (each change is kept, per round, in the
/// arrangements, and an update later revisits every round at which the vertex changed).
/// `priority` must be monotone in the values' order; it changes the rounds, never the result.
/// `|_| 0` gives plain Bellman–Ford rounds.
pub fn min_distances<'a, T, E, V, F, P>(
    edges: VecCollection<'a, T, (Node, (Node, E)), Diff>,
    roots: VecCollection<'a, T, (Node, V), Diff>,
    extend: F,
    priority: P,
) -> VecCollection<'a, T, (Node, V), Diff>
where
    T: Timestamp + Lattice,
    E: ExchangeData,
    V: ExchangeData,
    F: Fn(&V, &E) -> V + 'static,
    P: Fn(&V) -> usize + 'static,
{
    min_distances_arranged(edges.arrange_by_key_named("ArrangeEdges"), roots, extend, priority)
}

/// Edges arranged by source, as [`min_distances_arranged`] and the `_arranged` rungs take them:
/// `src → (dst, payload)`. Build one with `edges.arrange_by_key()` and share it between several
/// computations of one dataflow.
pub type ArrangedEdges<'a, T, E> = Arranged<'a, TraceAgent<ValSpine<Node, (Node, E), T, Diff>>>;

/// [`min_distances`] over an edge arrangement built (and possibly shared) elsewhere.
pub fn min_distances_arranged<'a, T, E, V, F, P>(
    edges: ArrangedEdges<'a, T, E>,
    roots: VecCollection<'a, T, (Node, V), Diff>,
    extend: F,
    priority: P,
) -> VecCollection<'a, T, (Node, V), Diff>
where
    T: Timestamp + Lattice,
    E: ExchangeData,
    V: ExchangeData,
    F: Fn(&V, &E) -> V + 'static,
    P: Fn(&V) -> usize + 'static,
{
    let outer = roots.scope();
    outer.scoped::<Product<T, usize>, _, _>("MinDistances", |scope| {
        let edges = edges.enter(scope);
        let roots = roots.enter(scope);
        let (proposals_bind, proposals) = Variable::new(scope, Product::new(Default::default(), 1usize));
        let distances = proposals.concat(roots).reduce_abelian::<_, ValBuilder<_, _, _, _>, ValSpine<_, _, _, _>>(
            "MinDistance",
            |_vertex, input, output| output.push((input[0].0.clone(), 1)),
        );
        let next = distances.clone().join_core(edges, move |_src, d, (dst, e)| Some((*dst, extend(d, e))));
        // Delay each proposal to its priority round. Only the records' times move forward (as in
        // `enter_at`); the stream's capabilities stay at or before them, which timely allows.
        let next = next
            .inner
            .map(move |(record, mut time, diff)| {
                time.inner = time.inner.max(priority(&record.1));
                (record, time, diff)
            })
            .as_collection();
        proposals_bind.set(next);
        distances.as_collection(|k, v| (*k, v.clone())).leave(outer)
    })
}

/// `values` completed with `(v, default)` for every vertex of `vertices` without a value; where
/// a vertex has values, the smallest one below `default` wins. Every value of `values` must
/// belong to a vertex of `vertices` and be at most `default`.
pub fn with_default<'a>(
    vertices: NodeCollection<'a>,
    values: ResultCollection<'a>,
    default: u64,
) -> ResultCollection<'a> {
    values.concat(vertices.map(move |v| (v, default))).reduce(|_vertex, input, output| output.push((*input[0].0, 1)))
}
