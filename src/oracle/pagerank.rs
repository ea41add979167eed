//! PageRank (Graphalytics PR).
//!
//! ```
//! use ripples::oracle::{pagerank, vertex_set};
//! // 0 -> 1; vertex 1 is a sink whose rank is spread over both vertices.
//! let edges = [(0, 1, 1.0)];
//! let vertices = vertex_set([], &edges);
//! let ranks = pagerank(&vertices, &edges, 0.85, 1);
//! // PR_1(0) = 0.15/2 + 0.85/2 * 0.5;  PR_1(1) = 0.15/2 + 0.85 * 0.5 + 0.85/2 * 0.5
//! assert!((ranks[&0] - 0.2875).abs() < 1e-12);
//! assert!((ranks[&1] - 0.7125).abs() < 1e-12);
//! assert!((ranks.values().sum::<f64>() - 1.0).abs() < 1e-12);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use super::{Adjacency, WeightedEdge};
use crate::types::Node;

/// PageRank exactly as the Graphalytics specification defines it: a fixed number of
/// synchronous iterations, no convergence test, all arithmetic in `f64`. With `n = |V|`:
///
/// ```text
/// PR_0(v) = 1/n
/// PR_i(v) = (1-d)/n + d * Σ_{u ∈ Nin(v)} PR_{i-1}(u)/|Nout(u)| + (d/n) * Σ_{w sink} PR_{i-1}(w)
/// ```
///
/// where a sink is a vertex with `|Nout| = 0`, whose rank is spread over every vertex (itself
/// included). `iterations = 0` gives `1/n` everywhere; an empty vertex set gives an empty map.
///
/// `Nin`/`Nout` are over the *set* of present edges with **self-loops ignored** (a vertex whose
/// only out-edge is a self-loop is a sink). For an undirected graph given in both directions,
/// `Nout(u) = Nin(u) = N(u)`, which is the undirected definition; no flag is needed.
///
/// Panics if an edge endpoint is not in `vertices`.
pub fn pagerank(
    vertices: &BTreeSet<Node>,
    edges: &[WeightedEdge],
    damping: f64,
    iterations: u32,
) -> BTreeMap<Node, f64> {
    let adj = Adjacency::new(vertices, edges, false);
    let n = vertices.len() as f64;
    let mut rank: BTreeMap<Node, f64> = vertices.iter().map(|&v| (v, 1.0 / n)).collect();
    for _ in 0..iterations {
        let sink_mass: f64 = vertices.iter().filter(|v| adj.out[v].is_empty()).map(|v| rank[v]).sum();
        let next: BTreeMap<Node, f64> = vertices
            .iter()
            .map(|&v| {
                let incoming: f64 = adj.inc[&v].iter().map(|u| rank[u] / adj.out[u].len() as f64).sum();
                (v, (1.0 - damping) / n + damping * incoming + damping / n * sink_mass)
            })
            .collect();
        rank = next;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[Node]) -> BTreeSet<Node> {
        v.iter().copied().collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12
    }

    #[test]
    fn hand_computed() {
        // 0 -> 1, 1 -> 0, 1 -> 2; 2 is a sink. d = 0.5, n = 3.
        let v = set(&[0, 1, 2]);
        let e = [(0, 1, 1.0), (1, 0, 1.0), (1, 2, 1.0)];
        let r1 = pagerank(&v, &e, 0.5, 1);
        let t = 1.0 / 3.0;
        // base = 0.5/3, sink term = 0.5/3 * 1/3.
        let base = 0.5 / 3.0 + 0.5 / 3.0 * t;
        assert!(close(r1[&0], base + 0.5 * (t / 2.0)));
        assert!(close(r1[&1], base + 0.5 * t));
        assert!(close(r1[&2], base + 0.5 * (t / 2.0)));
        // Mass is conserved.
        for i in 0..10 {
            let r = pagerank(&v, &e, 0.85, i);
            assert!(close(r.values().sum::<f64>(), 1.0));
        }
        assert_eq!(pagerank(&v, &e, 0.85, 0), BTreeMap::from([(0, t), (1, t), (2, t)]));
    }

    #[test]
    fn corners() {
        assert!(pagerank(&BTreeSet::new(), &[], 0.85, 5).is_empty());
        // Isolated vertices only: all sinks, uniform forever.
        let r = pagerank(&set(&[0, 1u64 << 40]), &[], 0.85, 7);
        assert!(r.values().all(|&x| close(x, 0.5)));
        // A self-loop is ignored: vertex 1 (only a self-loop) is a sink, same as without it.
        let v = set(&[0, 1]);
        let with = pagerank(&v, &[(0, 1, 1.0), (1, 1, 1.0)], 0.85, 3);
        let without = pagerank(&v, &[(0, 1, 1.0)], 0.85, 3);
        assert_eq!(with, without);
        // Duplicates count once.
        let dup = pagerank(&v, &[(0, 1, 1.0), (0, 1, 2.0)], 0.85, 3);
        assert_eq!(dup, without);
    }
}
