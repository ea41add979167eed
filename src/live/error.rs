//! **Errors** of the live front end, by where they arise.
//!
//! * [`StartError`]: [`start`](super::start()) could not set the front end up (bad options, a
//!   state directory or graph file that cannot be used, an address that cannot be bound). Nothing
//!   was read yet.
//! * [`TransportError`]: an input thread cannot read its input any more.
//! * [`SequencerError`]: the sequencer cannot go on (an input failure, a log append or snapshot
//!   that failed, workers that went away).
//! * [`LiveFailure`]: the boundary type the driver receives when the stream stopped: a message,
//!   and whether it was bad *input* (exit status 2) rather than an I/O or internal failure.
//!
//! Messages are sentence fragments that the driver prints as they are; where an
//! underlying error exists it is both part of the message and the [`source`](std::error::Error::source).

use std::io;
use std::path::PathBuf;

use super::state::DurabilityError;
use crate::sources::parse::SourceError;
use crate::types::Time;

/// Why [`start`](super::start()) failed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("the live front end needs at least one worker")]
    NoWorkers,
    /// `--late-output` cannot be created (the message names the file).
    #[error("{0}")]
    LateOutput(std::io::Error),
    /// `--tls-cert` / `--tls-key` cannot be used (the message names the file).
    #[error("{0}")]
    Tls(String),
    #[error("--batch must be at least 1")]
    ZeroBatch,
    #[error("an embedded input can start one job only")]
    Embedded,
    #[error("--epoch-ms must be at least 1")]
    ZeroEpochMs,
    #[error("cannot open the state directory {}: {source}", .dir.display())]
    OpenState {
        dir: PathBuf,
        #[source]
        source: DurabilityError,
    },
    #[error("cannot read the output mark in {}: {source}", .dir.display())]
    ReadMark {
        dir: PathBuf,
        #[source]
        source: DurabilityError,
    },
    #[error("the state directory names epoch {last} as durable but holds no epochs")]
    NothingDurable { last: Time },
    #[error("the state directory's log holds epoch {got} where epoch {expected} was expected")]
    OutOfSequence { got: Time, expected: Time },
    /// The initial graph file cannot be read.
    #[error(transparent)]
    Graph(#[from] SourceError),
    #[error("cannot log epoch 0 (the initial graph): {source}")]
    LogInitial {
        #[source]
        source: DurabilityError,
    },
    #[error("cannot listen on {address}: {source}")]
    Listen {
        address: String,
        #[source]
        source: io::Error,
    },
    /// The bound listener cannot be set up (its address, non-blocking mode).
    #[error(transparent)]
    Listener(io::Error),
    #[error("cannot follow {}: {source}", .path.display())]
    Follow {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot start thread {name}: {source}")]
    Thread {
        name: String,
        #[source]
        source: io::Error,
    },
    /// The sequencer thread cannot be started.
    #[error(transparent)]
    Sequencer(io::Error),
}

/// Why an input thread stopped reading.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error("cannot read stdin: {source}")]
    Stdin {
        #[source]
        source: io::Error,
    },
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} shrank from {from} to {to} bytes while being followed (it must only grow)", .path.display())]
    Shrank { path: PathBuf, from: u64, to: u64 },
}

/// Why the sequencer cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum SequencerError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// Writing `--late-output` failed (the message names the file).
    #[error("{0}")]
    LateOutput(std::io::Error),
    #[error("cannot log epoch {epoch}: {source}")]
    Log {
        epoch: Time,
        #[source]
        source: DurabilityError,
    },
    #[error("cannot snapshot epoch {epoch}: {source}")]
    Snapshot {
        epoch: Time,
        #[source]
        source: DurabilityError,
    },
    #[error("the workers stopped receiving epochs")]
    WorkersGone,
}

/// Why the front end stopped the stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LiveFailure {
    /// Bad input (exit status 2) rather than an I/O or internal failure.
    pub input: bool,
    pub message: String,
}

impl From<String> for LiveFailure {
    fn from(message: String) -> Self {
        LiveFailure { input: false, message }
    }
}

impl From<SequencerError> for LiveFailure {
    fn from(error: SequencerError) -> Self {
        LiveFailure { input: false, message: error.to_string() }
    }
}
