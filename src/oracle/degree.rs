//! Degrees and the degree distribution of the undirected simple graph.

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
