//! Turning sources into what each worker feeds: its share of the initial graph and of every
//! epoch's updates, after every worker has agreed that the whole input is valid.
//!
//! * The edge and vertex files are split by byte range: worker `i` of `p` parses the lines that
//!   start in its `1/p` of the file. No single reader sits in front of the dataflow.
//! * The update file is parsed by every worker (it is also where deletions are validated); of
//!   each epoch's batch, worker `i` of `p` feeds the contiguous slice `[n*i/p, n*(i+1)/p)` of
//!   its `n` updates (see [`WorkerShare`]), so the workers together feed every update exactly
//!   once without copying the stream.
//! * In a cluster, an algorithm that routes every input edge to a worker by the edge alone
//!   ([`crate::dataflow::Algorithm::input_route`]) gets its edges placed by that route instead
//!   ([`Placement`]): each process reads the whole edge file, split among its own workers by
//!   byte range, and keeps the edges the route sends to one of its workers; of each epoch's
//!   updates its workers feed the ones it sends there. So no input edge crosses the network on
//!   its way to its worker.
//! * Validation happens before anything is fed: a malformed line anywhere, or a deletion of an
//!   edge copy that is not present at that point of the stream, stops the run on every worker
//!   with the same message (the earliest error: graph file, then vertex file, then update file,
//!   by line), and no epoch is applied.

use rustc_hash::{FxHashMap, FxHashSet};
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use timely::worker::Worker;

use crate::sources::parse::{read_edges_range, read_edges_range_where, read_vertices_range, SourceError};
use crate::sources::window::{check_update, EventClock, LatePolicy, WindowSpec};
use crate::types::{weight_bits, Diff, Edge, Node, Time, Update};

use super::allgather::allgather;
use super::packed::{PackedTimes, PackedUpdates};
pub use super::placement::{Placement, Placements};

/// Where the graph stream comes from.
// One value per run: the size of its largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Source {
    /// Files on disk (each process reads the same paths).
    Files(FileSource),
    /// A stream already in memory (generated), identical in every process.
    Memory(Arc<MemoryStream>),
    /// Live input: stdin, TCP producers or a growing file (read by process 0).
    Live(crate::live::LiveConfig),
}

/// Input files of a run.
#[derive(Clone, Debug, Default)]
pub struct FileSource {
    /// Edge file: the initial graph (epoch 0).
    pub graph: Option<PathBuf>,
    /// Vertex file: vertices that belong to the result even without edges.
    pub vertices: Option<PathBuf>,
    /// Update file: epochs 1, 2, ...
    pub updates: Option<PathBuf>,
    /// Update lines per epoch; `None` puts the whole update file in epoch 1.
    pub batch: Option<usize>,
    /// Update lines in epoch 1 when it should differ from `batch` (say, a window's first fill).
    pub first_batch: Option<usize>,
}

/// A graph stream held in memory.
#[derive(Clone, Debug, Default)]
pub struct MemoryStream {
    /// Vertices of the vertex set even without edges.
    pub vertices: Vec<Node>,
    /// The initial graph (epoch 0), one entry per edge copy.
    pub initial: Vec<(Node, Node, Option<f64>)>,
    /// The updates, cut into epochs of `batch` updates (epoch 1, 2, ...).
    pub updates: Vec<Update>,
    /// Updates per epoch (at least 1).
    pub batch: usize,
}

/// Converts `list` into a new vector, element by element in order, taking the elements off
/// its end in chunks and shrinking it as it goes: at no moment do both vectors hold the whole
/// list (the new one is filled back to front, then reversed in place).
pub fn convert_shrinking<S, T>(mut list: Vec<S>, mut f: impl FnMut(S) -> T) -> Vec<T> {
    let n = list.len();
    convert_tail(&mut list, n, &mut f)
}

/// [`convert_shrinking`] of the last `n` elements of `list` (they leave it).
fn convert_tail<S, T>(list: &mut Vec<S>, n: usize, f: &mut impl FnMut(S) -> T) -> Vec<T> {
    const CHUNK: usize = 1 << 16;
    let stop = list.len() - n.min(list.len());
    let mut out = Vec::with_capacity(list.len() - stop);
    while list.len() > stop {
        let rest = list.len().saturating_sub(CHUNK).max(stop);
        out.extend(list.drain(rest..).rev().map(&mut *f));
        list.shrink_to_fit();
    }
    out.reverse();
    out
}

/// A memory stream's initial graph, taken out of the stream before the workers start (when
/// the run is the stream's only owner): each local worker's share, converted, for it to take.
/// The stream's own copy is then gone before epoch 0 is fed, and each share is freed as it is
/// fed.
#[derive(Debug, Default)]
pub struct TakenInitial(Vec<std::sync::Mutex<Option<Vec<Edge>>>>);

impl TakenInitial {
    /// Takes the initial graph out of `source` if it is a memory stream owned by nothing else,
    /// cut into the shares of `peers` workers, of which `local` (global indices) are kept.
    pub fn take(source: &mut Source, peers: usize, local: std::ops::Range<usize>) -> Option<Self> {
        let Source::Memory(stream) = source else { return None };
        let stream = Arc::get_mut(stream)?;
        let mut list = std::mem::take(&mut stream.initial);
        let len = list.len();
        let mut shares: Vec<Option<Vec<Edge>>> = (0..peers).map(|_| None).collect();
        let mut convert = |(s, d, w): (Node, Node, Option<f64>)| (s, d, weight_bits(w));
        for index in (0..peers).rev() {
            let r = range(len, index, peers);
            if local.contains(&index) {
                shares[index] = Some(convert_tail(&mut list, r.len(), &mut convert));
            } else {
                list.truncate(r.start);
                list.shrink_to_fit();
            }
        }
        Some(TakenInitial(shares.into_iter().map(std::sync::Mutex::new).collect()))
    }

    fn share(&self, index: usize) -> Option<Vec<Edge>> {
        self.0.get(index)?.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }
}

/// What the workers of one process share of a run's input: a memory stream's initial graph
/// taken out of it ([`TakenInitial`]), and the update file, read, windowed and listed once per
/// process ([`SharedUpdates`]).
#[derive(Debug, Default)]
pub struct ProcessInput {
    /// The initial graph of a memory stream owned by the run alone.
    pub taken: Option<TakenInitial>,
    /// The update file's stages.
    pub updates: SharedUpdates,
}

/// One stage of the update file shared by the workers of a process: the first worker to need it
/// makes it (the others wait for it, holding the lock), each takes a clone of the `Arc`s, and the
/// last of them leaves it empty, so that it is not kept for the run after every worker moved on.
#[derive(Debug)]
struct Stage<T> {
    slot: std::sync::Mutex<(Option<T>, usize)>,
}

impl<T> Default for Stage<T> {
    fn default() -> Self {
        Stage { slot: std::sync::Mutex::new((None, 0)) }
    }
}

impl<T: Clone> Stage<T> {
    fn get(&self, workers: usize, make: impl FnOnce() -> T) -> T {
        let mut slot = self.slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let value = slot.0.get_or_insert_with(make).clone();
        slot.1 += 1;
        if slot.1 >= workers {
            slot.0 = None;
        }
        value
    }
}

/// The update file of a file run as the workers of one process share it (every worker needs all
/// of it: it checks every deletion and cuts its slice of every epoch): read and checked once,
/// windowed once, listed once, instead of once per worker.
#[derive(Debug, Default)]
pub struct SharedUpdates {
    /// The workers of this process.
    workers: usize,
    parsed: Stage<Result<ParsedUpdates, InputFailure>>,
    windowed: Stage<Result<Windowed, InputFailure>>,
    listed: Stage<Arc<PackedUpdates>>,
}

impl SharedUpdates {
    /// For a process of `workers` workers.
    pub fn new(workers: usize) -> Self {
        SharedUpdates { workers: workers.max(1), ..SharedUpdates::default() }
    }
}

/// The update file's `(line, update)`s and, in windowed runs, their event times.
type ParsedUpdates = (Arc<Vec<(usize, Update)>>, Arc<Vec<Time>>);

/// A windowed stream with its late updates decided ([`apply_window`]).
#[derive(Clone, Debug)]
struct Windowed {
    updates: Arc<Vec<(usize, Update)>>,
    times: Arc<PackedTimes>,
    bounds: Vec<usize>,
    facts: WindowFacts,
}

/// Why a run could not start: the same on every worker.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InputFailure {
    /// 2 for bad input data, 1 for a file that cannot be read.
    pub exit_code: i32,
    /// Which input (0 graph, 1 vertices, 2 updates) and line, to pick the earliest.
    pub order: (u8, usize),
    /// Full message, naming the file and line.
    pub message: String,
}

/// The update stream, cut into epochs of `batch` updates: a file's, packed and shared by the
/// process's workers; a memory stream's, shared with its owner.
#[derive(Debug, Clone)]
enum UpdateList {
    Packed(Arc<PackedUpdates>),
    Shared(Arc<MemoryStream>),
}

impl Default for UpdateList {
    fn default() -> Self {
        UpdateList::Packed(Arc::default())
    }
}

impl UpdateList {
    fn len(&self) -> usize {
        match self {
            UpdateList::Packed(p) => p.len(),
            UpdateList::Shared(m) => m.updates.len(),
        }
    }
    /// Update `i` as the edge it changes and its diff.
    #[inline]
    fn get(&self, i: usize) -> (Edge, Diff) {
        match self {
            UpdateList::Packed(p) => p.get(i),
            UpdateList::Shared(m) => {
                let u = &m.updates[i];
                (u.edge(), u.diff as Diff)
            }
        }
    }
}

/// What one worker feeds into the dataflow: its share of the initial graph, and its share of
/// every epoch of updates (a contiguous slice of the epoch's batch, so that the workers together
/// feed every update exactly once without copying the stream; with a [`Placement`], the updates
/// of the worker's slice of its process's share that belong to the process).
#[derive(Debug, Default)]
pub struct WorkerShare {
    /// The worker's share of the vertex file's vertices.
    pub vertices: Vec<Node>,
    /// The worker's share of the initial graph (epoch 0), one entry per edge copy.
    pub initial: Vec<Edge>,
    updates: UpdateList,
    batch: usize,
    /// Windowed runs: the event time of each update, and where each epoch ends in the update
    /// list (late updates are dropped, so epochs have different sizes).
    times: Arc<PackedTimes>,
    bounds: Vec<usize>,
    index: usize,
    peers: usize,
    /// In a cluster: which edges this process feeds.
    placement: Option<Placement>,
}

impl WorkerShare {
    /// Number of update epochs (epochs 1, 2, ...).
    pub fn epochs(&self) -> usize {
        if self.bounds.is_empty() {
            self.updates.len().div_ceil(self.batch.max(1))
        } else {
            self.bounds.len() - 1
        }
    }
    /// Update epoch `epoch` (1-based): its positions in the update list, over all workers.
    fn epoch_range(&self, epoch: usize) -> std::ops::Range<usize> {
        let len = self.updates.len();
        if self.bounds.is_empty() {
            ((epoch - 1) * self.batch).min(len)..(epoch * self.batch).min(len)
        } else {
            self.bounds[epoch - 1]..self.bounds[epoch]
        }
    }
    /// This worker's slice (positions in the update list) of update epoch `epoch` (1-based):
    /// its part of the epoch, or with a [`Placement`] its part of what its process reads.
    fn slice(&self, epoch: usize) -> std::ops::Range<usize> {
        let (part, parts) = match &self.placement {
            Some(p) => (self.index - p.first, p.workers),
            None => (self.index, self.peers),
        };
        let std::ops::Range { start, end } = self.epoch_range(epoch);
        let n = end - start;
        start + n * part / parts..start + n * (part + 1) / parts
    }
    /// Whether this worker's process feeds `edge` (always, without a [`Placement`]).
    #[inline]
    fn keeps(&self, edge: &Edge) -> bool {
        self.placement.as_ref().is_none_or(|p| p.keeps(edge.0, edge.1))
    }
    /// Whether this worker feeds nothing at all: no edge of the initial graph, no update of any
    /// epoch (its process keeps none, or its slices are empty).
    pub fn feeds_nothing(&self) -> bool {
        self.initial.is_empty()
            && (1..=self.epochs()).all(|e| self.slice(e).all(|i| !self.keeps(&self.updates.get(i).0)))
    }
    /// This worker's updates of update epoch `epoch` (1-based).
    pub fn epoch(&self, epoch: usize) -> impl Iterator<Item = (Edge, Diff)> + '_ {
        self.slice(epoch).map(|i| self.updates.get(i)).filter(|(e, _)| self.keeps(e))
    }
    /// This worker's updates of update epoch `epoch` (1-based) of a windowed run, with their
    /// event times.
    pub fn timed_epoch(&self, epoch: usize) -> impl Iterator<Item = (Edge, Time)> + '_ {
        let range = self.slice(epoch);
        range.clone().map(|i| self.updates.get(i).0).zip(self.times.range(range)).filter(|(e, _)| self.keeps(e))
    }
}

/// The epochs of a list of `len` updates: `first` (default `batch`) of them, then `batch` each.
fn epoch_ranges(len: usize, first: Option<usize>, batch: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let first = first.unwrap_or(batch).max(1).min(len);
    let batch = batch.max(1);
    let rest = (first..len).step_by(batch).map(move |start| start..(start + batch).min(len));
    std::iter::once(0..first).filter(move |_| len > 0).chain(rest)
}

/// The contiguous range of `len` items that worker `index` of `peers` takes.
fn range(len: usize, index: usize, peers: usize) -> std::ops::Range<usize> {
    len * index / peers..len * (index + 1) / peers
}

/// Facts about the whole input, the same on every worker.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct InputFacts {
    /// Edge copies in the initial graph.
    pub initial_edges: u64,
    /// Updates in each epoch 1, 2, ...
    pub epoch_updates: Vec<u64>,
    /// Bytes of the edge and vertex files.
    pub bytes: u64,
    /// Whether the update stream deletes anything (the initial graph never does).
    pub has_deletions: bool,
    /// Windowed runs: the watermark's course.
    pub window: Option<WindowFacts>,
}

/// How the watermark of a windowed file run moves (the same on every worker).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WindowFacts {
    /// After each epoch 1, 2, ...: the watermark ...
    pub watermarks: Vec<Time>,
    /// ... the output frontier (results of earlier times are final) ...
    pub frontiers: Vec<Time>,
    /// ... and the late updates in it (dropped, or applied with `--late apply`).
    pub late: Vec<u64>,
    /// Every late update: `file:line`, why it is late, and what happened to it
    /// (`--late-output`).
    pub late_lines: Vec<(String, String, String)>,
    /// The frontier once the stream has ended.
    pub final_frontier: Time,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct LocalReport {
    error: Option<InputFailure>,
    initial_edges: u64,
    /// Multiplicities, in this worker's share of the initial graph, of the edges the update
    /// stream deletes.
    deleted_key_counts: Vec<(Edge, u64)>,
}

fn failure(order: u8, e: SourceError) -> InputFailure {
    match &e {
        SourceError::Input(input) => InputFailure { exit_code: 2, order: (order, input.line), message: e.to_string() },
        _ => InputFailure { exit_code: 1, order: (order, 0), message: e.to_string() },
    }
}

/// Live input's vertex file (`--vertices`): this worker's byte range of it, read by every worker
/// of every process; a bad line stops every worker with the same (earliest) error.
pub fn load_vertices(worker: &mut Worker, path: &std::path::Path) -> Result<Vec<Node>, InputFailure> {
    let local = read_vertices_range(path, worker.index(), worker.peers()).map_err(|e| failure(1, e));
    let errors = allgather(worker, local.as_ref().err().cloned());
    match errors.into_iter().flatten().min_by_key(|f| f.order) {
        Some(f) => Err(f),
        None => Ok(local.unwrap_or_default()),
    }
}

/// Loads, validates and shares out the input. Every worker must call this (it communicates).
/// With `trusted`, a memory stream's deletions are not validated (the generators in
/// `crate::sources::stream` only delete present copies).
///
/// With `window`, every update must carry an event time and insert; late updates are dropped or
/// fail the run as the spec says (see [`crate::sources::window`]).
pub fn load(
    worker: &mut Worker,
    source: &Source,
    trusted: bool,
    window: Option<&WindowSpec>,
    process: &ProcessInput,
    placements: Placements,
) -> Result<(WorkerShare, InputFacts), InputFailure> {
    let (taken, shared) = (process.taken.as_ref(), &process.updates);
    let index = worker.index();
    let peers = worker.peers();

    // 1. Local parsing.
    let mut local = match source {
        Source::Files(files) => parse_files(files, index, peers, window, shared, placements),
        Source::Live(_) => return Err(setup_failure("internal error: live input is not loaded up front")),
        Source::Memory(_) if window.is_some() => {
            return Err(setup_failure("windows need event times: give an update file whose lines end with @T"))
        }
        Source::Memory(stream) => memory_share(stream, index, peers, trusted, taken),
    };
    if matches!(local.batch, Some(0)) {
        local.error = Some(setup_failure("--batch must be at least 1"));
    }

    // 2. Multiplicities of deleted edges in this worker's share of the initial graph.
    let (report, has_deletions) = local_report(&mut local, source, trusted);

    // 3. Agree.
    let reports = allgather(worker, report);
    if let Some(first) = reports.iter().filter_map(|r| r.error.clone()).min_by_key(|e| e.order) {
        return Err(first);
    }

    // 4. Validate deletions against the global multiset, in stream order.
    if has_deletions {
        validate_deletions(&reports, &local, source)?;
    }

    // 5. Windowed runs: decide lateness epoch by epoch, drop (or refuse) late updates.
    let window_facts = match (window, source) {
        (Some(spec), Source::Files(_)) => {
            let windowed = shared.windowed.get(shared.workers, || apply_window(spec, &local));
            let Windowed { updates, times, bounds, facts } = windowed?;
            (local.updates, local.share.times, local.share.bounds) = (updates, times, bounds);
            Some(facts)
        }
        _ => None,
    };

    // 6. Cut into epochs; each worker feeds a contiguous slice of each epoch.
    let initial_edges = reports.iter().map(|r| r.initial_edges).sum();
    let (bytes, share) = (local.bytes, cut_epochs(local, source, index, peers, shared));
    let epoch_updates: Vec<u64> = (1..=share.epochs()).map(|e| share.epoch_range(e).len() as u64).collect();
    let facts = InputFacts { initial_edges, epoch_updates, bytes, has_deletions, window: window_facts };
    Ok((share, facts))
}

/// What one worker has of the input after parsing it on its own, before the workers agree.
#[derive(Default)]
pub(super) struct Parsed {
    /// The worker's share, its vertices and initial graph filled in.
    share: WorkerShare,
    /// The earliest problem this worker found.
    pub(super) error: Option<InputFailure>,
    /// Bytes of the edge and vertex files.
    bytes: u64,
    /// `(line, update)` for the whole stream; for memory streams only the deletions (the full
    /// stream is shared), with `memory_deletions_only`.
    updates: Arc<Vec<(usize, Update)>>,
    /// Windowed runs: the event time of each entry of `updates`.
    times: Arc<Vec<Time>>,
    /// The update file's name in messages (`<generated updates>` for a memory stream).
    update_label: String,
    /// Whether `updates` holds only a memory stream's deletions.
    memory_deletions_only: bool,
    /// Updates per epoch (`None`: the whole stream in epoch 1).
    batch: Option<usize>,
    /// Updates in epoch 1, when it differs from `batch`.
    first_batch: Option<usize>,
}

impl Parsed {
    /// Keeps `f` if it comes before the problem found so far (or there is none).
    fn keep_earliest(&mut self, f: InputFailure) {
        if self.error.as_ref().map(|x| f.order < x.order).unwrap_or(true) {
            self.error = Some(f);
        }
    }
}

/// A problem with the run's setup rather than a line of its input (exit status 1).
fn setup_failure(message: &str) -> InputFailure {
    InputFailure { exit_code: 1, order: (0, 0), message: message.to_string() }
}

/// Step 1 for files: this worker's byte ranges of the edge and vertex files (with a
/// [`Placement`], its byte range of the part of the edge file its process reads, the process's
/// edges kept), and the whole update file, each update checked against the window spec.
pub(super) fn parse_files(
    files: &FileSource,
    index: usize,
    peers: usize,
    window: Option<&WindowSpec>,
    shared: &SharedUpdates,
    placements: Placements,
) -> Parsed {
    let mut local = Parsed {
        update_label: String::from("<generated updates>"),
        batch: files.batch,
        first_batch: files.first_batch,
        ..Parsed::default()
    };
    if let Some(path) = &files.updates {
        local.update_label = path.display().to_string();
        let parsed = shared.parsed.get(shared.workers, || {
            let mut times = Vec::new();
            let updates = read_checked_updates(path, window, &mut times).map_err(|e| failure(2, e))?;
            Ok((Arc::new(updates), Arc::new(times)))
        });
        match parsed {
            Ok((updates, times)) => (local.updates, local.times) = (updates, times),
            Err(e) => local.keep_earliest(e),
        }
    }
    // The update file decides the placement: whether the stream only inserts.
    let insert_only = window.is_none() && !local.updates.iter().any(|(_, u)| u.diff < 0);
    let placement = if insert_only { placements.insert_only } else { placements.deleting };
    local.share.placement = placement;
    if let Some(path) = &files.graph {
        local.bytes += std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let edges = match &placement {
            // (Its lines are checked by the process that reads them.)
            Some(p) if p.keeps_none() => Ok(Vec::new()),
            Some(p) => read_edges_range_where(path, index - p.first, p.workers, |s, d| p.keeps(s, d)),
            None => read_edges_range(path, index, peers),
        };
        match edges {
            Ok(edges) => local.share.initial = edges.into_iter().map(|(s, d, w)| (s, d, weight_bits(w))).collect(),
            Err(e) => local.keep_earliest(failure(0, e)),
        }
    }
    if let Some(path) = &files.vertices {
        local.bytes += std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        match read_vertices_range(path, index, peers) {
            Ok(v) => local.share.vertices = v,
            Err(e) => local.keep_earliest(failure(1, e)),
        }
    }
    local
}

/// The update file's `(line, update)`s, each checked against the window spec; the event time of
/// each kept update pushed to `times` (windowed runs).
fn read_checked_updates(
    path: &std::path::Path,
    window: Option<&WindowSpec>,
    times: &mut Vec<Time>,
) -> Result<Vec<(usize, Update)>, SourceError> {
    // Checked as they are read: no list of the raw lines beside the kept ones.
    let mut out = Vec::new();
    crate::sources::parse::for_each_timed_update(path, |line, u, t| {
        if let Some(t) = check_update(window, &u, t)? {
            times.push(t);
        }
        out.push((line, u));
        Ok(())
    })?;
    out.shrink_to_fit();
    times.shrink_to_fit();
    Ok(out)
}

/// Step 1 for a memory stream: this worker's range of the initial graph (the share taken out of
/// the stream, if it was) and of the vertices; the deletions, with their positions as line
/// numbers, unless `trusted`.
fn memory_share(
    stream: &Arc<MemoryStream>,
    index: usize,
    peers: usize,
    trusted: bool,
    taken: Option<&TakenInitial>,
) -> Parsed {
    let mut local = Parsed {
        update_label: String::from("<generated updates>"),
        batch: Some(stream.batch.max(1)),
        memory_deletions_only: true,
        ..Parsed::default()
    };
    local.share.initial = match taken.and_then(|t| t.share(index)) {
        Some(initial) => initial,
        None => stream.initial[range(stream.initial.len(), index, peers)]
            .iter()
            .map(|&(s, d, w)| (s, d, weight_bits(w)))
            .collect(),
    };
    local.share.vertices = stream.vertices[range(stream.vertices.len(), index, peers)].to_vec();
    // Only deletions need line numbers (for validation messages).
    local.updates = Arc::new(
        stream.updates.iter().enumerate().filter(|(_, u)| u.diff < 0 && !trusted).map(|(i, u)| (i + 1, *u)).collect(),
    );
    local
}

/// Step 2: what this worker tells the others (its problem, its initial edges, the multiplicities
/// of deleted edges in its share of the initial graph), and whether the stream deletes at all.
fn local_report(local: &mut Parsed, source: &Source, trusted: bool) -> (LocalReport, bool) {
    // FxHash: these maps hold every deleted edge, and SipHash cost a fifth of the load phase.
    let deleted: FxHashMap<Edge, u64> =
        local.updates.iter().filter(|(_, u)| u.diff < 0).map(|(_, u)| (u.edge(), 0u64)).collect();
    let has_deletions = match source {
        Source::Memory(m) if trusted => m.updates.iter().any(|u| u.diff < 0),
        _ => !deleted.is_empty(),
    };
    let mut counts = deleted;
    if has_deletions && local.error.is_none() {
        for e in &local.share.initial {
            if let Some(c) = counts.get_mut(e) {
                *c += 1;
            }
        }
    }
    let report = LocalReport {
        error: local.error.take(),
        initial_edges: local.share.initial.len() as u64,
        deleted_key_counts: counts.into_iter().filter(|(_, c)| *c > 0).collect(),
    };
    (report, has_deletions)
}

/// Step 4: every deletion removes an edge copy present at that point of the stream, counting
/// the copies of the whole initial graph (`reports`) and the updates before it.
fn validate_deletions(reports: &[LocalReport], local: &Parsed, source: &Source) -> Result<(), InputFailure> {
    let mut present: FxHashMap<Edge, u64> = FxHashMap::default();
    for r in reports {
        for (e, c) in &r.deleted_key_counts {
            *present.entry(*e).or_insert(0) += c;
        }
    }
    let tracked: FxHashSet<Edge> = local.updates.iter().filter(|(_, u)| u.diff < 0).map(|(_, u)| u.edge()).collect();
    let full: Vec<(usize, Update)>;
    let stream_for_validation: &[(usize, Update)] = match (local.memory_deletions_only, source) {
        (true, Source::Memory(m)) => {
            full = m
                .updates
                .iter()
                .enumerate()
                .filter(|(_, u)| tracked.contains(&u.edge()))
                .map(|(i, u)| (i + 1, *u))
                .collect();
            &full
        }
        _ => &local.updates[..],
    };
    for (line, u) in stream_for_validation {
        let e = u.edge();
        if !tracked.contains(&e) {
            continue;
        }
        let c = present.entry(e).or_insert(0);
        if u.diff > 0 {
            *c += 1;
        } else if *c == 0 {
            return Err(InputFailure {
                exit_code: 2,
                order: (2, *line),
                message: format!(
                    "{}:{}: deletion of edge {} -> {} (weight {}) that is not present",
                    local.update_label,
                    line,
                    u.src,
                    u.dst,
                    f64::from_bits(e.2)
                ),
            });
        } else {
            *c -= 1;
        }
    }
    Ok(())
}

/// Step 5 for a windowed file run: epoch by epoch, which updates are late (dropped, applied or
/// refused as the spec says) and how the watermark moves; the updates kept, their event times
/// and where each epoch ends go into `local`.
fn apply_window(spec: &WindowSpec, local: &Parsed) -> Result<Windowed, InputFailure> {
    let (updates, times) = (&local.updates, &local.times);
    let label = &local.update_label;
    let batch = local.batch.unwrap_or(updates.len().max(1));
    let mut clock = EventClock::new(*spec);
    let mut facts = WindowFacts::default();
    // The updates dropped as late, by index: the list is only copied (without them) if any is.
    let mut dropped = Vec::new();
    let mut kept_times = Vec::with_capacity(times.len());
    let mut bounds = vec![0];
    let mut late_lines = Vec::new();
    for range in epoch_ranges(updates.len(), local.first_batch, batch) {
        let mut late = 0;
        let first_new = kept_times.len();
        for i in range {
            let (line, t) = (updates[i].0, times[i]);
            if clock.is_late(t) {
                let action = spec.late_action(t, clock.frontier());
                if spec.late == LatePolicy::Error {
                    return Err(InputFailure {
                        exit_code: 2,
                        order: (2, line),
                        message: format!("{}:{}: {}", label, line, clock.late_reason(t)),
                    });
                }
                late += 1;
                late_lines.push((format!("{}:{}", label, line), clock.late_reason(t), action));
                if !action.is_applied() {
                    dropped.push(i);
                    continue;
                }
            }
            kept_times.push(t);
        }
        clock.close_epoch(kept_times[first_new..].iter().copied());
        bounds.push(kept_times.len());
        facts.watermarks.push(clock.watermark());
        facts.frontiers.push(clock.frontier());
        facts.late.push(late);
    }
    facts.final_frontier = clock.final_frontier();
    facts.late_lines =
        late_lines.into_iter().map(|(origin, reason, action)| (origin, reason, action.describe())).collect();
    let times = Arc::new(PackedTimes::pack(&kept_times));
    let updates = match dropped.is_empty() {
        true => Arc::clone(updates),
        false => {
            let mut next = dropped.iter().copied().peekable();
            let mut kept = Vec::with_capacity(updates.len() - dropped.len());
            for (i, &update) in updates.iter().enumerate() {
                if next.next_if_eq(&i).is_none() {
                    kept.push(update);
                }
            }
            Arc::new(kept)
        }
    };
    Ok(Windowed { updates, times, bounds, facts })
}

/// Step 6: the worker's share with the update list (a memory stream's shared, a file's owned)
/// and where its epochs end.
pub(super) fn cut_epochs(
    local: Parsed,
    source: &Source,
    index: usize,
    peers: usize,
    shared: &SharedUpdates,
) -> WorkerShare {
    let Parsed { mut share, updates, batch, first_batch, .. } = local;
    let batch = match source {
        Source::Memory(m) => {
            share.updates = UpdateList::Shared(m.clone());
            batch.unwrap_or(m.updates.len().max(1))
        }
        Source::Files(_) | Source::Live(_) => {
            let list = shared.listed.get(shared.workers, || Arc::new(PackedUpdates::pack(&updates)));
            drop(updates);
            let batch = batch.unwrap_or(list.len().max(1));
            share.updates = UpdateList::Packed(list);
            batch
        }
    };
    share.batch = batch;
    share.index = index;
    share.peers = peers;
    if share.bounds.is_empty() && first_batch.is_some() {
        share.bounds =
            std::iter::once(0).chain(epoch_ranges(share.updates.len(), first_batch, batch).map(|r| r.end)).collect();
    }
    share
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    #[test]
    fn a_stage_is_made_once_shared_by_the_workers_and_emptied_by_the_last() {
        let stage: Stage<Arc<Vec<u64>>> = Stage::default();
        let made = std::sync::atomic::AtomicUsize::new(0);
        let make = || {
            made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Arc::new(vec![1, 2, 3])
        };
        let got: Vec<Arc<Vec<u64>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..3).map(|_| scope.spawn(|| stage.get(3, make))).collect();
            handles.into_iter().map(|h| h.join().expect("a worker")).collect()
        });
        assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 1, "made more than once");
        assert!(got.iter().all(|g| Arc::ptr_eq(g, &got[0])), "the workers hold different copies");
        assert!(stage.slot.lock().expect("the slot").0.is_none(), "the stage still holds the list");
        // The only copies left are the workers'.
        assert_eq!(Arc::strong_count(&got[0]), 3);
    }

    #[test]
    fn converting_while_shrinking_keeps_the_order() {
        for n in [0usize, 1, 65_535, 65_536, 65_537, 200_001] {
            let list: Vec<u32> = (0..n as u32).collect();
            let out = convert_shrinking(list, |x| (x as u64) * 3);
            assert_eq!(out.len(), n);
            assert!(out.iter().enumerate().all(|(i, &x)| x == i as u64 * 3), "length {n}");
        }
    }

    #[test]
    fn the_initial_graph_is_taken_only_from_a_stream_owned_by_the_run() {
        let stream = || MemoryStream {
            initial: (0..100_003u64).map(|i| (i, i + 1, (i % 3 == 0).then_some(2.5))).collect(),
            batch: 1,
            ..MemoryStream::default()
        };
        let want: Vec<Edge> = stream().initial.iter().map(|&(s, d, w)| (s, d, weight_bits(w))).collect();
        // Three workers in all; this process runs workers 1 and 2.
        let mut source = Source::Memory(Arc::new(stream()));
        let taken = TakenInitial::take(&mut source, 3, 1..3).expect("taken");
        let Source::Memory(left) = &source else { unreachable!() };
        assert!(left.initial.is_empty());
        assert_eq!(taken.share(0), None);
        assert_eq!(taken.share(1).as_deref(), Some(&want[range(want.len(), 1, 3)]));
        assert_eq!(taken.share(2).as_deref(), Some(&want[range(want.len(), 2, 3)]));
        assert_eq!(taken.share(2), None, "a share is taken once");
        // Shared with the caller: left alone.
        let shared = Arc::new(stream());
        let mut source = Source::Memory(shared.clone());
        assert!(TakenInitial::take(&mut source, 1, 0..1).is_none());
        assert_eq!(shared.initial.len(), 100_003);
    }
}

#[cfg(test)]
mod epoch_tests {
    use super::epoch_ranges;

    #[test]
    fn epoch_ranges_cover_the_list_once() {
        let r = |len, first, batch| epoch_ranges(len, first, batch).collect::<Vec<_>>();
        assert_eq!(r(10, None, 4), vec![0..4, 4..8, 8..10]);
        assert_eq!(r(10, Some(7), 2), vec![0..7, 7..9, 9..10]);
        assert_eq!(r(10, Some(20), 2), vec![0..10]);
        assert_eq!(r(0, Some(3), 2), Vec::<std::ops::Range<usize>>::new());
        assert_eq!(r(3, None, 5), vec![0..3]);
    }
}
