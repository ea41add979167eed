//! One line of `results.jsonl`: a cell's outcome ([`Status`]), its figures ([`Metrics`]) and
//! everything needed to trust them (environment, dataset, command line, seed, start time).

use serde::{Deserialize, Serialize};

use super::config::Cell;
use super::data::DatasetInfo;
use super::env::Environment;
use crate::types::stats::{EpochStats, RunSummary};

/// How a cell ended. Failed cells are recorded like finished ones.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Finished and wrote a result that agrees with the reference, or there is no reference (`"ok"`
    /// in the record's `status`).
    Ok,
    /// Killed at the cell's timeout.
    Timeout,
    /// Killed by SIGKILL that was not ours (the kernel's OOM killer), or a failed allocation.
    Oom,
    /// Exited with a non-zero status or died of another signal.
    Crashed,
    /// Finished, but its result differs from the reference.
    WrongResult,
    /// Could not be started, or wrote no result.
    Incomplete,
}

impl Status {
    /// The status as written in `results.jsonl` and the CSV files: `ok`, `timeout`, `oom`,
    /// `crashed`, `wrong-result` or `incomplete`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Timeout => "timeout",
            Status::Oom => "oom",
            Status::Crashed => "crashed",
            Status::WrongResult => "wrong-result",
            Status::Incomplete => "incomplete",
        }
    }
}

/// Epoch-latency percentiles (ms) over the measured epochs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Percentiles {
    /// The median epoch latency, in milliseconds.
    pub p50_ms: f64,
    /// `None` for a `bench:` system (it reports p50, p95, p99 and max only).
    #[serde(default)]
    pub p90_ms: Option<f64>,
    /// The 99th-percentile epoch latency, in milliseconds.
    pub p99_ms: f64,
    /// The 99.9th-percentile epoch latency, in milliseconds; `None` for a `bench:` system.
    #[serde(default)]
    pub p999_ms: Option<f64>,
    /// The slowest measured epoch's latency, in milliseconds (exact, not from the histogram).
    pub max_ms: f64,
}

/// A cell's figures. Warm-up epochs are excluded from everything but `load_seconds`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Metrics {
    /// Reading the initial graph and computing its result (epoch 0); `None` for a `bench:`
    /// system (it does not report it).
    #[serde(default)]
    pub load_seconds: Option<f64>,
    /// Updates in the measured epochs over the time spent in them.
    pub updates_per_sec: f64,
    /// Updates applied in the measured epochs (warm-up epochs excluded).
    pub updates: u64,
    /// Update epochs the figures are computed over (all but the warm-up ones).
    pub measured_epochs: u64,
    /// Update epochs left out as warm-up (the experiment's `warmup_epochs`).
    pub warmup_epochs: u64,
    /// Epoch-latency percentiles over the measured epochs (HDR histogram).
    pub latency: Percentiles,
    /// The latency of every measured epoch, in order (the CCDF plot's data).
    pub latencies_ms: Vec<f64>,
    /// The measured epochs' latencies as an HDR histogram (microseconds, 3 significant digits),
    /// V2-deflate serialised and base64-encoded ([`encode_histogram`]); `report` pools the
    /// repetitions' histograms. `None` for a `bench:` system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_histogram: Option<String>,
    /// Windowed streams: the event-time latency of every measured epoch that closed windows
    /// (moved the output frontier): from handing over the epoch whose event moved the watermark
    /// past the windows' end to their results being final, in milliseconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub event_latencies_ms: Vec<f64>,
    /// Windowed streams: percentiles of `event_latencies_ms` (HDR histogram).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_latency: Option<Percentiles>,
    /// Windowed streams: `event_latencies_ms` as an HDR histogram, encoded as `latency_histogram`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_latency_histogram: Option<String>,
    /// Resident memory after each epoch (the run's memory over time).
    pub rss_bytes: Vec<u64>,
    /// The child's peak resident memory (its rusage).
    pub peak_rss_bytes: u64,
    /// User CPU seconds of the child process (its `wait4` rusage).
    pub cpu_user_seconds: f64,
    /// System CPU seconds of the child process (its `wait4` rusage).
    pub cpu_system_seconds: f64,
}

/// One line of `results.jsonl`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// Hash of the cell, the git revision and the dataset checksum.
    pub key: String,
    /// The experiment's name (its `name` key or the file's stem).
    pub experiment: String,
    /// The resolved cell: dataset, stream, algorithm, system, workers, batch, repetition, seed.
    pub cell: Cell,
    /// How the cell ended (`ok` or a failure kind).
    pub status: Status,
    /// What went wrong, for a failed cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The child's command line, program first, placeholders filled in.
    pub command: Vec<String>,
    /// Seconds since 1970 when the cell started.
    pub started_unix: u64,
    /// Wall-clock seconds from starting the child to its exit or kill.
    pub wall_seconds: f64,
    /// The timeout the cell ran under, in seconds (the experiment's `timeout_secs`).
    pub timeout_secs: f64,
    /// Whether the result agrees with the reference (`None`: no reference, or no result).
    pub agrees: Option<bool>,
    /// The figures; absent when the cell produced none (most failures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// The dataset: name, CRC-32 of its canonical edge list, vertices, edges.
    pub dataset: DatasetInfo,
    /// The environment the cell ran in: code revision, toolchain, machine.
    pub env: Environment,
    /// The address-space limit of each of the cell's processes, in MiB (`memory_limit_mb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_mb: Option<u64>,
}

/// FNV-1a, 64 bits: a stable hash (the standard library's is not stable across releases).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The key of a cell at a git revision over a dataset.
pub fn key(cell: &Cell, git_rev: &str, checksum: &str) -> String {
    let text = format!("{}\n{}\n{}", serde_json::to_string(cell).unwrap_or_default(), git_rev, checksum);
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// The largest latency a histogram holds: one day, in microseconds.
const TOP_US: u64 = 24 * 3_600_000_000;

/// An HDR histogram of latencies in milliseconds, recorded in microseconds (at least 1) with 3
/// significant digits, capped at one day.
pub fn histogram(latencies_ms: &[f64]) -> hdrhistogram::Histogram<u64> {
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, TOP_US, 3).expect("valid histogram bounds");
    for &l in latencies_ms {
        h.saturating_record(((l * 1000.0).round().max(1.0) as u64).min(TOP_US));
    }
    h
}

/// A histogram as text: HDR V2 serialisation with deflate (the format of HdrHistogram's
/// interval logs), base64-encoded.
pub fn encode_histogram(h: &hdrhistogram::Histogram<u64>) -> String {
    use base64::Engine;
    use hdrhistogram::serialization::Serializer;
    let mut bytes = Vec::new();
    hdrhistogram::serialization::V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serialising a histogram into memory");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The histogram [`encode_histogram`] wrote.
pub fn decode_histogram(text: &str) -> Result<hdrhistogram::Histogram<u64>, String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("a latency histogram is not base64: {e}"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| format!("a latency histogram does not decode: {e:?}"))
}

/// Percentiles of a histogram of microseconds, each capped at `max_ms` (a bucket's highest
/// equivalent value can pass the largest value recorded), the max `max_ms` itself.
pub fn histogram_percentiles(h: &hdrhistogram::Histogram<u64>, max_ms: f64) -> Percentiles {
    if h.is_empty() {
        return Percentiles::default();
    }
    let q = |p: f64| (h.value_at_quantile(p) as f64 / 1000.0).min(max_ms);
    Percentiles { p50_ms: q(0.50), p90_ms: Some(q(0.90)), p99_ms: q(0.99), p999_ms: Some(q(0.999)), max_ms }
}

/// Percentiles of latencies via an HDR histogram ([`histogram`]); the max exactly.
pub fn percentiles(latencies_ms: &[f64]) -> Percentiles {
    let max_ms = latencies_ms.iter().cloned().fold(0.0, f64::max);
    histogram_percentiles(&histogram(latencies_ms), max_ms)
}

/// The event-time windows of a windowed stream: what [`from_stats`] needs to tell which epochs
/// closed windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windows {
    /// Tumbling windows (`--tumbling SPAN`) rather than sliding ones (`--window SPAN`).
    pub tumbling: bool,
    /// The windows' span, in event-time units.
    pub span: u64,
}

impl Windows {
    /// The output frontier a watermark allows: results of times below it are final (the
    /// watermark for sliding windows, the start of its window for tumbling ones; lateness 0).
    pub fn frontier(&self, watermark: u64) -> u64 {
        if self.tumbling {
            watermark - watermark % self.span
        } else {
            watermark
        }
    }
}

/// The figures of a `--stats` file (epoch lines, then the summary line), the first `warmup`
/// update epochs excluded. `None` if the file has no summary.
///
/// With `windows`, the event-time latencies: one per measured epoch whose watermark moved the
/// output frontier ([`Windows::frontier`]), i.e. closed windows; its value is the epoch's latency,
/// from handing over its updates (among them the event that moved the watermark) to the
/// windows' results being final. The windows closed at the end of the stream (no event closes
/// them) are not counted.
pub fn from_stats(text: &str, warmup: u64, windows: Option<Windows>) -> Option<Metrics> {
    let mut epochs: Vec<EpochStats> = Vec::new();
    let mut summary: Option<RunSummary> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let value: serde_json::Value = serde_json::from_str(line).ok()?;
        if value.get("summary").and_then(|s| s.as_bool()) == Some(true) {
            summary = serde_json::from_value(value).ok();
        } else {
            epochs.push(serde_json::from_value(value).ok()?);
        }
    }
    let summary = summary?;
    let measured: Vec<&EpochStats> = epochs.iter().filter(|e| e.epoch > warmup).collect();
    let latencies_ms: Vec<f64> = measured.iter().map(|e| e.latency_ms).collect();
    let updates: u64 = measured.iter().map(|e| e.updates).sum();
    // The update time counts each moment once when epochs overlap (records written before
    // `busy_ms` existed: the latencies).
    let busy: f64 = measured.iter().map(|e| e.busy_ms.unwrap_or(e.latency_ms)).sum::<f64>() / 1000.0;
    let mut event_latencies_ms = Vec::new();
    if let Some(w) = windows {
        let mut frontier = 0;
        for e in epochs.iter().filter(|e| e.epoch > 0) {
            let now = w.frontier(e.watermark.unwrap_or(0));
            if now > frontier && e.epoch > warmup {
                event_latencies_ms.push(e.latency_ms);
            }
            frontier = frontier.max(now);
        }
    }
    let hist = |xs: &[f64]| (!xs.is_empty()).then(|| encode_histogram(&histogram(xs)));
    Some(Metrics {
        latency_histogram: hist(&latencies_ms),
        event_latency: windows.map(|_| percentiles(&event_latencies_ms)),
        event_latency_histogram: hist(&event_latencies_ms),
        event_latencies_ms,
        load_seconds: Some(summary.load_seconds + summary.initial_seconds),
        updates_per_sec: if busy > 0.0 { updates as f64 / busy } else { 0.0 },
        updates,
        measured_epochs: measured.len() as u64,
        warmup_epochs: warmup,
        latency: percentiles(&latencies_ms),
        latencies_ms,
        rss_bytes: epochs.iter().map(|e| e.rss_bytes).collect(),
        peak_rss_bytes: summary.peak_rss_bytes,
        ..Metrics::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_file_with_warmup() {
        let text = [
            r#"{"epoch":0,"updates":10,"latency_ms":50.0,"output_changes":0,"rss_bytes":1}"#,
            r#"{"epoch":1,"updates":100,"latency_ms":1000.0,"output_changes":0,"rss_bytes":2}"#,
            r#"{"epoch":2,"updates":100,"latency_ms":10.0,"output_changes":0,"rss_bytes":3}"#,
            r#"{"epoch":3,"updates":50,"latency_ms":40.0,"output_changes":0,"rss_bytes":4}"#,
        ]
        .join("\n");
        let summary = RunSummary { summary: true, load_seconds: 0.5, initial_seconds: 0.25, ..RunSummary::default() };
        let text = format!("{}\n{}\n", text, serde_json::to_string(&summary).unwrap());
        let m = from_stats(&text, 1, None).unwrap();
        assert_eq!(m.updates, 150);
        assert_eq!(m.measured_epochs, 2);
        assert!((m.updates_per_sec - 150.0 / 0.05).abs() < 1e-6, "{}", m.updates_per_sec);
        assert_eq!(m.latencies_ms, vec![10.0, 40.0]);
        assert_eq!(m.latency.max_ms, 40.0);
        assert_eq!(m.load_seconds, Some(0.75));
        assert_eq!(m.rss_bytes, vec![1, 2, 3, 4]);
        assert!(from_stats("", 0, None).is_none());
        assert!(m.event_latency.is_none() && m.event_latencies_ms.is_empty());
        let h = decode_histogram(m.latency_histogram.as_deref().unwrap()).unwrap();
        assert_eq!(h.len(), 2);
        assert!(h.equivalent(h.min(), 10_000) && h.equivalent(h.max(), 40_000));
    }

    /// Tumbling windows of span 10: the epochs whose watermark enters a new window closed the
    /// ones before it; warm-up epochs count for the frontier but not in the figures.
    #[test]
    fn event_time_latency_of_closing_epochs() {
        let epoch = |e: u64, lat: f64, w: u64| {
            format!(
                r#"{{"epoch":{e},"updates":5,"latency_ms":{lat},"output_changes":0,"rss_bytes":1,"watermark":{w}}}"#
            )
        };
        let lines = [
            epoch(1, 1.0, 12), // closes [0, 10) (warm-up: not counted)
            epoch(2, 2.0, 15), // same window
            epoch(3, 3.0, 31), // closes [10, 20) and [20, 30)
            epoch(4, 4.0, 39),
            epoch(5, 5.0, 40), // closes [30, 40)
        ];
        let summary = serde_json::to_string(&RunSummary { summary: true, ..RunSummary::default() }).unwrap();
        let text = format!("{}\n{summary}\n", lines.join("\n"));
        let m = from_stats(&text, 1, Some(Windows { tumbling: true, span: 10 })).unwrap();
        assert_eq!(m.event_latencies_ms, vec![3.0, 5.0]);
        assert_eq!(m.event_latency.as_ref().unwrap().max_ms, 5.0);
        let sliding = from_stats(&text, 0, Some(Windows { tumbling: false, span: 10 })).unwrap();
        assert_eq!(sliding.event_latencies_ms, vec![1.0, 2.0, 3.0, 4.0, 5.0]);
        let h = decode_histogram(m.event_latency_histogram.as_deref().unwrap()).unwrap();
        assert_eq!(h.len(), 2);
    }

    /// A histogram survives the record: encoded, written as JSON, read back, decoded, equal.
    #[test]
    fn histograms_round_trip_through_a_record() {
        let xs: Vec<f64> = (1..=1000).map(|i| i as f64 * 0.37).collect();
        let h = histogram(&xs);
        let m = Metrics { latency_histogram: Some(encode_histogram(&h)), ..Metrics::default() };
        let back: Metrics = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        let g = decode_histogram(back.latency_histogram.as_deref().unwrap()).unwrap();
        assert_eq!(g, h);
        assert_eq!(g.value_at_quantile(0.99), h.value_at_quantile(0.99));
        assert_eq!(histogram_percentiles(&g, 370.0), percentiles(&xs));
        assert!(decode_histogram("not base64!").is_err());
        assert!(decode_histogram("aGVsbG8=").is_err());
    }

    #[test]
    fn keys_are_stable() {
        assert_eq!(fnv1a(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
    }
}
