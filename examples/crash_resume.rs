//! Crash and resume through the library: a job with a state directory is killed in the middle
//! of its stream (the process aborts: no shutdown, no flush), and a new job started on the same
//! directory recovers every committed epoch and goes on, with the same answer as a run that
//! never crashed.
//!
//! What it teaches: `JobBuilder::state_dir` (every committed epoch reaches the fsynced
//! write-ahead log before the dataflow sees it), recovery at `start` (the recovered epochs are
//! replayed, so `value` and `result` are back before anything new is pushed), and `commit`'s
//! numbering continuing after the last durable epoch.
//!
//! ```text
//! cargo run --release --example crash_resume -- 2      # with 2 workers (default 2)
//! ```
//!
//! The example runs itself as a child process that aborts after 30 of 50 epochs; it exits
//! non-zero if the resumed result differs from an uninterrupted run's (CI runs it).

use std::path::Path;

use ripples::job::Job;
use ripples::types::Node;

const EPOCHS: u64 = 50;
const CRASH_AFTER: u64 = 30;

/// The stream's epoch `e` (1-based): a path 0-1-2-... grown by one edge per epoch, and from
/// epoch 10 on, the edge added 10 epochs earlier removed again (the path breaks into pieces).
fn epoch_updates(e: u64) -> ((Node, Node), Option<(Node, Node)>) {
    let remove = (e > 10 && e.is_multiple_of(3)).then(|| (e - 11, e - 10));
    ((e - 1, e), remove)
}

fn push(job: &mut Job, e: u64) {
    let ((a, b), remove) = epoch_updates(e);
    job.insert(a, b).expect("insert");
    if let Some((a, b)) = remove {
        job.remove(a, b).expect("remove");
    }
    let closed = job.commit().expect("commit");
    assert_eq!(closed, e, "commit numbers continue across the restart");
}

fn start(dir: &Path, workers: usize) -> Job {
    Job::builder().builtin("wcc").expect("built in").workers(workers).state_dir(dir).start().expect("start")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers: usize = args.get(1).and_then(|w| w.parse().ok()).unwrap_or(2);
    if args.get(2).map(String::as_str) == Some("child") {
        // The child: push epochs until CRASH_AFTER is durable, then die without a word.
        let mut job = start(Path::new(&args[3]), workers);
        for e in 1..=CRASH_AFTER {
            push(&mut job, e);
        }
        job.wait(CRASH_AFTER).expect("completes");
        std::process::abort();
    }

    let dir = std::env::temp_dir().join(format!("ripples-crash-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let exe = std::env::current_exe().expect("own path");
    let status = std::process::Command::new(exe)
        .args([workers.to_string(), "child".into(), dir.display().to_string()])
        .status()
        .expect("run the child");
    // The child aborts (SIGABRT) once epoch CRASH_AFTER is durable; anything else is a failure.
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if status.signal() != Some(6) {
            eprintln!("crash_resume: the child did not crash as planned: {}", status);
            std::process::exit(1);
        }
    }

    // Resume: recovery replays epochs 1..=CRASH_AFTER before start returns... and completes them.
    let mut job = start(&dir, workers);
    job.wait(CRASH_AFTER).expect("the recovered epochs complete");
    let recovered = job.result("wcc").expect("wcc");
    for e in CRASH_AFTER + 1..=EPOCHS {
        push(&mut job, e);
    }
    job.wait(EPOCHS).expect("completes");
    let resumed = job.result("wcc").expect("wcc");
    job.shutdown().expect("clean end");

    // The same stream without a crash, in memory.
    let mut fresh = Job::builder().builtin("wcc").expect("built in").workers(workers).start().expect("start");
    for e in 1..=EPOCHS {
        push(&mut fresh, e);
        if e == CRASH_AFTER {
            fresh.wait(e).expect("completes");
            if fresh.result("wcc").expect("wcc") != recovered {
                eprintln!("crash_resume: the recovered state differs from epoch {}'s", e);
                std::process::exit(1);
            }
        }
    }
    fresh.wait(EPOCHS).expect("completes");
    let uninterrupted = fresh.result("wcc").expect("wcc");
    fresh.shutdown().expect("clean end");
    let _ = std::fs::remove_dir_all(&dir);
    if resumed != uninterrupted {
        eprintln!("crash_resume: the resumed run's result differs from the uninterrupted run's");
        std::process::exit(1);
    }
    println!(
        "crash_resume: crashed after epoch {}, recovered {} vertices, resumed to epoch {}: same result as without a crash ({} workers)",
        CRASH_AFTER,
        recovered.len(),
        EPOCHS,
        workers
    );
}
