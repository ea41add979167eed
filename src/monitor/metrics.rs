//! The Prometheus metrics of `--http`'s `/metrics`, with `prometheus-client`: the run's figures,
//! updated by the observer at every completed epoch, and the profile's per-worker, per-operator
//! and per-arrangement figures, read at each scrape.

use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;

use crate::driver::profile::Profile;
use crate::live::LiveCounters;
use crate::types::stats::EpochStats;

type Labels = Vec<(String, String)>;
type FloatCounter = Counter<f64, AtomicU64>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// The run's metrics (one set per `--http` server, kept across `--restart`s).
pub(crate) struct Metrics {
    registry: Registry,
    epochs_completed: Counter,
    updates: Counter,
    output_changes: Family<Labels, Counter>,
    epoch_duration: Histogram,
    epoch_busy: FloatCounter,
    late_updates: Counter,
    wcc_fallbacks: Counter,
    restarts: Counter,
    current_epoch: Gauge,
    watermark: Gauge,
    observer_lag: Gauge,
    vertices: Gauge,
    edges: Gauge,
    epochs_behind: Gauge,
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("ripples");
        let epochs_completed = Counter::default();
        registry.register("epochs_completed", "Epochs completed (their changes written)", epochs_completed.clone());
        let updates = Counter::default();
        registry.register("updates", "Input updates in the completed epochs", updates.clone());
        let output_changes = Family::<Labels, Counter>::default();
        registry.register("output_changes", "Output changes written, per output", output_changes.clone());
        // 10 µs to ~84 s.
        let epoch_duration = Histogram::new(exponential_buckets(1e-5, 2.0, 24));
        registry.register_with_unit(
            "epoch_duration",
            "Epoch latency: from handing its input over until its output is complete",
            Unit::Seconds,
            epoch_duration.clone(),
        );
        let epoch_busy = FloatCounter::default();
        registry.register_with_unit(
            "epoch_busy",
            "Epoch latency less its overlap with earlier epochs (each moment counted once)",
            Unit::Seconds,
            epoch_busy.clone(),
        );
        let late_updates = Counter::default();
        registry.register(
            "late_updates",
            "Windowed runs: updates that arrived behind the watermark",
            late_updates.clone(),
        );
        let wcc_fallbacks = Counter::default();
        registry.register("wcc_fallbacks", "WCC fast-path fallbacks (general-path rebuilds)", wcc_fallbacks.clone());
        let restarts = Counter::default();
        registry.register("restarts", "Restarts from the state directory (--restart)", restarts.clone());
        let current_epoch = Gauge::default();
        registry.register("current_epoch", "The last completed epoch", current_epoch.clone());
        let watermark = Gauge::default();
        registry.register("watermark", "Windowed runs: the event-time watermark", watermark.clone());
        let observer_lag = Gauge::default();
        registry.register(
            "observer_lag_epochs",
            "Completed epochs the observers (the --serve mirror) have not applied yet",
            observer_lag.clone(),
        );
        let vertices = Gauge::default();
        registry.register("graph_vertices", "Vertices of the graph (with --stats)", vertices.clone());
        let edges = Gauge::default();
        registry.register("graph_edges", "Edges of the graph (with --stats)", edges.clone());
        let epochs_behind = Gauge::default();
        registry.register(
            "epochs_behind",
            "Live input: epochs closed by the front end but not complete in the dataflow (backpressure stops reading beyond --max-behind)",
            epochs_behind.clone(),
        );
        let build = Family::<Labels, Gauge>::default();
        build.get_or_create(&vec![("version".to_string(), env!("CARGO_PKG_VERSION").to_string())]).set(1);
        registry.register("build_info", "The build: its version (value 1)", build);
        Metrics {
            registry,
            epochs_completed,
            updates,
            output_changes,
            epoch_duration,
            epoch_busy,
            late_updates,
            wcc_fallbacks,
            restarts,
            current_epoch,
            watermark,
            observer_lag,
            vertices,
            edges,
            epochs_behind,
        }
    }

    /// Makes every output's counter exist (at zero) from the start.
    pub(crate) fn outputs(&self, names: &[String]) {
        for name in names {
            let _ = self.output_changes.get_or_create(&vec![("output".to_string(), name.clone())]);
        }
    }

    /// One completed epoch; `changes[i]` output changes of output `names[i]`.
    pub(crate) fn epoch(&self, stats: &EpochStats, names: &[String], changes: &[u64]) {
        self.epochs_completed.inc();
        self.updates.inc_by(stats.updates);
        for (name, n) in names.iter().zip(changes) {
            self.output_changes.get_or_create(&vec![("output".to_string(), name.clone())]).inc_by(*n);
        }
        self.epoch_duration.observe(stats.latency_ms / 1000.0);
        self.epoch_busy.inc_by(stats.busy_ms.unwrap_or(stats.latency_ms) / 1000.0);
        self.late_updates.inc_by(stats.late.unwrap_or(0));
        self.wcc_fallbacks.inc_by(stats.wcc_fallbacks.unwrap_or(0));
        self.current_epoch.set(stats.epoch as i64);
        if let Some(w) = stats.watermark {
            self.watermark.set(w as i64);
        }
        self.observer_lag.set(stats.observer_lag.unwrap_or(0) as i64);
        if let Some(v) = stats.vertices {
            self.vertices.set(v as i64);
        }
        if let Some(e) = stats.edges {
            self.edges.set(e as i64);
        }
        if let Some(b) = stats.epochs_behind {
            self.epochs_behind.set(b as i64);
        }
    }

    pub(crate) fn restarted(&self) {
        self.restarts.inc();
    }

    /// The whole `/metrics` text (OpenMetrics), the profile's figures included when given.
    /// `external`: `(name, help, value)` of counters kept elsewhere.
    pub(crate) fn encode(
        &self,
        profile: Option<&Profile>,
        live: Option<&LiveCounters>,
        external: &[(String, String, u64)],
    ) -> Result<String, std::fmt::Error> {
        let mut text = String::with_capacity(16 * 1024);
        encode_registry(&mut text, &self.registry)?;
        let mut scraped = scrape_time(profile, live);
        for (name, help, value) in external {
            let c: Counter = Counter::default();
            c.inc_by(*value);
            scraped.register(name.as_str(), help.as_str(), c);
        }
        encode_registry(&mut text, &scraped)?;
        encode_eof(&mut text)?;
        Ok(text)
    }
}

/// The classic Prometheus text format (version 0.0.4) of an OpenMetrics text, for scrapers that
/// do not ask for OpenMetrics (`promtool`, older Prometheus): a counter family's `HELP` and `TYPE`
/// name its `_total` samples, and there are no `UNIT` lines and no `# EOF`.
pub(crate) fn classic(open_metrics: &str) -> String {
    let mut counters = std::collections::HashSet::new();
    for line in open_metrics.lines() {
        if let Some(name) = line.strip_prefix("# TYPE ").and_then(|r| r.strip_suffix(" counter")) {
            counters.insert(name.to_string());
        }
    }
    let mut out = String::with_capacity(open_metrics.len());
    for line in open_metrics.lines() {
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "].into_iter().find_map(|p| line.strip_prefix(p).map(|rest| (p, rest)));
        match meta {
            Some((prefix, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                let name = if counters.contains(name) { format!("{name}_total") } else { name.to_string() };
                out.push_str(&format!("{prefix}{name} {tail}\n"));
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// The figures read at each scrape: memory, and the profile's.
fn scrape_time(profile: Option<&Profile>, live: Option<&LiveCounters>) -> Registry {
    let mut registry = Registry::with_prefix("ripples");
    let (rss, peak) = crate::driver::metrics::memory();
    let memory: Gauge = Gauge::default();
    memory.set(rss as i64);
    registry.register_with_unit("resident_memory", "Resident memory of process 0", Unit::Bytes, memory);
    let peak_memory: Gauge = Gauge::default();
    peak_memory.set(peak as i64);
    registry.register_with_unit("peak_resident_memory", "Peak resident memory of process 0", Unit::Bytes, peak_memory);
    if let Some(c) = live {
        let get = LiveCounters::get;
        let gauge = |v: u64| {
            let g: Gauge = Gauge::default();
            g.set(v as i64);
            g
        };
        let counter = |v: u64| {
            let c: Counter = Counter::default();
            c.inc_by(v);
            c
        };
        let seconds = |nanos: u64| {
            let c = FloatCounter::default();
            c.inc_by(nanos as f64 / 1e9);
            c
        };
        registry.register("live_producers", "Live input: TCP producers connected", gauge(get(&c.producers)));
        registry.register_with_unit(
            "wal",
            "Live input with --state-dir: bytes appended to the write-ahead log",
            Unit::Bytes,
            counter(get(&c.wal_bytes)),
        );
        registry.register(
            "wal_appends",
            "Live input with --state-dir: epochs appended to the log (one fsync each)",
            counter(get(&c.wal_appends)),
        );
        registry.register_with_unit(
            "wal_append",
            "Live input with --state-dir: time appending to the log, fsync included",
            Unit::Seconds,
            seconds(get(&c.wal_nanos)),
        );
        registry.register("snapshots", "Live input with --state-dir: snapshots written", counter(get(&c.snapshots)));
        let last = FloatGauge::default();
        last.set(get(&c.last_snapshot_nanos) as f64 / 1e9);
        registry.register_with_unit("last_snapshot_duration", "The last snapshot's duration", Unit::Seconds, last);
        registry.register(
            "last_snapshot_entries",
            "The last snapshot's edge entries",
            gauge(get(&c.last_snapshot_entries)),
        );
        let at = FloatGauge::default();
        at.set(get(&c.last_snapshot_unix_ms) as f64 / 1e3);
        registry.register_with_unit(
            "last_snapshot_completed",
            "When the last snapshot completed, Unix time (0: none yet)",
            Unit::Seconds,
            at,
        );
    }
    let Some(profile) = profile else { return registry };
    let worker = |w: usize| vec![("worker".to_string(), w.to_string())];
    let busy = Family::<Labels, FloatCounter>::default();
    let parked = Family::<Labels, FloatCounter>::default();
    for w in &profile.workers {
        busy.get_or_create(&worker(w.worker)).inc_by(w.busy_seconds);
        parked.get_or_create(&worker(w.worker)).inc_by(w.parked_seconds);
    }
    registry.register_with_unit("worker_busy", "Per worker: time not parked", Unit::Seconds, busy);
    registry.register_with_unit("worker_parked", "Per worker: time parked (nothing to do)", Unit::Seconds, parked);
    let elapsed = Family::<Labels, FloatCounter>::default();
    let self_elapsed = Family::<Labels, FloatCounter>::default();
    let invocations = Family::<Labels, Counter>::default();
    let records_in = Family::<Labels, Counter>::default();
    let records_out = Family::<Labels, Counter>::default();
    for op in profile.by_operator() {
        let labels = operator_labels(&op.addr, &op.name);
        elapsed.get_or_create(&labels).inc_by(op.inclusive_seconds);
        self_elapsed.get_or_create(&labels).inc_by(op.self_seconds);
        invocations.get_or_create(&labels).inc_by(op.invocations);
        records_in.get_or_create(&labels).inc_by(op.records_in);
        records_out.get_or_create(&labels).inc_by(op.records_out);
    }
    registry.register_with_unit(
        "operator_elapsed",
        "Per operator (all workers): time scheduled, its children's included",
        Unit::Seconds,
        elapsed,
    );
    registry.register_with_unit(
        "operator_self_elapsed",
        "Per operator (all workers): time scheduled less its children's",
        Unit::Seconds,
        self_elapsed,
    );
    registry.register("operator_invocations", "Per operator (all workers): times scheduled", invocations);
    registry.register("operator_records_in", "Per operator (all workers): records received", records_in);
    registry.register("operator_records_out", "Per operator (all workers): records sent", records_out);
    let records = Family::<Labels, Gauge>::default();
    let batches = Family::<Labels, Gauge>::default();
    let addresses: std::collections::HashMap<(usize, usize), &[usize]> =
        profile.operators.iter().map(|o| ((o.worker, o.id), o.addr.as_slice())).collect();
    for a in &profile.arrangements {
        let addr = addresses.get(&(a.worker, a.operator)).copied().unwrap_or_default();
        let mut labels = operator_labels(addr, &a.name);
        labels.push(("worker".to_string(), a.worker.to_string()));
        records.get_or_create(&labels).set(a.records);
        batches.get_or_create(&labels).set(a.batches);
    }
    registry.register("arrangement_records", "Per arrangement and worker: updates in its trace", records);
    registry.register("arrangement_batches", "Per arrangement and worker: batches in its trace", batches);
    registry
}

/// `addr="0.3.1"`, `name="..."`.
fn operator_labels(addr: &[usize], name: &str) -> Labels {
    let addr: Vec<String> = addr.iter().map(|i| i.to_string()).collect();
    vec![("addr".to_string(), addr.join(".")), ("name".to_string(), name.to_string())]
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_classic_format_names_counters_by_their_samples() {
        let open = "# HELP a_total_x A.\n# TYPE a_total_x gauge\na_total_x 1\n# HELP c C.\n# TYPE c counter\n\
                    # UNIT c seconds\nc_total 2\n# EOF\n";
        assert_eq!(
            super::classic(open),
            "# HELP a_total_x A.\n# TYPE a_total_x gauge\na_total_x 1\n# HELP c_total C.\n# TYPE c_total counter\nc_total 2\n"
        );
    }
}
