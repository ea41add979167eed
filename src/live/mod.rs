//! **Live input**: streams that never finish. Update lines arrive on stdin, over TCP, or from a
//! growing file; epochs close by count, by wall clock or by the producer's `commit`; every
//! accepted epoch can be made durable (`--state-dir`) and a restarted run continues exactly where
//! the last durable epoch left off.
//!
//! # How a line travels
//!
//! ```text
//!  input threads             sequencer thread                          driver workers
//!  stdin | follow | tcp ──▶  validate → open epoch → close ── batch ──▶ one channel each
//!        lines, bounded      (log + fsync, apply, send, ok, snapshot)        │
//!        queue  ▲                                                            │
//!               └── input is not read ◀── waits while too far behind ◀── Progress
//! ```
//!
//! The pieces, one concept per file (the private modules are rendered with
//! `--document-private-items`):
//!
//! * `config` — [`LiveConfig`] and [`LiveInput`]: where lines come from, how epochs close.
//! * `start` — [`start()`]: recovery or the initial graph, the initial batches, the threads.
//! * `transport` — the input threads: `transport::stdin`, `transport::follow`, `transport::tcp`
//!   (with the TCP protocol), `transport::embedded` (typed submissions from the program the
//!   job runs in).
//! * `lines` — the line grammar and the splitter that cuts bytes into lines.
//! * `sequencer` — the thread that owns the open epoch and closes epochs.
//! * `claims` — which deletions are valid while several producers fill one epoch.
//! * `multiset` — the edge multiset deletions are validated against.
//! * `backpressure` — never more than `--max-behind` epochs ahead of the dataflow.
//! * `snapshot_policy` — when the sequencer snapshots the multiset.
//! * `handshake` — `end` and `bye`.
//! * `progress` — [`Progress`], through which the driver reports back, and how the front end
//!   waits on it.
//! * [`state`] — the state directory: write-ahead log, snapshots, recovery, the change-log mark.
//! * [`error`] — the error types; [`LiveFailure`] is what the driver receives.
//!
//! The contract between the front end and the driver is [`EpochBatch`] values sent, in epoch
//! order without gaps, to every local worker, and [`Progress`], through which the driver reports
//! completed epochs back (for backpressure, snapshots and the `end` handshake).
//!
//! Layering: `live` depends on [`crate::types`] and [`crate::sources`] only.
//!
//! # Playing the driver
//!
//! The front end alone, following a file, with this example in the driver's place: it receives
//! every epoch and reports it complete, which is what lets `end` finish the stream.
//!
//! ```
//! use ripples::live::{start, LiveConfig, LiveInput};
//! use ripples::types::Update;
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("updates.txt");
//! std::fs::write(&path, "+ 0 1\n+ 1 2\ncommit\n- 0 1\n- 5 6\nend\n").unwrap();
//! let config = LiveConfig { skip_bad_lines: true, ..LiveConfig::new(LiveInput::Follow(path)) };
//! let handle = start(config).unwrap();
//! let mut epochs = Vec::new();
//! for batch in handle.receivers[0].iter() {
//!     handle.progress.complete(batch.epoch);
//!     epochs.push((batch.epoch, batch.updates));
//! }
//! // Epoch 0 is the (here empty) initial graph; `commit` closed epoch 1, `end` epoch 2. The
//! // deletion of the absent edge 5 6 was rejected and skipped.
//! assert_eq!(
//!     epochs,
//!     vec![
//!         (0, vec![]),
//!         (1, vec![Update::insert(0, 1), Update::insert(1, 2)]),
//!         (2, vec![Update::delete(0, 1)]),
//!     ]
//! );
//! let summary = handle.thread.join().unwrap().unwrap();
//! assert_eq!((summary.epochs, summary.updates, summary.rejected_lines), (2, 3, 1));
//! ```

mod backpressure;
mod claims;
mod config;
pub mod error;
mod handshake;
mod lines;
mod multiset;
mod progress;
mod sequencer;
mod snapshot_policy;
mod start;
pub mod state;
mod transport;
mod wake;

pub use config::{LiveConfig, LiveInput};
pub use error::{LiveFailure, SequencerError, StartError, TransportError};
pub use progress::{LiveCounters, Progress};
pub use sequencer::LiveSummary;
pub use start::{start, LiveHandle};
pub use state::{read_mark, write_mark, ChangeLogMark, DurabilityError, OutputsMark, Recovered, StateDir};
pub use transport::embedded::{EmbeddedInput, EmbeddedSender, Submission};
pub use transport::tls::tls_server_config;
pub use wake::Waker;

use serde::{Deserialize, Serialize};

use crate::types::{Time, Update};

/// One closed, validated epoch of updates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EpochBatch {
    /// The epoch number: 0 is the initial graph, then one per closed epoch, without gaps.
    pub epoch: Time,
    /// The epoch's accepted updates, in the order the sequencer accepted them (every deletion
    /// removes a copy present at that point).
    pub updates: Vec<Update>,
    /// Windowed streams: the event time of each update (`None` for a static edge: the initial
    /// graph, or a static copy restored from a snapshot); empty when no update has one.
    #[serde(default)]
    pub times: Vec<Option<Time>>,
    /// Windowed streams: late updates dropped from this epoch (not logged; 0 after a restart).
    #[serde(default)]
    pub late: u64,
    /// The run's record input: the epoch's accepted records (`record + TEXT` / `record - TEXT`
    /// lines) with their diffs, in the order the sequencer accepted them; empty when none.
    #[serde(default)]
    pub records: Vec<(String, i8)>,
}
