//! Bipartiteness per connected component of the undirected simple graph.
//!
//! ```
//! use ripples::oracle::{bipartite, vertex_set};
//! // A directed triangle 0 -> 1 -> 2 -> 0 with a tail 2 -> 3, an edge 5 -> 6, and vertex 4 from a
//! // vertex file.
//! let edges = [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (2, 3, 1.0), (5, 6, 1.0)];
//! let vertices = vertex_set([4], &edges);
//! // The triangle is an odd cycle (2 for its whole component); 5 - 6 is 2-coloured from its
//! // smallest vertex; 4 alone has colour 0.
//! let colours: Vec<u64> = bipartite(&vertices, &edges).into_values().collect();
//! assert_eq!(colours, vec![2, 2, 2, 2, 0, 0, 1]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use super::{undirected_neighbours, WeightedEdge};
use crate::types::Node;

/// The value of a vertex whose component has an odd cycle.
pub const ODD_CYCLE: u64 = 2;

/// Every vertex's colour in a bipartite component (0/1: the parity of its hop distance to the
/// component's smallest vertex), or [`ODD_CYCLE`] for every vertex of a component with a cycle of
/// odd length (direction, duplicates and self-loops ignored).
///
/// A breadth-first search from the smallest vertex of each component gives the parities; the
/// component is bipartite iff no edge joins two vertices of the same parity. Panics if an edge
/// endpoint is not in `vertices`.
pub fn bipartite(vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) -> BTreeMap<Node, u64> {
    let n = undirected_neighbours(vertices, edges);
    let mut out: BTreeMap<Node, u64> = BTreeMap::new();
    // Ascending order: the first vertex of a component met is its smallest.
    for &root in vertices {
        if out.contains_key(&root) {
            continue;
        }
        let mut members = vec![root];
        out.insert(root, 0);
        let mut next = 0;
        while next < members.len() {
            let u = members[next];
            next += 1;
            for &w in &n[&u] {
                if !out.contains_key(&w) {
                    out.insert(w, 1 - out[&u]);
                    members.push(w);
                }
            }
        }
        let odd = members.iter().any(|u| n[u].iter().any(|w| out[u] == out[w]));
        if odd {
            for u in members {
                out.insert(u, ODD_CYCLE);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_and_odd_cycles() {
        // An even cycle 0-1-2-3 and an odd cycle 10-11-12, a pendant 13 on it, an isolated 20,
        // a self-loop on 1 (ignored).
        let e = [
            (1, 0, 1.0),
            (1, 2, 1.0),
            (3, 2, 1.0),
            (3, 0, 1.0),
            (1, 1, 1.0),
            (10, 11, 1.0),
            (11, 12, 1.0),
            (12, 10, 1.0),
            (13, 12, 1.0),
        ];
        let v = BTreeSet::from([0, 1, 2, 3, 10, 11, 12, 13, 20]);
        let want = BTreeMap::from([(0, 0), (1, 1), (2, 0), (3, 1), (10, 2), (11, 2), (12, 2), (13, 2), (20, 0)]);
        assert_eq!(bipartite(&v, &e), want);
    }
}
