//! Update-stream shapes built from an edge sequence.
//!
//! All streams consist of unweighted updates (`weight: None`), and every deletion removes a copy
//! that is present at that point of the stream — counting the copies inserted earlier by the
//! stream and, for [`churn`], the `initial` edges, which are assumed to be loaded already.
//!
//! ```
//! use ripples::sources::stream::{churn, sliding_window};
//! use ripples::types::Update;
//! let edges = [(0, 1), (1, 2), (2, 3)];
//! // A window of 2 edges: the third insertion pushes the first edge out.
//! assert_eq!(
//!     sliding_window(&edges, 2),
//!     vec![Update::insert(0, 1), Update::insert(1, 2), Update::insert(2, 3), Update::delete(0, 1)]
//! );
//! // Random churn only deletes copies that are present at that point.
//! let mut present: Vec<(u64, u64)> = edges.to_vec();
//! for u in churn(&edges, 200, 0.5, 7) {
//!     if u.diff > 0 {
//!         present.push((u.src, u.dst));
//!     } else {
//!         let i = present.iter().position(|&e| e == (u.src, u.dst)).expect("a present copy");
//!         present.swap_remove(i);
//!     }
//! }
//! ```

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::types::{Node, Time, Update};

/// One insertion per edge, in order.
pub fn insert_only(edges: &[(Node, Node)]) -> Vec<Update> {
    edges.iter().map(|&(src, dst)| Update::insert(src, dst)).collect()
}

/// Event times for a stream of `count` lines arriving at `per_unit` lines per event-time unit,
/// out of order by up to `disorder` units: line `i` gets `i / per_unit - d_i` (saturating at 0),
/// `d_i` uniform in `0..=disorder`. With `disorder == 0` the times never decrease.
/// Deterministic for a `seed`.
pub fn event_times(count: usize, per_unit: u64, disorder: u64, seed: u64) -> Vec<Time> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let per_unit = per_unit.max(1);
    (0..count as u64)
        .map(|i| {
            let late = if disorder == 0 { 0 } else { rng.gen_range(0..=disorder) };
            (i / per_unit).saturating_sub(late)
        })
        .collect()
}

/// A sliding window of `window` (= W) edges over `edges`: for each `i` in order, insert `e_i`,
/// then, if `i >= W`, delete `e_{i-W}`. After the first W steps each step is one insertion plus
/// one deletion and exactly the last W edges seen are present; the edges still in the window at
/// the end are not deleted. The output has `len + len.saturating_sub(W)` updates.
///
/// `window == 0` follows the same rule: every edge is inserted and immediately deleted.
pub fn sliding_window(edges: &[(Node, Node)], window: usize) -> Vec<Update> {
    let mut out = Vec::with_capacity(2 * edges.len());
    for (i, &(src, dst)) in edges.iter().enumerate() {
        out.push(Update::insert(src, dst));
        if i >= window {
            let (src, dst) = edges[i - window];
            out.push(Update::delete(src, dst));
        }
    }
    out
}

/// A random stream of `count` insertions and deletions on top of the graph `initial`.
///
/// The present edges are tracked as a multiset of copies, starting with every copy in `initial`.
/// Each update first draws a uniform `x` in `[0, 1)`; if `x < delete_fraction` and some copy is
/// present, it deletes one present copy chosen uniformly at random. Otherwise it inserts a new
/// copy of `(u, v)`, `u` and `v` drawn independently and uniformly from the distinct vertices of
/// `initial` (or from `0..1024` if `initial` is empty; `u == v` is possible). So
/// `delete_fraction <= 0` only inserts and `>= 1` deletes whenever possible.
///
/// O(1) time per update after an O(|initial| log |initial|) setup; deterministic for a `seed`.
pub fn churn(initial: &[(Node, Node)], count: usize, delete_fraction: f64, seed: u64) -> Vec<Update> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut vertices: Vec<Node> = initial.iter().flat_map(|&(s, d)| [s, d]).collect();
    vertices.sort_unstable();
    vertices.dedup();
    let mut present: Vec<(Node, Node)> = initial.to_vec();
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let delete = rng.gen::<f64>() < delete_fraction;
        if delete && !present.is_empty() {
            let (src, dst) = present.swap_remove(rng.gen_range(0..present.len()));
            out.push(Update::delete(src, dst));
        } else {
            let mut vertex = || {
                if vertices.is_empty() {
                    rng.gen_range(0..1024)
                } else {
                    vertices[rng.gen_range(0..vertices.len())]
                }
            };
            let (src, dst) = (vertex(), vertex());
            present.push((src, dst));
            out.push(Update::insert(src, dst));
        }
    }
    out
}

/// Churn over a loaded graph: `epochs` epochs, each of `per_epoch` deletions of uniformly random
/// present edge copies followed by `per_epoch` insertions taken in order from `fresh` (new edges,
/// say of another R-MAT draw). Every deletion names a copy present at that point. Stops early if
/// `fresh` runs out.
pub fn churn_replace(
    initial: &[(Node, Node)],
    fresh: &[(Node, Node)],
    epochs: usize,
    per_epoch: usize,
    seed: u64,
) -> Vec<Update> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut present: Vec<(Node, Node)> = initial.to_vec();
    let mut fresh = fresh.iter();
    let mut out = Vec::with_capacity(2 * epochs * per_epoch);
    for _ in 0..epochs {
        for _ in 0..per_epoch.min(present.len()) {
            let (src, dst) = present.swap_remove(rng.gen_range(0..present.len()));
            out.push(Update::delete(src, dst));
        }
        for _ in 0..per_epoch {
            let Some(&(src, dst)) = fresh.next() else { return out };
            present.push((src, dst));
            out.push(Update::insert(src, dst));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn churn_replace_deletes_present_copies_and_inserts_fresh_ones() {
        let initial = [(1, 2), (2, 3), (1, 2), (4, 5)];
        let fresh = [(7, 8), (8, 9), (9, 7), (1, 9)];
        let updates = churn_replace(&initial, &fresh, 2, 2, 5);
        assert_eq!(updates.len(), 8);
        let mut counts: std::collections::HashMap<(Node, Node), i64> = std::collections::HashMap::new();
        for &(a, b) in &initial {
            *counts.entry((a, b)).or_insert(0) += 1;
        }
        for (i, u) in updates.iter().enumerate() {
            assert_eq!(u.diff < 0, i % 4 < 2, "each epoch deletes first, then inserts");
            let c = counts.entry((u.src, u.dst)).or_insert(0);
            *c += u.diff as i64;
            assert!(*c >= 0, "update {} deletes an absent copy", i);
        }
        let inserted: Vec<_> = updates.iter().filter(|u| u.diff > 0).map(|u| (u.src, u.dst)).collect();
        assert_eq!(inserted, fresh);
    }
    use crate::sources::generate::rmat;
    use std::collections::HashMap;

    /// Applies `updates` to `initial`, checking that every deletion removes a present copy;
    /// returns the final multiset.
    fn simulate(initial: &[(Node, Node)], updates: &[Update]) -> HashMap<(Node, Node), usize> {
        let mut counts: HashMap<(Node, Node), usize> = HashMap::new();
        for &e in initial {
            *counts.entry(e).or_default() += 1;
        }
        for (i, u) in updates.iter().enumerate() {
            assert_eq!(u.weight, None);
            let count = counts.entry((u.src, u.dst)).or_default();
            match u.diff {
                1 => *count += 1,
                -1 => {
                    assert!(*count > 0, "update {i} deletes absent edge {u:?}");
                    *count -= 1;
                }
                d => panic!("bad diff {d}"),
            }
        }
        counts.retain(|_, c| *c > 0);
        counts
    }

    #[test]
    fn insert_only_inserts_in_order() {
        let edges = [(1, 2), (2, 3), (1, 2)];
        let updates = insert_only(&edges);
        assert_eq!(updates, vec![Update::insert(1, 2), Update::insert(2, 3), Update::insert(1, 2)]);
        assert_eq!(simulate(&[], &updates)[&(1, 2)], 2);
    }

    #[test]
    fn sliding_window_shape() {
        let edges: Vec<(Node, Node)> = (0..5).map(|i| (i, i + 10)).collect();
        let i = |k: u64| Update::insert(k, k + 10);
        let d = |k: u64| Update::delete(k, k + 10);
        assert_eq!(sliding_window(&edges, 2), vec![i(0), i(1), i(2), d(0), i(3), d(1), i(4), d(2)]);
        assert_eq!(sliding_window(&edges, 5), insert_only(&edges));
        assert_eq!(sliding_window(&edges, 9), insert_only(&edges));
        assert_eq!(sliding_window(&edges[..2], 0), vec![i(0), d(0), i(1), d(1)]);
        assert!(sliding_window(&[], 3).is_empty());

        // With duplicates, the window always holds exactly the last W edges.
        let edges = rmat(6, 8, 1);
        for window in [0, 1, 7, 100, 1000] {
            let updates = sliding_window(&edges, window);
            assert_eq!(updates.len(), edges.len() + edges.len().saturating_sub(window));
            let mut expected = HashMap::new();
            for &e in &edges[edges.len().saturating_sub(window)..] {
                *expected.entry(e).or_insert(0usize) += 1;
            }
            assert_eq!(simulate(&[], &updates), expected, "window {window}");
        }
    }

    #[test]
    fn churn_deletes_only_present_copies() {
        let initial = rmat(7, 4, 3);
        for fraction in [0.0, 0.3, 0.5, 0.9, 1.0] {
            let updates = churn(&initial, 5000, fraction, 9);
            assert_eq!(updates.len(), 5000);
            assert_eq!(updates, churn(&initial, 5000, fraction, 9));
            let final_graph = simulate(&initial, &updates);
            let deletes = updates.iter().filter(|u| u.diff < 0).count();
            let remaining: usize = final_graph.values().sum();
            assert_eq!(remaining, initial.len() + updates.len() - 2 * deletes);
            if fraction == 0.0 {
                assert_eq!(deletes, 0);
            }
            if fraction == 1.0 {
                // Deletes everything, then alternates insert/delete.
                assert_eq!(deletes, initial.len() + (5000 - initial.len()) / 2);
            }
            if fraction == 0.3 {
                assert!((1300..1700).contains(&deletes), "{deletes}");
            }
        }
        assert_ne!(churn(&initial, 100, 0.5, 1), churn(&initial, 100, 0.5, 2));
    }

    #[test]
    fn churn_draws_vertices_from_initial() {
        let initial = [(100, 200), (200, 300)];
        let updates = churn(&initial, 1000, 0.2, 5);
        assert!(updates.iter().all(|u| [100, 200, 300].contains(&u.src) && [100, 200, 300].contains(&u.dst)));
        simulate(&initial, &updates);

        let updates = churn(&[], 1000, 0.5, 5);
        assert!(updates.iter().all(|u| u.src < 1024 && u.dst < 1024));
        assert_eq!(updates[0].diff, 1);
        simulate(&[], &updates);
    }

    #[test]
    fn event_times_rate_and_disorder() {
        let t = event_times(10, 3, 0, 1);
        assert_eq!(t, vec![0, 0, 0, 1, 1, 1, 2, 2, 2, 3]);
        let t = event_times(10_000, 10, 5, 9);
        assert!(t.iter().enumerate().all(|(i, &x)| x <= i as u64 / 10 && x + 5 >= i as u64 / 10));
        assert!(t.windows(2).any(|w| w[1] < w[0]), "some lines are out of order");
        assert_eq!(t, event_times(10_000, 10, 5, 9));
    }
}
