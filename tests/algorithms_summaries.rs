//! gelly-streaming's insert-only summaries, `spanner --k K` and `matching`, through the library
//! driver and the binary: random insert streams (parallel and reversed copies, self-loops,
//! weights, ids 0 and above 2^32) checked at EVERY epoch against the sequential oracles over the
//! stream's prefix in arrival order, with 1, 2 and 3 workers; change logs and results
//! byte-identical for 1, 2 and 3 workers and for 2 processes; corner cases (empty stream,
//! self-loops only, duplicates, K = 1, stars, long paths, large ids); deletions, windows and
//! undeclared live input refused with exit status 2 before anything is written. And the
//! two-process check of the structure algorithms (degree, triangles, kcore, bipartite) over a
//! churn stream, and the vertex, edge and triangle counts of `--stats` at every epoch.
//!
//! Every randomised check names its seed in the failure message.

mod common;

use std::collections::BTreeSet;

use common::process::{bin, read, s, Files};
use common::session::two_process_hostfile;
use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ripples::dataflow::{self, Params};
use ripples::driver::{self, MemoryStream, RunOptions};
use ripples::oracle;
use ripples::sinks::Change;
use ripples::types::{Node, Update};

/// An insert-only stream: the initial graph (epoch 0) and the updates, cut into epochs of
/// `batch` by the driver.
#[derive(Clone, Debug)]
struct Inserts {
    initial: Vec<(Node, Node, Option<f64>)>,
    updates: Vec<(Node, Node, Option<f64>)>,
    batch: usize,
}

impl Inserts {
    fn epochs(&self) -> usize {
        self.updates.len().div_ceil(self.batch)
    }
    /// The edges that arrived by the end of `epoch`, in arrival order, as the oracles take them.
    fn prefix(&self, epoch: usize) -> Vec<(Node, Node, f64)> {
        let n = (epoch * self.batch).min(self.updates.len());
        self.initial.iter().chain(&self.updates[..n]).map(|&(a, b, w)| (a, b, w.unwrap_or(1.0))).collect()
    }
    fn line(&(a, b, w): &(Node, Node, Option<f64>)) -> String {
        match w {
            Some(w) => format!("{} {} {}", a, b, w),
            None => format!("{} {}", a, b),
        }
    }
    /// Writes the stream as an edge file and an update file.
    fn write(&self, files: &Files, tag: &str) -> (String, String) {
        let graph: String = self.initial.iter().map(|e| Inserts::line(e) + "\n").collect();
        let updates: String = self.updates.iter().map(|e| format!("+ {}\n", Inserts::line(e))).collect();
        (s(&files.write(&format!("{}.e", tag), &graph)), s(&files.write(&format!("{}.u", tag), &updates)))
    }
}

/// A random insert stream over `vertices` ids (0 and ids above 2^32 among them): parallel
/// copies, reversed copies, self-loops, weights from a small set (or none: weight 1).
fn random_inserts(seed: u64, vertices: usize, initial: usize, updates: usize, batch: usize) -> Inserts {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ids = id_pool(vertices);
    let mut seen: Vec<(Node, Node, Option<f64>)> = Vec::new();
    let mut next = |rng: &mut ChaCha8Rng| {
        let r: f64 = rng.gen();
        let weight =
            [None, Some(0.5), Some(1.0), Some(2.0), Some(2.5), Some(4.0), Some(9.0), Some(0.0)][rng.gen_range(0..8)];
        let e = if r < 0.1 && !seen.is_empty() {
            seen[rng.gen_range(0..seen.len())]
        } else if r < 0.2 && !seen.is_empty() {
            let (a, b, _) = seen[rng.gen_range(0..seen.len())];
            (b, a, weight)
        } else if r < 0.25 {
            let v = ids[rng.gen_range(0..ids.len())];
            (v, v, weight)
        } else {
            (ids[rng.gen_range(0..ids.len())], ids[rng.gen_range(0..ids.len())], weight)
        };
        seen.push(e);
        e
    };
    let initial = (0..initial).map(|_| next(&mut rng)).collect();
    let updates = (0..updates).map(|_| next(&mut rng)).collect();
    Inserts { initial, updates, batch }
}

fn params(k: u32) -> Params {
    Params { k: Some(k), ..Params::default() }
}

/// Runs `name` over `stream` in memory with `workers` workers; the collected change log.
fn run_memory(name: &str, k: u32, stream: &Inserts, workers: usize) -> Vec<Change> {
    let algorithm = dataflow::by_name(name, &params(k)).expect("a built-in algorithm");
    let mem = MemoryStream {
        vertices: Vec::new(),
        initial: stream.initial.clone(),
        updates: stream.updates.iter().map(|&(a, b, w)| Update { src: a, dst: b, weight: w, diff: 1 }).collect(),
        batch: stream.batch,
    };
    let report = driver::run(RunOptions::memory(mem, workers), algorithm).expect("run").expect("writer report");
    report.changes.expect("collected changes")
}

/// The oracle's records for `name` over `edges` (in arrival order).
fn expected(name: &str, k: u32, edges: &[(Node, Node, f64)]) -> BTreeSet<(u64, u64)> {
    match name {
        "spanner" => oracle::spanner(k, edges),
        "matching" => oracle::matching(edges).into_iter().collect(),
        other => panic!("no oracle for {}", other),
    }
}

/// Runs `name` with each of `workers` and checks every epoch against the oracle, and that the
/// change logs are identical; returns the per-epoch sets.
fn check(name: &str, k: u32, stream: &Inserts, workers: &[usize], what: &str) -> Vec<BTreeSet<(u64, u64)>> {
    let mut first: Option<Vec<Change>> = None;
    let mut sets = Vec::new();
    for &w in workers {
        let what = format!("{}: {} --k {} with {} worker(s), batch {}", what, name, k, w, stream.batch);
        let changes = run_memory(name, k, stream, w);
        sets = sets_per_epoch(&changes, stream.epochs() as u64, &what);
        for (epoch, got) in sets.iter().enumerate() {
            assert_eq!(
                got,
                &expected(name, k, &stream.prefix(epoch)),
                "{}: differs from the oracle at epoch {}",
                what,
                epoch
            );
        }
        match &first {
            None => first = Some(changes),
            Some(f) => assert_eq!(f, &changes, "{}: change log differs from the first worker count's", what),
        }
    }
    sets
}

#[test]
fn spanner_matches_the_oracle_every_epoch() {
    for (seed, vertices, initial, updates, batch, k) in
        [(301u64, 20, 15, 80, 7, 2u32), (302, 40, 30, 120, 10, 3), (303, 12, 0, 60, 1, 1), (304, 60, 50, 100, 13, 5)]
            .into_iter()
            // Many epochs over a dense graph: with several workers most copies are dropped by the
            // workers' snapshots of the spanner, some only at worker 0 (spanned by edges kept
            // earlier in their own epoch).
            .chain([(305, 30, 0, 600, 25, 2), (306, 50, 40, 500, 40, 3)])
    {
        let stream = random_inserts(seed, vertices, initial, updates, batch);
        check("spanner", k, &stream, &[1, 2, 3], &format!("seed {}", seed));
    }
}

#[test]
fn matching_matches_the_oracle_every_epoch() {
    for (seed, vertices, initial, updates, batch) in
        [(311u64, 15, 10, 90, 6), (312, 40, 30, 120, 11), (313, 8, 0, 60, 1), (314, 60, 60, 80, 17)]
    {
        let stream = random_inserts(seed, vertices, initial, updates, batch);
        check("matching", 1, &stream, &[1, 2, 3], &format!("seed {}", seed));
    }
}

/// Many epochs over a dense graph, so that with several workers most copies meet an endpoint
/// matched in their worker's snapshot: weighted (a copy is dropped there only when its time's
/// heaviest copy is at most twice that endpoint's weight, so heavy copies arriving in the same
/// or an earlier epoch in flight must keep it), unit weights (a matched vertex stays matched, so
/// nearly every copy is dropped there), and weights within a factor of two of each other.
#[test]
fn matching_with_snapshots_matches_the_oracle_every_epoch() {
    for (seed, vertices, initial, updates, batch) in
        [(315u64, 30, 0, 600, 25), (316, 50, 40, 500, 40), (317, 12, 5, 400, 9)]
    {
        let weighted = random_inserts(seed, vertices, initial, updates, batch);
        check("matching", 1, &weighted, &[1, 2, 3], &format!("seed {} (weighted)", seed));
        let reweigh = |edges: &[(Node, Node, Option<f64>)], f: &dyn Fn(Option<f64>) -> Option<f64>| {
            edges.iter().map(|&(a, b, w)| (a, b, f(w))).collect::<Vec<_>>()
        };
        let unit = Inserts {
            initial: reweigh(&weighted.initial, &|_| None),
            updates: reweigh(&weighted.updates, &|_| None),
            batch,
        };
        check("matching", 1, &unit, &[1, 2, 3], &format!("seed {} (unit weights)", seed));
        // Weights 1.0 to 2.5: a copy of weight above twice an endpoint's weight steals it.
        let near = |w: Option<f64>| Some(1.0 + (w.unwrap_or(1.0) * 7.0) % 1.5);
        let near =
            Inserts { initial: reweigh(&weighted.initial, &near), updates: reweigh(&weighted.updates, &near), batch };
        check("matching", 1, &near, &[1, 2, 3], &format!("seed {} (weights 1 to 2.5)", seed));
    }
}

/// A hand-written stream, all of it in epoch 1 cut by `batch`, checked with 1 and 2 workers.
fn hand(
    name: &str,
    k: u32,
    initial: &[(Node, Node, Option<f64>)],
    updates: &[(Node, Node, Option<f64>)],
    batch: usize,
) -> Vec<BTreeSet<(u64, u64)>> {
    let stream = Inserts { initial: initial.to_vec(), updates: updates.to_vec(), batch };
    check(name, k, &stream, &[1, 2], &format!("hand-written {:?} / {:?}", initial, updates))
}

fn unweighted(edges: &[(Node, Node)]) -> Vec<(Node, Node, Option<f64>)> {
    edges.iter().map(|&(a, b)| (a, b, None)).collect()
}

#[test]
fn corner_cases() {
    let big = 1u64 << 40;
    let max = u64::MAX;
    // Empty stream, and a stream of self-loops only: nothing is kept or matched.
    for name in ["spanner", "matching"] {
        assert!(hand(name, 1, &[], &[], 1).iter().all(BTreeSet::is_empty));
        let loops = unweighted(&[(0, 0), (big, big), (max, max), (0, 0)]);
        assert!(hand(name, 2, &loops, &loops, 2).iter().all(BTreeSet::is_empty), "{}", name);
    }
    // Duplicates and reversed copies of a kept edge are not kept (K = 1); ids 0 and above 2^32.
    let dup = unweighted(&[(0, big), (big, 0), (0, big), (max, 0), (0, max)]);
    let sets = hand("spanner", 1, &dup, &[], 1);
    assert_eq!(sets[0], BTreeSet::from([(0, big), (0, max)]));
    // K = 1 keeps every distinct pair; a triangle's last edge is dropped from K = 2 on.
    let triangle = unweighted(&[(1, 2), (2, 3), (3, 1)]);
    assert_eq!(hand("spanner", 1, &triangle, &[], 1)[0].len(), 3);
    assert_eq!(hand("spanner", 2, &triangle, &[], 1)[0], BTreeSet::from([(1, 2), (2, 3)]));
    // A star keeps every spoke; edges between leaves are 2 hops apart.
    let leaves: Vec<Node> = (1..=10).map(|i| i * (1 << 33)).collect();
    let star: Vec<(Node, Node)> = leaves.iter().map(|&l| (0, l)).collect();
    let between: Vec<(Node, Node)> = leaves.windows(2).map(|w| (w[0], w[1])).collect();
    let sets = hand("spanner", 1, &unweighted(&star), &unweighted(&between), 3);
    assert_eq!(sets.last().unwrap().len(), 19);
    let sets = hand("spanner", 2, &unweighted(&star), &unweighted(&between), 3);
    assert_eq!(sets.last().unwrap().len(), 10);
    // A long path (50 vertices) closed into a cycle: kept only when K < 49.
    let path: Vec<(Node, Node)> = (0..49u64).map(|i| (i * 3 + big, i * 3 + 3 + big)).collect();
    let close = [(path[48].1, path[0].0)];
    assert_eq!(hand("spanner", 48, &unweighted(&path), &unweighted(&close), 1)[1].len(), 50);
    assert_eq!(hand("spanner", 49, &unweighted(&path), &unweighted(&close), 1)[1].len(), 49);
    // Matching on a star: the first spoke is matched; a spoke more than twice as heavy takes over.
    let spokes: Vec<(Node, Node, Option<f64>)> =
        leaves.iter().enumerate().map(|(i, &l)| (0, l, Some([1.0, 2.0, 2.5, 0.0, 6.0][i % 5]))).collect();
    let sets = hand("matching", 1, &[], &spokes, 1);
    assert_eq!(sets[1], BTreeSet::from([(0, leaves[0]), (leaves[0], 0)]));
    assert_eq!(sets[3], BTreeSet::from([(0, leaves[2]), (leaves[2], 0)]));
    assert_eq!(sets[5], BTreeSet::from([(0, leaves[4]), (leaves[4], 0)]));
    // Matching on a long path of equal weights: every other edge, in arrival order.
    let sets = hand("matching", 1, &unweighted(&path), &[], 1);
    assert_eq!(sets[0].len(), 50);
    assert!(sets[0].contains(&(big, big + 3)) && !sets[0].contains(&(big + 3, big + 6)));
    // A parallel copy more than twice as heavy replaces its twin: nothing changes in the output.
    let twin = [(5, 6, Some(1.0)), (6, 5, Some(2.5)), (6, 7, Some(5.5)), (6, 7, Some(5.5))];
    let sets = hand("matching", 1, &[], &twin, 1);
    assert_eq!(sets[1], sets[2]);
    assert_eq!(sets[3], BTreeSet::from([(6, 7), (7, 6)]));
    assert_eq!(sets[3], sets[4]);
}

/// `ripples run ALGS ... --output-dir DIR` with `extra` arguments; panics on failure.
fn run_bin(args: &[&str], extra: &[String]) {
    let out = bin().args(args).args(extra).output().expect("ripples runs");
    assert!(out.status.success(), "{:?} {:?}: {}", args, extra, String::from_utf8_lossy(&out.stderr));
}

/// Two processes of `workers` workers each running `args` with `--output-dir DIR`.
fn run_two_processes(files: &Files, args: &[String], dir: &std::path::Path, workers: usize) {
    let (hostfile, _) = two_process_hostfile(files);
    let children: Vec<_> = (0..2)
        .map(|p| {
            bin()
                .args(args)
                .args(["--output-dir", &s(&dir.join(p.to_string())), "-w", &workers.to_string(), "-n", "2"])
                .args(["-p", &p.to_string(), "--hostfile", &s(&hostfile)])
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("ripples starts")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{:?}: a process failed: {}", args, String::from_utf8_lossy(&out.stderr));
    }
    assert!(!dir.join("1").exists(), "only process 0 writes");
}

/// Runs `names` (comma-separated) with 1, 2 and 3 workers and with 2 processes of 2 workers,
/// and checks that every algorithm's change log and result are byte-identical.
fn check_files_identical(files: &Files, names: &str, common_args: &[String]) {
    let mut args: Vec<String> = ["run", names, "-q"].map(String::from).to_vec();
    args.extend(common_args.iter().cloned());
    let dir = |tag: &str| files.path(&format!("{}-{}", names.replace(',', "-"), tag));
    let str_args: Vec<&str> = args.iter().map(String::as_str).collect();
    for w in [1, 2, 3] {
        run_bin(&str_args, &["--output-dir".into(), s(&dir(&format!("w{}", w))), "-w".into(), w.to_string()]);
    }
    run_two_processes(files, &args, &dir("n2"), 2);
    for name in names.split(',') {
        for file in [format!("{}.changes", name), format!("{}.out", name)] {
            let one = read(&dir("w1").join(&file));
            for other in [dir("w2"), dir("w3"), dir("n2").join("0")] {
                assert_eq!(one, read(&other.join(&file)), "{}: {} differs from 1 worker's", other.display(), file);
            }
        }
    }
}

#[test]
fn change_logs_are_identical_for_1_2_3_workers_and_2_processes() {
    let files = Files::new();
    // spanner and matching over an insert-only edge file and update file (the edge file is
    // split between the workers by byte range: order still follows the file).
    let stream = random_inserts(321, 30, 40, 90, 9);
    let (graph, updates) = stream.write(&files, "ins");
    let args: Vec<String> =
        ["--graph", &graph, "--updates", &updates, "--batch", "9", "--k", "2"].map(String::from).to_vec();
    check_files_identical(&files, "spanner,matching", &args);
    // The results are the oracles'.
    let last = stream.prefix(stream.epochs());
    let out = read(&files.path("spanner-matching-w1").join("matching.out"));
    let want: String = oracle::matching(&last).into_iter().map(|(a, b)| format!("{} {}\n", a, b)).collect();
    assert_eq!(out, want);
    // degree, triangles, kcore and bipartite over a churn stream.
    let churn = random_stream(322, 25, 50, 12, 8);
    let g: String = churn.initial.iter().map(|(a, b)| format!("{} {}\n", a, b)).collect();
    let u: String = churn
        .epochs
        .iter()
        .flatten()
        .map(|u| format!("{} {} {}\n", if u.diff > 0 { "+" } else { "-" }, u.src, u.dst))
        .collect();
    let (g, u) = (s(&files.write("churn.e", &g)), s(&files.write("churn.u", &u)));
    let args: Vec<String> = ["--graph", &g, "--updates", &u, "--batch", "8"].map(String::from).to_vec();
    check_files_identical(&files, "degree,triangles,kcore,bipartite", &args);
    // The same stream with every id below 2^63, so that bipartite stays on its forest over the
    // double cover (ids near 2^64 hand the graph over to the general path at epoch 0).
    let low = |v: u64| v & !(1 << 63);
    let g: String = churn.initial.iter().map(|(a, b)| format!("{} {}\n", low(*a), low(*b))).collect();
    let u: String = churn
        .epochs
        .iter()
        .flatten()
        .map(|u| format!("{} {} {}\n", if u.diff > 0 { "+" } else { "-" }, low(u.src), low(u.dst)))
        .collect();
    let (g, u) = (s(&files.write("low.e", &g)), s(&files.write("low.u", &u)));
    let args: Vec<String> = ["--graph", &g, "--updates", &u, "--batch", "8"].map(String::from).to_vec();
    check_files_identical(&files, "bipartite", &args);
}

/// Runs `args`, expecting exit status 2 with `needle` on stderr and nothing written.
fn expect_refused(files: &Files, args: &[&str], stdin_text: Option<&str>, needle: &str) {
    let changes = files.path("refused.changes");
    let mut cmd = bin();
    cmd.args(args).args(["--changes", &s(&changes)]);
    let out = match stdin_text {
        None => cmd.output().expect("ripples runs"),
        Some(text) => {
            use std::io::Write;
            let mut child = cmd
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("ripples starts");
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
            child.wait_with_output().unwrap()
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{:?}: stderr: {}", args, stderr);
    assert!(stderr.contains(needle), "{:?}: stderr should contain {:?}: {}", args, needle, stderr);
    assert!(!stderr.contains("panicked"), "{:?}: {}", args, stderr);
    assert!(!changes.exists(), "{:?}: nothing may be written", args);
}

#[test]
fn deletions_windows_and_undeclared_live_input_are_refused() {
    let files = Files::new();
    let g = s(&files.write("g.e", "1 2\n2 3\n"));
    let u = s(&files.write("u.txt", "+ 3 4\n- 1 2\n"));
    let t = s(&files.write("t.txt", "3 4 @1\n4 5 @2\n"));
    for (name, k) in [("spanner", "3"), ("matching", "1")] {
        let base = ["run", name, "--k", k, "-q", "--graph", &g];
        let deletes = [&base[..], &["--updates", &u, "-w", "2"]].concat();
        let why = "depends on the order edges arrive in and handles insertions only: the update stream deletes edges";
        expect_refused(&files, &deletes, None, &format!("{} {}", name, why));
        let windowed = ["run", name, "--k", k, "-q", "--updates", &t, "--window", "5"];
        expect_refused(&files, &windowed, None, "cannot run over --window/--tumbling windows");
        let live = ["run", name, "--k", k, "-q", "--updates", "-"];
        expect_refused(&files, &live, Some("+ 1 2\ncommit\n"), "live input must be declared --insert-only");
    }
    // --k is required by spanner, and at least 1.
    for k in [None, Some("0")] {
        let mut args = vec!["run", "spanner", "-q", "--graph", &g];
        if let Some(k) = k {
            args.extend(["--k", k]);
        }
        expect_refused(&files, &args, None, "spanner needs a distance bound --k K of at least 1");
    }
}

/// The `--stats` lines of a run: the epochs' objects and the summary.
fn stats_lines(path: &std::path::Path) -> (Vec<serde_json::Value>, serde_json::Value) {
    let mut lines: Vec<serde_json::Value> =
        read(path).lines().map(|l| serde_json::from_str(l).expect("a JSON stats line")).collect();
    let summary = lines.pop().expect("a summary line");
    assert_eq!(summary["summary"], true);
    (lines, summary)
}

#[test]
fn stats_report_vertex_edge_and_triangle_counts_every_epoch() {
    let files = Files::new();
    let stream = random_stream(331, 14, 40, 12, 7);
    let g: String = stream.initial.iter().map(|(a, b)| format!("{} {}\n", a, b)).collect();
    let v: String = stream.vertices.iter().map(|v| format!("{}\n", v)).collect();
    let (g, v) = (s(&files.write("g.e", &g)), s(&files.write("g.v", &v)));
    // The stream, and its insertions alone (which WCC takes its insert-only path over).
    let flat: Vec<Update> = stream.epochs.iter().flatten().copied().collect();
    let inserts: Vec<Update> = flat.iter().filter(|u| u.diff > 0).copied().collect();
    // The census reads the shared vertex and edge sets with triangles and degree; the fully
    // dynamic WCC forest's own counts with wcc (one forest sees every record, also at 3
    // workers); and with wcc's insert-only path (which keeps neither) it counts them itself,
    // per key at the worker the key hashes to, each worker sending a vertex on once.
    for (names, workers, updates) in [
        ("triangles,degree", "2", &flat),
        ("wcc", "1", &flat),
        ("wcc", "3", &flat),
        ("wcc", "2", &inserts),
        ("wcc", "3", &inserts),
    ] {
        let tag = format!("{}-{}-{}", names, workers, updates.len());
        let u: String =
            updates.iter().map(|u| format!("{} {} {}\n", if u.diff > 0 { "+" } else { "-" }, u.src, u.dst)).collect();
        let u = s(&files.write(&format!("{tag}.u"), &u));
        // The epochs `--batch 7` cuts.
        let recut = RandomStream {
            vertices: stream.vertices.clone(),
            initial: stream.initial.clone(),
            epochs: updates.chunks(7).map(|c| c.to_vec()).collect(),
        };
        let counts = edge_counts_per_epoch(&recut);
        let path = files.path(&format!("{tag}.stats"));
        let args =
            ["run", names, "-q", "--graph", &g, "--vertices", &v, "--updates", &u, "--batch", "7", "-w", workers];
        run_bin(&args, &["--stats".into(), s(&path), "--output-dir".into(), s(&files.path(&tag))]);
        let (epochs, summary) = stats_lines(&path);
        assert_eq!(epochs.len(), counts.len(), "{}", tag);
        for (epoch, (line, present)) in epochs.iter().zip(&counts).enumerate() {
            let (vertices, edges) = oracle_input(&recut.vertices, present);
            let pairs: BTreeSet<(Node, Node)> =
                edges.iter().filter(|e| e.0 != e.1).map(|e| (e.0.min(e.1), e.0.max(e.1))).collect();
            let what = format!("{} epoch {}: {}", tag, epoch, line);
            assert_eq!(line["vertices"].as_u64(), Some(vertices.len() as u64), "{}", what);
            assert_eq!(line["edges"].as_u64(), Some(pairs.len() as u64), "{}", what);
            if names.contains("triangles") {
                let triangles: u64 = oracle::triangles(&vertices, &edges).values().sum::<u64>() / 3;
                assert_eq!(line["triangles"].as_u64(), Some(triangles), "{}", what);
            } else {
                assert!(line.get("triangles").is_none(), "{}", what);
            }
        }
        let last = epochs.last().unwrap();
        for field in ["vertices", "edges", "triangles"] {
            assert_eq!(summary.get(field), last.get(field), "{}: summary {}", tag, field);
        }
        // The path each WCC run took shows in its stats: the dynamic forest reports fallbacks.
        if names == "wcc" {
            let dynamic = summary.get("wcc_fallbacks").and_then(|n| n.as_u64()).is_some();
            assert_eq!(dynamic, updates.len() == flat.len(), "{}", tag);
        }
        // `--no-census`: the same epochs and results, without the census's fields.
        if workers == "2" {
            let bare = files.path(&format!("{tag}.bare.stats"));
            let out = files.path(&format!("{tag}.bare"));
            run_bin(&args, &["--stats".into(), s(&bare), "--no-census".into(), "--output-dir".into(), s(&out)]);
            let (bare_epochs, bare_summary) = stats_lines(&bare);
            assert_eq!(bare_epochs.len(), epochs.len(), "{} --no-census", tag);
            for line in bare_epochs.iter().chain([&bare_summary]) {
                for field in ["vertices", "edges", "triangles"] {
                    assert!(line.get(field).is_none(), "{} --no-census: {} in {}", tag, field, line);
                }
            }
            for name in names.split(',') {
                for ext in ["out", "changes"] {
                    let file = format!("{name}.{ext}");
                    let text = |dir: &std::path::Path| read(&dir.join(&file));
                    assert_eq!(text(&out), text(&files.path(&tag)), "{} --no-census: {}", tag, file);
                }
            }
        }
    }
}
