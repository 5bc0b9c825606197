//! Replies on their way out: those of the batches served, sent together once their tail
//! record is written (the last batch's may wait a round for its writes); FLUSHes and FUA writes waiting for a sync point; and, with emulation,
//! replies held until the modelled SSDs would have completed their requests.

use super::status::EmulationTiming;
use crate::service::{gather, Completion, Reply};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::time::{Duration, Instant};

/// A reply held until the emulated SSDs would have completed the request.
/// Ordered by (`at`, `seq`): `seq` keeps replies due at the same instant in issue order.
struct Held {
    at: Instant,
    seq: u64,
    done: Completion,
    reply: Reply,
    /// The batch it was carried out in, and whether it is a write's.
    batch: u64,
    write: bool,
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

/// An emulated request on the model SSDs: when they were given it and when they completed it.
#[derive(Clone, Copy, Debug)]
pub(super) struct ModelSpan {
    pub issued: Instant,
    pub done: Instant,
}

#[derive(Default)]
pub(super) struct Replies {
    /// Replies of the batches served, sent once their tail record is written, each with
    /// whether it is a write's.
    batch: Vec<(Completion, Reply, bool)>,
    /// The index of `batch[0]`: indices count every reply that joined a batch, so those
    /// handed out stay valid when the replies before them are sent.
    sent: usize,
    /// Sends so far: the number of the batch held replies join now.
    batch_no: u64,
    /// FLUSHes and FUA writes waiting for the next sync point.
    pub sync_waiters: Vec<Completion>,
    held: BinaryHeap<Reverse<Held>>,
    held_seq: u64,
    /// Emulated replies whose request's later phases still wait for the model, by token
    /// ([`super::later_phases`]), each with when the model was given its first phase.
    later: BTreeMap<u64, (Held, Instant)>,
    /// Emulated replies: how many, their model time and their lateness, summed in ns.
    emulated: u64,
    model_ns: u64,
    late_ns: u64,
}

impl Replies {
    /// Reply once this batch's tail record is written, or, emulating, at the model's
    /// completion if that is later than `now`. Returns the reply's index, if it joined a
    /// batch. `write`: the reply is a write's (see [`Replies::fail_writes`]).
    pub fn complete(
        &mut self,
        done: Completion,
        reply: Reply,
        model: Option<ModelSpan>,
        now: Instant,
        write: bool,
    ) -> Option<usize> {
        if let Some(span) = model {
            self.emulated += 1;
            self.model_ns = self.model_ns.saturating_add(nanos(span.done.saturating_duration_since(span.issued)));
        }
        match model.map(|span| span.done) {
            Some(t) if t > now => {
                self.held_seq += 1;
                let (seq, batch) = (self.held_seq, self.batch_no);
                self.held.push(Reverse(Held { at: t, seq, done, reply, batch, write }));
                None
            }
            _ => {
                self.batch.push((done, reply, write));
                Some(self.next_index() - 1)
            }
        }
    }

    /// Hold the reply of a request given to the model at `issued` whose later phases wait
    /// for it under `token`, until [`Replies::resolve`] says when its last completes.
    pub fn complete_later(&mut self, done: Completion, reply: Reply, token: u64, issued: Instant, write: bool) {
        self.held_seq += 1;
        let held = Held { at: issued, seq: self.held_seq, done, reply, batch: self.batch_no, write };
        self.later.insert(token, (held, issued));
    }

    /// Request `token`'s last phase completes on the model at `at`: its reply is held until
    /// then. (A token with no reply waiting, a FUA write's, is nothing to do.)
    pub fn resolve(&mut self, token: u64, at: Instant) {
        let Some((mut held, issued)) = self.later.remove(&token) else { return };
        self.emulated += 1;
        self.model_ns = self.model_ns.saturating_add(nanos(at.saturating_duration_since(issued)));
        held.at = at;
        self.held.push(Reverse(held));
    }

    /// The index the next reply to join a batch gets.
    pub fn next_index(&self) -> usize {
        self.sent + self.batch.len()
    }

    /// Answer every write not yet sent with `errno`, held ones of the current batch
    /// included: their changes were not journaled, so acknowledging them would promise
    /// what a recovery drops.
    pub fn fail_writes(&mut self, errno: swan_nbd::Errno) {
        for (_, reply, write) in &mut self.batch {
            if *write {
                *reply = Err(errno);
            }
        }
        for (h, _) in self.later.values_mut() {
            if h.batch == self.batch_no && h.write {
                h.reply = Err(errno);
            }
        }
        if self.held.iter().any(|Reverse(h)| h.batch == self.batch_no && h.write) {
            let held = std::mem::take(&mut self.held);
            self.held = held
                .into_iter()
                .map(|Reverse(mut h)| {
                    if h.batch == self.batch_no && h.write {
                        h.reply = Err(errno);
                    }
                    Reverse(h)
                })
                .collect();
        }
    }

    /// Turn reply `i` into an I/O error (its data did not reach the members).
    pub fn fail(&mut self, i: usize) {
        match i.checked_sub(self.sent).and_then(|at| self.batch.get_mut(at)) {
            Some((_, reply, _)) => *reply = Err(swan_nbd::Errno::Io),
            // A reply is sent only once its writes are known to have landed.
            None => debug_assert!(false, "reply {i} failed after it was sent"),
        }
    }

    /// Send the held replies that are due by `now`.
    /// Each connection's go out in one send.
    pub fn deliver_due(&mut self, now: Instant) {
        gather::replies(|| {
            while self.held.peek().is_some_and(|Reverse(h)| h.at <= now) {
                self.deliver_first(now);
            }
        });
    }

    /// Send the held replies due by `now` whose batch's tail record is written — any but
    /// those of the batch being served — so that between the requests of a long round a
    /// reply the model has finished does not wait for the next round.
    pub fn deliver_due_journaled(&mut self, now: Instant) {
        gather::replies(|| {
            while self.journaled_due(now) {
                self.deliver_first(now);
            }
        });
    }

    /// Whether [`Replies::deliver_due_journaled`] has anything to send at `now`.
    pub fn journaled_due(&self, now: Instant) -> bool {
        self.held.peek().is_some_and(|Reverse(h)| h.at <= now && h.batch < self.batch_no)
    }

    fn deliver_first(&mut self, now: Instant) {
        let Reverse(h) = self.held.pop().expect("a held reply");
        self.late_ns = self.late_ns.saturating_add(nanos(now.saturating_duration_since(h.at)));
        (h.done)(h.reply);
    }

    /// The emulated replies' timing so far (`swan status`).
    pub fn emulation_timing(&self) -> EmulationTiming {
        let mean_us = |ns: u64| if self.emulated == 0 { 0.0 } else { ns as f64 / self.emulated as f64 / 1e3 };
        EmulationTiming {
            replies: self.emulated,
            mean_model_us: mean_us(self.model_ns),
            mean_late_us: mean_us(self.late_ns),
        }
    }

    /// Send every held reply at once (the engine is stopping).
    pub fn deliver_all_held(&mut self) {
        while let Some(Reverse(h)) = self.held.pop() {
            (h.done)(h.reply);
        }
        for (_, (h, _)) in std::mem::take(&mut self.later) {
            (h.done)(h.reply);
        }
    }

    /// How long to wait for work before the next held reply is due, at most `idle`.
    pub fn wait_before_due(&self, now: Instant, idle: Duration) -> Duration {
        self.held.peek().map_or(idle, |Reverse(h)| h.at.saturating_duration_since(now).min(idle))
    }

    /// Send the replies with an index below `end` (all of them without one); each
    /// connection's go out in one send. Held replies completed before this join no
    /// batch [`Replies::fail_writes`] can fail any more.
    pub fn send_before(&mut self, end: Option<usize>) {
        self.batch_no += 1;
        let n = end.map_or(self.batch.len(), |e| e.saturating_sub(self.sent).min(self.batch.len()));
        if n == 0 {
            return;
        }
        self.sent += n;
        let batch: Vec<_> = self.batch.drain(..n).collect();
        gather::replies(|| {
            for (done, reply, _) in batch {
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

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use swan_nbd::Errno;

    /// A completion that records its reply under `name`.
    fn record(log: &Arc<Mutex<Vec<(&'static str, Reply)>>>, name: &'static str) -> Completion {
        let log = Arc::clone(log);
        Box::new(move |r| log.lock().unwrap().push((name, r)))
    }

    #[test]
    fn emulation_timing_splits_model_time_from_the_replys_lateness() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let now = Instant::now();
        let mut r = Replies::default();
        assert_eq!(r.emulation_timing(), EmulationTiming::default());
        // Given to the model at `now`, carried out on the members by 50 µs, done on the model
        // at 100 µs and 300 µs: 200 µs on the model on average, however long carrying them
        // out took. The engine looks at 400 µs: 300 and 100 µs late. A reply without a model
        // time counts in neither.
        let span = |us| Some(ModelSpan { issued: now, done: now + Duration::from_micros(us) });
        let carried = now + Duration::from_micros(50);
        r.complete(record(&log, "a"), Ok(Vec::new()), span(100), carried, true);
        r.complete(record(&log, "b"), Ok(Vec::new()), span(300), carried, true);
        r.complete(record(&log, "c"), Ok(Vec::new()), None, carried, true);
        r.deliver_due(now + Duration::from_micros(400));
        let t = r.emulation_timing();
        assert_eq!(t.replies, 2);
        assert!((t.mean_model_us - 200.0).abs() < 1e-6, "{t:?}");
        assert!((t.mean_late_us - 200.0).abs() < 1e-6, "{t:?}");
        assert_eq!(log.lock().unwrap().len(), 2, "both held replies went out");
    }

    #[test]
    fn failing_a_batch_fails_its_writes_held_or_not_and_nothing_else() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let now = Instant::now();
        let later = Some(ModelSpan { issued: now, done: now + Duration::from_secs(1) });
        let mut r = Replies::default();
        // An earlier batch's held write: journaled, so it stays acknowledged.
        r.complete(record(&log, "earlier held write"), Ok(Vec::new()), later, now, true);
        r.send_before(None);
        r.complete(record(&log, "read"), Ok(vec![7]), None, now, false);
        r.complete(record(&log, "write"), Ok(Vec::new()), None, now, true);
        r.complete(record(&log, "held write"), Ok(Vec::new()), later, now, true);
        r.complete(record(&log, "held read"), Ok(vec![8]), later, now, false);
        r.fail_writes(Errno::NoSpc);
        r.send_before(None);
        r.deliver_all_held();
        let mut got = log.lock().unwrap().clone();
        got.sort_by_key(|(name, _)| *name);
        assert_eq!(
            got,
            vec![
                ("earlier held write", Ok(Vec::new())),
                ("held read", Ok(vec![8])),
                ("held write", Err(Errno::NoSpc)),
                ("read", Ok(vec![7])),
                ("write", Err(Errno::NoSpc)),
            ]
        );
    }
}
