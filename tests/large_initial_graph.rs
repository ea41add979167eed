//! A large initial graph through the driver's chunked feeding for algorithms built from
//! differential operators (not only WCC's forest): epoch 0 holds more copies than one feeding
//! chunk per worker, so it is fed in chunks with worker steps between them, and an update epoch
//! of 40,000 mixed insertions and deletions follows. Degree and BFS results equal the oracle
//! after every epoch, with 1 and 2 workers. The seed is fixed and printed on failure.

mod common;

use std::collections::BTreeMap;

use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ripples::dataflow::bfs::Bfs;
use ripples::dataflow::degree::Degree;
use ripples::dataflow::Algorithm;
use ripples::driver::{self, RunOptions};
use ripples::types::Node;

/// R-MAT scale 14 with edge factor 10 (163,840 copies, duplicates included) plus self-loops,
/// then one epoch of 40,000 updates: deletions of random present copies and insertions of new
/// R-MAT edges, interleaved.
fn stream(seed: u64) -> RandomStream {
    let mut initial = ripples::sources::generate::rmat(14, 10, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..100 {
        let v = initial[rng.gen_range(0..initial.len())].0;
        initial.push((v, v));
    }
    let mut present = initial.clone();
    let mut fresh = ripples::sources::generate::rmat(14, 3, seed + 1).into_iter();
    let epoch = churn_epoch(&mut rng, &mut present, &mut fresh, 40_000);
    RandomStream { vertices: vec![7, 1 << 40], initial, epochs: vec![epoch] }
}

fn states(algorithm: impl Algorithm + 'static, s: &RandomStream, workers: usize) -> Vec<BTreeMap<Node, u64>> {
    let options = RunOptions { trusted_input: true, ..RunOptions::memory(memory(s, 40_000), workers) };
    let changes = driver::run(options, algorithm).expect("run").expect("report").changes.expect("changes");
    states_per_epoch(&changes, s.epochs.len() as u64)
}

#[test]
fn chunked_feeding_is_exact_for_differential_algorithms() {
    let seed = 21;
    let s = stream(seed);
    assert!(s.initial.len() > 2 * 65_536, "the initial graph must span several feeding chunks per worker");
    let source = s.initial[0].0;
    let counts = edge_counts_per_epoch(&s);
    for workers in [1, 2] {
        let degree = states(Degree, &s, workers);
        let bfs = states(Bfs { source, undirected: false }, &s, workers);
        for (epoch, counts) in counts.iter().enumerate() {
            let (vs, es) = oracle_input(&s.vertices, counts);
            assert!(
                degree[epoch] == ripples::oracle::degree(&vs, &es),
                "seed {seed}, {workers} worker(s): degree differs from the oracle at epoch {epoch}"
            );
            assert!(
                bfs[epoch] == ripples::oracle::bfs(&vs, &es, source),
                "seed {seed}, {workers} worker(s): bfs differs from the oracle at epoch {epoch}"
            );
        }
    }
}
