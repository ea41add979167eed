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
pub type Buffer<R> = Rc<RefCell<Pending<R>>>;

/// A container of at least this many records, all of one time, is kept whole in a
/// [`Pending`] buffer.
const WHOLE: usize = 256;

/// The loose list's allocation is kept from one epoch to the next up to this many changes.
const KEEP_LOOSE: usize = 1 << 16;

/// The changes a sink operator has received and the writer not yet taken. A container of one
/// time with at least [`WHOLE`] records is kept as it came (a 1.3 M-change epoch is then not
/// copied record by record within its latency); the records of the others go to one list, in
/// the order received. A windowed run's epochs hold a thousand event times with a few changes
/// each; kept per time, each would cost a map entry, a list and a container (~100 bytes), and a
/// window's first fill (a million event times in one epoch) ~100 MiB until it is written.
pub struct Pending<R> {
    whole: BTreeMap<Time, Containers<R>>,
    loose: Vec<(R, Time, Diff)>,
}

/// A time's large containers in a [`Pending`] buffer.
type Containers<R> = Vec<Vec<(R, Time, Diff)>>;

impl<R> Default for Pending<R> {
    fn default() -> Self {
        Pending { whole: BTreeMap::new(), loose: Vec::new() }
    }
}

impl<R> Pending<R> {
    /// Adds a container of changes (of any times); empties it.
    pub fn push(&mut self, container: &mut Vec<(R, Time, Diff)>) {
        match container.first().map(|r| r.1) {
            None => {}
            Some(t) if container.len() >= WHOLE && container.iter().all(|r| r.1 == t) => {
                let mut kept = std::mem::take(container);
                if kept.capacity() > 2 * kept.len() {
                    kept.shrink_to_fit();
                }
                self.whole.entry(t).or_default().push(kept);
            }
            Some(_) => self.loose.append(container),
        }
    }

    /// Takes out the changes of every time below `frontier` and hands them to `f` a time at a
    /// time, in time order (a time's changes in no particular order: the sinks consolidate
    /// them). Stops at `f`'s first error (the changes of the later times below `frontier` are
    /// then dropped).
    pub fn drain_below<E>(
        &mut self,
        frontier: Time,
        mut f: impl FnMut(Time, Vec<(R, Diff)>) -> Result<(), E>,
    ) -> Result<(), E> {
        // Usually every loose change is below the frontier: the list itself is taken then, not
        // copied (a window's fill epoch: 17 MB of changes, written at the run's peak), and its
        // allocation kept for the next epochs unless it is that large.
        let all = self.loose.iter().all(|r| r.1 < frontier);
        let mut loose: Vec<(R, Time, Diff)> = match all {
            true => std::mem::take(&mut self.loose),
            false => self.loose.extract_if(.., |r| r.1 < frontier).collect(),
        };
        loose.sort_unstable_by_key(|r| r.1);
        let later = self.whole.split_off(&frontier);
        let whole = std::mem::replace(&mut self.whole, later);
        let mut whole = whole.into_iter().peekable();
        let mut drained = loose.drain(..).peekable();
        loop {
            let time = match (whole.peek().map(|w| w.0), drained.peek().map(|r| r.1)) {
                (None, None) => break,
                (Some(a), Some(b)) => a.min(b),
                (Some(t), None) | (None, Some(t)) => t,
            };
            let mut changes = Vec::new();
            if let Some((_, containers)) = whole.next_if(|w| w.0 == time) {
                changes.reserve(containers.iter().map(Vec::len).sum());
                for container in containers {
                    changes.extend(container.into_iter().map(|(r, _, d)| (r, d)));
                }
            }
            while let Some((r, _, d)) = drained.next_if(|r| r.1 == time) {
                changes.push((r, d));
            }
            f(time, changes)?;
        }
        drop(drained);
        if all && loose.capacity() <= KEEP_LOOSE {
            self.loose = loose;
        }
        Ok(())
    }

    /// Takes out the changes of every time up to `epoch`, all together.
    pub fn take_through(&mut self, epoch: Time) -> Vec<(R, Diff)> {
        let later = match epoch.checked_add(1) {
            Some(frontier) => self.whole.split_off(&frontier),
            None => BTreeMap::new(),
        };
        let whole = std::mem::replace(&mut self.whole, later);
        let mut changes: Vec<(R, Diff)> = whole.into_values().flatten().flatten().map(|(r, _, d)| (r, d)).collect();
        changes.extend(self.loose.extract_if(.., |r| r.1 <= epoch).map(|(r, _, d)| (r, d)));
        changes
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
            None => n += self.sink.epoch_with(epoch, buffer.borrow_mut().take_through(epoch), write, observed)?,
            Some(frontier) => buffer.borrow_mut().drain_below(frontier, |t, changes| {
                n += self.sink.epoch_with(t, changes, write, observed.as_deref_mut())?;
                Ok::<(), std::io::Error>(())
            })?,
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
    buffer.borrow_mut().drain_below(frontier, |time, changes| {
        lines += sink.epoch_with(time, changes, write, observed.as_deref_mut())?;
        Ok::<(), std::io::Error>(())
    })?;
    Ok(lines)
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

    /// Declares the frontier of an epoch about to be fed: the census will be read there.
    pub fn expect_frontier(&self, frontier: Time) {
        if let Some((census, _)) = &self.census {
            census.expect(frontier);
        }
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
                None => sink.epoch_with(epoch, buffer.borrow_mut().take_through(epoch), !quiet, observed)?,
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Random containers (large ones of one time, small ones of mixed times) drained at rising
    /// frontiers: each time comes once, in order, with exactly its changes, against a plain
    /// list of what was pushed.
    #[test]
    fn pending_changes_come_out_by_time() {
        for seed in 0..20u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut pending: Pending<u64> = Pending::default();
            let mut pushed: Vec<(u64, Time, Diff)> = Vec::new();
            let mut next = 0u64;
            let mut frontier = 0;
            for _ in 0..30 {
                for _ in 0..rng.gen_range(0..6) {
                    let mut container: Vec<(u64, Time, Diff)> = if rng.gen_bool(0.3) {
                        let t = frontier + rng.gen_range(0..20);
                        (0..rng.gen_range(WHOLE..WHOLE + 50)).map(|_| (0, t, 1)).collect()
                    } else {
                        (0..rng.gen_range(1..20)).map(|_| (0, frontier + rng.gen_range(0..20), -1)).collect()
                    };
                    for record in &mut container {
                        record.0 = next;
                        next += 1;
                    }
                    pushed.extend(container.iter().copied());
                    pending.push(&mut container);
                    assert!(container.is_empty(), "seed {seed}: push leaves the container empty");
                }
                frontier += rng.gen_range(0..8);
                let mut got: Vec<(Time, Vec<(u64, Diff)>)> = Vec::new();
                pending
                    .drain_below(frontier, |t, changes| {
                        got.push((t, changes));
                        Ok::<(), ()>(())
                    })
                    .unwrap_or_else(|()| panic!("seed {seed}: no error was returned"));
                for (_, changes) in &mut got {
                    changes.sort_unstable();
                }
                let mut want: BTreeMap<Time, Vec<(u64, Diff)>> = BTreeMap::new();
                pushed.retain(|&(r, t, d)| {
                    if t < frontier {
                        want.entry(t).or_default().push((r, d));
                    }
                    t >= frontier
                });
                let want: Vec<(Time, Vec<(u64, Diff)>)> = want.into_iter().collect();
                assert_eq!(got, want, "seed {seed}: frontier {frontier}");
            }
            let rest = pending.take_through(Time::MAX);
            let mut rest_ids: Vec<u64> = rest.iter().map(|x| x.0).collect();
            rest_ids.sort_unstable();
            let want_ids: Vec<u64> = pushed.iter().map(|x| x.0).collect();
            assert_eq!(rest_ids, want_ids, "seed {seed}: take_through takes the rest");
        }
    }

    /// `drain_below` stops at the callback's first error.
    #[test]
    fn pending_drain_stops_at_an_error() {
        let mut pending: Pending<u64> = Pending::default();
        pending.push(&mut vec![(1, 1, 1), (2, 2, 1), (3, 3, 1)]);
        let mut seen = Vec::new();
        let result = pending.drain_below(10, |t, _| {
            seen.push(t);
            if t == 2 {
                Err(t)
            } else {
                Ok(())
            }
        });
        assert_eq!((result, seen), (Err(2), vec![1, 2]));
    }
}
