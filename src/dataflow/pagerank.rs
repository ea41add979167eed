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
//! * each non-sink's share `PR_{i-1}(u) / |Nout(u)|` (a join with the arranged out-degrees),
//! * the incoming sum of every vertex (a join with the arranged edges, then a `reduce` per
//!   vertex that sums its in-neighbours' shares in ascending neighbour order; vertices without
//!   in-edges get 0),
//! * the global term: a `reduce` over the single key `()` that sees `n` and every sink's rank
//!   and sums the sinks' ranks in ascending vertex order,
//! * `PR_i(v)` from the incoming sum and the global term (a join with the global term,
//!   replicated over 64 buckets so that the join is spread over the workers).
//!
//! Every float is computed by a `reduce` or join closure from the *complete* current inputs —
//! never by accumulating deltas — so a value depends only on the epoch's graph, and a retraction
//! retracts exactly the bits emitted earlier. Sums run in the same order as the sequential
//! oracle's, so the results are bit-identical to [`crate::oracle::pagerank`]. Floats travel as
//! `u64` bit patterns.
//!
//! **Cost.** State per stage: the ranks and shares (one record per vertex each), the per-vertex
//! incoming `reduce` (one record per edge, plus one per vertex) and the global-term join (one
//! record per vertex); shared: the arranged edge set and out-degrees. An insertion or deletion
//! `(u, v)` changes `|Nout(u)|` (so every share `u` sends), possibly the sink set, and possibly
//! `n`; its effect spreads one hop per stage. PageRank inherently changes **every** vertex's
//! value whenever `n` or the sink mass changes — and the sink mass changes with almost any
//! update — so in practice an epoch re-derives all `n` values in every stage and re-sums every
//! vertex's in-neighbour shares: `O(iterations · (|V| + |E|))` work per epoch, whatever the batch
//! size. The saving over recomputation is therefore in batching (a batch of any size costs about
//! one such pass), not in the size of one update's effect.

use differential_dataflow::trace::implementations::{KeySpine, ValSpine};
use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::{ExchangeData, VecCollection};

use super::{Algorithm, GraphInput, ResultCollection, ValueFormat};
use crate::types::{Diff, Node, Time};

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
fn with_global<'a, X, G, F>(
    per_vertex: VecCollection<'a, Time, (Node, X), Diff>,
    global: VecCollection<'a, Time, ((), G), Diff>,
    f: F,
) -> VecCollection<'a, Time, (Node, u64), Diff>
where
    X: ExchangeData,
    G: ExchangeData,
    F: Fn(&X, &G) -> u64 + 'static,
{
    let global = global.flat_map(|((), g)| (0..BUCKETS).map(move |b| (b, g.clone())));
    per_vertex
        .map(|(v, x)| (bucket(v), (v, x)))
        .join_map(global, move |_b, (v, x), g| (*v, f(x, g)))
}

type Arr<'a, K, V> = Arranged<'a, TraceAgent<ValSpine<K, V, Time, Diff>>>;
type KeyArr<'a, K> = Arranged<'a, TraceAgent<KeySpine<K, Time, Diff>>>;

/// Builds the PageRank dataflow: `(vertex, PR_iterations(vertex) as f64 bits)` for every vertex
/// of the vertex set.
pub fn pagerank<'a>(input: GraphInput<'a>, iterations: u32, damping: f64, undirected: bool) -> ResultCollection<'a> {
    let vertices = input.vertex_set();
    let arcs = input.edge_set(undirected).filter(|(s, d)| s != d);

    // Shared, graph-only state.
    let outdeg: Arr<'a, Node, Diff> = arcs.clone().map(|(s, _)| s).count().arrange_by_key();
    let by_src: Arr<'a, Node, Node> = arcs.clone().arrange_by_key();
    let has_out = outdeg.clone().as_collection(|u, _| *u);
    let has_in = arcs.map(|(_, d)| d).distinct();
    let sinks: KeyArr<'a, Node> = vertices
        .clone()
        .map(|v| (v, ()))
        .antijoin(has_out)
        .map(|(v, ())| v)
        .arrange_by_self();
    let zero_in = vertices
        .clone()
        .map(|v| (v, ()))
        .antijoin(has_in)
        .map(|(v, ())| (v, 0f64.to_bits()));
    let n = vertices.clone().map(|_| ()).count();
    // The vertex count as the first entry (tag 0) of the global reduce's input.
    let n_entry = n.clone().map(|((), n)| ((), (0u8, n as u64, 0u64)));

    let mut ranks = with_global(vertices.map(|v| (v, ())), n, |(), n| (1.0 / *n as f64).to_bits());

    for _ in 0..iterations {
        let ranks_arr: Arr<'a, Node, u64> = ranks.arrange_by_key();
        let shares = ranks_arr.clone().join_core(outdeg.clone(), |u, r, deg| {
            Some((*u, (f64::from_bits(*r) / *deg as f64).to_bits()))
        });
        let incoming = shares
            .join_core(by_src.clone(), |u, share, v| Some((*v, (*u, *share))))
            .reduce(|_v, input, output| {
                // Ascending in-neighbour order, as the oracle sums.
                let sum: f64 = input.iter().map(|((_u, share), _)| f64::from_bits(*share)).sum();
                output.push((sum.to_bits(), 1));
            })
            .concat(zero_in.clone());
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
            let incoming = f64::from_bits(*incoming);
            let mass = f64::from_bits(*mass);
            ((1.0 - damping) / n + damping * incoming + damping / n * mass).to_bits()
        });
    }
    ranks
}
