//! The command line's arguments: the clap parser ([`Cli`]) and its subcommands, the flags every
//! job shares ([`JobArgs`], [`LayoutArgs`]) and what they describe (the driver's options, the
//! window). The subcommands of their own file (`bench`, `demo`, `experiment`, `graphalytics`)
//! keep their arguments there.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::workers::{DefaultWorkers, WorkersArgs, WorkersFlag};
use super::{bench, demo, experiment, graphalytics, monitor, serve};
use crate::driver::{FileSource, Layout, RunError, RunOptions, Source};
use crate::sources::window::{LatePolicy, WindowKind, WindowSpec};

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
    /// Print the command-line reference as Markdown (docs/cli.md is its output).
    #[command(name = "help-markdown", hide = true)]
    HelpMarkdown,
    /// Print the page of recorded runs as Markdown (book/src/performance-runs.md is its output
    /// for docs/runs).
    #[command(name = "perf-page", hide = true)]
    PerfPage {
        /// The directory of recorded runs (`DATE-NAME/` with command.txt, bench.json, summary.md).
        dir: PathBuf,
    },
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
    /// Seconds a process of a cluster waits for its peers to connect; a peer that does not come
    /// in time stops the run (exit status 3).
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = connect_timeout)]
    pub connect_timeout: f64,
}

/// `--connect-timeout`: a finite number of seconds > 0.
fn connect_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= 1e9 => Ok(secs),
        _ => Err(format!("'{}' is not a number of seconds > 0", text)),
    }
}

impl LayoutArgs {
    /// The layout these flags describe (`--workers 0` is an input error).
    pub fn layout(&self) -> Result<Layout, RunError> {
        Ok(Layout {
            workers: self.workers.resolve(RUN_WORKERS)?,
            processes: self.processes,
            process: self.process,
            hostfile: self.hostfile.clone(),
            connect_timeout: std::time::Duration::from_secs_f64(self.connect_timeout),
        })
    }
}

/// Input, output and layout flags shared by every job: `ripples run` and any user program built
/// on the library (flatten this into your own clap parser and call [`run_job`](super::run_job)).
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
    /// With --stats: leave out the graph's census (vertices, edges, triangles per epoch). The
    /// census keeps every distinct edge, which on an insert-only stream costs more than WCC
    /// itself; the experiments' cells use this to measure the algorithm alone.
    #[arg(long, requires = "stats")]
    pub no_census: bool,
    /// Several algorithms (`run wcc,bfs,pagerank`): write `DIR/<name>.out` and `DIR/<name>.changes`.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// No progress on stderr (the summary is still printed).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Live input: accept update lines from TCP producers at this address (a bare port binds
    /// 127.0.0.1). The protocol: book/src/live.md.
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
    #[command(flatten)]
    #[allow(missing_docs)]
    pub monitor: monitor::MonitorArgs,
}

/// `--late`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LateArg {
    /// Drop a late update (counted in the stats).
    Drop,
    /// Stop with an error naming the late update.
    Error,
    /// Apply it at the watermark (book/src/windows.md).
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
    pub(super) fn check(&self) -> Result<(), RunError> {
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
        self.auth_token_file.as_deref().map(super::token::read_token).transpose()
    }
    /// The run's configuration as `--http`'s `/api/status` shows it.
    pub fn describe(&self, algorithms: &[String]) -> serde_json::Value {
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        serde_json::json!({
            "algorithms": algorithms,
            "workers": self.layout.workers.resolve(RUN_WORKERS).ok(),
            "processes": self.layout.processes,
            "graph": path(&self.graph),
            "updates": path(&self.updates),
            "batch": self.batch,
            "live": self.is_live(),
            "listen": self.listen,
            "follow": path(&self.follow),
            "state_dir": path(&self.state_dir),
            "window": self.window.or(self.tumbling),
            "window_kind": if self.window.is_some() { Some("sliding") } else if self.tumbling.is_some() { Some("tumbling") } else { None },
            "serve": self.serve.serve,
        })
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
                census: !self.no_census,
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
            census: !self.no_census,
            output_dir: self.output_dir.clone(),
            progress: !self.quiet,
            collect: false,
            window: self.window(),
            late_output: self.late_output.clone(),
            ..RunOptions::default()
        })
    }
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
    /// wcc's fully dynamic path: a time's replacement searches may take FACTOR x (links +
    /// vertices) steps before the forest is rebuilt from scratch (a number >= 0; 0 rebuilds at
    /// the first forest-edge deletion of every time). The change log is the same either way.
    #[arg(long, value_name = "FACTOR", default_value_t = crate::dataflow::wcc_dynamic::DEFAULT_BUDGET, value_parser = fallback_budget)]
    pub wcc_fallback_budget: f64,
    /// wcc's fully dynamic path: where the spanning forests live: `single` (one forest of every
    /// edge at worker 0) or `shares` (a forest per worker's share of the edges, and the forest of
    /// their union at worker 0). The change log is the same either way.
    #[arg(long, value_name = "LAYOUT", default_value = "single", value_parser = forest_layout)]
    pub wcc_layout: crate::dataflow::wcc_dynamic::ForestLayout,
    /// wcc's fully dynamic path on event-time windows (`--window`, `--tumbling`): the forest is
    /// rebuilt newest edge first once the links that arrived since its last build reach half the
    /// present ones and at least LINKS (0: never), so that expiries drop non-tree edges instead
    /// of cutting the tree. The change log is the same either way.
    #[arg(long, value_name = "LINKS", default_value_t = crate::dataflow::wcc_dynamic::RENEW_MIN)]
    pub wcc_renew_min: u64,
    #[command(flatten)]
    pub job: JobArgs,
}

/// `--wcc-fallback-budget`: a number >= 0 (infinity: never rebuild).
fn fallback_budget(text: &str) -> Result<f64, String> {
    let budget = text.parse::<f64>().map_err(|_| format!("'{}' is not a number", text))?;
    let params = crate::dataflow::wcc_dynamic::ForestParams::default().with_budget(budget);
    params.validate().map_err(|e| e.to_string())?;
    Ok(budget)
}

/// `--wcc-layout`: `single` or `shares`.
fn forest_layout(text: &str) -> Result<crate::dataflow::wcc_dynamic::ForestLayout, String> {
    use crate::dataflow::wcc_dynamic::ForestLayout;
    match text {
        "single" => Ok(ForestLayout::Single),
        "shares" => Ok(ForestLayout::Shares),
        _ => Err(format!("'{}' is not a layout: give single or shares", text)),
    }
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
        /// Seed of the random generator (the same seed, the same output).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Where to write it.
        #[arg(long)]
        out: PathBuf,
    },
    /// Erdős–Rényi G(n, m) graph.
    Er {
        /// Number of vertices (ids 0..vertices).
        #[arg(long)]
        vertices: u64,
        /// Number of edges, each between two uniformly random vertices.
        #[arg(long)]
        edges: u64,
        /// Seed of the random generator (the same seed, the same output).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Where to write it.
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
        /// Seed of the random generator (the same seed, the same output).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Where to write it.
        #[arg(long)]
        out: PathBuf,
    },
}
