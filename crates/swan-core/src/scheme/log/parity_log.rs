//! RAIZN's partial-parity log ([`LogConfig::partial_parity_log`]): a write that leaves a
//! stripe row partly filled logs the row's parity as it stands, so a crash loses no
//! redundancy, where a plain log array holds a filling row's parity only in memory until
//! the row completes. Over zones the row's own parity block cannot take it (it would be
//! rewritten), so RAIZN appends it, behind a 4 KiB header, to a metadata zone of the row's
//! parity SSD (`raizn_write` in its public driver: one entry for the trailing partial
//! stripe of each write).
//!
//! Each member keeps its log in [`PARTIAL_PARITY_LOG_SEGMENTS`] segments' worth of blocks
//! after its last segment, written in order, one segment at a time. When the one being
//! written is full, the log moves to the other, resetting it first (its entries were all
//! superseded before the log left it), and logs again the partial rows whose parity the
//! member holds, as RAIZN does when it swaps metadata zones, so that every filling row
//! keeps a live entry.
//!
//! [`LogConfig::partial_parity_log`]: super::LogConfig::partial_parity_log

use super::{Cursor, LogArray};
use crate::geometry::Geometry;
use crate::io::{IoClass, IoKind, IoPlan, MemberBlock, MemberIo, Src};

/// Segments' worth of blocks each member keeps for its partial-parity log: the one being
/// written and the one it moves to.
pub const PARTIAL_PARITY_LOG_SEGMENTS: u32 = 2;

/// Blocks of one entry: RAIZN's header, then the parity of one stripe unit (a row's
/// parity block here, the stripe unit being one block).
const ENTRY_BLOCKS: u32 = 2;

/// Where each member's log stands.
#[derive(Clone, Debug)]
pub(super) struct ParityLog {
    /// First member block of the log area.
    base: MemberBlock,
    /// Blocks of one log segment.
    rows: u32,
    /// Per member: the log segment being written, and the next block in it.
    at: Vec<(u32, u32)>,
    /// Entries written, and blocks (headers included).
    pub(super) entries: u64,
    pub(super) blocks: u64,
}

impl ParityLog {
    pub(super) fn new(geo: &Geometry) -> Self {
        Self {
            base: geo.segments_end(),
            rows: geo.segment_rows,
            at: vec![(0, 0); geo.members() as usize],
            entries: 0,
            blocks: 0,
        }
    }

    fn segment_block(&self, segment: u32) -> MemberBlock {
        self.base + u64::from(segment) * u64::from(self.rows)
    }

    /// Whether `member`'s log segment has room for one more entry.
    fn has_room(&self, member: u32) -> bool {
        self.at[member as usize].1 + ENTRY_BLOCKS <= self.rows
    }

    /// Move `member`'s log to its other segment, planning that segment's reset first.
    fn swap(&mut self, member: u32, plan: &mut IoPlan, class: IoClass) {
        let next = (self.at[member as usize].0 + 1) % PARTIAL_PARITY_LOG_SEGMENTS;
        plan.push(MemberIo { member, block: self.segment_block(next), count: self.rows, kind: IoKind::Trim, class });
        self.at[member as usize] = (next, 0);
    }

    /// Append the entry for stripe row `row` of R-group `group`, whose parity `member` holds.
    fn append(&mut self, plan: &mut IoPlan, member: u32, group: u32, row: MemberBlock, class: IoClass) {
        let (segment, next) = self.at[member as usize];
        // A handover logs the member's filling rows again before the entry that caused it:
        // at most the user segment's, a GC segment's and one awaiting its summary, then that
        // entry, so a log segment must hold four entries.
        assert!(
            next + ENTRY_BLOCKS <= self.rows,
            "a log segment of {} blocks cannot hold the rows still filling",
            self.rows
        );
        let block = self.segment_block(segment) + u64::from(next);
        plan.push(MemberIo { member, block, count: 1, kind: IoKind::Write(Src::Zero), class });
        plan.push(MemberIo {
            member,
            block: block + 1,
            count: 1,
            kind: IoKind::Write(Src::Parity { group, row }),
            class,
        });
        self.at[member as usize].1 = next + ENTRY_BLOCKS;
        self.entries += 1;
        self.blocks += u64::from(ENTRY_BLOCKS);
    }
}

impl LogArray {
    /// RAIZN: if slot `last` of `seg`, the last a write filled, leaves its stripe row
    /// partly filled, log the row's parity as it stands on the row's parity member.
    pub(super) fn log_partial_parity(&mut self, plan: &mut IoPlan, seg: u64, last: u32, class: IoClass) {
        if self.parity_log.is_none() || self.geo.slot_ends_row(last) {
            return;
        }
        let (_, row) = self.geo.slot_location(seg, last);
        let Some(col) = self.geo.parity_column(row) else { return };
        let group = self.geo.group_of_segment(seg);
        let member = self.geo.member(group, col);
        if !self.parity_log.as_ref().is_some_and(|log| log.has_room(member)) {
            self.swap_parity_log(member, plan, class);
        }
        if let Some(log) = self.parity_log.as_mut() {
            log.append(plan, member, group, row, class);
        }
    }

    /// Move `member`'s log to its other segment, and log there again every row still
    /// filling whose parity `member` holds (the open user segment's, each GC segment's), in
    /// the class of the write that filled the log: the work is that write's, not GC's.
    fn swap_parity_log(&mut self, member: u32, plan: &mut IoPlan, class: IoClass) {
        // Full GC segments awaiting their summaries still have their last row filling.
        let payload = self.geo.payload_slots();
        let awaiting_seal = self.gc_full.iter().flatten().map(|&seg| Cursor { seg, next: payload });
        let open: Vec<Cursor> =
            self.user_open.iter().chain(self.gc_open.iter().flatten()).copied().chain(awaiting_seal).collect();
        let Some(log) = self.parity_log.as_mut() else { return };
        log.swap(member, plan, class);
        for c in open {
            if c.next == 0 || self.geo.slot_ends_row(c.next - 1) {
                continue;
            }
            let (_, row) = self.geo.slot_location(c.seg, c.next - 1);
            let group = self.geo.group_of_segment(c.seg);
            if self.geo.parity_column(row).map(|col| self.geo.member(group, col)) == Some(member) {
                log.append(plan, member, group, row, class);
            }
        }
    }

    /// Partial-parity entries logged, and the blocks they took (headers included).
    pub fn partial_parity_logged(&self) -> (u64, u64) {
        self.parity_log.as_ref().map_or((0, 0), |log| (log.entries, log.blocks))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::RaidLevel;
    use crate::scheme::log::{Layout, LogConfig};
    use crate::scheme::{ReqOp, Request, Scheme};
    use crate::victim::VictimPolicy;

    /// Log-RAID5 over 4 members (3 data blocks a row), 8-block segments, logging partial parity.
    fn raizn() -> LogArray {
        let geo = Geometry::new(1, 4, RaidLevel::Raid5, 8 * 20, 0, 8).unwrap();
        let mut cfg = LogConfig::new(geo, Layout::LogRaid, VictimPolicy::Greedy);
        cfg.partial_parity_log = true;
        LogArray::new(cfg)
    }

    fn write(a: &mut LogArray, lba: u64, blocks: u32) -> IoPlan {
        let mut plan = IoPlan::new();
        a.submit(&Request::new(ReqOp::Write, lba, blocks), &mut plan).unwrap();
        plan
    }

    fn log_writes(plan: &IoPlan, base: MemberBlock) -> Vec<MemberIo> {
        plan.ios().iter().filter(|io| io.block >= base && matches!(io.kind, IoKind::Write(_))).copied().collect()
    }

    #[test]
    fn a_write_that_leaves_its_row_partly_filled_logs_the_row_on_its_parity_member() {
        let mut a = raizn();
        let base = a.geo.segments_end();
        // One block of row 0: header then the row's parity, on the row's parity member.
        let plan = write(&mut a, 0, 1);
        let parity_member = a.geo.member(0, a.geo.parity_column(0).unwrap());
        let logged = log_writes(&plan, base);
        assert_eq!(logged.len(), 2, "{logged:?}");
        assert_eq!(
            (logged[0].member, logged[0].block, logged[0].kind),
            (parity_member, base, IoKind::Write(Src::Zero))
        );
        assert_eq!(logged[1].block, base + 1);
        assert_eq!(logged[1].kind, IoKind::Write(Src::Parity { group: 0, row: 0 }));
        // Two more complete the row: its parity goes to the row's own block, nothing is logged.
        let plan = write(&mut a, 1, 2);
        assert!(log_writes(&plan, base).is_empty(), "{plan:?}");
        assert!(plan
            .ios()
            .iter()
            .any(|io| io.kind == IoKind::Write(Src::Parity { group: 0, row: 0 }) && io.block == 0));
        assert_eq!(a.partial_parity_logged(), (1, 2));
    }

    #[test]
    fn a_full_log_segment_hands_over_to_the_other_reset_first_with_the_filling_row_logged_again() {
        let mut a = raizn();
        let base = a.geo.segments_end();
        // Rows rotate their parity over the members. A one-block write that leaves its row
        // partly filled logs an entry of 2 blocks on the row's parity member; 4 fill an
        // 8-block log segment.
        let m = a.geo.member(0, a.geo.parity_column(0).unwrap());
        let (mut lba, mut entries_on_m) = (0, 0);
        let swap = loop {
            let plan = write(&mut a, lba, 1);
            let logged: Vec<_> = log_writes(&plan, base).into_iter().filter(|io| io.member == m).collect();
            if !logged.is_empty() {
                entries_on_m += 1;
            }
            if plan.ios().iter().any(|io| io.member == m && io.kind == IoKind::Trim) {
                break (plan, logged);
            }
            lba += 1;
        };
        let (plan, logged) = swap;
        assert_eq!(entries_on_m, 5, "four entries fill the first log segment; the fifth moves to the second");
        let trim = plan.ios().iter().find(|io| io.member == m && io.kind == IoKind::Trim).unwrap();
        assert_eq!((trim.block, trim.count), (base + 8, 8), "the second log segment is reset before it is written");
        let trim_at = plan.ios().iter().position(|io| io.kind == IoKind::Trim).unwrap();
        let first_log_write = plan.ios().iter().position(|io| io.block >= base && io.kind != IoKind::Trim).unwrap();
        assert!(trim_at < first_log_write, "reset before the writes that follow it");
        // The filling row is logged again by the handover, then by its own write: two entries.
        assert_eq!(logged.len(), 4, "{logged:?}");
        assert!(logged.iter().all(|io| io.block >= base + 8), "{logged:?}");
        assert_eq!(logged[1].kind, logged[3].kind, "both entries are the same row's");
    }
}
