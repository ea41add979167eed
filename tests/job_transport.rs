//! A job fed by a transport instead of the program (`JobBuilder::run_options`), as the command
//! line's live mode runs: a followed file's epochs reach `Job::changes`, the job ends with its
//! input (`Job::finish` returns the driver's report), program submissions are refused with a
//! clear error, and a run that cannot start returns the driver's error with its kind.

use ripples::driver::{Layout, RunError, RunOptions, Source};
use ripples::job::{Job, JobError};
use ripples::live::{LiveConfig, LiveInput};

/// One change: key, value, diff.
type Change = (u64, u64, isize);

fn follow(path: &std::path::Path, workers: usize) -> RunOptions {
    let live = LiveConfig { workers, ..LiveConfig::new(LiveInput::Follow(path.to_path_buf())) };
    RunOptions { layout: Layout::threads(workers), source: Source::Live(live), ..RunOptions::default() }
}

#[test]
fn a_job_follows_a_file_and_ends_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("updates.txt");
    std::fs::write(&path, "+ 1 2\n+ 2 3\n+ 7 8\ncommit\n- 2 3\n+ 3 7\nend\n").unwrap();
    let mut job =
        Job::builder().builtin("wcc").unwrap().changes().run_options(follow(&path, 2)).start().expect("started");
    // Updates come from the file, not from the program.
    let refused = job.insert(4, 5).unwrap_err();
    assert!(matches!(refused, JobError::Config(_)), "{refused}");
    assert!(refused.to_string().contains("its own input"), "{refused}");
    let changes = job.take_changes().expect("a changes channel");
    let report = job.finish().expect("the run").expect("process 0 reports");
    assert_eq!(report.summary.updates, 5);
    let epochs: Vec<(u64, Vec<Change>)> = changes
        .iter()
        .map(|e| (e.epoch, e.of("wcc").unwrap().iter().map(|c| (c.key, c.value, c.diff as isize)).collect()))
        .collect();
    assert_eq!(
        epochs,
        vec![
            (0, vec![]),
            (1, vec![(1, 1, 1), (2, 1, 1), (3, 1, 1), (7, 7, 1), (8, 7, 1)]),
            (2, vec![(3, 1, -1), (3, 3, 1), (7, 7, -1), (7, 3, 1), (8, 7, -1), (8, 3, 1)]),
        ]
    );
}

#[test]
fn a_job_that_cannot_start_returns_the_drivers_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-graph.txt");
    let mut options = follow(&dir.path().join("updates.txt"), 1);
    if let Source::Live(cfg) = &mut options.source {
        cfg.graph = Some(missing.clone());
    }
    let err = Job::builder().builtin("wcc").unwrap().run_options(options).start().err().expect("an error");
    let JobError::Run(run) = &err else { panic!("not the driver's error: {err}") };
    assert!(err.to_string().contains("no-such-graph.txt"), "the message names the file: {err}");
    assert!(matches!(run, RunError::LiveStart(_)), "the front end's start error: {run:?}");
}
