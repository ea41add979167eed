//! **Monitoring** (`--http ADDR`): a running job seen from outside, over HTTP.
//!
//! * `GET /metrics` — Prometheus metrics (OpenMetrics text, `prometheus-client`): epochs, updates,
//!   output changes per output, the epoch latency histogram, epochs behind the live input, late
//!   updates, fallbacks, the serving mirror's lag, restarts, memory, build info; with the profile
//!   on, per worker busy and parked seconds, per operator elapsed seconds, invocations and
//!   records, per arrangement records and batches.
//! * `GET /api/status` — JSON: the run's configuration, the current epoch, watermark and totals.
//! * `GET /api/epochs?since=E` — JSON array: the `--stats` record of every retained epoch `>= E`.
//! * `GET /api/profile` — JSON: the profile ([`crate::types::profile::Profile`]) as last
//!   published by the workers of process 0 (the whole cluster's once the run ended).
//! * `GET /api/components` — JSON: WCC's component sizes, `[[size, components], ...]`.
//! * `GET /` — the dashboard: live charts (throughput, epoch latency, epochs behind, memory), the
//!   busiest dataflow as a graph of its operators (shaded by their share of the time) and
//!   channels, the operators and channels in tables, the component-size distribution. It works
//!   offline: the chart library (uPlot, MIT, `assets/`) is served from the binary, and the page's
//!   `Content-Security-Policy` is `default-src 'self'`.
//!
//! Beside the driver: an [`Observer`] updates the figures at every completed epoch (counters and
//! a bounded record list: it never blocks the dataflow), the [`Profiler`] is filled by the
//! workers, and a tokio runtime answers requests (hyper, HTTP/1.1). Process 0 serves; its epoch
//! figures are the whole cluster's, its live operator figures those of its own workers.
//!
//! A non-loopback address needs a bearer token (`Authorization: Bearer TOKEN` on every `/api/`
//! and `/metrics` request; the dashboard takes it from the page address's fragment,
//! `/#token=TOKEN`) and TLS.

mod http;
mod metrics;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::driver::observe::{EpochView, LiveStarted, Observer, OutputInfo};
use crate::driver::profile::Profiler;
use crate::sinks::RunSummary;
use crate::types::stats::EpochStats;

/// Epoch records `/api/epochs` keeps (the oldest are dropped beyond).
pub const RETAINED_EPOCHS: usize = 100_000;

/// What `--http` was asked for.
#[derive(Clone, Debug)]
pub struct MonitorConfig {
    /// The address to listen on (`HOST:PORT`).
    pub addr: String,
    /// Requests must carry `Authorization: Bearer TOKEN` (required on a non-loopback address).
    pub token: Option<String>,
    /// TLS certificate chain and private key (PEM; required on a non-loopback address).
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The run's configuration as `/api/status` shows it (flags, layout).
    pub configuration: serde_json::Value,
}

/// A running `--http` server.
pub struct Monitor {
    /// The address it listens on.
    pub local_addr: SocketAddr,
    state: Arc<State>,
    runtime: Option<tokio::runtime::Runtime>,
}

/// What the server reads and the observer writes.
pub(crate) struct State {
    metrics: metrics::Metrics,
    run: Mutex<RunState>,
    profiler: Option<Profiler>,
    token: Option<String>,
    components: Option<Mutex<Components>>,
    started: Instant,
    configuration: serde_json::Value,
    /// Counters of others beside the driver (`--serve`'s statements), read at each scrape.
    external: Mutex<Vec<External>>,
}

/// A counter another part of the run keeps: its name (without `ripples_` and `_total`), help,
/// and how to read it.
pub(crate) struct External {
    pub(crate) name: String,
    pub(crate) help: String,
    pub(crate) read: Box<dyn Fn() -> u64 + Send + Sync>,
}

#[derive(Default)]
struct RunState {
    outputs: Vec<String>,
    epochs: VecDeque<EpochStats>,
    totals: Totals,
    summary: Option<RunSummary>,
    live: Option<LiveStarted>,
}

#[derive(Default, Clone, serde::Serialize)]
struct Totals {
    epochs_completed: u64,
    updates: u64,
    output_changes: u64,
    current_epoch: Option<u64>,
    watermark: Option<u64>,
    restarts: u64,
}

/// Changes applied to [`Components`] at once when none asked for them before.
const PENDING_CHANGES: usize = 1 << 20;

/// WCC's component sizes, maintained from its changes. The observer only appends each epoch's
/// changes (no hashing, no other thread woken on the dataflow's cores); they are applied when
/// `/api/components` is read, or once [`PENDING_CHANGES`] wait.
#[derive(Default)]
struct Components {
    label: HashMap<u64, u64>,
    size: HashMap<u64, u64>,
    applied_epochs: u64,
    /// Epochs' changes not applied yet, `(vertex, label, diff)`, each epoch's consolidated.
    pending: Vec<Vec<(u64, u64, i64)>>,
    pending_changes: usize,
}

impl Components {
    fn push(&mut self, changes: Vec<(u64, u64, i64)>) {
        self.pending_changes += changes.len();
        self.pending.push(changes);
        if self.pending_changes >= PENDING_CHANGES {
            self.catch_up();
        }
    }

    fn catch_up(&mut self) {
        for changes in std::mem::take(&mut self.pending) {
            self.apply(&changes);
        }
        self.pending_changes = 0;
    }

    fn apply(&mut self, changes: &[(u64, u64, i64)]) {
        // Retractions come before insertions per key; apply retractions first anyway.
        for &(v, l, d) in changes.iter().filter(|c| c.2 < 0) {
            if self.label.get(&v) == Some(&l) && d < 0 {
                self.label.remove(&v);
                if let Some(s) = self.size.get_mut(&l) {
                    *s -= 1;
                    if *s == 0 {
                        self.size.remove(&l);
                    }
                }
            }
        }
        for &(v, l, _) in changes.iter().filter(|c| c.2 > 0) {
            if let Some(old) = self.label.insert(v, l) {
                if let Some(s) = self.size.get_mut(&old) {
                    *s -= 1;
                    if *s == 0 {
                        self.size.remove(&old);
                    }
                }
            }
            *self.size.entry(l).or_insert(0) += 1;
        }
        self.applied_epochs += 1;
    }

    /// `(size, how many components have it)`, by size (after [`Components::catch_up`]).
    fn distribution(&self) -> Vec<(u64, u64)> {
        let mut by_size: std::collections::BTreeMap<u64, u64> = Default::default();
        for s in self.size.values() {
            *by_size.entry(*s).or_insert(0) += 1;
        }
        by_size.into_iter().collect()
    }
}

impl Monitor {
    /// Binds the address and starts serving. `profiler`: the run's, for the operator figures.
    /// `wcc`: keep WCC's component sizes (the dashboard's distribution).
    pub fn start(config: MonitorConfig, profiler: Option<Profiler>, wcc: bool) -> Result<Monitor, String> {
        let addr = config.addr.clone();
        let tls = match &config.tls {
            Some((cert, key)) => Some(Arc::new(crate::live::tls_server_config(cert, key)?)),
            None => None,
        };
        let std_listener =
            std::net::TcpListener::bind(&addr).map_err(|e| format!("--http {addr}: cannot listen: {e}"))?;
        let local_addr = std_listener.local_addr().map_err(|e| format!("--http {addr}: {e}"))?;
        if !local_addr.ip().is_loopback() && (config.token.is_none() || tls.is_none()) {
            return Err(format!(
                "--http {addr} is not a loopback address: clients must authenticate over TLS, give --http-auth-token-file FILE, --http-tls-cert FILE and --http-tls-key FILE"
            ));
        }
        std_listener.set_nonblocking(true).map_err(|e| format!("--http {addr}: {e}"))?;
        raise_open_files_limit();
        let state = Arc::new(State {
            metrics: metrics::Metrics::new(),
            run: Mutex::new(RunState::default()),
            profiler,
            token: config.token.clone(),
            components: wcc.then(|| Mutex::new(Components::default())),
            started: Instant::now(),
            configuration: config.configuration.clone(),
            external: Mutex::new(Vec::new()),
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ripples-http")
            .enable_all()
            .build()
            .map_err(|e| format!("--http: cannot start the server's runtime: {e}"))?;
        let listener = {
            let _guard = runtime.enter();
            tokio::net::TcpListener::from_std(std_listener).map_err(|e| format!("--http {addr}: {e}"))?
        };
        runtime.spawn(http::serve(listener, tls, state.clone()));
        Ok(Monitor { local_addr, state, runtime: Some(runtime) })
    }

    /// The observer that feeds the figures (add it to the run's observers).
    pub fn observer(&self) -> impl Observer {
        MonitorObserver { state: self.state.clone() }
    }

    /// Adds a counter kept elsewhere (`ripples_NAME_total`), read at each scrape.
    pub fn counter(&self, name: &str, help: &str, read: impl Fn() -> u64 + Send + Sync + 'static) {
        lock(&self.state.external).push(External { name: name.into(), help: help.into(), read: Box::new(read) });
    }

    /// Counts a `--restart`.
    pub fn restarted(&self) {
        self.state.metrics.restarted();
        lock(&self.state.run).totals.restarts += 1;
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Many idle clients each hold a descriptor: take the hard limit (Linux, macOS).
fn raise_open_files_limit() {
    #[cfg(unix)]
    unsafe {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max.min(65_536);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

struct MonitorObserver {
    state: Arc<State>,
}

impl Observer for MonitorObserver {
    fn start(&mut self, outputs: &[OutputInfo]) -> Result<(), String> {
        let names: Vec<String> = outputs.iter().map(|o| o.name.clone()).collect();
        self.state.metrics.outputs(&names);
        lock(&self.state.run).outputs = names;
        Ok(())
    }

    fn live_started(&mut self, started: &LiveStarted) {
        lock(&self.state.run).live = Some(started.clone());
    }

    fn epoch(&mut self, view: &EpochView) -> Result<(), String> {
        if view.replayed {
            return Ok(());
        }
        let changes: Vec<u64> = view.changes.iter().map(|c| c.len() as u64).collect();
        let mut run = lock(&self.state.run);
        if let Some(components) = &self.state.components {
            if let Some(cs) = run.outputs.iter().position(|n| n == "wcc").and_then(|i| view.changes.get(i)) {
                lock(components).push(cs.iter().map(|c| (c.key, c.value, c.diff as i64)).collect());
            }
        }
        self.state.metrics.epoch(view.stats, &run.outputs, &changes);
        let t = &mut run.totals;
        t.epochs_completed += 1;
        t.updates += view.stats.updates;
        t.output_changes += view.stats.output_changes;
        t.current_epoch = Some(view.epoch);
        t.watermark = view.stats.watermark.or(t.watermark);
        if run.epochs.len() == RETAINED_EPOCHS {
            run.epochs.pop_front();
        }
        run.epochs.push_back(view.stats.clone());
        Ok(())
    }

    fn finish(&mut self, summary: &RunSummary) -> Result<(), String> {
        lock(&self.state.run).summary = Some(summary.clone());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Components;
    use rand::{Rng, SeedableRng};
    use std::collections::{BTreeMap, HashMap};

    /// The distribution kept from change batches equals one counted from the labels themselves.
    #[test]
    fn component_sizes_follow_the_changes() {
        for seed in 0..5u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut labels: HashMap<u64, u64> = HashMap::new();
            let mut kept = Components::default();
            for _ in 0..50 {
                let mut batch = Vec::new();
                for _ in 0..20 {
                    let v = rng.gen_range(0..40u64);
                    if let Some(old) = labels.remove(&v) {
                        batch.push((v, old, -1));
                    }
                    if rng.gen_bool(0.8) {
                        let l = rng.gen_range(0..8u64);
                        labels.insert(v, l);
                        batch.push((v, l, 1));
                    }
                }
                // Consolidate per (vertex, label), as a change log is.
                let mut net: BTreeMap<(u64, u64), i64> = BTreeMap::new();
                for (v, l, d) in batch {
                    *net.entry((v, l)).or_insert(0) += d;
                }
                let batch: Vec<_> = net.into_iter().filter(|(_, d)| *d != 0).map(|((v, l), d)| (v, l, d)).collect();
                kept.push(batch);
                kept.catch_up();
                let mut sizes: HashMap<u64, u64> = HashMap::new();
                for l in labels.values() {
                    *sizes.entry(*l).or_insert(0) += 1;
                }
                let mut want: BTreeMap<u64, u64> = BTreeMap::new();
                for s in sizes.values() {
                    *want.entry(*s).or_insert(0) += 1;
                }
                assert_eq!(kept.distribution(), want.into_iter().collect::<Vec<_>>(), "seed {seed}");
            }
        }
    }
}
