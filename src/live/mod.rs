//! **Live input**: streams that never finish. Update lines arrive on stdin, over TCP, or from a
//! growing file; epochs close by count, by wall clock or by the producer's `commit`; every
//! accepted epoch can be made durable (`--state-dir`) and a restarted run continues exactly where
//! the last durable epoch left off.
//!
//! The pieces, one concept per file:
//! * [`durability`] — the state directory: a checksummed, fsynced write-ahead log of accepted
//!   epochs, periodic snapshots of the consolidated edge multiset, and recovery (including torn
//!   log tails and corrupt snapshots).
//! * [`reader`] — the front end: reads update lines, validates them against the current edge
//!   multiset, closes epochs, logs them, answers producers, applies backpressure, and hands each
//!   epoch to the driver's workers.
//!
//! The contract between the front end and the driver is [`EpochBatch`] values sent, in epoch
//! order without gaps, to every local worker, and [`Progress`], through which the driver reports
//! completed epochs back (for backpressure and for `ok E` answers without a state directory).

pub mod reader;
pub mod state;

pub use state::{read_mark, write_mark};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::types::{Time, Update};

/// One closed, validated epoch of updates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EpochBatch {
    pub epoch: Time,
    pub updates: Vec<Update>,
    /// Windowed streams: the event time of each update (`None` for a static edge: the initial
    /// graph, or a static copy restored from a snapshot); empty when no update has one.
    #[serde(default)]
    pub times: Vec<Option<Time>>,
    /// Windowed streams: late updates dropped from this epoch (not logged; 0 after a restart).
    #[serde(default)]
    pub late: u64,
}

/// Shared progress counters between the driver and the front end.
#[derive(Debug, Default)]
pub struct Progress {
    /// Epochs `0..completed` are complete in the dataflow (their output is written).
    completed: AtomicU64,
    /// Set when the driver stopped (error or end); the front end stops waiting.
    stopped: std::sync::atomic::AtomicBool,
    /// Set by a driver that will call [`Progress::finish`] after writing its final outputs.
    attached: std::sync::atomic::AtomicBool,
    /// Set by the driver once every epoch is complete and `--output` is written.
    finished: std::sync::atomic::AtomicBool,
}

impl Progress {
    pub fn new() -> Arc<Self> {
        Arc::new(Progress::default())
    }
    /// Marks every epoch `<= epoch` complete.
    pub fn complete(&self, epoch: Time) {
        self.completed.fetch_max(epoch + 1, Ordering::SeqCst);
    }
    /// Number of epochs completed (epochs `0..n`).
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::SeqCst)
    }
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
    /// A driver announces that `end` must also wait for [`Progress::finish`].
    pub fn attach(&self) {
        self.attached.store(true, Ordering::SeqCst);
    }
    /// The driver has completed every epoch and written its final outputs.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::SeqCst);
    }
    /// Whether `end` may answer `bye`: epochs `0..next_epoch` are complete (and, with an attached
    /// driver, its outputs are written), or the driver stopped.
    pub fn may_end(&self, next_epoch: u64) -> bool {
        self.is_stopped()
            || (self.completed() >= next_epoch
                && (!self.attached.load(Ordering::SeqCst) || self.finished.load(Ordering::SeqCst)))
    }
}
