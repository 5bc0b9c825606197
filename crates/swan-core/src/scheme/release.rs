//! When a log array under deferred release ([`super::LogConfig::defer_release`]) gives its
//! GC victims back.
//!
//! A victim freed by GC may be overwritten only once the map that no longer points into it
//! is durable, so a driver releases victims at a sync point. Each sync point syncs every
//! member, so victims are released together: once enough have gathered, or once the oldest
//! has waited long enough that its space is missed. The server and the simulator both ask
//! [`release_due`], so they free space at the same points.

/// Victims released together by one sync point, at least...
pub const RELEASE_BATCH: usize = 8;
/// ...or after the oldest has waited this long (nanoseconds).
pub const RELEASE_AFTER_NS: u64 = 500_000_000;

/// Whether `pending` victims of an array of `rgroups` R-groups, the oldest of which has
/// waited `waited_ns`, are due for release: a batch of [`RELEASE_BATCH`] or two per R-group
/// (so every R-group's GC can hand one back while the next runs), or the oldest waited
/// [`RELEASE_AFTER_NS`]. Writes that run out of space release sooner:
/// [`release_for_waiting_write`].
pub fn release_due(pending: usize, rgroups: u32, waited_ns: u64) -> bool {
    pending > 0 && (pending >= RELEASE_BATCH.max(2 * rgroups as usize) || waited_ns >= RELEASE_AFTER_NS)
}

/// Whether a driver whose writes wait for space releases its `pending` victims now: once a
/// batch of [`RELEASE_BATCH`] has gathered, or at once when no GC job is still running
/// (`gc_running`) that could add to the batch.
pub fn release_for_waiting_write(pending: usize, gc_running: bool) -> bool {
    pending > 0 && (pending >= RELEASE_BATCH || !gc_running)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_or_a_long_wait_makes_a_release_due() {
        assert!(!release_due(0, 4, u64::MAX), "nothing to release");
        assert!(!release_due(7, 4, 0));
        assert!(release_due(8, 4, 0));
        // Two per R-group when that is more than the batch.
        assert!(!release_due(8, 6, 0));
        assert!(release_due(12, 6, 0));
        assert!(!release_due(1, 4, RELEASE_AFTER_NS - 1));
        assert!(release_due(1, 4, RELEASE_AFTER_NS));
    }

    #[test]
    fn a_waiting_write_releases_a_batch_or_when_no_more_are_coming() {
        assert!(!release_for_waiting_write(0, false), "nothing to release");
        assert!(!release_for_waiting_write(RELEASE_BATCH - 1, true), "a running job adds to the batch");
        assert!(release_for_waiting_write(RELEASE_BATCH, true));
        assert!(release_for_waiting_write(1, false));
    }
}
