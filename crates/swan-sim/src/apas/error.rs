//! Why an Apas run could not be set up or go on: a setting out of range (named as the
//! option is), the trace, or a model refusing its configuration.

use crate::replay::ReplayError;
use swan_core::apas::ApasError;
use swan_models::smr::{SmrConfigError, SmrError};
use swan_models::ssd::SsdConfigError;
use thiserror::Error;

/// Why HWSR's cache cannot be split ([`super::hwsr::partition`]).
#[derive(Clone, Copy, Debug, PartialEq, Error)]
pub enum HwsrError {
    #[error("HWSR's read fraction {fraction} must be in [0, 1]")]
    ReadFraction { fraction: f64 },
    #[error("a cache of {blocks} blocks has no room for a read and a write block")]
    CacheTooSmall { blocks: u64 },
}

/// Why the volume cannot be striped over the disks ([`super::layout::DiskLayout::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum DiskLayoutError {
    #[error("at least one disk is needed")]
    NoDisks,
    #[error("a disk of {per_disk} blocks holds no chunk of {chunk} blocks")]
    NoChunk { per_disk: u64, chunk: u64 },
}

/// Why [`super::run_policy`] (or opening its trace) failed.
#[derive(Debug, Error)]
pub enum ApasRunError {
    #[error("acceleration {accel} must be a positive number")]
    Accel { accel: f64 },
    #[error("the period must be longer than 0 s")]
    ZeroPeriod,
    #[error("cache fraction {fraction} must be in (0, 1]")]
    CacheFraction { fraction: f64 },
    #[error("at least one disk is needed")]
    NoDisks,
    /// The disk model refuses the band size; its reason is part of the message.
    #[error("band size {band_bytes} B: {error}")]
    BandSize { band_bytes: u64, error: SmrConfigError },
    #[error("stripe chunk {bytes} B must be a positive whole number of 4 KiB blocks")]
    Chunk { bytes: u64 },
    #[error("auto fill headroom {headroom} must be a number ≥ 0")]
    Headroom { headroom: f64 },
    #[error(
        "disk fill {fill}: a disk can hold valid data on 0 to {most:.4} of its shingled blocks \
         (the rest is its spare bands)"
    )]
    DiskFill { fill: f64, most: f64 },
    #[error("the trace spans no time: give the period (--period-s)")]
    NoSpan,
    #[error("no SSD of the apas-slc preset fits")]
    NoSsdFits,
    #[error(transparent)]
    Trace(#[from] ReplayError),
    #[error(transparent)]
    Apas(#[from] ApasError),
    #[error(transparent)]
    Hwsr(#[from] HwsrError),
    #[error(transparent)]
    Layout(#[from] DiskLayoutError),
    #[error(transparent)]
    Disk(#[from] SmrConfigError),
    #[error(transparent)]
    Aging(#[from] SmrError),
    #[error(transparent)]
    Ssd(#[from] SsdConfigError),
}
