//! `ripples demo`: no files needed. Generates an R-MAT edge sequence, streams it through a
//! sliding window (each epoch inserts `batch` new edges and expires the `batch` oldest), and
//! maintains weakly connected components on all cores, with progress and a summary.

use std::sync::Arc;

use clap::Args;

use super::workers::{DefaultWorkers, WorkersArgs, WorkersFlag};
use crate::dataflow::wcc::Wcc;
use crate::driver::{self, Layout, MemoryStream, RunError, RunOptions, Source};
use crate::sources::{generate, stream};

/// `-w` of `ripples demo`.
pub(super) const WORKERS: WorkersFlag =
    WorkersFlag { help: "Worker threads (default: all cores)", default: DefaultWorkers::AllCores };

#[derive(Args, Debug)]
#[command(mut_arg("workers", |a| WORKERS.arg(a)))]
pub struct DemoArgs {
    /// R-MAT scale: 2^scale vertices.
    #[arg(long, default_value_t = 18)]
    pub scale: u32,
    /// Edges per vertex.
    #[arg(long, default_value_t = 16)]
    pub edge_factor: u64,
    /// Edges in the sliding window.
    #[arg(long, default_value_t = 500_000)]
    pub window: usize,
    /// Edges inserted (and expired) per epoch.
    #[arg(long, default_value_t = 1_000)]
    pub batch: usize,
    /// Stop after this many update epochs.
    #[arg(long, default_value_t = 2_500)]
    pub epochs: usize,
    /// Worker threads ([`WORKERS`]).
    #[command(flatten)]
    pub workers: WorkersArgs,
    /// Seed of the generated graph and stream (the same seed, the same stream).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// `--http`, `--profile` (as for `ripples run`).
    #[command(flatten)]
    pub monitor: super::monitor::MonitorArgs,
}

pub fn demo(args: DemoArgs) -> Result<(), RunError> {
    if args.window == 0 || args.batch == 0 {
        return Err(RunError::Input("--window and --batch must be at least 1".into()));
    }
    if args.scale == 0 || args.scale > 30 {
        return Err(RunError::Input(format!("--scale must be in 1..=30, got {}", args.scale)));
    }
    let workers = args.workers.resolve(WORKERS)?;
    let edges = generate::rmat(args.scale, args.edge_factor, args.seed);
    let window = args.window.min(edges.len());
    let needed = window + args.batch * args.epochs;
    let edges = &edges[..needed.min(edges.len())];
    // The first `window` steps of the stream only insert: they are the initial graph.
    let updates: Vec<_> = stream::sliding_window(edges, window).split_off(window);
    eprintln!(
        "ripples demo: R-MAT scale {} ({} vertices), window of {} edges, {} edges in and out per epoch, {} epochs, {} worker(s)",
        args.scale,
        1u64 << args.scale,
        window,
        args.batch,
        updates.len() / (2 * args.batch),
        workers
    );
    let memory = MemoryStream {
        vertices: Vec::new(),
        initial: edges[..window].iter().map(|&(s, d)| (s, d, None)).collect(),
        updates,
        batch: 2 * args.batch,
    };
    let configuration = serde_json::json!({
        "demo": true, "algorithms": ["wcc"], "workers": workers, "processes": 1, "scale": args.scale,
        "edge_factor": args.edge_factor, "window_edges": window, "batch": args.batch, "epochs": args.epochs,
    });
    let monitoring = args.monitor.start(0, configuration, true)?;
    let options = RunOptions {
        layout: Layout::threads(workers),
        source: Source::Memory(Arc::new(memory)),
        output: None,
        changes: None,
        stats: None,
        progress: true,
        collect: false,
        trusted_input: true,
        ..RunOptions::default()
    };
    if let Some(report) = driver::run(monitoring.attach(options), Wcc)? {
        eprintln!("{}", report.summary.human());
    }
    monitoring.end()
}
