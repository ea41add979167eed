//! The **windowed WCC fast path**: weakly connected components over an event-time window
//! (`--window` / `--tumbling`), where every edge copy that enters at time `t` leaves at exactly
//! `t + SPAN` — its expiry is known when it arrives.
//!
//! **Semantics:** exactly those of [`super::wcc`] (every vertex of the vertex set labelled with the
//! smallest id of its component), at every time; the output is the same differential collection.
//!
//! **How.** One worker keeps a spanning forest that *maximises expiry*: a new edge joining two
//! trees is linked; a new edge closing a cycle evicts the earliest-expiring edge on that cycle
//! (found with a [`LinkCut`] path minimum) if that one leaves before it, and is dropped
//! otherwise. A dropped or evicted edge is never needed again: whenever it is present, the rest of
//! its cycle is present too. So the forest restricted to present edges always has the components
//! of the present graph, and an expiring forest edge is a plain tree split. A split finds the
//! smaller side by searching both sides at once (cost: the smaller side), and components keep
//! their members in ordered sets, so each keeps its smallest id. Per time, expiries are applied
//! before insertions, and the labels that changed are emitted when the frontier passes the time.
//!
//! *State:* one forest edge per vertex at most, plus per-vertex component bookkeeping — no edge
//! multiset. *Cost:* O(log n) amortised per edge copy (link-cut operations), plus the label
//! changes themselves (a merge or split relabels the side whose smallest id changed, which the
//! output must list anyway).
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::wcc_window::WindowForest;
//! let mut forest = WindowForest::new();
//! let mut changes = Vec::new();
//! let mut drain = |forest: &mut WindowForest| {
//!     changes.clear();
//!     forest.drain_changes(&mut changes);
//!     changes.sort();
//!     changes.clone()
//! };
//! // Time 0: 1 - 2 leaves at 10, 2 - 3 at 5; 1 - 3 (leaving at 20) closes a cycle and evicts
//! // 2 - 3, the edge on it that leaves first.
//! forest.insert(1, 2, Some(10));
//! forest.insert(2, 3, Some(5));
//! forest.insert(1, 3, Some(20));
//! assert_eq!(drain(&mut forest), vec![((1, 1), 1), ((2, 1), 1), ((3, 1), 1)]);
//! // At 5, 2 - 3 leaves: nothing changes, 3 hangs on 1 - 3.
//! forest.expire(5);
//! assert_eq!(drain(&mut forest), vec![]);
//! // At 10, 1 - 2 leaves: vertex 2 has no edge left and leaves the result.
//! forest.expire(10);
//! assert_eq!(drain(&mut forest), vec![((2, 1), -1)]);
//! ```

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use differential_dataflow::AsCollection;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::vec::Map;
use timely::dataflow::operators::Concat;

use super::link_cut::LinkCut;
use super::time_stash::TimeStash;
use super::{GraphInput, ResultCollection};
use crate::types::{Diff, Node, Time};

/// A vertex's bookkeeping.
#[derive(Clone, Debug)]
struct Vertex {
    id: Node,
    /// Its link-cut node.
    node: usize,
    /// Forest edges at it: their link-cut nodes.
    edges: Vec<usize>,
    /// Its component (index into `components`); meaningful while present.
    component: usize,
    /// A vertex-file vertex: present at every time.
    fixed: bool,
    /// Present until this time (exclusive) because of self-loops.
    loop_until: Time,
    present: bool,
    /// Listed in `WindowForest::dirty` already.
    dirty: bool,
}

/// A forest edge: its link-cut node's endpoints (vertex indices).
#[derive(Clone, Copy, Debug)]
struct ForestEdge {
    ends: (usize, usize),
}

/// The sequential core: a spanning forest maximising expiry, with component labels.
#[derive(Default)]
pub struct WindowForest {
    vertices: Vec<Vertex>,
    index: HashMap<Node, usize>,
    lc: LinkCut,
    /// Link-cut node -> vertex index (for vertex nodes) or forest edge.
    owner: Vec<Owner>,
    free_edge_nodes: Vec<usize>,
    /// Forest edges by the time they leave (entries of evicted edges are skipped by generation).
    expiries: BinaryHeap<Reverse<(Time, usize, u64)>>,
    generation: Vec<u64>,
    /// Self-loop presence ends: `(time, vertex)`.
    loop_ends: BinaryHeap<Reverse<(Time, usize)>>,
    components: Vec<BTreeSet<Node>>,
    free_components: Vec<usize>,
    /// Vertices whose label may have changed in the open time, with their label before it
    /// (a list, not a map: draining it costs its length, whatever it once held).
    dirty: Vec<(usize, Option<Node>)>,
}

#[derive(Clone, Copy, Debug)]
enum Owner {
    /// A vertex's node.
    Vertex,
    Edge(ForestEdge),
    Free,
}

impl WindowForest {
    /// An empty forest: no vertex, no edge.
    pub fn new() -> Self {
        Self::default()
    }

    fn label(&self, v: usize) -> Option<Node> {
        let x = &self.vertices[v];
        x.present.then(|| *self.components[x.component].first().expect("a present vertex is in its component"))
    }

    fn touch(&mut self, v: usize) {
        if !self.vertices[v].dirty {
            let l = self.label(v);
            self.vertices[v].dirty = true;
            self.dirty.push((v, l));
        }
    }

    fn new_component(&mut self, members: BTreeSet<Node>) -> usize {
        match self.free_components.pop() {
            Some(c) => {
                self.components[c] = members;
                c
            }
            None => {
                self.components.push(members);
                self.components.len() - 1
            }
        }
    }

    /// The vertex index of `id`, created (absent) if new.
    fn vertex(&mut self, id: Node) -> usize {
        if let Some(&v) = self.index.get(&id) {
            return v;
        }
        let node = self.lc.add(u64::MAX);
        let v = self.vertices.len();
        self.owner.push(Owner::Vertex);
        self.generation.push(0);
        self.vertices.push(Vertex {
            id,
            node,
            edges: Vec::new(),
            component: usize::MAX,
            fixed: false,
            loop_until: 0,
            present: false,
            dirty: false,
        });
        self.index.insert(id, v);
        v
    }

    /// Makes `v` present (a singleton component) if it is not.
    fn appear(&mut self, v: usize) {
        if !self.vertices[v].present {
            self.touch(v);
            let c = self.new_component(BTreeSet::from([self.vertices[v].id]));
            let x = &mut self.vertices[v];
            x.present = true;
            x.component = c;
        }
    }

    /// Removes `v` if nothing keeps it present at time `t` (it has no forest edge then).
    fn maybe_vanish(&mut self, v: usize, t: Time) {
        let x = &self.vertices[v];
        if x.present && !x.fixed && x.edges.is_empty() && x.loop_until <= t {
            self.touch(v);
            let c = self.vertices[v].component;
            self.components[c].clear();
            self.free_components.push(c);
            self.vertices[v].present = false;
        }
    }

    /// A vertex-file vertex: present at every time.
    pub fn add_fixed(&mut self, id: Node) {
        let v = self.vertex(id);
        self.vertices[v].fixed = true;
        self.appear(v);
    }

    /// Applies everything that leaves at or before `t` (call before the insertions of `t`).
    pub fn expire(&mut self, t: Time) {
        while let Some(&Reverse((leave, node, generation))) = self.expiries.peek() {
            if leave > t {
                break;
            }
            self.expiries.pop();
            if self.generation[node] != generation {
                continue;
            }
            if let Owner::Edge(e) = self.owner[node] {
                self.remove_forest_edge(node, e);
                self.split(e.ends.0, e.ends.1);
                self.maybe_vanish(e.ends.0, t);
                self.maybe_vanish(e.ends.1, t);
            }
        }
        while let Some(&Reverse((end, v))) = self.loop_ends.peek() {
            if end > t {
                break;
            }
            self.loop_ends.pop();
            self.maybe_vanish(v, t);
        }
    }

    /// Inserts an edge copy `a - b` present from now until `leave` (exclusive; `None`: forever).
    pub fn insert(&mut self, a: Node, b: Node, leave: Option<Time>) {
        let key = leave.unwrap_or(Time::MAX);
        let va = self.vertex(a);
        self.appear(va);
        if a == b {
            let x = &mut self.vertices[va];
            if key > x.loop_until {
                x.loop_until = key;
                self.loop_ends.push(Reverse((key, va)));
            }
            return;
        }
        let vb = self.vertex(b);
        self.appear(vb);
        let (na, nb) = (self.vertices[va].node, self.vertices[vb].node);
        if !self.lc.connected(na, nb) {
            self.merge(va, vb);
            self.add_forest_edge(va, vb, key);
            return;
        }
        let m = self.lc.path_min(na, nb);
        if self.lc.key(m) >= key {
            return; // every edge on the path stays at least as long: the new one is redundant
        }
        if let Owner::Edge(e) = self.owner[m] {
            self.remove_forest_edge(m, e);
            self.add_forest_edge(va, vb, key);
        }
    }

    fn add_forest_edge(&mut self, va: usize, vb: usize, key: Time) {
        let node = match self.free_edge_nodes.pop() {
            Some(n) => {
                self.lc.reset(n, key);
                n
            }
            None => {
                let n = self.lc.add(key);
                self.owner.push(Owner::Free);
                self.generation.push(0);
                n
            }
        };
        self.generation[node] += 1;
        self.owner[node] = Owner::Edge(ForestEdge { ends: (va, vb) });
        let (na, nb) = (self.vertices[va].node, self.vertices[vb].node);
        self.lc.link(na, node);
        self.lc.link(node, nb);
        self.vertices[va].edges.push(node);
        self.vertices[vb].edges.push(node);
        if key != Time::MAX {
            self.expiries.push(Reverse((key, node, self.generation[node])));
        }
    }

    fn remove_forest_edge(&mut self, node: usize, e: ForestEdge) {
        let (va, vb) = e.ends;
        let (na, nb) = (self.vertices[va].node, self.vertices[vb].node);
        self.lc.cut(na, node);
        self.lc.cut(node, nb);
        for v in [va, vb] {
            let edges = &mut self.vertices[v].edges;
            let i = edges.iter().position(|&x| x == node).expect("forest edge at its end");
            edges.swap_remove(i);
        }
        self.generation[node] += 1;
        self.owner[node] = Owner::Free;
        self.free_edge_nodes.push(node);
    }

    /// Joins the components of `va` and `vb` (different trees): the side with the larger
    /// smallest id takes the other's.
    fn merge(&mut self, va: usize, vb: usize) {
        let (ca, cb) = (self.vertices[va].component, self.vertices[vb].component);
        let (min_a, min_b) =
            (*self.components[ca].first().expect("member"), *self.components[cb].first().expect("member"));
        // Relabelled: every member of the side whose smallest id is larger.
        let relabelled = if min_a < min_b { cb } else { ca };
        let members: Vec<Node> = self.components[relabelled].iter().copied().collect();
        for id in members {
            let v = self.index[&id];
            self.touch(v);
        }
        // Move the smaller set into the larger one.
        let (big, small) = if self.components[ca].len() >= self.components[cb].len() { (ca, cb) } else { (cb, ca) };
        let moved = std::mem::take(&mut self.components[small]);
        for id in &moved {
            let v = self.index[id];
            self.vertices[v].component = big;
        }
        self.components[big].extend(moved);
        self.free_components.push(small);
    }

    /// After the forest edge between `va` and `vb` was removed: splits their component if they
    /// are no longer connected (always, in a forest), searching both sides at once.
    #[allow(clippy::needless_range_loop)] // both sides are indexed inside the loop
    fn split(&mut self, va: usize, vb: usize) {
        let mut sides = [(vec![va], vec![va], 0usize), (vec![vb], vec![vb], 0usize)];
        let mut seen: HashMap<usize, usize> = HashMap::from([(va, 0), (vb, 1)]);
        let smaller = loop {
            let mut finished = None;
            for s in 0..2 {
                let (frontier, _members, pos) = &mut sides[s];
                if *pos >= frontier.len() {
                    finished = Some(s);
                    break;
                }
                let v = frontier[*pos];
                *pos += 1;
                for &node in &self.vertices[v].edges {
                    if let Owner::Edge(e) = self.owner[node] {
                        let w = if e.ends.0 == v { e.ends.1 } else { e.ends.0 };
                        if let std::collections::hash_map::Entry::Vacant(slot) = seen.entry(w) {
                            slot.insert(s);
                            sides[s].0.push(w);
                            sides[s].1.push(w);
                        }
                    }
                }
            }
            if let Some(s) = finished {
                break s;
            }
        };
        let part: Vec<usize> = std::mem::take(&mut sides[smaller].1);
        let c = self.vertices[part[0]].component;
        let old_min = *self.components[c].first().expect("member");
        let ids: BTreeSet<Node> = part.iter().map(|&v| self.vertices[v].id).collect();
        let part_min = *ids.first().expect("member");
        // The part whose smallest id changes is relabelled.
        if part_min != old_min {
            for &v in &part {
                self.touch(v);
            }
        }
        if part_min == old_min {
            // The rest loses the smallest id: touch it before the sets change.
            let rest: Vec<Node> = self.components[c].iter().filter(|id| !ids.contains(id)).copied().collect();
            for id in rest {
                let v = self.index[&id];
                self.touch(v);
            }
        }
        for id in &ids {
            self.components[c].remove(id);
        }
        let nc = self.new_component(ids);
        for &v in &part {
            self.vertices[v].component = nc;
        }
    }

    /// The label changes since the last call: `((vertex, label), ±1)`.
    pub fn drain_changes(&mut self, out: &mut Vec<((Node, u64), Diff)>) {
        let dirty = std::mem::take(&mut self.dirty);
        for &(v, old) in &dirty {
            self.vertices[v].dirty = false;
            let new = self.label(v);
            if old != new {
                let id = self.vertices[v].id;
                if let Some(l) = old {
                    out.push(((id, l), -1));
                }
                if let Some(l) = new {
                    out.push(((id, l), 1));
                }
            }
        }
        // Keep the allocation unless one huge time left it oversized.
        let mut dirty = dirty;
        dirty.clear();
        if dirty.capacity() <= 1 << 16 {
            self.dirty = dirty;
        }
    }
}

/// The windowed fast path as a dataflow: every record goes to worker 0, which applies each time's
/// expiries and insertions in time order and emits its label changes once the frontier has
/// passed it. Retractions in the input only mark the times at which edges leave (they are not
/// needed otherwise: the forest knows when each edge leaves).
pub fn wcc_window<'a>(input: GraphInput<'a>, span: Time) -> ResultCollection<'a> {
    // (a, b, kind): kind 0 an edge copy (a -> b), 1 a vertex-file vertex a.
    type Event = ((Node, Node, u8), Time, Diff);
    let edges = input.edges.inner.map(|((s, d, _w), t, diff)| ((s, d, 0u8), t, diff));
    let vertices = input.vertices.inner.map(|(v, t, diff)| ((v, v, 1u8), t, diff));
    edges
        .concat(vertices)
        .unary_frontier::<timely::container::CapacityContainerBuilder<Vec<((Node, u64), Time, Diff)>>, _, _, _>(
            Exchange::new(|_x: &Event| 0u64),
            "WccWindowForest",
            move |_capability, _info| {
                let mut forest = WindowForest::new();
                let mut stash: TimeStash<Event> = TimeStash::new();
                let mut changes = Vec::new();
                move |(input, frontier), output| {
                    input.for_each(|cap, data| {
                        for record in data.drain(..) {
                            stash.stash(&cap, record.1, record);
                        }
                    });
                    // Times the frontier has passed are complete: apply them in order.
                    while let Some((t, cap, records)) = stash.next_complete(frontier) {
                        forest.expire(t);
                        for ((a, b, kind), _t, diff) in records {
                            if kind == 1 {
                                assert!(diff > 0, "internal error: a vertex-file vertex was retracted");
                                forest.add_fixed(a);
                            } else if diff > 0 {
                                for _ in 0..diff {
                                    forest.insert(a, b, t.checked_add(span));
                                }
                            }
                        }
                        changes.clear();
                        forest.drain_changes(&mut changes);
                        let mut session = output.session(&cap);
                        for &(record, diff) in &changes {
                            session.give((record, t, diff));
                        }
                    }
                }
            },
        )
        .as_collection()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::BTreeMap;

    /// Random windowed streams: the forest's labels at every time equal the oracle's on the
    /// edges present then.
    #[test]
    fn labels_match_the_oracle_at_every_time() {
        for seed in 0..30u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let span = rng.gen_range(1..12);
            let n = rng.gen_range(3..25u64);
            let fixed: Vec<Node> = (0..n).filter(|_| rng.gen_bool(0.1)).collect();
            let mut forest = WindowForest::new();
            let mut state: BTreeMap<Node, u64> = BTreeMap::new();
            let mut copies: Vec<(Node, Node, Time, Time)> = Vec::new();
            let mut changes = Vec::new();
            for t in 0..120u64 {
                forest.expire(t);
                if t == 0 {
                    for &v in &fixed {
                        forest.add_fixed(v);
                    }
                }
                for _ in 0..rng.gen_range(0..5) {
                    let (a, b) = (rng.gen_range(0..n), rng.gen_range(0..n));
                    // A few copies never leave.
                    let leave = if rng.gen_bool(0.03) { None } else { Some(t + span) };
                    forest.insert(a, b, leave);
                    copies.push((a, b, t, leave.unwrap_or(Time::MAX)));
                }
                changes.clear();
                forest.drain_changes(&mut changes);
                for &((v, l), d) in &changes {
                    if d > 0 {
                        assert!(state.insert(v, l).is_none(), "seed {seed} t {t}: {v} has two labels");
                    } else {
                        assert_eq!(
                            state.remove(&v),
                            Some(l),
                            "seed {seed} t {t}: retraction of a label {v} does not have"
                        );
                    }
                }
                let edges: Vec<(Node, Node, f64)> =
                    copies.iter().filter(|c| c.2 <= t && t < c.3).map(|c| (c.0, c.1, 1.0)).collect();
                let vertices = crate::oracle::vertex_set(fixed.iter().copied(), &edges);
                let want = crate::oracle::wcc(&vertices, &edges);
                assert_eq!(state, want, "seed {seed} span {span} t {t}");
            }
        }
    }
}
