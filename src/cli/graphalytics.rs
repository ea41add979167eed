//! `ripples graphalytics`: runs the built-in algorithms on an LDBC Graphalytics dataset and
//! validates their outputs with the official rules (see [`crate::graphalytics::runner`]).
//!
//! Prints one row per graph × algorithm as it completes (PASS/FAIL, load and compute seconds,
//! worst relative deviation for the epsilon rule; a failed row is followed by its first mismatch
//! or error), then `N passed, M failed`. Exit status 1 if any check failed.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::workers::{DefaultWorkers, WorkersArgs, WorkersFlag};
use crate::driver::RunError;
use crate::graphalytics::runner::{self, Selection, Table};
use crate::graphalytics::Algorithm;

/// `-w` of `ripples graphalytics`.
pub(super) const WORKERS: WorkersFlag = WorkersFlag { help: "Worker threads", default: DefaultWorkers::Fixed(1) };

#[derive(Args, Debug)]
#[command(mut_arg("workers", |a| WORKERS.arg(a)))]
pub struct GraphalyticsArgs {
    /// Dataset directory with GRAPH.properties, GRAPH.v, GRAPH.e and the expected outputs
    /// GRAPH-ALG (default: the validation graphs shipped in tests/data/graphalytics/graphs).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Only this graph (repeat for several).
    #[arg(long, value_name = "NAME")]
    pub graph: Vec<String>,
    /// Only this algorithm: bfs, cdlp, lcc, pr (or pagerank), sssp, wcc.
    #[arg(long, value_name = "ALG")]
    pub algorithm: Option<String>,
    /// Worker threads ([`WORKERS`]).
    #[command(flatten)]
    pub workers: WorkersArgs,
}

pub fn graphalytics(args: GraphalyticsArgs) -> Result<(), RunError> {
    let workers = args.workers.resolve(WORKERS)?;
    let algorithm = match args.algorithm.as_deref() {
        None => None,
        Some(a) if a.trim().eq_ignore_ascii_case("pagerank") => Some(Algorithm::Pr),
        Some(a) => Some(a.parse::<Algorithm>().map_err(|e| RunError::Input(format!("--algorithm: {:#}", e)))?),
    };
    let dir = args.dir.unwrap_or_else(runner::default_dir);
    let selection = Selection { graphs: args.graph, algorithm };
    let checks = runner::plan(&dir, &selection)?;

    let table = Table::new(&checks);
    let mut stdout = std::io::stdout();
    let mut print = |text: &str| {
        let _ = writeln!(stdout, "{}", text);
        let _ = stdout.flush();
    };
    print(&format!(
        "Graphalytics conformance: {} ({} checks, {} worker{})",
        dir.display(),
        checks.len(),
        workers,
        if workers == 1 { "" } else { "s" }
    ));
    print(&table.header());
    let mut results = Vec::with_capacity(checks.len());
    for check in &checks {
        let result = runner::check(check, workers);
        print(&table.row(&result));
        results.push(result);
    }
    print(&runner::summary_line(&results));

    let (_, failed) = runner::tally(&results);
    if failed > 0 {
        return Err(RunError::Other(format!("{} of {} checks failed", failed, results.len())));
    }
    Ok(())
}
