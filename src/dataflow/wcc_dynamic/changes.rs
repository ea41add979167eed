//! A time's output: the vertices whose label may change ([`Changes::dirty`], their labels
//! before the time kept in their records) and, in summary mode (a worker's share of a
//! distributed run), the component tags and the log of forest-edge and presence changes. A
//! vertex enters and leaves the result here ([`DynamicForest::appear`],
//! [`DynamicForest::maybe_vanish`]), and every label change goes through
//! [`DynamicForest::set_label`], so the time's net changes are exactly the listed vertices whose
//! presence or label differs at its end.

use rustc_hash::FxHashMap;

use super::relabel::AHEAD;
use super::DynamicForest;
use crate::dataflow::id_index::prefetch;
use crate::types::{Diff, Node};

/// The open time's change list, and summary mode's state (see the module docs).
pub(super) struct Changes {
    /// Vertices whose label may have changed in the open time (their label before it is in
    /// their record).
    pub(super) dirty: Vec<u32>,
    /// The open time's stamp for `Vertex::listed`.
    pub(super) time: u32,
    /// Summary mode (a worker's share of a distributed run): labels are component tags, not
    /// smallest ids, and the time's output is its forest-edge and presence changes.
    pub(super) summary: bool,
    /// Summary mode: the next fresh tag, each tag's tree size, and the open time's changes.
    pub(super) next_tag: Node,
    pub(super) sizes: FxHashMap<Node, u32>,
    pub(super) log: Vec<((Node, Node), Diff)>,
}

impl Changes {
    /// No changes yet; in summary mode if `summary`.
    pub(super) fn new(summary: bool) -> Self {
        Changes { dirty: Vec::new(), time: 1, summary, next_tag: 0, sizes: FxHashMap::default(), log: Vec::new() }
    }
}

impl DynamicForest {
    /// Summary mode: a fresh tag for a tree of `size` vertices.
    pub(super) fn fresh_tag(&mut self, size: u32) -> Node {
        let t = self.changes.next_tag;
        self.changes.next_tag += 1;
        self.changes.sizes.insert(t, size);
        t
    }

    /// Summary mode: logs forest edge `l`'s change `diff`, by its ends' ids.
    pub(super) fn log_link(&mut self, l: u32, diff: Diff) {
        let [a, b] = self.store.links[l as usize].ends;
        let (a, b) = (self.store.vertices[a as usize].id, self.store.vertices[b as usize].id);
        self.changes.log.push(((a.min(b), a.max(b)), diff));
    }

    /// Lists `v` in the open time (once), with its presence and label before it.
    #[inline]
    pub(super) fn touch(&mut self, v: u32) {
        let x = &mut self.store.vertices[v as usize];
        if x.listed != self.changes.time && !self.changes.summary {
            x.listed = self.changes.time;
            x.was_present = x.present;
            x.before = x.label;
            self.changes.dirty.push(v);
        }
    }

    /// Gives `v` the label `label`.
    #[inline]
    pub(super) fn set_label(&mut self, v: u32, label: Node) {
        self.touch(v);
        self.store.vertices[v as usize].label = label;
    }

    /// Makes `v` present (a singleton tree) if it is not.
    #[inline]
    pub(super) fn appear(&mut self, v: u32) {
        if !self.store.vertices[v as usize].present {
            self.touch(v);
            let label = if self.changes.summary { self.fresh_tag(1) } else { self.store.vertices[v as usize].id };
            let x = &mut self.store.vertices[v as usize];
            x.present = true;
            x.label = label;
            self.store.present += 1;
            if self.changes.summary {
                self.changes.log.push(((x.id, x.id), 1));
            }
        }
    }

    /// Removes `v` from the result if nothing keeps it there.
    #[inline]
    pub(super) fn maybe_vanish(&mut self, v: u32) {
        let x = &self.store.vertices[v as usize];
        if x.present
            && !x.has_links()
            && (!x.extra || (self.store.extra(v).fixed <= 0 && self.store.extra(v).loops == 0))
        {
            self.touch(v);
            self.store.vertices[v as usize].present = false;
            self.store.present -= 1;
            if self.changes.summary {
                let x = &self.store.vertices[v as usize];
                self.changes.sizes.remove(&x.label);
                self.changes.log.push(((x.id, x.id), -1));
            }
        }
    }

    /// Summary mode: the open time's forest-edge and presence changes, net.
    pub(super) fn drain_summary(&mut self, emit: &mut impl FnMut((Node, u64), Diff)) {
        let mut log = std::mem::take(&mut self.changes.log);
        differential_dataflow::consolidation::consolidate(&mut log);
        for (record, diff) in log.drain(..) {
            emit(record, diff);
        }
        self.changes.log = log;
    }

    /// The label changes of the open time: `((vertex, label), ±1)`, net.
    pub(super) fn drain_changes(&mut self, emit: &mut impl FnMut((Node, u64), Diff)) {
        let mut dirty = std::mem::take(&mut self.changes.dirty);
        for (i, &v) in dirty.iter().enumerate() {
            if let Some(&ahead) = dirty.get(i + AHEAD) {
                prefetch(&self.store.vertices[ahead as usize]);
            }
            let x = &self.store.vertices[v as usize];
            let (old, new) = (x.was_present.then_some(x.before), x.present.then_some(x.label));
            if old != new {
                if let Some(l) = old {
                    emit((x.id, l), -1);
                }
                if let Some(l) = new {
                    emit((x.id, l), 1);
                }
            }
        }
        dirty.clear();
        // Keep the allocation unless one huge time (a rebuild) left it oversized.
        if dirty.capacity() <= 1 << 16 {
            self.changes.dirty = dirty;
        }
        // No vertex is listed in the next time.
        if self.changes.time == u32::MAX {
            for x in &mut self.store.vertices {
                x.listed = 0;
            }
            self.changes.time = 0;
        }
        self.changes.time += 1;
    }
}
