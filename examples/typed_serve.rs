//! A typed dataflow of your own, as a program with the whole command line (`JobArgs`): served
//! over SQL, crashed, resumed, and checked against a plain computation.
//!
//! The dataflow `fans`: per vertex, its out-degree (output `out`, `Display`: a BIGINT table) and
//! how many vertices have each out-degree (output `hist`, JSON: TEXT holding
//! `{"vertices":N}`). With `--serve` they are the tables `fans_out` and `fans_hist`.
//!
//! ```text
//! cargo run --release --example typed_serve                 # the story below, checked
//! cargo run --release --example typed_serve -- run --listen 9000 --serve 127.0.0.1:5433 \
//!     --serve-trust --state-dir /tmp/fans --output-dir /tmp/fans-out    # the program alone
//! ```
//!
//! Without arguments it runs itself as a child (`run` + flags) on a TCP port with a state
//! directory and `--serve`, sends epochs, reads `fans_out AS OF` each epoch with psql, kills the
//! child with SIGKILL, starts it again with the same flags (the producer resends from `ready E`;
//! the new server's history starts at the recovered epochs, replayed as one), finishes the
//! stream, and checks every served epoch, `fans_hist` read with `json_extract`, and the change log
//! `fans.out.changes` over both runs against a plain computation. It exits non-zero on any difference (CI runs it; it needs psql).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use ripples::cli::{exit_status, run_job, JobArgs};
use ripples::dataflow::typed::typed;
use serde::{Deserialize, Serialize};

/// The JSON output's value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Bucket {
    vertices: u64,
}

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    job: JobArgs,
}

/// The program: the dataflow `fans` run with the command line's flags.
fn program(flags: Vec<String>) -> i32 {
    let fans = typed("fans", |input, out| {
        let degree = input.edges.map(|(src, _, _)| src).count().map(|(v, n)| (v, n as u64));
        out.display("out", degree.clone());
        let hist = degree.map(|(_, d)| d).count().map(|(d, n)| (d, Bucket { vertices: n as u64 }));
        out.json("hist", hist);
        Ok::<(), String>(())
    });
    let args = Args::parse_from(std::iter::once("typed_serve".to_string()).chain(flags));
    exit_status(run_job(&args.job, fans))
}

const EPOCHS: u64 = 12;
const CRASH_AFTER: u64 = 7;

/// Epoch `e`'s update lines (1-based): a star around 0 grows by one edge, a chain 100-101-...
/// grows by one edge, and from epoch 4 on the star loses the edge added three epochs earlier.
fn epoch_lines(e: u64) -> Vec<(bool, u64, u64)> {
    let mut lines = vec![(true, 0, e), (true, 100 + e, 101 + e)];
    if e >= 4 {
        lines.push((false, 0, e - 3));
    }
    lines
}

/// The plain computation: each vertex's out-degree after epoch `e`.
fn out_degrees(e: u64) -> BTreeMap<u64, u64> {
    let mut edges: BTreeMap<(u64, u64), i64> = BTreeMap::new();
    for epoch in 1..=e {
        for (insert, s, d) in epoch_lines(epoch) {
            *edges.entry((s, d)).or_default() += if insert { 1 } else { -1 };
        }
    }
    let mut out = BTreeMap::new();
    for ((s, _), n) in edges {
        if n > 0 {
            *out.entry(s).or_default() += n as u64;
        }
    }
    out
}

fn fail(what: String) -> ! {
    eprintln!("typed_serve: {what}");
    std::process::exit(1);
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| fail(format!("no port: {e}")));
    listener.local_addr().map(|a| a.port()).unwrap_or_else(|e| fail(format!("no port: {e}")))
}

fn start(flags: &[String], stderr: &Path) -> Child {
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(format!("own path: {e}")));
    let err = std::fs::File::create(stderr).unwrap_or_else(|e| fail(format!("{}: {e}", stderr.display())));
    Command::new(exe)
        .arg("run")
        .args(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| fail(format!("cannot start the program: {e}")))
}

/// A TCP producer: connects (retrying while the program starts) and reads `ready E`.
fn connect(port: u16) -> (BufReader<TcpStream>, TcpStream, u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) {
            let mut reader = BufReader::new(stream.try_clone().unwrap_or_else(|e| fail(format!("{e}"))));
            let mut line = String::new();
            if reader.read_line(&mut line).is_ok() {
                if let Some(e) = line.trim().strip_prefix("ready ").and_then(|e| e.parse().ok()) {
                    return (reader, stream, e);
                }
            }
        }
        if Instant::now() > deadline {
            fail(format!("the program never listened on port {port}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn send(reader: &mut BufReader<TcpStream>, writer: &mut TcpStream, from: u64, to: u64) {
    for e in from..=to {
        let mut text: String = epoch_lines(e)
            .iter()
            .map(|(insert, s, d)| format!("{} {s} {d}\n", if *insert { "+" } else { "-" }))
            .collect();
        text.push_str("commit\n");
        writer.write_all(text.as_bytes()).unwrap_or_else(|e| fail(format!("send: {e}")));
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        if line.trim() != format!("ok {e}") {
            fail(format!("epoch {e}: the program answered {line:?}"));
        }
    }
}

/// psql's rows for `sql` (`key|value` lines).
fn psql(port: u16, sql: &str) -> String {
    let out = Command::new("psql")
        .args([&format!("host=127.0.0.1 port={port} user=ripples dbname=ripples sslmode=disable"), "-X", "-At"])
        .args(["-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .unwrap_or_else(|e| fail(format!("psql: {e} (install postgresql-client)")));
    if !out.status.success() {
        fail(format!("psql -c {sql:?}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits until epoch `e` is served.
fn wait_served(port: u16, e: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while psql(port, "SELECT ripples_epoch()").trim().parse::<u64>().map_or(true, |now| now < e) {
        if Instant::now() > deadline {
            fail(format!("epoch {e} was never served"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The served epochs `first..=last` of `fans_out` against the plain computation.
fn check_served(port: u16, first: u64, last: u64) -> Result<(), String> {
    for e in first..=last {
        let got = psql(port, &format!("SELECT key, value FROM fans_out AS OF {e} ORDER BY key"));
        let want: String = out_degrees(e).iter().map(|(v, d)| format!("{v}|{d}\n")).collect();
        if got != want {
            return Err(format!("fans_out AS OF {e}: served\n{got}plain computation\n{want}"));
        }
    }
    Ok(())
}

/// Kills the program and fails when `checked` failed.
fn or_kill(checked: Result<(), String>, child: &mut Child) {
    if let Err(e) = checked {
        let _ = child.kill();
        let _ = child.wait();
        fail(e);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("run") {
        std::process::exit(program(args[1..].to_vec()));
    }
    let dir = std::env::temp_dir().join(format!("ripples-typed-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| fail(format!("{}: {e}", dir.display())));
    let (port, sql) = (free_port(), free_port());
    let flags: Vec<String> = [
        "--listen",
        &port.to_string(),
        "--state-dir",
        &dir.join("state").display().to_string(),
        "--output-dir",
        &dir.join("out").display().to_string(),
        "--serve",
        &format!("127.0.0.1:{sql}"),
        "--serve-trust",
        "-q",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();

    // The first run: epochs 1..=CRASH_AFTER, served and checked, then SIGKILL.
    let mut child = start(&flags, &dir.join("first.err"));
    let (mut reader, mut writer, ready) = connect(port);
    if ready != 1 {
        fail(format!("a fresh run said ready {ready}"));
    }
    send(&mut reader, &mut writer, 1, CRASH_AFTER);
    wait_served(sql, CRASH_AFTER);
    or_kill(check_served(sql, 1, CRASH_AFTER), &mut child);
    let _ = child.kill();
    let _ = child.wait();

    // The same flags again: it recovers from the state directory and goes on.
    let mut child = start(&flags, &dir.join("second.err"));
    let (mut reader, mut writer, ready) = connect(port);
    if ready != CRASH_AFTER + 1 {
        fail(format!("the restarted run said ready {ready}, expected {}", CRASH_AFTER + 1));
    }
    send(&mut reader, &mut writer, ready, EPOCHS);
    wait_served(sql, EPOCHS);
    // The restarted mirror starts at the recovered epochs, replayed as one (CRASH_AFTER).
    or_kill(check_served(sql, CRASH_AFTER, EPOCHS), &mut child);
    let hist = psql(sql, "SELECT key, json_extract(value, '$.vertices') FROM fans_hist ORDER BY CAST(key AS INTEGER)");
    let _ = writer.write_all(b"end\n");
    let mut line = String::new();
    let _ = reader.read_line(&mut line);
    let status = child.wait().unwrap_or_else(|e| fail(format!("{e}")));
    if !status.success() {
        fail(format!(
            "the restarted run failed: {}",
            std::fs::read_to_string(dir.join("second.err")).unwrap_or_default()
        ));
    }

    // The change log over both runs: every epoch once, folding to the plain computation.
    let log = std::fs::read_to_string(dir.join("out/fans.out.changes")).unwrap_or_else(|e| fail(format!("{e}")));
    let mut state: BTreeMap<(u64, u64), i64> = BTreeMap::new();
    let mut epoch = 0;
    for line in log.lines() {
        let f: Vec<u64> = line.split(' ').take(3).filter_map(|x| x.parse().ok()).collect();
        let diff: i64 = line.rsplit(' ').next().and_then(|d| d.parse().ok()).unwrap_or(0);
        if f.len() != 3 || f[0] < epoch {
            fail(format!("change line out of order or malformed: {line:?}"));
        }
        epoch = f[0];
        *state.entry((f[1], f[2])).or_default() += diff;
        state.retain(|_, n| *n != 0);
    }
    let folded: BTreeMap<u64, u64> = state.keys().copied().collect();
    if folded != out_degrees(EPOCHS) {
        fail(format!("the change log folds to {folded:?}, the plain computation says {:?}", out_degrees(EPOCHS)));
    }
    let mut buckets: BTreeMap<u64, u64> = BTreeMap::new();
    for d in out_degrees(EPOCHS).values() {
        *buckets.entry(*d).or_default() += 1;
    }
    let want: String = buckets.iter().map(|(d, n)| format!("{d}|{n}\n")).collect();
    if hist != want {
        fail(format!("fans_hist: served\n{hist}plain computation\n{want}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("typed_serve: {EPOCHS} epochs served and checked, crashed after {CRASH_AFTER} and resumed");
}
