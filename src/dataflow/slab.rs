//! Blocks of `u32`s carved out of large chunks advised for transparent huge pages: the fully
//! dynamic forest's adjacency lists ([`super::wcc_dynamic`]).
//!
//! **Why.** Every update of the forest reads or writes one or two vertices' adjacency lists at
//! random, and so does every step of a replacement search. Taken from the C allocator, those
//! blocks would lie on 4 KiB pages (only its large allocations can be advised), so nearly every
//! such access would also miss the TLB, and on a virtual machine a page walk goes through two
//! levels of page tables. Carved out of 64 MiB chunks advised for huge pages, a list's page is usually
//! mapped by a TLB entry the other accesses share.
//!
//! **How.** A block holds `2^k` entries (`k >= 2`: 16 bytes at least, no header). A block of at
//! most [`RUN`] bytes is cut from its class's open *run*, `RUN` bytes taken from the current
//! chunk; a larger one up to [`CHUNK`]` / 4` bytes is a run of its own; a larger one still (a
//! vertex with millions of links) is an allocation of its own, given back when released. A
//! released block of a chunk goes to its class's free list (its first 8 bytes link the list),
//! which the next block of the class reuses; chunks are given back when the slab is dropped.
//! Chunk memory is untouched until a block is used (a zeroed allocation the system maps lazily),
//! so the slab costs what its blocks and open runs hold, rounded up to huge pages.
//!
//! A [`Block`] is only ever held next to the slab that made it (the forest holds both) and never
//! used after it: its entries are memory of the slab. Giving a block back ([`Slab::release`],
//! [`Slab::regrow`]) is `unsafe`: the block must be one of that slab's, which a block does not
//! record (it is a pointer and a length, 16 bytes inside a vertex's 64-byte record).
//!
//! ```text
//! let mut slab = Slab::default();
//! let mut b = slab.alloc(5);          // 8 entries
//! b.as_mut_slice()[7] = 1;
//! unsafe { slab.release(b) };         // the next 8-entry block reuses it
//! ```

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

use rustc_hash::FxHashMap;

use super::id_index::advise_huge_range;

/// Bytes of one chunk (advised for huge pages as a whole).
pub(crate) const CHUNK: usize = 64 << 20;
/// Bytes of a run: the blocks of one class up to this size are cut from one run at a time.
pub(crate) const RUN: usize = 64 << 10;
/// Size classes: `2^k` entries for `k < CLASSES`.
const CLASSES: usize = 64;
/// The smallest class: 4 entries.
const MIN_CLASS: usize = 2;
/// Blocks and runs start at a cache line.
const LINE: usize = 64;

/// `len` entries of `u32` in a slab (see the module docs); empty blocks hold no memory.
#[derive(Debug)]
pub(crate) struct Block {
    ptr: NonNull<u32>,
    len: u32,
}

// SAFETY: a block is the only handle to its entries (it is neither `Clone` nor `Copy`), like a
// `Box<[u32]>`; the slab it came from moves along with it (the forest holds both).
unsafe impl Send for Block {}
// SAFETY: shared references to a block only read its entries.
unsafe impl Sync for Block {}

impl Default for Block {
    fn default() -> Self {
        Block { ptr: NonNull::dangling(), len: 0 }
    }
}

impl Block {
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub(crate) fn as_ptr(&self) -> *const u32 {
        self.ptr.as_ptr()
    }

    #[inline]
    pub(crate) fn as_slice(&self) -> &[u32] {
        // SAFETY: `ptr` is either dangling with `len == 0` or `len` initialised entries (chunk
        // memory is zeroed when allocated) of a live slab that only this block refers to.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len as usize) }
    }

    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u32] {
        // SAFETY: as in `as_slice`, and `&mut self` is the only access to the entries.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len as usize) }
    }
}

impl std::ops::Deref for Block {
    type Target = [u32];
    #[inline]
    fn deref(&self) -> &[u32] {
        self.as_slice()
    }
}

impl std::ops::DerefMut for Block {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u32] {
        self.as_mut_slice()
    }
}

/// The allocator of [`Block`]s (see the module docs).
#[derive(Debug)]
pub(crate) struct Slab {
    /// Chunks, as allocated.
    chunks: Vec<NonNull<u8>>,
    /// The current chunk's unused part, `[bump, end)`.
    bump: *mut u8,
    end: *mut u8,
    /// Per class: its open run's unused part, `[start, end)`, and its free list's first block.
    runs: [(*mut u8, *mut u8); CLASSES],
    free: [*mut u8; CLASSES],
    /// Blocks of their own (larger than a quarter chunk): address -> layout.
    large: FxHashMap<usize, Layout>,
    /// Bytes handed out from chunks (runs, whole) and held by blocks of their own.
    bytes: usize,
}

// SAFETY: the slab owns its chunks and large blocks exclusively; the raw pointers only point
// into them.
unsafe impl Send for Slab {}
// SAFETY: `&Slab` only reads the bookkeeping.
unsafe impl Sync for Slab {}

impl Default for Slab {
    fn default() -> Self {
        Slab {
            chunks: Vec::new(),
            bump: std::ptr::null_mut(),
            end: std::ptr::null_mut(),
            runs: [(std::ptr::null_mut(), std::ptr::null_mut()); CLASSES],
            free: [std::ptr::null_mut(); CLASSES],
            large: FxHashMap::default(),
            bytes: 0,
        }
    }
}

fn chunk_layout() -> Layout {
    // 16-byte alignment: the allocator's own, so a zeroed allocation of this size is a fresh
    // mapping the system fills lazily (no memset touching it all).
    Layout::from_size_align(CHUNK, 16).expect("a valid layout")
}

impl Slab {
    /// The class of a block of at least `len` entries (at least 4).
    fn class(len: usize) -> usize {
        len.max(1 << MIN_CLASS).next_power_of_two().trailing_zeros() as usize
    }

    /// A block of at least `len` entries (`len` rounded up to a power of two, at least 4;
    /// `len == 0` gives an empty block). Its entries are initialised but unspecified: zero in a
    /// fresh block, whatever was left in a reused one.
    pub(crate) fn alloc(&mut self, len: usize) -> Block {
        if len == 0 {
            return Block::default();
        }
        let k = Self::class(len);
        assert!(k < 32, "an adjacency list of 2^{k} entries");
        let bytes = 4usize << k;
        let ptr = if bytes > CHUNK / 4 {
            let layout = Layout::from_size_align(bytes, 16).expect("a valid layout");
            // SAFETY: the layout has a non-zero size.
            let p = unsafe { alloc_zeroed(layout) };
            let Some(p) = NonNull::new(p) else { std::alloc::handle_alloc_error(layout) };
            advise_huge_range(p.as_ptr(), bytes);
            self.large.insert(p.as_ptr() as usize, layout);
            self.bytes += bytes;
            p.as_ptr()
        } else if !self.free[k].is_null() {
            let p = self.free[k];
            // SAFETY: a free block of class `k` (at least 16 bytes, 16-byte aligned) holds the
            // next free block's address in its first 8 bytes.
            unsafe {
                self.free[k] = p.cast::<*mut u8>().read();
            }
            p
        } else {
            let (start, end) = self.runs[k];
            if !start.is_null() && (end as usize) - (start as usize) >= bytes {
                // SAFETY: within the run, which lies within a chunk.
                self.runs[k].0 = unsafe { start.add(bytes) };
                start
            } else {
                let run = self.take(bytes.max(RUN));
                // SAFETY: the run has at least `bytes.max(RUN)` bytes.
                self.runs[k] = unsafe { (run.add(bytes), run.add(bytes.max(RUN))) };
                run
            }
        };
        Block {
            // SAFETY: never null (checked above, or an address within a chunk).
            ptr: unsafe { NonNull::new_unchecked(ptr.cast::<u32>()) },
            len: 1 << k,
        }
    }

    /// `bytes` (a multiple of [`LINE`], at most a quarter chunk) from the current chunk, or a new one.
    fn take(&mut self, bytes: usize) -> *mut u8 {
        if self.bump.is_null() || (self.end as usize) - (self.bump as usize) < bytes {
            let layout = chunk_layout();
            // SAFETY: the layout has a non-zero size.
            let p = unsafe { alloc_zeroed(layout) };
            let Some(p) = NonNull::new(p) else { std::alloc::handle_alloc_error(layout) };
            advise_huge_range(p.as_ptr(), CHUNK);
            self.chunks.push(p);
            let skip = p.as_ptr().align_offset(LINE);
            // SAFETY: `skip < LINE` and the chunk has `CHUNK` bytes.
            unsafe {
                self.bump = p.as_ptr().add(skip);
                self.end = p.as_ptr().add(CHUNK);
            }
        }
        let p = self.bump;
        // SAFETY: checked above that the chunk has `bytes` more.
        self.bump = unsafe { p.add(bytes) };
        self.bytes += bytes;
        p
    }

    /// Gives `block` back (its entries may be handed out again).
    ///
    /// # Safety
    ///
    /// `block` must have been handed out by this slab ([`Slab::alloc`] or [`Slab::regrow`] of
    /// `self`), and not released since (a block is neither `Clone` nor `Copy`, so holding it
    /// means it was not). A block of another slab would be linked into this slab's free lists
    /// (or, if large, deallocated by it) while the other slab still owns its memory.
    pub(crate) unsafe fn release(&mut self, block: Block) {
        if block.len == 0 {
            return;
        }
        let k = (block.len as usize).trailing_zeros() as usize;
        let p = block.ptr.as_ptr().cast::<u8>();
        if let Some(layout) = self.large.remove(&(p as usize)) {
            self.bytes -= layout.size();
            // SAFETY: allocated in `alloc` with this layout, and no block refers to it any more.
            unsafe { dealloc(p, layout) };
            return;
        }
        // SAFETY: the block is one of this slab's chunk blocks (the caller's contract; not in
        // `large`), at least 16 bytes and 16-byte aligned, and no one's now.
        unsafe { p.cast::<*mut u8>().write(self.free[k]) };
        self.free[k] = p;
    }

    /// A block of at least `len` entries holding `block`'s first `front` and last `back`
    /// entries at its front and back (the rest unspecified); `block` is released.
    ///
    /// # Safety
    ///
    /// As for [`Slab::release`]: `block` must have been handed out by this slab.
    pub(crate) unsafe fn regrow(&mut self, block: Block, len: usize, front: usize, back: usize) -> Block {
        let mut grown = self.alloc(len);
        let (old, new) = (block.as_slice(), grown.as_mut_slice());
        let (n, m) = (old.len(), new.len());
        new[..front].copy_from_slice(&old[..front]);
        new[m - back..].copy_from_slice(&old[n - back..]);
        // SAFETY: the caller guarantees that `block` is one of this slab's.
        unsafe { self.release(block) };
        grown
    }

    /// Bytes taken from the system: the runs and large blocks handed out (a run's unused part
    /// and free blocks included; the chunks' untouched rest not).
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Slab {
    fn drop(&mut self) {
        for &p in &self.chunks {
            // SAFETY: allocated in `take` with this layout; the blocks cut from it are no longer
            // used (they are held next to the slab and dropped with it).
            unsafe { dealloc(p.as_ptr(), chunk_layout()) };
        }
        for (&p, &layout) in &self.large {
            // SAFETY: allocated in `alloc` with this layout and not released.
            unsafe { dealloc(p as *mut u8, layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Random allocations, writes, regrowths and releases: every live block keeps exactly what
    /// was written to it (an oracle of plain vectors), and no two live blocks overlap.
    #[test]
    fn blocks_keep_their_entries_and_never_overlap() {
        for seed in 0..4u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut slab = Slab::default();
            let mut live: Vec<(Block, Vec<u32>)> = Vec::new();
            for step in 0..20_000u32 {
                match rng.gen_range(0..10) {
                    0..=3 => {
                        // Mostly small, a few of their own (over a quarter chunk).
                        let len = match rng.gen_range(0..2_000) {
                            0 => CHUNK / 4 / 4 + rng.gen_range(1..1000),
                            1..=100 => rng.gen_range(1..20_000),
                            _ => rng.gen_range(1..40),
                        };
                        let mut b = slab.alloc(len);
                        assert!(b.len() >= len && b.len().is_power_of_two(), "seed {seed}");
                        let v: Vec<u32> = (0..b.len() as u32).map(|i| step ^ i).collect();
                        b.copy_from_slice(&v);
                        live.push((b, v));
                    }
                    4..=5 if !live.is_empty() => {
                        let (b, _) = live.swap_remove(rng.gen_range(0..live.len()));
                        // SAFETY: every block of `live` came from `slab`.
                        unsafe { slab.release(b) };
                    }
                    6 if !live.is_empty() && live.last().is_some_and(|(b, _)| b.len() <= 1 << 16) => {
                        let (b, v) = live.pop().expect("not empty");
                        let n = v.len();
                        let (front, back) = (rng.gen_range(0..=n / 2), rng.gen_range(0..=n / 2));
                        // SAFETY: every block of `live` came from `slab`.
                        let g = unsafe { slab.regrow(b, 2 * n, front, back) };
                        let m = g.len();
                        assert!(m >= 2 * n, "seed {seed} step {step}");
                        assert_eq!(&g[..front], &v[..front], "seed {seed} step {step}: regrow keeps the front");
                        assert_eq!(&g[m - back..], &v[n - back..], "seed {seed} step {step}: regrow keeps the back");
                        // The middle is unspecified: the oracle takes it as it is.
                        let w = g.to_vec();
                        live.push((g, w));
                    }
                    _ if !live.is_empty() => {
                        let i = rng.gen_range(0..live.len());
                        let j = rng.gen_range(0..live[i].1.len());
                        let x = rng.gen();
                        live[i].0[j] = x;
                        live[i].1[j] = x;
                    }
                    _ => {}
                }
            }
            for (b, v) in &live {
                assert_eq!(&b[..], &v[..], "seed {seed}: a live block kept its entries");
            }
            let mut spans: Vec<(usize, usize)> =
                live.iter().map(|(b, _)| (b.as_ptr() as usize, b.as_ptr() as usize + 4 * b.len())).collect();
            spans.sort();
            for w in spans.windows(2) {
                assert!(w[0].1 <= w[1].0, "seed {seed}: live blocks overlap");
            }
            let held: usize = live.iter().map(|(b, _)| 4 * b.len()).sum();
            assert!(slab.bytes() >= held, "seed {seed}: bytes counts what the blocks hold");
        }
    }

    #[test]
    fn a_released_block_is_reused_by_its_class() {
        let mut slab = Slab::default();
        let a = slab.alloc(5);
        let at = a.as_ptr();
        assert_eq!(a.len(), 8);
        // SAFETY: `a` came from `slab`.
        unsafe { slab.release(a) };
        let b = slab.alloc(8);
        assert_eq!(b.as_ptr(), at);
        let c = slab.alloc(3);
        assert_eq!(c.len(), 4);
        assert_ne!(c.as_ptr(), at);
    }
}
