//! The streaming weighted matching of an edge sequence, in arrival order.

use std::collections::BTreeMap;

use super::WeightedEdge;
use crate::types::Node;

/// The streaming weighted matching of `edges` (in arrival order, direction ignored), as
/// `vertex -> partner` for every matched vertex: an arriving edge `{u, v}` of weight `w`
/// (`u != v`; self-loops are skipped) replaces the matched edges that share an endpoint with
/// it iff `w > 2 * (sum of their weights)`.
///
/// Unlike the other oracles this one takes a sequence, not a set. It keeps the matched edges
/// in a list and scans all of them for each arriving edge.
pub fn matching(edges: &[WeightedEdge]) -> BTreeMap<Node, Node> {
    let mut matched: Vec<WeightedEdge> = Vec::new();
    for &(u, v, w) in edges {
        if u == v {
            continue;
        }
        let touches = |&(a, b, _): &WeightedEdge| a == u || a == v || b == u || b == v;
        let sum: f64 = matched.iter().filter(|e| touches(e)).map(|e| e.2).sum();
        if w > 2.0 * sum {
            matched.retain(|e| !touches(e));
            matched.push((u, v, w));
        }
    }
    let mut partner = BTreeMap::new();
    for (a, b, _) in matched {
        partner.insert(a, b);
        partner.insert(b, a);
    }
    partner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_of_growing_weights() {
        // 1-2 (1), 2-3 (3 > 2): replaces it, 3-4 (7 > 6): replaces it, 4-5 (10 <= 14): dropped.
        let path = [(1, 2, 1.0), (2, 3, 3.0), (3, 4, 7.0), (4, 5, 10.0), (6, 6, 50.0), (5, 6, 0.5)];
        assert_eq!(matching(&path), BTreeMap::from([(3, 4), (4, 3), (5, 6), (6, 5)]));
    }
}
