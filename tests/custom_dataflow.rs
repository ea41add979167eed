//! A user-defined dataflow (the degree distribution of `examples/degree_distribution.rs`) under
//! the driver: checked at every epoch against a plain computation, with 1 and 2 workers.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use ripples::dataflow::custom;
use ripples::driver::{self, MemoryStream, RunOptions};
use ripples::types::Update;

fn degree_distribution(counts: &BTreeMap<(u64, u64), i64>) -> BTreeMap<u64, u64> {
    let mut neighbours: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for &(s, d) in counts.keys() {
        if s != d {
            neighbours.entry(s).or_default().insert(d);
            neighbours.entry(d).or_default().insert(s);
        }
    }
    let mut dist = BTreeMap::new();
    for n in neighbours.values() {
        *dist.entry(n.len() as u64).or_insert(0) += 1;
    }
    dist
}

#[test]
fn degree_distribution_matches_every_epoch() {
    for workers in [1, 2] {
        let seed = 9;
        let s = random_stream(seed, 30, 40, 15, 5);
        let updates: Vec<Update> = s.epochs.iter().flatten().copied().collect();
        let epochs: Vec<Vec<Update>> = updates.chunks(5).map(|c| c.to_vec()).collect();
        let s = RandomStream { vertices: vec![], initial: s.initial, epochs };
        let alg = custom("degree-distribution", |input| {
            input
                .edges
                .flat_map(|(s, d, _)| if s == d { vec![] } else { vec![(s, d), (d, s)] })
                .distinct()
                .map(|(s, _)| s)
                .count()
                .map(|(_v, degree)| degree as u64)
                .count()
                .map(|(degree, n)| (degree, n as u64))
        });
        let mem = MemoryStream {
            vertices: vec![],
            initial: s.initial.iter().map(|&(a, b)| (a, b, None)).collect(),
            updates,
            batch: 5,
        };
        let report = driver::run(RunOptions::memory(mem, workers), alg).unwrap().unwrap();
        let states = states_per_epoch(&report.changes.unwrap(), s.epochs.len() as u64);
        for (epoch, counts) in edge_counts_per_epoch(&s).iter().enumerate() {
            assert_eq!(states[epoch], degree_distribution(counts), "seed {} workers {} epoch {}", seed, workers, epoch);
        }
    }
}
