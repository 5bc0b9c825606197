//! The log-structured array: Log-RAID and SWAN over one engine.
//!
//! Every write is appended to an open segment; the L2P map says where each logical block
//! lives; a block rewritten elsewhere leaves a dead copy behind; GC picks a *victim*
//! segment, moves its valid blocks to a GC segment of the same R-group, and TRIMs the
//! victim (§4.2) so the SSD can erase it cheaply.
//!
//! The two layouts differ only in *where* things happen:
//!
//! - [`Layout::LogRaid`]: one R-group holds every SSD. User writes and GC share all SSDs;
//!   GC starts when free segments fall below a low watermark and runs to a high one.
//! - [`Layout::Swan`]: R-groups form a 2-D array. The **front-end** R-group takes every
//!   user write. When its free segments are exhausted, the back-end R-group with the most
//!   free segments becomes the front-end (the paper: "selects a new R-group in the back-end
//!   pool that has enough free space"; swan takes the one with the most, ties to the R-group
//!   that was front-end longest ago). GC runs only in **back-end** R-groups, one victim at a
//!   time per R-group, and moves valid blocks within the victim's R-group. It runs while the
//!   back-end holds fewer free segments than a target, on the R-group with the best greedy
//!   victim, staying on that R-group while its victims are nearly as good (so one back-end
//!   R-group collects at a time, as in Fig. 6(b)). User reads are marked
//!   [`IoClass::UserPreempt`]: they overtake queued GC work on their SSD (the slides'
//!   "a read that falls on the back-end R-group doing GC preempts GC").
//!
//! ## Concurrency with GC
//! A GC job plans its reads and writes at once but remaps a moved block only when the job
//! finishes, and only if the block still lives in the victim (`l2p == from`): a user write
//! or trim that lands meanwhile wins, and the copy becomes a dead slot. Until then reads keep
//! going to the victim, which is trimmed only after the job. A GC segment is sealed (its
//! summary written) only when no job still has moves pending into it, so a segment is never
//! chosen as a victim while data is on its way in. One job per R-group is in flight at a
//! time, so two jobs never share a parity row whose data is still in flight.

use super::inplace::push_flushes;
use super::p2l::ReverseMap;
use super::{
    check_range, Counters, GcJobId, MapChange, NoSummaries, ReqOp, Request, RequestError, Scheme, SchemeKind, Status,
    Submitted,
};
use crate::geometry::Geometry;
use crate::io::{Dst, IoClass, IoKind, IoPlan, MemberBlock, MemberId, MemberIo, Src};
use crate::l2p::{PackedMap, UNMAPPED};
use crate::segment::{SegState, SegmentTable};
use crate::summary::{self, Entry, Summary};
use crate::victim::VictimPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layout {
    LogRaid,
    Swan,
}

/// Tunables of the log-structured engine. Each default is set (and explained) in [`LogConfig::new`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogConfig {
    pub geometry: Geometry,
    pub layout: Layout,
    pub victim: VictimPolicy,
    /// Free segments each R-group keeps back from user writes so GC can always move a
    /// victim's blocks somewhere inside the R-group.
    pub reserve_segments: u64,
    /// Log-RAID: GC starts below this many free segments...
    pub lograid_gc_low: u64,
    /// ...and stops once there are this many.
    pub lograid_gc_high: u64,
    /// SWAN: GC runs while the back-end R-groups hold fewer segments that user writes may
    /// take (free segments beyond each R-group's reserve) than this.
    pub swan_gc_target: u64,
    /// SWAN: at most this many back-end R-groups collect at once (one victim each).
    pub swan_gc_max_groups: u32,
    /// Blocks the volume exposes.
    pub volume_blocks: u64,
    /// Keep GC victims until the driver calls [`LogArray::release_deferred`]. A server sets
    /// this: a victim may be overwritten only once the moves out of it are durable, or a
    /// crash would leave the durable map pointing at someone else's data.
    #[serde(default)]
    pub defer_release: bool,
    /// Keep the P2L of sealed segments only in their summaries on the members, and read a
    /// victim's back through the driver's [`SummarySource`]. A server sets this, so that its
    /// memory is the L2P map and little else; the simulator, whose members hold no bytes,
    /// keeps every slot's in memory.
    #[serde(default)]
    pub p2l_in_summaries: bool,
}

/// The least SWAN GC target: one segment a user write may take, so the front-end can
/// always rotate without waiting for GC.
pub const LEAST_SWAN_GC_TARGET: u64 = 1;

impl LogConfig {
    pub fn new(geometry: Geometry, layout: Layout, victim: VictimPolicy) -> Self {
        let segments = geometry.segments();
        let per_group = geometry.segments_per_group;
        // One segment per R-group suffices: one GC job per R-group moves at most one
        // segment's payload, and the victim it frees comes back before the next job.
        let reserve_segments = 1;
        // Log-RAID cleans in batches between watermarks, as SOFA/SRC-style arrays do: GC
        // starts when 1/64 of the segments are free and stops at 1/32. Of the settings we
        // measured (README, "Design") this gives Log-RAID its best throughput; cleaning
        // earlier only moves more valid blocks per freed segment.
        let lograid_gc_low = (segments / 64).max(reserve_segments + 2);
        let lograid_gc_high = (segments / 32).max(lograid_gc_low + 2);
        // SWAN keeps a quarter of an R-group's segments clean in the back-end. Less, and the
        // SSDs start copying in their own GC (1/32 of an R-group: SSD WAF 1.18, 518 MB/s on
        // the README's sweep); more, and victims are cleaned before their blocks have had
        // time to die (a whole R-group: array WAF 2.04 against 1.45), for no gain.
        let swan_gc_target = (per_group / 4).max(LEAST_SWAN_GC_TARGET);
        // Eq. 1 lets every back-end R-group clean while it waits to be front-end again, so by
        // default all of them may collect at once; 1 gives Fig. 6(b)'s single busy R-group.
        let swan_gc_max_groups = geometry.rgroups.saturating_sub(1).max(1);
        let mut cfg = Self {
            geometry,
            layout,
            victim,
            reserve_segments,
            lograid_gc_low,
            lograid_gc_high,
            swan_gc_target,
            swan_gc_max_groups,
            volume_blocks: 0,
            defer_release: false,
            p2l_in_summaries: false,
        };
        // Expose all payload but what GC may be unable to give back, and one segment more,
        // so that any write of up to a segment always finds room (see
        // [`LogConfig::guaranteed_write_blocks`]) even with every block of the volume live.
        let keep = cfg.stranded_slots() + u64::from(geometry.payload_slots());
        cfg.volume_blocks = geometry.payload_blocks().saturating_sub(keep);
        cfg
    }

    /// Expose at most `volume_blocks`, keeping the rest of the payload spare for GC, and keep
    /// SWAN's GC target within what that spare can give. The back-end can only hold free the
    /// segments the volume leaves over: a target near all of them makes GC compact back-end
    /// R-groups until its victims are almost entirely valid (a whole swan0 volume with 10 %
    /// spare and the default target of a quarter of an R-group moved 25 blocks per user
    /// block once full). Half the spare segments leaves the other half spread as dead
    /// blocks, which is what makes victims worth collecting.
    pub fn limit_volume(&mut self, volume_blocks: u64) {
        self.volume_blocks = self.volume_blocks.min(volume_blocks);
        self.swan_gc_target = self.swan_gc_target.min(self.spare_segments() / 2).max(LEAST_SWAN_GC_TARGET);
    }

    /// The volume that keeps `spare` (a share, 0 ≤ spare < 1) of the payload out for GC:
    /// what a server's `--spare` and the simulator's `--spare` both mean.
    pub fn volume_for_spare(&self, spare: f64) -> u64 {
        (self.geometry.payload_blocks() as f64 * (1.0 - spare)).floor() as u64
    }

    /// Segments the volume leaves over: as many as GC could ever hold free.
    pub fn spare_segments(&self) -> u64 {
        let per_segment = u64::from(self.geometry.payload_slots());
        self.geometry.segments().saturating_sub(self.volume_blocks.div_ceil(per_segment))
    }

    /// Payload slots that GC, however long it runs, may be unable to hand to user writes.
    ///
    /// Once GC has collected every victim it may (a write that does not fit lets it
    /// collect regardless of its target, in the front-end too), every sealed segment holds
    /// only live blocks. The slots holding no live block are then: each R-group's reserve;
    /// each R-group's open GC segment (less than a segment); the open user segment's dead
    /// slots (less than a segment, and its free slots are user capacity); and the free
    /// segments beyond the reserves, which are exactly what user writes may take. So user
    /// writes can always be given the spare slots less these.
    pub fn stranded_slots(&self) -> u64 {
        let payload = u64::from(self.geometry.payload_slots());
        (u64::from(self.geometry.rgroups) * (self.reserve_segments + 1) + 1) * payload
    }

    /// The largest write GC can always make room for, whatever the volume holds: a driver
    /// must not submit a larger one (a server advertises it as its maximum block size), or
    /// the write could wait for space GC cannot free. Not counted: a degraded R-group,
    /// whose failed member's slots are lost to every row.
    pub fn guaranteed_write_blocks(&self) -> u64 {
        self.geometry.payload_blocks().saturating_sub(self.volume_blocks).saturating_sub(self.stranded_slots())
    }
}

#[derive(Clone, Copy, Debug)]
struct Cursor {
    seg: u64,
    next: u32,
}

mod gc;

pub use gc::GC_WRITE_PHASE;

/// One block a GC job moves: logical block `lba` from slot `from` (in the victim) to slot
/// `to`. The job's plan stages move `j` in staging slot `j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    pub lba: u64,
    pub from: u64,
    pub to: u64,
}

#[derive(Debug)]
struct GcJob {
    group: u32,
    victim: u64,
    moves: Vec<Move>,
}

pub struct LogArray {
    cfg: LogConfig,
    geo: Geometry,
    l2p: PackedMap,
    /// Which logical block each physical slot was written for; a slot is live only if the
    /// L2P map points back at it. Every slot's, or only unsealed segments' (see
    /// [`LogConfig::p2l_in_summaries`]).
    p2l: ReverseMap,
    /// A victim's P2L read back from its summary (reused between jobs).
    victim_p2l: Vec<u64>,
    /// One bit per physical slot: set while the slot holds the live copy of its block
    /// (exactly when `l2p[p2l[slot]] == slot`). GC finds a victim's live blocks by scanning
    /// these bits instead of looking every slot up in the L2P map.
    live: Vec<u64>,
    segs: SegmentTable,
    /// GC moves planned into each segment and not yet finished.
    inbound: Vec<u32>,
    front: u32,
    user_open: Option<Cursor>,
    gc_open: Vec<Option<Cursor>>,
    /// Full GC segments waiting for their inbound moves before being sealed.
    gc_full: Vec<Vec<u64>>,
    seal_seq: u64,
    next_job: GcJobId,
    jobs: BTreeMap<GcJobId, GcJob>,
    job_in_flight: Vec<bool>,
    move_pool: Vec<Vec<Move>>,
    /// SWAN: rotation count at which each R-group last became front-end (age for ties).
    last_front: Vec<u64>,
    /// SWAN: R-groups running without one of their members (written only when no healthy
    /// R-group has room: a degraded group's new data has no redundancy to spare).
    degraded: Vec<bool>,
    /// Per R-group, its failed member: user writes skip that member's slots, so what they
    /// write is on healthy members only (a row's parity counts a skipped slot as zeroes).
    failed_member: Vec<Option<u32>>,
    /// Log-RAID: between the watermarks, whether GC is on.
    lograid_gc_on: bool,
    /// Blocks of the last write refused for want of space (0 once a write fits).
    starved_for: u64,
    counters: Counters,
    scratch: Vec<u64>,
    /// Changes since the driver last took them, when it asked for them.
    changes: Option<Vec<MapChange>>,
    /// Victims emptied by GC, waiting for [`LogArray::release_deferred`]: (R-group, segment).
    releasing: Vec<(u32, u64)>,
}

impl LogArray {
    pub fn new(cfg: LogConfig) -> Self {
        let slots = cfg.geometry.segments() * u64::from(cfg.geometry.data_slots);
        let l2p = PackedMap::for_values(cfg.volume_blocks, slots);
        Self::with_l2p(cfg, l2p)
    }

    fn with_l2p(cfg: LogConfig, l2p: PackedMap) -> Self {
        let geo = cfg.geometry;
        let groups = geo.rgroups as usize;
        let segs = SegmentTable::new(geo.rgroups, geo.segments_per_group, geo.payload_slots());
        Self {
            l2p,
            p2l: if cfg.p2l_in_summaries {
                ReverseMap::open_only(geo.data_slots)
            } else {
                ReverseMap::dense(geo.segments(), geo.data_slots, cfg.volume_blocks)
            },
            victim_p2l: Vec::new(),
            live: vec![0; (geo.segments() * u64::from(geo.data_slots)).div_ceil(64) as usize],
            inbound: vec![0; geo.segments() as usize],
            segs,
            front: 0,
            user_open: None,
            gc_open: vec![None; groups],
            gc_full: vec![Vec::new(); groups],
            seal_seq: 0,
            next_job: 1,
            jobs: BTreeMap::new(),
            job_in_flight: vec![false; groups],
            move_pool: Vec::new(),
            last_front: vec![0; groups],
            degraded: vec![false; groups],
            failed_member: vec![None; groups],
            lograid_gc_on: false,
            starved_for: 0,
            counters: Counters::default(),
            scratch: Vec::new(),
            changes: None,
            releasing: Vec::new(),
            geo,
            cfg,
        }
    }

    /// Rebuild the array from a recovered map: `map[lba]` is where block `lba` lives
    /// ([`UNMAPPED`] if nowhere) and `seal_seqs[segment]` the sequence number its summary was
    /// sealed with (0 if it never was). A segment holding live blocks becomes sealed, even one
    /// that was still open at the crash (the rest of its slots stay unused until GC); a
    /// segment holding none is free. Fails, naming the block, on a map that cannot be right.
    /// The map becomes the array's own (no second copy is made).
    pub fn restore(cfg: LogConfig, map: PackedMap, seal_seqs: &[u64]) -> Result<Self, String> {
        if map.len() != cfg.volume_blocks {
            return Err(format!("a map of {} blocks for a volume of {}", map.len(), cfg.volume_blocks));
        }
        let mut a = Self::with_l2p(cfg, PackedMap::new(0));
        let geo = a.geo;
        if seal_seqs.len() as u64 != geo.segments() {
            return Err(format!("{} segment sequence numbers for {} segments", seal_seqs.len(), geo.segments()));
        }
        let slots = geo.segments() * u64::from(geo.data_slots);
        for lba in 0..a.cfg.volume_blocks {
            let pba = map.get(lba);
            if pba == UNMAPPED {
                continue;
            }
            if pba >= slots {
                return Err(format!("block {lba} maps to slot {pba}, beyond the array's {slots} slots"));
            }
            let (seg, slot) = geo.split_pba(pba);
            if slot >= geo.payload_slots() {
                return Err(format!("block {lba} maps into the summary of segment {seg}"));
            }
            if a.is_live(pba) {
                return Err(match a.p2l.is_dense() {
                    true => format!("block {lba} maps to slot {pba}, which block {} holds too", a.p2l.get(pba)),
                    false => format!("block {lba} maps to slot {pba}, which an earlier block holds too"),
                });
            }
            if a.segs.state(seg) == SegState::Free {
                a.segs.take(seg);
            }
            if a.p2l.is_dense() {
                a.p2l.set(pba, lba);
            }
            a.segs.add_valid(seg);
            a.set_live(pba, true);
        }
        a.l2p = map;
        a.segs.rebuild_free();
        for seg in 0..geo.segments() {
            if a.segs.state(seg) == SegState::Open {
                let seq = seal_seqs[seg as usize];
                a.seal_seq = a.seal_seq.max(seq);
                a.segs.seal(seg, seq);
            }
        }
        if a.cfg.layout == Layout::Swan {
            // The R-group with the most room takes the writes, as at rotation.
            a.front = (0..geo.rgroups).max_by_key(|&g| (a.allocatable(g), std::cmp::Reverse(g))).unwrap_or(0);
        }
        Ok(a)
    }

    pub fn config(&self) -> &LogConfig {
        &self.cfg
    }

    /// SWAN: keep `segments` that user writes may take free in the back-end R-groups from
    /// now on, within what the spare can hold: at least one, at most the spare segments (GC
    /// cannot free more than the volume leaves over; above that it would compact victims
    /// that hold nothing dead). Err says what would be accepted.
    pub fn set_swan_gc_target(&mut self, segments: u64) -> Result<(), String> {
        if self.cfg.layout != Layout::Swan {
            return Err("the GC target is SWAN's (back-end R-groups); Log-RAID cleans between watermarks".into());
        }
        let (least, spare) = (LEAST_SWAN_GC_TARGET, self.cfg.spare_segments());
        if segments < least || segments > spare.max(least) {
            return Err(format!(
                "a GC target of {segments} segments is outside {least}..={} (this array's spare holds {spare} segments)",
                spare.max(least)
            ));
        }
        self.cfg.swan_gc_target = segments;
        Ok(())
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    pub fn segments(&self) -> &SegmentTable {
        &self.segs
    }

    /// The L2P map (checkpoints write it as it is stored).
    pub fn l2p(&self) -> &PackedMap {
        &self.l2p
    }

    fn seg_of(&self, pba: u64) -> u64 {
        pba / u64::from(self.geo.data_slots)
    }

    fn read_class(&self) -> IoClass {
        match self.cfg.layout {
            Layout::Swan => IoClass::UserPreempt,
            Layout::LogRaid => IoClass::User,
        }
    }

    /// Segments of `group` that user writes may still take.
    fn allocatable(&self, group: u32) -> u64 {
        self.segs.free_count(group).saturating_sub(self.cfg.reserve_segments)
    }

    /// Payload slots user writes can fill before GC must free something.
    fn user_capacity(&self) -> u64 {
        // A degraded R-group's rows lose the failed member's slot: count one slot in every
        // `data_members` as lost (a little more than is, where the failed member holds
        // the row's parity instead).
        let usable = |g: u32, slots: u64| {
            if self.degraded[g as usize] {
                slots - slots.div_ceil(u64::from(self.geo.data_members))
            } else {
                slots
            }
        };
        let open = self
            .user_open
            .map_or(0, |c| usable(self.geo.group_of_segment(c.seg), u64::from(self.geo.payload_slots() - c.next)));
        let payload = u64::from(self.geo.payload_slots());
        let groups: u64 = match self.cfg.layout {
            Layout::LogRaid => usable(0, self.allocatable(0) * payload),
            Layout::Swan => (0..self.geo.rgroups).map(|g| usable(g, self.allocatable(g) * payload)).sum(),
        };
        open + groups
    }

    /// Whether user writes can fill `n` more payload slots before GC must free something:
    /// [`LogArray::user_capacity`] `>= n`, answered by the open segment alone when it can
    /// (every write asks, and the full count walks every R-group).
    fn has_room(&self, n: u64) -> bool {
        if let Some(c) = self.user_open {
            let fits = u64::from(self.geo.payload_slots() - c.next) >= n;
            if fits && !self.degraded[self.geo.group_of_segment(c.seg) as usize] {
                return true;
            }
        }
        self.user_capacity() >= n
    }

    /// The logical block whose live copy slot `pba` holds, if the slot is live and its
    /// segment's P2L is in memory (it is for every segment not yet sealed).
    pub fn live_lba(&self, pba: u64) -> Option<u64> {
        (self.is_live(pba) && self.p2l.knows(self.seg_of(pba))).then(|| self.p2l.get(pba))
    }

    /// The live block at `member`'s `block`, as (slot, logical block), if that block is a
    /// slot of a segment not yet sealed: what a server must move or restate when the member
    /// fails, or a crash comes, before the block's stripe row has its parity.
    pub fn live_at(&self, member: MemberId, block: MemberBlock) -> Option<(u64, u64)> {
        let (seg, slot) = self.geo.slot_at(member, block)?;
        let pba = self.geo.pba(seg, slot);
        self.live_lba(pba).map(|lba| (pba, lba))
    }

    /// Segments still filling (the user's and GC's open segments): their last stripe rows
    /// get their parity only when they complete.
    pub fn open_segments(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.geo.segments()).filter(|&s| self.segs.state(s) == SegState::Open)
    }

    /// Segments holding data but no seal (sequence 0): open when the array last stopped, and
    /// adopted by [`LogArray::restore`]. Their last rows may lack parity.
    pub fn adopted_segments(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.geo.segments()).filter(|&s| self.segs.seq(s) == 0 && self.segs.valid(s) > 0)
    }

    /// Write slot `slot` of `seg` from `src`, and the row's parity if the slot completes it.
    fn push_slot_write(&self, plan: &mut IoPlan, seg: u64, slot: u32, src: Src, class: IoClass) {
        let (member, block) = self.geo.slot_location(seg, slot);
        plan.push_merged(MemberIo { member, block, count: 1, kind: IoKind::Write(src), class });
        if self.geo.slot_ends_row(slot) {
            self.push_parity(plan, seg, slot, class);
        }
    }

    /// Write the parity of the stripe row holding `slot` of `seg` (no-op for RAID0).
    fn push_parity(&self, plan: &mut IoPlan, seg: u64, slot: u32, class: IoClass) {
        let (_, block) = self.geo.slot_location(seg, slot);
        if let Some(col) = self.geo.parity_column(block) {
            let group = self.geo.group_of_segment(seg);
            plan.push(MemberIo {
                member: self.geo.member(group, col),
                block,
                count: 1,
                kind: IoKind::Write(Src::Parity { group, row: block }),
                class,
            });
        }
    }

    /// Write the summary of a full segment and make it a GC candidate.
    fn seal(&mut self, seg: u64, plan: &mut IoPlan, class: IoClass) {
        let payload = self.geo.payload_slots();
        for index in 0..self.geo.summary_blocks {
            self.push_slot_write(plan, seg, payload + index, Src::Summary { segment: seg, index }, class);
        }
        self.seal_seq += 1;
        self.segs.seal(seg, self.seal_seq);
        if let Some(log) = self.changes.as_mut() {
            log.push(MapChange::Sealed { segment: seg, seq: self.seal_seq });
        }
    }

    /// SWAN: the back-end R-group to become front-end, if any has room: a healthy one
    /// before a degraded one.
    fn next_front(&self) -> Option<u32> {
        (0..self.geo.rgroups).filter(|&g| g != self.front && self.allocatable(g) > 0).max_by_key(|&g| {
            (!self.degraded[g as usize], self.allocatable(g), std::cmp::Reverse(self.last_front[g as usize]))
        })
    }

    /// SWAN: whether the front-end should hand over before it is full, because it is
    /// degraded and a healthy R-group has room.
    fn leave_degraded_front(&self) -> bool {
        self.degraded[self.front as usize] && self.next_front().is_some_and(|g| !self.degraded[g as usize])
    }

    /// The next payload slot for a user write. The caller has checked `user_capacity`.
    fn user_slot(&mut self, plan: &mut IoPlan) -> u64 {
        loop {
            if let Some(c) = self.user_open.as_mut() {
                if c.next < self.geo.payload_slots() {
                    c.next += 1;
                    let (seg, slot) = (c.seg, c.next - 1);
                    let failed = self.failed_member[self.geo.group_of_segment(seg) as usize];
                    if failed.is_some_and(|m| self.geo.slot_location(seg, slot).0 == m) {
                        // The failed member's slot stays unused; its row still gets parity.
                        if self.geo.slot_ends_row(slot) {
                            self.push_parity(plan, seg, slot, IoClass::User);
                        }
                        continue;
                    }
                    return self.geo.pba(seg, slot);
                }
                let seg = c.seg;
                self.user_open = None;
                self.seal(seg, plan, IoClass::User);
            }
            if self.allocatable(self.front) == 0 || self.leave_degraded_front() {
                let next = self.next_front().expect("user_capacity promised a free segment");
                self.front = next;
                self.counters.front_rotations += 1;
                self.last_front[next as usize] = self.counters.front_rotations;
            }
            let seg = self.segs.open(self.front).expect("allocatable segment");
            self.user_open = Some(Cursor { seg, next: 0 });
        }
    }

    /// Up to `max` consecutive slots of `group`'s GC segment: (segment, first slot, count).
    fn gc_take(&mut self, group: u32, max: u32) -> (u64, u32, u32) {
        let g = group as usize;
        let payload = self.geo.payload_slots();
        let c = match self.gc_open[g] {
            Some(c) => c,
            None => {
                let seg = self
                    .segs
                    .open(group)
                    .unwrap_or_else(|| panic!("R-group {group} has no free segment for GC: the reserve was violated"));
                Cursor { seg, next: 0 }
            }
        };
        let count = max.min(payload - c.next);
        let next = c.next + count;
        if next == payload {
            self.gc_open[g] = None;
            self.gc_full[g].push(c.seg);
        } else {
            self.gc_open[g] = Some(Cursor { seg: c.seg, next });
        }
        (c.seg, c.next, count)
    }

    #[inline]
    fn is_live(&self, pba: u64) -> bool {
        self.live[(pba / 64) as usize] & (1 << (pba % 64)) != 0
    }

    #[inline]
    fn set_live(&mut self, pba: u64, live: bool) {
        let (word, bit) = ((pba / 64) as usize, 1u64 << (pba % 64));
        if live {
            self.live[word] |= bit;
        } else {
            self.live[word] &= !bit;
        }
    }

    /// [`LogArray::remap`] of a block known to live at `from` now: the map entry need not
    /// be read first (GC knows where each block it moves lived).
    fn remap_live(&mut self, lba: u64, from: u64, to: u64) {
        if let Some(log) = self.changes.as_mut() {
            log.push(MapChange::Map { lba, pba: to });
        }
        self.segs.remove_valid(self.seg_of(from));
        self.set_live(from, false);
        self.l2p.set(lba, to);
        self.segs.add_valid(self.seg_of(to));
        self.set_live(to, true);
    }

    /// Point `lba` at `pba`, killing its old copy.
    fn remap(&mut self, lba: u64, pba: u64) {
        if let Some(log) = self.changes.as_mut() {
            log.push(MapChange::Map { lba, pba });
        }
        let old = self.l2p.get(lba);
        if old != UNMAPPED {
            self.segs.remove_valid(self.seg_of(old));
            self.set_live(old, false);
        }
        self.l2p.set(lba, pba);
        if pba != UNMAPPED {
            self.segs.add_valid(self.seg_of(pba));
            self.set_live(pba, true);
        }
    }

    /// Plan a TRIM of every free segment (cleared first), for telling SSDs that met the array
    /// only after it was formatted (an emulator aged before serving) which space is free, as
    /// [`Scheme::format`] told the real ones.
    pub fn plan_free_trims(&self, plan: &mut IoPlan) {
        plan.clear();
        for seg in (0..self.geo.segments()).filter(|&seg| self.segs.state(seg) == SegState::Free) {
            let group = self.geo.group_of_segment(seg);
            for member in self.geo.group_members(group) {
                plan.push_merged(MemberIo {
                    member,
                    block: self.geo.row_block(seg, 0),
                    count: self.geo.segment_rows,
                    kind: IoKind::Trim,
                    class: IoClass::Gc,
                });
            }
        }
    }

    /// Start recording [`MapChange`]s (servers journal them; the simulator does not).
    pub fn enable_change_log(&mut self) {
        self.changes.get_or_insert_with(Vec::new);
    }

    /// Move the changes recorded so far into `out`, oldest first.
    pub fn take_changes(&mut self, out: &mut Vec<MapChange>) {
        if let Some(log) = self.changes.as_mut() {
            out.append(log);
        }
    }

    /// The driver has written every summary planned so far: with
    /// [`LogConfig::p2l_in_summaries`] the P2L of sealed segments is dropped.
    pub fn summaries_written(&mut self) {
        let segs = &self.segs;
        self.p2l.forget_unless(|seg| segs.state(seg) == SegState::Open);
    }

    /// The summary content of `segment` as it stands (for executors that write real bytes).
    pub fn summary_of(&self, segment: u64) -> Summary {
        let live: Vec<u64> = if self.p2l.knows(segment) {
            (0..self.geo.payload_slots())
                .map(|slot| {
                    let pba = self.geo.pba(segment, slot);
                    let lba = self.p2l.get(pba);
                    let live = lba != UNMAPPED && lba < self.cfg.volume_blocks && self.l2p.get(lba) == pba;
                    if live {
                        lba
                    } else {
                        UNMAPPED
                    }
                })
                .collect()
        } else {
            // A driver asking after it said the summaries were written: not expected, but the
            // map alone still gives the right answer.
            self.scan_p2l(segment)
        };
        let entries =
            live.iter().map(|&lba| Entry { lba: if lba == UNMAPPED { summary::DEAD } else { lba }, crc: 0 }).collect();
        Summary { segment, seq: self.segs.seq(segment), entries, block_crcs: false }
    }
}

impl Scheme for LogArray {
    fn kind(&self) -> SchemeKind {
        match self.cfg.layout {
            Layout::LogRaid => SchemeKind::LogRaid(self.geo.raid),
            Layout::Swan => SchemeKind::Swan(self.geo.raid),
        }
    }

    fn volume_blocks(&self) -> u64 {
        self.cfg.volume_blocks
    }

    fn largest_write_blocks(&self) -> u64 {
        self.cfg.guaranteed_write_blocks().min(self.cfg.volume_blocks)
    }

    fn members(&self) -> u32 {
        self.geo.members()
    }

    /// A trimmed block is unmapped, and an unmapped block reads as zeroes.
    fn trimmed_reads_zero(&self) -> bool {
        true
    }

    fn format(&mut self, plan: &mut IoPlan) {
        plan.clear();
        let g = &self.geo;
        let blocks = g.segments_per_group * u64::from(g.segment_rows);
        for member in 0..g.members() {
            let mut block = g.member_offset;
            let end = g.member_offset + blocks;
            while block < end {
                let count = (end - block).min(u64::from(u32::MAX)) as u32;
                plan.push(MemberIo { member, block, count, kind: IoKind::Trim, class: IoClass::Gc });
                block += u64::from(count);
            }
        }
    }

    fn prefetch(&self, req: &Request, near: bool) {
        let end = req.lba.saturating_add(u64::from(req.blocks)).min(self.cfg.volume_blocks);
        // One hint per cache line is enough, but a request's entries span a line or two:
        // its first and last entries cover them.
        for lba in [req.lba, end.saturating_sub(1)].into_iter().filter(|&l| l < end) {
            if !near {
                self.l2p.prefetch(lba);
                continue;
            }
            // The entry is cached by now: warm the live bit a write will clear.
            let pba = self.l2p.get(lba);
            if req.op == ReqOp::Write && pba != UNMAPPED {
                if let Some(word) = self.live.get((pba / 64) as usize) {
                    crate::prefetch::prefetch(word);
                }
            }
        }
    }

    fn submit(&mut self, req: &Request, plan: &mut IoPlan) -> Result<Submitted, RequestError> {
        plan.clear();
        check_range(req, self.cfg.volume_blocks)?;
        let n = u64::from(req.blocks);
        match req.op {
            ReqOp::Read => {
                self.counters.user_blocks_read += n;
                let class = self.read_class();
                for i in 0..req.blocks {
                    let pba = self.l2p.get(req.lba + u64::from(i));
                    if pba == UNMAPPED {
                        continue; // never written or trimmed: the executor's reply stays zero
                    }
                    let (seg, slot) = self.geo.split_pba(pba);
                    let (member, block) = self.geo.slot_location(seg, slot);
                    plan.push_merged(MemberIo {
                        member,
                        block,
                        count: 1,
                        kind: IoKind::Read(Dst::User { offset: i }),
                        class,
                    });
                }
            }
            ReqOp::Write => {
                if !self.has_room(n) {
                    self.counters.no_space += 1;
                    self.starved_for = n;
                    return Ok(Submitted::NoSpace);
                }
                self.starved_for = 0;
                self.counters.user_blocks_written += n;
                for i in 0..req.blocks {
                    let lba = req.lba + u64::from(i);
                    let pba = self.user_slot(plan);
                    self.p2l.set(pba, lba);
                    self.remap(lba, pba);
                    let (seg, slot) = self.geo.split_pba(pba);
                    self.push_slot_write(plan, seg, slot, Src::User { offset: i }, IoClass::User);
                }
                if req.fua {
                    push_flushes(plan, self.geo.members());
                }
            }
            ReqOp::Trim => {
                self.counters.user_blocks_trimmed += n;
                for lba in req.lba..req.lba + n {
                    if self.l2p.get(lba) != UNMAPPED {
                        self.remap(lba, UNMAPPED);
                    }
                }
            }
            ReqOp::Flush => push_flushes(plan, self.geo.members()),
        }
        Ok(Submitted::Planned)
    }

    fn start_gc(&mut self, plan: &mut IoPlan) -> Option<GcJobId> {
        self.start_gc_with(plan, &mut NoSummaries)
    }

    fn finish_gc(&mut self, job: GcJobId, plan: &mut IoPlan) {
        self.finish_job(job, plan);
    }

    fn set_failed_member(&mut self, member: u32, failed: bool) {
        if self.geo.raid == crate::geometry::RaidLevel::Raid0 || member >= self.geo.members() {
            return;
        }
        let group = (member / self.geo.ssds_per_rgroup) as usize;
        match (failed, self.failed_member[group]) {
            (true, _) => self.failed_member[group] = Some(member),
            (false, Some(m)) if m == member => self.failed_member[group] = None,
            _ => {}
        }
        self.degraded[group] = self.failed_member[group].is_some();
    }

    fn status(&self) -> Status {
        let gc_groups = self.jobs.values().fold(0u64, |acc, j| acc | 1u64 << (j.group % 64));
        Status {
            front_group: Some(self.front),
            free_segments: self.segs.free_total(),
            gc_groups,
            segments: self.geo.segments(),
        }
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn locate(&self, lba: u64) -> Option<(MemberId, MemberBlock)> {
        if lba >= self.cfg.volume_blocks {
            return None;
        }
        let pba = self.l2p.get(lba);
        (pba != UNMAPPED).then(|| {
            let (seg, slot) = self.geo.split_pba(pba);
            self.geo.slot_location(seg, slot)
        })
    }

    fn check(&self) -> Result<(), String> {
        self.segs.check_buckets()?;
        let mut live = vec![0u32; self.geo.segments() as usize];
        for lba in 0..self.cfg.volume_blocks {
            let pba = self.l2p.get(lba);
            if pba == UNMAPPED {
                continue;
            }
            let (seg, slot) = self.geo.split_pba(pba);
            if slot >= self.geo.payload_slots() {
                return Err(format!("block {lba} mapped into the summary of segment {seg}"));
            }
            if self.p2l.knows(seg) && self.p2l.get(pba) != lba {
                return Err(format!("block {lba} maps to slot {pba} whose P2L says {}", self.p2l.get(pba)));
            }
            match self.segs.state(seg) {
                SegState::Free => return Err(format!("block {lba} lives in free segment {seg}")),
                SegState::Open | SegState::Sealed | SegState::Victim => {}
            }
            live[seg as usize] += 1;
        }
        let bits: u64 = self.live.iter().map(|w| u64::from(w.count_ones())).sum();
        let mapped: u64 = live.iter().map(|&n| u64::from(n)).sum();
        if bits != mapped {
            return Err(format!("{bits} slots marked live but {mapped} blocks mapped"));
        }
        for lba in 0..self.cfg.volume_blocks {
            let pba = self.l2p.get(lba);
            if pba != UNMAPPED && !self.is_live(pba) {
                return Err(format!("block {lba} maps to slot {pba}, which is not marked live"));
            }
        }
        for (seg, &n) in live.iter().enumerate() {
            if self.segs.valid(seg as u64) != n {
                return Err(format!("segment {seg} counts {} valid blocks but holds {n}", self.segs.valid(seg as u64)));
            }
        }
        // Every live block is mapped once: distinct lbas map to distinct slots because each
        // live slot's P2L names exactly one lba (checked above).
        for (g, full) in self.gc_full.iter().enumerate() {
            for &seg in full {
                if self.segs.state(seg) != SegState::Open {
                    return Err(format!("full GC segment {seg} of R-group {g} is {:?}", self.segs.state(seg)));
                }
            }
        }
        Ok(())
    }

    fn heap_bytes(&self) -> u64 {
        self.l2p.heap_bytes()
            + self.p2l.heap_bytes()
            + self.victim_p2l.capacity() as u64 * 8
            + self.live.len() as u64 * 8
            + self.segs.heap_bytes()
            + self.inbound.len() as u64 * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::RaidLevel;

    fn array(layout: Layout, spare_segments: u64) -> LogArray {
        let geo = Geometry::new(3, 2, RaidLevel::Raid0, 8 * 96, 0, 8).unwrap();
        let mut cfg = LogConfig::new(geo, layout, VictimPolicy::Greedy);
        let per_segment = u64::from(geo.payload_slots());
        cfg.limit_volume((geo.segments() - spare_segments) * per_segment);
        LogArray::new(cfg)
    }

    #[test]
    fn free_trims_cover_the_free_segments_only() {
        let mut a = array(Layout::Swan, 20);
        let trimmed = |a: &LogArray| -> u64 {
            let mut plan = IoPlan::new();
            a.plan_free_trims(&mut plan);
            plan.ios().iter().map(|io| u64::from(io.count)).sum()
        };
        let geo = *a.geometry();
        let per_segment = u64::from(geo.segment_rows) * u64::from(geo.ssds_per_rgroup);
        // A new array: everything, as its format trimmed it.
        assert_eq!(trimmed(&a), geo.segments() * per_segment);
        let mut plan = IoPlan::new();
        a.submit(&Request::new(ReqOp::Write, 0, 1), &mut plan).unwrap();
        // The open segment holds a block now.
        assert_eq!(trimmed(&a), (geo.segments() - 1) * per_segment);
    }

    #[test]
    fn swan_gc_target_is_set_within_the_spare() {
        let mut a = array(Layout::Swan, 20);
        a.set_swan_gc_target(1).unwrap();
        assert_eq!(a.config().swan_gc_target, 1);
        a.set_swan_gc_target(20).unwrap();
        assert_eq!(a.config().swan_gc_target, 20);
        // Nothing at all, or above what the spare can hold: refused, naming the bounds, and
        // the target stays.
        for bad in [0, 21] {
            let e = a.set_swan_gc_target(bad).unwrap_err();
            assert!(e.contains("1..=20") && e.contains("20 segments"), "{bad}: {e}");
            assert_eq!(a.config().swan_gc_target, 20);
        }
        // Log-RAID has watermarks, not SWAN's target.
        let mut l = array(Layout::LogRaid, 20);
        assert!(l.set_swan_gc_target(5).unwrap_err().contains("Log-RAID"));
    }
}
