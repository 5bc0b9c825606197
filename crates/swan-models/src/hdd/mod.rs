//! A conventional hard disk in virtual time: one actuator serving one request at a time in
//! arrival order, and for each request the mechanical work it really needs — a seek of
//! `a + b·√distance` (between the track-to-track minimum and the full-stroke maximum), the
//! wait for the platter to bring the first sector under the head (from the platter's
//! angle at the moment the head arrives), and the media transfer at the zone's sectors per
//! track. It answers "when would this read or write of these sectors finish, and how much
//! of it was seek, rotation and transfer?"
//!
//! # Layout
//! LBAs run outer zone first, cylinder by cylinder, and within a cylinder surface by
//! surface. Each track is skewed so that its first sector arrives under the head just as
//! a switch from the previous track completes (head switch within a cylinder, one-cylinder
//! seek between cylinders): a long sequential transfer loses only the switch times.
//!
//! # What is not modelled
//! No on-disk cache (no read-ahead, no write-back: a write completes when it is on the
//! media), no command overhead, no interface transfer time (Ultra320's 320 MB/s exceeds
//! the media rate and overlaps it), and reads and writes share one seek curve. The
//! platter turns from angle 0 at time 0, so runs are deterministic.

mod config;
#[cfg(test)]
mod tests;

pub use config::{atlas_10k_iv_146gb, HddConfig, HddConfigError, SeekCurve, Zone};

use crate::{DevOp, DevOpKind, Device, Nanos};

/// Bytes in one device block (the unit of [`DevOp`]).
pub const BLOCK_BYTES: u32 = 4096;

/// Where a sector lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chs {
    pub zone: usize,
    pub cylinder: u64,
    pub head: u32,
    /// Sector within its track.
    pub sector: u32,
    pub sectors_per_track: u32,
}

/// How one request was served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HddAccess {
    /// When the actuator took the request (after everything queued before it).
    pub start: Nanos,
    /// Seeks and head switches.
    pub seek_ns: Nanos,
    /// Waiting for the platter to bring a wanted sector under the head.
    pub rotate_ns: Nanos,
    /// Sectors passing under the head.
    pub transfer_ns: Nanos,
    pub done: Nanos,
}

/// A request beyond the end of the disk.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("sectors {first}..{end} reach past the disk's {sectors} sectors")]
pub struct HddRangeError {
    pub first: u64,
    pub end: u64,
    pub sectors: u64,
}

/// A conventional disk (see the module documentation).
#[derive(Clone, Debug)]
pub struct Hdd {
    config: HddConfig,
    /// First LBA and first cylinder of each zone, and one past the last.
    zone_sector: Vec<u64>,
    zone_cyl: Vec<u64>,
    seek_a: f64,
    seek_b: f64,
    cylinder: u64,
    head: u32,
    busy_until: Nanos,
}

impl Hdd {
    pub fn new(config: HddConfig) -> Result<Self, HddConfigError> {
        config.validate()?;
        let (mut zone_sector, mut zone_cyl) = (vec![0], vec![0]);
        for z in &config.zones {
            let cyls = u64::from(z.cylinders);
            zone_cyl.push(zone_cyl.last().unwrap() + cyls);
            zone_sector
                .push(zone_sector.last().unwrap() + cyls * u64::from(config.heads) * u64::from(z.sectors_per_track));
        }
        let (seek_a, seek_b) = config.seek_coefficients();
        Ok(Hdd { config, zone_sector, zone_cyl, seek_a, seek_b, cylinder: 0, head: 0, busy_until: 0 })
    }

    pub fn config(&self) -> &HddConfig {
        &self.config
    }

    pub fn sectors(&self) -> u64 {
        *self.zone_sector.last().unwrap()
    }

    pub fn sectors_per_block(&self) -> u64 {
        u64::from(BLOCK_BYTES / self.config.sector_bytes)
    }

    /// Whole 4 KiB blocks on the disk.
    pub fn blocks(&self) -> u64 {
        self.sectors() / self.sectors_per_block()
    }

    /// Cylinder and head the actuator rests on.
    pub fn position(&self) -> (u64, u32) {
        (self.cylinder, self.head)
    }

    /// Seek time for a move of `distance` cylinders.
    pub fn seek_ns(&self, distance: u64) -> Nanos {
        if distance == 0 {
            return 0;
        }
        let t = (self.seek_a + self.seek_b * (distance as f64).sqrt()).round() as Nanos;
        t.clamp(self.config.seek.track_to_track_ns, self.config.seek.full_stroke_ns)
    }

    /// Where LBA `sector` lives.
    ///
    /// # Panics
    /// If `sector` is past the end of the disk.
    pub fn locate(&self, sector: u64) -> Chs {
        assert!(sector < self.sectors(), "sector {sector} past the disk's {}", self.sectors());
        let zone = self.zone_sector.partition_point(|&s| s <= sector) - 1;
        let spt = self.config.zones[zone].sectors_per_track;
        let offset = sector - self.zone_sector[zone];
        let track = offset / u64::from(spt);
        let heads = u64::from(self.config.heads);
        Chs {
            zone,
            cylinder: self.zone_cyl[zone] + track / heads,
            head: (track % heads) as u32,
            sector: (offset % u64::from(spt)) as u32,
            sectors_per_track: spt,
        }
    }

    /// The LBA range `[first, end)` of the track holding `sector`.
    pub fn track_of(&self, sector: u64) -> (u64, u64) {
        let c = self.locate(sector);
        let first = sector - u64::from(c.sector);
        (first, first + u64::from(c.sectors_per_track))
    }

    /// Angle of sector 0 of a track, as the time into a revolution at which it passes the
    /// head: the accumulated skew of every track before it in LBA order.
    fn track_phase(&self, cylinder: u64, head: u32) -> Nanos {
        let hs = u128::from(self.config.head_switch_ns);
        let cs = u128::from(self.seek_ns(1).max(self.config.head_switch_ns));
        let per_cyl = u128::from(self.config.heads - 1) * hs + cs;
        ((u128::from(cylinder) * per_cyl + u128::from(head) * hs) % u128::from(self.config.rev_ns())) as Nanos
    }

    /// Time into a revolution at which sector `k` of a `spt`-sector track begins, from the
    /// track's sector 0.
    fn sector_offset(&self, k: u64, spt: u32) -> Nanos {
        (u128::from(k) * u128::from(self.config.rev_ns()) / u128::from(spt)) as Nanos
    }

    /// Read or write `sectors` sectors from LBA `first`, submitted at `now`.
    pub fn access(&mut self, now: Nanos, first: u64, sectors: u64) -> Result<HddAccess, HddRangeError> {
        let end = first.checked_add(sectors).filter(|&e| e <= self.sectors());
        let Some(end) = end else {
            return Err(HddRangeError { first, end: first.saturating_add(sectors), sectors: self.sectors() });
        };
        let start = now.max(self.busy_until);
        let mut a = HddAccess { start, ..HddAccess::default() };
        let rev = self.config.rev_ns();
        let mut t = start;
        let mut s = first;
        while s < end {
            let c = self.locate(s);
            let n = (end - s).min(u64::from(c.sectors_per_track - c.sector));
            let moved = if c.cylinder != self.cylinder {
                let seek = self.seek_ns(c.cylinder.abs_diff(self.cylinder));
                if c.head != self.head {
                    seek.max(self.config.head_switch_ns)
                } else {
                    seek
                }
            } else if c.head != self.head {
                self.config.head_switch_ns
            } else {
                0
            };
            t += moved;
            a.seek_ns += moved;
            (self.cylinder, self.head) = (c.cylinder, c.head);
            let at =
                self.track_phase(c.cylinder, c.head) + self.sector_offset(u64::from(c.sector), c.sectors_per_track);
            let wait = (at % rev + rev - t % rev) % rev;
            t += wait;
            a.rotate_ns += wait;
            let k = u64::from(c.sector);
            let xfer = self.sector_offset(k + n, c.sectors_per_track) - self.sector_offset(k, c.sectors_per_track);
            t += xfer;
            a.transfer_ns += xfer;
            s += n;
        }
        a.done = t;
        self.busy_until = t;
        Ok(a)
    }

    /// Read or write `count` 4 KiB blocks from block `block`.
    pub fn access_blocks(&mut self, now: Nanos, block: u64, count: u64) -> Result<HddAccess, HddRangeError> {
        let spb = self.sectors_per_block();
        self.access(now, block * spb, count * spb)
    }
}

impl Device for Hdd {
    /// # Panics
    /// If the operation reaches past the end of the disk.
    fn submit(&mut self, now: Nanos, op: DevOp) -> Nanos {
        match op.kind {
            DevOpKind::Read | DevOpKind::Write => {
                self.access_blocks(now, op.block, u64::from(op.count)).unwrap_or_else(|e| panic!("{e}")).done
            }
            // No write cache to flush and nothing to unmap on a conventional disk.
            DevOpKind::Trim | DevOpKind::Flush => now.max(self.busy_until),
        }
    }

    fn busy_until(&self) -> Nanos {
        self.busy_until
    }
}
