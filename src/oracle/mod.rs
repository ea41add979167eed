//! Plain sequential reference implementations of the graph algorithms: the independent test
//! oracle that the dataflow implementations are checked against.
//!
//! They are written to be obviously correct, not fast (but none is quadratic in the number of
//! edges except where the definition is: LCC looks at the out-edges of every neighbour).
//! `tests/graphalytics_oracle.rs` checks every one of them (except SCC, which Graphalytics lacks)
//! against the LDBC Graphalytics validation data.
//!
//! # Input
//!
//! Every function takes
//! * `vertices: &BTreeSet<Node>` — the vertex set; the result map has exactly these keys;
//! * `edges: &[(Node, Node, f64)]` — the present directed edges `(src, dst, weight)`.
//!
//! Every edge endpoint must be in the vertex set; the functions **panic** otherwise (a silent
//! drop would change degrees and hide a caller's bug). Use [`vertex_set`] to build a vertex set
//! that includes all endpoints.
//!
//! **Duplicates.** The functions see the *set* of present edges: an `(src, dst)` pair given more
//! than once counts once. Only SSSP looks at weights; for a pair given with several weights it
//! uses the smallest. Weights of other algorithms are ignored.
//!
//! **Undirected graphs** are given with both directions of every edge, as Graphalytics loaders
//! do (see [`symmetrize`]). With that convention no algorithm needs a `directed` flag: the
//! directed definitions of the Graphalytics specification (`tests/data/graphalytics/SPEC.md`)
//! reduce to the undirected ones (see each module for why), so there is none.
//!
//! **Self-loops** `(v, v)`: harmless and kept in [`wcc()`], [`bfs()`], [`sssp()`] and
//! [`scc()`] (they never change the result there). [`degree()`], [`degree_distribution()`],
//! [`triangles()`], [`kcore()`] and [`bipartite()`] read the edges as an undirected simple graph
//! ([`undirected_neighbours`]): direction ignored, self-loops dropped. **Ignored entirely** in [`pagerank()`],
//! [`cdlp()`] and [`lcc()`]: a self-loop does not count towards in- or out-degree (a vertex
//! whose only out-edge is a self-loop is a sink in PageRank), does not make a vertex its own
//! neighbour, and is not an edge among neighbours. Graphalytics graphs have no self-loops, so
//! this is this project's convention, stated here so that the dataflow implementations can
//! follow it.
//!
//! All vertex ids are full `u64` (vertex 0 and ids above 2^32 are ordinary ids).
//!
//! ```
//! use ripples::oracle::{symmetrize, undirected_neighbours, vertex_set, wcc};
//! // An undirected path 1 - 2 - 3 and a lone vertex 9 (from a vertex file).
//! let edges = symmetrize(&[(1, 2, 1.0), (2, 3, 1.0)]);
//! assert_eq!(edges.len(), 4);
//! let vertices = vertex_set([9], &edges);
//! assert_eq!(vertices.iter().copied().collect::<Vec<_>>(), vec![1, 2, 3, 9]);
//! let labels = wcc(&vertices, &edges);
//! assert_eq!((labels[&3], labels[&9]), (1, 9));
//! assert_eq!(undirected_neighbours(&vertices, &edges)[&2].len(), 2);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::types::Node;

pub mod bfs;
pub mod bipartite;
pub mod cdlp;
pub mod degree;
pub mod kcore;
pub mod lcc;
pub mod pagerank;
pub mod scc;
pub mod sssp;
pub mod triangles;
pub mod wcc;

pub use bfs::{bfs, BFS_UNREACHABLE};
pub use bipartite::bipartite;
pub use cdlp::cdlp;
pub use degree::{degree, degree_distribution};
pub use kcore::kcore;
pub use lcc::lcc;
pub use pagerank::pagerank;
pub use scc::scc;
pub use sssp::sssp;
pub use triangles::triangles;
pub use wcc::wcc;

/// The neighbour sets of the undirected simple graph of `edges`: direction, duplicates and
/// weights ignored, self-loops dropped. Every vertex of `vertices` has an entry, possibly empty.
/// Panics on an endpoint outside `vertices`.
pub fn undirected_neighbours(vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) -> BTreeMap<Node, BTreeSet<Node>> {
    check_endpoints(vertices, edges);
    let mut out: BTreeMap<Node, BTreeSet<Node>> = vertices.iter().map(|&v| (v, BTreeSet::new())).collect();
    for &(u, v, _) in edges {
        if u != v {
            out.get_mut(&u).unwrap().insert(v);
            out.get_mut(&v).unwrap().insert(u);
        }
    }
    out
}

/// A directed edge `(src, dst, weight)` as the oracles take it.
pub type WeightedEdge = (Node, Node, f64);

/// The given vertices together with every edge endpoint.
pub fn vertex_set(vertices: impl IntoIterator<Item = Node>, edges: &[WeightedEdge]) -> BTreeSet<Node> {
    let mut set: BTreeSet<Node> = vertices.into_iter().collect();
    for &(u, v, _) in edges {
        set.insert(u);
        set.insert(v);
    }
    set
}

/// Every edge in both directions: `(u, v, w)` and `(v, u, w)` (a self-loop once). This is how an
/// undirected graph is passed to the oracles.
pub fn symmetrize(edges: &[WeightedEdge]) -> Vec<WeightedEdge> {
    let mut out = Vec::with_capacity(2 * edges.len());
    for &(u, v, w) in edges {
        out.push((u, v, w));
        if u != v {
            out.push((v, u, w));
        }
    }
    out
}

/// Panics unless both endpoints of every edge are in `vertices`.
pub(crate) fn check_endpoints(vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) {
    for &(u, v, _) in edges {
        assert!(
            vertices.contains(&u) && vertices.contains(&v),
            "oracle: edge ({u}, {v}) has an endpoint outside the vertex set"
        );
    }
}

/// Out- and in-neighbour sets of every vertex (every vertex of the set has an entry, possibly
/// empty), over the set of present edges.
pub(crate) struct Adjacency {
    pub out: BTreeMap<Node, BTreeSet<Node>>,
    pub inc: BTreeMap<Node, BTreeSet<Node>>,
}

impl Adjacency {
    /// Builds the adjacency; self-loops are kept iff `keep_self_loops`. Panics on an endpoint
    /// outside `vertices`.
    pub fn new(vertices: &BTreeSet<Node>, edges: &[WeightedEdge], keep_self_loops: bool) -> Self {
        check_endpoints(vertices, edges);
        let mut out: BTreeMap<Node, BTreeSet<Node>> = vertices.iter().map(|&v| (v, BTreeSet::new())).collect();
        let mut inc = out.clone();
        for &(u, v, _) in edges {
            if u == v && !keep_self_loops {
                continue;
            }
            out.get_mut(&u).unwrap().insert(v);
            inc.get_mut(&v).unwrap().insert(u);
        }
        Adjacency { out, inc }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        let e = vec![(1, 2, 0.5), (3, 3, 1.0)];
        assert_eq!(symmetrize(&e), vec![(1, 2, 0.5), (2, 1, 0.5), (3, 3, 1.0)]);
        assert_eq!(vertex_set([7], &e), BTreeSet::from([1, 2, 3, 7]));
        let a = Adjacency::new(&BTreeSet::from([1, 2, 3]), &e, false);
        assert_eq!(a.out[&1], BTreeSet::from([2]));
        assert!(a.out[&3].is_empty() && a.inc[&3].is_empty());
        let a = Adjacency::new(&BTreeSet::from([1, 2, 3]), &e, true);
        assert_eq!(a.out[&3], BTreeSet::from([3]));
    }

    #[test]
    #[should_panic(expected = "outside the vertex set")]
    fn endpoint_outside_vertex_set_panics() {
        wcc(&BTreeSet::from([1]), &[(1, 2, 1.0)]);
    }
}
