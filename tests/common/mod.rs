//! Shared test helpers: random graph streams with a plain multiset model, and accumulation of
//! change logs into per-epoch states.
#![allow(dead_code)]

pub mod live;
pub mod pg;
pub mod process;
pub mod session;

use std::collections::{BTreeMap, BTreeSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use ripples::sinks::Change;
use ripples::types::{Node, Update};

/// A random stream: initial edges (epoch 0), extra vertex-file vertices, and epochs of updates.
#[derive(Clone, Debug)]
pub struct RandomStream {
    pub vertices: Vec<Node>,
    pub initial: Vec<(Node, Node)>,
    pub epochs: Vec<Vec<Update>>,
}

/// Vertex ids used by random streams: small ones, 0, and ids above 2^32.
pub fn id_pool(n: usize) -> Vec<Node> {
    let mut ids: Vec<Node> = (0..n as u64).collect();
    // Replace a few with large ids, keeping 0.
    for (k, id) in ids.iter_mut().enumerate().skip(1) {
        if k % 7 == 3 {
            *id = (1u64 << 33) + k as u64;
        }
        if k % 11 == 5 {
            *id = u64::MAX - k as u64;
        }
    }
    ids
}

/// Generates a random stream with insertions, deletions (of present copies only), multi-edges,
/// self-loops, deletions that split components, and vertices that appear and vanish.
pub fn random_stream(seed: u64, vertices: usize, initial: usize, epochs: usize, max_batch: usize) -> RandomStream {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let ids = id_pool(vertices);
    let pick = |rng: &mut ChaCha8Rng| ids[rng.gen_range(0..ids.len())];
    let mut present: Vec<(Node, Node)> = Vec::new();
    let mut init = Vec::new();
    for _ in 0..initial {
        let e = (pick(&mut rng), pick(&mut rng));
        init.push(e);
        present.push(e);
    }
    let vfile: Vec<Node> = ids.iter().copied().filter(|_| rng.gen_bool(0.1)).collect();
    let mut out = Vec::new();
    for _ in 0..epochs {
        let size = rng.gen_range(1..=max_batch);
        let mut batch = Vec::new();
        for _ in 0..size {
            let r: f64 = rng.gen();
            if r < 0.45 && !present.is_empty() {
                let i = rng.gen_range(0..present.len());
                let (s, d) = present.swap_remove(i);
                batch.push(Update::delete(s, d));
            } else if r < 0.55 && !present.is_empty() {
                // A parallel copy of a present edge.
                let e = present[rng.gen_range(0..present.len())];
                present.push(e);
                batch.push(Update::insert(e.0, e.1));
            } else if r < 0.6 {
                let v = pick(&mut rng);
                present.push((v, v));
                batch.push(Update::insert(v, v));
            } else {
                let e = (pick(&mut rng), pick(&mut rng));
                present.push(e);
                batch.push(Update::insert(e.0, e.1));
            }
        }
        out.push(batch);
    }
    RandomStream { vertices: vfile, initial: init, epochs: out }
}

/// One epoch of `n` updates, interleaved at random: deletions of random present copies and
/// insertions of the next `fresh` edges (`present` follows them).
pub fn churn_epoch(
    rng: &mut ChaCha8Rng,
    present: &mut Vec<(Node, Node)>,
    fresh: &mut impl Iterator<Item = (Node, Node)>,
    n: usize,
) -> Vec<Update> {
    let mut epoch = Vec::with_capacity(n);
    while epoch.len() < n {
        if rng.gen_bool(0.5) {
            let e = present.swap_remove(rng.gen_range(0..present.len()));
            epoch.push(Update::delete(e.0, e.1));
        } else {
            let e = fresh.next().expect("enough fresh edges");
            present.push(e);
            epoch.push(Update::insert(e.0, e.1));
        }
    }
    epoch
}

/// The present edge multiset after each epoch (index 0 = initial graph).
pub fn edge_counts_per_epoch(stream: &RandomStream) -> Vec<BTreeMap<(Node, Node), i64>> {
    let mut counts: BTreeMap<(Node, Node), i64> = BTreeMap::new();
    for &e in &stream.initial {
        *counts.entry(e).or_insert(0) += 1;
    }
    let mut out = vec![counts.clone()];
    for batch in &stream.epochs {
        for u in batch {
            let c = counts.entry((u.src, u.dst)).or_insert(0);
            *c += u.diff as i64;
            assert!(*c >= 0, "test stream deletes an absent edge");
            if *c == 0 {
                counts.remove(&(u.src, u.dst));
            }
        }
        out.push(counts.clone());
    }
    out
}

/// Plain edges and vertex set of one epoch, as the oracles take them.
pub fn oracle_input(
    vertex_file: &[Node],
    counts: &BTreeMap<(Node, Node), i64>,
) -> (BTreeSet<Node>, Vec<(Node, Node, f64)>) {
    let edges: Vec<(Node, Node, f64)> = counts.keys().map(|&(s, d)| (s, d, 1.0)).collect();
    let vertices = ripples::oracle::vertex_set(vertex_file.iter().copied(), &edges);
    (vertices, edges)
}

/// Re-cuts a stream into epochs of `batch` updates, as the driver does.
pub fn rebatch(stream: &RandomStream, batch: usize) -> RandomStream {
    let updates: Vec<Update> = stream.epochs.iter().flatten().copied().collect();
    RandomStream {
        vertices: stream.vertices.clone(),
        initial: stream.initial.clone(),
        epochs: updates.chunks(batch).map(|c| c.to_vec()).collect(),
    }
}

/// The stream as the driver's in-memory input, cut into epochs of `batch` updates.
pub fn memory(s: &RandomStream, batch: usize) -> ripples::driver::MemoryStream {
    ripples::driver::MemoryStream {
        vertices: s.vertices.clone(),
        initial: s.initial.iter().map(|&(a, b)| (a, b, None)).collect(),
        updates: s.epochs.iter().flatten().copied().collect(),
        batch,
    }
}

/// Accumulates a change log into the set of `(key, value)` records after each epoch
/// `0..=last`; every record's multiplicity must stay 0 or 1 (`what` names the run in messages).
pub fn sets_per_epoch(changes: &[Change], last: u64, what: &str) -> Vec<BTreeSet<(u64, u64)>> {
    let mut counts: BTreeMap<(u64, u64), i64> = BTreeMap::new();
    let mut out = Vec::new();
    let mut i = 0;
    for epoch in 0..=last {
        while i < changes.len() && changes[i].epoch == epoch {
            let c = &changes[i];
            *counts.entry((c.key, c.value)).or_insert(0) += c.diff as i64;
            i += 1;
        }
        counts.retain(|_, n| *n != 0);
        assert!(
            counts.values().all(|&n| n == 1),
            "{}: epoch {}: a multiplicity other than 1: {:?}",
            what,
            epoch,
            counts
        );
        out.push(counts.keys().copied().collect());
    }
    assert_eq!(i, changes.len(), "{}: changes after the last epoch or out of order", what);
    out
}

/// Accumulates a change log into the state after each epoch `0..=last`: one value per key.
pub fn states_per_epoch(changes: &[Change], last: u64) -> Vec<BTreeMap<Node, u64>> {
    sets_per_epoch(changes, last, "change log")
        .into_iter()
        .enumerate()
        .map(|(epoch, set)| {
            let mut state = BTreeMap::new();
            for (k, v) in set {
                assert!(state.insert(k, v).is_none(), "epoch {}: vertex {} has two values", epoch, k);
            }
            state
        })
        .collect()
}

/// Parses a `--changes` file.
pub fn parse_changes(text: &str) -> Vec<Change> {
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 4, "bad change line {:?}", l);
            Change {
                epoch: f[0].parse().unwrap(),
                key: f[1].parse().unwrap(),
                value: f[2].parse().unwrap(),
                diff: f[3].parse().unwrap(),
            }
        })
        .collect()
}
