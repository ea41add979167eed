//! The pair table: vertex pairs to link ids, open addressing over 8-byte slots. Every update
//! looks its pair up here first, so the table is built for that: a slot is found from a hash of
//! the two *ids* (not the vertex indices), so the prefetch pipeline can fetch it before the ids'
//! indices are known, and a match is confirmed against the link the update touches anyway.

use super::records::Link;
use crate::dataflow::id_index::advise_huge_pages;
use crate::types::Node;

/// Slots ahead of a pair's first that [`PairTable::slot_ahead`] names (one cache line).
const PROBE_AHEAD: usize = 8;

/// Vertex pairs to link ids: open addressing with linear probing over a power-of-two table of
/// 8-byte slots `tag << 32 | link` (0: empty), where the tag is the top 32 bits of the pair's
/// hash (never 0). The slot a pair starts from is its tag's top bits, so the table grows and
/// removes (backward shift, no tombstones) without looking at the links; a lookup confirms a
/// tag match against the link's ends (the link the update touches anyway). Between 3/8 and 3/4
/// full: 11 to 21 bytes per link, where a hash map of `(u64, u32)` entries (17 bytes a bucket,
/// between 7/16 and 7/8 full) would take 19 to 39.
#[derive(Default)]
pub(super) struct PairTable {
    pub(super) slots: Vec<u64>,
    len: usize,
}

impl PairTable {
    /// The tag of the vertex pair with ids `a`, `b` (either way round): the top 32 bits of a
    /// hash of the ids, never 0. Hashing the ids rather than the vertex indices lets a pair's
    /// slot be looked up before its vertices' indices are known.
    #[inline]
    pub(super) fn tag(a: Node, b: Node) -> u32 {
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        let h = lo.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ hi;
        let h = (h ^ (h >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let h = (h ^ (h >> 29)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((h >> 32) as u32).max(1)
    }

    /// The slot a tag starts from.
    #[inline]
    fn home(&self, tag: u32) -> usize {
        // The table has 2^k slots (k <= 32): the tag's top k bits.
        ((tag as u64 * self.slots.len() as u64) >> 32) as usize
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The link of the pair of vertex indices `key` ([`pair_key`]), whose tag is
    /// `tag`; `links` confirms it.
    #[inline]
    pub(super) fn get(&self, tag: u32, key: u64, links: &[Link]) -> Option<u32> {
        self.probe(tag, |l| link_key(&links[l as usize]) == key)
    }

    /// The first link from `tag`'s home slot on whose tag is `tag` and that `confirm` accepts.
    #[inline]
    fn probe(&self, tag: u32, confirm: impl Fn(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(tag);
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if (s >> 32) as u32 == tag && confirm(s as u32) {
                return Some(s as u32);
            }
            i = (i + 1) & mask;
        }
    }

    /// The address of the slot `tag` starts from, for a prefetch.
    #[inline]
    pub(super) fn slot(&self, tag: u32) -> Option<&u64> {
        self.slots.get(self.home(tag))
    }

    /// The address of the slot [`PROBE_AHEAD`] after the one `tag` starts from: a lookup, an
    /// insertion or a removal (whose backward shift reads the run to its end) often reaches the
    /// next cache line.
    #[inline]
    pub(super) fn slot_ahead(&self, tag: u32) -> Option<&u64> {
        self.slots.get((self.home(tag) + PROBE_AHEAD) & self.slots.len().wrapping_sub(1))
    }

    /// The first link whose tag is `tag` (most likely its pair's link), unconfirmed: for a
    /// prefetch of that link before [`PairTable::get`] confirms it.
    #[inline]
    pub(super) fn candidate(&self, tag: u32) -> Option<u32> {
        self.probe(tag, |_| true)
    }

    /// Records that the pair with tag `tag` (absent) has link `l`.
    #[inline]
    pub(super) fn insert(&mut self, tag: u32, l: u32) {
        self.reserve(1);
        self.len += 1;
        self.place(((tag as u64) << 32) | l as u64);
    }

    /// Puts an entry in the first free slot from its start.
    #[inline]
    fn place(&mut self, entry: u64) {
        let mask = self.slots.len() - 1;
        let mut i = self.home((entry >> 32) as u32);
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = entry;
    }

    /// Room for `more` entries without growing.
    #[inline]
    pub(super) fn reserve(&mut self, more: usize) {
        let want = self.len + more;
        if want * 4 <= self.slots.len() * 3 {
            return;
        }
        let size = (want * 4).div_ceil(3).next_power_of_two().max(16);
        assert!(size <= 1 << 32, "dynamic WCC: too many links");
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        advise_huge_pages(&self.slots);
        for s in old {
            if s != 0 {
                self.place(s);
            }
        }
    }

    /// Removes the pair with tag `tag` (present, with link `l`).
    #[inline]
    pub(super) fn remove(&mut self, tag: u32, l: u32) {
        let mask = self.slots.len() - 1;
        let entry = ((tag as u64) << 32) | l as u64;
        let mut i = self.home(tag);
        while self.slots[i] != entry {
            debug_assert!(self.slots[i] != 0, "dynamic WCC: removal of an absent pair");
            i = (i + 1) & mask;
        }
        // Backward shift: later entries of the run move up where they may.
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let s = self.slots[j];
            if s == 0 {
                break;
            }
            let home = self.home((s >> 32) as u32);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(i) & mask) {
                self.slots[i] = s;
                i = j;
            }
        }
        self.slots[i] = 0;
        self.len -= 1;
    }

    /// Heap bytes.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.slots.capacity() * 8
    }
}

/// The key of the pair of vertex indices `a`, `b` (either way round): lower index, higher index.
#[inline]
pub(super) fn pair_key(a: u32, b: u32) -> u64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    ((lo as u64) << 32) | hi as u64
}

/// The pair key of a link's ends.
#[inline]
fn link_key(link: &Link) -> u64 {
    pair_key(link.ends[0], link.ends[1])
}
