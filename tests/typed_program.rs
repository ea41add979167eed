//! A user's typed dataflow as a program of its own built on `JobArgs` (this test binary is that
//! program: `typed_program host SHAPE FLAGS...` runs the dataflow `deg` with the flags, as a
//! user's binary would), everything checked against a plain computation at every epoch.
//!
//! **Exactly once.** A live run with a state directory is killed with SIGKILL after a random
//! number of acknowledged epochs (fixed seeds) and started again with the same flags: the typed
//! change logs continue after the last durable epoch (stdout included: every epoch once over both
//! runs) and end byte-identical to an uninterrupted run of the same epochs from a file. With
//! `--restart`, in a two-process cluster whose process 1 is killed, process 0 restarts by itself
//! and the files equal one process's. From a file, two workers and two processes write what one
//! worker writes; with `--tumbling` each window's fold of the change log is that window's alone.
//!
//! **Served.** With `--follow` and `--serve`, every typed output is a table `deg_OUTPUT` with
//! columns `key` and `value` typed from the Rust types: psql reads each epoch `AS OF` it and
//! `\d` describes the tables, psycopg reads the column types, the JSON output through SQLite's
//! JSON functions, and `SUBSCRIBE` equal to the change log. A key beyond BIGINT stops the run
//! with one clear line.
//!
//! A test binary without libtest's harness (`harness = false`): its `main` runs every test (an
//! argument selects the tests whose name contains it).

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use clap::Parser;
use common::pg::{clients, psql, wait_epoch, wait_line, PASSWORD};
use common::process::*;
use common::session::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ripples::dataflow::typed::Float;
use serde::{Deserialize, Serialize};

const EPOCHS: usize = 10;
const BATCH: usize = 6;
const TRIALS: u64 = 10;

// ---------------------------------------------------------------------------------------------
// The user's program.

/// A json output's value: how many vertices have a degree.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Bucket {
    vertices: u64,
}

#[derive(Parser)]
struct HostArgs {
    #[command(flatten)]
    job: ripples::cli::JobArgs,
}

/// The dataflow `deg`: output `out` (display), each vertex's out-degree (edge copies); with
/// `two` and `served`, also output `hist` (json), how many vertices have each out-degree; with
/// `served`, also `half` (display), `v<vertex>` and half its out-degree as a float; with `huge`,
/// `out` keyed by `u64::MAX - vertex` instead; with `vertex` and `json`, the out-degree alone as
/// the `(vertex, u64)` output or as a JSON output (the three ways timed against each other:
/// `cargo test --release --test typed_program --no-run`, then `typed_program host SHAPE ...`).
fn host(shape: &str, flags: Vec<String>) -> i32 {
    let records = shape == "records";
    let shape = shape.to_string();
    let deg = ripples::dataflow::typed::typed("deg", move |input, out| {
        let watched = ripples::dataflow::typed::live_records(&input, parse_vertex).distinct().map(|v| (v, ()));
        let degree = input.edges.map(|(s, _, _)| s).count().map(|(v, n)| (v, n as u64));
        if shape == "records" {
            out.display("out", degree.clone().join(watched).map(|(v, (d, ()))| (v, d)));
        } else if shape == "huge" {
            out.display("out", degree.clone().map(|(v, d)| (u64::MAX - v, d)));
        } else if shape == "vertex" {
            out.vertex(degree.clone(), ripples::types::format::ValueFormat::Integer);
        } else if shape == "json" {
            out.json("out", degree.clone());
        } else {
            out.display("out", degree.clone());
        }
        if shape == "two" || shape == "served" {
            let hist = degree.clone().map(|(_, d)| d).count().map(|(d, n)| (d, Bucket { vertices: n as u64 }));
            out.json("hist", hist);
        }
        if shape == "served" {
            out.display("half", degree.map(|(v, d)| (format!("v{v}"), Float(d as f64 / 2.0))));
        }
        Ok::<(), String>(())
    });
    let deg = if records { deg.with_records(parse_vertex) } else { deg };
    let args = HostArgs::parse_from(std::iter::once("host".to_string()).chain(flags));
    ripples::cli::exit_status(ripples::cli::run_job(&args.job, deg))
}

/// The record input's parser of shape `records`: a record names a vertex to watch.
fn parse_vertex(text: &str) -> Result<u64, String> {
    text.parse().map_err(|e| format!("{text:?} is not a vertex: {e}"))
}

// ---------------------------------------------------------------------------------------------
// The oracle: a plain computation over the edge multiset.

/// Per epoch (index 0: the empty initial graph), each vertex's out-degree and the histogram.
#[allow(clippy::type_complexity)]
fn oracle(texts: &[String]) -> Vec<(BTreeMap<u64, u64>, BTreeMap<u64, u64>)> {
    let mut edges: BTreeMap<(u64, u64), i64> = BTreeMap::new();
    let mut out = Vec::new();
    let state = |edges: &BTreeMap<(u64, u64), i64>| {
        let mut deg: BTreeMap<u64, u64> = BTreeMap::new();
        for (&(s, _), &c) in edges {
            *deg.entry(s).or_default() += c as u64;
        }
        deg.retain(|_, d| *d > 0);
        let mut hist: BTreeMap<u64, u64> = BTreeMap::new();
        for &d in deg.values() {
            *hist.entry(d).or_default() += 1;
        }
        (deg, hist)
    };
    out.push(state(&edges));
    for text in texts {
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            let e = (f[1].parse().unwrap(), f[2].parse().unwrap());
            *edges.entry(e).or_default() += if f[0] == "+" { 1 } else { -1 };
            edges.retain(|_, c| *c != 0);
        }
        out.push(state(&edges));
    }
    out
}

/// A change log's states after each epoch `0..=last`, from `(epoch, key, value, diff)` lines.
fn states(changes: &[(u64, u64, u64, i64)], last: u64) -> Vec<BTreeMap<u64, u64>> {
    let mut state: BTreeMap<(u64, u64), i64> = BTreeMap::new();
    let mut out = Vec::new();
    let mut i = 0;
    for epoch in 0..=last {
        while i < changes.len() && changes[i].0 == epoch {
            let (_, k, v, d) = changes[i];
            *state.entry((k, v)).or_default() += d;
            state.retain(|_, c| *c != 0);
            i += 1;
        }
        assert!(state.values().all(|&c| c == 1), "epoch {epoch}: a key with several values: {state:?}");
        out.push(state.keys().copied().collect());
    }
    assert_eq!(i, changes.len(), "change lines after epoch {last} or out of order");
    out
}

fn text_changes(text: &str) -> Vec<(u64, u64, u64, i64)> {
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 4, "bad change line {l:?}");
            (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap(), f[3].parse().unwrap())
        })
        .collect()
}

fn json_changes(text: &str) -> Vec<(u64, u64, u64, i64)> {
    #[derive(Deserialize)]
    struct Line {
        epoch: u64,
        key: u64,
        value: Bucket,
        diff: i64,
    }
    text.lines()
        .map(|l| {
            let line: Line = serde_json::from_str(l).unwrap_or_else(|e| panic!("bad json change line {l:?}: {e}"));
            (line.epoch, line.key, line.value.vertices, line.diff)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Running the program.

fn program(shape: &str) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["host", shape]);
    c
}

fn start(shape: &str, args: &[String], stderr: &Path, stdout: bool) -> Child {
    program(shape)
        .args(args)
        .arg("-q")
        .stdin(Stdio::null())
        .stdout(if stdout { Stdio::piped() } else { Stdio::null() })
        .stderr(fs::File::create(stderr).unwrap())
        .spawn()
        .expect("the program starts")
}

/// The uninterrupted run of `texts` from a file, one epoch per text: `--output-dir` of `two`.
fn reference(files: &Files, texts: &[String], seed: u64) -> BTreeMap<String, String> {
    let updates = files.path("ref-u.txt");
    fs::write(&updates, texts.concat()).unwrap();
    let dir = files.path("ref");
    let out = program("two")
        .args(["--updates", &s(&updates), "--batch", &BATCH.to_string(), "--output-dir", &s(&dir), "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "seed {seed}: reference run failed: {}", String::from_utf8_lossy(&out.stderr));
    let files: BTreeMap<String, String> = ["deg.out.changes", "deg.out.out", "deg.hist.changes", "deg.hist.out"]
        .iter()
        .map(|n| (n.to_string(), read(&dir.join(n))))
        .collect();
    // The reference against the plain computation, at every epoch.
    let expected = oracle(texts);
    let last = texts.len() as u64;
    let deg = states(&text_changes(&files["deg.out.changes"]), last);
    let hist = states(&json_changes(&files["deg.hist.changes"]), last);
    for (epoch, (d, h)) in expected.iter().enumerate() {
        assert_eq!(&deg[epoch], d, "seed {seed}: deg.out at epoch {epoch}");
        assert_eq!(&hist[epoch], h, "seed {seed}: deg.hist at epoch {epoch}");
    }
    let out_lines: Vec<String> = expected[texts.len()].0.iter().map(|(v, d)| format!("{v} {d}\n")).collect();
    let mut sorted = out_lines.clone();
    sorted.sort();
    assert_eq!(files["deg.out.out"], sorted.concat(), "seed {seed}: deg.out.out");
    files
}

fn texts(seed: u64) -> Vec<String> {
    epoch_texts(seed, 12, EPOCHS, BATCH)
}

// ---------------------------------------------------------------------------------------------
// The tests.

/// SIGKILL + restart with the same flags, a single typed output on stdout (`--changes -`):
/// stdout over both runs holds every epoch once, and `--output` equals the reference.
fn sigkill_stdout_trial(seed: u64) {
    let files = Files::new();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let texts = texts(seed);
    let reference = reference(&files, &texts, seed);
    let port = free_port();
    let (state, output) = (files.path("state"), files.path("o.txt"));
    let args: Vec<String> = ["--listen", &port.to_string(), "--state-dir", &s(&state), "--changes", "-"]
        .iter()
        .map(|x| x.to_string())
        .chain(["--output".to_string(), s(&output)])
        .collect();
    let mut first = start("one", &args, &files.path("1.err"), true);
    let (mut p, ready) = Producer::connect_retry(port);
    assert_eq!(ready, 1, "seed {seed}");
    let acked = rng.gen_range(1..EPOCHS as u64 - 1);
    send_epochs(&mut p, &texts, 1, acked);
    // Stdout cannot be cut back: kill once every acknowledged epoch is written.
    wait_written(&state, acked);
    first.kill().unwrap();
    let _ = first.wait();
    let mut stdout1 = String::new();
    first.stdout.take().unwrap().read_to_string(&mut stdout1).unwrap();
    drop(p);

    let mut second = start("one", &args, &files.path("2.err"), true);
    let (mut p, ready) = Producer::connect_retry(port);
    assert_eq!(ready, acked + 1, "seed {seed}: every acknowledged epoch is durable");
    send_epochs(&mut p, &texts, ready, EPOCHS as u64);
    p.send("end\n").unwrap();
    let _ = p.line();
    let mut stdout2 = String::new();
    second.stdout.take().unwrap().read_to_string(&mut stdout2).unwrap();
    let status = wait_exit(&mut second, PATIENCE, "the restarted run");
    assert!(status.success(), "seed {seed}: {}", read(&files.path("2.err")));
    assert_eq!(
        stdout1 + &stdout2,
        reference["deg.out.changes"],
        "seed {seed}: stdout over both runs (killed after {acked})"
    );
    assert_eq!(read(&output), reference["deg.out.out"], "seed {seed}: --output");
}

/// SIGKILL at a random moment (epochs may be in flight, written but not marked) + restart, two
/// typed outputs (text and JSON) in `--output-dir`: every file byte-identical to the reference.
fn sigkill_files_trial(seed: u64) {
    let files = Files::new();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let texts = texts(seed);
    let reference = reference(&files, &texts, seed);
    let port = free_port();
    let (state, dir) = (files.path("state"), files.path("out"));
    let args: Vec<String> =
        vec!["--listen".into(), port.to_string(), "--state-dir".into(), s(&state), "--output-dir".into(), s(&dir)];
    let mut first = start("two", &args, &files.path("1.err"), false);
    let (mut p, _) = Producer::connect_retry(port);
    let acked = rng.gen_range(2..EPOCHS as u64 - 1);
    send_epochs(&mut p, &texts, 1, acked);
    wait_written(&state, rng.gen_range(1..=acked));
    first.kill().unwrap();
    let _ = first.wait();
    drop(p);

    let mut second = start("two", &args, &files.path("2.err"), false);
    let (mut p, ready) = Producer::connect_retry(port);
    assert_eq!(ready, acked + 1, "seed {seed}: every acknowledged epoch is durable");
    send_epochs(&mut p, &texts, ready, EPOCHS as u64);
    p.send("end\n").unwrap();
    let _ = p.line();
    let status = wait_exit(&mut second, PATIENCE, "the restarted run");
    assert!(status.success(), "seed {seed}: {}", read(&files.path("2.err")));
    for (name, text) in &reference {
        assert_eq!(&read(&dir.join(name)), text, "seed {seed}: {name} (killed after {acked})");
    }
}

/// `--restart` in a two-process cluster: process 1 is killed, process 0 restarts by itself, the
/// typed files equal one process's uninterrupted run.
fn restart_flag_two_processes() {
    let seed = 7300;
    let files = Files::new();
    let texts = texts(seed);
    let reference = reference(&files, &texts, seed);
    let (hostfile, _) = two_process_hostfile(&files);
    let port = free_port();
    let (state, dir) = (files.path("state"), files.path("out"));
    let mut args: Vec<String> = vec!["--listen".into(), port.to_string(), "--state-dir".into(), s(&state)];
    args.extend(["--output-dir".into(), s(&dir), "-n".into(), "2".into(), "--hostfile".into(), s(&hostfile)]);
    args.extend(["--restart".into(), "3".into(), "--restart-delay-ms".into(), "50".into()]);
    let with = |p: usize| args.iter().cloned().chain(["-p".to_string(), p.to_string()]).collect::<Vec<_>>();
    let mut p0 = start("two", &with(0), &files.path("p0.err"), false);
    let mut p1 = start("two", &with(1), &files.path("p1.err"), false);
    let (mut producer, _) = Producer::connect_retry(port);
    let half = EPOCHS as u64 / 2;
    send_epochs(&mut producer, &texts, 1, half);
    wait_written(&state, half);
    p1.kill().unwrap();
    let _ = p1.wait();
    let deadline = std::time::Instant::now() + PATIENCE;
    while !read(&files.path("p0.err")).contains("ripples: restart 1 of 3") {
        assert!(std::time::Instant::now() < deadline, "no restart logged:\n{}", read(&files.path("p0.err")));
        assert!(p0.try_wait().unwrap().is_none(), "process 0 exited:\n{}", read(&files.path("p0.err")));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let mut p1 = start("two", &with(1), &files.path("p1-again.err"), false);
    drop(producer);
    let (mut producer, ready) = Producer::connect_retry(port);
    assert_eq!(ready, half + 1, "every acknowledged epoch is durable");
    send_epochs(&mut producer, &texts, ready, EPOCHS as u64);
    producer.send("end\n").unwrap();
    let _ = producer.line();
    for (child, what) in [(&mut p0, "process 0"), (&mut p1, "process 1")] {
        let status = wait_exit(child, PATIENCE, what);
        assert!(status.success(), "{what}: {}", read(&files.path("p0.err")));
    }
    assert!(!read(&files.path("p0.err")).contains("panicked"));
    for (name, text) in &reference {
        assert_eq!(&read(&dir.join(name)), text, "{name} after --restart");
    }
}

/// From a file, two workers and two processes write the typed files one worker writes.
fn workers_and_processes_write_what_one_worker_does() {
    let seed = 7600;
    let files = Files::new();
    let texts = texts(seed);
    let reference = reference(&files, &texts, seed);
    let updates = files.path("ref-u.txt");
    let common: Vec<String> = vec!["--updates".into(), s(&updates), "--batch".into(), BATCH.to_string(), "-q".into()];
    // Two worker threads.
    let dir = files.path("w2");
    let out = program("two").args(&common).args(["--output-dir", &s(&dir), "-w", "2"]).output().unwrap();
    assert!(out.status.success(), "-w 2: {}", String::from_utf8_lossy(&out.stderr));
    for (name, text) in &reference {
        assert_eq!(&read(&dir.join(name)), text, "seed {seed}: {name} with -w 2");
    }
    // Two processes (process 0 writes).
    let (hostfile, _) = two_process_hostfile(&files);
    let dir = files.path("n2");
    let mut children: Vec<Child> = (0..2)
        .map(|p| {
            program("two")
                .args(&common)
                .args(["--output-dir", &s(&dir), "-n", "2", "-p", &p.to_string(), "--hostfile", &s(&hostfile)])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(fs::File::create(files.path(&format!("n2-{p}.err"))).unwrap())
                .spawn()
                .unwrap()
        })
        .collect();
    for (p, child) in children.iter_mut().enumerate() {
        let status = wait_exit(child, PATIENCE, "a process of two");
        assert!(status.success(), "process {p}: {}", read(&files.path(&format!("n2-{p}.err"))));
    }
    for (name, text) in &reference {
        assert_eq!(&read(&dir.join(name)), text, "seed {seed}: {name} with two processes");
    }
}

/// `--tumbling`: event-time windows with a typed output; folding the change log (labelled with
/// window starts) up to each window's start gives that window's out-degrees alone.
fn tumbling_windows_with_a_typed_output() {
    const SPAN: u64 = 4;
    let seed = 7700;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let files = Files::new();
    // Insertions with non-decreasing event times 0, 0, 0, 1, ... (three per time unit).
    let updates: Vec<(u64, u64, u64)> = (0..60).map(|i| (rng.gen_range(0..8), rng.gen_range(0..8), i / 3)).collect();
    let text: String = updates.iter().map(|(s, d, t)| format!("+ {s} {d} @{t}\n")).collect();
    let path = files.write("timed.txt", &text);
    let changes = files.path("c.txt");
    let out = program("one")
        .args([
            "--updates",
            &s(&path),
            "--batch",
            "5",
            "--tumbling",
            &SPAN.to_string(),
            "--changes",
            &s(&changes),
            "-q",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "seed {seed}: {}", String::from_utf8_lossy(&out.stderr));
    let log = text_changes(&read(&changes));
    assert!(log.iter().all(|c| c.0 % SPAN == 0), "seed {seed}: a change line not at a window start: {log:?}");
    let last = updates.last().unwrap().2 / SPAN;
    let states = states(&log, last * SPAN);
    for w in 0..=last {
        let mut want: BTreeMap<u64, u64> = BTreeMap::new();
        for (s, _, t) in &updates {
            if t / SPAN == w {
                *want.entry(*s).or_default() += 1;
            }
        }
        assert_eq!(states[(w * SPAN) as usize], want, "seed {seed}: window {w}");
    }
}

/// A state directory whose mark does not record a change log the run writes (the first run had
/// other outputs): a clear error, exit status 2, the file untouched.
fn a_mark_without_the_output_is_refused() {
    let files = Files::new();
    let texts = texts(7400);
    let port = free_port();
    let (state, dir) = (files.path("state"), files.path("out"));
    let args = |dir: &Path| -> Vec<String> {
        vec!["--listen".into(), port.to_string(), "--state-dir".into(), s(&state), "--output-dir".into(), s(dir)]
    };
    let mut first = start("one", &args(&dir), &files.path("1.err"), false);
    let (mut p, _) = Producer::connect_retry(port);
    send_epochs(&mut p, &texts, 1, 2);
    wait_written(&state, 2);
    first.kill().unwrap();
    let _ = first.wait();
    drop(p);
    let out = program("two").args(args(&dir)).arg("-q").stdin(Stdio::null()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("does not record output 'deg.hist'") && !err.contains("panicked"), "{err}");
    assert!(!dir.join("deg.hist.changes").exists() || read(&dir.join("deg.hist.changes")).is_empty(), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Served.

/// psycopg: the column types of each typed table, a table read with a parameter, the JSON output
/// through SQLite's JSON functions, and `SUBSCRIBE deg_out` from epoch 0 up to an epoch.
const PSYCOPG: &str = r#"
import json, sys, psycopg
port, password, epoch, upto = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
dsn = f"host=127.0.0.1 port={port} user=ripples dbname=ripples sslmode=disable"
out = {}
with psycopg.connect(dsn, password=password, autocommit=True) as conn:
    cur = conn.cursor()
    for t in ["deg_out", "deg_hist", "deg_half"]:
        cur.execute(f"SELECT key, value FROM {t} AS OF {epoch} LIMIT 1")
        out["types_" + t] = [d.type_code for d in cur.description]
    cur.execute(f"SELECT key, value FROM deg_out AS OF {epoch} WHERE key >= %s ORDER BY key", (0,))
    out["out"] = [list(r) for r in cur]
    cur.execute(f"SELECT CAST(key AS INTEGER), json_extract(value, '$.vertices') FROM deg_hist AS OF {epoch} ORDER BY 1")
    out["hist"] = [list(r) for r in cur]
    cur.execute(f"SELECT key, value FROM deg_half AS OF {epoch} ORDER BY key")
    out["half"] = [list(r) for r in cur]
    with cur.copy(f"COPY (SUBSCRIBE deg_out AS OF 0 UP TO {upto}) TO STDOUT") as copy:
        out["subscribe"] = [list(r) for r in copy.rows()]
print(json.dumps(out))
"#;

/// Starts the program with `--serve` (password) and `--follow FILE`; waits until it serves.
fn serve(files: &Files, shape: &str, followed: &Path, extra: &[String]) -> (Child, u16, std::path::PathBuf) {
    let port = free_port();
    let pw = files.write("password", &format!("{PASSWORD}\n"));
    let stderr = files.path(&format!("serve-{port}.err"));
    let mut child = program(shape)
        .args(["--follow", &s(followed), "--serve", &format!("127.0.0.1:{port}"), "-q"])
        .args(["--serve-password-file", &s(&pw)])
        .args(extra)
        .env("TMPDIR", &files.root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    wait_line(&stderr, "serving SQL on", &mut child);
    (child, port, stderr)
}

fn append(file: &Path, text: &str) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new().append(true).open(file).unwrap();
    writeln!(f, "{text}commit").unwrap();
}

/// psql's `key|value` rows as a map.
fn rows(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(|l| {
            let (k, v) = l.split_once('|').unwrap_or_else(|| panic!("bad row {l:?}"));
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn strings<K: ToString, V: ToString>(m: &BTreeMap<K, V>) -> BTreeMap<String, String> {
    m.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn typed_outputs_are_served_tables() {
    if !clients() {
        return;
    }
    let seed = 7500;
    let files = Files::new();
    // Vertex ids below 2^63 (BIGINT), some above 2^32.
    let texts: Vec<String> = common::pg::stream(seed, EPOCHS, 16, 1..=BATCH)
        .iter()
        .map(|e| e.iter().map(|u| format!("{} {} {}\n", if u.diff > 0 { "+" } else { "-" }, u.src, u.dst)).collect())
        .collect();
    let want = oracle(&texts);
    let followed = files.write("live.txt", "# updates\n");
    let dir = files.path("out");
    let (mut child, port, stderr) = serve(&files, "served", &followed, &["--output-dir".into(), s(&dir)]);
    for t in &texts {
        append(&followed, t);
    }
    let last = texts.len() as u64;
    wait_epoch(port, last);
    // psql: every epoch AS OF, against the plain computation.
    for (epoch, (deg, hist)) in want.iter().enumerate() {
        let got = rows(&psql(port, &format!("SELECT key, value FROM deg_out AS OF {epoch} ORDER BY key")));
        assert_eq!(got, strings(deg), "seed {seed}: deg_out AS OF {epoch}");
        let got = rows(&psql(
            port,
            &format!("SELECT key, json_extract(value, '$.vertices') FROM deg_hist AS OF {epoch} ORDER BY key"),
        ));
        assert_eq!(got, strings(hist), "seed {seed}: deg_hist AS OF {epoch}");
        let got: BTreeMap<String, f64> = rows(&psql(port, &format!("SELECT key, value FROM deg_half AS OF {epoch}")))
            .into_iter()
            .map(|(k, v)| (k, v.parse().unwrap()))
            .collect();
        let half: BTreeMap<String, f64> = deg.iter().map(|(v, d)| (format!("v{v}"), *d as f64 / 2.0)).collect();
        assert_eq!(got, half, "seed {seed}: deg_half AS OF {epoch}");
    }
    // The current rows, an aggregate over a typed column, and the changes view.
    let (deg, _) = &want[last as usize];
    assert_eq!(rows(&psql(port, "SELECT key, value FROM deg_out")), strings(deg), "seed {seed}: deg_out now");
    assert_eq!(
        psql(port, "SELECT sum(value) FROM deg_out").trim(),
        deg.values().sum::<u64>().to_string(),
        "seed {seed}: sum of a BIGINT column"
    );
    let log = read(&dir.join("deg.out.changes"));
    let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
    let mut view: Vec<String> =
        psql(port, "SELECT epoch, vertex, value, diff FROM changes WHERE algorithm = 'deg_out'")
            .lines()
            .map(|l| l.replace('|', " "))
            .collect();
    lines.sort();
    view.sort();
    assert_eq!(view, lines, "seed {seed}: the changes view holds deg_out's change log");
    // psql's \d: the tables and their column types.
    let described = psql(port, "\\d deg_out");
    for column in ["key|bigint", "value|bigint"] {
        assert!(described.contains(column), "\\d deg_out lacks {column}:\n{described}");
    }
    let described = psql(port, "\\d deg_half");
    for column in ["key|text", "value|double precision"] {
        assert!(described.contains(column), "\\d deg_half lacks {column}:\n{described}");
    }
    let listed = psql(port, "\\dt");
    for t in ["deg_out", "deg_hist", "deg_half"] {
        assert!(listed.contains(t), "\\dt lacks {t}:\n{listed}");
    }
    // psycopg: types, a parameter, JSON functions, SUBSCRIBE equal to the change log.
    let script = files.write("client.py", PSYCOPG);
    let upto = last - 2;
    let out = Command::new("python3")
        .args([s(&script), port.to_string(), PASSWORD.into(), last.to_string(), upto.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "psycopg client failed: {}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["types_deg_out"], serde_json::json!([20, 20]), "int8, int8: {got}");
    assert_eq!(got["types_deg_hist"], serde_json::json!([25, 25]), "text, text: {got}");
    assert_eq!(got["types_deg_half"], serde_json::json!([25, 701]), "text, float8: {got}");
    let out_rows: Vec<(u64, u64)> =
        got["out"].as_array().unwrap().iter().map(|r| (r[0].as_u64().unwrap(), r[1].as_u64().unwrap())).collect();
    assert_eq!(out_rows, deg.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), "seed {seed}: psycopg deg_out");
    let (_, hist) = &want[last as usize];
    let hist_rows: Vec<(u64, u64)> =
        got["hist"].as_array().unwrap().iter().map(|r| (r[0].as_u64().unwrap(), r[1].as_u64().unwrap())).collect();
    assert_eq!(hist_rows, hist.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), "seed {seed}: psycopg deg_hist");
    let half_rows: BTreeMap<String, f64> = got["half"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_f64().unwrap()))
        .collect();
    assert_eq!(
        half_rows,
        deg.iter().map(|(v, d)| (format!("v{v}"), *d as f64 / 2.0)).collect(),
        "seed {seed}: psycopg deg_half"
    );
    let mut subscribed: Vec<String> = got["subscribe"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {}",
                r[0].as_str().unwrap(),
                r[2].as_str().unwrap(),
                r[3].as_str().unwrap(),
                r[1].as_str().unwrap()
            )
        })
        .collect();
    let mut logged: Vec<String> = log
        .lines()
        .filter(|l| l.split(' ').next().unwrap().parse::<u64>().unwrap() < upto)
        .map(str::to_string)
        .collect();
    subscribed.sort();
    logged.sort();
    assert_eq!(subscribed, logged, "seed {seed}: SUBSCRIBE deg_out up to {upto} = the change log");
    let _ = child.kill();
    let _ = child.wait();
    assert!(!read(&stderr).contains("panicked"), "{}", read(&stderr));
}

/// A typed integer beyond BIGINT stops a served run with one clear line (no panic).
fn a_key_beyond_bigint_stops_the_served_run() {
    if !clients() {
        return;
    }
    let files = Files::new();
    let followed = files.write("live.txt", "");
    let (mut child, _port, stderr) = serve(&files, "huge", &followed, &[]);
    append(&followed, "+ 1 2\n");
    let status = wait_exit(&mut child, PATIENCE, "the served run with a huge key");
    let err = read(&stderr);
    assert!(!status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("--serve: output deg.out: key 18446744073709551614 (epoch 1) is outside SQL's BIGINT"),
        "{err}"
    );
}

/// Live records (shape `records`: the out-degree of each vertex a record names): every epoch's
/// text adds record lines (`record + V`, `record - V` of a present one) to the edge lines.
/// Returns the texts and, per epoch (0: empty), the watched vertices' out-degrees.
fn record_texts(seed: u64) -> (Vec<String>, Vec<BTreeMap<u64, u64>>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let edge_texts = texts(seed);
    let degrees = oracle(&edge_texts);
    let mut watched: BTreeMap<u64, u64> = BTreeMap::new();
    let mut texts = Vec::new();
    let mut expected = vec![BTreeMap::new()];
    for (i, edges) in edge_texts.iter().enumerate() {
        let mut text = String::new();
        // A record line before each third of the epoch's edge lines.
        let lines: Vec<&str> = edges.lines().collect();
        for chunk in lines.chunks(BATCH / 3) {
            let present: Vec<u64> = watched.keys().copied().collect();
            if !present.is_empty() && rng.gen_bool(0.25) {
                let v = present[rng.gen_range(0..present.len())];
                text += &format!("record - {v}\n");
                let n = watched.get_mut(&v).unwrap();
                *n -= 1;
                if *n == 0 {
                    watched.remove(&v);
                }
            } else {
                let v = rng.gen_range(0..12u64);
                text += &format!("record + {v}\n");
                *watched.entry(v).or_default() += 1;
            }
            for line in chunk {
                text += line;
                text += "\n";
            }
        }
        texts.push(text);
        let state = &degrees[i + 1].0;
        expected.push(state.iter().filter(|(v, _)| watched.contains_key(v)).map(|(&v, &d)| (v, d)).collect());
    }
    (texts, expected)
}

/// One uninterrupted live run of shape `records` over `texts` into `dir`, with `extra` flags
/// (`-n 2`: a second process joins from a hostfile).
fn uninterrupted_records_run(files: &Files, texts: &[String], dir: &Path, extra: &[&str]) {
    let port = free_port();
    let mut args: Vec<String> = vec!["--listen".into(), port.to_string(), "--output-dir".into(), s(dir)];
    args.extend(extra.iter().map(|a| a.to_string()));
    let cluster = extra.contains(&"-n");
    let mut runs = Vec::new();
    if cluster {
        let (hostfile, _) = two_process_hostfile(files);
        args.extend(["--hostfile".into(), s(&hostfile)]);
        for p in [0, 1] {
            let flags: Vec<String> = args.iter().cloned().chain(["-p".into(), p.to_string()]).collect();
            let err = dir.with_extension(format!("p{p}.err"));
            runs.push((start("records", &flags, &err, false), err));
        }
    } else {
        let err = dir.with_extension("err");
        runs.push((start("records", &args, &err, false), err));
    }
    let (mut p, _) = Producer::connect_retry(port);
    send_epochs(&mut p, texts, 1, texts.len() as u64);
    p.send("end\n").unwrap();
    let _ = p.line();
    for (mut run, err) in runs {
        let status = wait_exit(&mut run, PATIENCE, "an uninterrupted run");
        assert!(status.success(), "{extra:?}: {}", read(&err));
    }
}

/// Live records over TCP: an uninterrupted run checked against the plain computation at every
/// epoch (and, for one seed, two workers and two processes writing the same files); then the same epochs with refused record lines (a record the parser refuses, the
/// deletion of an absent record: `error N` naming it, the producer's pending lines of the epoch
/// not applied) and a SIGKILL + restart from the state directory (snapshots every 2 epochs,
/// records included): the files byte-identical to the uninterrupted run.
fn live_records_trial(seed: u64) {
    let files = Files::new();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (texts, expected) = record_texts(seed);
    // Every edge line is accounted for.
    let edge_lines = |t: &String| t.lines().filter(|l| !l.starts_with("record")).count();
    assert_eq!(texts.iter().map(edge_lines).sum::<usize>(), EPOCHS * BATCH, "seed {seed}");
    let dir = files.path("ref");
    uninterrupted_records_run(&files, &texts, &dir, &[]);
    let changes = read(&dir.join("deg.out.changes"));
    let got = states(&text_changes(&changes), EPOCHS as u64);
    let watching = expected.iter().filter(|e| !e.is_empty()).count();
    assert!(watching >= EPOCHS / 3, "seed {seed}: a stream that watches little ({watching} epochs)");
    for (epoch, want) in expected.iter().enumerate() {
        assert_eq!(&got[epoch], want, "seed {seed}: deg.out at epoch {epoch}");
    }
    let reference = ["deg.out.changes", "deg.out.out"].map(|n| (n, read(&dir.join(n))));
    if seed == 7300 {
        // Two workers, and two processes of one worker each, write what one worker writes.
        for (name, extra) in [("w2", vec!["-w", "2"]), ("n2", vec!["-n", "2"])] {
            let dir = files.path(name);
            uninterrupted_records_run(&files, &texts, &dir, &extra);
            for (file, text) in &reference {
                assert_eq!(&read(&dir.join(file)), text, "seed {seed}: {file} with {extra:?}");
            }
        }
    }

    let port = free_port();
    let (state, dir) = (files.path("state"), files.path("out"));
    let mut args: Vec<String> = vec!["--listen".into(), port.to_string(), "--state-dir".into(), s(&state)];
    args.extend(["--output-dir".into(), s(&dir), "--snapshot-every".into(), "2".into()]);
    let mut first = start("records", &args, &files.path("1.err"), false);
    let (mut p, _) = Producer::connect_retry(port);
    p.send("record + 3\n+ 1 2\nrecord + x\n").unwrap();
    let reply = p.line().unwrap();
    assert!(reply.starts_with("error 3: bad record \"x\": \"x\" is not a vertex"), "seed {seed}: {reply}");
    p.send("record - 11\n").unwrap();
    let reply = p.line().unwrap();
    assert_eq!(reply, "error 4: cannot delete record \"11\": no copy of it is present", "seed {seed}");
    let acked = rng.gen_range(2..EPOCHS as u64 - 1);
    send_epochs(&mut p, &texts, 1, acked);
    wait_written(&state, rng.gen_range(1..=acked));
    first.kill().unwrap();
    let _ = first.wait();
    drop(p);

    let mut second = start("records", &args, &files.path("2.err"), false);
    let (mut p, ready) = Producer::connect_retry(port);
    assert_eq!(ready, acked + 1, "seed {seed}: every acknowledged epoch is durable");
    send_epochs(&mut p, &texts, ready, EPOCHS as u64);
    p.send("end\n").unwrap();
    let _ = p.line();
    let status = wait_exit(&mut second, PATIENCE, "the restarted run");
    assert!(status.success(), "seed {seed}: {}", read(&files.path("2.err")));
    for (name, text) in &reference {
        assert_eq!(&read(&dir.join(name)), text, "seed {seed}: {name} (killed after {acked})");
    }
}

/// A followed file with a record the parser refuses: the run stops with the file, the line and
/// the parser's message, and the open epoch is not applied; a run whose dataflow reads no
/// records refuses a record line.
fn refused_records_on_a_followed_file() {
    let files = Files::new();
    let followed = files.write("f.txt", "+ 1 2\nrecord + 1\ncommit\n+ 1 3\nrecord + one\ncommit\nend\n");
    for (shape, line, problem) in [
        ("records", 5, "bad record \"one\": \"one\" is not a vertex: invalid digit found in string"),
        ("one", 2, "this run takes no records (no dataflow of it has a record input)"),
    ] {
        let dir = files.path(shape);
        let out = program(shape).args(["--follow", &s(&followed), "--output-dir", &s(&dir), "-q"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{shape}: {err}");
        assert!(err.contains(&format!("{}:{line}: {problem}", followed.display())), "{shape}: {err}");
        assert_eq!(err.lines().count(), 1, "{shape}: one line: {err}");
    }
    // The records run applied epoch 1 (vertex 1 watched, out-degree 1), not epoch 2.
    assert_eq!(read(&files.path("records").join("deg.out.changes")), "1 1 1 1\n");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("host") {
        std::process::exit(host(&args[2], args[3..].to_vec()));
    }
    let filter = args.iter().skip(1).find(|a| !a.starts_with('-')).cloned().unwrap_or_default();
    type Test = (&'static str, Box<dyn Fn()>);
    let tests: Vec<Test> = vec![
        (
            "sigkill_and_restart_continue_a_typed_stdout_change_log",
            Box::new(|| (0..TRIALS).for_each(|t| sigkill_stdout_trial(7100 + t))),
        ),
        (
            "sigkill_and_restart_leave_typed_files_byte_identical",
            Box::new(|| (0..TRIALS).for_each(|t| sigkill_files_trial(7200 + t))),
        ),
        ("restart_flag_two_processes_equal_one", Box::new(restart_flag_two_processes)),
        ("a_mark_without_the_output_is_refused", Box::new(a_mark_without_the_output_is_refused)),
        ("tumbling_windows_with_a_typed_output", Box::new(tumbling_windows_with_a_typed_output)),
        (
            "workers_and_processes_write_what_one_worker_does",
            Box::new(workers_and_processes_write_what_one_worker_does),
        ),
        ("typed_outputs_are_served_tables", Box::new(typed_outputs_are_served_tables)),
        ("a_key_beyond_bigint_stops_the_served_run", Box::new(a_key_beyond_bigint_stops_the_served_run)),
        (
            "live_records_over_tcp_survive_refusals_and_a_sigkill",
            Box::new(|| (0..3).for_each(|t| live_records_trial(7300 + t))),
        ),
        ("refused_records_on_a_followed_file", Box::new(refused_records_on_a_followed_file)),
    ];
    for (name, test) in tests.iter().filter(|(n, _)| n.contains(&filter)) {
        let started = std::time::Instant::now();
        test();
        println!("test {name} ... ok ({:.1} s)", started.elapsed().as_secs_f64());
    }
}
