//! The parent side of `ripples bench`: [`run_bench`] runs every system in its own child process
//! ([`super::child`]) and checks that the complete ones agree on the final result.

use std::path::PathBuf;

use super::{child, BenchError, Scenario, SystemResult};

/// Options of `ripples bench`.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// The scenario every system runs.
    pub scenario: Scenario,
    /// System names, in the order they run (and appear in the table).
    pub systems: Vec<String>,
    /// Write each dataflow system's profile into this directory (`SYSTEM.json`, `.svg`).
    pub profile: Option<std::path::PathBuf>,
}

/// Runs every system in a child process and compares them. Returns the results and whether all
/// complete systems agree.
pub fn run_bench(options: &BenchOptions) -> Result<(Vec<SystemResult>, bool), BenchError> {
    let exe = std::env::current_exe().map_err(BenchError::CurrentExe)?;
    // Before any system runs: the load of the machine, not of the bench itself.
    let environment = super::env::Environment::capture();
    let dir = tempfile_dir()?;
    let mut results = Vec::new();
    let s = &options.scenario;
    for (i, system) in options.systems.iter().enumerate() {
        eprintln!(
            "ripples bench: [{}/{}] {} on {} (scale {}, batch {}, {} worker(s), time limit {}s)",
            i + 1,
            options.systems.len(),
            system,
            s.name,
            s.scale,
            s.batch,
            s.workers,
            s.time_limit_secs
        );
        let state = dir.join(format!("{}.state", system));
        let mut scenario = s.clone();
        scenario.profile = options.profile.as_ref().map(|d| d.join(format!("{system}.json")));
        let result = child::spawn(&exe, &scenario, system, &state)?;
        eprintln!(
            "ripples bench:   {:.0} updates/s, p99 {:.2} ms{}",
            result.updates_per_sec,
            result.latency.p99_ms,
            if result.partial { " (partial: time limit reached)" } else { "" }
        );
        let result = SystemResult { environment: Some(environment.clone()), ..result };
        results.push((result, state));
    }
    // Compare the final results of all complete systems with the first complete one.
    let mut all_agree = true;
    let reference = results.iter().find(|(r, _)| !r.partial).map(|(_, p)| p.clone());
    if let Some(reference) = reference {
        let want = std::fs::read_to_string(&reference).map_err(BenchError::file("cannot read", &reference))?;
        for (r, path) in results.iter_mut() {
            if r.partial {
                continue;
            }
            let got = std::fs::read_to_string(&*path).map_err(BenchError::file("cannot read", &*path))?;
            let agrees = states_agree(&want, &got);
            r.agrees = Some(agrees);
            all_agree &= agrees;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok((results.into_iter().map(|(r, _)| r).collect(), all_agree))
}

/// Two result files agree: same keys, and values equal as text or, for floats, within 1e-9
/// relative.
pub fn states_agree(a: &str, b: &str) -> bool {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    la.len() == lb.len()
        && la.iter().zip(&lb).all(|(x, y)| {
            x == y || {
                let (xs, ys): (Vec<&str>, Vec<&str>) = (x.split(' ').collect(), y.split(' ').collect());
                xs[0] == ys[0]
                    && match (xs[1].parse::<f64>(), ys[1].parse::<f64>()) {
                        (Ok(p), Ok(q)) => (p - q).abs() <= 1e-9 * p.abs().max(q.abs()),
                        _ => false,
                    }
            }
        })
}

fn tempfile_dir() -> Result<PathBuf, BenchError> {
    let dir = std::env::temp_dir().join(format!("ripples-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(BenchError::file("cannot create", &dir))?;
    Ok(dir)
}
