//! A hint to the CPU that a value will be read soon, so that a driver that knows its next
//! requests can overlap their map lookups with the work before them: the simulator's hot
//! path is a random walk over maps far larger than the caches, and waits for memory more
//! than it computes.
//!
//! The only `unsafe` in core: `_mm_prefetch` neither reads the value nor faults, and the
//! address comes from a reference, so it names memory this process owns.
#![allow(unsafe_code)]

/// Ask for the cache line holding `value` to be brought in; a no-op off x86-64.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it dereferences nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
