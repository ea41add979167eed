//! A windowed stream: edges carry event times and live for a sliding window of them. The job
//! is fed in event-time order; the result at every event time `t` is the components of the edges
//! whose time lies in `(t - span, t]`, and ripples retracts each edge by itself when it leaves.
//!
//! What it teaches: `JobBuilder::window` with `WindowSpec::new(WindowKind::Sliding, span)`,
//! `Job::insert_at(src, dst, time)`, that a windowed run's changes are labelled with their own
//! event time and delivered once the watermark has passed it, and `take_changes` to keep
//! reading the changes that the end of the stream releases (up to its largest event time).
//!
//! ```text
//! cargo run --release --example windowed_job -- 2     # with 2 workers (default 2)
//! ```
//!
//! It exits non-zero if the result at any event time differs from the sequential oracle over that
//! time's window (CI runs it).

use std::collections::BTreeMap;

use ripples::job::Job;
use ripples::sources::window::{WindowKind, WindowSpec};
use ripples::types::{Node, Time};

const SPAN: Time = 8;
const TIMES: Time = 40;

/// Smallest id of each vertex's component, by ripples' plain sequential oracle (written
/// separately from every dataflow).
fn components(edges: &[(Node, Node)]) -> BTreeMap<Node, u64> {
    let edges: Vec<(Node, Node, f64)> = edges.iter().map(|&(a, b)| (a, b, 1.0)).collect();
    ripples::oracle::wcc::wcc(&ripples::oracle::vertex_set([], &edges), &edges)
}

fn main() {
    let workers: usize = std::env::args().nth(1).and_then(|w| w.parse().ok()).unwrap_or(2);
    let window = WindowSpec::new(WindowKind::Sliding, SPAN);
    let mut job = Job::builder()
        .builtin("wcc")
        .expect("built in")
        .workers(workers)
        .window(window)
        .changes()
        .start()
        .expect("start");
    let changes = job.take_changes().expect("asked for changes");

    // Five edges at every event time 1..=TIMES, one epoch per time.
    let mut x = 3u64;
    let mut next = move |n: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let mut timed: Vec<(Time, Node, Node)> = Vec::new();
    for t in 1..=TIMES {
        for _ in 0..5 {
            let (a, b) = (next(30), next(30));
            job.insert_at(a, b, t).expect("insert");
            timed.push((t, a, b));
        }
        job.commit().expect("commit");
    }
    let report = job.shutdown().expect("a clean end");

    // Apply the changes time by time and compare with the oracle over the window at every time.
    let mut by_time: BTreeMap<Time, Vec<ripples::sinks::Change>> = BTreeMap::new();
    for epoch in changes.try_iter() {
        for c in epoch.of("wcc").expect("wcc runs") {
            by_time.entry(c.epoch).or_default().push(*c);
        }
    }
    let mut result: BTreeMap<Node, u64> = BTreeMap::new();
    // The stream's results end at its largest event time.
    for t in 0..=TIMES {
        for c in by_time.remove(&t).unwrap_or_default() {
            if c.diff > 0 {
                result.insert(c.key, c.value);
            } else if result.get(&c.key) == Some(&c.value) {
                result.remove(&c.key);
            }
        }
        let in_window: Vec<(Node, Node)> =
            timed.iter().filter(|(s, _, _)| *s <= t && t < *s + SPAN).map(|&(_, a, b)| (a, b)).collect();
        if result != components(&in_window) {
            eprintln!("windowed_job: event time {} disagrees with the oracle over its window", t);
            std::process::exit(1);
        }
    }
    assert!(by_time.is_empty(), "no changes after the largest event time");
    println!(
        "windowed_job: {} event times agree with the oracle over a sliding window of {} ({} epochs, {} workers)",
        TIMES + 1,
        SPAN,
        report.summary.epochs,
        workers
    );
}
