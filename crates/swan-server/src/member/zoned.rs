//! An emulated zoned member: a regular file that keeps the zoned contract (NVMe ZNS, or a
//! host-managed SMR disk), so that arrays over zones are served and tested on a machine
//! with no zoned device. The crash tests put the same emulation over an in-memory image,
//! with their recorder between the two, so that a power cut cuts the zone table too.
//!
//! The file holds what such a device holds, and the device's own state after it:
//!
//! ```text
//! file block 0                the device block: what this file emulates (FORMAT.md)
//! 1 .. 1+T                    the zone table: each zone's write pointer and blocks written
//! then, as member blocks:
//!   0 .. C                    conventional zones: written anywhere (the array's metadata)
//!   C .. C + N×Z              N sequential zones of Z blocks, each written at its pointer
//! ```
//!
//! The device block comes first because nothing served can write there: a plain member's
//! first block is the array's superblock, which only swan writes, so no client's data can
//! make a plain member look zoned when it is next opened.
//!
//! The contract is `swan_models::zns::zones::Zones`, the one the simulator's zoned SSD
//! keeps, so both faces refuse the same commands. A write is split at zone boundaries as
//! Linux splits a bio at them; a write off a zone's write pointer, past its capacity or
//! into a full zone is refused as the device would refuse it; a TRIM of whole sequential
//! zones is their Reset, and one of part of a zone is refused (a zone is freed only whole).
//!
//! **Write pointers are the truth after a crash**, as on a real device: each zone's entry
//! in the table is written after the write's data, both through the page cache, so a
//! process killed between the two has only lost a write it never acknowledged, and the
//! next write at the pointer covers it. A sync makes data and table durable together.
//! Whatever the file holds past a zone's pointer reads as zeroes, as a device holds nothing
//! there: a power cut may keep a write's data and lose its table entry.
//!
//! **A zone leaves the active ones only durably**: the file is synced when a write fills a
//! zone and after a reset or finish. Between syncs zones only open or advance, so whatever
//! mix of the table's versions a power cut leaves (sectors of one block written back and
//! others not) has no more zones active than the last version did, and so no more than the
//! limit; a device's own metadata would not let a power cut break it either.

use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use swan_models::zns::zones::{Zone, ZoneCondition, ZoneError, ZoneGeometry, Zones};

use super::{Backing, MemberError, Op, BLOCK};

const BLOCK_U64: u64 = BLOCK as u64;
/// The device block's first bytes.
pub const DEVICE_MAGIC: [u8; 8] = *b"SWANZND1";
const DEVICE_VERSION: u32 = 1;
/// Bytes of one zone's entry in the zone table: its write pointer and blocks written.
const ENTRY_BYTES: u64 = 16;

/// What an emulated zoned device is: its conventional blocks, then its sequential zones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZonedLayout {
    /// Blocks at the device's start written anywhere (zones of the conventional kind).
    pub conventional_blocks: u64,
    /// The sequential zones after them, their size, capacity and open and active limits.
    pub zones: ZoneGeometry,
}

impl ZonedLayout {
    /// Blocks the member offers: conventional and sequential.
    pub fn member_blocks(&self) -> u64 {
        self.conventional_blocks + self.zones.blocks()
    }

    fn table_blocks(&self) -> u64 {
        (u64::from(self.zones.zones) * ENTRY_BYTES).div_ceil(BLOCK_U64)
    }

    /// The file's size: the device block, the zone table and the member's blocks.
    pub fn file_bytes(&self) -> u64 {
        self.base() + self.member_blocks() * BLOCK_U64
    }

    /// Where member block 0 is in the file.
    fn base(&self) -> u64 {
        (1 + self.table_blocks()) * BLOCK_U64
    }

    /// The sequential zone holding member block `block` (None: a conventional block, or
    /// one past the end).
    pub fn zone_of(&self, block: u64) -> Option<u32> {
        block.checked_sub(self.conventional_blocks).and_then(|b| self.zones.zone_of(b))
    }

    /// Member block where sequential zone `zone` starts.
    pub fn zone_start(&self, zone: u32) -> u64 {
        self.conventional_blocks + self.zones.start(zone)
    }

    fn entry_offset(&self, zone: u32) -> u64 {
        BLOCK_U64 + u64::from(zone) * ENTRY_BYTES
    }

    /// The device block, little-endian: magic, version, CRC32C at 12 (over the block with it
    /// zeroed), conventional blocks, zones, zone size, capacity, open and active limits
    /// (0: none).
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        b[..8].copy_from_slice(&DEVICE_MAGIC);
        b[8..12].copy_from_slice(&DEVICE_VERSION.to_le_bytes());
        b[16..24].copy_from_slice(&self.conventional_blocks.to_le_bytes());
        b[24..28].copy_from_slice(&self.zones.zones.to_le_bytes());
        b[28..36].copy_from_slice(&self.zones.zone_blocks.to_le_bytes());
        b[36..44].copy_from_slice(&self.zones.capacity_blocks.to_le_bytes());
        b[44..48].copy_from_slice(&self.zones.max_open.unwrap_or(0).to_le_bytes());
        b[48..52].copy_from_slice(&self.zones.max_active.unwrap_or(0).to_le_bytes());
        let crc = block_crc(&b);
        b[12..16].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// The layout a device block holds; None if it is not one (no magic); an error if it is
    /// one that cannot be right.
    fn decode(b: &[u8]) -> Result<Option<ZonedLayout>, String> {
        if b[..8] != DEVICE_MAGIC {
            return Ok(None);
        }
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let version = u32_at(8);
        if version != DEVICE_VERSION {
            return Err(format!("an emulated zoned device of version {version}; this swan reads {DEVICE_VERSION}"));
        }
        let (stored, computed) = (u32_at(12), block_crc(b));
        if stored != computed {
            return Err(format!(
                "the emulated zoned device block's checksum does not hold ({stored:#010x}, computed {computed:#010x})"
            ));
        }
        let limit = |v: u32| (v > 0).then_some(v);
        let zones = ZoneGeometry {
            zones: u32_at(24),
            zone_blocks: u64_at(28),
            capacity_blocks: u64_at(36),
            max_open: limit(u32_at(44)),
            max_active: limit(u32_at(48)),
        };
        zones.validate().map_err(|e| e.to_string())?;
        Ok(Some(ZonedLayout { conventional_blocks: u64_at(16), zones }))
    }
}

/// CRC32C of a device block with its checksum field (bytes 12..16) taken as zero.
fn block_crc(b: &[u8]) -> u32 {
    crate::field_crc::crc_with_field_zeroed(0, &b[..BLOCK], 12)
}

/// Create the file `path` as an empty emulated zoned device of `layout` (sparse: every zone
/// empty, its table all zeroes).
pub fn create(path: &Path, layout: &ZonedLayout, overwrite: bool) -> Result<(), MemberError> {
    layout.zones.validate().map_err(|e| MemberError::Zoned { path: path.to_owned(), op: Op::Create, error: e })?;
    super::file::create(path, layout.file_bytes(), overwrite)?;
    let io_err = |error| MemberError::Io { path: path.to_owned(), op: Op::Create, error };
    let file = std::fs::OpenOptions::new().write(true).open(path).map_err(io_err)?;
    use std::os::unix::fs::FileExt;
    file.write_all_at(&layout.encode(), 0).map_err(io_err)?;
    file.sync_all().map_err(io_err)
}

/// What the first block of a file of `bytes` bytes says it emulates: None for a plain file.
pub fn probe(file: &dyn Backing, bytes: u64, path: &Path) -> Result<Option<ZonedLayout>, MemberError> {
    if bytes < BLOCK_U64 {
        return Ok(None);
    }
    let mut b = vec![0u8; BLOCK];
    file.read_at(0, &mut b).map_err(|error| MemberError::Io { path: path.to_owned(), op: Op::Open, error })?;
    let layout = ZonedLayout::decode(&b).map_err(|why| MemberError::BadZonedDevice { path: path.to_owned(), why })?;
    match layout {
        Some(l) if l.file_bytes() != bytes => Err(MemberError::BadZonedDevice {
            path: path.to_owned(),
            why: format!("its device block describes {} bytes, the file has {bytes}", l.file_bytes()),
        }),
        l => Ok(l),
    }
}

/// An open emulated zoned device.
#[derive(Debug)]
pub struct ZonedFile {
    /// The file's bytes (or an image's, in the crash tests).
    inner: Arc<dyn Backing>,
    layout: ZonedLayout,
    /// The zones' state, taken for every write and reset, so that the check at the write
    /// pointer and the data that moves it happen as one.
    zones: Mutex<Zones>,
    /// Where member block 0 is in the file.
    base: u64,
}

impl ZonedFile {
    /// Open over `inner` (the file), reading back each zone's pointer as a power cycle
    /// leaves it: nothing open, the zones written in part closed.
    pub fn open(inner: Arc<dyn Backing>, layout: ZonedLayout, path: &Path) -> Result<ZonedFile, MemberError> {
        let bad = |why: String| MemberError::BadZonedDevice { path: path.to_owned(), why };
        let mut table = vec![0u8; (layout.table_blocks() * BLOCK_U64) as usize];
        inner.read_at(BLOCK_U64, &mut table).map_err(|error| MemberError::Io {
            path: path.to_owned(),
            op: Op::Open,
            error,
        })?;
        let state: Vec<(u64, u64)> = table
            .chunks_exact(ENTRY_BYTES as usize)
            .take(layout.zones.zones as usize)
            .map(|e| {
                let at = |i: usize| u64::from_le_bytes(e[i..i + 8].try_into().expect("8 bytes"));
                (at(0), at(8))
            })
            .collect();
        let zones = Zones::power_cycled(layout.zones, &state).map_err(|e| bad(e.to_string()))?;
        Ok(ZonedFile { inner, layout, zones: Mutex::new(zones), base: layout.base() })
    }

    fn zones(&self) -> MutexGuard<'_, Zones> {
        self.zones.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Write zone `zone`'s table entry as `zones` holds it.
    fn record(&self, zones: &Zones, zone: u32) -> io::Result<()> {
        let z = zones.zone(zone);
        let mut e = [0u8; ENTRY_BYTES as usize];
        e[..8].copy_from_slice(&z.write_pointer.to_le_bytes());
        e[8..].copy_from_slice(&z.written.to_le_bytes());
        // Through the page cache even on an O_DIRECT member: 16 bytes, synced with the file.
        self.inner.write_cached(self.layout.entry_offset(zone), &e)
    }

    /// The pieces of `len` bytes at byte `offset`: the conventional part, then one per
    /// sequential zone, as (offset, len, zone).
    fn pieces(&self, offset: u64, len: u64) -> Vec<(u64, u64, Option<u32>)> {
        let conv_end = self.layout.conventional_blocks * BLOCK_U64;
        let zone_bytes = self.layout.zones.zone_blocks * BLOCK_U64;
        let (mut at, end) = (offset, offset + len);
        let mut out = Vec::new();
        while at < end {
            let (until, zone) = match self.layout.zone_of(at / BLOCK_U64) {
                None => (conv_end, None),
                Some(z) => (self.layout.zone_start(z) * BLOCK_U64 + zone_bytes, Some(z)),
            };
            let n = until.min(end) - at;
            out.push((at, n, zone));
            at += n;
        }
        out
    }

    fn refused(e: ZoneError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidInput, e)
    }

    /// Every sequential zone as a zone report shows it.
    pub fn report(&self) -> Vec<Zone> {
        let zones = self.zones();
        (0..self.layout.zones.zones).map(|z| *zones.zone(z)).collect()
    }

    /// Finish Zone: `zone` becomes full where its pointer is (its resources free).
    pub fn finish(&self, zone: u32) -> io::Result<()> {
        let mut zones = self.zones();
        zones.finish(zone).map_err(Self::refused)?;
        self.record(&zones, zone)?;
        // Done once it completes, as a reset is.
        self.inner.sync()
    }

    /// Zero what `buf`, read from byte `offset`, holds past its zones' write pointers. A
    /// device has nothing there; the file may, after a power cut that kept a write's data
    /// and lost its table entry, and a recovery that read it back would take as landed a
    /// write the pointer says never happened.
    fn clip(&self, offset: u64, buf: &mut [u8]) {
        let len = buf.len() as u64;
        if offset + len <= self.layout.conventional_blocks * BLOCK_U64 {
            return;
        }
        let zones = self.zones();
        for (at, n, zone) in self.pieces(offset, len) {
            let Some(zone) = zone else { continue };
            let written = (self.layout.zone_start(zone) + zones.zone(zone).write_pointer) * BLOCK_U64;
            let from = at.max(written);
            if from < at + n {
                buf[(from - offset) as usize..(at + n - offset) as usize].fill(0);
            }
        }
    }
}

impl Backing for ZonedFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(self.base + offset, buf)?;
        self.clip(offset, buf);
        Ok(())
    }

    fn read_if_cached(&self, offset: u64, buf: &mut [u8]) -> bool {
        let hit = self.inner.read_if_cached(self.base + offset, buf);
        if hit {
            self.clip(offset, buf);
        }
        hit
    }

    fn read_small(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_small(self.base + offset, buf)?;
        self.clip(offset, buf);
        Ok(())
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        for (at, len, zone) in self.pieces(offset, buf.len() as u64) {
            let data = &buf[(at - offset) as usize..(at - offset + len) as usize];
            let Some(zone) = zone else {
                self.inner.write_at(self.base + at, data)?;
                continue;
            };
            let mut zones = self.zones();
            let block = at / BLOCK_U64 - self.layout.conventional_blocks;
            // The pointer moves only once the data is there: a write the file system could
            // not take (full, say) is tried again at the same place.
            zones.can_write(block, len / BLOCK_U64).map_err(Self::refused)?;
            self.inner.write_at(self.base + at, data)?;
            zones.write(block, len / BLOCK_U64).map_err(Self::refused)?;
            self.record(&zones, zone)?;
            if zones.zone(zone).condition == ZoneCondition::Full {
                // A zone leaves the active ones durably (see the module comment).
                self.inner.sync()?;
            }
        }
        Ok(())
    }

    /// Only the conventional blocks take a rewrite (the journal's tail lives there).
    fn write_cached(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        if self.layout.zone_of(offset / BLOCK_U64).is_some() {
            return self.write_at(offset, buf);
        }
        self.inner.write_cached(self.base + offset, buf)
    }

    /// Bytes already there, written again at the file (a probe for room): no zone changes.
    fn write_back(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        self.inner.write_at(self.base + offset, buf)
    }

    fn write_behind(&self, offset: u64, len: u64) {
        self.inner.write_behind(self.base + offset, len);
    }

    /// Conventional blocks are punched; whole sequential zones are reset (their blocks
    /// punched too, so they read as zeroes, and the reset made durable); part of a zone is
    /// refused.
    fn discard(&self, offset: u64, len: u64) -> io::Result<()> {
        let zone_bytes = self.layout.zones.zone_blocks * BLOCK_U64;
        for (at, n, zone) in self.pieces(offset, len) {
            let Some(zone) = zone else {
                self.inner.discard(self.base + at, n)?;
                continue;
            };
            if n != zone_bytes {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "a TRIM of {} of zone {zone}'s {} blocks: a zone is freed only whole, by a reset",
                        n / BLOCK_U64,
                        zone_bytes / BLOCK_U64
                    ),
                ));
            }
            let mut zones = self.zones();
            if zones.zone(zone).condition == ZoneCondition::Empty {
                continue;
            }
            zones.reset(zone).map_err(Self::refused)?;
            self.inner.discard(self.base + at, n)?;
            self.record(&zones, zone)?;
            // A device's reset is done once it completes: what a power cut leaves of the zone
            // is then the new lap's writes, never the old lap's pointer over them.
            self.inner.sync()?;
        }
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        self.inner.sync()
    }

    fn lock(&self, exclusive: bool) -> io::Result<()> {
        self.inner.lock(exclusive)
    }

    fn mark(&self, what: &'static str) {
        self.inner.mark(what);
    }

    fn is_recorded(&self) -> bool {
        self.inner.is_recorded()
    }

    // No direct_fd: a reader submitting its own reads would use member offsets on a file
    // whose member blocks start after the device block and table.

    fn report_zones(&self) -> io::Result<Vec<Zone>> {
        Ok(self.report())
    }

    fn finish_zone(&self, zone: u32) -> io::Result<()> {
        self.finish(zone)
    }
}

#[cfg(test)]
#[path = "zoned_tests.rs"]
mod tests;
