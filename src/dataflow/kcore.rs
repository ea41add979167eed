//! Core numbers (k-core decomposition), maintained under edge insertions and deletions.
//!
//! **Semantics.** The graph is read as an undirected simple graph: edge direction, parallel
//! copies and weights are ignored, and **self-loops are ignored**. The core number of a vertex
//! `v` is the largest `k` such that `v` belongs to a subgraph in which every vertex has at least
//! `k` neighbours (the `k`-core). Every vertex of the epoch's vertex set
//! ([`GraphInput::vertex_set`]: vertex-file vertices ∪ endpoints of present edges) gets its core
//! number; a vertex without neighbours (a vertex-file vertex, or one whose only edges are
//! self-loops) has 0. A vertex whose last edge is deleted and that is not in the vertex file
//! leaves the result. Values are integers
//! ([`ValueFormat::Integer`](super::ValueFormat::Integer)).
//!
//! **How.** The h-index iteration (Lü et al., *The H-index of a network node and its relation to
//! degree and coreness*, 2016): `c_0(v) = deg(v)`, `c_{i+1}(v) = H({c_i(u) : u ∈ N(v)})`, where
//! `H` of a multiset is the largest `h` such that at least `h` of its values are `>= h`. The
//! sequence never increases and reaches the core numbers as its fixpoint. It runs as a
//! differential `iterate` over the vertices with neighbours: each round joins the current values
//! with the arranged neighbour relation (the shared [`GraphInput::edge_set`]`(true)` without
//! loops) and a `reduce` per vertex computes the h-index of its neighbours' values; differential
//! maintains every round of the iteration, so deletions (which can raise nothing but lower
//! values far away) and insertions are both exact. Vertices without neighbours get 0 from a final
//! `reduce` over the vertex set.
//!
//! **Cost.** State: the arranged arcs (two records per present pair), the degrees, and per round
//! of the iteration the values that changed in that round (a vertex's value is kept once per
//! round at which it changed; the number of rounds is at most the longest chain of decreases,
//! e.g. about `n / 2` for a path of `n` vertices, and small for skewed graphs), and the final
//! `reduce` (two records per vertex). An update `(a, b)` changes the degrees of `a` and `b`;
//! every value that changes in round `i` re-evaluates its neighbours' h-index in round `i + 1`
//! (`O(deg)` each, reading their neighbours' values), so the work is proportional to the
//! vertices whose values change in some round times their degrees. Changes that do not change
//! any core number usually stop after few rounds; a parallel copy or a self-loop costs only the
//! edge-set `distinct`.

use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::operators::Iterate;
use differential_dataflow::trace::implementations::ValSpine;

use super::{Algorithm, GraphInput, ResultCollection};
use crate::types::{Diff, Node, Time};

/// Per vertex: its core number.
#[derive(Clone, Copy, Debug, Default)]
pub struct KCore;

impl Algorithm for KCore {
    fn name(&self) -> String {
        "kcore".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        kcore(input)
    }
}

/// The h-index of a multiset given as `(value, count)` pairs sorted by value: the largest `h`
/// such that at least `h` values are `>= h`.
pub fn h_index(values: &[(&u64, Diff)]) -> u64 {
    let (mut at_least, mut h) = (0u64, 0u64);
    for &(&value, count) in values.iter().rev() {
        at_least += count.max(0) as u64;
        h = h.max(at_least.min(value));
    }
    h
}

/// `(vertex, core number)` for every vertex of the vertex set.
pub fn kcore<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    let arcs = input.edge_set(true).filter(|(s, d)| s != d);
    let degrees = arcs.clone().map(|(s, _)| s).count().map(|(v, d)| (v, d as u64));
    let arcs: Arranged<'a, TraceAgent<ValSpine<Node, Node, Time, Diff>>> = arcs.arrange_by_key();
    let cores = degrees.iterate(|scope, cores| {
        let arcs = arcs.enter(scope);
        cores.join_core(arcs, |_v, c, u| Some((*u, *c))).reduce(|_u, input, output| output.push((h_index(input), 1)))
    });
    // Every vertex with a neighbour has a core number >= 1: the largest value wins over 0.
    cores
        .concat(input.vertex_set().map(|v| (v, 0)))
        .reduce(|_v, input, output| output.push((*input[input.len() - 1].0, 1)))
}

#[cfg(test)]
mod tests {
    use super::h_index;

    #[test]
    fn h_index_of_multisets() {
        assert_eq!(h_index(&[]), 0);
        assert_eq!(h_index(&[(&0, 3)]), 0);
        assert_eq!(h_index(&[(&1, 1)]), 1);
        assert_eq!(h_index(&[(&1, 1), (&5, 1)]), 1);
        assert_eq!(h_index(&[(&2, 2), (&3, 1)]), 2);
        assert_eq!(h_index(&[(&3, 3)]), 3);
        assert_eq!(h_index(&[(&1, 4), (&9, 2)]), 2);
        assert_eq!(h_index(&[(&4, 10)]), 4);
    }
}
