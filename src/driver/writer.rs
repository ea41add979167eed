//! **The writer**: what the writing worker (worker 0 of process 0) does with each completed
//! epoch. The sinks at the end of the dataflow buffer their output changes by time; once an
//! epoch is complete the writer takes the changes of every time it closed out of the buffers,
//! writes them to each algorithm's [`ResultSink`], records the epoch's statistics (latency,
//! output changes, memory; watermark and late updates in windowed runs; the graph's counts
//! with `--stats`, see [`super::census`]) to `--stats` and the progress line, and at the end
//! builds the run's [`RunSummary`].
//!
//! An unwindowed epoch `e` writes the changes of every time `<= e`, labelled `e`; a windowed
//! epoch writes each time below its frontier, labelled with its own (event) time.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::census::{Census, GraphCounts};
use super::epochs::EventEpoch;
use super::metrics;
use super::observe::{EpochView, Observers, OutputInfo, RowOutputInfo};
use super::resume::Resume;
use super::{AlgorithmReport, OutputReport, RunError, RunOptions, RunReport};
use crate::dataflow::Algorithm;
use crate::dataflow::AlgorithmCounts;
use crate::sinks::{Change, Progress, ResultSink, RowChange, RowSink, RunSummary, StatsWriter};
use crate::types::format::{ColumnType, RowFormat, ValueFormat};
use crate::types::stats::{EpochStats, LatencySummary};
use crate::types::{Diff, Node, Time};

/// Output changes by time, filled by a sink operator, drained by the writer.
pub type Buffer<R> = Rc<RefCell<BTreeMap<Time, Received<R>>>>;

/// One time's changes as the sink operator received them: the dataflow's containers of
/// `(record, time, diff)`, kept whole (a 1.3 M-change epoch is then not copied record by record
/// within its latency), flattened when the writer takes them.
pub struct Received<R>(Vec<Vec<(R, Time, Diff)>>);

impl<R> Default for Received<R> {
    fn default() -> Self {
        Received(Vec::new())
    }
}

impl<R> Received<R> {
    /// Adds a container whose records all have this time.
    pub fn push(&mut self, container: Vec<(R, Time, Diff)>) {
        self.0.push(container);
    }

    /// The changes, in the order received.
    pub fn into_changes(self) -> Vec<(R, Diff)> {
        let mut changes = Vec::new();
        self.append_to(&mut changes);
        changes
    }

    /// Appends the changes, in the order received, to `changes`.
    pub fn append_to(self, changes: &mut Vec<(R, Diff)>) {
        changes.reserve(self.0.iter().map(Vec::len).sum());
        for container in self.0 {
            changes.extend(container.into_iter().map(|(r, _, d)| (r, d)));
        }
    }
}
/// One algorithm's `(vertex, u64)` output changes by time.
pub type SinkBuffer = Buffer<(Node, u64)>;
/// One typed output's rendered rows by time.
pub type RowBuffer = Buffer<(String, String)>;

/// What one algorithm's build produced, as the writer needs to know it: its name, whether it
/// has a `(vertex, u64)` output (and its value format), and its named row outputs.
#[derive(Clone, Debug)]
pub struct OutputPlan {
    /// The algorithm's name.
    pub algorithm: String,
    /// Its `(vertex, u64)` output's value format, if it has one.
    pub vertex: Option<ValueFormat>,
    /// Its row outputs: name, format, and the SQL types of key and value.
    pub rows: Vec<(String, RowFormat, (ColumnType, ColumnType))>,
}

/// Takes the changes of every time `<= epoch` out of `buffer`.
fn take_through<R>(buffer: &Buffer<R>, epoch: Time) -> Vec<(R, Diff)> {
    let mut buffer = buffer.borrow_mut();
    let done: Vec<Time> = buffer.range(..=epoch).map(|(t, _)| *t).collect();
    let mut changes = Vec::new();
    for t in done {
        if let Some(c) = buffer.remove(&t) {
            c.append_to(&mut changes);
        }
    }
    changes
}

/// Takes the first time below `frontier` and its changes out of `buffer`.
fn take_first_below<R>(buffer: &Buffer<R>, frontier: Time) -> Option<(Time, Vec<(R, Diff)>)> {
    let mut buffer = buffer.borrow_mut();
    match buffer.first_key_value() {
        Some((&t, _)) if t < frontier => buffer.remove(&t).map(|c| (t, c.into_changes())),
        _ => None,
    }
}

/// One typed output's sink and its name (`<dataflow>.<output>`).
struct RowOutput {
    name: String,
    sink: RowSink,
    lines: u64,
}

impl RowOutput {
    /// Writes an unwindowed epoch (`event == None`) or every time below a windowed frontier.
    fn write(
        &mut self,
        buffer: &RowBuffer,
        epoch: Time,
        frontier: Option<Time>,
        write: bool,
        mut observed: Option<&mut Vec<RowChange>>,
    ) -> Result<u64, RunError> {
        let mut n = 0;
        match frontier {
            None => n += self.sink.epoch_with(epoch, take_through(buffer, epoch), write, observed)?,
            Some(frontier) => {
                while let Some((t, changes)) = take_first_below(buffer, frontier) {
                    n += self.sink.epoch_with(t, changes, write, observed.as_deref_mut())?;
                }
            }
        }
        self.lines += n;
        Ok(n)
    }
}

/// The writer's per-epoch bookkeeping: sinks, stats, progress, latencies.
pub struct Writer {
    sinks: Vec<ResultSink>,
    /// The algorithm of each `(vertex, u64)` sink.
    sink_names: Vec<String>,
    /// The typed outputs, in build order.
    rows: Vec<RowOutput>,
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
    /// Restarted live runs: which epochs are already written, and the change-log mark.
    resume: Resume,
    /// Windowed runs: late updates dropped so far.
    late: u64,
    /// Windowed runs: time to close the last windows at the end of the stream.
    end_seconds: Option<f64>,
    /// Who else receives every epoch's changes (`--serve`, an embedding program).
    observers: Observers,
    /// Per algorithm, the changes of the epoch being written (only when there are observers).
    observed: Option<Vec<Vec<Change>>>,
    /// Per typed output, the changes of the epoch being written (only when there are observers).
    observed_rows: Vec<Vec<RowChange>>,
    /// The largest lag any observer reported.
    max_observer_lag: Option<u64>,
    /// Live input: the front end's counters (for `epochs_behind`).
    live: Option<std::sync::Arc<crate::live::Progress>>,
    /// `--stats`: the graph's counts, and the latest.
    census: Option<(Census, GraphCounts)>,
    /// The algorithms' reported counts, when one reports fallback rebuilds, and the rebuilds so far.
    fallbacks: Option<(AlgorithmCounts, u64)>,
}

/// Facts about the run the summary reports besides what the writer measured.
pub struct RunFacts {
    /// The run stopped early (time limit).
    pub partial: bool,
    /// The input was live (the initial edges are then epoch 0's updates).
    pub live: bool,
    /// Edge copies of the initial graph, over all workers.
    pub initial_edges: u64,
    /// Input bytes read while loading.
    pub bytes: u64,
    /// Seconds spent loading the input.
    pub load_seconds: f64,
    /// Wall-clock seconds of the whole run.
    pub wall_seconds: f64,
    /// With several processes: every process's peak memory.
    pub all_peaks: Vec<Option<u64>>,
}

/// Writes the buffered changes of every time below `frontier` to `sink`, time by time.
fn write_times_below(
    sink: &mut ResultSink,
    buffer: &SinkBuffer,
    frontier: Time,
    write: bool,
    mut observed: Option<&mut Vec<Change>>,
) -> Result<u64, RunError> {
    let mut lines = 0;
    loop {
        let Some((time, changes)) = take_first_below(buffer, frontier) else { return Ok(lines) };
        lines += sink.epoch_with(time, changes, write, observed.as_deref_mut())?;
    }
}

impl Writer {
    /// Live input: reports `epochs_behind` from the front end's counters.
    pub(crate) fn with_live(mut self, live: Option<std::sync::Arc<crate::live::Progress>>) -> Writer {
        self.live = live;
        self
    }

    /// Creates every output's sink and the stats file (before anything is fed, so that an
    /// unwritable output stops the run early). `plans`: what each algorithm's build produced.
    /// `expected`: epochs for the progress bar.
    pub fn create(
        options: &RunOptions,
        plans: &[OutputPlan],
        resume: Resume,
        expected: u64,
    ) -> Result<Writer, RunError> {
        let outputs: usize = plans.iter().map(|p| p.vertex.iter().count() + p.rows.len()).sum();
        let single = outputs == 1;
        if outputs > 1 && options.output_dir.is_none() && (options.output.is_some() || options.changes.is_some()) {
            return Err(RunError::Input(format!(
                "{} has {} outputs: give --output-dir instead of --output/--changes",
                plans.iter().map(|p| p.algorithm.as_str()).collect::<Vec<_>>().join(","),
                outputs
            )));
        }
        let files = |name: &str| -> Result<_, RunError> {
            Ok(match &options.output_dir {
                Some(dir) => {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| RunError::Other(format!("cannot create {}: {}", dir.display(), e)))?;
                    (Some(dir.join(format!("{}.changes", name))), Some(dir.join(format!("{}.out", name))))
                }
                None if single => (options.changes.clone(), options.output.clone()),
                None => (None, None),
            })
        };
        let mut rows = Vec::new();
        for plan in plans {
            for (output, format, _) in &plan.rows {
                let name = format!("{}.{}", plan.algorithm, output);
                let (changes, out) = files(&name)?;
                let offset = resume.changes_offset(&name, changes.as_deref(), false)?;
                let sink = RowSink::new_resuming(
                    *format,
                    changes.as_deref(),
                    out.as_deref(),
                    options.collect,
                    options.keep_state,
                    offset,
                )?;
                rows.push(RowOutput { name, sink, lines: 0 });
            }
        }
        let mut sinks = Vec::new();
        let mut sink_names = Vec::new();
        for (plan, format) in plans.iter().filter_map(|p| p.vertex.map(|f| (p, f))) {
            let name = plan.algorithm.clone();
            sink_names.push(name.clone());
            let (changes, output) = files(&name)?;
            let single = sinks.is_empty() && options.output_dir.is_none() && options.changes.is_some();
            let offset = resume.changes_offset(&name, changes.as_deref(), single)?;
            sinks.push(ResultSink::new_resuming(
                format,
                changes.as_deref(),
                output.as_deref(),
                options.collect,
                options.keep_state,
                offset,
            )?);
        }
        let stats = options.stats.as_deref().map(StatsWriter::create).transpose()?;
        let observers = options.observers.clone();
        let observed = (!observers.is_empty()).then(|| vec![Vec::new(); sinks.len()]);
        if observed.is_some() {
            let outputs: Vec<OutputInfo> = plans
                .iter()
                .filter_map(|p| p.vertex.map(|format| OutputInfo { name: p.algorithm.clone(), format }))
                .collect();
            let typed: Vec<RowOutputInfo> = plans
                .iter()
                .flat_map(|p| {
                    p.rows.iter().map(|(output, format, columns)| RowOutputInfo {
                        name: format!("{}.{}", p.algorithm, output),
                        format: *format,
                        columns: *columns,
                    })
                })
                .collect();
            observers.start(&outputs, &typed).map_err(RunError::Observer)?;
        }
        let observed_rows = if observed.is_some() { vec![Vec::new(); rows.len()] } else { Vec::new() };
        Ok(Writer {
            sink_changes: vec![0; sinks.len()],
            sinks,
            sink_names,
            rows,
            stats,
            progress: Progress::new(expected, options.progress),
            epoch_stats: Vec::new(),
            latencies: Vec::new(),
            output_changes: 0,
            peak_rss: 0,
            update_seconds: 0.0,
            initial_seconds: 0.0,
            updates: 0,
            resume,
            late: 0,
            end_seconds: None,
            observers,
            observed,
            observed_rows,
            max_observer_lag: None,
            live: None,
            census: None,
            fallbacks: None,
        })
    }

    /// After `epoch` was written: makes every change log durable and records their lengths in
    /// the state directory's mark (when there is one and any change log is written).
    fn record(&mut self, epoch: Time) -> Result<(), RunError> {
        if !self.resume.records() {
            return Ok(());
        }
        let mut outputs = Vec::new();
        let mut first = None;
        for (sink, name) in self.sinks.iter_mut().zip(&self.sink_names) {
            if let Some(offset) = sink.sync_changes()? {
                first.get_or_insert(offset);
                outputs.push((name.clone(), offset));
            }
        }
        for output in &mut self.rows {
            if let Some(offset) = output.sink.sync_changes()? {
                outputs.push((output.name.clone(), offset));
            }
        }
        if outputs.is_empty() {
            return Ok(());
        }
        self.resume.record(epoch, first.unwrap_or(0), outputs)
    }

    /// `--stats`: reports the census's counts with every epoch and in the summary.
    pub fn count_graph(&mut self, census: Census) {
        self.census = Some((census, GraphCounts::default()));
    }

    /// Reports the fallback rebuilds an algorithm records in `counts` (the fully dynamic WCC
    /// path's) with every epoch and in the summary.
    pub fn count_fallbacks(&mut self, counts: AlgorithmCounts) {
        self.fallbacks = Some((counts, 0));
    }

    /// The fallback rebuilds of the times below `frontier` not counted yet (`None` unless an
    /// algorithm reports them).
    fn fallbacks_below(&mut self, frontier: Time) -> Option<u64> {
        self.fallbacks.as_mut().map(|(counts, total)| {
            let n = counts.take_fallbacks_below(frontier);
            *total += n;
            n
        })
    }

    /// The end of a windowed stream: writes every time below the final frontier (no new epoch).
    /// `seconds`: how long the dataflow took to reach the final frontier.
    pub fn finish_window(
        &mut self,
        buffers: &[SinkBuffer],
        row_buffers: &[RowBuffer],
        frontier: Time,
        seconds: f64,
    ) -> Result<(), RunError> {
        for (i, (sink, buffer)) in self.sinks.iter_mut().zip(buffers).enumerate() {
            let observed = self.observed.as_mut().map(|o| &mut o[i]);
            let n = write_times_below(sink, buffer, frontier, true, observed)?;
            self.sink_changes[i] += n;
            self.output_changes += n;
        }
        for (i, (output, buffer)) in self.rows.iter_mut().zip(row_buffers).enumerate() {
            let observed = self.observed_rows.get_mut(i);
            self.output_changes += output.write(buffer, frontier, Some(frontier), true, observed)?;
        }
        self.update_seconds += seconds;
        self.end_seconds = Some(seconds);
        if let Some((census, last)) = &mut self.census {
            *last = census.below(frontier);
        }
        let fallbacks = self.fallbacks_below(frontier);
        if let Some(observed) = &mut self.observed {
            let rows = &mut self.observed_rows;
            let last = observed.iter().flatten().map(|c| c.epoch).chain(rows.iter().flatten().map(|c| c.epoch)).max();
            if let Some(epoch) = last {
                let (rss, _) = metrics::memory();
                let stats = EpochStats {
                    epoch,
                    latency_ms: seconds * 1000.0,
                    output_changes: observed.iter().map(|c| c.len() as u64).sum::<u64>()
                        + rows.iter().map(|c| c.len() as u64).sum::<u64>(),
                    rss_bytes: rss,
                    wcc_fallbacks: fallbacks,
                    ..EpochStats::default()
                };
                let view = EpochView { epoch, stats: &stats, changes: observed, rows, replayed: false };
                self.observers.epoch(&view).map_err(RunError::Observer)?;
            }
            observed.iter_mut().for_each(Vec::clear);
            rows.iter_mut().for_each(Vec::clear);
        }
        Ok(())
    }

    /// Writes epoch `epoch` (`latency`: from its hand-over to its completion; `busy`: that less
    /// its overlap with the epochs written before it, so that the update time counts each moment
    /// once when epochs overlap): without `event`, every buffered change up to `epoch`, labelled
    /// `epoch`; with it (windowed runs), the changes of each time below its frontier, each
    /// labelled with its own (event) time.
    #[allow(clippy::too_many_arguments)]
    pub fn epoch(
        &mut self,
        buffers: &[SinkBuffer],
        row_buffers: &[RowBuffer],
        epoch: Time,
        updates: u64,
        (latency, busy): (f64, f64),
        first: bool,
        event: Option<EventEpoch>,
    ) -> Result<(), RunError> {
        if first {
            self.initial_seconds = latency;
        } else {
            self.update_seconds += busy;
            self.latencies.push(latency * 1000.0);
            self.updates += updates;
        }
        let quiet = self.resume.is_written(epoch);
        let mut lines = 0;
        for (i, (sink, buffer)) in self.sinks.iter_mut().zip(buffers).enumerate() {
            let observed = self.observed.as_mut().map(|o| &mut o[i]);
            let n = match event {
                None => sink.epoch_with(epoch, take_through(buffer, epoch), !quiet, observed)?,
                Some(event) => write_times_below(sink, buffer, event.frontier, !quiet, observed)?,
            };
            self.sink_changes[i] += n;
            lines += n;
        }
        for (i, (output, buffer)) in self.rows.iter_mut().zip(row_buffers).enumerate() {
            let observed = self.observed_rows.get_mut(i);
            lines += output.write(buffer, epoch, event.map(|e| e.frontier), !quiet, observed)?;
        }
        if !quiet {
            self.record(epoch)?;
        }
        self.output_changes += lines;
        let (rss, hwm) = metrics::memory();
        self.peak_rss = self.peak_rss.max(hwm);
        let lag = if self.observed.is_some() { self.observers.lag_epochs() } else { None };
        if let Some(lag) = lag {
            self.max_observer_lag = Some(self.max_observer_lag.unwrap_or(0).max(lag));
        }
        let frontier = event.map_or(epoch + 1, |e| e.frontier);
        let counts = self.census.as_mut().map(|(census, last)| {
            *last = census.below(frontier);
            *last
        });
        let fallbacks = self.fallbacks_below(frontier);
        let s = EpochStats {
            epoch,
            updates,
            latency_ms: latency * 1000.0,
            busy_ms: Some(busy * 1000.0),
            output_changes: lines,
            rss_bytes: rss,
            watermark: event.map(|e| e.watermark),
            late: event.map(|e| e.late),
            observer_lag: lag,
            vertices: counts.map(|c| c.vertices),
            edges: counts.map(|c| c.edges),
            triangles: counts.and_then(|c| c.triangles),
            wcc_fallbacks: fallbacks,
            epochs_behind: self.live.as_ref().map(|p| p.closed_after(epoch)),
        };
        if let Some(observed) = &mut self.observed {
            let view = EpochView { epoch, stats: &s, changes: observed, rows: &self.observed_rows, replayed: quiet };
            self.observers.epoch(&view).map_err(RunError::Observer)?;
            observed.iter_mut().for_each(Vec::clear);
            self.observed_rows.iter_mut().for_each(Vec::clear);
        }
        self.late += event.map_or(0, |e| e.late);
        if let Some(w) = &mut self.stats {
            w.epoch(&s)?;
        }
        self.progress.epoch(self.epoch_stats.len() as u64, updates, latency * 1000.0);
        self.epoch_stats.push(s);
        Ok(())
    }

    /// The end of the run: closes every sink, writes the summary, and returns the report.
    pub fn finish(
        self,
        options: &RunOptions,
        algorithms: &[Box<dyn Algorithm>],
        facts: RunFacts,
    ) -> Result<RunReport, RunError> {
        self.progress.finish();
        let mut reports = Vec::new();
        for ((sink, name), lines) in self.sinks.into_iter().zip(self.sink_names).zip(&self.sink_changes) {
            let (changes, final_state) = sink.finish()?;
            reports.push(AlgorithmReport { name, output_changes: *lines, changes, final_state });
        }
        let mut outputs = Vec::new();
        for output in self.rows {
            let (changes, final_state) = output.sink.finish()?;
            outputs.push(OutputReport { name: output.name, output_changes: output.lines, changes, final_state });
        }
        let (changes, final_state) =
            reports.first().map(|r| (r.changes.clone(), r.final_state.clone())).unwrap_or_default();
        let updates = self.updates;
        let load_seconds = facts.load_seconds;
        let summary = RunSummary {
            summary: true,
            algorithm: algorithms.iter().map(|a| a.name()).collect::<Vec<_>>().join(","),
            workers: options.layout.workers,
            processes: options.layout.processes,
            epochs: self.epoch_stats.len() as u64,
            partial: facts.partial,
            updates,
            initial_edges: if facts.live {
                self.epoch_stats.first().map(|e| e.updates).unwrap_or(0)
            } else {
                facts.initial_edges
            },
            update_seconds: self.update_seconds,
            updates_per_sec: if self.update_seconds > 0.0 { updates as f64 / self.update_seconds } else { 0.0 },
            latency: LatencySummary::of(&self.latencies),
            load_seconds,
            load_mb_per_sec: facts.bytes as f64 / 1e6 / load_seconds.max(1e-9),
            load_edges_per_sec: facts.initial_edges as f64 / load_seconds.max(1e-9),
            initial_seconds: self.initial_seconds,
            peak_rss_bytes: self.peak_rss.max(metrics::memory().1),
            peak_rss_bytes_all_processes: (options.layout.processes > 1)
                .then(|| facts.all_peaks.iter().flatten().sum()),
            output_changes: self.output_changes,
            wall_seconds: facts.wall_seconds,
            late_updates: options.window.map(|_| self.late),
            end_seconds: self.end_seconds,
            max_observer_lag: self.max_observer_lag,
            vertices: self.census.as_ref().map(|(_, c)| c.vertices),
            edges: self.census.as_ref().map(|(_, c)| c.edges),
            triangles: self.census.as_ref().and_then(|(_, c)| c.triangles),
            wcc_fallbacks: self.fallbacks.as_ref().map(|(_, total)| *total),
        };
        if let Some(stats) = self.stats {
            stats.summary(&summary)?;
        }
        if self.observed.is_some() {
            self.observers.finish(&summary).map_err(RunError::Observer)?;
        }
        Ok(RunReport { summary, epochs: self.epoch_stats, changes, final_state, algorithms: reports, outputs })
    }
}
