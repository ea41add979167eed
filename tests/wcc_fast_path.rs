//! The insert-only WCC fast path against the general differential path and the oracle: on
//! random insert-only streams both produce identical change logs, equal to the oracle at every
//! epoch, with 1, 2 and 3 workers.

mod common;

use common::*;
use rand::{Rng, SeedableRng};
use ripples::dataflow::wcc::{Wcc, WccGeneral};
use ripples::driver::{self, RunOptions};
use ripples::types::Update;

fn insert_only_stream(seed: u64, vertices: usize, initial: usize, epochs: usize, batch: usize) -> RandomStream {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let ids = id_pool(vertices);
    let mut pick = || ids[rng.gen_range(0..ids.len())];
    let initial: Vec<(u64, u64)> = (0..initial).map(|_| (pick(), pick())).collect();
    let epochs: Vec<Vec<Update>> =
        (0..epochs).map(|_| (0..batch).map(|_| Update::insert(pick(), pick())).collect()).collect();
    let vfile: Vec<u64> = ids.iter().copied().step_by(9).collect();
    RandomStream { vertices: vfile, initial, epochs }
}

#[test]
fn fast_path_equals_general_path_and_oracle() {
    for seed in 1..=5u64 {
        let batch = 1 + (seed as usize % 4);
        let s = insert_only_stream(seed, 80, 20, 30, batch);
        let general = driver::run(RunOptions::memory(memory(&s, batch), 1), WccGeneral).unwrap().unwrap();
        let general = general.changes.unwrap();
        for workers in [1, 2, 3] {
            let fast = driver::run(RunOptions::memory(memory(&s, batch), workers), Wcc).unwrap().unwrap();
            let fast = fast.changes.unwrap();
            assert_eq!(
                fast, general,
                "seed {} workers {}: fast path and general path change logs differ",
                seed, workers
            );
        }
        let states = states_per_epoch(&general, s.epochs.len() as u64);
        for (epoch, counts) in edge_counts_per_epoch(&s).iter().enumerate() {
            let (vs, es) = oracle_input(&s.vertices, counts);
            assert_eq!(states[epoch], ripples::oracle::wcc(&vs, &es), "seed {} epoch {}", seed, epoch);
        }
    }
}

#[test]
fn fast_path_on_a_larger_generated_stream() {
    let edges = ripples::sources::generate::rmat(10, 8, 3);
    let s = RandomStream {
        vertices: vec![],
        initial: edges[..2000].to_vec(),
        epochs: edges[2000..].chunks(500).map(|c| c.iter().map(|&(a, b)| Update::insert(a, b)).collect()).collect(),
    };
    let general = driver::run(RunOptions::memory(memory(&s, 500), 2), WccGeneral).unwrap().unwrap().changes.unwrap();
    let fast = driver::run(RunOptions::memory(memory(&s, 500), 2), Wcc).unwrap().unwrap().changes.unwrap();
    assert_eq!(fast, general);
}

#[test]
fn fast_path_with_extreme_ids_equals_the_oracle_at_every_epoch() {
    // Ids at both ends of the range (0, u64::MAX, around 2^32) mixed with small ones, so that
    // the id tables of both stages use their dense part and their hash map.
    let mut ids: Vec<u64> = (0..40u64).collect();
    ids.extend([u64::MAX, u64::MAX - 1, 1 << 32, (1 << 32) - 1, (1 << 32) + 1, 1 << 63]);
    for seed in 11..=14u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut pick = || ids[rng.gen_range(0..ids.len())];
        let initial: Vec<(u64, u64)> = (0..10).map(|_| (pick(), pick())).collect();
        let epochs: Vec<Vec<Update>> =
            (0..25).map(|_| (0..3).map(|_| Update::insert(pick(), pick())).collect()).collect();
        let s = RandomStream { vertices: vec![u64::MAX, 7], initial, epochs };
        for workers in [1, 3] {
            let fast = driver::run(RunOptions::memory(memory(&s, 3), workers), Wcc).unwrap().unwrap();
            let states = states_per_epoch(&fast.changes.unwrap(), s.epochs.len() as u64);
            for (epoch, counts) in edge_counts_per_epoch(&s).iter().enumerate() {
                let (vs, es) = oracle_input(&s.vertices, counts);
                assert_eq!(
                    states[epoch],
                    ripples::oracle::wcc(&vs, &es),
                    "seed {} workers {} epoch {}",
                    seed,
                    workers,
                    epoch
                );
            }
        }
    }
}

/// Runs the insert-only path outside the driver with every worker handing its records to the
/// dataflow in *reverse* time order, each time's batch flushed and stepped on its own, so that
/// the local forests see later times first; returns the raw output.
fn reversed_times_output(s: &RandomStream, workers: usize) -> Vec<((u64, u64), u64, isize)> {
    use differential_dataflow::input::InputSession;
    use ripples::dataflow::{Algorithm, GraphInput};
    use std::sync::{Arc, Mutex};
    use timely::dataflow::operators::Inspect;
    let sink = Arc::new(Mutex::new(Vec::new()));
    let (out, s) = (sink.clone(), Arc::new(s.clone()));
    timely::execute(timely::Config::process(workers), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let mut edges_in: InputSession<u64, ripples::types::Edge, isize> = InputSession::new();
        let mut vertices_in: InputSession<u64, u64, isize> = InputSession::new();
        let out = out.clone();
        worker.dataflow::<u64, _, _>(|scope| {
            let input = GraphInput::new(edges_in.to_collection(scope), vertices_in.to_collection(scope), true);
            Wcc.build(input).inner.inspect(move |x| out.lock().expect("sink").push(*x));
        });
        if index == 0 {
            for &v in &s.vertices {
                vertices_in.update(v, 1);
            }
        }
        vertices_in.close();
        let weight = ripples::types::weight_bits(None);
        let times: Vec<Vec<(u64, u64)>> = std::iter::once(s.initial.clone())
            .chain(s.epochs.iter().map(|b| b.iter().map(|u| (u.src, u.dst)).collect()))
            .collect();
        for (t, batch) in times.iter().enumerate().rev() {
            for (i, &(a, b)) in batch.iter().enumerate() {
                if i % peers == index {
                    edges_in.update_at((a, b, weight), t as u64, 1);
                }
            }
            edges_in.flush();
            for _ in 0..4 {
                worker.step();
            }
        }
        edges_in.advance_to(times.len() as u64);
        edges_in.close();
    })
    .expect("timely");
    let v = sink.lock().expect("sink").clone();
    v
}

#[test]
fn fast_path_is_exact_when_a_worker_sees_later_times_first() {
    for seed in 21..=26u64 {
        let s = insert_only_stream(seed, 50, 8, 12, 5);
        for workers in [1, 2, 3] {
            let raw = reversed_times_output(&s, workers);
            let mut counts: std::collections::BTreeMap<(u64, u64), i64> = Default::default();
            for (epoch, edges) in edge_counts_per_epoch(&s).iter().enumerate() {
                for &(record, t, diff) in &raw {
                    if t == epoch as u64 {
                        *counts.entry(record).or_insert(0) += diff as i64;
                    }
                }
                counts.retain(|_, n| *n != 0);
                assert!(counts.values().all(|&n| n == 1), "seed {seed} workers {workers} epoch {epoch}: {counts:?}");
                let state: std::collections::BTreeMap<u64, u64> = counts.keys().copied().collect();
                let (vs, es) = oracle_input(&s.vertices, edges);
                assert_eq!(state, ripples::oracle::wcc(&vs, &es), "seed {seed} workers {workers} epoch {epoch}");
            }
        }
    }
}
