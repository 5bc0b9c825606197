//! When a Zone Append may go under ZapRAID's group layout ([`AppendGroups`]): the blocks
//! of `stripes` stripes form a group in each zone, a group's appends go out together, at
//! most `in_flight` at once, and the next group waits until every append of the last one
//! has completed. ZapRAID needs the wait because an append lands wherever the write
//! pointer is when it arrives: only a group drained before the next begins keeps each
//! stripe's blocks inside its group's range, where reads search for them by stripe ID.
//!
//! Pure bookkeeping over completion times the drive model has already given: the adapter
//! ([`crate::zoned_array`]) asks before it hands an append to the drive, and holds it in
//! [`crate::zone_lock`] until the time this names.

use crate::engine::AppendGroups;
use swan_models::Nanos;

/// One zone's appends in flight and the group they belong to.
#[derive(Clone, Debug, Default)]
struct ZoneAppends {
    group: u64,
    /// When each append handed to the drive completes; those before `now` are pruned.
    done: Vec<Nanos>,
}

/// The group layout's state over one drive's zones.
#[derive(Clone, Debug)]
pub(crate) struct GroupedAppends {
    stripes: u64,
    in_flight: usize,
    zones: Vec<ZoneAppends>,
}

impl GroupedAppends {
    pub(crate) fn new(groups: AppendGroups, zones: u32) -> Self {
        assert!(groups.stripes > 0 && groups.in_flight > 0, "a group holds a stripe and lets one append go");
        let in_flight = groups.in_flight as usize;
        Self { stripes: u64::from(groups.stripes), in_flight, zones: vec![ZoneAppends::default(); zones as usize] }
    }

    /// Blocks of a group in each zone: a write is cut where a group ends.
    pub(crate) fn group_blocks(&self) -> u64 {
        self.stripes
    }

    /// `None` if an append at block `offset` of `zone` may go at `now`; else when it may.
    pub(crate) fn free_at(&mut self, zone: u32, offset: u64, now: Nanos) -> Option<Nanos> {
        let z = &mut self.zones[zone as usize];
        z.done.retain(|&d| d > now);
        if z.done.is_empty() {
            return None;
        }
        if offset / self.stripes != z.group {
            // The next group: once the last one's appends have all completed.
            return z.done.iter().copied().max();
        }
        if z.done.len() < self.in_flight {
            return None;
        }
        // Enough of them completed that fewer than `in_flight` remain.
        z.done.sort_unstable();
        Some(z.done[z.done.len() - self.in_flight])
    }

    /// An append at block `offset` of `zone` went to the drive and completes at `done`.
    pub(crate) fn sent(&mut self, zone: u32, offset: u64, done: Nanos) {
        let z = &mut self.zones[zone as usize];
        z.group = offset / self.stripes;
        z.done.push(done);
    }

    /// `zone` was reset: its next group is its first.
    pub(crate) fn reset(&mut self, zone: u32) {
        self.zones[zone as usize] = ZoneAppends::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(stripes: u32, in_flight: u32) -> GroupedAppends {
        GroupedAppends::new(AppendGroups { stripes, in_flight }, 2)
    }

    #[test]
    fn appends_of_one_group_go_together_up_to_the_limit() {
        let mut g = groups(8, 3);
        for (offset, done) in [(0, 50), (1, 30), (2, 40)] {
            assert_eq!(g.free_at(0, offset, 10), None);
            g.sent(0, offset, done);
        }
        // Three in flight: the fourth waits for the first of them to complete.
        assert_eq!(g.free_at(0, 3, 10), Some(30));
        assert_eq!(g.free_at(0, 3, 30), None, "one completed at 30, so two remain");
        // Another zone is not held by this one.
        assert_eq!(g.free_at(1, 0, 10), None);
    }

    #[test]
    fn the_next_group_waits_until_the_last_has_completed() {
        let mut g = groups(4, 16);
        for (offset, done) in [(0, 20), (1, 90), (2, 60), (3, 40)] {
            g.sent(0, offset, done);
        }
        assert_eq!(g.free_at(0, 4, 10), Some(90), "block 4 opens the second group");
        assert_eq!(g.free_at(0, 4, 89), Some(90));
        assert_eq!(g.free_at(0, 4, 90), None);
        g.sent(0, 4, 120);
        assert_eq!(g.free_at(0, 5, 100), None, "within the group again");
    }

    #[test]
    fn a_reset_zone_starts_at_its_first_group() {
        let mut g = groups(4, 1);
        g.sent(0, 6, 50);
        g.reset(0);
        assert_eq!(g.free_at(0, 0, 10), None);
        g.sent(0, 0, 30);
        assert_eq!(g.free_at(0, 1, 10), Some(30), "one in flight at most");
    }
}
