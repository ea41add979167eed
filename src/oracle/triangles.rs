//! Triangles per vertex of the undirected simple graph.
//!
//! ```
//! use ripples::oracle::{triangles, vertex_set};
//! // A directed triangle 0 -> 1 -> 2 -> 0 with a tail 2 -> 3, an edge 5 -> 6, and vertex 4 from a
//! // vertex file.
//! let edges = [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (2, 3, 1.0), (5, 6, 1.0)];
//! let vertices = vertex_set([4], &edges);
//! // Every vertex of the triangle is in one triangle (direction is ignored).
//! let counts: Vec<u64> = triangles(&vertices, &edges).into_values().collect();
//! assert_eq!(counts, vec![1, 1, 1, 0, 0, 0, 0]);
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::{Excluded, Unbounded};

use super::{undirected_neighbours, WeightedEdge};
use crate::types::Node;

/// Every vertex's number of triangles: sets `{x, y, z}` of three distinct vertices pairwise
/// joined by an edge (direction, duplicates and self-loops ignored).
///
/// Each triangle `x < y < z` is found once, from its edge `{x, y}`, as a common neighbour `z > y`
/// of `x` and `y`. Panics if an edge endpoint is not in `vertices`.
pub fn triangles(vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) -> BTreeMap<Node, u64> {
    let n = undirected_neighbours(vertices, edges);
    let mut count: BTreeMap<Node, u64> = vertices.iter().map(|&v| (v, 0)).collect();
    for (&x, nx) in &n {
        for &y in nx.range((Excluded(x), Unbounded)) {
            let ny = &n[&y];
            let (small, large) = if nx.len() <= ny.len() { (nx, ny) } else { (ny, nx) };
            for &z in small.iter().filter(|&&z| z > y && large.contains(&z)) {
                for v in [x, y, z] {
                    *count.get_mut(&v).unwrap() += 1;
                }
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clique_and_corners() {
        // K4 on {0, 1, 2, big}: 4 triangles, 3 per vertex; a pendant vertex 5 has none.
        let big = u64::MAX;
        let k4 = [0, 1, 2, big];
        let mut e = Vec::new();
        for (i, &a) in k4.iter().enumerate() {
            for &b in &k4[i + 1..] {
                e.push((b, a, 1.0));
            }
        }
        e.extend([(2, 5, 1.0), (5, 5, 1.0), (0, 1, 1.0)]);
        let v = BTreeSet::from([0, 1, 2, 5, 9, big]);
        assert_eq!(triangles(&v, &e), BTreeMap::from([(0, 3), (1, 3), (2, 3), (5, 0), (9, 0), (big, 3)]));
    }
}
