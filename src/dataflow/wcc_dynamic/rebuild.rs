//! Bounded work: the replacement searches of one time may take at most `factor × (links +
//! vertices)` steps ([`Budget`]). A search that would exceed it stops; the rest of the time's
//! deletions only update the link counts, and at the end of the time the forest is rebuilt from
//! the present links with union-find, exactly, in O(links + vertices) ([`DynamicForest::rebuild`]).
//! Every vertex is compared with its label before the time, so the output is that of the
//! searches. The rebuilds are counted, per forest and in a shared counter if one is given.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::DynamicForest;
use crate::dataflow::union_find::DenseUnionFind;
use crate::types::Node;

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
        for l in 0..self.store.links.len() as u32 {
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
        self.budget.rebuilt();
    }
}
