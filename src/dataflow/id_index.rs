//! Vertex ids to dense vertex indices, cache prefetch hints and huge-page advice: shared by the
//! fully dynamic WCC forest ([`super::wcc_dynamic`]) and the insert-only WCC path's union-find
//! structures ([`super::union_find`]).
//!
//! [`IdIndex`] is a dense table (`Vec<u32>` by id) while the ids are small (below
//! `DENSE_FACTOR` times the vertices plus `DENSE_SLACK`) and a hash map for the others, so that
//! the common case — ids that are roughly `0..n` — costs one array slot per lookup, which can be
//! prefetched, while huge ids (up to `u64::MAX`) still work.

use rustc_hash::FxHashMap;

use crate::types::Node;

/// The dense table's value for an id without a vertex.
const NONE: u32 = u32::MAX;

/// Vertex ids to vertex indices: a dense table while the ids are small (an id below
/// `dense.len()` is looked up there, `NONE` for absent), a hash map for the others. The table
/// grows (at least doubling, migrating the hash map's ids it now covers) while it stays below
/// `DENSE_FACTOR` times the vertices plus `DENSE_SLACK`, so it costs at most ~4 bytes × that.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdIndex {
    pub(crate) dense: Vec<u32>,
    pub(crate) sparse: FxHashMap<Node, u32>,
}

pub(crate) const DENSE_FACTOR: usize = 4;
pub(crate) const DENSE_SLACK: usize = 1 << 12;

impl IdIndex {
    #[inline]
    pub(crate) fn get(&self, id: Node) -> Option<u32> {
        if id < self.dense.len() as u64 {
            let v = self.dense[id as usize];
            (v != NONE).then_some(v)
        } else {
            self.sparse.get(&id).copied()
        }
    }

    /// Records `id -> v`; `vertices` is the number of vertices with it.
    pub(crate) fn insert(&mut self, id: Node, v: u32, vertices: usize) {
        if id < self.dense.len() as u64 {
            self.dense[id as usize] = v;
            return;
        }
        let limit = vertices.saturating_mul(DENSE_FACTOR).saturating_add(DENSE_SLACK) as u64;
        if id >= limit {
            self.sparse.insert(id, v);
            return;
        }
        let len = (id + 1).max(2 * self.dense.len() as u64).min(limit) as usize;
        self.grow(len);
        self.dense[id as usize] = v;
    }

    /// Like [`IdIndex::insert`], but the dense table only grows when it can at least double
    /// within the limit (until then an id beyond it goes to the hash map), so the hash map's ids
    /// are migrated O(log n) times in all, not once per few new vertices while the limit creeps
    /// up behind a stream of new large-ish ids.
    pub(crate) fn insert_doubling(&mut self, id: Node, v: u32, vertices: usize) {
        if id < self.dense.len() as u64 {
            self.dense[id as usize] = v;
            return;
        }
        let limit = vertices.saturating_mul(DENSE_FACTOR).saturating_add(DENSE_SLACK) as u64;
        // `id < limit` first: `id + 1` must not overflow.
        if id >= limit || (2 * self.dense.len() as u64).max(id + 1) > limit {
            self.sparse.insert(id, v);
            return;
        }
        let len = (2 * self.dense.len()).max(id as usize + 1);
        self.grow(len);
        self.dense[id as usize] = v;
    }

    /// Grows the dense table to `len` slots and moves the hash map's ids below `len` into it.
    fn grow(&mut self, len: usize) {
        self.dense.reserve_exact(len - self.dense.len());
        advise_huge_pages(&self.dense);
        self.dense.resize(len, NONE);
        let dense = &mut self.dense;
        self.sparse.retain(|&k, &mut x| {
            if k < len as u64 {
                dense[k as usize] = x;
                false
            } else {
                true
            }
        });
    }

    /// The address of `id`'s dense slot, for a prefetch (`None` if it is in the hash map).
    #[inline]
    pub(crate) fn slot(&self, id: Node) -> Option<&u32> {
        usize::try_from(id).ok().and_then(|i| self.dense.get(i))
    }

    /// Prefetches `id`'s slot in the dense table (nothing for an id of the hash map).
    #[inline]
    pub(crate) fn prefetch(&self, id: Node) {
        if let Some(slot) = self.slot(id) {
            prefetch(slot);
        }
    }

    /// Approximate bytes of heap memory held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.dense.capacity() * 4 + self.sparse.capacity() * (8 + 4 + 1)
    }
}

/// Asks the kernel to back the 2 MiB-aligned part of `v`'s allocation (its whole capacity)
/// with transparent huge pages, when it is at least 4 MiB (Linux; a hint: nothing happens where
/// the system does not allow it, and nothing elsewhere). Call it right after the allocation
/// grows, before its new part is first touched: a page fault in the advised range then maps a
/// huge page at once.
///
/// Why: the tables the fully dynamic forest reads at random (vertex records, links, pair slots)
/// are hundreds of MiB, so with 4 KiB pages nearly every access also misses the TLB, and on a
/// virtual machine a page walk goes through two levels of page tables; the processor has few
/// walkers, so the walks, not the cache misses, bound how many accesses overlap.
pub(crate) fn advise_huge_pages<T>(v: &Vec<T>) {
    advise(v.as_ptr(), v.capacity() * std::mem::size_of::<T>(), 14);
}

/// [`advise_huge_pages`] for `bytes` from `start` (memory the caller allocated).
pub(crate) fn advise_huge_range<T>(start: *const T, bytes: usize) {
    advise(start, bytes, 14);
}

/// Pushes `x` onto `v`; when that grows the allocation, the grown allocation is advised for huge
/// pages first ([`advise_huge_pages`]), before its new part is touched.
pub(crate) fn push_advised<T>(v: &mut Vec<T>, x: T) {
    if v.len() == v.capacity() {
        v.reserve(1);
        advise_huge_pages(v);
    }
    v.push(x);
}

/// Collapses the 2 MiB-aligned part of `v`'s elements (not its spare capacity, which would be
/// made resident) into transparent huge pages now (`MADV_COLLAPSE`, Linux 6.1 and later,
/// whatever the system's THP setting; a copy of the range): after a large time, whose growth
/// moved earlier huge pages (a reallocation remaps them, which splits them).
pub(crate) fn collapse_huge_pages<T>(v: &[T]) {
    advise(v.as_ptr(), std::mem::size_of_val(v), 25);
}

/// `madvise(advice)` over the 2 MiB-aligned part of the `bytes` from `start`, if at least 4 MiB.
fn advise<T>(start: *const T, bytes: usize, advice: i32) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: std::ffi::c_int) -> std::ffi::c_int;
        }
        let start = start as usize;
        let end = start + bytes;
        let (from, to) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if end - start >= 2 * HUGE && to > from {
            // SAFETY: the range lies within one live allocation, which stays mapped; the advice only
            // changes how the kernel backs it (never its contents), and a failure (say, no
            // transparent huge pages on this system) leaves it as it was.
            unsafe {
                madvise(from as *mut std::ffi::c_void, to - from, advice);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes, advice);
}

/// Asks the processor to bring the cache line at `p` closer: a hint, never a read the program
/// observes (no effect on other architectures).
#[inline(always)]
pub(crate) fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no effect the program can observe, whatever the
    // address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch_ptr`] of `x`'s first byte.
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    prefetch_ptr(x as *const T);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;

    #[test]
    fn id_index_agrees_with_a_map_for_small_and_huge_ids() {
        for seed in 0..10u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut index = IdIndex::default();
            let mut oracle: BTreeMap<Node, u32> = BTreeMap::new();
            for _ in 0..3_000 {
                let id = match rng.gen_range(0..4) {
                    0 => u64::MAX - rng.gen_range(0..3u64),
                    1 => (1u64 << 33) + rng.gen_range(0..50u64),
                    _ => rng.gen_range(0..20_000u64),
                };
                if !oracle.contains_key(&id) {
                    let v = oracle.len() as u32;
                    if seed % 2 == 0 {
                        index.insert(id, v, oracle.len() + 1);
                    } else {
                        index.insert_doubling(id, v, oracle.len() + 1);
                    }
                    oracle.insert(id, v);
                }
                let probe = rng.gen_range(0..20_000u64);
                assert_eq!(index.get(probe), oracle.get(&probe).copied(), "seed {seed}: id {probe}");
            }
            for (&id, &v) in &oracle {
                assert_eq!(index.get(id), Some(v), "seed {seed}: id {id}");
            }
            assert!(!index.dense.is_empty(), "seed {seed}: the dense table was used");
            assert!(!index.sparse.is_empty(), "seed {seed}: the hash map was used");
            assert!(index.dense.len() <= oracle.len() * DENSE_FACTOR + DENSE_SLACK);
        }
    }
}
