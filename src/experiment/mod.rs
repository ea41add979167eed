//! **Experiments**: `ripples experiment plan|run|report|compare|convert`, declarative sweeps
//! with repetitions, statistics, the environment recorded with every figure, and a report.
//!
//! * [`config`] — the experiment file (TOML) and its cells: datasets × stream kinds ×
//!   algorithms × systems × workers × batch sizes × repetitions;
//! * [`data`] — datasets (generated, edge files, temporal edge lists), the streams cut from
//!   them, the sequential reference results;
//! * [`runner`] — each cell in a fresh child process with a timeout, shuffled, appended to
//!   `results.jsonl` keyed by a hash of the cell, the git revision and the dataset checksum
//!   ([`record`]); `--resume`, `--rerun-failed`;
//! * [`systems`] — the systems a cell runs on: `ripples`, the systems of `ripples bench` as
//!   `bench:NAME`, the user's commands;
//! * [`env`](mod@env) — the environment every record carries;
//! * [`stats`] — median, bootstrap CI, coefficient of variation, outlier flags;
//! * [`output`] — tidy CSV, plots, the Markdown report; [`compare`] — two result files side by
//!   side.

pub mod compare;
pub mod config;
pub mod data;
/// The environment records carry (shared with `ripples bench`: [`crate::bench::env`]).
pub use crate::bench::env;
pub mod output;
pub mod record;
pub mod runner;
pub mod stats;
pub mod systems;

pub use config::{Cell, Experiment};
pub use record::{Record, Status};
pub use runner::{run, RunOptions};

use std::path::PathBuf;

/// What can go wrong in an experiment.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// The experiment file is malformed: `file:line: key: problem`.
    #[error("{}:{line}: {key}: {problem}", path.display())]
    File {
        /// The experiment file, as given on the command line.
        path: PathBuf,
        /// The 1-based line of the file the problem is on (1 when it is the file as a whole).
        line: usize,
        /// The key at fault, dotted for tables (`datasets.path`, `commands.NAME`).
        key: String,
        /// What is wrong with it, for a person to read.
        problem: String,
    },
    /// Bad input data or usage.
    #[error("{0}")]
    Input(String),
    /// A file could not be read or written, a plot drawn.
    #[error("{0}")]
    Io(String),
}
