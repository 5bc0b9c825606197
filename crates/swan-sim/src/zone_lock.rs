//! Zone Write's lock: one write per zone in flight. A write for a zone whose last write has
//! not completed waits here, in arrival order, and goes to the drive when it has; the
//! engine learns its operation's completion then ([`crate::members::Completion::Later`]).
//! Appends under ZapRAID's group layout wait here the same way, for the time
//! [`crate::append_group`] names.
//! Timing a held write from when it reaches the drive, not from when the scheme issued
//! it, keeps the drive's shared parts (command intake, link, dies) serving work in the order
//! it arrives: another zone's write or a read is not queued behind writes still held here.
//!
//! This keeps the waiting only; [`crate::zoned_array`] hands pieces to the drive.

use crate::members::Dispatched;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use swan_core::io::IoClass;
use swan_models::{DevOpKind, Nanos};

/// A piece of a member operation that waits for its zone: `n` blocks at device block `at`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    op: u32,
    pub(crate) at: u64,
    pub(crate) n: u32,
    pub(crate) class: IoClass,
}

impl Piece {
    /// `n` blocks at device block `at`, of the operation [`ZoneLocks::hold`] names.
    pub(crate) fn new(at: u64, n: u32, class: IoClass) -> Self {
        Self { op: 0, at, n, class }
    }
}

/// A member operation with pieces held: the engine's token, its latest completion known,
/// and how many pieces still wait.
#[derive(Clone, Copy, Debug)]
struct HeldOp {
    token: u64,
    done: Nanos,
    waiting: u32,
}

/// The writes waiting for their zones, across an array's members. See the [module
/// docs](self).
#[derive(Clone, Debug, Default)]
pub(crate) struct ZoneLocks {
    /// Per (member, zone), its writes waiting, oldest first.
    queues: HashMap<(u32, u32), VecDeque<Piece>>,
    /// When each zone with writes waiting frees its lock: its last write's completion.
    due: BinaryHeap<Reverse<(Nanos, u32, u32)>>,
    /// The earliest time the engine was last asked to wake the array.
    asked: Option<Nanos>,
    ops: Vec<HeldOp>,
    free: Vec<u32>,
    /// Operations whose every piece has gone to the drive.
    reported: VecDeque<Dispatched>,
}

impl ZoneLocks {
    /// Whether `zone` of `member` has writes waiting (a new one waits behind them).
    pub(crate) fn waiting(&self, member: u32, zone: u32) -> bool {
        self.queues.get(&(member, zone)).is_some_and(|q| !q.is_empty())
    }

    /// An operation, submitted under `token`, that is to have pieces held: its id.
    pub(crate) fn open(&mut self, token: u64) -> u32 {
        let op = HeldOp { token, done: 0, waiting: 0 };
        match self.free.pop() {
            Some(id) => {
                self.ops[id as usize] = op;
                id
            }
            None => {
                self.ops.push(op);
                u32::try_from(self.ops.len() - 1).expect("fewer than 2^32 operations held")
            }
        }
    }

    /// `piece` of operation `op` waits for `zone` of `member`, whose lock frees at
    /// `free_at`.
    pub(crate) fn hold(&mut self, op: u32, (member, zone): (u32, u32), free_at: Nanos, piece: Piece) {
        let queue = self.queues.entry((member, zone)).or_default();
        if queue.is_empty() {
            self.due.push(Reverse((free_at, member, zone)));
        }
        queue.push_back(Piece { op, ..piece });
        self.ops[op as usize].waiting += 1;
    }

    /// Operation `op`'s pieces that went to the drive at once complete by `done`.
    pub(crate) fn sent(&mut self, op: u32, done: Nanos) {
        let o = &mut self.ops[op as usize];
        o.done = o.done.max(done);
    }

    /// The next zone whose lock is free by `now` and that has a write waiting: the member,
    /// the zone and that write, taken out.
    pub(crate) fn next_free(&mut self, now: Nanos) -> Option<(u32, u32, Piece)> {
        let &Reverse((at, member, zone)) = self.due.peek()?;
        if at > now {
            return None;
        }
        self.due.pop();
        let queue = self.queues.get_mut(&(member, zone)).expect("a zone due has a queue");
        let piece = queue.pop_front().expect("a zone due has a write waiting");
        Some((member, zone, piece))
    }

    /// The write waiting first for `zone` of `member`, if any.
    pub(crate) fn head(&self, member: u32, zone: u32) -> Option<Piece> {
        self.queues.get(&(member, zone)).and_then(|q| q.front().copied())
    }

    /// The write `piece` taken from `zone` of `member` went to the drive at `at` and
    /// completes at `done`; the zone's next write, if one waits, may go at `next` (for Zone
    /// Write, `done`). Its operation completes, if that was its last piece.
    pub(crate) fn went(
        &mut self,
        (member, zone): (u32, u32),
        piece: Piece,
        at: Nanos,
        done: Nanos,
        next: Option<Nanos>,
    ) {
        match next {
            Some(next) => self.due.push(Reverse((next, member, zone))),
            None => {
                self.queues.remove(&(member, zone));
            }
        }
        let o = &mut self.ops[piece.op as usize];
        o.done = o.done.max(done);
        o.waiting -= 1;
        if o.waiting == 0 {
            let kind = DevOpKind::Write;
            self.reported.push_back(Dispatched { token: o.token, member, kind, class: piece.class, at, done: o.done });
            self.free.push(piece.op);
        }
    }

    /// The earliest time a zone's lock frees that the engine has not been asked to wake
    /// the array at.
    pub(crate) fn wakeup(&mut self) -> Option<Nanos> {
        let next = self.due.peek()?.0 .0;
        if self.asked == Some(next) {
            return None;
        }
        self.asked = Some(next);
        Some(next)
    }

    /// An operation whose pieces have all gone to the drive: its token, when its last went
    /// and when it completes.
    pub(crate) fn completed(&mut self) -> Option<Dispatched> {
        self.reported.pop_front()
    }

    /// Whether nothing waits and nothing is left to report.
    #[cfg(test)]
    pub(crate) fn idle(&self) -> bool {
        self.due.is_empty() && self.reported.is_empty()
    }
}
