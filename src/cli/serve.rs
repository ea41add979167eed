//! `--serve ADDR` and its flags: the run's results as a SQL database for PostgreSQL clients.

use std::path::PathBuf;

use clap::Args;

use crate::driver::{RunError, RunOptions};

/// The environment variable that may hold the password instead of `--serve-password-file`.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub const PASSWORD_ENV: &str = "RIPPLES_SERVE_PASSWORD";

/// Serving flags (book/src/serving.md).
#[derive(Args, Debug, Clone, Default)]
pub struct ServeArgs {
    /// Serve the maintained results as a live SQL database to PostgreSQL clients (psql, psycopg,
    /// JDBC) at this address (a bare port binds 127.0.0.1). Served by process 0.
    #[arg(long, value_name = "ADDR")]
    pub serve: Option<String>,
    /// Clients authenticate with SCRAM-SHA-256 and this file's content (surrounding whitespace
    /// trimmed) as the password, for any user name. Or set RIPPLES_SERVE_PASSWORD.
    #[arg(long, value_name = "FILE")]
    pub serve_password_file: Option<PathBuf>,
    /// No authentication (loopback addresses only).
    #[arg(long)]
    pub serve_trust: bool,
    /// TLS for clients: the certificate chain (PEM); with --serve-tls-key. Required on a
    /// non-loopback address.
    #[arg(long, value_name = "FILE", requires = "serve_tls_key")]
    pub serve_tls_cert: Option<PathBuf>,
    /// TLS for clients: the private key (PEM); with --serve-tls-cert.
    #[arg(long, value_name = "FILE", requires = "serve_tls_cert")]
    pub serve_tls_key: Option<PathBuf>,
    /// Epochs of history kept for `AS OF` and for subscriptions to catch up.
    #[arg(long, value_name = "K", default_value_t = 100)]
    pub serve_retain_epochs: u64,
    /// Clients at once; one more is refused (SQLSTATE 53300).
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub serve_max_connections: usize,
    /// Rows one statement may return (SQLSTATE 54000 beyond).
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub serve_max_rows: usize,
    /// A statement running longer is cancelled (SQLSTATE 57014).
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub serve_statement_timeout_ms: u64,
    /// The mirror commits at most once per MS milliseconds: the epochs completed in between
    /// become visible together (fewer commits; queries stay cheaper). 0: a commit per epoch.
    #[arg(long, value_name = "MS", default_value_t = 5)]
    pub serve_commit_interval_ms: u64,
    /// Nice value of the serving threads (the query threads and the mirror; Linux): under
    /// contention the dataflow's workers keep their cores. 0 (the run's priority) to 19.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(i32).range(0..=19))]
    pub serve_nice: i32,
    /// Keep serving after the run ended (a file run's final results) until SIGINT or SIGTERM.
    #[arg(long)]
    pub serve_linger: bool,
}

/// The server of a run, if `--serve` was given (and this is process 0).
pub(super) struct Served {
    #[cfg(feature = "serve")]
    serving: Option<crate::serve::Serving>,
    linger: bool,
}

fn input(e: impl Into<String>) -> RunError {
    RunError::Input(e.into())
}

impl ServeArgs {
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    fn password(&self) -> Result<Option<String>, RunError> {
        if let Some(path) = &self.serve_password_file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| RunError::Other(format!("cannot read {}: {}", path.display(), e)))?;
            let p = text.trim();
            if p.is_empty() {
                return Err(input(format!("{}: the password file is empty", path.display())));
            }
            return Ok(Some(p.to_string()));
        }
        Ok(std::env::var(PASSWORD_ENV).ok().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()))
    }

    /// Starts serving if asked (checks the flags, listens, prints the address on stderr).
    /// `profiler`: the run's, whose figures become the profile tables.
    pub(super) fn start(
        &self,
        process: usize,
        profiler: Option<crate::driver::profile::Profiler>,
    ) -> Result<Served, RunError> {
        let Some(addr) = &self.serve else {
            if self.serve_trust
                || self.serve_password_file.is_some()
                || self.serve_tls_cert.is_some()
                || self.serve_linger
            {
                return Err(input("--serve-* flags need --serve ADDR"));
            }
            return Ok(Served::none());
        };
        if process != 0 {
            return Ok(Served::none());
        }
        #[cfg(not(feature = "serve"))]
        {
            let _ = (addr, profiler);
            Err(input("--serve: this ripples was built without the `serve` feature"))
        }
        #[cfg(feature = "serve")]
        {
            use crate::serve::{Auth, ServeConfig, Serving};
            let addr = if addr.contains(':') { addr.clone() } else { format!("127.0.0.1:{addr}") };
            let auth = match (self.password()?, self.serve_trust) {
                (Some(_), true) => {
                    return Err(input("--serve-trust and a password (--serve-password-file, RIPPLES_SERVE_PASSWORD) exclude each other"))
                }
                (Some(p), false) => Auth::Password(p),
                (None, true) => Auth::Trust,
                (None, false) => {
                    return Err(input(format!(
                        "--serve {addr}: clients must authenticate: give --serve-password-file FILE (or set {PASSWORD_ENV}), or --serve-trust on a loopback address"
                    )))
                }
            };
            let mut config = ServeConfig::new(addr, auth);
            config.tls = self.serve_tls_cert.clone().zip(self.serve_tls_key.clone());
            config.retain_epochs = self.serve_retain_epochs;
            config.max_connections = self.serve_max_connections.max(1);
            config.max_rows = self.serve_max_rows.max(1);
            config.statement_timeout = std::time::Duration::from_millis(self.serve_statement_timeout_ms.max(1));
            config.commit_interval = std::time::Duration::from_millis(self.serve_commit_interval_ms);
            config.nice = self.serve_nice;
            config.profiler = profiler;
            let serving = Serving::start(config).map_err(input)?;
            eprintln!(
                "ripples: serving SQL on {} (psql \"host={} port={} user=ripples\")",
                serving.local_addr,
                serving.local_addr.ip(),
                serving.local_addr.port()
            );
            Ok(Served { serving: Some(serving), linger: self.serve_linger })
        }
    }
}

impl Served {
    fn none() -> Served {
        Served {
            #[cfg(feature = "serve")]
            serving: None,
            linger: false,
        }
    }

    /// Reads the statements clients sent, when serving.
    #[cfg(feature = "serve")]
    pub(super) fn statements(&self) -> Option<impl Fn() -> u64 + Send + Sync + 'static> {
        self.serving.as_ref().map(|s| s.statements())
    }

    /// Adds the mirror's observer to a run's options.
    pub(super) fn attach(&self, options: RunOptions) -> RunOptions {
        #[cfg(feature = "serve")]
        if let Some(s) = &self.serving {
            options.observers.push(Box::new(s.observer()));
        }
        options
    }

    /// After the run: reports the mirror's cost, and with --serve-linger keeps serving.
    pub(super) fn end(self) {
        #[cfg(feature = "serve")]
        if let Some(s) = &self.serving {
            s.wait_mirror();
            let cost = s.mirror_cost();
            for (table, changes, time) in &cost.tables {
                if *changes > 0 {
                    eprintln!(
                        "ripples: --serve mirror: {table}: {changes} output changes, {:.2} µs per change",
                        time.as_secs_f64() * 1e6 / *changes as f64
                    );
                }
            }
            let (changes, time) = cost.total;
            if changes > 0 {
                eprintln!(
                    "ripples: --serve mirror: all: {changes} output changes, {:.2} µs per change with the commits ({} epochs in {} transactions)",
                    time.as_secs_f64() * 1e6 / changes as f64,
                    cost.epochs,
                    cost.transactions
                );
            }
            if self.linger {
                eprintln!(
                    "ripples: the run ended; still serving SQL on {} (--serve-linger) until interrupted",
                    s.local_addr
                );
                s.linger();
            }
        }
        let _ = self.linger;
    }
}
