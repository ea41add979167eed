//! Core numbers of the undirected simple graph, by peeling.
//!
//! ```
//! use ripples::oracle::{kcore, vertex_set};
//! // A directed triangle 0 -> 1 -> 2 -> 0 with a tail 2 -> 3, an edge 5 -> 6, and vertex 4 from a
//! // vertex file.
//! let edges = [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (2, 3, 1.0), (5, 6, 1.0)];
//! let vertices = vertex_set([4], &edges);
//! // The triangle is the 2-core; the tail and the lone edge are in the 1-core; 4 has no neighbour.
//! let cores: Vec<u64> = kcore(&vertices, &edges).into_values().collect();
//! assert_eq!(cores, vec![2, 2, 2, 1, 0, 1, 1]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use super::{undirected_neighbours, WeightedEdge};
use crate::types::Node;

/// Every vertex's core number: the largest `k` such that it belongs to a subgraph in which every
/// vertex has at least `k` neighbours (direction, duplicates and self-loops ignored; a vertex
/// without neighbours has 0).
///
/// Peeling: repeatedly remove a vertex of smallest remaining degree; its core number is the
/// largest remaining degree seen at a removal so far. Panics if an edge endpoint is not in
/// `vertices`.
pub fn kcore(vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) -> BTreeMap<Node, u64> {
    let n = undirected_neighbours(vertices, edges);
    let mut degree: BTreeMap<Node, usize> = n.iter().map(|(&v, s)| (v, s.len())).collect();
    let mut queue: BTreeSet<(usize, Node)> = degree.iter().map(|(&v, &d)| (d, v)).collect();
    let mut core = BTreeMap::new();
    let mut k = 0;
    while let Some((d, v)) = queue.pop_first() {
        k = k.max(d);
        core.insert(v, k as u64);
        for u in &n[&v] {
            let du = degree[u];
            if queue.remove(&(du, *u)) {
                degree.insert(*u, du - 1);
                queue.insert((du - 1, *u));
            }
        }
    }
    core
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clique_with_a_tail() {
        // K4 on {1, 2, 3, 4}, a path 4 - 5 - 6, vertex 0 isolated, a loop on 6.
        let mut e = Vec::new();
        for a in 1..=4u64 {
            for b in a + 1..=4 {
                e.push((a, b, 1.0));
            }
        }
        e.extend([(4, 5, 1.0), (6, 5, 1.0), (6, 6, 1.0)]);
        let v = BTreeSet::from([0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(kcore(&v, &e), BTreeMap::from([(0, 0), (1, 3), (2, 3), (3, 3), (4, 3), (5, 1), (6, 1)]));
        // A cycle is a 2-core.
        let c: Vec<_> = (0..5u64).map(|i| (i, (i + 1) % 5, 1.0)).collect();
        assert!(kcore(&(0..5).collect(), &c).values().all(|&k| k == 2));
    }
}
