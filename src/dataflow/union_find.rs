//! Union-find (disjoint-set forest) structures used by the insert-only WCC fast path and by the
//! sequential baselines of `ripples bench`.
//!
//! * [`DenseUnionFind`] — over dense `u32` indices: union by size, path halving. Nearly O(1)
//!   amortised per operation (inverse Ackermann).
//! * [`HashUnionFind`] — over sparse `u64` vertex ids: a hash map (FxHash) from ids to dense
//!   indices in front of a [`DenseUnionFind`] (the `uf-hash` baseline).
//! * [`ForestUnionFind`] — what each worker of the insert-only WCC path runs: the same unions, but
//!   ids go through a dense table while they are small (a hash map for the others) and records
//!   are taken in groups whose memory is prefetched before they are applied, so that a batch of
//!   random ids costs overlapping cache misses rather than one after the other.
//! * [`LabelledForest`] — the path's merge: a [`ForestUnionFind`] that also knows each
//!   component's smallest id and can enumerate a component's members (a circular "next" list per
//!   component, spliced in O(1) on union), so that it can report which vertices' labels (smallest
//!   id in the component) changed.
//!
//! ```
//! use ripples::dataflow::union_find::{ForestUnionFind, HashUnionFind, LabelledForest};
//! let mut uf = HashUnionFind::new();
//! assert!(uf.union(10, 20));
//! assert!(uf.union(30, 20));
//! assert!(!uf.union(10, 30), "already one set");
//! uf.union(7, 8);
//! let mut labels = uf.labels();
//! labels.sort();
//! assert_eq!(labels, vec![(7, 7), (8, 7), (10, 10), (20, 10), (30, 10)]);
//!
//! // The labelled variant reports how the labels (smallest id per component) changed.
//! let mut wcc = LabelledForest::new();
//! wcc.union(5, 6);
//! let mut changes = Vec::new();
//! wcc.drain_changes(&mut changes);
//! changes.sort();
//! assert_eq!(changes, vec![((5, 5), 1), ((6, 5), 1)]);
//! wcc.union(6, 2); // 2 is the new smallest id: 5 and 6 move to label 2
//! changes.clear();
//! wcc.drain_changes(&mut changes);
//! changes.sort();
//! assert_eq!(changes, vec![((2, 2), 1), ((5, 2), 1), ((5, 5), -1), ((6, 2), 1), ((6, 5), -1)]);
//! assert_eq!(wcc.label(6), Some(2));
//!
//! // The insert-only path's local forest: which records joined two components (a self-loop
//! // counts when its vertex is new).
//! let mut forest = ForestUnionFind::new();
//! let mut joined = Vec::new();
//! forest.insert_all(&[(1, 2), (2, 1), (3, 3), (3, 3), (u64::MAX, 1)], |&p| p, |&p| joined.push(p));
//! assert_eq!(joined, vec![(1, 2), (3, 3), (u64::MAX, 1)]);
//! // The merge takes records in prefetched groups too.
//! let mut merged = LabelledForest::new();
//! merged.union_all(&[(5, 6), (7, 7)], |&p| p);
//! changes.clear();
//! merged.drain_changes(&mut changes);
//! changes.sort();
//! assert_eq!(changes, vec![((5, 5), 1), ((6, 5), 1), ((7, 7), 1)]);
//! merged.union_all(&[(6, 2)], |&p| p);
//! changes.clear();
//! merged.drain_changes(&mut changes);
//! changes.sort();
//! assert_eq!(changes, vec![((2, 2), 1), ((5, 2), 1), ((5, 5), -1), ((6, 2), 1), ((6, 5), -1)]);
//! ```

use rustc_hash::FxHashMap;

use super::id_index::{prefetch, IdIndex};
use crate::types::Node;

/// Records resolved and prefetched together by [`ForestUnionFind`] and [`LabelledForest`].
const GROUP: usize = 32;

/// Union-find over `0..n`.
#[derive(Clone, Debug, Default)]
pub struct DenseUnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl DenseUnionFind {
    /// An empty forest (add elements with [`DenseUnionFind::push`]).
    pub fn new() -> Self {
        DenseUnionFind::default()
    }
    /// `n` singletons `0..n`.
    pub fn with_len(n: usize) -> Self {
        DenseUnionFind { parent: (0..n as u32).collect(), size: vec![1; n] }
    }
    /// Adds a new singleton; returns its index.
    pub fn push(&mut self) -> u32 {
        let i = self.parent.len() as u32;
        self.parent.push(i);
        self.size.push(1);
        i
    }
    /// Number of elements (indices `0..len`).
    pub fn len(&self) -> usize {
        self.parent.len()
    }
    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }
    /// The root of `x`'s tree (path halving).
    #[inline]
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }
    /// Merges the sets of roots `a` and `b` (both must be roots, distinct); returns the new root.
    #[inline]
    pub fn link(&mut self, a: u32, b: u32) -> u32 {
        let (big, small) = if self.size[a as usize] >= self.size[b as usize] { (a, b) } else { (b, a) };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
        big
    }
    /// Merges the sets of `a` and `b`; returns whether they were different.
    #[inline]
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            false
        } else {
            self.link(ra, rb);
            true
        }
    }
    /// Bytes of heap memory held.
    pub fn heap_bytes(&self) -> usize {
        (self.parent.capacity() + self.size.capacity()) * 4
    }
    /// Prefetches `x`'s parent entry (where [`DenseUnionFind::find`] starts).
    #[inline]
    pub(crate) fn prefetch(&self, x: u32) {
        if let Some(p) = self.parent.get(x as usize) {
            prefetch(p);
        }
    }
}

/// Union-find over `u64` ids.
#[derive(Clone, Debug, Default)]
pub struct HashUnionFind {
    index: FxHashMap<Node, u32>,
    ids: Vec<Node>,
    uf: DenseUnionFind,
}

impl HashUnionFind {
    /// An empty structure: no id seen yet.
    pub fn new() -> Self {
        HashUnionFind::default()
    }
    /// The dense index of `id`, and whether it was new.
    #[inline]
    pub fn index(&mut self, id: Node) -> (u32, bool) {
        let next = self.ids.len() as u32;
        let mut new = false;
        let i = *self.index.entry(id).or_insert_with(|| {
            new = true;
            next
        });
        if new {
            self.ids.push(id);
            self.uf.push();
        }
        (i, new)
    }
    /// Merges the sets of `a` and `b`; returns whether they were different.
    #[inline]
    pub fn union(&mut self, a: Node, b: Node) -> bool {
        let (ia, _) = self.index(a);
        let (ib, _) = self.index(b);
        self.uf.union(ia, ib)
    }
    /// Merges the sets of two dense indices (from [`HashUnionFind::index`]).
    #[inline]
    pub fn union_indices(&mut self, a: u32, b: u32) -> bool {
        self.uf.union(a, b)
    }
    /// Number of distinct ids seen.
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    /// Whether no id was seen yet.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    /// Every id with the smallest id of its set.
    pub fn labels(&mut self) -> Vec<(Node, Node)> {
        let n = self.ids.len();
        let mut min = vec![Node::MAX; n];
        for i in 0..n as u32 {
            let r = self.uf.find(i) as usize;
            min[r] = min[r].min(self.ids[i as usize]);
        }
        (0..n as u32).map(|i| (self.ids[i as usize], min[self.uf.find(i) as usize])).collect()
    }
    /// Approximate bytes of heap memory held.
    pub fn heap_bytes(&self) -> usize {
        self.index.capacity() * (8 + 4 + 1) + self.ids.capacity() * 8 + self.uf.heap_bytes()
    }
}

/// Union-find over `u64` ids for streams of insertions: ids through an `IdIndex` (a dense
/// table while ids are small), records applied in groups with their memory prefetched.
#[derive(Clone, Debug, Default)]
pub struct ForestUnionFind {
    index: IdIndex,
    uf: DenseUnionFind,
}

impl ForestUnionFind {
    /// An empty structure: no id seen yet.
    pub fn new() -> Self {
        ForestUnionFind::default()
    }

    /// The dense index of `id` (a new singleton if new), and whether it was new.
    #[inline]
    fn index(&mut self, id: Node) -> (u32, bool) {
        match self.index.get(id) {
            Some(i) => (i, false),
            None => {
                let i = self.uf.push();
                self.index.insert_doubling(id, i, self.uf.len());
                (i, true)
            }
        }
    }

    /// Applies the pairs of `records` (`pair` reads them) in order, each as a union, and calls
    /// `forward` with every record that joined two components, and with every self-loop
    /// `(v, v)` whose vertex `v` was new — exactly what one union after another would report.
    pub fn insert_all<R>(&mut self, records: &[R], pair: impl Fn(&R) -> (Node, Node), mut forward: impl FnMut(&R)) {
        let mut resolved = [(0u32, 0u32, false); GROUP];
        for group in records.chunks(GROUP) {
            for r in group {
                let (a, b) = pair(r);
                self.index.prefetch(a);
                self.index.prefetch(b);
            }
            for (slot, r) in resolved.iter_mut().zip(group) {
                let (a, b) = pair(r);
                let (ia, new) = self.index(a);
                let ib = if a == b { ia } else { self.index(b).0 };
                self.uf.prefetch(ia);
                self.uf.prefetch(ib);
                *slot = (ia, ib, new);
            }
            for (&(ia, ib, new), r) in resolved.iter().zip(group) {
                if ia == ib {
                    if new {
                        forward(r);
                    }
                } else if self.uf.union(ia, ib) {
                    forward(r);
                }
            }
        }
    }

    /// Merges the sets of `a` and `b`; returns whether they were different.
    pub fn union(&mut self, a: Node, b: Node) -> bool {
        let (ia, _) = self.index(a);
        let (ib, _) = self.index(b);
        self.uf.union(ia, ib)
    }

    /// Whether `a` and `b` are known and in one set.
    pub fn connected(&mut self, a: Node, b: Node) -> bool {
        match (self.index.get(a), self.index.get(b)) {
            (Some(ia), Some(ib)) => self.uf.find(ia) == self.uf.find(ib),
            _ => false,
        }
    }

    /// Number of distinct ids seen.
    pub fn len(&self) -> usize {
        self.uf.len()
    }
    /// Whether no id was seen yet.
    pub fn is_empty(&self) -> bool {
        self.uf.is_empty()
    }
    /// Approximate bytes of heap memory held.
    pub fn heap_bytes(&self) -> usize {
        self.index.heap_bytes() + self.uf.heap_bytes()
    }
}

/// A vertex of [`LabelledForest`]: its place in its component's member list and, while it is
/// touched, its label before.
#[derive(Clone, Copy, Debug)]
struct Member {
    /// The label before the first change since the last drain (valid when `state == OLD`).
    before: Node,
    /// The next member of the component (circular).
    next: u32,
    /// `UNTOUCHED`, `NEW` (no label before) or `OLD` (label in `before`).
    state: u8,
}

const UNTOUCHED: u8 = 0;
const NEW: u8 = 1;
const OLD: u8 = 2;

/// Union-find over `u64` ids that tracks each component's smallest id and reports label changes:
/// the insert-only WCC path's merge. Ids go through an `IdIndex`, the touched vertices are a
/// list of indices with their old labels beside the vertices, unions are applied in prefetched
/// groups.
#[derive(Clone, Debug, Default)]
pub struct LabelledForest {
    index: IdIndex,
    ids: Vec<Node>,
    uf: DenseUnionFind,
    /// Smallest id of the component, valid at roots.
    min: Vec<Node>,
    members: Vec<Member>,
    /// Vertices touched since the last [`LabelledForest::drain_changes`], each once.
    touched: Vec<u32>,
}

impl LabelledForest {
    /// An empty structure: no vertex, no pending change.
    pub fn new() -> Self {
        LabelledForest::default()
    }

    #[inline]
    fn index(&mut self, id: Node) -> u32 {
        if let Some(i) = self.index.get(id) {
            return i;
        }
        let i = self.uf.push();
        self.index.insert_doubling(id, i, self.uf.len());
        self.ids.push(id);
        self.min.push(id);
        self.members.push(Member { before: 0, next: i, state: NEW });
        self.touched.push(i);
        i
    }

    /// Makes sure `id` is a vertex (a singleton if new).
    pub fn add(&mut self, id: Node) {
        self.index(id);
    }

    /// The current label (smallest id in the component) of `id`, if it is a vertex.
    pub fn label(&mut self, id: Node) -> Option<Node> {
        let i = self.index.get(id)?;
        let r = self.uf.find(i);
        Some(self.min[r as usize])
    }

    /// Applies the pairs of `records` (`pair` reads them): `(v, v)` adds `v`, any other pair
    /// connects its ends (adding them if new).
    pub fn union_all<R>(&mut self, records: &[R], pair: impl Fn(&R) -> (Node, Node)) {
        let mut resolved = [(0u32, 0u32); GROUP];
        for group in records.chunks(GROUP) {
            for r in group {
                let (a, b) = pair(r);
                self.index.prefetch(a);
                self.index.prefetch(b);
            }
            for (slot, r) in resolved.iter_mut().zip(group) {
                let (a, b) = pair(r);
                let ia = self.index(a);
                let ib = if a == b { ia } else { self.index(b) };
                self.uf.prefetch(ia);
                self.uf.prefetch(ib);
                *slot = (ia, ib);
            }
            for &(ia, ib) in &resolved[..group.len()] {
                if ia != ib {
                    self.union_indices(ia, ib);
                }
            }
        }
    }

    /// Connects `a` and `b` (adding them if new).
    pub fn union(&mut self, a: Node, b: Node) {
        let ia = self.index(a);
        let ib = self.index(b);
        self.union_indices(ia, ib);
    }

    fn union_indices(&mut self, ia: u32, ib: u32) {
        let (ra, rb) = (self.uf.find(ia), self.uf.find(ib));
        if ra == rb {
            return;
        }
        let (ma, mb) = (self.min[ra as usize], self.min[rb as usize]);
        // The component with the larger minimum is relabelled: remember its members' old label.
        let (relabelled, old) = if ma < mb { (rb, mb) } else { (ra, ma) };
        let mut v = relabelled;
        loop {
            let m = &mut self.members[v as usize];
            if m.state == UNTOUCHED {
                m.state = OLD;
                m.before = old;
                self.touched.push(v);
            }
            v = m.next;
            if v == relabelled {
                break;
            }
        }
        let root = self.uf.link(ra, rb);
        self.min[root as usize] = ma.min(mb);
        let next_a = self.members[ra as usize].next;
        self.members[ra as usize].next = self.members[rb as usize].next;
        self.members[rb as usize].next = next_a;
    }

    /// The label changes since the last call, as `((vertex, label), diff)`: for every touched
    /// vertex whose label differs from before, a retraction of the old label (unless new) and an
    /// insertion of the new one.
    pub fn drain_changes(&mut self, out: &mut Vec<((Node, Node), isize)>) {
        let touched = std::mem::take(&mut self.touched);
        for &i in &touched {
            let new = self.min[self.uf.find(i) as usize];
            let m = &mut self.members[i as usize];
            let old = (m.state == OLD).then_some(m.before);
            m.state = UNTOUCHED;
            if old != Some(new) {
                let id = self.ids[i as usize];
                if let Some(old) = old {
                    out.push(((id, old), -1));
                }
                out.push(((id, new), 1));
            }
        }
        self.touched = touched;
        self.touched.clear();
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    /// Whether there is no vertex.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
    /// Approximate bytes of heap memory held.
    pub fn heap_bytes(&self) -> usize {
        self.index.heap_bytes()
            + self.ids.capacity() * 8
            + self.uf.heap_bytes()
            + self.min.capacity() * 8
            + self.members.capacity() * std::mem::size_of::<Member>()
            + self.touched.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::{BTreeMap, BTreeSet};

    /// Ids for the forest tests: small ones (the dense table) and huge ones up to `u64::MAX`
    /// (the hash map).
    fn pick(rng: &mut rand_chacha::ChaCha8Rng) -> Node {
        match rng.gen_range(0..6) {
            0 => u64::MAX - rng.gen_range(0..5u64),
            1 => (1u64 << 40) + rng.gen_range(0..10u64),
            _ => rng.gen_range(0..50u64),
        }
    }

    #[test]
    fn forest_union_find_forwards_what_sequential_unions_would() {
        for seed in 0..20u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut forest = ForestUnionFind::new();
            let mut oracle = HashUnionFind::new();
            let (mut edges, mut kept) = (Vec::new(), Vec::new());
            for _round in 0..20 {
                let n = rng.gen_range(0..3 * GROUP);
                let batch: Vec<(Node, Node)> = (0..n)
                    .map(|_| {
                        let a = pick(&mut rng);
                        (a, if rng.gen_bool(0.2) { a } else { pick(&mut rng) })
                    })
                    .collect();
                let mut forwarded = Vec::new();
                forest.insert_all(&batch, |&p| p, |&p| forwarded.push(p));
                let mut expected = Vec::new();
                for &(a, b) in &batch {
                    let (ia, new) = oracle.index(a);
                    let (ib, _) = oracle.index(b);
                    if (a == b && new) || (a != b && oracle.union_indices(ia, ib)) {
                        expected.push((a, b));
                    }
                }
                assert_eq!(forwarded, expected, "seed {}", seed);
                kept.extend(forwarded.iter().map(|&(a, b)| (a, b, 1.0)));
                edges.extend(batch.iter().map(|&(a, b)| (a, b, 1.0)));
                assert_eq!(forest.len(), oracle.len(), "seed {}", seed);
            }
            let vs: BTreeSet<Node> = crate::oracle::vertex_set([], &edges);
            let labels = crate::oracle::wcc(&vs, &edges);
            for (&v, &l) in &labels {
                assert!(forest.connected(v, l), "seed {}: {} and {} are one component", seed, v, l);
            }
            // The forwarded records alone have the same vertices and components.
            let forwarded_labels = crate::oracle::wcc(&crate::oracle::vertex_set([], &kept), &kept);
            assert_eq!(forwarded_labels, labels, "seed {}", seed);
        }
    }

    #[test]
    fn labelled_forest_reports_exactly_the_label_changes() {
        for seed in 0..20u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut uf = LabelledForest::new();
            let mut labels: BTreeMap<Node, Node> = BTreeMap::new();
            let mut edges = Vec::new();
            for _round in 0..30 {
                let n = rng.gen_range(0..2 * GROUP);
                let batch: Vec<(Node, Node)> = (0..n)
                    .map(|_| {
                        let a = pick(&mut rng);
                        (a, if rng.gen_bool(0.2) { a } else { pick(&mut rng) })
                    })
                    .collect();
                if rng.gen_bool(0.5) {
                    uf.union_all(&batch, |&p| p);
                } else {
                    for &(a, b) in &batch {
                        if a == b {
                            uf.add(a);
                        } else {
                            uf.union(a, b);
                        }
                    }
                }
                edges.extend(batch.iter().map(|&(a, b)| (a, b, 1.0)));
                let mut changes = Vec::new();
                uf.drain_changes(&mut changes);
                let mut seen = BTreeSet::new();
                for &((v, l), d) in &changes {
                    assert!(seen.insert((v, l)), "seed {}: ({}, {}) twice in one drain", seed, v, l);
                    if d < 0 {
                        assert_eq!(labels.remove(&v), Some(l), "seed {}: retracted a label not held", seed);
                    }
                }
                for &((v, l), d) in &changes {
                    if d > 0 {
                        assert!(labels.insert(v, l).is_none(), "seed {}: two labels for {}", seed, v);
                    }
                }
                let vs: BTreeSet<Node> = crate::oracle::vertex_set([], &edges);
                let expected = crate::oracle::wcc(&vs, &edges);
                assert_eq!(labels, expected, "seed {}", seed);
                for (&v, &l) in &expected {
                    assert_eq!(uf.label(v), Some(l), "seed {}", seed);
                }
            }
        }
    }

    #[test]
    fn hash_union_find_labels() {
        let mut uf = HashUnionFind::new();
        for (a, b) in [(1, 2), (1, 3), (2, 3), (1, 5), (6, 7), (8, 9), (u64::MAX, 9)] {
            uf.union(a, b);
        }
        let mut l = uf.labels();
        l.sort();
        assert_eq!(l, vec![(1, 1), (2, 1), (3, 1), (5, 1), (6, 6), (7, 6), (8, 8), (9, 8), (u64::MAX, 8)]);
    }
}
