//! Bounded work: the replacement searches of one time may take at most `factor × (links +
//! vertices)` steps ([`Budget`]). A search that would exceed it stops; the rest of the time's
//! deletions only update the link counts, and at the end of the time the forest is rebuilt from
//! the present links with union-find, exactly, in O(links + vertices) ([`DynamicForest::rebuild`]).
//! Every vertex is compared with its label before the time, so the output is that of the
//! searches. The rebuilds are counted, per forest and in a shared counter if one is given.
//!
//! **Renewal** ([`Renewal`], only when the input promises that every edge leaves in the order
//! it came, as an event-time window's copies do, each one span after its time). A forest built
//! in arrival order makes the oldest links its forest edges (an early link usually joins two
//! trees), and those are exactly the links that leave first: every expiry is then a cut and a
//! replacement search, the costly case, which on a window over R-MAT 20 ran thousands of steps
//! each when the first copies left. So the forest is built afresh from the present links,
//! *newest first* (the union-find rebuild, tree-ness decided newest first, the adjacency lists
//! filled oldest first so that their non-tree ends stay newest last), whenever as many links
//! were created since the last build as half the present ones (at least [`RENEW_MIN`]): the
//! forest edges are then the youngest links that span, and an old link leaves as a non-tree
//! edge, in O(1), unless it is a bridge. The links' birth order is a 4-byte number per link. A
//! renewal costs O(links + vertices) in one time (~90 ms at a million links here), amortised
//! over half a window's insertions; labels do not change, so nothing is emitted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::records::NONE;
use super::DynamicForest;
use crate::dataflow::union_find::DenseUnionFind;
use crate::types::Node;

/// The fewest links created between two renewals (see the module docs).
pub const RENEW_MIN: u64 = 1 << 16;

/// When and in what order a forest is renewed (see the module docs); inactive by default.
#[derive(Debug, Default)]
pub(super) struct Renewal {
    /// Renew after at least this many links created since the last build; `None`: never.
    min: Option<u64>,
    /// Links created since the last build.
    created: u64,
    /// Per link id, the birth number of the link now holding it (larger: newer).
    born: Vec<u32>,
    /// The next birth number.
    next: u32,
    /// Renewals so far.
    pub(super) count: u64,
}

impl Renewal {
    /// Renewal after at least `min` links created (`None`: never).
    pub(super) fn new(min: Option<u64>) -> Self {
        Renewal { min, ..Renewal::default() }
    }

    /// Link `l` was just created.
    #[inline]
    pub(super) fn created(&mut self, l: u32) {
        if self.min.is_none() {
            return;
        }
        if self.born.len() <= l as usize {
            self.born.resize(l as usize + 1, 0);
        }
        self.born[l as usize] = self.next;
        self.next += 1;
        self.created += 1;
    }

    /// Whether the forest, holding `links` present links, is due for a renewal.
    pub(super) fn due(&self, links: usize) -> bool {
        self.min.is_some_and(|min| self.created >= (links as u64 / 2).max(min) || self.next >= u32::MAX / 2)
    }
}

/// A forest's search budget and fallback accounting (see the module docs).
pub(super) struct Budget {
    /// The budget factor (≥ 0).
    pub(super) factor: f64,
    /// The open time's budget, in search steps, and the steps taken in it.
    pub(super) limit: u64,
    pub(super) work: u64,
    /// The open time's budget ran out: deletions only update counts; rebuild at its end.
    pub(super) degraded: bool,
    /// Fallback rebuilds so far.
    pub(super) fallbacks: u64,
    /// Also counts the fallback rebuilds, if given (shared with the dataflow's owner).
    pub(super) counter: Option<Arc<AtomicU64>>,
}

impl Budget {
    /// A budget of `factor × (links + vertices)` steps per time (a negative or NaN factor
    /// counts as 0).
    pub(super) fn new(factor: f64) -> Self {
        Budget { factor: factor.max(0.0), limit: 0, work: 0, degraded: false, fallbacks: 0, counter: None }
    }

    /// Opens a time over a graph of `size` links and vertices: its budget, no steps taken.
    #[inline]
    pub(super) fn open(&mut self, size: usize) {
        self.limit = (self.factor * size as f64).min(u64::MAX as f64) as u64;
        self.work = 0;
        self.degraded = false;
    }

    /// A rebuild has run: the time is no longer degraded, and one more fallback is counted.
    fn rebuilt(&mut self) {
        self.degraded = false;
        self.fallbacks += 1;
        if let Some(c) = &self.counter {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl DynamicForest {
    /// Rebuilds the forest from the present links with union-find (the open time's budget ran
    /// out). Every vertex is compared with its label before the time.
    pub(super) fn rebuild(&mut self) {
        self.reforest(None);
        self.budget.rebuilt();
    }

    /// Renews the forest: built afresh with the newest links first (see the module docs).
    pub(super) fn renew(&mut self) {
        let r = &mut self.renewal;
        // The present links by birth, oldest first (one slot per birth number).
        let mut order = vec![NONE; r.next as usize];
        for l in 0..self.store.links.len() as u32 {
            if self.store.copies(l) > 0 {
                order[r.born[l as usize] as usize] = l;
            }
        }
        order.retain(|&l| l != NONE);
        for (i, &l) in order.iter().enumerate() {
            r.born[l as usize] = i as u32;
        }
        (r.next, r.created, r.count) = (order.len() as u32, 0, r.count + 1);
        self.reforest(Some(&order));
    }

    /// Builds the forest afresh from the present links with union-find: in link id order, or
    /// with `by_age` (every present link, oldest first) the newest first, the adjacency lists
    /// then filled oldest first. Every vertex is compared with its label before the time.
    fn reforest(&mut self, by_age: Option<&[u32]>) {
        for v in 0..self.store.vertices.len() as u32 {
            self.touch(v);
        }
        let was_present: Vec<bool> =
            if self.changes.summary { self.store.vertices.iter().map(|x| x.present).collect() } else { Vec::new() };
        if self.changes.summary {
            for l in 0..self.store.links.len() as u32 {
                let link = self.store.links[l as usize];
                if link.count() > 0 && link.tree() {
                    self.log_link(l, -1);
                }
            }
        }
        for x in &mut self.store.vertices {
            x.tree_len = 0;
            x.other_len = 0;
            x.stale = 0;
        }
        let mut uf = DenseUnionFind::with_len(self.store.vertices.len());
        if let Some(order) = by_age {
            for &l in order.iter().rev() {
                let link = self.store.links[l as usize];
                let tree = uf.union(link.ends[0], link.ends[1]);
                self.store.links[l as usize].set_tree(tree);
            }
            for &l in order {
                self.attach(l);
            }
        }
        for l in (0..self.store.links.len() as u32).filter(|_| by_age.is_none()) {
            let link = self.store.links[l as usize];
            if link.count() == 0 {
                continue;
            }
            let tree = uf.union(link.ends[0], link.ends[1]);
            self.store.links[l as usize].set_tree(tree);
            self.attach(l);
        }
        let mut min = vec![Node::MAX; self.store.vertices.len()];
        self.store.present = 0;
        for v in 0..self.store.vertices.len() {
            let e = self.store.extra(v as u32);
            let x = &mut self.store.vertices[v];
            x.present = e.fixed > 0 || e.loops > 0 || x.has_links();
            if x.present {
                self.store.present += 1;
                let r = uf.find(v as u32) as usize;
                min[r] = min[r].min(x.id);
            }
        }
        if self.changes.summary {
            // Tags: one per tree, numbered afresh.
            self.changes.sizes.clear();
            let mut tag = vec![Node::MAX; self.store.vertices.len()];
            for (v, &was) in was_present.iter().enumerate() {
                let x = &self.store.vertices[v];
                if x.present != was {
                    self.changes.log.push(((x.id, x.id), if x.present { 1 } else { -1 }));
                }
                if x.present {
                    let r = uf.find(v as u32) as usize;
                    if tag[r] == Node::MAX {
                        tag[r] = self.fresh_tag(0);
                    }
                    *self.changes.sizes.entry(tag[r]).or_insert(0) += 1;
                    self.store.vertices[v].label = tag[r];
                }
            }
        } else {
            for v in 0..self.store.vertices.len() {
                if self.store.vertices[v].present {
                    let r = uf.find(v as u32) as usize;
                    self.store.vertices[v].label = min[r];
                }
            }
        }
    }
}
