//! Running a parsed command line: [`dispatch`] to the subcommands, `ripples run` and `ripples
//! gen`, the jobs with their `--restart` loop ([`run_jobs`]), and the exit status
//! ([`exit_status`]).

use clap::Parser;

use super::args::{Cli, Command, GenCommand, JobArgs, RunArgs};
use super::{bench, demo, experiment, graphalytics};
use crate::dataflow::{self, Params};
use crate::driver::{self, RunError, RunOptions, Source};
use crate::sources::{generate, parse, stream};

/// Runs `algorithm` as `ripples run` would with these flags: progress on stderr, files written by
/// process 0, the summary printed at the end.
pub fn run_job<A: dataflow::Algorithm>(job: &JobArgs, algorithm: A) -> Result<Option<driver::RunReport>, RunError> {
    run_jobs(job, vec![Box::new(algorithm)])
}

/// Runs several algorithms over one stream, sharing the input's arrangements (`--output-dir`).
pub fn run_jobs(
    job: &JobArgs,
    algorithms: Vec<Box<dyn dataflow::Algorithm>>,
) -> Result<Option<driver::RunReport>, RunError> {
    job.check()?;
    if !job.is_live() && (job.epoch_ms.is_some() || job.state_dir.is_some()) {
        return Err(RunError::Input(
            "--epoch-ms and --state-dir need live input (--updates -, --listen or --follow)".into(),
        ));
    }
    if job.restart > 0 && job.state_dir.is_none() {
        return Err(RunError::Input("--restart needs --state-dir (a restart resumes from it)".into()));
    }
    let algorithms: Vec<std::sync::Arc<dyn dataflow::Algorithm>> =
        algorithms.into_iter().map(std::sync::Arc::from).collect();
    let names: Vec<String> = algorithms.iter().map(|a| a.name()).collect();
    let monitoring = job.monitor.start(job.layout.process, job.describe(&names), names.iter().any(|n| n == "wcc"))?;
    let served = job.serve.start(job.layout.process, monitoring.profiler())?;
    monitoring.watch(&served);
    let mut restarts = 0;
    let report = loop {
        let attempt = algorithms.iter().map(|a| Box::new(a.clone()) as Box<dyn dataflow::Algorithm>).collect();
        match run_attempt(monitoring.attach(served.attach(job.options()?)), attempt) {
            Err(e) if restarts < job.restart && restartable(&e) => {
                restarts += 1;
                monitoring.restarted();
                eprintln!("ripples: error: {}", e);
                eprintln!(
                    "ripples: restart {} of {} in {} ms, from the state directory",
                    restarts, job.restart, job.restart_delay_ms
                );
                std::thread::sleep(std::time::Duration::from_millis(job.restart_delay_ms));
            }
            result => break result?,
        }
    };
    if let Some(report) = &report {
        eprintln!("{}", report.summary.human());
    }
    monitoring.end()?;
    served.end();
    Ok(report)
}

/// One run: live input through a [`Job`](crate::job::Job) reading the configured transport
/// (stdin, TCP producers, a followed file), which waits for its input to end; file input
/// straight through the driver.
fn run_attempt(
    options: RunOptions,
    algorithms: Vec<Box<dyn dataflow::Algorithm>>,
) -> Result<Option<driver::RunReport>, RunError> {
    if !matches!(options.source, Source::Live(_)) {
        return driver::run_many(options, algorithms);
    }
    let builder = algorithms.into_iter().fold(crate::job::Job::builder(), |b, a| b.algorithm(a));
    let job = builder.run_options(options).without_results().start().map_err(|e| match e {
        crate::job::JobError::Run(e) => e,
        other => RunError::Other(other.to_string()),
    })?;
    job.finish()
}

/// Whether `--restart` retries after `e`: faults of the run, not of its input or flags.
fn restartable(e: &RunError) -> bool {
    matches!(e, RunError::Cluster { .. } | RunError::WorkerFailed(_) | RunError::Sink(_) | RunError::State(_))
}

/// Prints an error as the CLI does and returns the exit status: 0 for `Ok`, 2 for bad input or
/// usage, 3 when a peer process disconnected and the cluster stopped, 1 for anything else. (The
/// one place exit statuses are decided.)
pub fn exit_status<T>(result: Result<T, RunError>) -> i32 {
    match result {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("ripples: error: {}", e);
            match e {
                _ if e.is_input() => 2,
                RunError::Cluster { .. } | RunError::ClusterStart { .. } => 3,
                _ => 1,
            }
        }
    }
}

/// Parses `std::env::args()`, runs the command, and returns the exit status.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    exit_status(dispatch(cli))
}

fn other<E: std::fmt::Display>(e: E) -> RunError {
    RunError::Other(e.to_string())
}

/// The command-line reference (`ripples help-markdown`, committed as `docs/cli.md`): every
/// subcommand and flag with its help text, generated from the clap definitions.
pub fn cli_reference() -> String {
    let options = clap_markdown::MarkdownOptions::new().show_footer(false).show_table_of_contents(true);
    clap_markdown::help_markdown_custom::<Cli>(&options)
}

/// Runs a parsed command line.
pub fn dispatch(cli: Cli) -> Result<(), RunError> {
    match cli.command {
        Command::Run(args) => run(*args),
        Command::Gen(g) => gen(g),
        Command::Demo(args) => demo::demo(args),
        Command::Bench(args) => bench::bench(args),
        Command::BenchSystem(args) => bench::bench_system(args),
        Command::Graphalytics(args) => graphalytics::graphalytics(args),
        Command::Experiment(command) => experiment::experiment(command),
        Command::HelpMarkdown => {
            print!("{}", cli_reference());
            Ok(())
        }
        Command::PerfPage { dir } => bench::perf_page(&dir),
    }
}

fn run(args: RunArgs) -> Result<(), RunError> {
    let params = Params {
        source: args.source,
        undirected: args.undirected,
        iterations: args.iterations,
        damping: args.damping,
        k: args.k,
        forest: crate::dataflow::wcc_dynamic::ForestParams::default()
            .with_budget(args.wcc_fallback_budget)
            .with_layout(args.wcc_layout)
            .with_renew_min(args.wcc_renew_min),
    };
    let mut algorithms = Vec::new();
    for name in args.algorithm.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        algorithms.push(dataflow::by_name(name, &params).map_err(|e| RunError::Input(format!("{:#}", e)))?);
    }
    run_jobs(&args.job, algorithms).map(|_| ())
}

fn gen(command: GenCommand) -> Result<(), RunError> {
    match command {
        GenCommand::Rmat { scale, edge_factor, seed, out } => {
            if scale == 0 || scale > 40 {
                return Err(RunError::Input(format!("--scale must be in 1..=40, got {}", scale)));
            }
            let edges = generate::rmat(scale, edge_factor, seed);
            parse::write_edges(&out, &edges).map_err(|e| other(format!("cannot write {}: {}", out.display(), e)))?;
            eprintln!("ripples: wrote {} edges on {} vertices to {}", edges.len(), 1u64 << scale, out.display());
        }
        GenCommand::Er { vertices, edges, seed, out } => {
            if vertices == 0 {
                return Err(RunError::Input("--vertices must be at least 1".into()));
            }
            let list = generate::erdos_renyi(vertices, edges, seed);
            parse::write_edges(&out, &list).map_err(|e| other(format!("cannot write {}: {}", out.display(), e)))?;
            eprintln!("ripples: wrote {} edges on {} vertices to {}", list.len(), vertices, out.display());
        }
        GenCommand::Updates { graph, count, delete_fraction, window, event_times, disorder, seed, out } => {
            let edges = parse::read_edges(&graph).map_err(|e| match e {
                parse::SourceError::Input(i) => RunError::Input(i.to_string()),
                other => RunError::Other(other.to_string()),
            })?;
            let pairs: Vec<_> = edges.iter().map(|&(s, d, _)| (s, d)).collect();
            if let Some(per_unit) = event_times {
                if per_unit == 0 {
                    return Err(RunError::Input("--event-times must be at least 1".into()));
                }
                let mut updates = stream::insert_only(&pairs);
                updates.truncate(count);
                let times = stream::event_times(updates.len(), per_unit, disorder, seed);
                let timed: Vec<_> = updates.into_iter().zip(times).collect();
                parse::write_timed_updates(&out, &timed)
                    .map_err(|e| other(format!("cannot write {}: {}", out.display(), e)))?;
                eprintln!("ripples: wrote {} timed updates to {}", timed.len(), out.display());
                return Ok(());
            }
            let updates = match (window, delete_fraction) {
                (Some(w), _) => {
                    if w == 0 {
                        return Err(RunError::Input("--window must be at least 1".into()));
                    }
                    let mut u = stream::sliding_window(&pairs, w);
                    u.truncate(count);
                    u
                }
                (None, p) => {
                    let p = p.unwrap_or(0.0);
                    if !(0.0..=1.0).contains(&p) {
                        return Err(RunError::Input(format!("--delete-fraction must be in [0, 1], got {}", p)));
                    }
                    stream::churn(&pairs, count, p, seed)
                }
            };
            parse::write_updates(&out, &updates)
                .map_err(|e| other(format!("cannot write {}: {}", out.display(), e)))?;
            eprintln!("ripples: wrote {} updates to {}", updates.len(), out.display());
        }
    }
    Ok(())
}
