//! Weakly connected components, maintained under edge insertions and deletions.
//!
//! **Semantics.** Edge direction is ignored. Every vertex of the epoch's vertex set (vertex-file
//! vertices ∪ endpoints of present edges) gets the **smallest vertex id in its component**. An
//! edge counts while its multiplicity is positive; self-loops and parallel edges change nothing.
//! A vertex that loses its last edge and is not in the vertex file leaves the result.
//!
//! Four implementations produce the same differential collection of `(vertex, smallest id)`
//! changes, so everything downstream composes and the change logs are identical:
//!
//! **General path** ([`WccGeneral`], `ripples run wcc-general`). Differential label
//! propagation with prioritised label introduction
//! (`differential_dataflow::algorithms::graphs::propagate_at`) over the symmetrised edge multiset:
//! each vertex starts with its own id as label, labels flow along edges, every vertex keeps the
//! minimum it has seen; smaller labels are introduced in earlier rounds so that the winning label
//! usually floods its component before larger ones are tried.
//! *State:* the symmetrised edges arranged (2 records per edge copy), the labels (1 per vertex),
//! the vertex-set `distinct`. *Cost of an update:* proportional to the vertices whose label
//! changes times their degree, plus the rounds to re-flood. An insertion that merges two
//! components relabels the one with the larger minimum; a deletion that splits a component
//! relabels the part that lost the minimum (retracting the old label along that part first, up to
//! its diameter in rounds). A deletion that does not split a component usually costs little.
//!
//! **Fully dynamic path** ([`Wcc`](struct@Wcc) when the stream deletes, event-time windows
//! included; [`super::wcc_dynamic::WccDynamic`] forces it): a spanning forest with
//! non-tree adjacency at one worker (by default; [`Wcc::forest`] sets its parameters); a deleted forest edge is replaced by a non-tree edge found by searching both sides
//! of the cut at once (cost: the smaller side, usually far less), with a bounded-work fallback to
//! a union-find rebuild; see [`super::wcc_dynamic`].
//!
//! **Insert-only fast path** ([`Wcc`](struct@Wcc) when the driver knows the stream never
//! deletes). The summary approach of gelly-streaming, on timely: each worker keeps a disjoint-set forest of its
//! own share of the edges and forwards only the edges that joined two of its local components (a
//! spanning forest: at most one per vertex, ever) and the vertices it sees for the first time; one
//! worker (the last of process 0: the driver's result sink is at worker 0) merges these summaries into a
//! global disjoint-set forest that knows each component's smallest id and its members, and emits,
//! per epoch, the label changes of exactly the vertices whose smallest id changed. Each worker
//! applies its records as they arrive; the merge applies epochs in order as the frontier passes
//! them.
//! *State:* no edges at all: per worker 12 to 24 bytes per vertex it has seen (ids through a
//! dense table while they are small, a hash map beyond), plus ~50 bytes per vertex at the merging
//! worker. *Cost of an update:* near O(1) per edge at its worker (two id lookups and a
//! union-find step, a batch's memory prefetched in groups); a merge of two components costs
//! O(size of the one whose smallest id is larger) at the merging worker — the same output the
//! general path must produce.
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::wcc::Wcc;
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::types::Update;
//! // Epoch 0: the path 0 - 1 - 2 and the edge 5 - 6. Epoch 1 joins them; epoch 2 cuts 1 - 2.
//! let stream = MemoryStream {
//!     initial: vec![(0, 1, None), (1, 2, None), (5, 6, None)],
//!     updates: vec![Update::insert(2, 5), Update::delete(1, 2)],
//!     batch: 1,
//!     ..MemoryStream::default()
//! };
//! let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 2) };
//! let report = driver::run(options, Wcc).unwrap().unwrap();
//! assert_eq!(report.final_state.unwrap(), vec![(0, 0), (1, 0), (2, 2), (5, 2), (6, 2)]);
//! // Epoch 1 moved 5 and 6 to label 0: per vertex, the retraction comes before the insertion.
//! let epoch1: Vec<_> =
//!     report.changes.unwrap().iter().filter(|c| c.epoch == 1).map(|c| (c.key, c.value, c.diff)).collect();
//! assert_eq!(epoch1, vec![(5, 5, -1), (5, 0, 1), (6, 5, -1), (6, 0, 1)]);
//! ```

use differential_dataflow::algorithms::graphs::propagate::propagate_core;
use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::trace::implementations::ValSpine;
use differential_dataflow::{AsCollection, VecCollection};
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Capability, Concat};
use timely::progress::Timestamp;

use super::time_stash::TimeStash;
use super::union_find::{ForestUnionFind, LabelledForest};
use super::wcc_dynamic::ForestParams;
use super::{Algorithm, GraphInput, ResultCollection};
use crate::types::{Diff, Edge, Node, Time};

/// Weakly connected components: the insert-only fast path when the stream never deletes, the
/// fully dynamic path ([`super::wcc_dynamic`]) otherwise (event-time windows included), with the
/// parameters `forest`.
///
/// The constant [`Wcc`](const@Wcc) is the algorithm with the default parameters, so that `Wcc`
/// reads as a value as the parameterless algorithms do:
///
/// ```
/// use ripples::dataflow::wcc::Wcc;
/// use ripples::dataflow::wcc_dynamic::{ForestLayout, ForestParams};
/// assert_eq!(Wcc.forest, ForestParams::default());
/// let shares = Wcc.with_forest(ForestParams::default().with_layout(ForestLayout::Shares));
/// assert_eq!(shares.forest.layout, ForestLayout::Shares);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Wcc {
    /// The fully dynamic path's parameters (the other paths have none).
    pub forest: ForestParams,
}

/// [`struct@Wcc`] with the default parameters.
#[allow(non_upper_case_globals)]
pub const Wcc: Wcc = Wcc { forest: ForestParams::DEFAULT };

impl Wcc {
    /// With the fully dynamic path's parameters `forest` (its fallback budget and layout).
    pub fn with_forest(self, forest: ForestParams) -> Self {
        Wcc { forest }
    }
}

/// Weakly connected components, always on the general differential path (label propagation).
#[derive(Clone, Copy, Debug, Default)]
pub struct WccGeneral;

impl Algorithm for Wcc {
    fn parameters(&self) -> String {
        format!("{:?}", self.forest)
    }
    fn round_trips(&self, insert_only: bool) -> bool {
        // The insert-only path's merge waits for every worker's summary of a time, which each
        // worker makes once the frontier has reached it; so do the dynamic path's per-worker
        // forests.
        insert_only || self.forest.layout == super::wcc_dynamic::ForestLayout::Shares
    }
    fn input_route(&self, insert_only: bool) -> Option<super::InputRoute> {
        // The insert-only path keeps each edge where it is fed: its per-worker union-finds
        // spread over the processes as the input does (and with shares, by pair).
        match (self.forest.layout, insert_only) {
            (super::wcc_dynamic::ForestLayout::Single, true) => None,
            (layout, _) => Some(layout.route()),
        }
    }
    fn name(&self) -> String {
        "wcc".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        if input.insert_only {
            wcc_insert_only(input)
        } else {
            super::wcc_dynamic::wcc_dynamic(input, self.forest, None)
        }
    }
}

impl Algorithm for WccGeneral {
    fn name(&self) -> String {
        "wcc".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        wcc(input)
    }
}

/// The general path: `(vertex, smallest id in its component)` under insertions and deletions.
pub fn wcc<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    components(input.edges.clone().map(|(s, d, _)| (s, d)), input.vertex_set())
}

/// Symmetrised edges arranged by source, as [`components_arranged`] takes them.
pub type ArrangedPairs<'a, T> = Arranged<'a, TraceAgent<ValSpine<Node, Node, T, Diff>>>;

/// **The collection rung**: `(vertex, smallest id in its component)` for every vertex of
/// `nodes`, over `(src, dst)` edges of any direction and multiplicity, at any timestamp `T` — in
/// a user's own dataflow or inside an `iterate` scope. This is the general path (label
/// propagation, cost as in the module docs); the fast paths of [`Wcc`](struct@Wcc) need the driver's
/// knowledge of the stream and stay there. Endpoints of `edges` missing from `nodes` get no
/// label of their own but pass labels on.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use differential_dataflow::input::Input;
/// use ripples::dataflow::wcc::components;
///
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// timely::execute_directly(move |worker| {
///     worker.dataflow::<u64, _, _>(|scope| {
///         let (_, edges) = scope.new_collection_from(vec![(5u64, 2u64), (2, 9), (7, 8)]);
///         let (_, nodes) = scope.new_collection_from(vec![2u64, 5, 7, 8, 9, 11]);
///         components(edges, nodes).inspect(move |(label, _time, _diff)| sink.lock().unwrap().push(*label));
///     });
/// });
/// let mut seen = seen.lock().unwrap().clone();
/// seen.sort();
/// assert_eq!(seen, vec![(2, 2), (5, 2), (7, 7), (8, 7), (9, 2), (11, 11)]);
/// ```
pub fn components<'a, T>(
    edges: VecCollection<'a, T, (Node, Node), Diff>,
    nodes: VecCollection<'a, T, Node, Diff>,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice + std::hash::Hash,
{
    let symmetric = edges.clone().concat(edges.map(|(s, d)| (d, s)));
    components_arranged(symmetric.arrange_by_key(), nodes)
}

/// [`components`] over symmetrised edges already arranged by source (both directions of every
/// edge), built — and shared with other computations — elsewhere.
pub fn components_arranged<'a, T>(
    symmetric: ArrangedPairs<'a, T>,
    nodes: VecCollection<'a, T, Node, Diff>,
) -> VecCollection<'a, T, (Node, u64), Diff>
where
    T: Timestamp + Lattice + std::hash::Hash,
{
    propagate_core(symmetric, nodes.map(|n| (n, n)), |label: &u64| *label)
}

/// The least time of the frontier, if the frontier is a single time (always, for epochs).
fn frontier_time(frontier: &timely::progress::frontier::MutableAntichain<Time>) -> Option<Time> {
    let f = frontier.frontier();
    if f.len() == 1 {
        Some(f[0])
    } else {
        None
    }
}

/// The insert-only fast path: local spanning forests per worker, merged at the last worker of
/// process 0.
/// Every edge reaching it must be an insertion (diff > 0).
///
/// Stage 1 applies each worker's records as they arrive (a worker's input comes in time order;
/// a record arriving after one of a later time is forwarded whatever it joins, which keeps every
/// time's summary complete in any order) and needs no per-time state. Stage 2 merges a time's
/// summaries once the frontier has reached it (records of later times wait in a stash; a
/// frontier change schedules the operator, so nothing waits forever), and emits its label
/// changes once the frontier has passed it.
///
/// Both stages run on [`ForestUnionFind`] / [`LabelledForest`]: a dense id table while ids are
/// small, each batch applied in prefetched groups. The merge runs at the last worker of process 0
/// (the driver's sink is at worker 0, so with two or more workers in a process the two never
/// share a thread, and in a cluster the merged labels do not cross the network back).
pub fn wcc_insert_only<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    type Summary = ((Node, Node), Time, Diff);
    // The last worker of process 0 (of the only process, in one process): the merge then meets
    // the sink at worker 0 without crossing the network.
    let peers = input.edges.scope().peers();
    let merger = input.process_workers.map_or(peers, |w| w.clamp(1, peers)).saturating_sub(1) as u64;

    // Stage 1: each worker's own share (no exchange), processed as it arrives. A record (s, d)
    // is forwarded iff it joins two local components, or it arrived after a record of a later
    // time (then always): a record processed in time order is connected by the records before
    // it, all of times at most its own, so every time's forwarded records span what all of its
    // records span (the merge ignores a forwarded record that joins nothing). A worker's records
    // come in time order (its input is fed epoch by epoch), so the forced case is a safeguard;
    // not waiting for the frontier saves a progress round per epoch in a cluster.
    let forest = input.edges.inner.unary::<timely::container::CapacityContainerBuilder<Vec<Summary>>, _, _, _>(
        Pipeline,
        "WccLocalForest",
        |_capability, _info| {
            let mut uf = ForestUnionFind::new();
            // The latest time processed.
            let mut latest: Option<Time> = None;
            move |input, output| {
                input.for_each(|cap, data| {
                    let mut rest = &data[..];
                    while let Some(first) = rest.first() {
                        let t = first.1;
                        let run = rest.iter().position(|r| r.1 != t).unwrap_or(rest.len());
                        let (records, next) = rest.split_at(run);
                        rest = next;
                        let c = cap.delayed(&t, 0);
                        let mut session = output.session(&c);
                        let pair = |&((s, d, _w), _time, diff): &(Edge, Time, Diff)| {
                            assert!(diff > 0, "internal error: a deletion reached the insert-only WCC path");
                            (s, d)
                        };
                        if latest.is_some_and(|l| t < l) {
                            for r in records {
                                let (s, d) = pair(r);
                                uf.union(s, d);
                                session.give(((s, d), t, 1));
                            }
                        } else {
                            latest = Some(t);
                            uf.insert_all(records, pair, |&((s, d, _w), _time, _diff)| session.give(((s, d), t, 1)));
                        }
                    }
                });
            }
        },
    );

    // Vertex-file vertices join the summaries as (v, v).
    let vertices = input.vertices.map(|v| (v, v)).inner;
    let summaries = forest.concat(vertices);

    // Stage 2: merge every summary at the merging worker, in time order; emit each time's label
    // changes when the frontier has passed it.
    summaries
        .unary_frontier::<timely::container::CapacityContainerBuilder<Vec<((Node, u64), Time, Diff)>>, _, _, _>(
            Exchange::new(move |_x: &Summary| merger),
            "WccMergeForests",
            |_capability, _info| {
                let mut stash: TimeStash<Summary> = TimeStash::new();
                let mut uf = LabelledForest::new();
                let mut changes = Vec::new();
                let mut batch: Vec<(Node, Node)> = Vec::new();
                // The time whose records have been merged but whose changes are not yet emitted.
                let mut open: Option<Capability<Time>> = None;
                move |(input, frontier), output| {
                    let apply = |uf: &mut LabelledForest, records: &[Summary]| {
                        uf.union_all(records, |&(pair, _t, diff)| {
                            assert!(diff > 0, "internal error: a deletion reached the insert-only WCC path");
                            pair
                        });
                    };
                    let mut emit = |uf: &mut LabelledForest, cap: Capability<Time>| {
                        changes.clear();
                        uf.drain_changes(&mut changes);
                        let t = *cap.time();
                        let mut session = output.session(&cap);
                        for &(record, diff) in changes.iter() {
                            session.give((record, t, diff));
                        }
                    };
                    let now = frontier_time(frontier);
                    // Close the open time once the frontier has passed it.
                    if let Some(cap) = &open {
                        if now.map(|t| t > *cap.time()).unwrap_or(true) {
                            let cap = open.take().expect("open");
                            emit(&mut uf, cap);
                        }
                    }
                    for (cap, records) in stash.ready(frontier) {
                        if let Some(o) = open.take() {
                            emit(&mut uf, o);
                        }
                        apply(&mut uf, &records);
                        open = Some(cap);
                        if now.map(|t| t > *open.as_ref().expect("open").time()).unwrap_or(true) {
                            let cap = open.take().expect("open");
                            emit(&mut uf, cap);
                        }
                    }
                    input.for_each(|cap, data| {
                        // Which records apply now depends only on `open` and `now`, not on the
                        // merged state: they are collected and applied as one batch.
                        batch.clear();
                        for &record in data.iter() {
                            let current = open.as_ref().map(|c| *c.time() == record.1).unwrap_or(false);
                            if Some(record.1) == now && (open.is_none() || current) {
                                if open.is_none() {
                                    open = Some(cap.delayed(&record.1, 0));
                                }
                                assert!(record.2 > 0, "internal error: a deletion reached the insert-only WCC path");
                                batch.push(record.0);
                            } else {
                                stash.stash(&cap, record.1, record);
                            }
                        }
                        uf.union_all(&batch, |&pair| pair);
                    });
                }
            },
        )
        .as_collection()
}
