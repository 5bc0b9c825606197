//! The one setting swan makes in the C allocator under it.
//!
//! glibc's malloc serves a request of at least its mmap threshold (128 KiB at start) with
//! its own `mmap`, and gives it back on free; but the first time such a block is freed, it
//! raises the threshold to that block's size (up to 32 MiB). From then on the server's
//! 1 MiB request payloads and gathered runs come from the heaps of its threads' arenas, and
//! after a burst of large writes those heaps keep what the burst needed: about 20 MB on a
//! 64 GiB array written once (`scripts/mem-nbd.sh`: 6.0 bytes per volume block instead of
//! 4.7). A threshold set explicitly stays where it is set.

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
