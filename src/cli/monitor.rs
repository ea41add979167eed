//! `--http ADDR` and `--profile FILE`: seeing into a running job (metrics, status API, dashboard)
//! and where its time went (a per-operator profile).

use std::path::PathBuf;

use clap::Args;

use crate::driver::profile::{Profile, Profiler};
use crate::driver::{RunError, RunOptions};

/// Monitoring and profiling flags (see the README, "See into a running job").
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
}

/// What a job's monitoring runs: the server (process 0) and the profiler.
pub(super) struct Monitoring {
    #[cfg(feature = "http")]
    monitor: Option<crate::monitor::Monitor>,
    profiler: Option<Profiler>,
    profile: Option<PathBuf>,
}

fn input(e: impl Into<String>) -> RunError {
    RunError::Input(e.into())
}

impl MonitorArgs {
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    fn token(&self) -> Result<Option<String>, RunError> {
        let Some(path) = &self.http_auth_token_file else { return Ok(None) };
        let text = std::fs::read_to_string(path)
            .map_err(|e| RunError::Other(format!("cannot read {}: {}", path.display(), e)))?;
        let token = text.trim();
        if token.is_empty() || token.contains(char::is_whitespace) {
            return Err(input(format!("{}: the token must be one word, not empty", path.display())));
        }
        Ok(Some(token.to_string()))
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
        };
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

    /// A `--restart` happened.
    pub(super) fn restarted(&self) {
        #[cfg(feature = "http")]
        if let Some(m) = &self.monitor {
            m.restarted();
        }
    }

    /// After the run: writes `--profile` (process 0, whose profiler holds the cluster's).
    pub(super) fn end(&self) -> Result<(), RunError> {
        let (Some(path), Some(profiler)) = (&self.profile, &self.profiler) else { return Ok(()) };
        let Some(profile) = profiler.final_profile() else { return Ok(()) };
        write_profile(path, &profile)?;
        eprintln!("ripples: profile written to {} and {}.svg", path.display(), path.display());
        Ok(())
    }
}

/// `--profile FILE`: the JSON and the chart beside it.
pub(crate) fn write_profile(path: &std::path::Path, profile: &Profile) -> Result<(), RunError> {
    let text = serde_json::to_string_pretty(profile).map_err(|e| RunError::Other(e.to_string()))?;
    std::fs::write(path, text + "\n")
        .map_err(|e| RunError::Other(format!("cannot write {}: {}", path.display(), e)))?;
    let svg = svg_path(path);
    profile_chart(&svg, profile).map_err(|e| RunError::Other(format!("cannot write {}: {}", svg.display(), e)))
}

fn svg_path(path: &std::path::Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".svg");
    PathBuf::from(s)
}

/// A horizontal bar chart of the operators with the most self time (all workers), with the
/// workers' parked time for scale.
fn profile_chart(path: &std::path::Path, profile: &Profile) -> Result<(), String> {
    use plotters::prelude::*;
    crate::bench::plot::register_font().map_err(|e| e.to_string())?;
    let mut ops = profile.by_operator();
    ops.sort_by(|a, b| b.self_seconds.total_cmp(&a.self_seconds));
    ops.truncate(25);
    let busy: f64 = profile.workers.iter().map(|w| w.busy_seconds).sum();
    let parked: f64 = profile.workers.iter().map(|w| w.parked_seconds).sum();
    let label = |op: &crate::types::profile::OperatorTotal| {
        let addr: Vec<String> = op.addr.iter().map(|i| i.to_string()).collect();
        let mut name = op.name.clone();
        if name.chars().count() > 48 {
            name = name.chars().take(47).collect::<String>() + "…";
        }
        format!("{} [{}]", name, addr.join("."))
    };
    let rows: Vec<(String, f64)> = ops.iter().map(|op| (label(op), op.self_seconds)).collect();
    let height = 120 + 22 * rows.len().max(1) as u32;
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let max = rows.iter().map(|r| r.1).fold(0.0, f64::max).max(1e-9);
    let title = format!(
        "Operators by self time, all workers ({:.3} s busy, {:.3} s parked, {} workers)",
        busy,
        parked,
        profile.workers.len()
    );
    let (top, body) = root.split_vertically(40);
    top.titled(&title, ("sans-serif", 16)).map_err(|e| e.to_string())?;
    let (labels, bars) = body.split_horizontally(430);
    let n = rows.len().max(1);
    let row_h = (height - 80) as f64 / n as f64;
    for (i, (name, secs)) in rows.iter().enumerate() {
        let y = (i as f64 * row_h) as i32 + 4;
        labels.draw(&Text::new(name.clone(), (4, y), ("sans-serif", 12).into_font())).map_err(|e| e.to_string())?;
        let w = ((secs / max) * 440.0).max(1.0) as i32;
        bars.draw(&Rectangle::new([(0, y), (w, y + (row_h * 0.7) as i32)], RGBColor(74, 123, 208).filled()))
            .map_err(|e| e.to_string())?;
        let share = if busy > 0.0 { 100.0 * secs / busy } else { 0.0 };
        bars.draw(&Text::new(format!("{secs:.3} s ({share:.1}%)"), (w + 6, y), ("sans-serif", 12).into_font()))
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}
