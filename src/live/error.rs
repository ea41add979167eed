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
//!
//! ```
//! use std::error::Error;
//! use ripples::live::{start, LiveConfig, LiveFailure, LiveInput, SequencerError, StartError};
//! // Bad options are refused by `start` before anything is read.
//! let config = LiveConfig { batch: Some(0), ..LiveConfig::new(LiveInput::Stdin) };
//! let err = start(config).err().expect("a zero batch is refused");
//! assert!(matches!(err, StartError::ZeroBatch));
//! assert_eq!(err.to_string(), "--batch must be at least 1");
//! // A state directory that cannot be opened names the directory, and keeps the cause as source.
//! let dir = tempfile::tempdir().unwrap();
//! let not_a_dir = dir.path().join("file");
//! std::fs::write(&not_a_dir, "").unwrap();
//! let config = LiveConfig { state_dir: Some(not_a_dir.clone()), ..LiveConfig::new(LiveInput::Stdin) };
//! let err = start(config).err().expect("a file is not a state directory");
//! assert!(err.to_string().starts_with(&format!("cannot open the state directory {}", not_a_dir.display())));
//! assert!(err.source().is_some());
//! // What the driver receives when the sequencer stops: not an input error (exit status 1).
//! let failure = LiveFailure::from(SequencerError::WorkersGone);
//! assert_eq!((failure.input, failure.message.as_str()), (false, "the workers stopped receiving epochs"));
//! ```

use std::io;
use std::path::PathBuf;

use super::state::DurabilityError;
use crate::sources::parse::SourceError;
use crate::types::Time;

/// Why [`start`](super::start()) failed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The configuration asked for zero workers; the front end needs at least one to feed.
    #[error("the live front end needs at least one worker")]
    NoWorkers,
    /// `--late-output` cannot be created (the message names the file).
    #[error("{0}")]
    LateOutput(std::io::Error),
    /// `--tls-cert` / `--tls-key` cannot be used (the message names the file).
    #[error("{0}")]
    Tls(String),
    /// `--batch` was 0: an epoch must close after at least one update.
    #[error("--batch must be at least 1")]
    ZeroBatch,
    /// An [`EmbeddedInput`](crate::live::EmbeddedInput) was handed to a second `start`: it feeds
    /// one job only.
    #[error("an embedded input can start one job only")]
    Embedded,
    /// `--epoch-ms` was 0: a time-closed epoch must last at least one millisecond.
    #[error("--epoch-ms must be at least 1")]
    ZeroEpochMs,
    /// The `--state-dir` could not be opened or recovered (locked, unreadable, damaged beyond
    /// recovery).
    #[error("cannot open the state directory {}: {source}", .dir.display())]
    OpenState {
        /// The state directory given.
        dir: PathBuf,
        /// What the state directory reported.
        #[source]
        source: DurabilityError,
    },
    /// The output mark (the last epoch already in the change log) of the state directory could
    /// not be read.
    #[error("cannot read the output mark in {}: {source}", .dir.display())]
    ReadMark {
        /// The state directory given.
        dir: PathBuf,
        /// What the state directory reported.
        #[source]
        source: DurabilityError,
    },
    /// The state directory's durable mark names an epoch, but neither the log nor a snapshot
    /// holds any epoch: its files were removed by hand.
    #[error("the state directory names epoch {last} as durable but holds no epochs")]
    NothingDurable {
        /// The epoch the mark names as durable.
        last: Time,
    },
    /// Replaying the log found a gap or a repeat: the log's epochs are not consecutive.
    #[error("the state directory's log holds epoch {got} where epoch {expected} was expected")]
    OutOfSequence {
        /// The epoch number found in the log.
        got: Time,
        /// The epoch number that should have come next.
        expected: Time,
    },
    /// The initial graph file cannot be read.
    #[error(transparent)]
    Graph(#[from] SourceError),
    /// Epoch 0 (the initial graph) could not be appended to the state directory's log.
    #[error("cannot log epoch 0 (the initial graph): {source}")]
    LogInitial {
        /// What the state directory reported.
        #[source]
        source: DurabilityError,
    },
    /// The `--listen` address could not be bound (in use, not local, malformed).
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// The address as given, e.g. `127.0.0.1:7000`.
        address: String,
        /// The error binding it.
        #[source]
        source: io::Error,
    },
    /// The bound listener cannot be set up (its address, non-blocking mode).
    #[error(transparent)]
    Listener(io::Error),
    /// The `--follow` file could not be opened.
    #[error("cannot follow {}: {source}", .path.display())]
    Follow {
        /// The file to follow.
        path: PathBuf,
        /// The error opening it.
        #[source]
        source: io::Error,
    },
    /// An input thread could not be spawned.
    #[error("cannot start thread {name}: {source}")]
    Thread {
        /// The thread's name (`ripples-tcp`, `ripples-follow`, ...).
        name: String,
        /// The error the operating system gave.
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
    /// Reading standard input failed.
    #[error("cannot read stdin: {source}")]
    Stdin {
        /// The read error.
        #[source]
        source: io::Error,
    },
    /// Reading the followed file failed.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The followed file.
        path: PathBuf,
        /// The read error.
        #[source]
        source: io::Error,
    },
    /// The followed file became shorter: it was truncated or replaced, so the lines already read
    /// no longer describe it.
    #[error("{} shrank from {from} to {to} bytes while being followed (it must only grow)", .path.display())]
    Shrank {
        /// The followed file.
        path: PathBuf,
        /// Its length in bytes when last read.
        from: u64,
        /// Its length in bytes now.
        to: u64,
    },
}

/// Why the sequencer cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum SequencerError {
    /// An input thread stopped reading.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// Writing `--late-output` failed (the message names the file).
    #[error("{0}")]
    LateOutput(std::io::Error),
    /// A closed epoch could not be appended to the state directory's log (nothing of it reached
    /// the workers).
    #[error("cannot log epoch {epoch}: {source}")]
    Log {
        /// The epoch that was being logged.
        epoch: Time,
        /// What the state directory reported.
        #[source]
        source: DurabilityError,
    },
    /// A snapshot of the edge multiset could not be written to the state directory.
    #[error("cannot snapshot epoch {epoch}: {source}")]
    Snapshot {
        /// The epoch the snapshot would cover.
        epoch: Time,
        /// What the state directory reported.
        #[source]
        source: DurabilityError,
    },
    /// Every worker's receiving end was dropped: the run ended or failed.
    #[error("the workers stopped receiving epochs")]
    WorkersGone,
}

/// Why the front end stopped the stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LiveFailure {
    /// Bad input (exit status 2) rather than an I/O or internal failure.
    pub input: bool,
    /// What went wrong, as printed to the user (naming the input, line or file).
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
