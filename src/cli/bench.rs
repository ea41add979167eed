//! `ripples bench`: systems side by side on one generated stream.

use std::path::PathBuf;

use clap::Args;

use super::workers::{DefaultWorkers, WorkersArgs, WorkersFlag};
use crate::bench::{self, BenchError, BenchOptions, Scenario};
use crate::driver::RunError;

/// `-w` of `ripples bench`.
pub(super) const WORKERS: WorkersFlag =
    WorkersFlag { help: "Worker threads for the dataflow systems", default: DefaultWorkers::Fixed(2) };

#[derive(Args, Debug)]
#[command(mut_arg("workers", |a| WORKERS.arg(a)))]
pub struct BenchArgs {
    /// wcc-insert, wcc-window, or ALGORITHM-churn (bfs, sssp, pagerank, cdlp, lcc, scc,
    /// triangles, kcore, bipartite).
    pub scenario: String,
    /// R-MAT scale (2^scale vertices). Default: 20 for wcc-*, 16 for triangles-, kcore- and
    /// bipartite-churn, 14 for the other churn scenarios.
    #[arg(long)]
    pub scale: Option<u32>,
    /// Updates per epoch (wcc-window: edges in, and as many out). Default: 100000 (wcc-insert),
    /// 1000 (wcc-window), 1000 (triangles-, kcore-, bipartite-churn: 500 deletions + 500
    /// insertions), 100 (other churn).
    #[arg(long)]
    pub batch: Option<usize>,
    /// Sliding window in edges (wcc-window; default 1000000).
    #[arg(long)]
    pub window: Option<usize>,
    /// Update epochs (wcc-window default 500, triangles-, kcore-, bipartite-churn 20, other churn
    /// 50).
    #[arg(long)]
    pub epochs: Option<usize>,
    /// Worker threads for the dataflow systems ([`WORKERS`]).
    #[command(flatten)]
    pub workers: WorkersArgs,
    /// Seed of the generated graph and stream (the same seed, the same stream).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Comma-separated systems (default: every system that applies to the scenario).
    #[arg(long, value_delimiter = ',')]
    pub systems: Option<Vec<String>>,
    /// Seconds each system may spend on updates; a system that reaches it reports the prefix it
    /// processed, marked partial.
    #[arg(long, default_value_t = 120.0)]
    pub time_limit: f64,
    /// Run each system N times, in rounds (every system once per round, so that a slow moment of
    /// the machine falls on all of them alike), and report each system's run with the median
    /// updates/s; the notes give the range, the JSON every run's updates/s (`runs`). A system
    /// that reaches the time limit in the first round runs once.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Write the figures as JSON (an array, one object per system).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw throughput and latency percentiles per system (.svg or .png); with --shards, the
    /// critical path and the speedup against the number of shares.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Instead of the systems: run the K forest shares of the fully dynamic WCC path and their
    /// union forest one after another in this thread, timing each per epoch, and report the
    /// critical path of a K-worker run against one forest (wcc-* scenarios). A comma list
    /// sweeps: --shards 1,2,4,8,16,32,64. Ignores -w, --systems and --time-limit.
    #[arg(long, value_delimiter = ',')]
    pub shards: Option<Vec<usize>>,
    /// Write each dataflow system's per-operator profile to DIR/SYSTEM.json (and .svg), as
    /// `ripples run --profile` does.
    #[arg(long, value_name = "DIR")]
    pub profile: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct BenchSystemArgs {
    #[arg(long)]
    pub spec: String,
    #[arg(long)]
    pub system: String,
    #[arg(long)]
    pub state_out: Option<PathBuf>,
}

/// `ripples perf-page DIR`: prints the page of the recorded runs under `DIR`
/// (`book/src/performance-runs.md` is its output for `docs/runs`).
pub fn perf_page(dir: &std::path::Path) -> Result<(), RunError> {
    print!("{}", bench::runs_page::runs_page(dir).map_err(run_error)?);
    Ok(())
}

/// A benchmark error as the command line reports it: the whole chain (`outer: inner`); an unknown
/// scenario is bad usage (exit status 2), anything else exit status 1.
fn run_error(e: BenchError) -> RunError {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    match e {
        BenchError::UnknownScenario { .. } => RunError::Input(text),
        _ => RunError::Other(text),
    }
}

pub fn bench(args: BenchArgs) -> Result<(), RunError> {
    let mut scenario = Scenario::new(&args.scenario).map_err(run_error)?;
    if let Some(s) = args.scale {
        scenario.scale = s;
    }
    if let Some(b) = args.batch {
        scenario.batch = b;
    }
    if let Some(w) = args.window {
        scenario.window = w;
    }
    if let Some(e) = args.epochs {
        scenario.epochs = e;
    }
    let workers = args.workers.resolve(WORKERS)?;
    if scenario.scale == 0 || scenario.scale > 30 || scenario.batch == 0 || scenario.window == 0 {
        return Err(RunError::Input("--scale must be in 1..=30; --batch, --window and --workers at least 1".into()));
    }
    scenario.seed = args.seed;
    scenario.workers = workers;
    scenario.time_limit_secs = args.time_limit;
    if let Some(shares) = &args.shards {
        return shards(&scenario, shares, &args);
    }
    let systems: Vec<String> =
        args.systems.unwrap_or_else(|| bench::systems::defaults(&scenario).into_iter().map(String::from).collect());
    if let Some(dir) = &args.profile {
        std::fs::create_dir_all(dir).map_err(|e| RunError::Other(format!("cannot create {}: {}", dir.display(), e)))?;
    }
    let options = BenchOptions {
        scenario: scenario.clone(),
        systems,
        profile: args.profile.clone(),
        repeat: args.repeat as usize,
    };
    let (results, agree) = bench::run_bench(&options).map_err(run_error)?;
    println!(
        "scenario {}: R-MAT scale {}, batch {}{}, {} worker(s), seed {}",
        scenario.name,
        scenario.scale,
        scenario.batch,
        if scenario.name == "wcc-window" { format!(", window {}", scenario.window) } else { String::new() },
        scenario.workers,
        scenario.seed
    );
    print!("{}", bench::table(&results));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&results).map_err(|e| run_error(BenchError::Encode(e)))?;
        std::fs::write(path, text).map_err(|e| run_error(BenchError::file("cannot write", path)(e)))?;
    }
    if let Some(path) = &args.plot {
        let title = format!(
            "ripples bench {} (scale {}, batch {}, -w {})",
            scenario.name, scenario.scale, scenario.batch, scenario.workers
        );
        bench::plot::plot(&results, &title, path).map_err(run_error)?;
    }
    if !agree {
        return Err(RunError::Other("systems disagree on the final result (see the table)".into()));
    }
    Ok(())
}

/// `ripples bench SCENARIO --shards K[,K…]`: the table on stdout, `--json` and `--plot` files.
fn shards(scenario: &Scenario, shares: &[usize], args: &BenchArgs) -> Result<(), RunError> {
    if shares.is_empty() || shares.contains(&0) {
        return Err(RunError::Input("--shards needs numbers of shares of at least 1".into()));
    }
    if scenario.algorithm() != "wcc" {
        return Err(RunError::Input(format!("--shards needs a wcc-* scenario, not {}", scenario.name)));
    }
    let report = bench::shards::run_shards(scenario, shares).map_err(run_error)?;
    println!(
        "scenario {} --shards: R-MAT scale {}, batch {}, {} epochs, seed {}; shares run one after another in one thread",
        scenario.name, scenario.scale, scenario.batch, scenario.epochs, scenario.seed
    );
    print!("{}", bench::shards::table(&report));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| run_error(BenchError::Encode(e)))?;
        std::fs::write(path, text).map_err(|e| run_error(BenchError::file("cannot write", path)(e)))?;
    }
    if let Some(path) = &args.plot {
        let title = format!(
            "ripples bench {} --shards (scale {}, batch {}, {} epochs)",
            scenario.name, scenario.scale, scenario.batch, scenario.epochs
        );
        bench::shards::plot(&report, &title, path).map_err(run_error)?;
    }
    Ok(())
}

/// The child side of `ripples bench` (see [`bench::child`]).
pub fn bench_system(args: BenchSystemArgs) -> Result<(), RunError> {
    bench::child_main(&args.spec, &args.system, args.state_out.as_deref()).map_err(run_error)
}
