//! **Epoch sources**: where a worker's epochs come from.
//!
//! The driver's feed loop knows one thing about its input: an [`EpochSource`] hands it the next
//! epoch — this worker's share of the epoch's changes, how many updates the epoch holds over all
//! workers, and, in a windowed run, the frontier the watermark allows after it — until there is
//! none. Files, streams in memory and live input are implementations of it:
//!
//! * [`FileEpochs`]: the share [`super::input::load`] cut out of the edge, vertex and update files
//!   (or of a [`super::MemoryStream`]); epoch 0 is the initial graph, then one epoch per batch.
//! * [`LiveEpochs`]: the epochs the live front end ([`crate::live`]) closes, received over a
//!   channel (every local worker receives every epoch and feeds its slice); the worker keeps
//!   stepping the dataflow while it waits. After a restart, the epochs whose changes are already
//!   in the change log come first, marked [`Epoch::replay`].
//! * [`NoEpochs`]: the workers of a process that does not read the input (live input is read by
//!   process 0; the others only take part in the computation).
//!
//! What an epoch's `until` means:
//!
//! The test `the_module_example` below shows it at work.

use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;

use timely::worker::Worker;

use super::input::{InputFacts, WorkerShare};
use super::RunError;
use crate::live::{EpochBatch, Progress};
use crate::sources::window::{EventClock, WindowSpec};
use crate::types::{Diff, Edge, Time};

/// A windowed epoch's outcome: results of times below `frontier` are final.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventEpoch {
    /// The output frontier after this epoch.
    pub frontier: Time,
    /// The watermark after this epoch (updates older than it are late).
    pub watermark: Time,
    /// Late updates dropped from this epoch.
    pub late: u64,
}

/// One epoch, as one worker feeds it.
#[derive(Clone, Debug, Default)]
pub struct Epoch {
    /// The epoch number (0: the initial graph).
    pub number: Time,
    /// Updates in the epoch over all workers (epoch 0: edges of the initial graph).
    pub updates: u64,
    /// This worker's share of the initial graph from files: one insertion per copy (kept as
    /// edges, not changes, so that a large graph is not copied before it is fed).
    pub inserts: Vec<Edge>,
    /// This worker's untimed changes: static edges, and every change of a stream without
    /// windows. They enter at the input's current time, like `inserts`.
    pub changes: Vec<(Edge, Diff)>,
    /// This worker's timed insertions (windowed streams): each enters its window by event time
    /// and leaves it by itself.
    pub timed: Vec<(Edge, Time)>,
    /// Windowed runs: the frontier, watermark and late count after this epoch.
    pub event: Option<EventEpoch>,
    /// The records of the run's record input this worker feeds (the first worker of process 0
    /// feeds them all), entering at the input's current time like `changes`.
    pub records: Vec<(String, Diff)>,
    /// Already in the change log (a restart's replay): fed without waiting for it, its output
    /// rebuilds the state and is not written again.
    pub replay: bool,
}

impl Epoch {
    /// The input frontier this epoch reaches: the output frontier must pass it before the epoch
    /// is complete.
    pub fn until(&self) -> Time {
        match self.event {
            Some(e) => e.frontier,
            None => self.number + 1,
        }
    }
}

/// Where a worker's epochs come from.
pub trait EpochSource {
    /// The next epoch, or `None` when the stream has ended. May step `worker` while it waits.
    fn next(&mut self, worker: &mut Worker) -> Result<Option<Epoch>, RunError>;
    /// Windowed runs: the frontier that closes every window once the stream has ended.
    fn final_frontier(&self) -> Option<Time> {
        None
    }
    /// The writing worker has completed epoch `epoch` (its output is written).
    fn completed(&self, _epoch: Time) {}
    /// Epochs expected in all, for a progress bar (0 when unknown).
    fn expected(&self) -> u64 {
        0
    }
    /// How many epochs a worker that does not write may feed beyond the oldest one it has not
    /// seen complete (0: it waits for every epoch before it feeds the next).
    fn run_ahead(&self) -> usize {
        0
    }
    /// `Some(t)`: this worker feeds nothing before `t`, the stream's last input frontier (no
    /// edge, no update), so its input may advance to `t` at once; the dataflow's progress then
    /// never waits for it (in a cluster, for a message from its process). `None` (the default):
    /// it may feed something.
    fn idle_until(&self) -> Option<Time> {
        None
    }
}

/// [`EpochSource::run_ahead`] of files and streams in memory: at least enough epochs that a
/// worker's share of the next ones is at the writer while the writer computes one (a network
/// round trip is a fraction of a millisecond), few enough that the epochs in flight stay small
/// ...
pub const RUN_AHEAD: usize = 4;

/// ... and with small epochs up to this many, so that the epochs in flight hold about
/// [`RUN_AHEAD_UPDATES`] updates: a cluster whose dataflow has round trips feeds that many
/// epochs back to back, and each such group costs one round of messages between the processes
/// whatever its size (two processes × 1 worker, R-MAT 14 inserted in epochs of 1,000: 15-18 M
/// updates/s with 8 against 10-14 M with 4, p50 0.25 against 0.2 ms; a temporal graph's
/// insertions 20-32 M against 15-16 M; with epochs of 10,000, 8 raised p50 from 0.8 to 2.3 ms
/// for 8% more updates/s).
pub const MAX_RUN_AHEAD: usize = 8;

/// The updates the epochs in flight should hold at most (see [`MAX_RUN_AHEAD`]).
pub const RUN_AHEAD_UPDATES: u64 = 8192;

/// The run-ahead for epochs of `updates` updates on average: [`RUN_AHEAD`], or more for small
/// epochs, up to [`MAX_RUN_AHEAD`], holding about [`RUN_AHEAD_UPDATES`].
pub fn run_ahead_for(updates: u64) -> usize {
    (RUN_AHEAD_UPDATES / updates.max(1)).clamp(RUN_AHEAD as u64, MAX_RUN_AHEAD as u64) as usize
}

/// A process that does not read the input: nothing to feed.
pub struct NoEpochs;

impl EpochSource for NoEpochs {
    fn next(&mut self, _worker: &mut Worker) -> Result<Option<Epoch>, RunError> {
        Ok(None)
    }
}

/// The epochs of files or of a stream in memory, as loaded and validated by every worker.
pub struct FileEpochs {
    share: WorkerShare,
    facts: InputFacts,
    next: Time,
    /// This worker feeds nothing ([`WorkerShare::feeds_nothing`]).
    idle: bool,
}

impl FileEpochs {
    /// The epochs of `share`, this worker's part of the loaded input; `facts` are what every
    /// worker knows about the whole input (epoch sizes).
    pub fn new(share: WorkerShare, facts: InputFacts) -> Self {
        let idle = share.feeds_nothing();
        FileEpochs { share, facts, next: 0, idle }
    }
}

impl EpochSource for FileEpochs {
    fn next(&mut self, _worker: &mut Worker) -> Result<Option<Epoch>, RunError> {
        let number = self.next;
        if number > self.share.epochs() as Time {
            return Ok(None);
        }
        self.next += 1;
        let window = self.facts.window.as_ref();
        if number == 0 {
            let inserts = std::mem::take(&mut self.share.initial);
            let event = window.map(|_| EventEpoch::default());
            return Ok(Some(Epoch { number, updates: self.facts.initial_edges, inserts, event, ..Epoch::default() }));
        }
        let i = number as usize - 1;
        let updates = self.facts.epoch_updates[i];
        Ok(Some(match window {
            Some(wf) => Epoch {
                number,
                updates,
                timed: self.share.timed_epoch(number as usize).collect(),
                event: Some(EventEpoch { frontier: wf.frontiers[i], watermark: wf.watermarks[i], late: wf.late[i] }),
                ..Epoch::default()
            },
            None => Epoch { number, updates, changes: self.share.epoch(number as usize).collect(), ..Epoch::default() },
        }))
    }

    fn final_frontier(&self) -> Option<Time> {
        self.facts.window.as_ref().map(|wf| wf.final_frontier)
    }

    fn expected(&self) -> u64 {
        1 + self.share.epochs() as u64
    }

    fn idle_until(&self) -> Option<Time> {
        self.idle.then(|| match &self.facts.window {
            Some(wf) => wf.final_frontier,
            None => 1 + self.share.epochs() as Time,
        })
    }

    fn run_ahead(&self) -> usize {
        let epochs = self.facts.epoch_updates.len().max(1) as u64;
        run_ahead_for(self.facts.epoch_updates.iter().sum::<u64>() / epochs)
    }
}

/// The epochs the live front end closes (process 0).
pub struct LiveEpochs {
    receiver: Receiver<EpochBatch>,
    /// This worker's index among the process's workers, and their number.
    local: usize,
    locals: usize,
    /// Windowed runs: every worker follows the watermark itself (it sees every epoch's times).
    clock: Option<EventClock>,
    /// Epochs up to here are already in the change log.
    written_through: Option<Time>,
    insert_only: bool,
    last: Option<Time>,
    progress: Arc<Progress>,
}

impl LiveEpochs {
    /// Epochs from the front end's `receiver`, of which this worker (`local` of `locals` in the
    /// process) feeds its slice; epochs up to `written_through` are replayed without being
    /// written again, and completed epochs are reported to `progress`.
    pub fn new(
        receiver: Receiver<EpochBatch>,
        (local, locals): (usize, usize),
        window: Option<WindowSpec>,
        written_through: Option<Time>,
        insert_only: bool,
        progress: Arc<Progress>,
    ) -> Self {
        let clock = window.map(EventClock::new);
        LiveEpochs { receiver, local, locals, clock, written_through, insert_only, last: None, progress }
    }

    /// Receives the next batch, stepping the dataflow while none is there, and parking while
    /// it has nothing to do: a send to this worker unparks it (see [`crate::live::Waker`]), as
    /// do timely's channels.
    fn receive(&self, worker: &mut Worker) -> Option<EpochBatch> {
        loop {
            match self.receiver.try_recv() {
                Ok(b) => return Some(b),
                Err(TryRecvError::Empty) => super::cluster::step_or_park(worker),
                Err(TryRecvError::Disconnected) => return None,
            };
        }
    }
}

impl EpochSource for LiveEpochs {
    fn next(&mut self, worker: &mut Worker) -> Result<Option<Epoch>, RunError> {
        let Some(batch) = self.receive(worker) else { return Ok(None) };
        if let Some(last) = self.last.filter(|&last| batch.epoch <= last) {
            return Err(RunError::Other(format!("live input sent epoch {} after epoch {}", batch.epoch, last)));
        }
        if self.insert_only && batch.updates.iter().any(|u| u.diff < 0) {
            return Err(RunError::Input(format!(
                "epoch {} deletes an edge, but the stream was declared --insert-only (a state directory written without --insert-only?)",
                batch.epoch
            )));
        }
        self.last = Some(batch.epoch);
        // The watermark after this epoch.
        if let Some(c) = self.clock.as_mut() {
            c.close_epoch(batch.times.iter().flatten().copied());
        }
        let n = batch.updates.len();
        let mine = n * self.local / self.locals..n * (self.local + 1) / self.locals;
        let mut epoch = Epoch {
            number: batch.epoch,
            updates: n as u64,
            event: self.clock.as_ref().map(|c| EventEpoch {
                frontier: c.frontier(),
                watermark: c.watermark(),
                late: batch.late,
            }),
            replay: self.written_through.is_some_and(|w| batch.epoch <= w),
            ..Epoch::default()
        };
        if self.local == 0 {
            epoch.records = batch.records.into_iter().map(|(text, d)| (text, d as Diff)).collect();
        }
        for (i, u) in batch.updates[mine.clone()].iter().enumerate() {
            match (&self.clock, batch.times.get(mine.start + i).copied().flatten()) {
                (Some(_), Some(t)) => epoch.timed.push((u.edge(), t)),
                // Static edges (and every edge of an unwindowed stream).
                _ => epoch.changes.push((u.edge(), u.diff as Diff)),
            }
        }
        Ok(Some(epoch))
    }

    fn final_frontier(&self) -> Option<Time> {
        self.clock.as_ref().map(EventClock::final_frontier)
    }

    fn completed(&self, epoch: Time) {
        self.progress.complete(epoch);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_module_example() {
        use crate::driver::epochs::{Epoch, EventEpoch};
        // An epoch of a plain stream is complete when the output frontier passes its number ...
        let plain = Epoch { number: 4, ..Epoch::default() };
        assert_eq!(plain.until(), 5);
        // ... a windowed epoch when it passes the frontier its watermark allows.
        let timed =
            Epoch { number: 4, event: Some(EventEpoch { frontier: 90, watermark: 95, late: 0 }), ..Epoch::default() };
        assert_eq!(timed.until(), 90);
    }
}

#[cfg(test)]
mod run_ahead_tests {
    use super::run_ahead_for;

    #[test]
    fn small_epochs_run_further_ahead() {
        assert_eq!(run_ahead_for(1_000), 8);
        assert_eq!(run_ahead_for(1_500), 5);
        assert_eq!(run_ahead_for(10_000), 4);
        assert_eq!(run_ahead_for(1), 8);
        assert_eq!(run_ahead_for(0), 8);
    }
}
