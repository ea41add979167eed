//! **The end handshake**: how a stream finishes, so that `bye` means "everything you sent is
//! processed and written".
//!
//! On `end` (from a TCP producer, a followed file, or the end of stdin) the sequencer
//!
//! 1. closes the pending epoch, but only if it holds updates;
//! 2. drops the worker channels, so the driver sees the end of input, finishes, and writes its
//!    output;
//! 3. waits until the driver has completed every epoch sent — and, for a driver that
//!    [attached](super::Progress::attach), written its final outputs — or has stopped
//!    ([`Progress::may_end`](super::Progress::may_end)), woken by the driver's reports rather than
//!    polling;
//! 4. counts update lines that arrived after `end` as late (they are ignored);
//! 5. answers `bye\n` to the producer that sent `end`, and waits (at most [`BYE_FLUSH`]) until
//!    that reply is actually written, so the process cannot exit before `bye` is delivered.
//!
//! The sequencer then returns, the shutdown flag stops the polling transports, and other TCP
//! connections are closed.

use std::sync::mpsc::Receiver;
use std::time::Duration;

use super::error::SequencerError;
use super::lines::Item;
use super::sequencer::{LiveSummary, Sequencer};
use super::transport::{ConnId, Event};

/// The longest `end` waits for `bye` to be written to its producer.
const BYE_FLUSH: Duration = Duration::from_secs(5);

impl Sequencer {
    /// `end`: close the pending epoch if it has updates, let the driver finish, answer `bye`.
    pub(super) fn end(mut self, ender: Option<ConnId>, queue: &Receiver<Event>) -> Result<LiveSummary, SequencerError> {
        if !self.pending.is_empty() {
            self.close(None)?;
        }
        self.senders.clear();
        if !self.workers_gone {
            let next_epoch = self.next_epoch;
            self.progress.wait_until(None, |p| p.may_end(next_epoch));
        }
        while let Ok(event) = queue.try_recv() {
            if let Event::Lines { lines, .. } = event {
                self.summary.late += lines.iter().filter(|line| matches!(line.item, Item::Update(..))).count() as u64;
            }
        }
        if let Some(conn) = ender {
            self.reply(conn, "bye\n".to_string());
            // Deliver `bye` before the process can exit: close the reply queue and wait (a
            // bounded time) until the connection's writer has written everything queued.
            if let Some(connection) = self.conns.remove(&conn) {
                connection.close_and_flush(BYE_FLUSH);
            }
        }
        Ok(self.summary.clone())
    }
}
