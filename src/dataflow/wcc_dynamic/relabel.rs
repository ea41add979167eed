//! Relabelling: a merge gives the tree with the larger label the other's (in summary mode, the
//! smaller tree the other's tag), a split gives the side without the old minimum its own. A
//! relabelling walk over a tree needs no visited marks (each vertex is entered through one forest
//! edge and leaves through the others), so it prefetches its queue ahead in stages; a walk that
//! would reach more than `1 / SCAN_SHARE` of the vertex table passes over the whole table in
//! order instead (a tree's vertices are exactly the present ones with its label), which the
//! hardware prefetches. Either way exactly the vertices whose label changes are relabelled.

use super::records::NONE;
use super::DynamicForest;
use crate::dataflow::id_index::{prefetch, prefetch_ptr};
use crate::types::Node;

/// How far ahead a pass over a known list of vertices prefetches their records.
pub(super) const AHEAD: usize = 16;

/// A relabelling walk that reaches more than `1 / SCAN_SHARE` of the vertex table stops, and one
/// pass over the whole table (in order: the hardware prefetches it) finds the rest of the tree
/// by its label instead (see [`DynamicForest::collect_tree`]).
const SCAN_SHARE: usize = 16;

/// The walks' buffers, kept between times for their allocations, and a count for tests.
#[derive(Default)]
pub(super) struct Walks {
    /// The last walk's vertices (or a split's other side).
    pub(super) scratch: Vec<u32>,
    /// [`DynamicForest::collect_tree`]'s queue: the forest edge each vertex was entered by.
    pub(super) via: Vec<u32>,
    /// Relabellings that passed over the whole vertex table instead of walking a tree.
    pub(super) scans: u64,
}

impl DynamicForest {
    /// A split after a search exhausted side `s` (of the sides starting at `starts`): the side
    /// that does not hold the old smallest id takes its own.
    pub(super) fn split(&mut self, s: usize, starts: [u32; 2]) {
        let old = self.store.vertices[starts[0] as usize].label;
        let members = std::mem::take(&mut self.search.sides[s].queue);
        if self.changes.summary {
            // The exhausted side takes a fresh tag.
            let tag = self.fresh_tag(members.len() as u32);
            if let Some(size) = self.changes.sizes.get_mut(&old) {
                *size -= members.len() as u32;
            }
            for &v in &members {
                self.store.vertices[v as usize].label = tag;
            }
            self.search.sides[s].queue = members;
            return;
        }
        let min = members.iter().map(|&v| self.store.vertices[v as usize].id).min().unwrap_or(old);
        if min != old {
            self.label_all(&members, min);
        } else {
            // The other (larger) side lost the minimum: all of it is relabelled.
            let (mut rest, mut min, complete) = self.collect_tree(starts[1 - s], None);
            if !complete {
                // A large tree: the two sides were one tree labelled `old`.
                rest.clear();
                min = None;
                self.pass_over_table(old, Some(s), |f, v| {
                    rest.push(v);
                    let id = f.store.vertices[v as usize].id;
                    min = Some(min.map_or(id, |m: Node| m.min(id)));
                });
            }
            self.label_all(&rest, min.unwrap_or(old));
            self.walk.scratch = rest;
        }
        self.search.sides[s].queue = members;
    }

    /// Gives every vertex of `members` the label `label`, the records prefetched ahead (a
    /// large component's members are spread over the whole vertex table).
    fn label_all(&mut self, members: &[u32], label: Node) {
        for (i, &v) in members.iter().enumerate() {
            if let Some(&ahead) = members.get(i + AHEAD) {
                prefetch(&self.store.vertices[ahead as usize]);
            }
            self.set_label(v, label);
        }
    }

    /// The vertices of `start`'s tree, in breadth-first order, the smallest id among them and
    /// whether the walk completed; with `label`, each is given that label as it is reached.
    ///
    /// A walk that has reached more than `1 /` [`SCAN_SHARE`] of the vertex table stops (the
    /// third value is then `false`; the list and minimum are partial, and with `label` only the
    /// vertices before the last ones listed are labelled): the caller finds the rest of the tree
    /// by one pass over the table in order, which costs less per vertex than the walk's random
    /// records by about that factor.
    ///
    /// A tree needs no visited marks: each vertex is entered through one forest edge (`via`)
    /// and continues through the others. That keeps the traversal from touching a vertex's
    /// record before its turn, so the queue ahead of it can be prefetched in stages: the record
    /// [`AHEAD`] entries ahead, its adjacency half as far ahead, the links of its forest edges a
    /// quarter as far (over a large component every one of them is a cache miss).
    fn collect_tree(&mut self, start: u32, label: Option<Node>) -> (Vec<u32>, Option<Node>, bool) {
        let cap = self.store.vertices.len() / SCAN_SHARE;
        let mut out = std::mem::take(&mut self.walk.scratch);
        let mut via = std::mem::take(&mut self.walk.via);
        out.clear();
        via.clear();
        out.push(start);
        via.push(NONE);
        let mut min: Option<Node> = None;
        let mut i = 0;
        let mut complete = true;
        while i < out.len() {
            if out.len() > cap {
                complete = false;
                break;
            }
            if let Some(&v) = out.get(i + AHEAD) {
                prefetch(&self.store.vertices[v as usize]);
            }
            if let Some(&v) = out.get(i + AHEAD / 2) {
                let x = &self.store.vertices[v as usize];
                if x.tree_len > 0 {
                    prefetch_ptr(x.adj.as_ptr());
                }
            }
            if let Some(&v) = out.get(i + AHEAD / 4) {
                let x = &self.store.vertices[v as usize];
                for &l in &x.adj[..x.tree_len as usize] {
                    prefetch(&self.store.links[l as usize]);
                }
            }
            let (x, from) = (out[i], via[i]);
            i += 1;
            let vx = &self.store.vertices[x as usize];
            min = Some(min.map_or(vx.id, |m| m.min(vx.id)));
            for &l in &vx.adj[..vx.tree_len as usize] {
                if l != from {
                    out.push(self.store.across(l, x));
                    via.push(l);
                }
            }
            if let Some(label) = label {
                self.set_label(x, label);
            }
        }
        self.walk.via = via;
        (out, min, complete)
    }

    /// Gives every vertex of `start`'s tree the label `label`: a walk, or for a large tree a
    /// pass over the vertex table (see [`DynamicForest::collect_tree`]): its vertices are the
    /// present ones that still have its old label (labels name one tree each).
    pub(super) fn relabel_tree(&mut self, start: u32, label: Node) {
        let old = self.store.vertices[start as usize].label;
        let (members, _, complete) = self.collect_tree(start, Some(label));
        if !complete {
            // The walk labelled part of the tree already; the pass labels the rest as it finds
            // them (in table order).
            self.pass_over_table(old, None, |f, v| f.set_label(v, label));
        }
        self.walk.scratch = members;
    }

    /// One pass over the vertex table in order: hands `visit` the present vertices labelled
    /// `old`, except with `except` those the current search's side `except` reached. Labels name
    /// one tree each, so that is a tree (or the part of one beyond a side).
    fn pass_over_table(&mut self, old: Node, except: Option<usize>, mut visit: impl FnMut(&mut Self, u32)) {
        self.walk.scans += 1;
        let stamp = self.search.stamp;
        for v in 0..self.store.vertices.len() {
            let x = &self.store.vertices[v];
            if x.present && x.label == old && !except.is_some_and(|s| x.mark == stamp && x.side as usize == s) {
                visit(self, v as u32);
            }
        }
    }
}
