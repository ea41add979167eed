//! `ripples experiment run`: every cell in a fresh child process, killed at its timeout, in an
//! order shuffled by the experiment's seed; one [`Record`] appended to `OUT/results.jsonl` per
//! cell, failed or not.
//!
//! A cell's child is `ripples run ALGORITHM --graph G --updates U --batch B -w W --stats S
//! --output O -q` for the `ripples` system, or the command line of a `[commands.NAME]` table with
//! its placeholders filled in ([`PLACEHOLDERS`]). The child runs in its own process group; at the
//! timeout the group is killed. Its peak RSS and CPU time come from `wait4`'s rusage.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::config::{Cell, Experiment, RIPPLES};
use super::data::{self, Prepared, StreamFiles};
use super::env::Environment;
use super::record::{self, Metrics, Record, Status};
use super::ExperimentError;

/// The placeholders of a `[commands.NAME]` command line.
pub const PLACEHOLDERS: &[&str] = &[
    "{ripples}",
    "{algorithm}",
    "{graph}",
    "{updates}",
    "{batch}",
    "{workers}",
    "{output}",
    "{stats}",
    "{source}",
    "{span}",
];

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

/// How a cell's child processes ended.
struct Ended {
    /// The first failing process's exit code or negated signal number (0 when all succeeded).
    status: i32,
    timed_out: bool,
    wall: f64,
    /// User and system CPU seconds, summed over the processes.
    user: f64,
    system: f64,
    /// The sum of the processes' peak resident memory.
    max_rss_bytes: u64,
}

/// Runs every command line of `argvs` (the processes of one cell), each with stdout and stderr
/// to its log, all in one process group (the first one's), under `memory_limit_mb` of address
/// space each. The group is killed at `timeout`, or as soon as one process fails (its peers
/// would wait for it forever).
fn spawn_and_wait(
    argvs: &[Vec<String>],
    logs: &[PathBuf],
    timeout: Duration,
    memory_limit_mb: Option<u64>,
) -> Result<Ended, String> {
    let started = Instant::now();
    let mut pids: Vec<libc::pid_t> = Vec::new();
    let mut group: libc::pid_t = 0;
    let kill_group = |group: libc::pid_t| {
        if group > 0 {
            // SAFETY: kill with the process group of children this process spawned.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
    };
    for (argv, log) in argvs.iter().zip(logs) {
        let log_file = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {}", log.display(), e))?;
        let err_file = log_file.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).stdin(Stdio::null()).stdout(log_file).stderr(err_file).process_group(group);
        if let Some(mb) = memory_limit_mb {
            let bytes = (mb as libc::rlim_t).saturating_mul(1024 * 1024);
            // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
            unsafe {
                cmd.pre_exec(move || {
                    let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
                    if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        match cmd.spawn() {
            Ok(child) => {
                let pid = child.id() as libc::pid_t;
                if group == 0 {
                    group = pid;
                }
                pids.push(pid);
            }
            Err(e) => {
                kill_group(group);
                for &pid in &pids {
                    let mut status = 0;
                    // SAFETY: reaping a child this process spawned.
                    unsafe { libc::waitpid(pid, &mut status, 0) };
                }
                return Err(format!("cannot start {:?}: {}", argv[0], e));
            }
        }
    }
    let mut timed_out = false;
    let mut killed = false;
    let mut first_failure = 0;
    let (mut user, mut system, mut max_rss_bytes) = (0.0, 0.0, 0u64);
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let mut pending = pids.clone();
    while !pending.is_empty() {
        let mut progressed = false;
        let mut i = 0;
        while i < pending.len() {
            let pid = pending[i];
            let mut status: libc::c_int = 0;
            // SAFETY: rusage is plain data; wait4 is called with a pid this process spawned.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
            if r == pid {
                progressed = true;
                pending.swap_remove(i);
                user += secs(usage.ru_utime);
                system += secs(usage.ru_stime);
                max_rss_bytes += usage.ru_maxrss as u64 * 1024;
                let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -libc::WTERMSIG(status) };
                if code != 0 && first_failure == 0 && !killed {
                    first_failure = code;
                }
                if code != 0 && !killed {
                    killed = true;
                    kill_group(group);
                }
                continue;
            }
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    kill_group(group);
                    return Err(format!("wait4: {e}"));
                }
            }
            i += 1;
        }
        if !killed && started.elapsed() >= timeout {
            timed_out = true;
            killed = true;
            kill_group(group);
        }
        if !progressed {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    Ok(Ended { status: first_failure, timed_out, wall: started.elapsed().as_secs_f64(), user, system, max_rss_bytes })
}

/// `processes` free loopback ports, one per process of a cell (bound to port 0 and released;
/// each cell asks again).
fn free_ports(processes: usize) -> Result<Vec<u16>, String> {
    let listeners: Vec<std::net::TcpListener> = (0..processes)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot find a free loopback port: {e}"))?;
    listeners.iter().map(|l| l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())).collect()
}

/// The command line of a cell.
fn command(exp: &Experiment, cell: &Cell, exe: &Path, files: &StreamFiles, output: &Path, stats: &Path) -> Vec<String> {
    let p = |path: &Path| path.display().to_string();
    if cell.system == RIPPLES {
        let mut argv: Vec<String> = vec![p(exe), "run".into(), cell.algorithm.clone()];
        for (flag, value) in [
            ("--graph", p(&files.graph)),
            ("--updates", p(&files.updates)),
            ("--batch", cell.batch.to_string()),
            ("-w", cell.workers.to_string()),
            ("--stats", p(stats)),
            ("--output", p(output)),
        ] {
            argv.push(flag.into());
            argv.push(value);
        }
        argv.push("-q".into());
        match cell.stream.as_str() {
            "event-sliding" => argv.extend(["--window".to_string(), exp.stream.span.to_string()]),
            "event-tumbling" => argv.extend(["--tumbling".to_string(), exp.stream.span.to_string()]),
            _ => {}
        }
        if let Some(s) = exp.source {
            argv.extend(["--source".to_string(), s.to_string()]);
        }
        return argv;
    }
    if cell.system.starts_with(super::systems::PREFIX) {
        let mut argv: Vec<String> = vec![p(exe), "experiment".into(), "system".into()];
        for (flag, value) in [
            ("--system", cell.system.clone()),
            ("--algorithm", cell.algorithm.clone()),
            ("--stream", cell.stream.clone()),
            ("--graph", p(&files.graph)),
            ("--updates", p(&files.updates)),
            ("--batch", cell.batch.to_string()),
            ("-w", cell.workers.to_string()),
            // Stop the updates before the kill, to report the prefix processed.
            ("--time-limit", (exp.timeout_secs * 0.8).to_string()),
            ("--output", p(output)),
            ("--stats", p(stats)),
        ] {
            argv.push(flag.into());
            argv.push(value);
        }
        return argv;
    }
    let values = [
        p(exe),
        cell.algorithm.clone(),
        p(&files.graph),
        p(&files.updates),
        cell.batch.to_string(),
        cell.workers.to_string(),
        p(output),
        p(stats),
        exp.source.map(|s| s.to_string()).unwrap_or_default(),
        exp.stream.span.to_string(),
    ];
    exp.commands[&cell.system]
        .iter()
        .map(|arg| PLACEHOLDERS.iter().zip(&values).fold(arg.clone(), |a, (ph, v)| a.replace(ph, v)))
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn run_cell(
    exp: &Experiment,
    cell: &Cell,
    key: String,
    files: &StreamFiles,
    reference: Option<&str>,
    exe: &Path,
    out: &Path,
    dataset: &data::DatasetInfo,
    env: &Environment,
) -> Result<Record, ExperimentError> {
    let dir = out.join("cells").join(&key);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| ExperimentError::Io(format!("cannot create {}: {}", dir.display(), e)))?;
    let (output, stats, log) = (dir.join("output.txt"), dir.join("stats.jsonl"), dir.join("log.txt"));
    let argv = command(exp, cell, exe, files, &output, &stats);
    // Several processes: the same command line with `-n P -p I --hostfile H` (ports of this
    // cell's own); process 0 writes the output and the stats.
    let mut argvs = vec![argv.clone()];
    let mut logs = vec![log.clone()];
    if cell.processes > 1 {
        let ports = free_ports(cell.processes).map_err(ExperimentError::Io)?;
        let hostfile = dir.join("hosts.txt");
        let hosts: String = ports.iter().map(|p| format!("127.0.0.1:{p}\n")).collect();
        std::fs::write(&hostfile, hosts)
            .map_err(|e| ExperimentError::Io(format!("cannot write {}: {}", hostfile.display(), e)))?;
        argvs.clear();
        logs.clear();
        for i in 0..cell.processes {
            let mut a = argv.clone();
            a.extend(["-n".into(), cell.processes.to_string(), "-p".into(), i.to_string()]);
            a.extend(["--hostfile".into(), hostfile.display().to_string()]);
            argvs.push(a);
            logs.push(if i == 0 { log.clone() } else { dir.join(format!("log.{i}.txt")) });
        }
    }
    let started_unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut rec = Record {
        key,
        experiment: exp.name.clone(),
        cell: cell.clone(),
        status: Status::Ok,
        failure: None,
        command: argvs[0].clone(),
        started_unix,
        wall_seconds: 0.0,
        timeout_secs: exp.timeout_secs,
        agrees: None,
        metrics: None,
        dataset: dataset.clone(),
        env: env.clone(),
        memory_limit_mb: exp.memory_limit_mb,
    };
    let timeout = Duration::from_secs_f64(exp.timeout_secs);
    let mut attempt = 0;
    let ended = loop {
        let ended = match spawn_and_wait(&argvs, &logs, timeout, exp.memory_limit_mb) {
            Ok(e) => e,
            Err(problem) => {
                rec.status = Status::Incomplete;
                rec.failure = Some(problem);
                return Ok(rec);
            }
        };
        // A port picked for the processes was taken by someone else before they bound it: the
        // cell has not run; once more on other ports.
        let taken =
            || logs.iter().any(|l| std::fs::read_to_string(l).is_ok_and(|t| t.contains("Address already in use")));
        if cell.processes > 1 && ended.status != 0 && attempt == 0 && taken() {
            attempt += 1;
            let ports = free_ports(cell.processes).map_err(ExperimentError::Io)?;
            let hosts: String = ports.iter().map(|p| format!("127.0.0.1:{p}\n")).collect();
            let hostfile = dir.join("hosts.txt");
            std::fs::write(&hostfile, hosts)
                .map_err(|e| ExperimentError::Io(format!("cannot write {}: {}", hostfile.display(), e)))?;
            continue;
        }
        break ended;
    };
    rec.wall_seconds = ended.wall;
    let log_text: String = logs.iter().map(|l| std::fs::read_to_string(l).unwrap_or_default()).collect();
    let last_line = || log_text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
    // Out of memory: Rust's allocation failure message, or (under a limit) an mmap or thread
    // start refused for want of memory.
    let out_of_memory = log_text.contains("memory allocation of")
        || (exp.memory_limit_mb.is_some()
            && ended.status != 0
            && (log_text.contains("Cannot allocate memory") || log_text.contains("os error 12")));
    let (status, failure) = if ended.timed_out {
        (Status::Timeout, Some(format!("killed at the timeout of {}s", exp.timeout_secs)))
    } else if out_of_memory {
        let limit = exp.memory_limit_mb.map(|m| format!(" (limit {m} MiB)")).unwrap_or_default();
        let line = log_text.lines().find(|l| l.contains("memory allocation of") || l.contains("os error 12"));
        (Status::Oom, Some(format!("{}{}", line.map(str::to_string).unwrap_or_else(last_line), limit)))
    } else if ended.status == -libc::SIGKILL {
        (Status::Oom, Some("killed by SIGKILL (not by the experiment: the kernel's OOM killer?)".into()))
    } else if ended.status < 0 {
        (Status::Crashed, Some(format!("killed by signal {}", -ended.status)))
    } else if ended.status != 0 {
        (Status::Crashed, Some(format!("exit status {}: {} (log: {})", ended.status, last_line(), log.display())))
    } else {
        (Status::Ok, None)
    };
    rec.status = status;
    rec.failure = failure;
    let stats_text = std::fs::read_to_string(&stats).ok();
    let bench_metrics = || stats_text.as_deref().and_then(|t| serde_json::from_str::<Metrics>(t.trim()).ok());
    let mut metrics = stats_text
        .as_deref()
        .and_then(|t| record::from_stats(t, exp.warmup_epochs, windows(exp, cell)))
        .or_else(|| cell.system.starts_with(super::systems::PREFIX).then(bench_metrics).flatten())
        .unwrap_or_else(|| Metrics {
            // Without a stats file: the whole stream over the wall time.
            updates: files.updates_count,
            updates_per_sec: files.updates_count as f64 / ended.wall.max(1e-9),
            warmup_epochs: 0,
            ..Metrics::default()
        });
    metrics.peak_rss_bytes = ended.max_rss_bytes.max(metrics.peak_rss_bytes);
    metrics.cpu_user_seconds = ended.user;
    metrics.cpu_system_seconds = ended.system;
    if rec.status == Status::Ok {
        match std::fs::read_to_string(&output) {
            Err(_) => {
                rec.status = Status::Incomplete;
                rec.failure = Some(format!("wrote no result to {}", output.display()));
            }
            Ok(got) => {
                if let Some(want) = reference {
                    let agrees = crate::bench::run::states_agree(want, &data::sorted_result(&got));
                    rec.agrees = Some(agrees);
                    if !agrees {
                        rec.status = Status::WrongResult;
                        rec.failure = Some(format!("{} differs from the sequential reference", output.display()));
                    }
                }
            }
        }
    }
    rec.metrics = Some(metrics);
    let _ = std::fs::remove_file(&output);
    Ok(rec)
}

/// The event-time windows of a cell's stream, if it has any.
fn windows(exp: &Experiment, cell: &Cell) -> Option<record::Windows> {
    match cell.stream.as_str() {
        "event-sliding" => Some(record::Windows { tumbling: false, span: exp.stream.span }),
        "event-tumbling" => Some(record::Windows { tumbling: true, span: exp.stream.span }),
        _ => None,
    }
}

/// The distinct configurations among records (cells without their repetition).
pub fn configs(records: &[Record]) -> BTreeSet<String> {
    records.iter().map(|r| r.cell.config()).collect()
}
