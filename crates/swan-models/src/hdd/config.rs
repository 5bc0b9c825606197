//! What a conventional disk is made of: spindle speed, recording zones (cylinders and
//! sectors per track), surfaces, the seek curve and the head switch ([`HddConfig`]); the
//! preset for the disk Apas emulates, the Maxtor Atlas 10K IV 146 GB
//! ([`atlas_10k_iv_146gb`]); and the checks that reject a disk that cannot exist
//! ([`HddConfigError`]).

use serde::{Deserialize, Serialize};

use crate::Nanos;

/// A recording zone: `cylinders` consecutive cylinders whose tracks all hold
/// `sectors_per_track` sectors. Zones are listed from the outer edge (LBA 0) inwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    pub cylinders: u32,
    pub sectors_per_track: u32,
}

/// The seek curve `t(d) = a + b·√d` for a move of `d ≥ 1` cylinders, fitted so that a
/// one-cylinder seek takes `track_to_track_ns` and the mean over uniformly random start
/// and end cylinders takes `average_ns`, then capped at `full_stroke_ns`. Both datasheet
/// figures include settling. A zero-cylinder move costs nothing (a head switch, if any, is
/// charged separately).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeekCurve {
    pub track_to_track_ns: Nanos,
    pub average_ns: Nanos,
    pub full_stroke_ns: Nanos,
}

/// A conventional (non-shingled) disk drive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HddConfig {
    pub name: String,
    pub rpm: u32,
    pub sector_bytes: u32,
    /// Recording surfaces, one head each; a cylinder is one track on every surface.
    pub heads: u32,
    pub zones: Vec<Zone>,
    pub seek: SeekCurve,
    /// Switching to another head of the same cylinder (settling on the new surface).
    pub head_switch_ns: Nanos,
}

impl HddConfig {
    /// One revolution in nanoseconds.
    pub fn rev_ns(&self) -> Nanos {
        60_000_000_000 / u64::from(self.rpm.max(1))
    }

    pub fn cylinders(&self) -> u64 {
        self.zones.iter().map(|z| u64::from(z.cylinders)).sum()
    }

    pub fn sectors(&self) -> u64 {
        self.zones.iter().map(|z| u64::from(z.cylinders) * u64::from(self.heads) * u64::from(z.sectors_per_track)).sum()
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.sectors() * u64::from(self.sector_bytes)
    }

    /// Media rate of zone `z` in bytes per second: one track per revolution.
    pub fn media_bytes_per_s(&self, z: usize) -> f64 {
        let track = f64::from(self.zones[z].sectors_per_track) * f64::from(self.sector_bytes);
        track * f64::from(self.rpm) / 60.0
    }

    /// `(a, b)` of the seek curve in nanoseconds. The mean of `√d` over uniformly random
    /// start and end cylinders on `C` cylinders is `(8/15)·√C` (the distance has the
    /// triangular density `2(C−d)/C²`), so `a + b = t2t` and `a + b·(8/15)·√C = avg`.
    pub fn seek_coefficients(&self) -> (f64, f64) {
        let mean_sqrt = 8.0 / 15.0 * (self.cylinders() as f64).sqrt();
        let (t2t, avg) = (self.seek.track_to_track_ns as f64, self.seek.average_ns as f64);
        let b = (avg - t2t) / (mean_sqrt - 1.0);
        (t2t - b, b)
    }

    /// Rejects a disk that cannot exist, naming the field.
    pub fn validate(&self) -> Result<(), HddConfigError> {
        let name = || self.name.clone();
        for (field, v) in [("rpm", self.rpm), ("sector_bytes", self.sector_bytes), ("heads", self.heads)] {
            if v == 0 {
                return Err(HddConfigError::Zero { disk: name(), field });
            }
        }
        // The device is addressed in 4 KiB blocks, so a block must be whole sectors.
        if !super::BLOCK_BYTES.is_multiple_of(self.sector_bytes) {
            return Err(HddConfigError::SectorSize { disk: name(), sector_bytes: self.sector_bytes });
        }
        if self.zones.is_empty() {
            return Err(HddConfigError::Zero { disk: name(), field: "zones" });
        }
        if self.zones.iter().any(|z| z.cylinders == 0 || z.sectors_per_track == 0) {
            return Err(HddConfigError::Zero { disk: name(), field: "zones[].cylinders/sectors_per_track" });
        }
        let s = self.seek;
        if s.track_to_track_ns == 0 || s.track_to_track_ns > s.average_ns || s.average_ns > s.full_stroke_ns {
            return Err(HddConfigError::SeekOrder { disk: name() });
        }
        // The fit needs the mean √distance to exceed one cylinder's, i.e. at least four cylinders.
        if self.cylinders() < 4 {
            return Err(HddConfigError::SeekOrder { disk: name() });
        }
        let sectors = self.zones.iter().try_fold(0u64, |acc, z| {
            u64::from(z.cylinders)
                .checked_mul(u64::from(self.heads))?
                .checked_mul(u64::from(z.sectors_per_track))
                .and_then(|n| acc.checked_add(n))
        });
        if sectors.and_then(|n| n.checked_mul(u64::from(self.sector_bytes))).is_none() {
            return Err(HddConfigError::TooLarge { disk: name() });
        }
        Ok(())
    }
}

/// A disk configuration that cannot exist.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HddConfigError {
    #[error("disk `{disk}`: `{field}` is zero or empty")]
    Zero { disk: String, field: &'static str },
    #[error("disk `{disk}`: a 4 KiB block is not a whole number of {sector_bytes}-byte sectors")]
    SectorSize { disk: String, sector_bytes: u32 },
    #[error("disk `{disk}`: seek times must satisfy 0 < track-to-track ≤ average ≤ full stroke, over ≥ 4 cylinders")]
    SeekOrder { disk: String },
    #[error("disk `{disk}`: more bytes than a 64-bit count can hold")]
    TooLarge { disk: String },
}

/// Zones of the preset: outer and inner sectors per track, and how many zones between.
const ATLAS_OUTER_SPT: u32 = 843;
const ATLAS_INNER_SPT: u32 = 469;
const ATLAS_ZONES: u32 = 16;
const ATLAS_CYLS_PER_ZONE: u32 = 3_420;

/// The disk Apas's SWD is emulated on (§IV-A): DiskSim's Maxtor Atlas 10K IV, 146 GB.
/// DiskSim 4.0 itself does not ship this disk (its `valid/` holds the older Quantum Atlas
/// 10K, `atlas10k.model`), so the constants come from two places; see `docs/apas.md`,
/// "Disk models", for the full account.
///
/// - **10,000 rpm** (one revolution 6 ms): the drive's name and the brief; it is the class
///   of the Atlas 10K family (DiskSim's extracted Atlas 10K: "Rotation speed = 10025").
/// - **Average seek 4.4 ms (read)**: Maxtor Atlas 10K IV Product Manual (PN 1880, March
///   2003). We could find the manual but not read its specification table in stored text,
///   so this is the figure as we recall it, **unconfirmed**; it is the value every later
///   Maxtor 10K generation also quotes for reads.
/// - **Track-to-track 1.245 ms, full stroke 10.828 ms, head switch 0.176 ms**: DiXtrac's
///   extraction of the Quantum Atlas 10K in DiskSim 4.0 (`valid/atlas10k.model`:
///   "Single cylinder seek time = 1.24500", "Full strobe seek time = 10.82800", "Head
///   switch time = 0.17600"), the Atlas 10K IV's predecessor on the same 10K platform;
///   measured values beat an unread datasheet. With the 4.4 ms average the fitted curve
///   reaches ~7.2 ms at full stroke, under the cap.
/// - **8 heads, 16 zones × 3,420 cylinders, 843 → 469 sectors per track** (linear across
///   zones, outer to inner): **assumed**. Chosen so that the capacity is 147.0 GB (the
///   drive's 146.8 GB formatted) and the media rate runs 72 MB/s at the outer edge to
///   40 MB/s at the inner, the span of the drive's quoted sustained rate as we recall it
///   (unconfirmed). The real zone table was not available.
pub fn atlas_10k_iv_146gb() -> HddConfig {
    let step = (ATLAS_OUTER_SPT - ATLAS_INNER_SPT) as f64 / f64::from(ATLAS_ZONES - 1);
    let zones = (0..ATLAS_ZONES)
        .map(|i| Zone {
            cylinders: ATLAS_CYLS_PER_ZONE,
            sectors_per_track: ATLAS_OUTER_SPT - (step * f64::from(i)).round() as u32,
        })
        .collect();
    HddConfig {
        name: "atlas-10k-iv-146gb".into(),
        rpm: 10_000,
        sector_bytes: 512,
        heads: 8,
        zones,
        seek: SeekCurve { track_to_track_ns: 1_245_000, average_ns: 4_400_000, full_stroke_ns: 10_828_000 },
        head_switch_ns: 176_000,
    }
}
