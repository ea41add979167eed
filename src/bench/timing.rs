//! [`timed_epochs`]: how the sequential systems (`uf-*`, `recompute`) time their epochs, with
//! the time limit applied.
//!
//! ```
//! use std::time::Duration;
//! use ripples::bench::timing::timed_epochs;
//! let updates: Vec<u32> = (0..10).collect();
//! let mut seen = Vec::new();
//! let measured = timed_epochs(&updates, 4, Duration::from_secs(60), |chunk| seen.push(chunk.len()));
//! // Chunks of 4, 4 and 2; the initial graph counts as epoch 0.
//! assert_eq!(seen, vec![4, 4, 2]);
//! assert_eq!((measured.epochs, measured.updates, measured.partial), (4, 10, false));
//! // With no time at all, the first epoch already reaches the limit: the run is partial.
//! let partial = timed_epochs(&updates, 4, Duration::ZERO, |_| {});
//! assert_eq!((partial.updates, partial.partial), (4, true));
//! ```

use std::time::{Duration, Instant};

use super::result::{Latency, Measured};

/// Runs `epoch` on consecutive chunks of `batch` items, timing each, until the items run out or
/// the time spent reaches `limit` (then the run is partial). Epoch 0 (the initial graph) is not
/// timed but counted.
pub fn timed_epochs<T>(items: &[T], batch: usize, limit: Duration, mut epoch: impl FnMut(&[T])) -> Measured {
    let mut latencies_ms = Vec::new();
    let (mut processed, mut busy_secs, mut partial) = (0u64, 0.0f64, false);
    for chunk in items.chunks(batch) {
        let t = Instant::now();
        epoch(chunk);
        let dt = t.elapsed().as_secs_f64();
        busy_secs += dt;
        latencies_ms.push(dt * 1000.0);
        processed += chunk.len() as u64;
        if busy_secs >= limit.as_secs_f64() {
            partial = processed < items.len() as u64;
            break;
        }
    }
    Measured {
        epochs: latencies_ms.len() as u64 + 1,
        updates: processed,
        updates_per_sec: if busy_secs > 0.0 { processed as f64 / busy_secs } else { 0.0 },
        latency: Latency::of(&latencies_ms),
        partial,
        wcc_fallbacks: None,
    }
}
