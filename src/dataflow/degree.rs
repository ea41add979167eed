//! Vertex degrees and the degree distribution, maintained under edge insertions and deletions.
//!
//! **Semantics.** The graph is read as an undirected simple graph: edge direction, parallel
//! copies and weights are ignored, and **self-loops are ignored** (a vertex is never its own
//! neighbour). [`Degree`]: every vertex of the epoch's vertex set ([`GraphInput::vertex_set`]:
//! vertex-file vertices ∪ endpoints of present edges) gets the number of distinct vertices other
//! than itself that share a present edge with it; a vertex-file vertex without edges, or a
//! vertex whose only edges are self-loops, has degree 0. A vertex whose last edge is deleted and
//! that is not in the vertex file leaves the result. [`DegreeDistribution`]: one `(degree,
//! count)` pair per degree that some vertex of the vertex set has: how many vertices have it.
//! The counts sum to the number of vertices; degree 0 appears when some vertex has no neighbour
//! (which is the only difference from `examples/degree_distribution.rs`, whose input has no
//! isolated vertices: it counts only vertices with a neighbour). Values are integers
//! ([`ValueFormat::Integer`](super::ValueFormat::Integer)).
//!
//! **How.** The symmetrised distinct arcs without loops (the shared
//! [`GraphInput::edge_set`]`(true)`) give one `(v, NEIGHBOUR)` record per neighbour; together
//! with one `(v, MEMBER)` record per vertex of the vertex set, a `reduce` per vertex reads the
//! degree as a multiplicity. The distribution `count`s the degrees.
//!
//! **Cost.** State: the shared edge-set and vertex-set `distinct`s, the `reduce` (two records
//! per vertex), and for the distribution one record per vertex and one per distinct degree. An
//! update that changes the set of neighbours of `a` and `b` changes two output records of
//! [`Degree`] per endpoint (`O(1)` work each, after the `distinct`), and at most four records of
//! the distribution; a parallel copy or a self-loop costs only the `distinct`s.
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::degree::{Degree, DegreeDistribution};
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::types::Update;
//! // A triangle 0, 1, 2; then a tail 2 - 3, a parallel copy of 0 - 1 and a self-loop (neither counts).
//! let stream = || MemoryStream {
//!     initial: vec![(0, 1, None), (1, 2, None), (2, 0, None)],
//!     updates: vec![Update::insert(2, 3), Update::insert(1, 0), Update::insert(3, 3)],
//!     batch: 3,
//!     ..MemoryStream::default()
//! };
//! let run = |options: RunOptions, distribution: bool| {
//!     let options = RunOptions { keep_state: true, ..options };
//!     let report = if distribution { driver::run(options, DegreeDistribution) } else { driver::run(options, Degree) };
//!     report.unwrap().unwrap().final_state.unwrap()
//! };
//! assert_eq!(run(RunOptions::memory(stream(), 1), false), vec![(0, 2), (1, 2), (2, 3), (3, 1)]);
//! // (degree, number of vertices with it)
//! assert_eq!(run(RunOptions::memory(stream(), 2), true), vec![(1, 1), (2, 2), (3, 1)]);
//! ```

use super::{Algorithm, GraphInput, NodeCollection, ResultCollection};

/// Per vertex: the number of distinct neighbours other than itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct Degree;

/// Per degree: the number of vertices with that degree.
#[derive(Clone, Copy, Debug, Default)]
pub struct DegreeDistribution;

impl Algorithm for Degree {
    fn name(&self) -> String {
        "degree".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        degree(input)
    }
}

impl Algorithm for DegreeDistribution {
    fn name(&self) -> String {
        "degree-distribution".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        degree_distribution(input)
    }
}

/// `(vertex, degree)` for every vertex of the vertex set.
pub fn degree<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    let neighbours = input.edge_set(true).filter(|(s, d)| s != d).map(|(s, _)| s);
    multiplicity_per_vertex(neighbours, input.vertex_set())
}

/// `(v, multiplicity of v in counted)` for every `v` of `vertices` (0 where `v` is absent from
/// `counted`); `counted` must have no negative multiplicities at any time and no vertex outside
/// `vertices`. One `reduce` per vertex that reads the count and the membership as multiplicities.
pub fn multiplicity_per_vertex<'a>(counted: NodeCollection<'a>, vertices: NodeCollection<'a>) -> ResultCollection<'a> {
    const COUNTED: bool = true;
    const MEMBER: bool = false;
    let members = vertices.map(|v| (v, MEMBER));
    counted.map(|v| (v, COUNTED)).concat(members).reduce(|_v, input, output| {
        let (mut count, mut member) = (0, false);
        for &(tag, n) in input {
            if *tag == COUNTED {
                count = n;
            } else {
                member = true;
            }
        }
        if member {
            output.push((count as u64, 1));
        }
    })
}

/// `(degree, number of vertices with it)` for every degree some vertex has.
pub fn degree_distribution<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    degree(input).map(|(_v, d)| d).count().map(|(d, n)| (d, n as u64))
}
