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
    /// Report progress on stderr.
    pub progress: bool,
    /// Keep every change in memory and return it in the report (tests, embedding).
    pub collect: bool,
    /// Return the final result in the report (`RunReport::final_state`).
    pub keep_state: bool,
    /// Stop feeding new epochs once the update epochs have run this long; the report is then
    /// marked partial (it covers the prefix of the stream that was processed).
    pub time_limit: Option<std::time::Duration>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            layout: Layout::default(),
            source: Source::Memory(Arc::new(MemoryStream { batch: 1, ..MemoryStream::default() })),
            output: None,
            changes: None,
            stats: None,
            progress: false,
            collect: false,
            keep_state: false,
            time_limit: None,
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

/// Runs `algorithm` as configured. Returns the report of the writing worker (process 0), or
/// `None` in other processes.
pub fn run<A: Algorithm>(options: RunOptions, algorithm: A) -> Result<Option<RunReport>, RunError> {
    let config = options.layout.timely_config().map_err(|e| RunError::Other(format!("{:#}", e)))?;
    let algorithm = Arc::new(algorithm);
    let options = Arc::new(options);
    let guards = timely::execute(config, move |worker| run_worker(worker, &options, &*algorithm))
        .map_err(|e| RunError::Other(format!("cannot start workers: {}", e)))?;
    let mut report = None;
    for result in guards.join() {
        match result {
            Ok(Ok(Some(r))) => report = Some(r),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => return Err(e),
            Err(panic) => return Err(RunError::Other(format!("a worker failed: {}", panic))),
        }
    }
    Ok(report)
}

fn run_worker<A: Algorithm>(
    worker: &mut timely::worker::Worker,
    options: &RunOptions,
    algorithm: &A,
) -> Result<Option<RunReport>, RunError> {
    let started = Instant::now();
    let index = worker.index();
    let writer = index == 0;

    let (mut share, facts) = input::load(worker, &options.source)?;
    let load_seconds = started.elapsed().as_secs_f64();

    // Sinks are created before the dataflow, so that an unwritable output stops the run early.
    // Only the writer creates them; the others learn of a failure through `allgather`.
    let mut sink = None;
    let mut stats = None;
    let mut sink_error = None;
    if writer {
        match ResultSink::new(
            algorithm.value_format(),
            options.changes.as_deref(),
            options.output.as_deref(),
            options.collect,
            options.keep_state,
        ) {
            Ok(s) => sink = Some(s),
            Err(e) => sink_error = Some(e.to_string()),
        }
        if let Some(path) = &options.stats {
            match StatsWriter::create(path) {
                Ok(s) => stats = Some(s),
                Err(e) => sink_error = Some(e.to_string()),
            }
        }
    }
    let errors = allgather::allgather(worker, sink_error);
    if let Some(e) = errors.into_iter().flatten().next() {
        return Err(RunError::Other(e));
    }

    let insert_only = !facts.has_deletions;
    let buffer: SinkBuffer = Rc::new(RefCell::new(BTreeMap::new()));
    let mut edges_in: InputSession<Time, Edge, Diff> = InputSession::new();
    let mut vertices_in: InputSession<Time, Node, Diff> = InputSession::new();
    let probe: ProbeHandle<Time> = ProbeHandle::new();
    {
        let buffer = buffer.clone();
        let probe = probe.clone();
        let edges_in = &mut edges_in;
        let vertices_in = &mut vertices_in;
        worker.dataflow::<Time, _, _>(move |scope| {
            let input = GraphInput {
                edges: edges_in.to_collection(scope),
                vertices: vertices_in.to_collection(scope),
                insert_only,
            };
            let result = algorithm.build(input);
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
        });
    }

    let total_epochs = 1 + share.epochs() as u64;
    let mut progress = Progress::new(total_epochs, writer && options.progress);
    let mut epoch_stats: Vec<EpochStats> = Vec::new();
    let mut latencies = Vec::new();
    let mut output_changes = 0u64;
    let mut peak_rss = 0u64;

    // Epoch 0: the initial graph.
    for v in std::mem::take(&mut share.vertices) {
        vertices_in.update(v, 1);
    }
    for e in std::mem::take(&mut share.initial) {
        edges_in.update(e, 1);
    }
    vertices_in.close();
    let update_epochs = share.epochs() as u64;
    let mut epoch: Time = 0;
    let mut update_seconds = 0.0;
    let mut initial_seconds = 0.0;
    let mut partial = false;
    loop {
        edges_in.advance_to(epoch + 1);
        edges_in.flush();
        let handed_over = Instant::now();
        while probe.less_than(&(epoch + 1)) {
            worker.step();
        }
        let latency = handed_over.elapsed().as_secs_f64();
        let updates = if epoch == 0 { facts.initial_edges } else { facts.epoch_updates[epoch as usize - 1] };
        if epoch == 0 {
            initial_seconds = latency;
        } else {
            update_seconds += latency;
            latencies.push(latency * 1000.0);
        }
        if let Some(sink) = &mut sink {
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
            let lines = sink.epoch(epoch, changes).map_err(|e| RunError::Other(e.to_string()))?;
            output_changes += lines;
            let (rss, hwm) = metrics::memory();
            peak_rss = peak_rss.max(hwm);
            let s = EpochStats { epoch, updates, latency_ms: latency * 1000.0, output_changes: lines, rss_bytes: rss };
            if let Some(w) = &mut stats {
                w.epoch(&s).map_err(|e| RunError::Other(e.to_string()))?;
            }
            progress.epoch(epoch, updates, latency * 1000.0);
            epoch_stats.push(s);
        }
        let out_of_time = options
            .time_limit
            .map(|limit| epoch > 0 && update_seconds >= limit.as_secs_f64())
            .unwrap_or(false);
        if out_of_time {
            partial = true;
            break;
        }
        if epoch == update_epochs {
            break;
        }
        epoch += 1;
        for (e, d) in share.epoch(epoch as usize) {
            edges_in.update(e, d);
        }
    }
    edges_in.close();
    while worker.step() {}
    progress.finish();

    let Some(sink) = sink else { return Ok(None) };
    let (changes, final_state) = sink.finish().map_err(|e| RunError::Other(e.to_string()))?;
    let updates: u64 = facts.epoch_updates.iter().take(epoch as usize).sum();
    let summary = RunSummary {
        summary: true,
        algorithm: algorithm.name(),
        workers: options.layout.workers,
        processes: options.layout.processes,
        epochs: epoch + 1,
        partial,
        updates,
        initial_edges: facts.initial_edges,
        update_seconds,
        updates_per_sec: if update_seconds > 0.0 { updates as f64 / update_seconds } else { 0.0 },
        latency: LatencySummary::of(&latencies),
        load_seconds,
        load_mb_per_sec: facts.bytes as f64 / 1e6 / load_seconds.max(1e-9),
        load_edges_per_sec: facts.initial_edges as f64 / load_seconds.max(1e-9),
        initial_seconds,
        peak_rss_bytes: peak_rss.max(metrics::memory().1),
        output_changes,
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    if let Some(w) = stats {
        w.summary(&summary).map_err(|e| RunError::Other(e.to_string()))?;
    }
    Ok(Some(RunReport { summary, epochs: epoch_stats, changes, final_state }))
}
