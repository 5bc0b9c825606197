//! `--emulate zn540|pm1731a` over zoned members: the simulator's zoned SSD model
//! ([`ZnsSsd`]) in front of each emulated zoned member.
//!
//! # Why
//! A zoned member is a file that keeps the zoned contract (`member/zoned.rs`) at the speed
//! of whatever holds the file. The model gives it a zoned drive's time: its dies, its
//! controller's intake, its write buffers, a reset's erases. The member stays the judge of
//! the contract; the model only times what the member took.
//!
//! # How it lies over the member
//! - The member's conventional blocks (the array's metadata) are the model's in-place area
//!   ([`ZnsSsd::write_in_place`]); its sequential zones are the model's zones, one for one,
//!   with the member's zone size. A drive's NAND, dies per zone and command times are kept
//!   ([`swan_models::zns::ZnsConfig::with_geometry`]): a ZN540's zone is striped over all its
//!   dies whatever its size, a PM1731a's sits on one die.
//! - **One Zone Write per zone at a time**, as the simulator's zoned array sends them and as
//!   Linux's zoned write lock lets a real drive see them: the engine holds a write until its
//!   zone's last write has completed on the model (`engine/zone_holds.rs`); a write given
//!   early all the same (the engine stopping) starts no sooner here.
//! - A TRIM resets the zones it covers; the array trims only whole segments, and a segment
//!   is one zone of each member.
//! - The array resets, pads and finishes zones while it opens, before the model is told of
//!   anything: [`ZonedModel::take_report`] then sets the model's zones to the member's.
//!
//! The model keeps the drive's open and active limits. The array keeps at most three zones
//! active on a member, within every preset's; a command the model refuses all the same (it
//! never should: the member took it) is timed as an in-place write and counted, for `swan
//! status` and the tests to see.

use swan_core::io::IoClass;
use swan_models::zns::zones::{Zone, ZoneCondition, ZoneGeometry};
use swan_models::zns::{ZnsConfig, ZnsSsd};
use swan_models::{DevOpKind, Device, Nanos};

use crate::member::ZonedLayout;

/// One zoned member's model. See the [module docs](self).
#[derive(Clone)]
pub(super) struct ZonedModel {
    dev: ZnsSsd,
    /// The member's blocks: its conventional ones (the in-place area), then its zones.
    layout: ZonedLayout,
    /// When each zone's last write completes on the model: its next one goes then.
    zone_done: Vec<Nanos>,
    /// Commands the model's contract refused and that were timed in place instead.
    refused: u64,
}

impl ZonedModel {
    /// `drive` over `layout`'s zones, every zone empty, with the drive's open and active
    /// limits; or why `layout` cannot be laid over it.
    pub(super) fn new(drive: &ZnsConfig, layout: &ZonedLayout) -> Result<Self, String> {
        let member = layout.zones;
        let geometry = ZoneGeometry { max_open: drive.zones.max_open, max_active: drive.zones.max_active, ..member };
        let dev = ZnsSsd::new(drive.with_geometry(geometry)).map_err(|e| e.to_string())?;
        Ok(Self { dev, layout: *layout, zone_done: vec![0; member.zones as usize], refused: 0 })
    }

    /// Blocks of the member: the in-place area and the zones.
    pub(super) fn blocks(&self) -> u64 {
        self.layout.member_blocks()
    }

    /// Sets every zone to what the member's zone report says (after the array's open wrote
    /// and reset zones behind the model's back). Untimed.
    pub(super) fn take_report(&mut self, report: &[Zone]) {
        for (zone, z) in (0u32..).zip(report) {
            let full = z.condition == ZoneCondition::Full;
            if self.dev.take_zone_untimed(zone, z.written.min(z.write_pointer), full).is_err() {
                self.refused += 1;
            }
            if let Some(done) = self.zone_done.get_mut(zone as usize) {
                *done = 0;
            }
        }
    }

    /// Times one member operation arriving at model time `t`; when it completes.
    pub(super) fn submit(&mut self, t: Nanos, kind: DevOpKind, block: u64, count: u32, class: IoClass) -> Nanos {
        match kind {
            DevOpKind::Flush => self.dev.flush(t),
            DevOpKind::Read => {
                self.pieces(block, count).into_iter().map(|p| self.read_piece(t, p, class)).fold(t, Nanos::max)
            }
            DevOpKind::Write => {
                self.pieces(block, count).into_iter().map(|p| self.write_piece(t, p, class)).fold(t, Nanos::max)
            }
            DevOpKind::Trim => {
                let g = self.dev.config().zones;
                let mut done = t;
                for (zone, _, _) in self.pieces(block, count) {
                    let Some(zone) = zone else { continue };
                    // Reset once the zone's last write is in, as the array resets a victim
                    // only after its last write completed.
                    let at = t.max(self.zone_done[zone as usize]);
                    done = done.max(match self.dev.reset(at, zone) {
                        Ok(done) => done,
                        Err(_) => self.refused_in_place(at, g.start(zone), 1, class),
                    });
                    self.zone_done[zone as usize] = 0;
                }
                done
            }
        }
    }

    fn read_piece(&mut self, t: Nanos, (zone, at, n): Piece, class: IoClass) -> Nanos {
        match zone {
            None => self.dev.read_in_place(t, at, n, class),
            Some(_) => self.dev.read(t, at, n, class).unwrap_or_else(|_| self.refused_in_place(t, at, n, class)),
        }
    }

    fn write_piece(&mut self, t: Nanos, (zone, at, n): Piece, class: IoClass) -> Nanos {
        let Some(zone) = zone else { return self.dev.write_in_place(t, at, n, class) };
        let start = t.max(self.zone_done[zone as usize]);
        let done = self.dev.write(start, at, n, class).unwrap_or_else(|_| self.refused_in_place(start, at, n, class));
        self.zone_done[zone as usize] = done;
        done
    }

    fn refused_in_place(&mut self, t: Nanos, at: u64, n: u32, class: IoClass) -> Nanos {
        self.refused += 1;
        self.dev.write_in_place(t, at, n, class)
    }

    /// `count` blocks from member block `block` cut where they change zone: (zone, block on
    /// the model, blocks), the zone `None` for the in-place area (whose blocks count from
    /// its start). Blocks past the member are dropped.
    fn pieces(&self, block: u64, count: u32) -> Vec<Piece> {
        let (conventional, zones) = (self.layout.conventional_blocks, self.layout.zones);
        let end = block.saturating_add(u64::from(count)).min(self.blocks());
        let (mut at, mut out) = (block, Vec::new());
        while at < end {
            let (zone, on_model, n) = match at.checked_sub(conventional) {
                None => (None, at, (conventional - at).min(end - at)),
                Some(b) => {
                    let zone = zones.zone_of(b).expect("a block before the member's end");
                    (Some(zone), b, (zones.start(zone) + zones.zone_blocks - b).min(end - at))
                }
            };
            // Fits in u32: at most `count`.
            out.push((zone, on_model, n as u32));
            at += n;
        }
        out
    }

    /// The zone holding member block `block` (None in the in-place area).
    pub(super) fn zone_of(&self, block: u64) -> Option<u32> {
        self.layout.zone_of(block)
    }

    /// When `zone`'s last write completes on the model (0 if none since its reset).
    pub(super) fn zone_done(&self, zone: u32) -> Nanos {
        self.zone_done.get(zone as usize).copied().unwrap_or(0)
    }

    /// How long a one-block read at `block` arriving at `t` waits for its die.
    pub(super) fn read_wait(&self, t: Nanos, block: u64, class: IoClass) -> Nanos {
        match block.checked_sub(self.layout.conventional_blocks) {
            Some(b) => self.dev.read_wait(t, b, 1, class),
            None => 0,
        }
    }

    pub(super) fn busy_until(&self) -> Nanos {
        self.dev.busy_until()
    }

    pub(super) fn device(&self) -> &ZnsSsd {
        &self.dev
    }

    pub(super) fn refused(&self) -> u64 {
        self.refused
    }

    /// Fraction of the zones that are empty: the zoned counterpart of an SSD's free blocks.
    pub(super) fn empty_fraction(&self) -> f64 {
        let zones = self.dev.zones();
        let n = self.dev.config().zones.zones;
        let empty = (0..n).filter(|&z| zones.zone(z).condition == ZoneCondition::Empty).count();
        empty as f64 / f64::from(n.max(1))
    }
}

/// (zone, block on the model, blocks): see [`ZonedModel::pieces`].
type Piece = (Option<u32>, u64, u32);

#[cfg(test)]
#[path = "zoned_tests.rs"]
mod tests;
