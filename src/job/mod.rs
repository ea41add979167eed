//! **Jobs**: a running computation inside your program — no command line, no files.
//!
//! A [`Job`] runs algorithms (built-in or your own [`Algorithm`]) on any number of worker
//! threads in the current process. You push updates ([`Job::insert`], [`Job::remove`], with
//! event times for windows [`Job::insert_at`]), close epochs ([`Job::commit`] returns the epoch
//! it closed), wait for an epoch to complete ([`Job::wait`]), read the current result of a vertex
//! ([`Job::value`]) or all of it ([`Job::result`]), receive every epoch's changes as they complete
//! ([`JobBuilder::changes`], then [`Job::changes`]), read a typed dataflow's outputs
//! ([`Job::rows`] as text, [`Job::rows_as`] decoded to its types; each epoch's in
//! [`EpochChanges::rows_as`]), and shut down ([`Job::shutdown`] returns the
//! run's report, with its summary: epochs, updates/s, latency percentiles, memory).
//!
//! A job is the live front end of `ripples run --live` fed by your program instead of stdin or a
//! socket: the same validation (deleting an absent edge is an error), epochs, event-time windows,
//! backpressure (a producer far ahead of the dataflow blocks in `commit`), and with
//! [`JobBuilder::state_dir`] the same durability: every committed epoch is in the write-ahead log
//! (fsynced) before the dataflow sees it, and a job started again on the same directory recovers
//! every epoch that reached the log and goes on from there ([`Job::commit`] then continues the
//! numbering).
//!
//! A rejected update (a deletion of an edge that is not present) stops the job: the next call
//! returns [`JobError::Stopped`] and [`Job::shutdown`] returns the reason, naming the update.
//!
//! **The command line is a user of this API.** `ripples run --live`, `--listen` and `--follow`
//! start a job whose updates come from stdin, TCP producers or a followed file instead of the
//! program ([`JobBuilder::run_options`]: the driver options its flags describe, with their
//! layout, output files and observers) and wait for it to end with its input ([`Job::finish`]).
//! So there is one live path, whether the updates come from your program or from a transport.
//!
//! ```
//! use ripples::job::Job;
//!
//! let mut job = Job::builder().builtin("wcc").unwrap().workers(2).start().unwrap();
//! job.insert(1, 2).unwrap();
//! job.insert(2, 3).unwrap();
//! job.insert(7, 8).unwrap();
//! let e = job.commit().unwrap();
//! job.wait(e).unwrap();
//! assert_eq!(job.value("wcc", 3), Some(1)); // 3 is in the component of 1
//! assert_eq!(job.value("wcc", 8), Some(7));
//!
//! job.remove(2, 3).unwrap();
//! job.insert(3, 7).unwrap();
//! let e = job.commit().unwrap();
//! job.wait(e).unwrap();
//! assert_eq!(job.value("wcc", 3), Some(3)); // now with 7 and 8, whose smallest id is 3
//! assert_eq!(job.value("wcc", 8), Some(3));
//! assert_eq!(job.result("wcc").unwrap(), vec![(1, 1), (2, 1), (3, 3), (7, 3), (8, 3)]);
//!
//! let report = job.shutdown().unwrap();
//! assert_eq!(report.summary.updates, 5);
//! ```

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::dataflow::{Algorithm, AlgorithmError, Params};
use crate::driver::observe::{EpochView, LiveStarted, Observer, Observers, OutputInfo, RowOutputInfo};
use crate::driver::{Layout, RunError, RunOptions, RunReport, Source};
use crate::live::{EmbeddedInput, EmbeddedSender, LiveConfig, LiveInput, Submission};
use crate::sinks::{Change, RowChange};
use crate::sources::window::WindowSpec;
use crate::types::format::RowFormat;
use crate::types::{Diff, Node, Time, Update};

/// Submissions buffered before they travel to the front end in one message.
const CHUNK: usize = 4096;

/// Why a job call failed.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The job is configured wrongly (no algorithm, zero workers, an unknown algorithm).
    #[error("{0}")]
    Config(String),
    /// The run stopped (a rejected update, a failed state directory, a worker failure); the
    /// reason is what [`Job::shutdown`] returns.
    #[error("the job has stopped: {0}")]
    Stopped(String),
    /// The run failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// No algorithm of this name runs in the job.
    #[error("no algorithm named {0:?} runs in this job")]
    UnknownOutput(String),
    /// A typed output's row cannot be read as the asked-for type.
    #[error("output {output}: cannot read {text:?} as the asked-for type: {message}")]
    Decode {
        /// The output (`DATAFLOW.OUTPUT`).
        output: String,
        /// The row's key or value text.
        text: String,
        /// What serde said.
        message: String,
    },
}

impl From<AlgorithmError> for JobError {
    fn from(e: AlgorithmError) -> Self {
        JobError::Config(e.to_string())
    }
}

/// One completed epoch's changes, per algorithm in the job's order.
#[derive(Clone, Debug, PartialEq)]
pub struct EpochChanges {
    /// The epoch.
    pub epoch: Time,
    /// The algorithms' names, in order.
    pub names: Arc<Vec<String>>,
    /// Per algorithm: exactly the change log's lines of this epoch.
    pub changes: Vec<Vec<Change>>,
    /// A recovered epoch replayed after a restart (its changes were delivered before).
    pub replayed: bool,
    /// The typed outputs ([`crate::dataflow::typed`]), in order.
    pub row_outputs: Arc<Vec<RowOutputInfo>>,
    /// Per typed output: exactly its change log's lines of this epoch (rendered text).
    pub rows: Vec<Vec<RowChange>>,
}

impl EpochChanges {
    /// The changes of the algorithm called `name`.
    pub fn of(&self, name: &str) -> Option<&[Change]> {
        self.names.iter().position(|n| n == name).map(|i| self.changes[i].as_slice())
    }

    /// The changes of typed output `name` (`DATAFLOW.OUTPUT`), as text.
    pub fn rows_of(&self, name: &str) -> Option<&[RowChange]> {
        self.row_outputs.iter().position(|o| o.name == name).map(|i| self.rows[i].as_slice())
    }

    /// The changes of typed output `name` decoded to the dataflow's types (see [`Job::rows_as`]).
    pub fn rows_as<K: DeserializeOwned, V: DeserializeOwned>(
        &self,
        name: &str,
    ) -> Result<Vec<TypedChange<K, V>>, JobError> {
        let i =
            self.row_outputs.iter().position(|o| o.name == name).ok_or_else(|| JobError::UnknownOutput(name.into()))?;
        let format = self.row_outputs[i].format;
        self.rows[i]
            .iter()
            .map(|c| {
                Ok(TypedChange {
                    epoch: c.epoch,
                    key: decode(name, format, &c.key)?,
                    value: decode(name, format, &c.value)?,
                    diff: c.diff,
                })
            })
            .collect()
    }
}

/// One change of a typed output, decoded ([`EpochChanges::rows_as`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TypedChange<K, V> {
    /// The epoch (event time in windowed jobs).
    pub epoch: Time,
    /// The key.
    pub key: K,
    /// The value.
    pub value: V,
    /// `1` or `-1`.
    pub diff: i8,
}

/// A typed output's key or value text as `T`: a JSON output's text is JSON; a `Display` output's
/// text is read as JSON where it is (numbers, `true`), else as a JSON string (so `String` reads
/// any text).
fn decode<T: DeserializeOwned>(output: &str, format: RowFormat, text: &str) -> Result<T, JobError> {
    let parsed = serde_json::from_str::<T>(text);
    let parsed = match (parsed, format) {
        (Err(_), RowFormat::Text) => T::deserialize(serde_json::Value::String(text.to_string())),
        (parsed, _) => parsed,
    };
    parsed.map_err(|e| JobError::Decode { output: output.into(), text: text.into(), message: e.to_string() })
}

/// Configures a [`Job`]: algorithms, workers, windows, durability.
pub struct JobBuilder {
    algorithms: Vec<Box<dyn Algorithm>>,
    workers: usize,
    state_dir: Option<PathBuf>,
    snapshot_every: Option<u64>,
    window: Option<WindowSpec>,
    graph: Option<PathBuf>,
    insert_only: bool,
    max_behind: u64,
    changes: bool,
    params: Params,
    /// Driver options given whole ([`JobBuilder::run_options`]).
    options: Option<RunOptions>,
    /// Keep the current results for [`Job::value`] and [`Job::result`].
    keep_results: bool,
}

/// A running job (see the [module documentation](self)).
pub struct Job {
    /// The program's side of the input; `None` when updates come from a transport.
    sender: Option<EmbeddedSender>,
    /// Updates come from the program ([`Job::insert`] ...), not from a transport.
    embedded: bool,
    pending: Vec<Submission>,
    next_epoch: Time,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<Result<Option<RunReport>, RunError>>>,
    names: Arc<Vec<String>>,
    changes: Option<Receiver<EpochChanges>>,
    /// The run's outcome, once its thread was joined: its report (`None` in a process other
    /// than 0 of a cluster) or what stopped it.
    outcome: Option<Result<Option<RunReport>, String>>,
    /// The driver's error itself, until [`Job::finish`] or [`JobBuilder::start`] takes it.
    error: Option<RunError>,
}

#[derive(Default)]
struct State {
    /// The epoch the first commit closes, once the front end has started.
    first_epoch: Option<Time>,
    /// The last completed epoch.
    completed: Option<Time>,
    /// Per algorithm, the current result as a multiset of `(key, value)`.
    results: Vec<BTreeMap<(Node, u64), Diff>>,
    /// The typed outputs, once the run has started.
    row_outputs: Arc<Vec<RowOutputInfo>>,
    /// Per typed output, its current rows as a multiset of `(key text, value text)`.
    rows: Vec<BTreeMap<(String, String), Diff>>,
    /// The run's thread has returned.
    finished: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What the driver calls: keeps the results and forwards the changes.
struct JobObserver {
    shared: Arc<Shared>,
    names: Arc<Vec<String>>,
    subscriber: Option<Sender<EpochChanges>>,
    keep_results: bool,
    row_outputs: Arc<Vec<RowOutputInfo>>,
}

impl Observer for JobObserver {
    fn start(&mut self, outputs: &[OutputInfo]) -> Result<(), String> {
        self.shared.lock().results = vec![BTreeMap::new(); outputs.len()];
        Ok(())
    }

    fn start_rows(&mut self, rows: &[RowOutputInfo]) -> Result<(), String> {
        self.row_outputs = Arc::new(rows.to_vec());
        let mut state = self.shared.lock();
        state.row_outputs = self.row_outputs.clone();
        state.rows = vec![BTreeMap::new(); rows.len()];
        Ok(())
    }

    fn live_started(&mut self, started: &LiveStarted) {
        self.shared.lock().first_epoch = Some(started.next_epoch);
        self.shared.changed.notify_all();
    }

    fn epoch(&mut self, view: &EpochView) -> Result<(), String> {
        // Deliver the changes first: whoever `wait`s for this epoch then finds them.
        if let Some(s) = &self.subscriber {
            let changes = EpochChanges {
                epoch: view.epoch,
                names: self.names.clone(),
                changes: view.changes.to_vec(),
                replayed: view.replayed,
                row_outputs: self.row_outputs.clone(),
                rows: view.rows.to_vec(),
            };
            if s.send(changes).is_err() {
                // Nobody listens any more: stop copying.
                self.subscriber = None;
            }
        }
        {
            let mut state = self.shared.lock();
            let kept = if self.keep_results { view.changes } else { &[] };
            for (result, changes) in state.results.iter_mut().zip(kept) {
                for c in changes {
                    let entry = result.entry((c.key, c.value)).or_insert(0);
                    *entry += c.diff as Diff;
                    if *entry == 0 {
                        result.remove(&(c.key, c.value));
                    }
                }
            }
            let kept = if self.keep_results { view.rows } else { &[] };
            for (rows, changes) in state.rows.iter_mut().zip(kept) {
                for c in changes {
                    let row = (c.key.clone(), c.value.clone());
                    let entry = rows.entry(row).or_insert(0);
                    *entry += c.diff as Diff;
                    if *entry == 0 {
                        rows.remove(&(c.key.clone(), c.value.clone()));
                    }
                }
            }
            state.completed = Some(view.epoch);
        }
        self.shared.changed.notify_all();
        Ok(())
    }
}

impl Default for JobBuilder {
    fn default() -> Self {
        JobBuilder {
            algorithms: Vec::new(),
            workers: 1,
            state_dir: None,
            snapshot_every: None,
            window: None,
            graph: None,
            insert_only: false,
            max_behind: 16,
            changes: false,
            params: Params::default(),
            options: None,
            keep_results: true,
        }
    }
}

impl JobBuilder {
    /// Adds an algorithm: a built-in one ([`crate::dataflow::by_name`]) or your own (for
    /// example a [`crate::dataflow::custom`] closure).
    pub fn algorithm(mut self, algorithm: impl Algorithm) -> Self {
        self.algorithms.push(Box::new(algorithm));
        self
    }

    /// Sets the parameters later [`JobBuilder::builtin`] calls use (source vertex, iterations...).
    pub fn params(mut self, params: Params) -> Self {
        self.params = params;
        self
    }

    /// Adds a built-in algorithm by its command-line name (`wcc`, `bfs`, `pagerank`, ...).
    pub fn builtin(mut self, name: &str) -> Result<Self, JobError> {
        self.algorithms.push(crate::dataflow::by_name(name, &self.params)?);
        Ok(self)
    }

    /// Worker threads (default 1).
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers;
        self
    }

    /// Makes every committed epoch durable in `dir`; a job started on it again recovers them.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// With a state directory: snapshot the edge multiset every `n` epochs.
    pub fn snapshot_every(mut self, n: u64) -> Self {
        self.snapshot_every = Some(n);
        self
    }

    /// Event-time windows: updates then carry event times ([`Job::insert_at`]).
    pub fn window(mut self, window: WindowSpec) -> Self {
        self.window = Some(window);
        self
    }

    /// Reads this edge file as the initial graph (epoch 0) on a fresh start.
    pub fn graph(mut self, path: impl Into<PathBuf>) -> Self {
        self.graph = Some(path.into());
        self
    }

    /// Declares that no update deletes: deletions are rejected, and insert-only fast paths apply.
    pub fn insert_only(mut self) -> Self {
        self.insert_only = true;
        self
    }

    /// Backpressure: `commit` blocks while more than `epochs` epochs wait for the dataflow.
    pub fn max_behind(mut self, epochs: u64) -> Self {
        self.max_behind = epochs;
        self
    }

    /// Delivers every completed epoch's changes through [`Job::changes`] (an unbounded channel:
    /// read it, or it grows).
    pub fn changes(mut self) -> Self {
        self.changes = true;
        self
    }

    /// Runs the job with these driver options instead of the builder's own input and settings:
    /// their layout (several processes too), their source — typically a live front end
    /// ([`Source::Live`]) reading stdin, TCP producers or a followed file, configured with
    /// everything `ripples run --live/--listen/--follow` can set (batching, wall-clock epochs,
    /// durability, windows, TLS, authentication) —, their output files and their observers (the
    /// job adds its own). Updates then come from that source: [`Job::insert`] and the other
    /// submissions return [`JobError::Config`], and the job ends when its input does
    /// ([`Job::finish`]). The builder's workers, state directory, window, graph, insert-only
    /// and backpressure settings are ignored (the options' front-end configuration has its own).
    /// This is the command line's live mode.
    pub fn run_options(mut self, options: RunOptions) -> Self {
        self.options = Some(options);
        self
    }

    /// Does not keep the current results in memory: [`Job::value`] and [`Job::result`] then
    /// see nothing (changes still reach [`Job::changes`] and the run's outputs). For jobs whose
    /// results go to files, as the command line's.
    pub fn without_results(mut self) -> Self {
        self.keep_results = false;
        self
    }

    /// Starts the job: its workers, the front end, and (with a state directory) recovery. A run
    /// that fails before its front end is up (a bad state directory, graph file or address)
    /// returns [`JobError::Run`] with the driver's error.
    pub fn start(self) -> Result<Job, JobError> {
        if self.algorithms.is_empty() {
            return Err(JobError::Config("a job needs at least one algorithm".into()));
        }
        if self.workers == 0 {
            return Err(JobError::Config("a job needs at least one worker".into()));
        }
        let names: Arc<Vec<String>> = Arc::new(self.algorithms.iter().map(|a| a.name()).collect());
        let shared = Arc::new(Shared::default());
        let (subscriber, changes) = match self.changes {
            true => {
                let (tx, rx) = std::sync::mpsc::channel();
                (Some(tx), Some(rx))
            }
            false => (None, None),
        };
        let observer = JobObserver {
            shared: shared.clone(),
            names: names.clone(),
            subscriber,
            keep_results: self.keep_results,
            row_outputs: Arc::default(),
        };
        let (sender, options) = match self.options {
            Some(options) => {
                options.observers.push(Box::new(observer));
                (None, options)
            }
            None => {
                let (sender, input) = EmbeddedInput::channel(4);
                let mut live = LiveConfig::new(LiveInput::Embedded(input));
                live.workers = self.workers;
                live.state_dir = self.state_dir;
                live.snapshot_every = self.snapshot_every;
                live.window = self.window;
                live.graph = self.graph;
                live.insert_only = self.insert_only;
                live.max_behind = self.max_behind;
                let options = RunOptions {
                    layout: Layout::threads(self.workers),
                    source: Source::Live(live),
                    window: self.window,
                    collect: false,
                    observers: Observers::default().with(observer),
                    ..RunOptions::default()
                };
                (Some(sender), options)
            }
        };
        let embedded = matches!(&options.source, Source::Live(cfg) if matches!(cfg.input, LiveInput::Embedded(_)));
        // The front end runs in process 0 only; elsewhere there is nothing to wait for.
        let front_end = matches!(options.source, Source::Live(_)) && options.layout.process == 0;
        let algorithms = self.algorithms;
        let done = shared.clone();
        let thread = std::thread::Builder::new()
            .name("ripples-job".into())
            .spawn(move || {
                let result = crate::driver::run_many(options, algorithms);
                done.lock().finished = true;
                done.changed.notify_all();
                result
            })
            .map_err(|e| JobError::Config(format!("cannot start the job's thread: {}", e)))?;
        let mut job = Job {
            sender,
            embedded,
            pending: Vec::new(),
            next_epoch: 0,
            shared,
            thread: Some(thread),
            names,
            changes,
            outcome: None,
            error: None,
        };
        if !front_end {
            return Ok(job);
        }
        // Wait until the front end has started (or the run failed to start).
        let first = {
            let mut state = job.shared.lock();
            while state.first_epoch.is_none() && !state.finished {
                state = job.shared.changed.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            state.first_epoch
        };
        match first {
            Some(e) => job.next_epoch = e,
            None => {
                let reason = job.stop_reason();
                return Err(job.error.take().map(JobError::Run).unwrap_or(JobError::Stopped(reason)));
            }
        }
        Ok(job)
    }
}

impl Job {
    /// A builder: add algorithms, set workers and options, then [`JobBuilder::start`].
    pub fn builder() -> JobBuilder {
        JobBuilder::default()
    }

    /// Inserts one copy of the edge `src → dst` (weight 1) into the open epoch.
    pub fn insert(&mut self, src: Node, dst: Node) -> Result<(), JobError> {
        self.submit(Update { src, dst, weight: None, diff: 1 }, None)
    }

    /// Inserts one copy of the weighted edge `src → dst`.
    pub fn insert_weighted(&mut self, src: Node, dst: Node, weight: f64) -> Result<(), JobError> {
        self.submit(Update { src, dst, weight: Some(weight), diff: 1 }, None)
    }

    /// Removes one copy of the edge `src → dst` (weight 1); the edge must be present.
    pub fn remove(&mut self, src: Node, dst: Node) -> Result<(), JobError> {
        self.submit(Update { src, dst, weight: None, diff: -1 }, None)
    }

    /// Windowed jobs: inserts `src → dst` at event time `time`.
    pub fn insert_at(&mut self, src: Node, dst: Node, time: Time) -> Result<(), JobError> {
        self.submit(Update { src, dst, weight: None, diff: 1 }, Some(time))
    }

    /// Submits any update (with its event time in windowed jobs).
    pub fn submit(&mut self, update: Update, time: Option<Time>) -> Result<(), JobError> {
        if !self.embedded {
            return self.flush();
        }
        self.pending.push(Submission::Update(update, time));
        if self.pending.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// Inserts one copy of a record of the run's record input (its text, as on a `record +
    /// TEXT` line): for a dataflow that reads records
    /// ([`Typed::with_records`](crate::dataflow::typed::Typed::with_records)). It is checked when
    /// its epoch closes, like every update: a refused record stops the stream.
    pub fn push_record(&mut self, text: &str) -> Result<(), JobError> {
        self.submit_record(text, 1)
    }

    /// Deletes one copy of a record of the run's record input (one must be present).
    pub fn remove_record(&mut self, text: &str) -> Result<(), JobError> {
        self.submit_record(text, -1)
    }

    fn submit_record(&mut self, text: &str, diff: i8) -> Result<(), JobError> {
        if !self.embedded {
            return self.flush();
        }
        self.pending.push(Submission::Record(text.to_string(), diff));
        if self.pending.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    /// Closes the open epoch and returns its number. It completes later: [`Job::wait`].
    pub fn commit(&mut self) -> Result<Time, JobError> {
        self.pending.push(Submission::Commit);
        self.flush()?;
        let epoch = self.next_epoch;
        self.next_epoch += 1;
        Ok(epoch)
    }

    /// Waits until `epoch` has completed: its changes are applied to [`Job::value`] and
    /// delivered through [`Job::changes`].
    pub fn wait(&mut self, epoch: Time) -> Result<(), JobError> {
        {
            let mut state = self.shared.lock();
            loop {
                if state.completed.is_some_and(|c| c >= epoch) {
                    return Ok(());
                }
                if state.finished {
                    break;
                }
                state = self.shared.changed.wait(state).unwrap_or_else(|p| p.into_inner());
            }
        }
        Err(JobError::Stopped(self.stop_reason()))
    }

    /// The last completed epoch.
    pub fn completed(&self) -> Option<Time> {
        self.shared.lock().completed
    }

    /// The current value of `key` in the result of the algorithm called `name` (as of the last
    /// completed epoch); `None` when the key is not in the result. Floating-point results are the
    /// `f64`'s bits (`f64::from_bits`). A key with several values (multi-valued results) gives
    /// the smallest.
    pub fn value(&self, name: &str, key: Node) -> Option<u64> {
        let i = self.names.iter().position(|n| n == name)?;
        let state = self.shared.lock();
        state.results.get(i)?.range((key, 0)..=(key, u64::MAX)).next().map(|((_, v), _)| *v)
    }

    /// The whole current result of `name`, sorted by key.
    pub fn result(&self, name: &str) -> Result<Vec<(Node, u64)>, JobError> {
        let i = self.names.iter().position(|n| n == name).ok_or_else(|| JobError::UnknownOutput(name.into()))?;
        let state = self.shared.lock();
        Ok(state
            .results
            .get(i)
            .map(|r| r.iter().flat_map(|(&kv, &n)| std::iter::repeat_n(kv, n.max(0) as usize)).collect())
            .unwrap_or_default())
    }

    /// The typed outputs' names (`DATAFLOW.OUTPUT`, as their files are named), in order; known
    /// once the job has started.
    pub fn row_outputs(&self) -> Vec<String> {
        self.shared.lock().row_outputs.iter().map(|o| o.name.clone()).collect()
    }

    /// The current rows of typed output `name` (`DATAFLOW.OUTPUT`) as of the last completed
    /// epoch, as text (key text, value text: JSON text for [`Outputs::json`] outputs), sorted by
    /// text, a row once per copy.
    ///
    /// [`Outputs::json`]: crate::dataflow::typed::Outputs::json
    pub fn rows(&self, name: &str) -> Result<Vec<(String, String)>, JobError> {
        let state = self.shared.lock();
        let i = state
            .row_outputs
            .iter()
            .position(|o| o.name == name)
            .ok_or_else(|| JobError::UnknownOutput(name.into()))?;
        Ok(state.rows[i].iter().flat_map(|(kv, &n)| std::iter::repeat_n(kv.clone(), n.max(0) as usize)).collect())
    }

    /// The current rows of typed output `name` decoded to the dataflow's types, which implement
    /// `Deserialize`: a JSON output's text is read as JSON; a `Display` output's text as JSON
    /// where it is (numbers), else as a JSON string (`String` reads any). In the order of
    /// [`Job::rows`].
    ///
    /// ```
    /// use ripples::dataflow::typed::typed;
    /// use ripples::job::Job;
    /// let deg = typed("deg", |input, out| {
    ///     let degree = input.edges.map(|(s, _, _)| s).count().map(|(v, n)| (v, n as u64));
    ///     out.display("out", degree.clone());
    ///     out.json("named", degree.map(|(v, d)| (format!("v{v}"), vec![d])));
    ///     Ok::<(), String>(())
    /// });
    /// let mut job = Job::builder().algorithm(deg).workers(2).start().unwrap();
    /// job.insert(1, 2).unwrap();
    /// job.insert(1, 3).unwrap();
    /// job.insert(2, 3).unwrap();
    /// let e = job.commit().unwrap();
    /// job.wait(e).unwrap();
    /// assert_eq!(job.row_outputs(), ["deg.out", "deg.named"]);
    /// assert_eq!(job.rows("deg.out").unwrap(), [("1".to_string(), "2".to_string()), ("2".into(), "1".into())]);
    /// assert_eq!(job.rows_as::<u64, u64>("deg.out").unwrap(), [(1, 2), (2, 1)]);
    /// assert_eq!(job.rows_as::<String, Vec<u64>>("deg.named").unwrap(), [("v1".to_string(), vec![2]), ("v2".into(), vec![1])]);
    /// assert!(job.rows_as::<u64, u64>("deg.named").unwrap_err().to_string().starts_with("output deg.named: cannot read"));
    /// ```
    pub fn rows_as<K: DeserializeOwned, V: DeserializeOwned>(&self, name: &str) -> Result<Vec<(K, V)>, JobError> {
        let (format, rows) = {
            let state = self.shared.lock();
            let i = state.row_outputs.iter().position(|o| o.name == name);
            let i = i.ok_or_else(|| JobError::UnknownOutput(name.into()))?;
            (state.row_outputs[i].format, state.rows[i].clone())
        };
        let mut out = Vec::new();
        for ((k, v), n) in rows {
            for _ in 0..n.max(0) {
                out.push((decode(name, format, &k)?, decode(name, format, &v)?));
            }
        }
        Ok(out)
    }

    /// Every completed epoch's changes, when the job was built with [`JobBuilder::changes`].
    pub fn changes(&self) -> Option<&Receiver<EpochChanges>> {
        self.changes.as_ref()
    }

    /// Takes the changes channel out of the job, to keep reading it after [`Job::shutdown`]
    /// (which delivers the last epochs: with windows, the ones the end of the stream closes).
    pub fn take_changes(&mut self) -> Option<Receiver<EpochChanges>> {
        self.changes.take()
    }

    /// The algorithms' names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Commits what is still open (if anything), ends the stream, waits for the last epoch and
    /// returns the run's report.
    pub fn shutdown(mut self) -> Result<RunReport, JobError> {
        if self.pending.iter().any(|s| matches!(s, Submission::Update(..) | Submission::Record(..))) {
            self.commit()?;
        }
        match self.join() {
            Ok(Some(report)) => Ok(report),
            Ok(None) => Err(JobError::Stopped("the job produced no report".into())),
            Err(reason) => Err(JobError::Stopped(reason)),
        }
    }

    /// Waits for the run to end and returns exactly what the driver returned: the report
    /// (`None` in a process other than 0 of a cluster) or the driver's error, with its kind
    /// (bad input, a lost peer, ...). A job fed by a transport ([`JobBuilder::run_options`])
    /// ends when its input does (stdin's end, a producer's `end`); a job fed by the program
    /// ends here, with what is committed (uncommitted updates are dropped; see
    /// [`Job::shutdown`]).
    pub fn finish(mut self) -> Result<Option<RunReport>, RunError> {
        self.pending.clear();
        let outcome = self.join();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        outcome.map_err(RunError::Other)
    }

    fn flush(&mut self) -> Result<(), JobError> {
        if !self.embedded {
            self.pending.clear();
            return Err(JobError::Config(
                "this job reads its updates from its own input (JobBuilder::run_options), not from the program".into(),
            ));
        }
        let batch = std::mem::take(&mut self.pending);
        let sent = match &self.sender {
            Some(s) => s.send(batch).is_ok(),
            None => false,
        };
        if sent {
            Ok(())
        } else {
            Err(JobError::Stopped(self.stop_reason()))
        }
    }

    /// Joins the run's thread (once) and returns its outcome.
    fn join(&mut self) -> Result<Option<RunReport>, String> {
        if self.outcome.is_none() {
            // The stream ends when its sender goes: the run can finish.
            self.sender = None;
            let outcome = match self.thread.take().map(|t| t.join()) {
                Some(Ok(Ok(report))) => Ok(report),
                Some(Ok(Err(e))) => {
                    let reason = e.to_string();
                    self.error = Some(e);
                    Err(reason)
                }
                Some(Err(_)) => Err("the job's thread failed".to_string()),
                None => Err("the job has ended".to_string()),
            };
            self.outcome = Some(outcome);
        }
        self.outcome.clone().unwrap_or_else(|| Err("the job has ended".into()))
    }

    fn stop_reason(&mut self) -> String {
        match self.join() {
            Ok(_) => "the job has ended".to_string(),
            Err(reason) => reason,
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.sender = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
