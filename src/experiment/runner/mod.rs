//! `ripples experiment run`: every cell in a fresh child process, killed at its timeout, in an
//! order shuffled by the experiment's seed; one [`Record`] appended to `OUT/results.jsonl` per
//! cell, failed or not.
//!
//! A cell's child is `ripples run ALGORITHM --graph G --updates U --batch B -w W --stats S
//! --output O -q --no-census` for the `ripples` system (the figures are the algorithm's, without
//! the graph's census), `ripples experiment system --system bench:NAME ...`
//! for a `bench:` system (its side: [`child_main`]), or the command line of a `[commands.NAME]`
//! table with its placeholders filled in ([`PLACEHOLDERS`]). The child runs in its own process
//! group; at the timeout the group is killed. Its peak RSS and CPU time come from `wait4`'s
//! rusage.
//!
//! The parts: the whole run here; one cell (its command line, outcome and figures) in `cell`;
//! starting, waiting for and killing a cell's processes in `process`; the child side of a
//! `bench:` system in `child`.

mod cell;
mod child;
mod process;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use rand::SeedableRng;

pub use cell::PLACEHOLDERS;
pub use child::child_main;

use super::config::{Cell, Experiment};
use super::data::{self, Prepared, StreamFiles};
use super::env::Environment;
use super::record::{self, Record, Status};
use super::ExperimentError;
use cell::run_cell;

/// Options of `ripples experiment run`.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The output directory (`--out`, default `results/NAME`): `results.jsonl`, data, streams and
    /// the report.
    pub out: PathBuf,
    /// Skip cells that already have a record.
    pub resume: bool,
    /// Run again the cells whose record is a failure (implies resume).
    pub rerun_failed: bool,
    /// Stop after running this many cells.
    pub max_cells: Option<usize>,
    /// No progress bar.
    pub quiet: bool,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunCounts {
    /// Cells run in this invocation, failed or not.
    pub ran: usize,
    /// Cells not run because they already have a record (`--resume` / `--rerun-failed`).
    pub skipped: usize,
    /// Cells run in this invocation whose status is not `ok`.
    pub failed: usize,
    /// Cells still to run when `--max-cells` stopped the run.
    pub left: usize,
}

/// The records of a results file, in order. A last line cut short (the run was killed while
/// writing it) is dropped; a bad line elsewhere is an error naming it.
pub fn load_records(path: &Path) -> Result<Vec<Record>, ExperimentError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ExperimentError::Io(format!("cannot read {}: {}", path.display(), e))),
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() && !line.ends_with('\n') => break,
            Err(e) => {
                return Err(ExperimentError::Input(format!("{}:{}: not a result record: {}", path.display(), i + 1, e)))
            }
        }
    }
    Ok(out)
}

/// The last record of every key (a re-run failed cell's new record replaces the old one).
pub fn latest(records: &[Record]) -> Vec<Record> {
    let mut by_key: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        by_key.insert(&r.key, i);
    }
    let mut keep: Vec<usize> = by_key.into_values().collect();
    keep.sort_unstable();
    keep.into_iter().map(|i| records[i].clone()).collect()
}

/// Rough seconds for a cell: startup plus its edges and updates at the assumed rate.
pub fn estimate_secs(exp: &Experiment, cell: &Cell) -> f64 {
    use super::config::DatasetSource::*;
    let edges = match exp.dataset(&cell.dataset).map(|d| &d.source) {
        Some(Rmat { scale, edge_factor, .. }) => (1u64 << scale) as f64 * *edge_factor as f64,
        Some(Er { edges, .. }) => *edges as f64,
        Some(File { path }) | Some(Temporal { path, .. }) => {
            std::fs::metadata(path).map(|m| m.len() as f64 / 16.0).unwrap_or(0.0)
        }
        None => 0.0,
    };
    let work = match cell.stream.as_str() {
        "churn" => edges + exp.stream.churn_updates as f64,
        "window" => 2.0 * edges,
        _ => edges,
    };
    (0.3 + work / exp.estimate_updates_per_sec).min(exp.timeout_secs)
}

/// Runs the experiment's cells (see the module docs).
pub fn run(exp: &Experiment, options: &RunOptions) -> Result<RunCounts, ExperimentError> {
    let out = &options.out;
    std::fs::create_dir_all(out).map_err(|e| ExperimentError::Io(format!("cannot create {}: {}", out.display(), e)))?;
    let results = out.join("results.jsonl");
    let resume = options.resume || options.rerun_failed;
    let existing = load_records(&results)?;
    if !existing.is_empty() && !resume {
        return Err(ExperimentError::Input(format!(
            "{} already has {} record(s): give --resume to finish the experiment, --rerun-failed to retry its failed cells, or another --out",
            results.display(),
            existing.len()
        )));
    }
    let latest_status: BTreeMap<String, Status> = latest(&existing).into_iter().map(|r| (r.key, r.status)).collect();
    let env = Environment::capture();
    let exe =
        std::env::current_exe().map_err(|e| ExperimentError::Io(format!("cannot find the ripples binary: {e}")))?;

    let mut prepared: BTreeMap<String, Prepared> = BTreeMap::new();
    for d in &exp.datasets {
        prepared.insert(d.name.clone(), data::prepare(exp, &d.name, out)?);
    }
    let mut cells = exp.cells();
    cells.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(exp.seed));
    let mut todo = Vec::new();
    let mut counts = RunCounts::default();
    for cell in cells {
        let key = record::key(&cell, &env.git_rev, &prepared[&cell.dataset].info.checksum);
        match latest_status.get(&key) {
            Some(Status::Ok) => counts.skipped += 1,
            Some(_) if !options.rerun_failed => counts.skipped += 1,
            _ => todo.push((key, cell)),
        }
    }
    let limit = options.max_cells.unwrap_or(usize::MAX).min(todo.len());
    counts.left = todo.len() - limit;
    todo.truncate(limit);

    let total_estimate: f64 = todo.iter().map(|(_, c)| estimate_secs(exp, c)).sum();
    let bar = if options.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        let bar = indicatif::ProgressBar::new((total_estimate * 1000.0).max(1.0) as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{prefix} [{elapsed_precise}] {wide_bar} ETA {eta} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    };
    let cannot = |e: std::io::Error| ExperimentError::Io(format!("cannot write {}: {}", results.display(), e));
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&results).map_err(cannot)?;
    // A last line cut short by a kill is dropped before anything is appended after it.
    let text = std::fs::read(&results).map_err(cannot)?;
    if text.last().is_some_and(|&b| b != b'\n') {
        let keep = text.iter().rposition(|&b| b == b'\n').map(|i| i + 1).unwrap_or(0);
        file.set_len(keep as u64).map_err(cannot)?;
    }
    let mut streams: BTreeMap<(String, String, u64), StreamFiles> = BTreeMap::new();
    let mut references: BTreeMap<(String, String, u64, String), Option<String>> = BTreeMap::new();
    let n = todo.len();
    for (i, (key, cell)) in todo.into_iter().enumerate() {
        bar.set_prefix(format!("[{}/{}]", i + 1, n));
        bar.set_message(cell.config());
        let data = &prepared[&cell.dataset];
        let sk = (cell.dataset.clone(), cell.stream.clone(), cell.seed);
        if !streams.contains_key(&sk) {
            streams.insert(sk.clone(), data::stream_files(exp, &cell, data, out)?);
        }
        let files = &streams[&sk];
        let rk = (cell.dataset.clone(), cell.stream.clone(), cell.seed, cell.algorithm.clone());
        let reference = references
            .entry(rk)
            .or_insert_with(|| data::reference(&cell.algorithm, &files.final_edges, exp.source))
            .clone();
        let rec = run_cell(exp, &cell, key, files, reference.as_deref(), &exe, out, &data.info, &env)?;
        if rec.status != Status::Ok {
            counts.failed += 1;
            bar.println(format!(
                "ripples experiment: {} {}: {}",
                cell.config(),
                rec.status.name(),
                rec.failure.clone().unwrap_or_default()
            ));
        }
        let line =
            serde_json::to_string(&rec).map_err(|e| ExperimentError::Io(format!("cannot encode a record: {e}")))?;
        writeln!(file, "{line}")
            .and_then(|_| file.sync_data())
            .map_err(|e| ExperimentError::Io(format!("cannot write {}: {}", results.display(), e)))?;
        counts.ran += 1;
        bar.inc((estimate_secs(exp, &cell) * 1000.0) as u64);
    }
    bar.finish_and_clear();
    Ok(counts)
}

/// The distinct configurations among records (cells without their repetition).
pub fn configs(records: &[Record]) -> BTreeSet<String> {
    records.iter().map(|r| r.cell.config()).collect()
}
