//! LDBC Graphalytics conformance of the built-in dataflows: every graph × algorithm of
//! `tests/data/graphalytics/graphs` must pass the official validation rule, through the library
//! (`ripples::graphalytics::runner`, on 1 and 2 workers) and through `ripples graphalytics`; and a
//! corrupted expected output must make the command fail and report that row.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ripples::graphalytics::runner::{self, CheckResult, Selection};
use ripples::graphalytics::{discover, Algorithm};

fn graphs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphalytics/graphs")
}

/// Every (graph, algorithm) the dataset's properties files list.
fn all_checks() -> BTreeSet<(String, Algorithm)> {
    let specs = discover(&graphs_dir()).unwrap();
    let checks: BTreeSet<_> =
        specs.iter().flat_map(|s| s.algorithms.iter().map(move |&a| (s.name.clone(), a))).collect();
    // 2 example graphs × 6 algorithms + 12 single-algorithm test graphs.
    assert_eq!(checks.len(), 24, "{checks:?}");
    checks
}

fn describe(failed: &[&CheckResult]) -> String {
    failed
        .iter()
        .map(|r| format!("  {} {}: {}", r.graph, r.algorithm, r.message.as_deref().unwrap_or("?")))
        .collect::<Vec<_>>()
        .join("\n")
}

fn library_conformance(workers: usize) {
    let mut seen = 0;
    let results = runner::run_checks(&graphs_dir(), &Selection::default(), workers, |_| seen += 1).unwrap();
    assert_eq!(seen, results.len());
    let listed: BTreeSet<_> = results.iter().map(|r| (r.graph.clone(), r.algorithm)).collect();
    assert_eq!(listed, all_checks());
    assert_eq!(results.len(), listed.len());
    let failed: Vec<&CheckResult> = results.iter().filter(|r| !r.pass).collect();
    assert!(
        failed.is_empty(),
        "{} of {} checks failed with {} worker(s):\n{}",
        failed.len(),
        results.len(),
        workers,
        describe(&failed)
    );
    for r in &results {
        assert!(r.message.is_none(), "{r:?}");
        assert!(r.load_seconds.is_some_and(|s| s >= 0.0), "{r:?}");
        assert!(r.compute_seconds.is_some_and(|s| s >= 0.0), "{r:?}");
        let v = r.validation.as_ref().unwrap();
        assert!(v.pass && v.vertices_checked > 0, "{r:?}");
        match r.algorithm {
            Algorithm::Pr | Algorithm::Lcc | Algorithm::Sssp => {
                assert!(r.worst_deviation.is_some_and(|d| d <= 1e-4), "{r:?}")
            }
            _ => assert_eq!(r.worst_deviation, None, "{r:?}"),
        }
    }
    assert_eq!(runner::tally(&results), (24, 0));
    assert_eq!(runner::summary_line(&results), "24 passed, 0 failed");
}

#[test]
fn library_every_graph_and_algorithm_passes_on_one_worker() {
    library_conformance(1);
}

#[test]
fn library_every_graph_and_algorithm_passes_on_two_workers() {
    library_conformance(2);
}

fn ripples(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ripples")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap()
}

/// The table rows of `ripples graphalytics` output: (graph, algorithm) -> PASS / FAIL.
fn rows(stdout: &str) -> BTreeMap<(String, String), String> {
    let mut rows = BTreeMap::new();
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() == 6 && (fields[2] == "PASS" || fields[2] == "FAIL") {
            let previous = rows.insert((fields[0].to_string(), fields[1].to_string()), fields[2].to_string());
            assert!(previous.is_none(), "row given twice: {line}\n{stdout}");
        }
    }
    rows
}

#[test]
fn command_passes_on_the_validation_graphs() {
    let out = ripples(&["graphalytics", "tests/data/graphalytics/graphs"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let rows = rows(&stdout);
    let expected: BTreeMap<(String, String), String> =
        all_checks().into_iter().map(|(g, a)| ((g, a.name().to_string()), "PASS".to_string())).collect();
    assert_eq!(rows, expected, "{stdout}");
    assert_eq!(stdout.lines().last(), Some("24 passed, 0 failed"), "{stdout}");
}

#[test]
fn command_filters_by_graph_and_algorithm_on_two_workers() {
    let out = ripples(&["graphalytics", "--algorithm", "WCC", "-w", "2"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let rows = rows(&stdout);
    let graphs: Vec<&str> = rows.keys().map(|(g, _)| g.as_str()).collect();
    assert_eq!(graphs, ["example-directed", "example-undirected", "test-wcc-directed", "test-wcc-undirected"]);
    assert!(rows.iter().all(|((_, a), r)| a == "wcc" && r == "PASS"), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("4 passed, 0 failed"));

    let out = ripples(&["graphalytics", "--graph", "test-bfs-undirected", "--graph", "test-wcc-directed"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let keys: Vec<_> = rows_keys(&stdout);
    assert_eq!(keys, [("test-bfs-undirected", "bfs"), ("test-wcc-directed", "wcc")]);
}

fn rows_keys(stdout: &str) -> Vec<(&str, &str)> {
    stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() == 6 && (f[2] == "PASS" || f[2] == "FAIL"))
        .map(|f| (f[0], f[1]))
        .collect()
}

/// Copies graph `name` (properties, vertex, edge and expected files) into `to`.
fn copy_graph(name: &str, to: &Path) {
    let mut copied = 0;
    for entry in std::fs::read_dir(graphs_dir()).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_str().unwrap().to_string();
        let stem = file.split_once('.').map_or(file.as_str(), |(s, _)| s);
        let belongs = stem == name
            || file
                .strip_prefix(name)
                .and_then(|r| r.strip_prefix('-'))
                .is_some_and(|alg| Algorithm::ALL.iter().any(|a| a.expected_suffix() == alg));
        if belongs {
            std::fs::copy(&path, to.join(&file)).unwrap();
            copied += 1;
        }
    }
    assert!(copied >= 4, "{name}: {copied} files");
}

#[test]
fn command_fails_on_a_corrupted_expected_output() {
    let tmp = tempfile::tempdir().unwrap();
    copy_graph("test-wcc-directed", tmp.path());
    copy_graph("test-wcc-undirected", tmp.path());
    // Give every vertex the same component: the expected output now has one component, the
    // graph has two.
    let wcc = tmp.path().join("test-wcc-directed-WCC");
    let text = std::fs::read_to_string(&wcc).unwrap();
    let labels: BTreeSet<&str> = text.lines().filter_map(|l| l.split_whitespace().nth(1)).collect();
    assert!(labels.len() > 1, "the graph must have several components");
    let corrupted: String =
        text.lines().filter_map(|l| l.split_whitespace().next()).map(|v| format!("{v} 1\n")).collect();
    std::fs::write(&wcc, corrupted).unwrap();

    let dir = tmp.path().to_str().unwrap();
    let out = ripples(&["graphalytics", dir]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let rows = rows(&stdout);
    let key = |g: &str| (g.to_string(), "wcc".to_string());
    assert_eq!(rows.get(&key("test-wcc-directed")).map(String::as_str), Some("FAIL"), "{stdout}");
    assert_eq!(rows.get(&key("test-wcc-undirected")).map(String::as_str), Some("PASS"), "{stdout}");
    assert_eq!(rows.len(), 2, "{stdout}");
    // The failed row is followed by its first mismatch.
    assert!(stdout.contains("test-wcc-directed wcc: ") && stdout.contains("label"), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("1 passed, 1 failed"), "{stdout}");
    assert!(stderr.contains("1 of 2 checks failed"), "{stderr}");
}

#[test]
fn library_reports_deviation_and_failures_without_panicking() {
    let tmp = tempfile::tempdir().unwrap();
    copy_graph("test-sssp-directed", tmp.path());
    copy_graph("test-wcc-undirected", tmp.path());
    // No expected output: a failed row, not a panic, and nothing is run.
    std::fs::remove_file(tmp.path().join("test-wcc-undirected-WCC")).unwrap();
    // Shift one finite SSSP distance by 1e-3 (relative): beyond the 1e-4 tolerance.
    let sssp = tmp.path().join("test-sssp-directed-SSSP");
    let text = std::fs::read_to_string(&sssp).unwrap();
    let mut shifted = false;
    let lines: String = text
        .lines()
        .map(|l| {
            let mut f = l.split_whitespace();
            let (v, x) = (f.next().unwrap(), f.next().unwrap());
            match x.parse::<f64>() {
                Ok(d) if !shifted && d.is_finite() && d > 0.0 => {
                    shifted = true;
                    format!("{v} {}\n", d * 1.001)
                }
                _ => format!("{l}\n"),
            }
        })
        .collect();
    assert!(shifted);
    std::fs::write(&sssp, lines).unwrap();

    let results = runner::run_checks(tmp.path(), &Selection::default(), 2, |_| {}).unwrap();
    assert_eq!(results.len(), 2);
    let sssp = &results[0];
    assert_eq!((sssp.graph.as_str(), sssp.algorithm), ("test-sssp-directed", Algorithm::Sssp));
    assert!(!sssp.pass);
    let worst = sssp.worst_deviation.unwrap();
    assert!((worst - 0.001 / 1.001).abs() < 1e-9, "{worst}");
    assert!(sssp.message.as_deref().unwrap().contains("1 mismatch"), "{sssp:?}");
    assert!(sssp.load_seconds.is_some() && sssp.compute_seconds.is_some());
    let wcc = &results[1];
    assert!(!wcc.pass && wcc.load_seconds.is_none() && wcc.validation.is_none());
    assert!(wcc.message.as_deref().unwrap().contains("does not exist"), "{wcc:?}");
    assert_eq!(runner::summary_line(&results), "0 passed, 2 failed");

    // The table shows both rows as FAIL with their messages.
    let checks = runner::plan(tmp.path(), &Selection::default()).unwrap();
    let table = runner::Table::new(&checks);
    let text: String = results.iter().map(|r| table.row(r) + "\n").collect();
    let rows = rows(&text);
    assert!(rows.values().all(|r| r == "FAIL"), "{text}");
    assert!(text.contains("does not exist"), "{text}");
}

#[test]
fn dataset_errors_are_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let err = runner::plan(tmp.path(), &Selection::default()).unwrap_err().to_string();
    assert!(err.contains("no Graphalytics graphs") && err.contains(tmp.path().to_str().unwrap()), "{err}");
    let missing = tmp.path().join("nope");
    let err = runner::plan(&missing, &Selection::default()).unwrap_err().to_string();
    assert!(err.contains("does not exist") && err.contains("nope"), "{err}");
    let selection = Selection { graphs: vec!["no-such-graph".into()], algorithm: None };
    let err = runner::plan(&graphs_dir(), &selection).unwrap_err().to_string();
    assert!(err.contains("no-such-graph") && err.contains("example-directed"), "{err}");

    let out = ripples(&["graphalytics", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    let out = ripples(&["graphalytics", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Graphalytics graphs"));
    let out = ripples(&["graphalytics", "--algorithm", "bogus"]);
    assert_eq!(out.status.code(), Some(2));
}
