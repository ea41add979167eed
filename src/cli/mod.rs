//! The `ripples` command line: argument parsing and calls into the library, nothing more.
//!
//! Exit status: 0 on success, 2 for bad input data or bad usage, 1 for anything else (a file
//! that cannot be read or written, a failed worker).
//!
//! The arguments (clap's structs, the flags every job shares) are in `args`; running them (the
//! dispatch, the jobs' restart loop, the exit status) in `run`; each of `bench`, `demo`,
//! `experiment`, `graphalytics`, `monitor`, `serve` and `workers` holds a subcommand's or a flag group's
//! arguments beside what it runs.

mod args;
mod bench;
mod demo;
mod experiment;
mod graphalytics;
mod monitor;
mod run;
mod serve;
mod token;
mod workers;

pub use args::{Cli, Command, GenCommand, JobArgs, LateArg, LayoutArgs, RunArgs, RUN_WORKERS};
pub use run::{cli_reference, dispatch, exit_status, main, run_job, run_jobs};
pub use workers::{DefaultWorkers, WorkersArgs, WorkersFlag};
