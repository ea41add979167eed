//! The experiment file (TOML) and its cells.
//!
//! Every key is known ([`deny_unknown_fields`](serde)); names of datasets, stream kinds,
//! algorithms and systems are checked against what exists; every problem is an
//! [`ExperimentError::File`] naming the file, the line and the key, before anything runs.

mod parse;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::systems::System;
pub use super::systems::RIPPLES;
use super::ExperimentError;
use crate::sources::parse::temporal::TemporalFormat;

/// The stream kinds a cell can use.
pub const STREAMS: &[&str] =
    &["insert", "insert-random", "timestamp", "bulk", "churn", "window", "event-sliding", "event-tumbling"];

/// The stream kinds that need event times (temporal datasets only).
pub const TIMED: &[&str] = &["timestamp", "event-sliding", "event-tumbling"];

/// The algorithms an experiment can run (those `ripples run` knows that need no source vertex,
/// plus `bfs`/`sssp` with `source`).
pub const ALGORITHMS: &[&str] =
    &["wcc", "bfs", "sssp", "pagerank", "cdlp", "lcc", "scc", "degree", "triangles", "kcore", "bipartite"];

/// The experiment file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// `name`: the experiment's name, shown in the report and the default output directory
    /// `results/NAME` (default: the file's stem).
    pub name: Option<String>,
    /// `seed`: shuffles the order of the cells and seeds the generated streams (default 1).
    pub seed: Option<u64>,
    /// `repetitions`: how many times each configuration is measured, at least 1 (default 5).
    pub repetitions: Option<Spanned<u32>>,
    /// `timeout_secs`: seconds a cell may run before its process group is killed, > 0 (default
    /// 600).
    pub timeout_secs: Option<Spanned<f64>>,
    /// `warmup_epochs`: the first update epochs of every cell left out of every figure (default 0).
    pub warmup_epochs: Option<u64>,
    /// `profile`: every `ripples` cell writes its per-operator profile (`--profile`) to
    /// `cells/KEY/profile.json` and `.svg` (default false).
    pub profile: Option<bool>,
    /// `workers`: the timely worker counts to sweep, each at least 1 (default `[1]`).
    pub workers: Option<Vec<Spanned<usize>>>,
    /// `batch_sizes`: the updates per epoch to sweep, each at least 1 (default `[1000]`).
    pub batch_sizes: Option<Vec<Spanned<usize>>>,
    /// `processes`: the timely process counts to sweep for the `ripples` system, each at least 1
    /// (default `[1]`); every process of a cell runs on loopback ports of its own.
    pub processes: Option<Vec<Spanned<usize>>>,
    /// `memory_limit_mb`: the address-space limit of every cell's child processes in MiB
    /// (`setrlimit(RLIMIT_AS)`, each process); a cell that runs out is recorded as `oom`.
    pub memory_limit_mb: Option<Spanned<u64>>,
    /// `algorithms`: the algorithms to run, from [`ALGORITHMS`] (required; `bfs`/`sssp` need
    /// `source`).
    pub algorithms: Vec<Spanned<String>>,
    /// `systems`: `ripples`, `bench:NAME` systems or names of `[commands.NAME]` tables (default
    /// `["ripples"]`).
    pub systems: Option<Vec<Spanned<String>>>,
    /// `streams`: the stream kinds to sweep, from [`STREAMS`] (default `["insert"]`).
    pub streams: Option<Vec<Spanned<String>>>,
    /// A source vertex for bfs/sssp.
    pub source: Option<u64>,
    #[serde(default)]
    /// The `[stream]` table: parameters of the stream kinds (defaults in
    /// [`StreamParams::default`]).
    pub stream: StreamParams,
    #[serde(default)]
    /// The `[[datasets]]` tables, at least one, with where each sits in the file for error
    /// messages.
    pub datasets: Vec<Spanned<DatasetSpec>>,
    #[serde(default)]
    /// The `[commands.NAME]` tables: user baselines by system name, with their place in the file.
    pub commands: BTreeMap<String, Spanned<CommandSpec>>,
    /// Assumed throughput for `plan`'s estimate (updates/s).
    pub estimate_updates_per_sec: Option<f64>,
}

/// Parameters of the stream kinds.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct StreamParams {
    /// `bulk`: the fraction of the edges loaded as the initial graph.
    pub bulk_fraction: f64,
    /// `churn`: updates after loading the whole graph.
    pub churn_updates: usize,
    /// `churn`: the fraction of them that delete a present edge.
    pub delete_fraction: f64,
    /// `window`: edges in the sliding window (each deleted this many insertions after it came).
    pub window: usize,
    /// `event-sliding` / `event-tumbling`: the event-time window span (seconds, as the
    /// timestamps).
    pub span: u64,
}

impl Default for StreamParams {
    fn default() -> Self {
        StreamParams { bulk_fraction: 0.5, churn_updates: 10_000, delete_fraction: 0.5, window: 10_000, span: 3600 }
    }
}

/// A dataset as written.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatasetSpec {
    /// `name`: how cells, records and the report refer to this dataset; unique within the file.
    pub name: String,
    /// rmat, er, file, temporal.
    pub kind: String,
    /// `rmat`: log2 of the vertex count, 1..=30 (required for rmat).
    pub scale: Option<u32>,
    /// `rmat`: edges per vertex (default 16).
    pub edge_factor: Option<u64>,
    /// `er`: the number of vertices (required for er).
    pub vertices: Option<u64>,
    /// `er`: the number of edges (required for er).
    pub edges: Option<u64>,
    /// `rmat`/`er`: the generator's seed (default 1).
    pub seed: Option<u64>,
    /// `file`/`temporal`: the path, relative to the experiment file.
    pub path: Option<PathBuf>,
    /// `temporal`: snap, konect, csv.
    pub format: Option<String>,
    /// `csv`: the column names when the file has no header line (otherwise the header names them).
    pub columns: Option<Vec<String>>,
    /// `csv`: the field separator: one character, `tab` or `whitespace` (default `,`).
    pub delimiter: Option<String>,
    /// `csv`: the column holding the source vertex (default `src`).
    pub src_column: Option<String>,
    /// `csv`: the column holding the destination vertex (default `dst`).
    pub dst_column: Option<String>,
    /// `csv`: the column holding the timestamp (required for csv).
    pub time_column: Option<String>,
    /// `csv`: how timestamps are written: `unix`, `rfc3339` or a `%Y %m %d %H %M %S` pattern, read
    /// as UTC (default `unix`).
    pub time_format: Option<String>,
}

/// A user's system: a command line with placeholders (see the book's experiments chapter).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// `command`: the program and its arguments, which may contain placeholders such as `{graph}`,
    /// `{updates}`, `{batch}`, `{output}`; not empty.
    pub command: Vec<String>,
}

/// A dataset, resolved.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Dataset {
    /// The dataset's name, from its `name` key.
    pub name: String,
    /// How the dataset's edges are made or read, from its `kind` and the keys of that kind.
    pub source: DatasetSource,
}

/// Where a dataset's edges come from: the resolved `kind` with its keys (in records, `kind` is
/// the tag: `rmat`, `er`, `file`, `temporal`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum DatasetSource {
    /// An R-MAT generated graph.
    Rmat {
        /// Log2 of the vertex count, 1..=30.
        scale: u32,
        /// Edges per vertex (default 16).
        edge_factor: u64,
        /// The generator's seed (default 1).
        seed: u64,
    },
    /// An Erdős–Rényi random graph.
    Er {
        /// The number of vertices, at least 1.
        vertices: u64,
        /// The number of edges.
        edges: u64,
        /// The generator's seed (default 1).
        seed: u64,
    },
    /// A static edge file (`src dst` lines, `#` comments skipped).
    File {
        /// The file's absolute path (resolved against the experiment file's directory).
        path: PathBuf,
    },
    /// A temporal edge list, read by its format (see [`Experiment::formats`]).
    Temporal {
        /// The file's absolute path (resolved against the experiment file's directory).
        path: PathBuf,
        /// The `format` key as written: `snap`, `konect` or `csv`.
        format: String,
    },
}

/// An experiment, resolved and checked.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// The experiment file this was read from.
    pub path: PathBuf,
    /// The experiment's name (the `name` key, or the file's stem).
    pub name: String,
    /// The `seed` key (default 1): orders the cells and seeds the streams.
    pub seed: u64,
    /// Repetitions of each configuration (the `repetitions` key, default 5).
    pub repetitions: u32,
    /// Per-cell timeout in seconds (the `timeout_secs` key, default 600).
    pub timeout_secs: f64,
    /// Update epochs left out of every figure (the `warmup_epochs` key, default 0).
    pub warmup_epochs: u64,
    /// Every `ripples` cell writes a profile (the `profile` key, default false).
    pub profile: bool,
    /// Worker counts to sweep (the `workers` key, default `[1]`).
    pub workers: Vec<usize>,
    /// Updates per epoch to sweep (the `batch_sizes` key, default `[1000]`).
    pub batch_sizes: Vec<usize>,
    /// Process counts to sweep for the `ripples` system (the `processes` key, default `[1]`).
    pub processes: Vec<usize>,
    /// The address-space limit of every child process in MiB (the `memory_limit_mb` key).
    pub memory_limit_mb: Option<u64>,
    /// The checked algorithm names (the `algorithms` key).
    pub algorithms: Vec<String>,
    /// The checked systems (the `systems` key, default `["ripples"]`).
    pub systems: Vec<System>,
    /// The checked stream kinds (the `streams` key, default `["insert"]`).
    pub streams: Vec<String>,
    /// The source vertex for bfs/sssp (the `source` key), if given.
    pub source: Option<u64>,
    /// The `[stream]` table, checked: fractions in [0, 1], `window` and `span` at least 1.
    pub stream: StreamParams,
    /// The datasets in file order, their paths made absolute.
    pub datasets: Vec<Dataset>,
    /// Temporal formats of the temporal datasets, by name.
    pub formats: BTreeMap<String, TemporalFormat>,
    /// The user baselines: system name to command line (the `[commands.NAME]` tables).
    pub commands: BTreeMap<String, Vec<String>>,
    /// Assumed updates/s for `plan`'s time estimate (the `estimate_updates_per_sec` key, default
    /// 50,000).
    pub estimate_updates_per_sec: f64,
    /// `key = value` of every setting the file gives that differs from its default.
    pub non_default: Vec<(String, String)>,
}

/// One measurement: a dataset, stream kind, algorithm, system, workers, batch size, repetition.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell {
    /// The dataset's name.
    pub dataset: String,
    /// The stream kind, one of [`STREAMS`].
    pub stream: String,
    /// The algorithm, one of [`ALGORITHMS`].
    pub algorithm: String,
    /// The system: `ripples`, a `bench:NAME` system or a `[commands.NAME]` table's name.
    pub system: System,
    /// Timely workers per process the system runs with (`-w W`, the `{workers}` placeholder).
    pub workers: usize,
    /// Processes (`-n P`, each on loopback ports of its own; only the `ripples` system runs more
    /// than one). Left out of the record (and so of the cell's key) when 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub processes: usize,
    /// Updates per epoch (`--batch B`, the `{batch}` placeholder).
    pub batch: usize,
    /// Which repetition of the configuration this is, from 0.
    pub repetition: u32,
    /// The experiment's `seed`, which seeds the cell's stream.
    pub seed: u64,
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

impl Cell {
    /// The configuration: the cell without its repetition (what statistics group by):
    /// `dataset/stream/algorithm/system/wW/bB`, with `/nP` after `wW` when it has `P > 1`
    /// processes.
    pub fn config(&self) -> String {
        let n = if self.processes > 1 { format!("/n{}", self.processes) } else { String::new() };
        format!(
            "{}/{}/{}/{}/w{}{}/b{}",
            self.dataset, self.stream, self.algorithm, self.system, self.workers, n, self.batch
        )
    }

    /// Worker threads over all processes (workers per process times processes).
    pub fn total_workers(&self) -> usize {
        self.workers * self.processes
    }
}

impl Experiment {
    /// Reads and checks an experiment file.
    pub fn load(path: &Path) -> Result<Experiment, ExperimentError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ExperimentError::Io(format!("cannot read {}: {}", path.display(), e)))?;
        Experiment::parse(path, &text)
    }

    /// Every cell, in a fixed order (datasets × streams × algorithms × systems × processes ×
    /// workers × batch sizes × repetitions); streams of event times ([`TIMED`]) only over
    /// temporal datasets, `bench:` systems only where they apply ([`System::applies`]), more
    /// than one process only for the `ripples` system, the sequential `bench:` systems
    /// ([`System::sequential`]) with one worker only.
    pub fn cells(&self) -> Vec<Cell> {
        let mut out = Vec::new();
        for d in &self.datasets {
            for s in &self.streams {
                if TIMED.contains(&s.as_str()) && !matches!(d.source, DatasetSource::Temporal { .. }) {
                    continue;
                }
                for a in &self.algorithms {
                    for sys in self.systems.iter().filter(|sys| sys.applies(a, s)) {
                        let processes: Vec<usize> = if sys.is_ripples() { self.processes.clone() } else { vec![1] };
                        let workers: Vec<usize> = if sys.sequential() { vec![1] } else { self.workers.clone() };
                        for &p in &processes {
                            for &w in &workers {
                                for &b in &self.batch_sizes {
                                    for r in 0..self.repetitions {
                                        out.push(Cell {
                                            dataset: d.name.clone(),
                                            stream: s.clone(),
                                            algorithm: a.clone(),
                                            system: sys.clone(),
                                            workers: w,
                                            processes: p,
                                            batch: b,
                                            repetition: r,
                                            seed: self.seed,
                                        });
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The resolved dataset of that name, if the experiment has one.
    pub fn dataset(&self, name: &str) -> Option<&Dataset> {
        self.datasets.iter().find(|d| d.name == name)
    }
}
