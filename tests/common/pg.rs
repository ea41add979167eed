//! Helpers for the `--serve` tests: the real PostgreSQL clients (psql, psycopg), a served run and
//! its wait points, and the random streams the served answers are checked on.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ripples::types::{Node, Update};

use super::process::{bin, free_port, s, Files, PATIENCE};
use super::session::two_process_hostfile;

/// The password every served test run is given (`--serve-password-file`); harmless with
/// `--serve-trust`.
pub const PASSWORD: &str = "correct horse battery";

/// Whether `program ARGS` runs; without it the test is skipped loudly (never under CI, env `CI`
/// set, where `.ci/run` must have installed it: `install` says how).
pub fn have(program: &str, args: &[&str], install: &str) -> bool {
    let ok = Command::new(program).args(args).output().is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var_os("CI").is_some() {
            panic!("{program} is missing, and CI is set: .ci/run must install it ({install})");
        }
        eprintln!("\n\n*** SKIPPED: {program} is not installed ({install}) ***\n\n");
    }
    ok
}

/// psql and psycopg 3 are both there.
pub fn clients() -> bool {
    have("psql", &["--version"], "apt-get install postgresql-client")
        && have("python3", &["-c", "import psycopg"], "pip install \"psycopg[binary]\"")
}

/// The running processes of one `ripples run ... --serve` (process 0 serves), killed when dropped.
pub struct Server {
    pub children: Vec<Child>,
    pub port: u16,
    /// Process 0's stderr.
    pub stderr: PathBuf,
}

impl Server {
    /// Process 0, the one that serves.
    pub fn child(&mut self) -> &mut Child {
        &mut self.children[0]
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Waits until `path` holds a line containing `what`; panics with the file after PATIENCE or when
/// `child` exits first.
pub fn wait_line(path: &Path, what: &str, child: &mut Child) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let text = fs::read_to_string(path).unwrap_or_default();
        if let Some(l) = text.lines().find(|l| l.contains(what)) {
            return l.to_string();
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("ripples exited ({status}) before printing {what:?}:\n{text}");
        }
        assert!(Instant::now() < deadline, "no {what:?} within {PATIENCE:?}:\n{text}");
        thread::sleep(Duration::from_millis(10));
    }
}

/// How a served run authenticates its clients.
pub enum Auth {
    /// SCRAM with [`PASSWORD`] from a password file.
    Password,
    /// `--serve-trust` (loopback only).
    Trust,
}

/// Starts `ripples run ARGS --serve 127.0.0.1:PORT` as `processes` processes (each with
/// `-n/-p/--hostfile` when more than one), and waits until process 0 serves.
pub fn start(files: &Files, args: &[String], processes: usize, auth: Auth) -> Server {
    let port = free_port();
    let auth: Vec<String> = match auth {
        Auth::Password => {
            let pw = files.write("password", &format!("{PASSWORD}\n"));
            vec!["--serve-password-file".into(), s(&pw)]
        }
        Auth::Trust => vec!["--serve-trust".into()],
    };
    let hostfile = (processes > 1).then(|| two_process_hostfile(files).0);
    let mut children = Vec::new();
    for p in 0..processes {
        let stderr = files.path(&format!("stderr-{port}-{p}.txt"));
        let mut cmd = bin();
        cmd.arg("run").args(args).args(["--serve", &format!("127.0.0.1:{port}"), "-q"]).args(&auth);
        // The mirror's directory goes in the test's own: a server killed at the end (it removes
        // the directory only when it stops by itself) leaves nothing in the system's.
        cmd.env("TMPDIR", &files.root);
        if let Some(h) = &hostfile {
            cmd.args(["-n", &processes.to_string(), "-p", &p.to_string(), "--hostfile", &s(h)]);
        }
        children.push(
            cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(fs::File::create(&stderr).unwrap()).spawn().unwrap(),
        );
    }
    let stderr = files.path(&format!("stderr-{port}-0.txt"));
    wait_line(&stderr, "serving SQL on", &mut children[0]);
    Server { children, port, stderr }
}

/// The libpq connection string of a served run on `port`.
pub fn conninfo(port: u16) -> String {
    format!("host=127.0.0.1 port={port} user=ripples dbname=ripples sslmode=disable connect_timeout=10")
}

/// `psql -At -c SQL` with `password`: its output, or its stderr (with the SQLSTATE) when it failed.
pub fn psql_run(port: u16, password: &str, sql: &str) -> Output {
    Command::new("psql")
        .args([&conninfo(port), "-X", "-At", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose", "-c", sql])
        .env("PGPASSWORD", password)
        .output()
        .unwrap()
}

/// psql's output for a statement that must succeed.
pub fn psql(port: u16, sql: &str) -> String {
    let out = psql_run(port, PASSWORD, sql);
    assert!(out.status.success(), "psql -c {sql:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// psql's error text for a statement that must fail.
pub fn psql_error(port: u16, sql: &str) -> String {
    let out = psql_run(port, PASSWORD, sql);
    assert!(!out.status.success(), "psql -c {sql:?} should fail, printed {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The epoch a statement reads now (`None` while nothing is served).
pub fn served_epoch(port: u16) -> Option<u64> {
    String::from_utf8_lossy(&psql_run(port, PASSWORD, "SELECT ripples_epoch()").stdout).trim().parse().ok()
}

/// Waits until the served epoch is at least `epoch`.
pub fn wait_epoch(port: u16, epoch: u64) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let now = served_epoch(port);
        if now.is_some_and(|n| n >= epoch) {
            return;
        }
        assert!(Instant::now() < deadline, "epoch {epoch} not served within {PATIENCE:?} (now {now:?})");
        thread::sleep(Duration::from_millis(20));
    }
}

/// A random stream of insertions and deletions of present edges over `ids` vertex ids below 2^63
/// (small ones and a few above 2^32); each epoch's size is drawn from `batch`.
pub fn stream(seed: u64, epochs: usize, ids: u64, batch: std::ops::RangeInclusive<usize>) -> Vec<Vec<Update>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ids: Vec<Node> = (0..ids).map(|k| if k % 7 == 3 { (1 << 33) + k } else { k }).collect();
    let mut present: Vec<(Node, Node)> = Vec::new();
    (0..epochs)
        .map(|_| {
            let n = if batch.start() == batch.end() { *batch.start() } else { rng.gen_range(batch.clone()) };
            (0..n)
                .map(|_| {
                    if rng.gen_bool(0.3) && !present.is_empty() {
                        let (s, d) = present.swap_remove(rng.gen_range(0..present.len()));
                        Update::delete(s, d)
                    } else {
                        let e = (ids[rng.gen_range(0..ids.len())], ids[rng.gen_range(0..ids.len())]);
                        present.push(e);
                        Update::insert(e.0, e.1)
                    }
                })
                .collect()
        })
        .collect()
}

/// A map as psql's unaligned rows print it (`key|value` lines).
pub fn map_text<V: std::fmt::Display>(m: &BTreeMap<Node, V>) -> String {
    m.iter().map(|(k, v)| format!("{k}|{v}\n")).collect()
}
