//! The embeddable job (`ripples::job`): a random stream pushed from Rust, checked at every epoch
//! against the sequential WCC oracle, with 1 and 2 workers; its changes channel adds up to its
//! results; a state directory carries it across a restart; a bad deletion stops it clearly.

mod common;

use std::collections::BTreeMap;

use common::*;
use ripples::job::{Job, JobError};
use ripples::types::Node;

/// WCC of epoch `counts` by the oracle.
fn expected(counts: &BTreeMap<(Node, Node), i64>) -> Vec<(Node, u64)> {
    let (vertices, edges) = oracle_input(&[], counts);
    ripples::oracle::wcc::wcc(&vertices, &edges).into_iter().collect()
}

/// Pushes the stream's epochs `range` (the initial graph counts as epoch 0 of the stream),
/// checking the job's result against the oracle after each.
fn push_and_check(job: &mut Job, s: &RandomStream, range: std::ops::Range<usize>, seed: u64) {
    let counts = edge_counts_per_epoch(s);
    for i in range {
        if i == 0 {
            for &(a, b) in &s.initial {
                job.insert(a, b).unwrap();
            }
        } else {
            for u in &s.epochs[i - 1] {
                job.submit(*u, None).unwrap();
            }
        }
        let e = job.commit().unwrap();
        job.wait(e).unwrap();
        assert_eq!(
            job.result("wcc").unwrap(),
            expected(&counts[i]),
            "seed {} stream epoch {} (job epoch {})",
            seed,
            i,
            e
        );
    }
}

#[test]
fn job_matches_the_oracle_at_every_epoch() {
    for workers in [1, 2] {
        let seed = 31;
        let s = random_stream(seed, 40, 50, 25, 8);
        let mut job = Job::builder().builtin("wcc").unwrap().workers(workers).changes().start().unwrap();
        push_and_check(&mut job, &s, 0..s.epochs.len() + 1, seed);
        // The changes channel holds every epoch once, in order, and adds up to the result.
        let mut state: BTreeMap<(Node, u64), i64> = BTreeMap::new();
        let mut epochs = Vec::new();
        while let Ok(c) = job.changes().unwrap().try_recv() {
            epochs.push(c.epoch);
            for ch in c.of("wcc").unwrap() {
                *state.entry((ch.key, ch.value)).or_insert(0) += ch.diff as i64;
            }
        }
        state.retain(|_, n| *n != 0);
        assert_eq!(epochs, (0..=s.epochs.len() as u64 + 1).collect::<Vec<_>>(), "seed {}", seed);
        assert_eq!(state.into_keys().collect::<Vec<_>>(), job.result("wcc").unwrap());
        let report = job.shutdown().unwrap();
        assert_eq!(report.summary.epochs, s.epochs.len() as u64 + 2);
        assert_eq!(report.summary.workers, workers);
    }
}

#[test]
fn a_job_with_a_state_directory_continues_after_a_restart() {
    let seed = 44;
    let s = random_stream(seed, 30, 40, 20, 6);
    let dir = tempfile::tempdir().unwrap();
    let half = s.epochs.len() / 2;
    let mut job = Job::builder().builtin("wcc").unwrap().workers(2).state_dir(dir.path()).start().unwrap();
    push_and_check(&mut job, &s, 0..half, seed);
    let before = job.result("wcc").unwrap();
    job.shutdown().unwrap();

    let mut job = Job::builder().builtin("wcc").unwrap().workers(2).state_dir(dir.path()).start().unwrap();
    // Recovery replays every durable epoch: the result is back before anything new is pushed.
    job.wait(half as u64).unwrap();
    assert_eq!(job.result("wcc").unwrap(), before, "seed {}", seed);
    push_and_check(&mut job, &s, half..s.epochs.len() + 1, seed);
    job.shutdown().unwrap();
}

#[test]
fn deleting_an_absent_edge_stops_the_job_with_the_reason() {
    let mut job = Job::builder().builtin("wcc").unwrap().start().unwrap();
    job.insert(1, 2).unwrap();
    let e = job.commit().unwrap();
    job.wait(e).unwrap();
    job.remove(5, 6).unwrap();
    let e = job.commit().unwrap_or(e + 1);
    let err = job.wait(e).unwrap_err();
    assert!(matches!(err, JobError::Stopped(_)), "{err}");
    assert!(err.to_string().contains("5 6"), "the message names the edge: {err}");
    let err = job.shutdown().unwrap_err();
    assert!(err.to_string().contains("5 6"), "{err}");
}

#[test]
fn a_job_needs_an_algorithm_and_a_known_name() {
    assert!(matches!(Job::builder().start(), Err(JobError::Config(_))));
    let err = Job::builder().builtin("nope").err().unwrap();
    assert!(err.to_string().contains("nope"), "{err}");
}

/// Two jobs in one process are supervised apart: one whose dataflow panics stops with that
/// panic's message, while the other, running beside it, keeps matching the oracle and ends
/// cleanly; a panic of the host program's own thread (named like timely's workers) during the
/// run is the host's, not the job's.
#[test]
fn two_jobs_in_one_process_do_not_see_each_others_failures() {
    let seed = 57;
    let s = random_stream(seed, 30, 40, 16, 6);
    let mut healthy = Job::builder().builtin("wcc").unwrap().workers(2).start().unwrap();
    let failing = ripples::dataflow::custom("fails-on-666", |input| {
        input.edges.map(|(src, dst, _weight)| {
            assert!(src != 666, "injected failure at edge {} {}", src, dst);
            (src, dst)
        })
    });
    // Two workers: the one that does not see the edge stops too, instead of waiting for the other.
    let mut failing = Job::builder().algorithm(failing).workers(2).start().unwrap();
    let half = s.epochs.len() / 2;
    push_and_check(&mut healthy, &s, 0..half, seed);

    // The host's own thread panics while both jobs run.
    let host = std::thread::Builder::new()
        .name("timely:work-0".into())
        .spawn(|| panic!("the host program's own panic"))
        .unwrap()
        .join();
    assert!(host.is_err(), "the host's thread panicked");

    failing.insert(1, 2).unwrap();
    let e = failing.commit().unwrap();
    failing.wait(e).unwrap();
    failing.insert(666, 3).unwrap();
    let e = failing.commit().unwrap_or(e + 1);
    let err = failing.wait(e).unwrap_err();
    assert!(err.to_string().contains("injected failure at edge 666 3"), "{err}");
    let err = failing.shutdown().unwrap_err();
    assert!(err.to_string().contains("injected failure at edge 666 3"), "{err}");
    assert!(!err.to_string().contains("host"), "{err}");

    push_and_check(&mut healthy, &s, half..s.epochs.len() + 1, seed);
    let report = healthy.shutdown().expect("the healthy job ends without an error");
    assert_eq!(report.summary.epochs, s.epochs.len() as u64 + 2);
}
