//! A user-defined dataflow (the degree distribution of `examples/degree_distribution.rs`) under
//! the driver: checked at every epoch against a plain computation, with 1 and 2 workers.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use ripples::dataflow::custom;
use ripples::driver::{self, RunOptions};

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
        let s = RandomStream { vertices: vec![], ..rebatch(&s, 5) };
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
        let mem = memory(&s, 5);
        let report = driver::run(RunOptions::memory(mem, workers), alg).unwrap().unwrap();
        let states = states_per_epoch(&report.changes.unwrap(), s.epochs.len() as u64);
        for (epoch, counts) in edge_counts_per_epoch(&s).iter().enumerate() {
            assert_eq!(states[epoch], degree_distribution(counts), "seed {} workers {} epoch {}", seed, workers, epoch);
        }
    }
}

/// What the observer was handed: output names, the first output's changes, epochs, finished.
type Seen = (Vec<String>, Vec<ripples::sinks::Change>, Vec<u64>, bool);

/// Records what an observer is handed.
struct Record(std::sync::Arc<std::sync::Mutex<Seen>>);

impl ripples::driver::observe::Observer for Record {
    fn start(&mut self, outputs: &[ripples::driver::observe::OutputInfo]) -> Result<(), String> {
        self.0.lock().unwrap().0 = outputs.iter().map(|o| o.name.clone()).collect();
        Ok(())
    }
    fn epoch(&mut self, view: &ripples::driver::observe::EpochView) -> Result<(), String> {
        let mut r = self.0.lock().unwrap();
        assert_eq!(view.changes.len(), 2, "one list per algorithm");
        assert_eq!(view.stats.epoch, view.epoch);
        assert_eq!(view.stats.output_changes as usize, view.changes.iter().map(|c| c.len()).sum::<usize>());
        r.1.extend(view.changes[0].iter().copied());
        r.2.push(view.epoch);
        Ok(())
    }
    fn finish(&mut self, _summary: &ripples::sinks::RunSummary) -> Result<(), String> {
        self.0.lock().unwrap().3 = true;
        Ok(())
    }
}

/// An observer sees every epoch in order, exactly the change log's lines, and the end.
#[test]
fn observers_see_exactly_the_change_log() {
    for workers in [1, 2] {
        let seed = 21;
        let s = random_stream(seed, 40, 60, 30, 6);
        let mem = memory(&RandomStream { vertices: vec![], ..s }, 6);
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Default::default()));
        let options = RunOptions {
            observers: ripples::driver::observe::Observers::default().with(Record(seen.clone())),
            ..RunOptions::memory(mem, workers)
        };
        let params = ripples::dataflow::Params::default();
        let algorithms = vec![
            ripples::dataflow::by_name("wcc", &params).unwrap(),
            ripples::dataflow::by_name("degree", &params).unwrap(),
        ];
        let report = driver::run_many(options, algorithms).unwrap().unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.0, ["wcc", "degree"], "seed {}", seed);
        assert_eq!(&seen.1, report.algorithms[0].changes.as_ref().unwrap(), "seed {} workers {}", seed, workers);
        assert_eq!(seen.2, (0..seen.2.len() as u64).collect::<Vec<_>>(), "every epoch once, in order");
        assert_eq!(seen.2.len() as u64, report.summary.epochs);
        assert!(seen.3, "finish was called");
    }
}

/// The ladder's collection rungs are generic over the timestamp: used inside a nested scope with
/// `(epoch, round)` timestamps in a user's dataflow, they give the oracle's answers at every epoch.
#[test]
fn the_ladder_works_inside_a_nested_scope() {
    use differential_dataflow::VecCollection;
    use ripples::dataflow::{bfs::hops, wcc::components};
    use ripples::types::{Diff, Node, Time};
    use timely::order::Product;

    type Nested<'a> = VecCollection<'a, Product<Time, u32>, (Node, u64), Diff>;
    let labels = custom("components-nested", |input| {
        let edges = input.edges.clone().map(|(s, d, _)| (s, d));
        let vertices = input.vertex_set();
        let outer = vertices.scope();
        outer.scoped::<Product<Time, u32>, _, _>("Ladder", |inner| {
            let labels: Nested = components(edges.enter(inner), vertices.enter(inner));
            labels.leave(outer)
        })
    });
    // Roots as data: vertex 0 whenever it is present.
    let distances = custom("hops-nested", |input| {
        let edges = input.edges.clone().map(|(s, d, _)| (s, d));
        let symmetric = edges.clone().concat(edges.map(|(s, d)| (d, s)));
        let roots = input.vertex_set().filter(|v| *v == 0);
        let outer = roots.scope();
        outer.scoped::<Product<Time, u32>, _, _>("Ladder", |inner| {
            let hops: Nested = hops(symmetric.enter(inner), roots.enter(inner));
            hops.leave(outer)
        })
    });
    let algorithms: Vec<Box<dyn ripples::dataflow::Algorithm>> = vec![Box::new(labels), Box::new(distances)];
    let seed = 17;
    let s = random_stream(seed, 25, 30, 12, 4);
    let s = RandomStream { vertices: vec![], ..rebatch(&s, 4) };
    let mem = memory(&s, 4);
    let report = driver::run_many(RunOptions::memory(mem, 2), algorithms).unwrap().unwrap();
    let last = s.epochs.len() as u64;
    let labels = states_per_epoch(report.algorithms[0].changes.as_ref().unwrap(), last);
    let distances = states_per_epoch(report.algorithms[1].changes.as_ref().unwrap(), last);
    for (epoch, counts) in edge_counts_per_epoch(&s).iter().enumerate() {
        let (vertices, edges) = oracle_input(&[], counts);
        assert_eq!(labels[epoch], ripples::oracle::wcc::wcc(&vertices, &edges), "seed {} epoch {}", seed, epoch);
        let undirected = ripples::oracle::symmetrize(&edges);
        let mut hops = ripples::oracle::bfs::bfs(&vertices, &undirected, 0);
        hops.retain(|_, h| *h != ripples::oracle::bfs::BFS_UNREACHABLE);
        assert_eq!(distances[epoch], hops, "seed {} epoch {}", seed, epoch);
    }
    assert!(distances.iter().any(|d| d.len() > 2), "the root reaches something in some epoch");
}
