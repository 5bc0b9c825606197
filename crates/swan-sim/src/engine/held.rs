//! Member operations a member holds back and completes later ([`Completion::Later`]): the
//! engine hands out its operations in batches (a request's phase, a GC job's operations, a
//! plan's follow-up), and a batch with any held operation completes only when the member
//! has reported each. This is who waits for which batch.
//!
//! [`Completion::Later`]: crate::members::Completion::Later

use swan_core::scheme::GcJobId;
use swan_models::Nanos;

/// Who waits for a batch of member operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    /// A user request: its next phase (or reply) comes when the batch completes.
    Request(u32),
    /// A GC job: its phase lands when this and every other batch of it completes.
    GcJob(GcJobId),
    /// Nothing waits: a plan's follow-up (summaries, TRIMs, a format).
    Nobody,
}

#[derive(Debug)]
struct Batch {
    /// Which batch the slot holds: a token names the slot and this, so no two batches
    /// share one even when a slot is reused (a member may group by token).
    generation: u32,
    owner: Owner,
    /// The latest completion known so far.
    done: Nanos,
    /// Operations held back and not yet reported.
    held: u32,
}

/// The batches being submitted or waited for, by token.
#[derive(Debug, Default)]
pub(super) struct Held {
    batches: Vec<Batch>,
    free: Vec<u32>,
    generation: u32,
}

impl Held {
    /// A new batch, submitted from `now`: its token.
    pub(super) fn open(&mut self, now: Nanos) -> u64 {
        self.generation = self.generation.wrapping_add(1);
        let batch = Batch { generation: self.generation, owner: Owner::Nobody, done: now, held: 0 };
        let slot = match self.free.pop() {
            Some(t) => {
                self.batches[t as usize] = batch;
                t
            }
            None => {
                self.batches.push(batch);
                u32::try_from(self.batches.len() - 1).expect("fewer than 2^32 batches in flight")
            }
        };
        u64::from(self.generation) << 32 | u64::from(slot)
    }

    fn batch(&mut self, token: u64) -> &mut Batch {
        let b = &mut self.batches[(token & u64::from(u32::MAX)) as usize];
        debug_assert_eq!(b.generation, (token >> 32) as u32, "token {token:#x} names a batch done with");
        b
    }

    /// One of the batch's operations completes at `at`.
    #[inline]
    pub(super) fn done_at(&mut self, token: u64, at: Nanos) {
        let b = self.batch(token);
        b.done = b.done.max(at);
    }

    /// One of the batch's operations was held back.
    #[inline]
    pub(super) fn held(&mut self, token: u64) {
        self.batch(token).held += 1;
    }

    /// Every operation of the batch was submitted; `owner` waits for it. Its completion,
    /// if every operation's was known, and the batch is done with; else `None`, and
    /// [`Held::reported`] says when.
    pub(super) fn close(&mut self, token: u64, owner: Owner) -> Option<Nanos> {
        let b = self.batch(token);
        if b.held == 0 {
            let done = b.done;
            self.free.push(token as u32);
            return Some(done);
        }
        b.owner = owner;
        None
    }

    /// A held operation of batch `token` completes at `at`: the batch's owner and its
    /// completion, if that was its last.
    pub(super) fn reported(&mut self, token: u64, at: Nanos) -> Option<(Owner, Nanos)> {
        let b = self.batch(token);
        assert!(b.held > 0, "a completion reported for batch {token:#x}, which holds nothing");
        b.done = b.done.max(at);
        b.held -= 1;
        if b.held > 0 {
            return None;
        }
        let (owner, done) = (b.owner, b.done);
        self.free.push(token as u32);
        Some((owner, done))
    }

    /// Batches open or waited for.
    #[cfg(test)]
    pub(super) fn outstanding(&self) -> usize {
        self.batches.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_with_nothing_held_completes_at_its_latest_operation_and_frees_its_token() {
        let mut h = Held::default();
        let t = h.open(10);
        h.done_at(t, 50);
        h.done_at(t, 30);
        assert_eq!(h.close(t, Owner::Request(3)), Some(50));
        assert_eq!(h.outstanding(), 0);
        let u = h.open(60);
        assert_eq!(u as u32, t as u32, "the slot is reused");
        assert_ne!(u, t, "under a token of its own");
    }

    #[test]
    fn a_batch_with_held_operations_completes_with_its_last_report() {
        let mut h = Held::default();
        let t = h.open(0);
        h.done_at(t, 40);
        h.held(t);
        h.held(t);
        assert_eq!(h.close(t, Owner::Request(7)), None);
        let other = h.open(5);
        assert_ne!(other as u32, t as u32, "a batch waited for keeps its slot");
        assert_eq!(h.reported(t, 90), None);
        assert_eq!(h.reported(t, 70), Some((Owner::Request(7), 90)));
        assert_eq!(h.close(other, Owner::Nobody), Some(5));
        assert_eq!(h.outstanding(), 0);
    }
}
