//! Virtual time: the events the engine schedules and the queue that hands them back in
//! order.
//!
//! Events are ordered by (time, insertion sequence), so ties resolve in a fixed order and a
//! seed reproduces a run exactly. A late event ([`Clock::push_late`]) comes after every other
//! event of its instant.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use swan_core::scheme::GcJobId;
use swan_models::Nanos;

/// A GC job in flight as an event names it: the low 32 bits of its id. Ids are handed out
/// in order and jobs in flight together are never 2^32 ids apart, so the key is unique among
/// them; a full id would make every event (and the event heap, the hot path) a third larger.
pub(super) type GcKey = u32;

pub(super) fn gc_key(id: GcJobId) -> GcKey {
    id as GcKey
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum What {
    /// Generate and send the next request (closed loop refill or open-loop arrival).
    Issue,
    /// The client has sent a request (host modelled: its own CPU work is done).
    Sent(u32),
    /// The server's connection reader has handed a request to the engine (host modelled).
    ToEngine(u32),
    /// A request has reached the engine with no host modelled: its payload has crossed the
    /// network.
    Arrive(u32),
    /// The engine thread's work on a request it took is done: its member I/O goes out (host
    /// modelled).
    Execute(u32),
    /// The engine has sent a request's reply (host modelled).
    Replied(u32),
    /// A phase of a request's member I/O completed.
    ReqPhase(u32),
    /// A read's payload has crossed the network back.
    Deliver(u32),
    /// The engine thread's work on a GC job's next operation is done: it goes to its member.
    GcOp(GcKey),
    /// The engine thread's next turn (a late event: after everything else at its instant).
    EngineTurn,
    /// The GGC coordinator's wake-up (poll or idle check).
    Ggc,
    /// The members' own work is due (see [`super::Members::wakeup`]).
    Members,
    /// Close a reporting interval and check the stop rule.
    Tick,
}

/// The bit of an event's sequence that orders it after its instant's other events.
const LATE: u64 = 1 << 63;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    at: Nanos,
    seq: u64,
    what: What,
}

impl Event {
    /// (time, sequence) as one number: the heap compares it without a branch.
    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.at) << 64) | u128::from(self.seq)
    }
}

impl Ord for Event {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest event first.
        other.key().cmp(&self.key())
    }
}

impl PartialOrd for Event {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The simulated clock and the events still to come.
#[derive(Debug, Default)]
pub(super) struct Clock {
    events: BinaryHeap<Event>,
    seq: u64,
    /// The time of the event being handled.
    pub(super) now: Nanos,
    /// The run's closing `Tick` is scheduled: no request is issued and no interval follows.
    pub(super) stopping: bool,
}

impl Clock {
    #[inline]
    pub(super) fn push(&mut self, at: Nanos, what: What) {
        self.seq += 1;
        self.events.push(Event { at, seq: self.seq, what });
    }

    /// An event at `at` that comes after every event of that instant not late itself: the
    /// engine thread's turn sees everything that happened by then.
    #[inline]
    pub(super) fn push_late(&mut self, at: Nanos, what: What) {
        self.seq += 1;
        self.events.push(Event { at, seq: self.seq | LATE, what });
    }

    /// The next event, with the clock moved to its time.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<What> {
        let ev = self.events.pop()?;
        debug_assert!(ev.at >= self.now, "time went backwards");
        self.now = ev.at;
        Some(ev.what)
    }

    /// Close the run now: its last interval ends at this instant.
    pub(super) fn stop(&mut self) {
        self.stopping = true;
        self.push(self.now, What::Tick);
    }
}
