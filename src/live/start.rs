//! **Starting the front end**: everything that happens before the first live line is read.
//!
//! [`start`] checks the options, then either *recovers* — opens the state directory, rebuilds the
//! multiset from its snapshot and log, and queues those epochs for replay — or, on a fresh start,
//! reads `--graph` as epoch 0 (logging it). It queues these initial batches to every worker,
//! opens the input (binding the TCP address, opening the followed file, starting the transport
//! threads), and finally starts the sequencer. Because all of this happens inside `start`, a bad
//! state directory, graph file or address is reported at once, as a [`StartError`], before any
//! epoch flows.
//!
//! A restart also reconciles the `--changes` file's mark with the state directory: the change
//! log can only be ahead of what the state directory can replay when acknowledged log records
//! were lost; then the epochs after the last durable one are accepted again (possibly with other
//! updates), so the change log is cut back to it (the driver does that, using
//! [`LiveHandle::written_through`]).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use super::config::LiveConfig;
use super::error::{LiveFailure, StartError};
use super::multiset::{alive_key, apply, apply_records, Alive, Multiset, Records};
use super::sequencer::{LiveSummary, Sequencer};
use super::state::{read_mark, Recovered, StateDir};
use super::transport::{self, Event, EVENT_QUEUE};
use super::wake::EpochSender;
use super::{EpochBatch, Progress};
use crate::sources::parse::read_edges;
use crate::sources::window::{EventClock, LateOutput};
use crate::types::{Time, Update};

/// What [`start`] hands to the driver.
pub struct LiveHandle {
    /// One per worker; each receives every epoch (the full batch), in order, consecutive from the
    /// first one sent (epoch 0 on a fresh start, the snapshot's epoch or 0 after a restart).
    pub receivers: Vec<Receiver<EpochBatch>>,
    /// One per worker, beside its receiver: the worker registers its thread there, and every
    /// epoch sent to it wakes it (see [`Waker`](super::Waker)).
    pub wakers: Vec<super::Waker>,
    /// The driver calls `progress.complete(e)` as epochs finish, and `progress.stop()` if it
    /// stops early.
    pub progress: Arc<Progress>,
    /// The last epoch whose changes are already written (from the state directory's mark).
    pub written_through: Option<Time>,
    /// Recovery warnings to print.
    pub warnings: Vec<String>,
    /// The address actually bound (for [`LiveInput::Listen`](super::LiveInput::Listen); useful with port 0).
    pub local_addr: Option<SocketAddr>,
    /// The stream holds static edges (the initial graph, or untimed copies recovered): in a
    /// windowed stream these never leave.
    pub static_edges: bool,
    /// The epoch the next commit closes (after the initial or recovered epochs).
    pub next_epoch: Time,
    /// The sequencer; returns when the stream ended (or the driver stopped).
    pub thread: JoinHandle<Result<LiveSummary, LiveFailure>>,
}

/// Starts the front end: recovers or reads the initial graph, queues the initial batches to the
/// workers, opens the input and spawns the threads (see [`crate::live`]).
pub fn start(config: LiveConfig) -> Result<LiveHandle, StartError> {
    check(&config)?;
    let mut warnings = Vec::new();
    let Initial { mut edges, batches: initial, written_through, state } = initial_state(&config, &mut warnings)?;
    let mut records = Records::new();
    for batch in &initial {
        apply_records(&mut records, &batch.records);
    }
    let next_epoch = initial.last().map_or(0, |b| b.epoch + 1);
    let static_edges =
        initial.iter().any(|b| (0..b.updates.len()).any(|i| b.times.get(i).copied().flatten().is_none()));
    let (clock, alive) = windowed(&config, &initial, &mut edges);
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..config.workers).map(|_| mpsc::channel::<EpochBatch>()).unzip();
    for batch in initial {
        for sender in &senders {
            sender.send(batch.clone()).expect("the receivers are still held here");
        }
    }
    let wakers: Vec<super::Waker> = (0..config.workers).map(|_| super::Waker::default()).collect();
    let senders = senders.into_iter().zip(&wakers).map(|(s, w)| EpochSender::new(s, w.clone())).collect();

    let (events, queue) = mpsc::sync_channel::<Event>(EVENT_QUEUE);
    let shutdown = Arc::new(AtomicBool::new(false));
    let transport::Opened { source_name, local_addr } =
        transport::open(&config, next_epoch, events, &shutdown, &mut warnings)?;

    let progress = Progress::new();
    if let Some(state) = &state {
        // The initial graph's epoch is logged already.
        progress.counters.log(state.appended());
    }
    let sequencer = Sequencer {
        edges,
        next_epoch,
        pending: Vec::new(),
        pending_late: 0,
        pending_applied_late: 0,
        late_output: config
            .late_output
            .as_deref()
            .map(LateOutput::create)
            .transpose()
            .map_err(StartError::LateOutput)?,
        clock,
        alive,
        claims: Default::default(),
        records,
        pending_records: Vec::new(),
        record_claims: Default::default(),
        record_check: config.records.clone(),
        insert_only: config.insert_only,
        skip_bad_lines: config.skip_bad_lines,
        conns: Default::default(),
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
    let thread = thread::Builder::new()
        .name("ripples-live".into())
        .spawn(move || {
            let result = sequencer.run(&queue, epoch_ms);
            shutdown.store(true, Ordering::SeqCst);
            result
        })
        .map_err(StartError::Sequencer)?;
    Ok(LiveHandle {
        static_edges,
        receivers,
        wakers,
        progress,
        written_through,
        warnings,
        local_addr,
        next_epoch,
        thread,
    })
}

/// Options the front end cannot run with.
fn check(config: &LiveConfig) -> Result<(), StartError> {
    if config.workers == 0 {
        return Err(StartError::NoWorkers);
    }
    if config.batch == Some(0) {
        return Err(StartError::ZeroBatch);
    }
    if config.epoch_ms == Some(0) {
        return Err(StartError::ZeroEpochMs);
    }
    Ok(())
}

/// The state before live input: the multiset and the batches every worker receives first.
struct Initial {
    edges: Multiset,
    /// A restart's snapshot and log, or a fresh start's epoch 0 (the initial graph).
    batches: Vec<EpochBatch>,
    /// The last epoch whose changes are already written.
    written_through: Option<Time>,
    state: Option<StateDir>,
}

/// Recovers from the state directory or, on a fresh start, reads the initial graph as epoch 0
/// (logging it).
fn initial_state(config: &LiveConfig, warnings: &mut Vec<String>) -> Result<Initial, StartError> {
    let mut edges = Multiset::new();
    let mut initial: Vec<EpochBatch> = Vec::new();
    let mut written_through = None;
    let mut state = None;
    let mut restarted = false;

    if let Some(dir) = &config.state_dir {
        let (state_dir, recovered) =
            StateDir::open(dir).map_err(|source| StartError::OpenState { dir: dir.clone(), source })?;
        written_through = read_mark(dir)
            .map_err(|source| StartError::ReadMark { dir: dir.clone(), source })?
            .map(|(epoch, _offset)| epoch);
        restarted = recover(recovered, &mut edges, &mut initial, warnings)?;
        written_through = reconcile_mark(written_through, initial.last().map(|b| b.epoch), warnings);
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
            state.append(&batch).map_err(|source| StartError::LogInitial { source })?;
        }
        initial.push(batch);
    }
    Ok(Initial { edges, batches: initial, written_through, state })
}

/// The change log can be ahead of what the state directory can replay only when acknowledged
/// log records were lost. The epochs after the last durable one are accepted again (possibly with
/// other updates), so the change log is cut back to it (the driver does that, finding the cut in
/// the change-log file). Returns the epoch the change log is good through.
fn reconcile_mark(marked: Option<Time>, durable: Option<Time>, warnings: &mut Vec<String>) -> Option<Time> {
    let marked = marked?;
    if durable.map(|d| marked > d).unwrap_or(true) {
        warnings.push(format!(
            "the change log records epoch {marked}, but the state directory holds epochs only up to {} \
             (log records were lost); the change log is cut back to that epoch",
            durable.map(|d| d.to_string()).unwrap_or_else(|| "none".into()),
        ));
        return durable;
    }
    Some(marked)
}

/// Windowed streams: the watermark follows from the epochs so far; `edges` keeps the static
/// edges only, the timed ones go to the `alive` set until they leave their window.
fn windowed(config: &LiveConfig, initial: &[EpochBatch], edges: &mut Multiset) -> (Option<EventClock>, Alive) {
    let mut alive = Alive::new();
    let clock = config.window.map(|spec| {
        let mut clock = EventClock::new(spec);
        edges.clear();
        for batch in initial {
            for (i, u) in batch.updates.iter().enumerate() {
                match batch.times.get(i).copied().flatten() {
                    Some(t) => *alive.entry(alive_key(&spec, u.edge(), t)).or_insert(0) += 1,
                    None => apply(edges, std::slice::from_ref(u)),
                }
            }
            clock.close_epoch(batch.times.iter().flatten().copied());
        }
        clock
    });
    (clock, alive)
}

/// Rebuilds the multiset and the batches to replay from what the state directory holds.
/// Returns whether there was anything (a restart) or not (a fresh start).
fn recover(
    recovered: Recovered,
    edges: &mut Multiset,
    initial: &mut Vec<EpochBatch>,
    warnings: &mut Vec<String>,
) -> Result<bool, StartError> {
    let snapshot = recovered.snapshot_batch();
    let Recovered { snapshot_epoch, log, last_epoch, warnings: recovery_warnings, .. } = recovered;
    warnings.extend(recovery_warnings);
    if snapshot_epoch.is_none() && log.is_empty() {
        if let Some(last) = last_epoch {
            return Err(StartError::NothingDurable { last });
        }
        return Ok(false);
    }
    let mut expected = 0;
    if let Some(batch) = snapshot {
        // One insertion per copy: applying them counts every copy.
        apply(edges, &batch.updates);
        expected = batch.epoch + 1;
        initial.push(batch);
    }
    for batch in log {
        if snapshot_epoch.is_some_and(|base| batch.epoch <= base) {
            continue;
        }
        if batch.epoch != expected {
            return Err(StartError::OutOfSequence { got: batch.epoch, expected });
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
