//! # ripples
//!
//! Incrementally maintained graph computations over streams of edge insertions and deletions,
//! on timely dataflow and differential dataflow.
//!
//! ## Start here
//!
//! A [`Job`] is a running computation inside your program: push updates, commit epochs, read
//! results. Built-in algorithms are named ([`Job::builder`]`().builtin("wcc")`); your own
//! dataflow is a closure over the graph's collections ([`custom`], or [`typed`] for outputs of
//! your own types), and runs under the same driver, epochs and outputs:
//!
//! ```
//! use ripples::prelude::*;
//!
//! let out_degree = custom("out-degree", |input: GraphInput| {
//!     input.edges.map(|(src, _dst, _weight)| src).count().map(|(v, n)| (v, n as u64))
//! });
//! let mut job = Job::builder().builtin("wcc")?.algorithm(out_degree).workers(2).start()?;
//! job.insert(1, 2)?;
//! job.insert(2, 3)?;
//! job.insert(1, 4)?;
//! let epoch: Time = job.commit()?;
//! job.wait(epoch)?;
//! assert_eq!(job.value("wcc", 3), Some(1)); // 3 is in the component of 1
//! assert_eq!(job.value("out-degree", 1), Some(2));
//! job.shutdown()?;
//! # Ok::<(), JobError>(())
//! ```
//!
//! Files and processes instead of an embedding program: [`driver::run`] with [`RunOptions`]
//! (what `ripples run` does). The [`prelude`] has the names above; [`dataflow`] has every
//! algorithm as a plain function over collections; [`oracle`] has plain sequential versions.
//!
//! ## Layers
//!
//! Data flows one way through the layers, and each layer imports only the layers
//! before it in this table (checked by `tests/layers.rs`):
//!
//! | layer | modules | may import |
//! |---|---|---|
//! | (none) | [`allocator`] — the global allocator (feature `mimalloc`) | — |
//! | model | [`types`] — vertex ids, times, updates; value formats ([`types::format`]); the records a run reports ([`types::stats`], [`types::profile`]) | — |
//! | sources | [`sources`] — parse edge, vertex and update files; generate graphs; shape streams; event-time windows | model |
//! | dataflow | [`dataflow`] — one algorithm per file, each a differential dataflow over the edge collection | model, sources |
//! | beside the driver | [`live`] — the live front end (transports, sequencer, state directory); [`sinks`] — result files, change logs, stats, progress | model, sources |
//! | driver | [`driver`] — one feed loop over an epoch source; epochs, probes, metrics, resume | all of the above |
//! | beside the driver (feature `serve`) | [`serve`] — the results as a SQL database over the PostgreSQL wire protocol (`--serve`), an observer of the driver | model, sinks, `driver::observe`, `driver::profile`, live's TLS loader |
//! | beside the driver (feature `http`) | [`monitor`] — metrics, a status API and a dashboard over HTTP (`--http`), an observer of the driver and a reader of its profiler | model, sinks, `driver::observe`, `driver::profile`, `driver::metrics`, live's TLS loader |
//! | job | [`job`] — a running computation inside your program: push updates, commit epochs, read results and changes | model, sources, dataflow, live, sinks, driver |
//! | application (feature `cli`) | [`cli`], [`bench`](mod@bench), [`experiment`] sweeps, [`graphalytics`] runner | everything |
//!
//! The driver *uses* `live` and `sinks`; they never import it. [`oracle`] holds plain
//! sequential implementations: the tests' reference, and the bench's from-scratch baseline.
//!
//! With `default-features = false` the crate is the library alone, without the command line's
//! dependencies (clap, indicatif, plotters): the application layer is behind the `cli` feature.
//!
//! With the default feature `mimalloc` the crate sets the global allocator of every program that
//! links it ([`allocator`]): small blocks from [mimalloc](https://crates.io/crates/mimalloc), large
//! ones from the system's malloc. A program with its own `#[global_allocator]` leaves the feature
//! out.

#![deny(missing_docs)]

#[cfg(feature = "mimalloc")]
pub mod allocator;
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: allocator::Split = allocator::Split;

#[cfg(feature = "cli")]
pub mod bench;
#[cfg(feature = "cli")]
pub mod cli;
pub mod dataflow;
pub mod driver;
#[cfg(feature = "cli")]
pub mod experiment;
#[cfg(feature = "cli")]
pub mod graphalytics;
pub mod job;
pub mod live;
#[cfg(feature = "http")]
pub mod monitor;
pub mod oracle;
#[cfg(feature = "serve")]
pub mod serve;
pub mod sinks;
pub mod sources;
pub mod types;

/// The README and every chapter of the book (`book/src/`), one item each: every Rust block in
/// them runs as a doc-test (`cargo test --doc`), and every other block is marked with its language
/// so that rustdoc leaves it alone. The command-line chapter includes `docs/cli.md`.
#[cfg(doctest)]
pub mod book {
    #[doc = include_str!("../README.md")]
    pub struct Readme;
    #[doc = include_str!("../book/src/introduction.md")]
    pub struct Introduction;
    #[doc = include_str!("../book/src/getting-started.md")]
    pub struct GettingStarted;
    #[doc = include_str!("../book/src/concepts.md")]
    pub struct Concepts;
    #[doc = include_str!("../book/src/running.md")]
    pub struct Running;
    #[doc = include_str!("../book/src/algorithms.md")]
    pub struct Algorithms;
    #[doc = include_str!("../book/src/live.md")]
    pub struct Live;
    #[doc = include_str!("../book/src/windows.md")]
    pub struct Windows;
    #[doc = include_str!("../book/src/serving.md")]
    pub struct Serving;
    #[doc = include_str!("../book/src/sql/select.md")]
    pub struct SqlSelect;
    #[doc = include_str!("../book/src/sql/subscribe.md")]
    pub struct SqlSubscribe;
    #[doc = include_str!("../book/src/sql/copy.md")]
    pub struct SqlCopy;
    #[doc = include_str!("../book/src/sql/cursors.md")]
    pub struct SqlCursors;
    #[doc = include_str!("../book/src/sql/changes.md")]
    pub struct SqlChanges;
    #[doc = include_str!("../book/src/sql/catalog.md")]
    pub struct SqlCatalog;
    #[doc = include_str!("../book/src/monitoring.md")]
    pub struct Monitoring;
    #[doc = include_str!("../book/src/experiments.md")]
    pub struct Experiments;
    #[doc = include_str!("../book/src/library.md")]
    pub struct Library;
    #[doc = include_str!("../book/src/performance.md")]
    pub struct Performance;
    #[doc = include_str!("../book/src/performance-runs.md")]
    pub struct PerformanceRuns;
    #[doc = include_str!("../book/src/internals.md")]
    pub struct Internals;
    #[doc = include_str!("../book/src/testing.md")]
    pub struct Testing;
    #[doc = include_str!("../book/src/reference.md")]
    pub struct Reference;
    #[doc = include_str!("../book/src/reference-protocol.md")]
    pub struct ReferenceProtocol;
    #[doc = include_str!("../docs/cli.md")]
    pub struct Cli;
}

pub use dataflow::typed::typed;
pub use dataflow::{custom, Algorithm, GraphInput, ResultCollection};
pub use driver::{run, RunError, RunOptions};
pub use job::{Job, JobError};
pub use types::{Diff, Node, Time, Update};

/// The names most programs need, in one `use ripples::prelude::*;`.
pub mod prelude {
    pub use crate::dataflow::typed::typed;
    pub use crate::dataflow::{custom, Algorithm, GraphInput, Params, ResultCollection};
    pub use crate::driver::{run, run_many, Layout, MemoryStream, RunError, RunOptions, Source};
    pub use crate::job::{Job, JobBuilder, JobError};
    pub use crate::types::{Diff, Edge, Node, Time, Update};
}
