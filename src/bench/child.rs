//! One system in its own process: the protocol between `ripples bench` and the children it
//! starts, both sides of it.
//!
//! The parent ([`spawn`]) re-executes its own binary as
//! `ripples bench-system --spec JSON --system NAME --state-out FILE`; the child ([`child_main`],
//! which the command line's hidden `bench-system` subcommand calls) generates the stream, resets
//! the peak-RSS counter, records the resident memory as its baseline, runs the system
//! ([`run_system`]), writes its final result to FILE and prints one JSON line ([`SystemResult`]).
//! `bytes_per_edge` is `(peak RSS - baseline) / edges live at the end`.
//!
//! ```
//! use ripples::bench::{child, systems, Scenario};
//! // What a child does, here in this process: run one system and write its final result.
//! let scenario = Scenario { scale: 4, edge_factor: 2, batch: 8, workers: 1, ..Scenario::new("wcc-insert").unwrap() };
//! let dir = tempfile::tempdir().unwrap();
//! let state = dir.path().join("uf-hash.state");
//! let result = child::run_system(&scenario, systems::by_name("uf-hash").unwrap().as_ref(), Some(&state)).unwrap();
//! assert_eq!((result.system.as_str(), result.scenario.as_str()), ("uf-hash", "wcc-insert"));
//! assert_eq!(result.live_edges, 32);
//! // The result file: `vertex label` per line, sorted by vertex.
//! let text = std::fs::read_to_string(&state).unwrap();
//! let vertices: Vec<u64> = text.lines().map(|l| l.split(' ').next().unwrap().parse().unwrap()).collect();
//! assert!(vertices.windows(2).all(|w| w[0] < w[1]));
//! // A system that does not apply to the scenario is refused before anything runs.
//! let window = systems::by_name("ripples-window").unwrap();
//! assert!(child::run_system(&scenario, window.as_ref(), None).is_err());
//! ```

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::system::System;
use super::systems;
use super::{BenchError, Scenario, SystemResult};
use crate::driver::metrics;
use crate::types::Node;

/// The hidden subcommand a child runs.
pub const COMMAND: &str = "bench-system";

/// The child side: runs `system` on the scenario `spec` (JSON) in this process, writes its final
/// result to `state_out` and prints its figures as one JSON line on stdout.
pub fn child_main(spec: &str, system: &str, state_out: Option<&Path>) -> Result<(), BenchError> {
    let scenario: Scenario = serde_json::from_str(spec).map_err(BenchError::Spec)?;
    let system = systems::by_name(system)?;
    let result = run_system(&scenario, system.as_ref(), state_out)?;
    println!("{}", serde_json::to_string(&result).map_err(BenchError::Encode)?);
    Ok(())
}

/// Runs one system in this process and returns its figures; writes its final result (sorted,
/// `vertex value` per line) to `state_out`.
pub fn run_system(
    scenario: &Scenario,
    system: &dyn System,
    state_out: Option<&Path>,
) -> Result<SystemResult, BenchError> {
    if !system.applies_to(scenario) {
        return Err(BenchError::DoesNotApply { system: system.name(), scenario: scenario.name.clone() });
    }
    run_stream(scenario, system, scenario.stream(), state_out)
}

/// [`run_system`] over a given stream (`ripples experiment` runs the bench systems over its own
/// streams).
pub fn run_stream(
    scenario: &Scenario,
    system: &dyn System,
    stream: super::Stream,
    state_out: Option<&Path>,
) -> Result<SystemResult, BenchError> {
    if !system.applies_to(scenario) {
        return Err(BenchError::DoesNotApply { system: system.name(), scenario: scenario.name.clone() });
    }
    let live_edges = stream.live_edges;
    reset_peak_rss();
    let baseline = metrics::memory().0;
    let started = Instant::now();
    let limit = Duration::from_secs_f64(scenario.time_limit_secs);
    let outcome = system.run(scenario, stream, limit)?;
    let mut result = SystemResult {
        system: system.name().to_string(),
        scenario: scenario.name.clone(),
        workers: scenario.workers,
        live_edges,
        baseline_rss_bytes: baseline,
        ..SystemResult::default()
    };
    result.record(&outcome.measured);
    result.wall_seconds = started.elapsed().as_secs_f64();
    let (_, peak) = metrics::memory();
    result.peak_rss_bytes = peak;
    result.bytes_per_edge = peak.saturating_sub(baseline) as f64 / live_edges.max(1) as f64;
    if let Some(path) = state_out {
        let mut formatted: Vec<(Node, String)> = outcome
            .state
            .into_iter()
            .map(|(k, v)| {
                let mut s = String::new();
                outcome.format.write(v, &mut s);
                (k, s)
            })
            .collect();
        formatted.sort();
        write_state(path, &formatted)?;
    }
    Ok(result)
}

/// The parent side: runs `system` in a child process of `exe` (stderr inherited), its final
/// result written to `state`.
pub fn spawn(exe: &Path, scenario: &Scenario, system: &str, state: &Path) -> Result<SystemResult, BenchError> {
    let spec = serde_json::to_string(scenario).map_err(BenchError::Spec)?;
    let out = Command::new(exe)
        .args([COMMAND, "--spec", &spec, "--system", system, "--state-out"])
        .arg(state)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|source| BenchError::Spawn { exe: exe.to_path_buf(), source })?;
    if !out.status.success() {
        return Err(BenchError::ChildFailed { system: system.to_string(), status: out.status });
    }
    let line = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(line.trim()).map_err(|source| BenchError::ChildReport {
        system: system.to_string(),
        line: line.to_string(),
        source,
    })
}

/// Resets the kernel's peak-RSS counter of this process (Linux `clear_refs`).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn write_state(path: &Path, state: &[(Node, String)]) -> Result<(), BenchError> {
    let mut text = String::with_capacity(state.len() * 16);
    for (k, v) in state {
        text.push_str(&format!("{} {}\n", k, v));
    }
    std::fs::write(path, text).map_err(BenchError::file("cannot write", path))
}
