//! The Graphalytics conformance runner behind `ripples graphalytics`.
//!
//! For every graph of a Graphalytics dataset directory (every `<g>.properties`, see
//! [`discover`]) and every algorithm its properties file lists, [`check`] runs the matching
//! built-in dataflow through [`driver::run`] on the graph's files (`<g>.e` as the initial graph,
//! `<g>.v` as the vertex set, no updates; an undirected graph lists each edge once and is run with
//! [`Params::undirected`]), turns the final state into an output (`vertex value`, values written
//! with the algorithm's [`ValueFormat`](crate::dataflow::ValueFormat)), and validates it with the
//! official rule ([`Algorithm::rule`]) against the expected output `<g>-<ALG>`.
//!
//! The expected file is read only after the run has finished (its existence is checked before),
//! so that a large dataset never holds it and the dataflow's state in memory at the same time.
//!
//! A check that cannot run (bad parameters, unreadable or malformed files, a failed worker) is a
//! failed [`CheckResult`] carrying the message, never a panic or an early return: the other checks
//! still run. Only problems with the dataset as a whole (missing or empty directory, invalid
//! properties file, a filter that selects nothing) are errors of [`plan`].
//!
//! ```
//! use ripples::graphalytics::runner::{check, default_dir, plan, summary_line, Selection};
//! use ripples::graphalytics::Algorithm;
//! // WCC on the example graphs of the LDBC validation data shipped with this crate.
//! let selection = Selection { algorithm: Some(Algorithm::Wcc), ..Selection::default() };
//! let checks = plan(&default_dir(), &selection).unwrap();
//! assert!(checks.iter().any(|c| c.spec.name == "example-directed"));
//! let results: Vec<_> = checks.iter().map(|c| check(c, 2)).collect();
//! assert!(results.iter().all(|r| r.pass), "{:?}", results);
//! assert_eq!(summary_line(&results), format!("{} passed, 0 failed", checks.len()));
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::properties::{discover, Algorithm, GraphSpec};
use super::validate::{read_output, validate, Rule, Validation};
use crate::dataflow::{self, Params};
use crate::driver::{self, FileSource, Layout, RunError, RunOptions, Source};
use crate::sinks::Change;

/// The dataset used when no directory is given: `tests/data/graphalytics/graphs` of this crate if
/// it exists, else `../shared/graphalytics/graphs` (both relative to the crate's directory).
pub fn default_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let local = manifest.join("tests/data/graphalytics/graphs");
    if local.is_dir() {
        local
    } else {
        manifest.join("../shared/graphalytics/graphs")
    }
}

/// Which checks of a dataset to run.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Only these graphs (by name `<g>`); all when empty.
    pub graphs: Vec<String>,
    /// Only this algorithm; all when `None`.
    pub algorithm: Option<Algorithm>,
}

/// One planned check: a graph and one of the algorithms it lists.
#[derive(Clone, Debug)]
pub struct Check {
    /// The graph, as its properties file describes it.
    pub spec: GraphSpec,
    /// The algorithm to run on it and validate.
    pub algorithm: Algorithm,
}

/// The outcome of one check.
#[derive(Clone, Debug)]
pub struct CheckResult {
    /// The graph name `<g>`.
    pub graph: String,
    /// The algorithm that was checked.
    pub algorithm: Algorithm,
    /// Whether the run succeeded and its output passed validation.
    pub pass: bool,
    /// Loading the input (`RunSummary::load_seconds`); `None` if the run failed.
    pub load_seconds: Option<f64>,
    /// Computing the result (`RunSummary::initial_seconds`); `None` if the run failed.
    pub compute_seconds: Option<f64>,
    /// Worst relative deviation over the compared vertices (epsilon rule only; `None` when no
    /// vertex could be compared).
    pub worst_deviation: Option<f64>,
    /// Why the check failed: the first mismatch, or the error that stopped it. `None` on a pass.
    pub message: Option<String>,
    /// The full validation outcome, when the output could be compared at all.
    pub validation: Option<Validation>,
}

impl CheckResult {
    fn failed(check: &Check, message: String) -> Self {
        CheckResult {
            graph: check.spec.name.clone(),
            algorithm: check.algorithm,
            pass: false,
            load_seconds: None,
            compute_seconds: None,
            worst_deviation: None,
            message: Some(message),
            validation: None,
        }
    }
}

/// Lists the checks of the dataset in `dir` that `selection` picks, graphs in file-name order and
/// each graph's algorithms in the order its properties file lists them.
///
/// Errors: a missing directory or one without any `*.properties` file, an invalid properties
/// file, a selected graph that does not exist, or a selection without any check.
pub fn plan(dir: &Path, selection: &Selection) -> Result<Vec<Check>, RunError> {
    if !dir.is_dir() {
        return Err(RunError::Other(format!(
            "Graphalytics dataset directory {} does not exist (expected <graph>.properties, \
             <graph>.v, <graph>.e and <graph>-<ALG> files there)",
            dir.display()
        )));
    }
    let specs = discover(dir).map_err(|e| RunError::Input(format!("{:#}", e)))?;
    if specs.is_empty() {
        return Err(RunError::Other(format!(
            "no Graphalytics graphs in {}: no <graph>.properties file found",
            dir.display()
        )));
    }
    for wanted in &selection.graphs {
        if !specs.iter().any(|s| &s.name == wanted) {
            let known: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            return Err(RunError::Input(format!(
                "no graph '{}' in {} (graphs there: {})",
                wanted,
                dir.display(),
                known.join(", ")
            )));
        }
    }
    let mut checks = Vec::new();
    for spec in specs {
        if !selection.graphs.is_empty() && !selection.graphs.contains(&spec.name) {
            continue;
        }
        for &algorithm in &spec.algorithms {
            if selection.algorithm.is_none_or(|a| a == algorithm) {
                checks.push(Check { spec: spec.clone(), algorithm });
            }
        }
    }
    if checks.is_empty() {
        let what = match selection.algorithm {
            Some(a) => format!("algorithm {}", a),
            None => "any algorithm".to_string(),
        };
        return Err(RunError::Input(format!("no selected graph in {} lists {}", dir.display(), what)));
    }
    Ok(checks)
}

/// The built-in algorithm name and parameters that run Graphalytics `algorithm` on `spec`.
pub fn algorithm_params(spec: &GraphSpec, algorithm: Algorithm) -> (&'static str, Params) {
    let mut params = Params { undirected: !spec.directed, ..Params::default() };
    let name = match algorithm {
        Algorithm::Bfs => {
            params.source = spec.bfs_source;
            "bfs"
        }
        Algorithm::Sssp => {
            params.source = spec.sssp_source;
            "sssp"
        }
        Algorithm::Pr => {
            params.damping = spec.pr_damping;
            params.iterations = spec.pr_iterations;
            "pagerank"
        }
        Algorithm::Cdlp => {
            params.iterations = spec.cdlp_iterations;
            "cdlp"
        }
        Algorithm::Lcc => "lcc",
        Algorithm::Wcc => "wcc",
    };
    (name, params)
}

/// Runs one check on `workers` worker threads. Never panics on bad data or a failed run: that is
/// a failed result with the message.
pub fn check(check: &Check, workers: usize) -> CheckResult {
    let spec = &check.spec;
    let expected_file = spec.expected_file(check.algorithm);
    if !expected_file.is_file() {
        return CheckResult::failed(check, format!("expected output {} does not exist", expected_file.display()));
    }
    let (name, params) = algorithm_params(spec, check.algorithm);
    let algorithm = match dataflow::by_name(name, &params) {
        Ok(a) => a,
        Err(e) => return CheckResult::failed(check, format!("cannot set up {}: {:#}", name, e)),
    };
    let format = algorithm.value_format();
    let options = RunOptions {
        layout: Layout::threads(workers.max(1)),
        source: Source::Files(FileSource {
            graph: Some(spec.edge_file.clone()),
            vertices: Some(spec.vertex_file.clone()),
            updates: None,
            batch: None,
            first_batch: None,
        }),
        output: None,
        changes: None,
        stats: None,
        progress: false,
        collect: true,
        ..RunOptions::default()
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| driver::run(options, algorithm)));
    let report = match outcome {
        Ok(Ok(Some(report))) => report,
        Ok(Ok(None)) => return CheckResult::failed(check, "the run reported no result".to_string()),
        Ok(Err(e)) => return CheckResult::failed(check, format!("run failed: {}", e)),
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            return CheckResult::failed(check, format!("run panicked: {}", text));
        }
    };
    let mut result = CheckResult {
        load_seconds: Some(report.summary.load_seconds),
        compute_seconds: Some(report.summary.initial_seconds),
        ..CheckResult::failed(check, String::new())
    };
    let changes = report.changes.unwrap_or_default();
    let actual = match final_output(changes, |value, out| format.write(value, out)) {
        Ok(a) => a,
        Err(e) => {
            result.message = Some(format!("invalid output: {}", e));
            return result;
        }
    };
    // Only now, with the run's state gone, is the expected output read.
    let expected = match read_output(&expected_file) {
        Ok(e) => e,
        Err(e) => {
            result.message = Some(format!("{:#}", e));
            return result;
        }
    };
    let rule = check.algorithm.rule();
    let validation = validate(rule, &expected, &actual);
    result.pass = validation.pass;
    result.worst_deviation =
        (matches!(rule, Rule::Epsilon(_)) && validation.vertices_checked > 0).then_some(validation.worst_deviation);
    result.message = if validation.pass {
        None
    } else {
        Some(format!(
            "{} mismatch{} ({} expected vertices); first: {}",
            validation.mismatches,
            if validation.mismatches == 1 { "" } else { "es" },
            expected.len(),
            validation.first_mismatch.as_deref().unwrap_or("?")
        ))
    };
    result.validation = Some(validation);
    result
}

/// The final state of a run from its change log: `vertex -> value` (written by `write`). Fails if
/// a vertex ends with several values, or a record with a multiplicity other than 1.
pub fn final_output(changes: Vec<Change>, write: impl Fn(u64, &mut String)) -> Result<BTreeMap<u64, String>, String> {
    let mut state: BTreeMap<(u64, u64), i64> = BTreeMap::new();
    for c in changes {
        *state.entry((c.key, c.value)).or_insert(0) += c.diff as i64;
    }
    let mut out: BTreeMap<u64, String> = BTreeMap::new();
    for ((key, value), count) in state {
        if count == 0 {
            continue;
        }
        let mut text = String::new();
        write(value, &mut text);
        if count != 1 {
            return Err(format!("vertex {} has value {} with multiplicity {}", key, text, count));
        }
        if let Some(previous) = out.get(&key) {
            return Err(format!("vertex {} has several values ({} and {})", key, previous, text));
        }
        out.insert(key, text);
    }
    Ok(out)
}

/// Runs every check `selection` picks in `dir`, in order, calling `on_result` after each one
/// (e.g. to print its row while the next runs).
pub fn run_checks(
    dir: &Path,
    selection: &Selection,
    workers: usize,
    mut on_result: impl FnMut(&CheckResult),
) -> Result<Vec<CheckResult>, RunError> {
    let checks = plan(dir, selection)?;
    let mut results = Vec::with_capacity(checks.len());
    for c in &checks {
        let r = check(c, workers);
        on_result(&r);
        results.push(r);
    }
    Ok(results)
}

/// Number of passed and failed results.
pub fn tally(results: &[CheckResult]) -> (usize, usize) {
    let passed = results.iter().filter(|r| r.pass).count();
    (passed, results.len() - passed)
}

/// The result table: a header, one row per check (`graph algorithm PASS|FAIL load time worst`),
/// a failed row followed by an indented line with its message.
pub struct Table {
    graph_width: usize,
}

impl Table {
    /// A table wide enough for every graph of `checks`.
    pub fn new(checks: &[Check]) -> Self {
        let graph_width = checks.iter().map(|c| c.spec.name.len()).max().unwrap_or(0).max(5);
        Table { graph_width }
    }

    /// The header line.
    pub fn header(&self) -> String {
        format!(
            "{:<gw$}  {:<9}  {:<6}  {:>9}  {:>9}  {:>9}",
            "graph",
            "algorithm",
            "result",
            "load s",
            "time s",
            "worst dev",
            gw = self.graph_width
        )
    }

    /// The row of one result (with its message line if it failed), without a final newline.
    pub fn row(&self, r: &CheckResult) -> String {
        let secs = |s: Option<f64>| s.map_or_else(|| "-".to_string(), |s| format!("{:.3}", s));
        let worst = match r.worst_deviation {
            None => "-".to_string(),
            Some(0.0) => "0".to_string(),
            Some(d) if d.is_infinite() => "inf".to_string(),
            Some(d) => format!("{:.2e}", d),
        };
        let mut line = format!(
            "{:<gw$}  {:<9}  {:<6}  {:>9}  {:>9}  {:>9}",
            r.graph,
            r.algorithm.name(),
            if r.pass { "PASS" } else { "FAIL" },
            secs(r.load_seconds),
            secs(r.compute_seconds),
            worst,
            gw = self.graph_width
        );
        if let Some(m) = r.message.as_ref().filter(|_| !r.pass) {
            let _ = write!(line, "\n    {} {}: {}", r.graph, r.algorithm.name(), m);
        }
        line
    }
}

/// The final line: `N passed, M failed`.
pub fn summary_line(results: &[CheckResult]) -> String {
    let (passed, failed) = tally(results);
    format!("{} passed, {} failed", passed, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_output_from_changes() {
        let c = |key, value, diff| Change { epoch: 0, key, value, diff };
        let out =
            final_output(vec![c(1, 5, 1), c(2, 7, 1), c(2, 7, -1), c(2, 8, 1)], |v, s| s.push_str(&v.to_string()))
                .unwrap();
        assert_eq!(out, BTreeMap::from([(1, "5".to_string()), (2, "8".to_string())]));
        let e = final_output(vec![c(1, 5, 1), c(1, 6, 1)], |v, s| s.push_str(&v.to_string())).unwrap_err();
        assert!(e.contains("vertex 1"), "{e}");
        let e = final_output(vec![c(1, 5, 1), c(1, 5, 1)], |v, s| s.push_str(&v.to_string())).unwrap_err();
        assert!(e.contains("multiplicity 2"), "{e}");
    }

    #[test]
    fn params_follow_the_properties() {
        let text = "graph.g.directed = false\n\
                    graph.g.algorithms = bfs, cdlp, lcc, pr, sssp, wcc\n\
                    graph.g.bfs.source-vertex = 3\n\
                    graph.g.sssp.source-vertex = 4\n\
                    graph.g.cdlp.max-iterations = 5\n\
                    graph.g.pr.damping-factor = 0.5\n\
                    graph.g.pr.num-iterations = 6\n";
        let spec = GraphSpec::from_text("g", Path::new("."), text).unwrap();
        let (n, p) = algorithm_params(&spec, Algorithm::Bfs);
        assert_eq!((n, p.source, p.undirected), ("bfs", Some(3), true));
        let (n, p) = algorithm_params(&spec, Algorithm::Sssp);
        assert_eq!((n, p.source), ("sssp", Some(4)));
        let (n, p) = algorithm_params(&spec, Algorithm::Cdlp);
        assert_eq!((n, p.iterations), ("cdlp", Some(5)));
        let (n, p) = algorithm_params(&spec, Algorithm::Pr);
        assert_eq!((n, p.iterations, p.damping), ("pagerank", Some(6), Some(0.5)));
        assert_eq!(algorithm_params(&spec, Algorithm::Lcc).0, "lcc");
        assert_eq!(algorithm_params(&spec, Algorithm::Wcc).0, "wcc");
        for a in Algorithm::ALL {
            let (n, p) = algorithm_params(&spec, a);
            assert!(dataflow::by_name(n, &p).is_ok(), "{n}");
        }
    }
}
