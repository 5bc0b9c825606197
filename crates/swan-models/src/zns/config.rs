//! What a zoned SSD is made of: its zones ([`ZoneGeometry`]), the NAND behind them, timed
//! as the conventional SSD's is ([`crate::ssd`]), and how a zone's pages are spread over
//! the dies. There is no FTL to describe: the host places every page and no device GC runs.

use super::zones::ZoneGeometry;
use crate::ssd::{NandTiming, Suspension};
use crate::Nanos;

/// One zoned SSD. See [`super::presets`] for the drives and where each number comes from.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ZnsConfig {
    pub name: String,
    pub zones: ZoneGeometry,
    pub channels: u32,
    pub dies_per_channel: u32,
    /// Dies one zone's pages are striped over, page by page from the zone's first die: all
    /// of them on a large-zone drive (one zone writes at the drive's rate), one on a
    /// small-zone drive (zones do not share dies, so they do not slow each other).
    pub zone_dies: u32,
    /// Sensing one 4 KiB page.
    pub t_read_ns: Nanos,
    /// Programming one 4 KiB page: the drive's one-shot program time over the pages it
    /// programs at once, as the conventional model charges it.
    pub t_prog_ns: Nanos,
    /// Erasing a zone's share of one die; a Zone Reset erases it on every die the zone wrote.
    pub t_erase_ns: Nanos,
    pub channel_mbps: u64,
    pub host_mbps: u64,
    /// Firmware time every read pays on top of its media time.
    pub read_cmd_ns: Nanos,
    /// Firmware time every Zone Write and zone management command pays, after its data is in.
    pub write_cmd_ns: Nanos,
    /// Firmware time a Zone Append pays instead, after its data is in (the drive chooses
    /// its place).
    #[serde(default)]
    pub append_cmd_ns: Nanos,
    /// The controller's time taking in one Zone Write or one Zone Append, one command at a
    /// time across the whole drive: the ceiling on how many small writes per second it
    /// accepts, whatever the zones or queue depth. 0: no ceiling.
    #[serde(default)]
    pub intake: CommandIntake,
    /// DRAM pages buffering each open zone's writes: a write completes once its pages are
    /// in the buffer and a FLUSH waits until they are programmed. 0: a write completes when
    /// its last page is programmed.
    pub zone_buffer_pages: u32,
    /// What a host read does about the device's own work (buffered write-back, a reset's
    /// erases) already running on its die.
    pub suspension: Suspension,
    /// Host reads go before queued write-back (else they wait behind it, in order).
    pub reads_before_write_back: bool,
}

/// [`ZnsConfig::intake`]: the controller's time per command, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommandIntake {
    pub write_ns: Nanos,
    pub append_ns: Nanos,
}

/// Why a [`ZnsConfig`] cannot be modelled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("zoned SSD {config}: {problem}")]
pub struct ZnsConfigError {
    pub config: String,
    pub problem: String,
}

impl ZnsConfig {
    /// Dies (the units that work in parallel).
    pub fn units(&self) -> u32 {
        self.channels * self.dies_per_channel
    }

    /// The die holding page `offset` of `zone`.
    pub fn die_of(&self, zone: u32, offset: u64) -> u32 {
        let units = u64::from(self.units());
        let first = u64::from(zone) * u64::from(self.zone_dies) % units;
        ((first + offset % u64::from(self.zone_dies)) % units) as u32
    }

    /// The dies that hold a zone's first `written` pages.
    pub fn dies_written(&self, zone: u32, written: u64) -> impl Iterator<Item = u32> + '_ {
        (0..written.min(u64::from(self.zone_dies))).map(move |offset| self.die_of(zone, offset))
    }

    /// The same drive with `zones` zones: a reduced-scale device for simulation (zones, not
    /// their size, are what a run can spare).
    pub fn with_zones(&self, zones: u32) -> Self {
        Self { zones: ZoneGeometry { zones, ..self.zones }, ..self.clone() }
    }

    /// The same drive over `zones`, the zones of a device laid out apart from it (an
    /// emulated member's, whose zone is the array's segment): its NAND, dies per zone,
    /// buffers and command times are kept; only where zones start and end changes.
    pub fn with_geometry(&self, zones: ZoneGeometry) -> Self {
        Self { zones, ..self.clone() }
    }

    /// Bytes the host can write: every zone's capacity.
    pub fn capacity_bytes(&self) -> u64 {
        u64::from(self.zones.zones) * self.zones.capacity_blocks * crate::ssd::PAGE_BYTES
    }

    pub fn validate(&self) -> Result<(), ZnsConfigError> {
        let bad = |problem: String| Err(ZnsConfigError { config: self.name.clone(), problem });
        if let Err(e) = self.zones.validate() {
            return bad(e.to_string());
        }
        if self.units() == 0 {
            return bad(format!("{} channels × {} dies has no die", self.channels, self.dies_per_channel));
        }
        if self.zone_dies == 0 || self.zone_dies > self.units() {
            return bad(format!("a zone over {} dies of {}", self.zone_dies, self.units()));
        }
        if self.t_read_ns == 0 || self.t_prog_ns == 0 || self.t_erase_ns == 0 {
            return bad("NAND read, program and erase times must be positive".into());
        }
        if self.channel_mbps == 0 || self.host_mbps == 0 {
            return bad("channel and host link rates must be positive".into());
        }
        Ok(())
    }

    /// The NAND as the shared timing model sees it. The zone buffers are the device's
    /// own; a reset's erases run in the lane host reads overtake, as the conventional
    /// SSD's own GC erases do when it is preemptible.
    pub(crate) fn nand(&self) -> NandTiming {
        NandTiming {
            units: self.units(),
            channels: self.channels,
            t_read_ns: self.t_read_ns,
            t_prog_ns: self.t_prog_ns,
            t_erase_ns: self.t_erase_ns,
            channel_mbps: self.channel_mbps,
            host_mbps: self.host_mbps,
            gc_preemptible: true,
            suspension: self.suspension,
            write_buffer_pages: 0,
            reads_before_write_back: self.reads_before_write_back,
        }
    }
}
