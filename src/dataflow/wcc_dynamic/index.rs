//! Vertex ids to vertex indices. While the ids are dense, a vertex's index is its id
//! (*identity indexing*: no lookup, one cache miss less per id; the records of ids not named
//! yet are absent vertices); once an id is too large for that, the records keep their indices
//! and an [`IdIndex`] maps ids to them, new vertices numbered in the order they come. A large
//! time (an initial graph) is checked as a whole first, so that its sorted records' ids do not
//! look sparse one by one.

use super::records::{Vertex, NONE};
use super::DynamicForest;
use crate::dataflow::id_index::{advise_huge_pages, push_advised, IdIndex};
use crate::types::{Diff, Node};

/// How a forest finds a vertex's index (see the module docs).
pub(super) struct Ids {
    /// Identity indexing: a vertex's index is its id (while the ids are dense; see
    /// [`identity_limit`]); otherwise `index` maps ids to indices.
    pub(super) identity: bool,
    /// Identity indexing: the ids named so far (the other records are placeholders).
    pub(super) named: usize,
    pub(super) index: IdIndex,
}

impl Default for Ids {
    fn default() -> Self {
        Ids { identity: true, named: 0, index: IdIndex::default() }
    }
}

/// Identity indexing holds while every id is below this, for `named` vertices named so far:
/// at most about one placeholder record per vertex (64 bytes, against the 4 to 16 bytes of
/// the index it saves, and one cache miss less per id looked up).
pub(super) fn identity_limit(named: usize) -> u64 {
    2 * named as u64 + 4096
}

impl DynamicForest {
    /// The vertex index of `id`, if it has a record.
    #[inline]
    pub(super) fn lookup(&self, id: Node) -> Option<u32> {
        if self.ids.identity {
            (id < self.store.vertices.len() as u64).then_some(id as u32)
        } else {
            self.ids.index.get(id)
        }
    }

    /// The vertex index of `id`, created (absent) if new.
    #[inline]
    pub(super) fn vertex(&mut self, id: Node) -> u32 {
        if let Some(v) = self.lookup(id) {
            return v;
        }
        if self.ids.identity {
            if id < identity_limit(self.ids.named + 1) {
                self.ids.named += 1;
                self.extend_identity(id + 1);
                return id as u32;
            }
            self.leave_identity();
        }
        let v = self.store.vertices.len() as u32;
        assert!(v != NONE, "dynamic WCC: too many vertices");
        push_advised(&mut self.store.vertices, Vertex::new(id));
        self.ids.index.insert(id, v, self.store.vertices.len());
        v
    }

    /// Identity indexing: records for every id below `len` (those not named yet are absent
    /// vertices, as a vertex that left the result is).
    fn extend_identity(&mut self, len: u64) {
        let len = usize::try_from(len).expect("dynamic WCC: ids beyond the address space");
        let vertices = &mut self.store.vertices;
        let have = vertices.len();
        if len > vertices.capacity() {
            // Room at once for the ids identity indexing may still take (up to its limit for the
            // vertices named so far), at least doubling: growing copies the whole table (its
            // 64-byte alignment rules out remapping in place, and a copy of a large table takes
            // as long as many ordinary times), while room that is never used is only address
            // space.
            let room = (identity_limit(self.ids.named) as usize).max(len).max(2 * have);
            vertices.reserve(room - have);
            advise_huge_pages(vertices);
        }
        vertices.extend((have..len).map(|id| Vertex::new(id as Node)));
    }

    /// Ends identity indexing: the records so far keep their indices (the index maps each of
    /// their ids to itself) and new vertices are numbered in the order they come.
    fn leave_identity(&mut self) {
        self.ids.identity = false;
        let n = self.store.vertices.len();
        let dense = &mut self.ids.index.dense;
        dense.reserve_exact(n);
        advise_huge_pages(dense);
        dense.extend(0..n as u32);
    }

    /// Before a large time (an initial graph) in identity indexing: its ids are dense enough
    /// (below twice the vertices named so far and by it, plus a slack) or sparse. Dense: the
    /// records for all of them are made at once (one by one, the sorted records' second ids
    /// would soon look sparse to [`DynamicForest::vertex`]); sparse: identity indexing ends.
    pub(super) fn prepare_identity(&mut self, edges: &[(Node, Node, Diff)]) {
        let max = edges.iter().map(|e| e.0.max(e.1)).max().unwrap_or(0);
        let have = self.store.vertices.len() as u64;
        if max < have {
            return;
        }
        if max >= identity_limit(self.ids.named + 2 * edges.len()) {
            self.leave_identity();
            return;
        }
        // The distinct new ids, in a bitmap over `have..=max`.
        let mut seen = vec![0u64; ((max + 1 - have) as usize).div_ceil(64)];
        for &(a, b, _) in edges {
            for id in [a, b] {
                if id >= have {
                    let i = (id - have) as usize;
                    seen[i / 64] |= 1 << (i % 64);
                }
            }
        }
        let fresh = seen.iter().map(|w| w.count_ones() as usize).sum::<usize>();
        if max < identity_limit(self.ids.named + fresh) {
            self.ids.named += fresh;
            self.extend_identity(max + 1);
        } else {
            self.leave_identity();
        }
    }
}
