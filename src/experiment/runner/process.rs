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
    /// The sum of the processes' peak resident memory.
    pub(super) max_rss_bytes: u64,
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
pub(super) fn free_ports(processes: usize) -> Result<Vec<u16>, String> {
    let listeners: Vec<std::net::TcpListener> = (0..processes)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot find a free loopback port: {e}"))?;
    listeners.iter().map(|l| l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())).collect()
}
