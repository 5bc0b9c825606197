//! A time limit on every operation of one member (`swan serve --member-timeout`).
//!
//! A member that hangs (a device that stops answering, a file on a stuck network or FUSE
//! file system) never returns an error: the thread in its system call waits for ever, and
//! if that thread is the engine's, every client waits with it. [`Deadline`] wraps a
//! member's backing so that each operation runs on a thread of its own (a *lane*) while the
//! caller waits at most the timeout; past it, the caller gets an error the member layer
//! turns into [`super::MemberError::Hung`], which the array handles as it does an EIO (the
//! member fails, or the request does where nothing can spare it).
//!
//! A system call cannot be cancelled. The lane stays in it, holding its own copy of the
//! bytes (a read fills a buffer of the lane's, a write carries a copy), so the caller's
//! buffer is never touched after the caller gave up. When the call returns late, its result
//! goes into a channel nobody listens to any more and is dropped: a late read is never
//! mistaken for an answer, and a late write only reaches a member the array has stopped
//! reading ([`Deadline::overrun`] keeps `swan replace` from reusing the same file while one
//! is pending). Until every stuck call has returned, new operations fail at once rather
//! than piling more threads onto a member that does not answer.

use super::Backing;
use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::os::fd::RawFd;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Lanes kept waiting for work per member; more are started when operations overlap.
const IDLE_LANES: usize = 4;

/// What a member that did not answer in time gives, inside the `io::Error`.
#[derive(Debug, Clone, Copy)]
pub struct Hung {
    /// How long the caller waited (the timeout), or how long the earlier operation has been
    /// stuck when this one was refused without trying.
    pub waited: Duration,
    /// Refused because an earlier operation is still stuck (not tried at all).
    pub earlier: bool,
}

impl fmt::Display for Hung {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.earlier {
            write!(f, "not tried: an earlier operation has had no answer for {:.1} s", self.waited.as_secs_f64())
        } else {
            write!(f, "no answer in {:.1} s (--member-timeout)", self.waited.as_secs_f64())
        }
    }
}

impl std::error::Error for Hung {}

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    idle: usize,
    /// Operations handed to lanes and not yet returned.
    outstanding: usize,
    /// When the oldest operation that overran the timeout started, while any is still out.
    overrun_since: Option<Instant>,
    closed: bool,
}

#[derive(Default)]
struct Lanes {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Lanes {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run jobs until the member is closed or enough lanes are idle.
    fn serve(self: Arc<Self>) {
        let mut q = self.lock();
        loop {
            if let Some(job) = q.jobs.pop_front() {
                drop(q);
                job();
                q = self.lock();
                continue;
            }
            if q.closed || q.idle >= IDLE_LANES {
                return;
            }
            q.idle += 1;
            q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
            q.idle -= 1;
        }
    }
}

/// A backing whose every operation (but `lock`, which never waits, and `read_if_cached`,
/// which never waits for a device) is given up on after a timeout.
pub struct Deadline {
    inner: Arc<dyn Backing>,
    timeout: Duration,
    lanes: Arc<Lanes>,
}

impl fmt::Debug for Deadline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deadline").field("inner", &self.inner).field("timeout", &self.timeout).finish()
    }
}

impl Deadline {
    pub fn new(inner: Arc<dyn Backing>, timeout: Duration) -> Deadline {
        Deadline { inner, timeout, lanes: Arc::default() }
    }

    /// Run `op` on a lane and wait for it at most the timeout.
    fn run<T: Send + 'static>(&self, op: impl FnOnce(&dyn Backing) -> io::Result<T> + Send + 'static) -> io::Result<T> {
        let start = Instant::now();
        let rx = self.hand_out(start, op)?;
        match rx.recv_timeout(self.timeout) {
            Ok(r) => r,
            Err(_) => {
                let mut q = self.lanes.lock();
                // The answer may have come in between the wait's end and the lock.
                if let Ok(r) = rx.try_recv() {
                    return r;
                }
                q.overrun_since.get_or_insert(start);
                Err(io::Error::new(io::ErrorKind::TimedOut, Hung { waited: self.timeout, earlier: false }))
            }
        }
    }

    /// Queue `op` for a lane (starting one if none is free); its result comes on the
    /// channel returned. Refused at once while an earlier operation is stuck.
    fn hand_out<T: Send + 'static>(
        &self,
        start: Instant,
        op: impl FnOnce(&dyn Backing) -> io::Result<T> + Send + 'static,
    ) -> io::Result<mpsc::Receiver<io::Result<T>>> {
        let (tx, rx) = mpsc::sync_channel(1);
        let mut q = self.lanes.lock();
        if let Some(since) = q.overrun_since {
            let waited = start.saturating_duration_since(since);
            return Err(io::Error::new(io::ErrorKind::TimedOut, Hung { waited, earlier: true }));
        }
        let (inner, lanes) = (Arc::clone(&self.inner), Arc::clone(&self.lanes));
        q.jobs.push_back(Box::new(move || {
            let r = op(&*inner);
            // Nobody listening: the caller gave up, and the result (a late read's bytes
            // with it) is dropped here.
            let _ = tx.send(r);
            let mut q = lanes.lock();
            q.outstanding -= 1;
            if q.outstanding == 0 {
                // Every stuck call has come back: the member answers again.
                q.overrun_since = None;
            }
        }));
        q.outstanding += 1;
        if q.jobs.len() > q.idle {
            let lanes = Arc::clone(&self.lanes);
            let spawned = std::thread::Builder::new().name("swan-member".into()).spawn(move || lanes.serve());
            if let Err(e) = spawned {
                // The job stays queued for a lane that frees up; if none does, the wait
                // runs out like any other.
                eprintln!("swan: starting a member I/O thread: {e}");
            }
        } else {
            self.lanes.ready.notify_one();
        }
        Ok(rx)
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        // Idle lanes end now; a stuck one ends when its call returns.
        self.lanes.lock().closed = true;
        self.lanes.ready.notify_all();
    }
}

impl Backing for Deadline {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let len = buf.len();
        let got = self.run(move |b| {
            let mut own = vec![0u8; len];
            b.read_at(offset, &mut own).map(|()| own)
        })?;
        buf.copy_from_slice(&got);
        Ok(())
    }

    fn read_if_cached(&self, offset: u64, buf: &mut [u8]) -> bool {
        // Never waits for a device (`preadv2(RWF_NOWAIT)` on a file), so it needs no lane;
        // but a member known to hang is left to the paths that notice it.
        self.overrun().is_none() && self.inner.read_if_cached(offset, buf)
    }

    fn read_small(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let len = buf.len();
        let got = self.run(move |b| {
            let mut own = vec![0u8; len];
            b.read_small(offset, &mut own).map(|()| own)
        })?;
        buf.copy_from_slice(&got);
        Ok(())
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let own = buf.to_vec();
        self.run(move |b| b.write_at(offset, &own))
    }

    fn write_cached(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let own = buf.to_vec();
        self.run(move |b| b.write_cached(offset, &own))
    }

    fn write_back(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let own = buf.to_vec();
        self.run(move |b| b.write_back(offset, &own))
    }

    fn write_behind(&self, offset: u64, len: u64) {
        // Advisory: handed to a lane and not waited for (it can block where the device stops
        // taking requests, and the next operation that is waited for notices that).
        let _ = self.hand_out(Instant::now(), move |b| {
            b.write_behind(offset, len);
            Ok(())
        });
    }

    fn discard(&self, offset: u64, len: u64) -> io::Result<()> {
        self.run(move |b| b.discard(offset, len))
    }

    fn sync(&self) -> io::Result<()> {
        self.run(|b| b.sync())
    }

    fn lock(&self, exclusive: bool) -> io::Result<()> {
        self.inner.lock(exclusive)
    }

    fn mark(&self, what: &'static str) {
        self.inner.mark(what);
    }

    fn is_recorded(&self) -> bool {
        self.inner.is_recorded()
    }

    /// None: reads submitted to an io_uring would bypass the time limit (a read that never
    /// completes would never be answered), so they go through the I/O threads instead.
    fn direct_fd(&self) -> Option<RawFd> {
        None
    }

    /// The timeout: each attempt has its own, so a member that hangs while full is still
    /// noticed as hung.
    fn space_wait(&self) -> Duration {
        self.timeout
    }

    fn overrun(&self) -> Option<Duration> {
        self.lanes.lock().overrun_since.map(|s| s.elapsed())
    }

    /// The zone table is in memory: no device is asked.
    fn report_zones(&self) -> io::Result<Vec<swan_models::zns::zones::Zone>> {
        self.inner.report_zones()
    }

    fn finish_zone(&self, zone: u32) -> io::Result<()> {
        self.run(move |b| b.finish_zone(zone))
    }
}

#[cfg(test)]
mod tests;
