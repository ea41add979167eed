//! The one seam between the benchmark and the sequential oracle ([`crate::oracle`]).
//!
//! The oracle is test code: plain, obviously correct sequential implementations the dataflows
//! are checked against. The `recompute` baseline needs exactly that, a from-scratch sequential
//! computation over the live graph, for the algorithms that have no faster sequential form here
//! (WCC uses dense union-find instead). [`from_scratch`] is the only place outside the tests
//! that calls the oracle; the agreement check compares the systems' result files with each other
//! and does not use it.
//!
//! ```
//! use ripples::bench::reference::from_scratch;
//! let edges = [(0, 1, 1.0), (1, 2, 1.0)];
//! assert_eq!(from_scratch("bfs", &edges, 0), Some(vec![(0, 0), (1, 1), (2, 2)]));
//! assert_eq!(from_scratch("wcc", &edges, 0), None, "WCC has its own union-find baseline");
//! ```

use std::collections::BTreeSet;

use crate::oracle;
use crate::types::Node;

/// The algorithms [`from_scratch`] computes.
pub const ALGORITHMS: &[&str] = &["bfs", "sssp", "pagerank", "cdlp", "lcc", "scc", "triangles", "kcore", "bipartite"];

/// `algorithm` (one of [`ALGORITHMS`]) computed from scratch over `edges` (unit weights),
/// with the benchmark's parameters (source `source` for BFS/SSSP, 10 iterations, damping 0.85);
/// values as the dataflows emit them (floats as their bit patterns). `None` for another algorithm.
pub fn from_scratch(algorithm: &str, edges: &[(Node, Node, f64)], source: Node) -> Option<Vec<(Node, u64)>> {
    let vertices: BTreeSet<Node> = oracle::vertex_set([], edges);
    let floats = |m: std::collections::BTreeMap<Node, f64>| m.into_iter().map(|(k, v)| (k, v.to_bits())).collect();
    Some(match algorithm {
        "bfs" => oracle::bfs(&vertices, edges, source).into_iter().collect(),
        "sssp" => floats(oracle::sssp(&vertices, edges, source)),
        "pagerank" => floats(oracle::pagerank(&vertices, edges, 0.85, 10)),
        "cdlp" => oracle::cdlp(&vertices, edges, 10).into_iter().collect(),
        "lcc" => floats(oracle::lcc(&vertices, edges)),
        "scc" => oracle::scc(&vertices, edges).into_iter().collect(),
        "triangles" => oracle::triangles(&vertices, edges).into_iter().collect(),
        "kcore" => oracle::kcore(&vertices, edges).into_iter().collect(),
        "bipartite" => oracle::bipartite(&vertices, edges).into_iter().collect(),
        _ => return None,
    })
}
