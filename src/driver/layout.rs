//! Process layout: how many workers per process, how many processes, which one this is, and
//! where the others listen. Maps onto timely's communication configuration.
//!
//! ```
//! use ripples::driver::Layout;
//! // `-w 4`: one process, four worker threads; no addresses needed.
//! assert!(Layout::threads(4).timely_config().is_ok());
//! assert!(Layout::threads(4).addresses().unwrap().is_empty());
//! // `-n 2 -p 1` without a hostfile: process i listens on 127.0.0.1:(2101 + i).
//! let second = Layout { processes: 2, process: 1, ..Layout::threads(2) };
//! assert_eq!(second.addresses().unwrap(), vec!["127.0.0.1:2101", "127.0.0.1:2102"]);
//! // A process index out of range is refused with the flags' names.
//! let bad = Layout { processes: 2, process: 2, ..Layout::default() };
//! assert_eq!(
//!     bad.timely_config().unwrap_err().to_string(),
//!     "--process 2 is out of range: with --processes 2 it must be 0..1"
//! );
//! ```

use std::path::{Path, PathBuf};

/// A layout that cannot run: a bad number or an unreadable or malformed hostfile.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// A flag out of range (`--workers 0`, `--process 3` of 2, ...).
    #[error("{0}")]
    Invalid(String),
    /// The hostfile could not be read. (The I/O error is part of the message and not exposed as
    /// `source()`, so that chain printers do not repeat it.)
    #[error("cannot read hostfile {}: {error}", path.display())]
    Hostfile {
        /// The hostfile given with `--hostfile`.
        path: PathBuf,
        /// The error reading it.
        error: std::io::Error,
    },
    /// A hostfile line is not `host:port`.
    #[error("{}:{line}: expected host:port, found '{found}'", path.display())]
    HostfileLine {
        /// The hostfile.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// The line's text.
        found: String,
    },
}

macro_rules! invalid {
    ($($arg:tt)*) => { return Err(LayoutError::Invalid(format!($($arg)*))) };
}

/// How long an idle worker of a single-process run polls for work before it parks (a worker
/// with nothing to do for longer takes no CPU).
pub const IDLE_SPIN: std::time::Duration = std::time::Duration::from_millis(1);

/// Workers and processes of a run.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Worker threads in this process (`-w`).
    pub workers: usize,
    /// Number of processes (`-n`).
    pub processes: usize,
    /// This process's index, `0..processes` (`-p`).
    pub process: usize,
    /// One `host:port` per line, in process order (`--hostfile`). Without it, process `i` listens
    /// on `127.0.0.1:(2101 + i)`.
    pub hostfile: Option<PathBuf>,
    /// How long a process of a cluster waits for its peers to connect before it stops
    /// (`--connect-timeout`).
    pub connect_timeout: std::time::Duration,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            workers: 1,
            processes: 1,
            process: 0,
            hostfile: None,
            connect_timeout: std::time::Duration::from_secs(60),
        }
    }
}

impl Layout {
    /// One process with `workers` threads.
    pub fn threads(workers: usize) -> Self {
        Layout { workers, ..Layout::default() }
    }

    /// Checks the numbers and builds timely's configuration.
    pub fn timely_config(&self) -> Result<timely::Config, LayoutError> {
        if self.workers == 0 {
            invalid!("--workers must be at least 1");
        }
        if self.processes == 0 {
            invalid!("--processes must be at least 1");
        }
        if self.process >= self.processes {
            invalid!(
                "--process {} is out of range: with --processes {} it must be 0..{}",
                self.process,
                self.processes,
                self.processes - 1
            );
        }
        let communication = if self.processes == 1 {
            timely::CommunicationConfig::Process(self.workers)
        } else {
            timely::CommunicationConfig::Cluster {
                threads: self.workers,
                process: self.process,
                addresses: self.addresses()?,
                report: false,
                zerocopy: false,
            }
        };
        // In one process with a core per worker, an idle worker polls for `IDLE_SPIN` before it
        // parks: waits within an epoch (a peer's share, the forest at worker 0) are mostly
        // shorter, and waking a parked thread costs more than the wait. With more workers than
        // cores, or in a cluster, it parks almost at once (timely's default): a polling worker
        // would take the core that the worker it waits for (or its process's network threads)
        // needs. (3 workers on 2 cores polling: matching-insert's epochs took 10x longer.)
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let worker = match self.processes {
            1 if self.workers <= cores => timely::WorkerConfig::default().idle_spin(IDLE_SPIN),
            _ => timely::WorkerConfig::default(),
        };
        Ok(timely::Config { communication, worker })
    }
}

impl Layout {
    /// Every process's `host:port` (one process: none): the hostfile's first `processes` lines,
    /// or `127.0.0.1:(2101 + i)` without one.
    pub fn addresses(&self) -> Result<Vec<String>, LayoutError> {
        if self.processes <= 1 {
            return Ok(Vec::new());
        }
        let addresses = match &self.hostfile {
            Some(path) => read_hostfile(path)?,
            None => (0..self.processes).map(|i| format!("127.0.0.1:{}", 2101 + i)).collect(),
        };
        if addresses.len() < self.processes {
            invalid!(
                "hostfile {} lists {} addresses but --processes is {}",
                self.hostfile.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
                addresses.len(),
                self.processes
            );
        }
        Ok(addresses[..self.processes].to_vec())
    }
}

/// Reads a hostfile: one `host:port` per line; blank lines and `#` comments skipped.
pub fn read_hostfile(path: &Path) -> Result<Vec<String>, LayoutError> {
    let text =
        std::fs::read_to_string(path).map_err(|error| LayoutError::Hostfile { path: path.to_path_buf(), error })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let ok =
            line.rsplit_once(':').map(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok()).unwrap_or(false);
        if !ok {
            return Err(LayoutError::HostfileLine { path: path.to_path_buf(), line: i + 1, found: line.to_string() });
        }
        out.push(line.to_string());
    }
    Ok(out)
}
