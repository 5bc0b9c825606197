//! The settings swan makes in the allocator under it: glibc's mmap threshold, and huge pages
//! for the simulator's maps.
//!
//! glibc's malloc serves a request of at least its mmap threshold (128 KiB at start) with
//! its own `mmap`, and gives it back on free; but the first time such a block is freed, it
//! raises the threshold to that block's size (up to 32 MiB). From then on the server's
//! 1 MiB request payloads and gathered runs come from the heaps of its threads' arenas, and
//! after a burst of large writes those heaps keep what the burst needed: about 20 MB on a
//! 64 GiB array written once (6.0 bytes per volume block instead of 4.7; docs/server.md,
//! "Memory", has the procedure). A threshold set explicitly stays where it is set.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Blocks of this size or more are mapped and unmapped on their own. Above 128 KiB, so a
/// stream of 128 KiB writes is served from the heap without a `mmap` per request.
const MMAP_THRESHOLD: i32 = 256 << 10;

/// Fix glibc's mmap threshold (nothing elsewhere). Call once, before the server starts
/// threads.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a parameter of the allocator and may be called at any
    // time; it touches no memory of ours. A 0 return (not accepted) leaves glibc's default.
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

/// Simulator maps at least this large are placed on 2 MiB boundaries and advised to the
/// kernel as transparent huge pages.
const HUGE: usize = 2 << 20;

static HUGE_PAGES: AtomicBool = AtomicBool::new(false);

/// From now on, advise large allocations as transparent huge pages. The simulator's hot
/// path is a random walk over maps of hundreds of MiB; with 4 KiB pages nearly every step
/// misses the TLB as well as the caches, and the page walk, not the computation, is what
/// it waits for. The kernel here grants huge pages only where advised (`madvise` mode).
/// The block server leaves this off: direct compaction on a fault would stall a request.
pub fn huge_pages() {
    HUGE_PAGES.store(true, Ordering::Relaxed);
}

/// The system allocator, except that while [`huge_pages`] is on, a block of [`HUGE`] bytes
/// or more is aligned to [`HUGE`] and advised `MADV_HUGEPAGE`. Whether a block took that
/// path is recorded by its alignment alone, so `dealloc` and `realloc` find it again.
pub struct Allocator;

fn huge_layout(layout: Layout) -> Option<Layout> {
    (layout.size() >= HUGE && layout.align() < HUGE && HUGE_PAGES.load(Ordering::Relaxed))
        .then(|| Layout::from_size_align(layout.size(), HUGE).ok())
        .flatten()
}

/// Layout a block of `layout` was really allocated with.
fn real_layout(layout: Layout, ptr: *mut u8) -> Layout {
    // A block allocated on the huge path is HUGE-aligned; one allocated before the switch
    // was turned on may be too, by chance, and is then freed with a larger alignment than
    // it was given: glibc's free ignores the alignment, so that is harmless there.
    if layout.size() >= HUGE && layout.align() < HUGE && (ptr as usize).is_multiple_of(HUGE) {
        Layout::from_size_align(layout.size(), HUGE).unwrap_or(layout)
    } else {
        layout
    }
}

#[allow(unsafe_code)]
fn advise(ptr: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: the range lies inside a block just allocated to us; MADV_HUGEPAGE changes
    // how the kernel backs it, not its contents. A refusal leaves 4 KiB pages.
    unsafe {
        libc::madvise(ptr.cast(), size & !(HUGE - 1), libc::MADV_HUGEPAGE);
    }
}

/// `allocate(layout)`, or on the huge path `allocate` at [`HUGE`] alignment, then advised.
fn advised(layout: Layout, allocate: impl FnOnce(Layout) -> *mut u8) -> *mut u8 {
    let Some(h) = huge_layout(layout) else {
        return allocate(layout);
    };
    let p = allocate(h);
    if !p.is_null() {
        advise(p, h.size());
    }
    p
}

// SAFETY: every call is forwarded to `System` with a layout `System` accepts (the original,
// or the same size at a larger power-of-two alignment), and each block is freed with the
// layout it was allocated with (`real_layout`).
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        advised(layout, |l| unsafe { System.alloc(l) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        advised(layout, |l| unsafe { System.alloc_zeroed(l) })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, real_layout(layout, ptr)) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = real_layout(layout, ptr);
        let Ok(new) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        if old.align() == layout.align() && huge_layout(new).is_none() {
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // Into or out of the huge path: a fresh block, the contents copied over.
        let p = unsafe { self.alloc(new) };
        if !p.is_null() {
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        p
    }
}
