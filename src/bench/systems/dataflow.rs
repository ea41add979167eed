//! The dataflow systems, run by the driver over the stream in memory: `ripples` (what
//! `ripples run` does by default, with the insert-only fast path where it applies),
//! `ripples-general` (the fully dynamic WCC dataflow, forced) and `dd-propagate` (WCC as
//! differential dataflow's documentation writes it).
//!
//! ```
//! use ripples::bench::{run_system, systems, Scenario};
//! // A tiny `wcc-churn`: deletions of present edges and insertions of new ones.
//! let scenario = Scenario { scale: 5, edge_factor: 4, batch: 20, epochs: 3, workers: 2, ..Scenario::new("wcc-churn").unwrap() };
//! let dir = tempfile::tempdir().unwrap();
//! let run = |name: &str| {
//!     let state = dir.path().join(name);
//!     let result = run_system(&scenario, systems::by_name(name).unwrap().as_ref(), Some(&state)).unwrap();
//!     assert!(!result.partial);
//!     std::fs::read_to_string(&state).unwrap()
//! };
//! // The plain differential formulation and the fully dynamic path end with the same components.
//! assert_eq!(run("dd-propagate"), run("ripples-general"));
//! ```

use std::sync::Arc;
use std::time::Duration;

use crate::bench::result::{Latency, Measured};
use crate::bench::scenario::{Scenario, Stream};
use crate::bench::system::{Comparison, Outcome, System};
use crate::bench::BenchError;
use crate::dataflow::{self, custom, Algorithm, Params};
use crate::driver::{self, MemoryStream, RunOptions};

/// `ripples`: the scenario's algorithm as `ripples run` builds it.
pub struct Ripples;

/// `ripples-general` (WCC): the fully dynamic differential path, forced.
pub struct RipplesGeneral;

/// `dd-propagate` (WCC): `algorithms::graphs::propagate::propagate` over the symmetrised edges.
pub struct DdPropagate;

impl System for Ripples {
    fn name(&self) -> &'static str {
        "ripples"
    }
    fn applies_to(&self, _: &Scenario) -> bool {
        true
    }
    fn comparison(&self) -> Comparison {
        Comparison::Reference
    }
    fn run(&self, scenario: &Scenario, stream: Stream, limit: Duration) -> Result<Outcome, BenchError> {
        let params = Params {
            source: Some(Scenario::source(&stream.initial)),
            k: (scenario.algorithm() == "spanner").then_some(super::sequential::SPANNER_K),
            ..Params::default()
        };
        let algorithm = dataflow::by_name(scenario.algorithm(), &params).map_err(BenchError::Algorithm)?;
        run_dataflow(scenario, stream, limit, algorithm)
    }
}

impl System for RipplesGeneral {
    fn name(&self) -> &'static str {
        "ripples-general"
    }
    fn applies_to(&self, scenario: &Scenario) -> bool {
        scenario.algorithm() == "wcc"
    }
    fn comparison(&self) -> Comparison {
        Comparison::Throughput { line: 3 }
    }
    fn run(&self, scenario: &Scenario, stream: Stream, limit: Duration) -> Result<Outcome, BenchError> {
        run_dataflow(scenario, stream, limit, Box::new(dataflow::wcc::WccGeneral))
    }
}

impl System for DdPropagate {
    fn name(&self) -> &'static str {
        "dd-propagate"
    }
    fn applies_to(&self, scenario: &Scenario) -> bool {
        scenario.algorithm() == "wcc"
    }
    fn comparison(&self) -> Comparison {
        Comparison::Throughput { line: 2 }
    }
    fn run(&self, scenario: &Scenario, stream: Stream, limit: Duration) -> Result<Outcome, BenchError> {
        let algorithm = custom("dd-propagate", |input| {
            let nodes = input.vertex_set().map(|n| (n, n));
            let edges = input.edges.map(|(s, d, _)| (s, d));
            let symmetric = edges.clone().concat(edges.map(|(s, d)| (d, s)));
            differential_dataflow::algorithms::graphs::propagate::propagate(symmetric, nodes)
        });
        run_dataflow(scenario, stream, limit, Box::new(algorithm))
    }
}

/// Runs `algorithm` over the stream under the driver (trusted input, progress on stderr).
fn run_dataflow(
    scenario: &Scenario,
    stream: Stream,
    limit: Duration,
    algorithm: Box<dyn Algorithm>,
) -> Result<Outcome, BenchError> {
    let format = algorithm.value_format();
    let options = RunOptions {
        layout: driver::Layout::threads(scenario.workers),
        source: driver::Source::Memory(Arc::new(MemoryStream {
            vertices: vec![],
            // Consumed as it is converted (never two whole copies); the driver then takes it
            // out of the stream (this run is its only owner) and frees it as epoch 0 is fed.
            initial: driver::input::convert_shrinking(stream.initial, |(s, d)| (s, d, None)),
            updates: stream.updates,
            batch: stream.batch,
        })),
        progress: true,
        keep_state: true,
        trusted_input: true,
        time_limit: Some(limit),
        profiler: scenario.profile.as_ref().map(|_| driver::profile::Profiler::new()),
        ..RunOptions::default()
    };
    let profiler = options.profiler.clone();
    let report = driver::run(options, algorithm)?.ok_or(BenchError::NoReport)?;
    super::write_profile(scenario, profiler)?;
    let s = &report.summary;
    let measured = Measured {
        epochs: s.epochs,
        updates: s.updates,
        updates_per_sec: s.updates_per_sec,
        latency: Latency::from(&s.latency),
        partial: s.partial,
        wcc_fallbacks: s.wcc_fallbacks,
    };
    Ok(Outcome { measured, state: report.final_state.unwrap_or_default(), format })
}
