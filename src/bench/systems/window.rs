//! `ripples-window` (`wcc-window` only): the same window written as an event-time window
//! (`--window`, edge `i` at event time `i`). Each epoch holds a thousand event times, each with an
//! insertion and an expiry, which WCC's fully dynamic path applies one time after another. Epoch 1
//! fills the window (like epoch 0 of the others) and is not counted; each later epoch counts its
//! insertions and as many expiries.
//!
//! ```
//! use ripples::bench::{run_system, systems, Scenario};
//! // A tiny `wcc-window`: a window of 100 edges sliding by 20 edges per epoch.
//! let scenario = Scenario { scale: 6, edge_factor: 4, window: 100, batch: 20, epochs: 5, workers: 1, ..Scenario::new("wcc-window").unwrap() };
//! let dir = tempfile::tempdir().unwrap();
//! let run = |name: &str| {
//!     let state = dir.path().join(name);
//!     let result = run_system(&scenario, systems::by_name(name).unwrap().as_ref(), Some(&state)).unwrap();
//!     assert!(!result.partial);
//!     std::fs::read_to_string(&state).unwrap()
//! };
//! // The event-time window and explicit deletions end with the same components.
//! assert_eq!(run("ripples-window"), run("ripples"));
//! ```

use std::time::Duration;

use crate::bench::result::{Latency, Measured};
use crate::bench::scenario::{Scenario, Stream};
use crate::bench::system::{Outcome, System};
use crate::bench::BenchError;
use crate::dataflow::{self, ValueFormat};
use crate::driver::{self, metrics, RunOptions};
use crate::sources::window::{WindowKind, WindowSpec};
use crate::types::Update;

/// `ripples-window`.
pub struct RipplesWindow;

impl System for RipplesWindow {
    fn name(&self) -> &'static str {
        "ripples-window"
    }
    fn applies_to(&self, scenario: &Scenario) -> bool {
        scenario.name == "wcc-window"
    }
    fn run(&self, scenario: &Scenario, stream: Stream, limit: Duration) -> Result<Outcome, BenchError> {
        let Stream { initial, updates, batch, .. } = stream;
        // The same edges, edge i at event time i: the first `window` fill the window.
        let edges = initial.iter().copied().chain(updates.iter().filter(|u| u.diff > 0).map(|u| (u.src, u.dst)));
        let timed: Vec<(Update, u64)> = edges.enumerate().map(|(i, (s, d))| (Update::insert(s, d), i as u64)).collect();
        let file = std::env::temp_dir().join(format!("ripples-bench-window-{}.txt", std::process::id()));
        crate::sources::parse::write_timed_updates(&file, &timed).map_err(BenchError::file("cannot write", &file))?;
        // The timed copy is the harness's, not the system's memory: the run reads the file. (The
        // stream itself is in the baseline, so it stays.)
        drop(timed);
        let window = initial.len() as u64;
        let options = RunOptions {
            layout: driver::Layout::threads(scenario.workers),
            source: driver::Source::Files(driver::FileSource {
                updates: Some(file.clone()),
                batch: Some(batch / 2),
                first_batch: Some(initial.len()),
                ..driver::FileSource::default()
            }),
            progress: true,
            keep_state: true,
            time_limit: Some(limit),
            window: Some(WindowSpec::new(WindowKind::Sliding, window)),
            profiler: scenario.profile.as_ref().map(|_| driver::profile::Profiler::new()),
            ..RunOptions::default()
        };
        let profiler = options.profiler.clone();
        let report = driver::run(options, dataflow::wcc::Wcc);
        super::write_profile(scenario, profiler)?;
        let _ = std::fs::remove_file(&file);
        let report = report?.ok_or(BenchError::NoReport)?;
        // Epochs 2..: each inserts `batch / 2` edges and expires as many.
        let steady: Vec<&metrics::EpochStats> = report.epochs.iter().filter(|e| e.epoch >= 2).collect();
        let seconds: f64 = steady.iter().map(|e| e.latency_ms / 1000.0).sum();
        let latencies: Vec<f64> = steady.iter().map(|e| e.latency_ms).collect();
        let updates: u64 = steady.iter().map(|e| 2 * e.updates).sum();
        let measured = Measured {
            // The fill epoch counts like the others' epoch 0 (the initial window).
            epochs: steady.len() as u64 + 1,
            updates,
            updates_per_sec: if seconds > 0.0 { updates as f64 / seconds } else { 0.0 },
            latency: Latency::of(&latencies),
            partial: report.summary.partial,
            wcc_fallbacks: report.summary.wcc_fallbacks,
        };
        Ok(Outcome { measured, state: report.final_state.unwrap_or_default(), format: ValueFormat::Integer })
    }
}
