//! The update pipeline: a time's vertex-file changes and consolidated edge changes applied to
//! the forest, insertions before deletions, each record through a *prefetch pipeline*. The
//! forest is far larger than the caches and an update touches ~8–10 random cache lines (both
//! vertex records, the pair's slot, the link, both adjacency lists, the links a swap-remove
//! moves), so while record `k` is applied, record `k + STAGE` has the lines of its adjacency
//! lists prefetched (and, half a stage later, the links its swap-removes will move), record
//! `k + 2 × STAGE` its vertex records and the link its pair's slot names, and record
//! `k + 3 × STAGE` its pair's slot (and id index slots). Each stage reads what the one before
//! prefetched, so about `3 × STAGE` records' misses are in flight at any time. The stages only
//! compute addresses: applying a record resolves it again, so the result is that of applying
//! the records one at a time.

use super::consolidate::{consolidate_split, FREE_AS_APPLIED};
use super::pairs::{pair_key, PairTable};
use super::records::{Link, NONE, TREE};
use super::search::Search;
use super::DynamicForest;
use crate::dataflow::id_index::{collapse_huge_pages, prefetch, prefetch_ptr, push_advised};
use crate::types::{Diff, Node};

/// Records between the stages of the prefetch pipeline (see the module docs).
const STAGE: usize = 8;

/// A large time's insertions are applied in chunks of this many (its list shrinks in between).
const LARGE_CHUNK: usize = 4096;

/// Consecutive small times (a sliding event-time window: an insertion and an expiry per time)
/// are too short for the pipeline to overlap their misses, so the operator prefetches across
/// them: the pair slots of the time [`LOOKAHEAD`] times ahead, the vertex records and links of
/// the one half as far ahead.
pub(super) const LOOKAHEAD: usize = 8;

/// How far ahead a time is ([`DynamicForest::prefetch_ahead`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Lookahead {
    /// [`LOOKAHEAD`] times ahead: the first stage.
    Far,
    /// Half as far: the second stage (what the first prefetched is cached by then).
    Near,
}

/// What the prefetch pipeline's stages found for a record: its pair's tag, its vertex indices
/// and its candidate link ([`NONE`]: none seen). Hints only: applying the record resolves it
/// again.
#[derive(Clone, Copy)]
struct Hint {
    tag: u32,
    va: u32,
    vb: u32,
    link: u32,
}

impl Hint {
    const NONE: Hint = Hint { tag: 0, va: NONE, vb: NONE, link: NONE };
}

/// The pipeline's buffers, kept between times for their allocations.
#[derive(Default)]
pub(super) struct Staging {
    /// The prefetch pipeline's hints for the records being applied.
    hints: Vec<Hint>,
    /// An ordinary time's consolidated insertions and deletions, and the sort keys that
    /// consolidated them.
    insertions: Vec<(Node, Node, Diff)>,
    deletions: Vec<(Node, Node, Diff)>,
    keys: Vec<u64>,
}

impl DynamicForest {
    /// Before a large time (an initial graph): room for every new pair at once, so that the pair
    /// table does not double (old and new table side by side) at the peak, and its ids checked
    /// as a whole for identity indexing.
    pub(super) fn prepare_large_time(&mut self, edges: &[(Node, Node, Diff)]) {
        self.pairs.reserve(edges.iter().filter(|e| e.2 > 0).count());
        if self.ids.identity {
            self.prepare_identity(edges);
        }
    }

    /// The vertex-file insertions of `fixed`.
    pub(super) fn add_fixed(&mut self, fixed: &[(Node, Diff)]) {
        for &(v, d) in fixed {
            if d > 0 {
                let x = self.vertex(v);
                self.store.extra_mut(x).fixed += d as i64;
                self.store.tidy_extra(x);
                self.appear(x);
            }
        }
    }

    /// The vertex-file deletions of `fixed`.
    pub(super) fn remove_fixed(&mut self, fixed: &[(Node, Diff)]) {
        for &(v, d) in fixed {
            if d < 0 {
                let x = self.vertex(v);
                self.store.extra_mut(x).fixed += d as i64;
                self.store.tidy_extra(x);
                if !self.budget.degraded {
                    self.maybe_vanish(x);
                }
            }
        }
    }

    /// An ordinary time's edge changes (below [`FREE_AS_APPLIED`]): consolidated into
    /// insertions and deletions, each kind through the pipeline on its own (the sorted records
    /// alternate between the two); `edges` is left empty.
    pub(super) fn apply_ordinary_time(&mut self, edges: &mut Vec<(Node, Node, Diff)>) {
        let (mut insertions, mut deletions) =
            (std::mem::take(&mut self.staging.insertions), std::mem::take(&mut self.staging.deletions));
        consolidate_split(edges, &mut self.staging.keys, &mut insertions, &mut deletions);
        edges.clear();
        self.apply_insertions(&insertions);
        self.apply_deletions(&deletions);
        insertions.clear();
        deletions.clear();
        (self.staging.insertions, self.staging.deletions) = (insertions, deletions);
    }

    /// A large time's consolidated edge changes (an initial graph): the same order, but the
    /// list is consumed from its end (reversed first) in chunks and shrinks as the forest grows;
    /// deletions wait aside. The tables its growth reallocated are collapsed into huge pages
    /// again before the deletions.
    pub(super) fn apply_large_time(&mut self, edges: &mut Vec<(Node, Node, Diff)>) {
        edges.reverse();
        let mut deletions = Vec::new();
        let mut chunk = Vec::with_capacity(LARGE_CHUNK);
        let mut since_shrink = 0usize;
        while !edges.is_empty() {
            chunk.clear();
            for _ in 0..LARGE_CHUNK {
                match edges.pop() {
                    Some(e) if e.2 > 0 => chunk.push(e),
                    Some(e) => deletions.push(e),
                    None => break,
                }
            }
            self.apply_insertions(&chunk);
            since_shrink += LARGE_CHUNK;
            if since_shrink >= FREE_AS_APPLIED {
                edges.shrink_to_fit();
                since_shrink = 0;
            }
        }
        edges.shrink_to_fit();
        collapse_huge_pages(&self.store.vertices);
        collapse_huge_pages(&self.store.links);
        collapse_huge_pages(&self.pairs.slots);
        collapse_huge_pages(&self.ids.index.dense);
        self.apply_deletions(&deletions);
    }

    /// Prefetches for the records of a time still to come (`look`, hints only; see
    /// [`LOOKAHEAD`]): `Near` its vertex records and candidate links, `Far` its pair slots and
    /// id index slots. Applying them later resolves everything again.
    pub(super) fn prefetch_ahead(&self, records: &[(Node, Node, Diff)], look: Lookahead) {
        for &(a, b, _) in records.iter().take(2 * STAGE) {
            let tag = self.prefetch_ids(a, b);
            if look == Lookahead::Near {
                let mut hint = Hint { tag, ..Hint::NONE };
                self.hint(a, b, &mut hint);
            }
        }
    }

    /// Runs `records` through the prefetch pipeline (see the module docs): at each step, the
    /// pair slot (and id index slots) of record `j` is prefetched, record `j - STAGE`'s vertex
    /// records and candidate link ([`DynamicForest::hint`]), `third` prefetches for record
    /// `j - 2 × STAGE` and `fourth` for record `j - 5 × STAGE / 2` from their hints, and record
    /// `j - 3 × STAGE` is applied by `apply` (given its pair's tag), which resolves everything
    /// again (the stages' reads are hints for prefetches only): the result is that of applying
    /// the records one at a time.
    fn pipeline(
        &mut self,
        records: &[(Node, Node, Diff)],
        third: impl Fn(&Self, Hint),
        fourth: impl Fn(&Self, Hint),
        apply: impl Fn(&mut Self, (Node, Node, Diff), u32),
    ) {
        let n = records.len();
        let mut hints = std::mem::take(&mut self.staging.hints);
        hints.clear();
        hints.resize(n, Hint::NONE);
        for j in 0..n + 3 * STAGE {
            if let Some(&(a, b, _)) = records.get(j) {
                hints[j].tag = self.prefetch_ids(a, b);
            }
            if let Some(k) = j.checked_sub(STAGE).filter(|&k| k < n) {
                let (a, b, _) = records[k];
                self.hint(a, b, &mut hints[k]);
            }
            if let Some(k) = j.checked_sub(2 * STAGE).filter(|&k| k < n) {
                third(self, hints[k]);
            }
            if let Some(k) = j.checked_sub(2 * STAGE + STAGE / 2).filter(|&k| k < n) {
                fourth(self, hints[k]);
            }
            if let Some(k) = j.checked_sub(3 * STAGE) {
                apply(self, records[k], hints[k].tag);
            }
        }
        self.staging.hints = hints;
    }

    /// Applies consolidated insertions `(a, b, copies)` in order, through the prefetch
    /// pipeline; its third stage prefetches the ends of the adjacency lists a new link joins
    /// and the free link it may take.
    fn apply_insertions(&mut self, records: &[(Node, Node, Diff)]) {
        let third = |f: &Self, h: Hint| {
            if h.va != NONE && h.vb != NONE && h.va != h.vb && h.link == NONE {
                // A new link: the ends of the list it will join, and the free slot it may take
                // (as if every record before it took one).
                let (x, y) = (&f.store.vertices[h.va as usize], &f.store.vertices[h.vb as usize]);
                let tree = x.label != y.label;
                prefetch_ptr(x.tail(tree));
                prefetch_ptr(y.tail(tree));
                if let Some(&l) =
                    f.store.free_links.len().checked_sub(1 + STAGE).and_then(|i| f.store.free_links.get(i))
                {
                    prefetch(&f.store.links[l as usize]);
                }
            }
        };
        let apply = |f: &mut Self, (a, b, d): (Node, Node, Diff), tag: u32| {
            let va = f.vertex(a);
            let vb = if a == b { va } else { f.vertex(b) };
            let link = if va == vb { NONE } else { f.pairs.get(tag, pair_key(va, vb), &f.store.links).unwrap_or(NONE) };
            f.insert_at(va, vb, link, d as u64, tag);
        };
        self.pipeline(records, third, |_, _| {}, apply);
    }

    /// Applies consolidated deletions `(a, b, -copies)` in order, through the prefetch
    /// pipeline; for a forest edge, its third stage prefetches the link's entries in its ends'
    /// lists and their last entries, the fourth the links a swap-remove will move there (a
    /// non-tree edge's entries are left stale:
    /// [`Storage::unlist_other`](super::storage::Storage::unlist_other)).
    fn apply_deletions(&mut self, records: &[(Node, Node, Diff)]) {
        let third = |f: &Self, h: Hint| {
            if let Some(link) = f.hinted_link(h).filter(Link::tree) {
                for (i, &v) in link.ends.iter().enumerate() {
                    let x = &f.store.vertices[v as usize];
                    if let Some(at) = x.entry(true, link.pos[i] as usize) {
                        prefetch(at);
                    }
                    if let Some(last) = x.last(true) {
                        prefetch(last);
                    }
                }
            }
        };
        let fourth = |f: &Self, h: Hint| {
            if let Some(link) = f.hinted_link(h).filter(Link::tree) {
                for &v in &link.ends {
                    if let Some(m) =
                        f.store.vertices[v as usize].last(true).and_then(|&m| f.store.links.get(m as usize))
                    {
                        prefetch(m);
                    }
                }
            }
        };
        let apply = |f: &mut Self, (a, b, d): (Node, Node, Diff), tag: u32| {
            let copies = d.unsigned_abs() as u64;
            let va = f.lookup(a).unwrap_or(NONE);
            let vb = if a == b { va } else { f.lookup(b).unwrap_or(NONE) };
            debug_assert!(va != NONE && vb != NONE, "dynamic WCC: deletion of an absent edge {a} {b}");
            let mut link = NONE;
            if va != vb && va != NONE && vb != NONE {
                link = f.pairs.get(tag, pair_key(va, vb), &f.store.links).unwrap_or(NONE);
                debug_assert!(link != NONE, "dynamic WCC: deletion of an absent edge");
                if link != NONE && f.store.copies(link) <= copies {
                    f.pairs.remove(tag, link);
                }
            }
            f.delete_at(va, vb, link, copies);
        };
        self.pipeline(records, third, fourth, apply);
    }

    /// The pipeline's first stage for the pair of ids `a`, `b`: prefetches their index slots
    /// and the pair's home slot; returns its tag.
    #[inline]
    fn prefetch_ids(&self, a: Node, b: Node) -> u32 {
        if !self.ids.identity {
            for id in [a, b] {
                if let Some(slot) = self.ids.index.slot(id) {
                    prefetch(slot);
                }
            }
        }
        let tag = PairTable::tag(a, b);
        if a != b {
            if let Some(slot) = self.pairs.slot(tag) {
                prefetch(slot);
            }
            if let Some(slot) = self.pairs.slot_ahead(tag) {
                prefetch(slot);
            }
        }
        tag
    }

    /// The pipeline's second stage: the pair's vertex indices (`NONE` if new) and candidate
    /// link into `hint`, prefetching the vertex records and that link.
    #[inline]
    fn hint(&self, a: Node, b: Node, hint: &mut Hint) {
        hint.va = self.lookup(a).unwrap_or(NONE);
        hint.vb = if a == b { hint.va } else { self.lookup(b).unwrap_or(NONE) };
        for v in [hint.va, hint.vb] {
            if v != NONE {
                prefetch(&self.store.vertices[v as usize]);
            }
        }
        if a != b {
            if let Some(l) = self.pairs.candidate(hint.tag) {
                prefetch(&self.store.links[l as usize]);
                hint.link = l;
            }
        }
    }

    /// The hinted link, if it is still a present link between the hinted vertices.
    #[inline]
    fn hinted_link(&self, h: Hint) -> Option<Link> {
        let link = *self.store.links.get(h.link as usize)?;
        let ends = link.ends;
        (link.count() > 0 && (ends == [h.va, h.vb] || ends == [h.vb, h.va])).then_some(link)
    }

    /// Inserts `copies` copies of the pair of vertex indices `va`, `vb` (equal: a self-loop),
    /// whose link is `link` (`NONE`: none yet).
    fn insert_at(&mut self, va: u32, vb: u32, link: u32, copies: u64, tag: u32) {
        self.appear(va);
        if va == vb {
            self.store.extra_mut(va).loops += copies;
            return;
        }
        self.appear(vb);
        if link != NONE {
            self.store.set_copies(link, self.store.copies(link) + copies);
            return;
        }
        let (la, lb) = (self.store.vertices[va as usize].label, self.store.vertices[vb as usize].label);
        let tree = la != lb;
        if tree && self.changes.summary {
            // Relabel the smaller tree with the other's tag (before linking: its tree is exactly it).
            let (sa, sb) = (self.changes.sizes[&la], self.changes.sizes[&lb]);
            let (side, keep, gone) = if sa < sb { (va, lb, la) } else { (vb, la, lb) };
            self.relabel_tree(side, keep);
            self.changes.sizes.remove(&gone);
            self.changes.sizes.insert(keep, sa + sb);
        } else if tree {
            // Relabel the side with the larger label (before linking: its tree is exactly it).
            let (side, label) = if la < lb { (vb, la) } else { (va, lb) };
            self.relabel_tree(side, label);
        }
        let link = Link { ends: [va, vb], bits: if tree { TREE } else { 0 }, pos: [NONE; 2] };
        let l = match self.store.free_links.pop() {
            Some(l) => {
                self.store.links[l as usize] = link;
                l
            }
            None => {
                push_advised(&mut self.store.links, link);
                (self.store.links.len() - 1) as u32
            }
        };
        self.store.set_copies(l, copies);
        self.pairs.insert(tag, l);
        self.renewal.created(l);
        self.attach(l);
    }

    /// Deletes `copies` copies of the pair `va`, `vb` (equal: a self-loop), whose link is
    /// `link` (already out of the pair index if these are its last copies; `NONE`: absent).
    fn delete_at(&mut self, va: u32, vb: u32, l: u32, copies: u64) {
        if va == NONE || vb == NONE {
            return;
        }
        if va == vb {
            debug_assert!(self.store.extra(va).loops >= copies, "dynamic WCC: deletion of an absent self-loop");
            let x = self.store.extra_mut(va);
            x.loops = x.loops.saturating_sub(copies);
            self.store.tidy_extra(va);
            if !self.budget.degraded {
                self.maybe_vanish(va);
            }
            return;
        }
        if l == NONE {
            return;
        }
        let present = self.store.copies(l);
        debug_assert!(present >= copies, "dynamic WCC: deletion of more copies than present");
        self.store.set_copies(l, present.saturating_sub(copies));
        if present > copies {
            return;
        }
        let tree = self.store.links[l as usize].tree();
        if tree {
            self.detach(l);
        } else {
            self.store.unlist_other(l);
        }
        self.store.free_links.push(l);
        if tree && !self.budget.degraded {
            match self.search(va, vb) {
                Search::Replacement(r) => {
                    self.store.unlist_other(r);
                    self.store.links[r as usize].set_tree(true);
                    self.attach(r);
                }
                Search::Split(s) => self.split(s, [va, vb]),
                Search::Aborted => self.budget.degraded = true,
            }
        }
        if !self.budget.degraded {
            self.maybe_vanish(va);
            self.maybe_vanish(vb);
        }
    }
}
