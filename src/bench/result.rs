//! What a system's run produces: [`Latency`] (the one latency summary of a result),
//! [`Measured`] (the figures a system measures itself) and [`SystemResult`] (one row of the
//! table and one object of `--json`, with the memory figures the child process adds).
//!
//! ```
//! use ripples::bench::{Latency, SystemResult};
//! // Percentiles come from an HDR histogram with microsecond resolution (3 significant digits).
//! let latency = Latency::of(&[1.0, 2.0, 3.0, 4.0, 100.0]);
//! assert!((latency.p50_ms - 3.0).abs() < 0.01);
//! assert_eq!(latency.max_ms, 100.0);
//! // In the JSON the percentiles sit at the top level of each result object.
//! let result = SystemResult { system: "uf-hash".into(), latency, ..SystemResult::default() };
//! let json: serde_json::Value = serde_json::to_value(&result).unwrap();
//! assert_eq!(json["max_ms"], 100.0);
//! assert_eq!(json["system"], "uf-hash");
//! ```

use serde::{Deserialize, Serialize};

use crate::driver::LatencySummary;

/// Epoch-latency percentiles in milliseconds. Flattened into [`SystemResult`]: the JSON keeps
/// the fields `p50_ms`, `p95_ms`, `p99_ms`, `max_ms` at the top level of each object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Median epoch latency, in milliseconds.
    pub p50_ms: f64,
    /// 95th-percentile epoch latency, in milliseconds.
    pub p95_ms: f64,
    /// 99th-percentile epoch latency, in milliseconds.
    pub p99_ms: f64,
    /// The slowest epoch's latency, in milliseconds.
    pub max_ms: f64,
}

impl Latency {
    /// The percentiles of per-epoch latencies (see [`LatencySummary::of`]).
    pub fn of(latencies_ms: &[f64]) -> Latency {
        Latency::from(&LatencySummary::of(latencies_ms))
    }

    /// p50, p95, p99, max, in that order (the plot's bars).
    pub fn percentiles(&self) -> [f64; 4] {
        [self.p50_ms, self.p95_ms, self.p99_ms, self.max_ms]
    }
}

impl From<&LatencySummary> for Latency {
    fn from(s: &LatencySummary) -> Latency {
        Latency { p50_ms: s.p50_ms, p95_ms: s.p95_ms, p99_ms: s.p99_ms, max_ms: s.max_ms }
    }
}

/// The figures a system measures on its own run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Measured {
    /// Epochs, counting the initial graph as epoch 0.
    pub epochs: u64,
    /// Updates fed over all epochs after epoch 0 (the initial graph's edges not counted).
    pub updates: u64,
    /// `updates` divided by the wall-clock seconds the update epochs took.
    pub updates_per_sec: f64,
    /// Percentiles of the per-epoch latencies.
    pub latency: Latency,
    /// Stopped at the time limit: the figures cover the prefix processed.
    pub partial: bool,
    /// Fallback rebuilds of the fully dynamic WCC path, where it ran (the run summary's count).
    pub wcc_fallbacks: Option<u64>,
}

/// One system's figures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SystemResult {
    /// The system's name, as `--systems` spells it (`ripples`, `recompute`, ...).
    pub system: String,
    /// The scenario's name (see [`Scenario::name`](super::Scenario::name)).
    pub scenario: String,
    /// Timely worker threads the system was given.
    pub workers: usize,
    /// Epochs processed, counting the initial graph as epoch 0.
    pub epochs: u64,
    /// Updates processed after epoch 0.
    pub updates: u64,
    /// Updates per second of wall clock over the update epochs.
    pub updates_per_sec: f64,
    /// Per-epoch latency percentiles (flat in the JSON).
    #[serde(flatten)]
    pub latency: Latency,
    /// The child process's peak resident memory (`VmHWM`) in bytes at the end of the run.
    pub peak_rss_bytes: u64,
    /// The child's resident memory in bytes after generating the stream, before the system ran.
    pub baseline_rss_bytes: u64,
    /// `(peak_rss_bytes - baseline_rss_bytes) / live_edges`: memory the system used per edge.
    pub bytes_per_edge: f64,
    /// Edges present at the end of the stream.
    pub live_edges: u64,
    /// Seconds of wall clock for the whole system run, initial graph included.
    pub wall_seconds: f64,
    /// Stopped at the time limit: figures cover the prefix processed.
    pub partial: bool,
    /// Final result agrees with the reference system (set by the parent).
    pub agrees: Option<bool>,
    /// Rebuilds of the fully dynamic WCC forests from scratch (its bounded-work fallback) during
    /// the run, as its run summary counts them; `None` where the system did not run that path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wcc_fallbacks: Option<u64>,
    /// `ripples bench --repeat N`: the updates/s of every run of the system, in the order they
    /// ran (the other figures are those of the run with the median updates/s); `None` for a
    /// single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<f64>>,
    /// The code and machine it was measured on, and when (set by `ripples bench`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<super::env::Environment>,
}

impl SystemResult {
    /// Copies a system's own figures in.
    pub fn record(&mut self, m: &Measured) {
        self.epochs = m.epochs;
        self.updates = m.updates;
        self.updates_per_sec = m.updates_per_sec;
        self.latency = m.latency;
        self.partial = m.partial;
        self.wcc_fallbacks = m.wcc_fallbacks;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON of a result: the latency fields flat, in their place.
    #[test]
    fn json_fields_in_order() {
        let r = SystemResult { latency: Latency { p50_ms: 1.5, ..Latency::default() }, ..SystemResult::default() };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            "{\"system\":\"\",\"scenario\":\"\",\"workers\":0,\"epochs\":0,\"updates\":0,\"updates_per_sec\":0.0,\
             \"p50_ms\":1.5,\"p95_ms\":0.0,\"p99_ms\":0.0,\"max_ms\":0.0,\"peak_rss_bytes\":0,\"baseline_rss_bytes\":0,\
             \"bytes_per_edge\":0.0,\"live_edges\":0,\"wall_seconds\":0.0,\"partial\":false,\"agrees\":null}"
        );
        let back: SystemResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back.latency, r.latency);
    }
}
