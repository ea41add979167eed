//! Local clustering coefficient (Graphalytics LCC).
//!
//! ```
//! use ripples::oracle::{lcc, vertex_set};
//! // A directed triangle 0 -> 1 -> 2 -> 0 with a tail 2 -> 3, an edge 5 -> 6, and vertex 4 from a
//! // vertex file.
//! let edges = [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (2, 3, 1.0), (5, 6, 1.0)];
//! let vertices = vertex_set([4], &edges);
//! let coefficients = lcc(&vertices, &edges);
//! // N(0) = {1, 2}: of the 2 possible directed edges between them, 1 -> 2 is present.
//! assert_eq!(coefficients[&0], 0.5);
//! // N(2) = {0, 1, 3}: only 0 -> 1 of the 6 possible.
//! assert_eq!(coefficients[&2], 1.0 / 6.0);
//! // Fewer than two neighbours: 0.
//! assert_eq!((coefficients[&3], coefficients[&4]), (0.0, 0.0));
//! ```

use std::collections::{BTreeMap, BTreeSet};

use super::{Adjacency, WeightedEdge};
use crate::types::Node;

/// Local clustering coefficient as the Graphalytics specification defines it (not the directed
/// coefficient of NetworkX or igraph).
///
/// With `N(v) = Nin(v) ∪ Nout(v)` as a set and `d = |N(v)|`: `LCC(v) = 0` if `d <= 1`, else the
/// number of directed edges `(u, w)` with `u, w ∈ N(v)`, divided by `d (d - 1)`.
///
/// Edges are the *set* of present edges with **self-loops ignored**: `v` is never in its own
/// `N(v)`, and an edge `(u, u)` is never counted among the neighbours. For an undirected graph
/// given in both directions, each neighbour-neighbour edge is counted twice, and
/// `2 t / (d (d-1))` is the undirected coefficient; no flag is needed.
///
/// Panics if an edge endpoint is not in `vertices`.
pub fn lcc(vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) -> BTreeMap<Node, f64> {
    let adj = Adjacency::new(vertices, edges, false);
    vertices
        .iter()
        .map(|&v| {
            let neighbours: BTreeSet<Node> = adj.inc[&v].union(&adj.out[&v]).copied().collect();
            let d = neighbours.len();
            if d <= 1 {
                return (v, 0.0);
            }
            let links: usize =
                neighbours.iter().map(|u| adj.out[u].iter().filter(|w| neighbours.contains(w)).count()).sum();
            (v, links as f64 / (d as f64 * (d as f64 - 1.0)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[Node]) -> BTreeSet<Node> {
        v.iter().copied().collect()
    }

    #[test]
    fn directed_counts_arcs() {
        let big = 1u64 << 34;
        let v = set(&[0, 1, 2, big]);
        let e = [(0, 1, 1.0), (2, 0, 1.0), (0, big, 1.0), (1, 2, 1.0), (2, 1, 1.0), (big, 1, 1.0)];
        let r = lcc(&v, &e);
        // N(0) = {1, 2, big}: arcs 1 -> 2, 2 -> 1, big -> 1 => 3 / 6.
        assert_eq!(r[&0], 0.5);
        // N(1) = {0, 2, big}: arcs 2 -> 0, 0 -> big => 2 / 6.
        assert_eq!(r[&1], 2.0 / 6.0);
        // N(big) = {0, 1}: arcs 0 -> 1 => 1 / 2.
        assert_eq!(r[&big], 0.5);
        // N(2) = {0, 1}: arc 0 -> 1 => 1 / 2.
        assert_eq!(r[&2], 0.5);
    }

    #[test]
    fn undirected_triangle_and_corners() {
        let e = super::super::symmetrize(&[(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (2, 3, 1.0)]);
        let v = set(&[0, 1, 2, 3, 4]);
        let r = lcc(&v, &e);
        assert_eq!(r, BTreeMap::from([(0, 1.0), (1, 1.0), (2, 1.0 / 3.0), (3, 0.0), (4, 0.0)]));
        assert!(lcc(&BTreeSet::new(), &[]).is_empty());
        // Self-loops are ignored: they neither add a neighbour nor a counted edge.
        let mut with_loops = e.clone();
        with_loops.extend([(0, 0, 1.0), (2, 2, 1.0), (4, 4, 1.0), (0, 1, 7.0)]);
        assert_eq!(lcc(&v, &with_loops), r);
    }
}
