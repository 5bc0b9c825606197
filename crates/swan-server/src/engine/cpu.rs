//! Where the engine thread's CPU goes, part by part of its round, and how long requests wait
//! before the engine takes them: the server's own measurement of the stages of a request's
//! path, which a host model of this machine is fitted to (`docs/host-model.md`).
//!
//! The thread's CPU clock is a system call that takes the run queue's lock, so it is read
//! about once a millisecond at most, not at each switch of part (a profile of SWAN0 with GC
//! found those reads a tenth of the server's CPU). In between, each part's share of the CPU
//! the thread used is its share of the thread's wall-clock time awake (a vDSO read, no
//! system call); the two differ only while the thread waits on a run queue or for a pool's
//! I/O, time then shared among the parts it fell in. Time the engine sleeps waiting for work
//! counts for no part. GC's member operations are charged to GC wherever they run.

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

const PARTS: usize = 6;

/// The thread's CPU clock is read again once this much wall-clock time has passed.
const SETTLE_NS: u64 = 1_000_000;

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
#[derive(Clone, Debug)]
pub(super) struct CpuAccount {
    part: Part,
    /// When the part running now began (or the thread last woke).
    wall_since: Instant,
    /// Wall-clock time awake by part since the CPU clock was last read, ns.
    wall_ns: [u64; PARTS],
    /// The thread's CPU clock when last read, ns.
    cpu_since: u64,
    /// CPU by part, settled, ns.
    ns: [u64; PARTS],
    requests: u64,
    queued_ns: u64,
}

impl Default for CpuAccount {
    fn default() -> Self {
        CpuAccount {
            part: Part::Receiving,
            wall_since: Instant::now(),
            wall_ns: [0; PARTS],
            cpu_since: thread_cpu_ns(),
            ns: [0; PARTS],
            requests: 0,
            queued_ns: 0,
        }
    }
}

fn ns_between(a: Instant, b: Instant) -> u64 {
    u64::try_from(b.saturating_duration_since(a).as_nanos()).unwrap_or(u64::MAX)
}

impl CpuAccount {
    /// From now on the engine's CPU goes to `part`. Returns the part it was in, so a nested
    /// part can switch back.
    pub fn switch(&mut self, part: Part) -> Part {
        if part == self.part {
            return part;
        }
        self.close_segment();
        if self.wall_ns.iter().sum::<u64>() >= SETTLE_NS {
            self.settle();
        }
        std::mem::replace(&mut self.part, part)
    }

    /// The wall-clock time since the part began (or the thread woke) goes to the part.
    fn close_segment(&mut self) {
        let now = Instant::now();
        self.wall_ns[self.part as usize] += ns_between(self.wall_since, now);
        self.wall_since = now;
    }

    /// The thread is about to sleep waiting for work: the sleep counts for no part.
    pub fn sleeping(&mut self) {
        self.close_segment();
    }

    /// The thread woke from [`CpuAccount::sleeping`].
    pub fn woke(&mut self) {
        self.wall_since = Instant::now();
    }

    /// Read the thread's CPU clock and share what it used since the last read among the
    /// parts by their wall-clock time awake.
    fn settle(&mut self) {
        let cpu = thread_cpu_ns();
        let used = cpu.saturating_sub(self.cpu_since);
        self.cpu_since = cpu;
        let wall = std::mem::take(&mut self.wall_ns);
        let total: u64 = wall.iter().sum();
        if total == 0 {
            self.ns[self.part as usize] += used;
            return;
        }
        let mut given = 0;
        for (p, w) in wall.iter().enumerate() {
            let share = (u128::from(used) * u128::from(*w) / u128::from(total)) as u64;
            self.ns[p] += share;
            given += share;
        }
        // What rounding left over goes to the part running now.
        self.ns[self.part as usize] += used - given;
    }

    /// A request handed to the engine at `handed` was taken at `taken`.
    pub fn taken(&mut self, handed: Instant, taken: Instant) {
        self.requests += 1;
        self.queued_ns += ns_between(handed, taken);
    }

    /// The account so far, the part running now counted up to this instant.
    pub fn report(&self) -> EngineCpu {
        let mut a = self.clone();
        a.close_segment();
        a.settle();
        let s = |p: Part| a.ns[p as usize] as f64 / 1e9;
        EngineCpu {
            receiving_s: s(Part::Receiving),
            serving_s: s(Part::Serving),
            gc_s: s(Part::Gc),
            durability_s: s(Part::Durability),
            replies_s: s(Part::Replies),
            rebuild_s: s(Part::Rebuild),
            requests: a.requests,
            queued_s: a.queued_ns as f64 / 1e9,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spin(rounds: u64) {
        let mut x = 1u64;
        for i in 0..rounds {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
    }

    #[test]
    fn cpu_goes_to_the_part_it_was_used_in() {
        let mut a = CpuAccount::default();
        a.switch(Part::Gc);
        spin(30_000_000);
        assert_eq!(a.switch(Part::Serving), Part::Gc);
        spin(10_000_000);
        a.switch(Part::Receiving);
        let r = a.report();
        assert!(r.gc_s > 0.0 && r.serving_s > 0.0, "{r:?}");
        assert!(r.gc_s > 1.5 * r.serving_s, "three times the work went to GC: {r:?}");
        assert_eq!(r.durability_s, 0.0);
        let t = Instant::now();
        a.taken(t, t + Duration::from_micros(250));
        assert_eq!(a.report().requests, 1);
        assert!((a.report().queued_s - 250e-6).abs() < 1e-9);
    }

    #[test]
    fn a_sleep_counts_for_no_part() {
        let mut a = CpuAccount::default();
        a.switch(Part::Serving);
        // Long against a descheduling in the short Receiving part (the suite runs tests side
        // by side on two cores): a fixed count of rounds took only 1 ms on a fast machine.
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(50) {
            spin(100_000);
        }
        a.switch(Part::Receiving);
        a.sleeping();
        std::thread::sleep(Duration::from_millis(50));
        a.woke();
        let r = a.report();
        // The sleep took no CPU; had it counted as Receiving's wall time, Receiving would
        // have taken nearly all of Serving's CPU.
        assert!(r.serving_s > 10.0 * r.receiving_s, "{r:?}");
    }
}
