//! `ripples experiment`: malformed files rejected before anything runs, failures recorded with
//! their kind (an out-of-memory cell under `memory_limit_mb` among them), resume after a stop or
//! a kill without re-running finished cells, compare, several processes per cell, the COST
//! figure, event-time latency.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::process::{bin, read, s, Files, PATIENCE};
use serde_json::Value;

/// An experiment file: the keys every test shares, `top` (more top-level keys), a tiny
/// generated dataset, then `tables`.
fn experiment(top: &str, tables: &str) -> String {
    format!(
        "seed = 5\ntimeout_secs = 60\nalgorithms = [\"wcc\"]\nbatch_sizes = [300]\n{top}\n\n\
         [[datasets]]\nname = \"tiny\"\nkind = \"rmat\"\nscale = 7\nedge_factor = 4\n\n{tables}"
    )
}

fn records(path: &std::path::Path) -> Vec<Value> {
    read(path).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn run(files: &Files, toml: &str, extra: &[&str]) -> std::process::Output {
    let file = files.write("e.toml", toml);
    let out = files.path("out");
    let mut cmd = bin();
    cmd.args(["experiment", "run", &s(&file), "--out", &s(&out), "-q"]).args(extra);
    cmd.output().unwrap()
}

/// Each malformed file is an error naming file, line and key, exit status 2, and nothing is
/// created.
#[test]
fn malformed_files_name_file_line_and_key() {
    let cases: &[(&str, &str, &str)] = &[
        ("seed = 1\nalgorithms = [\"wcc\"]\nbogus = 3\n", ":3: bogus:", "unknown field `bogus`"),
        ("algorithms = [\"wcc\"]\nrepetitions = \"five\"\n", ":2: repetitions:", "invalid type"),
        ("algorithms = [\"wcc\"]\nrepetitions = 0\n[[datasets]]\nname = \"a\"\nkind = \"rmat\"\nscale = 3\n", ":2: repetitions:", "at least 1"),
        ("algorithms = [\"wcc\",\n  \"nope\"]\n[[datasets]]\nname = \"a\"\nkind = \"rmat\"\nscale = 3\n", ":2: algorithms:", "unknown \"nope\""),
        ("algorithms = [\"wcc\"]\nsystems = [\"ripples\", \"mine\"]\n[[datasets]]\nname = \"a\"\nkind = \"rmat\"\nscale = 3\n", ":2: systems:", "unknown \"mine\""),
        ("algorithms = [\"wcc\"]\n\n[[datasets]]\nname = \"a\"\nkind = \"graph500\"\n", ":3: datasets.kind:", "unknown dataset kind"),
        ("algorithms = [\"wcc\"]\n[[datasets]]\nname = \"a\"\nkind = \"file\"\npath = \"missing.e\"\n", ":2: datasets.path:", "is not a file"),
        ("algorithms = [\"wcc\"]\nstreams = [\"insert\", \"sideways\"]\n[[datasets]]\nname = \"a\"\nkind = \"rmat\"\nscale = 3\n", ":2: streams:", "unknown \"sideways\""),
        ("algorithms = [\"wcc\"]\nstreams = [\"event-tumbling\"]\n[[datasets]]\nname = \"a\"\nkind = \"rmat\"\nscale = 3\n", ":2: streams:", "`event-tumbling` needs a temporal dataset"),
        ("algorithms = [\"wcc\"]\nprocesses = [1, 0]\n[[datasets]]\nname = \"a\"\nkind = \"rmat\"\nscale = 3\n", ":2: processes:", "at least 1"),
        ("algorithms = [\"wcc\"]\n\nmemory_limit_mb = 0\n[[datasets]]\nname = \"a\"\nkind = \"rmat\"\nscale = 3\n", ":3: memory_limit_mb:", "at least 1"),
        ("algorithms = [\"wcc\"]\n[stream]\nwindow = 5\nspeed = 2\n[[datasets]]\nname = \"a\"\nkind = \"rmat\"\nscale = 3\n", ":4: speed:", "unknown field `speed`"),
    ];
    for (toml, at, problem) in cases {
        let files = Files::new();
        let out = run(&files, toml, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{toml}\n{err}");
        let file = s(&files.path("e.toml"));
        assert!(err.contains(&format!("{file}{at}")), "want {file}{at} in:\n{err}\nfor:\n{toml}");
        assert!(err.contains(problem), "want {problem:?} in:\n{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!files.path("out").exists(), "nothing may run or be written for a malformed file");
    }
}

/// A timeout, a wrong result, a crash and a success are all recorded, each with its kind; the
/// report lists the failures.
#[test]
fn failures_are_recorded_with_their_kind() {
    let files = Files::new();
    let toml = experiment(
        r#"repetitions = 1
systems = ["ripples", "sleeper", "liar", "crasher"]"#,
        r#"[commands.sleeper]
command = ["sleep", "30"]

[commands.liar]
command = ["sh", "-c", "echo '0 999999' > {output}"]

[commands.crasher]
command = ["sh", "-c", "echo 'out of luck' >&2; exit 3"]
"#,
    )
    .replace("timeout_secs = 60", "timeout_secs = 4");
    let started = Instant::now();
    let out = run(&files, &toml, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(25), "the sleeper must be killed at its 4 s timeout");
    let recs = records(&files.path("out/results.jsonl"));
    assert_eq!(recs.len(), 4);
    let status = |system: &str| {
        let r = recs.iter().find(|r| r["cell"]["system"] == system).unwrap();
        (r["status"].as_str().unwrap().to_string(), r["failure"].as_str().unwrap_or("").to_string(), r.clone())
    };
    let (st, _, ok) = status("ripples");
    assert_eq!(st, "ok");
    assert_eq!(ok["agrees"], true);
    let cpu =
        ok["metrics"]["cpu_user_seconds"].as_f64().unwrap() + ok["metrics"]["cpu_system_seconds"].as_f64().unwrap();
    assert!(cpu > 0.0, "the child's rusage: {}", ok["metrics"]);
    assert!(ok["metrics"]["peak_rss_bytes"].as_u64().unwrap() > 1 << 20);
    assert!(ok["env"]["git_rev"].is_string() && ok["env"]["cores"].as_u64().unwrap() >= 1);
    assert_eq!(ok["dataset"]["name"], "tiny");
    let (st, why, r) = status("sleeper");
    assert_eq!(st, "timeout", "{why}");
    assert!(r["wall_seconds"].as_f64().unwrap() < 10.0);
    let (st, why, r) = status("liar");
    assert_eq!(st, "wrong-result", "{why}");
    assert_eq!(r["agrees"], false);
    let (st, why, _) = status("crasher");
    assert_eq!(st, "crashed");
    assert!(why.contains("exit status 3") && why.contains("out of luck"), "{why}");
    let report = read(&files.path("out/report.md"));
    assert!(report.contains("1 ok, 3 failed"), "{report}");
    for kind in ["| timeout |", "| wrong-result |", "| crashed |"] {
        assert!(report.contains(kind), "{kind} in\n{report}");
    }
    let csv = read(&files.path("out/results.csv"));
    assert!(csv.lines().any(|l| l.contains(",sleeper,") && l.contains(",timeout,")), "{csv}");

    // --rerun-failed runs the three failed cells again (and only them).
    let again = run(&files, &toml, &["--rerun-failed"]);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("3 cell(s) run (3 failed), 1 skipped"), "{err}");
    assert_eq!(records(&files.path("out/results.jsonl")).len(), 7);
}

fn keys(recs: &[Value]) -> Vec<String> {
    recs.iter().map(|r| r["key"].as_str().unwrap().to_string()).collect()
}

/// Stopped after 2 cells, the run refuses to start over without --resume; --resume runs the
/// other cells only, keeping the finished records as they were.
#[test]
fn resume_after_max_cells_runs_only_the_rest() {
    let files = Files::new();
    let toml = experiment("repetitions = 3\nworkers = [1, 2]", "");
    let first = run(&files, &toml, &["--max-cells", "2"]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let path = files.path("out/results.jsonl");
    let before = read(&path);
    assert_eq!(before.lines().count(), 2);

    let refused = run(&files, &toml, &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--resume"));
    assert_eq!(read(&path), before, "a refused run writes nothing");

    let resumed = run(&files, &toml, &["--resume"]);
    let err = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{err}");
    assert!(err.contains("4 cell(s) run (0 failed), 2 skipped"), "{err}");
    let after = read(&path);
    assert!(after.starts_with(&before), "finished records are kept as they were");
    let recs = records(&path);
    let unique: BTreeSet<String> = keys(&recs).into_iter().collect();
    assert_eq!((recs.len(), unique.len()), (6, 6), "every cell once");
    let cells: BTreeSet<(u64, u64)> = recs
        .iter()
        .map(|r| (r["cell"]["workers"].as_u64().unwrap(), r["cell"]["repetition"].as_u64().unwrap()))
        .collect();
    assert_eq!(cells.len(), 6);

    // Nothing left: a further --resume runs nothing.
    let idle = run(&files, &toml, &["--resume"]);
    assert!(String::from_utf8_lossy(&idle.stderr).contains("0 cell(s) run (0 failed), 6 skipped"));
    assert_eq!(read(&path), after);
}

/// Killed (SIGKILL) while it runs, the experiment resumes: the records written before the kill
/// stay, each cell ends with exactly one record.
#[test]
fn resume_after_a_kill() {
    let files = Files::new();
    let toml = experiment("repetitions = 6\nworkers = [1, 2]", "");
    let file = files.write("e.toml", &toml);
    let out = files.path("out");
    let path = out.join("results.jsonl");
    let mut child = bin().args(["experiment", "run", &s(&file), "--out", &s(&out), "-q"]).spawn().unwrap();
    let deadline = Instant::now() + PATIENCE;
    // Kill it once two records are there.
    while std::fs::read_to_string(&path).map(|t| t.lines().count()).unwrap_or(0) < 2 {
        assert!(Instant::now() < deadline, "no records written");
        assert!(child.try_wait().unwrap().is_none(), "the run finished before it could be killed");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // A record cut short by the kill (made sure of here) is dropped on resume.
    let mut before = read(&path);
    if before.ends_with('\n') {
        before.push_str("{\"key\":\"cut sh");
        std::fs::write(&path, &before).unwrap();
    }
    let done = before.lines().filter(|l| l.ends_with('}')).count();
    assert!(done < 12, "killed midway ({done} of 12 recorded)");

    let resumed = run(&files, &toml, &["--resume"]);
    let err = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{err}");
    assert!(err.contains(&format!("{} cell(s) run (0 failed), {} skipped", 12 - done, done)), "{err}");
    let recs = records(&path);
    let unique: BTreeSet<String> = keys(&recs).into_iter().collect();
    assert_eq!((recs.len(), unique.len()), (12, 12));
    let complete: String = before.lines().filter(|l| l.ends_with('}')).map(|l| format!("{l}\n")).collect();
    assert!(read(&path).starts_with(&complete), "records written before the kill are kept");
}

/// Records with their throughput set to `f(repetition)`.
fn with_throughput(recs: &[Value], f: impl Fn(u64) -> f64) -> String {
    recs.iter()
        .map(|r| {
            let mut r = r.clone();
            r["metrics"]["updates_per_sec"] = Value::from(f(r["cell"]["repetition"].as_u64().unwrap()));
            format!("{}\n", r)
        })
        .collect()
}

/// compare: a result file against itself changes nothing; a throughput twice as high is flagged
/// better, one 2% higher is within the noise threshold.
#[test]
fn compare_flags_only_real_changes() {
    let files = Files::new();
    let toml = experiment("repetitions = 3", "");
    assert!(run(&files, &toml, &[]).status.success());
    let recs = records(&files.path("out/results.jsonl"));
    // Repetitions at 99, 100, 101 (x scale): a known, small noise.
    let noisy = |scale: f64| move |rep: u64| scale * (99.0 + rep as f64);
    let a = files.write("a.jsonl", &with_throughput(&recs, noisy(1.0)));
    let compare = |b: &std::path::Path| {
        let o = bin().args(["experiment", "compare", &s(&a), &s(b)]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        let row = text.lines().find(|l| l.contains("updates_per_sec")).unwrap_or_else(|| panic!("{text}")).to_string();
        (row, text)
    };
    let (row, text) = compare(&a);
    assert!(row.contains(" 1.000 ") && row.ends_with(" ~"), "{text}");
    assert!(text.lines().any(|l| l.contains("p99_ms") && l.ends_with(" ~")), "{text}");
    let (row, text) = compare(&files.write("b.jsonl", &with_throughput(&recs, noisy(2.0))));
    assert!(row.contains(" 2.000 ") && row.ends_with(" better"), "{text}");
    let (row, text) = compare(&files.write("c.jsonl", &with_throughput(&recs, noisy(0.5))));
    assert!(row.contains(" 0.500 ") && row.ends_with(" worse"), "{text}");
    let (row, text) = compare(&files.write("d.jsonl", &with_throughput(&recs, noisy(1.02))));
    assert!(row.contains(" 1.020 ") && row.ends_with(" ~"), "2% is within the 5% threshold: {text}");
}

/// Event-time windows over the vendored temporal data: `ripples run --window` / `--tumbling`
/// agrees with the oracle over the last window's edges.
#[test]
fn event_time_windows_over_real_data() {
    let files = Files::new();
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/temporal/ward_contacts.tsv");
    let toml = format!(
        r#"repetitions = 1
algorithms = ["wcc", "degree"]
batch_sizes = [5000]
streams = ["event-sliding", "event-tumbling", "timestamp"]

[stream]
span = 3600

[[datasets]]
name = "ward"
kind = "temporal"
path = "{data}"
format = "csv"
delimiter = "tab"
columns = ["t", "i", "j", "si", "sj"]
src_column = "i"
dst_column = "j"
time_column = "t"
"#
    );
    let out = run(&files, &toml, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recs = records(&files.path("out/results.jsonl"));
    assert_eq!(recs.len(), 6);
    for r in &recs {
        assert_eq!((r["status"].as_str(), r["agrees"].as_bool()), (Some("ok"), Some(true)), "{r}");
        assert_eq!(r["dataset"]["edges"], 32_424);
        assert!(r["command"].as_array().unwrap().len() > 5);
    }
    let windowed = recs.iter().filter(|r| r["command"].as_array().unwrap().iter().any(|a| a == "--tumbling")).count();
    assert_eq!(windowed, 2);

    // Event-time latency, against an oracle over the stream file: an epoch (5000 lines) closes
    // tumbling windows when the largest event time so far enters a later hour; its event-time
    // latency is its epoch latency in the cell's stats file.
    let stream = read(&files.path("out/streams/ward-event-tumbling-s1.u"));
    let times: Vec<u64> = stream.lines().map(|l| l.rsplit_once('@').unwrap().1.parse().unwrap()).collect();
    let (mut max, mut closing) = (0u64, Vec::new());
    for (i, chunk) in times.chunks(5000).enumerate() {
        let before = max / 3600;
        max = max.max(*chunk.iter().max().unwrap());
        if max / 3600 > before {
            closing.push(i as u64 + 1);
        }
    }
    assert!(closing.len() > 1, "{closing:?}");
    for r in &recs {
        let m = &r["metrics"];
        let events: Vec<f64> = m["event_latencies_ms"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_f64().unwrap()).collect())
            .unwrap_or_default();
        match r["cell"]["stream"].as_str().unwrap() {
            "event-tumbling" => {
                let stats = read(&files.path("out/cells").join(r["key"].as_str().unwrap()).join("stats.jsonl"));
                let want: Vec<f64> = stats
                    .lines()
                    .map(|l| serde_json::from_str::<Value>(l).unwrap())
                    .filter(|e| e["epoch"].as_u64().is_some_and(|e| closing.contains(&e)))
                    .map(|e| e["latency_ms"].as_f64().unwrap())
                    .collect();
                assert_eq!(events, want, "{}", r["cell"]);
                let p99 = m["event_latency"]["p99_ms"].as_f64().unwrap();
                let top = want.iter().cloned().fold(0.0, f64::max);
                assert!(p99 <= top && p99 >= top * 0.99, "p99 {p99} of {want:?}");
                assert!(m["event_latency_histogram"].as_str().is_some_and(|h| !h.is_empty()));
            }
            "event-sliding" => assert!(!events.is_empty() && m["event_latency"]["p50_ms"].as_f64().is_some()),
            _ => assert!(events.is_empty() && m["event_latency"].is_null(), "{}", r["cell"]),
        }
    }
    let report = read(&files.path("out/report.md"));
    assert!(report.contains("| ward/event-tumbling/wcc/ripples/w1/b5000 | event | "), "{report}");
}

/// Two processes per cell (`processes = [1, 2]`) on loopback ports of each cell's own: every
/// layout's result agrees with the sequential reference (so with every other layout).
#[test]
fn processes_are_a_sweep_dimension() {
    let files = Files::new();
    let toml = experiment(
        "repetitions = 1\nprofile = true\nworkers = [1, 2]\nprocesses = [1, 2]\nstreams = [\"churn\"]\n[stream]\nchurn_updates = 600",
        "",
    );
    let out = run(&files, &toml, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recs = records(&files.path("out/results.jsonl"));
    let mut layouts: Vec<(u64, u64)> = recs
        .iter()
        .map(|r| (r["cell"]["workers"].as_u64().unwrap(), r["cell"]["processes"].as_u64().unwrap_or(1)))
        .collect();
    layouts.sort();
    assert_eq!(layouts, [(1, 1), (1, 2), (2, 1), (2, 2)]);
    let mut ports = BTreeSet::new();
    for r in &recs {
        assert_eq!((r["status"].as_str(), r["agrees"].as_bool()), (Some("ok"), Some(true)), "{r}");
        assert!(r["env"]["rustc"].as_str().unwrap().starts_with("rustc "), "{r}");
        let cmd: Vec<&str> = r["command"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        if r["cell"]["processes"] == 2 {
            assert!(cmd.windows(2).any(|w| w == ["-n", "2"]) && cmd.contains(&"--hostfile"), "{cmd:?}");
            assert!(r["cell"].to_string().contains("\"processes\":2"));
            let hosts = read(&files.path("out/cells").join(r["key"].as_str().unwrap()).join("hosts.txt"));
            assert_eq!(hosts.lines().count(), 2, "{hosts}");
            ports.extend(hosts.lines().map(String::from));
        } else {
            assert!(!cmd.contains(&"-n") && r["cell"].get("processes").is_none(), "one process: keys as before");
        }
        assert!(r["metrics"]["latency_histogram"].as_str().is_some_and(|h| !h.is_empty()));
        // `profile = true`: every cell's profile covers every worker of every process.
        let cell = files.path("out/cells").join(r["key"].as_str().unwrap());
        let profile: ripples::types::profile::Profile =
            serde_json::from_str(&read(&cell.join("profile.json"))).unwrap();
        let workers = r["cell"]["workers"].as_u64().unwrap() * r["cell"]["processes"].as_u64().unwrap_or(1);
        assert_eq!(profile.workers.len() as u64, workers, "{r}");
    }
    assert_eq!(ports.len(), 4, "every process of every cell on a port of its own: {ports:?}");
    let report = read(&files.path("out/report.md"));
    assert!(report.contains("| tiny/churn/wcc/ripples/w2/n2/b300 |"), "{report}");
}

/// `ripples-shares` is `ripples run` with WCC's per-worker forests: it sweeps the processes as
/// `ripples` does, its cells pass `--wcc-layout shares`, their results agree with the oracle, and
/// the report has a COST line for it.
#[test]
fn ripples_shares_is_the_shares_layout() {
    let files = Files::new();
    let toml = experiment(
        "repetitions = 1\nworkers = [1, 2]\nprocesses = [1, 2]\nstreams = [\"churn\"]\n\
         systems = [\"ripples\", \"ripples-shares\", \"bench:recompute\"]\n[stream]\nchurn_updates = 600",
        "",
    );
    let out = run(&files, &toml, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recs = records(&files.path("out/results.jsonl"));
    let mut shares = Vec::new();
    for r in &recs {
        assert_eq!((r["status"].as_str(), r["agrees"].as_bool()), (Some("ok"), Some(true)), "{r}");
        let cmd: Vec<&str> = r["command"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        let layout = cmd.windows(2).any(|w| w == ["--wcc-layout", "shares"]);
        assert_eq!(layout, r["cell"]["system"] == "ripples-shares", "{cmd:?}");
        if layout {
            shares.push((r["cell"]["workers"].as_u64().unwrap(), r["cell"]["processes"].as_u64().unwrap_or(1)));
        }
    }
    shares.sort();
    assert_eq!(shares, [(1, 1), (1, 2), (2, 1), (2, 2)]);
    let report = read(&files.path("out/report.md"));
    assert!(report.contains("| tiny/churn/wcc/ripples-shares/w1/n2/b300 |"), "{report}");
    assert!(report.contains("| tiny | wcc | churn | 300 | ripples-shares | 2 | bench:recompute |"), "{report}");
}

/// A cell under `memory_limit_mb` that runs out of memory is recorded as `oom`, with the limit:
/// 70 MiB of address space starts `ripples run` (about 45 are needed) but does not hold a
/// 500,000-edge graph (about 110); the tiny graph under a generous limit is `ok`.
#[test]
fn a_cell_that_runs_out_of_memory_is_recorded_as_oom() {
    for (limit, scale, want) in
        [(70, "scale = 15\nedge_factor = 16", "oom"), (4000, "scale = 7\nedge_factor = 4", "ok")]
    {
        let files = Files::new();
        let toml = experiment(&format!("repetitions = 1\nmemory_limit_mb = {limit}"), "")
            .replace("scale = 7\nedge_factor = 4", scale)
            .replace("batch_sizes = [300]", "batch_sizes = [20000]");
        let out = run(&files, &toml, &[]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let recs = records(&files.path("out/results.jsonl"));
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0]["status"], want, "limit {limit} MiB: {}", recs[0]);
        assert_eq!(recs[0]["memory_limit_mb"], limit);
        if want == "oom" {
            let failure = recs[0]["failure"].as_str().unwrap();
            assert!(failure.contains("memory allocation of") && failure.contains("limit 70 MiB"), "{failure}");
            let report = read(&files.path("out/report.md"));
            assert!(report.contains("| oom |"), "{report}");
        }
    }
}

/// The COST figure: against a baseline slower than ripples on one worker, COST is 1; against one
/// that claims to be faster than anything, it is "not reached". Both in figures.json and in the
/// report's table.
#[test]
fn cost_against_a_slow_and_a_fast_baseline() {
    // Both run `ripples run` (their result agrees) through `sh -c SCRIPT RIPPLES ARGS...`.
    let ripples = r#""{ripples}", "run", "wcc", "--graph", "{graph}", "--updates", "{updates}", "--batch", "{batch}", "--output", "{output}", "-q""#;
    // Slow: a second's nap, then no stats file (updates over the wall time).
    let slow = format!("[commands.slow]\ncommand = [\"sh\", \"-c\", 'sleep 1 && exec \"$0\" \"$@\"', {ripples}]\n");
    // Fast: epoch latencies (and busy times, which the update time is summed from) of a
    // nanosecond in its stats file.
    let fast = format!(
        "[commands.fast]\ncommand = [\"sh\", \"-c\", '\"$0\" \"$@\" --stats {{stats}} && sed -i -E \"s/\\\"(latency|busy)_ms\\\":[^,]*/\\\"\\\\1_ms\\\":0.000001/g\" {{stats}}', {ripples}]\n"
    );
    for (name, table, want) in [("slow", &slow, Some(1)), ("fast", &fast, None)] {
        let files = Files::new();
        let toml = experiment(
            &format!(
                "repetitions = 1\nworkers = [1, 2]\nstreams = [\"insert-random\"]\nsystems = [\"ripples\", \"{name}\"]"
            ),
            table,
        );
        let out = run(&files, &toml, &[]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let recs = records(&files.path("out/results.jsonl"));
        assert_eq!(recs.len(), 4, "{recs:?}");
        for r in &recs {
            assert_eq!((r["status"].as_str(), r["agrees"].as_bool()), (Some("ok"), Some(true)), "{r}");
        }
        let figures: Value = serde_json::from_str(&read(&files.path("out/figures.json"))).unwrap();
        let scaling = figures.as_array().unwrap().iter().find(|p| p["kind"] == "scaling").expect("a scaling panel");
        let costs = scaling["costs"].as_array().unwrap();
        assert_eq!(costs.len(), 1, "{costs:?}");
        assert_eq!(costs[0]["baseline"], name);
        assert_eq!(costs[0]["workers"].as_u64(), want, "{name}: {costs:?}");
        assert!(scaling["series"].as_array().unwrap().iter().any(|s| s["baseline"] == true));
        // The latency and memory panels name each cell by its workers and batch.
        for kind in ["latency_ccdf", "rss", "latency_run"] {
            let panel = figures.as_array().unwrap().iter().find(|p| p["kind"] == kind);
            let panel = panel.unwrap_or_else(|| panic!("no {kind} panel in {figures}"));
            let labels: Vec<&str> =
                panel["series"].as_array().unwrap().iter().filter_map(|s| s["label"].as_str()).collect();
            for w in ["w1", "w2"] {
                assert!(labels.contains(&format!("insert-random ripples {w} b300").as_str()), "{kind}: {labels:?}");
            }
            for l in &labels {
                assert!(
                    [format!("insert-random {name} w1 b300"), format!("insert-random {name} w2 b300")]
                        .contains(&l.to_string())
                        || l.starts_with("insert-random ripples w"),
                    "{kind}: {l:?}"
                );
            }
        }
        let cost = want.map_or("not reached".to_string(), |w| w.to_string());
        let report = read(&files.path("out/report.md"));
        assert!(report.contains(&format!("| tiny | wcc | insert-random | 300 | ripples | 1 | {name} |")), "{report}");
        assert!(
            report.lines().any(|l| l.starts_with("| tiny | wcc |") && l.ends_with(&format!("| {cost} |"))),
            "{report}"
        );
    }
}

/// The systems of `ripples bench` run as `bench:NAME` over the experiment's own streams, only
/// where they apply, and agree with the reference.
#[test]
fn bench_systems_run_where_they_apply() {
    let files = Files::new();
    let toml = experiment(
        "repetitions = 1\nsystems = [\"bench:uf-dense\", \"bench:recompute\"]\nstreams = [\"insert\", \"churn\"]\n[stream]\nchurn_updates = 600",
        "",
    );
    let out = run(&files, &toml, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recs = records(&files.path("out/results.jsonl"));
    let mut cells: Vec<(String, String)> = recs
        .iter()
        .map(|r| (r["cell"]["stream"].as_str().unwrap().into(), r["cell"]["system"].as_str().unwrap().into()))
        .collect();
    cells.sort();
    // uf-dense is insert-only: no churn cell.
    let want = [("churn", "bench:recompute"), ("insert", "bench:recompute"), ("insert", "bench:uf-dense")];
    assert_eq!(cells, want.map(|(a, b)| (a.to_string(), b.to_string())));
    for r in &recs {
        assert_eq!((r["status"].as_str(), r["agrees"].as_bool()), (Some("ok"), Some(true)), "{r}");
        assert!(r["metrics"]["updates_per_sec"].as_f64().unwrap() > 0.0);
        assert!(r["metrics"]["latency"]["p90_ms"].is_null(), "bench systems do not report p90");
    }
}
