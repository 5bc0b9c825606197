//! Zoned storage: a device whose logical space is a row of zones, each written only at
//! its write pointer and freed only whole, by a reset (NVMe Zoned Namespaces; host-managed
//! SMR is the same contract). The device does no garbage collection: the host places every
//! write and decides when a zone is reset.
//!
//! [`zones`] is the contract alone: zone conditions, write pointers, the open- and
//! active-zone limits, and the errors a host that breaks them gets. Timing is layered over
//! it separately, so a scheme can be checked against the contract without a clock.

pub mod zones;

pub use zones::{Zone, ZoneCondition, ZoneError, ZoneGeometry, Zones};
