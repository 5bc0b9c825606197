//! What a drive-managed shingled disk is made of: the conventional disk under it, the
//! band size, how many bands are unshingled and how many are held back from the host as
//! room for cleaning ([`SmrConfig`]); the preset that shingles the Apas disk
//! ([`atlas_10k_iv_smr`]); and the checks that reject a drive that cannot work
//! ([`SmrConfigError`]).

use serde::{Deserialize, Serialize};

use crate::hdd::{atlas_10k_iv_146gb, HddConfig, HddConfigError, BLOCK_BYTES};

/// A drive-managed SMR disk (an SWD in the paper's words).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SmrConfig {
    pub hdd: HddConfig,
    /// Bytes in one band; a multiple of 4 KiB. Bands do not follow zone boundaries.
    pub band_bytes: u64,
    /// Unshingled (conventional) bands at the start of the disk. They hold the STL's
    /// mapping table (§III-A: "one unshingled band ... stores the mapping table"); the STL
    /// puts no data there.
    pub unshingled_bands: u32,
    /// Shingled bands held back from the host's capacity. Cleaning always needs one free
    /// band to write into, and a band's worth of invalid blocks must exist whenever the
    /// free bands run out, so at least two.
    pub spare_bands: u32,
}

impl SmrConfig {
    pub fn band_blocks(&self) -> u64 {
        self.band_bytes / u64::from(BLOCK_BYTES)
    }

    /// Whole bands on the disk (a partial band at the end is unused).
    pub fn bands(&self) -> u64 {
        (self.hdd.sectors() * u64::from(self.hdd.sector_bytes) / u64::from(BLOCK_BYTES)) / self.band_blocks().max(1)
    }

    pub fn shingled_bands(&self) -> u64 {
        self.bands().saturating_sub(u64::from(self.unshingled_bands))
    }

    /// Blocks the host may address.
    pub fn logical_blocks(&self) -> u64 {
        self.shingled_bands().saturating_sub(u64::from(self.spare_bands)) * self.band_blocks()
    }

    /// Rejects a drive that cannot work, naming what is wrong.
    pub fn validate(&self) -> Result<(), SmrConfigError> {
        self.hdd.validate()?;
        if self.band_bytes == 0 || !self.band_bytes.is_multiple_of(u64::from(BLOCK_BYTES)) {
            return Err(SmrConfigError::BandSize { band_bytes: self.band_bytes });
        }
        if self.unshingled_bands == 0 {
            return Err(SmrConfigError::NoUnshingledBand);
        }
        if self.spare_bands < 2 {
            return Err(SmrConfigError::TooFewSpares { spare_bands: self.spare_bands });
        }
        if self.bands() > u64::from(u32::MAX) || self.logical_blocks() >= u64::from(u32::MAX) {
            return Err(SmrConfigError::TooLarge);
        }
        if self.shingled_bands() <= u64::from(self.spare_bands) {
            return Err(SmrConfigError::TooFewBands {
                bands: self.bands(),
                needed: u64::from(self.unshingled_bands) + u64::from(self.spare_bands) + 1,
            });
        }
        Ok(())
    }
}

/// An SMR configuration that cannot work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SmrConfigError {
    #[error(transparent)]
    Hdd(#[from] HddConfigError),
    #[error("band size {band_bytes} B is zero or not a whole number of 4 KiB blocks")]
    BandSize { band_bytes: u64 },
    #[error("no unshingled band to hold the mapping table")]
    NoUnshingledBand,
    #[error("{spare_bands} spare bands; cleaning needs at least 2")]
    TooFewSpares { spare_bands: u32 },
    #[error("the disk holds {bands} bands; this layout needs more than {needed}")]
    TooFewBands { bands: u64, needed: u64 },
    #[error("more bands or blocks than the STL's 32-bit tables address")]
    TooLarge,
}

/// Default band size: 32 MiB. The paper gives none. Aghayev and Desnoyers ("Skylight — A
/// Window on Shingled Disk Operation", FAST '15) measured the band size of real
/// drive-managed SMR disks; we could confirm the paper and that it measures band size
/// (its abstract), but not read its figures in stored text. What we
/// could read is the authors' own SMR emulator (github.com/agayev/skylight, `dm-shingle.c`
/// header, quoting Seagate: "tracks in the range of 0.5 to 2 MiB", "bands in the range of
/// 20 to 200 tracks"; `dm-args.py` enforces the same bounds), i.e. bands of 10–400 MiB.
/// 32 MiB is our choice inside both: ~78 of the Atlas preset's ~420 KiB outer tracks.
pub const DEFAULT_BAND_BYTES: u64 = 32 << 20;

/// The Apas SWD: the Atlas 10K IV shingled into 32 MiB bands, one unshingled band for the
/// mapping table, and 64 spare bands (2 GiB, 1.5 % of the disk — assumed; the paper does
/// not say how much room its STL keeps).
pub fn atlas_10k_iv_smr() -> SmrConfig {
    SmrConfig { hdd: atlas_10k_iv_146gb(), band_bytes: DEFAULT_BAND_BYTES, unshingled_bands: 1, spare_bands: 64 }
}
