//! Reads around a busy SSD: serving a block from the rest of its stripe row and the row's
//! parity when its own member is predicted to answer late (SWAN4/5; beyond the paper).
//!
//! A back-end R-group collecting garbage keeps its SSDs busy, and an SSD's *own* GC (erases,
//! page copies) cannot be preempted by the host at all. A block of a parity row is also
//! the XOR of the row's other columns, so a read aimed at a member stuck behind such work
//! can instead read those columns, each from a member that may be idle, and XOR them.
//!
//! Everything here is a decision over inputs: the driver says how long a read issued now
//! would wait on each (member, block) — the simulator from its SSD models, the server from
//! its emulated ones — and this module says which blocks to read. It reads no clock.
//!
//! The parity path is refused where the row's parity may not be on the members: a row of a
//! segment still filling (the user's or GC's open segment: its last row's parity exists only
//! in the driver's running XOR, and a GC job's writes may still be in flight), or of a
//! segment adopted at restart without a seal. It is refused on an R-group with a failed
//! member: a degraded row cannot lose a second column, so the read goes to its member.

use super::LogArray;
use crate::geometry::RaidLevel;
use crate::io::{Dst, IoKind, IoPlan, MemberBlock, MemberId, MemberIo};
use crate::l2p::UNMAPPED;
use crate::scheme::{check_range, ReqOp, Request, RequestError, Submitted};
use crate::segment::SegState;
use serde::{Deserialize, Serialize};

/// What a driver predicts about its members: how long a read of `block` on `member`, issued
/// now, would wait before its member starts it.
pub trait ReadWaits {
    fn wait_ns(&mut self, member: MemberId, block: MemberBlock) -> u64;
}

/// When a block is worth reading around its member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParityReadPolicy {
    /// The direct read's predicted wait must exceed the slowest column of the row's by at
    /// least this much. The row's reads cost member time others may need (one block read
    /// per other column), so a small predicted gain is not worth them.
    pub min_gain_ns: u64,
}

/// One default, explained: a few page reads of the modelled SATA SSD (tR ≈ 60 µs plus the
/// transfer) — below that the prediction's error is as large as the gain.
pub const DEFAULT_MIN_GAIN_NS: u64 = 500_000;

impl Default for ParityReadPolicy {
    fn default() -> Self {
        Self { min_gain_ns: DEFAULT_MIN_GAIN_NS }
    }
}

/// How a driver serves user reads: SWAN's read priority, and reads around a busy SSD. The
/// simulator and the server take the same rules from their options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadRules {
    /// SWAN: user reads preempt array GC on their SSD (the slides' rule; on by default).
    pub priority: bool,
    /// Log-structured RAID4/5: read a block around its SSD, from the rest of its stripe row
    /// and the parity, when its SSD is predicted at least this many µs slower than the row's
    /// slowest other column (`None`: never).
    #[serde(default)]
    pub parity_min_gain_us: Option<u64>,
}

impl Default for ReadRules {
    fn default() -> Self {
        Self { priority: true, parity_min_gain_us: None }
    }
}

impl ReadRules {
    /// The policy reads around a busy SSD follow, if they are on.
    pub fn parity_policy(&self) -> Option<ParityReadPolicy> {
        self.parity_min_gain_us.map(|us| ParityReadPolicy { min_gain_ns: us.saturating_mul(1_000) })
    }
}

/// Why a block may not be read around its member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowRefusal {
    /// RAID0 rows have no parity.
    NoParity,
    /// The segment is still filling, or was adopted at restart unsealed: the row's parity
    /// may not be on the members yet.
    RowOpen,
    /// The R-group runs without one of its members: a second column cannot be spared.
    Degraded,
}

/// The decision alone: read around the target when its predicted wait exceeds the slowest
/// of the other columns' by `min_gain_ns` or more.
pub fn prefer_row(direct_wait_ns: u64, row_waits_ns: impl IntoIterator<Item = u64>, policy: ParityReadPolicy) -> bool {
    let slowest = row_waits_ns.into_iter().max().unwrap_or(0);
    direct_wait_ns >= slowest.saturating_add(policy.min_gain_ns)
}

impl LogArray {
    /// Whether the block in slot `pba` could be rebuilt from its row as the members hold it.
    pub fn row_around(&self, pba: u64) -> Result<(), RowRefusal> {
        if self.geo.raid == RaidLevel::Raid0 {
            return Err(RowRefusal::NoParity);
        }
        let seg = self.seg_of(pba);
        if self.failed_member[self.geo.group_of_segment(seg) as usize].is_some() {
            return Err(RowRefusal::Degraded);
        }
        let complete = matches!(self.segs.state(seg), SegState::Sealed | SegState::Victim);
        if !complete || self.segs.seq(seg) == 0 {
            return Err(RowRefusal::RowOpen);
        }
        Ok(())
    }

    /// [`Scheme::submit`](crate::scheme::Scheme::submit) of a read, reading around members
    /// `waits` predicts slow: each block the policy sends around its member is read as the
    /// other columns of its row (data and parity), each into the reply at the block's offset
    /// by XOR ([`Dst::Rebuild`]). Other requests are planned as `submit` plans them.
    pub fn submit_read_around(
        &mut self,
        req: &Request,
        plan: &mut IoPlan,
        waits: &mut dyn ReadWaits,
        policy: ParityReadPolicy,
    ) -> Result<Submitted, RequestError> {
        if req.op != ReqOp::Read {
            return crate::scheme::Scheme::submit(self, req, plan);
        }
        plan.clear();
        check_range(req, self.cfg.volume_blocks)?;
        self.counters.user_blocks_read += u64::from(req.blocks);
        let class = self.read_class();
        for i in 0..req.blocks {
            let pba = self.l2p.get(req.lba + u64::from(i));
            if pba == UNMAPPED {
                continue;
            }
            let (seg, slot) = self.geo.split_pba(pba);
            let (member, block) = self.geo.slot_location(seg, slot);
            let around = self.row_around(pba).is_ok() && {
                let group = self.geo.group_of_segment(seg);
                let direct = waits.wait_ns(member, block);
                // Only a slow member is worth predicting the rest of its row for.
                direct >= policy.min_gain_ns
                    && prefer_row(
                        direct,
                        self.geo.group_members(group).filter(|&m| m != member).map(|m| waits.wait_ns(m, block)),
                        policy,
                    )
            };
            if !around {
                plan.push_merged(MemberIo {
                    member,
                    block,
                    count: 1,
                    kind: IoKind::Read(Dst::User { offset: i }),
                    class,
                });
                continue;
            }
            let group = self.geo.group_of_segment(seg);
            let mut columns = 0;
            for m in self.geo.group_members(group).filter(|&m| m != member) {
                plan.push(MemberIo {
                    member: m,
                    block,
                    count: 1,
                    kind: IoKind::Read(Dst::Rebuild { offset: i }),
                    class,
                });
                columns += 1;
            }
            self.counters.parity_read_blocks += 1;
            self.counters.parity_extra_reads += columns - 1;
        }
        Ok(Submitted::Planned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Geometry;
    use crate::scheme::log::{Layout, LogConfig};
    use crate::scheme::Scheme;
    use crate::victim::VictimPolicy;

    /// Waits given per member, whatever the block.
    struct Fixed(Vec<u64>);

    impl ReadWaits for Fixed {
        fn wait_ns(&mut self, member: MemberId, _block: MemberBlock) -> u64 {
            self.0[member as usize]
        }
    }

    const POLICY: ParityReadPolicy = ParityReadPolicy { min_gain_ns: 1_000 };

    fn swan(raid: RaidLevel) -> LogArray {
        let geo = Geometry::new(2, 3, raid, 8 * 64, 0, 8).unwrap();
        LogArray::new(LogConfig::new(geo, Layout::Swan, VictimPolicy::Greedy))
    }

    /// Write blocks `0..n`, one request each, and return where block 0 lives.
    fn fill(a: &mut LogArray, n: u64) -> (MemberId, MemberBlock) {
        let mut plan = IoPlan::new();
        for lba in 0..n {
            a.submit(&Request::new(ReqOp::Write, lba, 1), &mut plan).unwrap();
        }
        a.locate(0).unwrap()
    }

    fn read0(a: &mut LogArray, waits: Vec<u64>) -> IoPlan {
        let mut plan = IoPlan::new();
        a.submit_read_around(&Request::new(ReqOp::Read, 0, 1), &mut plan, &mut Fixed(waits), POLICY).unwrap();
        plan
    }

    #[test]
    fn the_decision_weighs_the_direct_wait_against_the_slowest_column() {
        assert!(prefer_row(10_000, [2_000, 8_000], POLICY));
        assert!(!prefer_row(10_000, [2_000, 9_500], POLICY), "a gain below min_gain_ns is not worth the reads");
        assert!(!prefer_row(0, [], POLICY));
        assert!(prefer_row(u64::MAX, [u64::MAX - 1_000], POLICY));
        assert!(!prefer_row(5, [u64::MAX], POLICY), "no overflow");
    }

    #[test]
    fn a_slow_member_of_a_sealed_row_is_read_around() {
        let mut a = swan(RaidLevel::Raid5);
        let payload = u64::from(a.geometry().payload_slots());
        // Two segments' worth: block 0's segment is sealed.
        let (member, block) = fill(&mut a, 2 * payload);
        assert_eq!(a.row_around(a.l2p.get(0)), Ok(()));
        let mut waits = vec![0; 6];
        waits[member as usize] = 50_000;
        let plan = read0(&mut a, waits);
        let group = member / 3;
        let mut read: Vec<u32> = plan.ios().iter().map(|io| io.member).collect();
        read.sort_unstable();
        let want: Vec<u32> = (group * 3..group * 3 + 3).filter(|&m| m != member).collect();
        assert_eq!(read, want, "the other columns of the row, parity included");
        for io in plan.ios() {
            assert_eq!((io.block, io.kind), (block, IoKind::Read(Dst::Rebuild { offset: 0 })));
        }
        assert_eq!((a.counters().parity_read_blocks, a.counters().parity_extra_reads), (1, 1));
        // The same read with the member idle goes to it.
        let plan = read0(&mut a, vec![0; 6]);
        assert_eq!(plan.ios().len(), 1);
        assert_eq!(plan.ios()[0].kind, IoKind::Read(Dst::User { offset: 0 }));
    }

    #[test]
    fn a_busy_row_is_not_read_around() {
        let mut a = swan(RaidLevel::Raid4);
        let payload = u64::from(a.geometry().payload_slots());
        let (member, _) = fill(&mut a, 2 * payload);
        // Every member of the R-group as busy as the target: no gain.
        let plan = read0(&mut a, vec![50_000; 6]);
        assert_eq!(plan.ios().len(), 1);
        assert_eq!(plan.ios()[0].member, member);
    }

    #[test]
    fn an_open_row_is_refused() {
        let mut a = swan(RaidLevel::Raid5);
        // Block 0 sits in the open segment, in a row that is still filling.
        let (member, _) = fill(&mut a, 1);
        assert_eq!(a.row_around(a.l2p.get(0)), Err(RowRefusal::RowOpen));
        let mut waits = vec![0; 6];
        waits[member as usize] = u64::MAX / 2;
        let plan = read0(&mut a, waits.clone());
        assert_eq!(plan.ios().len(), 1);
        assert_eq!(plan.ios()[0].kind, IoKind::Read(Dst::User { offset: 0 }));
        // Rows already complete in a segment still open are refused as well: a GC job may
        // still be writing them.
        let mut plan = IoPlan::new();
        for lba in 1..8 {
            a.submit(&Request::new(ReqOp::Write, lba, 1), &mut plan).unwrap();
        }
        assert_eq!(a.row_around(a.l2p.get(0)), Err(RowRefusal::RowOpen));
        assert_eq!(a.counters().parity_read_blocks, 0);
    }

    #[test]
    fn a_degraded_rgroup_reads_directly() {
        let mut a = swan(RaidLevel::Raid5);
        let payload = u64::from(a.geometry().payload_slots());
        let (member, _) = fill(&mut a, 2 * payload);
        let group = member / 3;
        let peer = (group * 3..group * 3 + 3).find(|&m| m != member).unwrap();
        a.set_failed_member(peer, true);
        assert_eq!(a.row_around(a.l2p.get(0)), Err(RowRefusal::Degraded));
        let mut waits = vec![0; 6];
        waits[member as usize] = u64::MAX / 2;
        let plan = read0(&mut a, waits.clone());
        assert_eq!(plan.ios().len(), 1);
        assert_eq!(plan.ios()[0].member, member);
        a.set_failed_member(peer, false);
        assert_eq!(read0(&mut a, waits).ios().len(), 2);
    }

    #[test]
    fn raid0_has_no_row_to_read_around() {
        let mut a = swan(RaidLevel::Raid0);
        let payload = u64::from(a.geometry().payload_slots());
        let (member, _) = fill(&mut a, 2 * payload);
        assert_eq!(a.row_around(a.l2p.get(0)), Err(RowRefusal::NoParity));
        let mut waits = vec![0; 6];
        waits[member as usize] = u64::MAX / 2;
        assert_eq!(read0(&mut a, waits).ios().len(), 1);
    }
}
