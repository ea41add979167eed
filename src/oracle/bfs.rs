//! Breadth-first search (Graphalytics BFS).
//!
//! ```
//! use ripples::oracle::{bfs, vertex_set, BFS_UNREACHABLE};
//! // A directed triangle 0 -> 1 -> 2 -> 0 with a tail 2 -> 3, an edge 5 -> 6, and vertex 4 from a
//! // vertex file.
//! let edges = [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (2, 3, 1.0), (5, 6, 1.0)];
//! let vertices = vertex_set([4], &edges);
//! let hops: Vec<u64> = bfs(&vertices, &edges, 0).into_values().collect();
//! let u = BFS_UNREACHABLE;
//! assert_eq!(hops, vec![0, 1, 2, 3, u, u, u]);
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::{check_endpoints, WeightedEdge};
use crate::types::Node;

pub use crate::types::format::BFS_UNREACHABLE;

/// Hop count of the shortest path from `source` to every vertex along out-edges: the source has
/// 0, unreachable vertices have [`BFS_UNREACHABLE`]. If `source` is not in `vertices`, every
/// vertex is unreachable. Weights, duplicates and self-loops change nothing.
///
/// Panics if an edge endpoint is not in `vertices`.
pub fn bfs(vertices: &BTreeSet<Node>, edges: &[WeightedEdge], source: Node) -> BTreeMap<Node, u64> {
    check_endpoints(vertices, edges);
    let mut out: BTreeMap<Node, Vec<Node>> = vertices.iter().map(|&v| (v, Vec::new())).collect();
    for &(u, v, _) in edges {
        out.get_mut(&u).unwrap().push(v);
    }
    let mut dist: BTreeMap<Node, u64> = vertices.iter().map(|&v| (v, BFS_UNREACHABLE)).collect();
    if !vertices.contains(&source) {
        return dist;
    }
    dist.insert(source, 0);
    let mut queue = VecDeque::from([source]);
    while let Some(u) = queue.pop_front() {
        let next = dist[&u] + 1;
        for &w in &out[&u] {
            if dist[&w] == BFS_UNREACHABLE {
                dist.insert(w, next);
                queue.push_back(w);
            }
        }
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[Node]) -> BTreeSet<Node> {
        v.iter().copied().collect()
    }

    #[test]
    fn directed_hops() {
        let big = 1u64 << 33;
        let v = set(&[0, 1, 2, 3, big, 9]);
        let e = [(0, 1, 5.0), (1, 2, 1.0), (0, 2, 9.0), (2, big, 1.0), (big, 0, 1.0), (3, 0, 1.0), (2, 2, 1.0)];
        let r = bfs(&v, &e, 0);
        assert_eq!(r, BTreeMap::from([(0, 0), (1, 1), (2, 1), (big, 2), (3, BFS_UNREACHABLE), (9, BFS_UNREACHABLE)]));
        assert_eq!(BFS_UNREACHABLE, 9223372036854775807);
    }

    #[test]
    fn source_corner_cases() {
        let v = set(&[1, 2]);
        let e = [(1, 2, 1.0)];
        // Absent source: all unreachable.
        assert_eq!(bfs(&v, &e, 7), BTreeMap::from([(1, BFS_UNREACHABLE), (2, BFS_UNREACHABLE)]));
        // Isolated source.
        assert_eq!(bfs(&set(&[4]), &[], 4), BTreeMap::from([(4, 0)]));
        // Empty graph.
        assert!(bfs(&BTreeSet::new(), &[], 0).is_empty());
        // Source with a high id.
        let big = u64::MAX - 1;
        assert_eq!(bfs(&set(&[big, 0]), &[(big, 0, 1.0)], big), BTreeMap::from([(big, 0), (0, 1)]));
    }
}
