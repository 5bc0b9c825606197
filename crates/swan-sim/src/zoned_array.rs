//! Zoned SSDs as an array's members ([`swan_models::zns`]): each segment a scheme lays on a
//! member is `zones_per_segment` zones of it ([`ZonedSpec`]), striped in units of
//! `stripe_blocks`, so that a segment on a small-zone drive can span several dies. The scheme
//! addresses a member's segments back to back; the device's zones sit a zone size apart, so
//! the adapter maps member block `b` of segment `s` into one of zones `s × k .. s × k + k`.
//! With one zone per segment, `b` is block `b − s × segment` of zone `s`. A segment's TRIM,
//! which a log-structured scheme issues when its victim is released, resets its zones; a
//! zone whose share of its segment is shorter than the zone's capacity is finished once
//! that share is written, so it gives back its open and active resources as a full zone does.
//!
//! Nothing here reorders or fixes up a scheme's writes: a write off its zone's write
//! pointer, a TRIM of part of a segment, or more zones open than the drive allows is the
//! scheme's bug, and the device model panics on it. Writes in block order within a segment
//! reach every zone of it in order too, since consecutive stripe units of one zone hold
//! increasing blocks.
//!
//! A write reaches its zone as the command [`ZonePrimitive`] names. Zone Write is one
//! command per zone in flight: a zone's next write is handed to the drive when the previous
//! one has completed, because two in flight may arrive swapped and the second would miss the
//! write pointer (Linux's zone write locking keeps a zone to one, as ZapRAID's Zone Write
//! baseline does). Zone Append lets any number be in flight, the drive placing each at the
//! write pointer as it arrives; here they arrive in the order the scheme planned them, so
//! each lands where the plan put it, which the adapter asserts. A host with appends in
//! flight learns their places on completion (ZapRAID's group layout exists for that); the
//! simulator's scheme knows them in advance, which changes no timing.
//!
//! Zone Write's waiting is [`crate::zone_lock`]'s: a write for a zone whose last write has
//! not completed is held there and handed to the drive when it has, its operation's
//! completion reported to the engine then. Appends under ZapRAID's group layout
//! ([`crate::append_group`]) wait there too: for a group to drain, or for room among the
//! appends a zone may have in flight.

use crate::append_group::GroupedAppends;
use crate::engine::{SimConfig, SimError, ZonedSpec};
use crate::members::{Completion, Dispatched, Members};
use crate::zone_lock::{Piece, ZoneLocks};
use swan_core::io::IoClass;
use swan_models::ssd::{Ssd, SsdStats};
use swan_models::zns::ZnsSsd;
pub use swan_models::zns::ZonePrimitive;
use swan_models::{DevOp, DevOpKind, Device, Nanos};

/// Segments a log-structured scheme keeps partly written on one member at a time: its user
/// segment, a GC segment, and one full of moves awaiting its summary. The model check over
/// zones (`swan-testkit/tests/zoned_model_check.rs`) holds every scheme to it.
pub const SEGMENTS_ACTIVE_PER_MEMBER: u32 = 3;

/// How the scheme's segments lie on a member's zones: pure arithmetic, apart from the device,
/// so that a member's operation is cut into zone pieces while the device is being driven.
#[derive(Clone, Copy)]
struct Layout {
    /// Blocks of one segment on the member.
    segment: u64,
    /// Zones per segment, and the blocks of a stripe unit.
    k: u64,
    unit: u64,
    /// The device's zone size: where each zone starts.
    zone_blocks: u64,
}

impl Layout {
    /// The zone holding member block `block`, the device block it maps to, and how many
    /// blocks from it stay in that zone contiguously (to the end of its stripe unit).
    fn locate(self, block: u64) -> (u32, u64, u64) {
        let (segment, offset) = (block / self.segment, block % self.segment);
        let (unit, within) = (offset / self.unit, offset % self.unit);
        let zone = segment * self.k + unit % self.k;
        let at = (unit / self.k) * self.unit + within;
        (u32::try_from(zone).expect("fewer than 2^32 zones"), zone * self.zone_blocks + at, self.unit - within)
    }

    /// `op`'s blocks cut where they change zone: (zone, device block, blocks).
    fn pieces(self, op: &DevOp) -> impl Iterator<Item = (u32, u64, u32)> {
        let (mut block, end) = (op.block, op.block + u64::from(op.count));
        std::iter::from_fn(move || {
            (block < end).then(|| {
                let (zone, at, room) = self.locate(block);
                let n = room.min(end - block);
                block += n;
                (zone, at, n as u32)
            })
        })
    }

    /// The zones a TRIM of `op` resets, if it covers whole segments.
    fn trimmed(self, op: &DevOp) -> Result<std::ops::Range<u32>, String> {
        let (start, count) = (op.block, u64::from(op.count));
        if start % self.segment != 0 || count % self.segment != 0 || count == 0 {
            return Err(format!(
                "a TRIM of blocks {start}..{} is not whole segments of {}",
                start + count,
                self.segment
            ));
        }
        Ok((start / self.segment * self.k) as u32..((start + count) / self.segment * self.k) as u32)
    }
}

/// One zoned SSD and how the scheme's segments lie on it.
#[derive(Clone)]
struct ZonedMember {
    ssd: ZnsSsd,
    layout: Layout,
    primitive: ZonePrimitive,
    /// When each zone's last write handed to the drive completes: Zone Write's next one
    /// goes then, and a Zone Finish waits for it.
    zone_done: Vec<Nanos>,
    /// ZapRAID's group layout over the appends, if the host keeps one.
    groups: Option<GroupedAppends>,
}

impl ZonedMember {
    /// Whether `zone` holds its whole share of a segment and that share is shorter than
    /// the zone's capacity, so the zone must be finished to give back its resources.
    fn segment_full(&self, zone: u32) -> bool {
        let share = self.layout.segment / self.layout.k;
        share < self.ssd.config().zones.capacity_blocks && self.ssd.zones().zone(zone).write_pointer == share
    }

    fn submit(&mut self, now: Nanos, op: DevOp) -> Nanos {
        let mut done = now;
        match op.kind {
            DevOpKind::Read => {
                for (_, at, n) in self.layout.pieces(&op) {
                    let t = self.ssd.read(now, at, n, op.class).unwrap_or_else(|e| self.broken(e));
                    done = done.max(t);
                }
            }
            DevOpKind::Write => {
                for (zone, at, n) in self.layout.pieces(&op) {
                    done = done.max(self.write(now, zone, at, n, op.class));
                }
            }
            DevOpKind::Trim => {
                for zone in self.layout.trimmed(&op).unwrap_or_else(|e| self.broken(e)) {
                    debug_assert!(self.zone_done[zone as usize] <= now, "a zone reset with a write in flight");
                    done = done.max(self.ssd.reset(now, zone).unwrap_or_else(|e| self.broken(e)));
                    self.zone_done[zone as usize] = 0;
                    if let Some(groups) = &mut self.groups {
                        groups.reset(zone);
                    }
                }
            }
            DevOpKind::Flush => done = self.ssd.flush(now),
        }
        done
    }

    /// `n` blocks at device block `at` of `zone` go to the drive at `now` by this member's
    /// primitive (Zone Write only once the zone's last write has completed); the zone is
    /// finished after them if they complete its share of a segment. Returns when they
    /// complete.
    fn write(&mut self, now: Nanos, zone: u32, at: u64, n: u32, class: IoClass) -> Nanos {
        let done = match self.primitive {
            ZonePrimitive::Write => {
                debug_assert!(self.zone_done[zone as usize] <= now, "two Zone Writes in flight in zone {zone}");
                self.ssd.write(now, at, n, class)
            }
            ZonePrimitive::Append => self.ssd.append(now, zone, n, class).map(|(done, placed)| {
                assert_eq!(placed, at, "a Zone Append landed off the block the scheme planned");
                done
            }),
        };
        let done = done.unwrap_or_else(|e| self.broken(e));
        if let Some(groups) = &mut self.groups {
            groups.sent(zone, at - u64::from(zone) * self.layout.zone_blocks, done);
        }
        let last = &mut self.zone_done[zone as usize];
        *last = (*last).max(done);
        if self.segment_full(zone) {
            self.ssd.finish(done, zone).unwrap_or_else(|e| self.broken(e));
        }
        done
    }

    /// Whether a write may have to wait for its zone: by Zone Write, or by appends in groups.
    fn writes_wait(&self) -> bool {
        self.primitive == ZonePrimitive::Write || self.groups.is_some()
    }

    /// `None` if a write at device block `at` of `zone` may go to the drive at `now`; else
    /// when it may: by Zone Write once the zone's last write has completed, by appends in
    /// groups when [`GroupedAppends::free_at`] says.
    fn free_at(&mut self, zone: u32, at: u64, now: Nanos) -> Option<Nanos> {
        match (self.primitive, &mut self.groups) {
            (ZonePrimitive::Write, _) => Some(self.zone_done[zone as usize]).filter(|&t| t > now),
            (ZonePrimitive::Append, None) => None,
            (ZonePrimitive::Append, Some(groups)) => {
                groups.free_at(zone, at - u64::from(zone) * self.layout.zone_blocks, now)
            }
        }
    }

    /// The pieces of write `op` as they go to the drive: cut where they change zone, and
    /// where a group ends. Owns what it reads, so the member can be driven meanwhile.
    fn write_pieces(&self, op: &DevOp) -> impl Iterator<Item = (u32, u64, u32)> + 'static {
        let layout = self.layout;
        let (zone_blocks, group) = (layout.zone_blocks, self.groups.as_ref().map_or(u64::MAX, |g| g.group_blocks()));
        layout.pieces(op).flat_map(move |(zone, mut at, n)| {
            let end = at + u64::from(n);
            std::iter::from_fn(move || {
                (at < end).then(|| {
                    let offset = at - u64::from(zone) * zone_blocks;
                    let cut = end.min(at.saturating_add(group - offset % group));
                    let piece = (zone, at, (cut - at) as u32);
                    at = cut;
                    piece
                })
            })
        })
    }

    fn apply_untimed(&mut self, op: DevOp) {
        match op.kind {
            DevOpKind::Write => {
                for (zone, at, n) in self.layout.pieces(&op) {
                    self.ssd.write_untimed(at, n).unwrap_or_else(|e| self.broken(e));
                    if self.segment_full(zone) {
                        self.ssd.finish_untimed(zone).unwrap_or_else(|e| self.broken(e));
                    }
                }
            }
            DevOpKind::Trim => {
                for zone in self.layout.trimmed(&op).unwrap_or_else(|e| self.broken(e)) {
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
    /// Zone Writes waiting for their zones.
    locks: ZoneLocks,
}

impl ZonedArray {
    /// `members` zoned SSDs as `spec` describes, holding `cfg`'s array.
    pub fn new(cfg: &SimConfig, spec: &ZonedSpec, members: u32) -> Result<Self, SimError> {
        let (zoned, segment) = (&spec.ssd, u64::from(cfg.array.segment_rows));
        let (k, unit) = (u64::from(spec.zones_per_segment), u64::from(spec.stripe_blocks));
        let refuse = |why: String| Err(SimError::Config(why));
        if k == 0 || unit == 0 {
            return refuse("a segment needs at least one zone and a stripe unit of at least one block".into());
        }
        let unit = if k == 1 { segment } else { unit };
        if k > 1 && segment % (k * unit) != 0 {
            return refuse(format!(
                "a segment of {segment} blocks per SSD is not whole rows of {k} zones × {unit}-block stripe units"
            ));
        }
        let zones = zoned.zones;
        if segment / k > zones.capacity_blocks {
            return refuse(format!(
                "a segment of {segment} blocks per SSD over {k} zone(s) does not fit a {} zone of {} writable blocks",
                zoned.name, zones.capacity_blocks
            ));
        }
        // A partial-parity log (RAIZN's) keeps one zone more active: the one it appends to.
        let log_zones = u64::from(cfg.array.tuning.partial_parity_log) * k;
        let active = u64::from(SEGMENTS_ACTIVE_PER_MEMBER) * k + log_zones;
        if let Some(max) = zones.max_active.filter(|&max| u64::from(max) < active) {
            return refuse(format!(
                "segments over {k} zone(s) keep up to {active} zones active on an SSD ({SEGMENTS_ACTIVE_PER_MEMBER} segments partly written{}); the {} model allows {max}",
                if log_zones > 0 { ", and the partial-parity log" } else { "" },
                zoned.name
            ));
        }
        let needed = cfg.array.member_blocks.div_ceil(segment) * k;
        if needed > u64::from(zones.zones) {
            return refuse(format!(
                "members of {} blocks in segments of {segment} over {k} zone(s) need {needed} zones; the {} model has {}",
                cfg.array.member_blocks, zoned.name, zones.zones
            ));
        }
        let ssd = ZnsSsd::new(zoned.clone()).map_err(|e| SimError::Config(e.to_string()))?;
        let layout = Layout { segment, k, unit, zone_blocks: zones.zone_blocks };
        let zone_done = vec![0; zones.zones as usize];
        let groups = match (spec.groups, spec.primitive) {
            (None, _) => None,
            (Some(g), ZonePrimitive::Append) if g.stripes > 0 && g.in_flight > 0 => {
                Some(GroupedAppends::new(g, zones.zones))
            }
            (Some(_), ZonePrimitive::Append) => {
                return refuse("a group layout needs at least one stripe a group and one append in flight".into())
            }
            (Some(_), ZonePrimitive::Write) => {
                return refuse("a group layout orders Zone Appends; Zone Write keeps one write per zone already".into())
            }
        };
        let member = ZonedMember { ssd, layout, primitive: spec.primitive, zone_done, groups };
        Ok(Self { members: vec![member; members as usize], locks: ZoneLocks::default() })
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

    /// Only while no write waits for its zone: the engine submits through
    /// [`Members::submit_tracked`].
    fn submit(&mut self, member: u32, now: Nanos, op: DevOp) -> Nanos {
        match self.submit_tracked(member, now, op, u64::MAX) {
            Completion::At(done) => done,
            Completion::Later => {
                panic!("a Zone Write had to wait for its zone, and this caller cannot be told when it completes")
            }
        }
    }

    fn submit_tracked(&mut self, member: u32, now: Nanos, op: DevOp, token: u64) -> Completion {
        let m = &mut self.members[member as usize];
        if op.kind != DevOpKind::Write || !m.writes_wait() {
            return Completion::At(m.submit(now, op));
        }
        // Each piece goes now if its zone lets it and nothing waits for it; else it waits.
        let (mut done, mut held) = (now, None);
        for (zone, at, n) in m.write_pieces(&op) {
            // Behind writes already waiting, it goes when they have (the time is theirs).
            let wait = if self.locks.waiting(member, zone) { Some(now) } else { m.free_at(zone, at, now) };
            if let Some(free_at) = wait {
                let id = *held.get_or_insert_with(|| self.locks.open(token));
                self.locks.hold(id, (member, zone), free_at, Piece::new(at, n, op.class));
            } else {
                done = done.max(m.write(now, zone, at, n, op.class));
            }
        }
        match held {
            None => Completion::At(done),
            Some(id) => {
                self.locks.sent(id, done);
                Completion::Later
            }
        }
    }

    fn completed(&mut self) -> Option<Dispatched> {
        self.locks.completed()
    }

    fn wakeup(&mut self) -> Option<Nanos> {
        self.locks.wakeup()
    }

    /// Zones whose last write has completed take their next.
    fn wake(&mut self, now: Nanos) {
        while let Some((member, zone, piece)) = self.locks.next_free(now) {
            let m = &mut self.members[member as usize];
            // Only a check: free_at's pruning is repeated by the call below, so release builds skip it.
            debug_assert_eq!(m.free_at(zone, piece.at, now), None, "a held write was woken at {now}, before its time");
            let done = m.write(now, zone, piece.at, piece.n, piece.class);
            let next = self.locks.head(member, zone).map(|p| m.free_at(zone, p.at, now).unwrap_or(now));
            self.locks.went((member, zone), piece, now, done, next);
        }
    }

    fn read_wait(&self, member: u32, now: Nanos, block: u64, count: u32, class: IoClass) -> Nanos {
        let m = &self.members[member as usize];
        let op = DevOp { kind: DevOpKind::Read, block, count, class };
        m.layout.pieces(&op).map(|(_, at, n)| m.ssd.read_wait(now, at, n, class)).max().unwrap_or(0)
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
        u64::from(m.ssd.config().zones.zones) / m.layout.k * m.layout.segment
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
