//! **Backpressure**: the front end never runs more than `--max-behind` epochs ahead of the
//! dataflow, and it holds back by *not reading*, so the pressure travels all the way to the
//! producers.
//!
//! With `accepted` = the number of epochs handed to the workers (the open epoch's number) and
//! `completed` = [`Progress::completed`]: after closing an epoch (and after the initial batches),
//! while `accepted - completed > max_behind` the sequencer takes no further input. Its queue
//! fills, the input threads block on it and stop reading: stdin / the followed file are not read,
//! TCP sockets are not read, so producers are slowed by TCP flow control. At most
//! `max_behind + 1` epochs are ever outstanding (besides a restart's replay), and at most a few
//! MiB of lines are buffered.
//!
//! The sequencer sleeps on the [`Progress`] condition variable while it holds back, and wakes
//! exactly when the driver completes an epoch or stops, never on a timer.

use std::time::Duration;

use super::Progress;
use crate::types::Time;

/// Blocks while more than `max_behind` of the `accepted` epochs are incomplete. `false` if the
/// driver stopped meanwhile.
pub(super) fn wait_room(progress: &Progress, accepted: Time, max_behind: u64) -> bool {
    let room = |p: &Progress| accepted.saturating_sub(p.completed()) <= max_behind;
    progress.wait_until(None, |p| room(p) || p.is_stopped());
    room(progress)
}

/// Blocks until `epoch` is complete, the driver stopped, or `timeout` passed; whether `epoch` is
/// complete.
pub(super) fn wait_completed(progress: &Progress, epoch: Time, timeout: Duration) -> bool {
    progress.wait_until(Some(timeout), |p| p.completed() > epoch || p.is_stopped());
    progress.completed() > epoch
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    #[test]
    fn room_appears_when_epochs_complete_and_stop_gives_up() {
        let progress = Progress::new();
        assert!(wait_room(&progress, 2, 2));
        let p = progress.clone();
        let waiter = thread::spawn(move || wait_room(&p, 5, 2));
        thread::sleep(Duration::from_millis(20));
        progress.complete(2);
        assert!(waiter.join().unwrap());
        let p = progress.clone();
        let waiter = thread::spawn(move || wait_room(&p, 9, 2));
        progress.stop();
        assert!(!waiter.join().unwrap());
        assert!(!wait_completed(&progress, 7, Duration::from_secs(60)), "a stopped driver ends the wait");
        assert!(wait_completed(&progress, 1, Duration::ZERO));
    }
}
