//! What a log-structured array is configured with ([`LogConfig`]): its layout, victim
//! policy and GC tunables, and the volume size they leave, with the reasoning behind each
//! default.

use crate::geometry::Geometry;
use crate::victim::VictimPolicy;
use serde::{Deserialize, Serialize};

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
    ///
    /// [`LogArray::release_deferred`]: super::LogArray::release_deferred
    #[serde(default)]
    pub defer_release: bool,
    /// Keep the P2L of sealed segments only in their summaries on the members, and read a
    /// victim's back through the driver's [`SummarySource`]. A server sets this, so that its
    /// memory is the L2P map and little else; the simulator, whose members hold no bytes,
    /// keeps every slot's in memory.
    ///
    /// [`SummarySource`]: crate::scheme::SummarySource
    #[serde(default)]
    pub p2l_in_summaries: bool,
    /// Every member takes a plan's writes in block order, as a zoned member (which writes
    /// only at a zone's write pointer) must: GC's run then writes each member's parity rows
    /// between its data rows instead of after them. Off, the writes of a GC run go member by
    /// member, data before parity, which conventional SSDs take in any order.
    #[serde(default)]
    pub zoned_members: bool,
    /// RAIZN: a write that leaves a stripe row partly filled logs the row's parity as it
    /// stands in a log after the member's segments ([`PARTIAL_PARITY_LOG_SEGMENTS`] segments
    /// long on every member; `scheme/log/parity_log.rs`), so no filling row is without
    /// redundancy on the members. Off, a filling row's parity waits in memory for the row.
    ///
    /// [`PARTIAL_PARITY_LOG_SEGMENTS`]: super::PARTIAL_PARITY_LOG_SEGMENTS
    #[serde(default)]
    pub partial_parity_log: bool,
}

/// The spare share a log-structured array keeps by default, in both faces: `swan create`
/// lays out this much less volume than the payload, and `swan sim` simulates the same. A log
/// array whose volume is all of its payload collects victims that are almost entirely valid
/// once the volume is full: random 4 KiB writes over a whole swan0 volume with 9 segments of
/// slack moved 26 blocks for every one the user wrote. With 10 % kept back swan0 sits at an
/// array WAF of about 2.8 under uniform random writes (docs/enospc.md), the over-provisioning
/// of a typical enterprise SSD.
pub const DEFAULT_SPARE: f64 = 0.10;

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
            zoned_members: false,
            partial_parity_log: false,
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
    /// the write could wait for space GC cannot free. Not counted: the zeroes a degraded
    /// R-group pads rows with (less than a row per GC job and per sync), which GC gives back
    /// as dead slots.
    pub fn guaranteed_write_blocks(&self) -> u64 {
        self.geometry.payload_blocks().saturating_sub(self.volume_blocks).saturating_sub(self.stranded_slots())
    }
}
