//! **The sequencer**: the one thread that owns the open epoch and decides, line by line, what
//! goes into which epoch.
//!
//! It receives the transports' [events](super::transport::Event) in arrival order and, for every
//! line,
//!
//! * validates an update (malformed lines, deletions without a copy to consume — see
//!   [`claims`](super::claims) — insert-only and window rules) and adds it to the open epoch, or
//!   rejects it: a TCP producer gets `error N: reason` and loses its pending updates; on stdin /
//!   a followed file the stream stops with a [`LiveFailure`] naming `source:line: problem` (the
//!   open epoch is not applied, the epochs closed before it complete), or, with
//!   `--skip-bad-lines`, the line alone is skipped with a warning;
//! * closes the epoch on `commit`, after `batch` accepted update lines, or when the `epoch_ms`
//!   timer fires (driven by its receive timeout; the timer keeps a fixed schedule and does not
//!   catch up on ticks missed while backpressure held the sequencer). Closing an epoch logs it
//!   (append + fsync, with a state directory), applies it to the [multiset](super::multiset),
//!   sends the full batch to every worker, answers `ok E`, and may take a
//!   [snapshot](super::snapshot_policy) first;
//! * after closing an epoch, waits while the dataflow is too far behind
//!   ([backpressure](super::backpressure)), taking no input meanwhile;
//! * on `end` (or end of stdin) runs the [end handshake](super::handshake).
//!
//! Because only this thread touches the multiset, the open epoch and the state directory, none
//! of them needs a lock, and the epochs every worker receives are identical and in order.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::backpressure::wait_room;
use super::claims::Claims;
use super::error::{LiveFailure, SequencerError};
use super::lines::{Item, Line};
use super::multiset::{alive_key, apply, apply_records, Alive, Multiset, Records};
use super::state::StateDir;
use super::transport::tcp::Connection;
use super::transport::{ConnId, Event, LOCAL};
use super::wake::EpochSender;
use super::{EpochBatch, Progress};
use crate::sources::window::{check_update, EventClock, LateAction, LateOutput, LatePolicy};
use crate::types::{RecordCheck, Time, Update};

/// Counts over the live part of a run (the initial graph and replayed epochs not included).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveSummary {
    /// Epochs closed from live input.
    pub epochs: u64,
    /// Updates in those epochs.
    pub updates: u64,
    /// Update lines that arrived after the stream ended and were ignored.
    pub late: u64,
    /// Lines rejected (malformed, deletion of an absent edge, too long, late with
    /// `--late error`).
    pub rejected_lines: u64,
    /// Windowed streams: late updates dropped (`--late drop`).
    pub late_dropped: u64,
}

/// How processing goes on after an event.
pub(super) enum Flow {
    Continue,
    /// The stream ended (`end`, or end of stdin); the connection that asked, if any.
    End(Option<ConnId>),
    /// The driver stopped or the workers went away.
    Stopped,
    /// A bad line on stdin / a followed file (without `skip_bad_lines`): `source:line: problem`.
    Failed(String),
}

pub(super) struct Sequencer {
    /// The multiset as of the last closed epoch.
    pub(super) edges: Multiset,
    /// The open epoch's number (= number of epochs handed to the workers).
    pub(super) next_epoch: Time,
    /// The open epoch's updates, in arrival order (with their event times in windowed streams).
    pub(super) pending: Vec<(ConnId, Update, Time)>,
    /// Late updates dropped from the open epoch.
    pub(super) pending_late: u64,
    /// Late updates of the open epoch applied at the watermark (`--late apply`).
    pub(super) pending_applied_late: u64,
    /// `--late-output`: every late line and what happened to it.
    pub(super) late_output: Option<LateOutput>,
    /// Windowed streams: the watermark as of the last closed epoch.
    pub(super) clock: Option<EventClock>,
    /// Windowed streams: copies of timed edges that may still be present at the frontier, by
    /// `(time they leave, edge, event time)` (what a snapshot holds besides static edges).
    pub(super) alive: Alive,
    /// What the pending deletions consumed.
    pub(super) claims: Claims,
    /// The run's record input: the records present as of the last closed epoch (copies per
    /// text), the open epoch's accepted records, and their deletions' claims.
    pub(super) records: Records,
    pub(super) pending_records: Vec<(ConnId, String, i8)>,
    pub(super) record_claims: Claims<String>,
    /// The check every record must pass; `None`: the run takes no records.
    pub(super) record_check: Option<RecordCheck>,
    /// The stream was declared insert-only: deletions are rejected.
    pub(super) insert_only: bool,
    /// Stdin / a followed file: skip a rejected line (with a warning) instead of stopping.
    pub(super) skip_bad_lines: bool,
    pub(super) conns: HashMap<ConnId, Connection>,
    pub(super) state: Option<StateDir>,
    pub(super) snapshot_every: Option<u64>,
    pub(super) batch: Option<usize>,
    pub(super) max_behind: u64,
    pub(super) senders: Vec<EpochSender>,
    pub(super) workers_gone: bool,
    pub(super) progress: Arc<Progress>,
    pub(super) summary: LiveSummary,
    /// Names the input in messages about stdin / a followed file.
    pub(super) source_name: String,
}

impl Sequencer {
    pub(super) fn run(mut self, queue: &Receiver<Event>, epoch_ms: Option<u64>) -> Result<LiveSummary, LiveFailure> {
        let period = epoch_ms.map(Duration::from_millis);
        let mut tick = period.map(|p| Instant::now() + p);
        let mut flow = if self.wait_room() { Flow::Continue } else { Flow::Stopped };
        while let Flow::Continue = flow {
            if self.progress.is_stopped() || self.workers_gone {
                flow = Flow::Stopped;
                break;
            }
            if let (Some(period), Some(at)) = (period, tick) {
                let now = Instant::now();
                if now >= at {
                    self.close(None)?;
                    tick = Some(if now >= at + period { now + period } else { at + period });
                    flow = self.after_close();
                    continue;
                }
            }
            let wait = tick.map_or(Duration::from_millis(100), |at| at.saturating_duration_since(Instant::now()));
            flow = match queue.recv_timeout(wait) {
                Ok(event) => self.handle(event)?,
                Err(RecvTimeoutError::Timeout) => Flow::Continue,
                Err(RecvTimeoutError::Disconnected) => Flow::End(None),
            };
        }
        match flow {
            Flow::End(ender) => self.end(ender, queue).map_err(LiveFailure::from),
            Flow::Failed(message) => Err(LiveFailure {
                input: true,
                message: format!(
                    "{message} (the stream stopped there: epochs up to {} are complete, the open epoch was not applied{})",
                    self.next_epoch.saturating_sub(1),
                    if self.state.is_some() { " or logged" } else { "" }
                ),
            }),
            _ if self.workers_gone && !self.progress.is_stopped() => Err(SequencerError::WorkersGone.into()),
            _ => Ok(self.summary.clone()),
        }
    }

    fn handle(&mut self, event: Event) -> Result<Flow, SequencerError> {
        match event {
            Event::Connect { conn, connection } => {
                self.conns.insert(conn, connection);
                self.count_producers();
                self.reply(conn, format!("ready {}\n", self.next_epoch));
                Ok(Flow::Continue)
            }
            Event::Lines { conn, lines } => self.lines(conn, lines),
            Event::Disconnect { conn } => {
                self.discard(conn);
                self.conns.remove(&conn);
                self.count_producers();
                Ok(Flow::Continue)
            }
            Event::Eof => Ok(Flow::End(None)),
            Event::Failed(error) => Err(error.into()),
        }
    }

    fn lines(&mut self, conn: ConnId, lines: Vec<Line>) -> Result<Flow, SequencerError> {
        let mut lines = lines.into_iter();
        while let Some(Line { no, item }) = lines.next() {
            let flow = match item {
                Item::Update(update, time) => match self.offer(conn, no, update, time) {
                    // Dropped late lines count too: an epoch is N consecutive update lines.
                    Ok(()) if self.batch.is_some_and(|n| self.pending_lines() >= n as u64) => {
                        self.close(None)?;
                        self.after_close()
                    }
                    Ok(()) => Flow::Continue,
                    Err(reason) => self.reject(conn, no, &reason),
                },
                Item::Record(text, diff) => match self.offer_record(conn, text, diff) {
                    Ok(()) if self.batch.is_some_and(|n| self.pending_lines() >= n as u64) => {
                        self.close(None)?;
                        self.after_close()
                    }
                    Ok(()) => Flow::Continue,
                    Err(reason) => self.reject(conn, no, &reason),
                },
                Item::Bad(reason) => self.reject(conn, no, &reason),
                Item::Commit => {
                    self.close(Some((conn, no)))?;
                    self.after_close()
                }
                Item::End => Flow::End(Some(conn).filter(|&c| c != LOCAL)),
            };
            if !matches!(flow, Flow::Continue) {
                self.summary.late += lines.filter(|line| matches!(line.item, Item::Update(..))).count() as u64;
                return Ok(flow);
            }
        }
        Ok(Flow::Continue)
    }

    /// Records a late line in `--late-output` (a write failure is reported once, at the epoch's
    /// close, by the flush).
    fn record_late(&mut self, conn: ConnId, no: u64, reason: &str, action: LateAction) {
        let origin =
            if conn == LOCAL { format!("{}:{no}", self.source_name) } else { format!("producer {conn} line {no}") };
        if let Some(out) = self.late_output.as_mut() {
            let _ = out.record(&origin, reason, action);
        }
    }

    /// Validates an update of `conn` and adds it to the open epoch (a late one of a windowed
    /// stream is dropped and counted, or rejected).
    fn offer(&mut self, conn: ConnId, no: u64, update: Update, time: Option<Time>) -> Result<(), String> {
        let time = check_update(self.clock.as_ref().map(EventClock::spec), &update, time)?;
        if let (Some(clock), Some(t)) = (&self.clock, time) {
            if clock.is_late(t) {
                let action = clock.spec().late_action(t, clock.frontier());
                if clock.spec().late == LatePolicy::Error {
                    return Err(clock.late_reason(t));
                }
                let reason = clock.late_reason(t);
                self.record_late(conn, no, &reason, action);
                if !action.is_applied() {
                    self.pending_late += 1;
                    return Ok(());
                }
                self.pending_applied_late += 1;
            }
        }
        if self.insert_only && update.diff < 0 {
            return Err(format!("deletion of edge {} {} on a stream declared --insert-only", update.src, update.dst));
        }
        self.claims.admit(conn, &update, &self.edges)?;
        self.pending.push((conn, update, time.unwrap_or(0)));
        Ok(())
    }

    /// Validates a record of `conn` (the run's record check, and a deletion must find a copy)
    /// and adds it to the open epoch.
    fn offer_record(&mut self, conn: ConnId, text: String, diff: i8) -> Result<(), String> {
        let Some(check) = &self.record_check else {
            return Err("this run takes no records (no dataflow of it has a record input)".into());
        };
        if self.clock.is_some() {
            return Err("records are not supported in windowed streams".into());
        }
        check.check(&text).map_err(|reason| format!("bad record {text:?}: {reason}"))?;
        let records = &self.records;
        if !self.record_claims.claim(conn, &text, diff > 0, || records.get(&text).copied().unwrap_or(0)) {
            return Err(format!("cannot delete record {text:?}: no copy of it is present"));
        }
        self.pending_records.push((conn, text, diff));
        Ok(())
    }

    /// The open epoch's lines that count towards `--batch`: accepted updates and records, and
    /// dropped late updates.
    fn pending_lines(&self) -> u64 {
        (self.pending.len() + self.pending_records.len()) as u64 + self.pending_late
    }

    /// Drops `conn`'s pending updates and records (and their claims).
    fn discard(&mut self, conn: ConnId) {
        if self.claims.release(conn) {
            self.pending.retain(|&(c, _, _)| c != conn);
        }
        if self.record_claims.release(conn) {
            self.pending_records.retain(|(c, _, _)| *c != conn);
        }
    }

    fn reject(&mut self, conn: ConnId, no: u64, reason: &str) -> Flow {
        self.summary.rejected_lines += 1;
        if conn == LOCAL {
            if !self.skip_bad_lines {
                return Flow::Failed(format!("{}:{no}: {reason}", self.source_name));
            }
            eprintln!("ripples: warning: {} line {no}: {reason} (line skipped)", self.source_name);
        } else {
            self.discard(conn);
            self.reply(conn, format!("error {no}: {reason}\n"));
        }
        Flow::Continue
    }

    /// Queues a reply; a connection whose reply queue is full is dropped.
    pub(super) fn reply(&mut self, conn: ConnId, message: String) {
        let Some(connection) = self.conns.get(&conn) else {
            return;
        };
        if !connection.try_reply(message) {
            eprintln!("ripples: warning: producer {conn} does not read its replies; disconnecting it");
            connection.disconnect();
            self.conns.remove(&conn);
            self.count_producers();
        }
    }

    fn count_producers(&self) {
        self.progress.counters.producers.store(self.conns.len() as u64, std::sync::atomic::Ordering::Relaxed);
    }

    /// Closes the open epoch: log (fsync), apply, hand to every worker, answer `ok`, snapshot.
    /// `committer`: the producer whose `commit` (its line number) closes it. If the epoch cannot
    /// be made durable (a full disk, an I/O error), nothing of it is applied or acknowledged: the
    /// committer is answered `error N: cannot make epoch E durable: ...` and the front end stops.
    pub(super) fn close(&mut self, committer: Option<(ConnId, u64)>) -> Result<(), SequencerError> {
        let epoch = self.next_epoch;
        // A snapshot describes the multiset as of the previous epoch, and is only taken once the
        // dataflow has completed (and the driver has written the changes of) every epoch up to
        // it: a restart resumes from the snapshot and must be able to reproduce the change log of
        // every later epoch individually.
        if epoch > 0 {
            self.snapshot(epoch - 1)?;
        }
        let (updates, times): (Vec<Update>, Vec<Time>) = self.pending.drain(..).map(|(_, u, t)| (u, t)).unzip();
        self.claims.clear();
        let records: Vec<(String, i8)> = self.pending_records.drain(..).map(|(_, r, d)| (r, d)).collect();
        self.record_claims.clear();
        let late = std::mem::take(&mut self.pending_late);
        self.summary.late_dropped += late;
        let late = late + std::mem::take(&mut self.pending_applied_late);
        if let Some(out) = self.late_output.as_mut() {
            out.flush().map_err(SequencerError::LateOutput)?;
        }
        let batch = match &mut self.clock {
            Some(clock) => {
                clock.close_epoch(times.iter().copied());
                EpochBatch { epoch, updates, times: times.into_iter().map(Some).collect(), late, records }
            }
            None => EpochBatch { epoch, updates, records, ..Default::default() },
        };
        if let Some(state) = self.state.as_mut() {
            let appended = state.append(&batch);
            self.progress.counters.log(state.appended());
            if let Err(source) = appended {
                if let Some((conn, no)) = committer {
                    self.reply(conn, format!("error {no}: cannot make epoch {epoch} durable: {source}\n"));
                }
                return Err(SequencerError::Log { epoch, source });
            }
        }
        match &self.clock {
            Some(clock) => {
                for (u, t) in batch.updates.iter().zip(&batch.times) {
                    let t = t.expect("a windowed epoch's updates all have event times");
                    *self.alive.entry(alive_key(clock.spec(), u.edge(), t)).or_insert(0) += 1;
                }
            }
            None => apply(&mut self.edges, &batch.updates),
        }
        apply_records(&mut self.records, &batch.records);
        self.next_epoch += 1;
        self.summary.epochs += 1;
        self.summary.updates += batch.updates.len() as u64;
        if let Some((last, others)) = self.senders.split_last() {
            for sender in others {
                self.workers_gone |= sender.send(batch.clone()).is_err();
            }
            self.workers_gone |= last.send(batch).is_err();
        }
        if let Some((conn, _)) = committer {
            self.reply(conn, format!("ok {epoch}\n"));
        }
        Ok(())
    }

    fn after_close(&self) -> Flow {
        if self.wait_room() && !self.workers_gone {
            Flow::Continue
        } else {
            Flow::Stopped
        }
    }

    /// Backpressure: blocks while more than `max_behind` handed-over epochs are incomplete.
    /// `false` if the driver stopped meanwhile.
    fn wait_room(&self) -> bool {
        self.progress.closed_through(self.next_epoch);
        wait_room(&self.progress, self.next_epoch, self.max_behind)
    }
}
