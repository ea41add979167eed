//! **Transports**: the input threads that carry update lines from outside into the sequencer.
//!
//! There are four: [`stdin`], a [`follow`]ed file, [`tcp`] producers, and the [`embedded`]
//! program the job runs in. Each splits the bytes
//! it reads into classified [lines](super::lines) and sends them, as one [`Event::Lines`] per read
//! of at most [`READ_CHUNK`] bytes, over a **bounded** queue ([`EVENT_QUEUE`] messages) to the
//! sequencer. The bound is what makes [backpressure](super::backpressure) work: when the
//! sequencer holds back the queue fills, the input thread blocks in `send`, and it stops reading.
//!
//! Every line travels with the [`ConnId`] of the connection it came from and its line number
//! there: stdin and a followed file are the single producer [`LOCAL`], TCP connections are
//! numbered from 1. A transport that can no longer read sends [`Event::Failed`]; stdin's end is
//! [`Event::Eof`] (the same as `end`). The transports stop once the sequencer is gone (a failed
//! send) or, for the polling ones, once the shared `shutdown` flag is set.

pub mod embedded;
pub mod follow;
mod open;
pub mod stdin;
pub mod tcp;
pub mod tls;

pub(super) use open::{open, Opened};

use std::io::{self, Read};
use std::sync::mpsc::SyncSender;
use std::thread;

use super::error::{StartError, TransportError};
use super::lines::{Line, LineSplitter};

/// Bytes read from an input at a time; the lines of one read travel as one queue message.
pub(super) const READ_CHUNK: usize = 16 * 1024;
/// Capacity (in messages) of the queue from the input threads to the sequencer.
pub(super) const EVENT_QUEUE: usize = 16;

/// A connection (or the single local source).
pub(super) type ConnId = u64;
/// Stdin and a followed file are producer 0; TCP connections are numbered from 1.
pub(super) const LOCAL: ConnId = 0;

/// What the input threads tell the sequencer.
pub(super) enum Event {
    /// A TCP producer connected; replies to it go through `connection`.
    Connect {
        conn: ConnId,
        connection: tcp::Connection,
    },
    Lines {
        conn: ConnId,
        lines: Vec<Line>,
    },
    Disconnect {
        conn: ConnId,
    },
    /// Stdin ended: same as `end`.
    Eof,
    /// The input cannot be read any more.
    Failed(TransportError),
}

pub(super) fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> Result<(), StartError> {
    thread::Builder::new()
        .name(name.to_string())
        .spawn(body)
        .map_err(|source| StartError::Thread { name: name.to_string(), source })?;
    Ok(())
}

/// Reads `input` to its end, sending its lines. `Ok(false)` when the sequencer is gone.
pub(super) fn pump(input: impl Read, conn: ConnId, events: &SyncSender<Event>) -> io::Result<bool> {
    pump_from(input, conn, events, 0)
}

/// Like [`pump`], with `skipped` lines already read from the input (their numbers are taken).
pub(super) fn pump_from(
    mut input: impl Read,
    conn: ConnId,
    events: &SyncSender<Event>,
    skipped: u64,
) -> io::Result<bool> {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut splitter = LineSplitter::starting_after(skipped);
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut lines = Vec::new();
        splitter.feed(&buf[..n], &mut lines);
        if !lines.is_empty() && events.send(Event::Lines { conn, lines }).is_err() {
            return Ok(false);
        }
    }
    let mut lines = Vec::new();
    splitter.finish(&mut lines);
    Ok(lines.is_empty() || events.send(Event::Lines { conn, lines }).is_ok())
}
