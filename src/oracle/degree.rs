//! Degrees and the degree distribution of the undirected simple graph.
//!
//! ```
//! use ripples::oracle::{degree, degree_distribution, vertex_set};
//! // A directed triangle 0 -> 1 -> 2 -> 0 with a tail 2 -> 3, an edge 5 -> 6, and vertex 4 from a
//! // vertex file.
//! let edges = [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (2, 3, 1.0), (5, 6, 1.0)];
//! let vertices = vertex_set([4], &edges);
//! let degrees: Vec<u64> = degree(&vertices, &edges).into_values().collect();
//! assert_eq!(degrees, vec![2, 2, 3, 1, 0, 1, 1]);
//! // (degree, how many vertices have it)
//! let histogram: Vec<(u64, u64)> = degree_distribution(&vertices, &edges).into_iter().collect();
//! assert_eq!(histogram, vec![(0, 1), (1, 3), (2, 2), (3, 1)]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use super::{undirected_neighbours, WeightedEdge};
use crate::types::Node;

/// Every vertex's number of distinct neighbours other than itself (direction, duplicates and
/// self-loops ignored).
///
/// Panics if an edge endpoint is not in `vertices`.
pub fn degree(vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) -> BTreeMap<Node, u64> {
    undirected_neighbours(vertices, edges).into_iter().map(|(v, n)| (v, n.len() as u64)).collect()
}

/// For every degree that some vertex has: how many vertices have it (degree 0 included).
pub fn degree_distribution(vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    for d in degree(vertices, edges).into_values() {
        *out.entry(d).or_insert(0) += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degrees_of_a_small_graph() {
        let big = 1u64 << 35;
        let v = BTreeSet::from([0, 1, 2, 3, big]);
        let e = [(0, 1, 1.0), (1, 0, 1.0), (0, big, 1.0), (2, 2, 1.0), (1, big, 2.0), (1, 0, 3.0)];
        assert_eq!(degree(&v, &e), BTreeMap::from([(0, 2), (1, 2), (2, 0), (3, 0), (big, 2)]));
        assert_eq!(degree_distribution(&v, &e), BTreeMap::from([(0, 2), (2, 3)]));
        assert!(degree_distribution(&BTreeSet::new(), &[]).is_empty());
    }
}
