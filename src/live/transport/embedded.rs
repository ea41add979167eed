//! **Embedded**: the producer is the program the job runs in (see `ripples::job`). It hands
//! typed [`Submission`]s over a bounded channel instead of bytes; this thread numbers them like
//! lines and passes them to the sequencer, so they meet exactly the rules every other input
//! meets (validation, windows, durability, backpressure). Like stdin there is nobody to answer:
//! a rejected update stops the stream with its message. The channel's end means `end`.

use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use super::{Event, LOCAL};
use crate::live::lines::{Item, Line};
use crate::types::{Time, Update};

/// What an embedding program submits.
#[derive(Clone, Debug, PartialEq)]
pub enum Submission {
    /// An update, with its event time in windowed streams.
    Update(Update, Option<Time>),
    /// A record of the run's record input (its text, as on a `record + TEXT` line) and its
    /// diff (+1 / -1).
    Record(String, i8),
    /// Close the current epoch.
    Commit,
}

/// The sending side: submissions travel in vectors (one channel message each).
pub type EmbeddedSender = SyncSender<Vec<Submission>>;

/// The receiving side, held by [`LiveInput::Embedded`](crate::live::LiveInput::Embedded) until the
/// front end starts. Clones share it; it can start one front end.
#[derive(Clone)]
pub struct EmbeddedInput(Arc<Mutex<Option<Receiver<Vec<Submission>>>>>);

impl EmbeddedInput {
    /// A new input and its sender; the channel holds at most `bound` messages.
    pub fn channel(bound: usize) -> (EmbeddedSender, EmbeddedInput) {
        let (tx, rx) = std::sync::mpsc::sync_channel(bound);
        (tx, EmbeddedInput(Arc::new(Mutex::new(Some(rx)))))
    }

    pub(super) fn take(&self) -> Option<Receiver<Vec<Submission>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl std::fmt::Debug for EmbeddedInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EmbeddedInput")
    }
}

impl PartialEq for EmbeddedInput {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for EmbeddedInput {}

/// The embedded input thread's body.
pub(super) fn read(input: Receiver<Vec<Submission>>, events: SyncSender<Event>) {
    let mut no = 0u64;
    for batch in input {
        let lines = batch
            .into_iter()
            .map(|s| {
                no += 1;
                let item = match s {
                    Submission::Update(u, t) => Item::Update(u, t),
                    Submission::Record(text, diff) => Item::Record(text, diff),
                    Submission::Commit => Item::Commit,
                };
                Line { no, item }
            })
            .collect();
        if events.send(Event::Lines { conn: LOCAL, lines }).is_err() {
            return;
        }
    }
    let _ = events.send(Event::Eof);
}
