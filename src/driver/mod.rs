//! The **driver**: runs an [`Algorithm`] over a graph stream, epoch by epoch, on any number of
//! workers and processes, and measures it.
//!
//! For each run, every worker
//! 1. loads and validates its share of the input ([`input::load`]; nothing is fed unless the whole
//!    input is valid),
//! 2. builds the algorithm's dataflow over its input collections and routes the output changes to
//!    worker 0 of process 0, the only writer,
//! 3. feeds epoch 0 (the initial graph), then each epoch of updates: it hands its share over,
//!    advances the input to the next epoch and steps the dataflow until the probe at the sink has
//!    passed the epoch.
//!
//! Worker 0 measures each epoch's latency (from handing its input over until the output frontier
//! passes the epoch), counts the output changes, samples memory, writes the change log, stats and
//! progress, and at the end the result file and the summary.

pub mod allgather;
pub mod input;
pub mod layout;
pub mod metrics;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use differential_dataflow::input::InputSession;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::Probe;
use timely::dataflow::ProbeHandle;

pub use input::{FileSource, InputFailure, MemoryStream, Source};
pub use layout::Layout;
pub use metrics::{EpochStats, LatencySummary};

use crate::dataflow::{Algorithm, GraphInput};
use crate::sinks::{Change, Progress, ResultSink, RunSummary, StatsWriter};
use crate::sources::window::{EventClock, WindowSpec};
use crate::types::{Diff, Edge, Node, Time};

/// Everything a run needs besides the algorithm.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub layout: Layout,
    pub source: Source,
    /// Final result, `key value` per line, sorted by key.
    pub output: Option<PathBuf>,
    /// Change log, `epoch key value diff` per line (`-` for stdout).
    pub changes: Option<PathBuf>,
    /// Per-epoch JSON stats and a summary.
    pub stats: Option<PathBuf>,
    /// With several algorithms: `DIR/<name>.out` and `DIR/<name>.changes` for each.
    pub output_dir: Option<PathBuf>,
    /// Report progress on stderr.
    pub progress: bool,
    /// Keep every change in memory and return it in the report (tests, embedding).
    pub collect: bool,
    /// Return the final result in the report (`RunReport::final_state`).
    pub keep_state: bool,
    /// A generated in-memory stream known to be valid: skip validating its deletions.
    pub trusted_input: bool,
    /// Stop feeding new epochs once the update epochs have run this long; the report is then
    /// marked partial (it covers the prefix of the stream that was processed).
    pub time_limit: Option<std::time::Duration>,
    /// Event-time windows (`--window`, `--tumbling`): the dataflow time is the event time, and
    /// results are written once the watermark has passed them (see [`crate::sources::window`]).
    pub window: Option<WindowSpec>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            layout: Layout::default(),
            source: Source::Memory(Arc::new(MemoryStream { batch: 1, ..MemoryStream::default() })),
            output: None,
            changes: None,
            stats: None,
            output_dir: None,
            progress: false,
            collect: false,
            keep_state: false,
            trusted_input: false,
            time_limit: None,
            window: None,
        }
    }
}

impl RunOptions {
    /// Options for an in-memory stream with nothing written.
    pub fn memory(stream: MemoryStream, workers: usize) -> Self {
        RunOptions {
            layout: Layout::threads(workers),
            source: Source::Memory(Arc::new(stream)),
            output: None,
            changes: None,
            stats: None,
            collect: true,
            ..RunOptions::default()
        }
    }
}

/// What a run reports (from the writing worker; other processes get `None`).
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    pub summary: RunSummary,
    pub epochs: Vec<EpochStats>,
    /// Every change, in the order written, when `collect` was set.
    pub changes: Option<Vec<Change>>,
    /// The final result `(key, value)`, sorted, when `keep_state` was set (a key with several
    /// values appears once per value).
    pub final_state: Option<Vec<(Node, u64)>>,
    /// Every algorithm's outputs, in order (the first is also in `changes` and `final_state`).
    pub algorithms: Vec<AlgorithmReport>,
}

/// One algorithm's outputs in a run.
#[derive(Clone, Debug, Default)]
pub struct AlgorithmReport {
    pub name: String,
    pub output_changes: u64,
    pub changes: Option<Vec<Change>>,
    pub final_state: Option<Vec<(Node, u64)>>,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad input data (exit status 2).
    #[error("{0}")]
    Input(String),
    /// Anything else: unreadable files, bad configuration, I/O (exit status 1).
    #[error("{0}")]
    Other(String),
}

impl RunError {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Input(_) => 2,
            RunError::Other(_) => 1,
        }
    }
}

impl From<InputFailure> for RunError {
    fn from(f: InputFailure) -> Self {
        if f.exit_code == 2 {
            RunError::Input(f.message)
        } else {
            RunError::Other(f.message)
        }
    }
}

type SinkBuffer = Rc<RefCell<BTreeMap<Time, Vec<((Node, u64), Diff)>>>>;

/// A windowed epoch's outcome for the writer: results of times below `frontier` are final.
#[derive(Clone, Copy, Debug)]
struct EventEpoch {
    frontier: Time,
    watermark: Time,
    late: u64,
}

/// What a live run hands its workers: one receiver per local worker, the shared progress
/// counters, and the last epoch already in the change log.
struct LiveShared {
    receivers: std::sync::Mutex<Vec<Option<std::sync::mpsc::Receiver<crate::live::EpochBatch>>>>,
    progress: Arc<crate::live::Progress>,
    written_through: Option<Time>,
    state_dir: Option<PathBuf>,
    static_edges: bool,
}

/// Runs `algorithm` as configured. Returns the report of the writing worker (process 0), or
/// `None` in other processes.
pub fn run<A: Algorithm>(options: RunOptions, algorithm: A) -> Result<Option<RunReport>, RunError> {
    run_many(options, vec![Box::new(algorithm)])
}

/// Runs several algorithms over one stream in one dataflow: they share the input and its
/// derived arrangements ([`GraphInput`]'s vertex and edge sets). Outputs go to
/// `options.output_dir` (`<name>.out`, `<name>.changes`), or, for a single algorithm, to
/// `options.output` and `options.changes`.
pub fn run_many(options: RunOptions, algorithms: Vec<Box<dyn Algorithm>>) -> Result<Option<RunReport>, RunError> {
    let config = options.layout.timely_config().map_err(|e| RunError::Other(format!("{:#}", e)))?;
    if algorithms.is_empty() {
        return Err(RunError::Other("no algorithm to run".into()));
    }
    if algorithms.len() > 1 && (options.output.is_some() || options.changes.is_some()) {
        return Err(RunError::Input("with several algorithms, give --output-dir instead of --output/--changes".into()));
    }
    let algorithm = Arc::new(algorithms);
    // Live input: the front end runs in process 0 only.
    let mut live_thread = None;
    let live = match &options.source {
        Source::Live(cfg) if options.layout.process == 0 => {
            let mut cfg = cfg.clone();
            cfg.workers = options.layout.workers;
            cfg.window = options.window;
            let handle = crate::live::start(cfg.clone()).map_err(|e| RunError::Other(format!("{:#}", e)))?;
            for w in &handle.warnings {
                eprintln!("ripples: warning: {}", w);
            }
            if let Some(addr) = handle.local_addr {
                if options.progress {
                    eprintln!("ripples: listening on {}", addr);
                }
            }
            handle.progress.attach();
            let shared = LiveShared {
                receivers: std::sync::Mutex::new(handle.receivers.into_iter().map(Some).collect()),
                progress: handle.progress.clone(),
                written_through: handle.written_through,
                state_dir: cfg.state_dir.clone(),
                static_edges: handle.static_edges,
            };
            live_thread = Some((handle.thread, handle.progress));
            Some(Arc::new(shared))
        }
        _ => None,
    };
    let options = Arc::new(options);
    let live_for_workers = live.clone();
    let guards =
        timely::execute(config, move |worker| run_worker(worker, &options, &algorithm, live_for_workers.as_deref()))
            .map_err(|e| RunError::Other(format!("cannot start workers: {}", e)))?;
    let mut report = None;
    let mut failure = None;
    for result in guards.join() {
        match result {
            Ok(Ok(Some(r))) => report = Some(r),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => failure = failure.or(Some(e)),
            Err(panic) => failure = failure.or(Some(RunError::Other(format!("a worker failed: {}", panic)))),
        }
    }
    if let Some((thread, progress)) = live_thread {
        if failure.is_some() {
            progress.stop();
        } else {
            progress.finish();
        }
        match thread.join() {
            Ok(Ok(_summary)) => {}
            // A bad live input line outranks what it caused downstream.
            Ok(Err(e)) if e.input => failure = Some(RunError::Input(e.message)),
            Ok(Err(e)) => failure = failure.or(Some(RunError::Other(e.message))),
            Err(_) => failure = failure.or(Some(RunError::Other("the live input thread failed".into()))),
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(report),
    }
}

/// The length of the prefix of a change-log file that holds the lines of epochs `<= through`
/// (no line for `None`); the lines are in epoch order.
fn changes_offset_after(path: &std::path::Path, through: Option<Time>) -> Result<u64, String> {
    let text = std::fs::read(path).map_err(|e| format!("cannot read {}: {}", path.display(), e))?;
    let mut offset = 0usize;
    for line in text.split_inclusive(|&b| b == b'\n') {
        let epoch = line
            .split(|&b| b == b' ')
            .next()
            .and_then(|f| std::str::from_utf8(f).ok())
            .and_then(|f| f.parse::<Time>().ok());
        match (epoch, through) {
            (Some(e), Some(t)) if e <= t && line.ends_with(b"\n") => offset += line.len(),
            _ => break,
        }
    }
    Ok(offset as u64)
}

/// The writer's per-epoch bookkeeping: sink, stats, progress, latencies.
struct Writer {
    sinks: Vec<ResultSink>,
    sink_changes: Vec<u64>,
    stats: Option<StatsWriter>,
    progress: Progress,
    epoch_stats: Vec<EpochStats>,
    latencies: Vec<f64>,
    output_changes: u64,
    peak_rss: u64,
    update_seconds: f64,
    initial_seconds: f64,
    updates: u64,
    /// Change-log lines of epochs up to here are already written (live restart).
    written_through: Option<Time>,
    /// With a state directory: where the change-log mark is kept.
    mark_dir: Option<PathBuf>,
    /// Windowed runs: late updates dropped so far.
    late: u64,
    /// Windowed runs: time to close the last windows at the end of the stream.
    end_seconds: Option<f64>,
}

/// Writes the buffered changes of every time below `frontier` to `sink`, time by time.
fn write_times_below(sink: &mut ResultSink, buffer: &SinkBuffer, frontier: Time, write: bool) -> Result<u64, RunError> {
    let mut lines = 0;
    loop {
        let next = {
            let mut buffer = buffer.borrow_mut();
            match buffer.first_key_value() {
                Some((&t, _)) if t < frontier => buffer.remove(&t).map(|c| (t, c)),
                _ => None,
            }
        };
        let Some((time, changes)) = next else { return Ok(lines) };
        lines += sink.epoch_with(time, changes, write).map_err(|e| RunError::Other(e.to_string()))?;
    }
}

impl Writer {
    /// The end of a windowed stream: writes every time below the final frontier (no new epoch).
    /// `seconds`: how long the dataflow took to reach the final frontier.
    fn finish_window(&mut self, buffers: &[SinkBuffer], frontier: Time, seconds: f64) -> Result<(), RunError> {
        for (i, (sink, buffer)) in self.sinks.iter_mut().zip(buffers).enumerate() {
            let n = write_times_below(sink, buffer, frontier, true)?;
            self.sink_changes[i] += n;
            self.output_changes += n;
        }
        self.update_seconds += seconds;
        self.end_seconds = Some(seconds);
        Ok(())
    }

    /// Writes epoch `epoch`: without `event`, every buffered change up to `epoch`, labelled
    /// `epoch`; with it (windowed runs), the changes of each time below its frontier, each
    /// labelled with its own (event) time.
    fn epoch(
        &mut self,
        buffers: &[SinkBuffer],
        epoch: Time,
        updates: u64,
        latency: f64,
        first: bool,
        event: Option<EventEpoch>,
    ) -> Result<(), RunError> {
        if first {
            self.initial_seconds = latency;
        } else {
            self.update_seconds += latency;
            self.latencies.push(latency * 1000.0);
            self.updates += updates;
        }
        let quiet = self.written_through.map(|w| epoch <= w).unwrap_or(false);
        let mut lines = 0;
        for (i, (sink, buffer)) in self.sinks.iter_mut().zip(buffers).enumerate() {
            let n = match event {
                None => {
                    let mut changes = Vec::new();
                    {
                        let mut buffer = buffer.borrow_mut();
                        let done: Vec<Time> = buffer.range(..=epoch).map(|(t, _)| *t).collect();
                        for t in done {
                            if let Some(mut c) = buffer.remove(&t) {
                                changes.append(&mut c);
                            }
                        }
                    }
                    sink.epoch_with(epoch, changes, !quiet).map_err(|e| RunError::Other(e.to_string()))?
                }
                Some(event) => write_times_below(sink, buffer, event.frontier, !quiet)?,
            };
            self.sink_changes[i] += n;
            lines += n;
        }
        if let (Some(dir), false) = (&self.mark_dir, quiet) {
            if let Some(offset) = self.sinks[0].sync_changes().map_err(|e| RunError::Other(e.to_string()))? {
                crate::live::write_mark(dir, epoch, offset).map_err(|e| RunError::Other(e.to_string()))?;
            }
        }
        self.output_changes += lines;
        let (rss, hwm) = metrics::memory();
        self.peak_rss = self.peak_rss.max(hwm);
        let s = EpochStats {
            epoch,
            updates,
            latency_ms: latency * 1000.0,
            output_changes: lines,
            rss_bytes: rss,
            watermark: event.map(|e| e.watermark),
            late: event.map(|e| e.late),
        };
        self.late += event.map_or(0, |e| e.late);
        if let Some(w) = &mut self.stats {
            w.epoch(&s).map_err(|e| RunError::Other(e.to_string()))?;
        }
        self.progress.epoch(self.epoch_stats.len() as u64, updates, latency * 1000.0);
        self.epoch_stats.push(s);
        Ok(())
    }
}

fn run_worker(
    worker: &mut timely::worker::Worker,
    options: &RunOptions,
    algorithms: &[Box<dyn Algorithm>],
    live: Option<&LiveShared>,
) -> Result<Option<RunReport>, RunError> {
    let started = Instant::now();
    let index = worker.index();
    let writer_here = index == 0;
    let is_live = matches!(options.source, Source::Live(_));

    let (mut share, facts) = if is_live {
        (input::WorkerShare::default(), input::InputFacts::default())
    } else {
        input::load(worker, &options.source, options.trusted_input, options.window.as_ref())?
    };
    let load_seconds = started.elapsed().as_secs_f64();

    // Sinks are created before the dataflow, so that an unwritable output stops the run early.
    // Only the writer creates them; the others learn of a failure through `allgather`.
    let mut writer = None;
    let mut sink_error = None;
    if writer_here {
        let resume = match live.and_then(|l| l.state_dir.as_ref()) {
            Some(dir) if options.changes.as_deref() != Some(std::path::Path::new("-")) && options.changes.is_some() => {
                match crate::live::read_mark(dir) {
                    Ok(Some((marked, offset))) => {
                        match live.map(|l| l.written_through) {
                            // The front end cut the durable epochs back below the mark.
                            Some(through) if through < Some(marked) => {
                                let path = options.changes.as_deref().expect("changes file");
                                match changes_offset_after(path, through) {
                                    Ok(o) => Some(o),
                                    Err(e) => {
                                        sink_error = Some(e);
                                        None
                                    }
                                }
                            }
                            _ => Some(offset),
                        }
                    }
                    Ok(None) => Some(0),
                    Err(e) => {
                        sink_error = Some(e.to_string());
                        None
                    }
                }
            }
            _ => None,
        };
        let single = algorithms.len() == 1;
        let mut sinks = Vec::new();
        let mut sink_failure = None;
        for algorithm in algorithms {
            let name = algorithm.name();
            let (changes, output) = match &options.output_dir {
                Some(dir) => (Some(dir.join(format!("{}.changes", name))), Some(dir.join(format!("{}.out", name)))),
                None if single => (options.changes.clone(), options.output.clone()),
                None => (None, None),
            };
            if let Some(dir) = &options.output_dir {
                if let Err(e) = std::fs::create_dir_all(dir) {
                    sink_failure = Some(format!("cannot create {}: {}", dir.display(), e));
                }
            }
            match ResultSink::new_resuming(
                algorithm.value_format(),
                changes.as_deref(),
                output.as_deref(),
                options.collect,
                options.keep_state,
                if sinks.is_empty() { resume } else { None },
            ) {
                Ok(s) => sinks.push(s),
                Err(e) => sink_failure = Some(e.to_string()),
            }
        }
        let sink: Result<Vec<ResultSink>, String> = match sink_failure {
            Some(e) => Err(e),
            None => Ok(sinks),
        };
        let stats = options.stats.as_deref().map(StatsWriter::create).transpose();
        match (sink, stats.map_err(|e| e.to_string())) {
            (Ok(sinks), Ok(stats)) => {
                let total = if is_live { 0 } else { 1 + share.epochs() as u64 };
                writer = Some(Writer {
                    sink_changes: vec![0; sinks.len()],
                    sinks,
                    stats,
                    progress: Progress::new(total, options.progress),
                    epoch_stats: Vec::new(),
                    latencies: Vec::new(),
                    output_changes: 0,
                    peak_rss: 0,
                    update_seconds: 0.0,
                    initial_seconds: 0.0,
                    updates: 0,
                    written_through: live.and_then(|l| l.written_through),
                    mark_dir: live.and_then(|l| l.state_dir.clone()).filter(|_| options.changes.is_some()),
                    late: 0,
                    end_seconds: None,
                });
            }
            (Err(e), _) | (_, Err(e)) => sink_error = sink_error.or(Some(e)),
        }
    }
    let errors = allgather::allgather(worker, sink_error);
    if let Some(e) = errors.into_iter().flatten().next() {
        return Err(RunError::Other(e));
    }

    // A windowed stream retracts every edge when it leaves its window: never insert-only.
    let window = options.window;
    let insert_only = window.is_none()
        && match &options.source {
            Source::Live(cfg) => cfg.insert_only,
            _ => !facts.has_deletions,
        };
    // Windowed runs without static edges: every copy entering at `t` leaves at `t + span`.
    // (Live input in other processes learns nothing of the stream; they must agree, so
    // multi-process live runs do not declare it.)
    let static_edges = match (&options.source, live) {
        (Source::Live(_), Some(l)) if options.layout.processes == 1 => l.static_edges,
        (Source::Live(_), _) => true,
        _ => facts.initial_edges > 0,
    };
    let edge_lifetime = window.filter(|_| !static_edges).map(|spec| spec.span);
    let buffers: Vec<SinkBuffer> = algorithms.iter().map(|_| Rc::new(RefCell::new(BTreeMap::new()))).collect();
    let mut edges_in: InputSession<Time, Edge, Diff> = InputSession::new();
    let mut vertices_in: InputSession<Time, Node, Diff> = InputSession::new();
    let probe: ProbeHandle<Time> = ProbeHandle::new();
    {
        let buffers = buffers.clone();
        let probe = probe.clone();
        let edges_in = &mut edges_in;
        let vertices_in = &mut vertices_in;
        worker.dataflow::<Time, _, _>(move |scope| {
            let input = GraphInput::new(edges_in.to_collection(scope), vertices_in.to_collection(scope), insert_only)
                .with_edge_lifetime(edge_lifetime);
            for (algorithm, buffer) in algorithms.iter().zip(buffers) {
                let result = algorithm.build(input.clone());
                result
                    .inner
                    .unary_frontier::<timely::container::CapacityContainerBuilder<Vec<()>>, _, _, _>(
                        Exchange::new(|_x: &((Node, u64), Time, Diff)| 0u64),
                        "ResultSink",
                        move |_capability, _info| {
                            move |(input, _frontier), _output| {
                                input.for_each(|_time, data| {
                                    let mut buffer = buffer.borrow_mut();
                                    for (record, time, diff) in data.drain(..) {
                                        buffer.entry(time).or_default().push((record, diff));
                                    }
                                });
                            }
                        },
                    )
                    .probe_with(&probe);
            }
        });
    }

    for v in std::mem::take(&mut share.vertices) {
        vertices_in.update(v, 1);
    }
    vertices_in.close();
    let mut epoch: Time = 0;
    let mut partial = false;

    // Windowed runs: every worker follows the watermark itself (it sees every epoch's times).
    let mut clock = window.map(EventClock::new);
    let mut expiries = Expiries::default();
    if let Some(live) = live {
        // Live input (process 0): every local worker receives every epoch and feeds its slice.
        let receiver = live.receivers.lock().map_err(|_| RunError::Other("poisoned".into()))?
            [worker.index() % options.layout.workers]
            .take()
            .ok_or_else(|| RunError::Other("live input receiver taken twice".into()))?;
        let (local, locals) = (worker.index() % options.layout.workers, options.layout.workers);
        let mut first = true;
        // A restart's replay in progress: (last epoch fed, updates, when it began).
        let mut replay: Option<(Time, u64, Instant)> = None;
        // Windowed runs: this worker's timed copies of the replay so far.
        let mut replayed: Vec<(Edge, Time)> = Vec::new();
        // Where the input is advanced after an epoch, and what the writer writes.
        let target = |clock: &Option<EventClock>, epoch: Time, late: u64| match clock {
            None => (epoch + 1, None),
            Some(c) => (c.frontier(), Some(EventEpoch { frontier: c.frontier(), watermark: c.watermark(), late })),
        };
        loop {
            let batch = loop {
                match receiver.try_recv() {
                    Ok(b) => break Some(b),
                    Err(std::sync::mpsc::TryRecvError::Empty) => {
                        worker.step_or_park(Some(std::time::Duration::from_millis(1)));
                    }
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => break None,
                }
            };
            // Epochs whose changes are already in the change log (a restart's replay) are fed
            // back to back without waiting for each: their output only rebuilds the state.
            let is_replay =
                batch.as_ref().map(|b| live.written_through.map(|w| b.epoch <= w).unwrap_or(false)).unwrap_or(false);
            if !is_replay {
                if let Some((last, updates, started)) = replay.take() {
                    let (until, event) = target(&clock, last, 0);
                    if let Some(spec) = &window {
                        expiries.replay(
                            &mut edges_in,
                            spec,
                            std::mem::take(&mut replayed),
                            until,
                            edge_lifetime.is_some(),
                        );
                    }
                    expiries.advance(&mut edges_in, until);
                    edges_in.flush();
                    while probe.less_than(&until) {
                        worker.step();
                    }
                    if let Some(w) = &mut writer {
                        w.epoch(&buffers, last, updates, started.elapsed().as_secs_f64(), first, event)?;
                        live.progress.complete(last);
                    }
                    first = false;
                }
            }
            let Some(batch) = batch else { break };
            if (!first || replay.is_some()) && batch.epoch <= epoch || batch.epoch < epoch {
                return Err(RunError::Other(format!("live input sent epoch {} after epoch {}", batch.epoch, epoch)));
            }
            if insert_only && batch.updates.iter().any(|u| u.diff < 0) {
                return Err(RunError::Input(format!(
                    "epoch {} deletes an edge, but the stream was declared --insert-only (a state directory written without --insert-only?)",
                    batch.epoch
                )));
            }
            epoch = batch.epoch;
            // A replay is fed at the time of its first epoch: one dataflow time for all of it.
            // (Windowed runs feed at event times; their input time is the watermark's frontier.)
            if replay.is_none() && clock.is_none() {
                edges_in.advance_to(epoch);
            }
            // Latency counts from the moment the epoch's input is handed over, feeding included
            // (a windowed epoch is fed in steps that already run the dataflow).
            let handed_over = Instant::now();
            let n = batch.updates.len();
            let mine = n * local / locals..n * (local + 1) / locals;
            // The watermark after this epoch (feeding does not depend on it; its frontier bounds
            // how far the input may advance while the epoch is fed).
            if let Some(c) = clock.as_mut() {
                c.close_epoch(batch.times.iter().flatten().copied());
            }
            let timed_mine = !batch.times.is_empty() && batch.times[mine.clone()].iter().all(Option::is_some);
            if let (Some(spec), Some(c), false, true) = (&window, &clock, is_replay, timed_mine) {
                // A live windowed epoch: in the order its copies enter (see `feed_in_time_order`).
                let until = c.frontier();
                let copies: Vec<(Edge, Time)> = batch.updates[mine.clone()]
                    .iter()
                    .zip(&batch.times[mine.clone()])
                    .map(|(u, t)| (u.edge(), t.expect("timed")))
                    .collect();
                expiries.feed_in_time_order(worker, &mut edges_in, spec, copies, until);
            } else {
                for (i, u) in batch.updates[mine.clone()].iter().enumerate() {
                    match (&window, batch.times.get(mine.start + i).copied().flatten()) {
                        // A windowed replay is fed in one piece when it ends (`Expiries::replay`).
                        (Some(_), Some(t)) if is_replay => replayed.push((u.edge(), t)),
                        (Some(spec), Some(t)) => expiries.insert(&mut edges_in, spec, u.edge(), t),
                        // Static edges (and every edge of an unwindowed stream).
                        _ => edges_in.update(u.edge(), u.diff as Diff),
                    }
                }
            }
            if is_replay {
                let (updates, started) = match replay.take() {
                    Some((_, u, s)) => (u, s),
                    None => (0, Instant::now()),
                };
                replay = Some((epoch, updates + n as u64, started));
                // Already in the change log: count it as complete for the front end's
                // backpressure (which would otherwise wait for epochs that are being merged).
                if writer.is_some() {
                    live.progress.complete(epoch);
                }
                worker.step();
                continue;
            }
            let (until, event) = target(&clock, epoch, batch.late);
            expiries.advance(&mut edges_in, until);
            edges_in.flush();
            while probe.less_than(&until) {
                worker.step();
            }
            let latency = handed_over.elapsed().as_secs_f64();
            if let Some(w) = &mut writer {
                w.epoch(&buffers, epoch, n as u64, latency, first, event)?;
                live.progress.complete(epoch);
            }
            first = false;
        }
        if let Some(c) = &clock {
            finish_window(worker, &mut edges_in, &mut expiries, &probe, writer.as_mut(), &buffers, c.final_frontier())?;
        }
    } else if is_live {
        // Live input in another process: nothing to feed here.
    } else {
        // Epoch 0: the initial graph. Latency counts from the moment an epoch's input is handed
        // over, feeding included (a windowed epoch is fed in steps that already run the dataflow).
        let mut handed_over = Instant::now();
        for e in std::mem::take(&mut share.initial) {
            edges_in.update(e, 1);
        }
        let update_epochs = share.epochs() as u64;
        // Every worker measures its own time in update epochs (they wait for the same probe, so
        // their clocks agree at epoch boundaries) and stops at the time limit on its own.
        let mut worker_update_seconds = 0.0;
        loop {
            // Windowed: the frontier the watermark allows after this epoch (0 after epoch 0).
            let (until, event) = match (&facts.window, epoch) {
                (None, _) => (epoch + 1, None),
                (Some(_), 0) => (0, Some(EventEpoch { frontier: 0, watermark: 0, late: 0 })),
                (Some(wf), e) => {
                    let i = e as usize - 1;
                    let frontier = wf.frontiers[i];
                    (frontier, Some(EventEpoch { frontier, watermark: wf.watermarks[i], late: wf.late[i] }))
                }
            };
            expiries.advance(&mut edges_in, until);
            edges_in.flush();
            while probe.less_than(&until) {
                worker.step();
            }
            let latency = handed_over.elapsed().as_secs_f64();
            let updates = if epoch == 0 { facts.initial_edges } else { facts.epoch_updates[epoch as usize - 1] };
            if epoch > 0 {
                worker_update_seconds += latency;
            }
            let update_seconds = worker_update_seconds;
            if let Some(w) = &mut writer {
                w.epoch(&buffers, epoch, updates, latency, epoch == 0, event)?;
            }
            // Every worker decides on its own clock; they are in step at epoch boundaries.
            let out_of_time =
                options.time_limit.map(|limit| epoch > 0 && update_seconds >= limit.as_secs_f64()).unwrap_or(false);
            if out_of_time {
                partial = true;
                break;
            }
            if epoch == update_epochs {
                if let Some(wf) = &facts.window {
                    finish_window(
                        worker,
                        &mut edges_in,
                        &mut expiries,
                        &probe,
                        writer.as_mut(),
                        &buffers,
                        wf.final_frontier,
                    )?;
                }
                break;
            }
            epoch += 1;
            handed_over = Instant::now();
            match &window {
                Some(spec) => {
                    let until = facts.window.as_ref().map_or(0, |wf| wf.frontiers[epoch as usize - 1]);
                    let copies: Vec<(Edge, Time)> = share.timed_epoch(epoch as usize).collect();
                    expiries.feed_in_time_order(worker, &mut edges_in, spec, copies, until);
                }
                None => {
                    for (e, d) in share.epoch(epoch as usize) {
                        edges_in.update(e, d);
                    }
                }
            }
        }
    }
    edges_in.close();
    while worker.step() {}
    // Peak memory of every process (one report each, from its first worker).
    let first_here = worker.index().is_multiple_of(options.layout.workers.max(1));
    let all_peaks = allgather::allgather(worker, first_here.then(|| metrics::memory().1));

    let Some(w) = writer else { return Ok(None) };
    w.progress.finish();
    let mut reports = Vec::new();
    for ((sink, algorithm), lines) in w.sinks.into_iter().zip(algorithms).zip(&w.sink_changes) {
        let (changes, final_state) = sink.finish().map_err(|e| RunError::Other(e.to_string()))?;
        reports.push(AlgorithmReport { name: algorithm.name(), output_changes: *lines, changes, final_state });
    }
    let (changes, final_state) = (reports[0].changes.clone(), reports[0].final_state.clone());
    let updates = w.updates;
    let summary = RunSummary {
        summary: true,
        algorithm: algorithms.iter().map(|a| a.name()).collect::<Vec<_>>().join(","),
        workers: options.layout.workers,
        processes: options.layout.processes,
        epochs: w.epoch_stats.len() as u64,
        partial,
        updates,
        initial_edges: if is_live {
            w.epoch_stats.first().map(|e| e.updates).unwrap_or(0)
        } else {
            facts.initial_edges
        },
        update_seconds: w.update_seconds,
        updates_per_sec: if w.update_seconds > 0.0 { updates as f64 / w.update_seconds } else { 0.0 },
        latency: LatencySummary::of(&w.latencies),
        load_seconds,
        load_mb_per_sec: facts.bytes as f64 / 1e6 / load_seconds.max(1e-9),
        load_edges_per_sec: facts.initial_edges as f64 / load_seconds.max(1e-9),
        initial_seconds: w.initial_seconds,
        peak_rss_bytes: w.peak_rss.max(metrics::memory().1),
        peak_rss_bytes_all_processes: (options.layout.processes > 1).then(|| all_peaks.iter().flatten().sum()),
        output_changes: w.output_changes,
        wall_seconds: started.elapsed().as_secs_f64(),
        late_updates: window.map(|_| w.late),
        end_seconds: w.end_seconds,
    };
    if let Some(stats) = w.stats {
        stats.summary(&summary).map_err(|e| RunError::Other(e.to_string()))?;
    }
    Ok(Some(RunReport { summary, epochs: w.epoch_stats, changes, final_state, algorithms: reports }))
}

/// The input side of a windowed run on one worker: insertions go in at their window's first
/// time; each retraction is handed to differential dataflow as a future change (at the time the
/// edge leaves its window) once the input frontier is about to pass that time. Holding them back
/// until then, rather than handing them over with the insertion, keeps them out of the
/// arrangements while they are far in the future and leaves none to process after the final
/// frontier (the last window's retractions are never needed).
#[derive(Default)]
struct Expiries {
    /// `(time the copy leaves, edge)`, earliest first.
    due: std::collections::BinaryHeap<std::cmp::Reverse<(Time, Edge)>>,
}

impl Expiries {
    /// Feeds one accepted insertion with event time `time`.
    fn insert(&mut self, edges_in: &mut InputSession<Time, Edge, Diff>, spec: &WindowSpec, edge: Edge, time: Time) {
        let (enter, leave) = spec.lifetime(time);
        edges_in.update_at(edge, enter, 1);
        if let Some(leave) = leave {
            self.due.push(std::cmp::Reverse((leave, edge)));
        }
    }

    /// Feeds a restart's replay of a windowed stream, whose results before `frontier` are already
    /// written: only the collection from `frontier - 1` on has to be right (the change at
    /// `frontier` is taken against it, and the written state accumulated through `frontier - 1`
    /// telescopes to it). So copies that left their window before `frontier - 1` are skipped,
    /// those present at `frontier - 1` enter at the current (earliest) input time, and only later
    /// ones at their own times: the dataflow computes the replay as one step instead of time by
    /// time.
    ///
    /// With `exact` (the run declared [`GraphInput::edge_lifetime`]), present copies enter at
    /// their own times too, so that each still leaves exactly one span after it entered.
    fn replay(
        &mut self,
        edges_in: &mut InputSession<Time, Edge, Diff>,
        spec: &WindowSpec,
        copies: Vec<(Edge, Time)>,
        frontier: Time,
        exact: bool,
    ) {
        for (edge, time) in copies {
            let (enter, leave) = spec.lifetime(time);
            if enter >= frontier || (exact && leave.is_none_or(|leave| leave >= frontier)) {
                self.insert(edges_in, spec, edge, time);
            } else if leave.is_none_or(|leave| leave >= frontier) {
                edges_in.update(edge, 1);
                if let Some(leave) = leave {
                    self.due.push(std::cmp::Reverse((leave, edge)));
                }
            }
        }
    }

    /// Feeds an epoch's accepted copies (this worker's share) in the order they enter, advancing
    /// the input towards `until` (the frontier this epoch reaches; no later copy can enter
    /// before it) and stepping the worker every few thousand copies: an epoch holding many
    /// distinct event times then keeps only a few thousand of them in flight at a time (each
    /// costs progress tracking and buffers until the frontier passes it).
    fn feed_in_time_order(
        &mut self,
        worker: &mut timely::worker::Worker,
        edges_in: &mut InputSession<Time, Edge, Diff>,
        spec: &WindowSpec,
        mut copies: Vec<(Edge, Time)>,
        until: Time,
    ) {
        const CHUNK: usize = 4096;
        copies.sort_unstable_by_key(|&(_, t)| spec.lifetime(t).0);
        let mut chunks = copies.chunks(CHUNK).peekable();
        while let Some(chunk) = chunks.next() {
            for &(edge, time) in chunk {
                self.insert(edges_in, spec, edge, time);
            }
            if let Some(next) = chunks.peek() {
                let next_enter = spec.lifetime(next[0].1).0;
                self.advance(edges_in, next_enter.min(until));
                edges_in.flush();
                worker.step();
            }
        }
    }

    /// Advances the input to `frontier`, first handing over every retraction before it.
    fn advance(&mut self, edges_in: &mut InputSession<Time, Edge, Diff>, frontier: Time) {
        while let Some(&std::cmp::Reverse((leave, edge))) = self.due.peek() {
            if leave >= frontier {
                break;
            }
            self.due.pop();
            edges_in.update_at(edge, leave, -1);
        }
        if edges_in.epoch() < &frontier {
            edges_in.advance_to(frontier);
        }
    }
}

/// The end of a windowed stream: advances the input to the final frontier, waits for it, and
/// writes the last final times. (Retractions scheduled beyond it are never written.)
fn finish_window(
    worker: &mut timely::worker::Worker,
    edges_in: &mut InputSession<Time, Edge, Diff>,
    expiries: &mut Expiries,
    probe: &ProbeHandle<Time>,
    writer: Option<&mut Writer>,
    buffers: &[SinkBuffer],
    frontier: Time,
) -> Result<(), RunError> {
    expiries.advance(edges_in, frontier);
    edges_in.flush();
    let started = Instant::now();
    while probe.less_than(&frontier) {
        worker.step();
    }
    match writer {
        Some(w) => w.finish_window(buffers, frontier, started.elapsed().as_secs_f64()),
        None => Ok(()),
    }
}
