//! Core numbers (k-core decomposition), maintained under edge insertions and deletions.
//!
//! **Semantics.** The graph is read as an undirected simple graph: edge direction, parallel
//! copies and weights are ignored, and **self-loops are ignored**. The core number of a vertex
//! `v` is the largest `k` such that `v` belongs to a subgraph in which every vertex has at least
//! `k` neighbours (the `k`-core). Every vertex of the epoch's vertex set
//! ([`GraphInput::vertex_set`]: vertex-file vertices ∪ endpoints of present edges) gets its core
//! number; a vertex without neighbours (a vertex-file vertex, or one whose only edges are
//! self-loops) has 0. A vertex whose last edge is deleted and that is not in the vertex file
//! leaves the result. Values are integers
//! ([`ValueFormat::Integer`](super::ValueFormat::Integer)).
//!
//! **How** ([`KCore`], `ripples run kcore`). Incremental core maintenance (the subcore algorithm
//! of Sarıyüce et al., *Streaming algorithms for k-core decomposition*, VLDB 2013), at one
//! worker: the distinct undirected pairs `{a, b}` (from the shared [`GraphInput::edge_set`]`(true)`)
//! are exchanged to one worker, which keeps the adjacency, the core number of every vertex
//! with a neighbour and its *max-core degree* (its neighbours of core at least its own). When the
//! input frontier has passed a time, it applies the consolidated pair changes of that time one at
//! a time; one pair change moves core numbers by at most 1, and only those of vertices with core
//! `K = min(core(a), core(b))` connected to the endpoint(s) of core `K` through vertices of core
//! `K` (the *subcore*), and of those the search reaches only the ones it must (the traversal
//! algorithm of the same paper). For an insertion, only a vertex with a max-core degree above `K`
//! can rise: the search visits those, counts each one's *pure-core degree* (neighbours of larger
//! core, or of core `K` with a max-core degree above `K`) and expands only through the ones whose
//! count is above `K`; the visited vertices left with `K` or fewer are evicted one by one, the
//! rest rise to `K + 1`. For a deletion, a root whose max-core degree fell below `K` drops to
//! `K - 1`, which lowers the max-core degrees of its neighbours of core `K`, and so on: only the
//! falling vertices are expanded. Every core change updates the max-core degrees of the vertex
//! and of its neighbours (`O(deg)`).
//! The operator emits, per time, the change of each vertex's core number as the multiplicity of
//! a vertex record (no per-vertex output state), and a `reduce` per vertex joins it with the
//! vertex set ([`super::degree::multiplicity_per_vertex`]), which gives 0 to vertices without
//! neighbours. The result is the same on any number of workers and processes.
//!
//! [`KCoreIterate`] (`by_name("kcore-iterate")`, not listed) computes the same values as a
//! data-parallel differential `iterate`: the h-index iteration (Lü et al., *The H-index of a
//! network node and its relation to degree and coreness*, 2016) `c_0(v) = deg(v)`,
//! `c_{i+1}(v) = H({c_i(u) : u ∈ N(v)})`, `H` of a multiset being the largest `h` such that at least
//! `h` of its values are `>= h`; the sequence never increases and its fixpoint is the core
//! numbers. Differential maintains every round, so it is exact under insertions (which can only
//! raise core numbers) and deletions (which can only lower them, possibly far from the edge), but
//! an update revisits every round at which a value changed: on an R-MAT scale-16 graph an epoch
//! of 1,000 changes takes seconds, slower than recomputing by peeling, which is why it is not the
//! default.
//!
//! **Cost.** [`KCore`]: state linear in the edges: the shared edge-set `distinct`, the adjacency
//! at the one worker (two list entries per present pair) and a core number and a max-core degree per vertex with
//! a neighbour, and the final `reduce` (two records per vertex). A pair change costs
//! `O(Σ deg(w))` over the vertices `w` the search reaches and their neighbours (for a deletion,
//! the vertices that fall and their neighbours of core `K`; for an insertion, the candidates
//! that could rise and their neighbours), usually a small part of the subcore, and changes the
//! output of the vertices whose core number moves by 1; a parallel copy or a self-loop costs only the `distinct`. Within a
//! time, once the searches have looked at about twice (pairs + vertices) adjacency entries, the
//! rest of the time's changes are applied and the core numbers peeled from scratch (`O(|E|)`),
//! and a time with more changes than an eighth of the pairs (the initial graph) is peeled
//! directly: a time never costs much more than a recomputation. On R-MAT scale 16 with epochs of
//! 1,000 changes, p50 is 53× below a sequential recomputation (the book's performance chapter). All of it is done by
//! one worker. [`KCoreIterate`]: the arranged arcs, the degrees, and per round of the
//! iteration the values that changed in that round; the number of rounds is at most the longest
//! chain of decreases (about `n / 2` for a path of `n` vertices); an update re-evaluates, in
//! each round, the neighbours of the vertices whose value changed in the previous round (`O(deg)`
//! each).
//!
//! # Example
//!
//! ```
//! use ripples::dataflow::kcore::KCore;
//! use ripples::driver::{self, MemoryStream, RunOptions};
//! use ripples::types::Update;
//! // A triangle 0, 1, 2 with a tail 2 - 3 and a lone vertex 7; the updates close a 4-clique.
//! let stream = MemoryStream {
//!     vertices: vec![7],
//!     initial: vec![(0, 1, None), (1, 2, None), (2, 0, None), (2, 3, None)],
//!     updates: vec![Update::insert(3, 0), Update::insert(3, 1)],
//!     batch: 1,
//! };
//! let options = RunOptions { keep_state: true, ..RunOptions::memory(stream, 2) };
//! let report = driver::run(options, KCore).unwrap().unwrap();
//! assert_eq!(report.final_state.unwrap(), vec![(0, 3), (1, 3), (2, 3), (3, 3), (7, 0)]);
//! // Epoch 0: the triangle is the 2-core and 3 is in the 1-core.
//! let epoch0: Vec<_> =
//!     report.changes.unwrap().iter().filter(|c| c.epoch == 0).map(|c| (c.key, c.value)).collect();
//! assert_eq!(epoch0, vec![(0, 2), (1, 2), (2, 2), (3, 1), (7, 0)]);
//! ```

use std::collections::HashMap;

use rustc_hash::{FxHashMap, FxHashSet};

use differential_dataflow::operators::arrange::{Arranged, TraceAgent};
use differential_dataflow::operators::Iterate;
use differential_dataflow::trace::implementations::ValSpine;

use super::{Algorithm, GraphInput, NodeCollection, PairCollection, ResultCollection};
use crate::types::{Diff, Node, Time};

/// Per vertex: its core number, by incremental core maintenance at one worker.
#[derive(Clone, Copy, Debug, Default)]
pub struct KCore;

/// Per vertex: its core number, by the data-parallel differential h-index iteration.
#[derive(Clone, Copy, Debug, Default)]
pub struct KCoreIterate;

impl Algorithm for KCore {
    fn name(&self) -> String {
        "kcore".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        kcore(input)
    }
}

impl Algorithm for KCoreIterate {
    fn name(&self) -> String {
        "kcore".to_string()
    }
    fn build<'a>(&self, input: GraphInput<'a>) -> ResultCollection<'a> {
        kcore_iterate(input)
    }
}

/// `(vertex, core number)` for every vertex of the vertex set, by incremental core maintenance.
pub fn kcore<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    let pairs = input.edge_set(true).filter(|(s, d)| s < d);
    super::degree::multiplicity_per_vertex(core_counts(pairs), input.vertex_set())
}

/// The core numbers of the set of undirected pairs `(a, b)`, `a < b` (no loops): a collection in
/// which vertex `v` has multiplicity `core(v)`.
pub fn core_counts<'a>(pairs: PairCollection<'a>) -> NodeCollection<'a> {
    let mut cores = Cores::default();
    super::pair_changes::at_one_worker(pairs, "CoreMaintenance", move |changes, delta| {
        // Deterministic order (the result does not depend on it).
        let mut changes: Vec<_> = changes.into_iter().filter(|(_, d)| *d != 0).collect();
        changes.sort_unstable();
        if changes.len() > RECOMPUTE_FLOOR && changes.len() * RECOMPUTE_RATIO > cores.pairs {
            // A large batch (the initial graph): peel from scratch.
            for ((a, b), diff) in changes {
                cores.link(a, b, diff);
            }
            cores.recompute(delta);
        } else {
            // Change by change while that costs less than peeling; then peel.
            let budget = WORK_FLOOR.max(WORK_RATIO * (cores.pairs + cores.core.len()));
            let mut work = 0;
            let mut changes = changes.into_iter();
            for ((a, b), diff) in changes.by_ref() {
                work += cores.apply(a, b, diff, delta);
                if work > budget {
                    break;
                }
            }
            if work > budget {
                for ((a, b), diff) in changes {
                    cores.link(a, b, diff);
                }
                cores.recompute(delta);
            }
        }
    })
}

/// A time with more than this many pair changes, and more than `1 / RECOMPUTE_RATIO` of the
/// present pairs after it, is peeled from scratch instead of maintained change by change.
const RECOMPUTE_FLOOR: usize = 1_000;
const RECOMPUTE_RATIO: usize = 8;
/// Within a time, once the subcore searches have looked at more than `WORK_RATIO` times (pairs +
/// vertices) adjacency entries (and at least `WORK_FLOOR`), the rest of the time's changes are
/// applied to the adjacency and the core numbers peeled from scratch: an epoch never costs much
/// more than a recomputation.
const WORK_FLOOR: usize = 100_000;
const WORK_RATIO: usize = 2;

/// The adjacency of the present pairs and the core number of every vertex with a neighbour.
#[derive(Default)]
struct Cores {
    /// Per vertex, its neighbours in no order: a vector, not a set (the searches read whole
    /// lists far more often than a pair changes, and a set is slower to read; a removal looks
    /// its entry up in the list).
    neighbours: FxHashMap<Node, Vec<Node>>,
    core: FxHashMap<Node, u64>,
    /// Per vertex with a neighbour, its *max-core degree*: the neighbours whose core number is at
    /// least its own (kept up to date with every pair and core change; a vertex of core `k` is in
    /// the `k`-core because this is at least `k`).
    mcd: FxHashMap<Node, u64>,
    /// The number of present pairs.
    pairs: usize,
}

impl Cores {
    /// Applies the net change `diff` (±1) of pair `{a, b}` to the adjacency alone.
    fn link(&mut self, a: Node, b: Node, diff: Diff) {
        let present = self.neighbours.get(&a).is_some_and(|n| n.contains(&b));
        assert!(
            (diff == 1 && !present) || (diff == -1 && present),
            "internal error: pair ({a}, {b}) changes by {diff} (present: {present}) in a set"
        );
        let (ca, cb) = (self.core(a), self.core(b));
        if diff > 0 {
            self.neighbours.entry(a).or_default().push(b);
            self.neighbours.entry(b).or_default().push(a);
            self.pairs += 1;
        } else {
            for (x, y) in [(a, b), (b, a)] {
                if let Some(n) = self.neighbours.get_mut(&x) {
                    if let Some(at) = n.iter().position(|&z| z == y) {
                        n.swap_remove(at);
                    }
                    if n.is_empty() {
                        self.neighbours.remove(&x);
                    }
                }
            }
            self.pairs -= 1;
        }
        // Each end counts the other if the other's core number is at least its own.
        for (x, counts) in [(a, cb >= ca), (b, ca >= cb)] {
            if counts {
                let m = self.mcd.entry(x).or_insert(0);
                if diff > 0 {
                    *m += 1;
                } else {
                    *m -= 1;
                }
            }
            if !self.neighbours.contains_key(&x) {
                self.mcd.remove(&x);
            }
        }
    }

    fn mcd(&self, v: Node) -> u64 {
        self.mcd.get(&v).copied().unwrap_or(0)
    }

    /// Moves `w`'s core number by one (`up` or down) and keeps the max-core degrees: its own is
    /// counted again, and a neighbour whose core number equals the new (rising) or the old
    /// (falling) one gains or loses `w`. Returns the adjacency entries looked at.
    fn step_core(&mut self, w: Node, up: bool) -> usize {
        let old = self.core(w);
        let new = if up { old + 1 } else { old - 1 };
        self.set_core(w, new);
        let Some(around) = self.neighbours.get(&w) else {
            self.mcd.remove(&w);
            return 0;
        };
        let mut own = 0;
        for &x in around {
            let cx = self.core.get(&x).copied().unwrap_or(0);
            if cx >= new {
                own += 1;
            }
            if up && cx == new {
                *self.mcd.entry(x).or_insert(0) += 1;
            } else if !up && cx == old {
                *self.mcd.entry(x).or_insert(0) -= 1;
            }
        }
        let seen = around.len();
        self.mcd.insert(w, own);
        seen
    }

    /// Recomputes every core number by bucket peeling (Batagelj and Zaversnik, `O(|E|)`),
    /// adding the changes to `delta`.
    fn recompute(&mut self, delta: &mut HashMap<Node, Diff>) {
        // Dense indices and the adjacency as arrays (one pass over the hash sets): the peeling
        // and the max-core degrees then read arrays only.
        let ids: Vec<Node> = self.neighbours.keys().copied().collect();
        let index: FxHashMap<Node, u32> = ids.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
        let mut offsets = Vec::with_capacity(ids.len() + 1);
        let mut targets: Vec<u32> = Vec::with_capacity(2 * self.pairs);
        offsets.push(0usize);
        for v in &ids {
            targets.extend(self.neighbours[v].iter().map(|u| index[u]));
            offsets.push(targets.len());
        }
        drop(index);
        let around = |v: usize| &targets[offsets[v]..offsets[v + 1]];
        let mut degree: Vec<usize> = (0..ids.len()).map(|v| around(v).len()).collect();
        let max = degree.iter().copied().max().unwrap_or(0);
        // Vertices sorted by degree, with the start of each degree's bin.
        let mut start = vec![0usize; max + 2];
        for &d in &degree {
            start[d + 1] += 1;
        }
        for d in 1..start.len() {
            start[d] += start[d - 1];
        }
        let mut order = vec![0usize; ids.len()];
        let mut position = vec![0usize; ids.len()];
        let mut fill = start.clone();
        for (i, &d) in degree.iter().enumerate() {
            position[i] = fill[d];
            order[fill[d]] = i;
            fill[d] += 1;
        }
        for k in 0..order.len() {
            let v = order[k];
            for &u in around(v) {
                let u = u as usize;
                if degree[u] > degree[v] {
                    // Move u to the front of its bin, then shrink the bin by one.
                    let du = degree[u];
                    let (pu, pw) = (position[u], start[du]);
                    let w = order[pw];
                    order.swap(pu, pw);
                    position[u] = pw;
                    position[w] = pu;
                    start[du] += 1;
                    degree[u] -= 1;
                }
            }
        }
        let mut new: FxHashMap<Node, u64> = FxHashMap::with_capacity_and_hasher(ids.len(), Default::default());
        let mut mcd: FxHashMap<Node, u64> = FxHashMap::with_capacity_and_hasher(ids.len(), Default::default());
        for (i, &v) in ids.iter().enumerate() {
            let k = degree[i];
            new.insert(v, k as u64);
            mcd.insert(v, around(i).iter().filter(|&&u| degree[u as usize] >= k).count() as u64);
        }
        for (&v, &old) in self.core.iter() {
            let now = new.get(&v).copied().unwrap_or(0);
            if now != old {
                *delta.entry(v).or_insert(0) += now as Diff - old as Diff;
            }
        }
        for (&v, &now) in new.iter() {
            if !self.core.contains_key(&v) && now != 0 {
                *delta.entry(v).or_insert(0) += now as Diff;
            }
        }
        self.core = new;
        self.mcd = mcd;
    }

    fn core(&self, v: Node) -> u64 {
        self.core.get(&v).copied().unwrap_or(0)
    }

    fn set_core(&mut self, v: Node, k: u64) {
        if k == 0 {
            self.core.remove(&v);
        } else {
            self.core.insert(v, k);
        }
    }

    /// Applies the net change `diff` (±1, taking the pair's multiplicity to 0 or 1) of pair
    /// `{a, b}`, adding the core-number changes to `delta`; returns the number of adjacency
    /// entries it looked at.
    fn apply(&mut self, a: Node, b: Node, diff: Diff, delta: &mut HashMap<Node, Diff>) -> usize {
        let k = self.core(a).min(self.core(b));
        let roots: Vec<Node> = [a, b].into_iter().filter(|&v| self.core(v) == k).collect();
        self.link(a, b, diff);
        if diff > 0 {
            self.rise(k, &roots, delta)
        } else {
            self.fall(k, &roots, delta)
        }
    }

    /// `v`'s *pure-core degree* at its core number `k`: the neighbours that could be in the
    /// `k + 1`-core after an insertion (a larger core number, or `k` with a max-core degree
    /// above `k`).
    fn pure_degree(&self, v: Node, k: u64) -> (u64, usize) {
        let Some(around) = self.neighbours.get(&v) else { return (0, 0) };
        let n = around.iter().filter(|&&x| {
            let cx = self.core(x);
            cx > k || (cx == k && self.mcd(x) > k)
        });
        (n.count() as u64, around.len())
    }

    /// After an insertion between vertices of which `roots` have the smaller core number `k`
    /// (the traversal algorithm of Sarıyüce et al.): the vertices that rise to `k + 1` are those
    /// of a set, connected to a root through vertices of core `k`, in which each has more than
    /// `k` neighbours in the set or of a larger core number. Such a vertex has a max-core degree
    /// above `k`, so the search visits only those, counts each one's pure-core degree, and
    /// expands only through the ones whose count is above `k`; then the visited vertices left
    /// with `k` or fewer are evicted one by one, each lowering the counts of the visited
    /// neighbours that counted it.
    fn rise(&mut self, k: u64, roots: &[Node], delta: &mut HashMap<Node, Diff>) -> usize {
        let mut degree: FxHashMap<Node, u64> = FxHashMap::default();
        let mut order = Vec::new();
        let mut work = 0;
        for &r in roots {
            if self.mcd(r) > k {
                if let std::collections::hash_map::Entry::Vacant(slot) = degree.entry(r) {
                    let (cd, seen) = self.pure_degree(r, k);
                    work += seen;
                    slot.insert(cd);
                    order.push(r);
                }
            }
        }
        let empty = Vec::new();
        let mut next = 0;
        while next < order.len() {
            let w = order[next];
            next += 1;
            if degree[&w] <= k {
                continue;
            }
            let around = self.neighbours.get(&w).unwrap_or(&empty);
            work += around.len();
            for &x in around {
                if self.core(x) == k && self.mcd(x) > k && !degree.contains_key(&x) {
                    let (cd, seen) = self.pure_degree(x, k);
                    work += seen;
                    degree.insert(x, cd);
                    order.push(x);
                }
            }
        }
        // Every visited vertex counts in its visited neighbours' pure-core degrees.
        let mut evicted: FxHashSet<Node> = FxHashSet::default();
        let mut stack: Vec<Node> = order.iter().copied().filter(|w| degree[w] <= k).collect();
        while let Some(w) = stack.pop() {
            if !evicted.insert(w) {
                continue;
            }
            let around = self.neighbours.get(&w).unwrap_or(&empty);
            work += around.len();
            for &x in around {
                if evicted.contains(&x) {
                    continue;
                }
                if let Some(cd) = degree.get_mut(&x) {
                    *cd -= 1;
                    if *cd == k {
                        stack.push(x);
                    }
                }
            }
        }
        for w in order {
            if !evicted.contains(&w) {
                work += self.step_core(w, true);
                *delta.entry(w).or_insert(0) += 1;
            }
        }
        work
    }

    /// After a deletion between vertices of which `roots` had the smaller core number `k`: a
    /// vertex of core `k` left with fewer than `k` neighbours of core `>= k` (its max-core
    /// degree) falls to `k - 1`, which lowers the max-core degrees of its neighbours of core `k`
    /// and may take them below `k` in turn. Only the falling vertices are expanded.
    fn fall(&mut self, k: u64, roots: &[Node], delta: &mut HashMap<Node, Diff>) -> usize {
        let mut stack: Vec<Node> = roots.iter().copied().filter(|&r| self.mcd(r) < k).collect();
        let mut work = 0;
        while let Some(w) = stack.pop() {
            if self.core(w) != k || self.mcd(w) >= k {
                continue;
            }
            work += self.step_core(w, false);
            *delta.entry(w).or_insert(0) -= 1;
            if let Some(around) = self.neighbours.get(&w) {
                stack.extend(around.iter().copied().filter(|&x| self.core(x) == k && self.mcd(x) < k));
            }
        }
        work
    }
}

/// The h-index of a multiset given as `(value, count)` pairs sorted by value: the largest `h`
/// such that at least `h` values are `>= h`.
pub fn h_index(values: &[(&u64, Diff)]) -> u64 {
    let (mut at_least, mut h) = (0u64, 0u64);
    for &(&value, count) in values.iter().rev() {
        at_least += count.max(0) as u64;
        h = h.max(at_least.min(value));
    }
    h
}

/// `(vertex, core number)` for every vertex of the vertex set, by the h-index iteration.
pub fn kcore_iterate<'a>(input: GraphInput<'a>) -> ResultCollection<'a> {
    let arcs = input.edge_set(true).filter(|(s, d)| s != d);
    let degrees = arcs.clone().map(|(s, _)| s).count().map(|(v, d)| (v, d as u64));
    let arcs: Arranged<'a, TraceAgent<ValSpine<Node, Node, Time, Diff>>> = arcs.arrange_by_key();
    let cores = degrees.iterate(|scope, cores| {
        let arcs = arcs.enter(scope);
        cores.join_core(arcs, |_v, c, u| Some((*u, *c))).reduce(|_u, input, output| output.push((h_index(input), 1)))
    });
    // Every vertex with a neighbour has a core number >= 1: the largest value wins over 0.
    cores
        .concat(input.vertex_set().map(|v| (v, 0)))
        .reduce(|_v, input, output| output.push((*input[input.len() - 1].0, 1)))
}

#[cfg(test)]
mod tests {
    use super::{h_index, Cores};
    use std::collections::{BTreeMap, BTreeSet, HashMap};

    fn check(cores: &Cores, what: &str) {
        let edges: Vec<(u64, u64, f64)> =
            cores.neighbours.iter().flat_map(|(&a, n)| n.iter().map(move |&b| (a, b, 1.0))).collect();
        let vertices: BTreeSet<u64> = cores.neighbours.keys().copied().collect();
        let want: BTreeMap<u64, u64> = crate::oracle::kcore(&vertices, &edges);
        let got: BTreeMap<u64, u64> = vertices.iter().map(|&v| (v, cores.core(v))).collect();
        assert_eq!(got, want, "{}", what);
        assert!(cores.core.keys().all(|v| vertices.contains(v)), "{}: a core number without neighbours", what);
        for (&v, around) in &cores.neighbours {
            let want = around.iter().filter(|&&x| cores.core(x) >= cores.core(v)).count() as u64;
            assert_eq!(cores.mcd(v), want, "{}: vertex {}'s max-core degree", what, v);
        }
        assert!(cores.mcd.keys().all(|v| vertices.contains(v)), "{}: a max-core degree without neighbours", what);
    }

    #[test]
    fn peeling_and_maintenance_agree_with_the_oracle() {
        // Small deterministic pseudo-random graphs (a linear congruential generator per seed),
        // sparse to dense, checked after every change.
        for (seed, vertices, edges) in [(12345u64, 120u64, 600usize), (7, 40, 300), (99, 200, 260), (2024, 16, 60)] {
            let mut x = seed;
            let mut next = |n: u64| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) % n
            };
            let mut cores = Cores::default();
            let mut delta = HashMap::new();
            let mut present: Vec<(u64, u64)> = Vec::new();
            while present.len() < edges {
                let (a, b) = (next(vertices), next(vertices));
                let (a, b) = (a.min(b), a.max(b));
                if a != b && !present.contains(&(a, b)) {
                    cores.link(a, b, 1);
                    present.push((a, b));
                }
            }
            cores.recompute(&mut delta);
            check(&cores, &format!("seed {seed}: after peeling"));
            let total: isize = delta.values().sum();
            assert_eq!(total as u64, cores.core.values().sum::<u64>(), "seed {seed}: delta from nothing is the cores");
            for step in 0..600 {
                // Deletions and insertions in turn, with runs of each (cascades both ways).
                if (step / 7) % 2 == 0 && !present.is_empty() {
                    let (a, b) = present.swap_remove(next(present.len() as u64) as usize);
                    let _ = cores.apply(a, b, -1, &mut delta);
                } else {
                    let (a, b) = (next(vertices), next(vertices));
                    let (a, b) = (a.min(b), a.max(b));
                    if a == b || present.contains(&(a, b)) {
                        continue;
                    }
                    present.push((a, b));
                    let _ = cores.apply(a, b, 1, &mut delta);
                }
                check(&cores, &format!("seed {seed}: step {step}"));
            }
            // The changes handed out, from nothing on, add up to the core numbers.
            let mut vertices_seen: BTreeSet<u64> = delta.keys().copied().collect();
            vertices_seen.extend(cores.core.keys().copied());
            for v in vertices_seen {
                let handed = delta.get(&v).copied().unwrap_or(0);
                assert_eq!(handed, cores.core(v) as isize, "seed {seed}: vertex {v}'s changes add up to {handed}");
            }
            delta.clear();
            cores.recompute(&mut delta);
            assert!(delta.values().all(|&d| d == 0), "seed {seed}: peeling again changes nothing");
        }
    }

    #[test]
    fn h_index_of_multisets() {
        assert_eq!(h_index(&[]), 0);
        assert_eq!(h_index(&[(&0, 3)]), 0);
        assert_eq!(h_index(&[(&1, 1)]), 1);
        assert_eq!(h_index(&[(&1, 1), (&5, 1)]), 1);
        assert_eq!(h_index(&[(&2, 2), (&3, 1)]), 2);
        assert_eq!(h_index(&[(&3, 3)]), 3);
        assert_eq!(h_index(&[(&1, 4), (&9, 2)]), 2);
        assert_eq!(h_index(&[(&4, 10)]), 4);
    }
}
