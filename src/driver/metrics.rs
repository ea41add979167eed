//! Measurements the driver takes: process memory and epoch latency percentiles.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Resident memory of this process in bytes: `(current, peak)` from `/proc/self/status`
/// (`VmRSS`, `VmHWM`); `(0, 0)` where that file does not exist.
pub fn memory() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// What one epoch did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EpochStats {
    pub epoch: u64,
    /// Update lines (for epoch 0: edges of the initial graph) in this epoch, over all workers.
    pub updates: u64,
    /// From the moment the epoch's input was handed over until the output frontier passed it.
    pub latency_ms: f64,
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
}

/// Latency percentiles over epochs 1.. (epoch 0 is the initial load and is reported apart).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
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
