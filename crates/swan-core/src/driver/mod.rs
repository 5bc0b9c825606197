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
//! - [`turns`]: what the engine thread does next, round by round: requests taken, GC jobs
//!   started, stepped and finished, victims released, writes short of space; and the record
//!   of those decisions;
//! - [`gc`]: each GC job in flight, handed out phase by phase, and how GC is paced among
//!   user requests;
//! - [`gc_queue`]: the jobs in flight in the order they started, and which may proceed when;
//! - [`release`]: when GC's victims are given back, and what a write short of space waits for;
//! - [`roles`]: each R-group's role (front-end, back-end collecting or idle);
//! - [`reads`]: how a user read is planned (directly, or around a busy or failed member).

pub mod gc;
pub mod gc_queue;
pub mod reads;
pub mod release;
pub mod roles;
pub mod turns;

pub use gc::{GcJob, GcPacing};
pub use gc_queue::{GcQueue, GcRun};
pub use reads::{plan_request, ReadsAround};
pub use release::{ForSpace, ReleaseClock};
pub use roles::GroupRole;
pub use turns::{ArrayDriver, Decision, MemberView, Turn};
