//! The seam between a scheme and whatever executes its I/O.
//!
//! A scheme describes the member operations a request needs as an [`IoPlan`]: a list of
//! [`MemberIo`] grouped into *phases*. Every operation of phase `k + 1` may start only when
//! every operation of phase `k` has completed (e.g. the reads of a parity read-modify-write
//! before its writes). Within a phase, operations are independent.
//!
//! Operations name where their data comes from ([`Src`]) or goes to ([`Dst`]) instead of
//! carrying bytes, so the same plan drives the simulator (which ignores data), the test
//! executor (which moves tokens) and the server (which moves bytes).

use serde::{Deserialize, Serialize};

/// Index of a member (SSD or file) in the array, in array order.
pub type MemberId = u32;

/// A block address on one member, in 4 KiB blocks.
pub type MemberBlock = u64;

/// Who an I/O is for; executors account traffic by class and may schedule by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum IoClass {
    /// Serves a user request; queued in arrival order with everything else.
    User,
    /// A user read that may overtake queued background (GC) work on its member: SWAN's
    /// rule that "a read that falls on the back-end R-group doing GC preempts GC".
    UserPreempt,
    /// Array-level garbage collection, segment summaries written by GC, and other
    /// background work.
    Gc,
}

/// Where the data of a member write comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    /// Blocks of the user request's payload, starting `offset` blocks into it.
    User { offset: u32 },
    /// Slots of the GC job's staging buffer (filled by an earlier phase's reads).
    Staged { slot: u32 },
    /// The parity of stripe row `row` of R-group `group` (its member-block index), as it
    /// stands once the data writes of this plan have landed: XOR of the row's data blocks.
    Parity { group: u32, row: MemberBlock },
    /// The summary of the given segment, as encoded by [`crate::summary`].
    Summary { segment: u64, index: u32 },
    /// Zeroes.
    Zero,
}

/// Where the data of a member read goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dst {
    /// Into the user request's reply, `offset` blocks into it.
    User { offset: u32 },
    /// Into the staging buffer of a GC job or read-modify-write, at `slot`.
    Staged { slot: u32 },
    /// XORed into the user request's reply at `offset` (one block): the reads of a stripe
    /// row's other columns that together rebuild a block read around its member. The reply
    /// starts as zeroes, so once every such read is in, it holds the block.
    Rebuild { offset: u32 },
}

/// The kind of a member operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoKind {
    Read(Dst),
    Write(Src),
    /// Tell the member these blocks hold nothing (TRIM / discard).
    Trim,
    /// Make every completed write on the member durable.
    Flush,
}

/// One operation on one member: `count` consecutive blocks from `block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberIo {
    pub member: MemberId,
    pub block: MemberBlock,
    pub count: u32,
    pub kind: IoKind,
    pub class: IoClass,
}

impl MemberIo {
    /// Bytes this operation moves (0 for trim and flush).
    pub fn bytes(&self) -> u64 {
        match self.kind {
            IoKind::Read(_) | IoKind::Write(_) => u64::from(self.count) * crate::BLOCK_BYTES,
            IoKind::Trim | IoKind::Flush => 0,
        }
    }
}

/// Member operations in dependency phases. Reused across requests to avoid allocation.
#[derive(Clone, Debug, Default)]
pub struct IoPlan {
    ios: Vec<MemberIo>,
    /// Index into `ios` where each phase after the first starts.
    phase_starts: Vec<usize>,
}

impl IoPlan {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn clear(&mut self) {
        self.ios.clear();
        self.phase_starts.clear();
    }

    /// Append an operation to the current phase.
    pub fn push(&mut self, io: MemberIo) {
        self.ios.push(io);
    }

    /// Start a new phase: what follows waits for everything pushed so far.
    /// A barrier with nothing before it, or two barriers in a row, is ignored.
    pub fn barrier(&mut self) {
        let at = self.ios.len();
        if at > 0 && self.phase_starts.last() != Some(&at) {
            self.phase_starts.push(at);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ios.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ios.len()
    }

    pub fn ios(&self) -> &[MemberIo] {
        &self.ios
    }

    pub fn phase_count(&self) -> usize {
        if self.ios.is_empty() {
            0
        } else {
            // A trailing barrier (pushed with nothing after it) opens no phase.
            let trailing = usize::from(self.phase_starts.last() == Some(&self.ios.len()));
            self.phase_starts.len() + 1 - trailing
        }
    }

    /// The operations of phase `k` (0-based).
    pub fn phase(&self, k: usize) -> &[MemberIo] {
        let start = if k == 0 { 0 } else { self.phase_starts[k - 1] };
        let end = self.phase_starts.get(k).copied().unwrap_or(self.ios.len());
        &self.ios[start..end]
    }

    /// Put the operations from index `from` on in (member, block) order, keeping the order
    /// of those on the same block: each member then takes them in block order, as a zoned
    /// member must. They must all belong to the current phase.
    pub fn order_by_member_block(&mut self, from: usize) {
        debug_assert!(self.phase_starts.last().is_none_or(|&start| start <= from), "ordering across a phase");
        self.ios[from..].sort_by_key(|io| (io.member, io.block));
    }

    /// Push a read or write, merging it into the previous operation of the current phase
    /// when it continues it on the same member with contiguous data.
    #[inline]
    pub fn push_merged(&mut self, io: MemberIo) {
        let phase_start = self.phase_starts.last().copied().unwrap_or(0);
        if self.ios.len() > phase_start {
            if let Some(last) = self.ios.last_mut() {
                if last.member == io.member
                    && last.class == io.class
                    && last.block + u64::from(last.count) == io.block
                    && continues(last.kind, last.count, io.kind)
                {
                    last.count += io.count;
                    return;
                }
            }
        }
        self.ios.push(io);
    }
}

/// Whether `next` carries on the data of `prev` (which covered `count` blocks).
#[inline]
fn continues(prev: IoKind, count: u32, next: IoKind) -> bool {
    match (prev, next) {
        (IoKind::Read(Dst::User { offset: a }), IoKind::Read(Dst::User { offset: b })) => a + count == b,
        (IoKind::Read(Dst::Staged { slot: a }), IoKind::Read(Dst::Staged { slot: b })) => a + count == b,
        (IoKind::Write(Src::User { offset: a }), IoKind::Write(Src::User { offset: b })) => a + count == b,
        (IoKind::Write(Src::Staged { slot: a }), IoKind::Write(Src::Staged { slot: b })) => a + count == b,
        (IoKind::Write(Src::Zero), IoKind::Write(Src::Zero)) => true,
        (IoKind::Trim, IoKind::Trim) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(member: u32, block: u64, offset: u32) -> MemberIo {
        MemberIo { member, block, count: 1, kind: IoKind::Write(Src::User { offset }), class: IoClass::User }
    }

    #[test]
    fn phases_split_at_barriers() {
        let mut p = IoPlan::new();
        p.barrier();
        p.push(w(0, 0, 0));
        p.push(w(1, 0, 1));
        p.barrier();
        p.barrier();
        p.push(w(2, 0, 2));
        assert_eq!(p.phase_count(), 2);
        assert_eq!(p.phase(0).len(), 2);
        assert_eq!(p.phase(1)[0].member, 2);
        p.barrier();
        assert_eq!(p.phase_count(), 2, "a trailing barrier opens no phase");
    }

    #[test]
    fn merges_only_contiguous_same_member_data() {
        let mut p = IoPlan::new();
        p.push_merged(w(0, 10, 0));
        p.push_merged(w(0, 11, 1));
        p.push_merged(w(0, 13, 2)); // gap on the member
        p.push_merged(w(1, 14, 3)); // other member
        assert_eq!(p.len(), 3);
        assert_eq!(p.ios()[0].count, 2);
        p.barrier();
        p.push_merged(w(1, 15, 4)); // contiguous but in a new phase
        assert_eq!(p.len(), 4);
    }
}
