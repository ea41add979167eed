//! The forest's storage: the vertex records, the links, the adjacency slab and the rare counts,
//! with the operations that keep them consistent with each other (copy counts, a link's entries
//! in its ends' lists, stale non-tree entries and their compaction). Everything above this —
//! updates, searches, relabelling — goes through these few operations, so the invariants the
//! debug checks assert (a link is at its recorded positions, stale entries are counted) are
//! kept in one place.
//!
//! The adjacency blocks are memory of [`Storage::slab`]: every vertex's block is empty or was
//! made by that slab (blocks are only ever grown by [`Storage::push`]), which is what makes
//! giving a block back to the slab sound.

use rustc_hash::FxHashMap;

use super::records::{Extra, Link, Vertex, BIG};
use super::search::SCAN_AHEAD;
use super::DynamicForest;
use crate::dataflow::id_index::prefetch;
use crate::dataflow::slab::Slab;

/// The vertex records, links and adjacency of a forest (see the module docs).
#[derive(Default)]
pub(super) struct Storage {
    pub(super) vertices: Vec<Vertex>,
    /// Vertex-file multiplicities and self-loop counts of the vertices that have them.
    pub(super) extras: FxHashMap<u32, Extra>,
    pub(super) links: Vec<Link>,
    /// Copies of the links with `count == BIG`.
    pub(super) big: FxHashMap<u32, u64>,
    pub(super) free_links: Vec<u32>,
    /// Present vertices.
    pub(super) present: usize,
    /// Non-tree lists compacted ([`Storage::compact`]), for tests.
    pub(super) compactions: u64,
    /// The vertices' adjacency lists (on huge pages).
    pub(super) slab: Slab,
}

impl Storage {
    /// `v`'s rare counts.
    #[inline]
    pub(super) fn extra(&self, v: u32) -> Extra {
        if self.vertices[v as usize].extra {
            self.extras[&v]
        } else {
            Extra::default()
        }
    }

    /// `v`'s rare counts, to change (then [`Storage::tidy_extra`]).
    #[inline]
    pub(super) fn extra_mut(&mut self, v: u32) -> &mut Extra {
        self.vertices[v as usize].extra = true;
        self.extras.entry(v).or_default()
    }

    /// Drops `v`'s rare counts if they are both 0.
    #[inline]
    pub(super) fn tidy_extra(&mut self, v: u32) {
        if let Some(e) = self.extras.get(&v) {
            if e.fixed == 0 && e.loops == 0 {
                self.extras.remove(&v);
                self.vertices[v as usize].extra = false;
            }
        }
    }

    /// Copies of link `l`.
    #[inline]
    pub(super) fn copies(&self, l: u32) -> u64 {
        match self.links[l as usize].count() {
            BIG => self.big[&l],
            n => n as u64,
        }
    }

    /// Sets the copies of link `l` (0 frees it).
    #[inline]
    pub(super) fn set_copies(&mut self, l: u32, n: u64) {
        let link = &mut self.links[l as usize];
        if link.count() == BIG {
            self.big.remove(&l);
        }
        if n >= BIG as u64 {
            link.set_count(BIG);
            self.big.insert(l, n);
        } else {
            link.set_count(n as u32);
        }
    }

    /// The other end of link `l` seen from `v`.
    #[inline]
    pub(super) fn across(&self, l: u32, v: u32) -> u32 {
        let ends = self.links[l as usize].ends;
        if ends[0] == v {
            ends[1]
        } else {
            ends[0]
        }
    }

    /// Appends link `l` to `v`'s forest-edge (`tree`) or non-tree list; returns its position.
    #[inline]
    pub(super) fn push(&mut self, v: u32, tree: bool, l: u32) -> u32 {
        let x = &mut self.vertices[v as usize];
        let (nt, no) = (x.tree_len as usize, x.other_len as usize);
        let cap = x.adj.len();
        if nt + no == cap {
            // Twice the room (4 entries at first).
            let old = std::mem::take(&mut x.adj);
            // SAFETY: every vertex's block is empty or was made by `self.slab` (see the module
            // docs).
            x.adj = unsafe { self.slab.regrow(old, (2 * cap).max(4), nt, no) };
        }
        let (len, p) = if tree { (&mut x.tree_len, nt) } else { (&mut x.other_len, no) };
        *len += 1;
        let at = x.slot(tree, p);
        x.adj[at] = l;
        p as u32
    }

    /// Puts link `l` in its ends' `tree` or `other` lists, as its `tree` flag says. A full
    /// block with many stale entries is compacted first ([`Storage::compact`]).
    #[inline]
    pub(super) fn attach(&mut self, l: u32) {
        let Link { ends, .. } = self.links[l as usize];
        let tree = self.links[l as usize].tree();
        for (i, &v) in ends.iter().enumerate() {
            let x = &self.vertices[v as usize];
            if (x.tree_len + x.other_len) as usize == x.adj.len() && x.stale > 0 && 4 * x.stale >= x.other_len {
                self.compact(v);
            }
            self.links[l as usize].pos[i] = self.push(v, tree, l);
        }
    }

    /// Takes forest edge `l` out of its ends' forest-edge lists (O(1): swap-remove, fixing the
    /// moved link's position).
    #[inline]
    pub(super) fn detach(&mut self, l: u32) {
        let Link { ends, pos, .. } = self.links[l as usize];
        for i in 0..2 {
            let v = ends[i];
            let x = &mut self.vertices[v as usize];
            let p = pos[i] as usize;
            debug_assert_eq!(x.entry(true, p), Some(&l));
            if let Some(moved) = x.swap_remove_tree(p) {
                let m = &mut self.links[moved as usize];
                let j = if m.ends[0] == v { 0 } else { 1 };
                m.pos[j] = p as u32;
            }
        }
    }

    /// Non-tree edge `l` is leaving its ends' non-tree lists (its last copy goes, or it becomes
    /// a forest edge): its entries stay where they are, stale, and are only counted. Nothing is
    /// read but the two vertex records: removing them at once (a swap-remove, which moves
    /// another entry and must fix that link's position) would touch four more cache lines, and
    /// nearly every deletion of a churning graph takes a non-tree edge's last copy.
    #[inline]
    pub(super) fn unlist_other(&mut self, l: u32) {
        debug_assert!(!self.links[l as usize].tree());
        for v in self.links[l as usize].ends {
            self.vertices[v as usize].stale += 1;
        }
    }

    /// Whether `l`, the entry at position `k` of `v`'s non-tree list, is live: `l` is a
    /// present non-tree edge at `v` whose position there is `k`. A stale entry fails this
    /// whatever became of its link id since (freed, reused for another pair, a forest edge):
    /// a reused id's live entry at `v` was pushed after the stale one, at a larger position.
    #[inline]
    pub(super) fn other_live(&self, v: u32, k: usize, l: u32) -> bool {
        let link = &self.links[l as usize];
        let k = k as u32;
        link.count() > 0
            && !link.tree()
            && ((link.ends[0] == v && link.pos[0] == k) || (link.ends[1] == v && link.pos[1] == k))
    }

    /// Drops the stale entries of `v`'s non-tree list, keeping the live ones in order (their
    /// links learn their new positions). Run when a push finds the block full and at least a
    /// quarter of the list stale, so a compaction's reads (one link per entry) are at most four
    /// per entry it frees; otherwise the block grows and keeps them.
    pub(super) fn compact(&mut self, v: u32) {
        let x = &self.vertices[v as usize];
        let (no, len) = (x.other_len as usize, x.adj.len());
        let mut kept = 0;
        for k in 0..no {
            let adj = &self.vertices[v as usize].adj;
            let l = adj[len - 1 - k];
            if k + SCAN_AHEAD < no {
                prefetch(&self.links[adj[len - 1 - k - SCAN_AHEAD] as usize]);
            }
            if self.other_live(v, k, l) {
                let link = &mut self.links[l as usize];
                let i = if link.ends[0] == v { 0 } else { 1 };
                link.pos[i] = kept as u32;
                self.vertices[v as usize].adj[len - 1 - kept] = l;
                kept += 1;
            }
        }
        let x = &mut self.vertices[v as usize];
        debug_assert_eq!(no - kept, x.stale as usize);
        x.other_len = kept as u32;
        x.stale = 0;
        self.compactions += 1;
    }
}

impl DynamicForest {
    /// Puts link `l` in its ends' lists ([`Storage::attach`]); in summary mode a forest edge is
    /// logged as new.
    #[inline]
    pub(super) fn attach(&mut self, l: u32) {
        let tree = self.store.links[l as usize].tree();
        if tree && self.changes.summary {
            self.log_link(l, 1);
        }
        self.store.attach(l);
    }

    /// Takes forest edge `l` out of its ends' lists ([`Storage::detach`]); in summary mode it is
    /// logged as gone.
    #[inline]
    pub(super) fn detach(&mut self, l: u32) {
        debug_assert!(self.store.links[l as usize].tree());
        if self.changes.summary {
            self.log_link(l, -1);
        }
        self.store.detach(l);
    }
}
