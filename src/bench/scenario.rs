//! Benchmark scenarios: [`Scenario`] (the parameters, passed to each child process as JSON) and
//! [`Stream`] (the stream a scenario generates, deterministically from its seed).
//!
//! ```
//! use ripples::bench::Scenario;
//! // `ripples bench wcc-churn --scale 8 --epochs 5`: an R-MAT graph of 16 * 2^8 edges, then five
//! // epochs of 1000 deletions of present copies and 1000 insertions of new edges.
//! let scenario = Scenario { scale: 8, epochs: 5, ..Scenario::new("wcc-churn").unwrap() };
//! assert_eq!(scenario.algorithm(), "wcc");
//! let stream = scenario.stream();
//! assert_eq!(stream.initial.len(), 16 << 8);
//! assert_eq!(stream.updates.len(), 5 * 2 * 1000);
//! assert_eq!(stream.batch, 2000);
//! // Generated from the seed: every system sees the same stream.
//! assert_eq!(scenario.stream().updates, stream.updates);
//! assert!(Scenario::new("wcc-fast").unwrap_err().to_string().starts_with("unknown scenario 'wcc-fast'"));
//! ```

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::BenchError;
use crate::sources::{generate, stream};
use crate::types::{Node, Update};

/// A benchmark scenario and its parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scenario {
    /// One of [`SCENARIOS`]; it selects the algorithm and the stream shape.
    pub name: String,
    /// R-MAT scale: the graph has `2^scale` vertex ids.
    pub scale: u32,
    /// R-MAT edge factor: `edge_factor * 2^scale` generated edges.
    pub edge_factor: u64,
    /// Updates (for `wcc-window`: edges inserted, and as many expired; for `wcc-churn`: edges
    /// deleted, and as many inserted) per epoch.
    pub batch: usize,
    /// Sliding-window size in edges (`wcc-window`).
    pub window: usize,
    /// Number of update epochs (`wcc-window` and churn scenarios; `wcc-insert` uses the whole graph).
    pub epochs: usize,
    /// Seed of the generated graph and stream (the same seed, the same stream).
    pub seed: u64,
    /// Timely worker threads per system.
    pub workers: usize,
    /// Each system stops feeding epochs after this many seconds of update epochs (its result is
    /// then marked partial).
    pub time_limit_secs: f64,
    /// `ripples bench --profile DIR`: the system (a dataflow under the driver) writes its profile
    /// here (`DIR/SYSTEM.json` and `.svg`, set per child).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<std::path::PathBuf>,
}

/// The scenarios `ripples bench` knows.
pub const SCENARIOS: &[&str] = &[
    "wcc-insert",
    "wcc-window",
    "wcc-churn",
    "bfs-churn",
    "sssp-churn",
    "pagerank-churn",
    "cdlp-churn",
    "lcc-churn",
    "scc-churn",
    "triangles-churn",
    "kcore-churn",
    "bipartite-churn",
    "spanner-insert",
    "matching-insert",
];

/// The churn scenarios whose epochs delete and insert exactly half a batch each (R-MAT scale 16,
/// epochs of 500 deletions of present edges + 500 insertions of random edges).
const BALANCED_CHURN: &[&str] = &["triangles-churn", "kcore-churn", "bipartite-churn"];

/// The stream of a scenario.
#[derive(Clone, Debug)]
pub struct Stream {
    /// The initial graph (epoch 0).
    pub initial: Vec<(Node, Node)>,
    /// The updates, in order.
    pub updates: Vec<Update>,
    /// Updates per epoch.
    pub batch: usize,
    /// Edges live at the end (the denominator of `bytes_per_edge`).
    pub live_edges: u64,
}

impl Scenario {
    /// The defaults of a scenario.
    pub fn new(name: &str) -> Result<Scenario, BenchError> {
        let base = Scenario {
            name: name.to_string(),
            scale: 20,
            edge_factor: 16,
            batch: 100_000,
            window: 1_000_000,
            epochs: 0,
            seed: 1,
            workers: 2,
            time_limit_secs: 120.0,
            profile: None,
        };
        Ok(match name {
            "wcc-insert" => base,
            // The order-dependent summaries: R-MAT 16 (1,048,576 edges) inserted in arrival order.
            "spanner-insert" | "matching-insert" => Scenario { scale: 16, batch: 10_000, ..base },
            "wcc-window" => Scenario { batch: 1_000, epochs: 500, ..base },
            // The loaded R-MAT graph, then epochs of `batch` deletions of random present copies
            // and `batch` insertions of new R-MAT edges.
            "wcc-churn" => Scenario { batch: 1_000, epochs: 500, ..base },
            n if BALANCED_CHURN.contains(&n) => Scenario { scale: 16, batch: 1_000, epochs: 20, ..base },
            n if n.ends_with("-churn") && SCENARIOS.contains(&n) => {
                Scenario { scale: 14, batch: 100, epochs: 50, ..base }
            }
            other => return Err(BenchError::UnknownScenario { name: other.to_string(), known: SCENARIOS.to_vec() }),
        })
    }

    /// The algorithm of a churn or insert scenario (`bfs-churn` -> `bfs`, `spanner-insert` ->
    /// `spanner`); `wcc` otherwise.
    pub fn algorithm(&self) -> &str {
        self.name.strip_suffix("-churn").or_else(|| self.name.strip_suffix("-insert")).unwrap_or("wcc")
    }

    /// Whether the scenario's stream never deletes (`wcc-insert`, `spanner-insert`,
    /// `matching-insert`).
    pub fn insert_only(&self) -> bool {
        self.name.ends_with("-insert")
    }

    /// The stream.
    pub fn stream(&self) -> Stream {
        let edges = generate::rmat(self.scale, self.edge_factor, self.seed);
        match self.name.as_str() {
            "wcc-insert" | "spanner-insert" | "matching-insert" => {
                let n = edges.len() as u64;
                Stream { initial: Vec::new(), updates: stream::insert_only(&edges), batch: self.batch, live_edges: n }
            }
            "wcc-window" => {
                let window = self.window.min(edges.len());
                let end = (window + self.batch * self.epochs).min(edges.len());
                let updates = stream::sliding_window(&edges[..end], window).split_off(window);
                Stream { initial: edges[..window].to_vec(), updates, batch: 2 * self.batch, live_edges: window as u64 }
            }
            "wcc-churn" => {
                let wanted = (self.batch * self.epochs) as u64;
                let factor = wanted.div_ceil(1u64 << self.scale).max(1);
                let fresh = generate::rmat(self.scale, factor, self.seed + 7);
                let updates = stream::churn_replace(&edges, &fresh, self.epochs, self.batch, self.seed + 1);
                let live_edges = edges.len() as u64;
                Stream { initial: edges, updates, batch: 2 * self.batch, live_edges }
            }
            _ => {
                let updates = if BALANCED_CHURN.contains(&self.name.as_str()) {
                    balanced_churn(&edges, self.batch, self.epochs, self.seed + 1)
                } else {
                    stream::churn(&edges, self.batch * self.epochs, 0.5, self.seed + 1)
                };
                let inserted = updates.iter().filter(|u| u.diff > 0).count() as u64;
                let deleted = updates.len() as u64 - inserted;
                let live_edges = edges.len() as u64 + inserted - deleted;
                Stream { initial: edges, updates, batch: self.batch, live_edges }
            }
        }
    }

    /// A source vertex for BFS/SSSP: the vertex of largest out-degree in the initial graph.
    pub fn source(initial: &[(Node, Node)]) -> Node {
        let mut degree: HashMap<Node, u64> = HashMap::new();
        for &(s, _) in initial {
            *degree.entry(s).or_insert(0) += 1;
        }
        degree.into_iter().max_by_key(|&(v, d)| (d, std::cmp::Reverse(v))).map(|(v, _)| v).unwrap_or(0)
    }
}

/// `epochs` epochs of `batch / 2` deletions of present edge copies (uniformly at random) followed
/// by `batch - batch / 2` insertions of edges between random vertices of the initial graph.
fn balanced_churn(initial: &[(Node, Node)], batch: usize, epochs: usize, seed: u64) -> Vec<Update> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut vertices: Vec<Node> = initial.iter().flat_map(|&(s, d)| [s, d]).collect();
    vertices.sort_unstable();
    vertices.dedup();
    let mut present = initial.to_vec();
    let mut out = Vec::with_capacity(batch * epochs);
    for _ in 0..epochs {
        for _ in 0..batch / 2 {
            if present.is_empty() {
                break;
            }
            let (s, d) = present.swap_remove(rng.gen_range(0..present.len()));
            out.push(Update::delete(s, d));
        }
        for _ in batch / 2..batch {
            let mut vertex = || {
                if vertices.is_empty() {
                    rng.gen_range(0..1024)
                } else {
                    vertices[rng.gen_range(0..vertices.len())]
                }
            };
            let e = (vertex(), vertex());
            present.push(e);
            out.push(Update::insert(e.0, e.1));
        }
    }
    out
}
