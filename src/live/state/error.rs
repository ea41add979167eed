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
    #[error("{}: {op} failed: {source}", .path.display())]
    Io {
        path: PathBuf,
        op: &'static str,
        #[source]
        source: io::Error,
    },
    #[error(
        "{}: cannot log epoch {got}: epochs must be consecutive and the next one is {expected}",
        .path.display()
    )]
    NotConsecutive { path: PathBuf, expected: Time, got: Time },
    #[error("{}: cannot snapshot epoch {epoch}: {reason}", .path.display())]
    BadSnapshot { path: PathBuf, epoch: Time, reason: String },
    #[error("{}: epoch {epoch} is too large for one log record ({bytes} bytes)", .path.display())]
    TooLarge { path: PathBuf, epoch: Time, bytes: u64 },
    #[error("{}: corrupt: {detail}", .path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error("{}: cannot recover: {detail}", .path.display())]
    Unrecoverable { path: PathBuf, detail: String },
    #[error("{}: the state directory is in use by another process", .path.display())]
    Locked { path: PathBuf },
    #[error(
        "{}: an earlier write failed, so what is on disk is uncertain; reopen the state \
         directory to recover",
        .path.display()
    )]
    Poisoned { path: PathBuf },
}

pub(super) fn io_err(path: &Path, op: &'static str) -> impl FnOnce(io::Error) -> DurabilityError {
    let path = path.to_path_buf();
    move |source| DurabilityError::Io { path, op, source }
}
