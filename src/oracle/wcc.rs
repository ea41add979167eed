//! Weakly connected components.
//!
//! ```
//! use ripples::oracle::{vertex_set, wcc};
//! // A directed triangle 0 -> 1 -> 2 -> 0 with a tail 2 -> 3, an edge 5 -> 6, and vertex 4 from a
//! // vertex file.
//! let edges = [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (2, 3, 1.0), (5, 6, 1.0)];
//! let vertices = vertex_set([4], &edges);
//! // Labels are the smallest id of each component, direction ignored.
//! let labels: Vec<u64> = wcc(&vertices, &edges).into_values().collect();
//! assert_eq!(labels, vec![0, 0, 0, 0, 4, 5, 5]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use super::{check_endpoints, WeightedEdge};
use crate::types::Node;

/// Weakly connected components: every vertex is labelled with the smallest vertex id of its
/// component, where two vertices are in the same component iff they are connected when edge
/// direction is ignored. Isolated vertices are their own component. Self-loops and duplicate
/// edges change nothing; weights are ignored.
///
/// Panics if an edge endpoint is not in `vertices`.
pub fn wcc(vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) -> BTreeMap<Node, Node> {
    check_endpoints(vertices, edges);
    let mut neighbours: BTreeMap<Node, Vec<Node>> = vertices.iter().map(|&v| (v, Vec::new())).collect();
    for &(u, v, _) in edges {
        neighbours.get_mut(&u).unwrap().push(v);
        neighbours.get_mut(&v).unwrap().push(u);
    }
    let mut label: BTreeMap<Node, Node> = BTreeMap::new();
    // Vertices in ascending order: the first unlabelled vertex of a component is its smallest.
    for &root in vertices {
        if label.contains_key(&root) {
            continue;
        }
        label.insert(root, root);
        let mut stack = vec![root];
        while let Some(u) = stack.pop() {
            for &w in &neighbours[&u] {
                if let std::collections::btree_map::Entry::Vacant(slot) = label.entry(w) {
                    slot.insert(root);
                    stack.push(w);
                }
            }
        }
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
    fn components_ignore_direction() {
        let big = 1u64 << 40;
        let v = set(&[0, 5, 9, big, big + 1, 7]);
        let e = [(9, 0, 1.0), (5, 9, 1.0), (big + 1, big, 1.0), (7, 7, 1.0), (5, 9, 2.0)];
        let r = wcc(&v, &e);
        assert_eq!(r, BTreeMap::from([(0, 0), (5, 0), (9, 0), (7, 7), (big, big), (big + 1, big)]));
    }

    #[test]
    fn empty_and_isolated() {
        assert!(wcc(&BTreeSet::new(), &[]).is_empty());
        assert_eq!(wcc(&set(&[3, u64::MAX]), &[]), BTreeMap::from([(3, 3), (u64::MAX, u64::MAX)]));
    }

    #[test]
    fn long_chain_no_recursion() {
        let n = 200_000u64;
        let v: BTreeSet<Node> = (0..n).collect();
        let e: Vec<WeightedEdge> = (1..n).map(|i| (i, i - 1, 1.0)).collect();
        assert!(wcc(&v, &e).values().all(|&l| l == 0));
    }
}
