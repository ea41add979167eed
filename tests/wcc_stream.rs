//! WCC through the library driver on random insert/delete streams, checked at every epoch
//! against the sequential oracle, with 1, 2 and 3 workers.

mod common;

use common::*;
use ripples::dataflow::wcc::Wcc;
use ripples::driver::{self, MemoryStream, RunError, RunOptions};
use ripples::types::Update;

fn run(stream: &RandomStream, batch: usize, workers: usize) -> Vec<ripples::sinks::Change> {
    let updates: Vec<Update> = stream.epochs.iter().flatten().copied().collect();
    let mem = MemoryStream {
        vertices: stream.vertices.clone(),
        initial: stream.initial.iter().map(|&(s, d)| (s, d, None)).collect(),
        updates,
        batch,
    };
    let report = driver::run(RunOptions::memory(mem, workers), Wcc).expect("run").expect("writer report");
    report.changes.expect("collected changes")
}

fn check(seed: u64, vertices: usize, initial: usize, epochs: usize, batch: usize, workers: usize) {
    let stream = rebatch(&random_stream(seed, vertices, initial, epochs, batch), batch);
    let changes = run(&stream, batch, workers);
    let expected = edge_counts_per_epoch(&stream);
    let states = states_per_epoch(&changes, stream.epochs.len() as u64);
    for (epoch, counts) in expected.iter().enumerate() {
        let (vs, es) = oracle_input(&stream.vertices, counts);
        let want = ripples::oracle::wcc(&vs, &es);
        assert_eq!(
            states[epoch], want,
            "seed {} workers {} batch {}: WCC differs from the oracle at epoch {}",
            seed, workers, batch, epoch
        );
    }
}

#[test]
fn random_streams_match_oracle_every_epoch() {
    for seed in 1..=4u64 {
        for workers in [1, 2, 3] {
            check(seed, 40, 30, 25, 6, workers);
        }
    }
}

#[test]
fn sparse_streams_with_many_splits() {
    // Few edges over many vertices: components split and vertices vanish often.
    for seed in 10..=12u64 {
        for workers in [1, 3] {
            check(seed, 60, 10, 40, 3, workers);
        }
    }
}

#[test]
fn single_update_epochs() {
    check(77, 20, 15, 60, 1, 2);
}

#[test]
fn gelly_streaming_golden_case() {
    // Edges 1-2, 1-3, 2-3, 1-5, 6-7, 8-9 give {1,2,3,5}, {6,7}, {8,9}.
    let edges = [(1, 2), (1, 3), (2, 3), (1, 5), (6, 7), (8, 9)];
    for workers in [1, 2] {
        let mem = MemoryStream {
            vertices: vec![],
            initial: vec![],
            updates: edges.iter().map(|&(s, d)| Update::insert(s, d)).collect(),
            batch: 1,
        };
        let report = driver::run(RunOptions::memory(mem, workers), Wcc).unwrap().unwrap();
        let states = states_per_epoch(&report.changes.unwrap(), edges.len() as u64);
        let last = states.last().unwrap();
        let want: Vec<(u64, u64)> = vec![(1, 1), (2, 1), (3, 1), (5, 1), (6, 6), (7, 6), (8, 8), (9, 8)];
        assert_eq!(last.iter().map(|(&k, &v)| (k, v)).collect::<Vec<_>>(), want);
        assert!(states[0].is_empty());
    }
}

#[test]
fn deleting_an_absent_edge_is_an_input_error_before_anything_runs() {
    let mem = MemoryStream {
        vertices: vec![],
        initial: vec![(1, 2, None)],
        updates: vec![Update::insert(2, 3), Update::delete(1, 2), Update::delete(1, 2)],
        batch: 1,
    };
    match driver::run(RunOptions::memory(mem, 2), Wcc) {
        Err(RunError::Input(msg)) => {
            assert!(msg.contains(":3:") && msg.contains("not present"), "message: {}", msg);
        }
        other => panic!("expected an input error, got {:?}", other.map(|r| r.map(|r| r.summary))),
    }
}

#[test]
fn stats_are_per_epoch() {
    let stream = rebatch(&random_stream(5, 30, 20, 10, 4), 4);
    let updates: Vec<Update> = stream.epochs.iter().flatten().copied().collect();
    let n = updates.len();
    let mem = MemoryStream {
        vertices: vec![],
        initial: stream.initial.iter().map(|&(s, d)| (s, d, None)).collect(),
        updates,
        batch: 4,
    };
    let report = driver::run(RunOptions::memory(mem, 2), Wcc).unwrap().unwrap();
    assert_eq!(report.epochs.len(), 1 + stream.epochs.len());
    assert_eq!(report.epochs[0].updates, 20);
    assert_eq!(report.epochs.iter().skip(1).map(|e| e.updates).sum::<u64>(), n as u64);
    let lines: u64 = report.epochs.iter().map(|e| e.output_changes).sum();
    assert_eq!(lines, report.changes.unwrap().len() as u64);
    assert!(report.epochs.iter().all(|e| e.rss_bytes > 0));
}

/// A run cut short by its time limit writes only exact epochs, whatever epoch it stops at: the
/// writer decides where the run stops and the other workers of its process follow (a worker
/// that stopped on its own clock first would let the writer write an epoch without its share).
/// Fixed seeds; many stopping points through the limits.
#[test]
fn a_time_limited_run_writes_only_exact_epochs() {
    let mut stopped_early = 0;
    for seed in 20..=27u64 {
        let stream = rebatch(&random_stream(seed, 40, 30, 300, 6), 6);
        let expected = edge_counts_per_epoch(&stream);
        for workers in [2, 3] {
            let updates: Vec<Update> = stream.epochs.iter().flatten().copied().collect();
            let mem = MemoryStream {
                vertices: stream.vertices.clone(),
                initial: stream.initial.iter().map(|&(s, d)| (s, d, None)).collect(),
                updates,
                batch: 6,
            };
            let limit = std::time::Duration::from_micros(200 * seed);
            let options = RunOptions { time_limit: Some(limit), ..RunOptions::memory(mem, workers) };
            let report = driver::run(options, Wcc).expect("run").expect("writer report");
            let last = report.epochs.last().expect("epoch 0 at least").epoch;
            stopped_early += usize::from(last < stream.epochs.len() as u64);
            let states = states_per_epoch(&report.changes.expect("collected changes"), last);
            for (epoch, counts) in expected.iter().enumerate().take(last as usize + 1) {
                let (vs, es) = oracle_input(&stream.vertices, counts);
                assert_eq!(
                    states[epoch],
                    ripples::oracle::wcc(&vs, &es),
                    "seed {} workers {} (stopped after epoch {}): WCC differs from the oracle at epoch {}",
                    seed,
                    workers,
                    last,
                    epoch
                );
            }
        }
    }
    assert!(stopped_early > 0, "no run stopped at its time limit: the test checks nothing");
}
