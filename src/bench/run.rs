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
    /// Runs of each system, in rounds (every system once per round, so that a slow moment of
    /// the machine falls on all of them alike); each system reports its run with the median
    /// updates/s. A system that reached the time limit in the first round runs once. At least 1.
    pub repeat: usize,
}

/// Runs every system in a child process and compares them. Returns the results and whether all
/// complete systems agree.
pub fn run_bench(options: &BenchOptions) -> Result<(Vec<SystemResult>, bool), BenchError> {
    let exe = std::env::current_exe().map_err(BenchError::CurrentExe)?;
    // Before any system runs: the load of the machine, not of the bench itself.
    let environment = super::env::Environment::capture();
    let dir = tempfile_dir()?;
    let s = &options.scenario;
    let rounds = options.repeat.max(1);
    // Every system's runs, with the result file each left.
    let mut runs: Vec<Vec<(SystemResult, PathBuf)>> = options.systems.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for (i, system) in options.systems.iter().enumerate() {
            if runs[i].first().is_some_and(|(r, _)| r.partial) {
                continue;
            }
            let of_rounds = if rounds > 1 { format!(", run {} of {}", round + 1, rounds) } else { String::new() };
            eprintln!(
                "ripples bench: [{}/{}] {} on {} (scale {}, batch {}, {} worker(s), time limit {}s{})",
                i + 1,
                options.systems.len(),
                system,
                s.name,
                s.scale,
                s.batch,
                s.workers,
                s.time_limit_secs,
                of_rounds
            );
            let state = dir.join(format!("{system}.{round}.state"));
            let mut scenario = s.clone();
            // The profile of the first run.
            scenario.profile =
                options.profile.as_ref().filter(|_| round == 0).map(|d| d.join(format!("{system}.json")));
            let result = child::spawn(&exe, &scenario, system, &state)?;
            eprintln!(
                "ripples bench:   {:.0} updates/s, p99 {:.2} ms{}",
                result.updates_per_sec,
                result.latency.p99_ms,
                if result.partial { " (partial: time limit reached)" } else { "" }
            );
            runs[i].push((SystemResult { environment: Some(environment.clone()), ..result }, state));
        }
    }
    // Compare the final result of every complete run with the first complete one.
    let mut all_agree = true;
    let reference = runs.iter().flatten().find(|(r, _)| !r.partial).map(|(_, p)| p.clone());
    if let Some(reference) = reference {
        let want = std::fs::read_to_string(&reference).map_err(BenchError::file("cannot read", &reference))?;
        for (r, path) in runs.iter_mut().flatten() {
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
    let results = runs.into_iter().map(|runs| median_run(runs.into_iter().map(|(r, _)| r).collect())).collect();
    Ok((results, all_agree))
}

/// Of one system's runs (at least one), the run with the median updates/s (the lower one of the
/// middle two for an even number), agreeing only if every run agreed, and with every run's
/// updates/s in [`SystemResult::runs`] when there was more than one.
///
/// ```
/// use ripples::bench::{median_run, SystemResult};
/// let run = |u: f64| SystemResult { updates_per_sec: u, agrees: Some(true), ..SystemResult::default() };
/// let median = median_run(vec![run(3.0), run(1.0), run(2.0)]);
/// assert_eq!(median.updates_per_sec, 2.0);
/// assert_eq!(median.runs, Some(vec![3.0, 1.0, 2.0]));
/// assert_eq!(median_run(vec![run(5.0)]).runs, None);
/// ```
pub fn median_run(mut runs: Vec<SystemResult>) -> SystemResult {
    let rates: Vec<f64> = runs.iter().map(|r| r.updates_per_sec).collect();
    let agrees = runs.iter().map(|r| r.agrees).reduce(|a, b| match (a, b) {
        (Some(a), Some(b)) => Some(a && b),
        (a, b) => a.or(b),
    });
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| rates[a].total_cmp(&rates[b]));
    let mut median = runs.swap_remove(order[(order.len() - 1) / 2]);
    median.agrees = agrees.flatten();
    median.runs = (rates.len() > 1).then_some(rates);
    median
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
