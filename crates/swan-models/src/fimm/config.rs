//! What a FIMM is made of: its NAND packages (dies, planes, blocks, pages), their array
//! times, and the ONFi channel they share ([`FimmConfig`], [`BusConfig`]); the preset that
//! builds the paper's 64 GB FIMM ([`fimm_64gb`]); and the checks that reject a module that
//! cannot exist ([`FimmConfigError`]).

use serde::{Deserialize, Serialize};

use crate::Nanos;

/// An ONFi data bus: `pins` data lines at `mega_transfers_per_s` transfers per pin per
/// second (NV-DDR2 moves one bit per pin on each clock edge, so 400 MT/s is a 200 MHz clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusConfig {
    pub pins: u32,
    pub mega_transfers_per_s: u32,
}

impl BusConfig {
    /// Payload rate in MB/s (10^6 bytes per second).
    pub fn mbps(&self) -> u64 {
        u64::from(self.pins) * u64::from(self.mega_transfers_per_s) / 8
    }

    /// Time for `bytes` to cross the bus, rounded up to whole nanoseconds.
    pub fn xfer_ns(&self, bytes: u64) -> Nanos {
        let bits_per_us = u64::from(self.pins) * u64::from(self.mega_transfers_per_s);
        (bytes * 8 * 1_000).div_ceil(bits_per_us.max(1))
    }
}

/// A Flash Inline Memory Module (Triple-A §3.3): NAND packages on one channel, each with
/// its own chip enable, no controller and no DRAM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FimmConfig {
    pub name: String,
    /// NAND packages on the module (the paper: eight).
    pub packages: u32,
    /// Dies (LUNs) per package. A die is the unit that works independently.
    pub dies_per_package: u32,
    /// Planes per die. Planes of one die work only together, through multi-plane commands.
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Bytes of user data in one flash page (spare area excluded).
    pub page_bytes: u32,
    /// Array read: sensing one page (or one multi-plane set) into the page register.
    pub t_read_ns: Nanos,
    /// Array program of one page (or one multi-plane set) from the page register.
    pub t_prog_ns: Nanos,
    /// Block erase (or one multi-plane set of blocks).
    pub t_erase_ns: Nanos,
    /// Command and address cycles before an operation: pure latency, too short to model
    /// as channel occupancy.
    pub t_cmd_ns: Nanos,
    /// The module's channel (its NV-DDR2 slot).
    pub channel: BusConfig,
    /// Cache-mode commands: a page register frees the array while data moves over the
    /// channel (cache read), and new program data can be loaded while the previous page
    /// programs (cache program).
    pub cache_mode: bool,
}

impl FimmConfig {
    pub fn dies(&self) -> u32 {
        self.packages * self.dies_per_package
    }

    pub fn pages_per_die(&self) -> u64 {
        u64::from(self.planes_per_die) * u64::from(self.blocks_per_plane) * u64::from(self.pages_per_block)
    }

    pub fn pages(&self) -> u64 {
        u64::from(self.dies()) * self.pages_per_die()
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.pages() * u64::from(self.page_bytes)
    }

    /// Rejects a module that cannot exist, naming the field.
    pub fn validate(&self) -> Result<(), FimmConfigError> {
        let counts = [
            ("packages", self.packages),
            ("dies_per_package", self.dies_per_package),
            ("planes_per_die", self.planes_per_die),
            ("blocks_per_plane", self.blocks_per_plane),
            ("pages_per_block", self.pages_per_block),
            ("page_bytes", self.page_bytes),
            ("channel.pins", self.channel.pins),
            ("channel.mega_transfers_per_s", self.channel.mega_transfers_per_s),
        ];
        for (field, value) in counts {
            if value == 0 {
                return Err(FimmConfigError::Zero { fimm: self.name.clone(), field });
            }
        }
        if self.t_read_ns == 0 || self.t_prog_ns == 0 || self.t_erase_ns == 0 {
            return Err(FimmConfigError::Zero { fimm: self.name.clone(), field: "t_read_ns/t_prog_ns/t_erase_ns" });
        }
        if self.packages.checked_mul(self.dies_per_package).is_none() {
            return Err(FimmConfigError::TooLarge { fimm: self.name.clone() });
        }
        // A flat page number is a u64: every page of every die must be addressable.
        let pages = [self.dies_per_package, self.planes_per_die, self.blocks_per_plane, self.pages_per_block]
            .iter()
            .try_fold(u64::from(self.packages), |acc, &n| acc.checked_mul(u64::from(n)));
        if pages.and_then(|p| p.checked_mul(u64::from(self.page_bytes))).is_none() {
            return Err(FimmConfigError::TooLarge { fimm: self.name.clone() });
        }
        Ok(())
    }
}

/// A FIMM configuration that cannot exist.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FimmConfigError {
    #[error("FIMM `{fimm}`: `{field}` is zero; a module needs at least one of each")]
    Zero { fimm: String, field: &'static str },
    #[error("FIMM `{fimm}`: more pages than a 64-bit page number can address")]
    TooLarge { fimm: String },
}

/// The paper's FIMM (§3.3, §5.1): 64 GB on eight packages sharing one 16-pin NV-DDR2
/// channel at 400 MT/s (800 MB/s), cache-mode and multi-plane commands on.
///
/// - Array times, page and block: Micron MT29F128G08CBECB (ONFi 3.2 MLC, "L95B"
///   datasheet, Features page): page 16 384 B (+1 872 spare), 512 pages per block,
///   2 planes per die, read page 115 µs (MAX), program page 1 600 µs (TYP), erase block
///   3 ms (TYP). The datasheet gives only a maximum for tR; we use it.
/// - Capacity: the paper's 64 GB FIMM over 8 packages is 8 GiB (64 Gb) per package. The
///   datasheet's die holds 128 Gb (1 048 blocks per plane); we keep its page, block and
///   plane count and put two dies per package (the part lists multi-LUN operations) of
///   256 blocks per plane: 8 × 2 × 2 × 256 × 512 × 16 KiB = 64 GiB.
/// - Channel: the paper's "16 data-pin channel" and ONFi 3.x NV-DDR2 at "400 MHz"; NV-DDR2
///   tops out at 400 MT/s in ONFi 3.x, and the paper's Eq. 2 takes the bus as
///   `nPins × f_inf`, so 16 × 400 Mb/s = 800 MB/s either way. (The L95B itself is rated
///   to 166 MT/s; the paper's figure wins.)
/// - Command and address: 7 cycles (command, 5 address, confirm) at the 5 ns clock of
///   400 MT/s NV-DDR2 = 35 ns.
pub fn fimm_64gb() -> FimmConfig {
    FimmConfig {
        name: "fimm-64gb".into(),
        packages: 8,
        dies_per_package: 2,
        planes_per_die: 2,
        blocks_per_plane: 256,
        pages_per_block: 512,
        page_bytes: 16_384,
        t_read_ns: 115_000,
        t_prog_ns: 1_600_000,
        t_erase_ns: 3_000_000,
        t_cmd_ns: 35,
        channel: BusConfig { pins: 16, mega_transfers_per_s: 400 },
        cache_mode: true,
    }
}
