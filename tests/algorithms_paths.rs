//! BFS, SSSP and SCC through the library driver: randomised weighted insert/delete streams checked
//! at every epoch against the sequential oracles (1 and 2 workers), plus corner cases.
//!
//! Every randomised check names its seed in the failure message.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use common::{id_pool, states_per_epoch};
use ripples::dataflow::bfs::Bfs;
use ripples::dataflow::scc::Scc;
use ripples::dataflow::sssp::Sssp;
use ripples::dataflow::{Algorithm, ValueFormat};
use ripples::driver::{self, MemoryStream, RunOptions};
use ripples::oracle::{self, WeightedEdge, BFS_UNREACHABLE};
use ripples::types::{weight_bits, Node, Update};

const INF: u64 = 0x7FF0_0000_0000_0000; // f64::INFINITY bits

/// A weighted stream: vertex file, initial edge copies, and the updates (cut into epochs of
/// `batch` by the driver).
#[derive(Clone, Debug)]
struct WStream {
    vertices: Vec<Node>,
    initial: Vec<(Node, Node, Option<f64>)>,
    updates: Vec<Update>,
}

fn weighted(src: Node, dst: Node, weight: Option<f64>, diff: i8) -> Update {
    Update { src, dst, weight, diff }
}

/// A random weighted stream over `id_pool(n)` (ids 0, small, above 2^32, near u64::MAX): about
/// 45% deletions of present copies (with their weight), 10% parallel copies of a present pair
/// with a possibly different weight, 5% self-loops, the rest new random edges. Weights come from
/// {0, 0.5, 1 (also as "no weight"), 2, uniform [0, 3)}.
fn weighted_stream(seed: u64, n: usize, initial: usize, count: usize) -> WStream {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ids = id_pool(n);
    let pick = |rng: &mut ChaCha8Rng| ids[rng.gen_range(0..ids.len())];
    let weight = |rng: &mut ChaCha8Rng| match rng.gen_range(0..6) {
        0 => Some(0.0),
        1 => Some(0.5),
        2 => None,
        3 => Some(1.0),
        4 => Some(2.0),
        _ => Some(rng.gen_range(0.0..3.0)),
    };
    let mut present: Vec<(Node, Node, Option<f64>)> = Vec::new();
    for _ in 0..initial {
        let e = (pick(&mut rng), pick(&mut rng), weight(&mut rng));
        present.push(e);
    }
    let init = present.clone();
    let vertices: Vec<Node> = ids.iter().copied().filter(|_| rng.gen_bool(0.1)).collect();
    let mut updates = Vec::new();
    for _ in 0..count {
        let r: f64 = rng.gen();
        if r < 0.45 && !present.is_empty() {
            let (s, d, w) = present.swap_remove(rng.gen_range(0..present.len()));
            updates.push(weighted(s, d, w, -1));
        } else if r < 0.55 && !present.is_empty() {
            let (s, d, _) = present[rng.gen_range(0..present.len())];
            let e = (s, d, weight(&mut rng));
            present.push(e);
            updates.push(weighted(e.0, e.1, e.2, 1));
        } else if r < 0.6 {
            let v = pick(&mut rng);
            let e = (v, v, weight(&mut rng));
            present.push(e);
            updates.push(weighted(e.0, e.1, e.2, 1));
        } else {
            let e = (pick(&mut rng), pick(&mut rng), weight(&mut rng));
            present.push(e);
            updates.push(weighted(e.0, e.1, e.2, 1));
        }
    }
    WStream { vertices, initial: init, updates }
}

/// The oracle input after each epoch (index 0 = initial graph): vertex set and present edges
/// (one entry per distinct `(src, dst, weight)`).
fn oracle_inputs(stream: &WStream, batch: usize) -> Vec<(BTreeSet<Node>, Vec<WeightedEdge>)> {
    let mut counts: BTreeMap<(Node, Node, u64), i64> = BTreeMap::new();
    let snapshot = |counts: &BTreeMap<(Node, Node, u64), i64>| {
        let edges: Vec<WeightedEdge> = counts.keys().map(|&(s, d, w)| (s, d, f64::from_bits(w))).collect();
        (oracle::vertex_set(stream.vertices.iter().copied(), &edges), edges)
    };
    for &(s, d, w) in &stream.initial {
        *counts.entry((s, d, weight_bits(w))).or_insert(0) += 1;
    }
    let mut out = vec![snapshot(&counts)];
    for chunk in stream.updates.chunks(batch) {
        for u in chunk {
            let key = (u.src, u.dst, weight_bits(u.weight));
            let c = counts.entry(key).or_insert(0);
            *c += u.diff as i64;
            assert!(*c >= 0, "test stream deletes an absent edge copy");
            if *c == 0 {
                counts.remove(&key);
            }
        }
        out.push(snapshot(&counts));
    }
    out
}

/// Runs `alg` over the stream and returns the result state after every epoch.
fn run<A: Algorithm>(alg: A, stream: &WStream, batch: usize, workers: usize) -> Vec<BTreeMap<Node, u64>> {
    let mem = MemoryStream {
        vertices: stream.vertices.clone(),
        initial: stream.initial.clone(),
        updates: stream.updates.clone(),
        batch,
    };
    let report = driver::run(RunOptions::memory(mem, workers), alg).expect("run").expect("writer report");
    let epochs = stream.updates.chunks(batch).count() as u64;
    assert_eq!(report.epochs.len() as u64, epochs + 1);
    states_per_epoch(&report.changes.expect("collected changes"), epochs)
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Bfs { source: Node, undirected: bool },
    Sssp { source: Node, undirected: bool },
    Scc,
}

/// The oracle's answer as result values (f64 bits for SSSP).
fn expected(kind: Kind, vertices: &BTreeSet<Node>, edges: &[WeightedEdge]) -> BTreeMap<Node, u64> {
    let sym = |undirected: bool| {
        if undirected {
            oracle::symmetrize(edges)
        } else {
            edges.to_vec()
        }
    };
    match kind {
        Kind::Bfs { source, undirected } => oracle::bfs(vertices, &sym(undirected), source),
        Kind::Sssp { source, undirected } => {
            oracle::sssp(vertices, &sym(undirected), source).into_iter().map(|(v, d)| (v, d.to_bits())).collect()
        }
        Kind::Scc => oracle::scc(vertices, edges),
    }
}

/// Equal for BFS and SCC; for SSSP the same keys, and every distance within 1e-9 relative of the
/// oracle's (infinity only matches infinity, 0 only 0).
fn differences(kind: Kind, got: &BTreeMap<Node, u64>, want: &BTreeMap<Node, u64>) -> Option<String> {
    if let Kind::Sssp { .. } = kind {
        let gk: Vec<_> = got.keys().collect();
        let wk: Vec<_> = want.keys().collect();
        if gk != wk {
            return Some(format!("vertex sets differ: got {:?}, want {:?}", gk, wk));
        }
        let bad: Vec<String> = want
            .iter()
            .filter_map(|(v, &w)| {
                let (g, w) = (f64::from_bits(got[v]), f64::from_bits(w));
                let ok = if w.is_infinite() { g == w } else { (g - w).abs() <= 1e-9 * w.abs() };
                (!ok).then(|| format!("vertex {}: got {}, want {}", v, g, w))
            })
            .collect();
        (!bad.is_empty()).then(|| bad.join("; "))
    } else {
        (got != want).then(|| format!("got {:?}\nwant {:?}", got, want))
    }
}

fn run_kind(kind: Kind, stream: &WStream, batch: usize, workers: usize) -> Vec<BTreeMap<Node, u64>> {
    match kind {
        Kind::Bfs { source, undirected } => run(Bfs { source, undirected }, stream, batch, workers),
        Kind::Sssp { source, undirected } => run(Sssp { source, undirected }, stream, batch, workers),
        Kind::Scc => run(Scc, stream, batch, workers),
    }
}

/// Runs `kind` and checks every epoch against the oracle.
fn check(kind: Kind, stream: &WStream, batch: usize, workers: usize, what: &str) {
    let states = run_kind(kind, stream, batch, workers);
    let inputs = oracle_inputs(stream, batch);
    assert_eq!(states.len(), inputs.len());
    for (epoch, ((vertices, edges), state)) in inputs.iter().zip(&states).enumerate() {
        let want = expected(kind, vertices, edges);
        if let Some(diff) = differences(kind, state, &want) {
            panic!(
                "{}: {:?}, workers {}, batch {}: differs from the oracle at epoch {}:\n{}",
                what, kind, workers, batch, epoch, diff
            );
        }
    }
}

/// Randomised streams for `make_kind(source)`: several seeds, 1 and 2 workers, batches of 1..6.
fn random_checks(make_kind: impl Fn(Node) -> Kind, seeds: std::ops::RangeInclusive<u64>) {
    for seed in seeds {
        let stream = weighted_stream(seed, 30, 35, 90);
        // A source that is an endpoint of the initial graph most of the time, sometimes not.
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let source = if rng.gen_bool(0.8) && !stream.initial.is_empty() {
            stream.initial[rng.gen_range(0..stream.initial.len())].0
        } else {
            id_pool(30)[rng.gen_range(0..30)]
        };
        let kind = make_kind(source);
        for (workers, batch) in [(1, 5), (2, 3)] {
            check(kind, &stream, batch, workers, &format!("seed {}", seed));
        }
    }
}

#[test]
fn bfs_directed_random_streams() {
    random_checks(|source| Kind::Bfs { source, undirected: false }, 1..=3);
}

#[test]
fn bfs_undirected_random_streams() {
    random_checks(|source| Kind::Bfs { source, undirected: true }, 11..=13);
}

#[test]
fn sssp_directed_random_weighted_streams() {
    random_checks(|source| Kind::Sssp { source, undirected: false }, 21..=23);
}

#[test]
fn sssp_undirected_random_weighted_streams() {
    random_checks(|source| Kind::Sssp { source, undirected: true }, 31..=33);
}

#[test]
fn scc_random_streams() {
    random_checks(|_| Kind::Scc, 41..=42);
    // Denser graphs: more and larger cycles that merge and split.
    for seed in [51u64] {
        let stream = weighted_stream(seed, 15, 30, 50);
        for (workers, batch) in [(1, 1), (2, 4)] {
            check(Kind::Scc, &stream, batch, workers, &format!("dense seed {}", seed));
        }
    }
}

#[test]
fn single_update_epochs_all_algorithms() {
    let stream = weighted_stream(99, 20, 20, 40);
    let source = stream.initial[0].0;
    for kind in [Kind::Bfs { source, undirected: false }, Kind::Sssp { source, undirected: true }, Kind::Scc] {
        check(kind, &stream, 1, 2, "seed 99");
    }
}

// ---------------------------------------------------------------------------------------------
// Corner cases. Each builds a small explicit stream and checks every epoch against the oracle
// (and some expected values by hand).

fn stream(vertices: &[Node], initial: &[(Node, Node, Option<f64>)], updates: &[Update]) -> WStream {
    WStream { vertices: vertices.to_vec(), initial: initial.to_vec(), updates: updates.to_vec() }
}

fn all_kinds(source: Node) -> Vec<Kind> {
    vec![
        Kind::Bfs { source, undirected: false },
        Kind::Bfs { source, undirected: true },
        Kind::Sssp { source, undirected: false },
        Kind::Sssp { source, undirected: true },
        Kind::Scc,
    ]
}

fn check_all(source: Node, s: &WStream, batch: usize, what: &str) {
    for kind in all_kinds(source) {
        for workers in [1, 2] {
            check(kind, s, batch, workers, what);
        }
    }
}

#[test]
fn isolated_vertices_from_the_vertex_file() {
    let s = stream(
        &[1, 7, 8],
        &[(1, 2, None), (2, 3, None), (3, 1, None)],
        &[Update::delete(3, 1), Update::delete(1, 2), Update::delete(2, 3)],
    );
    check_all(1, &s, 1, "isolated vertices");
    let bfs = run(Bfs { source: 1, undirected: false }, &s, 1, 2);
    assert_eq!(bfs[0], BTreeMap::from([(1, 0), (2, 1), (3, 2), (7, BFS_UNREACHABLE), (8, BFS_UNREACHABLE)]));
    // At the end only the vertex-file vertices remain; the source is one of them.
    assert_eq!(bfs[3], BTreeMap::from([(1, 0), (7, BFS_UNREACHABLE), (8, BFS_UNREACHABLE)]));
    let sssp = run(Sssp { source: 7, undirected: false }, &s, 1, 1);
    assert_eq!(sssp[0], BTreeMap::from([(1, INF), (2, INF), (3, INF), (7, 0), (8, INF)]));
    let scc = run(Scc, &s, 1, 2);
    assert_eq!(scc[0], BTreeMap::from([(1, 1), (2, 1), (3, 1), (7, 7), (8, 8)]));
    assert_eq!(scc[1], BTreeMap::from([(1, 1), (2, 2), (3, 3), (7, 7), (8, 8)]));
}

#[test]
fn vertex_id_zero() {
    let s = stream(
        &[],
        &[(0, 5, Some(2.0)), (5, 0, Some(1.0)), (5, 6, None)],
        &[Update::insert(6, 0), Update { src: 0, dst: 5, weight: Some(2.0), diff: -1 }, Update::insert(6, 5)],
    );
    check_all(0, &s, 1, "vertex 0");
    let bfs = run(Bfs { source: 0, undirected: false }, &s, 1, 1);
    assert_eq!(bfs[0], BTreeMap::from([(0, 0), (5, 1), (6, 2)]));
    let scc = run(Scc, &s, 1, 1);
    assert_eq!(scc[0], BTreeMap::from([(0, 0), (5, 0), (6, 6)]));
    assert_eq!(scc[1], BTreeMap::from([(0, 0), (5, 0), (6, 0)]));
}

#[test]
fn ids_above_2_pow_32() {
    let a = (1u64 << 32) + 1;
    let b = 1u64 << 40;
    let c = u64::MAX;
    let d = u64::MAX - 1;
    let s = stream(
        &[d],
        &[(a, b, Some(0.25)), (b, c, Some(0.5)), (c, a, None)],
        &[
            Update::insert(c, d),
            Update { src: b, dst: c, weight: Some(0.5), diff: -1 },
            Update { src: b, dst: c, weight: Some(3.0), diff: 1 },
        ],
    );
    check_all(a, &s, 1, "large ids");
    check_all(c, &s, 2, "large ids, source u64::MAX");
    let scc = run(Scc, &s, 1, 2);
    assert_eq!(scc[0], BTreeMap::from([(a, a), (b, a), (c, a), (d, d)]));
    let sssp = run(Sssp { source: a, undirected: false }, &s, 1, 2);
    assert_eq!(sssp[3][&c], 3.25f64.to_bits());
}

#[test]
fn zero_weight_edges_sssp() {
    // A zero-weight cycle 1 -> 2 -> 3 -> 1 and a zero-weight path that undercuts a heavy edge.
    let s = stream(
        &[],
        &[
            (1, 2, Some(0.0)),
            (2, 3, Some(0.0)),
            (3, 1, Some(0.0)),
            (1, 4, Some(5.0)),
            (3, 4, Some(0.0)),
            (4, 5, Some(0.0)),
        ],
        &[
            Update { src: 3, dst: 4, weight: Some(0.0), diff: -1 },
            Update { src: 1, dst: 4, weight: Some(0.0), diff: 1 },
            Update { src: 1, dst: 4, weight: Some(-0.0), diff: -1 }, // -0.0 names the same copy
            Update { src: 2, dst: 3, weight: Some(0.0), diff: -1 },
        ],
    );
    for undirected in [false, true] {
        for workers in [1, 2] {
            check(Kind::Sssp { source: 1, undirected }, &s, 1, workers, "zero weights");
        }
    }
    let r = run(Sssp { source: 1, undirected: false }, &s, 1, 2);
    let z = 0.0f64.to_bits();
    assert_eq!(r[0], BTreeMap::from([(1, z), (2, z), (3, z), (4, z), (5, z)]));
    assert_eq!(r[1][&4], 5.0f64.to_bits());
    assert_eq!(r[2][&5], z);
    assert_eq!(r[3][&4], 5.0f64.to_bits());
    assert_eq!(r[4][&3], INF);
}

#[test]
fn parallel_copies_with_different_weights_sssp() {
    let s = stream(
        &[],
        &[(1, 2, Some(3.0)), (1, 2, Some(1.0)), (2, 3, None)],
        &[
            Update { src: 1, dst: 2, weight: Some(1.0), diff: -1 },
            Update { src: 1, dst: 2, weight: Some(0.5), diff: 1 },
            Update { src: 1, dst: 2, weight: Some(0.5), diff: -1 },
            Update { src: 1, dst: 2, weight: Some(3.0), diff: -1 },
        ],
    );
    for workers in [1, 2] {
        check(Kind::Sssp { source: 1, undirected: false }, &s, 1, workers, "parallel copies");
    }
    let r = run(Sssp { source: 1, undirected: false }, &s, 1, 1);
    let bits = |x: f64| x.to_bits();
    assert_eq!(r[0][&3], bits(2.0));
    assert_eq!(r[1][&3], bits(4.0));
    assert_eq!(r[2][&3], bits(1.5));
    assert_eq!(r[3][&3], bits(4.0));
    assert_eq!(r[4], BTreeMap::from([(2, INF), (3, INF)]));
    assert_eq!(Sssp { source: 1, undirected: false }.value_format(), ValueFormat::Float);
}

#[test]
fn absent_source() {
    let s = stream(&[4], &[(1, 2, None), (2, 3, None)], &[Update::insert(3, 1), Update::insert(9, 1)]);
    check_all(9, &s, 1, "absent source");
    let bfs = run(Bfs { source: 9, undirected: false }, &s, 1, 2);
    assert!(bfs[0].values().all(|&d| d == BFS_UNREACHABLE));
    assert!(bfs[1].values().all(|&d| d == BFS_UNREACHABLE));
    // The source appears in epoch 2.
    assert_eq!(bfs[2], BTreeMap::from([(1, 1), (2, 2), (3, 3), (4, BFS_UNREACHABLE), (9, 0)]));
    // A source that never appears.
    let never = run(Sssp { source: 77, undirected: true }, &s, 2, 2);
    assert!(never.iter().all(|st| st.values().all(|&d| d == INF)));
}

#[test]
fn source_deleted_mid_stream() {
    // The source 1 loses its last edge in epoch 2, comes back in epoch 4.
    let s = stream(
        &[],
        &[(1, 2, None), (2, 3, None), (3, 2, None), (1, 3, Some(0.5))],
        &[
            Update::delete(1, 2),
            Update { src: 1, dst: 3, weight: Some(0.5), diff: -1 },
            Update::insert(5, 2),
            Update::insert(1, 5),
        ],
    );
    check_all(1, &s, 1, "source deleted");
    let bfs = run(Bfs { source: 1, undirected: false }, &s, 1, 2);
    assert_eq!(bfs[1], BTreeMap::from([(1, 0), (2, 2), (3, 1)]));
    assert_eq!(bfs[2], BTreeMap::from([(2, BFS_UNREACHABLE), (3, BFS_UNREACHABLE)]));
    assert_eq!(bfs[4], BTreeMap::from([(1, 0), (2, 2), (3, 3), (5, 1)]));
    // The same with the source in the vertex file: it stays, at distance 0, alone.
    let mut kept = s.clone();
    kept.vertices = vec![1];
    check_all(1, &kept, 1, "source deleted, in vertex file");
    let bfs = run(Bfs { source: 1, undirected: true }, &kept, 1, 1);
    assert_eq!(bfs[2], BTreeMap::from([(1, 0), (2, BFS_UNREACHABLE), (3, BFS_UNREACHABLE)]));
}

#[test]
fn graph_becomes_empty() {
    let initial = [(1, 2, None), (2, 1, Some(0.0)), (2, 3, None), (3, 3, None), (1, 2, None)];
    let deletions: Vec<Update> =
        initial.iter().map(|&(s, d, w)| Update { src: s, dst: d, weight: w, diff: -1 }).collect();
    let mut updates = deletions.clone();
    // ... then refill and empty again in one epoch each.
    updates.extend(initial.iter().map(|&(s, d, w)| Update { src: s, dst: d, weight: w, diff: 1 }));
    updates.extend(deletions);
    let s = stream(&[], &initial, &updates);
    check_all(1, &s, 5, "empty graph");
    check_all(2, &s, 2, "empty graph, small batches");
    for st in [
        run(Bfs { source: 1, undirected: false }, &s, 5, 2),
        run(Sssp { source: 1, undirected: false }, &s, 5, 2),
        run(Scc, &s, 5, 2),
    ] {
        assert_eq!(st.len(), 4);
        assert_eq!(st[0].len(), 3);
        assert!(st[1].is_empty() && st[3].is_empty());
        assert_eq!(st[2], st[0]);
    }
    // An empty input altogether.
    let none = stream(&[], &[], &[]);
    for kind in all_kinds(0) {
        assert!(run_kind(kind, &none, 1, 2).iter().all(|st| st.is_empty()));
    }
}

#[test]
fn self_loops_and_long_cycle_scc() {
    // A 12-cycle with self-loops, cut and re-closed; chords create nested components.
    let n = 12u64;
    let mut initial: Vec<(Node, Node, Option<f64>)> = (0..n).map(|i| (i, (i + 1) % n, None)).collect();
    initial.push((4, 4, None));
    initial.push((7, 3, None));
    let s = stream(
        &[],
        &initial,
        &[
            Update::delete(11, 0),
            Update::insert(11, 0),
            Update::delete(5, 6),
            Update::insert(9, 5),
            Update::delete(4, 4),
        ],
    );
    for workers in [1, 2] {
        check(Kind::Scc, &s, 1, workers, "long cycle");
    }
    let r = run(Scc, &s, 1, 1);
    assert!(r[0].values().all(|&l| l == 0));
    // Cut: only the chord cycle 3..7 remains.
    let cut: BTreeMap<Node, Node> = (0..n).map(|v| (v, if (3..=7).contains(&v) { 3 } else { v })).collect();
    assert_eq!(r[1], cut);
}
