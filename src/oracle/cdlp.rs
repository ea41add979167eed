//! Community detection by label propagation (Graphalytics CDLP).
//!
//! ```
//! use ripples::oracle::{cdlp, symmetrize, vertex_set};
//! // An undirected star with centre 0: labels swap between centre and leaves each iteration.
//! let edges = symmetrize(&[(0, 1, 1.0), (0, 2, 1.0), (0, 3, 1.0)]);
//! let vertices = vertex_set([], &edges);
//! let labels = |i| cdlp(&vertices, &edges, i).into_values().collect::<Vec<_>>();
//! assert_eq!(labels(0), vec![0, 1, 2, 3]);
//! // The centre sees labels 1, 2, 3 equally often and takes the smallest; the leaves see 0.
//! assert_eq!(labels(1), vec![1, 0, 0, 0]);
//! assert_eq!(labels(2), vec![0, 1, 1, 1]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use super::{Adjacency, WeightedEdge};
use crate::types::Node;

/// Synchronous label propagation for exactly `iterations` iterations, as the Graphalytics
/// specification defines it.
///
/// `L_0(v) = v`. In each iteration every vertex looks at the multiset
/// `{ L(u) : u ∈ Nin(v) } ⊎ { L(u) : u ∈ Nout(v) }` of the previous iteration's labels and takes
/// its most frequent label, ties going to the smallest label; a vertex with no neighbours keeps
/// its label. On a directed graph a two-way neighbour (`u -> v` and `v -> u`) therefore counts
/// twice.
///
/// `Nin`/`Nout` are over the *set* of present edges with **self-loops ignored**. For an
/// undirected graph given in both directions every neighbour is in both `Nin(v)` and `Nout(v)`,
/// so every label count is exactly doubled: the most frequent label and the tie-break are the
/// same as when counting each neighbour once (the undirected definition), so no flag is needed.
///
/// Panics if an edge endpoint is not in `vertices`.
pub fn cdlp(vertices: &BTreeSet<Node>, edges: &[WeightedEdge], iterations: u32) -> BTreeMap<Node, Node> {
    let adj = Adjacency::new(vertices, edges, false);
    let mut label: BTreeMap<Node, Node> = vertices.iter().map(|&v| (v, v)).collect();
    for _ in 0..iterations {
        let next: BTreeMap<Node, Node> = vertices
            .iter()
            .map(|&v| {
                let mut count: BTreeMap<Node, usize> = BTreeMap::new();
                for u in adj.inc[&v].iter().chain(adj.out[&v].iter()) {
                    *count.entry(label[u]).or_insert(0) += 1;
                }
                // Ascending label order, replacing only on a strictly larger count: the
                // smallest of the most frequent labels wins.
                let mut best: Option<(Node, usize)> = None;
                for (&l, &c) in &count {
                    if best.is_none_or(|(_, bc)| c > bc) {
                        best = Some((l, c));
                    }
                }
                (v, best.map_or(label[&v], |(l, _)| l))
            })
            .collect();
        label = next;
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[Node]) -> BTreeSet<Node> {
        v.iter().copied().collect()
    }

    #[test]
    fn ties_and_two_way_neighbours() {
        // 5 <-> 9 (two-way) and 7 -> 9: for 9, label 5 counts twice, 7 once.
        let v = set(&[5, 7, 9]);
        let e = [(5, 9, 1.0), (9, 5, 1.0), (7, 9, 1.0)];
        let r = cdlp(&v, &e, 1);
        assert_eq!(r[&9], 5);
        // 5 sees {9, 9}; 7 sees {9}.
        assert_eq!(r[&5], 9);
        assert_eq!(r[&7], 9);
        // Tie between labels 3 and 1 at vertex 2: smallest wins.
        let r = cdlp(&set(&[1, 2, 3]), &[(3, 2, 1.0), (1, 2, 1.0)], 1);
        assert_eq!(r, BTreeMap::from([(1, 2), (2, 1), (3, 2)]));
    }

    #[test]
    fn synchronous_not_in_place() {
        // Path 1 - 2 - 3 undirected. Synchronously: 1 -> 2, 2 -> min(1,3) = 1, 3 -> 2.
        let e = super::super::symmetrize(&[(1, 2, 1.0), (2, 3, 1.0)]);
        let r = cdlp(&set(&[1, 2, 3]), &e, 1);
        assert_eq!(r, BTreeMap::from([(1, 2), (2, 1), (3, 2)]));
        let r = cdlp(&set(&[1, 2, 3]), &e, 2);
        assert_eq!(r, BTreeMap::from([(1, 1), (2, 2), (3, 1)]));
    }

    #[test]
    fn corners() {
        assert!(cdlp(&BTreeSet::new(), &[], 3).is_empty());
        let big = 1u64 << 45;
        // Isolated vertex keeps its label; a self-loop is ignored (vertex 4 stays isolated).
        let v = set(&[0, big, 4]);
        let e = [(0, big, 1.0), (4, 4, 1.0)];
        assert_eq!(cdlp(&v, &e, 0), BTreeMap::from([(0, 0), (big, big), (4, 4)]));
        assert_eq!(cdlp(&v, &e, 1), BTreeMap::from([(0, big), (big, 0), (4, 4)]));
        assert_eq!(cdlp(&v, &e, 2), BTreeMap::from([(0, 0), (big, big), (4, 4)]));
        // Duplicates count once.
        let e2 = [(0, big, 1.0), (0, big, 2.0), (4, 4, 1.0)];
        assert_eq!(cdlp(&v, &e2, 1), cdlp(&v, &e, 1));
    }
}
