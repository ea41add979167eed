//! **Streaming weighted matching** of an insert-only edge stream, with gelly-streaming's
//! semantics (its `CentralizedWeightedMatching`: the one-pass algorithm of Feigenbaum et al.,
//! a 1/6-approximation of the maximum-weight matching).
//!
//! **Semantics.** The stream is read as undirected weighted edges, in arrival order; an edge
//! without a weight has weight 1. The matching starts empty. An arriving edge `{u, v}` of
//! weight `w` **collides** with the matched edges that share an endpoint with it (at most two:
//! the one at `u` and the one at `v`, or one when `{u, v}` itself is matched). If `w` exceeds
//! twice the sum of their weights (`w > 2 * sum`, compared in `f64`; the sum is 0 without
//! collisions), the colliding edges leave the matching and `{u, v}` enters; otherwise the edge
//! is dropped. So an edge of weight `<= 0` (or NaN) is never matched, and a parallel copy of a
//! matched edge replaces it only if it is more than twice as heavy (the output does not
//! change). **Self-loops are ignored** (they neither enter nor collide; gelly-streaming would
//! match one, which is not a matching).
//!
//! **Arrival order** ([`super::Position`]): epoch order, and within an epoch the order of the
//! input (the line order of the edge file for epoch 0 and of the update file, or the order in
//! which live input closed the epoch's updates). The stream must be insert-only and unwindowed:
//! the driver refuses deletions and windows before anything runs.
//!
//! **Output.** Per matched vertex, `(vertex, partner)`: a matched edge `{u, v}` is the two
//! records `(u, v)` and `(v, u)`. Unmatched vertices do not appear. Integers (the matched
//! edge's weight is not part of the output).
//!
//! **Cost.** Every inserted copy goes to one worker ([`super::arrivals`]), which keeps one
//! entry per matched vertex (partner and weight); an arriving edge costs two hash lookups and
//! changes at most six output records (two colliding edges out, itself in).

use std::collections::HashMap;

use super::arrivals::{self, Delta};
use super::{Algorithm, GraphInput, ResultCollection};
use crate::types::{Edge, Node};

/// Streaming weighted matching (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Matching;

impl Algorithm for Matching {
    fn name(&self) -> String {
        "matching".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        let mut matched = Matched::default();
        arrivals::in_order(arrivals::of(&input, "matching"), "Matching", move |edge, delta| matched.arrive(edge, delta))
    }
    fn arrival_order(&self) -> bool {
        true
    }
}

/// The matching's plain sequential form, the same code the dataflow runs on its one worker
/// (`ripples bench`'s `sequential` baseline of `matching-insert`).
///
/// ```
/// use ripples::dataflow::matching::MatchingState;
/// let mut m = MatchingState::default();
/// m.arrive(1, 2, 1.0);
/// m.arrive(2, 3, 5.0); // 5 > 2 * 1: replaces {1, 2}
/// assert_eq!(m.matched(), vec![(2, 3)]);
/// ```
#[derive(Default)]
pub struct MatchingState {
    matched: Matched,
}

impl MatchingState {
    /// The edge `{u, v}` of weight `w` arrives.
    pub fn arrive(&mut self, u: Node, v: Node, w: f64) {
        let mut delta = arrivals::Delta::new();
        self.matched.arrive((u, v, crate::types::weight_bits(Some(w))), &mut delta);
    }

    /// The matched edges `(u, v)` with `u < v`, sorted.
    pub fn matched(&self) -> Vec<(Node, Node)> {
        let mut out: Vec<(Node, Node)> =
            self.matched.partner.iter().filter(|(u, (v, _))| u < &v).map(|(u, (v, _))| (*u, *v)).collect();
        out.sort_unstable();
        out
    }
}

/// The matching so far: each matched vertex's partner and the matched edge's weight.
#[derive(Default)]
struct Matched {
    partner: HashMap<Node, (Node, f64)>,
}

impl Matched {
    fn arrive(&mut self, (u, v, bits): Edge, delta: &mut Delta) {
        if u == v {
            return;
        }
        let w = f64::from_bits(bits);
        let at_u = self.partner.get(&u).copied();
        let at_v = self.partner.get(&v).copied().filter(|&(p, _)| p != u);
        let sum = at_u.map_or(0.0, |(_, x)| x) + at_v.map_or(0.0, |(_, x)| x);
        // (NaN compares false: never matched.)
        if w.partial_cmp(&(2.0 * sum)) != Some(std::cmp::Ordering::Greater) {
            return;
        }
        for (x, (y, _)) in [(u, at_u), (v, at_v)].into_iter().filter_map(|(x, e)| e.map(|e| (x, e))) {
            self.partner.remove(&x);
            self.partner.remove(&y);
            *delta.entry((x, y)).or_insert(0) -= 1;
            *delta.entry((y, x)).or_insert(0) -= 1;
        }
        self.partner.insert(u, (v, w));
        self.partner.insert(v, (u, w));
        *delta.entry((u, v)).or_insert(0) += 1;
        *delta.entry((v, u)).or_insert(0) += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::weight_bits;

    #[test]
    fn heavier_edges_replace_what_they_collide_with() {
        let mut m = Matched::default();
        let mut delta = Delta::new();
        let w = |x: f64| weight_bits(Some(x));
        m.arrive((1, 2, w(1.0)), &mut delta); // matched
        m.arrive((2, 3, w(2.0)), &mut delta); // 2 > 2 * 1 fails: dropped
        m.arrive((3, 4, w(1.5)), &mut delta); // matched
        m.arrive((2, 3, w(5.1)), &mut delta); // 5.1 > 2 * (1 + 1.5): replaces both
        m.arrive((5, 5, w(9.0)), &mut delta); // self-loop: ignored
        m.arrive((3, 2, w(10.0)), &mut delta); // the same pair, 10 <= 2 * 5.1: dropped
        let mut got: Vec<_> = delta.into_iter().filter(|&(_, d)| d != 0).collect();
        got.sort();
        assert_eq!(got, vec![((2, 3), 1), ((3, 2), 1)]);
        assert_eq!(m.partner[&2], (3, 5.1));
    }
}
