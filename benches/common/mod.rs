//! Shared by the per-epoch benches.

use std::time::Duration;

use ripples::dataflow::Algorithm;
use ripples::driver::{self, MemoryStream, RunOptions};
use ripples::sources::stream;

/// Loads `initial` as epoch 0, then runs `epochs` epochs of a churn stream (half insertions, half
/// deletions of present edges) of `batch` updates each, and returns the summed latency of the
/// update epochs (from handing each over to the output frontier passing it).
pub fn epochs_latency<A: Algorithm>(
    initial: &[(u64, u64)],
    batch: usize,
    epochs: u64,
    workers: usize,
    algorithm: A,
) -> Duration {
    let updates = stream::churn(initial, batch * epochs as usize, 0.5, 42);
    let mem = MemoryStream {
        vertices: vec![],
        initial: initial.iter().map(|&(s, d)| (s, d, None)).collect(),
        updates,
        batch,
    };
    let mut options = RunOptions::memory(mem, workers);
    options.collect = false;
    let report = driver::run(options, algorithm).expect("run").expect("report");
    let ms: f64 = report.epochs[1..].iter().map(|e| e.latency_ms).sum();
    Duration::from_secs_f64(ms / 1000.0)
}
