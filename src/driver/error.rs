//! Why a run fails.
//!
//! Every layer below the driver has its own error type (a bad line of a file, an unreadable
//! hostfile, an unknown algorithm, a live input failure, a full disk under a sink). The driver
//! wraps them in one [`RunError`] without flattening them to text: the wrapped error is kept (and
//! its `Display` is the message a user reads), so a caller can still match on it. The exit status
//! is the command line's business (`ripples` maps [`RunError::is_input`] to 2, a stopped cluster
//! to 3, the rest to 1: `ripples::cli::exit_status`).
//!
//! ```
//! use ripples::driver::RunError;
//! let e = RunError::Input("u.txt:3: \"x\" is not a vertex id".into());
//! assert!(e.is_input());
//! assert_eq!(e.to_string(), "u.txt:3: \"x\" is not a vertex id");
//! ```

use super::input::InputFailure;
use super::layout::LayoutError;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad input data or a bad combination of flags (exit status 2).
    #[error("{0}")]
    Input(String),
    /// Anything else: unreadable files, bad configuration, I/O (exit status 1).
    #[error("{0}")]
    Other(String),
    /// An input file could not be read (the same on every worker). A bad line is
    /// [`RunError::Input`].
    #[error(transparent)]
    Load(InputFailure),
    /// The process layout cannot run.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// Writing a result, change log or stats file failed.
    #[error(transparent)]
    Sink(#[from] std::io::Error),
    /// A peer process disconnected: the cluster stopped (exit status 3).
    #[error(
        "process {process} ({address}) disconnected: {reason}; the cluster stopped. Restart every process with the same flags to {}",
        if *resumable { "resume from the state directory" } else { "run again" }
    )]
    Cluster {
        /// The index of the process that went away (`--process` of it).
        process: usize,
        /// Its `host:port` from the hostfile.
        address: String,
        /// What the communication layer reported.
        reason: String,
        /// Whether a state directory lets the restarted cluster resume.
        resumable: bool,
    },
    /// The processes of a cluster could not connect (exit status 3): a peer that never came
    /// within the connect timeout, or an address this process cannot listen on.
    #[error("process {process} of {processes} cannot form the cluster: {reason}")]
    ClusterStart {
        /// This process's index.
        process: usize,
        /// The number of processes.
        processes: usize,
        /// What went wrong, naming the peers and addresses.
        reason: String,
    },
    /// A worker failed (a bug: the message and where it happened).
    #[error("a worker failed: {0}")]
    WorkerFailed(String),
    /// The live front end could not start (bad options, an address in use, recovery failed).
    #[error(transparent)]
    LiveStart(#[from] crate::live::StartError),
    /// An observer of the run's changes failed (see [`super::observe`]).
    #[error("{0}")]
    Observer(String),
    /// A dataflow could not be built: [`Algorithm::build_outputs`](crate::dataflow::Algorithm::build_outputs)
    /// failed (on every worker alike); nothing was fed or written.
    #[error("cannot build dataflow {algorithm}: {message}")]
    Build {
        /// The dataflow's name.
        algorithm: String,
        /// Why, as the dataflow said.
        message: String,
    },
    /// A dataflow reported an error at an epoch (a record in its error collection, see
    /// [`crate::dataflow::typed`]): the run stopped there, and nothing of that epoch was written.
    #[error("dataflow {algorithm} failed at epoch {epoch}: {message}")]
    Dataflow {
        /// The dataflow's name.
        algorithm: String,
        /// The epoch (in windowed runs the event time) at which the error appeared.
        epoch: crate::types::Time,
        /// The error record's text (the smallest, if there were several).
        message: String,
    },
    /// The state directory (write-ahead log, snapshots, change-log mark) failed.
    #[error(transparent)]
    State(#[from] crate::live::DurabilityError),
}

impl From<InputFailure> for RunError {
    fn from(f: InputFailure) -> Self {
        if f.exit_code == 2 {
            RunError::Input(f.message)
        } else {
            RunError::Load(f)
        }
    }
}

impl RunError {
    /// Whether the run failed on bad input data (rather than on I/O or configuration).
    pub fn is_input(&self) -> bool {
        match self {
            RunError::Input(_) => true,
            RunError::Load(f) => f.exit_code == 2,
            _ => false,
        }
    }
}
