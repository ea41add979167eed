//! The `ripples` binary: the command-line contract, checked end to end.
//!
//! * `--changes` accumulated per epoch equals the sequential oracle at every epoch, and
//!   `--output` equals the final state;
//! * 1 worker, 3 workers and 2 processes on 127.0.0.1 write byte-identical files;
//! * bad input stops the run with `file:line: problem`, exit status 2, and no output written.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::process::{bin, free_port, Files};
use common::*;

fn ripples(args: &[&str]) -> Output {
    bin().args(args).output().expect("ripples runs")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn write_stream(files: &Files, stream: &RandomStream) -> (PathBuf, PathBuf, PathBuf) {
    let g: String = stream.initial.iter().map(|(a, b)| format!("{} {}\n", a, b)).collect();
    let v: String = stream.vertices.iter().map(|a| format!("{}\n", a)).collect();
    let mut u = String::from("# an update stream\n");
    for up in stream.epochs.iter().flatten() {
        u.push_str(&format!("{} {} {}\n", if up.diff > 0 { "+" } else { "-" }, up.src, up.dst));
    }
    (files.write("g.e", &g), files.write("g.v", &v), files.write("u.txt", &u))
}

fn run_wcc(files: &Files, tag: &str, extra: &[&str]) -> (String, String, String) {
    let changes = files.path(&format!("{}-changes.txt", tag));
    let output = files.path(&format!("{}-output.txt", tag));
    let stats = files.path(&format!("{}-stats.json", tag));
    let mut args = vec![
        "run",
        "wcc",
        "--graph",
        s(&files.path("g.e")).to_string().leak(),
        "--vertices",
        s(&files.path("g.v")).to_string().leak(),
        "--updates",
        s(&files.path("u.txt")).to_string().leak(),
        "--batch",
        "4",
        "--changes",
        s(&changes).to_string().leak(),
        "--output",
        s(&output).to_string().leak(),
        "--stats",
        s(&stats).to_string().leak(),
        "-q",
    ];
    args.extend_from_slice(extra);
    let out = ripples(&args);
    assert!(out.status.success(), "ripples failed: {}", String::from_utf8_lossy(&out.stderr));
    (
        std::fs::read_to_string(changes).unwrap(),
        std::fs::read_to_string(output).unwrap(),
        std::fs::read_to_string(stats).unwrap(),
    )
}

#[test]
fn changes_and_output_match_the_oracle_at_every_epoch() {
    for seed in [3u64, 4] {
        let files = Files::new();
        let stream = rebatch(&random_stream(seed, 30, 25, 12, 4), 4);
        write_stream(&files, &stream);
        let (changes, output, stats) = run_wcc(&files, "one", &["-w", "1"]);
        let parsed = parse_changes(&changes);
        let states = states_per_epoch(&parsed, stream.epochs.len() as u64);
        let expected = edge_counts_per_epoch(&stream);
        for (epoch, counts) in expected.iter().enumerate() {
            let (vs, es) = oracle_input(&stream.vertices, counts);
            assert_eq!(states[epoch], ripples::oracle::wcc(&vs, &es), "seed {} epoch {}", seed, epoch);
        }
        let last: String = states.last().unwrap().iter().map(|(k, v)| format!("{} {}\n", k, v)).collect();
        assert_eq!(output, last, "seed {}: --output is not the final state", seed);
        // One JSON object per epoch plus the summary.
        let lines: Vec<serde_json::Value> = stats.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), stream.epochs.len() + 2);
        assert_eq!(lines[0]["epoch"], 0);
        assert!(lines[1]["latency_ms"].as_f64().unwrap() >= 0.0);
        let summary = lines.last().unwrap();
        assert_eq!(summary["summary"], true);
        assert_eq!(summary["updates"].as_u64().unwrap(), stream.epochs.iter().map(|e| e.len() as u64).sum::<u64>());
        assert!(summary["latency"]["p99_ms"].as_f64().is_some());
    }
}

#[test]
fn one_worker_three_workers_and_two_processes_write_identical_files() {
    identical_files_across_layouts(&rebatch(&random_stream(21, 50, 40, 15, 4), 4));
}

/// The insert-only path (local forests, a merge at process 0) in the same layouts.
#[test]
fn insert_only_runs_write_identical_files_in_every_layout() {
    let churn = random_stream(22, 60, 40, 30, 4);
    let inserts = RandomStream {
        epochs: vec![churn.epochs.iter().flatten().copied().filter(|u| u.diff > 0).collect()],
        ..churn.clone()
    };
    identical_files_across_layouts(&rebatch(&inserts, 4));
}

/// `--changes` and `--output` of `stream` (epochs of 4) with 1 worker, 3 workers and 2
/// processes of 2 workers: byte-identical.
fn identical_files_across_layouts(stream: &RandomStream) {
    let files = Files::new();
    write_stream(&files, stream);
    let one = run_wcc(&files, "w1", &["-w", "1"]);
    let three = run_wcc(&files, "w3", &["-w", "3"]);
    assert_eq!(one.0, three.0, "--changes differ between 1 and 3 workers");
    assert_eq!(one.1, three.1, "--output differs between 1 and 3 workers");

    let hostfile = files.write("hosts", &format!("127.0.0.1:{}\n127.0.0.1:{}\n", free_port(), free_port()));
    let mut children = Vec::new();
    for p in 0..2 {
        let dir = files.path(&format!("p{}", p));
        std::fs::create_dir_all(&dir).unwrap();
        let child = bin()
            .args([
                "run",
                "wcc",
                "--graph",
                s(&files.path("g.e")),
                "--vertices",
                s(&files.path("g.v")),
                "--updates",
                s(&files.path("u.txt")),
                "--batch",
                "4",
                "--changes",
                s(&dir.join("changes.txt")),
                "--output",
                s(&dir.join("output.txt")),
                "-q",
                "-w",
                "2",
                "-n",
                "2",
                "-p",
                &p.to_string(),
                "--hostfile",
                s(&hostfile),
            ])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        children.push(child);
    }
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "process failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let changes = std::fs::read_to_string(files.path("p0/changes.txt")).unwrap();
    let output = std::fs::read_to_string(files.path("p0/output.txt")).unwrap();
    assert_eq!(one.0, changes, "--changes differ between 1 process and 2 processes");
    assert_eq!(one.1, output, "--output differs between 1 process and 2 processes");
    assert!(!files.path("p1/changes.txt").exists(), "only process 0 writes");
}

/// Runs with a bad file and checks status 2, the message, and that nothing was written.
fn expect_bad_input(graph: &str, updates: Option<&str>, needle: &str) {
    let files = Files::new();
    let g = files.write("bad.e", graph);
    let changes = files.path("changes.txt");
    let mut args = vec!["run".to_string(), "wcc".into(), "--graph".into(), s(&g).into()];
    if let Some(u) = updates {
        let u = files.write("bad.u", u);
        args.extend(["--updates".into(), s(&u).to_string(), "--batch".into(), "1".into()]);
    }
    args.extend(["--changes".into(), s(&changes).to_string(), "-w".into(), "2".into()]);
    let out = bin().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit status for {:?}; stderr: {}", needle, stderr);
    assert!(stderr.contains(needle), "stderr should contain {:?}, was: {}", needle, stderr);
    assert!(!stderr.contains("panicked"), "panic: {}", stderr);
    assert!(!changes.exists(), "nothing may be written on bad input");
}

#[test]
fn too_few_fields() {
    expect_bad_input("1 2\n3\n", None, "bad.e:2: too few fields");
}

#[test]
fn non_number() {
    expect_bad_input("1 2\n# fine\n\n1 x\n", None, "bad.e:4: \"x\" is not a vertex id");
}

#[test]
fn negative_id() {
    expect_bad_input("1 -2\n", None, "bad.e:1: negative vertex id \"-2\"");
}

#[test]
fn overflowing_id() {
    expect_bad_input("1 2\n18446744073709551616 1\n", None, "bad.e:2: vertex id \"18446744073709551616\" is too large");
}

#[test]
fn nan_weight() {
    expect_bad_input("1 2 0.5\n2 3 NaN\n", None, "bad.e:2: weight \"NaN\" is NaN");
}

#[test]
fn unknown_sign() {
    expect_bad_input("1 2\n", Some("+ 2 3\n* 3 4\n"), "bad.u:2: unknown sign \"*\"");
}

#[test]
fn deleting_an_edge_that_is_not_present() {
    // The second deletion of 1-2 removes a copy that is no longer there (epoch 3).
    expect_bad_input("1 2\n", Some("+ 2 3\n- 1 2\n- 1 2\n"), "bad.u:3: deletion of edge 1 -> 2");
}

#[test]
fn error_in_a_late_part_of_a_large_file_is_found_by_its_worker() {
    let mut g = String::new();
    for i in 0..20_000u64 {
        g.push_str(&format!("{} {}\n", i, i + 1));
    }
    g.push_str("5 five\n");
    expect_bad_input(&g, None, "bad.e:20001: \"five\" is not a vertex id");
}

#[test]
fn missing_file_unknown_algorithm_and_bad_flag() {
    let out = ripples(&["run", "wcc", "--graph", "/nonexistent/graph.e"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot read /nonexistent/graph.e"), "{}", err);

    let out = ripples(&["run", "nosuch", "--graph", "/nonexistent/graph.e"]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown algorithm 'nosuch'"), "{}", err);

    let out = ripples(&["run", "wcc", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-flag"));

    let out = ripples(&["run", "wcc", "--batch", "0", "--updates", "/dev/null"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--batch must be at least 1"));

    let out = ripples(&["run", "wcc", "-n", "2", "-p", "2"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--process 2 is out of range"));
}

/// A bad value of a WCC tuning flag stops `ripples run` with status 2 and a message naming the
/// flag, before anything runs; good values run.
#[test]
fn bad_wcc_tuning_flags_are_usage_errors() {
    let files = Files::new();
    let g = files.write("g.e", "1 2\n");
    for (flag, needle) in [
        ("--wcc-fallback-budget=-1", "the fallback budget factor must be a number >= 0"),
        ("--wcc-fallback-budget=NaN", "the fallback budget factor must be a number >= 0"),
        ("--wcc-fallback-budget=lots", "'lots' is not a number"),
        ("--wcc-layout=yes", "'yes' is not a layout: give single or shares"),
    ] {
        let out = bin().args(["run", "wcc", "--graph", s(&g), "-q", flag]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        let name = flag.split('=').next().unwrap();
        assert!(
            stderr.contains(needle) && stderr.contains(name),
            "{flag}: stderr should name it and say {needle:?}: {stderr}"
        );
    }
    for flags in [["--wcc-layout", "shares"], ["--wcc-fallback-budget", "0"]] {
        let out = bin().args(["run", "wcc", "--graph", s(&g), "-q", "-w", "2"]).args(flags).output().unwrap();
        assert!(out.status.success(), "{flags:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn generators_write_files_the_runner_reads() {
    let files = Files::new();
    let g = files.path("r.e");
    let out = ripples(&["gen", "rmat", "--scale", "8", "--seed", "7", "--out", s(&g)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&g).unwrap();
    assert_eq!(text.lines().count(), 16 * 256);
    let again = files.path("r2.e");
    ripples(&["gen", "rmat", "--scale", "8", "--seed", "7", "--out", s(&again)]);
    assert_eq!(text, std::fs::read_to_string(&again).unwrap(), "generators are deterministic");

    let u = files.path("u.txt");
    let out =
        ripples(&["gen", "updates", "--graph", s(&g), "--count", "500", "--delete-fraction", "0.5", "--out", s(&u)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let w = files.path("w.txt");
    let out = ripples(&["gen", "updates", "--graph", s(&g), "--count", "300", "--window", "50", "--out", s(&w)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = ripples(&["gen", "er", "--vertices", "100", "--edges", "300", "--out", s(&files.path("er.e"))]);
    assert!(out.status.success());

    // Both streams run (every deletion is valid) and the change logs reproduce the oracle's end state.
    for (graph, updates) in [(Some(&g), &u), (None, &w)] {
        let out_path = files.path("o.txt");
        let mut args = vec!["run", "wcc", "--updates", s(updates), "--batch", "25", "--output", s(&out_path), "-q"];
        if let Some(g) = graph {
            args.extend(["--graph", s(g)]);
        }
        let out = ripples(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut counts = std::collections::BTreeMap::new();
        if graph.is_some() {
            for l in text.lines() {
                let f: Vec<u64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
                *counts.entry((f[0], f[1])).or_insert(0i64) += 1;
            }
        }
        for l in std::fs::read_to_string(updates).unwrap().lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            let e = (f[1].parse::<u64>().unwrap(), f[2].parse::<u64>().unwrap());
            *counts.entry(e).or_insert(0) += if f[0] == "+" { 1 } else { -1 };
        }
        counts.retain(|_, c| *c > 0);
        let (vs, es) = oracle_input(&[], &counts);
        let want: String = ripples::oracle::wcc(&vs, &es).iter().map(|(k, v)| format!("{} {}\n", k, v)).collect();
        assert_eq!(std::fs::read_to_string(&out_path).unwrap(), want);
    }
    // Timed insertions for windowed runs: 10 lines per time unit, out of order by up to 3 units.
    let t = files.path("t.txt");
    let out = ripples(&[
        "gen",
        "updates",
        "--graph",
        s(&g),
        "--count",
        "400",
        "--event-times",
        "10",
        "--disorder",
        "3",
        "--out",
        s(&t),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let timed: Vec<(u64, u64, u64)> = std::fs::read_to_string(&t)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!((f.len(), f[0]), (4, "+"), "{l}");
            (f[1].parse().unwrap(), f[2].parse().unwrap(), f[3].strip_prefix('@').unwrap().parse().unwrap())
        })
        .collect();
    assert_eq!(timed.len(), 400);
    for (i, &(s, d, time)) in timed.iter().enumerate() {
        let edge: Vec<u64> = text.lines().nth(i).unwrap().split_whitespace().map(|x| x.parse().unwrap()).collect();
        assert_eq!((s, d), (edge[0], edge[1]), "the graph's edges in order");
        assert!(time <= i as u64 / 10 && time + 3 >= i as u64 / 10, "line {i}: time {time}");
    }
    // With --lateness 3 nothing is late; the output is WCC of the last window (M-9..=M, M the
    // largest event time).
    let out_path = files.path("tw.txt");
    let stats = files.path("tw.json");
    let out = ripples(
        &["run", "wcc", "--updates", s(&t), "--batch", "20", "--window", "10", "--lateness", "3"]
            .into_iter()
            .chain(["--output", s(&out_path), "--stats", s(&stats), "-q"])
            .collect::<Vec<_>>(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_to_string(&stats).unwrap().contains("\"late_updates\":0"));
    let mut counts = std::collections::BTreeMap::new();
    let m = timed.iter().map(|e| e.2).max().unwrap();
    for &(s, d, time) in &timed {
        if time + 10 > m {
            *counts.entry((s, d)).or_insert(0i64) += 1;
        }
    }
    let (vs, es) = oracle_input(&[], &counts);
    let want: String = ripples::oracle::wcc(&vs, &es).iter().map(|(k, v)| format!("{} {}\n", k, v)).collect();
    assert_eq!(std::fs::read_to_string(&out_path).unwrap(), want);
}

/// `ripples bench` end to end on a small window: the event-time form (`ripples-window`, WCC fast
/// path), the explicit-deletion form and a from-scratch recomputation must end with the same
/// result, and the JSON names every system with its figures.
#[test]
fn bench_window_systems_agree() {
    let files = Files::new();
    let json = files.path("bench.json");
    let out = ripples(&[
        "bench",
        "wcc-window",
        "--scale",
        "10",
        "--window",
        "2000",
        "--batch",
        "100",
        "--epochs",
        "12",
        "-w",
        "2",
        "--systems",
        "ripples-window,ripples,recompute",
        "--json",
        s(&json),
        "--profile",
        s(&files.path("profiles")),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let figures: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let systems: Vec<&str> = figures.iter().map(|f| f["system"].as_str().unwrap()).collect();
    assert_eq!(systems, ["ripples-window", "ripples", "recompute"]);
    // Each result says what it was measured with and when.
    for f in &figures {
        let env = &f["environment"];
        assert!(env["git_rev"].is_string() && env["cores"].as_u64() > Some(0), "{f}");
        assert!(env["captured_at"].as_str().is_some_and(|d| d.len() == 20 && d.ends_with('Z')), "{f}");
        assert!(env["load_average"].as_str().is_some_and(|l| l.split(' ').count() == 3), "{f}");
    }
    for f in &figures {
        assert_eq!(f["agrees"], serde_json::Value::Bool(true), "{}", f);
        assert_eq!(f["epochs"], figures[1]["epochs"], "{}", f);
        assert_eq!(f["updates"], 12 * 200, "{}", f);
    }
    // --profile: each dataflow system's profile, both workers; the sequential one has none.
    for system in ["ripples-window", "ripples"] {
        let text = std::fs::read_to_string(files.path("profiles").join(format!("{system}.json"))).unwrap();
        let profile: ripples::types::profile::Profile = serde_json::from_str(&text).unwrap();
        assert_eq!(profile.workers.len(), 2, "{system}");
        assert!(profile.operators.iter().any(|o| o.invocations > 0), "{system}");
        assert!(files.path("profiles").join(format!("{system}.json.svg")).exists());
    }
    assert!(!files.path("profiles").join("recompute.json").exists());
}

/// `ripples bench --repeat 3`: every system runs three times in rounds and reports the run with
/// the median updates/s, every run's figure in the JSON and the range in the table.
#[test]
fn bench_repeat_reports_the_median_run() {
    let files = Files::new();
    let json = files.path("bench.json");
    let args = ["bench", "wcc-churn", "--scale", "8", "--batch", "50", "--epochs", "4", "--repeat", "3"];
    let out = ripples(&[&args[..], &["--systems", "ripples,recompute", "--json", s(&json)]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("run 3 of 3").count(), 2, "{stderr}");
    let figures: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for f in &figures {
        let mut runs: Vec<f64> = f["runs"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(runs.len(), 3, "{f}");
        runs.sort_by(f64::total_cmp);
        assert_eq!(f["updates_per_sec"].as_f64(), Some(runs[1]), "{f}");
        assert_eq!(f["agrees"], serde_json::Value::Bool(true), "{f}");
    }
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(table.matches("median of 3 runs").count(), 2, "{table}");
    let zero = ripples(&[&args[..8], &["--repeat", "0"]].concat());
    let stderr = String::from_utf8_lossy(&zero.stderr);
    assert!(zero.status.code() == Some(2) && stderr.contains("--repeat"), "{stderr}");
}

/// `ripples bench wcc-churn --shards`: one table row per number of shares and phase, the JSON
/// with K per-share figures per run; no shares and other algorithms are usage errors.
#[test]
fn bench_shards_sweeps_the_numbers_of_shares() {
    let files = Files::new();
    let json = files.path("shards.json");
    let args = ["bench", "wcc-churn", "--scale", "8", "--batch", "100", "--epochs", "3", "--shards", "1,2,5"];
    let out = ripples(&[&args[..], &["--json", s(&json)]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("churn epochs: 3 epoch(s), 600 records"), "{table}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = report["runs"].as_array().unwrap();
    let shares: Vec<u64> = runs.iter().map(|r| r["shares"].as_u64().unwrap()).collect();
    assert_eq!(shares, [1, 2, 5]);
    for r in runs {
        let k = r["shares"].as_u64().unwrap() as usize;
        assert_eq!(r["share_churn_ms"].as_array().unwrap().len(), k, "{r}");
        assert_eq!(r["churn_union_ms"].as_array().unwrap().len(), 3, "{r}");
    }
    for bad in [&["--shards", "0"][..], &["--shards", "2", "--scale", "4"][..]] {
        let scenario = if bad.len() == 2 { "wcc-churn" } else { "bfs-churn" };
        let out = ripples(&[&["bench", scenario, "--epochs", "1"][..], bad].concat());
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// The committed CLI reference (docs/cli.md) is what `ripples help-markdown` prints now, and it
/// holds every flag `ripples run --help` shows, each with its help text.
#[test]
fn the_cli_reference_is_current_and_has_every_run_flag() {
    let out = ripples(&["help-markdown"]);
    assert!(out.status.success());
    let now = String::from_utf8(out.stdout).unwrap();
    let committed = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md")).unwrap();
    assert!(committed == now, "docs/cli.md is stale: regenerate it with `cargo run -- help-markdown > docs/cli.md`");
    let help = String::from_utf8(ripples(&["run", "--help"]).stdout).unwrap();
    let section = now.split("## `ripples run`").nth(1).unwrap().split("\n## ").next().unwrap();
    let mut flags = 0;
    for line in help.lines().map(str::trim_start).filter(|l| l.starts_with("--") || l.starts_with('-')) {
        let flag = line.split([' ', ',', '=', '<']).find(|w| w.starts_with("--")).unwrap_or("");
        // clap's own --help and --version are not in the reference.
        if flag.len() > 2 && flag != "--help" && flag != "--version" {
            flags += 1;
            let entry =
                section.lines().find(|l| l.starts_with(&format!("* `{flag}")) || l.contains(&format!(", `{flag}")));
            let entry = entry.unwrap_or_else(|| panic!("{flag} is not in docs/cli.md's `ripples run` section"));
            assert!(entry.contains(" — "), "{flag} has no help text: {entry}");
        }
    }
    assert!(flags > 40, "only {flags} flags found in ripples run --help");
}

/// The committed page of recorded runs (book/src/performance-runs.md) is what `ripples perf-page
/// docs/runs` prints now: a run added, moved or edited without regenerating it fails here. And
/// the page is made of the runs: a copy of the runs with one figure changed gives another page.
#[test]
fn the_recorded_runs_page_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let runs = root.join("docs/runs");
    let out = ripples(&["perf-page", s(&runs)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let now = String::from_utf8(out.stdout).unwrap();
    let committed = std::fs::read_to_string(root.join("book/src/performance-runs.md")).unwrap();
    assert!(
        committed == now,
        "book/src/performance-runs.md is stale: regenerate it with `cargo run -- perf-page docs/runs > book/src/performance-runs.md`"
    );
    let mut seen = 0;
    for entry in std::fs::read_dir(&runs).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("bench.json").is_file() {
            seen += 1;
            let name = dir.file_name().unwrap().to_str().unwrap();
            assert!(now.contains(&format!("\n## {name}\n")), "{name} has no section");
            assert!(
                dir.join("command.txt").is_file() && dir.join("summary.md").is_file(),
                "{name}: command or summary missing"
            );
        }
    }
    assert!(seen >= 3, "only {seen} recorded runs");

    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("2026-12-03-wcc-churn");
    std::fs::create_dir(&copy).unwrap();
    for file in ["command.txt", "summary.md"] {
        std::fs::copy(runs.join("2026-12-03-wcc-churn").join(file), copy.join(file)).unwrap();
    }
    let json = std::fs::read_to_string(runs.join("2026-12-03-wcc-churn/bench.json")).unwrap();
    std::fs::write(copy.join("bench.json"), json.replacen("\"p50_ms\": 0.415", "\"p50_ms\": 9.5", 1)).unwrap();
    let changed = String::from_utf8(ripples(&["perf-page", s(tmp.path())]).stdout).unwrap();
    assert!(changed.contains("| ripples | 4,013,025 | 9.500 |"), "{changed}");
    assert!(changed.contains("Environment not recorded"), "{changed}");
    let bad = ripples(&["perf-page", s(&root.join("no-such-dir"))]);
    assert_eq!(bad.status.code(), Some(1));
}

/// The book's `--stats` reference lists exactly the fields of the records (every field set, so a
/// new one must be added here and there: the struct literals below have no `..`).
#[test]
fn the_stats_reference_lists_every_field() {
    use ripples::types::stats::{EpochStats, LatencySummary, RunSummary};
    let epoch = EpochStats {
        epoch: 1,
        updates: 1,
        latency_ms: 1.0,
        busy_ms: Some(1.0),
        output_changes: 1,
        rss_bytes: 1,
        watermark: Some(1),
        late: Some(1),
        observer_lag: Some(1),
        vertices: Some(1),
        edges: Some(1),
        triangles: Some(1),
        wcc_fallbacks: Some(1),
        epochs_behind: Some(1),
    };
    let summary = RunSummary {
        summary: true,
        algorithm: "wcc".into(),
        workers: 1,
        processes: 1,
        epochs: 1,
        partial: false,
        updates: 1,
        initial_edges: 1,
        update_seconds: 1.0,
        updates_per_sec: 1.0,
        latency: LatencySummary::default(),
        load_seconds: 1.0,
        load_mb_per_sec: 1.0,
        load_edges_per_sec: 1.0,
        initial_seconds: 1.0,
        peak_rss_bytes: 1,
        peak_rss_bytes_all_processes: Some(1),
        output_changes: 1,
        wall_seconds: 1.0,
        late_updates: Some(1),
        end_seconds: Some(1.0),
        max_observer_lag: Some(1),
        vertices: Some(1),
        edges: Some(1),
        triangles: Some(1),
        wcc_fallbacks: Some(1),
    };
    let book = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/reference.md")).unwrap();
    let (per_epoch, summary_part) = book.split_once("Summary:").unwrap();
    let documented = |text: &str| -> std::collections::BTreeSet<String> {
        text.lines()
            .filter(|l| l.starts_with("| `"))
            .flat_map(|l| {
                l.split('|')
                    .nth(1)
                    .unwrap()
                    .split(',')
                    .map(|f| f.trim().trim_matches('`').to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let keys = |v: serde_json::Value| -> std::collections::BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    };
    assert_eq!(documented(per_epoch.split("Per epoch:").nth(1).unwrap()), keys(serde_json::to_value(&epoch).unwrap()));
    assert_eq!(documented(summary_part), keys(serde_json::to_value(&summary).unwrap()));
}

/// The README's 30-second tour, run line by line as a shell runs it, with `ripples` this build's
/// binary and the live run's three ports free ones: the file run's `--output` against the plain
/// WCC of the graph after the updates, its `--changes` summed to the same state; the served live
/// run's psql answer (the three largest components) against the plain WCC of the graph alone;
/// its `/metrics` answers.
#[test]
fn the_readme_tour_runs() {
    use common::process::read;
    use std::collections::{BTreeMap, HashMap};
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};

    if !common::pg::have("psql", &["--version"], "apt-get install postgresql-client") {
        return;
    }
    let readme = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    let block = readme
        .split("```sh\n")
        .find(|b| b.contains("ripples gen rmat"))
        .and_then(|b| b.split("```").next())
        .expect("the README has a sh block with the tour (ripples gen rmat ...)");
    // A line's trailing comment starts at a `#` after two spaces; a line that is only a comment goes.
    let lines: Vec<String> = block
        .lines()
        .map(|l| l.split("  #").next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(lines.len(), 5, "the tour is gen, gen updates, a file run, a live run and a psql line: {lines:?}");
    let files = Files::new();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_ripples")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let sh = |line: &str| {
        let mut c = Command::new("sh");
        c.arg("-c").arg(line).current_dir(&files.root).env("PATH", &path).env("TMPDIR", &files.root);
        c
    };
    for line in &lines[..3] {
        let out = sh(line).output().unwrap();
        assert!(out.status.success(), "`{line}` failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    // The plain WCC of the graph, before and after the updates (a multiset of edges as written).
    let pair = |l: &str| -> Option<(u64, u64)> {
        let mut w = l.split_whitespace();
        Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
    };
    let mut edges: HashMap<(u64, u64), u64> = HashMap::new();
    for l in read(&files.path("g.e")).lines() {
        if let Some(e) = pair(l) {
            *edges.entry(e).or_default() += 1;
        }
    }
    let plain = |edges: &HashMap<(u64, u64), u64>| {
        let list: Vec<(u64, u64, f64)> = edges.keys().map(|&(a, b)| (a, b, 1.0)).collect();
        ripples::oracle::wcc(&ripples::oracle::vertex_set(std::iter::empty(), &list), &list)
    };
    let initial = plain(&edges);
    for l in read(&files.path("u.txt")).lines() {
        let (sign, rest) = l.split_at(1);
        let e = pair(rest).unwrap_or_else(|| panic!("u.txt: not an update line: {l:?}"));
        match sign {
            "+" => *edges.entry(e).or_default() += 1,
            "-" => {
                let n = edges.get_mut(&e).unwrap_or_else(|| panic!("u.txt deletes an absent edge: {l:?}"));
                *n -= 1;
                if *n == 0 {
                    edges.remove(&e);
                }
            }
            _ => panic!("u.txt: not an update line: {l:?}"),
        }
    }
    let after = plain(&edges);
    let output: BTreeMap<u64, u64> = read(&files.path("wcc.out")).lines().filter_map(pair).collect();
    assert_eq!(output, after, "wcc.out differs from the plain WCC of the graph after the updates");
    let mut summed: BTreeMap<(u64, u64), i64> = BTreeMap::new();
    for l in read(&files.path("changes.txt")).lines() {
        let f: Vec<i64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
        *summed.entry((f[1] as u64, f[2] as u64)).or_default() += f[3];
    }
    summed.retain(|_, d| *d != 0);
    let state: BTreeMap<u64, u64> = summed.keys().copied().collect();
    assert!(summed.values().all(|&d| d == 1), "changes.txt sums to a row with a multiplicity other than 1");
    assert_eq!(state, after, "changes.txt summed differs from the plain WCC after the updates");

    // The live run, served and with the dashboard, on free ports.
    let (listen, sql, http) = (free_port(), free_port(), free_port());
    for (line, flag) in [(3, "--listen 9000"), (3, "--serve 5433"), (3, "--http 9100"), (4, "port=5433")] {
        assert!(lines[line].contains(flag), "the tour's line {:?} no longer has {flag:?}", lines[line]);
    }
    let live = lines[3]
        .replace("--listen 9000", &format!("--listen {listen}"))
        .replace("--serve 5433", &format!("--serve {sql}"))
        .replace("--http 9100", &format!("--http {http}"));
    let stderr = files.path("live.stderr");
    let mut child = sh(&format!("exec {live}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    common::pg::wait_line(&stderr, "serving SQL on", &mut child);
    let _child = Kill(child);
    common::pg::wait_epoch(sql, 0);
    let out = sh(&lines[4].replace("port=5433", &format!("port={sql}"))).output().unwrap();
    assert!(out.status.success(), "the tour's psql line failed: {}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<(u64, u64)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (a, b) = l.split_once('|')?;
            Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
        })
        .collect();
    let mut sizes: BTreeMap<u64, u64> = BTreeMap::new();
    for label in initial.values() {
        *sizes.entry(*label).or_default() += 1;
    }
    let mut by_size: Vec<u64> = sizes.values().copied().collect();
    by_size.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(rows.len(), 3, "psql printed {}", String::from_utf8_lossy(&out.stdout));
    for (i, &(label, size)) in rows.iter().enumerate() {
        assert_eq!(sizes.get(&label), Some(&size), "component {label} of size {size} is not one of the graph's");
        assert_eq!(size, by_size[i], "row {i}: the {}th largest component has {} vertices", i + 1, by_size[i]);
    }
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", http)).unwrap();
    write!(conn, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut reply = String::new();
    conn.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "/metrics answered {reply:.200}");
    assert!(reply.contains("ripples_epochs_completed_total"), "/metrics has no epoch counter: {reply:.500}");
}
