//! The forest's records: a vertex is one 64-byte cache line ([`Vertex`]), a link (a present
//! vertex pair, all its copies) a 20-byte [`Link`], and the layout constants both share. The
//! sizes are asserted here: the prefetch pipeline and the memory figures of the module docs
//! count on a vertex being exactly one line.

use crate::dataflow::slab::Block;
use crate::types::Node;

/// No vertex, no link, no position.
pub(super) const NONE: u32 = u32::MAX;
/// A link's flag bit: it is a forest edge.
pub(super) const TREE: u32 = 1 << 31;
/// A link's count when its copies are counted in `Storage::big` (2^31 - 1 or more).
pub(super) const BIG: u32 = TREE - 1;

/// A vertex's bookkeeping: one 64-byte cache line (the rare counts live in `Storage::extras`;
/// the adjacency is one block of `Storage::slab`).
#[derive(Debug)]
#[repr(align(64))]
pub(super) struct Vertex {
    pub(super) id: Node,
    /// The smallest id of its tree (meaningful while present).
    pub(super) label: Node,
    /// Its links (link ids), in one allocation: the forest edges from the front,
    /// `adj[..tree_len]`, and the non-tree edges from the back, the `k`-th oldest at
    /// `adj[adj.len() - 1 - k]`; a link's position in its list is its index there (`k`).
    pub(super) adj: Block,
    pub(super) tree_len: u32,
    /// Entries of the non-tree list, `stale` of them left behind by links that are gone or
    /// became forest edges (see `Storage::other_live`).
    pub(super) other_len: u32,
    pub(super) stale: u32,
    /// Which side of the current search reached it (`side`), valid when `mark` is the search's
    /// stamp.
    pub(super) mark: u32,
    pub(super) side: u8,
    pub(super) present: bool,
    /// Listed in `Changes::dirty` in the open time when equal to `Changes::time` (a stamp, not
    /// a flag: draining the list then only reads the records).
    pub(super) listed: u32,
    /// Has an entry in `Storage::extras`.
    pub(super) extra: bool,
    /// While listed: whether it was present before the open time, and its label then.
    pub(super) was_present: bool,
    pub(super) before: Node,
}

const _: () = assert!(std::mem::size_of::<Vertex>() == 64);

/// A vertex's rare counts (a vertex with neither has no entry).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Extra {
    /// Vertex-file multiplicity.
    pub(super) fixed: i64,
    /// Self-loop copies.
    pub(super) loops: u64,
}

impl Vertex {
    #[inline]
    pub(super) fn new(id: Node) -> Self {
        Vertex {
            id,
            label: id,
            adj: Block::default(),
            tree_len: 0,
            other_len: 0,
            stale: 0,
            mark: 0,
            side: 0,
            present: false,
            listed: 0,
            extra: false,
            was_present: false,
            before: 0,
        }
    }

    /// Its non-tree list, newest first (stale entries included).
    #[cfg(debug_assertions)]
    pub(super) fn others(&self) -> &[u32] {
        &self.adj[self.adj.len() - self.other_len as usize..]
    }

    /// The index in `adj` of position `p` of the forest-edge (`tree`) or non-tree list.
    #[inline]
    pub(super) fn slot(&self, tree: bool, p: usize) -> usize {
        if tree {
            p
        } else {
            self.adj.len() - 1 - p
        }
    }

    /// The entry at position `p` of a list, if there is one.
    #[inline]
    pub(super) fn entry(&self, tree: bool, p: usize) -> Option<&u32> {
        let len = if tree { self.tree_len } else { self.other_len } as usize;
        (p < len).then(|| &self.adj[self.slot(tree, p)])
    }

    /// The last entry of a list (the one a swap-remove moves), if any.
    #[inline]
    pub(super) fn last(&self, tree: bool) -> Option<&u32> {
        let len = if tree { self.tree_len } else { self.other_len } as usize;
        len.checked_sub(1).and_then(|p| self.entry(tree, p))
    }

    #[inline]
    pub(super) fn has_links(&self) -> bool {
        self.tree_len != 0 || self.other_len != self.stale
    }

    /// Where the list's next push goes (for a prefetch; may be outside the slice).
    #[inline]
    pub(super) fn tail(&self, tree: bool) -> *const u32 {
        let at = if tree { self.tree_len as usize } else { self.adj.len().wrapping_sub(1 + self.other_len as usize) };
        self.adj.as_ptr().wrapping_add(at)
    }

    /// Removes the entry at position `p` of the forest-edge list; the last entry moves there:
    /// returns it, if it is another one.
    #[inline]
    pub(super) fn swap_remove_tree(&mut self, p: usize) -> Option<u32> {
        let last = self.tree_len as usize - 1;
        self.tree_len -= 1;
        self.adj[p] = self.adj[last];
        (p < last).then(|| self.adj[p])
    }
}

/// A present vertex pair: all its copies, either a forest edge or a non-tree edge.
#[derive(Clone, Copy, Debug)]
pub(super) struct Link {
    pub(super) ends: [u32; 2],
    /// Copies present in the low 31 bits (0: a free slot; [`BIG`]: more, counted in
    /// `Storage::big`), [`TREE`]: a forest edge. A 20-byte record.
    pub(super) bits: u32,
    /// Its positions in `ends[i]`'s forest-edge or non-tree list.
    pub(super) pos: [u32; 2],
}

const _: () = assert!(std::mem::size_of::<Link>() == 20);

impl Link {
    /// Its copy count (see `bits`).
    #[inline]
    pub(super) fn count(&self) -> u32 {
        self.bits & !TREE
    }

    /// Whether it is a forest edge.
    #[inline]
    pub(super) fn tree(&self) -> bool {
        self.bits & TREE != 0
    }

    #[inline]
    pub(super) fn set_count(&mut self, n: u32) {
        self.bits = (self.bits & TREE) | n;
    }

    #[inline]
    pub(super) fn set_tree(&mut self, tree: bool) {
        self.bits = (self.bits & !TREE) | if tree { TREE } else { 0 };
    }
}
