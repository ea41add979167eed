//! The records a run reports: one per epoch ([`EpochStats`]), latency percentiles
//! ([`LatencySummary`]) and the run's summary ([`RunSummary`]). The driver fills them, the
//! `--stats` sink writes them as JSON lines, and the bench reads them back.
//!
//! ```
//! use ripples::types::stats::LatencySummary;
//! let s = LatencySummary::of(&[1.0, 2.0, 3.0, 4.0]);
//! assert_eq!(s.max_ms, 4.0);
//! assert!((s.mean_ms - 2.5).abs() < 1e-12);
//! assert!((s.p50_ms - 2.0).abs() < 0.01);
//! ```

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// What one epoch did.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct EpochStats {
    /// The epoch (with windows: the driver's epoch; its changes carry their event times).
    pub epoch: u64,
    /// Update lines (for epoch 0: edges of the initial graph) in this epoch, over all workers.
    pub updates: u64,
    /// From the moment the epoch's input was handed over until the output frontier passed it.
    pub latency_ms: f64,
    /// The epoch's share of the run's update time: its latency less its overlap with the epochs
    /// completed before it (the same as `latency_ms` unless epochs are in flight together, as in
    /// a cluster). The update time, and so updates/s, is the sum of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_ms: Option<f64>,
    /// Lines written to the change log for this epoch.
    pub output_changes: u64,
    /// Resident memory of the writing process after the epoch.
    pub rss_bytes: u64,
    /// Windowed runs: the watermark after this epoch (updates older than it are late).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watermark: Option<u64>,
    /// Windowed runs: late updates dropped in this epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    /// With observers that apply epochs on their own thread (`--serve`): how many completed
    /// epochs they had not applied yet when this one was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observer_lag: Option<u64>,
    /// `--stats`: vertices present after this epoch (the vertex set: vertex-file vertices and
    /// endpoints of present edges).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertices: Option<u64>,
    /// `--stats`: edges present after this epoch, as distinct undirected pairs `{u, v}`,
    /// `u != v` (parallel copies, direction and self-loops ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edges: Option<u64>,
    /// `--stats` with `triangles` running: the graph's triangles after this epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triangles: Option<u64>,
    /// With WCC on its fully dynamic path: how many times its forests were rebuilt from scratch
    /// in this epoch (the bounded-work fallback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wcc_fallbacks: Option<u64>,
    /// Live input: epochs the front end had closed but the dataflow had not completed when this
    /// one was written (backpressure stops reading beyond `--max-behind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epochs_behind: Option<u64>,
}

/// Latency percentiles over epochs 1.. (epoch 0 is the initial load and is reported apart).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    /// Median epoch latency, milliseconds.
    pub p50_ms: f64,
    /// 95th percentile, milliseconds.
    pub p95_ms: f64,
    /// 99th percentile, milliseconds.
    pub p99_ms: f64,
    /// The slowest epoch, milliseconds.
    pub max_ms: f64,
    /// The mean, milliseconds.
    pub mean_ms: f64,
}

impl LatencySummary {
    /// Percentiles of the given latencies (in milliseconds), via an HDR histogram with
    /// microsecond resolution and 3 significant digits.
    pub fn of(latencies_ms: &[f64]) -> Self {
        if latencies_ms.is_empty() {
            return LatencySummary::default();
        }
        let mut h = Histogram::<u64>::new_with_bounds(1, 24 * 3_600_000_000, 3).expect("valid histogram bounds");
        let mut sum = 0.0;
        let mut max: f64 = 0.0;
        for &l in latencies_ms {
            let us = (l * 1000.0).round().max(1.0) as u64;
            h.saturating_record(us.min(24 * 3_600_000_000));
            sum += l;
            max = max.max(l);
        }
        let q = |p: f64| h.value_at_quantile(p) as f64 / 1000.0;
        LatencySummary {
            p50_ms: q(0.50),
            p95_ms: q(0.95),
            p99_ms: q(0.99),
            max_ms: max,
            mean_ms: sum / latencies_ms.len() as f64,
        }
    }
}

/// The whole run, as reported at the end (and as the last `--stats` line, with `"summary": true`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunSummary {
    /// Always `true`: tells the summary line from the epoch lines in `--stats`.
    pub summary: bool,
    /// The algorithms run, comma-separated (`wcc,bfs`).
    pub algorithm: String,
    /// Worker threads per process.
    pub workers: usize,
    /// Processes.
    pub processes: usize,
    /// Epochs completed, including epoch 0.
    pub epochs: u64,
    /// True when the run stopped early (time limit) and covers a prefix of the stream.
    pub partial: bool,
    /// Updates over epochs 1.. (the initial graph is counted in `initial_edges`).
    pub updates: u64,
    /// Edge copies of the initial graph (epoch 0).
    pub initial_edges: u64,
    /// Seconds spent in epochs 1.. (from handing over each epoch's input to its completion).
    pub update_seconds: f64,
    /// `updates / update_seconds` (0 when there were no updates).
    pub updates_per_sec: f64,
    /// Latency of epochs 1.. .
    pub latency: LatencySummary,
    /// Epoch 0: reading and parsing the input files (all workers in parallel) ...
    pub load_seconds: f64,
    /// Input bytes read per second while loading (megabytes, 10^6).
    pub load_mb_per_sec: f64,
    /// Initial edges loaded per second.
    pub load_edges_per_sec: f64,
    /// ... and computing the initial result.
    pub initial_seconds: f64,
    /// Peak resident memory of the writing process (process 0).
    pub peak_rss_bytes: u64,
    /// With several processes: the sum of every process's peak resident memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes_all_processes: Option<u64>,
    /// Change-log lines written over the run (every algorithm).
    pub output_changes: u64,
    /// Wall-clock seconds from start to end.
    pub wall_seconds: f64,
    /// Windowed runs: late updates dropped over the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_updates: Option<u64>,
    /// Windowed runs: seconds to close the last windows when the stream ended (the results up
    /// to the largest event time); included in `update_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_seconds: Option<f64>,
    /// With observers that apply epochs on their own thread (`--serve`): the most completed
    /// epochs they were ever behind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_observer_lag: Option<u64>,
    /// `--stats`: vertices, edges (distinct undirected pairs without self-loops) and, with
    /// `triangles` running, triangles after the last epoch (see [`EpochStats`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertices: Option<u64>,
    /// `--stats`: distinct undirected pairs without self-loops after the last epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edges: Option<u64>,
    /// `--stats` with `triangles` running: triangles after the last epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triangles: Option<u64>,
    /// With WCC on its fully dynamic path: its fallback rebuilds over the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wcc_fallbacks: Option<u64>,
}

impl RunSummary {
    /// Human-readable summary for stderr.
    pub fn human(&self) -> String {
        format!(
            "{alg}: {epochs} epochs ({w} worker(s) x {p} process(es)), initial graph {ie} edges \
             loaded in {ls:.2}s ({mbs:.1} MB/s, {eps:.0} edges/s) and computed in {is:.2}s\n\
             updates: {u} in {us:.2}s = {ups:.0} updates/s; epoch latency p50 {p50:.2} ms, \
             p95 {p95:.2} ms, p99 {p99:.2} ms, max {max:.2} ms\n\
             output changes: {oc}; peak memory {mem:.1} MiB; wall time {wall:.2}s",
            alg = self.algorithm,
            epochs = self.epochs,
            w = self.workers,
            p = self.processes,
            ie = self.initial_edges,
            ls = self.load_seconds,
            mbs = self.load_mb_per_sec,
            eps = self.load_edges_per_sec,
            is = self.initial_seconds,
            u = self.updates,
            us = self.update_seconds,
            ups = self.updates_per_sec,
            p50 = self.latency.p50_ms,
            p95 = self.latency.p95_ms,
            p99 = self.latency.p99_ms,
            max = self.latency.max_ms,
            oc = self.output_changes,
            mem = self.peak_rss_bytes as f64 / (1024.0 * 1024.0),
            wall = self.wall_seconds,
        ) + &self.late_updates.map(|n| format!("; late updates dropped: {n}")).unwrap_or_default()
            + &self.end_seconds.map(|s| format!("; last windows closed in {s:.2}s at the end")).unwrap_or_default()
            + &self.wcc_fallbacks.map(|n| format!("; wcc fallback rebuilds: {n}")).unwrap_or_default()
            + &self
                .peak_rss_bytes_all_processes
                .map(|b| format!("; peak memory of all processes {:.1} MiB", b as f64 / (1024.0 * 1024.0)))
                .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let lat: Vec<f64> = (1..=1000).map(|i| i as f64).collect();
        let s = LatencySummary::of(&lat);
        assert!((s.p50_ms - 500.0).abs() < 1.0, "{:?}", s);
        assert!((s.p99_ms - 990.0).abs() < 1.5, "{:?}", s);
        assert_eq!(s.max_ms, 1000.0);
        assert!((s.mean_ms - 500.5).abs() < 1e-9);
    }
}
