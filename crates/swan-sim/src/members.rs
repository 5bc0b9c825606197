//! What the engine needs of an array's members, as one trait: [`Members`].
//!
//! The engine drives a scheme over a set of member devices. Independent SSDs are one such
//! set (`Vec<Ssd>`); members that share a routed network — Triple-A clusters behind one PCIe
//! fabric ([`crate::fabric_array`]) — are another, which is why the trait is over the set and
//! not over one device: a member's operation may wait on links that other members use.
//!
//! Every operation names its member and is timed when submitted, in non-decreasing `now`
//! order (the model of [`swan_models::Device`]). Members may also have work of their own to
//! do later (a FIMM's collections, carried out step by step): they say when through
//! [`Members::wakeup`] and the engine calls [`Members::wake`] then.
//!
//! A member may also hold an operation back and hand it to its device later, when something
//! it waits for is done (a zone's one write in flight, [`crate::zoned_array`]): then its
//! completion is not known when it is submitted ([`Completion::Later`]), and the member
//! reports it, under the token the engine gave it, once it is ([`Members::completed`], asked
//! after each [`Members::wake`]). Timing an operation from when it reaches the device, not
//! from when it was submitted, keeps the devices' shared parts serving work in the order it
//! arrives.
//!
//! The engine is generic over the set (static dispatch: the member calls are the hot path).

use swan_core::io::IoClass;
use swan_models::ssd::{Ssd, SsdStats};
use swan_models::{DevOp, Device, Nanos};

/// When a member operation completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// Known when it was submitted.
    At(Nanos),
    /// Reported later by [`Members::completed`] under the operation's token.
    Later,
}

/// An operation a member held back, once it has gone to its device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatched {
    /// The token it was submitted under.
    pub token: u64,
    pub member: u32,
    pub kind: swan_models::DevOpKind,
    pub class: IoClass,
    /// When it went to the device (no sooner than the wake that sent it).
    pub at: Nanos,
    /// When it completes.
    pub done: Nanos,
}

/// The member devices of an array, as the engine uses them.
pub trait Members {
    /// How many members there are.
    fn count(&self) -> usize;

    /// Submit `op` to member `member` at `now`; returns when it completes.
    fn submit(&mut self, member: u32, now: Nanos, op: DevOp) -> Nanos;

    /// Submit `op` as [`Members::submit`] does, letting the member hold it back and report
    /// its completion later under `token` (the engine's way in; the default never holds).
    #[inline]
    fn submit_tracked(&mut self, member: u32, now: Nanos, op: DevOp, _token: u64) -> Completion {
        Completion::At(self.submit(member, now, op))
    }

    /// An operation held back by [`Members::submit_tracked`] that has now gone to its
    /// device: when, and when it completes.
    #[inline]
    fn completed(&mut self) -> Option<Dispatched> {
        None
    }

    /// How long a read of `count` blocks from `block` would wait on `member` before its
    /// slowest block starts, if submitted at `now` (reads around a busy member). Changes
    /// nothing.
    fn read_wait(&self, member: u32, now: Nanos, block: u64, count: u32, class: IoClass) -> Nanos;

    /// When `member` will have finished everything submitted so far, its own work included.
    fn busy_until(&self, member: u32) -> Nanos;

    /// Apply a write or TRIM to `member`'s mapping without time (the untimed pre-fill).
    fn apply_untimed(&mut self, member: u32, op: DevOp);

    /// Forget every member's counts (after an untimed fill or aging).
    fn reset_stats(&mut self);

    /// `member`'s operation counts and latencies, in an SSD's terms (pages are 4 KiB
    /// blocks; GC copies and erases are the member's own).
    fn stats(&self, member: u32) -> &SsdStats;

    /// The SSDs among the members, which Harmonia's GGC coordinates and the SSD figures
    /// describe (empty when the members are not SSDs).
    fn ssds(&mut self) -> &mut [Ssd];

    /// The earliest time a member wants [`Members::wake`] called that it has not asked for
    /// before (asked once per time).
    #[inline]
    fn wakeup(&mut self) -> Option<Nanos> {
        None
    }

    /// A time a member asked for has come: carry out its work due by `now`.
    fn wake(&mut self, _now: Nanos) {}

    /// Time `member` ran slowed down by its variation, up to `now`.
    fn slow_ns(&mut self, member: u32, now: Nanos) -> Nanos;

    /// Share of `elapsed` that `member`'s media path was busy: an SSD's dies, a cluster's
    /// local bus.
    fn busy_fraction(&self, member: u32, elapsed: Nanos) -> f64;

    /// Blocks a member exposes to the array.
    fn user_blocks(&self, member: u32) -> u64;

    /// DRAM a member's own mapping would take, and the memory its model takes here.
    fn map_dram_bytes(&self, member: u32) -> u64;
    fn model_bytes(&self, member: u32) -> u64;

    /// What a network between host and members measured, if there is one.
    fn fabric_report(&self, _now: Nanos) -> Option<crate::fabric_array::report::FabricReport> {
        None
    }
}

/// Independent SSDs, each with its own link and FTL.
impl Members for Vec<Ssd> {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn submit(&mut self, member: u32, now: Nanos, op: DevOp) -> Nanos {
        self[member as usize].submit(now, op)
    }

    #[inline]
    fn read_wait(&self, member: u32, now: Nanos, block: u64, count: u32, class: IoClass) -> Nanos {
        self[member as usize].read_wait(now, block, count, class)
    }

    #[inline]
    fn busy_until(&self, member: u32) -> Nanos {
        self[member as usize].busy_until()
    }

    fn apply_untimed(&mut self, member: u32, op: DevOp) {
        self[member as usize].apply_untimed(op);
    }

    fn reset_stats(&mut self) {
        self.iter_mut().for_each(Ssd::reset_stats);
    }

    #[inline]
    fn stats(&self, member: u32) -> &SsdStats {
        self[member as usize].stats()
    }

    #[inline]
    fn ssds(&mut self) -> &mut [Ssd] {
        self
    }

    fn slow_ns(&mut self, member: u32, now: Nanos) -> Nanos {
        self[member as usize].slow_ns(now)
    }

    fn busy_fraction(&self, member: u32, elapsed: Nanos) -> f64 {
        self[member as usize].die_busy_fraction(elapsed)
    }

    fn user_blocks(&self, member: u32) -> u64 {
        self[member as usize].config().user_pages
    }

    fn map_dram_bytes(&self, member: u32) -> u64 {
        self[member as usize].map_dram_bytes()
    }

    fn model_bytes(&self, member: u32) -> u64 {
        self[member as usize].model_bytes()
    }
}
