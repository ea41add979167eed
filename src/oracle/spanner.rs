//! The streaming k-spanner of an edge sequence, in arrival order.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::WeightedEdge;
use crate::types::Node;

/// The kept edges `(min endpoint, max endpoint)` of the greedy streaming `k`-spanner of `edges`
/// (in arrival order, direction and weights ignored): an edge `{u, v}` is kept iff `u != v`
/// and `u` and `v` are more than `k` hops apart (or not connected) in the edges kept before it.
///
/// Unlike the other oracles this one takes a sequence, not a set: the result depends on the
/// order. Each test is a full breadth-first search from `u` over the kept edges.
pub fn spanner(k: u32, edges: &[WeightedEdge]) -> BTreeSet<(Node, Node)> {
    let mut kept = BTreeSet::new();
    let mut adjacent: BTreeMap<Node, BTreeSet<Node>> = BTreeMap::new();
    for &(u, v, _) in edges {
        if u == v {
            continue;
        }
        let far = distances_from(&adjacent, u).get(&v).is_none_or(|&d| d > k as u64);
        if far {
            kept.insert((u.min(v), u.max(v)));
            adjacent.entry(u).or_default().insert(v);
            adjacent.entry(v).or_default().insert(u);
        }
    }
    kept
}

/// Hop distances from `source` to every vertex it reaches.
fn distances_from(adjacent: &BTreeMap<Node, BTreeSet<Node>>, source: Node) -> BTreeMap<Node, u64> {
    let mut distance = BTreeMap::from([(source, 0)]);
    let mut queue = VecDeque::from([source]);
    while let Some(x) = queue.pop_front() {
        let next = distance[&x] + 1;
        for &y in adjacent.get(&x).into_iter().flatten() {
            if let std::collections::btree_map::Entry::Vacant(e) = distance.entry(y) {
                e.insert(next);
                queue.push_back(y);
            }
        }
    }
    distance
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_closed_only_when_long_enough() {
        // A 4-cycle arriving edge by edge: its last edge closes a path of 3 hops.
        let c4 = [(1, 2, 1.0), (2, 3, 1.0), (3, 4, 1.0), (4, 1, 1.0), (1, 1, 1.0), (2, 1, 1.0)];
        assert_eq!(spanner(2, &c4), BTreeSet::from([(1, 2), (1, 4), (2, 3), (3, 4)]));
        assert_eq!(spanner(3, &c4), BTreeSet::from([(1, 2), (2, 3), (3, 4)]));
    }
}
