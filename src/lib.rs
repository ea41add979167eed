//! # ripples
//!
//! Streaming, iterative, incremental graph computation on timely dataflow and differential
//! dataflow. Data flows one way through the layers, and each layer imports only the layers
//! before it in this table (checked by `tests/layers.rs`):
//!
//! | layer | modules | may import |
//! |---|---|---|
//! | model | [`types`] — vertex ids, times, updates; value formats ([`types::format`]); the records a run reports ([`types::stats`]) | — |
//! | sources | [`sources`] — parse edge, vertex and update files; generate graphs; shape streams; event-time windows | model |
//! | dataflow | [`dataflow`] — one algorithm per file, each a differential dataflow over the edge collection | model, sources |
//! | beside the driver | [`live`] — the live front end (transports, sequencer, state directory); [`sinks`] — result files, change logs, stats, progress | model, sources |
//! | driver | [`driver`] — one feed loop over an epoch source; epochs, probes, metrics, resume | all of the above |
//! | beside the driver (feature `serve`) | [`serve`] — the results as a SQL database over the PostgreSQL wire protocol (`--serve`), an observer of the driver | model, sinks, `driver::observe`, live's TLS loader |
//! | job | [`job`] — a running computation inside your program: push updates, commit epochs, read results and changes | model, sources, dataflow, live, sinks, driver |
//! | application (feature `cli`) | [`cli`], [`bench`](mod@bench), [`experiment`] sweeps, [`graphalytics`] runner | everything |
//!
//! The driver *uses* `live` and `sinks`; they never import it. [`oracle`] holds plain
//! sequential implementations: the tests' reference, and the bench's from-scratch baseline.
//!
//! With `default-features = false` the crate is the library alone, without the command line's
//! dependencies (clap, indicatif, plotters): the application layer is behind the `cli` feature.

#![deny(missing_docs)]

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
pub mod oracle;
#[cfg(feature = "serve")]
pub mod serve;
pub mod sinks;
pub mod sources;
pub mod types;
