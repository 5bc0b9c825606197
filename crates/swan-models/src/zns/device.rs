//! A zoned SSD in virtual time: [`Zones`] says whether a command keeps the contract, the
//! conventional SSD's NAND timing ([`crate::ssd`]) says when its work is done. There is no
//! mapping table and no GC: a zone's page `o` lives on a die fixed by the zone and `o`
//! ([`ZnsConfig::die_of`]), and space comes back only by a Zone Reset, which erases.
//!
//! A command that breaks the contract is refused before anything is timed and changes
//! nothing. Through [`Device::submit`], which cannot return an error, it panics: a scheme
//! must never cause one, and the model checks assert it.

use super::config::{ZnsConfig, ZnsConfigError};
use super::zones::{Zone, ZoneError, Zones};
use crate::ssd::{Prio, SsdStats, Timing, WriteBuffer};
use crate::{DevOp, DevOpKind, Device, IoClass, Nanos};
use std::collections::HashMap;

/// The zone commands a zoned SSD carried out, counted since it was made. Its pages,
/// erases (a reset's, one per die the zone had written) and latencies are counted as an
/// SSD's ([`ZnsSsd::stats`]), so an array's reports read them alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ZnsStats {
    pub appends: u64,
    pub resets: u64,
    pub finishes: u64,
}

/// One zoned SSD. See the [module docs](self).
#[derive(Clone)]
pub struct ZnsSsd {
    config: ZnsConfig,
    zones: Zones,
    timing: Timing,
    /// The write buffer of each zone written since its last reset (with
    /// [`ZnsConfig::zone_buffer_pages`]).
    buffers: HashMap<u32, WriteBuffer>,
    stats: SsdStats,
    zone_stats: ZnsStats,
    /// Latest completion returned; with the media horizon, what `busy_until` reports.
    last_done: Nanos,
    /// When the controller is free to take in the next write or append
    /// ([`ZnsConfig::intake`]).
    intake_free: Nanos,
}

impl ZnsSsd {
    /// A fresh device, every zone empty, or why `config` cannot be modelled.
    pub fn new(config: ZnsConfig) -> Result<Self, ZnsConfigError> {
        config.validate()?;
        let zones = Zones::new(config.zones)
            .map_err(|e| ZnsConfigError { config: config.name.clone(), problem: e.to_string() })?;
        Ok(Self {
            timing: Timing::of(&config.nand()),
            zones,
            buffers: HashMap::new(),
            stats: SsdStats::default(),
            zone_stats: ZnsStats::default(),
            last_done: 0,
            intake_free: 0,
            config,
        })
    }

    pub fn config(&self) -> &ZnsConfig {
        &self.config
    }

    /// The zones' conditions and write pointers (a zone report).
    pub fn zones(&self) -> &Zones {
        &self.zones
    }

    /// Pages, erases and latencies, in an SSD's terms (no GC copies: there is no GC).
    pub fn stats(&self) -> &SsdStats {
        &self.stats
    }

    pub fn zone_stats(&self) -> &ZnsStats {
        &self.zone_stats
    }

    /// Forgets the counts and latencies (after an untimed fill), keeping the zones.
    pub fn reset_stats(&mut self) {
        self.stats.reset();
        self.zone_stats = ZnsStats::default();
    }

    /// Host memory the model holds: one zone descriptor per zone, no mapping table.
    pub fn model_bytes(&self) -> u64 {
        u64::from(self.config.zones.zones) * std::mem::size_of::<Zone>() as u64
    }

    /// Mean fraction of its dies' time the flash was busy over `elapsed` from time 0.
    pub fn die_busy_fraction(&self, elapsed: Nanos) -> f64 {
        if elapsed == 0 {
            return 0.0;
        }
        self.timing.die_busy_ns() as f64 / (elapsed as f64 * f64::from(self.config.units()))
    }

    /// Zone Write: `count` blocks at `block`, its zone's write pointer. Returns when it
    /// completes: once its pages are in the zone's buffer, or programmed without one.
    pub fn write(&mut self, now: Nanos, block: u64, count: u32, class: IoClass) -> Result<Nanos, ZoneError> {
        self.zones.write(block, u64::from(count))?;
        let g = self.config.zones;
        let zone = g.zone_of(block).expect("a block the write just landed on");
        let start = self.take_in(now, self.config.intake.write_ns);
        let done = self.program(start, zone, block - g.start(zone), count, class) + self.config.write_cmd_ns;
        Ok(self.completed(now, done))
    }

    /// Zone Append: `count` blocks wherever `zone`'s write pointer is. Returns when it
    /// completes and the block it was placed at.
    pub fn append(&mut self, now: Nanos, zone: u32, count: u32, class: IoClass) -> Result<(Nanos, u64), ZoneError> {
        let at = self.zones.append(zone, u64::from(count))?;
        self.zone_stats.appends += 1;
        let start = self.take_in(now, self.config.intake.append_ns);
        let done =
            self.program(start, zone, at - self.config.zones.start(zone), count, class) + self.config.append_cmd_ns;
        Ok((self.completed(now, done), at))
    }

    /// When a command arriving at `now` is taken in, the controller busy `ns` with it.
    fn take_in(&mut self, now: Nanos, ns: Nanos) -> Nanos {
        let start = now.max(self.intake_free) + ns;
        self.intake_free = start;
        start
    }

    /// A write or append that arrived at `now` completes at `done`.
    fn completed(&mut self, now: Nanos, done: Nanos) -> Nanos {
        self.stats.write_latency_us.saturating_record((done - now) / 1000);
        self.finish_at(done)
    }

    /// Hands `count` pages of `zone` from `offset` to its buffer (or its dies): when the
    /// last is in.
    fn program(&mut self, now: Nanos, zone: u32, offset: u64, count: u32, class: IoClass) -> Nanos {
        let prio = Prio::of(class);
        let mut done = now;
        for i in 0..u64::from(count) {
            let die = self.config.die_of(zone, offset + i);
            done = done.max(match self.config.zone_buffer_pages {
                0 => self.timing.write_page(now, die, prio),
                pages => {
                    let buffer = self.buffers.entry(zone).or_insert_with(|| WriteBuffer::new(pages));
                    self.timing.write_page_via(buffer, now, die, prio).0
                }
            });
        }
        self.stats.host_pages_written += u64::from(count);
        done
    }

    /// Zone Write without time: the untimed fill before a run moves the write pointers.
    pub fn write_untimed(&mut self, block: u64, count: u32) -> Result<(), ZoneError> {
        self.zones.write(block, u64::from(count))?;
        self.stats.host_pages_written += u64::from(count);
        Ok(())
    }

    /// Zone Finish without time (the untimed fill).
    pub fn finish_untimed(&mut self, zone: u32) -> Result<(), ZoneError> {
        self.zones.finish(zone)
    }

    /// Zone Reset without time (the untimed fill).
    pub fn reset_untimed(&mut self, zone: u32) -> Result<(), ZoneError> {
        self.zones.reset(zone)?;
        self.buffers.remove(&zone);
        Ok(())
    }

    /// Reads `count` blocks from `block`; pages past a zone's written part cost no media
    /// time (they hold nothing).
    pub fn read(&mut self, now: Nanos, block: u64, count: u32, class: IoClass) -> Result<Nanos, ZoneError> {
        let g = self.config.zones;
        if count == 0 || block.saturating_add(u64::from(count)) > g.blocks() {
            return Err(ZoneError::OutOfRange { block, count: u64::from(count) });
        }
        let prio = Prio::of(class);
        let mut done = now;
        for b in block..block + u64::from(count) {
            if let Some(die) = self.written_die(b) {
                done = done.max(self.timing.read_page(now, die, prio));
            }
        }
        self.stats.host_pages_read += u64::from(count);
        let done = self.finish_at(done + self.config.read_cmd_ns);
        self.stats.read_latency_us.saturating_record((done - now) / 1000);
        Ok(done)
    }

    /// How long a read of `count` blocks from `block`, submitted at `now`, would wait
    /// before its slowest page's die starts it. Changes nothing.
    pub fn read_wait(&self, now: Nanos, block: u64, count: u32, class: IoClass) -> Nanos {
        let end = block.saturating_add(u64::from(count)).min(self.config.zones.blocks());
        let prio = Prio::of(class);
        (block..end)
            .filter_map(|b| self.written_die(b))
            .map(|die| self.timing.read_wait(now, die, prio))
            .max()
            .unwrap_or(0)
    }

    /// The die holding `block`, if the device has it and it was written since its zone's
    /// last reset (past that, a read costs no media time).
    fn written_die(&self, block: u64) -> Option<u32> {
        let zone = self.config.zones.zone_of(block)?;
        let offset = block - self.config.zones.start(zone);
        (offset < self.zones.zone(zone).written).then(|| self.config.die_of(zone, offset))
    }

    /// A write to blocks beside the zones that the host rewrites in place (the conventional
    /// zones a host-managed drive offers, where a server keeps its metadata): block `b`'s
    /// page is programmed on die `b mod dies`, with no buffer, mapping or GC modelled for
    /// them, so the area must stay small beside the zones. `block` counts from the area's
    /// start; the zones are not touched.
    pub fn write_in_place(&mut self, now: Nanos, block: u64, count: u32, class: IoClass) -> Nanos {
        let (prio, units) = (Prio::of(class), u64::from(self.config.units()));
        let start = self.take_in(now, self.config.intake.write_ns);
        let mut done = start;
        for b in block..block + u64::from(count) {
            done = done.max(self.timing.write_page(start, (b % units) as u32, prio));
        }
        self.stats.host_pages_written += u64::from(count);
        self.completed(now, done + self.config.write_cmd_ns)
    }

    /// A read of blocks in the in-place area ([`ZnsSsd::write_in_place`]): every page is
    /// sensed, as the area holds no record of what was written.
    pub fn read_in_place(&mut self, now: Nanos, block: u64, count: u32, class: IoClass) -> Nanos {
        let (prio, units) = (Prio::of(class), u64::from(self.config.units()));
        let mut done = now;
        for b in block..block + u64::from(count) {
            done = done.max(self.timing.read_page(now, (b % units) as u32, prio));
        }
        self.stats.host_pages_read += u64::from(count);
        let done = self.finish_at(done + self.config.read_cmd_ns);
        self.stats.read_latency_us.saturating_record((done - now) / 1000);
        done
    }

    /// Sets `zone` to what a zone report says of it, without time or counting: `written`
    /// blocks from its start, and full if `full`. For a model put in front of a device that
    /// already holds data.
    pub fn take_zone_untimed(&mut self, zone: u32, written: u64, full: bool) -> Result<(), ZoneError> {
        self.zones.reset(zone)?;
        self.buffers.remove(&zone);
        if written > 0 {
            self.zones.write(self.config.zones.start(zone), written)?;
        }
        if full {
            self.zones.finish(zone)?;
        }
        Ok(())
    }

    /// Zone Reset: `zone` is empty again once its share of every die it wrote is erased.
    pub fn reset(&mut self, now: Nanos, zone: u32) -> Result<Nanos, ZoneError> {
        let written = self.zones.reset(zone)?;
        self.buffers.remove(&zone);
        let mut done = now;
        for die in self.config.dies_written(zone, written) {
            done = done.max(self.timing.erase_block(now, die));
            self.stats.erases += 1;
        }
        self.zone_stats.resets += 1;
        self.stats.host_pages_trimmed += written;
        Ok(self.finish_at(done + self.config.write_cmd_ns))
    }

    /// Zone Finish: `zone` is full where its write pointer stands. The model programs no
    /// padding for the rest of its capacity.
    pub fn finish(&mut self, now: Nanos, zone: u32) -> Result<Nanos, ZoneError> {
        self.zones.finish(zone)?;
        self.zone_stats.finishes += 1;
        Ok(self.finish_at(now + self.config.write_cmd_ns))
    }

    /// Open Zone (explicitly).
    pub fn open(&mut self, now: Nanos, zone: u32) -> Result<Nanos, ZoneError> {
        self.zones.open(zone)?;
        Ok(self.finish_at(now + self.config.write_cmd_ns))
    }

    /// Close Zone.
    pub fn close(&mut self, now: Nanos, zone: u32) -> Result<Nanos, ZoneError> {
        self.zones.close(zone)?;
        Ok(self.finish_at(now + self.config.write_cmd_ns))
    }

    /// FLUSH: completes once every buffered page is programmed.
    pub fn flush(&mut self, now: Nanos) -> Nanos {
        let drained = self.timing.drained_at().max(now);
        self.finish_at(drained + self.config.write_cmd_ns)
    }

    fn finish_at(&mut self, done: Nanos) -> Nanos {
        self.last_done = self.last_done.max(done);
        done
    }

    /// The zones a TRIM of `count` blocks from `block` resets: it must start at a zone's
    /// start and end in the last zone's unwritable tail (at or past its capacity).
    fn trimmed_zones(&self, block: u64, count: u64) -> Result<std::ops::Range<u32>, String> {
        let g = self.config.zones;
        let end = block.saturating_add(count);
        let ends_past_capacity = count > 0 && (end - 1) % g.zone_blocks + 1 >= g.capacity_blocks;
        if !block.is_multiple_of(g.zone_blocks) || !ends_past_capacity || end > g.blocks() {
            return Err(format!(
                "a TRIM of blocks {block}..{end} does not cover whole zones of {} blocks ({} writable): only a Zone Reset frees space",
                g.zone_blocks, g.capacity_blocks
            ));
        }
        Ok((block / g.zone_blocks) as u32..end.div_ceil(g.zone_blocks) as u32)
    }

    fn broken(&self, e: impl std::fmt::Display) -> ! {
        panic!("{}: the host broke the zoned device's contract: {e}", self.config.name)
    }
}

/// The block interface over zones: a write must be at its zone's write pointer, a TRIM
/// must cover whole zones (it resets them), and breaking either is a scheme's bug.
impl Device for ZnsSsd {
    fn submit(&mut self, now: Nanos, op: DevOp) -> Nanos {
        let res = match op.kind {
            DevOpKind::Read => self.read(now, op.block, op.count, op.class),
            DevOpKind::Write => self.write(now, op.block, op.count, op.class),
            DevOpKind::Flush => Ok(self.flush(now)),
            DevOpKind::Trim => {
                let zones = self.trimmed_zones(op.block, u64::from(op.count)).unwrap_or_else(|e| self.broken(e));
                let mut done = now;
                for zone in zones {
                    done = done.max(self.reset(now, zone).unwrap_or_else(|e| self.broken(e)));
                }
                Ok(done)
            }
        };
        res.unwrap_or_else(|e| self.broken(e))
    }

    fn busy_until(&self) -> Nanos {
        self.last_done.max(self.timing.horizon())
    }
}

#[cfg(test)]
#[path = "device_tests.rs"]
mod tests;
