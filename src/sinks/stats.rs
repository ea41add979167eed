//! `--stats`: one JSON object per epoch, then a summary object.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::driver::metrics::{EpochStats, LatencySummary};

/// The whole run, as reported at the end (and as the last `--stats` line, with `"summary": true`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunSummary {
    pub summary: bool,
    pub algorithm: String,
    pub workers: usize,
    pub processes: usize,
    /// Epochs completed, including epoch 0.
    pub epochs: u64,
    /// True when the run stopped early (time limit) and covers a prefix of the stream.
    pub partial: bool,
    /// Updates over epochs 1.. (the initial graph is counted in `initial_edges`).
    pub updates: u64,
    pub initial_edges: u64,
    /// Seconds spent in epochs 1.. (from handing over each epoch's input to its completion).
    pub update_seconds: f64,
    /// `updates / update_seconds` (0 when there were no updates).
    pub updates_per_sec: f64,
    /// Latency of epochs 1.. .
    pub latency: LatencySummary,
    /// Epoch 0: reading and parsing the input files (all workers in parallel) ...
    pub load_seconds: f64,
    pub load_mb_per_sec: f64,
    pub load_edges_per_sec: f64,
    /// ... and computing the initial result.
    pub initial_seconds: f64,
    /// Peak resident memory of the writing process (process 0).
    pub peak_rss_bytes: u64,
    /// With several processes: the sum of every process's peak resident memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes_all_processes: Option<u64>,
    pub output_changes: u64,
    pub wall_seconds: f64,
    /// Windowed runs: late updates dropped over the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_updates: Option<u64>,
    /// Windowed runs: seconds to close the last windows when the stream ended (the results up
    /// to the largest event time); included in `update_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_seconds: Option<f64>,
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
            + &self
                .peak_rss_bytes_all_processes
                .map(|b| format!("; peak memory of all processes {:.1} MiB", b as f64 / (1024.0 * 1024.0)))
                .unwrap_or_default()
    }
}

/// Writes `--stats` lines.
pub struct StatsWriter {
    path: PathBuf,
    writer: BufWriter<File>,
}

impl StatsWriter {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let f = File::create(path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot write {}: {}", path.display(), e)))?;
        Ok(StatsWriter { path: path.to_path_buf(), writer: BufWriter::new(f) })
    }

    fn line<T: Serialize>(&mut self, value: &T) -> std::io::Result<()> {
        let text = serde_json::to_string(value).map_err(std::io::Error::other)?;
        writeln!(self.writer, "{}", text)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot write {}: {}", self.path.display(), e)))
    }

    pub fn epoch(&mut self, stats: &EpochStats) -> std::io::Result<()> {
        self.line(stats)
    }

    pub fn summary(mut self, summary: &RunSummary) -> std::io::Result<()> {
        self.line(summary)?;
        self.writer.flush()
    }
}
