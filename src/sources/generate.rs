//! Deterministic synthetic graphs.
//!
//! Every generator takes a `seed` and draws all its randomness from
//! `ChaCha8Rng::seed_from_u64(seed)`, so the same arguments give the same edges, in the same
//! order, on every platform and run.
//!
//! ```
//! use ripples::sources::generate::{erdos_renyi, rmat};
//! // R-MAT scale 6, edge factor 8: 2^6 = 64 vertex ids, 8 * 64 directed edges.
//! let g = rmat(6, 8, 42);
//! assert_eq!(g.len(), 512);
//! assert!(g.iter().all(|&(s, d)| s < 64 && d < 64));
//! // The same seed gives the same edges in the same order; another seed another graph.
//! assert_eq!(rmat(6, 8, 42), g);
//! assert_ne!(rmat(6, 8, 43), g);
//! // G(n, m): m distinct pairs without self-loops.
//! let mut er = erdos_renyi(10, 30, 1);
//! assert!(er.iter().all(|&(s, d)| s != d && s < 10 && d < 10));
//! er.sort();
//! er.dedup();
//! assert_eq!(er.len(), 30);
//! ```

use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::types::Node;

/// R-MAT / Graph500 Kronecker initiator probabilities `a, b, c, d`.
pub const RMAT_PROBABILITIES: [f64; 4] = [0.57, 0.19, 0.19, 0.05];

/// An R-MAT (Graph500 Kronecker) graph with `n = 2^scale` vertices and
/// `m = edge_factor * n` directed edges.
///
/// Each edge picks, for each of the `scale` bit levels independently, one quadrant of the
/// adjacency matrix with probabilities `a, b, c, d` = 0.57, 0.19, 0.19, 0.05 (top-left,
/// top-right, bottom-left, bottom-right; top/left means a 0 bit in src/dst). As in Graph500, the
/// vertex ids are then relabelled by a seeded random permutation of `0..n` (so that high degree
/// is not tied to low ids) and the edge list is shuffled. The result may contain duplicate edges
/// and self-loops, as Graph500's does; ids are in `0..n`, but not every id need occur.
///
/// Panics if `scale >= 64` or `m` overflows `u64`; memory is `8n + 16m` bytes.
pub fn rmat(scale: u32, edge_factor: u64, seed: u64) -> Vec<(Node, Node)> {
    assert!(scale < 64, "rmat: scale {scale} is too large (at most 63)");
    let n: u64 = 1 << scale;
    let m = edge_factor
        .checked_mul(n)
        .unwrap_or_else(|| panic!("rmat: edge_factor {edge_factor} * 2^{scale} overflows u64"));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);

    // Quadrant thresholds on a uniform 32-bit number.
    let [a, b, c, _] = RMAT_PROBABILITIES;
    let threshold = |p: f64| (p * 4294967296.0).round() as u64;
    let (ta, tab, tabc) = (threshold(a), threshold(a + b), threshold(a + b + c));

    let mut edges = Vec::with_capacity(m as usize);
    for _ in 0..m {
        let (mut src, mut dst) = (0u64, 0u64);
        let mut word = 0u64;
        for level in 0..scale {
            if level % 2 == 0 {
                word = rng.next_u64();
            }
            let r = word & 0xFFFF_FFFF;
            word >>= 32;
            // Quadrants: [0, ta) top-left, [ta, tab) top-right, [tab, tabc) bottom-left, rest
            // bottom-right.
            let src_bit = (r >= tab) as u64;
            let dst_bit = ((r >= ta) & (r < tab)) as u64 | (r >= tabc) as u64;
            src = (src << 1) | src_bit;
            dst = (dst << 1) | dst_bit;
        }
        edges.push((src, dst));
    }

    let mut permutation: Vec<Node> = (0..n).collect();
    permutation.shuffle(&mut rng);
    for (src, dst) in edges.iter_mut() {
        *src = permutation[*src as usize];
        *dst = permutation[*dst as usize];
    }
    drop(permutation);
    edges.shuffle(&mut rng);
    edges
}

/// Draws a uniform ordered pair `(src, dst)` of `0..n` with `src != dst` (needs `n >= 2`).
fn random_pair(rng: &mut ChaCha8Rng, n: u64) -> (Node, Node) {
    let src = rng.gen_range(0..n);
    let mut dst = rng.gen_range(0..n - 1);
    if dst >= src {
        dst += 1;
    }
    (src, dst)
}

/// `count` distinct ordered pairs without self-loops, sorted (needs `count <= n(n-1)/2` to be
/// fast; every round fills up to `count` and removes duplicates).
fn distinct_pairs(rng: &mut ChaCha8Rng, n: u64, count: usize) -> Vec<(Node, Node)> {
    let mut pairs = Vec::with_capacity(count);
    loop {
        while pairs.len() < count {
            pairs.push(random_pair(rng, n));
        }
        pairs.sort_unstable();
        pairs.dedup();
        if pairs.len() == count {
            return pairs;
        }
    }
}

/// A uniformly random directed graph with `n` vertices and `m` edges, in random order.
///
/// * If `m <= n(n-1)` — the number of ordered pairs `(src, dst)` with `src != dst` — the result
///   is the Erdős–Rényi `G(n, m)` graph: `m` *distinct* pairs, no self-loops, every such edge set
///   equally likely. (For `m` at most half of the pairs they are sampled directly; above that the
///   missing pairs are sampled and the rest enumerated, so memory stays `O(m)` either way.)
/// * If `m > n(n-1)` (more edges than a simple graph can hold), the `m` edges are drawn
///   independently and uniformly with `src != dst`, so there are duplicates. With `n == 1` every
///   edge is the self-loop `(0, 0)`.
///
/// Panics if `n == 0` and `m > 0`.
pub fn erdos_renyi(n: u64, m: u64, seed: u64) -> Vec<(Node, Node)> {
    if m == 0 {
        return Vec::new();
    }
    assert!(n > 0, "erdos_renyi: cannot place {m} edges on 0 vertices");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let pairs = u128::from(n) * u128::from(n - 1);
    let m_wide = u128::from(m);
    let mut edges = if 2 * m_wide <= pairs {
        distinct_pairs(&mut rng, n, m as usize)
    } else if m_wide <= pairs {
        // Dense: here n(n-1) <= 2m, so enumerating all pairs is O(m).
        let missing = distinct_pairs(&mut rng, n, (pairs - m_wide) as usize);
        let mut missing = missing.into_iter().peekable();
        let mut edges = Vec::with_capacity(m as usize);
        for src in 0..n {
            for dst in (0..n).filter(|&dst| dst != src) {
                if missing.peek() == Some(&(src, dst)) {
                    missing.next();
                } else {
                    edges.push((src, dst));
                }
            }
        }
        edges
    } else if n == 1 {
        vec![(0, 0); m as usize]
    } else {
        (0..m).map(|_| random_pair(&mut rng, n)).collect()
    };
    edges.shuffle(&mut rng);
    edges
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn degrees(edges: &[(Node, Node)], n: u64) -> Vec<u64> {
        let mut degree = vec![0u64; n as usize];
        for &(s, d) in edges {
            degree[s as usize] += 1;
            degree[d as usize] += 1;
        }
        degree
    }

    #[test]
    fn rmat_is_deterministic_and_in_range() {
        let a = rmat(10, 8, 42);
        assert_eq!(a.len(), 8 << 10);
        assert_eq!(a, rmat(10, 8, 42));
        assert_ne!(a, rmat(10, 8, 43));
        assert!(a.iter().all(|&(s, d)| s < 1024 && d < 1024));
        assert_eq!(rmat(0, 3, 1), vec![(0, 0); 3]);
        assert!(rmat(5, 0, 1).is_empty());
    }

    #[test]
    fn rmat_is_skewed() {
        let n = 1u64 << 12;
        let edges = rmat(12, 16, 7);
        let degree = degrees(&edges, n);
        let average = 2.0 * edges.len() as f64 / n as f64;
        let max = *degree.iter().max().unwrap() as f64;
        assert!(max > 10.0 * average, "max degree {max}, average {average}");
        let isolated = degree.iter().filter(|&&d| d == 0).count();
        assert!(isolated > 0 && isolated < n as usize / 2, "{isolated} isolated vertices");
        // The permutation spreads the hubs: the largest-degree vertex is not always id 0.
        let hubs: Vec<usize> = (0..4)
            .map(|seed| {
                let degree = degrees(&rmat(12, 16, seed), n);
                (0..n as usize).max_by_key(|&v| degree[v]).unwrap()
            })
            .collect();
        assert!(hubs.iter().any(|&h| h != hubs[0]), "{hubs:?}");
        // Heavy tail: the top 1% of vertices carry a large share of the edge endpoints.
        let mut sorted = degree.clone();
        sorted.sort_unstable_by(|x, y| y.cmp(x));
        let top_one_percent: u64 = sorted[..(n as usize / 100)].iter().sum();
        assert!(top_one_percent as f64 > 0.15 * 2.0 * edges.len() as f64);
    }

    #[test]
    fn erdos_renyi_sparse() {
        let edges = erdos_renyi(1000, 5000, 3);
        assert_eq!(edges.len(), 5000);
        assert_eq!(edges, erdos_renyi(1000, 5000, 3));
        assert_ne!(edges, erdos_renyi(1000, 5000, 4));
        assert!(edges.iter().all(|&(s, d)| s < 1000 && d < 1000 && s != d));
        let distinct: HashSet<_> = edges.iter().collect();
        assert_eq!(distinct.len(), edges.len());
        // Not sorted: the order is shuffled.
        assert!(edges.windows(2).any(|w| w[0] > w[1]));
        // Roughly uniform degrees.
        let degree = degrees(&edges, 1000);
        assert!(*degree.iter().max().unwrap() < 30);
    }

    #[test]
    fn erdos_renyi_dense_and_overfull() {
        for m in [0, 1, 45, 60, 89, 90] {
            let edges = erdos_renyi(10, m, 11);
            assert_eq!(edges.len() as u64, m);
            assert_eq!(edges, erdos_renyi(10, m, 11));
            let distinct: HashSet<_> = edges.iter().collect();
            assert_eq!(distinct.len() as u64, m, "m = {m}");
            assert!(edges.iter().all(|&(s, d)| s < 10 && d < 10 && s != d));
        }
        let edges = erdos_renyi(10, 500, 1);
        assert_eq!(edges.len(), 500);
        assert!(edges.iter().all(|&(s, d)| s < 10 && d < 10 && s != d));
        assert_eq!(erdos_renyi(1, 3, 0), vec![(0, 0); 3]);
        assert!(erdos_renyi(0, 0, 0).is_empty());
        // Huge n: no overflow in the pair count.
        let edges = erdos_renyi(u64::MAX, 10, 5);
        assert_eq!(edges.len(), 10);
    }

    #[test]
    #[ignore = "timing; run with --release --ignored --nocapture"]
    fn rmat_scale_20_timing() {
        let start = std::time::Instant::now();
        let edges = rmat(20, 16, 1);
        eprintln!("rmat(20, 16): {} edges in {:?}", edges.len(), start.elapsed());
        let start = std::time::Instant::now();
        let edges = erdos_renyi(1 << 20, 16 << 20, 1);
        eprintln!("erdos_renyi(2^20, 2^24): {} edges in {:?}", edges.len(), start.elapsed());
    }
}
