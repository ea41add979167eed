//! `ripples experiment`: malformed files rejected before anything runs, failures recorded with
//! their kind, resume after a stop or a kill without re-running finished cells, compare.

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
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/temporal/hospital_ward.tsv");
    let toml = format!(
        r#"repetitions = 1
algorithms = ["wcc", "degree"]
batch_sizes = [5000]
streams = ["event-sliding", "event-tumbling", "timestamp"]

[stream]
span = 3600

[[datasets]]
name = "hospital"
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
