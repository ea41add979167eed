//! **Observers**: code that receives every completed epoch's changes as they are written.
//!
//! The change log is one consumer of a run's output; an [`Observer`] is any other: a SQL
//! mirror (`--serve`), an embedding program's channel, a test. The driver defines what it
//! needs and calls it; whoever implements it sits beside the driver and never reaches into it.
//!
//! Only the writing worker (worker 0 of process 0) calls observers, in epoch order, right after
//! the epoch's changes reached the change log: an observer sees exactly the change log's lines
//! (consolidated, per key retractions before insertions, one [`Change`] per line; a typed
//! output's as [`RowChange`]s, rendered text with the SQL types of [`RowOutputInfo`]) and the
//! epoch's [`EpochStats`]. With event-time windows one call covers every event time the epoch
//! completed, each change labelled with its own time, as in the change log.
//!
//! An observer must not block the dataflow for long: a consumer that may be slow (a network
//! client) should hand the view to its own thread through a bounded buffer. An observer that
//! fails stops the run with its message.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use ripples::driver::observe::{EpochView, Observer, Observers};
//!
//! /// Counts the output changes of every epoch.
//! struct Count(Arc<Mutex<Vec<(u64, usize)>>>);
//! impl Observer for Count {
//!     fn epoch(&mut self, view: &EpochView) -> Result<(), String> {
//!         self.0.lock().unwrap().push((view.epoch, view.changes.iter().map(|c| c.len()).sum()));
//!         Ok(())
//!     }
//! }
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let observers = Observers::default().with(Count(seen.clone()));
//! assert_eq!(observers.len(), 1);
//! ```

use std::sync::{Arc, Mutex};

use crate::sinks::{Change, RowChange, RunSummary};
use crate::types::format::{ColumnType, RowFormat, ValueFormat};
use crate::types::stats::EpochStats;
use crate::types::Time;

/// One algorithm of the run, as observers are told at the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputInfo {
    /// The algorithm's name (`wcc`, `pagerank`, a custom dataflow's name).
    pub name: String,
    /// How its values are written (integers, floats stored as bits).
    pub format: ValueFormat,
}

/// One typed output of the run ([`crate::dataflow::typed`]), as observers are told at the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowOutputInfo {
    /// `DATAFLOW.OUTPUT` (its files are `DATAFLOW.OUTPUT.changes` and `.out`).
    pub name: String,
    /// How its rows are rendered: `Display` text or JSON.
    pub format: RowFormat,
    /// The SQL types of its key and value (from the Rust types; JSON is text).
    pub columns: (ColumnType, ColumnType),
}

/// What a live run's front end reports once it has started (before any epoch completes).
#[derive(Clone, Debug)]
pub struct LiveStarted {
    /// The epoch the next commit closes (after the initial graph or the recovered epochs).
    pub next_epoch: Time,
    /// The address TCP producers connect to (`--listen`; useful with port 0).
    pub local_addr: Option<std::net::SocketAddr>,
    /// The front end's counters (producers, write-ahead log, snapshots), read as it runs.
    pub progress: Arc<crate::live::Progress>,
}

/// One completed epoch as an observer sees it.
#[derive(Debug)]
pub struct EpochView<'a> {
    /// The epoch number (for windowed runs: the driver's epoch; each change carries its time).
    pub epoch: Time,
    /// What the epoch did (latency, updates, output changes, memory, watermark).
    pub stats: &'a EpochStats,
    /// Per algorithm, in the run's order: this epoch's changes, exactly the change log's lines.
    pub changes: &'a [Vec<Change>],
    /// Per typed output, in the order [`Observer::start_rows`] gave: this epoch's changes,
    /// exactly its change log's lines (rendered text).
    pub rows: &'a [Vec<RowChange>],
    /// The epoch was already written before a restart and is replayed to rebuild the result;
    /// its changes are in the change log already.
    pub replayed: bool,
}

/// Receives every completed epoch's changes (see the [module documentation](self)).
pub trait Observer: Send {
    /// Called once before the first epoch with the run's outputs.
    fn start(&mut self, outputs: &[OutputInfo]) -> Result<(), String> {
        let _ = outputs;
        Ok(())
    }
    /// Called once before the first epoch, right after [`Observer::start`], with the run's typed
    /// outputs (none for the built-in algorithms).
    fn start_rows(&mut self, rows: &[RowOutputInfo]) -> Result<(), String> {
        let _ = rows;
        Ok(())
    }
    /// Live runs: called once the front end has started (in process 0).
    fn live_started(&mut self, started: &LiveStarted) {
        let _ = started;
    }
    /// Called for every completed epoch, in order.
    fn epoch(&mut self, view: &EpochView) -> Result<(), String>;
    /// How many completed epochs this observer has not caught up with yet (a mirror applying
    /// them on its own thread), reported in `--stats` and the summary. `None`: never behind.
    fn lag_epochs(&self) -> Option<u64> {
        None
    }
    /// Called once at the end of a run that completed, with its summary.
    fn finish(&mut self, summary: &RunSummary) -> Result<(), String> {
        let _ = summary;
        Ok(())
    }
}

/// The observers of a run ([`RunOptions::observers`](super::RunOptions::observers)). Cloning
/// shares them: every clone names the same observers.
#[derive(Clone, Default)]
pub struct Observers(Arc<Mutex<Vec<Box<dyn Observer>>>>);

impl std::fmt::Debug for Observers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Observers({})", self.len())
    }
}

impl Observers {
    /// Adds an observer.
    pub fn with(self, observer: impl Observer + 'static) -> Self {
        self.push(Box::new(observer));
        self
    }

    /// Adds an observer to these (and every clone of them).
    pub fn push(&self, observer: Box<dyn Observer>) {
        self.lock().push(observer);
    }

    /// How many observers there are.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn Observer>>> {
        // An observer that panicked poisoned the lock; the list itself is still whole.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn start(&self, outputs: &[OutputInfo], rows: &[RowOutputInfo]) -> Result<(), String> {
        self.lock().iter_mut().try_for_each(|o| o.start(outputs).and_then(|()| o.start_rows(rows)))
    }

    pub(crate) fn live_started(&self, started: &LiveStarted) {
        self.lock().iter_mut().for_each(|o| o.live_started(started))
    }

    pub(crate) fn epoch(&self, view: &EpochView) -> Result<(), String> {
        self.lock().iter_mut().try_for_each(|o| o.epoch(view))
    }

    pub(crate) fn lag_epochs(&self) -> Option<u64> {
        self.lock().iter().filter_map(|o| o.lag_epochs()).max()
    }

    pub(crate) fn finish(&self, summary: &RunSummary) -> Result<(), String> {
        self.lock().iter_mut().try_for_each(|o| o.finish(summary))
    }
}
