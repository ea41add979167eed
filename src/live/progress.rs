//! **Progress**: what the driver tells the front end about the dataflow, and how the front end
//! waits for it.
//!
//! The driver reports completed epochs ([`Progress::complete`]), that it stopped early
//! ([`Progress::stop`]), or that it wrote its final outputs ([`Progress::finish`]). The front end
//! reads these counters to apply backpressure, to time snapshots and to answer `end`. Instead of
//! polling them it *waits* ([`Progress::wait_until`]): every change takes a mutex and notifies a
//! condition variable, and a waiter checks its condition under that mutex, so a change can never
//! slip between the check and the wait.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::types::Time;

/// Shared progress counters between the driver and the front end.
#[derive(Debug, Default)]
pub struct Progress {
    /// Epochs `0..completed` are complete in the dataflow (their output is written).
    completed: AtomicU64,
    /// Epochs `0..closed` were closed by the front end and handed to the dataflow.
    closed: AtomicU64,
    /// Set when the driver stopped (error or end); the front end stops waiting.
    stopped: AtomicBool,
    /// Set by a driver that will call [`Progress::finish`] after writing its final outputs.
    attached: AtomicBool,
    /// Set by the driver once every epoch is complete and `--output` is written.
    finished: AtomicBool,
    /// Taken around every notification and every check of a waiter.
    lock: Mutex<()>,
    /// Notified after every change of the counters above.
    changed: Condvar,
    /// What the front end did (producers, log, snapshots), for monitoring.
    pub counters: LiveCounters,
}

/// The live front end's figures that monitoring reads (`--http`): updated by the front end with
/// relaxed atomics, never waited on.
#[derive(Debug, Default)]
pub struct LiveCounters {
    /// TCP producers connected now.
    pub producers: AtomicU64,
    /// Bytes appended to the write-ahead log.
    pub wal_bytes: AtomicU64,
    /// Epochs appended to the log (each one fsync).
    pub wal_appends: AtomicU64,
    /// Nanoseconds spent appending to the log (write and fsync).
    pub wal_nanos: AtomicU64,
    /// Snapshots written.
    pub snapshots: AtomicU64,
    /// The last snapshot's duration in nanoseconds.
    pub last_snapshot_nanos: AtomicU64,
    /// The last snapshot's edge entries.
    pub last_snapshot_entries: AtomicU64,
    /// When the last snapshot completed, milliseconds since the Unix epoch.
    pub last_snapshot_unix_ms: AtomicU64,
}

impl LiveCounters {
    /// The state directory's log figures ([`StateDir::appended`](super::StateDir::appended)).
    pub(super) fn log(&self, (bytes, appends, time): (u64, u64, Duration)) {
        self.wal_bytes.store(bytes, Ordering::Relaxed);
        self.wal_appends.store(appends, Ordering::Relaxed);
        self.wal_nanos.store(time.as_nanos() as u64, Ordering::Relaxed);
    }
    /// Reads `counter`.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

impl Progress {
    /// Fresh counters: nothing complete, not stopped, no driver attached.
    pub fn new() -> Arc<Self> {
        Arc::new(Progress::default())
    }
    /// Marks every epoch `<= epoch` complete.
    pub fn complete(&self, epoch: Time) {
        self.completed.fetch_max(epoch + 1, Ordering::SeqCst);
        self.notify();
    }
    /// Number of epochs completed (epochs `0..n`).
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::SeqCst)
    }
    /// The front end has handed epochs `0..next` to the dataflow.
    pub fn closed_through(&self, next: Time) {
        self.closed.fetch_max(next, Ordering::SeqCst);
    }
    /// Epochs closed by the front end after `epoch` (those not complete once `epoch` is).
    pub fn closed_after(&self, epoch: Time) -> u64 {
        self.closed.load(Ordering::SeqCst).saturating_sub(epoch + 1)
    }
    /// The driver stopped early (an error, or the time limit): waiters give up waiting.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.notify();
    }
    /// Whether [`Progress::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }
    /// A driver announces that `end` must also wait for [`Progress::finish`].
    pub fn attach(&self) {
        self.attached.store(true, Ordering::SeqCst);
        self.notify();
    }
    /// The driver has completed every epoch and written its final outputs.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::SeqCst);
        self.notify();
    }
    /// Whether `end` may answer `bye`: epochs `0..next_epoch` are complete (and, with an attached
    /// driver, its outputs are written), or the driver stopped.
    pub fn may_end(&self, next_epoch: u64) -> bool {
        self.is_stopped()
            || (self.completed() >= next_epoch
                && (!self.attached.load(Ordering::SeqCst) || self.finished.load(Ordering::SeqCst)))
    }

    /// Blocks until `done(self)` holds, or until `timeout` (if any) has passed; returns whether it
    /// holds. `done` is re-checked after every change reported to this `Progress`.
    pub fn wait_until(&self, timeout: Option<Duration>, done: impl Fn(&Progress) -> bool) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut guard = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        loop {
            if done(self) {
                return true;
            }
            guard = match deadline {
                None => self.changed.wait(guard).unwrap_or_else(|poisoned| poisoned.into_inner()),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return false;
                    }
                    self.changed.wait_timeout(guard, left).unwrap_or_else(|poisoned| poisoned.into_inner()).0
                }
            };
        }
    }

    fn notify(&self) {
        // Taking the lock orders this change before any waiter's next check.
        drop(self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    #[test]
    fn waiters_wake_on_completion_and_on_stop() {
        let progress = Progress::new();
        let p = progress.clone();
        let waiter = thread::spawn(move || p.wait_until(None, |p| p.completed() >= 3));
        progress.complete(0);
        progress.complete(2);
        assert!(waiter.join().unwrap());

        let p = progress.clone();
        let waiter = thread::spawn(move || p.wait_until(None, |p| p.completed() >= 10 || p.is_stopped()));
        progress.stop();
        assert!(waiter.join().unwrap());
        assert!(!progress.wait_until(Some(Duration::from_millis(10)), |p| p.completed() >= 10));
    }
}
