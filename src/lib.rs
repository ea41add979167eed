//! # ripples
//!
//! Streaming, iterative, incremental graph computation on timely dataflow and differential
//! dataflow. Data flows one way through the layers, and the modules follow them:
//!
//! * [`sources`] — parse edge, vertex and update files; generate graphs; shape update streams.
//! * [`dataflow`] — algorithms as differential dataflows over the edge collection.
//! * [`driver`] — epochs, per-worker inputs, probes, latency, memory; runs any [`dataflow::Algorithm`].
//! * [`sinks`] — result files, change logs, stats, progress.
//! * [`cli`] — the `ripples` command line, a thin layer over the above.
//!
//! [`oracle`] holds plain sequential implementations used to check the dataflows, and
//! [`graphalytics`] reads LDBC Graphalytics datasets and applies their validation rules.

#[cfg(feature = "cli")]
pub mod bench;
#[cfg(feature = "cli")]
pub mod cli;
pub mod dataflow;
pub mod driver;
#[cfg(feature = "cli")]
pub mod graphalytics;
pub mod live;
pub mod oracle;
pub mod sinks;
pub mod sources;
pub mod types;
