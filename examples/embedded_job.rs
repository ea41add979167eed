//! Embedding a job and consuming its changes: your program is the producer. It pushes edge
//! insertions and deletions, commits epochs, and reads every epoch's changes from a channel
//! while the job runs on worker threads beside it. No command line, no files.
//!
//! What it teaches: `ripples::job::Job` — `builder()`, `builtin("wcc")`, `changes()`, `insert`,
//! `remove`, `commit` (returns the epoch it closed), `wait(epoch)`, `value(name, vertex)` and
//! `shutdown()` (the run's summary). The change channel carries exactly the change-log lines,
//! so summing them gives the result; ripples' sequential oracle checks it at every epoch.
//!
//! ```text
//! cargo run --release --example embedded_job -- 4      # with 4 workers (default 2)
//! ```
//!
//! It exits non-zero if any epoch disagrees with the sequential oracle (CI runs it).

use std::collections::BTreeMap;

use ripples::job::Job;
use ripples::types::Node;

/// Smallest id of each vertex's component, by ripples' plain sequential oracle (written
/// separately from every dataflow).
fn components(edges: &BTreeMap<(Node, Node), i64>) -> BTreeMap<Node, u64> {
    let edges: Vec<(Node, Node, f64)> = edges.keys().map(|&(a, b)| (a, b, 1.0)).collect();
    ripples::oracle::wcc::wcc(&ripples::oracle::vertex_set([], &edges), &edges)
}

fn main() {
    let workers: usize = std::env::args().nth(1).and_then(|w| w.parse().ok()).unwrap_or(2);
    let mut job =
        Job::builder().builtin("wcc").expect("wcc is built in").workers(workers).changes().start().expect("start");

    // A deterministic stream: 60 epochs over 200 vertices, inserting 20 edges and deleting 10
    // present ones per epoch (a linear congruential generator keeps it reproducible).
    let mut x = 7u64;
    let mut next = move |n: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let mut present: BTreeMap<(Node, Node), i64> = BTreeMap::new();
    let mut result: BTreeMap<Node, u64> = BTreeMap::new();
    for round in 0..60 {
        for _ in 0..20 {
            let (a, b) = (next(200), next(200));
            if a != b {
                job.insert(a, b).expect("insert");
                *present.entry((a, b)).or_insert(0) += 1;
            }
        }
        for _ in 0..10 {
            if present.is_empty() {
                break;
            }
            let i = next(present.len() as u64) as usize;
            let (&(a, b), _) = present.iter().nth(i).expect("in range");
            job.remove(a, b).expect("remove");
            let n = present.get_mut(&(a, b)).expect("present");
            *n -= 1;
            if *n == 0 {
                present.remove(&(a, b));
            }
        }
        let epoch = job.commit().expect("commit");
        job.wait(epoch).expect("the epoch completes");
        // Every epoch's changes arrive in order; apply them to our own copy of the result.
        for changes in job.changes().expect("asked for changes").try_iter() {
            for c in changes.of("wcc").expect("wcc runs") {
                if c.diff > 0 {
                    result.insert(c.key, c.value);
                } else if result.get(&c.key) == Some(&c.value) {
                    result.remove(&c.key);
                }
            }
        }
        let want = components(&present);
        if result != want {
            eprintln!("epoch {} (round {}): the changes add up to a different result", epoch, round);
            std::process::exit(1);
        }
        let v = *want.keys().next().expect("vertices");
        assert_eq!(job.value("wcc", v), want.get(&v).copied());
    }
    let report = job.shutdown().expect("a clean end");
    println!(
        "embedded_job: {} epochs (60 checked) agree with the oracle; {} updates at {:.0} updates/s, p99 {:.2} ms ({} workers)",
        report.summary.epochs, report.summary.updates, report.summary.updates_per_sec, report.summary.latency.p99_ms, workers
    );
}
