//! The metrics summarised per configuration ([`metrics`]), the configurations' successful
//! repetitions ([`groups`]) and their summaries ([`summaries`]).

use std::collections::BTreeMap;

use crate::experiment::record::{self, Record, Status};
use crate::experiment::stats::Summary;

/// The seed of every bootstrap in the report (the figures are reproducible).
pub const BOOTSTRAP_SEED: u64 = 1;

/// A configuration whose repetitions measured fewer epochs than this (after the warm-up) is
/// marked in the report: its updates/s and latencies rest on too few epochs to compare (a
/// cluster's epochs overlap, so one or two measured epochs can show almost no update time).
pub const MIN_MEASURED_EPOCHS: f64 = 10.0;

/// A metric's value in a record.
pub type Getter = fn(&Record) -> Option<f64>;

/// The metrics summarised per configuration: name and value of a record.
pub fn metrics() -> Vec<(&'static str, Getter)> {
    fn m(r: &Record) -> Option<&record::Metrics> {
        r.metrics.as_ref()
    }
    vec![
        ("updates_per_sec", |r| m(r).map(|m| m.updates_per_sec)),
        ("p50_ms", |r| m(r).map(|m| m.latency.p50_ms)),
        ("p90_ms", |r| m(r).and_then(|m| m.latency.p90_ms)),
        ("p99_ms", |r| m(r).map(|m| m.latency.p99_ms)),
        ("p999_ms", |r| m(r).and_then(|m| m.latency.p999_ms)),
        ("event_p50_ms", |r| m(r).and_then(|m| m.event_latency.as_ref()).map(|l| l.p50_ms)),
        ("event_p99_ms", |r| m(r).and_then(|m| m.event_latency.as_ref()).map(|l| l.p99_ms)),
        ("max_ms", |r| m(r).map(|m| m.latency.max_ms)),
        ("load_seconds", |r| m(r).and_then(|m| m.load_seconds)),
        ("peak_rss_mib", |r| m(r).map(|m| m.peak_rss_bytes as f64 / (1024.0 * 1024.0))),
        ("cpu_seconds", |r| m(r).map(|m| m.cpu_user_seconds + m.cpu_system_seconds)),
        ("wall_seconds", |r| Some(r.wall_seconds)),
        ("measured_epochs", |r| m(r).map(|m| m.measured_epochs as f64)),
    ]
}

/// One configuration's successful repetitions, in repetition order.
pub fn groups(records: &[Record]) -> BTreeMap<String, Vec<&Record>> {
    let mut out: BTreeMap<String, Vec<&Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == Status::Ok) {
        out.entry(r.cell.config()).or_default().push(r);
    }
    for v in out.values_mut() {
        v.sort_by_key(|r| r.cell.repetition);
    }
    out
}

/// `summary[config][metric]`.
pub fn summaries(records: &[Record]) -> BTreeMap<String, BTreeMap<&'static str, Summary>> {
    let mut out = BTreeMap::new();
    for (config, rs) in groups(records) {
        let mut per = BTreeMap::new();
        for (name, get) in metrics() {
            let xs: Vec<f64> = rs.iter().filter_map(|r| get(r)).collect();
            per.insert(name, Summary::of(&xs, BOOTSTRAP_SEED));
        }
        out.insert(config, per);
    }
    out
}
