//! The forest's unit tests: labels against the oracle after every time (random streams, large
//! times with dense and sparse ids, shares composed through summaries), the pair table, the
//! consolidation and the radix sort against plain maps and sorts, and targeted cases (huge
//! multiplicities, relabelling by pass or walk, search cursors, stale entries, table growth).

use super::*;
// Unit tests may use the oracle (the layer check of `tests/layers.rs` reads no further than a
// `#[cfg(test)]` line).
#[cfg(test)]
use crate::oracle;

use std::collections::{BTreeMap, BTreeSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;

use super::consolidate::{consolidate_split, radix_sort};
use super::operator::{TimeBatch, SMALL};
use super::pairs::pair_key;
use super::records::{Link, Vertex};

/// Applies `changes` to `state`, checking that they are net and consistent.
fn absorb(state: &mut BTreeMap<Node, u64>, changes: &[((Node, u64), Diff)], what: &str) {
    let mut seen = BTreeSet::new();
    for &((v, l), _) in changes.iter().filter(|c| c.1 < 0) {
        assert!(seen.insert((v, l)), "{what}: ({v}, {l}) retracted twice");
        assert_eq!(state.remove(&v), Some(l), "{what}: retraction of a label {v} does not have");
    }
    for &((v, l), d) in changes.iter().filter(|c| c.1 > 0) {
        assert_eq!(d, 1, "{what}");
        assert!(!seen.contains(&(v, l)), "{what}: net-zero pair ({v}, {l})");
        assert!(state.insert(v, l).is_none(), "{what}: {v} has two labels");
    }
}

/// Asserts that `state` holds the oracle's labels of the graph whose present pairs are the
/// keys of `counts`.
fn assert_oracle(state: &BTreeMap<Node, u64>, counts: &BTreeMap<(Node, Node), i64>, what: &str) {
    let edges: Vec<(Node, Node, f64)> = counts.keys().map(|&(a, b)| (a, b, 1.0)).collect();
    let vertices = oracle::vertex_set(std::iter::empty(), &edges);
    assert_eq!(*state, oracle::wcc(&vertices, &edges), "{what}");
}

/// Random streams aimed at forest edges, bridges and minima, with multi-edges, self-loops,
/// re-insertions and vertex-file vertices: labels equal the oracle's after every time, for
/// the default budget, budget 0 and a tiny budget, with small ids, huge ids and both.
#[test]
fn labels_match_the_oracle_after_every_time() {
    let mut zero_budget_fallbacks = 0;
    for seed in 0..40u64 {
        for factor in [DEFAULT_BUDGET, 0.0, 0.05] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = rng.gen_range(2..30u64);
            // Ids: small (identity indexing throughout), all huge (the index from the
            // start), or half of them huge (identity indexing ends mid-stream).
            let id = |v: Node| match seed % 3 {
                1 => v + (1 << 40),
                2 if v >= n / 2 => v * 7 + (1 << 40),
                _ => v,
            };
            let mut forest = DynamicForest::new(factor);
            let mut state: BTreeMap<Node, u64> = BTreeMap::new();
            let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
            let mut fixed: BTreeSet<Node> = BTreeSet::new();
            let mut out = Vec::new();
            for t in 0..80u64 {
                let mut vfile = Vec::new();
                if rng.gen_bool(0.1) {
                    let v = rng.gen_range(0..n);
                    if fixed.insert(v) {
                        vfile.push((v, 1));
                    }
                }
                let mut batch = Vec::new();
                let mut after = counts.clone();
                for _ in 0..rng.gen_range(0..8) {
                    let present: Vec<(Node, Node)> = after.keys().copied().collect();
                    let r: f64 = rng.gen();
                    if r < 0.4 && !present.is_empty() {
                        // Prefer edges at the smallest ids: forest edges and minima.
                        let i = if rng.gen_bool(0.5) { 0 } else { rng.gen_range(0..present.len()) };
                        let (a, b) = present[i];
                        let c = after.get_mut(&(a, b)).expect("present");
                        *c -= 1;
                        if *c == 0 {
                            after.remove(&(a, b));
                        }
                        let (a, b) = if rng.gen_bool(0.5) { (a, b) } else { (b, a) };
                        batch.push((a, b, -1));
                    } else {
                        let a = rng.gen_range(0..n);
                        let b = if rng.gen_bool(0.1) { a } else { rng.gen_range(0..n) };
                        *after.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                        batch.push((a, b, 1));
                    }
                }
                counts = after;
                out.clear();
                let (mut vfile, mut batch) = (vfile, batch);
                for v in &mut vfile {
                    v.0 = id(v.0);
                }
                for e in &mut batch {
                    (e.0, e.1) = (id(e.0), id(e.1));
                }
                forest.apply(&vfile, &mut batch, &mut out);
                let what = format!("seed {seed} factor {factor} t {t}");
                absorb(&mut state, &out, &what);
                let edges: Vec<(Node, Node, f64)> = counts.keys().map(|&(a, b)| (id(a), id(b), 1.0)).collect();
                let vertices = oracle::vertex_set(fixed.iter().map(|&v| id(v)), &edges);
                assert_eq!(state, oracle::wcc(&vertices, &edges), "{what}");
            }
            if factor == 0.0 {
                zero_budget_fallbacks += forest.fallbacks();
            }
        }
    }
    assert!(zero_budget_fallbacks > 100, "budget 0 fell back only {zero_budget_fallbacks} times");
}

/// Sliding windows (every copy leaves `span` times after it came, in order), with renewals
/// made frequent (at least 4 links created): the labels equal the oracle's after every time,
/// the output equals that of a forest that is never renewed, and renewals did happen.
#[test]
fn renewal_keeps_the_labels_and_the_output_on_sliding_windows() {
    let mut renewals = 0;
    for seed in 0..30u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = rng.gen_range(3..40u64);
        let span = rng.gen_range(3..40usize);
        let id = |v: Node| if seed % 2 == 1 { v * 5 + (1 << 40) } else { v };
        let mut renewed = DynamicForest::new(DEFAULT_BUDGET).with_renewal(Some(4));
        let mut plain = DynamicForest::new(DEFAULT_BUDGET);
        let mut state: BTreeMap<Node, u64> = BTreeMap::new();
        let mut window: std::collections::VecDeque<Vec<(Node, Node)>> = Default::default();
        let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
        for t in 0..400 {
            // One to three copies come (small ids preferred: hubs, minima; some self-loops and
            // repeated pairs), and those of `span` times ago leave.
            let came: Vec<(Node, Node)> = (0..rng.gen_range(1..4))
                .map(|_| {
                    let a = if rng.gen_bool(0.5) { rng.gen_range(0..n.min(4)) } else { rng.gen_range(0..n) };
                    let b = if rng.gen_bool(0.05) { a } else { rng.gen_range(0..n) };
                    (a, b)
                })
                .collect();
            window.push_back(came.clone());
            let left = if window.len() > span { window.pop_front().unwrap_or_default() } else { Vec::new() };
            let mut batch: Vec<(Node, Node, Diff)> = came.iter().map(|&(a, b)| (id(a), id(b), 1)).collect();
            batch.extend(left.iter().map(|&(a, b)| (id(a), id(b), -1)));
            for &(a, b) in &came {
                *counts.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
            for &(a, b) in &left {
                let c = counts.get_mut(&(a.min(b), a.max(b))).expect("present");
                *c -= 1;
                if *c == 0 {
                    counts.remove(&(a.min(b), a.max(b)));
                }
            }
            let (mut out, mut plain_out) = (Vec::new(), Vec::new());
            renewed.apply(&[], &mut batch.clone(), &mut out);
            plain.apply(&[], &mut batch, &mut plain_out);
            let what = format!("seed {seed} span {span} t {t}");
            out.sort_unstable();
            plain_out.sort_unstable();
            assert_eq!(out, plain_out, "{what}: a renewed forest's output differs");
            absorb(&mut state, &out, &what);
            let edges: Vec<(Node, Node, f64)> = counts.keys().map(|&(a, b)| (id(a), id(b), 1.0)).collect();
            let vertices = oracle::vertex_set(std::iter::empty(), &edges);
            assert_eq!(state, oracle::wcc(&vertices, &edges), "{what}");
        }
        assert_eq!(plain.renewals(), 0, "seed {seed}");
        renewals += renewed.renewals();
    }
    assert!(renewals > 100, "only {renewals} renewals");
}

/// A large time (an initial graph, applied in chunks) with dense ids (identity indexing,
/// its records made at once), sparse ids (the index) and dense ids followed by sparse ones
/// (identity indexing ends after the large time), then small times of churn: labels equal
/// the oracle's after each time.
#[test]
fn large_times_with_dense_and_sparse_ids() {
    for (case, seed) in [(0, 7u64), (1, 8), (2, 9)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 30_000u64;
        let id = |v: Node, t: u64| match case {
            1 => v * 1_000_003 + (1 << 40),
            2 if t > 0 && v % 2 == 1 => v + (1 << 40),
            _ => v,
        };
        let mut forest = DynamicForest::default();
        let mut state: BTreeMap<Node, u64> = BTreeMap::new();
        let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
        let mut out = Vec::new();
        for t in 0..4u64 {
            let size = if t == 0 { FREE_AS_APPLIED + 5_000 } else { 2_000 };
            let mut batch = Vec::new();
            for _ in 0..size {
                let present: Vec<(Node, Node)> =
                    if t > 0 && rng.gen_bool(0.5) { counts.keys().copied().take(64).collect() } else { Vec::new() };
                if let Some(&(a, b)) = present.get(rng.gen_range(0..present.len().max(1))) {
                    let c = counts.get_mut(&(a, b)).expect("present");
                    *c -= 1;
                    if *c == 0 {
                        counts.remove(&(a, b));
                    }
                    batch.push((a, b, -1));
                } else {
                    // Sparse enough that the graph has many components.
                    let (a, b) = (id(rng.gen_range(0..n), t), id(rng.gen_range(0..n), t));
                    *counts.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                    batch.push((b, a, 1));
                }
            }
            out.clear();
            forest.apply(&[], &mut batch, &mut out);
            let what = format!("case {case} seed {seed} t {t}");
            absorb(&mut state, &out, &what);
            assert_oracle(&state, &counts, &what);
            assert_eq!(forest.ids.identity, case == 0 || (case == 2 && t == 0), "{what}: identity indexing");
        }
    }
}

/// The distributed composition, sequentially: shares of the pairs in summary forests, their
/// forest-edge and presence changes fed to one labelling forest, equal to the oracle after
/// every time; summary outputs are net, forest edges canonical.
#[test]
fn summaries_of_shares_compose_to_the_labels() {
    for seed in 100..130u64 {
        for (shares, factor) in [(2usize, DEFAULT_BUDGET), (3, DEFAULT_BUDGET), (2, 0.0)] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = rng.gen_range(2..25u64);
            let mut parts: Vec<DynamicForest> = (0..shares).map(|_| DynamicForest::summary(factor)).collect();
            let mut top = DynamicForest::new(factor);
            let mut state: BTreeMap<Node, u64> = BTreeMap::new();
            let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
            let fixed: Vec<Node> = (0..n).filter(|_| rng.gen_bool(0.1)).collect();
            let mut out = Vec::new();
            for t in 0..60u64 {
                let mut batches: Vec<Vec<(Node, Node, Diff)>> = vec![Vec::new(); shares];
                for _ in 0..rng.gen_range(0..8) {
                    let present: Vec<(Node, Node)> = counts.keys().copied().collect();
                    let (a, b, d) = if rng.gen_bool(0.45) && !present.is_empty() {
                        let (a, b) = present[rng.gen_range(0..present.len())];
                        (a, b, -1)
                    } else {
                        let a = rng.gen_range(0..n);
                        let b = if rng.gen_bool(0.1) { a } else { rng.gen_range(0..n) };
                        (a.min(b), a.max(b), 1)
                    };
                    let c = counts.entry((a, b)).or_insert(0);
                    *c += d as i64;
                    if *c == 0 {
                        counts.remove(&(a, b));
                    }
                    batches[super::pair_share(a, b, shares)].push((b, a, d));
                }
                let mut forwarded = Vec::new();
                for (part, batch) in parts.iter_mut().zip(batches.iter_mut()) {
                    let mut summary = Vec::new();
                    part.apply(&[], batch, &mut summary);
                    let keys: BTreeSet<(Node, Node)> = summary.iter().map(|c| c.0).collect();
                    assert_eq!(keys.len(), summary.len(), "seed {seed} t {t}: summary not net");
                    for &((a, b), d) in &summary {
                        assert!(a <= b && (d == 1 || d == -1), "seed {seed} t {t}: summary record");
                        forwarded.push((a, b, d));
                    }
                }
                let vfile: Vec<(Node, Diff)> = if t == 0 { fixed.iter().map(|&v| (v, 1)).collect() } else { vec![] };
                out.clear();
                top.apply(&vfile, &mut forwarded, &mut out);
                let what = format!("seed {seed} shares {shares} factor {factor} t {t}");
                absorb(&mut state, &out, &what);
                let edges: Vec<(Node, Node, f64)> = counts.keys().map(|&(a, b)| (a, b, 1.0)).collect();
                let vertices = oracle::vertex_set(fixed.iter().copied(), &edges);
                assert_eq!(state, oracle::wcc(&vertices, &edges), "{what}");
            }
        }
    }
}

/// The pair table against a plain map: random insertions and removals (long probe runs
/// in small tables, growth, backward shifts), every pair looked up after every step.
#[test]
fn pair_table_equals_a_map() {
    for seed in 0..20u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = rng.gen_range(2..40u32);
        let mut table = PairTable::default();
        let mut links: Vec<Link> = Vec::new();
        let mut want: BTreeMap<u64, u32> = BTreeMap::new();
        for step in 0..2_000 {
            let (a, b) = (rng.gen_range(0..n), rng.gen_range(0..n));
            if a == b {
                continue;
            }
            let key = pair_key(a, b);
            let tag = PairTable::tag(a as Node, b as Node);
            match want.get(&key) {
                Some(&l) if rng.gen_bool(0.6) => {
                    table.remove(tag, l);
                    want.remove(&key);
                }
                Some(_) => {}
                None => {
                    let l = links.len() as u32;
                    links.push(Link { ends: [b, a], bits: 0, pos: [0; 2] });
                    table.insert(tag, l);
                    want.insert(key, l);
                }
            }
            assert_eq!(table.len(), want.len(), "seed {seed} step {step}");
            assert!(table.len() * 4 <= table.slots.len() * 3, "seed {seed} step {step}: over 3/4 full");
            for x in 0..n {
                for y in x + 1..n {
                    let key = pair_key(x, y);
                    let tag = PairTable::tag(x as Node, y as Node);
                    assert_eq!(table.get(tag, key, &links), want.get(&key).copied(), "seed {seed} step {step}");
                }
            }
        }
    }
}

/// `consolidate_edges` and `consolidate_split` against a map, on both of their paths (packed
/// `u64` keys for small ids, 128-bit keys for large ones): the same pairs, sums and order.
#[test]
fn consolidation_equals_a_map() {
    for seed in 0..50u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let large = seed % 2 == 1;
        let n = rng.gen_range(1..3_000usize);
        let id = |rng: &mut ChaCha8Rng| {
            let v = rng.gen_range(0..200u64);
            if large {
                v << 40
            } else {
                v
            }
        };
        let mut edges: Vec<(Node, Node, Diff)> =
            (0..n).map(|_| (id(&mut rng), id(&mut rng), rng.gen_range(-2..3 as Diff))).collect();
        let mut want: BTreeMap<(Node, Node), Diff> = BTreeMap::new();
        for &(a, b, d) in &edges {
            *want.entry((a.min(b), a.max(b))).or_insert(0) += d;
        }
        want.retain(|_, d| *d != 0);
        let (mut split, mut keys, mut insertions, mut deletions) = (edges.clone(), vec![7], vec![], vec![]);
        consolidate_edges(&mut edges);
        let want: Vec<(Node, Node, Diff)> = want.into_iter().map(|((a, b), d)| (a, b, d)).collect();
        assert_eq!(edges, want, "seed {seed}");
        // The split: the same records, insertions and deletions apart, each in pair order.
        consolidate_split(&mut split, &mut keys, &mut insertions, &mut deletions);
        let (want_in, want_out): (Vec<_>, Vec<_>) = want.iter().partition(|e| e.2 > 0);
        assert_eq!((insertions, deletions), (want_in, want_out), "seed {seed}: split");
    }
}

/// The radix sort equals `sort_unstable` on random keys of every width, duplicates and
/// constant bytes included, below and above its size threshold.
#[test]
fn radix_sort_equals_a_sort() {
    for seed in 0..60u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let bits = rng.gen_range(1..=64u32);
        let n = rng.gen_range(0..5_000usize);
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        // Some runs keep a middle byte constant, some draw from few values (duplicates).
        let fixed = rng.gen_bool(0.3).then_some(!(0xFFu64 << 16));
        let few = rng.gen_bool(0.3);
        let mut keys: Vec<u64> = (0..n)
            .map(|_| {
                let k = if few { rng.gen_range(0..20u64) } else { rng.gen::<u64>() };
                fixed.map_or(k, |f| k & f) & mask
            })
            .collect();
        let mut want = keys.clone();
        want.sort_unstable();
        radix_sort(&mut keys, bits);
        assert_eq!(keys, want, "seed {seed}, {n} keys of {bits} bits");
    }
}

/// More than 2^32 copies of one pair: counted exactly beside the 32-bit count.
#[test]
fn huge_multiplicities_are_exact() {
    let mut forest = DynamicForest::new(DEFAULT_BUDGET);
    let mut out = Vec::new();
    let many: Diff = (1 << 33) + 3;
    forest.apply(&[], &mut vec![(1, 2, many), (2, 3, 1)], &mut out);
    assert_eq!(out.len(), 3);
    out.clear();
    forest.apply(&[], &mut vec![(2, 1, -(many - 1))], &mut out);
    assert!(out.is_empty(), "one copy of 1 - 2 is left");
    forest.apply(&[], &mut vec![(1, 2, (1 << 32) - 2)], &mut out);
    forest.apply(&[], &mut vec![(1, 2, -((1 << 32) - 2))], &mut out);
    assert!(out.is_empty());
    forest.apply(&[], &mut vec![(1, 2, -1)], &mut out);
    out.sort();
    assert_eq!(out, vec![((1, 1), -1), ((2, 1), -1), ((2, 2), 1), ((3, 1), -1), ((3, 2), 1)]);
    assert!(forest.store.big.is_empty());
}

/// A large time through the operator's batch (consolidated whenever its vector is full) and
/// the freeing path of `apply` gives the same output as the plain list through the plain
/// path, time after time, and labels equal to the oracle.
#[test]
fn large_batches_equal_plain_lists() {
    let seed = 7;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut batched, mut plain) = (DynamicForest::new(DEFAULT_BUDGET), DynamicForest::new(DEFAULT_BUDGET));
    let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
    let mut state = BTreeMap::new();
    for t in 0..4 {
        let mut records: Vec<(Node, Node, Diff)> = Vec::new();
        let present: Vec<(Node, Node)> = counts.keys().copied().collect();
        let size = if t == 2 { 1_000 } else { 150_000 };
        for _ in 0..size {
            if !present.is_empty() && rng.gen_bool(0.3) {
                let (a, b) = present[rng.gen_range(0..present.len())];
                let c = counts.get_mut(&(a, b)).expect("present");
                if *c > 0 {
                    *c -= 1;
                    records.push(if rng.gen_bool(0.5) { (a, b, -1) } else { (b, a, -1) });
                }
            } else {
                let (a, b) = (rng.gen_range(0..60_000u64), rng.gen_range(0..60_000u64));
                *counts.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                records.push((a, b, 1));
            }
        }
        counts.retain(|_, c| *c > 0);
        let mut batch = TimeBatch::default();
        for &(a, b, d) in &records {
            batch.push_edge(a, b, d);
        }
        assert!(batch.edges.len() < records.len() || size < SMALL, "t {t}: never consolidated");
        let (mut got, mut want) = (Vec::new(), Vec::new());
        batched.apply(&[], &mut batch.edges, &mut got);
        plain.apply(&[], &mut records, &mut want);
        got.sort();
        want.sort();
        assert!(got == want, "seed {seed} t {t}: outputs differ");
        absorb(&mut state, &got, &format!("seed {seed} t {t}"));
        let edges: Vec<(Node, Node, f64)> = counts.keys().map(|&(a, b)| (a, b, 1.0)).collect();
        let vertices = oracle::vertex_set(std::iter::empty(), &edges);
        assert!(state == oracle::wcc(&vertices, &edges), "seed {seed} t {t}: labels differ from the oracle");
    }
}

/// Where a forest's bytes go on the `wcc-window` scenario: its window (the first 1 M edges
/// of R-MAT scale 20) loaded, then after its 500 epochs (1,000 edges in, 1,000 out):
/// `cargo test --lib memory_shares -- --ignored --nocapture`. Heap blocks are counted as
/// glibc rounds them (16-byte steps, 32 bytes at least, 8 of header).
#[test]
#[ignore]
fn memory_shares() {
    fn map<K, V>(m: &FxHashMap<K, V>) -> usize {
        let buckets = if m.capacity() == 0 { 0 } else { (m.capacity() * 8 / 7).next_power_of_two() };
        buckets * (std::mem::size_of::<(K, V)>() + 1)
    }
    fn report(forest: &DynamicForest, edges: usize) {
        let vertices = forest.store.vertices.len();
        let records = forest.store.vertices.capacity() * std::mem::size_of::<Vertex>();
        let lists = forest.store.slab.bytes();
        let index = map(&forest.ids.index.sparse) + forest.ids.index.dense.capacity() * 4;
        let links = forest.store.links.capacity() * std::mem::size_of::<Link>();
        let pairs = forest.pairs.bytes();
        let total = records + lists + index + links + pairs;
        let per = |b: usize| b as f64 / edges as f64;
        println!(
            "{edges} live edges, {vertices} vertex records, {} links: per live edge {:.1} B = vertex records \
             {:.1} ({} B each) + adjacency lists {:.1} + vertex index {:.1} + links {:.1} + pair map {:.1}; \
             per vertex {:.1} B (record, lists, index)",
            forest.links(),
            per(total),
            per(records),
            std::mem::size_of::<Vertex>(),
            per(lists),
            per(index),
            per(links),
            per(pairs),
            (records + lists + index) as f64 / vertices as f64,
        );
    }
    let edges = crate::sources::generate::rmat(20, 16, 1);
    let window = 1_000_000;
    let mut forest = DynamicForest::new(DEFAULT_BUDGET);
    let mut out = Vec::new();
    let mut batch: Vec<(Node, Node, Diff)> = edges[..window].iter().map(|&(a, b)| (a, b, 1)).collect();
    forest.apply(&[], &mut batch, &mut out);
    report(&forest, window);
    for e in 0..500 {
        let (lo, hi) = (e * 1_000, window + e * 1_000);
        let mut batch: Vec<(Node, Node, Diff)> = edges[hi..hi + 1_000].iter().map(|&(a, b)| (a, b, 1)).collect();
        batch.extend(edges[lo..lo + 1_000].iter().map(|&(a, b)| (a, b, -1)));
        out.clear();
        forest.apply(&[], &mut batch, &mut out);
    }
    report(&forest, window);
}

#[test]
fn large_relabels_pass_over_the_table_and_small_ones_walk() {
    // A path 1 - 2 - ... - 2000 and a path 3001 - ... - 3010 (the table: 2010 vertices, so a
    // walk stops beyond 125).
    let mut edges: Vec<(Node, Node, Diff)> = (1..2000).map(|i| (i, i + 1, 1)).collect();
    edges.extend((3001..3010).map(|i| (i, i + 1, 1)));
    let mut forest = DynamicForest::new(DEFAULT_BUDGET);
    let mut state = BTreeMap::new();
    let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
    let mut step = |forest: &mut DynamicForest, mut batch: Vec<(Node, Node, Diff)>, what: &str| {
        for &(a, b, d) in &batch {
            *counts.entry((a.min(b), a.max(b))).or_insert(0) += d as i64;
        }
        counts.retain(|_, c| *c != 0);
        let mut out = Vec::new();
        forest.apply(&[], &mut batch, &mut out);
        absorb(&mut state, &out, what);
        assert_oracle(&state, &counts, what);
    };
    step(&mut forest, edges, "initial");
    let scans = forest.walk.scans;
    // The small path joins vertex 500 (label 1): its 10 vertices are walked.
    step(&mut forest, vec![(3005, 500, 1)], "small merge");
    assert_eq!(forest.walk.scans, scans, "a 10-vertex relabel walks");
    // Vertex 0 joins the middle of the large tree: all 2010 vertices take label 0 (a merge
    // that passes over the table).
    step(&mut forest, vec![(0, 1000, 1)], "large merge");
    assert_eq!(forest.walk.scans, scans + 1, "a 2010-vertex merge passes over the table");
    // 0 leaves again: the other side (2010 vertices) loses the minimum (a split that passes
    // over the table, the side of 0 excluded).
    step(&mut forest, vec![(0, 1000, -1)], "large split");
    assert_eq!(forest.walk.scans, scans + 2, "a 2010-vertex split passes over the table");
    // Within one time, 0 rejoins at 1 (a merge) and the path is cut at 1000 - 1001 (a split:
    // 1001 and up, with the small path, take 1001).
    step(&mut forest, vec![(0, 1, 1), (1000, 1001, -1)], "cut with the minimum on the small side");
    // And back: everything is labelled 0.
    step(&mut forest, vec![(1000, 1001, 1)], "rejoined");
}

#[test]
fn a_path_split_in_the_middle_and_rejoined() {
    let mut forest = DynamicForest::new(DEFAULT_BUDGET);
    let mut out = Vec::new();
    let mut path: Vec<(Node, Node, Diff)> = (1..10).map(|i| (i, i + 1, 1)).collect();
    forest.apply(&[], &mut path, &mut out);
    assert_eq!(out.len(), 10);
    out.clear();
    // Cut 5 - 6 and reinsert it in one time: nothing changes.
    forest.apply(&[], &mut vec![(6, 5, -1), (5, 6, 1)], &mut out);
    assert!(out.is_empty());
    forest.apply(&[], &mut vec![(6, 5, -1)], &mut out);
    let mut want: Vec<((Node, u64), Diff)> = (6..=10).flat_map(|v| [((v, 1), -1), ((v, 6), 1)]).collect();
    out.sort();
    want.sort();
    assert_eq!(out, want);
    out.clear();
    // Removing vertex 1's only edge: 1 leaves, 2..5 are relabelled 2.
    forest.apply(&[], &mut vec![(1, 2, -1)], &mut out);
    out.sort();
    let mut want: Vec<((Node, u64), Diff)> = vec![((1, 1), -1)];
    want.extend((2..=5).flat_map(|v| [((v, 1), -1), ((v, 2), 1)]));
    want.sort();
    assert_eq!(out, want);
}

/// A side that is complete after two forest edges stops there, although its first vertex
/// has 500 non-tree edges to the far end of the other side (a path, which reaches them only
/// after ~500 vertices): the forest-edge cursor completes the side while the non-tree cursor
/// has looked at one of them. (Scanning each vertex's forest edges and then all its non-tree
/// edges before the next vertex would take ~1,000 steps here.)
#[test]
fn a_complete_side_does_not_wait_for_a_vertexs_non_tree_edges() {
    let mut forest = DynamicForest::new(1.0);
    let mut out = Vec::new();
    let mut time = |forest: &mut DynamicForest, mut edges: Vec<(Node, Node, Diff)>| {
        out.clear();
        forest.apply(&[], &mut edges, &mut out);
        out.len()
    };
    // Forest edges 1-100, the path 100-101-...-1100, 1-2; non-tree edges 1-v for the path's
    // far half.
    time(&mut forest, vec![(1, 100, 1)]);
    time(&mut forest, (100..1100).map(|v| (v, v + 1, 1)).collect());
    time(&mut forest, vec![(1, 2, 1)]);
    time(&mut forest, (601..=1100).map(|v| (1, v, 1)).collect());
    assert_eq!(forest.links(), 1502);
    // Cutting 1-100 leaves {1, 2} on one side: a replacement, no label changes.
    assert_eq!(time(&mut forest, vec![(1, 100, -1)]), 0);
    assert!(forest.budget.work <= 16, "the search took {} steps", forest.budget.work);
    assert_eq!(forest.fallbacks(), 0);
}

/// A hub whose non-tree edges come and go (the same pairs again, so freed link ids are
/// reused while their stale entries are still listed) and whose path's forest edges are cut
/// (so searches scan its non-tree list past stale entries): labels equal the oracle's after
/// every time (and the debug build checks the stale counts), and lists were compacted.
#[test]
fn stale_non_tree_entries_are_skipped_compacted_and_reused() {
    let mut compactions = 0;
    for seed in 0..20u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 40u64;
        let mut forest = DynamicForest::new(DEFAULT_BUDGET);
        let mut state: BTreeMap<Node, u64> = BTreeMap::new();
        let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
        // A path 1 - 2 - ... - n, and the hub 0 linked to every vertex of it.
        let mut batch: Vec<(Node, Node, Diff)> = (1..n).map(|i| (i, i + 1, 1)).collect();
        batch.extend((1..=n).map(|i| (0, i, 1)));
        for t in 0..60 {
            for &(a, b, d) in &batch {
                *counts.entry((a.min(b), a.max(b))).or_insert(0) += d as i64;
            }
            counts.retain(|_, c| *c != 0);
            let mut out = Vec::new();
            forest.apply(&[], &mut batch, &mut out);
            let what = format!("seed {seed}, time {t}");
            absorb(&mut state, &out, &what);
            assert_oracle(&state, &counts, &what);
            // Next: remove some hub edges and path edges, bring back some hub edges.
            batch = Vec::new();
            for &(a, b) in counts.keys() {
                if rng.gen_bool(if a == 0 { 0.3 } else { 0.1 }) {
                    batch.push((a, b, -1));
                }
            }
            for i in 1..=n {
                if !counts.contains_key(&(0, i)) && rng.gen_bool(0.4) {
                    batch.push((i, 0, 1));
                }
                if i < n && !counts.contains_key(&(i, i + 1)) && rng.gen_bool(0.3) {
                    batch.push((i, i + 1, 1));
                }
            }
        }
        compactions += forest.store.compactions;
    }
    assert!(compactions > 0, "no non-tree list was compacted");
}

/// Ids just above an initial graph's take records without moving the vertex table (growing
/// copies all of it).
#[test]
fn new_ids_above_an_initial_graph_do_not_move_the_vertex_table() {
    let mut forest = DynamicForest::new(1.0);
    let mut out = Vec::new();
    let n = 2 * FREE_AS_APPLIED as Node;
    forest.apply(&[], &mut (0..n).map(|v| (v, v + 1, 1)).collect(), &mut out);
    assert!(forest.ids.identity);
    let table = forest.store.vertices.as_ptr();
    forest.apply(&[], &mut vec![(n + 1, n + 10, 1), (0, n + 20, 1)], &mut out);
    assert!(forest.ids.identity);
    assert_eq!(forest.store.vertices.len() as Node, n + 21);
    assert_eq!(forest.store.vertices.as_ptr(), table, "the vertex table moved");
}
