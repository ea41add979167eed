//! A cell's child processes: started in one process group under the cell's memory limit, waited
//! for with their rusage, killed together at the timeout or at the first failure.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a cell's child processes ended.
pub(super) struct Ended {
    /// The first failing process's exit code or negated signal number (0 when all succeeded).
    pub(super) status: i32,
    /// Whether the group was killed at the timeout.
    pub(super) timed_out: bool,
    /// Wall-clock seconds from the first start to the last exit.
    pub(super) wall: f64,
    /// User CPU seconds, summed over the processes.
    pub(super) user: f64,
    /// System CPU seconds, summed over the processes.
    pub(super) system: f64,
    /// The sum of the processes' peak resident memory (see [`peak_rss`]).
    pub(super) max_rss_bytes: u64,
}

/// A running child's peak resident memory so far (`VmHWM` of `/proc/PID/status`), in bytes.
///
/// `wait4`'s `ru_maxrss` is no measure of a child's own memory: a child created by fork keeps
/// the high-water mark of the parent's memory it started as, even after `exec` (Linux carries
/// the old address space's peak into the new program), so every child smaller than the runner
/// reported the runner's size. `VmHWM` belongs to the child's own address space; the runner
/// reads it while it waits, and takes `ru_maxrss` only for a child it never saw running.
fn peak_rss(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid)).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

/// Runs every command line of `argvs` (the processes of one cell), each with stdout and stderr
/// to its log, all in one process group (the first one's), under `memory_limit_mb` of address
/// space each. The group is killed at `timeout`, or as soon as one process fails (its peers
/// would wait for it forever).
pub(super) fn spawn_and_wait(
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
    // The peak resident memory seen of each process while it ran.
    let mut seen: std::collections::HashMap<libc::pid_t, u64> = std::collections::HashMap::new();
    while !pending.is_empty() {
        let mut progressed = false;
        let mut i = 0;
        while i < pending.len() {
            let pid = pending[i];
            if let Some(bytes) = peak_rss(pid) {
                let peak = seen.entry(pid).or_insert(0);
                *peak = (*peak).max(bytes);
            }
            let mut status: libc::c_int = 0;
            // SAFETY: rusage is plain data; wait4 is called with a pid this process spawned.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
            if r == pid {
                progressed = true;
                pending.swap_remove(i);
                user += secs(usage.ru_utime);
                system += secs(usage.ru_stime);
                max_rss_bytes += match seen.get(&pid) {
                    Some(&bytes) if bytes > 0 => bytes,
                    _ => usage.ru_maxrss as u64 * 1024,
                };
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
pub(super) fn free_ports(processes: usize) -> Result<Vec<u16>, String> {
    let listeners: Vec<std::net::TcpListener> = (0..processes)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot find a free loopback port: {e}"))?;
    listeners.iter().map(|l| l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small child of a large runner is measured at its own size: `ru_maxrss` alone would
    /// report at least the runner's memory (the high-water mark a forked child starts from).
    #[test]
    fn a_childs_peak_memory_is_its_own() {
        // The runner holds 256 MiB, touched.
        let ballast = vec![1u8; 256 << 20];
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("sleep.log");
        let argv = vec!["sleep".to_string(), "0.3".to_string()];
        let ended = spawn_and_wait(&[argv], &[log], Duration::from_secs(30), None).expect("sleep runs");
        assert_eq!(ended.status, 0);
        assert!(
            ended.max_rss_bytes > 0 && ended.max_rss_bytes < 64 << 20,
            "sleep's peak: {} bytes",
            ended.max_rss_bytes
        );
        assert_eq!(ballast.iter().map(|&b| b as usize).sum::<usize>(), 256 << 20);
    }
}
