//! Errors of the state directory.
//!
//! Every failure names the file or directory it concerns, so a message alone says where to look.
//! I/O failures keep the underlying [`io::Error`] as their [`source`](std::error::Error::source);
//! the other variants describe a rule the caller broke ([`DurabilityError::NotConsecutive`],
//! [`DurabilityError::BadSnapshot`], [`DurabilityError::TooLarge`]), damage recovery found
//! ([`DurabilityError::Corrupt`], [`DurabilityError::Unrecoverable`]), or a state in which
//! writing must not go on ([`DurabilityError::Locked`], [`DurabilityError::Poisoned`]).

use std::io;
use std::path::{Path, PathBuf};

use crate::types::Time;

/// Errors of the state directory. Every message names the file or directory concerned.
#[derive(Debug, thiserror::Error)]
pub enum DurabilityError {
    /// An operating-system call on a file of the state directory failed.
    #[error("{}: {op} failed: {source}", .path.display())]
    Io {
        /// The file or directory the call was about.
        path: PathBuf,
        /// The operation, such as `open`, `write`, `fsync` or `rename`.
        op: &'static str,
        /// The error the operating system gave.
        #[source]
        source: io::Error,
    },
    /// An append skipped or repeated an epoch number.
    #[error(
        "{}: cannot log epoch {got}: epochs must be consecutive and the next one is {expected}",
        .path.display()
    )]
    NotConsecutive {
        /// The log file.
        path: PathBuf,
        /// The epoch number the log needs next (one after the last logged).
        expected: Time,
        /// The epoch number the caller tried to append.
        got: Time,
    },
    /// A snapshot was asked for an epoch it cannot describe (say, one not yet logged).
    #[error("{}: cannot snapshot epoch {epoch}: {reason}", .path.display())]
    BadSnapshot {
        /// The state directory.
        path: PathBuf,
        /// The epoch the snapshot was asked for.
        epoch: Time,
        /// Why it cannot be taken.
        reason: String,
    },
    /// One epoch's encoded changes exceed the largest record the log format can frame.
    #[error("{}: epoch {epoch} is too large for one log record ({bytes} bytes)", .path.display())]
    TooLarge {
        /// The log file.
        path: PathBuf,
        /// The epoch that was being appended.
        epoch: Time,
        /// Its encoded size in bytes.
        bytes: u64,
    },
    /// A file's contents fail their checks (bad magic, checksum, or structure) somewhere a torn
    /// write cannot explain.
    #[error("{}: corrupt: {detail}", .path.display())]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong, with the byte offset where known.
        detail: String,
    },
    /// The files that remain do not determine the edge multiset (say, the log starts after the
    /// last snapshot ends).
    #[error("{}: cannot recover: {detail}", .path.display())]
    Unrecoverable {
        /// The state directory.
        path: PathBuf,
        /// What is missing.
        detail: String,
    },
    /// Another process holds the directory's lock file.
    #[error("{}: the state directory is in use by another process", .path.display())]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// An earlier write failed part-way; the handle refuses further writes until the directory
    /// is reopened (and recovered).
    #[error(
        "{}: an earlier write failed, so what is on disk is uncertain; reopen the state \
         directory to recover",
        .path.display()
    )]
    Poisoned {
        /// The state directory.
        path: PathBuf,
    },
}

pub(super) fn io_err(path: &Path, op: &'static str) -> impl FnOnce(io::Error) -> DurabilityError {
    let path = path.to_path_buf();
    move |source| DurabilityError::Io { path, op, source }
}
