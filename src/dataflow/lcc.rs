//! Local clustering coefficient (Graphalytics LCC), maintained under edge insertions and
//! deletions.
//!
//! **Semantics.** Exactly the Graphalytics definition, recomputed for every epoch's graph: with
//! `N(v) = Nin(v) ∪ Nout(v)` as a set and `d = |N(v)|`, `LCC(v) = 0` if `d <= 1`, else the number
//! of directed edges `(u, w)` with `u, w ∈ N(v)`, divided by `d (d - 1)` (not the directed
//! coefficient of NetworkX or igraph). Edges are the *set* of present edges: parallel copies and
//! weights change nothing, and **self-loops are ignored** (`v ∉ N(v)`, and a loop `(u, u)` is
//! never an edge among neighbours). With `undirected`, every edge counts in both directions, so
//! each neighbour-neighbour edge counts twice and the value is the undirected coefficient. Every
//! vertex of the epoch's vertex set ([`GraphInput::vertex_set`]) gets exactly one value, the bit
//! pattern of an `f64` ([`ValueFormat::Float`]).
//!
//! **How.** Incremental triangle enumeration. The distinct non-loop arcs are folded into
//! undirected pairs `{a, b}` carrying their arc count `c ∈ {1, 2}`; `d(v)` is the number of
//! pairs at `v`. Each pair is oriented from the endpoint with the smaller `(degree, id)` to the
//! other, which bounds every out-degree by `O(√|E|)`. A triangle `{x, y, z}` is found exactly
//! once as a wedge `x -> y, x -> z` (`y < z`; a self-join of the oriented pairs) closed by the
//! pair `{y, z}` (a join with the arranged pairs). Since every edge among `N(v)` closes a
//! triangle with `v`, the numerator of `v` is the sum, over the triangles through `v`, of the arc
//! count of the opposite pair. A final `reduce` per vertex sees three integer counts — degree,
//! numerator (both as record multiplicities) and vertex-set membership — and computes the `f64`
//! from them: from complete integer inputs, so values never drift, a retraction retracts exactly
//! the bits emitted, and the results are bit-identical to [`crate::oracle::lcc()`].
//!
//! **Cost.** State: the distinct arcs, the pairs (arranged by pair) and degrees, the two
//! arrangements of the orientation joins (one record per pair each), the oriented pairs
//! (arranged once, read by both sides of the wedge self-join), the wedges arranged by closing
//! pair (`Σ_x outdeg(x)·(outdeg(x)-1)/2` records, `O(|E|^1.5)`; about 2 million for an R-MAT
//! scale-13 graph with 100,000 pairs), and a few records per vertex in the final `reduce`. An
//! update `(a, b)` that changes the pair `{a, b}` or its arc count changes the degrees of `a` and
//! `b`, which re-derives the orientation of their pairs (`O(d(a) + d(b))` records, nearly all
//! cancelling; only pairs whose order flips change), changes the wedges through the oriented
//! pair (`O(√|E|)`), and the triangles on `{a, b}` (one lookup per common neighbour). The output
//! changes for `a`, `b` (their degrees) and their common neighbours (their numerators). A
//! parallel copy or a self-loop costs only the edge-set `distinct`.
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::lcc::Lcc;
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::types::Update;
//! // The triangle 0 -> 1 -> 2 -> 0 with a tail 2 -> 3; epoch 1 adds 1 -> 0.
//! let stream = MemoryStream {
//!     initial: vec![(0, 1, None), (1, 2, None), (2, 0, None), (2, 3, None)],
//!     updates: vec![Update::insert(1, 0)],
//!     batch: 1,
//!     ..MemoryStream::default()
//! };
//! let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 1) };
//! let report = driver::run(options, Lcc { undirected: false }).unwrap().unwrap();
//! let lcc: Vec<(u64, f64)> = report.final_state.unwrap().into_iter().map(|(v, b)| (v, f64::from_bits(b))).collect();
//! // N(2) = {0, 1, 3}: now 0 -> 1 and 1 -> 0 of its 6 possible edges; N(1) = {0, 2}: 2 -> 0 of 2.
//! assert_eq!(lcc, vec![(0, 0.5), (1, 0.5), (2, 2.0 / 6.0), (3, 0.0)]);
//! ```

use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::trace::implementations::ValSpine;
use differential_dataflow::VecCollection;
use timely::progress::Timestamp;

use super::registry::Orientation;
use super::wcc::ArrangedPairs;
use super::{Algorithm, GraphInput, ResultCollection, ValueFormat};
use crate::types::{Diff, Node};

/// Graphalytics local clustering coefficient.
#[derive(Clone, Debug)]
pub struct Lcc {
    /// Treat every edge as an edge in both directions.
    pub undirected: bool,
}

impl Algorithm for Lcc {
    fn parameters(&self) -> String {
        format!("{:?}", self)
    }
    fn name(&self) -> String {
        "lcc".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        lcc(input, self.undirected)
    }
    fn value_format(&self) -> ValueFormat {
        ValueFormat::Float
    }
}

type Arr<'a, K, V, T> = Arranged<'a, TraceAgent<ValSpine<K, V, T, Diff>>>;

/// Tags of the final `reduce`'s input records `(v, tag)`; the record's multiplicity is the count.
const DEGREE: u8 = 0;
const LINKS: u8 = 1;
const MEMBER: u8 = 2;

/// Builds the LCC dataflow: `(vertex, LCC(vertex) as f64 bits)` for every vertex of the vertex
/// set. Reads the shared arranged edge set ([`GraphInput::arranged_edge_set`]).
pub fn lcc<'a>(input: GraphInput<'a>, undirected: bool) -> ResultCollection<'a> {
    let orientation = if undirected { Orientation::Undirected } else { Orientation::Out };
    coefficients_arranged(input.arranged_edge_set(orientation), input.vertex_set())
}

/// **The collection rung**: the local clustering coefficient (as `f64` bits) of every vertex of
/// `vertices`, over `arcs` — a *set* of `(src, dst)` pairs without self-loops (each once), both
/// directions for an undirected graph — at any timestamp `T`. Semantics and cost as in the module
/// docs. Arranges `arcs` by source and calls [`coefficients_arranged`].
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use differential_dataflow::input::Input;
/// use ripples::dataflow::lcc::coefficients;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// timely::execute_directly(move |worker| {
///     worker.dataflow::<u64, _, _>(|scope| {
///         // Directed: the cycle 1 -> 2 -> 3 -> 1 and 3 -> 4.
///         let (_, arcs) = scope.new_collection_from(vec![(1u64, 2u64), (2, 3), (3, 1), (3, 4)]);
///         let (_, vertices) = scope.new_collection_from(vec![1u64, 2, 3, 4]);
///         coefficients(arcs, vertices).inspect(move |((v, c), _, _)| sink.lock().unwrap().push((*v, f64::from_bits(*c))));
///     });
/// });
/// let mut seen = seen.lock().unwrap().clone();
/// seen.sort_by(|a, b| a.partial_cmp(b).unwrap());
/// // N(3) = {1, 2, 4}: one arc (1 -> 2) of the 6 possible; N(1) = {2, 3}: 2 -> 3 of 2.
/// assert_eq!(seen, vec![(1, 0.5), (2, 0.5), (3, 1.0 / 6.0), (4, 0.0)]);
/// ```
pub fn coefficients<'a, T>(
    arcs: VecCollection<'a, T, (Node, Node), Diff>,
    vertices: VecCollection<'a, T, Node, Diff>,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice,
{
    coefficients_arranged(arcs.arrange_by_key_named("Arrange: arcs"), vertices)
}

/// **The arranged rung**: [`coefficients`] over arcs already arranged by source (`src → dst`, a
/// set without self-loops; symmetric for an undirected graph), e.g. the shared
/// [`GraphInput::arranged_edge_set`] ([`EDGES_OUT`](super::registry::EDGES_OUT) /
/// [`EDGES_UNDIRECTED`](super::registry::EDGES_UNDIRECTED) in the registry). The arcs are read
/// from the arrangement's batches once, to count the arcs of each undirected pair; the pair
/// counts, degrees, orientation and wedges are this computation's own state (cost as in the
/// module docs). What sharing saves is the edge set's `distinct` and its arrangement.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use differential_dataflow::input::Input;
/// use ripples::dataflow::{lcc::coefficients_arranged, pagerank::ranks_arranged};
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// timely::execute_directly(move |worker| {
///     worker.dataflow::<u64, _, _>(|scope| {
///         // An undirected triangle 1 - 2 - 3 with a pendant 4, both directions of every edge.
///         let edges = [(1u64, 2u64), (2, 3), (1, 3), (3, 4)];
///         let symmetric: Vec<(u64, u64)> = edges.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
///         let (_, arcs) = scope.new_collection_from(symmetric);
///         let (_, vertices) = scope.new_collection_from(vec![1u64, 2, 3, 4]);
///         let index = arcs.arrange_by_key();
///         let _ranks = ranks_arranged(index.clone(), vertices.clone(), 5, 0.85);
///         coefficients_arranged(index, vertices)
///             .inspect(move |((v, c), _, _)| sink.lock().unwrap().push((*v, f64::from_bits(*c))));
///     });
/// });
/// let mut seen = seen.lock().unwrap().clone();
/// seen.sort_by(|a, b| a.partial_cmp(b).unwrap());
/// // N(3) = {1, 2, 4}: the pair {1, 2} (two arcs) of 6 possible arcs.
/// assert_eq!(seen, vec![(1, 1.0), (2, 1.0), (3, 2.0 / 6.0), (4, 0.0)]);
/// ```
pub fn coefficients_arranged<'a, T>(
    arcs: ArrangedPairs<'a, T>,
    vertices: VecCollection<'a, T, Node, Diff>,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice,
{
    let arcs = arcs.as_collection(|s, d| (*s, *d));
    // `((a, b), c)`, a < b: the undirected pair and how many of its two arcs are present.
    let pairs = arcs.map(|(s, d)| (s.min(d), s.max(d))).count();
    let degree: Arr<'a, Node, Diff, T> = pairs.clone().flat_map(|((a, b), _)| [a, b]).count().arrange_by_key();
    // Orient every pair from the smaller (degree, id) to the larger: `(x, (y, c))`.
    let oriented: Arr<'a, Node, (Node, Diff), T> = pairs
        .clone()
        .map(|((a, b), c)| (a, (b, c)))
        .join_core(degree.clone(), |a, &(b, c), da| Some((b, (*a, c, *da))))
        .join_core(degree, |b, &(a, c, da), db| Some(if (da, a) < (*db, *b) { (a, (*b, c)) } else { (*b, (a, c)) }))
        .arrange_by_key();
    // Wedges `x -> y, x -> z` with y < z, keyed by the closing pair.
    let wedges =
        oriented.clone().join_core(oriented, |x, &(y, cxy), &(z, cxz)| (y < z).then_some(((y, z), (*x, cxy, cxz))));
    let pairs: Arr<'a, (Node, Node), Diff, T> = pairs.arrange_by_key();
    // Every triangle gives each corner the arc count of the opposite pair.
    let links = wedges
        .join_core(pairs.clone(), |&(y, z), &(x, cxy, cxz), cyz| [(x, *cyz), (y, cxz), (z, cxy)])
        .explode(|(v, c)| Some(((v, LINKS), c)));
    let degrees = pairs.as_collection(|&(a, b), _| (a, b)).flat_map(|(a, b)| [(a, DEGREE), (b, DEGREE)]);
    let members = vertices.map(|v| (v, MEMBER));
    links.concat(degrees).concat(members).reduce(|_v, input, output| {
        let (mut d, mut links, mut member) = (0, 0, false);
        for &(tag, count) in input {
            match *tag {
                DEGREE => d = count,
                LINKS => links = count,
                _ => member = true,
            }
        }
        if member {
            let value = if d <= 1 { 0.0 } else { links as f64 / (d as f64 * (d as f64 - 1.0)) };
            output.push((value.to_bits(), 1));
        }
    })
}
