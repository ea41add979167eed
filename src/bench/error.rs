//! [`BenchError`]: why `ripples bench` (or one of its child processes) failed.
//!
//! Each variant says what was being done; the underlying cause, when there is one, is its
//! [`source`](std::error::Error::source), so a caller that prints the whole chain (as the command
//! line does, `outer: inner`) reads the same text as before this module had its own error type.

use std::path::PathBuf;
use std::process::ExitStatus;

use crate::driver::RunError;

/// Why a benchmark failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A scenario name `ripples bench` does not know (bad usage).
    #[error("unknown scenario '{name}' (known: {})", .known.join(", "))]
    UnknownScenario {
        /// The name asked for.
        name: String,
        /// The scenarios there are ([`SCENARIOS`](super::SCENARIOS)).
        known: Vec<&'static str>,
    },
    /// A system name the registry does not know.
    #[error("unknown system '{name}' (known: {})", .known.join(", "))]
    UnknownSystem {
        /// The name asked for.
        name: String,
        /// The systems of the registry ([`systems::names`](super::systems::names)).
        known: Vec<&'static str>,
    },
    /// A known system asked to run a scenario it does not handle.
    #[error("system {system} does not apply to {scenario}")]
    DoesNotApply {
        /// The system's name.
        system: &'static str,
        /// The scenario's name.
        scenario: String,
    },
    /// The algorithm of a dataflow system could not be built.
    #[error(transparent)]
    Algorithm(#[from] crate::dataflow::AlgorithmError),
    /// The driver failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The driver returned no report (this process holds no worker that reports).
    #[error("no report")]
    NoReport,
    /// `--profile DIR`: the profile could not be written (the message names the file).
    #[error("{0}")]
    Profile(String),
    /// A file or directory could not be read, written or created.
    #[error("{what} {}", path.display())]
    File {
        /// "cannot write", "cannot read", "cannot create".
        what: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The parent could not find its own executable to start the children with.
    #[error("cannot find the ripples executable")]
    CurrentExe(#[source] std::io::Error),
    /// A child process could not be started.
    #[error("cannot start {}", exe.display())]
    Spawn {
        /// The executable that was started (this process's own binary).
        exe: PathBuf,
        /// Why it could not be started.
        #[source]
        source: std::io::Error,
    },
    /// A child process exited unsuccessfully (its own error is on the inherited stderr).
    #[error("system {system} failed (exit status {status})")]
    ChildFailed {
        /// The system the child ran.
        system: String,
        /// How the child exited.
        status: ExitStatus,
    },
    /// A child process printed something that is not a result line.
    #[error("system {system} reported {line:?}")]
    ChildReport {
        /// The system the child ran.
        system: String,
        /// The last line the child printed on stdout.
        line: String,
        /// Why it is not a [`SystemResult`](super::SystemResult).
        #[source]
        source: serde_json::Error,
    },
    /// The scenario could not be passed to a child process as JSON, or read back from it.
    #[error("bad scenario spec")]
    Spec(#[source] serde_json::Error),
    /// The result JSON could not be encoded.
    #[error("cannot encode the results")]
    Encode(#[source] serde_json::Error),
    /// A recorded run's results (`bench.json`) could not be read back.
    #[error("{} is not the output of ripples bench --json", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// No font for a PNG plot.
    #[error("no TrueType font found for the plot (looked for {0})")]
    NoFont(String),
    /// A plot file name that is neither `.svg` nor `.png`.
    #[error("--plot needs a .svg or .png file name, got {}", .0.display())]
    PlotFormat(PathBuf),
    /// plotters failed while drawing.
    #[error("plot: {0}")]
    Draw(String),
    /// `--shards`: bad options, or the union forest of the shares disagrees with one forest.
    #[error("shards: {0}")]
    Shards(String),
}

impl BenchError {
    /// A [`BenchError::File`].
    pub(crate) fn file(what: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> BenchError {
        let path = path.into();
        move |source| BenchError::File { what, path, source }
    }
}
