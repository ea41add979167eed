//! The global allocator (feature `mimalloc`, on by default): blocks of at most [`SMALL`] bytes
//! come from mimalloc, larger ones from the system's malloc.
//!
//! Typed outputs render each row as two small strings on the worker that holds the row and free
//! them on the writer (worker 0). glibc's malloc pays for that traffic between threads (its
//! arenas, `malloc_consolidate`): out-degree over R-MAT 14 and 1,000,000 updates as `display`
//! rows took 1.37x the `(vertex, u64)` path's time at `-w 2` with glibc, ~1.05x with mimalloc.
//! mimalloc for everything, though, raised the WCC forest's peak memory by 30–40% (its large
//! arrays grow by reallocation), where glibc hands large blocks straight back to the system. So
//! each gets the blocks it is good at; a block's layout, the same at allocation and release,
//! says whose it is.
//!
//! ```
//! let mut v: Vec<u32> = (0..16).collect(); // small: mimalloc
//! v.extend(16..1 << 18); // grown past SMALL: moved to the system's malloc
//! v.truncate(100);
//! v.shrink_to_fit(); // back below SMALL: moved to mimalloc
//! assert_eq!(v, (0..100).collect::<Vec<u32>>());
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// The largest block (in bytes) mimalloc serves.
pub const SMALL: usize = 1024;

/// The allocator: mimalloc below [`SMALL`] bytes, the system's above.
pub struct Split;

fn small(layout: &Layout) -> bool {
    layout.size() <= SMALL
}

// SAFETY: every call is forwarded to the allocator that the layout's size selects, and a block is
// always released (or resized) by the allocator that the same layout selected when it was made;
// a resize that crosses `SMALL` allocates in the other allocator, copies, and frees the old block.
unsafe impl GlobalAlloc for Split {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if small(&layout) {
            MiMalloc.alloc(layout)
        } else {
            System.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if small(&layout) {
            MiMalloc.alloc_zeroed(layout)
        } else {
            System.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if small(&layout) {
            MiMalloc.dealloc(ptr, layout)
        } else {
            System.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (small(&layout), new_size <= SMALL) {
            (true, true) => MiMalloc.realloc(ptr, layout, new_size),
            (false, false) => System.realloc(ptr, layout, new_size),
            (_, to_small) => {
                let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                let new = if to_small { MiMalloc.alloc(new_layout) } else { System.alloc(new_layout) };
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new
            }
        }
    }
}
