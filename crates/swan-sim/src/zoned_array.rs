//! Zoned SSDs as an array's members ([`swan_models::zns`]): each segment a scheme lays on a
//! member is one zone of it. The scheme addresses a member's segments back to back, a
//! zone's capacity apart at most; the device's zones sit a zone size apart, so a member
//! block `b` of segment `s` is block `b − s × segment` of zone `s`. A segment's TRIM, which
//! a log-structured scheme issues when its victim is released, is that zone's reset; a
//! segment shorter than the zone's capacity is finished when its last block is written,
//! so it gives back its open and active resources as a full zone does.
//!
//! Nothing here reorders or fixes up a scheme's writes: a write off its zone's write
//! pointer, a TRIM of part of a segment, or more zones open than the drive allows is the
//! scheme's bug, and the device model panics on it.

use crate::engine::{SimConfig, SimError};
use crate::members::Members;
use swan_core::io::IoClass;
use swan_models::ssd::{Ssd, SsdStats};
use swan_models::zns::{ZnsConfig, ZnsSsd};
use swan_models::{DevOp, DevOpKind, Device, Nanos};

/// One zoned SSD and the segment size the scheme lays on it.
#[derive(Clone)]
struct ZonedMember {
    ssd: ZnsSsd,
    /// Blocks of one segment on this member (at most a zone's capacity).
    segment: u64,
}

impl ZonedMember {
    /// The segment holding member block `block`, and the device block it maps to.
    fn locate(&self, block: u64) -> (u32, u64) {
        let segment = block / self.segment;
        let zone = u32::try_from(segment).expect("fewer than 2^32 segments");
        (zone, self.ssd.config().zones.start(zone) + block % self.segment)
    }

    /// `op`'s blocks cut at segment boundaries: (zone, device block, blocks).
    fn pieces(&self, op: &DevOp) -> impl Iterator<Item = (u32, u64, u32)> + '_ {
        let (mut block, end) = (op.block, op.block + u64::from(op.count));
        std::iter::from_fn(move || {
            (block < end).then(|| {
                let (zone, at) = self.locate(block);
                let n = (self.segment - block % self.segment).min(end - block);
                block += n;
                (zone, at, n as u32)
            })
        })
    }

    /// The zones a TRIM of `op` resets: it must cover whole segments.
    fn trimmed(&self, op: &DevOp) -> std::ops::Range<u32> {
        let (start, count) = (op.block, u64::from(op.count));
        if start % self.segment != 0 || count % self.segment != 0 || count == 0 {
            self.broken(format!(
                "a TRIM of blocks {start}..{} is not whole segments of {}",
                start + count,
                self.segment
            ));
        }
        (start / self.segment) as u32..((start + count) / self.segment) as u32
    }

    /// Whether `zone` holds a segment shorter than its capacity that is now fully written.
    fn segment_full(&self, zone: u32) -> bool {
        let z = self.ssd.zones().zone(zone);
        self.segment < self.ssd.config().zones.capacity_blocks && z.write_pointer == self.segment
    }

    fn submit(&mut self, now: Nanos, op: DevOp) -> Nanos {
        let mut done = now;
        match op.kind {
            DevOpKind::Read => {
                for (_, at, n) in self.pieces(&op).collect::<Vec<_>>() {
                    let t = self.ssd.read(now, at, n, op.class).unwrap_or_else(|e| self.broken(e));
                    done = done.max(t);
                }
            }
            DevOpKind::Write => {
                for (zone, at, n) in self.pieces(&op).collect::<Vec<_>>() {
                    let t = self.ssd.write(now, at, n, op.class).unwrap_or_else(|e| self.broken(e));
                    done = done.max(t);
                    if self.segment_full(zone) {
                        self.ssd.finish(now, zone).unwrap_or_else(|e| self.broken(e));
                    }
                }
            }
            DevOpKind::Trim => {
                for zone in self.trimmed(&op) {
                    done = done.max(self.ssd.reset(now, zone).unwrap_or_else(|e| self.broken(e)));
                }
            }
            DevOpKind::Flush => done = self.ssd.flush(now),
        }
        done
    }

    fn apply_untimed(&mut self, op: DevOp) {
        match op.kind {
            DevOpKind::Write => {
                for (zone, at, n) in self.pieces(&op).collect::<Vec<_>>() {
                    self.ssd.write_untimed(at, n).unwrap_or_else(|e| self.broken(e));
                    if self.segment_full(zone) {
                        self.ssd.finish_untimed(zone).unwrap_or_else(|e| self.broken(e));
                    }
                }
            }
            DevOpKind::Trim => {
                for zone in self.trimmed(&op) {
                    self.ssd.reset_untimed(zone).unwrap_or_else(|e| self.broken(e));
                }
            }
            DevOpKind::Read | DevOpKind::Flush => {}
        }
    }

    fn broken(&self, e: impl std::fmt::Display) -> ! {
        panic!("{}: the scheme broke the zoned device's contract: {e}", self.ssd.config().name)
    }
}

/// The members of an array over zoned SSDs.
#[derive(Clone)]
pub struct ZonedArray {
    members: Vec<ZonedMember>,
}

impl ZonedArray {
    /// `members` zoned SSDs like `zoned`, each holding one segment of `cfg`'s array per zone.
    pub fn new(cfg: &SimConfig, zoned: &ZnsConfig, members: u32) -> Result<Self, SimError> {
        let segment = u64::from(cfg.array.segment_rows);
        let zones = zoned.zones;
        if segment > zones.capacity_blocks {
            return Err(SimError::Config(format!(
                "a segment of {segment} blocks per SSD does not fit a {} zone of {} writable blocks",
                zoned.name, zones.capacity_blocks
            )));
        }
        let needed = cfg.array.member_blocks.div_ceil(segment);
        if needed > u64::from(zones.zones) {
            return Err(SimError::Config(format!(
                "members of {} blocks in segments of {segment} need {needed} zones; the {} model has {}",
                cfg.array.member_blocks, zoned.name, zones.zones
            )));
        }
        let ssd = ZnsSsd::new(zoned.clone()).map_err(|e| SimError::Config(e.to_string()))?;
        Ok(Self { members: vec![ZonedMember { ssd, segment }; members as usize] })
    }

    /// Member `member`'s zoned SSD (its zone report and counts).
    pub fn ssd(&self, member: u32) -> &ZnsSsd {
        &self.members[member as usize].ssd
    }
}

impl Members for ZonedArray {
    #[inline]
    fn count(&self) -> usize {
        self.members.len()
    }

    #[inline]
    fn submit(&mut self, member: u32, now: Nanos, op: DevOp) -> Nanos {
        self.members[member as usize].submit(now, op)
    }

    fn read_wait(&self, member: u32, now: Nanos, block: u64, count: u32, class: IoClass) -> Nanos {
        let m = &self.members[member as usize];
        let op = DevOp { kind: DevOpKind::Read, block, count, class };
        m.pieces(&op).map(|(_, at, n)| m.ssd.read_wait(now, at, n, class)).max().unwrap_or(0)
    }

    fn busy_until(&self, member: u32) -> Nanos {
        self.members[member as usize].ssd.busy_until()
    }

    fn apply_untimed(&mut self, member: u32, op: DevOp) {
        self.members[member as usize].apply_untimed(op);
    }

    fn reset_stats(&mut self) {
        self.members.iter_mut().for_each(|m| m.ssd.reset_stats());
    }

    fn stats(&self, member: u32) -> &SsdStats {
        self.members[member as usize].ssd.stats()
    }

    /// None: zoned SSDs have no GC of their own for Harmonia to coordinate.
    fn ssds(&mut self) -> &mut [Ssd] {
        &mut []
    }

    fn slow_ns(&mut self, _member: u32, _now: Nanos) -> Nanos {
        0
    }

    fn busy_fraction(&self, member: u32, elapsed: Nanos) -> f64 {
        self.members[member as usize].ssd.die_busy_fraction(elapsed)
    }

    fn user_blocks(&self, member: u32) -> u64 {
        let m = &self.members[member as usize];
        u64::from(m.ssd.config().zones.zones) * m.segment
    }

    /// None: the host maps every block; the drive keeps a descriptor per zone.
    fn map_dram_bytes(&self, _member: u32) -> u64 {
        0
    }

    fn model_bytes(&self, member: u32) -> u64 {
        self.members[member as usize].ssd.model_bytes()
    }
}

#[cfg(test)]
#[path = "zoned_array_tests.rs"]
mod tests;
