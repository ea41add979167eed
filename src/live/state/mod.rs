//! The **state directory** of `--state-dir DIR`: a write-ahead log of accepted epochs, snapshots
//! of the consolidated edge multiset, and crash recovery that loses no acknowledged epoch.
//!
//! A live run appends every epoch to the log before it acknowledges it (`log`), now and then
//! writes the whole edge multiset as a snapshot so that old log segments can go (`snapshot`),
//! and on a restart rebuilds the state from the newest usable snapshot plus the log after it,
//! repairing what a crash left behind (`recovery`, [`StateDir::open`]). Beside them the driver
//! keeps the change-log mark (`mark`, [`ChangeLogMark`]). `codec` holds the byte formats, `error`
//! the one error type, [`DurabilityError`].
//!
//! # Files (format version 1)
//!
//! | file | content |
//! | --- | --- |
//! | `log-<S>.bin` | a log segment: records for epochs `S, S+1, …`, consecutive, nothing else |
//! | `snapshot-<E>.bin` | the edge multiset after epoch `E` |
//! | `changes.mark` | `(epoch, byte offset)` of the `--changes` file (see [`ChangeLogMark`]) |
//! | `lock` | empty; an exclusive advisory lock on it keeps two processes out of one directory |
//! | `*.tmp` | a snapshot or mark being written; never read, removed by [`StateDir::open`] |
//! | `*.corrupt`, `*.discarded-at-<N>` | bytes recovery could not use, kept for inspection; ignored |
//!
//! # One writer, and what happens after a failed write
//!
//! A [`StateDir`] is the only writer of its directory while it lives (it holds the lock). If
//! [`StateDir::append`] or [`StateDir::snapshot`] fails with an I/O error, what is on disk is
//! uncertain, and the `StateDir` refuses any further writes ([`DurabilityError::Poisoned`]);
//! reopen it to let recovery sort the tail out (the failed epoch may or may not be there).
//!
//! # A round trip
//!
//! ```
//! use ripples::live::{EpochBatch, StateDir};
//! use ripples::types::Update;
//! let dir = tempfile::tempdir().unwrap();
//! let batch = |epoch, updates: Vec<Update>| EpochBatch { epoch, updates, ..EpochBatch::default() };
//! {
//!     let (mut state, recovered) = StateDir::open(dir.path()).unwrap();
//!     assert_eq!(recovered.last_epoch, None);
//!     state.append(&batch(0, vec![Update::insert(0, 1), Update::insert(1, 2)])).unwrap();
//!     state.append(&batch(1, vec![Update::delete(0, 1)])).unwrap();
//!     // Epochs are consecutive: skipping one is refused.
//!     assert!(state.append(&batch(5, vec![])).unwrap_err().to_string().contains("the next one is 2"));
//! } // dropping the handle releases the directory's lock
//! // A restart gets back every epoch that was appended, in order.
//! let (mut state, recovered) = StateDir::open(dir.path()).unwrap();
//! assert_eq!(recovered.last_epoch, Some(1));
//! assert_eq!(recovered.log.len(), 2);
//! assert_eq!(recovered.log[1].updates, vec![Update::delete(0, 1)]);
//! // A snapshot of the multiset after epoch 1 lets recovery start there instead.
//! state.snapshot(1, &[(Update::insert(1, 2), 1)]).unwrap();
//! state.append(&batch(2, vec![Update::insert(2, 3)])).unwrap();
//! drop(state);
//! let (state, recovered) = StateDir::open(dir.path()).unwrap();
//! assert_eq!(recovered.snapshot_epoch, Some(1));
//! assert_eq!(recovered.snapshot_edges, vec![(Update::insert(1, 2), 1)]);
//! assert_eq!(recovered.log.iter().map(|b| b.epoch).collect::<Vec<_>>(), vec![2]);
//! assert_eq!(state.next_epoch(), 3);
//! ```

mod codec;
mod error;
mod log;
mod mark;
mod recovery;
mod snapshot;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

pub use codec::SnapshotEntry;
pub use error::DurabilityError;
pub use mark::{read_mark, write_mark, ChangeLogMark, OutputsMark, MARK_FILE};
pub use recovery::Recovered;

use crate::types::Time;
use error::io_err;

const LOG_PREFIX: &str = "log-";
const SNAPSHOT_PREFIX: &str = "snapshot-";
const BIN: &str = ".bin";
const TMP: &str = ".tmp";
const LOCK_FILE: &str = "lock";

/// The segment appends go to.
#[derive(Debug)]
struct Active {
    start: Time,
    path: PathBuf,
    file: File,
}

/// An open state directory: the only writer of its log and snapshots while it lives.
#[derive(Debug)]
pub struct StateDir {
    dir: PathBuf,
    /// Holds the advisory lock.
    _lock: File,
    /// The epoch the next append must carry (0: nothing durable yet).
    next: Time,
    active: Option<Active>,
    /// Log segments on disk, by first epoch.
    segments: BTreeMap<Time, PathBuf>,
    /// Snapshot epochs on disk (the newest is valid; one older may be kept as a fallback).
    snapshots: BTreeSet<Time>,
    poisoned: bool,
    /// Since the directory was opened: bytes appended to the log, epochs appended, and the
    /// time that took (write and fsync).
    appended: u64,
    appends: u64,
    append_time: std::time::Duration,
}

fn segment_name(start: Time) -> String {
    format!("{LOG_PREFIX}{start}{BIN}")
}

fn snapshot_name(epoch: Time) -> String {
    format!("{SNAPSHOT_PREFIX}{epoch}{BIN}")
}

/// `prefix<u64>suffix` with the number in canonical form.
fn parse_numbered(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
    let digits = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
    let n: u64 = digits.parse().ok()?;
    (n.to_string() == digits).then_some(n)
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), DurabilityError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(io_err(dir, "fsync of directory"))
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), DurabilityError> {
    Ok(())
}

/// `base`, or `base.1`, `base.2`, … whichever does not exist yet.
fn unused_path(base: PathBuf) -> PathBuf {
    if !base.exists() {
        return base;
    }
    (1u32..)
        .map(|i| PathBuf::from(format!("{}.{i}", base.display())))
        .find(|p| !p.exists())
        .expect("some suffix is free")
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn remove_if_present(path: &Path) -> Result<(), DurabilityError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err(path, "removing")(e)),
    }
}

impl StateDir {
    /// The state directory's path.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The last durable epoch, if any.
    pub fn last_epoch(&self) -> Option<Time> {
        self.next.checked_sub(1)
    }

    /// The epoch the next [`append`](Self::append) must carry.
    pub fn next_epoch(&self) -> Time {
        self.next
    }

    /// The snapshot epochs currently on disk, oldest first.
    pub fn snapshot_epochs(&self) -> Vec<Time> {
        self.snapshots.iter().copied().collect()
    }

    fn check_poisoned(&self) -> Result<(), DurabilityError> {
        if self.poisoned {
            return Err(DurabilityError::Poisoned { path: self.dir.clone() });
        }
        Ok(())
    }
}
