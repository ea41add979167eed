//! One cell: its command line, its processes run (and run again when a port was taken), how
//! they ended, its figures and whether its result agrees with the reference, as a [`Record`].

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::process::{free_ports, spawn_and_wait, Ended};
use crate::experiment::config::{Cell, Experiment};
use crate::experiment::data::{self, DatasetInfo, StreamFiles};
use crate::experiment::env::Environment;
use crate::experiment::record::{self, Metrics, Record, Status};
use crate::experiment::systems::System;
use crate::experiment::ExperimentError;

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

/// The command line of a cell.
fn command(exp: &Experiment, cell: &Cell, exe: &Path, files: &StreamFiles, output: &Path, stats: &Path) -> Vec<String> {
    let p = |path: &Path| path.display().to_string();
    let flags = |argv: &mut Vec<String>, pairs: &[(&str, String)]| {
        for (flag, value) in pairs {
            argv.push(flag.to_string());
            argv.push(value.clone());
        }
    };
    match &cell.system {
        System::Ripples | System::RipplesShares => {
            let mut argv: Vec<String> = vec![p(exe), "run".into(), cell.algorithm.clone()];
            flags(
                &mut argv,
                &[
                    ("--graph", p(&files.graph)),
                    ("--updates", p(&files.updates)),
                    ("--batch", cell.batch.to_string()),
                    ("-w", cell.workers.to_string()),
                    ("--stats", p(stats)),
                    ("--output", p(output)),
                ],
            );
            // The figures are the algorithm's: without the graph's census (on insert-only
            // streams it would cost more than WCC itself).
            argv.extend(["-q".to_string(), "--no-census".to_string()]);
            if cell.system == System::RipplesShares {
                argv.extend(["--wcc-layout".to_string(), "shares".to_string()]);
            }
            if exp.profile {
                // Beside the stats: cells/KEY/profile.json (and .svg).
                argv.extend(["--profile".to_string(), p(&stats.with_file_name("profile.json"))]);
            }
            match cell.stream.as_str() {
                "event-sliding" => argv.extend(["--window".to_string(), exp.stream.span.to_string()]),
                "event-tumbling" => argv.extend(["--tumbling".to_string(), exp.stream.span.to_string()]),
                _ => {}
            }
            if let Some(s) = exp.source {
                argv.extend(["--source".to_string(), s.to_string()]);
            }
            argv
        }
        System::Bench(_) => {
            let mut argv: Vec<String> = vec![p(exe), "experiment".into(), "system".into()];
            flags(
                &mut argv,
                &[
                    ("--system", cell.system.to_string()),
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
                ],
            );
            argv
        }
        System::Command(name) => {
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
            exp.commands[name]
                .iter()
                .map(|arg| PLACEHOLDERS.iter().zip(&values).fold(arg.clone(), |a, (ph, v)| a.replace(ph, v)))
                .collect()
        }
    }
}

/// Runs one cell (see the module docs) in `OUT/cells/KEY/`, and records how it went.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_cell(
    exp: &Experiment,
    cell: &Cell,
    key: String,
    files: &StreamFiles,
    reference: Option<&str>,
    exe: &Path,
    out: &Path,
    dataset: &DatasetInfo,
    env: &Environment,
) -> Result<Record, ExperimentError> {
    let dir = out.join("cells").join(&key);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| ExperimentError::Io(format!("cannot create {}: {}", dir.display(), e)))?;
    let (output, stats, log) = (dir.join("output.txt"), dir.join("stats.jsonl"), dir.join("log.txt"));
    let argv = command(exp, cell, exe, files, &output, &stats);
    let (argvs, logs) = processes(cell, argv, &dir, &log)?;
    let mut rec = Record {
        key,
        experiment: exp.name.clone(),
        cell: cell.clone(),
        status: Status::Ok,
        failure: None,
        command: argvs[0].clone(),
        started_unix: SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        wall_seconds: 0.0,
        timeout_secs: exp.timeout_secs,
        agrees: None,
        metrics: None,
        dataset: dataset.clone(),
        env: env.clone(),
        memory_limit_mb: exp.memory_limit_mb,
    };
    let ended = match run_processes(exp, cell, &argvs, &logs, &dir)? {
        Ok(ended) => ended,
        Err(problem) => {
            rec.status = Status::Incomplete;
            rec.failure = Some(problem);
            return Ok(rec);
        }
    };
    rec.wall_seconds = ended.wall;
    let log_text: String = logs.iter().map(|l| std::fs::read_to_string(l).unwrap_or_default()).collect();
    (rec.status, rec.failure) = outcome(exp, &ended, &log_text, &log);
    let metrics = metrics(exp, cell, files, &stats, &ended);
    if rec.status == Status::Ok {
        check_result(&mut rec, &output, reference);
    }
    rec.metrics = Some(metrics);
    let _ = std::fs::remove_file(&output);
    Ok(rec)
}

/// The command lines and logs of a cell's processes. Several processes: the same command line
/// with `-n P -p I --hostfile H` (ports of this cell's own, [`write_hosts`]); process 0 writes the
/// output and the stats, and logs to `log`.
fn processes(
    cell: &Cell,
    argv: Vec<String>,
    dir: &Path,
    log: &Path,
) -> Result<(Vec<Vec<String>>, Vec<PathBuf>), ExperimentError> {
    if cell.processes <= 1 {
        return Ok((vec![argv], vec![log.to_path_buf()]));
    }
    let hostfile = write_hosts(dir, cell.processes)?;
    let mut argvs = Vec::new();
    let mut logs = Vec::new();
    for i in 0..cell.processes {
        let mut a = argv.clone();
        a.extend(["-n".into(), cell.processes.to_string(), "-p".into(), i.to_string()]);
        a.extend(["--hostfile".into(), hostfile.display().to_string()]);
        argvs.push(a);
        logs.push(if i == 0 { log.to_path_buf() } else { dir.join(format!("log.{i}.txt")) });
    }
    Ok((argvs, logs))
}

/// Writes `DIR/hosts.txt`: a free loopback port for each of `processes` processes.
fn write_hosts(dir: &Path, processes: usize) -> Result<PathBuf, ExperimentError> {
    let ports = free_ports(processes).map_err(ExperimentError::Io)?;
    let hostfile = dir.join("hosts.txt");
    let hosts: String = ports.iter().map(|p| format!("127.0.0.1:{p}\n")).collect();
    std::fs::write(&hostfile, hosts)
        .map_err(|e| ExperimentError::Io(format!("cannot write {}: {}", hostfile.display(), e)))?;
    Ok(hostfile)
}

/// Runs the cell's processes to their end (`Err(problem)` inside when they could not be
/// started). A port picked for the processes that someone else took before they bound it means
/// the cell has not run: it runs once more, on other ports.
fn run_processes(
    exp: &Experiment,
    cell: &Cell,
    argvs: &[Vec<String>],
    logs: &[PathBuf],
    dir: &Path,
) -> Result<Result<Ended, String>, ExperimentError> {
    let timeout = Duration::from_secs_f64(exp.timeout_secs);
    let mut attempt = 0;
    loop {
        let ended = match spawn_and_wait(argvs, logs, timeout, exp.memory_limit_mb) {
            Ok(e) => e,
            Err(problem) => return Ok(Err(problem)),
        };
        let taken =
            || logs.iter().any(|l| std::fs::read_to_string(l).is_ok_and(|t| t.contains("Address already in use")));
        if cell.processes > 1 && ended.status != 0 && attempt == 0 && taken() {
            attempt += 1;
            write_hosts(dir, cell.processes)?;
            continue;
        }
        return Ok(Ok(ended));
    }
}

/// How the cell's processes ended, from their exit and their logs (`log` is process 0's): the
/// status and what went wrong.
fn outcome(exp: &Experiment, ended: &Ended, log_text: &str, log: &Path) -> (Status, Option<String>) {
    let last_line = || log_text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
    // Out of memory: Rust's allocation failure message, or (under a limit) an mmap or thread
    // start refused for want of memory.
    let out_of_memory = log_text.contains("memory allocation of")
        || (exp.memory_limit_mb.is_some()
            && ended.status != 0
            && (log_text.contains("Cannot allocate memory") || log_text.contains("os error 12")));
    if ended.timed_out {
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
    }
}

/// The cell's figures: from its stats file (a `ripples run` stats file, or a bench system's one
/// [`Metrics`] line), else the whole stream over the wall time; CPU time and peak RSS from the
/// processes' rusage.
fn metrics(exp: &Experiment, cell: &Cell, files: &StreamFiles, stats: &Path, ended: &Ended) -> Metrics {
    let stats_text = std::fs::read_to_string(stats).ok();
    let bench_metrics = || stats_text.as_deref().and_then(|t| serde_json::from_str::<Metrics>(t.trim()).ok());
    let mut metrics = stats_text
        .as_deref()
        .and_then(|t| record::from_stats(t, exp.warmup_epochs, windows(exp, cell)))
        .or_else(|| matches!(cell.system, System::Bench(_)).then(bench_metrics).flatten())
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
    metrics
}

/// A cell that ended well: `incomplete` without a result file, `wrong-result` when the result
/// differs from the reference.
fn check_result(rec: &mut Record, output: &Path, reference: Option<&str>) {
    match std::fs::read_to_string(output) {
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

/// The event-time windows of a cell's stream, if it has any.
fn windows(exp: &Experiment, cell: &Cell) -> Option<record::Windows> {
    match cell.stream.as_str() {
        "event-sliding" => Some(record::Windows { tumbling: false, span: exp.stream.span }),
        "event-tumbling" => Some(record::Windows { tumbling: true, span: exp.stream.span }),
        _ => None,
    }
}
