//! The overtakable work each die has started or queued (the device's preemptible GC and its
//! buffered write-back), kept so that a host read can tell which operation is *in flight*
//! when it could start, and do what [`Suspension`] allows about it: wait for it, or suspend
//! it. Queued work is overtaken in every mode by the die's lanes themselves (`timing`); this
//! log only decides the one operation already running. It is kept only when the mode is not
//! [`Suspension::Instant`], which needs no log.
//!
//! Every overtakable operation on a die starts after all the die's work, so the log is in
//! order of start and of end. A read that overtakes pushes every later operation back by its
//! own length; rather than move each entry, the log keeps one offset, `shift`, that every
//! entry's stored times are relative to.

use std::collections::VecDeque;

use super::config::Suspension;
use crate::Nanos;

/// What an overtakable operation does to the die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Work {
    /// GC reading a page out: short, never suspended.
    Sense,
    Program,
    Erase,
}

#[derive(Clone, Copy, Debug)]
struct Op {
    /// Start and end minus the log's `shift` when they were recorded (wrapping arithmetic).
    start: Nanos,
    end: Nanos,
    work: Work,
    suspended: bool,
}

/// What a host read met on its die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Met {
    /// Nothing of the device's own in flight.
    Nothing,
    /// An operation it waited for.
    Waited,
    /// An operation it suspended.
    Suspended,
}

/// Where a host read stands on its die: the die is busy with it from `from`; its sense
/// begins at `sense` (later by the suspend latency when it suspended something).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReadStart {
    pub(crate) from: Nanos,
    pub(crate) sense: Nanos,
    pub(crate) met: Met,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct DieLog {
    ops: VecDeque<Op>,
    shift: Nanos,
    /// The operation the last read waited for: it stays where it is while later ones move.
    kept: bool,
}

impl DieLog {
    fn end(&self, op: &Op) -> Nanos {
        op.end.wrapping_add(self.shift)
    }

    /// Forgets work over by `now`: requests arrive in time order, so none will meet it.
    fn forget_before(&mut self, now: Nanos) {
        while self.ops.front().is_some_and(|op| self.end(op) <= now) {
            self.ops.pop_front();
        }
    }

    /// An overtakable operation the die runs from `start` to `end`; `now` is when it was asked for.
    pub(crate) fn record(&mut self, now: Nanos, start: Nanos, end: Nanos, work: Work) {
        self.forget_before(now);
        let s = self.shift;
        self.ops.push_back(Op { start: start.wrapping_sub(s), end: end.wrapping_sub(s), work, suspended: false });
    }

    /// A host read that the die's lanes would start at `at` (never before it was submitted).
    pub(crate) fn read_start(&mut self, at: Nanos, mode: &Suspension) -> ReadStart {
        self.kept = false;
        // Work that ends by `at` is before the read: drop it, so pushing back moves only what
        // follows. The lanes never start a read before it is submitted, so this also forgets
        // all work over by then.
        let before = self.ops.partition_point(|op| self.end(op) <= at);
        self.ops.drain(..before);
        let nothing = ReadStart { from: at, sense: at, met: Met::Nothing };
        let shift = self.shift;
        let Some(op) = self.ops.front_mut() else { return nothing };
        let (start, end) = (op.start.wrapping_add(shift), op.end.wrapping_add(shift));
        if start > at {
            return nothing;
        }
        if let Suspension::Nand { program_ns, erase_ns, min_remaining_ns } = *mode {
            let latency = match op.work {
                Work::Sense => None,
                Work::Program => program_ns,
                Work::Erase => erase_ns,
            };
            if let Some(latency) = latency.filter(|_| !op.suspended && end - at >= min_remaining_ns) {
                op.suspended = true;
                return ReadStart { from: at, sense: at + latency, met: Met::Suspended };
            }
        }
        self.kept = true;
        ReadStart { from: end, sense: end, met: Met::Waited }
    }

    /// The read placed by the last [`DieLog::read_start`] held the die for `by`: every
    /// operation after it is pushed back by that much (a suspended one too).
    pub(crate) fn overtaken(&mut self, by: Nanos) {
        self.shift = self.shift.wrapping_add(by);
        if std::mem::take(&mut self.kept) {
            let op = self.ops.front_mut().expect("the operation the read waited for");
            op.start = op.start.wrapping_sub(by);
            op.end = op.end.wrapping_sub(by);
        }
    }

    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAND: Suspension = Suspension::Nand { program_ns: Some(10), erase_ns: None, min_remaining_ns: 100 };

    #[test]
    fn a_read_waits_for_the_operation_in_flight_between_ops() {
        let mut log = DieLog::default();
        log.record(0, 0, 1_000, Work::Program);
        log.record(0, 1_000, 2_000, Work::Program);
        let r = log.read_start(300, &Suspension::BetweenOps);
        assert_eq!(r, ReadStart { from: 1_000, sense: 1_000, met: Met::Waited });
        log.overtaken(50);
        // The queued program moved back by the read; the one in flight did not.
        assert_eq!(log.read_start(1_020, &Suspension::BetweenOps).met, Met::Nothing);
        log.overtaken(0);
        assert_eq!(log.read_start(1_060, &Suspension::BetweenOps).from, 2_050);
    }

    #[test]
    fn a_read_suspends_a_program_once_and_pushes_it_back() {
        let mut log = DieLog::default();
        log.record(0, 0, 1_000, Work::Program);
        let r = log.read_start(300, &NAND);
        assert_eq!(r, ReadStart { from: 300, sense: 310, met: Met::Suspended });
        log.overtaken(60);
        // The program now ends at 1,060; a second read waits for it rather than suspend it again.
        assert_eq!(log.read_start(400, &NAND), ReadStart { from: 1_060, sense: 1_060, met: Met::Waited });
    }

    #[test]
    fn erases_and_nearly_done_programs_are_not_suspended_here() {
        let mut log = DieLog::default();
        log.record(0, 0, 1_000, Work::Erase);
        assert_eq!(log.read_start(10, &NAND).met, Met::Waited);
        log.overtaken(5);
        log.record(0, 1_005, 2_005, Work::Program);
        // 50 ns left of the program, under the 100 ns threshold.
        assert_eq!(log.read_start(1_955, &NAND).from, 2_005);
    }
}
