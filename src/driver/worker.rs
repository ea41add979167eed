//! **One worker's run**, top to bottom. `run_worker` is the steps of a run, each a call with a
//! name:
//!
//! 1. `load`: read and validate this worker's share of the input (nothing is fed unless the
//!    whole input is valid, on every worker);
//! 2. `StreamShape::of`: what the stream promises (insert-only? every edge's lifetime known?),
//!    which lets algorithms pick their fast paths (`refuse_unordered`: the order-dependent
//!    algorithms refuse a stream that deletes or is windowed);
//! 3. `epoch_source`: where the epochs come from (files, memory, live input, or nothing);
//! 4. `build_dataflow`: the algorithms over the shared input, each output ending in a sink
//!    operator that routes its changes to the writer (a dataflow that fails to build stops every
//!    worker here, before any file is created); error collections are broadcast to every worker;
//! 5. `open_writer`: the writing worker creates the outputs the build produced (an unwritable
//!    file stops every worker before anything is computed);
//! 6. `feed_epochs`: the feed loop, the one place epochs are closed; after each epoch completes,
//!    every worker checks the error collections (`Failures`) and all stop at the same epoch;
//! 7. close the input, gather every process's peak memory, and report.

use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::time::{Duration, Instant};

use differential_dataflow::input::InputSession;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::Probe;
use timely::dataflow::ProbeHandle;
use timely::worker::Worker;

use super::census::Census;
use super::epochs::{EpochSource, EventEpoch, FileEpochs, LiveEpochs, NoEpochs};
use super::feed::{ArrivalsInput, Feeder, RecordsInput};
use super::input::{self, InputFacts, Source, WorkerShare};
use super::resume::Resume;
use super::stop::{last_epoch, Stop, StopChannel};
use super::writer::{Buffer, OutputPlan, RowBuffer, RunFacts, SinkBuffer, Writer};
use super::{allgather, metrics, LiveShared, RunError, RunOptions, RunReport};
use crate::dataflow::gather::to_first_worker;
use crate::dataflow::typed::Outputs;
use crate::dataflow::{Algorithm, AlgorithmCounts, GraphInput};
use crate::sources::window::{LatePolicy, WindowSpec};
use crate::types::{Diff, Node, Time};

/// What every process does as process 0 says (see [`same_dataflow_everywhere`]).
struct Agreed {
    count_graph: bool,
    profile: bool,
}

/// In a cluster, every process must build the same dataflow: each worker learns every
/// process's algorithms and their parameters, and a difference from process 0's stops the run
/// on every process (an input error: the flags differ), before anything is loaded. Returns
/// whether the graph is counted for `--stats` (the census operators): as process 0, which
/// writes the stats, says, so that every process builds them when it does (a process that built
/// other operators than its peers would wait for them for ever), and whether the workers profile
/// (the same reason: the profile is gathered at the end).
fn same_dataflow_everywhere(
    worker: &mut Worker,
    options: &RunOptions,
    algorithms: &[Box<dyn Algorithm>],
) -> Result<Agreed, RunError> {
    let count_graph = options.stats.is_some() && options.census;
    if options.layout.processes <= 1 {
        return Ok(Agreed { count_graph, profile: options.profiler.is_some() });
    }
    let describe = |a: &dyn Algorithm| match a.parameters() {
        p if p.is_empty() => a.name(),
        p => format!("{} {}", a.name(), p),
    };
    let mine: Vec<String> = algorithms.iter().map(|a| describe(a.as_ref())).collect();
    let all = allgather::allgather(worker, (mine, count_graph, options.profiler.is_some()));
    let agreed = Agreed { count_graph: all[0].1, profile: all[0].2 };
    let all: Vec<Vec<String>> = all.into_iter().map(|(described, _, _)| described).collect();
    let workers = options.layout.workers.max(1);
    match all.iter().position(|theirs| theirs != &all[0]) {
        None => Ok(agreed),
        Some(w) => Err(RunError::Input(format!(
            "the processes build different dataflows: process 0 runs {} but process {} runs {}; give every process the same flags",
            all[0].join(", "),
            w / workers,
            all[w].join(", ")
        ))),
    }
}

/// Runs one worker (see the module docs). Returns the report on the writing worker.
pub(crate) fn run_worker(
    worker: &mut Worker,
    options: &RunOptions,
    algorithms: &[Box<dyn Algorithm>],
    live: Option<&LiveShared>,
    counts: &AlgorithmCounts,
    process_input: &input::ProcessInput,
    stop: &std::sync::Arc<Stop>,
) -> Result<Option<RunReport>, RunError> {
    let started = Instant::now();
    let Agreed { count_graph, profile } = same_dataflow_everywhere(worker, options, algorithms)?;
    // Registered before any dataflow of the run is built (see `profile`). A process without a
    // profiler of its own still contributes its workers' figures to process 0's.
    let profiler = profile.then(|| options.profiler.clone().unwrap_or_default());
    let profiling = profiler.as_ref().and_then(|p| p.install(worker));
    let (mut share, facts) = load(worker, options, process_input, placement(worker, options, algorithms))?;
    let load_seconds = started.elapsed().as_secs_f64();
    write_late_output(worker, options, &facts)?;
    let shape = StreamShape::of(options, live, &facts);
    refuse_unordered(options, algorithms, &shape)?;
    let vertices = std::mem::take(&mut share.vertices);
    let mut source = epoch_source(worker, options, live, share, facts.clone(), shape.insert_only)?;
    // Built before the writer opens its files: a dataflow that fails to build (on every worker
    // alike) stops the run with nothing written.
    let Built { edges_in, arrivals_in, records_in, probe, buffers, census, plans, mut failures } =
        build_dataflow(worker, algorithms, &shape, vertices, count_graph, counts)?;
    let processes = options.layout.processes;
    let mut stop_channel = (processes > 1).then(|| StopChannel::build(worker, stop, processes, options.layout.workers));
    let mut writer = open_writer(worker, options, &plans, live, source.expected())?;
    if let (Some(writer), Some(census)) = (writer.as_mut(), census) {
        writer.count_graph(census);
    }
    if let Some(writer) = writer.as_mut().filter(|_| counts.fallbacks_active()) {
        writer.count_fallbacks(counts.clone());
    }
    let mut feeder = Feeder::new(edges_in, options.window, arrivals_in, records_in).with_probe(probe.clone());
    let partial = feed_epochs(
        worker,
        source.as_mut(),
        &mut feeder,
        &probe,
        writer.as_mut(),
        &buffers,
        &mut failures,
        (options.time_limit, stop, stop_channel.as_mut()),
        (
            shape.edge_lifetime.is_some(),
            options.layout.processes > 1,
            options.layout.processes > 1 && algorithms.iter().any(|a| a.round_trips(shape.insert_only)),
        ),
    )?;
    if let Some(p) = &profiling {
        p.keep_arrangements(worker);
    }
    feeder.close();
    if let Some(channel) = stop_channel.take() {
        channel.close();
    }
    while super::cluster::step_or_park(worker) {}
    // Peak memory of every process (one report each, from its first worker).
    let first_here = worker.index().is_multiple_of(options.layout.workers.max(1));
    let all_peaks = allgather::allgather(worker, first_here.then(|| metrics::memory().1));
    if profile {
        let mine = profiling.as_ref().map(|p| p.finish(worker)).unwrap_or_default();
        let all = allgather::allgather(worker, mine);
        if let (Some(p), true) = (profiling.as_ref(), writer.is_some()) {
            p.profiler().set_final(super::profile::merge(all));
        }
    }
    let Some(writer) = writer else { return Ok(None) };
    let facts = RunFacts {
        partial,
        live: matches!(options.source, Source::Live(_)),
        initial_edges: facts.initial_edges,
        bytes: facts.bytes,
        load_seconds,
        wall_seconds: started.elapsed().as_secs_f64(),
        all_peaks,
    };
    writer.finish(options, algorithms, facts).map(Some)
}

/// In a cluster whose algorithm routes its input edges by the edge alone
/// ([`Algorithm::input_route`]): the edges this process's workers feed. Not with an algorithm
/// that reads the arrival order (where an edge is fed is part of that order), nor with several
/// algorithms (the others' dataflows may spread the edges themselves).
fn placement(worker: &Worker, options: &RunOptions, algorithms: &[Box<dyn Algorithm>]) -> input::Placements {
    let (processes, workers) = (options.layout.processes, options.layout.workers.max(1));
    let [algorithm] = algorithms else { return input::Placements::default() };
    if processes <= 1 || algorithm.arrival_order() {
        return input::Placements::default();
    }
    let first = worker.index() / workers * workers;
    let place = |insert_only| {
        let route = algorithm.input_route(insert_only)?;
        Some(input::Placement { route, peers: worker.peers(), first, workers })
    };
    input::Placements { insert_only: place(true), deleting: place(false) }
}

/// Step 1: this worker's share of the files or of the stream in memory, validated by every
/// worker. (Live input is read by the front end instead; its vertex file here.)
fn load(
    worker: &mut Worker,
    options: &RunOptions,
    process_input: &input::ProcessInput,
    placement: input::Placements,
) -> Result<(WorkerShare, InputFacts), RunError> {
    match &options.source {
        Source::Live(cfg) => {
            let mut share = WorkerShare::default();
            if let Some(path) = &cfg.vertices {
                share.vertices = input::load_vertices(worker, path)?;
            }
            Ok((share, InputFacts::default()))
        }
        source => {
            Ok(input::load(worker, source, options.trusted_input, options.window.as_ref(), process_input, placement)?)
        }
    }
}

/// Windowed file runs with `--late-output`: the writing worker records every late update (the
/// loader decided them all).
fn write_late_output(worker: &Worker, options: &RunOptions, facts: &InputFacts) -> Result<(), RunError> {
    // (Live runs have no loader facts: their front end writes the file.)
    let (Some(path), Some(window), 0) = (&options.late_output, &facts.window, worker.index()) else { return Ok(()) };
    let mut out = crate::sources::window::LateOutput::create(path)?;
    for (origin, reason, action) in &window.late_lines {
        out.record_described(origin, reason, action)?;
    }
    Ok(out.flush()?)
}

/// Step 2: what the stream promises the algorithms.
struct StreamShape {
    /// The stream never deletes (WCC's insert-only fast path applies).
    insert_only: bool,
    /// Windowed runs without static edges: every copy entering at `t` leaves at `t + span`.
    edge_lifetime: Option<Time>,
    /// In a cluster, the workers of each process (`GraphInput::process_workers`).
    process_workers: Option<usize>,
}

impl StreamShape {
    fn of(options: &RunOptions, live: Option<&LiveShared>, facts: &InputFacts) -> Self {
        // A windowed stream retracts every edge when it leaves its window: never insert-only.
        let window = options.window;
        let insert_only = window.is_none()
            && match &options.source {
                Source::Live(cfg) => cfg.insert_only,
                _ => !facts.has_deletions,
            };
        // Live input in other processes learns nothing of the stream; they must agree, so
        // multi-process live runs do not declare it.
        let static_edges = match (&options.source, live) {
            (Source::Live(_), Some(l)) if options.layout.processes == 1 => l.static_edges,
            (Source::Live(_), _) => true,
            _ => facts.initial_edges > 0,
        };
        // A late update applied at the watermark lives shorter than a span: no lifetime promise.
        let exact = |spec: &WindowSpec| !static_edges && spec.late != LatePolicy::Apply;
        let process_workers = (options.layout.processes > 1).then_some(options.layout.workers.max(1));
        StreamShape { insert_only, edge_lifetime: window.filter(exact).map(|spec| spec.span), process_workers }
    }
}

/// Step 2b: the algorithms that depend on arrival order (`spanner`, `matching`) need an
/// insert-only stream without windows; any other stream stops the run here, before anything is
/// written, with the same message on every worker (every worker knows the stream's shape).
fn refuse_unordered(
    options: &RunOptions,
    algorithms: &[Box<dyn Algorithm>],
    shape: &StreamShape,
) -> Result<(), RunError> {
    let Some(algorithm) = algorithms.iter().find(|a| a.arrival_order()) else { return Ok(()) };
    let why = if options.window.is_some() {
        "it cannot run over --window/--tumbling windows (edges leave their window)"
    } else if shape.insert_only {
        return Ok(());
    } else if matches!(options.source, Source::Live(_)) {
        "live input must be declared --insert-only"
    } else {
        "the update stream deletes edges"
    };
    Err(RunError::Input(format!(
        "{} depends on the order edges arrive in and handles insertions only: {}",
        algorithm.name(),
        why
    )))
}

/// Step 3: where this worker's epochs come from.
fn epoch_source(
    worker: &Worker,
    options: &RunOptions,
    live: Option<&LiveShared>,
    share: WorkerShare,
    facts: InputFacts,
    insert_only: bool,
) -> Result<Box<dyn EpochSource>, RunError> {
    let locals = options.layout.workers;
    let local = worker.index() % locals;
    Ok(match (live, &options.source) {
        // Live input (process 0): every local worker receives every epoch and feeds its slice.
        (Some(live), _) => {
            let receiver = live.receivers.lock().map_err(|_| RunError::Other("poisoned".into()))?[local]
                .take()
                .ok_or_else(|| RunError::Other("live input receiver taken twice".into()))?;
            // Epochs sent to this worker unpark it: it parks while it waits for them.
            live.wakers[local].register();
            Box::new(LiveEpochs::new(
                receiver,
                (local, locals),
                options.window,
                live.written_through,
                insert_only,
                live.progress.clone(),
            ))
        }
        // Live input in another process: nothing to feed here.
        (None, Source::Live(_)) => Box::new(NoEpochs),
        _ => Box::new(FileEpochs::new(share, facts)),
    })
}

/// Step 5: the writing worker (worker 0) creates its outputs; every worker learns whether that
/// failed.
fn open_writer(
    worker: &mut Worker,
    options: &RunOptions,
    plans: &[OutputPlan],
    live: Option<&LiveShared>,
    expected: u64,
) -> Result<Option<Writer>, RunError> {
    let created = (worker.index() == 0).then(|| {
        let resume = Resume::plan(live.and_then(|l| l.state_dir.as_deref()), live.and_then(|l| l.written_through))?;
        Writer::create(options, plans, resume, expected).map(|w| w.with_live(live.map(|l| l.progress.clone())))
    });
    let failure = created.as_ref().and_then(|c| c.as_ref().err()).map(|e| e.to_string());
    let failures = allgather::allgather(worker, failure);
    match created {
        Some(Err(e)) => Err(e),
        _ if failures.iter().any(Option::is_some) => {
            Err(RunError::Other(failures.into_iter().flatten().next().unwrap_or_default()))
        }
        created => created.transpose(),
    }
}

/// What step 5 built.
struct Built {
    edges_in: InputSession<Time, crate::types::Edge, Diff>,
    /// When an algorithm depends on arrival order.
    arrivals_in: Option<ArrivalsInput>,
    /// When an algorithm reads records.
    records_in: Option<RecordsInput>,
    /// At the sinks.
    probe: ProbeHandle<Time>,
    buffers: Buffers,
    /// `--stats`: the vertex, edge and triangle counts.
    census: Option<Census>,
    /// What each algorithm's build produced.
    plans: Vec<OutputPlan>,
    /// The dataflows' error collections.
    failures: Failures,
}

/// Where the sink operators put their output changes.
#[derive(Default)]
struct Buffers {
    /// The `(vertex, u64)` outputs, in algorithm order.
    vertex: Vec<SinkBuffer>,
    /// The typed outputs, in build order.
    rows: Vec<RowBuffer>,
}

/// The dataflows' error collections, broadcast to every worker, so that every worker sees an
/// error at the same epoch and all stop there together.
#[derive(Default)]
struct Failures {
    /// Per dataflow with errors: its name, the buffered error changes, and the errors present.
    watched: Vec<(String, Buffer<String>, BTreeMap<String, Diff>)>,
}

impl Failures {
    /// After every time below `until` has completed: the first error present, as the run's
    /// error. `epoch`: the epoch being closed (`None` in windowed runs, which name the event time).
    fn check(&mut self, until: Time, epoch: Option<Time>) -> Result<(), RunError> {
        let mut first: Option<(Time, String, String)> = None;
        for (name, buffer, present) in &mut self.watched {
            // Stops at the first time with an error present (the run ends there).
            let _ = buffer.borrow_mut().drain_below(until, |t, changes| {
                for (message, diff) in changes {
                    let count = present.entry(message.clone()).or_insert(0);
                    *count += diff;
                    if *count == 0 {
                        present.remove(&message);
                    }
                }
                match present.iter().find(|(_, c)| **c > 0) {
                    Some((message, _)) => {
                        let at = epoch.unwrap_or(t);
                        if first.as_ref().is_none_or(|(e, _, _)| at < *e) {
                            first = Some((at, name.clone(), message.clone()));
                        }
                        Err(())
                    }
                    None => Ok(()),
                }
            });
        }
        match first {
            Some((epoch, algorithm, message)) => Err(RunError::Dataflow { algorithm, epoch, message }),
            None => Ok(()),
        }
    }
}

/// The sink operator: sends every change of `collection` to worker 0 (or, `broadcast`, to every
/// worker), which buffers it by time; the probe is at its input. Containers travel and are kept
/// whole ([`to_first_worker`], [`Pending`](super::writer::Pending)): nothing is copied record
/// by record within the epoch's latency.
fn sink<D: differential_dataflow::ExchangeData>(
    collection: differential_dataflow::VecCollection<'_, Time, D, Diff>,
    buffer: Buffer<D>,
    probe: &ProbeHandle<Time>,
    broadcast: bool,
) {
    use timely::dataflow::channels::pact::{ParallelizationContract, Pipeline};
    use timely::dataflow::operators::vec::Broadcast;
    fn buffered<D: differential_dataflow::ExchangeData, P: ParallelizationContract<Time, Vec<(D, Time, Diff)>>>(
        stream: timely::dataflow::StreamVec<'_, Time, (D, Time, Diff)>,
        pact: P,
        buffer: Buffer<D>,
        probe: &ProbeHandle<Time>,
    ) {
        stream
            .unary_frontier::<timely::container::CapacityContainerBuilder<Vec<()>>, _, _, _>(
                pact,
                "ResultSink",
                move |_capability, _info| {
                    move |(input, _frontier), _output| {
                        input.for_each(|_time, data| buffer.borrow_mut().push(data));
                    }
                },
            )
            .probe_with(probe);
    }
    if broadcast {
        buffered(collection.inner.broadcast(), Pipeline, buffer, probe);
    } else {
        buffered(collection.inner, to_first_worker(), buffer, probe);
    }
}

/// Step 4: builds every algorithm over one shared input, each ending in a sink operator that
/// sends its output changes to worker 0 and buffers them there by time, and with
/// `count_graph` (`--stats`) the census of the graph; the algorithms report their per-time
/// counts (fallback rebuilds, a census of their own) in `counts`. Feeds the vertex-file vertices
/// (they never change) and returns the inputs, the probe at the sinks and the buffers.
fn build_dataflow(
    worker: &mut Worker,
    algorithms: &[Box<dyn Algorithm>],
    shape: &StreamShape,
    vertices: Vec<Node>,
    count_graph: bool,
    counts: &AlgorithmCounts,
) -> Result<Built, RunError> {
    if count_graph {
        // Before the algorithms are built: one that keeps its own census records it only when read.
        counts.want_census();
    }
    let mut edges_in = InputSession::new();
    let mut arrivals_in: Option<ArrivalsInput> = algorithms.iter().any(|a| a.arrival_order()).then(InputSession::new);
    let mut records_in: Option<RecordsInput> =
        algorithms.iter().any(|a| a.record_check().is_some()).then(InputSession::new);
    let mut vertices_in: InputSession<Time, Node, Diff> = InputSession::new();
    let probe: ProbeHandle<Time> = ProbeHandle::new();
    let built;
    {
        let probe = probe.clone();
        let edges_in = &mut edges_in;
        let vertices_in = &mut vertices_in;
        let arrivals_in = &mut arrivals_in;
        let records_in = &mut records_in;
        let (insert_only, edge_lifetime, process_workers) =
            (shape.insert_only, shape.edge_lifetime, shape.process_workers);
        let counts = counts.clone();
        built = worker.dataflow::<Time, _, _>(move |scope| -> Result<_, RunError> {
            let input = GraphInput::new(edges_in.to_collection(scope), vertices_in.to_collection(scope), insert_only)
                .with_edge_lifetime(edge_lifetime)
                .with_process_workers(process_workers)
                .with_counts(Some(counts))
                .with_arrivals(arrivals_in.as_mut().map(|a| a.to_collection(scope)))
                .with_records(records_in.as_mut().map(|r| r.to_collection(scope)));
            let mut triangles = None;
            let (mut buffers, mut plans, mut failures) = (Buffers::default(), Vec::new(), Failures::default());
            for algorithm in algorithms {
                let name = algorithm.name();
                let Outputs { vertex, rows, errors, .. } = algorithm
                    .build_outputs(input.clone())
                    .map_err(|message| RunError::Build { algorithm: name.clone(), message })?;
                let mut plan = OutputPlan { algorithm: name.clone(), vertex: None, rows: Vec::new() };
                if let Some((result, format)) = vertex {
                    if count_graph && name == "triangles" {
                        triangles = Some(result.clone());
                    }
                    let buffer: SinkBuffer = Rc::default();
                    sink(result, buffer.clone(), &probe, false);
                    buffers.vertex.push(buffer);
                    plan.vertex = Some(format);
                }
                for output in rows {
                    let buffer: RowBuffer = Rc::default();
                    sink(output.rows, buffer.clone(), &probe, false);
                    buffers.rows.push(buffer);
                    plan.rows.push((output.name, output.format, output.columns));
                }
                if let Some(errors) = errors {
                    let buffer: Buffer<String> = Rc::default();
                    sink(errors, buffer.clone(), &probe, true);
                    failures.watched.push((name, buffer, BTreeMap::new()));
                }
                plans.push(plan);
            }
            let census = count_graph.then(|| Census::build(&input, triangles, &probe));
            Ok((buffers, plans, failures, census))
        });
    }
    let (buffers, plans, failures, census) = built?;
    for v in vertices {
        vertices_in.update(v, 1);
    }
    vertices_in.close();
    Ok(Built { edges_in, arrivals_in, records_in, probe, buffers, census, plans, failures })
}

/// A restart's replay being fed: epochs already in the change log, fed back to back without
/// waiting for each (their output only rebuilds the state), closed as one epoch.
struct Replay {
    last: Time,
    updates: u64,
    event: Option<EventEpoch>,
    started: Instant,
}

/// How many epochs the writer of a cluster feeds beyond the oldest one it has not written, at
/// most. With per-worker forests (the insert-only path's, the dynamic path's shares), an
/// epoch's work crosses the network twice (the frontier to the other processes, their forests'
/// changes back), and overlapping those round trips with the next epochs' work is what brings
/// two processes' throughput toward one process's, at the price of each epoch's latency
/// counting the epochs ahead of it. The source's own run-ahead ([`EpochSource::run_ahead`]:
/// more epochs when they are small) decides below this.
const CLUSTER_WRITER_RUN_AHEAD: usize = super::epochs::MAX_RUN_AHEAD;

/// After the writer's time limit: feeds this worker's share of `next` (an epoch taken from the
/// source and not fed yet) and of the source's next epochs, up to epoch `last`, without waiting
/// for them.
fn feed_claimed(
    worker: &mut Worker,
    source: &mut dyn EpochSource,
    feeder: &mut Feeder,
    mut next: Option<super::epochs::Epoch>,
    last: Time,
) -> Result<(), RunError> {
    loop {
        let epoch = match next.take() {
            Some(epoch) => epoch,
            None => match source.next(worker)? {
                Some(epoch) => epoch,
                None => return Ok(()),
            },
        };
        if epoch.number > last {
            return Ok(());
        }
        let until = epoch.until();
        feeder.feed(worker, epoch, false);
        feeder.advance(until);
        worker.step();
    }
}

/// An epoch fed and not yet closed: its number, its updates over all workers, its windowed
/// outcome, the frontier that completes it, and when its input was handed over.
type Closing = (Time, u64, Option<EventEpoch>, Time, Instant);

/// Ends a replay: feeds what the windowed layer held back and returns what closing it as one
/// epoch needs (the last replayed epoch's number and watermark, no late updates).
fn end_replay(feeder: &mut Feeder, r: Replay, exact_lifetimes: bool) -> Closing {
    let until = r.event.map_or(r.last + 1, |e| e.frontier);
    feeder.replay(until, exact_lifetimes);
    (r.last, r.updates, r.event.map(|e| EventEpoch { late: 0, ..e }), until, r.started)
}

/// Step 6: the feed loop. Feeds every epoch of `source`, waits until the dataflow has completed
/// it, and hands it to the writer. Returns whether the run stopped early at its time limit.
///
/// In a cluster workers run ahead: a worker feeds up to `ahead` epochs beyond the oldest epoch it
/// has not yet seen complete ([`EpochSource::run_ahead`] for a worker that does not write; for
/// the writer, [`CLUSTER_WRITER_RUN_AHEAD`] when the dataflow has round trips
/// ([`Algorithm::round_trips`]), else 0: its epochs are then timed one at a time). So its share
/// of the next epochs is at the writer (another process's included) before the writer asks for
/// it, and the network round trips of one epoch overlap the work of the next. Where the
/// dataflow has round trips, every worker of the cluster feeds its run-ahead's worth of epochs
/// back to back once that many have room (one round of messages for the group; see the
/// function's first lines). In one process
/// every worker feeds one epoch at a time (running ahead there took the cores from the epoch
/// being closed: wcc-insert at `-w 2` ran at 0.55x). Every worker still closes every epoch in order, checking the error
/// collections as it does (errors stop every worker at the same epoch). An epoch's latency runs
/// from its hand-over to its completion; the time the run spends on updates counts each moment
/// once, however many epochs are in flight (an epoch's *busy* time: its latency less its overlap
/// with the epochs closed before it).
///
/// The writer alone decides when the time limit has passed: it stops writing, and every worker
/// of every process then feeds its share of exactly the epochs some worker had fed, without
/// waiting for them, and stops (in a cluster the processes agree on that epoch through the stop
/// dataflow: [`super::stop`]). Nothing after the writer's last epoch is written.
#[allow(clippy::too_many_arguments)]
fn feed_epochs(
    worker: &mut Worker,
    source: &mut dyn EpochSource,
    feeder: &mut Feeder,
    probe: &ProbeHandle<Time>,
    mut writer: Option<&mut Writer>,
    buffers: &Buffers,
    failures: &mut Failures,
    (time_limit, stop, mut stop_channel): (Option<Duration>, &Stop, Option<&mut StopChannel>),
    (exact_lifetimes, cluster, writer_runs_ahead): (bool, bool, bool),
) -> Result<bool, RunError> {
    let mut closed = 0u64;
    let mut replay: Option<Replay> = None;
    let ahead = match (&writer, writer_runs_ahead) {
        // In one process the workers share the cores and no network lies between them: a worker
        // feeding ahead only takes time from the epoch the writer waits for.
        (None, _) if !cluster => 0,
        (None, _) => source.run_ahead(),
        (Some(_), true) => source.run_ahead().min(CLUSTER_WRITER_RUN_AHEAD),
        (Some(_), false) => 0,
    };
    // Where the dataflow has round trips, a worker feeds its run-ahead's worth of epochs back to
    // back, without a step between them, once it has closed enough epochs to make room for them:
    // their records and their progress then cross the network in one round of messages instead
    // of one each. Each message wakes a parked thread at the other end, and on few cores those
    // wake-ups, not the work, were what a cluster's epoch cost. Two processes × 1 worker, R-MAT
    // 18 inserted in epochs of 1,000: groups of 4 gave 1.3× the updates/s of feeding one epoch
    // at a time, p50 halved; groups of 8 (R-MAT 14) 15-18 M against 10-14 M updates/s. Not for
    // the single forest's cluster (its writer feeds one epoch at a time and waits for it;
    // grouping the other processes' feeds made its epochs wait for theirs).
    let group = if cluster && writer_runs_ahead && ahead > 0 { ahead } else { 1 };
    // A worker with nothing to feed (in a cluster, one whose process the algorithm's route
    // gives no edges) moves its input to the end now: no epoch then waits for its progress.
    if let Some(last) = source.idle_until() {
        feeder.advance(last);
    }
    // Fed, not yet closed, oldest first.
    let mut pending: VecDeque<Closing> = VecDeque::new();
    // Time in update epochs (busy time), measured by every worker.
    let mut update_seconds = 0.0;
    // When the last epoch closed was complete.
    let mut last_end: Option<Instant> = None;
    // Closes an epoch: waits for `until`, then writes it (on the writer). `timed`: it counts
    // towards the time limit. Returns whether the run stops here.
    let mut close = |worker: &mut Worker,
                     feeder: &mut Feeder,
                     writer: Option<&mut &mut Writer>,
                     source: &dyn EpochSource,
                     (number, updates, event, until, started): Closing,
                     timed: bool|
     -> Result<bool, RunError> {
        feeder.settle(worker, probe, until);
        let now = Instant::now();
        let latency = (now - started).as_secs_f64();
        let busy = (now - last_end.map_or(started, |end| end.max(started))).as_secs_f64();
        last_end = Some(now);
        failures.check(until, event.is_none().then_some(number))?;
        let writes = writer.is_some();
        if let Some(w) = writer {
            w.epoch(&buffers.vertex, &buffers.rows, number, updates, (latency, busy), closed == 0, event)?;
            source.completed(number);
        }
        closed += 1;
        if !timed {
            return Ok(false);
        }
        if number > 0 {
            update_seconds += busy;
        }
        Ok(writes && time_limit.is_some_and(|limit| number > 0 && update_seconds >= limit.as_secs_f64()))
    };
    while let Some(epoch) = source.next(worker)? {
        if let Some(r) = replay.take_if(|_| !epoch.replay) {
            let closing = end_replay(feeder, r, exact_lifetimes);
            close(worker, feeder, writer.as_mut(), source, closing, false)?;
        }
        // Latency counts from the moment the epoch's input is handed over, feeding included (a
        // windowed epoch is fed in steps that already run the dataflow).
        let handed_over = Instant::now();
        let (number, updates, event, until) = (epoch.number, epoch.updates, epoch.event, epoch.until());
        if let Some(w) = writer.as_mut() {
            // Before any of its times can be applied: the census keeps one record per epoch.
            w.expect_frontier(until);
        }
        if epoch.replay {
            feeder.feed(worker, epoch, replay.is_some());
            let r = replay.get_or_insert(Replay { last: number, updates: 0, event, started: handed_over });
            (r.last, r.updates, r.event) = (number, r.updates + updates, event);
            // Already in the change log: complete for the front end's backpressure (which would
            // otherwise wait for epochs that are being merged).
            if writer.is_some() {
                source.completed(number);
            }
            worker.step();
            continue;
        }
        if stop.claim(number).is_err() {
            // The writer stopped at its time limit: this worker's share of every epoch a worker
            // (of any process) has fed, and no more.
            let last = last_epoch(worker, stop, stop_channel.as_deref_mut(), false);
            feed_claimed(worker, source, feeder, Some(epoch), last)?;
            return Ok(true);
        }
        feeder.feed(worker, epoch, false);
        if ahead > 0 {
            feeder.advance(until);
            if group <= 1 {
                worker.step();
            }
        }
        pending.push_back((number, updates, event, until, handed_over));
        // The initial graph is complete before the stream's epochs are fed.
        let ahead = if number == 0 { 0 } else { ahead };
        // More than `ahead` in flight: close epochs until a group's worth of room is free.
        let keep = if pending.len() > ahead { ahead.saturating_sub(group - 1) } else { ahead };
        while pending.len() > keep {
            let closing = pending.pop_front().expect("more than `ahead` epochs pending");
            if close(worker, feeder, writer.as_mut(), source, closing, true)? {
                let last = last_epoch(worker, stop, stop_channel.as_deref_mut(), true);
                feed_claimed(worker, source, feeder, None, last)?;
                return Ok(true);
            }
        }
    }
    while let Some(closing) = pending.pop_front() {
        if close(worker, feeder, writer.as_mut(), source, closing, true)? {
            let last = last_epoch(worker, stop, stop_channel.as_deref_mut(), true);
            feed_claimed(worker, source, feeder, None, last)?;
            return Ok(true);
        }
    }
    if let Some(r) = replay.take() {
        let closing = end_replay(feeder, r, exact_lifetimes);
        close(worker, feeder, writer.as_mut(), source, closing, false)?;
    }
    // The end of a windowed stream: every time up to the final frontier is closed and written.
    // (Retractions scheduled beyond it are never computed.)
    if let Some(frontier) = source.final_frontier() {
        let started = Instant::now();
        feeder.settle(worker, probe, frontier);
        failures.check(frontier, None)?;
        if let Some(w) = writer {
            w.finish_window(&buffers.vertex, &buffers.rows, frontier, started.elapsed().as_secs_f64())?;
        }
    }
    Ok(false)
}
