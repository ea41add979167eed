//! The systems of `ripples bench` in an experiment, as `bench:NAME` (`bench:uf-dense`,
//! `bench:recompute`, `bench:dd-propagate`, `bench:ripples-general`, ...).
//!
//! A cell of such a system runs `ripples experiment system ...` (hidden) in its child process:
//! it reads the cell's graph and update files into a bench [`Stream`], runs the system through
//! [`bench::child::run_stream`] (the same code `ripples bench` times), writes the final result to
//! `--output` and the figures as one [`Metrics`] JSON line to `--stats`. The bench systems
//! report p50, p95, p99 and max epoch latency: p90, p99.9 and the load time stay empty. A system
//! applies to a cell as it applies to the bench scenario of the same algorithm and stream shape
//! (`wcc-insert` for insert-only streams of WCC, `ALGORITHM-churn` otherwise); event-time streams
//! and `ripples-window` (a bench scenario of its own) are not offered.

use std::path::Path;

use super::record::{Metrics, Percentiles};
use super::ExperimentError;
use crate::bench::{self, Scenario, Stream};
use crate::sources::parse;

/// The prefix of a bench system's name in an experiment file.
pub const PREFIX: &str = "bench:";

/// The bench systems an experiment may name (with [`PREFIX`]).
pub fn names() -> Vec<String> {
    bench::systems::names().into_iter().filter(|n| *n != "ripples-window").map(|n| format!("{PREFIX}{n}")).collect()
}

/// The bench systems that run on one thread whatever `-w` says: the sequential baselines of a
/// COST figure.
pub const SEQUENTIAL: &[&str] = &["uf-hash", "uf-dense", "recompute"];

/// Whether `system` (with its prefix) is a sequential bench system ([`SEQUENTIAL`]).
pub fn sequential(system: &str) -> bool {
    system.strip_prefix(PREFIX).is_some_and(|n| SEQUENTIAL.contains(&n))
}

/// Stream kinds whose updates only insert.
fn insert_only(stream: &str) -> bool {
    matches!(stream, "insert" | "insert-random" | "timestamp" | "bulk")
}

/// The bench scenario a cell of `algorithm` over `stream` corresponds to.
pub fn scenario(algorithm: &str, stream: &str, workers: usize, batch: usize, time_limit_secs: f64) -> Scenario {
    let name =
        if algorithm == "wcc" && insert_only(stream) { "wcc-insert".into() } else { format!("{algorithm}-churn") };
    Scenario { name, scale: 0, edge_factor: 0, batch, window: 0, epochs: 0, seed: 0, workers, time_limit_secs }
}

/// Whether bench system `system` (with its prefix) runs `algorithm` over `stream`.
pub fn applies(system: &str, algorithm: &str, stream: &str) -> bool {
    let Some(name) = system.strip_prefix(PREFIX) else { return true };
    if stream.starts_with("event-") || algorithm == "bfs" || algorithm == "sssp" {
        // No event times in a bench stream; bench picks its own BFS/SSSP source.
        return false;
    }
    bench::systems::by_name(name).is_ok_and(|s| s.applies_to(&scenario(algorithm, stream, 1, 1, 1.0)))
}

/// The child side: runs a bench system over the cell's files.
#[allow(clippy::too_many_arguments)]
pub fn child_main(
    system: &str,
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
    let name = system.strip_prefix(PREFIX).unwrap_or(system);
    let system = bench::systems::by_name(name).map_err(|e| ExperimentError::Input(e.to_string()))?;
    let scenario = scenario(algorithm, stream, workers, batch, time_limit_secs);
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

#[cfg(test)]
mod tests {
    #[test]
    fn sequential_systems_exist() {
        for s in super::SEQUENTIAL {
            assert!(super::names().contains(&format!("bench:{s}")), "{s}");
            assert!(super::sequential(&format!("bench:{s}")));
        }
        assert!(!super::sequential("ripples") && !super::sequential("bench:ripples") && !super::sequential("uf-hash"));
    }
}
