//! Strongly connected components (not a Graphalytics algorithm; checked by its own tests).
//!
//! ```
//! use ripples::oracle::{scc, vertex_set};
//! // A directed triangle 0 -> 1 -> 2 -> 0 with a tail 2 -> 3, an edge 5 -> 6, and vertex 4 from a
//! // vertex file.
//! let edges = [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0), (2, 3, 1.0), (5, 6, 1.0)];
//! let vertices = vertex_set([4], &edges);
//! // The triangle is one component; every other vertex is on no cycle: its own component.
//! let labels: Vec<u64> = scc(&vertices, &edges).into_values().collect();
//! assert_eq!(labels, vec![0, 0, 0, 3, 4, 5, 6]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use super::{check_endpoints, WeightedEdge};
use crate::types::Node;

/// Strongly connected components: every vertex is labelled with the smallest vertex id of its
/// component, where `u` and `v` are in the same component iff each reaches the other along
/// out-edges. A vertex on no cycle is its own component. Self-loops, duplicates and weights
/// change nothing.
///
/// Kosaraju's algorithm with explicit stacks (no recursion, so long paths cannot overflow the
/// call stack): a depth-first pass records vertices in order of finishing; a second pass over
/// the reversed edges, taking start vertices in reverse finishing order, visits exactly one
/// component per start.
///
/// Panics if an edge endpoint is not in `vertices`.
pub fn scc(vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) -> BTreeMap<Node, Node> {
    check_endpoints(vertices, edges);
    let ids: Vec<Node> = vertices.iter().copied().collect();
    let index: BTreeMap<Node, usize> = ids.iter().enumerate().map(|(i, &v)| (v, i)).collect();
    let n = ids.len();
    let mut out = vec![Vec::new(); n];
    let mut rev = vec![Vec::new(); n];
    for &(u, v, _) in edges {
        let (iu, iv) = (index[&u], index[&v]);
        out[iu].push(iv);
        rev[iv].push(iu);
    }

    // Pass 1: finishing order of a depth-first search over the out-edges.
    let mut visited = vec![false; n];
    let mut finished = Vec::with_capacity(n);
    for start in 0..n {
        if visited[start] {
            continue;
        }
        visited[start] = true;
        // (vertex, number of its out-edges already looked at)
        let mut stack = vec![(start, 0usize)];
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&w) = out[v].get(*next) {
                *next += 1;
                if !visited[w] {
                    visited[w] = true;
                    stack.push((w, 0));
                }
            } else {
                stack.pop();
                finished.push(v);
            }
        }
    }

    // Pass 2: reversed edges, starts in reverse finishing order; each search is one component.
    let mut component: Vec<Option<Node>> = vec![None; n];
    for &start in finished.iter().rev() {
        if component[start].is_some() {
            continue;
        }
        let mut members = vec![start];
        let mut seen = BTreeSet::from([start]);
        let mut stack = vec![start];
        while let Some(v) = stack.pop() {
            for &w in &rev[v] {
                if component[w].is_none() && seen.insert(w) {
                    members.push(w);
                    stack.push(w);
                }
            }
        }
        let label = members.iter().map(|&i| ids[i]).min().unwrap();
        for i in members {
            component[i] = Some(label);
        }
    }

    ids.iter().zip(component).map(|(&v, c)| (v, c.unwrap())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[Node]) -> BTreeSet<Node> {
        v.iter().copied().collect()
    }

    #[test]
    fn components() {
        let big = 1u64 << 36;
        // Cycle 0 -> big -> 5 -> 0, then 5 -> 6 <-> 7, 7 -> 8, 9 with a self-loop, 10 isolated.
        let v = set(&[0, big, 5, 6, 7, 8, 9, 10]);
        let e = [
            (0, big, 1.0),
            (big, 5, 1.0),
            (5, 0, 1.0),
            (5, 6, 1.0),
            (6, 7, 1.0),
            (7, 6, 1.0),
            (7, 8, 1.0),
            (9, 9, 1.0),
            (0, big, 3.0),
        ];
        assert_eq!(scc(&v, &e), BTreeMap::from([(0, 0), (big, 0), (5, 0), (6, 6), (7, 6), (8, 8), (9, 9), (10, 10)]));
        assert!(scc(&BTreeSet::new(), &[]).is_empty());
    }

    #[test]
    fn long_cycle_and_chain_no_recursion() {
        let n = 200_000u64;
        let v: BTreeSet<Node> = (0..n).collect();
        let mut e: Vec<WeightedEdge> = (1..n).map(|i| (i - 1, i, 1.0)).collect();
        // A chain: every vertex alone.
        assert!(scc(&v, &e).iter().all(|(k, l)| k == l));
        // Close it into a cycle: one component.
        e.push((n - 1, 0, 1.0));
        assert!(scc(&v, &e).values().all(|&l| l == 0));
    }

    #[test]
    fn agrees_with_mutual_reachability() {
        // Small pseudo-random graphs: compare with the definition via BFS reachability.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..50 {
            let n = rng.gen_range(1..12u64);
            let v: BTreeSet<Node> = (0..n).map(|i| i * 3).collect();
            let m = rng.gen_range(0..3 * n);
            let e: Vec<WeightedEdge> =
                (0..m).map(|_| (rng.gen_range(0..n) * 3, rng.gen_range(0..n) * 3, 1.0)).collect();
            let reach: BTreeMap<Node, BTreeMap<Node, u64>> =
                v.iter().map(|&s| (s, super::super::bfs(&v, &e, s))).collect();
            let r = scc(&v, &e);
            for &a in &v {
                let expected = v
                    .iter()
                    .copied()
                    .filter(|b| {
                        reach[&a][b] != super::super::BFS_UNREACHABLE && reach[b][&a] != super::super::BFS_UNREACHABLE
                    })
                    .min()
                    .unwrap();
                assert_eq!(r[&a], expected);
            }
        }
    }
}
