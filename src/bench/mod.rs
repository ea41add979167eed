//! **Measurement**: `ripples bench`, systems side by side on the same generated stream.
//!
//! A scenario fixes a stream (generated deterministically from the seed). Each system runs it in
//! its own child process (`ripples bench-system ...`, started by the parent), so that its memory
//! is its own: the child generates the stream, resets the peak-RSS counter, records the resident
//! memory as its baseline, runs, and reports one JSON line. `bytes_per_edge` is
//! `(peak RSS - baseline) / edges live at the end`. Every system writes its final result to a
//! file and the parent checks that all complete (non-partial) systems agree.
//!
//! Systems:
//! * `ripples` — what `ripples run` does by default (the insert-only fast path where it applies);
//! * `ripples-general` — the fully dynamic differential path, forced;
//! * `ripples-window` (`wcc-window` only) — the same window written as an event-time window
//!   (`--window`, edge `i` at event time `i`): expiries are retractions differential is told of
//!   in advance, and WCC takes its windowed fast path. Epoch 1 fills the window (like epoch 0 of
//!   the others) and is not counted; each later epoch counts its insertions and as many expiries;
//! * `dd-propagate` — plain differential dataflow as its documentation writes WCC:
//!   `algorithms::graphs::propagate::propagate` over the symmetrised edges, under the same driver;
//! * `uf-hash` — one sequential pass of union-find with a hash map from `u64` ids (insert-only);
//! * `uf-dense` — the same over dense array ids, remapped beforehand (the remap is not timed);
//! * `recompute` — a from-scratch computation over the live graph every epoch (union-find over
//!   dense ids for WCC; the sequential oracle for the other algorithms).

pub mod plot;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::dataflow::union_find::{DenseUnionFind, HashUnionFind};
use crate::dataflow::{self, custom, Algorithm, Params};
use crate::driver::{self, metrics, LatencySummary, MemoryStream, RunOptions};
use crate::sources::{generate, stream};
use crate::types::{Node, Update};

/// A benchmark scenario and its parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Scenario {
    pub name: String,
    pub scale: u32,
    pub edge_factor: u64,
    /// Updates (for `wcc-window`: edges inserted, and as many expired) per epoch.
    pub batch: usize,
    /// Sliding-window size in edges (`wcc-window`).
    pub window: usize,
    /// Number of update epochs (`wcc-window` and churn scenarios; `wcc-insert` uses the whole graph).
    pub epochs: usize,
    pub seed: u64,
    pub workers: usize,
    pub time_limit_secs: f64,
}

/// The scenarios `ripples bench` knows.
pub const SCENARIOS: &[&str] =
    &["wcc-insert", "wcc-window", "bfs-churn", "sssp-churn", "pagerank-churn", "cdlp-churn", "lcc-churn", "scc-churn"];

impl Scenario {
    /// The defaults of a scenario.
    pub fn new(name: &str) -> anyhow::Result<Scenario> {
        let base = Scenario {
            name: name.to_string(),
            scale: 20,
            edge_factor: 16,
            batch: 100_000,
            window: 1_000_000,
            epochs: 0,
            seed: 1,
            workers: 2,
            time_limit_secs: 120.0,
        };
        Ok(match name {
            "wcc-insert" => base,
            "wcc-window" => Scenario { batch: 1_000, epochs: 500, ..base },
            n if n.ends_with("-churn") && SCENARIOS.contains(&n) => {
                Scenario { scale: 14, batch: 100, epochs: 50, ..base }
            }
            other => bail!("unknown scenario '{}' (known: {})", other, SCENARIOS.join(", ")),
        })
    }

    /// The algorithm of a churn scenario (`bfs-churn` -> `bfs`); `wcc` otherwise.
    pub fn algorithm(&self) -> &str {
        self.name.strip_suffix("-churn").unwrap_or("wcc")
    }

    /// The systems measured by default.
    pub fn default_systems(&self) -> Vec<&'static str> {
        match self.name.as_str() {
            "wcc-insert" => vec!["ripples", "ripples-general", "dd-propagate", "uf-hash", "uf-dense"],
            "wcc-window" => vec!["ripples", "ripples-window", "ripples-general", "dd-propagate", "recompute"],
            _ => vec!["ripples", "recompute"],
        }
    }

    /// The stream: initial graph, updates, updates per epoch, edges live at the end.
    pub fn stream(&self) -> (Vec<(Node, Node)>, Vec<Update>, usize, u64) {
        let edges = generate::rmat(self.scale, self.edge_factor, self.seed);
        match self.name.as_str() {
            "wcc-insert" => {
                let n = edges.len() as u64;
                (Vec::new(), stream::insert_only(&edges), self.batch, n)
            }
            "wcc-window" => {
                let window = self.window.min(edges.len());
                let end = (window + self.batch * self.epochs).min(edges.len());
                let updates = stream::sliding_window(&edges[..end], window).split_off(window);
                (edges[..window].to_vec(), updates, 2 * self.batch, window as u64)
            }
            _ => {
                let updates = stream::churn(&edges, self.batch * self.epochs, 0.5, self.seed + 1);
                let inserted = updates.iter().filter(|u| u.diff > 0).count() as u64;
                let deleted = updates.len() as u64 - inserted;
                (edges.clone(), updates, self.batch, edges.len() as u64 + inserted - deleted)
            }
        }
    }

    /// A source vertex for BFS/SSSP: the vertex of largest out-degree in the initial graph.
    pub fn source(initial: &[(Node, Node)]) -> Node {
        let mut degree: HashMap<Node, u64> = HashMap::new();
        for &(s, _) in initial {
            *degree.entry(s).or_insert(0) += 1;
        }
        degree.into_iter().max_by_key(|&(v, d)| (d, std::cmp::Reverse(v))).map(|(v, _)| v).unwrap_or(0)
    }
}

/// One system's figures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SystemResult {
    pub system: String,
    pub scenario: String,
    pub workers: usize,
    pub epochs: u64,
    pub updates: u64,
    pub updates_per_sec: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub peak_rss_bytes: u64,
    pub baseline_rss_bytes: u64,
    pub bytes_per_edge: f64,
    pub live_edges: u64,
    pub wall_seconds: f64,
    /// Stopped at the time limit: figures cover the prefix processed.
    pub partial: bool,
    /// Final result agrees with the reference system (set by the parent).
    pub agrees: Option<bool>,
}

/// Resets the kernel's peak-RSS counter of this process (Linux `clear_refs`).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn write_state(path: &Path, state: &[(Node, String)]) -> anyhow::Result<()> {
    let mut text = String::with_capacity(state.len() * 16);
    for (k, v) in state {
        text.push_str(&format!("{} {}\n", k, v));
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Runs one system in this process and returns its figures (the child side of `ripples bench`).
pub fn run_system(
    scenario: &Scenario,
    system: &str,
    state_out: Option<&Path>,
    progress: bool,
) -> anyhow::Result<SystemResult> {
    let (initial, updates, batch, live_edges) = scenario.stream();
    reset_peak_rss();
    let baseline = metrics::memory().0;
    let started = Instant::now();
    let limit = Duration::from_secs_f64(scenario.time_limit_secs);
    let mut result = SystemResult {
        system: system.to_string(),
        scenario: scenario.name.clone(),
        workers: scenario.workers,
        live_edges,
        baseline_rss_bytes: baseline,
        ..SystemResult::default()
    };
    let algorithm_name = scenario.algorithm().to_string();
    let value_format;
    let state: Vec<(Node, u64)>;
    match system {
        "ripples" | "ripples-general" | "dd-propagate" => {
            let params = Params { source: Some(Scenario::source(&initial)), ..Params::default() };
            let algorithm: Box<dyn Algorithm> = match (system, algorithm_name.as_str()) {
                ("ripples-general", "wcc") => Box::new(dataflow::wcc::WccGeneral),
                ("dd-propagate", "wcc") => Box::new(custom("dd-propagate", |input| {
                    let nodes = input.vertex_set().map(|n| (n, n));
                    let edges = input.edges.map(|(s, d, _)| (s, d));
                    let symmetric = edges.clone().concat(edges.map(|(s, d)| (d, s)));
                    differential_dataflow::algorithms::graphs::propagate::propagate(symmetric, nodes)
                })),
                ("ripples", name) => dataflow::by_name(name, &params)?,
                (s, name) => bail!("system {} does not apply to {}", s, name),
            };
            value_format = algorithm.value_format();
            let options = RunOptions {
                layout: driver::Layout::threads(scenario.workers),
                source: driver::Source::Memory(std::sync::Arc::new(MemoryStream {
                    vertices: vec![],
                    initial: initial.iter().map(|&(s, d)| (s, d, None)).collect(),
                    updates,
                    batch,
                })),
                progress,
                keep_state: true,
                trusted_input: true,
                time_limit: Some(limit),
                ..RunOptions::default()
            };
            let report = driver::run(options, algorithm).map_err(|e| anyhow::anyhow!("{}", e))?.context("no report")?;
            let s = &report.summary;
            result.epochs = s.epochs;
            result.updates = s.updates;
            result.updates_per_sec = s.updates_per_sec;
            result.p50_ms = s.latency.p50_ms;
            result.p95_ms = s.latency.p95_ms;
            result.p99_ms = s.latency.p99_ms;
            result.max_ms = s.latency.max_ms;
            result.partial = s.partial;
            state = report.final_state.unwrap_or_default();
        }
        "uf-hash" | "uf-dense" => {
            if updates.iter().any(|u| u.diff < 0) || algorithm_name != "wcc" {
                bail!("{} handles insert-only WCC streams only", system);
            }
            value_format = dataflow::ValueFormat::Integer;
            if system == "uf-hash" {
                let mut uf = HashUnionFind::new();
                for &(s, d) in &initial {
                    uf.union(s, d);
                }
                let run = timed_epochs(&updates, batch, limit, |chunk| {
                    for u in chunk {
                        uf.union(u.src, u.dst);
                    }
                });
                run.fill(&mut result);
                state = uf.labels();
            } else {
                // Remap ids to dense indices beforehand (not timed).
                let mut index: HashMap<Node, u32> = HashMap::new();
                let mut ids = Vec::new();
                let mut dense = |v: Node| {
                    *index.entry(v).or_insert_with(|| {
                        ids.push(v);
                        ids.len() as u32 - 1
                    })
                };
                let init: Vec<(u32, u32)> = initial.iter().map(|&(s, d)| (dense(s), dense(d))).collect();
                let ups: Vec<(u32, u32)> = updates.iter().map(|u| (dense(u.src), dense(u.dst))).collect();
                let mut uf = DenseUnionFind::with_len(ids.len());
                for &(s, d) in &init {
                    uf.union(s, d);
                }
                let run = timed_epochs(&ups, batch, limit, |chunk| {
                    for &(s, d) in chunk {
                        uf.union(s, d);
                    }
                });
                run.fill(&mut result);
                let mut min = vec![Node::MAX; ids.len()];
                for i in 0..ids.len() as u32 {
                    let r = uf.find(i) as usize;
                    min[r] = min[r].min(ids[i as usize]);
                }
                state = (0..ids.len() as u32).map(|i| (ids[i as usize], min[uf.find(i) as usize])).collect();
            }
        }
        "ripples-window" => {
            if scenario.name != "wcc-window" {
                bail!("ripples-window applies to wcc-window only");
            }
            // The same edges, edge i at event time i: the first `window` fill the window.
            let edges: Vec<(Node, Node)> =
                initial.iter().copied().chain(updates.iter().filter(|u| u.diff > 0).map(|u| (u.src, u.dst))).collect();
            let timed: Vec<(Update, u64)> =
                edges.iter().enumerate().map(|(i, &(s, d))| (Update::insert(s, d), i as u64)).collect();
            let file = std::env::temp_dir().join(format!("ripples-bench-window-{}.txt", std::process::id()));
            crate::sources::parse::write_timed_updates(&file, &timed)
                .with_context(|| format!("cannot write {}", file.display()))?;
            let window = initial.len() as u64;
            let options = RunOptions {
                layout: driver::Layout::threads(scenario.workers),
                source: driver::Source::Files(driver::FileSource {
                    updates: Some(file.clone()),
                    batch: Some(batch / 2),
                    first_batch: Some(initial.len()),
                    ..driver::FileSource::default()
                }),
                progress,
                keep_state: true,
                time_limit: Some(limit),
                window: Some(crate::sources::window::WindowSpec::new(crate::sources::window::WindowKind::Sliding, window)),
                ..RunOptions::default()
            };
            let report = driver::run(options, dataflow::wcc::Wcc);
            let _ = std::fs::remove_file(&file);
            let report = report.map_err(|e| anyhow::anyhow!("{}", e))?.context("no report")?;
            // Epochs 2..: each inserts `batch / 2` edges and expires as many.
            let steady: Vec<&metrics::EpochStats> = report.epochs.iter().filter(|e| e.epoch >= 2).collect();
            let seconds: f64 = steady.iter().map(|e| e.latency_ms / 1000.0).sum();
            let latencies: Vec<f64> = steady.iter().map(|e| e.latency_ms).collect();
            let summary = LatencySummary::of(&latencies);
            // The fill epoch counts like the others' epoch 0 (the initial window).
            result.epochs = steady.len() as u64 + 1;
            result.updates = steady.iter().map(|e| 2 * e.updates).sum();
            result.updates_per_sec = if seconds > 0.0 { result.updates as f64 / seconds } else { 0.0 };
            result.p50_ms = summary.p50_ms;
            result.p95_ms = summary.p95_ms;
            result.p99_ms = summary.p99_ms;
            result.max_ms = summary.max_ms;
            result.partial = report.summary.partial;
            value_format = dataflow::ValueFormat::Integer;
            state = report.final_state.unwrap_or_default();
        }
        "recompute" => {
            let (s, fmt) = recompute(scenario, &initial, &updates, batch, limit, &mut result)?;
            state = s;
            value_format = fmt;
        }
        other => bail!(
            "unknown system '{}' (known: ripples, ripples-window, ripples-general, dd-propagate, uf-hash, uf-dense, recompute)",
            other
        ),
    }
    result.wall_seconds = started.elapsed().as_secs_f64();
    let (_, peak) = metrics::memory();
    result.peak_rss_bytes = peak;
    result.bytes_per_edge = peak.saturating_sub(baseline) as f64 / live_edges.max(1) as f64;
    if let Some(path) = state_out {
        let mut formatted: Vec<(Node, String)> = state
            .into_iter()
            .map(|(k, v)| {
                let mut s = String::new();
                value_format.write(v, &mut s);
                (k, s)
            })
            .collect();
        formatted.sort();
        write_state(path, &formatted)?;
    }
    Ok(result)
}

/// Per-epoch timings of a sequential system.
struct TimedRun {
    latencies_ms: Vec<f64>,
    processed: u64,
    busy_secs: f64,
    partial: bool,
}

impl TimedRun {
    fn fill(&self, result: &mut SystemResult) {
        let l = LatencySummary::of(&self.latencies_ms);
        result.epochs = self.latencies_ms.len() as u64 + 1;
        result.updates = self.processed;
        result.updates_per_sec = if self.busy_secs > 0.0 { self.processed as f64 / self.busy_secs } else { 0.0 };
        result.p50_ms = l.p50_ms;
        result.p95_ms = l.p95_ms;
        result.p99_ms = l.p99_ms;
        result.max_ms = l.max_ms;
        result.partial = self.partial;
    }
}

/// Runs `epoch` on consecutive chunks of `batch` items, timing each, until the items run out or
/// the time spent reaches `limit` (then the run is partial).
fn timed_epochs<T>(items: &[T], batch: usize, limit: Duration, mut epoch: impl FnMut(&[T])) -> TimedRun {
    let mut run = TimedRun { latencies_ms: Vec::new(), processed: 0, busy_secs: 0.0, partial: false };
    for chunk in items.chunks(batch) {
        let t = Instant::now();
        epoch(chunk);
        let dt = t.elapsed().as_secs_f64();
        run.busy_secs += dt;
        run.latencies_ms.push(dt * 1000.0);
        run.processed += chunk.len() as u64;
        if run.busy_secs >= limit.as_secs_f64() {
            run.partial = run.processed < items.len() as u64;
            break;
        }
    }
    run
}

/// From-scratch recomputation over the live graph at every epoch.
fn recompute(
    scenario: &Scenario,
    initial: &[(Node, Node)],
    updates: &[Update],
    batch: usize,
    limit: Duration,
    result: &mut SystemResult,
) -> anyhow::Result<(Vec<(Node, u64)>, dataflow::ValueFormat)> {
    use std::collections::BTreeSet;
    let algorithm = scenario.algorithm();
    // Live multiset of edges over dense ids (remapping is not timed).
    let mut index: HashMap<Node, u32> = HashMap::new();
    let mut ids: Vec<Node> = Vec::new();
    let mut dense = |v: Node, ids: &mut Vec<Node>| {
        *index.entry(v).or_insert_with(|| {
            ids.push(v);
            ids.len() as u32 - 1
        })
    };
    let init: Vec<(u32, u32)> = initial.iter().map(|&(s, d)| (dense(s, &mut ids), dense(d, &mut ids))).collect();
    let ups: Vec<((u32, u32), i8)> =
        updates.iter().map(|u| ((dense(u.src, &mut ids), dense(u.dst, &mut ids)), u.diff)).collect();
    let mut live: HashMap<(u32, u32), u64> = HashMap::new();
    for &e in &init {
        *live.entry(e).or_insert(0) += 1;
    }
    let source = Scenario::source(initial);
    if !["wcc", "bfs", "sssp", "pagerank", "cdlp", "lcc", "scc"].contains(&algorithm) {
        bail!("no recompute baseline for {}", algorithm);
    }
    let mut last: Vec<(Node, u64)> = Vec::new();
    let format = match algorithm {
        "pagerank" | "lcc" | "sssp" => dataflow::ValueFormat::Float,
        _ => dataflow::ValueFormat::Integer,
    };
    let run = timed_epochs(&ups, batch, limit, |chunk| {
        for &(e, d) in chunk {
            let c = live.entry(e).or_insert(0);
            if d > 0 {
                *c += 1;
            } else {
                *c -= 1;
                if *c == 0 {
                    live.remove(&e);
                }
            }
        }
        last = if algorithm == "wcc" {
            let mut uf = DenseUnionFind::with_len(ids.len());
            let mut present = vec![false; ids.len()];
            for &(s, d) in live.keys() {
                uf.union(s, d);
                present[s as usize] = true;
                present[d as usize] = true;
            }
            let mut min = vec![Node::MAX; ids.len()];
            for i in 0..ids.len() as u32 {
                if present[i as usize] {
                    let r = uf.find(i) as usize;
                    min[r] = min[r].min(ids[i as usize]);
                }
            }
            (0..ids.len() as u32)
                .filter(|&i| present[i as usize])
                .map(|i| (ids[i as usize], min[uf.find(i) as usize]))
                .collect()
        } else {
            let edges: Vec<(Node, Node, f64)> =
                live.keys().map(|&(s, d)| (ids[s as usize], ids[d as usize], 1.0)).collect();
            let vertices: BTreeSet<Node> = crate::oracle::vertex_set([], &edges);
            match algorithm {
                "bfs" => crate::oracle::bfs(&vertices, &edges, source).into_iter().collect(),
                "sssp" => {
                    crate::oracle::sssp(&vertices, &edges, source).into_iter().map(|(k, v)| (k, v.to_bits())).collect()
                }
                "pagerank" => crate::oracle::pagerank(&vertices, &edges, 0.85, 10)
                    .into_iter()
                    .map(|(k, v)| (k, v.to_bits()))
                    .collect(),
                "cdlp" => crate::oracle::cdlp(&vertices, &edges, 10).into_iter().collect(),
                "lcc" => crate::oracle::lcc(&vertices, &edges).into_iter().map(|(k, v)| (k, v.to_bits())).collect(),
                _ => crate::oracle::scc(&vertices, &edges).into_iter().collect(),
            }
        };
    });
    run.fill(result);
    Ok((last, format))
}

/// Options of `ripples bench`.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub scenario: Scenario,
    pub systems: Vec<String>,
    pub json: Option<PathBuf>,
    pub plot: Option<PathBuf>,
}

/// Runs every system in a child process and compares them. Returns the results and whether all
/// complete systems agree.
pub fn run_bench(options: &BenchOptions) -> anyhow::Result<(Vec<SystemResult>, bool)> {
    let exe = std::env::current_exe().context("cannot find the ripples executable")?;
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
        let spec = serde_json::to_string(s)?;
        let out = Command::new(&exe)
            .args(["bench-system", "--spec", &spec, "--system", system, "--state-out"])
            .arg(&state)
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("cannot start {}", exe.display()))?;
        if !out.status.success() {
            bail!("system {} failed (exit status {})", system, out.status);
        }
        let line = String::from_utf8_lossy(&out.stdout);
        let result: SystemResult =
            serde_json::from_str(line.trim()).with_context(|| format!("system {} reported {:?}", system, line))?;
        eprintln!(
            "ripples bench:   {:.0} updates/s, p99 {:.2} ms{}",
            result.updates_per_sec,
            result.p99_ms,
            if result.partial { " (partial: time limit reached)" } else { "" }
        );
        results.push((result, state));
    }
    // Compare the final results of all complete systems with the first complete one.
    let mut all_agree = true;
    let reference = results.iter().find(|(r, _)| !r.partial).map(|(_, p)| p.clone());
    if let Some(reference) = reference {
        let want = std::fs::read_to_string(&reference)?;
        for (r, path) in results.iter_mut() {
            if r.partial {
                continue;
            }
            let got = std::fs::read_to_string(&*path)?;
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
fn states_agree(a: &str, b: &str) -> bool {
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

fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("ripples-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// The result table.
pub fn table(results: &[SystemResult]) -> String {
    let mut out = format!(
        "{:<16} {:>14} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}  {}\n",
        "system", "updates/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "peak MiB", "B/edge", "wall s", "notes"
    );
    for r in results {
        let mut notes = Vec::new();
        if r.partial {
            notes.push(format!("partial: {} updates in the time limit", r.updates));
        }
        match r.agrees {
            Some(true) => notes.push("result agrees".to_string()),
            Some(false) => notes.push("RESULT DIFFERS".to_string()),
            None => {}
        }
        out.push_str(&format!(
            "{:<16} {:>14.0} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.1} {:>10.1} {:>8.1}  {}\n",
            r.system,
            r.updates_per_sec,
            r.p50_ms,
            r.p95_ms,
            r.p99_ms,
            r.max_ms,
            r.peak_rss_bytes as f64 / (1024.0 * 1024.0),
            r.bytes_per_edge,
            r.wall_seconds,
            notes.join("; ")
        ));
    }
    let get = |name: &str| results.iter().find(|r| r.system == name);
    if let Some(r) = get("ripples") {
        for base in ["uf-hash", "uf-dense", "dd-propagate", "ripples-general"] {
            if let Some(b) = get(base) {
                if b.updates_per_sec > 0.0 {
                    out.push_str(&format!(
                        "ripples / {}: {:.2}x updates/s{}\n",
                        base,
                        r.updates_per_sec / b.updates_per_sec,
                        if b.partial { " (baseline partial)" } else { "" }
                    ));
                }
            }
        }
        if let Some(b) = get("recompute") {
            if r.p50_ms > 0.0 {
                out.push_str(&format!("recompute p50 / ripples p50: {:.1}x\n", b.p50_ms / r.p50_ms));
            }
        }
    }
    out
}
