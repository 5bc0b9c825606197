//! With `--emulate` over zoned members: Zone Write's lock, one write per zone in flight on
//! the model, as the simulator's zoned array keeps it (`swan-sim/src/zone_lock.rs`) and as
//! Linux's zoned write lock lets a drive see a zone's writes.
//!
//! The engine writes a zone's bytes at once and in order (the member is the judge of the
//! contract). Its model drive hears of a write only once the zone's last write has
//! completed there: given for that future instant at once, it would hold the drive's shared
//! parts (command intake, link, dies) from then on, and the reads and other zones' writes
//! given afterwards for earlier instants would queue behind it, which a drive never does.
//! So a write for a zone still busy on the model, or with writes waiting, waits here in
//! the member's order; the engine's loop gives it to the model when its zone frees
//! ([`ZoneHolds::next_due`], [`ZoneHolds::advance`]).
//!
//! Whoever waits for a held write learns its completion here: a user request's reply (by
//! token, as [`super::later_phases`] resolves them), or a GC job's phase, which lands with
//! the driver once its held writes have all completed.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::time::Instant;

use swan_core::scheme::GcJobId;

use super::later_phases::ModelOp;
use crate::emulate::{EmuOp, Emulator};

/// Who waits for a write's completion on the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(super) enum Owner {
    /// Fire and forget: a GC job's follow-up, a recovery's writes.
    #[default]
    Nobody,
    /// The user request being carried out; its reply gets a token once a write is held.
    Request,
    /// A request's reply, by its token.
    Reply(u64),
    Gc(GcJobId),
}

/// A write waiting for its zone.
#[derive(Clone, Copy, Debug)]
struct Held {
    op: ModelOp,
    owner: Owner,
    issued: Instant,
}

/// A held write's owner's count of writes still held, and the latest completion known.
#[derive(Clone, Copy, Debug, Default)]
struct Waiting {
    held: u32,
    end: Option<Instant>,
    /// A reply's other writes were given to the model already: it completes no sooner.
    floor: Option<Instant>,
}

#[derive(Default)]
pub(super) struct ZoneHolds {
    /// Per (member, zone), the writes waiting, in the member's order, each with when the
    /// engine issued it.
    queues: HashMap<(u32, u32), VecDeque<Held>>,
    /// When each zone with writes waiting may take its next: its last write's completion
    /// on the model.
    due: BinaryHeap<Reverse<(Instant, u32, u32)>>,
    waiting: HashMap<Owner, Waiting>,
    /// Who the writes now being carried out are for (set by the engine around them).
    pub owner: Owner,
    /// The token given to the request being carried out, if one of its writes was held.
    token: Option<u64>,
}

impl ZoneHolds {
    /// Give `op`, issued at `now`, to the model, unless it is a write for a zone busy there
    /// or with writes waiting, or a reset of a zone with writes waiting: then it waits here,
    /// and None. `new_token` names the request
    /// being carried out the first time one of its writes waits.
    pub fn submit(
        &mut self,
        emu: &mut Emulator,
        now: Instant,
        op: ModelOp,
        new_token: impl FnOnce() -> u64,
    ) -> Option<Instant> {
        // A reset (a victim's TRIM) keeps its place behind the zone's writes still waiting.
        let ordered = matches!(op.op, EmuOp::Write | EmuOp::Trim);
        let zone = ordered.then(|| emu.write_zone(op.member, op.block)).flatten();
        let Some(zone) = zone else { return Some(complete(emu, now, &op)) };
        let key = (op.member, zone);
        let free_at = emu.zone_free_at(op.member, zone);
        let queued = self.queues.get(&key).is_some_and(|q| !q.is_empty());
        if !queued && (free_at <= now || op.op == EmuOp::Trim) {
            return Some(complete(emu, now, &op));
        }
        let owner = match self.owner {
            Owner::Request => Owner::Reply(*self.token.get_or_insert_with(new_token)),
            other => other,
        };
        if owner != Owner::Nobody {
            self.waiting.entry(owner).or_default().held += 1;
        }
        let q = self.queues.entry(key).or_default();
        q.push_back(Held { op, owner, issued: now });
        if q.len() == 1 {
            self.due.push(Reverse((free_at.max(now), op.member, zone)));
        }
        None
    }

    /// The token of the request just carried out, if a write of it waits here; `floor` is
    /// when its other operations complete on the model (its reply goes no sooner).
    pub fn take_token(&mut self, floor: Option<Instant>) -> Option<u64> {
        let token = self.token.take()?;
        if let Some(w) = self.waiting.get_mut(&Owner::Reply(token)) {
            w.floor = floor;
        }
        Some(token)
    }

    /// When the next zone with writes waiting frees.
    pub fn next_due(&self) -> Option<Instant> {
        self.due.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Give the model the writes whose zones have freed by `now`, a zone's next once its
    /// last completes (all of them, in order, if `all`: the engine is stopping). Each goes at
    /// the instant its zone freed (or it was issued, if later): a kernel's zone write lock
    /// lets the next write go from the last one's completion, not when the engine next looks.
    /// Each owner whose last held write that was goes into `done` with the latest
    /// completion of its writes.
    pub fn advance(&mut self, emu: &mut Emulator, now: Instant, all: bool, done: &mut Vec<(Owner, Instant)>) {
        while let Some(&Reverse((t, member, zone))) = self.due.peek() {
            if !all && t > now {
                break;
            }
            self.due.pop();
            let key = (member, zone);
            loop {
                let free_at = emu.zone_free_at(member, zone);
                let next = self.queues.get_mut(&key).and_then(VecDeque::pop_front);
                let Some(held) = next else {
                    self.queues.remove(&key);
                    break;
                };
                if !all && free_at > now {
                    self.queues.get_mut(&key).expect("popped from").push_front(held);
                    self.due.push(Reverse((free_at, member, zone)));
                    break;
                }
                let at = if all { now } else { free_at.max(held.issued) };
                let end = complete(emu, at, &held.op);
                self.landed(held.owner, end, done);
            }
        }
    }

    fn landed(&mut self, owner: Owner, end: Instant, done: &mut Vec<(Owner, Instant)>) {
        let Some(w) = self.waiting.get_mut(&owner) else { return };
        w.held -= 1;
        w.end = Some(w.end.map_or(end, |e| e.max(end)));
        if w.held == 0 {
            let w = self.waiting.remove(&owner).expect("present");
            let end = w.end.expect("set above").max(w.floor.unwrap_or(end));
            done.push((owner, end));
        }
    }
}

fn complete(emu: &mut Emulator, now: Instant, o: &ModelOp) -> Instant {
    emu.complete_at(now, o.member, o.op, o.block, o.count, o.class)
}

#[cfg(test)]
#[path = "zone_holds_tests.rs"]
mod tests;
