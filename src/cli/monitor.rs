//! `--http ADDR` and `--profile FILE`: seeing into a running job (metrics, status API, dashboard)
//! and where its time went (a per-operator profile).

use std::path::PathBuf;

use clap::Args;

use crate::driver::profile::{Profile, Profiler};
use crate::driver::{RunError, RunOptions};

/// Monitoring and profiling flags (book/src/monitoring.md).
#[derive(Args, Debug, Clone, Default)]
pub struct MonitorArgs {
    /// Serve Prometheus metrics (/metrics), a status API (/api/status, /api/epochs?since=E,
    /// /api/profile) and a live dashboard (/) over HTTP at this address (a bare port binds
    /// 127.0.0.1). Served by process 0.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// --http clients must send `Authorization: Bearer TOKEN`, TOKEN being this file's content
    /// (surrounding whitespace trimmed); the dashboard takes it as /#token=TOKEN. Required on a
    /// non-loopback address.
    #[arg(long, value_name = "FILE")]
    pub http_auth_token_file: Option<PathBuf>,
    /// TLS for --http: the certificate chain (PEM); with --http-tls-key. Required on a
    /// non-loopback address.
    #[arg(long, value_name = "FILE", requires = "http_tls_key")]
    pub http_tls_cert: Option<PathBuf>,
    /// TLS for --http: the private key (PEM); with --http-tls-cert.
    #[arg(long, value_name = "FILE", requires = "http_tls_cert")]
    pub http_tls_key: Option<PathBuf>,
    /// --http without the per-operator figures (no timely logging: the operators' metrics, the
    /// dashboard's dataflow table and /api/profile are then absent).
    #[arg(long)]
    pub http_no_profile: bool,
    /// Write a per-operator profile of the run here at its end (JSON; a bar chart of the
    /// operators' time beside it as FILE.svg): per operator elapsed seconds (inclusive and
    /// self), invocations, records in and out; per arrangement records and batches; per worker
    /// busy and parked seconds. From timely's and differential's logging.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// With --profile: also write it every SECS seconds while the run goes on (process 0's
    /// workers' figures so far; the end of the run writes the whole cluster's).
    #[arg(long, value_name = "SECS", requires = "profile", value_parser = every_seconds)]
    pub profile_every: Option<f64>,
}

/// `--profile-every`: a finite number of seconds >= 0.1.
fn every_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && (0.1..=1e9).contains(&secs) => Ok(secs),
        _ => Err(format!("'{}' is not a number of seconds >= 0.1", text)),
    }
}

/// What a job's monitoring runs: the server (process 0) and the profiler.
pub(super) struct Monitoring {
    #[cfg(feature = "http")]
    monitor: Option<crate::monitor::Monitor>,
    profiler: Option<Profiler>,
    profile: Option<PathBuf>,
    /// `--profile-every`: the writing thread, stopped by dropping the sender.
    every: Option<(std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
}

fn input(e: impl Into<String>) -> RunError {
    RunError::Input(e.into())
}

impl MonitorArgs {
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    fn token(&self) -> Result<Option<String>, RunError> {
        self.http_auth_token_file.as_deref().map(super::token::read_token).transpose()
    }

    /// Starts the server if asked (process 0 only), and the profiler if `--profile` or `--http`
    /// asks for one. `configuration`: what `/api/status` shows; `wcc`: the run maintains WCC.
    pub(super) fn start(
        &self,
        process: usize,
        configuration: serde_json::Value,
        wcc: bool,
    ) -> Result<Monitoring, RunError> {
        if self.http.is_none()
            && (self.http_auth_token_file.is_some() || self.http_tls_cert.is_some() || self.http_no_profile)
        {
            return Err(input("--http-* flags need --http ADDR"));
        }
        let profiler = (self.profile.is_some() || (self.http.is_some() && !self.http_no_profile)).then(Profiler::new);
        let mut monitoring = Monitoring {
            #[cfg(feature = "http")]
            monitor: None,
            profiler,
            profile: self.profile.clone(),
            every: None,
        };
        if let (Some(path), Some(secs), Some(profiler), 0) =
            (&self.profile, self.profile_every, &monitoring.profiler, process)
        {
            let (stop, stopped) = std::sync::mpsc::channel::<()>();
            let (path, profiler) = (path.clone(), profiler.clone());
            let every = std::time::Duration::from_secs_f64(secs);
            let thread = std::thread::Builder::new()
                .name("ripples-profile".into())
                .spawn(move || {
                    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                        if let Err(e) = write_profile(&path, &profiler.snapshot()) {
                            eprintln!("ripples: warning: --profile-every: {e}");
                        }
                    }
                })
                .map_err(|e| RunError::Other(format!("cannot start a thread: {e}")))?;
            monitoring.every = Some((stop, thread));
        }
        let Some(addr) = self.http.as_ref().filter(|_| process == 0) else { return Ok(monitoring) };
        #[cfg(not(feature = "http"))]
        {
            let _ = (addr, configuration, wcc);
            Err(input("--http: this ripples was built without the `http` feature"))
        }
        #[cfg(feature = "http")]
        {
            use crate::monitor::{Monitor, MonitorConfig};
            let addr = if addr.contains(':') { addr.clone() } else { format!("127.0.0.1:{addr}") };
            let config = MonitorConfig {
                addr,
                token: self.token()?,
                tls: self.http_tls_cert.clone().zip(self.http_tls_key.clone()),
                configuration,
            };
            let monitor = Monitor::start(config, monitoring.profiler.clone(), wcc).map_err(input)?;
            eprintln!("ripples: dashboard and metrics on http://{}/", monitor.local_addr);
            monitoring.monitor = Some(monitor);
            Ok(monitoring)
        }
    }
}

impl Monitoring {
    /// Adds the observer and the profiler to a run's options.
    pub(super) fn attach(&self, mut options: RunOptions) -> RunOptions {
        #[cfg(feature = "http")]
        if let Some(m) = &self.monitor {
            options.observers.push(Box::new(m.observer()));
        }
        options.profiler = self.profiler.clone();
        options
    }

    /// The run's profiler, if it profiles.
    pub(super) fn profiler(&self) -> Option<Profiler> {
        self.profiler.clone()
    }

    /// Counts `--serve`'s statements in the metrics.
    pub(super) fn watch(&self, served: &super::serve::Served) {
        #[cfg(all(feature = "http", feature = "serve"))]
        if let (Some(m), Some(read)) = (&self.monitor, served.statements()) {
            m.counter("serve_statements", "SQL statements clients sent (--serve)", read);
        }
        let _ = served;
    }

    /// A `--restart` happened.
    pub(super) fn restarted(&self) {
        #[cfg(feature = "http")]
        if let Some(m) = &self.monitor {
            m.restarted();
        }
    }

    /// After the run: writes `--profile` (process 0, whose profiler holds the cluster's).
    pub(super) fn end(mut self) -> Result<(), RunError> {
        if let Some((stop, thread)) = self.every.take() {
            drop(stop);
            let _ = thread.join();
        }
        let (Some(path), Some(profiler)) = (&self.profile, &self.profiler) else { return Ok(()) };
        let Some(profile) = profiler.final_profile() else { return Ok(()) };
        write_profile(path, &profile)?;
        eprintln!("ripples: profile written to {} and {}.svg", path.display(), path.display());
        Ok(())
    }
}

/// `--profile FILE`: the JSON and the chart beside it.
pub(crate) fn write_profile(path: &std::path::Path, profile: &Profile) -> Result<(), RunError> {
    crate::bench::plot::write_profile(path, profile).map_err(RunError::Other)
}
