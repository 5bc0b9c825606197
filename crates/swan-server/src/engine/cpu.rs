//! Where the engine thread's CPU goes, part by part of its round, and how long requests wait
//! before the engine takes them: the server's own measurement of the stages of a request's
//! path, which a host model of this machine is fitted to (`docs/host-model.md`).
//!
//! The engine charges the thread's CPU clock to the part it is in at each switch of part,
//! a few system calls per round, never per block. GC's member operations are charged to
//! GC wherever they run (between batches, or while writes wait for space).

use crate::threads::thread_cpu_ns;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The parts of the engine's round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// Waiting for work and taking messages off the channel.
    Receiving,
    /// Planning user requests and carrying their member operations out.
    Serving,
    /// GC jobs' member operations, their CRC checks and finishing them.
    Gc,
    /// The journal, sync points, checkpoints.
    Durability,
    /// Replies handed to the connections (emulation's held replies included).
    Replies,
    /// Rebuilding a replaced member.
    Rebuild,
}

/// The engine's CPU by part, and its requests' wait before it took them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineCpu {
    pub receiving_s: f64,
    pub serving_s: f64,
    pub gc_s: f64,
    pub durability_s: f64,
    pub replies_s: f64,
    pub rebuild_s: f64,
    /// User requests the engine has taken from its queue and served (FLUSH included).
    pub requests: u64,
    /// Their summed wait from being handed to the engine (by a connection's reader) to the
    /// engine taking them, seconds.
    pub queued_s: f64,
}

/// The running account.
#[derive(Debug)]
pub(super) struct CpuAccount {
    part: Part,
    since_ns: u64,
    ns: [u64; 6],
    requests: u64,
    queued_ns: u64,
}

impl Default for CpuAccount {
    fn default() -> Self {
        CpuAccount { part: Part::Receiving, since_ns: thread_cpu_ns(), ns: [0; 6], requests: 0, queued_ns: 0 }
    }
}

impl CpuAccount {
    /// From now on the engine's CPU goes to `part`; what it used since the last switch goes
    /// to the part it was in. Returns the part it was in, so a nested part can switch back.
    pub fn switch(&mut self, part: Part) -> Part {
        if part == self.part {
            return part;
        }
        let now = thread_cpu_ns();
        self.ns[self.part as usize] += now.saturating_sub(self.since_ns);
        self.since_ns = now;
        std::mem::replace(&mut self.part, part)
    }

    /// A request handed to the engine at `handed` was taken at `taken`.
    pub fn taken(&mut self, handed: Instant, taken: Instant) {
        self.requests += 1;
        self.queued_ns += u64::try_from(taken.saturating_duration_since(handed).as_nanos()).unwrap_or(u64::MAX);
    }

    /// The account so far (the part running now counted up to its last switch).
    pub fn report(&self) -> EngineCpu {
        let s = |p: Part| self.ns[p as usize] as f64 / 1e9;
        EngineCpu {
            receiving_s: s(Part::Receiving),
            serving_s: s(Part::Serving),
            gc_s: s(Part::Gc),
            durability_s: s(Part::Durability),
            replies_s: s(Part::Replies),
            rebuild_s: s(Part::Rebuild),
            requests: self.requests,
            queued_s: self.queued_ns as f64 / 1e9,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn cpu_goes_to_the_part_it_was_used_in() {
        let mut a = CpuAccount::default();
        a.switch(Part::Gc);
        let mut x = 1u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert_eq!(a.switch(Part::Serving), Part::Gc);
        a.switch(Part::Receiving);
        let r = a.report();
        assert!(r.gc_s > 0.0, "{r:?}");
        assert_eq!(r.durability_s, 0.0);
        let t = Instant::now();
        a.taken(t, t + Duration::from_micros(250));
        assert_eq!(a.report().requests, 1);
        assert!((a.report().queued_s - 250e-6).abs() < 1e-9);
    }
}
