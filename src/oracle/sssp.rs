//! Single-source shortest paths (Graphalytics SSSP).
//!
//! ```
//! use ripples::oracle::{sssp, vertex_set};
//! let edges = [(0, 1, 0.5), (1, 2, 0.25), (0, 2, 1.0), (2, 3, 2.0), (5, 6, 1.0)];
//! let vertices = vertex_set([4], &edges);
//! let lengths: Vec<f64> = sssp(&vertices, &edges, 0).into_values().collect();
//! let inf = f64::INFINITY;
//! // 0 -> 1 -> 2 (0.75) is shorter than the direct 0 -> 2 (1.0).
//! assert_eq!(lengths, vec![0.0, 0.5, 0.75, 2.75, inf, inf, inf]);
//! ```

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use super::{check_endpoints, WeightedEdge};
use crate::types::Node;

/// Length of the shortest path from `source` to every vertex along out-edges, the length of a
/// path being the sum of its edge weights (Dijkstra's algorithm, in `f64`). The source has 0.0;
/// unreachable vertices have `f64::INFINITY`; if `source` is not in `vertices`, every vertex is
/// unreachable.
///
/// When the same `(src, dst)` pair is given with several weights, the smallest counts (the
/// others can never be on a shortest path anyway). Zero weights are allowed; self-loops change
/// nothing.
///
/// Panics if an edge endpoint is not in `vertices` or a weight is negative or NaN (Graphalytics
/// weights are `>= 0`).
pub fn sssp(vertices: &BTreeSet<Node>, edges: &[WeightedEdge], source: Node) -> BTreeMap<Node, f64> {
    check_endpoints(vertices, edges);
    let mut out: BTreeMap<Node, BTreeMap<Node, f64>> = vertices.iter().map(|&v| (v, BTreeMap::new())).collect();
    for &(u, v, w) in edges {
        assert!(w >= 0.0, "oracle: sssp edge ({u}, {v}) has weight {w}, which is not >= 0");
        let slot = out.get_mut(&u).unwrap().entry(v).or_insert(w);
        *slot = slot.min(w);
    }

    let mut dist: BTreeMap<Node, f64> = vertices.iter().map(|&v| (v, f64::INFINITY)).collect();
    if !vertices.contains(&source) {
        return dist;
    }
    let mut done: BTreeSet<Node> = BTreeSet::new();
    let mut heap = BinaryHeap::new();
    dist.insert(source, 0.0);
    heap.push(Reverse((Dist(0.0), source)));
    while let Some(Reverse((Dist(d), u))) = heap.pop() {
        if !done.insert(u) {
            continue; // A stale entry: u was settled with a smaller distance.
        }
        for (&w, &weight) in &out[&u] {
            let candidate = d + weight;
            if candidate < dist[&w] {
                dist.insert(w, candidate);
                heap.push(Reverse((Dist(candidate), w)));
            }
        }
    }
    dist
}

/// A non-NaN distance, totally ordered for the heap.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Dist(f64);

impl Eq for Dist {}

impl PartialOrd for Dist {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Dist {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[Node]) -> BTreeSet<Node> {
        v.iter().copied().collect()
    }

    #[test]
    fn shortest_paths() {
        let big = 1u64 << 50;
        let v = set(&[0, 1, 2, 3, big]);
        let e = [
            (0, 1, 4.0),
            (0, 2, 1.0),
            (2, 1, 2.0),
            (1, big, 0.0), // zero weight
            (1, 1, 0.0),   // self-loop
            (2, 1, 0.5),   // the same pair again, lighter
            (3, 0, 1.0),
        ];
        let r = sssp(&v, &e, 0);
        assert_eq!(r, BTreeMap::from([(0, 0.0), (1, 1.5), (2, 1.0), (3, f64::INFINITY), (big, 1.5)]));
    }

    #[test]
    fn zero_weight_cycle_and_corners() {
        let v = set(&[1, 2, 3]);
        let e = [(1, 2, 0.0), (2, 1, 0.0), (2, 3, 0.0)];
        assert_eq!(sssp(&v, &e, 1), BTreeMap::from([(1, 0.0), (2, 0.0), (3, 0.0)]));
        // Absent source: everything unreachable.
        assert!(sssp(&v, &e, 0).values().all(|d| *d == f64::INFINITY));
        // Empty graph; isolated source; vertex 0 as source.
        assert!(sssp(&BTreeSet::new(), &[], 0).is_empty());
        assert_eq!(sssp(&set(&[0]), &[], 0), BTreeMap::from([(0, 0.0)]));
    }

    #[test]
    #[should_panic(expected = "not >= 0")]
    fn negative_weight_panics() {
        sssp(&set(&[1, 2]), &[(1, 2, -1.0)], 1);
    }
}
