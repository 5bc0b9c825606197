//! Each R-group's role, as SWAN names them and as `swan status` and SWAN's Table 4 (reads by
//! the role of the R-group they land on) need them: one rule for both faces.

use crate::scheme::{SchemeKind, Status};

/// What an R-group (a log-RAID array's one log, an in-place array's one stripe) is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupRole {
    /// SWAN's front-end R-group: it takes every write.
    FrontEnd,
    /// A SWAN back-end R-group with a GC job in flight.
    Collecting,
    /// A SWAN back-end R-group with no GC job in flight.
    Idle,
    /// A log-RAID array's log (one, over every member), collecting or not.
    Log { collecting: bool },
    /// In-place RAID: no log, no array GC.
    InPlace,
}

impl GroupRole {
    /// The role of R-group `group` of a `kind` array whose scheme reports `status`.
    pub fn of(kind: SchemeKind, status: &Status, group: u32) -> GroupRole {
        let collecting = status.gc_groups & (1u64 << (group % 64)) != 0;
        match kind {
            SchemeKind::Raid(_) => GroupRole::InPlace,
            SchemeKind::LogRaid(_) => GroupRole::Log { collecting },
            SchemeKind::Swan(_) if status.front_group == Some(group) => GroupRole::FrontEnd,
            SchemeKind::Swan(_) if collecting => GroupRole::Collecting,
            SchemeKind::Swan(_) => GroupRole::Idle,
        }
    }

    /// The role as `swan status` shows it.
    pub fn name(self) -> &'static str {
        match self {
            GroupRole::FrontEnd => "front-end",
            GroupRole::Collecting => "back-end GC",
            GroupRole::Idle => "back-end idle",
            GroupRole::Log { collecting: true } => "log, GC",
            GroupRole::Log { collecting: false } => "log",
            GroupRole::InPlace => "in-place",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::RaidLevel;

    #[test]
    fn roles_follow_the_front_end_and_the_groups_collecting() {
        let st = Status { front_group: Some(1), gc_groups: 0b100, ..Status::default() };
        let swan = SchemeKind::Swan(RaidLevel::Raid5);
        assert_eq!(GroupRole::of(swan, &st, 1), GroupRole::FrontEnd);
        assert_eq!(GroupRole::of(swan, &st, 2), GroupRole::Collecting);
        assert_eq!(GroupRole::of(swan, &st, 0), GroupRole::Idle);
        let lograid = SchemeKind::LogRaid(RaidLevel::Raid0);
        assert_eq!(GroupRole::of(lograid, &Status { gc_groups: 1, ..Status::default() }, 0).name(), "log, GC");
        assert_eq!(GroupRole::of(SchemeKind::Raid(RaidLevel::Raid5), &st, 0).name(), "in-place");
    }
}
