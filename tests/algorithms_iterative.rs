//! PageRank, CDLP and LCC through the library driver on random insert/delete streams, checked at
//! every epoch against the sequential oracles (directed and undirected, 1 and 2 workers), plus
//! corner cases: vertex-file vertices, vertex 0, ids above 2^32, a graph that becomes empty,
//! self-loops.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use ripples::dataflow::cdlp::Cdlp;
use ripples::dataflow::lcc::Lcc;
use ripples::dataflow::pagerank::PageRank;
use ripples::dataflow::Algorithm;
use ripples::driver::{self, MemoryStream, RunOptions};
use ripples::oracle;
use ripples::sinks::Change;
use ripples::types::{Node, Update};

/// Which algorithm a check runs.
#[derive(Clone, Copy, Debug)]
enum Alg {
    Pr { iterations: u32, damping: f64 },
    Cdlp { iterations: u32 },
    Lcc,
}

impl Alg {
    fn dataflow(self, undirected: bool) -> Box<dyn Algorithm> {
        match self {
            Alg::Pr { iterations, damping } => Box::new(PageRank { iterations, damping, undirected }),
            Alg::Cdlp { iterations } => Box::new(Cdlp { iterations, undirected }),
            Alg::Lcc => Box::new(Lcc { undirected }),
        }
    }

    fn is_float(self) -> bool {
        !matches!(self, Alg::Cdlp { .. })
    }

    /// The oracle's values, as `u64` (f64 bits for the float algorithms).
    fn oracle(self, vertices: &BTreeSet<Node>, edges: &[(Node, Node, f64)], undirected: bool) -> BTreeMap<Node, u64> {
        let sym;
        let edges = if undirected {
            sym = oracle::symmetrize(edges);
            &sym[..]
        } else {
            edges
        };
        let bits = |m: BTreeMap<Node, f64>| m.into_iter().map(|(k, v)| (k, v.to_bits())).collect();
        match self {
            Alg::Pr { iterations, damping } => bits(oracle::pagerank(vertices, edges, damping, iterations)),
            Alg::Cdlp { iterations } => oracle::cdlp(vertices, edges, iterations),
            Alg::Lcc => bits(oracle::lcc(vertices, edges)),
        }
    }
}

fn run_stream(alg: Alg, undirected: bool, stream: &RandomStream, batch: usize, workers: usize) -> Vec<Change> {
    let updates: Vec<Update> = stream.epochs.iter().flatten().copied().collect();
    let mem = MemoryStream {
        vertices: stream.vertices.clone(),
        initial: stream.initial.iter().map(|&(s, d)| (s, d, None)).collect(),
        updates,
        batch,
    };
    let report =
        driver::run(RunOptions::memory(mem, workers), alg.dataflow(undirected)).expect("run").expect("writer report");
    report.changes.expect("collected changes")
}

/// Asserts that `got` equals `want`: same keys, integers equal, floats within 1e-9 relative.
fn assert_matches(alg: Alg, got: &BTreeMap<Node, u64>, want: &BTreeMap<Node, u64>, context: &str) {
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{}: vertex sets differ", context);
    for (v, (&g, &w)) in got.keys().zip(got.values().zip(want.values())) {
        if alg.is_float() {
            let (g, w) = (f64::from_bits(g), f64::from_bits(w));
            assert!((g - w).abs() <= 1e-9 * w.abs(), "{}: vertex {}: got {:e}, oracle {:e}", context, v, g, w);
        } else {
            assert_eq!(g, w, "{}: vertex {}: got {}, oracle {}", context, v, g, w);
        }
    }
}

/// Runs `stream` and checks every epoch against the oracle.
fn check_stream(alg: Alg, undirected: bool, stream: &RandomStream, batch: usize, workers: usize, what: &str) {
    let changes = run_stream(alg, undirected, stream, batch, workers);
    let states = states_per_epoch(&changes, stream.epochs.len() as u64);
    for (epoch, counts) in edge_counts_per_epoch(stream).iter().enumerate() {
        let (vs, es) = oracle_input(&stream.vertices, counts);
        let want = alg.oracle(&vs, &es, undirected);
        let context =
            format!("{} {:?} undirected={} workers={} batch={} epoch {}", what, alg, undirected, workers, batch, epoch);
        assert_matches(alg, &states[epoch], &want, &context);
    }
}

fn check_random(alg: Alg, seed: u64, vertices: usize, initial: usize, epochs: usize, batch: usize) {
    let stream = rebatch(&random_stream(seed, vertices, initial, epochs, batch), batch);
    for undirected in [false, true] {
        for workers in [1, 2] {
            check_stream(alg, undirected, &stream, batch, workers, &format!("seed {}", seed));
        }
    }
}

const PR: Alg = Alg::Pr { iterations: 10, damping: 0.85 };
const CDLP: Alg = Alg::Cdlp { iterations: 5 };
/// Fewer iterations for the corner cases, which need no long propagation.
const PR_SHORT: Alg = Alg::Pr { iterations: 4, damping: 0.85 };

#[test]
fn pagerank_random_streams_match_oracle_every_epoch() {
    for seed in 1..=2u64 {
        check_random(PR, seed, 30, 40, 12, 5);
    }
    check_random(Alg::Pr { iterations: 3, damping: 0.5 }, 4, 20, 15, 30, 1);
}

#[test]
fn cdlp_random_streams_match_oracle_every_epoch() {
    for seed in 11..=13u64 {
        check_random(CDLP, seed, 30, 50, 12, 5);
    }
    check_random(Alg::Cdlp { iterations: 2 }, 14, 20, 15, 30, 1);
    // Dense: many ties and two-way neighbours.
    check_random(Alg::Cdlp { iterations: 4 }, 15, 10, 40, 10, 6);
}

#[test]
fn lcc_random_streams_match_oracle_every_epoch() {
    for seed in 21..=23u64 {
        check_random(Alg::Lcc, seed, 30, 60, 12, 5);
    }
    check_random(Alg::Lcc, 24, 20, 15, 30, 1);
    // Dense: many triangles, two-way arcs and orientation flips.
    check_random(Alg::Lcc, 25, 10, 40, 10, 6);
}

#[test]
fn iteration_counts_zero_and_one() {
    for alg in [
        Alg::Pr { iterations: 0, damping: 0.85 },
        Alg::Pr { iterations: 1, damping: 0.85 },
        Alg::Pr { iterations: 4, damping: 1.0 },
        Alg::Pr { iterations: 4, damping: 0.0 },
        Alg::Cdlp { iterations: 0 },
        Alg::Cdlp { iterations: 1 },
    ] {
        let stream = rebatch(&random_stream(31, 15, 20, 6, 4), 4);
        for undirected in [false, true] {
            check_stream(alg, undirected, &stream, 4, 2, "seed 31");
        }
    }
}

/// A hand-written stream, checked at every epoch for all three algorithms, both directions and
/// 1 and 2 workers.
fn check_handwritten(vertices: &[Node], initial: &[(Node, Node)], updates: &[Update], batch: usize, what: &str) {
    let stream = rebatch(
        &RandomStream { vertices: vertices.to_vec(), initial: initial.to_vec(), epochs: vec![updates.to_vec()] },
        batch,
    );
    for alg in [PR_SHORT, CDLP, Alg::Lcc] {
        for undirected in [false, true] {
            for workers in [1, 2] {
                check_stream(alg, undirected, &stream, batch, workers, what);
            }
        }
    }
}

/// The final state of a run, for spot checks of exact values.
fn final_state(
    alg: Alg,
    undirected: bool,
    vertices: &[Node],
    initial: &[(Node, Node)],
    updates: &[Update],
) -> BTreeMap<Node, u64> {
    let stream =
        RandomStream { vertices: vertices.to_vec(), initial: initial.to_vec(), epochs: vec![updates.to_vec()] };
    let changes = run_stream(alg, undirected, &stream, updates.len().max(1), 2);
    states_per_epoch(&changes, 1).pop().unwrap()
}

#[test]
fn isolated_vertices_from_the_vertex_file() {
    let vfile = [0, 7, 8, 1 << 40];
    let initial = [(1, 2), (2, 3), (3, 1), (3, 4)];
    let updates = [Update::insert(7, 1), Update::delete(3, 4), Update::delete(7, 1), Update::insert(8, 8)];
    check_handwritten(&vfile, &initial, &updates, 1, "vertex file");
    // Exact values at the end: isolated vertices are sinks in PR, keep their id in CDLP, have LCC 0.
    let pr = final_state(PR, false, &vfile, &initial, &updates);
    assert_eq!(pr.len(), 7, "every vertex of the vertex set has a value: {:?}", pr);
    let lcc = final_state(Alg::Lcc, false, &vfile, &initial, &updates);
    assert_eq!(lcc[&0], 0.0f64.to_bits());
    assert_eq!(lcc[&(1 << 40)], 0.0f64.to_bits());
    let cdlp = final_state(CDLP, true, &vfile, &initial, &updates);
    assert_eq!((cdlp[&0], cdlp[&7], cdlp[&8], cdlp[&(1 << 40)]), (0, 7, 8, 1 << 40));
}

#[test]
fn vertex_zero() {
    let initial = [(0, 1), (1, 0), (0, 2), (2, 1)];
    let updates = [Update::delete(0, 1), Update::insert(2, 0), Update::delete(1, 0), Update::delete(0, 2)];
    check_handwritten(&[], &initial, &updates, 1, "vertex 0");
    // Vertex 0 is the smallest label: in a triangle it wins CDLP's tie-break.
    let tri = [(0, 1), (1, 2), (2, 0)];
    let cdlp = final_state(Alg::Cdlp { iterations: 1 }, true, &[], &tri, &[]);
    assert_eq!(cdlp, BTreeMap::from([(0, 1), (1, 0), (2, 0)]));
}

#[test]
fn ids_above_two_to_the_32() {
    let big = 1u64 << 33;
    let huge = u64::MAX;
    let initial = [(big, huge), (huge, big + 1), (big + 1, big), (1, big), (huge, 1)];
    let updates = [
        Update::insert(big, big + 1),
        Update::delete(huge, 1),
        Update::insert(u64::MAX - 1, huge),
        Update::delete(1, big),
    ];
    check_handwritten(&[u64::MAX - 2], &initial, &updates, 2, "large ids");
    // No truncation to 32 bits: a vertex that would collide with `big` after truncation stays
    // apart.
    let lcc = final_state(Alg::Lcc, true, &[], &[(big, 0), (0, 5), (5, big), (big, 7)], &[]);
    assert_eq!(lcc.keys().copied().collect::<Vec<_>>(), vec![0, 5, 7, big]);
    assert_eq!(f64::from_bits(lcc[&big]), 1.0 / 3.0);
}

#[test]
fn graph_that_becomes_empty() {
    let initial = [(1, 2), (2, 3), (3, 1), (5, 5)];
    let updates = [
        Update::delete(1, 2),
        Update::delete(5, 5),
        Update::delete(2, 3),
        Update::insert(9, 10),
        Update::delete(3, 1),
        Update::delete(9, 10),
    ];
    check_handwritten(&[], &initial, &updates, 1, "becomes empty");
    for alg in [PR_SHORT, CDLP, Alg::Lcc] {
        assert!(final_state(alg, false, &[], &initial, &updates).is_empty(), "{:?}: values remain", alg);
    }
    // With a vertex file, the file's vertices remain (PR: 1/|V| each).
    let pr = final_state(PR, false, &[4, 6], &initial, &updates);
    assert_eq!(pr, BTreeMap::from([(4, 0.5f64.to_bits()), (6, 0.5f64.to_bits())]));
}

#[test]
fn self_loops_are_ignored() {
    // 1 -> 1 only: 1 is a sink in PR, isolated in CDLP, has no neighbours in LCC.
    let initial = [(1, 1), (1, 2), (2, 2), (2, 3), (3, 1)];
    let updates = [
        Update::delete(1, 2),
        Update::insert(3, 3),
        Update::insert(1, 1),
        Update::insert(1, 2),
        Update::delete(1, 1),
        Update::delete(1, 1),
        Update::delete(3, 1),
    ];
    check_handwritten(&[], &initial, &updates, 1, "self-loops");
    for alg in [PR_SHORT, CDLP, Alg::Lcc] {
        for undirected in [false, true] {
            let with = final_state(alg, undirected, &[], &[(1, 1), (1, 2), (2, 2)], &[]);
            let without = final_state(alg, undirected, &[], &[(1, 2)], &[]);
            assert_eq!(with, without, "{:?} undirected={}: a self-loop changed the result", alg, undirected);
        }
    }
    // A vertex whose only edge is a self-loop: its own label, LCC 0, a sink (uniform PR).
    let only_loop = final_state(PR, false, &[], &[(4, 4), (5, 5)], &[]);
    assert_eq!(only_loop, BTreeMap::from([(4, 0.5f64.to_bits()), (5, 0.5f64.to_bits())]));
}

#[test]
fn parallel_copies_change_nothing() {
    let initial = [(1, 2), (1, 2), (2, 3), (3, 1), (3, 1)];
    let updates = [Update::delete(1, 2), Update::insert(2, 3), Update::delete(1, 2), Update::delete(2, 3)];
    check_handwritten(&[], &initial, &updates, 1, "parallel copies");
}

#[test]
fn lcc_and_cdlp_are_bit_identical_to_the_oracle() {
    // LCC's values come from integer counts by the oracle's formula: bit-identical, also after
    // retractions.
    let stream = rebatch(&random_stream(41, 25, 40, 8, 6), 6);
    for alg in [Alg::Lcc, CDLP] {
        let changes = run_stream(alg, false, &stream, 6, 2);
        let states = states_per_epoch(&changes, stream.epochs.len() as u64);
        for (epoch, counts) in edge_counts_per_epoch(&stream).iter().enumerate() {
            let (vs, es) = oracle_input(&stream.vertices, counts);
            assert_eq!(states[epoch], alg.oracle(&vs, &es, false), "{:?} epoch {}", alg, epoch);
        }
    }
}

#[test]
fn values_do_not_depend_on_history() {
    // The value reported at an epoch is bit-identical to a from-scratch run on that epoch's
    // graph (with another number of workers): nothing drifts through insertions and retractions.
    let stream = rebatch(&random_stream(42, 25, 40, 12, 5), 5);
    let per_epoch = edge_counts_per_epoch(&stream);
    for alg in [PR, Alg::Pr { iterations: 4, damping: 0.6 }, Alg::Lcc] {
        for undirected in [false, true] {
            let changes = run_stream(alg, undirected, &stream, 5, 2);
            let states = states_per_epoch(&changes, stream.epochs.len() as u64);
            let last = stream.epochs.len();
            for epoch in [last / 3, 2 * last / 3, last] {
                let initial: Vec<(Node, Node)> =
                    per_epoch[epoch].iter().flat_map(|(&e, &c)| std::iter::repeat_n(e, c as usize)).collect();
                let scratch = RandomStream { vertices: stream.vertices.clone(), initial, epochs: vec![] };
                let fresh = states_per_epoch(&run_stream(alg, undirected, &scratch, 1, 1), 0);
                assert_eq!(
                    states[epoch], fresh[0],
                    "seed 42 {:?} undirected={}: epoch {} differs from a from-scratch run",
                    alg, undirected, epoch
                );
            }
        }
    }
}
