//! Degree, degree distribution, triangles, core numbers and bipartiteness through the library
//! driver: random insert/delete streams (multi-edges, self-loops, ids 0 and above 2^32, vertex
//! files) checked at EVERY epoch against the sequential oracles, each algorithm with 1, 2 and 3
//! workers; corner cases with 1 and 2 workers (empty graph, vertex-file vertices, a vertex losing
//! its last edge, ids 0 and above 2^32, cliques, stars, odd and even cycles, long paths); several
//! algorithms in one run (`--output-dir`, with `wcc`) equal to single runs; and a sliding and a
//! tumbling window through the binary, checked at every time.
//!
//! Every randomised check names its seed in the failure message.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::process::{bin, read, s, Files};
use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ripples::dataflow::{self, Params};
use ripples::driver::{self, MemoryStream, RunOptions};
use ripples::oracle;
use ripples::sinks::Change;
use ripples::types::{Node, Update};

const ALL: [&str; 5] = ["degree", "degree-distribution", "triangles", "kcore", "bipartite"];

/// The oracle's result for algorithm `name`.
fn expected(name: &str, vertices: &BTreeSet<Node>, edges: &[(Node, Node, f64)]) -> BTreeMap<u64, u64> {
    match name {
        "degree" => oracle::degree(vertices, edges),
        "degree-distribution" => oracle::degree_distribution(vertices, edges),
        "triangles" => oracle::triangles(vertices, edges),
        "kcore" | "kcore-iterate" => oracle::kcore(vertices, edges),
        "bipartite" | "bipartite-general" => oracle::bipartite(vertices, edges),
        other => panic!("no oracle for {}", other),
    }
}

fn run_stream(name: &str, stream: &RandomStream, batch: usize, workers: usize) -> Vec<Change> {
    let algorithm = dataflow::by_name(name, &Params::default()).expect("a built-in algorithm");
    let mem = MemoryStream {
        vertices: stream.vertices.clone(),
        initial: stream.initial.iter().map(|&(s, d)| (s, d, None)).collect(),
        updates: stream.epochs.iter().flatten().copied().collect(),
        batch,
    };
    let report = driver::run(RunOptions::memory(mem, workers), algorithm).expect("run").expect("writer report");
    report.changes.expect("collected changes")
}

/// Runs `name` over `stream` (already cut into epochs of `batch`) and checks every epoch
/// against the oracle; returns the states.
fn check_stream(
    name: &str,
    stream: &RandomStream,
    batch: usize,
    workers: usize,
    what: &str,
) -> Vec<BTreeMap<u64, u64>> {
    let changes = run_stream(name, stream, batch, workers);
    let states = states_per_epoch(&changes, stream.epochs.len() as u64);
    for (epoch, counts) in edge_counts_per_epoch(stream).iter().enumerate() {
        let (vs, es) = oracle_input(&stream.vertices, counts);
        let want = expected(name, &vs, &es);
        assert_eq!(
            states[epoch], want,
            "{}: {} workers={} batch={}: differs from the oracle at epoch {}",
            what, name, workers, batch, epoch
        );
    }
    states
}

/// One random stream for each of `names`, with each of `workers`.
fn check_random(
    names: &[&str],
    workers: &[usize],
    seed: u64,
    vertices: usize,
    initial: usize,
    epochs: usize,
    batch: usize,
) {
    let stream = rebatch(&random_stream(seed, vertices, initial, epochs, batch), batch);
    for name in names {
        for &workers in workers {
            check_stream(name, &stream, batch, workers, &format!("seed {} ({} vertices)", seed, vertices));
        }
    }
}

#[test]
fn degrees_match_the_oracle_every_epoch() {
    check_random(&["degree", "degree-distribution"], &[1, 2, 3], 51, 30, 40, 12, 5);
    check_random(&["degree", "degree-distribution"], &[1], 52, 30, 40, 12, 5);
    check_random(&["degree", "degree-distribution"], &[1, 2], 53, 10, 30, 20, 1);
}

#[test]
fn triangles_match_the_oracle_every_epoch() {
    // Dense: many triangles appear and vanish, several per epoch share pairs.
    check_random(&["triangles"], &[1, 2, 3], 61, 10, 40, 12, 6);
    check_random(&["triangles"], &[1, 2, 3], 62, 14, 50, 10, 9);
    check_random(&["triangles"], &[1, 2], 63, 30, 60, 20, 1);
}

#[test]
fn core_numbers_match_the_oracle_every_epoch() {
    check_random(&["kcore"], &[1, 2, 3], 71, 10, 40, 12, 6);
    check_random(&["kcore"], &[1, 2, 3], 72, 25, 45, 10, 5);
    check_random(&["kcore"], &[1, 2], 73, 40, 50, 20, 1);
    check_random(&["kcore"], &[1], 74, 8, 30, 30, 2);
    // The data-parallel h-index iteration (`kcore-iterate`) computes the same values.
    check_random(&["kcore-iterate"], &[1, 2, 3], 71, 10, 40, 12, 6);
    check_random(&["kcore-iterate"], &[1], 73, 40, 50, 20, 1);
}

#[test]
fn bipartiteness_matches_the_oracle_every_epoch() {
    // Sparse: components switch between bipartite and odd-cycled, merge and split.
    check_random(&["bipartite"], &[1, 2, 3], 81, 30, 25, 10, 4);
    check_random(&["bipartite"], &[1], 82, 30, 25, 25, 1);
    check_random(&["bipartite"], &[1, 2], 83, 12, 15, 12, 3);
    // Denser: odd cycles everywhere, deletions of the cover forest's edges find replacements.
    check_random(&["bipartite"], &[1, 2], 84, 16, 40, 20, 5);
    check_random(&["bipartite"], &[1], 85, 60, 70, 30, 8);
    // The general path (label propagation over the cover) computes the same values.
    check_random(&["bipartite-general"], &[1, 2, 3], 81, 30, 25, 10, 4);
    check_random(&["bipartite-general"], &[1], 84, 16, 40, 20, 5);
}

#[test]
fn bipartite_hands_over_to_the_general_path_at_an_id_of_2_63_or_more() {
    // `bipartite` numbers the double cover 2v + side, which ids below 2^63 fit: the forest runs
    // until an epoch names a larger id, then hands the graph over to the general path (label
    // propagation over the cover). The values stay the oracle's at every epoch, and the change
    // log is the general path's byte for byte.
    let seed = 86;
    let low = |v: Node| v & !(1 << 63);
    let stream = random_stream(seed, 40, 50, 40, 4);
    let mut updates: Vec<Update> =
        stream.epochs.iter().flatten().map(|u| Update { src: low(u.src), dst: low(u.dst), ..*u }).collect();
    assert!(updates.len() >= 70, "seed {seed}: {} updates", updates.len());
    let big: Node = 1 << 63;
    let hub = low(stream.initial[0].0);
    // Epoch 11 (epochs 1.. of 4 updates each) joins 2^63 to the graph; later ones add a triangle through
    // it, a self-loop at u64::MAX, and take the first edge away again.
    updates.insert(40, Update::insert(hub, big));
    updates.insert(48, Update::insert(big, u64::MAX));
    updates.insert(52, Update::insert(u64::MAX, hub));
    updates.insert(56, Update::insert(u64::MAX, u64::MAX));
    updates.insert(64, Update::delete(hub, big));
    let stream = RandomStream {
        vertices: stream.vertices.iter().map(|&v| low(v)).collect(),
        initial: stream.initial.iter().map(|&(s, d)| (low(s), low(d))).collect(),
        epochs: vec![updates],
    };
    let batch = 4;
    let stream = rebatch(&stream, batch);
    for workers in [1, 2] {
        let what = format!("seed {seed}, the hand-over at epoch 11");
        check_stream("bipartite", &stream, batch, workers, &what);
        let fast = run_stream("bipartite", &stream, batch, workers);
        let general = run_stream("bipartite-general", &stream, batch, workers);
        assert_eq!(fast, general, "{what}: workers={workers}: the change logs differ");
    }
}

/// A hand-written stream, checked at every epoch for every algorithm with 1 and 2 workers;
/// returns the states of each algorithm (1 worker).
fn check_handwritten(
    vertices: &[Node],
    initial: &[(Node, Node)],
    updates: &[Update],
    batch: usize,
    what: &str,
) -> BTreeMap<&'static str, Vec<BTreeMap<u64, u64>>> {
    let stream = rebatch(
        &RandomStream { vertices: vertices.to_vec(), initial: initial.to_vec(), epochs: vec![updates.to_vec()] },
        batch.max(1),
    );
    let mut out = BTreeMap::new();
    for name in ALL {
        for workers in [2, 1] {
            let states = check_stream(name, &stream, batch.max(1), workers, what);
            out.insert(name, states);
        }
    }
    out
}

fn ins(edges: &[(Node, Node)]) -> Vec<Update> {
    edges.iter().map(|&(s, d)| Update::insert(s, d)).collect()
}

fn del(edges: &[(Node, Node)]) -> Vec<Update> {
    edges.iter().map(|&(s, d)| Update::delete(s, d)).collect()
}

fn clique(vertices: &[Node]) -> Vec<(Node, Node)> {
    let mut out = Vec::new();
    for (i, &a) in vertices.iter().enumerate() {
        for &b in &vertices[i + 1..] {
            out.push((b, a));
        }
    }
    out
}

fn cycle(vertices: &[Node]) -> Vec<(Node, Node)> {
    (0..vertices.len()).map(|i| (vertices[i], vertices[(i + 1) % vertices.len()])).collect()
}

fn constant(vertices: &[Node], value: u64) -> BTreeMap<u64, u64> {
    vertices.iter().map(|&v| (v, value)).collect()
}

#[test]
fn empty_graph_and_isolated_vertex_file_vertices() {
    let none = check_handwritten(&[], &[], &[], 1, "empty");
    assert!(none.values().all(|states| states.iter().all(|s| s.is_empty())), "{:?}", none);
    let big = 1u64 << 40;
    let isolated = check_handwritten(&[0, 5, big, u64::MAX], &[], &[], 1, "isolated");
    let vs = [0, 5, big, u64::MAX];
    for name in ["degree", "triangles", "kcore", "bipartite"] {
        assert_eq!(isolated[name][0], constant(&vs, 0), "{}", name);
    }
    assert_eq!(isolated["degree-distribution"][0], BTreeMap::from([(0, 4)]));
}

#[test]
fn a_vertex_losing_its_last_edge_leaves_unless_in_the_vertex_file() {
    let initial = [(1, 2), (2, 3), (3, 1), (3, 4), (4, 4)];
    let updates = [del(&[(3, 4)]), ins(&[(5, 6)]), del(&[(4, 4), (5, 6)]), del(&[(1, 2)])].concat();
    let states = check_handwritten(&[5], &initial, &updates, 1, "last edge");
    // 4 keeps a self-loop after losing (3, 4): still a vertex, degree 0; then it leaves.
    assert_eq!(states["degree"][1], BTreeMap::from([(1, 2), (2, 2), (3, 2), (4, 0), (5, 0)]));
    assert_eq!(states["degree"][4], BTreeMap::from([(1, 2), (2, 2), (3, 2), (5, 0)]));
    assert_eq!(states["degree"][5], BTreeMap::from([(1, 1), (2, 1), (3, 2), (5, 0)]));
    assert_eq!(states["triangles"][0], BTreeMap::from([(1, 1), (2, 1), (3, 1), (4, 0), (5, 0)]));
    assert_eq!(states["triangles"][5], BTreeMap::from([(1, 0), (2, 0), (3, 0), (5, 0)]));
    assert_eq!(states["kcore"][5], BTreeMap::from([(1, 1), (2, 1), (3, 1), (5, 0)]));
}

#[test]
fn large_ids_and_vertex_zero() {
    let big = 1u64 << 33;
    let max = u64::MAX;
    // A triangle {0, big, max}, a square {big + 1, max - 1, 7, 1 << 32} and links between them.
    let initial = [(0, big), (max, 0), (big, max), (big + 1, max - 1), (max - 1, 7), (7, 1 << 32), (1 << 32, big + 1)];
    let updates = [
        ins(&[(0, 7)]),
        del(&[(big, max)]),
        ins(&[(max, big + 1), (0, 1 << 32)]),
        del(&[(max - 1, 7), (0, big)]),
        ins(&[(big, max)]),
    ]
    .concat();
    let states = check_handwritten(&[1 << 32], &initial, &updates, 2, "large ids");
    assert_eq!(states["triangles"][0][&max], 1);
    assert_eq!(states["bipartite"][0][&0], 2);
    // The square's smallest vertex is 7: colour 0; its neighbours 1.
    assert_eq!(states["bipartite"][0][&7], 0);
    assert_eq!(states["bipartite"][0][&(big + 1)], 0);
    assert_eq!(states["bipartite"][0][&(1 << 32)], 1);
}

#[test]
fn cliques_built_and_torn_down() {
    let k5 = [0, 3, 1 << 35, 9, u64::MAX];
    let edges = clique(&k5);
    let mut updates = ins(&edges);
    updates.extend(ins(&edges[..4])); // parallel copies change nothing
    updates.extend(del(&edges[..4]));
    updates.extend(del(&edges[2..7]));
    let states = check_handwritten(&[], &[], &updates, 3, "K5");
    let full = edges.len().div_ceil(3);
    assert_eq!(states["triangles"][full], constant(&k5, 6));
    assert_eq!(states["kcore"][full], constant(&k5, 4));
    assert_eq!(states["degree"][full], constant(&k5, 4));
    assert_eq!(states["degree-distribution"][full], BTreeMap::from([(4, 5)]));
    assert_eq!(states["bipartite"][full], constant(&k5, 2));
    // All at once, and K6 minus a matching.
    check_handwritten(&[], &edges, &del(&edges[..1]), 1, "K5 initial");
    let k6 = [1, 2, 3, 4, 5, 6];
    let minus: Vec<_> = clique(&k6).into_iter().filter(|&(a, b)| (a + b) != 7 || a == b).collect();
    let states = check_handwritten(&[], &minus, &del(&[(3, 2), (5, 4)]), 1, "K6 minus a matching");
    assert_eq!(states["kcore"][0], constant(&k6, 4));
}

#[test]
fn stars() {
    let leaves: Vec<Node> = (1..=12).map(|i| i * 1_000_000_007).collect();
    let star: Vec<(Node, Node)> = leaves.iter().map(|&l| (0, l)).collect();
    let updates = [del(&star[..3]), ins(&[(leaves[3], leaves[4])]), del(&[(0, leaves[3])])].concat();
    let states = check_handwritten(&[], &star, &updates, 1, "star");
    let mut want = constant(&leaves, 1);
    want.insert(0, 12);
    assert_eq!(states["degree"][0], want);
    assert_eq!(states["kcore"][0], constant(&[0].iter().chain(&leaves).copied().collect::<Vec<_>>(), 1));
    let mut colours = constant(&leaves, 1);
    colours.insert(0, 0);
    assert_eq!(states["bipartite"][0], colours);
    assert_eq!(states["triangles"][4][&0], 1);
}

#[test]
fn odd_and_even_cycles_and_long_paths() {
    // A path of 24 vertices, closed into an even cycle, cut, closed into an odd cycle by a chord.
    let path: Vec<Node> = (0..24u64).map(|i| (i * 7919) % 24 + (1 << 33) * (i % 2)).collect();
    let edges: Vec<(Node, Node)> = path.windows(2).map(|w| (w[0], w[1])).collect();
    let close = (path[23], path[0]);
    let chord = (path[0], path[2]);
    let updates = [ins(&[close]), del(&[edges[20]]), ins(&[chord]), del(&[close]), ins(&[edges[20]])].concat();
    let states = check_handwritten(&[], &edges, &updates, 1, "path and cycles");
    assert_eq!(states["kcore"][0], constant(&path, 1));
    assert_eq!(states["kcore"][1], constant(&path, 2));
    assert_eq!(states["bipartite"][1][&path[1]], 1);
    assert!(states["bipartite"][3].values().all(|&c| c == 2), "{:?}", states["bipartite"][3]);
    // Odd cycles of length 3, 5, 7 and even ones of length 4, 6 side by side, then merged.
    let mut edges = Vec::new();
    let mut next = 100u64;
    for len in [3usize, 4, 5, 6, 7] {
        let vs: Vec<Node> = (0..len as u64).map(|i| next + i).collect();
        edges.extend(cycle(&vs));
        next += 100;
    }
    let updates = ins(&[(100, 200), (300, 400), (400, 500)]);
    let updates = [updates, del(&[(100, 101), (500, 501)])].concat();
    check_handwritten(&[], &edges, &updates, 1, "cycles");
}

#[test]
fn several_algorithms_share_one_run_with_output_dir() {
    // `run wcc,triangles,... --output-dir`: every file equals the single-algorithm run's.
    let files = Files::new();
    let stream = random_stream(91, 20, 40, 10, 6);
    let graph: String = stream.initial.iter().map(|(a, b)| format!("{} {}\n", a, b)).collect();
    let updates: String = stream
        .epochs
        .iter()
        .flatten()
        .map(|u| format!("{} {} {}\n", if u.diff > 0 { "+" } else { "-" }, u.src, u.dst))
        .collect();
    let g = files.write("g.e", &graph);
    let u = files.write("u.txt", &updates);
    let out = files.path("out");
    let names = "wcc,degree,degree-distribution,triangles,kcore,bipartite";
    let args = ["run", names, "-q", "--graph", &s(&g), "--updates", &s(&u), "--batch", "6", "-w", "2"];
    let run = bin().args(args).args(["--output-dir", &s(&out)]).output().expect("ripples runs");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    for name in names.split(',') {
        let single = files.path(&format!("{}.changes", name));
        let one = bin()
            .args(["run", name, "-q", "--graph", &s(&g), "--updates", &s(&u), "--batch", "6", "-w", "1"])
            .args(["--changes", &s(&single)])
            .output()
            .expect("ripples runs");
        assert!(one.status.success(), "{}: {}", name, String::from_utf8_lossy(&one.stderr));
        assert_eq!(read(&out.join(format!("{}.changes", name))), read(&single), "{}", name);
    }
}

/// An in-order timed insertion stream over a small id pool: `(src, dst, time)`.
fn timed(seed: u64, n: usize) -> Vec<(Node, Node, u64)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ids = id_pool(12);
    let mut clock = 0;
    (0..n)
        .map(|_| {
            clock += rng.gen_range(0..=1);
            (ids[rng.gen_range(0..ids.len())], ids[rng.gen_range(0..ids.len())], clock)
        })
        .collect()
}

#[test]
fn sliding_and_tumbling_windows_match_the_oracle_at_every_time() {
    let files = Files::new();
    for (seed, window, span) in [(95u64, "--window", 6u64), (96, "--tumbling", 5)] {
        let updates = timed(seed, 150);
        let text: String = updates.iter().map(|(a, b, t)| format!("{} {} @{}\n", a, b, t)).collect();
        let path = files.write(&format!("t{}.txt", seed), &text);
        let out = files.path(&format!("out{}", seed));
        let names = ALL.join(",");
        let args = ["run", &names, "-q", "--updates", &s(&path), window, &span.to_string(), "--batch", "7"];
        let run = bin().args(args).args(["-w", "2", "--output-dir", &s(&out)]).output().expect("ripples runs");
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let until = updates.last().map_or(0, |u| u.2) + 1;
        let present =
            |at: u64, t: u64| if window == "--window" { at <= t && t < at + span } else { at / span == t / span };
        for name in ALL {
            let what = format!("{} seed {} {} {}", name, seed, window, span);
            let log = parse_changes(&read(&out.join(format!("{}.changes", name))));
            let mut counts: BTreeMap<(u64, u64), i64> = BTreeMap::new();
            let mut next = 0;
            for t in 0..until {
                while next < log.len() && log[next].epoch == t {
                    *counts.entry((log[next].key, log[next].value)).or_insert(0) += log[next].diff as i64;
                    next += 1;
                }
                counts.retain(|_, n| *n != 0);
                let got: BTreeMap<u64, u64> = counts.keys().copied().collect();
                assert_eq!(got.len(), counts.len(), "{}: time {}: a key with two values", what, t);
                let edges: Vec<(Node, Node, f64)> =
                    updates.iter().filter(|u| present(u.2, t)).map(|u| (u.0, u.1, 1.0)).collect();
                let vertices = oracle::vertex_set(std::iter::empty(), &edges);
                assert_eq!(got, expected(name, &vertices, &edges), "{}: time {}", what, t);
            }
            assert_eq!(next, log.len(), "{}: lines at or after the final frontier", what);
        }
    }
}
