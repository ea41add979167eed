//! Triangles per vertex, maintained exactly under edge insertions and deletions.
//!
//! **Semantics.** The graph is read as an undirected simple graph: edge direction, parallel
//! copies and weights are ignored, and **self-loops are ignored** (they close no triangle). A
//! triangle is a set of three distinct vertices `{x, y, z}` that are pairwise joined by a present
//! edge (in either direction). Every vertex of the epoch's vertex set
//! ([`GraphInput::vertex_set`]: vertex-file vertices ∪ endpoints of present edges) gets the
//! number of triangles it is a corner of (0 for most vertices of sparse graphs, and for
//! vertex-file vertices without edges). A vertex whose last edge is deleted and that is not in
//! the vertex file leaves the result. The global number of triangles is the sum of the values
//! divided by 3. Values are integers ([`ValueFormat::Integer`](super::ValueFormat::Integer)).
//!
//! **How.** The distinct undirected pairs `{a, b}` (`a < b`, from the shared
//! [`GraphInput::edge_set`]`(true)`) are exchanged to one worker, which keeps the adjacency sets
//! of the present pairs. When the input frontier has passed a time `t`, it consolidates the
//! pair changes of `t` and applies them one at a time: for a pair `{a, b}` that appears it
//! counts the common neighbours `c` of `a` and `b` in the adjacency *before* the insertion (each
//! closes a new triangle `{a, b, c}`: `+1` for `c`, `+k` for `a` and `b` when there are `k`),
//! and then inserts it; a pair that vanishes is removed first and its common neighbours give the
//! same counts negated. Applying the changes of a time in any order sums to the exact difference
//! between the triangles of the graph before and after `t` (each triangle that appears or
//! vanishes is counted by exactly one of its changed pairs: the last one applied). The operator
//! emits, per time, the consolidated change of each vertex's count as the multiplicity of a
//! vertex record (no per-vertex state), and a `reduce` per vertex joins that count with the
//! vertex set ([`super::degree::multiplicity_per_vertex`]). This is the sequential form of a
//! delta query (each change is looked up against the adjacency, no wedge is ever stored), at one
//! worker; the result is the same on any number of workers and processes.
//!
//! **Cost.** State: linear in the edges: the shared edge-set `distinct` (two records per pair,
//! spread over the workers), the adjacency at the one worker (two hash-set entries per present
//! pair), and the final `reduce` (two records per vertex). A change of pair `{a, b}` costs
//! `O(min(d(a), d(b)))` hash lookups at that worker and changes at most `k + 2` output records
//! for `k` common neighbours; a parallel copy or a self-loop costs only the `distinct`. The
//! intersections are not spread over the workers: the worker that holds the adjacency does all
//! of them.
//!
//! # Example
//!
//! ```
//! use std::collections::BTreeMap;
//! use ripples::dataflow::triangles::Triangles;
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::oracle;
//! use ripples::types::Update;
//! // Two triangles sharing the edge 1 - 2 once epoch 1 adds 1 - 3; epoch 2 deletes 0 - 2.
//! let initial = vec![(0, 1), (1, 2), (0, 2), (2, 3)];
//! let updates = vec![Update::insert(1, 3), Update::delete(0, 2)];
//! let stream = MemoryStream {
//!     initial: initial.iter().map(|&(s, d)| (s, d, None)).collect(),
//!     updates: updates.clone(),
//!     batch: 1,
//!     ..MemoryStream::default()
//! };
//! let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 2) };
//! let report = driver::run(options, Triangles).unwrap().unwrap();
//! let got: BTreeMap<u64, u64> = report.final_state.unwrap().into_iter().collect();
//! // The sequential oracle on the final graph agrees: only the triangle {1, 2, 3} is left.
//! let edges = [(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (1, 3, 1.0)];
//! assert_eq!(got, oracle::triangles(&oracle::vertex_set([], &edges), &edges));
//! assert_eq!(got.into_iter().collect::<Vec<_>>(), vec![(0, 0), (1, 1), (2, 1), (3, 1)]);
//! // At epoch 1 vertices 1 and 2 were in two triangles: summing the changes up to an epoch gives
//! // the result at that epoch.
//! let mut at1 = BTreeMap::new();
//! for c in report.changes.unwrap().iter().filter(|c| c.epoch <= 1) {
//!     *at1.entry((c.key, c.value)).or_insert(0) += c.diff as i64;
//! }
//! at1.retain(|_, n| *n != 0);
//! assert_eq!(at1.keys().copied().collect::<Vec<_>>(), vec![(0, 1), (1, 2), (2, 2), (3, 1)]);
//! ```

use std::collections::{HashMap, HashSet};

use super::{Algorithm, GraphInput, NodeCollection, PairCollection, ResultCollection};
use crate::types::{Diff, Node};

/// Per vertex: the number of triangles it is a corner of.
#[derive(Clone, Copy, Debug, Default)]
pub struct Triangles;

impl Algorithm for Triangles {
    fn name(&self) -> String {
        "triangles".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        triangles(input)
    }
}

/// `(vertex, number of triangles through it)` for every vertex of the vertex set.
pub fn triangles<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    let pairs = input.edge_set(true).filter(|(s, d)| s < d);
    super::degree::multiplicity_per_vertex(corners(pairs), input.vertex_set())
}

/// The triangle corners of the set of undirected pairs `(a, b)`, `a < b` (no loops): a
/// collection in which vertex `v` has multiplicity "number of triangles through `v`".
pub fn corners<'a>(pairs: PairCollection<'a>) -> NodeCollection<'a> {
    let mut adjacency = Adjacency::default();
    super::pair_changes::at_one_worker(pairs, "TriangleCorners", move |changes, delta| {
        for ((a, b), diff) in changes {
            adjacency.apply(a, b, diff, delta);
        }
    })
}

/// The adjacency sets of the present pairs.
#[derive(Default)]
struct Adjacency {
    neighbours: HashMap<Node, HashSet<Node>>,
}

impl Adjacency {
    fn contains(&self, a: Node, b: Node) -> bool {
        self.neighbours.get(&a).is_some_and(|n| n.contains(&b))
    }

    /// Applies the net change `diff` of pair `{a, b}` (which must take its multiplicity to 0
    /// or 1) and adds the corner changes of the triangles it opens or closes to `delta`.
    fn apply(&mut self, a: Node, b: Node, diff: Diff, delta: &mut HashMap<Node, Diff>) {
        if diff == 0 {
            return;
        }
        let present = self.contains(a, b);
        assert!(
            (diff == 1 && !present) || (diff == -1 && present),
            "internal error: pair ({a}, {b}) changes by {diff} (present: {present}) in a set"
        );
        if diff < 0 {
            self.remove(a, b);
            self.remove(b, a);
        }
        let empty = HashSet::new();
        let na = self.neighbours.get(&a).unwrap_or(&empty);
        let nb = self.neighbours.get(&b).unwrap_or(&empty);
        let (small, large) = if na.len() <= nb.len() { (na, nb) } else { (nb, na) };
        let mut k = 0;
        for c in small.iter().filter(|c| large.contains(c)) {
            *delta.entry(*c).or_insert(0) += diff;
            k += 1;
        }
        if k > 0 {
            *delta.entry(a).or_insert(0) += k * diff;
            *delta.entry(b).or_insert(0) += k * diff;
        }
        if diff > 0 {
            self.neighbours.entry(a).or_default().insert(b);
            self.neighbours.entry(b).or_default().insert(a);
        }
    }

    fn remove(&mut self, a: Node, b: Node) {
        if let Some(n) = self.neighbours.get_mut(&a) {
            n.remove(&b);
            if n.is_empty() {
                self.neighbours.remove(&a);
            }
        }
    }
}
