//! The array driver: what both faces do around a scheme, decided once.
//!
//! A scheme ([`crate::scheme`]) plans a request or a GC job; something has to decide when
//! to ask it, what to do with its answers and when victims are given back. The simulator
//! and the server both need those decisions, and when each made its own they drifted apart
//! (Log-RAID0 ran 1.26× faster in the simulator once because its release timer differed).
//! So the decisions live here, sans I/O and handed the time, and the faces only carry them
//! out: the simulator turns member operations into device times, the server into bytes,
//! journal records and CRCs.
//!
//! - [`gc`]: each GC job in flight, handed out phase by phase, and how the server paces it;
//! - [`gc_queue`]: the jobs in flight in the order they started, which may proceed when,
//!   and the trace of what was decided;
//! - [`release`]: when GC's victims are given back, and what a write short of space waits for;
//! - [`roles`]: each R-group's role (front-end, back-end collecting or idle);
//! - [`reads`]: how a user read is planned (directly, or around a busy or failed member).

pub mod gc;
pub mod gc_queue;
pub mod reads;
pub mod release;
pub mod roles;

pub use gc::{GcJob, GcPacing};
pub use gc_queue::{GcEvent, GcQueue, GcRun};
pub use reads::{plan_request, ReadsAround};
pub use release::{ForSpace, ReleaseClock};
pub use roles::GroupRole;
