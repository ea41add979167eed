//! PageRank (Graphalytics PR), maintained under edge insertions and deletions.
//!
//! **Semantics.** Exactly the Graphalytics definition, recomputed for every epoch's graph: with
//! `n = |V|` the size of the epoch's vertex set ([`GraphInput::vertex_set`]: vertex-file
//! vertices ∪ endpoints of present edges) and damping `d`,
//!
//! ```text
//! PR_0(v) = 1/n
//! PR_i(v) = (1-d)/n + d · Σ_{u ∈ Nin(v)} PR_{i-1}(u)/|Nout(u)| + (d/n) · Σ_{w sink} PR_{i-1}(w)
//! ```
//!
//! for exactly `iterations` iterations (no convergence test); a sink has `|Nout| = 0` and its
//! rank is spread over every vertex, itself included. `Nin`/`Nout` are over the *set* of present
//! edges: parallel copies and weights change nothing, and **self-loops are ignored** (a vertex
//! whose only out-edge is a self-loop is a sink). With `undirected`, every edge counts in both
//! directions (`Nin = Nout = N`). Every vertex of the vertex set gets exactly one value, the
//! bit pattern of an `f64` ([`ValueFormat::Float`]); an empty vertex set gives no values.
//!
//! **How.** The `iterations` rounds are unrolled into as many chained stages of the same shape
//! (so an update can never cause more than `iterations` rounds of work). Stage `i` takes the
//! ranks `(v, PR_{i-1}(v))` and computes
//! * each non-sink's share `PR_{i-1}(u) / |Nout(u)|` (a join with the arranged out-degrees), as
//!   an exact **fixed-point integer** (`PR` truncated to a multiple of 2^-96, integer-divided by
//!   the out-degree) carried as the *multiplicity* (an `i128`) of the record `u`;
//! * the incoming sum of every vertex: the shares joined with the arranged edge set (the shared
//!   index of [`GraphInput::arranged_edge_set`], which other algorithms of the run read too; its
//!   `isize` counts multiply into the shares) and counted per destination. A changed share
//!   travels as one record per out-edge carrying the *difference* of the integers, and the count
//!   accumulates exact integers, so no float is ever accumulated;
//! * the global term: a `reduce` over the single key `()` that sees `n` and every sink's rank
//!   and sums the sinks' ranks (as `f64`, in ascending vertex order) from its complete input;
//! * `PR_i(v)` from the incoming sum (rounded once to `f64`) and the global term (a join with
//!   the global term, replicated over 64 buckets so that the join is spread over the workers).
//!
//! **Exactness.** Every value is a deterministic function of the epoch's graph alone: the
//! integer sums are exact whatever the order and history of their updates, and every float is
//! computed by a closure from complete inputs. So the value at an epoch is bit-identical to a
//! from-scratch run on that epoch's graph (with any number of workers), nothing drifts over
//! epochs, and a retraction retracts exactly the bits emitted earlier. Floats travel as `u64`
//! bit patterns. Compared with the sequential oracle ([`crate::oracle::pagerank()`], which sums
//! in `f64`), the results agree to about `1e-15` relative but not always in the last bit: the
//! incoming sums here are exact up to the 2^-96 truncation of each share and one final
//! rounding, the oracle's are rounded at every addition.
//!
//! **Cost.** State per stage: the ranks (one record per vertex, arranged), the shares and the
//! incoming counts (one record per vertex each), the global-term join (one record per vertex)
//! and the sinks' ranks in the global `reduce`; shared by all stages: the arranged edge set, the
//! out-degrees and the sink set. Per epoch, a stage does work proportional to the vertices whose
//! rank changed in the previous stage, times their out-degrees (one record per out-edge each),
//! plus the vertices whose incoming sum or rank changed. An insertion or deletion `(u, v)`
//! changes `|Nout(u)|` (so every share `u` sends), possibly the sink set, and possibly `n`; its
//! effect spreads one hop per stage. But PageRank inherently changes **every** vertex's value
//! whenever `n` or the sink mass changes — and the sink mass changes with almost any update,
//! since a change anywhere reaches some sink within a few hops — so in practice every epoch
//! re-derives all `n` ranks in every stage and sends a difference along every edge:
//! `O(iterations · (|V| + |E|))` work per epoch, almost independent of the batch size. What the
//! dataflow saves over recomputation is in batching and in avoiding re-sorting the graph, not
//! in confining an update's effect.
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::pagerank::PageRank;
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::oracle;
//! use ripples::types::Update;
//! // A 4-cycle with a chord; epoch 1 deletes an edge, so vertex 3 becomes a sink.
//! let stream = MemoryStream {
//!     initial: vec![(0, 1, None), (1, 2, None), (2, 3, None), (3, 0, None), (0, 2, None)],
//!     updates: vec![Update::delete(3, 0)],
//!     batch: 1,
//!     ..MemoryStream::default()
//! };
//! let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 2) };
//! let algorithm = PageRank { iterations: 10, damping: 0.85, undirected: false };
//! let report = driver::run(options, algorithm).unwrap().unwrap();
//! // Values are f64 bit patterns; they agree with the sequential definition on the final graph.
//! let edges = [(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (0, 2, 1.0)];
//! let want = oracle::pagerank(&oracle::vertex_set([], &edges), &edges, 0.85, 10);
//! let got = report.final_state.unwrap();
//! assert_eq!(got.len(), 4);
//! for (v, bits) in got {
//!     let rank = f64::from_bits(bits);
//!     assert!((rank - want[&v]).abs() <= 1e-9 * want[&v], "vertex {v}: {rank} vs {}", want[&v]);
//! }
//! ```

use differential_dataflow::difference::{Abelian, IsZero, Monoid, Multiply, Semigroup};
use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::trace::implementations::{KeySpine, ValBuilder, ValSpine};
use differential_dataflow::{AsCollection, ExchangeData, VecCollection};
use timely::dataflow::operators::vec::Map;
use timely::progress::Timestamp;

use super::registry::Orientation;
use super::wcc::ArrangedPairs;
use super::{Algorithm, GraphInput, ResultCollection, ValueFormat};
use crate::types::{Diff, Node};

/// Graphalytics PageRank with a fixed number of iterations.
#[derive(Clone, Debug)]
pub struct PageRank {
    /// Number of iterations (0 gives `1/|V|` everywhere).
    pub iterations: u32,
    /// Damping factor `d`, in `[0, 1]`.
    pub damping: f64,
    /// Treat every edge as an edge in both directions.
    pub undirected: bool,
}

impl Algorithm for PageRank {
    fn parameters(&self) -> String {
        format!("{:?}", self)
    }
    fn name(&self) -> String {
        "pagerank".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        pagerank(input, self.iterations, self.damping, self.undirected)
    }
    fn value_format(&self) -> ValueFormat {
        ValueFormat::Float
    }
}

/// Number of buckets a global value is replicated over before it is joined with per-vertex data.
const BUCKETS: u64 = 64;

/// The bucket of a vertex (Fibonacci hashing onto `0..BUCKETS`).
fn bucket(v: Node) -> u64 {
    v.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - BUCKETS.trailing_zeros())
}

/// `(v, f(x, g))` for every `(v, x)`, where `g` is the single value of `global` (nothing while
/// `global` is empty). The global value is replicated over [`BUCKETS`] keys, so the join is
/// spread over the workers rather than concentrated on the key `()`.
fn with_global<'a, T, X, G, F>(
    per_vertex: VecCollection<'a, T, (Node, X), Diff>,
    global: VecCollection<'a, T, ((), G), Diff>,
    f: F,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice,
    X: ExchangeData,
    G: ExchangeData,
    F: Fn(&X, &G) -> u64 + 'static,
{
    let global = global.flat_map(|((), g)| (0..BUCKETS).map(move |b| (b, g.clone())));
    per_vertex.map(|(v, x)| (bucket(v), (v, x))).join_map(global, move |_b, (v, x), g| (*v, f(x, g)))
}

type Arr<'a, K, V, T> = Arranged<'a, TraceAgent<ValSpine<K, V, T, Diff>>>;
type KeyArr<'a, K, T> = Arranged<'a, TraceAgent<KeySpine<K, T, Diff>>>;

/// Bits after the binary point of the fixed-point shares.
const FIXED_BITS: i32 = 96;

/// `x` as a fixed-point number with [`FIXED_BITS`] fractional bits (truncated; exact for the
/// ranks that occur, which are in `[2^-43, 1]` unless `|V|` exceeds 2^40).
fn to_fixed(x: f64) -> i128 {
    (x * 2f64.powi(FIXED_BITS)) as i128
}

/// A fixed-point number as the nearest `f64`.
fn from_fixed(x: i128) -> f64 {
    x as f64 * 2f64.powi(-FIXED_BITS)
}

/// A fixed-point multiplicity: an exact `i128` sum of shares. A share record joined with the
/// (`isize`-counted) shared edge index multiplies into one, so a changed share travels along an
/// out-edge as one record carrying the difference.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
struct Fixed(i128);

impl IsZero for Fixed {
    fn is_zero(&self) -> bool {
        self.0 == 0
    }
}

impl Semigroup for Fixed {
    fn plus_equals(&mut self, rhs: &Self) {
        self.0 += rhs.0;
    }
}

impl Monoid for Fixed {
    fn zero() -> Self {
        Fixed(0)
    }
}

impl Abelian for Fixed {
    fn negate(&mut self) {
        self.0 = -self.0;
    }
}

impl Multiply<Diff> for Fixed {
    type Output = Fixed;
    fn multiply(self, rhs: &Diff) -> Fixed {
        Fixed(self.0 * *rhs as i128)
    }
}

/// A collection with its `isize` multiplicities scaled by `weight(record)` into [`Fixed`].
fn weighted<'a, T: Timestamp, D: ExchangeData>(
    collection: VecCollection<'a, T, D, Diff>,
    weight: impl Fn(&D) -> i128 + 'static,
) -> VecCollection<'a, T, D, Fixed> {
    collection
        .inner
        .map(move |(d, t, r)| {
            let w = Fixed(weight(&d) * r as i128);
            (d, t, w)
        })
        .as_collection()
}

/// Builds the PageRank dataflow: `(vertex, PR_iterations(vertex) as f64 bits)` for every vertex
/// of the vertex set. Reads the shared arranged edge set ([`GraphInput::arranged_edge_set`]).
pub fn pagerank<'a>(input: GraphInput<'a>, iterations: u32, damping: f64, undirected: bool) -> ResultCollection<'a> {
    let orientation = if undirected { Orientation::Undirected } else { Orientation::Out };
    ranks_arranged(input.arranged_edge_set(orientation), input.vertex_set(), iterations, damping)
}

/// **The collection rung**: PageRank after `iterations` iterations (as `f64` bits) for every
/// vertex of `vertices`, over `arcs` — a *set* of `(src, dst)` pairs without self-loops (each
/// once), both directions for an undirected graph — at any timestamp `T`. Semantics (the
/// Graphalytics definition, sinks' rank spread evenly) and cost as in the module docs. Arranges
/// `arcs` by source and calls [`ranks_arranged`].
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use differential_dataflow::input::Input;
/// use ripples::dataflow::pagerank::ranks;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// timely::execute_directly(move |worker| {
///     worker.dataflow::<u64, _, _>(|scope| {
///         // 1 -> 2 -> 1 and the sink 3, reached from 2.
///         let (_, arcs) = scope.new_collection_from(vec![(1u64, 2u64), (2, 1), (2, 3)]);
///         let (_, vertices) = scope.new_collection_from(vec![1u64, 2, 3]);
///         ranks(arcs, vertices, 1, 0.85).inspect(move |((v, r), _, _)| sink.lock().unwrap().push((*v, f64::from_bits(*r))));
///     });
/// });
/// let mut seen = seen.lock().unwrap().clone();
/// seen.sort_by(|a, b| a.partial_cmp(b).unwrap());
/// // One iteration from 1/3 each: the sink's third is spread over all three vertices.
/// let (base, spread) = (0.15 / 3.0, 0.85 / 9.0);
/// let want = [(1, base + 0.85 / 6.0 + spread), (2, base + 0.85 / 3.0 + spread), (3, base + 0.85 / 6.0 + spread)];
/// for ((v, got), (w, want)) in seen.iter().zip(want) {
///     assert_eq!(*v, w);
///     assert!((got - want).abs() < 1e-12, "vertex {v}: {got} vs {want}");
/// }
/// ```
pub fn ranks<'a, T>(
    arcs: VecCollection<'a, T, (Node, Node), Diff>,
    vertices: VecCollection<'a, T, Node, Diff>,
    iterations: u32,
    damping: f64,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice,
{
    ranks_arranged(arcs.arrange_by_key_named("Arrange: arcs"), vertices, iterations, damping)
}

/// **The arranged rung**: [`ranks`] over arcs already arranged by source (`src → dst`, a set
/// without self-loops; symmetric for an undirected graph), built — and shared with other
/// computations — elsewhere, e.g. [`GraphInput::arranged_edge_set`] or a
/// [`lookup`](GraphInput::lookup) of [`EDGES_OUT`](super::registry::EDGES_OUT) /
/// [`EDGES_UNDIRECTED`](super::registry::EDGES_UNDIRECTED). The out-degrees are a `reduce` of the
/// arrangement itself, and every stage's shares are joined with it: the arcs are never copied or
/// re-indexed. Semantics and cost as in the module docs (exact fixed-point sums; a changed share
/// travels as one record per out-edge carrying the difference).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use differential_dataflow::input::Input;
/// use ripples::dataflow::{pagerank::ranks_arranged, wcc::components_arranged};
/// use ripples::oracle;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// timely::execute_directly(move |worker| {
///     worker.dataflow::<u64, _, _>(|scope| {
///         // An undirected path 1 - 2 - 3, both directions of each edge, arranged once.
///         let (_, arcs) = scope.new_collection_from(vec![(1u64, 2u64), (2, 1), (2, 3), (3, 2)]);
///         let (_, vertices) = scope.new_collection_from(vec![1u64, 2, 3]);
///         let index = arcs.arrange_by_key();
///         // Two computations over the one index.
///         let ranks = ranks_arranged(index.clone(), vertices.clone(), 10, 0.85);
///         let components = components_arranged(index, vertices);
///         ranks.inspect(move |((v, r), _, _)| sink.lock().unwrap().push((*v, f64::from_bits(*r))));
///         components.inspect(|((_v, c), _, _)| assert_eq!(*c, 1));
///     });
/// });
/// let edges = oracle::symmetrize(&[(1, 2, 1.0), (2, 3, 1.0)]);
/// let want = oracle::pagerank(&oracle::vertex_set([], &edges), &edges, 0.85, 10);
/// let seen = seen.lock().unwrap().clone();
/// assert_eq!(seen.len(), 3);
/// for (v, rank) in seen {
///     assert!((rank - want[&v]).abs() <= 1e-12, "vertex {v}: {rank} vs {}", want[&v]);
/// }
/// ```
pub fn ranks_arranged<'a, T>(
    arcs: ArrangedPairs<'a, T>,
    vertices: VecCollection<'a, T, Node, Diff>,
    iterations: u32,
    damping: f64,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice,
{
    // Shared, graph-only state.
    let outdeg: Arr<'a, Node, Diff, T> =
        arcs.clone().reduce_abelian::<_, ValBuilder<_, _, _, _>, ValSpine<_, _, _, _>, _, _>(
            "OutDegree",
            |_u, input, output| output.push((input.iter().map(|(_, r)| *r).sum::<Diff>(), 1)),
            |vec, key, updates| {
                vec.clear();
                vec.extend(updates.drain(..).map(|(v, t, r)| ((*key, v), t, r)));
            },
        );
    let has_out = outdeg.clone().as_collection(|u, _| *u);
    let sinks: KeyArr<'a, Node, T> =
        vertices.clone().map(|v| (v, ())).antijoin(has_out).map(|(v, ())| v).arrange_by_self();
    // One unit for every vertex, so that every vertex has a (nonzero) incoming accumulator.
    let unit = weighted(vertices.clone(), |_| 1);
    let n = vertices.clone().map(|_| ()).count();
    // The vertex count as the first entry (tag 0) of the global reduce's input.
    let n_entry = n.clone().map(|((), n)| ((), (0u8, n as u64, 0u64)));

    let mut ranks = with_global(vertices.map(|v| (v, ())), n, |(), n| (1.0 / *n as f64).to_bits());

    for _ in 0..iterations {
        let ranks_arr: Arr<'a, Node, u64, T> = ranks.arrange_by_key();
        // `(u, ())` with multiplicity `PR(u)/|Nout(u)|` in fixed point.
        let shares = weighted(
            ranks_arr
                .clone()
                .join_core(outdeg.clone(), |u, r, deg| Some(((*u, ()), to_fixed(f64::from_bits(*r)) / *deg as i128))),
            |&(_, share)| share,
        )
        .map(|(u, _)| u);
        // Every out-neighbour `v` of `u` gets the record `v` with `u`'s share as multiplicity.
        let incoming = shares
            .join_core(arcs.clone(), |_u, (), v| Some(*v))
            .concat(unit.clone())
            .count_core::<Diff>()
            .map(|(v, acc)| (v, acc.0 - 1));
        let global = ranks_arr
            .join_core(sinks.clone(), |w, r, ()| Some(((), (1u8, *w, *r))))
            .concat(n_entry.clone())
            .reduce(|(), input, output| {
                // Sorted: the vertex count (tag 0) first, then the sinks in ascending order.
                let &((tag, n, _), _) = &input[0];
                if *tag != 0 {
                    return;
                }
                let mass: f64 = input[1..].iter().map(|((_, _, r), _)| f64::from_bits(*r)).sum();
                output.push(((*n, mass.to_bits()), 1));
            });
        ranks = with_global(incoming, global, move |incoming, (n, mass)| {
            let n = *n as f64;
            let incoming = from_fixed(*incoming);
            let mass = f64::from_bits(*mass);
            ((1.0 - damping) / n + damping * incoming + damping / n * mass).to_bits()
        });
    }
    ranks
}
