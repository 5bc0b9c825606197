//! The zoned-device contract, as the NVMe Zoned Namespace command set states it: each zone
//! has a condition and a write pointer; a write must start at its zone's write pointer and
//! stay within the zone's capacity; a zone being written is *open*, and open or closed
//! zones are *active*, each bounded by the device (Max Open Resources, Max Active
//! Resources). Zone Append lets the device choose the offset. Reset empties a zone; Finish
//! fills it; Close gives back its open resource. Read-only and offline zones, which only a
//! failing device reports, are not modelled.
//!
//! When a write needs an open resource and none is free, the device closes an implicitly
//! opened zone, the one opened longest ago, as the specification permits and QEMU's ZNS
//! emulation does; an explicitly opened zone is never closed for it, so a host that holds
//! every open resource explicitly gets Too Many Open Zones.

use std::collections::VecDeque;

/// A zoned device's layout and limits, in 4 KiB blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ZoneGeometry {
    pub zones: u32,
    /// Blocks from one zone's start to the next's (the zone size, a power of two on real
    /// drives so a zone is found by shifting).
    pub zone_blocks: u64,
    /// Blocks of a zone that can be written (the zone capacity, at most the size).
    pub capacity_blocks: u64,
    /// Zones that may be open at once (`None`: no limit).
    pub max_open: Option<u32>,
    /// Zones that may be open or closed at once (`None`: no limit).
    pub max_active: Option<u32>,
}

impl ZoneGeometry {
    /// Refuses a geometry no device could have, naming what is wrong.
    pub fn validate(&self) -> Result<(), ZoneError> {
        let bad = |why: String| Err(ZoneError::Geometry(why));
        if self.zones == 0 || self.zone_blocks == 0 || self.capacity_blocks == 0 {
            return bad(format!("{self:?} has no zone, or a zone of no block"));
        }
        if self.capacity_blocks > self.zone_blocks {
            return bad(format!("zone capacity {} exceeds the zone size {}", self.capacity_blocks, self.zone_blocks));
        }
        match (self.max_open, self.max_active) {
            (Some(0), _) | (_, Some(0)) => bad("a limit of 0 open or active zones lets nothing be written".into()),
            (Some(open), Some(active)) if open > active => {
                bad(format!("{open} open zones cannot fit in {active} active ones (ZNS: open ≤ active)"))
            }
            _ => Ok(()),
        }
    }

    pub fn blocks(&self) -> u64 {
        u64::from(self.zones) * self.zone_blocks
    }

    /// The zone holding `block`, if the device has it.
    pub fn zone_of(&self, block: u64) -> Option<u32> {
        u32::try_from(block / self.zone_blocks).ok().filter(|&z| z < self.zones)
    }

    pub fn start(&self, zone: u32) -> u64 {
        u64::from(zone) * self.zone_blocks
    }
}

/// A zone's condition (the ZNS zone states, less read-only and offline).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ZoneCondition {
    Empty,
    /// Opened by a write; the device may close it to open another.
    ImplicitlyOpen,
    /// Opened by the host's Open; only the host closes it.
    ExplicitlyOpen,
    /// Written in part, holding an active resource but no open one.
    Closed,
    Full,
}

impl ZoneCondition {
    pub fn is_open(self) -> bool {
        matches!(self, ZoneCondition::ImplicitlyOpen | ZoneCondition::ExplicitlyOpen)
    }

    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneCondition::Closed
    }
}

/// One zone as a zone report shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    pub condition: ZoneCondition,
    /// Blocks from the zone's start to its write pointer (the capacity once full).
    pub write_pointer: u64,
    /// Blocks the host actually wrote: less than the write pointer after a Finish.
    pub written: u64,
}

/// What the device answers a host that breaks the contract. A scheme must never cause one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ZoneError {
    #[error("zoned device geometry: {0}")]
    Geometry(String),
    #[error("blocks {block}..{} are not on the device", block + count)]
    OutOfRange { block: u64, count: u64 },
    #[error("zone {zone} is not on the device")]
    NoSuchZone { zone: u32 },
    #[error("zone {zone}: a write at block {block} is not at its write pointer {write_pointer} (Zone Invalid Write)")]
    NotAtWritePointer { zone: u32, block: u64, write_pointer: u64 },
    #[error("zone {zone}: {count} blocks from {offset} cross its capacity of {capacity} (Zone Boundary Error)")]
    CrossesCapacity { zone: u32, offset: u64, count: u64, capacity: u64 },
    #[error("zone {zone} is full (Zone Is Full)")]
    Full { zone: u32 },
    #[error("zone {zone}: every one of the {max} open zones is open explicitly (Too Many Open Zones)")]
    TooManyOpen { zone: u32, max: u32 },
    #[error("zone {zone}: {max} zones are active already (Too Many Active Zones)")]
    TooManyActive { zone: u32, max: u32 },
    #[error("zone {zone}: cannot {action} a zone that is {from:?} (Invalid Zone State Transition)")]
    Transition { zone: u32, from: ZoneCondition, action: &'static str },
    #[error("a write of 0 blocks")]
    Empty,
}

/// Every zone of a device, the open and active counts, and which zones the device opened
/// itself, oldest first.
#[derive(Clone, Debug)]
pub struct Zones {
    geometry: ZoneGeometry,
    zones: Vec<Zone>,
    open: u32,
    active: u32,
    implicit: VecDeque<u32>,
}

impl Zones {
    /// A device with every zone empty.
    pub fn new(geometry: ZoneGeometry) -> Result<Self, ZoneError> {
        geometry.validate()?;
        let empty = Zone { condition: ZoneCondition::Empty, write_pointer: 0, written: 0 };
        Ok(Self {
            geometry,
            zones: vec![empty; geometry.zones as usize],
            open: 0,
            active: 0,
            implicit: VecDeque::new(),
        })
    }

    /// The device as it comes back after losing power, from each zone's write pointer and
    /// blocks written (`(write_pointer, written)`, in zone order): a zone written to its
    /// capacity is full, one never written empty, and every other closed, for a power cycle
    /// ends every open state (the NVMe ZNS specification's zone state machine). Fails on a
    /// state no device could have kept: a pointer past the capacity, more blocks written
    /// than it passed, or more zones active than the device allows.
    pub fn power_cycled(geometry: ZoneGeometry, state: &[(u64, u64)]) -> Result<Self, ZoneError> {
        let mut zones = Self::new(geometry)?;
        if state.len() != geometry.zones as usize {
            return Err(ZoneError::Geometry(format!("{} zone states for {} zones", state.len(), geometry.zones)));
        }
        for (i, &(write_pointer, written)) in state.iter().enumerate() {
            if write_pointer > geometry.capacity_blocks || written > write_pointer {
                return Err(ZoneError::Geometry(format!(
                    "zone {i}: write pointer {write_pointer} with {written} blocks written, in a zone of capacity {}",
                    geometry.capacity_blocks
                )));
            }
            let condition = match write_pointer {
                0 => ZoneCondition::Empty,
                wp if wp == geometry.capacity_blocks => ZoneCondition::Full,
                _ => ZoneCondition::Closed,
            };
            zones.zones[i] = Zone { condition, write_pointer, written };
            if condition == ZoneCondition::Closed {
                zones.active += 1;
            }
        }
        if let Some(max) = geometry.max_active.filter(|&max| zones.active > max) {
            return Err(ZoneError::Geometry(format!(
                "{} zones closed, more than the {max} active allowed",
                zones.active
            )));
        }
        Ok(zones)
    }

    pub fn geometry(&self) -> &ZoneGeometry {
        &self.geometry
    }

    pub fn zone(&self, zone: u32) -> &Zone {
        &self.zones[zone as usize]
    }

    pub fn open_count(&self) -> u32 {
        self.open
    }

    pub fn active_count(&self) -> u32 {
        self.active
    }

    /// Zone Write: `count` blocks at `block`, which must be its zone's write pointer.
    pub fn write(&mut self, block: u64, count: u64) -> Result<(), ZoneError> {
        let zone = self.geometry.zone_of(block).ok_or(ZoneError::OutOfRange { block, count })?;
        let z = self.zones[zone as usize];
        let write_pointer = self.geometry.start(zone) + z.write_pointer;
        if z.condition == ZoneCondition::Full {
            return Err(ZoneError::Full { zone });
        }
        if block != write_pointer {
            return Err(ZoneError::NotAtWritePointer { zone, block, write_pointer });
        }
        self.append(zone, count).map(|_| ())
    }

    /// Whether [`Zones::write`] of `count` blocks at `block` would be taken, changing
    /// nothing: for a host that must know before it moves the data (and must not have moved
    /// the write pointer if moving the data then fails).
    pub fn can_write(&self, block: u64, count: u64) -> Result<(), ZoneError> {
        let zone = self.geometry.zone_of(block).ok_or(ZoneError::OutOfRange { block, count })?;
        let z = self.zones[zone as usize];
        let write_pointer = self.geometry.start(zone) + z.write_pointer;
        match z.condition {
            ZoneCondition::Full => return Err(ZoneError::Full { zone }),
            _ if block != write_pointer => return Err(ZoneError::NotAtWritePointer { zone, block, write_pointer }),
            _ if count == 0 => return Err(ZoneError::Empty),
            _ => {}
        }
        let capacity = self.geometry.capacity_blocks;
        if z.write_pointer + count > capacity {
            return Err(ZoneError::CrossesCapacity { zone, offset: z.write_pointer, count, capacity });
        }
        if z.condition.is_open() {
            return Ok(());
        }
        if z.condition == ZoneCondition::Empty {
            if let Some(max) = self.geometry.max_active.filter(|&max| self.active >= max) {
                return Err(ZoneError::TooManyActive { zone, max });
            }
        }
        match self.geometry.max_open.filter(|&max| self.open >= max) {
            Some(max) if self.implicit.is_empty() => Err(ZoneError::TooManyOpen { zone, max }),
            _ => Ok(()),
        }
    }

    /// Zone Append: `count` blocks at wherever `zone`'s write pointer is; returns that block.
    pub fn append(&mut self, zone: u32, count: u64) -> Result<u64, ZoneError> {
        self.check(zone)?;
        if count == 0 {
            return Err(ZoneError::Empty);
        }
        let z = self.zones[zone as usize];
        if z.condition == ZoneCondition::Full {
            return Err(ZoneError::Full { zone });
        }
        let capacity = self.geometry.capacity_blocks;
        if z.write_pointer + count > capacity {
            return Err(ZoneError::CrossesCapacity { zone, offset: z.write_pointer, count, capacity });
        }
        self.make_open(zone, false)?;
        let z = &mut self.zones[zone as usize];
        let at = self.geometry.start(zone) + z.write_pointer;
        z.write_pointer += count;
        z.written += count;
        if z.write_pointer == capacity {
            self.make_full(zone);
        }
        Ok(at)
    }

    /// Open Zone: the host holds an open resource for `zone` until it closes or fills it.
    pub fn open(&mut self, zone: u32) -> Result<(), ZoneError> {
        self.check(zone)?;
        if self.zones[zone as usize].condition == ZoneCondition::Full {
            return Err(ZoneError::Transition { zone, from: ZoneCondition::Full, action: "open" });
        }
        self.make_open(zone, true)
    }

    /// Close Zone: gives back `zone`'s open resource; a zone with nothing written is empty.
    pub fn close(&mut self, zone: u32) -> Result<(), ZoneError> {
        self.check(zone)?;
        let from = self.zones[zone as usize].condition;
        match from {
            ZoneCondition::ImplicitlyOpen | ZoneCondition::ExplicitlyOpen => {
                self.release(zone);
                let z = &mut self.zones[zone as usize];
                z.condition = if z.write_pointer == 0 { ZoneCondition::Empty } else { ZoneCondition::Closed };
                if z.condition == ZoneCondition::Closed {
                    self.active += 1;
                }
                Ok(())
            }
            ZoneCondition::Closed => Ok(()),
            _ => Err(ZoneError::Transition { zone, from, action: "close" }),
        }
    }

    /// Finish Zone: `zone` becomes full where its write pointer is, and its resources free.
    pub fn finish(&mut self, zone: u32) -> Result<(), ZoneError> {
        self.check(zone)?;
        if self.zones[zone as usize].condition != ZoneCondition::Full {
            self.make_full(zone);
        }
        Ok(())
    }

    /// Reset Zone: `zone` is empty again. Returns the blocks that had been written, which
    /// is what erasing it costs.
    pub fn reset(&mut self, zone: u32) -> Result<u64, ZoneError> {
        self.check(zone)?;
        self.release(zone);
        let z = &mut self.zones[zone as usize];
        let written = z.written;
        *z = Zone { condition: ZoneCondition::Empty, write_pointer: 0, written: 0 };
        Ok(written)
    }

    fn check(&self, zone: u32) -> Result<(), ZoneError> {
        if zone < self.geometry.zones {
            Ok(())
        } else {
            Err(ZoneError::NoSuchZone { zone })
        }
    }

    /// Takes the open (and, from empty, the active) resource `zone` needs to be written.
    fn make_open(&mut self, zone: u32, explicit: bool) -> Result<(), ZoneError> {
        let from = self.zones[zone as usize].condition;
        match from {
            ZoneCondition::ExplicitlyOpen => return Ok(()),
            ZoneCondition::ImplicitlyOpen => {
                if explicit {
                    self.implicit.retain(|&z| z != zone);
                    self.zones[zone as usize].condition = ZoneCondition::ExplicitlyOpen;
                }
                return Ok(());
            }
            ZoneCondition::Full => return Err(ZoneError::Full { zone }),
            ZoneCondition::Empty | ZoneCondition::Closed => {}
        }
        if from == ZoneCondition::Empty {
            if let Some(max) = self.geometry.max_active.filter(|&max| self.active >= max) {
                return Err(ZoneError::TooManyActive { zone, max });
            }
        }
        if let Some(max) = self.geometry.max_open.filter(|&max| self.open >= max) {
            // The device closes the zone it opened itself longest ago; it never closes one
            // the host opened.
            let oldest = self.implicit.pop_front().ok_or(ZoneError::TooManyOpen { zone, max })?;
            self.zones[oldest as usize].condition = ZoneCondition::Closed;
            self.open -= 1;
        }
        if from == ZoneCondition::Empty {
            self.active += 1;
        }
        self.open += 1;
        self.zones[zone as usize].condition =
            if explicit { ZoneCondition::ExplicitlyOpen } else { ZoneCondition::ImplicitlyOpen };
        if !explicit {
            self.implicit.push_back(zone);
        }
        Ok(())
    }

    fn make_full(&mut self, zone: u32) {
        self.release(zone);
        let z = &mut self.zones[zone as usize];
        z.condition = ZoneCondition::Full;
        z.write_pointer = self.geometry.capacity_blocks;
    }

    /// Gives back whatever resources `zone` holds (its condition is for the caller to set).
    fn release(&mut self, zone: u32) {
        let condition = self.zones[zone as usize].condition;
        if condition.is_open() {
            self.open -= 1;
        }
        if condition.is_active() {
            self.active -= 1;
        }
        if condition == ZoneCondition::ImplicitlyOpen {
            self.implicit.retain(|&z| z != zone);
        }
    }
}

/// The two commands that write a zone, as a host chooses between them: Zone Write, at the
/// write pointer the host names, and Zone Append, placed by the drive. (How an array in the
/// simulator keeps each in flight is `swan_sim::zoned_array`'s.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZonePrimitive {
    /// Zone Write at the write pointer; a host keeps one per zone in flight.
    Write,
    /// Zone Append, any number per zone in flight: the default, as the ZNS command set's own
    /// way to keep a zone's writes in flight together (Zone Write gets there only through a
    /// host scheduler that merges queued writes into one command, which is not modelled).
    #[default]
    Append,
}

impl ZonePrimitive {
    pub fn name(self) -> &'static str {
        match self {
            ZonePrimitive::Write => "write",
            ZonePrimitive::Append => "append",
        }
    }
}

impl std::str::FromStr for ZonePrimitive {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "write" => Ok(ZonePrimitive::Write),
            "append" => Ok(ZonePrimitive::Append),
            other => Err(format!("no zone primitive {other:?}: write or append")),
        }
    }
}

#[cfg(test)]
#[path = "zones_tests.rs"]
mod tests;
