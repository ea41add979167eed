//! Checks the reference implementations in `ripples::oracle` against the LDBC Graphalytics
//! validation data in `tests/data/graphalytics/graphs`: for every graph and every algorithm its
//! properties file lists, the oracle's output, formatted as an output file would be, must pass
//! the official validation rule against the expected file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ripples::graphalytics::{discover, format_value_f64, read_output, validate, Algorithm, GraphSpec, Validation};
use ripples::oracle::{self, WeightedEdge};

fn graphs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphalytics/graphs")
}

/// A graph as the oracles take it.
struct Graph {
    vertices: BTreeSet<u64>,
    /// Directed edges; an undirected graph has both directions of every edge.
    edges: Vec<WeightedEdge>,
}

/// A small loader: `<g>.v` has one vertex per line, `<g>.e` has `src dst [weight]` per line
/// (weight 1.0 when absent); undirected edges are added in both directions.
fn load(spec: &GraphSpec) -> Graph {
    let vtext = std::fs::read_to_string(&spec.vertex_file).unwrap();
    let mut vertices = BTreeSet::new();
    for (i, line) in vtext.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let v: u64 = line.parse().unwrap_or_else(|_| panic!("{}:{}: bad vertex", spec.vertex_file.display(), i + 1));
        assert!(vertices.insert(v), "{}: duplicate vertex {v}", spec.vertex_file.display());
    }
    let etext = std::fs::read_to_string(&spec.edge_file).unwrap();
    let mut listed = Vec::new();
    for (i, line) in etext.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let bad = || format!("{}:{}: bad edge line {line:?}", spec.edge_file.display(), i + 1);
        assert!(fields.len() == 2 || fields.len() == 3, "{}", bad());
        let src: u64 = fields[0].parse().unwrap_or_else(|_| panic!("{}", bad()));
        let dst: u64 = fields[1].parse().unwrap_or_else(|_| panic!("{}", bad()));
        let weight: f64 = fields.get(2).map_or(1.0, |w| w.parse().unwrap_or_else(|_| panic!("{}", bad())));
        assert!(vertices.contains(&src) && vertices.contains(&dst), "{}: unknown vertex", bad());
        listed.push((src, dst, weight));
    }
    let edges = if spec.directed { listed } else { oracle::symmetrize(&listed) };
    Graph { vertices, edges }
}

fn ints(m: BTreeMap<u64, u64>) -> BTreeMap<u64, String> {
    m.into_iter().map(|(v, x)| (v, x.to_string())).collect()
}

fn floats(m: BTreeMap<u64, f64>) -> BTreeMap<u64, String> {
    m.into_iter().map(|(v, x)| (v, format_value_f64(x))).collect()
}

/// The oracle's output for `alg` on `graph` with the parameters of `spec`, as output-file text.
fn run(spec: &GraphSpec, graph: &Graph, alg: Algorithm) -> BTreeMap<u64, String> {
    let (v, e) = (&graph.vertices, graph.edges.as_slice());
    match alg {
        Algorithm::Bfs => ints(oracle::bfs(v, e, spec.bfs_source.unwrap())),
        Algorithm::Cdlp => ints(oracle::cdlp(v, e, spec.cdlp_iterations.unwrap())),
        Algorithm::Lcc => floats(oracle::lcc(v, e)),
        Algorithm::Pr => floats(oracle::pagerank(v, e, spec.pr_damping.unwrap(), spec.pr_iterations.unwrap())),
        Algorithm::Sssp => floats(oracle::sssp(v, e, spec.sssp_source.unwrap())),
        Algorithm::Wcc => ints(oracle::wcc(v, e)),
    }
}

fn check(spec: &GraphSpec, alg: Algorithm, actual: &BTreeMap<u64, String>) -> Validation {
    let expected = read_output(&spec.expected_file(alg)).unwrap();
    validate(alg.rule(), &expected, actual)
}

#[test]
fn oracles_pass_graphalytics_validation() {
    let specs = discover(&graphs_dir()).unwrap();
    assert_eq!(specs.len(), 14, "the shipped validation set has 14 graphs");
    let mut failures = Vec::new();
    let mut checked = BTreeSet::new();
    for spec in &specs {
        let graph = load(spec);
        assert!(!spec.algorithms.is_empty(), "{}", spec.name);
        for &alg in &spec.algorithms {
            let result = check(spec, alg, &run(spec, &graph, alg));
            eprintln!("{:<22} {:<4} {} {result}", spec.name, alg.expected_suffix(), alg.rule());
            assert!(result.vertices_checked > 0);
            if !result.pass {
                failures.push(format!("{} {}: {result}", spec.name, alg));
            }
            checked.insert((alg, spec.directed));
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
    // Every algorithm was checked on a directed and an undirected graph.
    for alg in Algorithm::ALL {
        for directed in [true, false] {
            assert!(checked.contains(&(alg, directed)), "{alg} directed={directed} unchecked");
        }
    }
}

/// The validation data and rules really discriminate: wrong variants of the algorithms fail.
#[test]
fn wrong_variants_fail_validation() {
    let specs = discover(&graphs_dir()).unwrap();
    let spec = |name: &str| specs.iter().find(|s| s.name == name).unwrap().clone();
    for name in ["example-directed", "example-undirected"] {
        let s = spec(name);
        let g = load(&s);
        let (v, e) = (&g.vertices, g.edges.as_slice());
        let (d, it) = (s.pr_damping.unwrap(), s.pr_iterations.unwrap());
        // Off-by-one PageRank iteration counts.
        for wrong in [it - 1, it + 1] {
            let r = check(&s, Algorithm::Pr, &floats(oracle::pagerank(v, e, d, wrong)));
            assert!(!r.pass, "{name}: PR with {wrong} iterations passed");
        }
        // One CDLP iteration too few.
        let cdlp_it = s.cdlp_iterations.unwrap();
        let r = check(&s, Algorithm::Cdlp, &ints(oracle::cdlp(v, e, cdlp_it - 1)));
        assert!(!r.pass, "{name}: CDLP with {} iterations passed", cdlp_it - 1);
        // BFS/SSSP from another source.
        let other = *v.iter().find(|&&x| Some(x) != s.bfs_source).unwrap();
        assert!(!check(&s, Algorithm::Bfs, &ints(oracle::bfs(v, e, other))).pass);
        assert!(!check(&s, Algorithm::Sssp, &floats(oracle::sssp(v, e, other))).pass);
        // LCC ignoring edge direction among neighbours (undirected pair counting) fails on the
        // directed graph only; on the undirected graph it is the same thing.
        let sym = oracle::symmetrize(e);
        let r = check(&s, Algorithm::Lcc, &floats(oracle::lcc(v, &sym)));
        assert_eq!(r.pass, !s.directed, "{name}: LCC on the symmetrized graph");
    }
    // WCC: every vertex in its own component fails (both example graphs are connected, so use
    // test-wcc-directed, which has several components: one label for everything fails too).
    let s = spec("test-wcc-directed");
    let g = load(&s);
    let singletons: BTreeMap<u64, String> = g.vertices.iter().map(|&x| (x, x.to_string())).collect();
    assert!(!check(&s, Algorithm::Wcc, &singletons).pass);
    let one: BTreeMap<u64, String> = g.vertices.iter().map(|&x| (x, "1".to_string())).collect();
    assert!(!check(&s, Algorithm::Wcc, &one).pass);
    // A vertex missing from the output fails.
    let mut partial = ints(oracle::wcc(&g.vertices, &g.edges));
    assert!(check(&s, Algorithm::Wcc, &partial).pass);
    partial.pop_first();
    assert!(!check(&s, Algorithm::Wcc, &partial).pass);
}
