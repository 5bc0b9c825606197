//! Zoned storage: a device whose logical space is a row of zones, each written only at
//! its write pointer and freed only whole, by a reset (NVMe Zoned Namespaces; host-managed
//! SMR is the same contract). The device does no garbage collection: the host places every
//! write and decides when a zone is reset.
//!
//! - [`zones`]: the contract alone: zone conditions, write pointers, the open- and
//!   active-zone limits, and the errors a host that breaks them gets, so a scheme can be
//!   checked against it without a clock.
//! - [`config`] and [`presets`]: what a zoned SSD is made of, and the drives the ZNS RAID
//!   papers ran on, each number with its source.
//! - [`device`]: [`ZnsSsd`], the contract timed by the conventional SSD's NAND model.
//! - [`bandwidth`]: what one zone of a model writes and reads, measured on it.

pub mod bandwidth;
pub mod config;
mod device;
pub mod presets;
pub mod zones;

pub use config::{CommandIntake, ZnsConfig, ZnsConfigError};
pub use device::{ZnsSsd, ZnsStats};
pub use presets::{zns_preset, ZNS_PRESET_NAMES};
pub use zones::{Zone, ZoneCondition, ZoneError, ZoneGeometry, ZonePrimitive, Zones};
