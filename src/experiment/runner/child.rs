//! The child side of a `bench:` system's cell: `ripples experiment system ...` (hidden), started
//! by the runner in the cell's child process.
//!
//! It reads the cell's graph and update files into a bench [`Stream`], runs the system through
//! [`bench::child::run_stream`] (the same code `ripples bench` times), writes the final result to
//! `--output` and the figures as one [`Metrics`] JSON line to `--stats`. The bench systems
//! report p50, p95, p99 and max epoch latency: p90, p99.9 and the load time stay empty.

use std::path::Path;

use crate::bench::{self, Stream};
use crate::experiment::record::{Metrics, Percentiles};
use crate::experiment::systems::{self, System};
use crate::experiment::ExperimentError;
use crate::sources::parse;

/// The child side: runs bench system `system` (`bench:NAME`; a bare `NAME` is taken as the bench
/// system's name too) over the cell's files.
#[allow(clippy::too_many_arguments)]
pub fn child_main(
    system: &System,
    algorithm: &str,
    stream: &str,
    graph: &Path,
    updates: &Path,
    batch: usize,
    workers: usize,
    time_limit_secs: f64,
    output: &Path,
    stats: &Path,
) -> Result<(), ExperimentError> {
    let input = |e: parse::SourceError| ExperimentError::Input(e.to_string());
    let initial: Vec<_> = parse::read_edges(graph).map_err(input)?.into_iter().map(|(s, d, _)| (s, d)).collect();
    let updates: Vec<_> = parse::read_updates(updates).map_err(input)?.into_iter().map(|(_, u)| u).collect();
    let live = initial.len() as i64 + updates.iter().map(|u| u.diff as i64).sum::<i64>();
    let name = match system {
        System::Bench(name) => name.clone(),
        other => other.to_string(),
    };
    let system = bench::systems::by_name(&name).map_err(|e| ExperimentError::Input(e.to_string()))?;
    let scenario = systems::scenario(algorithm, stream, workers, batch, time_limit_secs);
    let stream = Stream { initial, updates, batch, live_edges: live.max(0) as u64 };
    let r = bench::child::run_stream(&scenario, system.as_ref(), stream, Some(output))
        .map_err(|e| ExperimentError::Io(e.to_string()))?;
    let metrics = Metrics {
        load_seconds: None,
        updates_per_sec: r.updates_per_sec,
        updates: r.updates,
        measured_epochs: r.epochs.saturating_sub(1),
        warmup_epochs: 0,
        latency: Percentiles {
            p50_ms: r.latency.p50_ms,
            p90_ms: None,
            p99_ms: r.latency.p99_ms,
            p999_ms: None,
            max_ms: r.latency.max_ms,
        },
        peak_rss_bytes: r.peak_rss_bytes,
        ..Metrics::default()
    };
    let line = serde_json::to_string(&metrics).map_err(|e| ExperimentError::Io(e.to_string()))?;
    std::fs::write(stats, line + "\n")
        .map_err(|e| ExperimentError::Io(format!("cannot write {}: {}", stats.display(), e)))?;
    if r.partial {
        return Err(ExperimentError::Io(format!(
            "partial: stopped at the time limit after {} of the updates",
            r.updates
        )));
    }
    Ok(())
}
