//! The live **front end**: reads update lines from stdin, TCP producers or a growing file,
//! validates them against the current edge multiset, closes epochs, makes them durable, answers
//! producers, applies backpressure, and hands every epoch to every local worker.
//!
//! # Line grammar (all inputs)
//!
//! * update lines exactly as in update files: `+ src dst [w]`, `- src dst [w]`, or a bare
//!   `src dst [w]` (insert); blank lines and `#` / `%` comments are skipped (but counted for line
//!   numbers);
//! * `commit` closes the current epoch;
//! * `end` finishes the stream.
//!
//! An epoch closes on `commit`; also after `batch` accepted update lines (if set), and every
//! `epoch_ms` of wall clock (if set; an idle stream then produces empty epochs, on a fixed
//! schedule that does not catch up on ticks missed while backpressure held the sequencer).
//! `end` closes the pending epoch only if it holds updates. On stdin, end of input means `end`.
//! A followed file is polled every 20 ms; only complete (`\n`-terminated) lines count, and it
//! ends only with an `end` line. Lines longer than 1 MiB are rejected, never buffered.
//!
//! A line is rejected when it is malformed (the reason is [`LineError`]'s message) or when it
//! deletes an edge copy that is not present. A deletion may consume a copy present in the current
//! multiset (and not already claimed by another pending deletion of this epoch), or a copy the
//! *same producer* inserted earlier in this epoch. (Copies inserted by another producer in the
//! same, still open epoch do not count: that producer's pending updates may still be discarded,
//! and what is left must stay valid.) With one producer this is exactly "the multiset plus this
//! epoch's earlier updates".
//!
//! # TCP protocol
//!
//! The server binds the address given and, per connection:
//!
//! * on connect sends `ready E\n`, `E` being the epoch it will accept next (the one now being
//!   filled): `1` on a fresh start, `L + 1` after a restart whose last durable epoch is `L`;
//! * for each `commit` line answers `ok E\n`, where `E` is the epoch that `commit` closed. `ok` is
//!   written **after** the epoch was appended to the state directory's log and fsynced (with
//!   `--state-dir`) **and** handed to every worker's channel; without a state directory, right
//!   after the hand-over ("accepted"). It does not wait for the dataflow to finish the epoch;
//! * for a rejected line answers `error N: reason\n` (`N` = the line's 1-based number within the
//!   connection, counting every line) and discards all of that connection's updates still
//!   pending in the open epoch; the connection stays usable;
//! * on `end`: closes the pending epoch if it holds updates, drops the worker channels (the driver
//!   then finishes and writes its output), waits until the driver has completed every sent epoch
//!   (or stopped), answers `bye\n` and shuts the whole front end down (other connections are
//!   closed).
//!
//! Several producers may be connected at once. There is one open epoch: any producer's `commit`
//! (or the batch / timer rule) closes it for everyone, with the updates of all producers in
//! arrival order. A producer that disconnects without `commit` loses its pending updates (but
//! updates already swept into an epoch by `batch` / `epoch_ms` stay). Replies are queued per
//! connection (1024 at most); a producer that never reads them is disconnected.
//!
//! On stdin and a followed file there is nobody to answer: a rejected line stops the stream
//! ([`LiveFailure`] naming `source:line: problem`; the open epoch is not applied, the epochs
//! closed before it complete), or, with [`LiveConfig::skip_bad_lines`], is skipped alone (a
//! warning with its line number goes to stderr) and the rest of the epoch is kept.
//! `ready E` is answered by the sequencer, so it is delayed while backpressure holds.
//!
//! Producers resume after a restart from `ready E`. A followed file is re-read from its start; a
//! restarted run skips everything up to and including its `L`-th `commit` line (exact when that
//! file's epochs were closed by `commit` lines only). Stdin is read as it comes.
//!
//! # Threading
//!
//! * Input threads — one for stdin, one polling a followed file, or one accepting TCP
//!   connections plus one reader and one reply-writer thread per connection — split bytes into
//!   lines, parse them and send `(connection, line number, parsed line or error)` in batches (one
//!   per read of at most 16 KiB) over a **bounded** queue (16 batches) to the sequencer.
//! * The **sequencer** thread owns the edge multiset (`HashMap<Edge, u64>`), the open epoch, the
//!   [`StateDir`] and the workers' senders; it validates, closes epochs (log append + fsync,
//!   apply to the multiset, send the full batch to every worker, answer `ok`, snapshot every
//!   `snapshot_every` epochs), and drives the `epoch_ms` timer through its receive timeout.
//! * [`start`] itself recovers (or reads `--graph` as epoch 0, logging it) and queues the initial
//!   batches before any thread runs, so a bad state directory or graph file is reported at once.
//!
//! # Backpressure
//!
//! With `accepted` = number of epochs handed to the workers (`next epoch` number) and `completed`
//! = [`Progress::completed`]: after closing an epoch (and after the initial batches), while
//! `accepted - completed > max_behind` the sequencer takes no further input. Its queue fills,
//! input threads block on it and stop reading: stdin / the file are not read, TCP sockets are not
//! read, so producers are slowed by TCP flow control. At most `max_behind + 1` epochs are ever
//! outstanding (besides a restart's replay), and at most a few MiB of lines are buffered.
//!
//! [`LineError`]: crate::sources::parse::LineError

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};

use super::state::{read_mark, Recovered, StateDir};
use super::{EpochBatch, Progress};
use crate::sources::parse::{parse_timed_update_bytes, read_edges};
use crate::sources::window::{check_update, EventClock, LatePolicy, WindowSpec};
use crate::types::{weight_bits, Edge, Time, Update};

/// Bytes read from an input at a time; the lines of one read travel as one queue message.
const READ_CHUNK: usize = 16 * 1024;
/// Capacity (in messages) of the queue from the input threads to the sequencer.
const EVENT_QUEUE: usize = 16;
/// Replies waiting to be written to one connection before it is dropped as unresponsive.
const REPLY_QUEUE: usize = 1024;
/// Longest accepted line, in bytes (without its newline).
const MAX_LINE: usize = 1 << 20;
/// How often a followed file is polled for new data.
const FOLLOW_POLL: Duration = Duration::from_millis(20);
/// How often the listener is polled for connections (and for shutdown).
const ACCEPT_POLL: Duration = Duration::from_millis(20);

/// Where live update lines come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LiveInput {
    Stdin,
    /// Listen on `host:port` for producers.
    Listen(String),
    /// Follow a file as it grows.
    Follow(PathBuf),
}

/// Configuration of the live front end.
#[derive(Clone, Debug)]
pub struct LiveConfig {
    pub input: LiveInput,
    /// Initial graph file, read as epoch 0 on a fresh start only.
    pub graph: Option<PathBuf>,
    /// Close an epoch after this many accepted update lines.
    pub batch: Option<usize>,
    /// Close an epoch every this many milliseconds, even when idle.
    pub epoch_ms: Option<u64>,
    /// Backpressure: stop reading while `accepted - completed > max_behind`.
    pub max_behind: u64,
    pub state_dir: Option<PathBuf>,
    /// Snapshot the multiset at every epoch that is a multiple of this (with `state_dir`).
    pub snapshot_every: Option<u64>,
    /// Number of local workers: one receiver each.
    pub workers: usize,
    /// Declared insert-only (`--insert-only`): deletions are rejected, and the driver may use
    /// insert-only fast paths.
    pub insert_only: bool,
    /// Event-time windows: every update line carries `@T` and only inserts; late lines are
    /// dropped (counted) or rejected (see [`crate::sources::window`]).
    pub window: Option<WindowSpec>,
    /// Stdin and followed files: warn about a rejected line and skip it, instead of stopping.
    pub skip_bad_lines: bool,
}

/// Why the front end stopped the stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LiveFailure {
    /// Bad input (exit status 2) rather than an I/O or internal failure.
    pub input: bool,
    pub message: String,
}

impl From<String> for LiveFailure {
    fn from(message: String) -> Self {
        LiveFailure { input: false, message }
    }
}

impl LiveConfig {
    /// A configuration with one worker, `max_behind` 16 and every option off.
    pub fn new(input: LiveInput) -> Self {
        LiveConfig {
            input,
            insert_only: false,
            window: None,
            skip_bad_lines: false,
            graph: None,
            batch: None,
            epoch_ms: None,
            max_behind: 16,
            state_dir: None,
            snapshot_every: None,
            workers: 1,
        }
    }
}

/// What [`start`] hands to the driver.
pub struct LiveHandle {
    /// One per worker; each receives every epoch (the full batch), in order, consecutive from the
    /// first one sent (epoch 0 on a fresh start, the snapshot's epoch or 0 after a restart).
    pub receivers: Vec<Receiver<EpochBatch>>,
    /// The driver calls `progress.complete(e)` as epochs finish, and `progress.stop()` if it
    /// stops early.
    pub progress: Arc<Progress>,
    /// The last epoch whose changes are already written (from the state directory's mark).
    pub written_through: Option<Time>,
    /// Recovery warnings to print.
    pub warnings: Vec<String>,
    /// The address actually bound (for [`LiveInput::Listen`]; useful with port 0).
    pub local_addr: Option<SocketAddr>,
    /// The stream holds static edges (the initial graph, or untimed copies recovered): in a
    /// windowed stream these never leave.
    pub static_edges: bool,
    /// The sequencer; returns when the stream ended (or the driver stopped).
    pub thread: JoinHandle<Result<LiveSummary, LiveFailure>>,
}

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

/// Starts the front end: recovers or reads the initial graph, queues the initial batches to the
/// workers, opens the input and spawns the threads (see the [module docs](self)).
pub fn start(config: LiveConfig) -> anyhow::Result<LiveHandle> {
    if config.workers == 0 {
        bail!("the live front end needs at least one worker");
    }
    if config.batch == Some(0) {
        bail!("--batch must be at least 1");
    }
    if config.epoch_ms == Some(0) {
        bail!("--epoch-ms must be at least 1");
    }
    let mut warnings = Vec::new();
    let mut edges: HashMap<Edge, u64> = HashMap::new();
    let mut initial: Vec<EpochBatch> = Vec::new();
    let mut written_through = None;
    let mut state = None;
    let mut restarted = false;

    if let Some(dir) = &config.state_dir {
        let (state_dir, recovered) =
            StateDir::open(dir).map_err(|e| anyhow!("cannot open the state directory {}: {e}", dir.display()))?;
        written_through = read_mark(dir)
            .map_err(|e| anyhow!("cannot read the output mark in {}: {e}", dir.display()))?
            .map(|(epoch, _offset)| epoch);
        restarted = recover(recovered, &mut edges, &mut initial, &mut warnings)?;
        // The change log can be ahead of what the state directory can replay only when
        // acknowledged log records were lost. The epochs after the last durable one are accepted
        // again (possibly with other updates), so the change log is cut back to it (the driver
        // does that, finding the cut in the change-log file).
        let durable = initial.last().map(|b| b.epoch);
        if let Some(marked) = written_through {
            if durable.map(|d| marked > d).unwrap_or(true) {
                warnings.push(format!(
                    "the change log records epoch {marked}, but the state directory holds epochs only up to {} \
                     (log records were lost); the change log is cut back to that epoch",
                    durable.map(|d| d.to_string()).unwrap_or_else(|| "none".into()),
                ));
                written_through = durable;
            }
        }
        state = Some(state_dir);
    }
    if !restarted {
        let updates: Vec<Update> = match &config.graph {
            Some(path) => {
                read_edges(path)?.into_iter().map(|(src, dst, weight)| Update { src, dst, weight, diff: 1 }).collect()
            }
            None => Vec::new(),
        };
        apply(&mut edges, &updates);
        let batch = EpochBatch { epoch: 0, updates, ..Default::default() };
        if let Some(state) = state.as_mut() {
            state.append(&batch).map_err(|e| anyhow!("cannot log epoch 0 (the initial graph): {e}"))?;
        }
        initial.push(batch);
    }
    let next_epoch = initial.last().map_or(0, |b| b.epoch + 1);
    let static_edges =
        initial.iter().any(|b| (0..b.updates.len()).any(|i| b.times.get(i).copied().flatten().is_none()));
    // Windowed streams: the watermark follows from the epochs so far; `edges` keeps the static
    // edges only, the timed ones are in `alive` until they leave their window.
    let mut alive = BTreeMap::new();
    let clock = config.window.map(|spec| {
        let mut clock = EventClock::new(spec);
        edges.clear();
        for batch in &initial {
            for (i, u) in batch.updates.iter().enumerate() {
                match batch.times.get(i).copied().flatten() {
                    Some(t) => *alive.entry(alive_key(&spec, u.edge(), t)).or_insert(0) += 1,
                    None => apply(&mut edges, std::slice::from_ref(u)),
                }
            }
            clock.close_epoch(batch.times.iter().flatten().copied());
        }
        clock
    });

    let (senders, receivers): (Vec<_>, Vec<_>) = (0..config.workers).map(|_| mpsc::channel::<EpochBatch>()).unzip();
    for batch in initial {
        for sender in &senders {
            sender.send(batch.clone()).expect("the receivers are still held here");
        }
    }

    let (events, queue) = mpsc::sync_channel::<Event>(EVENT_QUEUE);
    let shutdown = Arc::new(AtomicBool::new(false));
    let mut local_addr = None;
    let source_name = match &config.input {
        LiveInput::Stdin => {
            spawn("ripples-live-stdin", move || read_stdin(events))?;
            "stdin".to_string()
        }
        LiveInput::Listen(address) => {
            let listener =
                TcpListener::bind(address.as_str()).with_context(|| format!("cannot listen on {address}"))?;
            local_addr = Some(listener.local_addr()?);
            listener.set_nonblocking(true)?;
            let shutdown = shutdown.clone();
            spawn("ripples-live-accept", move || accept(listener, events, shutdown))?;
            address.clone()
        }
        LiveInput::Follow(path) => {
            let file = File::open(path).with_context(|| format!("cannot follow {}", path.display()))?;
            // Epoch k (k >= 1) was closed by the file's k-th `commit` line.
            let skip_commits = next_epoch.saturating_sub(1);
            if skip_commits > 0 && (config.batch.is_some() || config.epoch_ms.is_some()) {
                warnings.push(format!(
                    "resuming {} after its commit line number {skip_commits}: this is exact only \
                     if its epochs were closed by commit lines alone (not by --batch or \
                     --epoch-ms)",
                    path.display()
                ));
            }
            let name = path.display().to_string();
            let (path, shutdown) = (path.clone(), shutdown.clone());
            spawn("ripples-live-follow", move || follow(&path, file, skip_commits, events, shutdown))?;
            name
        }
    };

    let progress = Progress::new();
    let sequencer = Sequencer {
        edges,
        next_epoch,
        pending: Vec::new(),
        pending_late: 0,
        clock,
        alive,
        producers: HashMap::new(),
        claimed: HashMap::new(),
        insert_only: config.insert_only,
        skip_bad_lines: config.skip_bad_lines,
        conns: HashMap::new(),
        state,
        snapshot_every: config.snapshot_every.filter(|&n| n > 0),
        batch: config.batch,
        max_behind: config.max_behind,
        senders,
        workers_gone: false,
        progress: progress.clone(),
        summary: LiveSummary::default(),
        source_name,
    };
    let epoch_ms = config.epoch_ms;
    let thread = thread::Builder::new().name("ripples-live".into()).spawn(move || {
        let result = sequencer.run(&queue, epoch_ms);
        shutdown.store(true, Ordering::SeqCst);
        result
    })?;
    Ok(LiveHandle { static_edges, receivers, progress, written_through, warnings, local_addr, thread })
}

/// Rebuilds the multiset and the batches to replay from what the state directory holds.
/// Returns whether there was anything (a restart) or not (a fresh start).
fn recover(
    recovered: Recovered,
    edges: &mut HashMap<Edge, u64>,
    initial: &mut Vec<EpochBatch>,
    warnings: &mut Vec<String>,
) -> anyhow::Result<bool> {
    let Recovered { snapshot_epoch, snapshot_edges, snapshot_times, log, last_epoch, warnings: recovery_warnings } =
        recovered;
    warnings.extend(recovery_warnings);
    if snapshot_epoch.is_none() && log.is_empty() {
        if let Some(last) = last_epoch {
            bail!("the state directory names epoch {last} as durable but holds no epochs");
        }
        return Ok(false);
    }
    let mut expected = 0;
    if let Some(base) = snapshot_epoch {
        let copies: u64 = snapshot_edges.iter().map(|&(_, n)| n).sum();
        let mut updates = Vec::with_capacity(copies as usize);
        let mut times = Vec::new();
        for (i, (update, count)) in snapshot_edges.into_iter().enumerate() {
            let insert = Update { diff: 1, ..update };
            updates.extend(std::iter::repeat_n(insert, count as usize));
            if let Some(&t) = snapshot_times.get(i) {
                times.extend(std::iter::repeat_n(t, count as usize));
            }
            if count > 0 {
                *edges.entry(update.edge()).or_insert(0) += count;
            }
        }
        initial.push(EpochBatch { epoch: base, updates, times, late: 0 });
        expected = base + 1;
    }
    for batch in log {
        if snapshot_epoch.is_some_and(|base| batch.epoch <= base) {
            continue;
        }
        if batch.epoch != expected {
            bail!("the state directory's log holds epoch {} where epoch {expected} was expected", batch.epoch);
        }
        apply(edges, &batch.updates);
        initial.push(batch);
        expected += 1;
    }
    if let Some(last) = last_epoch {
        if last + 1 != expected {
            warnings.push(format!(
                "recovery reported epoch {last} as the last durable one, but the snapshot and log \
                 end at epoch {}; continuing from there",
                expected - 1
            ));
        }
    }
    Ok(true)
}

fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> anyhow::Result<()> {
    thread::Builder::new().name(name.to_string()).spawn(body).with_context(|| format!("cannot start thread {name}"))?;
    Ok(())
}

/// Applies updates to the multiset (the updates are valid; counts never go below zero).
fn apply(edges: &mut HashMap<Edge, u64>, updates: &[Update]) {
    for update in updates {
        let edge = update.edge();
        if update.diff > 0 {
            *edges.entry(edge).or_insert(0) += 1;
        } else if let Some(count) = edges.get_mut(&edge) {
            *count -= 1;
            if *count == 0 {
                edges.remove(&edge);
            }
        }
    }
}

/// The insertion of one copy of `edge` (no weight when it has the default weight).
/// Where a timed copy sits in [`Sequencer::alive`]: by the time it leaves its window (never:
/// `u64::MAX`).
fn alive_key(spec: &WindowSpec, edge: Edge, time: Time) -> (Time, Edge, Time) {
    (spec.lifetime(time).1.unwrap_or(Time::MAX), edge, time)
}

fn edge_update(edge: Edge) -> Update {
    let weight = (edge.2 != weight_bits(None)).then(|| f64::from_bits(edge.2));
    Update { src: edge.0, dst: edge.1, weight, diff: 1 }
}

// ---------------------------------------------------------------------------------------------
// Input side: lines → events
// ---------------------------------------------------------------------------------------------

/// A connection (or the single local source).
type ConnId = u64;
/// Stdin and a followed file are producer 0; TCP connections are numbered from 1.
const LOCAL: ConnId = 0;

#[derive(Debug, Clone, PartialEq)]
enum Item {
    Update(Update, Option<Time>),
    Commit,
    End,
    /// A rejected line and why.
    Bad(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Line {
    /// 1-based, within the connection / source.
    no: u64,
    item: Item,
}

enum Event {
    Connect {
        conn: ConnId,
        reply: SyncSender<String>,
        socket: TcpStream,
        /// Done once every queued reply is written (or writing failed).
        flushed: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
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
    Failed(String),
}

/// Parses one line (without its `\n`); `None` for a skipped line.
fn classify(line: &[u8]) -> Option<Item> {
    match line.trim_ascii() {
        b"commit" => return Some(Item::Commit),
        b"end" => return Some(Item::End),
        _ => {}
    }
    match parse_timed_update_bytes(line) {
        Ok(Some((update, time))) => Some(Item::Update(update, time)),
        Ok(None) => None,
        Err(e) => Some(Item::Bad(e.to_string())),
    }
}

/// Splits a byte stream into numbered, classified lines; keeps an incomplete last line until
/// its newline arrives, and never holds more than [`MAX_LINE`] bytes of it.
#[derive(Default)]
struct LineSplitter {
    partial: Vec<u8>,
    /// The current line is too long: its bytes are being dropped up to the next newline.
    overlong: bool,
    line_no: u64,
}

impl LineSplitter {
    fn feed(&mut self, mut data: &[u8], out: &mut Vec<Line>) {
        while let Some(pos) = data.iter().position(|&b| b == b'\n') {
            let head = &data[..pos];
            if self.overlong || self.partial.len() + head.len() > MAX_LINE {
                self.overlong = false;
                self.partial.clear();
                self.push_too_long(out);
            } else if self.partial.is_empty() {
                self.push(head, out);
            } else {
                let mut line = std::mem::take(&mut self.partial);
                line.extend_from_slice(head);
                self.push(&line, out);
                line.clear();
                self.partial = line;
            }
            data = &data[pos + 1..];
        }
        if !self.overlong {
            if self.partial.len() + data.len() > MAX_LINE {
                self.overlong = true;
                self.partial = Vec::new();
            } else {
                self.partial.extend_from_slice(data);
            }
        }
    }

    /// End of input: an unterminated last line counts.
    fn finish(&mut self, out: &mut Vec<Line>) {
        if self.overlong {
            self.overlong = false;
            self.push_too_long(out);
        } else if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.push(&line, out);
        }
    }

    fn push(&mut self, line: &[u8], out: &mut Vec<Line>) {
        self.line_no += 1;
        if let Some(item) = classify(line) {
            out.push(Line { no: self.line_no, item });
        }
    }

    fn push_too_long(&mut self, out: &mut Vec<Line>) {
        self.line_no += 1;
        out.push(Line { no: self.line_no, item: Item::Bad(format!("line too long (more than {MAX_LINE} bytes)")) });
    }
}

/// Reads `input` to its end, sending its lines. `Ok(false)` when the sequencer is gone.
fn pump(mut input: impl Read, conn: ConnId, events: &SyncSender<Event>) -> io::Result<bool> {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut splitter = LineSplitter::default();
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

fn read_stdin(events: SyncSender<Event>) {
    match pump(io::stdin(), LOCAL, &events) {
        Ok(true) => {
            let _ = events.send(Event::Eof);
        }
        Ok(false) => {}
        Err(e) => {
            let _ = events.send(Event::Failed(format!("cannot read stdin: {e}")));
        }
    }
}

fn follow(path: &Path, mut file: File, mut skip_commits: u64, events: SyncSender<Event>, shutdown: Arc<AtomicBool>) {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut splitter = LineSplitter::default();
    let mut offset: u64 = 0;
    while !shutdown.load(Ordering::SeqCst) {
        let n = match file.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = events.send(Event::Failed(format!("cannot read {}: {e}", path.display())));
                return;
            }
        };
        if n == 0 {
            if let Ok(meta) = std::fs::metadata(path) {
                if meta.len() < offset {
                    let _ = events.send(Event::Failed(format!(
                        "{} shrank from {offset} to {} bytes while being followed (it must only \
                         grow)",
                        path.display(),
                        meta.len()
                    )));
                    return;
                }
            }
            thread::sleep(FOLLOW_POLL);
            continue;
        }
        offset += n as u64;
        let mut lines = Vec::new();
        splitter.feed(&buf[..n], &mut lines);
        if skip_commits > 0 {
            // Already durable from an earlier run: drop through the `skip_commits`-th commit
            // (an `end` still ends the stream).
            lines.retain(|line| match line.item {
                Item::End => true,
                _ if skip_commits == 0 => true,
                Item::Commit => {
                    skip_commits -= 1;
                    false
                }
                _ => false,
            });
        }
        if !lines.is_empty() && events.send(Event::Lines { conn: LOCAL, lines }).is_err() {
            return;
        }
    }
}

fn accept(listener: TcpListener, events: SyncSender<Event>, shutdown: Arc<AtomicBool>) {
    let mut next_conn: ConnId = 1;
    while !shutdown.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _peer)) => {
                let conn = next_conn;
                next_conn += 1;
                let events = events.clone();
                let started = thread::Builder::new()
                    .name(format!("ripples-live-conn-{conn}"))
                    .spawn(move || serve(conn, stream, events));
                if let Err(e) = started {
                    eprintln!("ripples: warning: cannot serve a producer: {e}");
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => thread::sleep(ACCEPT_POLL),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                eprintln!("ripples: warning: cannot accept a producer: {e}");
                thread::sleep(ACCEPT_POLL);
            }
        }
    }
}

/// One TCP connection: this thread reads and parses lines; a second one writes the replies the
/// sequencer queues, and closes the socket once the sequencer lets go of the connection.
fn serve(conn: ConnId, stream: TcpStream, events: SyncSender<Event>) {
    let setup = (|| -> io::Result<(TcpStream, TcpStream)> {
        stream.set_nonblocking(false)?;
        stream.set_nodelay(true)?;
        Ok((stream.try_clone()?, stream.try_clone()?))
    })();
    let (mut writer, socket) = match setup {
        Ok(clones) => clones,
        Err(e) => {
            eprintln!("ripples: warning: cannot serve a producer: {e}");
            return;
        }
    };
    let (reply, replies) = mpsc::sync_channel::<String>(REPLY_QUEUE);
    let flushed = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let flushed_by_writer = flushed.clone();
    let written = thread::Builder::new().name(format!("ripples-live-reply-{conn}")).spawn(move || {
        let mut out = Vec::new();
        while let Ok(first) = replies.recv() {
            out.clear();
            out.extend_from_slice(first.as_bytes());
            while let Ok(more) = replies.try_recv() {
                out.extend_from_slice(more.as_bytes());
            }
            if writer.write_all(&out).and_then(|()| writer.flush()).is_err() {
                break;
            }
        }
        let _ = writer.shutdown(Shutdown::Both);
        let (done, signal) = &*flushed_by_writer;
        if let Ok(mut done) = done.lock() {
            *done = true;
        }
        signal.notify_all();
    });
    if written.is_err() || events.send(Event::Connect { conn, reply, socket, flushed }).is_err() {
        let _ = stream.shutdown(Shutdown::Both);
        return;
    }
    let _ = pump(&stream, conn, &events);
    let _ = events.send(Event::Disconnect { conn });
}

// ---------------------------------------------------------------------------------------------
// The sequencer
// ---------------------------------------------------------------------------------------------

/// A producer's share of the open epoch, for validating its deletions.
#[derive(Default)]
struct Producer {
    /// Copies it inserted in this epoch and has not deleted again.
    inserted: HashMap<Edge, u64>,
    /// Copies of the multiset its deletions consumed.
    claims: HashMap<Edge, u64>,
}

struct Connection {
    reply: SyncSender<String>,
    socket: TcpStream,
    flushed: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
}

/// How processing goes on after an event.
enum Flow {
    Continue,
    /// The stream ended (`end`, or end of stdin); the connection that asked, if any.
    End(Option<ConnId>),
    /// The driver stopped or the workers went away.
    Stopped,
    /// A bad line on stdin / a followed file (without `skip_bad_lines`): `source:line: problem`.
    Failed(String),
}

struct Sequencer {
    /// The multiset as of the last closed epoch.
    edges: HashMap<Edge, u64>,
    /// The open epoch's number (= number of epochs handed to the workers).
    next_epoch: Time,
    /// The open epoch's updates, in arrival order (with their event times in windowed streams).
    pending: Vec<(ConnId, Update, Time)>,
    /// Late updates dropped from the open epoch.
    pending_late: u64,
    /// Windowed streams: the watermark as of the last closed epoch.
    clock: Option<EventClock>,
    /// Windowed streams: copies of timed edges that may still be present at the frontier, by
    /// `(time they leave, edge, event time)` (what a snapshot holds besides static edges).
    alive: BTreeMap<(Time, Edge, Time), u64>,
    producers: HashMap<ConnId, Producer>,
    /// Copies of the multiset claimed by pending deletions (all producers).
    claimed: HashMap<Edge, u64>,
    /// The stream was declared insert-only: deletions are rejected.
    insert_only: bool,
    /// Stdin / a followed file: skip a rejected line (with a warning) instead of stopping.
    skip_bad_lines: bool,
    conns: HashMap<ConnId, Connection>,
    state: Option<StateDir>,
    snapshot_every: Option<u64>,
    batch: Option<usize>,
    max_behind: u64,
    senders: Vec<Sender<EpochBatch>>,
    workers_gone: bool,
    progress: Arc<Progress>,
    summary: LiveSummary,
    /// Names the input in messages about stdin / a followed file.
    source_name: String,
}

impl Sequencer {
    fn run(mut self, queue: &Receiver<Event>, epoch_ms: Option<u64>) -> Result<LiveSummary, LiveFailure> {
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
            _ if self.workers_gone && !self.progress.is_stopped() => {
                Err("the workers stopped receiving epochs".to_string().into())
            }
            _ => Ok(self.summary.clone()),
        }
    }

    fn handle(&mut self, event: Event) -> Result<Flow, String> {
        match event {
            Event::Connect { conn, reply, socket, flushed } => {
                self.conns.insert(conn, Connection { reply, socket, flushed });
                self.reply(conn, format!("ready {}\n", self.next_epoch));
                Ok(Flow::Continue)
            }
            Event::Lines { conn, lines } => self.lines(conn, lines),
            Event::Disconnect { conn } => {
                self.discard(conn);
                self.conns.remove(&conn);
                Ok(Flow::Continue)
            }
            Event::Eof => Ok(Flow::End(None)),
            Event::Failed(message) => Err(message),
        }
    }

    fn lines(&mut self, conn: ConnId, lines: Vec<Line>) -> Result<Flow, String> {
        let mut lines = lines.into_iter();
        while let Some(Line { no, item }) = lines.next() {
            let flow = match item {
                Item::Update(update, time) => match self.offer(conn, update, time) {
                    // Dropped late lines count too: an epoch is N consecutive update lines.
                    Ok(()) if self.batch.is_some_and(|n| self.pending.len() as u64 + self.pending_late >= n as u64) => {
                        self.close(None)?;
                        self.after_close()
                    }
                    Ok(()) => Flow::Continue,
                    Err(reason) => self.reject(conn, no, &reason),
                },
                Item::Bad(reason) => self.reject(conn, no, &reason),
                Item::Commit => {
                    self.close(Some(conn))?;
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

    /// Validates an update of `conn` and adds it to the open epoch (a late one of a windowed
    /// stream is dropped and counted, or rejected).
    fn offer(&mut self, conn: ConnId, update: Update, time: Option<Time>) -> Result<(), String> {
        let time = check_update(self.clock.as_ref().map(EventClock::spec), &update, time)?;
        if let (Some(clock), Some(t)) = (&self.clock, time) {
            if clock.is_late(t) {
                return match clock.spec().late {
                    LatePolicy::Drop => {
                        self.pending_late += 1;
                        Ok(())
                    }
                    LatePolicy::Error => Err(clock.late_reason(t)),
                };
            }
        }
        if self.insert_only && update.diff < 0 {
            return Err(format!("deletion of edge {} {} on a stream declared --insert-only", update.src, update.dst));
        }
        let edge = update.edge();
        let producer = self.producers.entry(conn).or_default();
        if update.diff > 0 {
            *producer.inserted.entry(edge).or_insert(0) += 1;
        } else if let Some(own) = producer.inserted.get_mut(&edge).filter(|n| **n > 0) {
            *own -= 1;
        } else {
            let present = self.edges.get(&edge).copied().unwrap_or(0);
            let claimed = self.claimed.entry(edge).or_insert(0);
            if *claimed >= present {
                let weight = update.weight.map(|w| format!(" {w}")).unwrap_or_default();
                return Err(format!(
                    "cannot delete edge {} {}{weight}: no copy of it is present",
                    update.src, update.dst
                ));
            }
            *claimed += 1;
            *producer.claims.entry(edge).or_insert(0) += 1;
        }
        self.pending.push((conn, update, time.unwrap_or(0)));
        Ok(())
    }

    /// Drops `conn`'s pending updates (and its claims on the multiset).
    fn discard(&mut self, conn: ConnId) {
        if let Some(producer) = self.producers.remove(&conn) {
            for (edge, n) in producer.claims {
                if let Some(claimed) = self.claimed.get_mut(&edge) {
                    *claimed -= n;
                }
            }
            self.pending.retain(|&(c, _, _)| c != conn);
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
    fn reply(&mut self, conn: ConnId, message: String) {
        let Some(connection) = self.conns.get(&conn) else {
            return;
        };
        if let Err(TrySendError::Full(_)) = connection.reply.try_send(message) {
            eprintln!("ripples: warning: producer {conn} does not read its replies; disconnecting it");
            let _ = connection.socket.shutdown(Shutdown::Both);
            self.conns.remove(&conn);
        }
    }

    /// Closes the open epoch: log (fsync), apply, hand to every worker, answer `ok`, snapshot.
    fn close(&mut self, committer: Option<ConnId>) -> Result<(), String> {
        let epoch = self.next_epoch;
        // A snapshot describes the multiset as of the previous epoch, and is only taken once the
        // dataflow has completed (and the driver has written the changes of) every epoch up to
        // it: a restart resumes from the snapshot and must be able to reproduce the change log of
        // every later epoch individually.
        if epoch > 0 {
            self.snapshot(epoch - 1)?;
        }
        let (updates, times): (Vec<Update>, Vec<Time>) = self.pending.drain(..).map(|(_, u, t)| (u, t)).unzip();
        self.producers.clear();
        self.claimed.clear();
        let late = std::mem::take(&mut self.pending_late);
        self.summary.late_dropped += late;
        let batch = match &mut self.clock {
            Some(clock) => {
                clock.close_epoch(times.iter().copied());
                EpochBatch { epoch, updates, times: times.into_iter().map(Some).collect(), late }
            }
            None => EpochBatch { epoch, updates, ..Default::default() },
        };
        if let Some(state) = self.state.as_mut() {
            state.append(&batch).map_err(|e| format!("cannot log epoch {epoch}: {e}"))?;
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
        self.next_epoch += 1;
        self.summary.epochs += 1;
        self.summary.updates += batch.updates.len() as u64;
        if let Some((last, others)) = self.senders.split_last() {
            for sender in others {
                self.workers_gone |= sender.send(batch.clone()).is_err();
            }
            self.workers_gone |= last.send(batch).is_err();
        }
        if let Some(conn) = committer {
            self.reply(conn, format!("ok {epoch}\n"));
        }
        Ok(())
    }

    fn snapshot(&mut self, epoch: Time) -> Result<(), String> {
        let (Some(state), Some(every)) = (self.state.as_mut(), self.snapshot_every) else {
            return Ok(());
        };

        let due = match state.snapshot_epochs().last() {
            Some(&last) => epoch >= last + every,
            None => epoch >= every,
        };
        if !due {
            return Ok(());
        }
        // Let the dataflow finish `epoch` first (it is at most `max_behind` epochs behind, and
        // usually one): the snapshot must not run ahead of the change log.
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.progress.completed() <= epoch && !self.progress.is_stopped() && Instant::now() < deadline {
            thread::sleep(Duration::from_micros(200));
        }
        if self.progress.completed() <= epoch {
            return Ok(());
        }
        let mut copies: Vec<(Edge, u64)> = self.edges.iter().map(|(&e, &n)| (e, n)).collect();
        copies.sort_unstable();
        let mut entries: Vec<(Update, Option<Time>, u64)> =
            copies.into_iter().map(|(e, n)| (edge_update(e), None, n)).collect();
        if let Some(clock) = &self.clock {
            // A copy that left its window before the frontier can change no result that is
            // still to be written (the one at `frontier - 1` included): it is not kept.
            let frontier = clock.frontier();
            self.alive = self.alive.split_off(&(frontier, (0, 0, 0), 0));
            entries.extend(self.alive.iter().map(|(&(_, e, t), &n)| (edge_update(e), Some(t), n)));
        }
        // Fatal: a failed snapshot write leaves the state directory refusing further appends.
        state.snapshot_timed(epoch, &entries).map_err(|e| format!("cannot snapshot epoch {epoch}: {e}"))
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
        let mut pause = Duration::from_micros(100);
        while self.next_epoch.saturating_sub(self.progress.completed()) > self.max_behind {
            if self.progress.is_stopped() {
                return false;
            }
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
        true
    }

    /// `end`: close the pending epoch if it has updates, let the driver finish, answer `bye`.
    fn end(mut self, ender: Option<ConnId>, queue: &Receiver<Event>) -> Result<LiveSummary, String> {
        if !self.pending.is_empty() {
            self.close(None)?;
        }
        self.senders.clear();
        while !self.progress.may_end(self.next_epoch) && !self.workers_gone {
            thread::sleep(Duration::from_millis(2));
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
                let Connection { reply, flushed, .. } = connection;
                drop(reply);
                let (done, signal) = &*flushed;
                let guard = done.lock();
                if let Ok(guard) = guard {
                    let _ = signal.wait_timeout_while(guard, Duration::from_secs(5), |done| !*done);
                }
            }
        }
        Ok(self.summary.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::parse::parse_update_line;
    use std::io::{BufRead, BufReader};

    const WAIT: Duration = Duration::from_secs(20);

    fn ins(src: u64, dst: u64) -> Update {
        Update::insert(src, dst)
    }
    fn del(src: u64, dst: u64) -> Update {
        Update::delete(src, dst)
    }

    fn listen(workers: usize, max_behind: u64) -> LiveConfig {
        let mut config = LiveConfig::new(LiveInput::Listen("127.0.0.1:0".into()));
        config.workers = workers;
        config.max_behind = max_behind;
        config
    }

    struct Client {
        stream: TcpStream,
        reader: BufReader<TcpStream>,
    }

    impl Client {
        fn connect(handle: &LiveHandle) -> Client {
            let stream = TcpStream::connect(handle.local_addr.unwrap()).unwrap();
            stream.set_read_timeout(Some(WAIT)).unwrap();
            let reader = BufReader::new(stream.try_clone().unwrap());
            Client { stream, reader }
        }
        fn send(&mut self, text: &str) {
            self.stream.write_all(text.as_bytes()).unwrap();
        }
        /// The next reply line without its newline; "" at end of stream.
        fn line(&mut self) -> String {
            let mut line = String::new();
            self.reader.read_line(&mut line).unwrap();
            line.trim_end_matches('\n').to_string()
        }
    }

    /// Receives the next epoch on every worker (all must agree) and completes it.
    fn next_epoch(handle: &LiveHandle) -> EpochBatch {
        let batch = handle.receivers[0].recv_timeout(WAIT).expect("an epoch");
        for receiver in &handle.receivers[1..] {
            assert_eq!(receiver.recv_timeout(WAIT).expect("an epoch"), batch);
        }
        handle.progress.complete(batch.epoch);
        batch
    }

    /// Consumes every worker's epochs on another thread, completing each, until the front end
    /// drops the senders; returns them (checked identical across workers and consecutive).
    fn consume(handle: &mut LiveHandle) -> JoinHandle<Vec<EpochBatch>> {
        let receivers = std::mem::take(&mut handle.receivers);
        let progress = handle.progress.clone();
        thread::spawn(move || {
            let mut batches: Vec<EpochBatch> = Vec::new();
            while let Ok(batch) = receivers[0].recv() {
                for receiver in &receivers[1..] {
                    assert_eq!(receiver.recv().unwrap(), batch);
                }
                if let Some(last) = batches.last() {
                    assert_eq!(batch.epoch, last.epoch + 1, "epochs are consecutive");
                }
                progress.complete(batch.epoch);
                batches.push(batch);
            }
            batches
        })
    }

    fn multiset(batches: &[EpochBatch]) -> HashMap<Edge, u64> {
        let mut edges = HashMap::new();
        for batch in batches {
            apply(&mut edges, &batch.updates);
        }
        edges
    }

    #[test]
    fn splitter_handles_partial_and_long_lines() {
        let mut splitter = LineSplitter::default();
        let mut out = Vec::new();
        splitter.feed(b"+ 1 2\n# c\n\n- 3", &mut out);
        assert_eq!(out, vec![Line { no: 1, item: Item::Update(ins(1, 2), None) }]);
        out.clear();
        splitter.feed(b" 4\r\ncommit\n  end \nx\n", &mut out);
        let bad = parse_update_line("x").unwrap_err().to_string();
        assert_eq!(
            out,
            vec![
                Line { no: 4, item: Item::Update(del(3, 4), None) },
                Line { no: 5, item: Item::Commit },
                Line { no: 6, item: Item::End },
                Line { no: 7, item: Item::Bad(bad) },
            ]
        );
        out.clear();
        let long = vec![b'1'; MAX_LINE / 2 + 1];
        splitter.feed(&long, &mut out);
        splitter.feed(&long, &mut out);
        splitter.feed(&long, &mut out);
        assert!(out.is_empty());
        assert!(splitter.partial.is_empty(), "an overlong line is not buffered");
        splitter.feed(b"1\n5 6", &mut out);
        splitter.finish(&mut out);
        assert!(matches!(&out[0], Line { no: 8, item: Item::Bad(m) } if m.contains("too long")));
        assert_eq!(out[1], Line { no: 9, item: Item::Update(ins(5, 6), None) });
    }

    #[test]
    fn tcp_two_producers() {
        let handle = start(listen(2, 1000)).unwrap();
        let mut a = Client::connect(&handle);
        assert_eq!(a.line(), "ready 1");
        let mut b = Client::connect(&handle);
        assert_eq!(b.line(), "ready 1");
        assert_eq!(next_epoch(&handle), EpochBatch { epoch: 0, updates: vec![], ..Default::default() });

        a.send("+ 1 2\n2 3 0.5\ncommit\n");
        assert_eq!(a.line(), "ok 1");
        b.send("- 1 2\ncommit\n");
        assert_eq!(b.line(), "ok 2");
        // Both producers' updates go into the epoch the first commit closes.
        a.send("+ 4 5\n");
        thread::sleep(Duration::from_millis(200));
        b.send("+ 6 7\ncommit\n");
        assert_eq!(b.line(), "ok 3");
        a.send("commit\n");
        assert_eq!(a.line(), "ok 4");
        // A producer that leaves without committing loses its pending updates.
        let mut c = Client::connect(&handle);
        assert_eq!(c.line(), "ready 5");
        c.send("+ 8 9\n");
        drop(c);
        thread::sleep(Duration::from_millis(200));
        b.send("commit\n");
        assert_eq!(b.line(), "ok 5");
        // Another producer's pending insertion cannot be deleted (it might still be discarded).
        a.send("+ 7 7\n");
        thread::sleep(Duration::from_millis(200));
        b.send("- 7 7\ncommit\n");
        assert_eq!(b.line(), "error 6: cannot delete edge 7 7: no copy of it is present");
        assert_eq!(b.line(), "ok 6");

        let weighted = Update { src: 2, dst: 3, weight: Some(0.5), diff: 1 };
        let expected =
            [vec![ins(1, 2), weighted], vec![del(1, 2)], vec![ins(4, 5), ins(6, 7)], vec![], vec![], vec![ins(7, 7)]];
        for (i, updates) in expected.into_iter().enumerate() {
            let epoch = i as u64 + 1;
            assert_eq!(next_epoch(&handle), EpochBatch { epoch, updates, ..Default::default() });
        }
        a.send("end\n");
        assert_eq!(a.line(), "bye");
        assert_eq!(b.line(), "", "other connections are closed");
        assert!(handle.receivers[0].recv_timeout(WAIT).is_err(), "senders dropped");
        let summary = handle.thread.join().unwrap().unwrap();
        assert_eq!(summary, LiveSummary { epochs: 6, updates: 6, late: 0, rejected_lines: 1, late_dropped: 0 });
    }

    #[test]
    fn rejected_lines_discard_the_producers_pending_updates() {
        let handle = start(listen(1, 1000)).unwrap();
        let mut p = Client::connect(&handle);
        assert_eq!(p.line(), "ready 1");
        next_epoch(&handle);

        p.send("+ 1 2\n+ x 3\n+ 4 5\ncommit\n");
        let reason = parse_update_line("+ x 3").unwrap_err().to_string();
        assert_eq!(p.line(), format!("error 2: {reason}"));
        assert_eq!(p.line(), "ok 1");
        assert_eq!(next_epoch(&handle).updates, vec![ins(4, 5)]);

        // Lines 5..: deleting a copy that is not there (the second one).
        p.send("- 4 5\n# comment\n- 4 5\ncommit\n");
        assert_eq!(p.line(), "error 7: cannot delete edge 4 5: no copy of it is present");
        assert_eq!(p.line(), "ok 2");
        assert_eq!(next_epoch(&handle).updates, vec![]);

        // The edge the malformed line's epoch would have inserted is absent too.
        p.send("- 1 2 1.5\n");
        assert_eq!(p.line(), "error 9: cannot delete edge 1 2 1.5: no copy of it is present");
        // A copy inserted earlier in the same epoch may be deleted.
        p.send("+ 9 9\n- 9 9\n- 4 5\ncommit\n");
        assert_eq!(p.line(), "ok 3");
        assert_eq!(next_epoch(&handle).updates, vec![ins(9, 9), del(9, 9), del(4, 5)]);

        p.send("+ 1 1\nend\n+ 2 2\n");
        assert_eq!(next_epoch(&handle).updates, vec![ins(1, 1)]);
        assert_eq!(p.line(), "bye");
        let summary = handle.thread.join().unwrap().unwrap();
        assert_eq!(summary.rejected_lines, 3);
        assert_eq!(summary.epochs, 4);
        assert!(summary.late <= 1);
    }

    #[test]
    fn batch_closes_epochs_by_count() {
        let mut config = listen(1, 1000);
        config.batch = Some(2);
        let mut handle = start(config).unwrap();
        let consumer = consume(&mut handle);
        let mut p = Client::connect(&handle);
        assert_eq!(p.line(), "ready 1");
        p.send("+ 1 2\n+ 2 3\n+ 3 4\ncommit\n");
        assert_eq!(p.line(), "ok 2");
        p.send("end\n");
        assert_eq!(p.line(), "bye");
        let batches = consumer.join().unwrap();
        let updates: Vec<_> = batches.into_iter().map(|b| b.updates).collect();
        assert_eq!(updates, vec![vec![], vec![ins(1, 2), ins(2, 3)], vec![ins(3, 4)]]);
        handle.thread.join().unwrap().unwrap();
    }

    #[test]
    fn follow_restart_skips_durable_epochs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("updates.txt");
        std::fs::write(&path, "+ 1 2\ncommit\n+ 2 3\ncommit\n").unwrap();
        let mut config = LiveConfig::new(LiveInput::Follow(path.clone()));
        config.state_dir = Some(dir.path().join("state"));
        let mut handle = start(config.clone()).unwrap();
        let consumer = consume(&mut handle);
        thread::sleep(Duration::from_millis(100));
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"+ 3 4\nend\n").unwrap();
        let first = consumer.join().unwrap();
        assert_eq!(first.len(), 4);
        assert_eq!(handle.thread.join().unwrap().unwrap().epochs, 3);

        // The whole file is durable: a restart replays the log, reads nothing twice, and ends.
        let mut handle = start(config).unwrap();
        let consumer = consume(&mut handle);
        let second = consumer.join().unwrap();
        assert_eq!(second, first);
        let summary = handle.thread.join().unwrap().unwrap();
        assert_eq!(summary, LiveSummary::default());
    }

    #[test]
    fn end_closes_the_pending_epoch_and_waits_for_the_driver() {
        let mut handle = start(listen(3, 1000)).unwrap();
        let consumer = consume(&mut handle);
        let mut p = Client::connect(&handle);
        assert_eq!(p.line(), "ready 1");
        p.send("+ 1 2\n+ 2 3\nend\n");
        assert_eq!(p.line(), "bye");
        assert!(handle.progress.completed() >= 2, "bye only after the driver finished");
        let batches = consumer.join().unwrap();
        assert_eq!(
            batches,
            vec![
                EpochBatch { epoch: 0, updates: vec![], ..Default::default() },
                EpochBatch { epoch: 1, updates: vec![ins(1, 2), ins(2, 3)], ..Default::default() },
            ]
        );
        handle.thread.join().unwrap().unwrap();
    }

    #[test]
    fn epoch_ms_closes_empty_epochs_when_idle() {
        let mut config = listen(1, 1000);
        config.epoch_ms = Some(20);
        let mut handle = start(config).unwrap();
        let consumer = consume(&mut handle);
        thread::sleep(Duration::from_millis(400));
        let mut p = Client::connect(&handle);
        let ready: u64 = p.line().strip_prefix("ready ").unwrap().parse().unwrap();
        assert!(ready >= 4, "ready {ready}");
        p.send("end\n");
        assert_eq!(p.line(), "bye");
        let batches = consumer.join().unwrap();
        assert!(batches.len() as u64 >= ready);
        assert!(batches.iter().all(|b| b.updates.is_empty()));
        assert_eq!(batches[0].epoch, 0);
        handle.thread.join().unwrap().unwrap();
    }

    #[test]
    fn follow_reads_appended_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("updates.txt");
        std::fs::write(&path, "+ 1 2\ncommit\n+ 3").unwrap();
        let handle =
            start(LiveConfig { skip_bad_lines: true, ..LiveConfig::new(LiveInput::Follow(path.clone())) }).unwrap();
        let append = |text: &str| {
            let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
            file.write_all(text.as_bytes()).unwrap();
        };
        assert_eq!(next_epoch(&handle).epoch, 0);
        assert_eq!(next_epoch(&handle), EpochBatch { epoch: 1, updates: vec![ins(1, 2)], ..Default::default() });
        thread::sleep(Duration::from_millis(100));
        append(" 4");
        let waiting = handle.receivers[0].recv_timeout(Duration::from_millis(200));
        assert!(waiting.is_err(), "no commit yet: {waiting:?}");
        append("\nbad\ncommit\n");
        assert_eq!(next_epoch(&handle), EpochBatch { epoch: 2, updates: vec![ins(3, 4)], ..Default::default() });
        append("- 3 4\nend\n");
        assert_eq!(next_epoch(&handle), EpochBatch { epoch: 3, updates: vec![del(3, 4)], ..Default::default() });
        let summary = handle.thread.join().unwrap().unwrap();
        assert_eq!(summary, LiveSummary { epochs: 3, updates: 3, late: 0, rejected_lines: 1, late_dropped: 0 });
    }

    #[test]
    fn backpressure_stops_reading_until_epochs_complete() {
        const K: u64 = 2;
        const COMMITS: u64 = 300;
        let handle = start(listen(1, K)).unwrap();
        let mut p = Client::connect(&handle);
        assert_eq!(p.line(), "ready 1");
        let mut writer = p.stream.try_clone().unwrap();
        let producer = thread::spawn(move || {
            let mut text = String::new();
            for i in 0..COMMITS {
                text.push_str(&format!("+ {i} {}\ncommit\n", i + 1));
            }
            text.push_str("end\n");
            writer.write_all(text.as_bytes()).unwrap();
        });
        let mut received = Vec::new();
        for _ in 0..3 {
            thread::sleep(Duration::from_millis(150));
            while let Ok(batch) = handle.receivers[0].try_recv() {
                received.push(batch);
            }
            assert!(received.len() as u64 <= K + 2, "{} epochs sent with none completed", received.len());
        }
        assert_eq!(received.len() as u64, K + 1);
        // Resume: complete epochs as they arrive.
        for batch in &received {
            handle.progress.complete(batch.epoch);
        }
        while let Ok(batch) = handle.receivers[0].recv_timeout(WAIT) {
            handle.progress.complete(batch.epoch);
            received.push(batch);
        }
        producer.join().unwrap();
        assert_eq!(received.len() as u64, COMMITS + 1);
        for i in 1..=COMMITS {
            assert_eq!(p.line(), format!("ok {i}"));
        }
        assert_eq!(p.line(), "bye");
        let summary = handle.thread.join().unwrap().unwrap();
        assert_eq!(summary.epochs, COMMITS);
    }

    #[test]
    fn restart_resumes_after_the_last_durable_epoch() {
        let dir = tempfile::tempdir().unwrap();
        let state_dir = dir.path().join("state");
        let graph = dir.path().join("graph.txt");
        std::fs::write(&graph, "1 2\n2 3\n").unwrap();
        let config = |graph: Option<PathBuf>| {
            let mut config = listen(2, 1000);
            config.graph = graph;
            config.state_dir = Some(state_dir.clone());
            config.snapshot_every = Some(2);
            config
        };

        let mut handle = start(config(Some(graph.clone()))).unwrap();
        assert!(handle.warnings.is_empty(), "{:?}", handle.warnings);
        let consumer = consume(&mut handle);
        let mut p = Client::connect(&handle);
        assert_eq!(p.line(), "ready 1");
        for (text, reply) in [
            ("+ 3 4\ncommit\n", "ok 1"),
            ("- 1 2\n+ 5 6 0.5\ncommit\n", "ok 2"),
            ("+ 1 2\n+ 1 2\ncommit\n", "ok 3"),
            ("- 2 3\ncommit\n", "ok 4"),
            ("end\n", "bye"),
        ] {
            p.send(text);
            assert_eq!(p.line(), reply);
        }
        let first = consumer.join().unwrap();
        assert_eq!(first.len(), 5);
        assert_eq!(first[0].updates, vec![ins(1, 2), ins(2, 3)]);
        let state = multiset(&first);
        handle.thread.join().unwrap().unwrap();

        // The graph file is ignored on a restart.
        let mut handle = start(config(Some(graph))).unwrap();
        let consumer = consume(&mut handle);
        let mut p = Client::connect(&handle);
        assert_eq!(p.line(), "ready 5");
        p.send("- 1 2\ncommit\nend\n");
        assert_eq!(p.line(), "ok 5");
        assert_eq!(p.line(), "bye");
        let second = consumer.join().unwrap();
        let (last, replayed) = second.split_last().unwrap();
        assert_eq!(last, &EpochBatch { epoch: 5, updates: vec![del(1, 2)], ..Default::default() });
        assert_eq!(replayed.last().unwrap().epoch, 4);
        assert_eq!(multiset(replayed), state, "the replay reproduces the state");
        assert!(replayed[0].epoch == 0 || replayed[0].epoch % 2 == 0);
        handle.thread.join().unwrap().unwrap();

        // A third start sees epoch 5 as durable.
        let mut handle = start(config(None)).unwrap();
        let consumer = consume(&mut handle);
        let mut p = Client::connect(&handle);
        assert_eq!(p.line(), "ready 6");
        p.send("end\n");
        assert_eq!(p.line(), "bye");
        let third = consumer.join().unwrap();
        let mut expected = state.clone();
        apply(&mut expected, &[del(1, 2)]);
        assert_eq!(multiset(&third), expected);
        handle.thread.join().unwrap().unwrap();
    }
}
