//! The **driver**: runs algorithms over a graph stream, epoch by epoch, on any number of workers
//! and processes, and measures it. One concept per file:
//!
//! * [`input`] — loading and validating files and memory streams into each worker's share;
//! * `packed` — a file's update list as the run keeps it (8 bytes and a bit per update for
//!   unweighted 32-bit ids);
//! * `epochs` — the `EpochSource` trait: "the next epoch's changes and its frontier",
//!   implemented by files, memory streams and live input;
//! * `feed` — handing an epoch to the dataflow (the windowed layer schedules retractions) and
//!   waiting until it is complete: the one step loop;
//! * `writer` — what the writing worker does with a completed epoch: change log, stats,
//!   progress, summary;
//! * `resume` — continuing a change log after a restart;
//! * [`observe`] — the [`Observer`](observe::Observer) trait: whoever else receives every
//!   completed epoch's changes (a SQL mirror, an embedding program);
//! * [`profile`] — per-operator time, records and arrangement sizes from timely's and
//!   differential's logging (`--profile`, `--http`);
//! * `worker` — one worker's run, top to bottom;
//! * `census` — the vertex, edge and triangle counts `--stats` reports per epoch (`first_times`:
//!   its table of each key's earliest time, for streams without deletions);
//! * `connect` — forming a cluster: the processes' sockets, with ripples' own messages and
//!   timeout;
//! * [`layout`], `allgather`, [`metrics`], [`error`] — process layout, the all-worker exchange
//!   of small facts, memory readings, and [`RunError`].
//!
//! The driver uses the layers below it and the two on its side, which never import it:
//! [`crate::live`] (the live front end, whose epochs arrive through `LiveEpochs`) and
//! [`crate::sinks`] (result files, change logs, stats).
//!
//! Worker 0 of process 0 is the only writer: it measures each epoch's latency (from handing its
//! input over until the output frontier passes the epoch), counts the output changes, samples
//! memory, writes the change log, stats and progress, and at the end the result file and the
//! summary. Its files are byte-identical for any number of workers and processes.

pub(crate) mod allgather;
pub(crate) mod census;
mod cluster;
pub(crate) mod connect;
pub(crate) mod epochs;
pub mod error;
pub(crate) mod feed;
mod first_times;
pub mod input;
pub mod layout;
pub mod metrics;
pub mod observe;
mod packed;
pub mod placement;
pub mod profile;
pub(crate) mod resume;
mod stop;
pub(crate) mod worker;
pub(crate) mod writer;

use std::path::PathBuf;
use std::sync::Arc;

pub use error::RunError;
pub use input::{FileSource, InputFailure, MemoryStream, Source};
pub use layout::Layout;
pub use metrics::{EpochStats, LatencySummary};

use crate::dataflow::Algorithm;
use crate::sinks::{Change, RunSummary};
use crate::sources::window::WindowSpec;
use crate::types::{Node, Time};

/// Everything a run needs besides the algorithm.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Workers per process, processes, this process's index and the hostfile's addresses.
    pub layout: Layout,
    /// Where the stream comes from: files, a stream in memory, or live input.
    pub source: Source,
    /// Final result, `key value` per line, sorted by key.
    pub output: Option<PathBuf>,
    /// Change log, `epoch key value diff` per line (`-` for stdout).
    pub changes: Option<PathBuf>,
    /// Per-epoch JSON stats and a summary.
    pub stats: Option<PathBuf>,
    /// With `stats`: count the graph (its present vertices and edges, and triangles when they
    /// run) with every epoch. The census keeps every distinct edge; on an insert-only stream
    /// that costs more than WCC itself, so a run that measures the algorithm turns it off
    /// (`--no-census`; the experiments' cells do).
    pub census: bool,
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
    /// Windowed file runs: every late update and what happened to it (`--late-output`; live
    /// input writes it from the front end, see [`crate::live::LiveConfig::late_output`]).
    pub late_output: Option<PathBuf>,
    /// Who else receives every completed epoch's changes (see [`observe`]): called by the
    /// writing worker of process 0 only.
    pub observers: observe::Observers,
    /// Collect a per-operator profile from timely's and differential's logging (see
    /// [`profile`]); process 0's decides for every process of a cluster.
    pub profiler: Option<profile::Profiler>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            layout: Layout::default(),
            source: Source::Memory(Arc::new(MemoryStream { batch: 1, ..MemoryStream::default() })),
            output: None,
            changes: None,
            stats: None,
            census: true,
            output_dir: None,
            progress: false,
            collect: false,
            keep_state: false,
            trusted_input: false,
            time_limit: None,
            window: None,
            late_output: None,
            observers: observe::Observers::default(),
            profiler: None,
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
    /// The run's summary, as written to the end of `--stats`.
    pub summary: RunSummary,
    /// Every epoch's statistics, in order (epoch 0 is the initial graph).
    pub epochs: Vec<EpochStats>,
    /// Every change, in the order written, when `collect` was set.
    pub changes: Option<Vec<Change>>,
    /// The final result `(key, value)`, sorted, when `keep_state` was set (a key with several
    /// values appears once per value).
    pub final_state: Option<Vec<(Node, u64)>>,
    /// Every algorithm's `(vertex, u64)` output, in order (the first is also in `changes` and
    /// `final_state`).
    pub algorithms: Vec<AlgorithmReport>,
    /// Every typed output ([`crate::dataflow::typed`]), in build order.
    pub outputs: Vec<OutputReport>,
}

/// One typed output in a run ([`crate::dataflow::typed`]).
#[derive(Clone, Debug, Default)]
pub struct OutputReport {
    /// `<dataflow>.<output>` (its file names with `--output-dir`).
    pub name: String,
    /// Change-log lines it produced over the run.
    pub output_changes: u64,
    /// Every change, in the order written, when `collect` was set.
    pub changes: Option<Vec<crate::sinks::RowChange>>,
    /// Its final rows `(key text, value text)`, sorted by text, when `keep_state` was set.
    pub final_state: Option<Vec<(String, String)>>,
}

/// One algorithm's outputs in a run.
#[derive(Clone, Debug, Default)]
pub struct AlgorithmReport {
    /// The algorithm's name (its file names with `--output-dir`).
    pub name: String,
    /// Change-log lines it produced over the run.
    pub output_changes: u64,
    /// Every change, in the order written, when `collect` was set.
    pub changes: Option<Vec<Change>>,
    /// Its final result `(key, value)`, sorted, when `keep_state` was set.
    pub final_state: Option<Vec<(Node, u64)>>,
}

/// What a live run hands its workers: one receiver (and the waker its sends unpark) per local
/// worker, the shared progress counters, and the last epoch already in the change log.
pub(crate) struct LiveShared {
    receivers: std::sync::Mutex<Vec<Option<std::sync::mpsc::Receiver<crate::live::EpochBatch>>>>,
    wakers: Vec<crate::live::Waker>,
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
/// derived arrangements ([`GraphInput`](crate::dataflow::GraphInput)'s vertex and edge sets). Outputs go to
/// `options.output_dir` (`<name>.out`, `<name>.changes`), or, for a single algorithm, to
/// `options.output` and `options.changes`.
pub fn run_many(options: RunOptions, algorithms: Vec<Box<dyn Algorithm>>) -> Result<Option<RunReport>, RunError> {
    let config = options.layout.timely_config()?;
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
            // The front end feeds every local worker and applies the run's window rules: its
            // configuration must say the same as the run's.
            if cfg.workers != options.layout.workers || cfg.window != options.window {
                return Err(RunError::Other(format!(
                    "the live input is configured for {} worker(s) and window {:?}, but the run has {} and {:?}",
                    cfg.workers, cfg.window, options.layout.workers, options.window
                )));
            }
            let mut cfg = cfg.clone();
            cfg.records = crate::types::RecordCheck::all(algorithm.iter().filter_map(|a| a.record_check()).collect());
            let handle = crate::live::start(cfg.clone())?;
            for w in &handle.warnings {
                eprintln!("ripples: warning: {}", w);
            }
            if let Some(addr) = handle.local_addr {
                if options.progress {
                    eprintln!("ripples: listening on {}", addr);
                }
            }
            options.observers.live_started(&observe::LiveStarted {
                next_epoch: handle.next_epoch,
                local_addr: handle.local_addr,
                progress: handle.progress.clone(),
            });
            handle.progress.attach();
            let shared = LiveShared {
                receivers: std::sync::Mutex::new(handle.receivers.into_iter().map(Some).collect()),
                wakers: handle.wakers,
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
    let addresses = options.layout.addresses()?;
    let resumable = matches!(&options.source, Source::Live(cfg) if cfg.state_dir.is_some());
    let mut options = options;
    // A memory stream owned by this run alone: its initial graph leaves it, cut into the local
    // workers' shares, so that only one copy exists while epoch 0 is fed (and none after).
    let (workers, process) = (options.layout.workers.max(1), options.layout.process);
    let taken = input::TakenInitial::take(
        &mut options.source,
        workers * options.layout.processes.max(1),
        process * workers..(process + 1) * workers,
    );
    let process_input = input::ProcessInput { taken, updates: input::SharedUpdates::new(workers) };
    let options = Arc::new(options);
    let live_for_workers = live.clone();
    // The per-time counts the algorithms of this process report (fallback rebuilds, a census).
    let counts = crate::dataflow::AlgorithmCounts::default();
    // Where the workers of this process stop at the writer's time limit (see `worker::feed_epochs`).
    let stop = Arc::new(stop::Stop::default());
    let supervision = cluster::Supervision::start();
    let mark = supervision.marker();
    let guards =
        communication(&options.layout, config.communication, &addresses, supervision.hooks(), options.progress)
            .and_then(|(allocators, others)| {
                timely::execute::execute_from(allocators, others, config.worker, move |worker| {
                    mark();
                    worker::run_worker(
                        worker,
                        &options,
                        &algorithm,
                        live_for_workers.as_deref(),
                        &counts,
                        &process_input,
                        &stop,
                    )
                })
                .map_err(|e| RunError::Other(format!("cannot start workers: {}", e)))
            });
    let mut report = None;
    let mut failure = None;
    let joined = match guards {
        Ok(guards) => supervision.join(|| guards.join(), &addresses, resumable),
        Err(e) => supervision.join(|| (), &addresses, resumable).and(Err(e)),
    };
    match joined {
        Ok(results) => {
            for result in results {
                match result {
                    Ok(Ok(Some(r))) => report = Some(r),
                    Ok(Ok(None)) => {}
                    Ok(Err(e)) => failure = failure.or(Some(e)),
                    Err(panic) => failure = failure.or(Some(RunError::WorkerFailed(panic))),
                }
            }
        }
        Err(e) => failure = Some(e),
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

/// timely's communication for `layout`: threads of one process, or a cluster whose sockets
/// [`connect`] opened (ripples' own messages and timeout, none of timely's prints).
fn communication(
    layout: &Layout,
    config: timely::CommunicationConfig,
    addresses: &[String],
    hooks: timely::communication::Hooks,
    progress: bool,
) -> Result<(Vec<timely::communication::AllocatorBuilder>, Box<dyn std::any::Any + Send>), RunError> {
    use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
    use timely::communication::allocator::ProcessBuilder;
    if layout.processes <= 1 {
        return config.try_build_with(hooks).map_err(|e| RunError::Other(format!("cannot start workers: {}", e)));
    }
    let sockets = connect::connect(addresses, layout.process, layout.connect_timeout, progress)?;
    let threads = layout.workers;
    let allocators = ProcessBuilder::new_typed_vector(threads, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) = initialize_networking_from_sockets(allocators, sockets, layout.process, threads, hooks)
        .map_err(|e| RunError::Other(format!("cannot start the cluster's connections: {}", e)))?;
    let builders = builders.into_iter().map(timely::communication::AllocatorBuilder::Tcp).collect();
    Ok((builders, Box::new(guard)))
}
