//! Typed custom dataflows (`ripples::dataflow::typed`) under the driver: outputs with a `String`
//! key, a tuple value and a float, checked at every epoch against a plain computation over a
//! random insert/delete stream, with 1 and 2 workers; several named outputs; JSON lines read back
//! with serde_json; a build failure and a runtime error (an error collection) reported, with
//! nothing of the failing epoch written; the `(vertex, u64)` path byte-identical.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use clap::Parser;
use common::*;
use ripples::dataflow::typed::{typed, Float};
use ripples::dataflow::{custom, GraphInput};
use ripples::driver::{self, RunError, RunOptions};
use ripples::types::{Diff, Node, Time};

const SEED: u64 = 17;

/// Per vertex: (edge copies out, edge copies in), as a differential collection.
fn degrees(input: GraphInput<'_>) -> differential_dataflow::VecCollection<'_, Time, (Node, (u64, u64)), Diff> {
    input.edges.flat_map(|(s, d, _)| [(s, (1u64, 0u64)), (d, (0, 1))]).reduce(|_v, counts, out| {
        let (mut o, mut i) = (0u64, 0u64);
        for ((a, b), c) in counts {
            o += a * *c as u64;
            i += b * *c as u64;
        }
        out.push(((o, i), 1))
    })
}

/// The same, sequentially, from the present edge multiset.
fn oracle_degrees(counts: &BTreeMap<(Node, Node), i64>) -> BTreeMap<Node, (u64, u64)> {
    let mut out: BTreeMap<Node, (u64, u64)> = BTreeMap::new();
    for (&(s, d), &c) in counts {
        out.entry(s).or_default().0 += c as u64;
        out.entry(d).or_default().1 += c as u64;
    }
    out
}

fn ratio(o: u64, i: u64) -> f64 {
    o as f64 / (o + i) as f64
}

/// Two named outputs: `degree` (JSON: `"v<id>"` -> `[out, in]`) and `ratio` (text: vertex ->
/// out / (out + in), a float).
fn two_outputs() -> impl ripples::dataflow::Algorithm {
    typed("deg", |input, out| {
        let degrees = degrees(input);
        out.json("degree", degrees.clone().map(|(v, d)| (format!("v{v}"), d)));
        out.display("ratio", degrees.map(|(v, (o, i))| (v, Float(ratio(o, i)))));
        Ok::<(), String>(())
    })
}

#[derive(serde::Deserialize)]
struct JsonChange {
    epoch: Time,
    key: String,
    value: (u64, u64),
    diff: i8,
}

#[derive(serde::Deserialize)]
struct JsonRecord {
    key: String,
    value: (u64, u64),
}

/// Accumulates `(epoch, key, value, diff)` lines into the state after each epoch `0..=last`.
fn states<K: Ord + Clone + std::fmt::Debug, V: Clone + PartialEq + std::fmt::Debug>(
    changes: &[(Time, K, V, i8)],
    last: Time,
) -> Vec<BTreeMap<K, V>> {
    let mut state: BTreeMap<K, V> = BTreeMap::new();
    let mut out = Vec::new();
    let mut i = 0;
    for epoch in 0..=last {
        let mut added = Vec::new();
        while i < changes.len() && changes[i].0 == epoch {
            let (_, k, v, d) = &changes[i];
            match d {
                -1 => assert_eq!(state.remove(k).as_ref(), Some(v), "epoch {epoch}: retracts an absent {k:?}"),
                1 => added.push((k.clone(), v.clone())),
                d => panic!("diff {d}"),
            }
            i += 1;
        }
        for (k, v) in added {
            assert!(state.insert(k.clone(), v).is_none(), "epoch {epoch}: {k:?} has two values");
        }
        out.push(state.clone());
    }
    assert_eq!(i, changes.len(), "changes after the last epoch or out of order");
    out
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn typed_outputs_match_a_plain_computation_at_every_epoch() {
    let s = rebatch(&random_stream(SEED, 25, 30, 20, 6), 4);
    let s = RandomStream { vertices: vec![], ..s };
    let expected: Vec<BTreeMap<Node, (u64, u64)>> = edge_counts_per_epoch(&s).iter().map(oracle_degrees).collect();
    let last = s.epochs.len() as Time;
    let mut logs = Vec::new();
    for workers in [1, 2] {
        let dir = tempfile::tempdir().unwrap();
        let options =
            RunOptions { output_dir: Some(dir.path().to_path_buf()), ..RunOptions::memory(memory(&s, 4), workers) };
        let report = driver::run(options, two_outputs()).unwrap().unwrap();
        assert!(report.algorithms.is_empty(), "no (vertex, u64) output");
        let names: Vec<&str> = report.outputs.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["deg.degree", "deg.ratio"]);

        // JSON lines, parsed back with serde_json, accumulated epoch by epoch.
        let degree_log = read(dir.path(), "deg.degree.changes");
        let parsed: Vec<(Time, String, (u64, u64), i8)> = degree_log
            .lines()
            .map(|l| serde_json::from_str::<JsonChange>(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
            .map(|c| (c.epoch, c.key, c.value, c.diff))
            .collect();
        let ratio_log = read(dir.path(), "deg.ratio.changes");
        let ratios: Vec<(Time, Node, u64, i8)> = ratio_log
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                assert_eq!(f.len(), 4, "{l:?}");
                (
                    f[0].parse().unwrap(),
                    f[1].parse().unwrap(),
                    f[2].parse::<f64>().unwrap().to_bits(),
                    f[3].parse().unwrap(),
                )
            })
            .collect();
        let (degree_states, ratio_states) = (states(&parsed, last), states(&ratios, last));
        for (epoch, want) in expected.iter().enumerate() {
            let what = format!("seed {SEED} workers {workers} epoch {epoch}");
            let json: BTreeMap<String, (u64, u64)> = want.iter().map(|(v, d)| (format!("v{v}"), *d)).collect();
            assert_eq!(degree_states[epoch], json, "{what}: degree");
            let floats: BTreeMap<Node, u64> = want.iter().map(|(v, (o, i))| (*v, ratio(*o, *i).to_bits())).collect();
            assert_eq!(ratio_states[epoch], floats, "{what}: ratio");
        }
        // The result files: the last epoch's state, one record per line.
        let out: BTreeMap<String, (u64, u64)> = read(dir.path(), "deg.degree.out")
            .lines()
            .map(|l| serde_json::from_str::<JsonRecord>(l).unwrap())
            .map(|r| (r.key, r.value))
            .collect();
        assert_eq!(&out, degree_states.last().unwrap(), "workers {workers}: degree.out");
        let ratio_out = read(dir.path(), "deg.ratio.out");
        assert_eq!(ratio_out.lines().count(), expected.last().unwrap().len());
        assert_eq!(report.outputs[0].output_changes as usize, degree_log.lines().count());
        logs.push((degree_log, ratio_log, read(dir.path(), "deg.degree.out"), ratio_out));
    }
    assert!(logs[0] == logs[1], "seed {SEED}: 1 and 2 workers wrote different files");
}

/// With a single output, `--output`/`--changes` name its files; with several they are refused.
#[test]
fn a_single_output_uses_output_and_changes() {
    let s = random_stream(SEED, 10, 8, 3, 3);
    let dir = tempfile::tempdir().unwrap();
    let (changes, output) = (dir.path().join("c"), dir.path().join("o"));
    let one = typed("one", |input, out| {
        out.display("degree", degrees(input).map(|(v, (o, i))| (format!("v{v}"), o + i)));
        Ok::<(), String>(())
    });
    let options = RunOptions {
        changes: Some(changes.clone()),
        output: Some(output.clone()),
        keep_state: true,
        ..RunOptions::memory(memory(&s, 3), 1)
    };
    let report = driver::run(options, one).unwrap().unwrap();
    let want = oracle_degrees(edge_counts_per_epoch(&s).last().unwrap());
    let mut text: Vec<String> = want.iter().map(|(v, (o, i))| format!("v{v} {}", o + i)).collect();
    text.sort();
    assert_eq!(std::fs::read_to_string(&output).unwrap(), text.iter().map(|l| format!("{l}\n")).collect::<String>());
    assert_eq!(report.outputs[0].final_state.as_ref().unwrap().len(), want.len());
    assert!(std::fs::read_to_string(&changes).unwrap().starts_with("0 v"));

    let options = RunOptions { changes: Some(changes), ..RunOptions::memory(memory(&s, 3), 1) };
    let e = driver::run(options, two_outputs()).unwrap_err();
    assert_eq!(e.to_string(), "deg has 2 outputs: give --output-dir instead of --output/--changes");
}

fn out_degree(input: GraphInput<'_>) -> ripples::dataflow::ResultCollection<'_> {
    degrees(input).map(|(v, (o, _))| (v, o))
}

/// The `(vertex, u64)` path is unchanged: a `custom` closure and a typed dataflow's `vertex`
/// output write byte-identical files.
#[test]
fn the_vertex_path_is_unchanged() {
    let s = rebatch(&random_stream(SEED + 1, 20, 20, 8, 5), 5);
    let mut texts = Vec::new();
    for which in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let (changes, output) = (dir.path().join("c"), dir.path().join("o"));
        let options = RunOptions {
            changes: Some(changes.clone()),
            output: Some(output.clone()),
            ..RunOptions::memory(memory(&s, 5), 2)
        };
        let report = if which == 0 {
            driver::run(options, custom("d", out_degree)).unwrap().unwrap()
        } else {
            let alg = typed("d", |input, out| {
                out.vertex(out_degree(input), ripples::types::format::ValueFormat::Integer);
                Ok::<(), String>(())
            });
            driver::run(options, alg).unwrap().unwrap()
        };
        assert!(report.outputs.is_empty());
        let states = states_per_epoch(&report.changes.unwrap(), s.epochs.len() as u64);
        for (epoch, counts) in edge_counts_per_epoch(&s).iter().enumerate() {
            let want: BTreeMap<Node, u64> = oracle_degrees(counts).into_iter().map(|(v, (o, _))| (v, o)).collect();
            assert_eq!(states[epoch], want, "seed {} epoch {epoch}", SEED + 1);
        }
        texts.push((std::fs::read_to_string(&changes).unwrap(), std::fs::read_to_string(&output).unwrap()));
    }
    assert!(texts[0] == texts[1], "custom and typed vertex outputs differ");
}

#[test]
fn a_build_failure_is_reported_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let s = random_stream(SEED, 10, 8, 3, 3);
    for workers in [1, 2] {
        let refused = typed("refused", |input: GraphInput<'_>, _out| match input.insert_only {
            true => Ok(()),
            false => Err(format!("needs an insert-only stream (insert_only = {})", input.insert_only)),
        });
        let options = RunOptions { output_dir: Some(out_dir.clone()), ..RunOptions::memory(memory(&s, 3), workers) };
        match driver::run(options, refused) {
            Err(RunError::Build { algorithm, message }) => {
                assert_eq!(algorithm, "refused");
                assert_eq!(message, "needs an insert-only stream (insert_only = false)");
            }
            other => panic!("workers {workers}: {other:?}"),
        }
        assert!(!out_dir.exists(), "workers {workers}: a failed build wrote files");
    }
}

/// The guard: an error whenever a vertex has more than `limit` out-going edge copies.
fn guard(limit: u64) -> impl ripples::dataflow::Algorithm {
    typed("guard", move |input, out| {
        let degrees = degrees(input);
        out.errors(
            degrees
                .clone()
                .filter(move |(_, (o, _))| *o > limit)
                .map(|(v, (o, _))| format!("vertex {v} has {o} out-going edges")),
        );
        out.display("out", degrees.map(|(v, (o, _))| (v, o)));
        Ok::<(), String>(())
    })
}

/// The stream, the limit, and the first epoch at which some vertex's out-degree exceeds it.
fn guarded_stream() -> (RandomStream, u64, usize) {
    let s = RandomStream { vertices: vec![], ..rebatch(&random_stream(SEED + 2, 12, 10, 30, 6), 3) };
    let max_out =
        |counts: &BTreeMap<(Node, Node), i64>| oracle_degrees(counts).values().map(|d| d.0).max().unwrap_or(0);
    let per_epoch: Vec<u64> = edge_counts_per_epoch(&s).iter().map(max_out).collect();
    let limit = per_epoch[..4].iter().copied().max().unwrap();
    let first = per_epoch.iter().position(|&m| m > limit).expect("the stream exceeds the limit somewhere");
    (s, limit, first)
}

/// The error the guard reports at epoch `first`: the smallest message of the vertices over the limit.
fn expected_message(s: &RandomStream, limit: u64, first: usize) -> String {
    let degrees = oracle_degrees(&edge_counts_per_epoch(s)[first]);
    let messages =
        degrees.iter().filter(|(_, d)| d.0 > limit).map(|(v, d)| format!("vertex {v} has {} out-going edges", d.0));
    messages.min().unwrap()
}

#[test]
fn a_runtime_error_stops_the_run_at_its_epoch_with_nothing_of_it_written() {
    let (s, limit, first) = guarded_stream();
    for workers in [1, 2] {
        let dir = tempfile::tempdir().unwrap();
        let options =
            RunOptions { output_dir: Some(dir.path().to_path_buf()), ..RunOptions::memory(memory(&s, 3), workers) };
        match driver::run(options, guard(limit)) {
            Err(RunError::Dataflow { algorithm, epoch, message }) => {
                assert_eq!((algorithm.as_str(), epoch), ("guard", first as Time), "workers {workers}");
                assert_eq!(message, expected_message(&s, limit, first), "workers {workers}");
            }
            other => panic!("seed {} workers {workers}: {other:?}", SEED + 2),
        }
        let log = read(dir.path(), "guard.out.changes");
        let epochs: Vec<Time> = log.lines().map(|l| l.split(' ').next().unwrap().parse().unwrap()).collect();
        assert_eq!(epochs.last().copied(), Some(first as Time - 1), "workers {workers}: the last epoch written");
        assert!(!dir.path().join("guard.out.out").exists(), "no result file after a failed run");
    }
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    job: ripples::cli::JobArgs,
}

/// Through the command line's job runner (files in, `--output-dir`): the error is one message
/// naming the dataflow and the epoch, and the exit status is non-zero.
#[test]
fn the_job_runner_reports_a_runtime_error_with_a_non_zero_exit() {
    let (s, limit, first) = guarded_stream();
    let dir = tempfile::tempdir().unwrap();
    let graph: String = s.initial.iter().map(|(a, b)| format!("{a} {b}\n")).collect();
    let updates: String = s
        .epochs
        .iter()
        .flatten()
        .map(|u| format!("{} {} {}\n", if u.diff > 0 { '+' } else { '-' }, u.src, u.dst))
        .collect();
    std::fs::write(dir.path().join("g.e"), graph).unwrap();
    std::fs::write(dir.path().join("u.txt"), updates).unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let cli = Cli::parse_from([
        "guard",
        "--graph",
        &p("g.e"),
        "--updates",
        &p("u.txt"),
        "--batch",
        "3",
        "--output-dir",
        &p("out"),
        "-q",
        "-w",
        "2",
    ]);
    let result = ripples::cli::run_job(&cli.job, guard(limit));
    let message = result.as_ref().map(|_| ()).unwrap_err().to_string();
    assert_eq!(message, format!("dataflow guard failed at epoch {first}: {}", expected_message(&s, limit, first)));
    assert_ne!(ripples::cli::exit_status(result), 0);
    let log = read(&dir.path().join("out"), "guard.out.changes");
    assert!(log.lines().all(|l| l.split(' ').next().unwrap().parse::<usize>().unwrap() < first));
}

/// Multi-source BFS hop counts, sequentially: the vertices the roots reach (self-loops skipped).
fn oracle_hops(counts: &BTreeMap<(Node, Node), i64>, roots: &BTreeMap<Node, i64>) -> BTreeMap<Node, u64> {
    let mut hops: BTreeMap<Node, u64> = roots.iter().filter(|(_, c)| **c > 0).map(|(r, _)| (*r, 0)).collect();
    let mut frontier: Vec<Node> = hops.keys().copied().collect();
    let mut round = 0;
    while !frontier.is_empty() {
        round += 1;
        let mut next = Vec::new();
        for &v in &frontier {
            for &(s, d) in counts.keys() {
                if s == v && s != d && !hops.contains_key(&d) {
                    hops.insert(d, round);
                    next.push(d);
                }
            }
        }
        frontier = next;
    }
    hops
}

/// A second input collection: BFS roots as data, read from a file of `EPOCH +|- ROOT` lines by a
/// user-supplied parser; every epoch checked against a sequential BFS from the roots present.
#[test]
fn roots_as_data_from_a_records_file() {
    let s = RandomStream { vertices: vec![], ..rebatch(&random_stream(SEED + 3, 15, 20, 12, 4), 4) };
    let ids = id_pool(15);
    let dir = tempfile::tempdir().unwrap();
    let roots_path = dir.path().join("roots.txt");
    // Root changes: an insertion and a removal every few epochs (each root present 0 or 1 times).
    let mut lines = String::from("# epoch sign root\n");
    let mut present: BTreeMap<Node, i64> = BTreeMap::new();
    let mut per_epoch = Vec::new();
    for epoch in 0..=s.epochs.len() {
        if epoch % 3 == 0 {
            let root = ids[(epoch * 7 + 2) % ids.len()];
            if present.get(&root).copied().unwrap_or(0) == 0 {
                lines.push_str(&format!("{epoch} + r{root}\n"));
                *present.entry(root).or_insert(0) += 1;
            }
        }
        if epoch % 4 == 2 {
            if let Some(&root) = present.iter().find(|(_, c)| **c > 0).map(|(r, _)| r) {
                lines.push_str(&format!("{epoch} - r{root}\n"));
                *present.get_mut(&root).unwrap() -= 1;
            }
        }
        per_epoch.push(present.clone());
    }
    std::fs::write(&roots_path, &lines).unwrap();
    let bfs = |path: std::path::PathBuf| {
        typed("bfs", move |input, out| {
            let parse = |t: &str| {
                t.strip_prefix('r').and_then(|v| v.parse::<Node>().ok()).ok_or(format!("{t:?} is not a root"))
            };
            let roots =
                ripples::dataflow::typed::records(&input, ripples::dataflow::typed::read_records(&path, parse)?);
            out.display("hops", ripples::dataflow::bfs::hops(input.edges.map(|(s, d, _)| (s, d)), roots));
            Ok::<(), String>(())
        })
    };
    let mut logs = Vec::new();
    for workers in [1, 2] {
        let options = RunOptions { collect: true, ..RunOptions::memory(memory(&s, 4), workers) };
        let report = driver::run(options, bfs(roots_path.clone())).unwrap().unwrap();
        let changes: Vec<(Time, Node, u64, i8)> = report.outputs[0]
            .changes
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| (c.epoch, c.key.parse().unwrap(), c.value.parse().unwrap(), c.diff))
            .collect();
        let got = states(&changes, s.epochs.len() as Time);
        for (epoch, counts) in edge_counts_per_epoch(&s).iter().enumerate() {
            let want = oracle_hops(counts, &per_epoch[epoch]);
            assert_eq!(got[epoch], want, "seed {} workers {workers} epoch {epoch}", SEED + 3);
        }
        logs.push(changes);
    }
    assert_eq!(logs[0], logs[1], "1 and 2 workers differ");
    assert!(logs[0].iter().any(|c| c.3 < 0), "a root change retracts hops");

    // A bad line stops the run before anything runs, naming the file and the line.
    std::fs::write(&roots_path, "0 + r1\n1 + 5\n").unwrap();
    let e = driver::run(RunOptions::memory(memory(&s, 4), 2), bfs(roots_path.clone())).unwrap_err();
    assert_eq!(e.to_string(), format!("cannot build dataflow bfs: {}:2: \"5\" is not a root", roots_path.display()));
    std::fs::write(&roots_path, "x + r1\n").unwrap();
    let e = driver::run(RunOptions::memory(memory(&s, 4), 1), bfs(roots_path.clone())).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("cannot build dataflow bfs: {}:1: \"x\" is not an epoch number", roots_path.display())
    );
}

/// The typed example of the book's library chapter (book/src/library.md), verbatim inside a function, run over a small stream.
#[test]
fn the_readme_example_runs() {
    fn readme() -> impl ripples::dataflow::Algorithm {
        use ripples::dataflow::typed::{typed, Float};

        let degrees = typed("degree", |input, out| {
            if input.insert_only {
                return Err("needs deletions to be interesting".to_string());
            }
            let copies = input.edges.flat_map(|(s, d, _)| [(s, (1u64, 0u64)), (d, (0, 1))]);
            let both = copies.reduce(|_v, counts, out| {
                let (o, i) = counts.iter().fold((0, 0), |(o, i), ((a, b), c)| (o + a * *c as u64, i + b * *c as u64));
                out.push(((o, i), 1))
            });
            out.display("out", both.clone().map(|(v, (o, _))| (format!("v{v}"), o))); // degree.out.out: "v1 2"
            out.json("both", both.clone()); // {"key":1,"value":[2,1]}
            out.display("ratio", both.clone().map(|(v, (o, i))| (v, Float(o as f64 / (o + i) as f64))));
            out.errors(both.filter(|(_, (o, _))| *o > 1_000).map(|(v, _)| format!("vertex {v} fans out too far")));
            Ok(())
        });
        degrees
    }
    let dir = tempfile::tempdir().unwrap();
    let stream = ripples::driver::MemoryStream {
        initial: vec![(1, 2, None), (1, 3, None), (2, 1, None)],
        updates: vec![ripples::types::Update::delete(1, 3)],
        batch: 1,
        ..Default::default()
    };
    let options = RunOptions { output_dir: Some(dir.path().to_path_buf()), ..RunOptions::memory(stream, 1) };
    driver::run(options, readme()).unwrap();
    assert_eq!(read(dir.path(), "degree.out.out"), "v1 1\nv2 1\n");
    assert_eq!(read(dir.path(), "degree.both.out"), "{\"key\":1,\"value\":[1,1]}\n{\"key\":2,\"value\":[1,1]}\n");
    assert_eq!(read(dir.path(), "degree.ratio.out"), "1 5e-1\n2 5e-1\n");
}

/// A `Job` reads a typed dataflow's outputs: the current rows of each output decoded to the
/// dataflow's types (a `Display` output as numbers, a JSON output into a struct), and each epoch's
/// changes, folded, equal to the plain computation at every epoch, with 1 and 2 workers.
#[test]
fn a_job_reads_typed_outputs_decoded_at_every_epoch() {
    #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
    struct Degrees {
        out: u64,
        r#in: u64,
    }
    for workers in [1, 2] {
        let s = random_stream(SEED, 30, 0, 12, 8);
        let dataflow = typed("deg", |input, out| {
            let both = degrees(input);
            out.display("out", both.clone().map(|(v, (o, _))| (v, o)));
            out.json("both", both.map(|(v, (o, i))| (format!("v{v}"), Degrees { out: o, r#in: i })));
            Ok::<(), String>(())
        });
        let mut job = ripples::job::Job::builder().algorithm(dataflow).workers(workers).changes().start().unwrap();
        let counts = edge_counts_per_epoch(&s);
        let mut folded: BTreeMap<(String, Degrees), i64> = BTreeMap::new();
        for (i, updates) in s.epochs.iter().enumerate() {
            for u in updates {
                if u.diff > 0 {
                    job.insert(u.src, u.dst).unwrap();
                } else {
                    job.remove(u.src, u.dst).unwrap();
                }
            }
            let e = job.commit().unwrap();
            job.wait(e).unwrap();
            let want = oracle_degrees(&counts[i + 1]);
            let ctx = format!("seed {SEED} workers {workers} epoch {e}");
            let got: BTreeMap<u64, u64> = job.rows_as::<u64, u64>("deg.out").unwrap().into_iter().collect();
            let outs: BTreeMap<u64, u64> = want.iter().map(|(v, (o, _))| (*v, *o)).collect();
            assert_eq!(got, outs, "{ctx}: deg.out");
            let want_both: BTreeMap<String, Degrees> =
                want.iter().map(|(v, (o, i))| (format!("v{v}"), Degrees { out: *o, r#in: *i })).collect();
            let got: BTreeMap<String, Degrees> = job.rows_as("deg.both").unwrap().into_iter().collect();
            assert_eq!(got, want_both, "{ctx}: deg.both");
            // Each epoch's changes, delivered through the channel, folded.
            // (Epoch 0, the empty initial graph, comes first.)
            loop {
                let changes = job.changes().unwrap().recv().unwrap();
                for c in changes.rows_as::<String, Degrees>("deg.both").unwrap() {
                    assert_eq!(c.epoch, changes.epoch, "{ctx}");
                    *folded.entry((c.key, c.value)).or_default() += c.diff as i64;
                }
                if changes.epoch == e {
                    break;
                }
            }
            folded.retain(|_, n| *n != 0);
            let from_changes: BTreeMap<String, Degrees> = folded.keys().cloned().collect();
            assert_eq!(from_changes, want_both, "{ctx}: deg.both from the changes");
        }
        assert!(matches!(job.rows("nope.out"), Err(ripples::job::JobError::UnknownOutput(_))));
        job.shutdown().unwrap();
    }
}

/// A record an output cannot write (a `Display` text with a line break, a JSON map with
/// non-string keys) is an error of the run at the epoch it appears in: the run stops there with a
/// message naming the output, nothing of that epoch is written, with 1 and 2 workers.
#[test]
fn a_record_that_cannot_be_written_stops_the_run_at_its_epoch() {
    use ripples::types::Update;
    // Epoch 0: 1->2, epoch 1: 2->3, epoch 2: 7->7 (the self-loop renders badly).
    let stream = |batch| ripples::driver::MemoryStream {
        initial: vec![(1, 2, None)],
        updates: vec![Update::insert(2, 3), Update::insert(7, 7)],
        batch,
        ..Default::default()
    };
    for workers in [1, 2] {
        let text = typed("text", |input, out| {
            out.display(
                "out",
                input.edges.map(|(s, d, _)| (s, if s == d { format!("{s}\nloop") } else { d.to_string() })),
            );
            Ok::<(), String>(())
        });
        let json = typed("json", |input, out| {
            out.json(
                "out",
                input.edges.map(|(s, d, _)| {
                    let mut m = BTreeMap::new();
                    if s == d {
                        m.insert((s, d), 1u64);
                    }
                    (s, m)
                }),
            );
            Ok::<(), String>(())
        });
        for (name, dataflow, message) in [
            (
                "text",
                Box::new(text) as Box<dyn ripples::dataflow::Algorithm>,
                "output 'out': record \"7\" \"7\\nloop\" holds a line break",
            ),
            ("json", Box::new(json), "output 'out': a record cannot be written as JSON: key must be a string"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let changes = dir.path().join("c");
            let options = RunOptions { changes: Some(changes.clone()), ..RunOptions::memory(stream(1), workers) };
            match driver::run_many(options, vec![dataflow]) {
                Err(RunError::Dataflow { algorithm, epoch, message: m }) => {
                    assert_eq!((algorithm.as_str(), epoch), (name, 2), "{name} workers {workers}");
                    assert_eq!(m, message, "{name} workers {workers}");
                }
                other => panic!("{name} workers {workers}: {other:?}"),
            }
            let log = std::fs::read_to_string(&changes).unwrap();
            let epochs: Vec<&str> = log
                .lines()
                .map(|l| l.split([' ', ',', ':']).nth(if name == "text" { 0 } else { 1 }).unwrap())
                .collect();
            assert_eq!(epochs, ["0", "1"], "{name} workers {workers}: only epochs 0 and 1 written:\n{log}");
        }
    }
}
