//! When a log array under deferred release ([`crate::scheme::LogConfig::defer_release`])
//! gives its GC victims back, and what a write the array has no room for waits for.
//!
//! A victim freed by GC may be overwritten only once the map that no longer points into it
//! is durable, so a driver releases victims at a sync point. Each sync point syncs every
//! member, so victims are released together: once enough have gathered, or once the oldest
//! has waited long enough that its space is missed. The server and the simulator both keep
//! a [`ReleaseClock`] and ask [`ForSpace::for_waiting_write`], so they free space at the
//! same points.

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

/// Since when the oldest victim awaiting release has waited: one per array, in the
/// driver's time (nanoseconds from any fixed origin).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReleaseClock {
    since: Option<u64>,
}

impl ReleaseClock {
    /// `pending` victims await release at `now` (a GC job just finished, or a driver looks
    /// again). Starts the wait if none was running, and then returns when the oldest becomes
    /// due by waiting alone, for a driver with timers to look again; with nothing pending the
    /// wait ends.
    pub fn waiting(&mut self, pending: usize, now: u64) -> Option<u64> {
        if pending == 0 {
            self.since = None;
            return None;
        }
        match self.since {
            Some(_) => None,
            None => {
                self.since = Some(now);
                Some(now + RELEASE_AFTER_NS)
            }
        }
    }

    /// Whether the `pending` victims of an array of `rgroups` R-groups are due for release
    /// at `now` ([`release_due`]), writes short of space aside.
    pub fn due(&self, pending: usize, rgroups: u32, now: u64) -> bool {
        let waited = self.since.map_or(0, |t| now.saturating_sub(t));
        release_due(pending, rgroups, waited)
    }

    /// The victims were released at a sync point.
    pub fn released(&mut self) {
        self.since = None;
    }

    /// When the oldest victim awaiting release becomes due by waiting alone.
    pub fn deadline(&self) -> Option<u64> {
        self.since.map(|t| t + RELEASE_AFTER_NS)
    }

    /// Whether victims await release.
    pub fn is_waiting(&self) -> bool {
        self.since.is_some()
    }
}

/// What a write the array has no room for waits for, decided by the victims awaiting release
/// and whether a GC job is running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForSpace {
    /// Run a sync point now and release the victims waiting ([`release_for_waiting_write`]).
    Release,
    /// Let the GC jobs running go on: they add victims to release.
    Collect,
    /// No victim waits and no job runs: nothing can free space for it.
    Nothing,
}

impl ForSpace {
    /// For a write short of space, with `pending` victims awaiting release and a GC job
    /// running or not (the driver has started every job the scheme gives first).
    pub fn for_waiting_write(pending: usize, gc_running: bool) -> ForSpace {
        if release_for_waiting_write(pending, gc_running) {
            ForSpace::Release
        } else if gc_running {
            ForSpace::Collect
        } else {
            ForSpace::Nothing
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_release_clock_runs_from_the_first_victim_waiting_to_its_release() {
        let mut c = ReleaseClock::default();
        assert_eq!(c.waiting(0, 5), None);
        assert!(!c.is_waiting());
        assert_eq!(c.waiting(1, 10), Some(10 + RELEASE_AFTER_NS), "the wait starts with the first victim");
        assert_eq!(c.waiting(2, 20), None, "a second victim does not restart it");
        assert!(!c.due(2, 4, 10 + RELEASE_AFTER_NS - 1));
        assert!(c.due(2, 4, 10 + RELEASE_AFTER_NS), "the oldest waited long enough");
        assert!(c.due(8, 4, 11), "a batch is due at once");
        c.released();
        assert!(!c.is_waiting());
        assert!(!c.due(1, 4, 10 + RELEASE_AFTER_NS), "a released clock has not waited");
    }

    #[test]
    fn a_write_short_of_space_releases_collects_or_has_nothing_to_wait_for() {
        assert_eq!(ForSpace::for_waiting_write(0, false), ForSpace::Nothing);
        assert_eq!(ForSpace::for_waiting_write(0, true), ForSpace::Collect);
        assert_eq!(ForSpace::for_waiting_write(1, true), ForSpace::Collect, "a running job adds to the batch");
        assert_eq!(ForSpace::for_waiting_write(1, false), ForSpace::Release);
        assert_eq!(ForSpace::for_waiting_write(RELEASE_BATCH, true), ForSpace::Release);
    }

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
