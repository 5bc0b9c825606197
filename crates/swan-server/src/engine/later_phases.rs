//! With `--emulate`, the later phases of a user request's plan (RAID4/5's writes after their
//! read-modify-write reads) reach the model SSDs only once the phase before them has
//! completed on the model, in time order with everything else the engine gives them.
//!
//! The engine carries every phase out on the members at once (the bytes cannot wait), but a
//! model SSD given work for a future instant queues everything given to it afterwards behind
//! that work, which the simulator, submitting each phase at its own completion event, never
//! does: one read-modify-write at a time would then pass through each SSD. So the later
//! phases wait here, and the request's reply waits (in [`super::replies`], by token) for
//! the completion of its last phase.

use crate::emulate::{EmuOp, Emulator};
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;
use swan_core::io::IoClass;

/// One member operation as the model SSD hears of it.
#[derive(Clone, Copy, Debug)]
pub(super) struct ModelOp {
    pub member: u32,
    pub op: EmuOp,
    pub block: u64,
    pub count: u32,
    pub class: IoClass,
}

/// A request's phases still to be given to the model, from `not_before` on. Ordered by
/// when it is due, then by arrival: the order the model hears of them.
struct Waiting {
    token: u64,
    not_before: Instant,
    phases: VecDeque<Vec<ModelOp>>,
}

impl Waiting {
    fn key(&self) -> (Instant, u64) {
        (self.not_before, self.token)
    }
}

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Waiting {}

impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

#[derive(Default)]
pub(super) struct LaterPhases {
    /// Earliest due first: the engine asks when the next is due after every request.
    waiting: BinaryHeap<Reverse<Waiting>>,
    next_token: u64,
    /// The plan being carried out may defer its later phases (a user request's, whose reply
    /// can wait for them; set by the worker around it).
    pub defer: bool,
    /// The token of the plan just carried out, if it deferred phases.
    last: Option<u64>,
}

impl LaterPhases {
    /// `phases` wait until `not_before`, when the phase before them completes on the model.
    pub fn push(&mut self, not_before: Instant, phases: VecDeque<Vec<ModelOp>>) {
        let token = self.new_token();
        self.waiting.push(Reverse(Waiting { token, not_before, phases }));
        self.last = Some(token);
    }

    /// A token no reply waits under yet (the zone holds name theirs here too, so the two
    /// never give one twice).
    pub fn new_token(&mut self) -> u64 {
        self.next_token += 1;
        self.next_token
    }

    /// The token of the plan just carried out, if it deferred phases (asked once).
    pub fn take_token(&mut self) -> Option<u64> {
        self.last.take()
    }

    /// When the next waiting phase is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.waiting.peek().map(|w| w.0.not_before)
    }

    /// Give the model every phase due by `now`, in the order they came due, at `now`; each
    /// request whose last phase that was goes into `done` with the model's completion.
    /// `all`: every phase now, due or not (the engine is stopping).
    pub fn advance(&mut self, emu: &mut Emulator, now: Instant, all: bool, done: &mut Vec<(u64, Instant)>) {
        while self.waiting.peek().is_some_and(|w| all || w.0.not_before <= now) {
            let Reverse(mut w) = self.waiting.pop().expect("peeked");
            let phase = w.phases.pop_front().expect("a waiting request has a phase left");
            let end = phase
                .iter()
                .map(|o| emu.complete_at(now, o.member, o.op, o.block, o.count, o.class))
                .max()
                .unwrap_or(now);
            if w.phases.is_empty() {
                done.push((w.token, end));
            } else {
                w.not_before = end;
                self.waiting.push(Reverse(w));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn write(member: u32, block: u64) -> ModelOp {
        ModelOp { member, op: EmuOp::Write, block, count: 1, class: IoClass::User }
    }

    #[test]
    fn later_phases_reach_the_model_only_when_due_and_in_order() {
        let t0 = Instant::now();
        let mut emu = Emulator::configured("sata850pro", None, 2, 131_072, t0).unwrap();
        let mut later = LaterPhases::default();
        later.push(t0 + Duration::from_micros(200), VecDeque::from([vec![write(0, 8)]]));
        assert_eq!(later.take_token(), Some(1));
        assert_eq!(later.take_token(), None);
        later.push(t0 + Duration::from_micros(100), VecDeque::from([vec![write(1, 8)], vec![write(1, 16)]]));
        let mut done = Vec::new();
        later.advance(&mut emu, t0 + Duration::from_micros(50), false, &mut done);
        assert!(done.is_empty(), "nothing is due yet");
        assert_eq!(later.next_due(), Some(t0 + Duration::from_micros(100)));
        later.advance(&mut emu, t0 + Duration::from_micros(250), false, &mut done);
        // Request 1's only phase is done; request 2's first went to the model at 250 µs and
        // its second waits for that one's completion.
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].0, 1);
        assert!(done[0].1 >= t0 + Duration::from_micros(250));
        let next = later.next_due().expect("request 2's second phase waits");
        assert!(next > t0 + Duration::from_micros(250));
        assert_eq!(emu.member_stats(1).out_of_order_ops, 0);
        later.advance(&mut emu, t0, true, &mut done);
        assert_eq!(done.len(), 2, "stopping: everything at once");
        assert_eq!(later.next_due(), None);
    }
}
