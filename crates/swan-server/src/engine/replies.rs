//! Replies on their way out: those of the batches served, sent together once their tail
//! record is written (the last batch's may wait a round for its writes); FLUSHes and FUA writes waiting for a sync point; and, with emulation,
//! replies held until the modelled SSDs would have completed their requests.

use crate::service::{gather, Completion, Reply};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// A reply held until the emulated SSDs would have completed the request.
/// Ordered by (`at`, `seq`): `seq` keeps replies due at the same instant in issue order.
struct Held {
    at: Instant,
    seq: u64,
    done: Completion,
    reply: Reply,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

#[derive(Default)]
pub(super) struct Replies {
    /// Replies of the batches served, sent once their tail record is written.
    batch: Vec<(Completion, Reply)>,
    /// The index of `batch[0]`: indices count every reply that joined a batch, so those
    /// handed out stay valid when the replies before them are sent.
    sent: usize,
    /// FLUSHes and FUA writes waiting for the next sync point.
    pub sync_waiters: Vec<Completion>,
    held: BinaryHeap<Reverse<Held>>,
    held_seq: u64,
}

impl Replies {
    /// Reply once this batch's tail record is written, or, emulating, at `at` if that is
    /// later than `now`. Returns the reply's index, if it joined a batch.
    pub fn complete(&mut self, done: Completion, reply: Reply, at: Option<Instant>, now: Instant) -> Option<usize> {
        match at {
            Some(t) if t > now => {
                self.held_seq += 1;
                self.held.push(Reverse(Held { at: t, seq: self.held_seq, done, reply }));
                None
            }
            _ => {
                self.batch.push((done, reply));
                Some(self.next_index() - 1)
            }
        }
    }

    /// The index the next reply to join a batch gets.
    pub fn next_index(&self) -> usize {
        self.sent + self.batch.len()
    }

    /// Turn reply `i` into an I/O error (its data did not reach the members).
    pub fn fail(&mut self, i: usize) {
        match i.checked_sub(self.sent).and_then(|at| self.batch.get_mut(at)) {
            Some((_, reply)) => *reply = Err(swan_nbd::Errno::Io),
            // A reply is sent only once its writes are known to have landed.
            None => debug_assert!(false, "reply {i} failed after it was sent"),
        }
    }

    /// Send the held replies that are due by `now`.
    pub fn deliver_due(&mut self, now: Instant) {
        while self.held.peek().is_some_and(|Reverse(h)| h.at <= now) {
            let Reverse(h) = self.held.pop().expect("peeked");
            (h.done)(h.reply);
        }
    }

    /// Send every held reply at once (the engine is stopping).
    pub fn deliver_all_held(&mut self) {
        while let Some(Reverse(h)) = self.held.pop() {
            (h.done)(h.reply);
        }
    }

    /// How long to wait for work before the next held reply is due, at most `idle`.
    pub fn wait_before_due(&self, now: Instant, idle: Duration) -> Duration {
        self.held.peek().map_or(idle, |Reverse(h)| h.at.saturating_duration_since(now).min(idle))
    }

    /// Send the replies with an index below `end` (all of them without one); each
    /// connection's go out in one send.
    pub fn send_before(&mut self, end: Option<usize>) {
        let n = end.map_or(self.batch.len(), |e| e.saturating_sub(self.sent).min(self.batch.len()));
        if n == 0 {
            return;
        }
        self.sent += n;
        let batch: Vec<_> = self.batch.drain(..n).collect();
        gather::replies(|| {
            for (done, reply) in batch {
                done(reply);
            }
        });
    }

    /// Answer every FLUSH and FUA write waiting with `reply`.
    pub fn answer_waiters(&mut self, reply: &Reply) {
        for done in std::mem::take(&mut self.sync_waiters) {
            done(reply.clone());
        }
    }
}
