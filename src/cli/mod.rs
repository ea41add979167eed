//! The `ripples` command line: argument parsing and calls into the library, nothing more.
//!
//! Exit status: 0 on success, 2 for bad input data or bad usage, 1 for anything else (a file
//! that cannot be read or written, a failed worker).

mod bench;
mod demo;
mod experiment;
mod graphalytics;
mod serve;
mod workers;

pub use workers::{DefaultWorkers, WorkersArgs, WorkersFlag};

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::dataflow::{self, Params};
use crate::driver::{self, FileSource, Layout, RunError, RunOptions, Source};
use crate::sources::window::{LatePolicy, WindowKind, WindowSpec};
use crate::sources::{generate, parse, stream};

#[derive(Parser, Debug)]
#[command(
    name = "ripples",
    version,
    about = "Incremental graph computation on graph streams, on timely and differential dataflow"
)]
// clap turns doc comments into help text: these items are documented by their help.
#[allow(missing_docs)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
// clap turns doc comments into help text: these items are documented by their help.
#[allow(missing_docs)]
pub enum Command {
    /// Maintain an algorithm's result over a graph stream.
    Run(Box<RunArgs>),
    /// Generate graphs and update streams.
    #[command(subcommand)]
    Gen(GenCommand),
    /// Generate an R-MAT stream and maintain WCC over a sliding window on all cores.
    Demo(demo::DemoArgs),
    /// Measure systems side by side on the same generated stream.
    Bench(bench::BenchArgs),
    /// One system of a benchmark (started by `ripples bench`).
    #[command(name = crate::bench::child::COMMAND, hide = true)]
    BenchSystem(bench::BenchSystemArgs),
    /// Run the built-in algorithms on an LDBC Graphalytics dataset and check every output with the
    /// official validation rules (exit status 1 if any check fails).
    Graphalytics(graphalytics::GraphalyticsArgs),
    /// Declarative sweeps: plan, run (resumable), report, compare; convert temporal edge lists.
    #[command(subcommand)]
    Experiment(experiment::ExperimentCommand),
}

/// `-w` of `ripples run` (and of any job built on [`JobArgs`]).
pub const RUN_WORKERS: WorkersFlag =
    WorkersFlag { help: "Worker threads per process", default: DefaultWorkers::Fixed(1) };

/// Process layout flags (timely's configuration).
#[derive(Args, Debug, Clone)]
#[command(mut_arg("workers", |a| RUN_WORKERS.arg(a)))]
pub struct LayoutArgs {
    /// Worker threads per process ([`RUN_WORKERS`]).
    #[command(flatten)]
    pub workers: WorkersArgs,
    /// Number of processes.
    #[arg(short = 'n', long = "processes", default_value_t = 1)]
    pub processes: usize,
    /// Index of this process, 0..processes.
    #[arg(short = 'p', long = "process", default_value_t = 0)]
    pub process: usize,
    /// File with one host:port per line, in process order (default: 127.0.0.1:2101, :2102, ...).
    #[arg(long)]
    pub hostfile: Option<PathBuf>,
}

impl LayoutArgs {
    /// The layout these flags describe (`--workers 0` is an input error).
    pub fn layout(&self) -> Result<Layout, RunError> {
        Ok(Layout {
            workers: self.workers.resolve(RUN_WORKERS)?,
            processes: self.processes,
            process: self.process,
            hostfile: self.hostfile.clone(),
        })
    }
}

/// Input, output and layout flags shared by every job: `ripples run` and any user program built
/// on the library (flatten this into your own clap parser and call [`run_job`]).
#[derive(Args, Debug, Clone)]
pub struct JobArgs {
    /// Edge file: the initial graph (epoch 0), `src dst [weight]` per line.
    #[arg(long)]
    pub graph: Option<PathBuf>,
    /// Vertex file: one id per line; these vertices are in the result even without edges.
    #[arg(long)]
    pub vertices: Option<PathBuf>,
    /// Update file: `+ src dst [weight]` / `- src dst [weight]` per line (epochs 1, 2, ...).
    #[arg(long)]
    pub updates: Option<PathBuf>,
    /// Update lines per epoch (default: the whole update file is epoch 1).
    #[arg(long)]
    pub batch: Option<usize>,
    /// Write the final result here: `vertex value` per line, sorted by vertex.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Write every change here: `epoch vertex value diff` per line (`-` for stdout).
    #[arg(long)]
    pub changes: Option<PathBuf>,
    /// Write per-epoch JSON stats and a summary here.
    #[arg(long)]
    pub stats: Option<PathBuf>,
    /// Several algorithms (`run wcc,bfs,pagerank`): write `DIR/<name>.out` and `DIR/<name>.changes`.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// No progress on stderr (the summary is still printed).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Live input: accept update lines from TCP producers at this address (a bare port binds
    /// 127.0.0.1). See the README for the protocol.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// TCP producers must send `auth TOKEN` as their first line, TOKEN being this file's content
    /// (surrounding whitespace trimmed). Required when --listen is not a loopback address.
    #[arg(long, value_name = "FILE")]
    pub auth_token_file: Option<PathBuf>,
    /// TLS for TCP producers: the server's certificate chain (PEM); with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// TLS for TCP producers: the server's private key (PEM); with --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Live input: read update lines from a file as it grows (like tail -f).
    #[arg(long, value_name = "FILE", conflicts_with = "listen")]
    pub follow: Option<PathBuf>,
    /// Live input: close an epoch every MS milliseconds of wall clock (also when idle).
    #[arg(long, value_name = "MS")]
    pub epoch_ms: Option<u64>,
    /// Live input: make every accepted epoch durable here (write-ahead log, snapshots) and
    /// resume from it after a restart.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Live input with --state-dir: after a failure that a restart can cure (a peer process
    /// disconnected, a worker failed, an I/O error), restart from the state directory, up to N
    /// times, logging each restart. Bad input is never retried.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub restart: u32,
    /// Wait this long before each --restart.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub restart_delay_ms: u64,
    /// Live input: snapshot the edge multiset every N epochs (with --state-dir).
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub snapshot_every: u64,
    /// Live input: the stream never deletes (a deletion is rejected with an error), so insert-only
    /// fast paths apply. File input needs no flag: it is detected.
    #[arg(long)]
    pub insert_only: bool,
    /// Live input from stdin or --follow: warn about a bad line and skip it. By default a bad
    /// line stops the stream with `source:line: problem` and exit status 2 (the epochs closed
    /// before it complete; its open epoch is not applied). TCP producers are always answered
    /// `error N: problem` instead.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// Live input: stop reading while the dataflow is more than K epochs behind.
    #[arg(long, value_name = "K", default_value_t = 16)]
    pub max_behind: u64,
    /// Sliding event-time window: every update line ends with `@T` and its edge is present from
    /// event time T to T+SPAN-1, then leaves by itself. Change lines are labelled by event time.
    #[arg(long, value_name = "SPAN", conflicts_with = "tumbling")]
    pub window: Option<u64>,
    /// Tumbling event-time windows [k*SPAN, (k+1)*SPAN): each window's result covers the edges
    /// of that window alone (change lines at window starts).
    #[arg(long, value_name = "SPAN")]
    pub tumbling: Option<u64>,
    /// Windows: the watermark is the largest event time seen minus L; older updates are late,
    /// and results are written only for times the watermark has passed.
    #[arg(long, value_name = "L", default_value_t = 0)]
    pub lateness: u64,
    /// Windows: what to do with a late update: drop it (counted in the stats) or reject it as
    /// an error.
    #[arg(long, value_enum, default_value_t = LateArg::Drop)]
    pub late: LateArg,
    /// Windowed runs: write every late update here, one line each: where it came from
    /// (`file:line`, or the producer and its line), why it is late, and what happened to it.
    #[arg(long, value_name = "FILE")]
    pub late_output: Option<PathBuf>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub layout: LayoutArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub serve: serve::ServeArgs,
}

/// `--late`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LateArg {
    /// Drop a late update (counted in the stats).
    Drop,
    /// Stop with an error naming the late update.
    Error,
    /// Apply it at the watermark (see the README's event-time windows).
    Apply,
}

impl JobArgs {
    /// The window flags, if any were given.
    pub fn window(&self) -> Option<WindowSpec> {
        let (kind, span) = match (self.window, self.tumbling) {
            (Some(span), _) => (WindowKind::Sliding, span),
            (None, Some(span)) => (WindowKind::Tumbling, span),
            (None, None) => return None,
        };
        let late = match self.late {
            LateArg::Drop => LatePolicy::Drop,
            LateArg::Error => LatePolicy::Error,
            LateArg::Apply => LatePolicy::Apply,
        };
        Some(WindowSpec { kind, span, lateness: self.lateness, late })
    }

    /// Flag combinations that make no sense.
    fn check(&self) -> Result<(), RunError> {
        let window = self.window();
        if let Some(spec) = &window {
            spec.validate().map_err(RunError::Input)?;
            if self.insert_only {
                return Err(RunError::Input(format!(
                    "--insert-only and {} exclude each other (edges leave a window by themselves)",
                    spec.flag()
                )));
            }
        } else if self.lateness != 0 || self.late != LateArg::Drop || self.late_output.is_some() {
            return Err(RunError::Input(
                "--lateness, --late and --late-output need --window SPAN or --tumbling SPAN".into(),
            ));
        }
        if self.listen.is_none() && self.tls_cert.is_some() {
            return Err(RunError::Input("--tls-cert and --tls-key need --listen".into()));
        }
        match (&self.listen, &self.auth_token_file) {
            (None, Some(_)) => return Err(RunError::Input("--auth-token-file needs --listen".into())),
            (Some(addr), None) if !is_loopback(&listen_address(addr)) => {
                return Err(RunError::Input(format!(
                "--listen {addr} is not a loopback address: producers must authenticate, give --auth-token-file FILE"
            )))
            }
            _ => {}
        }
        Ok(())
    }

    /// The token of `--auth-token-file`, read and trimmed.
    fn auth_token(&self) -> Result<Option<String>, RunError> {
        let Some(path) = &self.auth_token_file else { return Ok(None) };
        let text = std::fs::read_to_string(path)
            .map_err(|e| RunError::Other(format!("cannot read {}: {}", path.display(), e)))?;
        let token = text.trim();
        if token.is_empty() || token.contains(char::is_whitespace) {
            return Err(RunError::Input(format!("{}: the token must be one word, not empty", path.display())));
        }
        Ok(Some(token.to_string()))
    }
    /// Whether these flags ask for live input (`--updates -`, `--listen` or `--follow`).
    pub fn is_live(&self) -> bool {
        self.listen.is_some() || self.follow.is_some() || self.updates.as_deref() == Some(std::path::Path::new("-"))
    }

    /// The driver options these flags describe.
    pub fn options(&self) -> Result<RunOptions, RunError> {
        let layout = self.layout.layout()?;
        if self.is_live() {
            use crate::live::{LiveConfig, LiveInput};
            let input = if let Some(addr) = &self.listen {
                LiveInput::Listen(listen_address(addr))
            } else if let Some(f) = &self.follow {
                LiveInput::Follow(f.clone())
            } else {
                LiveInput::Stdin
            };
            let mut cfg = LiveConfig::new(input);
            cfg.graph = self.graph.clone();
            cfg.vertices = self.vertices.clone();
            cfg.batch = self.batch;
            cfg.epoch_ms = self.epoch_ms;
            cfg.max_behind = self.max_behind;
            cfg.state_dir = self.state_dir.clone();
            cfg.snapshot_every = Some(self.snapshot_every);
            cfg.workers = layout.workers;
            cfg.window = self.window();
            cfg.insert_only = self.insert_only;
            cfg.skip_bad_lines = self.skip_bad_lines;
            cfg.auth_token = self.auth_token()?;
            cfg.tls = self.tls_cert.clone().zip(self.tls_key.clone());
            cfg.late_output = self.late_output.clone();
            return Ok(RunOptions {
                layout,
                source: Source::Live(cfg),
                output: self.output.clone(),
                changes: self.changes.clone(),
                stats: self.stats.clone(),
                output_dir: self.output_dir.clone(),
                progress: !self.quiet,
                window: self.window(),
                ..RunOptions::default()
            });
        }
        Ok(RunOptions {
            layout,
            source: Source::Files(FileSource {
                graph: self.graph.clone(),
                vertices: self.vertices.clone(),
                updates: self.updates.clone(),
                batch: self.batch,
                first_batch: None,
            }),
            output: self.output.clone(),
            changes: self.changes.clone(),
            stats: self.stats.clone(),
            output_dir: self.output_dir.clone(),
            progress: !self.quiet,
            collect: false,
            window: self.window(),
            late_output: self.late_output.clone(),
            ..RunOptions::default()
        })
    }
}

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
    let served = job.serve.start(job.layout.process)?;
    let mut restarts = 0;
    let report = loop {
        let attempt = algorithms.iter().map(|a| Box::new(a.clone()) as Box<dyn dataflow::Algorithm>).collect();
        match run_attempt(served.attach(job.options()?), attempt) {
            Err(e) if restarts < job.restart && restartable(&e) => {
                restarts += 1;
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

/// `--listen`'s address: a bare port binds 127.0.0.1.
fn listen_address(addr: &str) -> String {
    if addr.contains(':') {
        addr.to_string()
    } else {
        format!("127.0.0.1:{}", addr)
    }
}

/// Whether a `host:port` names a loopback host (`127.0.0.0/8`, `::1`, `localhost`).
fn is_loopback(addr: &str) -> bool {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h).trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
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
                RunError::Cluster { .. } => 3,
                _ => 1,
            }
        }
    }
}

#[derive(Args, Debug)]
// clap turns doc comments into help text: these items are documented by their help.
#[allow(missing_docs)]
pub struct RunArgs {
    /// Algorithm(s) to maintain: bfs, bipartite, cdlp, degree, degree-distribution, kcore, lcc,
    /// matching, pagerank, scc, spanner, sssp, triangles, wcc; several separated by commas share
    /// one input index (give --output-dir).
    #[arg(value_name = "ALGORITHM")]
    pub algorithm: String,
    /// Source vertex (bfs, sssp).
    #[arg(long)]
    pub source: Option<u64>,
    /// Read each edge line as an edge in both directions.
    #[arg(long)]
    pub undirected: bool,
    /// Iterations (pagerank, cdlp; default 10).
    #[arg(long)]
    pub iterations: Option<u32>,
    /// Damping factor (pagerank; default 0.85).
    #[arg(long)]
    pub damping: Option<f64>,
    /// Distance bound (spanner: keep an edge iff its endpoints are more than K hops apart).
    #[arg(long, value_name = "K")]
    pub k: Option<u32>,
    #[command(flatten)]
    pub job: JobArgs,
}

#[derive(Subcommand, Debug)]
// clap turns doc comments into help text: these items are documented by their help.
#[allow(missing_docs)]
pub enum GenCommand {
    /// R-MAT / Graph500 Kronecker graph (a, b, c, d = 0.57, 0.19, 0.19, 0.05), ids permuted.
    Rmat {
        /// 2^scale vertices.
        #[arg(long)]
        scale: u32,
        /// Edges per vertex.
        #[arg(long, default_value_t = 16)]
        edge_factor: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
    },
    /// Erdős–Rényi G(n, m) graph.
    Er {
        #[arg(long)]
        vertices: u64,
        #[arg(long)]
        edges: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
    },
    /// An update stream over a graph: random churn (insertions and deletions of present edges)
    /// or the graph's edges through a sliding window.
    Updates {
        /// The graph the updates apply to (its edges, in file order).
        #[arg(long)]
        graph: PathBuf,
        /// Number of update lines.
        #[arg(long)]
        count: usize,
        /// Churn: fraction of updates that delete a random present edge (0 = insert-only).
        #[arg(long, conflicts_with = "window")]
        delete_fraction: Option<f64>,
        /// Sliding window: the graph's edges are inserted in order, each deleted W edges after it
        /// arrived (run it without --graph: the stream starts from an empty graph).
        #[arg(long)]
        window: Option<usize>,
        /// Event times for `--window`/`--tumbling` runs: the graph's edges are inserted in order,
        /// each line ending with `@T`, N lines per event-time unit.
        #[arg(long, value_name = "N", conflicts_with_all = ["window", "delete_fraction"])]
        event_times: Option<u64>,
        /// With --event-times: lines arrive out of order by up to D time units.
        #[arg(long, value_name = "D", default_value_t = 0, requires = "event_times")]
        disorder: u64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        out: PathBuf,
    },
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
    }
}

fn run(args: RunArgs) -> Result<(), RunError> {
    let params = Params {
        source: args.source,
        undirected: args.undirected,
        iterations: args.iterations,
        damping: args.damping,
        k: args.k,
        forest: forest_params_from_env()?,
    };
    let mut algorithms = Vec::new();
    for name in args.algorithm.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        algorithms.push(dataflow::by_name(name, &params).map_err(|e| RunError::Input(format!("{:#}", e)))?);
    }
    run_jobs(&args.job, algorithms).map(|_| ())
}

/// The fully dynamic WCC path's parameters for `ripples run`, from the environment:
/// `RIPPLES_WCC_FALLBACK_BUDGET`, the fallback budget factor (a number >= 0; default
/// [`DEFAULT_BUDGET`](crate::dataflow::wcc_dynamic::DEFAULT_BUDGET)), and `RIPPLES_WCC_SHARES`,
/// `1`/`true` for a forest per worker's share or `0`/`false` for the single forest at worker 0
/// (the default). A variable that is unset or empty takes the default; any other value that
/// does not parse or validate is an input error naming the variable.
fn forest_params_from_env() -> Result<dataflow::wcc_dynamic::ForestParams, RunError> {
    use dataflow::wcc_dynamic::{ForestLayout, ForestParams};
    const BUDGET: &str = "RIPPLES_WCC_FALLBACK_BUDGET";
    const SHARES: &str = "RIPPLES_WCC_SHARES";
    let read = |name: &str| match std::env::var(name) {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => Ok(Some(v.trim().to_string())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(RunError::Input(format!("{name}: not valid UTF-8"))),
    };
    let mut params = ForestParams::default();
    if let Some(v) = read(BUDGET)? {
        let budget = v.parse::<f64>().map_err(|_| RunError::Input(format!("{BUDGET}: not a number: '{v}'")))?;
        params = params.with_budget(budget);
        params.validate().map_err(|e| RunError::Input(format!("{BUDGET}: {e}")))?;
    }
    if let Some(v) = read(SHARES)? {
        let shares = match v.as_str() {
            "1" | "true" => true,
            "0" | "false" => false,
            _ => return Err(RunError::Input(format!("{SHARES}: expected 1, true, 0 or false, got '{v}'"))),
        };
        params = params.with_layout(ForestLayout::from_shares(shares));
    }
    Ok(params)
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
