//! `--http` and `--profile`, from outside, with real clients: the metrics parsed by the Prometheus
//! Python client's OpenMetrics parser and checked against the `--stats` file of the same run, the
//! JSON API against the same, the dashboard in headless Chromium, bad and idle connections, the
//! token; and the profile's operators, times and arrangement sizes.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use common::pg::{have, wait_line};
use common::process::{bin, read, s, wait_exit, Files, PATIENCE};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

/// A valid churn stream over `n` vertices: `initial` edges, then `updates` lines (insertions of
/// fresh pairs and deletions of present ones, about half each).
fn stream(seed: u64, n: u64, initial: usize, updates: usize) -> (String, Vec<String>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut present: Vec<(u64, u64)> = Vec::new();
    let mut graph = String::new();
    for _ in 0..initial {
        let e = (rng.gen_range(0..n), rng.gen_range(0..n));
        present.push(e);
        graph += &format!("{} {}\n", e.0, e.1);
    }
    let mut lines = Vec::new();
    for _ in 0..updates {
        if rng.gen_bool(0.5) && !present.is_empty() {
            let e = present.swap_remove(rng.gen_range(0..present.len()));
            lines.push(format!("- {} {}", e.0, e.1));
        } else {
            let e = (rng.gen_range(0..n), rng.gen_range(0..n));
            present.push(e);
            lines.push(format!("+ {} {}", e.0, e.1));
        }
    }
    (graph, lines)
}

/// One HTTP/1.1 request on a fresh connection: `(status, body)`.
fn request(addr: &str, raw: &str) -> (u16, String) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    c.write_all(raw.as_bytes()).unwrap();
    let mut text = Vec::new();
    let _ = c.read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text).to_string();
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

fn get(addr: &str, path: &str) -> (u16, String) {
    request(addr, &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"))
}

/// `/metrics` as OpenMetrics (asked for as Prometheus does).
fn get_open_metrics(addr: &str) -> String {
    let (status, text) = request(
        addr,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text; version=1.0.0\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 200);
    text
}

fn get_json(addr: &str, path: &str) -> Value {
    let (status, body) = get(addr, path);
    assert_eq!(status, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: not JSON ({e}): {body}"))
}

/// A live run over stdin with `--http`; killed when dropped.
struct Run {
    child: Child,
    stdin: Option<ChildStdin>,
    addr: String,
    stderr: std::path::PathBuf,
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Run {
    fn start(files: &Files, args: &[&str]) -> Run {
        let stderr = files.path("stderr");
        let mut child = bin()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let line = wait_line(&stderr, "dashboard and metrics on http://", &mut child);
        let addr = line.split("http://").nth(1).unwrap().trim_end_matches('/').to_string();
        Run { stdin: child.stdin.take(), child, addr, stderr }
    }

    fn send(&mut self, lines: &[String]) {
        let stdin = self.stdin.as_mut().unwrap();
        for l in lines {
            writeln!(stdin, "{l}").unwrap();
        }
        stdin.flush().unwrap();
    }

    /// Waits until `/api/status` reports `epochs` completed epochs.
    fn wait_epochs(&mut self, epochs: u64) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let status = get_json(&self.addr, "/api/status");
            if status["totals"]["epochs_completed"].as_u64() == Some(epochs) {
                return status;
            }
            if let Some(exit) = self.child.try_wait().unwrap() {
                panic!("ripples exited ({exit}): {}", read(&self.stderr));
            }
            assert!(Instant::now() < deadline, "{epochs} epochs not completed: {status}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes the input and waits for the run to end successfully.
    fn finish(&mut self) {
        drop(self.stdin.take());
        let status = wait_exit(&mut self.child, PATIENCE, "ripples run --http");
        assert!(status.success(), "{}", read(&self.stderr));
    }
}

/// The samples of an OpenMetrics text, as the Prometheus Python client's parser reads them:
/// `name{label="v",...}` → value.
fn parse_metrics(files: &Files, text: &str) -> BTreeMap<String, f64> {
    let path = files.write("metrics.txt", text);
    let script = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
out = {}
for family in text_string_to_metric_families(open(sys.argv[1]).read()):
    for sample in family.samples:
        labels = ",".join('%s="%s"' % kv for kv in sorted(sample.labels.items()))
        out[sample.name + ("{" + labels + "}" if labels else "")] = sample.value
print(json.dumps(out))
"#;
    let out = Command::new("python3").args(["-c", script, &s(&path)]).output().unwrap();
    assert!(out.status.success(), "the OpenMetrics parser refused /metrics: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn python_prometheus() -> bool {
    have("python3", &["-c", "import prometheus_client"], "pip install prometheus-client")
}

#[test]
fn metrics_and_the_api_agree_with_the_stats_file_and_survive_bad_and_idle_clients() {
    if !python_prometheus() {
        return;
    }
    let files = Files::new();
    let (graph, lines) = stream(11, 300, 400, 1_000);
    let g = files.write("g.e", &graph);
    let stats = files.path("stats.jsonl");
    let mut run = Run::start(
        &files,
        &[
            "run",
            "wcc",
            "--graph",
            &s(&g),
            "--updates",
            "-",
            "--batch",
            "50",
            "--http",
            "127.0.0.1:0",
            "--stats",
            &s(&stats),
            "-q",
        ],
    );
    // Ten epochs of 50 lines after epoch 0 (the initial graph).
    run.send(&lines[..500]);
    run.wait_epochs(11);
    let open_metrics = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text; version=1.0.0\r\nConnection: close\r\n\r\n";
    let (status, text) = request(&run.addr, open_metrics);
    assert_eq!(status, 200);
    let metrics = parse_metrics(&files, &text);
    // Without asking for OpenMetrics: the classic text format, as promtool checks it.
    let (_, classic) = get(&run.addr, "/metrics");
    assert!(!classic.contains("# EOF") && classic.contains("# TYPE ripples_epochs_completed_total counter"));
    if have("promtool", &["--version"], "apt-get install prometheus") {
        let mut promtool = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        promtool.stdin.take().unwrap().write_all(classic.as_bytes()).unwrap();
        let check = promtool.wait_with_output().unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));
        assert!(check.status.success(), "promtool check metrics: {said}");
    }
    let epochs_json = get_json(&run.addr, "/api/epochs?since=0");
    let from_3 = get_json(&run.addr, "/api/epochs?since=3");
    let status = get_json(&run.addr, "/api/status");

    // Bad requests: unknown paths, other methods, malformed and oversized heads.
    assert_eq!(get(&run.addr, "/nope").0, 404);
    assert_eq!(get(&run.addr, "/api/epochs?since=x").0, 400);
    assert_eq!(
        request(&run.addr, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").0,
        405
    );
    let malformed = request(&run.addr, "GARBAGE\r\n\r\n").0;
    assert!(malformed == 400 || malformed == 0, "a malformed request got {malformed}");
    let huge = format!("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "a".repeat(64 * 1024));
    let oversized = request(&run.addr, &huge).0;
    assert!(oversized == 431 || oversized == 400 || oversized == 0, "an oversized request got {oversized}");
    // A thousand idle connections: the metrics still answer and the run goes on.
    let idle: Vec<TcpStream> = (0..1000).map(|_| TcpStream::connect(&run.addr).unwrap()).collect();
    assert_eq!(get(&run.addr, "/metrics").0, 200);
    run.send(&lines[500..]);
    run.wait_epochs(21);
    drop(idle);
    run.finish();

    // The stats file of the same run: its first 11 epochs are what /metrics saw.
    let records: Vec<Value> = read(&stats)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v.get("epoch").is_some())
        .collect();
    let seen = &records[..11];
    let sum = |field: &str| seen.iter().map(|r| r[field].as_f64().unwrap()).sum::<f64>();
    assert_eq!(metrics["ripples_epochs_completed_total"], 11.0);
    assert_eq!(metrics["ripples_updates_total"], sum("updates"));
    assert_eq!(metrics["ripples_output_changes_total{output=\"wcc\"}"], sum("output_changes"));
    assert_eq!(metrics["ripples_current_epoch"], 10.0);
    assert_eq!(metrics["ripples_epoch_duration_seconds_count"], 11.0);
    let latency_sum = sum("latency_ms") / 1000.0;
    assert!((metrics["ripples_epoch_duration_seconds_sum"] - latency_sum).abs() < 1e-9, "{metrics:?}");
    // Every histogram bucket counts the epochs at or below its bound.
    let buckets: Vec<(&String, &f64)> =
        metrics.iter().filter(|(k, _)| k.starts_with("ripples_epoch_duration_seconds_bucket")).collect();
    assert!(buckets.len() > 10);
    for (key, count) in buckets {
        let le = key.split("le=\"").nth(1).unwrap().trim_end_matches("\"}");
        let bound: f64 = if le == "+Inf" { f64::INFINITY } else { le.parse().unwrap() };
        let want = seen.iter().filter(|r| r["latency_ms"].as_f64().unwrap() / 1000.0 <= bound).count();
        assert_eq!(*count, want as f64, "{key}");
    }
    assert!(metrics["ripples_resident_memory_bytes"] > 0.0);
    assert_eq!(metrics["ripples_build_info{version=\"0.1.0\"}"], 1.0);
    // With the profile on (the default of --http): the workers and operators.
    assert!(metrics.keys().any(|k| k.starts_with("ripples_worker_busy_seconds_total{worker=\"0\"}")), "{metrics:?}");
    assert!(metrics.keys().any(|k| k.starts_with("ripples_operator_invocations_total{")), "{metrics:?}");
    // The API: the stats records themselves.
    assert_eq!(epochs_json.as_array().unwrap().as_slice(), seen);
    assert_eq!(from_3.as_array().unwrap().as_slice(), &seen[3..]);
    assert_eq!(status["current_epoch"], 10);
    assert_eq!(status["totals"]["updates"].as_f64().unwrap(), sum("updates"));
    assert_eq!(status["outputs"], serde_json::json!(["wcc"]));
}

#[test]
fn the_token_guards_the_data_and_non_loopback_needs_it() {
    let files = Files::new();
    let token = files.write("token", "s3cret\n");
    let g = files.write("g.e", "1 2\n2 3\n");
    let mut run = Run::start(
        &files,
        &[
            "run",
            "wcc",
            "--graph",
            &s(&g),
            "--updates",
            "-",
            "--http",
            "127.0.0.1:0",
            "--http-auth-token-file",
            &s(&token),
            "-q",
        ],
    );
    let addr = run.addr.clone();
    let with = |auth: &str| {
        request(
            &addr,
            &format!("GET /api/status HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\nConnection: close\r\n\r\n"),
        )
        .0
    };
    assert_eq!(get(&addr, "/api/status").0, 401);
    assert_eq!(get(&addr, "/metrics").0, 401);
    assert_eq!(with("Bearer wrong"), 401);
    assert_eq!(with("Bearer s3cret"), 200);
    // The page itself holds no data.
    assert_eq!(get(&addr, "/").0, 200);
    run.finish();

    // Not loopback: refused without a token and TLS, before anything runs.
    let out = bin().args(["run", "wcc", "--graph", &s(&g), "--http", "0.0.0.0:0", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a loopback address") && err.contains("--http-tls-cert"), "{err}");
    let out = bin().args(["run", "wcc", "--graph", &s(&g), "--http-no-profile", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("need --http ADDR"));
}

/// Chromium's flags for a quiet headless run (no background requests of its own).
fn chromium(files: &Files, extra: &[String], url: &str) -> (String, String) {
    let profile = files.path("chromium-profile");
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1280,2200",
        "--virtual-time-budget=5000",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.push(format!("--user-data-dir={}", s(&profile)));
    args.extend(extra.iter().cloned());
    args.push(url.to_string());
    let out = Command::new("chromium").args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "chromium failed: {stderr}");
    (String::from_utf8_lossy(&out.stdout).to_string(), stderr)
}

#[test]
fn the_dashboard_loads_in_headless_chromium_with_the_runs_epochs_and_operators() {
    if !have("chromium", &["--version"], "apt-get install chromium") {
        return;
    }
    let files = Files::new();
    let (graph, lines) = stream(12, 1_000, 1_500, 2_000);
    let g = files.write("g.e", &graph);
    let mut run = Run::start(
        &files,
        &["run", "wcc", "--graph", &s(&g), "--updates", "-", "--batch", "50", "--http", "127.0.0.1:0", "-q"],
    );
    run.send(&lines);
    run.wait_epochs(41);
    // The workers publish their figures every 250 ms: wait for the operators.
    let deadline = Instant::now() + PATIENCE;
    let profile = loop {
        let p = get_json(&run.addr, "/api/profile");
        if p["operators"].as_array().is_some_and(|o| o.iter().any(|o| o["invocations"].as_u64() > Some(0))) {
            break p;
        }
        assert!(Instant::now() < deadline, "no operators in the profile: {p}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let url = format!("http://{}/", run.addr);
    let netlog = files.path("net.json");
    let (dom, console) = chromium(&files, &["--dump-dom".into(), format!("--log-net-log={}", s(&netlog))], &url);
    // No script error, no refused resource (the page's policy is default-src 'self').
    for bad in ["Uncaught", "Refused to", "ERROR:CONSOLE", "Failed to load"] {
        assert!(!console.contains(bad), "console: {bad}\n{console}");
    }
    // Every request the page made went to the run's own address. (Chromium's own background
    // requests, which its flags do not all stop, have no initiator; the page's have its origin.)
    let log = read(&netlog);
    let log: Value = serde_json::from_str(&log)
        .or_else(|_| serde_json::from_str(&format!("{}]}}", log.trim_end().trim_end_matches(','))))
        .expect("chromium's net log");
    let origin = format!("http://{}", run.addr);
    let mut page_hosts = BTreeSet::new();
    let mut page_requests = 0;
    for event in log["events"].as_array().unwrap() {
        let params = &event["params"];
        if let (Some(url), Some(initiator)) = (params["url"].as_str(), params["initiator"].as_str()) {
            if initiator == origin {
                page_requests += 1;
                page_hosts.insert(url.split('/').nth(2).unwrap_or("").to_string());
            }
        }
    }
    assert!(page_requests >= 6, "the page made {page_requests} requests");
    assert_eq!(page_hosts, BTreeSet::from([run.addr.clone()]), "the page requested other hosts");
    // The four charts hold the run's 41 epochs.
    for chart in ["chart-throughput", "chart-latency", "chart-behind", "chart-memory"] {
        let at = dom.find(&format!("id=\"{chart}\"")).unwrap_or_else(|| panic!("no {chart}:\n{dom}"));
        let tag = &dom[dom[..at].rfind('<').unwrap()..at + dom[at..].find('>').unwrap()];
        assert!(tag.contains("data-points=\"41\""), "{chart}: {tag}");
    }
    assert!(dom.contains("class=\"uplot"), "no uPlot chart in the page");
    // The dataflow's operators are listed (every name the profile has with time spent).
    for op in profile["operators"].as_array().unwrap().iter().filter(|o| o["invocations"].as_u64() > Some(0)) {
        let name = op["name"].as_str().unwrap();
        let escaped = name.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        assert!(dom.contains(&format!("<td>{escaped}</td>")), "operator {name} is not listed");
    }
    // The busiest dataflow drawn: one node per operator of it.
    let operators = profile["operators"].as_array().unwrap();
    let busiest = operators
        .iter()
        .filter(|o| o["addr"].as_array().unwrap().len() == 1)
        .max_by(|a, b| a["inclusive_seconds"].as_f64().unwrap().total_cmp(&b["inclusive_seconds"].as_f64().unwrap()))
        .map(|o| o["addr"][0].as_u64().unwrap())
        .unwrap();
    let inside: BTreeSet<u64> = operators
        .iter()
        .filter(|o| o["addr"].as_array().unwrap().len() == 2 && o["addr"][0].as_u64() == Some(busiest))
        .map(|o| o["addr"][1].as_u64().unwrap())
        .collect();
    assert_eq!(dom.matches("<g class=\"op\">").count(), inside.len(), "graph nodes");
    assert!(inside.len() > 3);
    // The component sizes, as the API has them.
    let components = get_json(&run.addr, "/api/components");
    let vertices = components["vertices"].as_u64().unwrap();
    assert!(vertices > 0 && dom.contains(&format!(" over {vertices} vertices.")), "no component distribution");
    // A screenshot, kept for the docs with RIPPLES_UPDATE_DOCS=1.
    let shot = files.path("dashboard.png");
    chromium(&files, &[format!("--screenshot={}", s(&shot))], &url);
    let png = std::fs::read(&shot).unwrap();
    assert!(png.len() > 10_000 && png.starts_with(b"\x89PNG"), "screenshot of {} bytes", png.len());
    if std::env::var_os("RIPPLES_UPDATE_DOCS").is_some() {
        std::fs::write(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/dashboard.png"), &png).unwrap();
    }
    run.finish();
}

#[test]
fn the_profile_lists_every_workers_operators_and_the_arrangements_sizes() {
    let files = Files::new();
    // A static graph: 5 distinct undirected edges over 7 vertices (a duplicate and a reversed
    // copy among the lines, and a self-loop).
    let text = "1 2\n2 3\n3 1\n4 5\n5 6\n2 1\n1 2\n7 7\n";
    let g = files.write("g.e", text);
    let profile_path = files.path("p.json");
    let out = bin()
        .args(["run", "degree", "--graph", &s(&g), "-w", "2", "--profile", &s(&profile_path), "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let profile: ripples::types::profile::Profile = serde_json::from_str(&read(&profile_path)).unwrap();
    assert!(std::fs::read_to_string(files.path("p.json.svg")).unwrap().starts_with("<svg"));
    assert_eq!(profile.workers.iter().map(|w| w.worker).collect::<Vec<_>>(), vec![0, 1]);
    // Both workers run the same dataflow: the same operators at the same addresses.
    let ops = |w: usize| -> BTreeSet<(Vec<usize>, String)> {
        profile.operators.iter().filter(|o| o.worker == w).map(|o| (o.addr.clone(), o.name.clone())).collect()
    };
    assert_eq!(ops(0), ops(1));
    assert!(ops(0).len() > 5);
    for w in &profile.workers {
        // The dataflows' time is part of the busy time (a small tolerance for the clock reads).
        assert!(w.operator_seconds <= w.busy_seconds + 1e-3, "{w:?}");
        assert!(w.busy_seconds + w.parked_seconds <= w.wall_seconds + 1e-6, "{w:?}");
        let top: f64 = profile
            .operators
            .iter()
            .filter(|o| o.worker == w.worker && o.addr.len() == 1)
            .map(|o| o.inclusive_seconds)
            .sum();
        assert!((top - w.operator_seconds).abs() < 1e-9);
    }
    // Self times: a scope's inclusive time is its own plus its children's.
    for op in &profile.operators {
        let children: f64 = profile
            .operators
            .iter()
            .filter(|c| c.worker == op.worker && c.addr.len() == op.addr.len() + 1 && c.addr.starts_with(&op.addr))
            .map(|c| c.inclusive_seconds)
            .sum();
        assert!((op.self_seconds - (op.inclusive_seconds - children).max(0.0)).abs() < 1e-9, "{op:?}");
    }
    // Records: what the input operator sent over both workers is the graph's lines.
    let input_out: u64 = profile.operators.iter().filter(|o| o.name == "Input").map(|o| o.records_out).sum();
    assert!(input_out >= 8, "the input sent {input_out} records");
    // The input's two distinct sets (its symmetric pairs and its vertices) are arranged, each
    // record once over the two workers: checked against a plain count of the file.
    let mut pairs = BTreeSet::new();
    let mut vertices = BTreeSet::new();
    for line in text.lines() {
        let (a, b) = line.split_once(' ').unwrap();
        pairs.insert((a, b));
        pairs.insert((b, a));
        vertices.insert(a);
        vertices.insert(b);
    }
    let mut distinct: BTreeMap<usize, i64> = BTreeMap::new();
    for a in profile.arrangements.iter().filter(|a| a.name == "Arrange: Distinct") {
        *distinct.entry(a.operator).or_insert(0) += a.records;
    }
    let sizes: BTreeSet<i64> = distinct.values().copied().collect();
    assert_eq!(sizes, BTreeSet::from([pairs.len() as i64, vertices.len() as i64]), "{:?}", profile.arrangements);
    assert!(profile.arrangements.iter().all(|a| a.batches >= 0 && a.records >= 0), "{:?}", profile.arrangements);
}

#[test]
fn a_clusters_profile_covers_every_process_when_process_zero_alone_asks() {
    let files = Files::new();
    let text = "1 2\n2 3\n3 1\n4 5\n5 6\n2 1\n1 2\n7 7\n";
    let g = files.write("g.e", text);
    let (hosts, _) = common::session::two_process_hostfile(&files);
    let profile_path = files.path("p.json");
    let start = |p: usize, extra: &[String]| {
        let mut args: Vec<String> =
            ["run", "degree", "--graph", &s(&g), "-n", "2", "-p", &p.to_string(), "--hostfile", &s(&hosts), "-q"]
                .iter()
                .map(|a| a.to_string())
                .collect();
        args.extend(extra.iter().cloned());
        bin().args(&args).stderr(Stdio::piped()).spawn().unwrap()
    };
    let p0 = start(0, &["--profile".into(), s(&profile_path)]);
    let p1 = start(1, &[]);
    for (i, child) in [p0, p1].into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "process {i}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let profile: ripples::types::profile::Profile = serde_json::from_str(&read(&profile_path)).unwrap();
    assert_eq!(profile.workers.iter().map(|w| w.worker).collect::<Vec<_>>(), vec![0, 1]);
    // The input's distinct vertices (7) over both processes' arrangements, as with one process.
    let mut distinct: BTreeMap<usize, i64> = BTreeMap::new();
    for a in profile.arrangements.iter().filter(|a| a.name == "Arrange: Distinct") {
        *distinct.entry(a.operator).or_insert(0) += a.records;
    }
    assert!(distinct.values().any(|r| *r == 7), "{:?}", profile.arrangements);
    assert!(read(&files.path("p.json.svg")).starts_with("<svg"));
}

/// A live run over TCP with a state directory: `(the run, the producer, its last epoch)` after
/// `epochs` committed epochs of one insertion each.
fn live_session(files: &Files, state: &Path, extra: &[&str], epochs: u64) -> (Run, common::process::Producer, u64) {
    let port = common::process::free_port();
    let mut args = vec!["run", "wcc", "--listen"];
    let port_text = port.to_string();
    args.push(&port_text);
    let state_text = s(state);
    args.extend(["--state-dir", &state_text, "--http", "127.0.0.1:0", "-q"]);
    args.extend(extra);
    let run = Run::start(files, &args);
    let (mut p, _) = common::process::Producer::connect_retry(port);
    let mut last = 0;
    for e in 0..epochs {
        p.send(&format!("+ {} {}\ncommit\n", e, e + 1)).unwrap();
        let reply = p.line().unwrap();
        last = reply.strip_prefix("ok ").and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("reply {reply:?}"));
    }
    (run, p, last)
}

fn wait_epoch(run: &mut Run, epoch: u64) {
    let deadline = Instant::now() + PATIENCE;
    while get_json(&run.addr, "/api/status")["current_epoch"].as_u64() != Some(epoch) {
        assert!(Instant::now() < deadline, "epoch {epoch} never completed: {}", read(&run.stderr));
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn live_metrics_count_the_producers_the_log_and_the_snapshots() {
    if !python_prometheus() {
        return;
    }
    let files = Files::new();
    // No snapshot yet: the log holds every epoch, and its files are what was appended.
    let state = files.path("state");
    let (mut run, mut producer, last) = live_session(&files, &state, &[], 6);
    wait_epoch(&mut run, last);
    let metrics = parse_metrics(&files, &get_open_metrics(&run.addr));
    assert_eq!(metrics["ripples_live_producers"], 1.0);
    let logs: u64 = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("log-"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(logs > 0);
    assert_eq!(metrics["ripples_wal_bytes_total"], logs as f64);
    assert_eq!(metrics["ripples_wal_appends_total"], (last + 1) as f64, "epochs 0..={last}");
    assert!(metrics["ripples_wal_append_seconds_total"] > 0.0);
    assert_eq!(metrics["ripples_snapshots_total"], 0.0);
    producer.send("end\n").unwrap();
    assert_eq!(producer.line().unwrap(), "bye");
    drop(producer);
    run.finish();

    // Snapshots every 2 epochs.
    let state = files.path("state2");
    let (mut run, producer, last) = live_session(&files, &state, &["--snapshot-every", "2"], 8);
    wait_epoch(&mut run, last);
    drop(producer);
    let deadline = Instant::now() + PATIENCE;
    let metrics = loop {
        let m = parse_metrics(&files, &get_open_metrics(&run.addr));
        if m["ripples_live_producers"] == 0.0 {
            break m;
        }
        assert!(Instant::now() < deadline, "the producer's disconnection was not counted");
        std::thread::sleep(Duration::from_millis(10));
    };
    let on_disk = std::fs::read_dir(&state)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("snapshot-"))
        .count();
    assert!(on_disk >= 1 && metrics["ripples_snapshots_total"] >= on_disk as f64, "{metrics:?}");
    assert!(metrics["ripples_last_snapshot_completed_seconds"] > 1.7e9);
    assert!(metrics["ripples_last_snapshot_entries"] >= 1.0);
}

#[test]
fn the_profile_is_served_as_sql_tables() {
    if !common::pg::clients() {
        return;
    }
    let files = Files::new();
    let (graph, lines) = stream(13, 300, 400, 600);
    let g = files.write("g.e", &graph);
    let port = common::process::free_port();
    let serve = format!("127.0.0.1:{port}");
    let mut run = Run::start(
        &files,
        &[
            "run",
            "wcc",
            "--graph",
            &s(&g),
            "--updates",
            "-",
            "--batch",
            "50",
            "--http",
            "127.0.0.1:0",
            "--serve",
            &serve,
            "--serve-trust",
            "-q",
        ],
    );
    run.send(&lines);
    run.wait_epochs(13);
    // The tables are refreshed about once a second with the epochs: more epochs until the
    // operators are there.
    let deadline = Instant::now() + PATIENCE;
    let mut extra = 0u64;
    let rows = loop {
        let rows =
            common::pg::psql(port, "SELECT name, elapsed_seconds FROM ripples_operators ORDER BY 2 DESC LIMIT 5");
        if rows.lines().count() == 5 {
            break rows;
        }
        assert!(Instant::now() < deadline, "no operators served: {rows:?}");
        run.send(&[format!("+ {} {}", 1_000_000 + extra, 2_000_000 + extra)]);
        extra += 1;
        std::thread::sleep(Duration::from_millis(100));
    };
    // The served names are the profile's, and the slowest first.
    let profile = get_json(&run.addr, "/api/profile");
    let names: BTreeSet<&str> =
        profile["operators"].as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap()).collect();
    let mut last = f64::INFINITY;
    for row in rows.lines() {
        let (name, secs) = row.split_once('|').unwrap();
        assert!(names.contains(name), "{name} is not in the profile");
        let secs: f64 = secs.parse().unwrap();
        assert!(secs <= last);
        last = secs;
    }
    let workers = common::pg::psql(port, "SELECT count(*) FROM ripples_workers");
    assert_eq!(workers.trim(), "1");
    // The statements are counted (psql sends one statement per -c here, and none besides).
    let before = get(&run.addr, "/metrics").1;
    let count = |text: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with("ripples_serve_statements_total ")).expect("the counter");
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    common::pg::psql(port, "SELECT 1");
    common::pg::psql(port, "SELECT 2");
    assert_eq!(count(&get(&run.addr, "/metrics").1), count(&before) + 2);
    run.finish();
}

#[test]
fn profile_every_writes_the_profile_while_the_run_goes_on() {
    let files = Files::new();
    let g = files.write("g.e", "1 2\n2 3\n");
    let path = files.path("p.json");
    let stderr = files.path("stderr");
    let mut child = bin()
        .args([
            "run",
            "wcc",
            "--graph",
            &s(&g),
            "--updates",
            "-",
            "--profile",
            &s(&path),
            "--profile-every",
            "0.1",
            "-q",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    // Written while the input is still open (the run cannot have ended).
    let deadline = Instant::now() + PATIENCE;
    let during: ripples::types::profile::Profile = loop {
        if let Some(p) = std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str(&t).ok()) {
            break p;
        }
        assert!(child.try_wait().unwrap().is_none(), "{}", read(&stderr));
        assert!(Instant::now() < deadline, "no profile written during the run");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(during.workers.len(), 1);
    drop(child.stdin.take());
    assert!(wait_exit(&mut child, PATIENCE, "ripples run --profile-every").success(), "{}", read(&stderr));
    let last: ripples::types::profile::Profile = serde_json::from_str(&read(&path)).unwrap();
    assert!(
        last.operators.iter().map(|o| o.invocations).sum::<u64>()
            >= during.operators.iter().map(|o| o.invocations).sum::<u64>()
    );
    // Bad values are usage errors.
    let out =
        bin().args(["run", "wcc", "--graph", &s(&g), "--profile", &s(&path), "--profile-every", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("seconds >= 0.1"));
}

/// `GET path` over TLS (trusting `cert`), with a bearer `token`: `(status, body)`.
fn get_tls(addr: &str, cert: &rcgen::CertifiedKey, path: &str, token: &str) -> (u16, String) {
    let conn = common::process::tls_client(cert);
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    write!(tls, "GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = Vec::new();
    let _ = tls.read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text).to_string();
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default())
}

#[test]
fn http_speaks_tls_with_the_token() {
    let files = Files::new();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert_file = files.write("cert.pem", &cert.cert.pem());
    let key_file = files.write("key.pem", &cert.key_pair.serialize_pem());
    let token = files.write("token", "tls-token\n");
    let g = files.write("g.e", "1 2\n");
    let mut run = Run::start(
        &files,
        &[
            "run",
            "wcc",
            "--graph",
            &s(&g),
            "--updates",
            "-",
            "--http",
            "127.0.0.1:0",
            "--http-tls-cert",
            &s(&cert_file),
            "--http-tls-key",
            &s(&key_file),
            "--http-auth-token-file",
            &s(&token),
            "-q",
        ],
    );
    // The server answers from its start; the outputs are known once the run has built its dataflow.
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, body) = get_tls(&run.addr, &cert, "/api/status", "tls-token");
        assert_eq!(status, 200, "{body}");
        let outputs = serde_json::from_str::<Value>(&body).unwrap()["outputs"].clone();
        if outputs == serde_json::json!(["wcc"]) {
            break;
        }
        assert_eq!(outputs, serde_json::json!([]), "{body}");
        assert!(Instant::now() < deadline, "the outputs never appeared: {body}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(get_tls(&run.addr, &cert, "/metrics", "wrong").0, 401);
    // Plaintext to the TLS listener: no HTTP answer.
    assert_eq!(get(&run.addr, "/api/status").0, 0);
    run.finish();
    // A key that is not one: a clear error naming the file.
    let bad = files.write("bad.pem", "not a key");
    let out = bin()
        .args([
            "run",
            "wcc",
            "--graph",
            &s(&g),
            "--http",
            "127.0.0.1:0",
            "--http-tls-cert",
            &s(&cert_file),
            "--http-tls-key",
            &s(&bad),
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.pem"), "{}", String::from_utf8_lossy(&out.stderr));
}
