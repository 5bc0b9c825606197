//! swan's test harnesses, for tests only (`publish = false`; every other crate takes it as a
//! dev-dependency): what several crates' tests share, kept out of the libraries they test.
//!
//! - [`tokens`]: runs the core's [`IoPlan`](swan_core::io::IoPlan)s over one `u64` token per
//!   member block, so a scheme is checked end to end against a reference of every block.
//! - [`recorder`]: a recording member backing, in the spirit of dm-log-writes, that logs every
//!   write, trim and sync in order and fails chosen operations.
//! - [`crashsim`]: crashes at any point of that log, and faults at the worst moments, over the
//!   server's real engine and on-disk format, reproducible from a seed.
//! - [`rng`]: the seeded generators test workloads draw from.

pub mod crashsim;
pub mod recorder;
pub mod rng;
pub mod tokens;
