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
//! the colour of `v`. The cover's vertex `(v, p)` is the id `2v + p`, which keeps the order of
//! the ids: the smallest id of a cover component is `2m` or `2m + 1`. [`Bipartite`] keeps the
//! cover's components with the fully dynamic WCC forest ([`super::wcc_dynamic`]: a spanning
//! forest at worker 0 whose deleted forest edges are replaced by a search of both sides of the
//! cut), which labels every `(v, p)` with the smallest id of its component; a stage after it
//! (at worker 0, once a time is complete) keeps the two labels of every vertex and turns the
//! time's label changes into value changes: equal labels mean an odd cycle (2), different
//! labels mean colour = the parity of `(v, 0)`'s label. A vertex-file vertex or a self-loop
//! keeps both `(v, 0)` and `(v, 1)` present (a self-loop joins nothing). The forest's fallback
//! rebuilds are counted with WCC's (`wcc_fallbacks` in `--stats`).
//!
//! Ids of 2^63 or more have no cover id. From the first time that names one, the forest hands
//! the present graph over to the general path ([`bipartite_general`], which takes any id: the
//! same values by differential label propagation, `propagate_at` as in the general path of
//! [`super::wcc`], over the cover as pairs `(vertex, side)`, and a `reduce` per vertex over its
//! two labels): at that time it retracts every value it gave and feeds the general path the
//! present graph and every record from then on, so the change log is that of either path
//! alone. The general path exists in every dataflow and is idle until then.
//! [`BipartiteGeneral`] (`ripples run bipartite-general`) runs it from the start.
//!
//! **Cost.** That of fully dynamic WCC on a graph twice the size, plus 24 bytes per vertex for
//! the two labels: per present pair two cover links, per vertex two forest vertices. An
//! insertion that closes an odd cycle merges the two halves of the cover of the component (one
//! relabelled: every vertex of the component changes its value to 2); a deletion that breaks the
//! last odd cycle splits them again (a replacement search that finds no edge). The general path
//! costs what `wcc-general` does on the cover: four arranged records per present pair, two
//! labels per vertex, and the vertex-set `distinct`.
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

use std::collections::BTreeMap;

use differential_dataflow::algorithms::graphs::propagate::propagate_at;
use differential_dataflow::AsCollection;
use rustc_hash::FxHashMap;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::operators::generic::builder_rc::OperatorBuilder;
use timely::dataflow::operators::generic::OutputBuilder;
use timely::dataflow::operators::vec::Map;
use timely::dataflow::operators::{Capability, Concat};
use timely::dataflow::StreamVec;

use super::gather::to_first_worker;
use super::wcc_dynamic::DynamicForest;
use super::{Algorithm, AlgorithmCounts, GraphInput, ResultCollection};
use crate::types::{Diff, Node, Time};

/// Per vertex: its colour 0/1 in a bipartite component, 2 in a component with an odd cycle, on
/// the fully dynamic forest over the double cover while every id is below 2^63 (see the module
/// docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Bipartite;

/// [`Bipartite`]'s values by differential label propagation over the double cover, always.
#[derive(Clone, Copy, Debug, Default)]
pub struct BipartiteGeneral;

/// The value of a vertex whose component has an odd cycle.
pub const ODD_CYCLE: u64 = 2;

/// The first id the double cover cannot number (`2v + 1` must fit in 64 bits).
pub const COVER_LIMIT: Node = 1 << 63;

impl Algorithm for Bipartite {
    fn name(&self) -> String {
        "bipartite".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        bipartite(input)
    }
}

impl Algorithm for BipartiteGeneral {
    fn name(&self) -> String {
        "bipartite".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        bipartite_general(input)
    }
}

/// An edge copy `(src, dst, 0)` or a vertex-file vertex `(v, v, 1)`, with its time and diff.
type Record = ((Node, Node, u8), Time, Diff);
/// A value change `((vertex, value), time, diff)`.
type Value = ((Node, u64), Time, Diff);

/// `(vertex, colour or ODD_CYCLE)` for every vertex of the vertex set: the double cover's
/// forest at worker 0 while every id is below 2^63, then, from the first time that names a
/// larger one, [`bipartite_general`] over the graph the forest hands over.
pub fn bipartite<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    let edges = input.edges.inner.clone().map(|((s, d, _w), t, diff)| ((s, d, 0u8), t, diff));
    let vertices = input.vertices.inner.clone().map(|(v, t, diff)| ((v, v, 1u8), t, diff));
    let (values, handoff) = cover_forest(edges.concat(vertices), input.counts().cloned());
    let handoff = handoff.as_collection();
    let edges = handoff.clone().filter(|(_, _, kind)| *kind == 0).map(|(s, d, _)| (s, d, 0));
    let vertices = handoff.filter(|(_, _, kind)| *kind == 1).map(|(v, _, _)| v);
    let general = bipartite_general(GraphInput::new(edges, vertices, input.insert_only));
    values.as_collection().concat(general)
}

/// One time's records at the cover forest, with capabilities for both outputs.
struct Pending {
    caps: [Capability<Time>; 2],
    edges: Vec<(Node, Node, Diff)>,
    fixed: Vec<(Node, Diff)>,
    /// Some id is 2^63 or more.
    large: bool,
}

/// The double cover's forest and every vertex's two cover labels.
struct Cover {
    forest: DynamicForest,
    /// `[label of (v, 0), label of (v, 1)]` per present vertex.
    labels: FxHashMap<Node, Labels>,
    /// A time's cover records, label changes and the labels before it of the vertices it
    /// touched (buffers kept across times).
    edges: Vec<(Node, Node, Diff)>,
    fixed: Vec<(Node, Diff)>,
    changes: Vec<((Node, u64), Diff)>,
    before: FxHashMap<Node, Labels>,
}

/// A vertex's two cover labels (`NONE`: absent).
type Labels = [u64; 2];
const NONE: u64 = u64::MAX;

/// The value of a vertex with cover labels `labels`, `None` if it is absent.
fn value(labels: Labels) -> Option<u64> {
    match labels {
        [NONE, NONE] => None,
        [even, odd] if even == odd => Some(ODD_CYCLE),
        [even, _] => Some(even & 1),
    }
}

impl Cover {
    fn new() -> Self {
        Cover {
            forest: DynamicForest::default(),
            labels: FxHashMap::default(),
            edges: Vec::new(),
            fixed: Vec::new(),
            changes: Vec::new(),
            before: FxHashMap::default(),
        }
    }

    /// Applies one time's records (ids below 2^63) and hands its value changes to `emit`.
    fn apply(&mut self, pending: &Pending, emit: &mut impl FnMut(Node, u64, Diff)) {
        self.edges.clear();
        self.fixed.clear();
        for &(s, d, diff) in &pending.edges {
            let (s, d) = (2 * s, 2 * d);
            if s == d {
                // A self-loop keeps both sides present and joins nothing.
                self.edges.extend([(s, s, diff), (s + 1, s + 1, diff)]);
            } else {
                self.edges.extend([(s.min(d + 1), s.max(d + 1), diff), ((s + 1).min(d), (s + 1).max(d), diff)]);
            }
        }
        self.fixed.extend(pending.fixed.iter().flat_map(|&(v, diff)| [(2 * v, diff), (2 * v + 1, diff)]));
        self.changes.clear();
        let changes = &mut self.changes;
        self.forest.apply_with(&self.fixed, &mut self.edges, &mut |record, diff| changes.push((record, diff)));
        if self.edges.capacity() > 1 << 16 {
            // An initial graph's records: not kept for the small times after it.
            self.edges = Vec::new();
        }
        // The forest's net changes per side: the old label's retraction and the new one's
        // insertion, in either order.
        self.before.clear();
        for &((code, label), diff) in &self.changes {
            let v = code >> 1;
            let entry = self.labels.entry(v).or_insert([NONE, NONE]);
            self.before.entry(v).or_insert(*entry);
            let side = &mut entry[(code & 1) as usize];
            if diff > 0 {
                *side = label;
            } else if *side == label {
                *side = NONE;
            }
        }
        for (&v, &before) in &self.before {
            let now = self.labels.get(&v).copied().unwrap_or([NONE, NONE]);
            if now == [NONE, NONE] {
                self.labels.remove(&v);
            }
            let (old, new) = (value(before), value(now));
            if old != new {
                if let Some(old) = old {
                    emit(v, old, -1);
                }
                if let Some(new) = new {
                    emit(v, new, 1);
                }
            }
        }
    }

    /// The present graph as records of the original graph: each pair once as `(a, b)`, `a < b`,
    /// with its copies, self-loops and vertex-file vertices (the even side of each cover record).
    fn hand_over(&self, emit: &mut impl FnMut((Node, Node, u8), Diff)) {
        // {2s, 2d + 1} with s < d is a pair's one cover link whose smaller end is even; a
        // self-loop and a vertex-file vertex are at 2v and 2v + 1.
        self.forest.for_each_present(&mut |(a, b, kind), n| {
            if a & 1 == 0 {
                emit((a >> 1, b >> 1, kind), n);
            }
        });
    }
}

/// The cover forest as an operator at worker 0: value changes (output 0) while every id is
/// below 2^63; at the first complete time that names a larger id, the retraction of every value
/// and the present graph, followed by every record from that time on, on output 1.
fn cover_forest<'a>(
    records: StreamVec<'a, Time, Record>,
    counts: Option<AlgorithmCounts>,
) -> (StreamVec<'a, Time, Value>, StreamVec<'a, Time, Record>) {
    if let Some(counts) = &counts {
        counts.activate_fallbacks();
    }
    let mut builder = OperatorBuilder::new("BipartiteCover".to_owned(), records.scope());
    let mut input = builder.new_input(records, to_first_worker());
    let (values_out, values) = builder.new_output::<Vec<Value>>();
    let (handoff_out, handoff) = builder.new_output::<Vec<Record>>();
    builder.build(move |_caps| {
        let mut values_out = OutputBuilder::<_, CapacityContainerBuilder<Vec<Value>>>::from(values_out);
        let mut handoff_out = OutputBuilder::<_, CapacityContainerBuilder<Vec<Record>>>::from(handoff_out);
        // `None` once the graph has been handed over.
        let mut cover = Some(Cover::new());
        let mut pending: BTreeMap<Time, Pending> = BTreeMap::new();
        move |frontiers| {
            let mut values_h = values_out.activate();
            let mut handoff_h = handoff_out.activate();
            input.for_each(|cap, data| {
                if cover.is_none() {
                    if let Some(cap) = cap.retain_least(1) {
                        handoff_h.session(&cap).give_iterator(data.drain(..));
                    }
                    return;
                }
                for ((s, d, kind), t, diff) in data.drain(..) {
                    let p = pending.entry(t).or_insert_with(|| Pending {
                        caps: [cap.delayed(&t, 0), cap.delayed(&t, 1)],
                        edges: Vec::new(),
                        fixed: Vec::new(),
                        large: false,
                    });
                    p.large |= s >= COVER_LIMIT || d >= COVER_LIMIT;
                    if kind == 1 {
                        p.fixed.push((s, diff));
                    } else {
                        p.edges.push((s, d, diff));
                    }
                }
            });
            // Complete times, in order.
            while let Some(c) = cover.as_mut() {
                let Some(entry) = pending.first_entry().filter(|e| !frontiers[0].less_equal(e.key())) else {
                    break;
                };
                let (t, p) = (*entry.key(), entry.remove());
                if !p.large {
                    let before = c.forest.fallbacks();
                    let mut session = values_h.session(&p.caps[0]);
                    c.apply(&p, &mut |v, value, diff| session.give(((v, value), t, diff)));
                    if let Some(counts) = &counts {
                        counts.record_fallbacks(t, c.forest.fallbacks() - before);
                    }
                    continue;
                }
                // An id the cover cannot number: the general path takes over at `t`.
                let mut session = values_h.session(&p.caps[0]);
                for (&v, &labels) in &c.labels {
                    if let Some(value) = value(labels) {
                        session.give(((v, value), t, -1));
                    }
                }
                drop(session);
                let mut session = handoff_h.session(&p.caps[1]);
                c.hand_over(&mut |record, diff| session.give((record, t, diff)));
                drop(session);
                cover = None;
                for p in std::iter::once(p).chain(std::mem::take(&mut pending).into_values()) {
                    let t = *p.caps[1].time();
                    let mut session = handoff_h.session(&p.caps[1]);
                    session.give_iterator(p.edges.iter().map(|&(s, d, diff)| ((s, d, 0u8), t, diff)));
                    session.give_iterator(p.fixed.iter().map(|&(v, diff)| ((v, v, 1u8), t, diff)));
                }
            }
        }
    });
    (values, handoff)
}

/// The general path: `(vertex, colour or ODD_CYCLE)` for every vertex of the vertex set, any ids.
pub fn bipartite_general<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
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
