//! A write recorder under the members, in the spirit of dm-log-writes, that can also fail
//! operations: the [`Tap`] that crash replay and fault injection put under every member.
//!
//! Every write (member, block, the bytes), trim and completed sync is appended in order to
//! one in-memory log shared by all members, with the notes ([`Entry::Mark`]) the engine
//! leaves at the moments that matter (a GC copy done, a victim released, a front-end
//! rotation, a checkpoint's body durable). A write is logged once the member has performed
//! it; a sync once `fdatasync` has returned, so everything before a member's sync in the log
//! is on that member's stable storage, and anything after it may or may not be
//! ([`crate::crashsim`] turns the log into member images at any point of it).
//!
//! Faults ([`Fault`]) fail chosen operations with `EIO`: armed by a mark (or from the start),
//! they fire on the n-th matching operation after it, once. A failed write or trim is either
//! not performed at all, or performed and still reported failed (the device took the data
//! and then said it did not); a failed sync is logged as [`Entry::SyncFailed`]: as on Linux,
//! writes the failed sync should have made durable may be lost even after a later sync
//! succeeds (the kernel marks their pages clean).

use crate::member::{Op, Tap};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

/// One recorded event.
#[derive(Clone, Debug)]
pub enum Entry {
    Write {
        member: u32,
        block: u64,
        data: Arc<[u8]>,
    },
    Trim {
        member: u32,
        block: u64,
        count: u64,
    },
    Sync {
        member: u32,
    },
    /// A sync that failed: the member's writes since its last good sync are in doubt forever.
    SyncFailed {
        member: u32,
    },
    Mark(&'static str),
}

/// Which operations a fault matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultOp {
    Read,
    Write,
    Trim,
    Sync,
}

impl FaultOp {
    fn matches(self, op: Op) -> bool {
        matches!(
            (self, op),
            (FaultOp::Read, Op::Read { .. })
                | (FaultOp::Write, Op::Write { .. })
                | (FaultOp::Trim, Op::Trim { .. })
                | (FaultOp::Sync, Op::Sync)
        )
    }
}

/// An I/O error to inject.
#[derive(Clone, Debug)]
pub struct Fault {
    /// Armed when this mark is logged (`None`: from the start).
    pub after_mark: Option<&'static str>,
    pub op: FaultOp,
    /// Only on this member (`None`: any).
    pub member: Option<u32>,
    /// Matching operations let through after arming before the one that fails.
    pub skip: u32,
    /// The write or trim reaches the member, and is reported failed all the same.
    pub performed: bool,
}

/// A fault that fired: where in the log, on what.
#[derive(Clone, Debug)]
pub struct Injected {
    pub at: usize,
    pub member: u32,
    pub op: Op,
    pub performed: bool,
    pub after_mark: Option<&'static str>,
}

#[derive(Debug, Default)]
struct Inner {
    log: Vec<Entry>,
    bytes: u64,
    faults: Vec<(Fault, bool, u32)>, // (fault, armed, seen)
    injected: Vec<Injected>,
    recording: bool,
    /// Members whose I/O is logged under another index: a replacement put in a failed
    /// member's place gets its own image ([`Recorder::remap`]).
    remap: Vec<(u32, u32)>,
}

/// The recorder; put one `Arc` of it under every member with [`crate::member::Member::set_tap`].
#[derive(Debug, Default)]
pub struct Recorder {
    inner: Mutex<Inner>,
}

impl Recorder {
    pub fn new() -> Arc<Recorder> {
        Arc::new(Recorder { inner: Mutex::new(Inner { recording: true, ..Inner::default() }) })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Start or stop recording (faults still fire).
    pub fn set_recording(&self, on: bool) {
        self.lock().recording = on;
    }

    /// From now on, log member `from`'s I/O as member `to`'s (and match faults against `to`).
    /// Crash replay calls it when a replacement takes a failed member's index: the old
    /// member and the new one are two devices, two images.
    pub fn remap(&self, from: u32, to: u32) {
        let mut g = self.lock();
        g.remap.retain(|&(f, _)| f != from);
        g.remap.push((from, to));
    }

    fn index(inner: &Inner, member: u32) -> u32 {
        inner.remap.iter().find(|&&(f, _)| f == member).map_or(member, |&(_, t)| t)
    }

    pub fn add_fault(&self, f: Fault) {
        let armed = f.after_mark.is_none();
        self.lock().faults.push((f, armed, 0));
    }

    /// Entries logged so far.
    pub fn len(&self) -> usize {
        self.lock().log.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of write payload logged so far.
    pub fn bytes(&self) -> u64 {
        self.lock().bytes
    }

    /// A copy of the log (the payloads are shared, not copied).
    pub fn log(&self) -> Vec<Entry> {
        self.lock().log.clone()
    }

    pub fn injected(&self) -> Vec<Injected> {
        self.lock().injected.clone()
    }

    /// Whether a fault fires on this operation now (`performed` says at which stage we are).
    fn fire(inner: &mut Inner, member: u32, op: Op, performed: bool) -> bool {
        let at = inner.log.len();
        for (f, armed, seen) in inner.faults.iter_mut() {
            if !*armed || !f.op.matches(op) || f.member.is_some_and(|m| m != member) {
                continue;
            }
            let stage_performed = f.performed && f.op != FaultOp::Read && f.op != FaultOp::Sync;
            if stage_performed != performed {
                continue;
            }
            if *seen < f.skip {
                *seen += 1;
                continue;
            }
            let after_mark = f.after_mark;
            *armed = false;
            f.skip = u32::MAX; // one-shot
            inner.injected.push(Injected { at, member, op, performed, after_mark });
            return true;
        }
        false
    }
}

fn eio() -> io::Error {
    io::Error::from_raw_os_error(5)
}

impl Tap for Recorder {
    fn before(&self, member: u32, op: Op) -> io::Result<()> {
        let mut g = self.lock();
        let member = Recorder::index(&g, member);
        if Recorder::fire(&mut g, member, op, false) {
            if op == Op::Sync && g.recording {
                g.log.push(Entry::SyncFailed { member });
            }
            return Err(eio());
        }
        Ok(())
    }

    fn after(&self, member: u32, op: Op, data: &[u8]) -> io::Result<()> {
        let mut g = self.lock();
        let member = Recorder::index(&g, member);
        if g.recording {
            let e = match op {
                Op::Write { block, .. } => {
                    g.bytes += data.len() as u64;
                    Entry::Write { member, block, data: Arc::from(data) }
                }
                Op::Trim { block, count } => Entry::Trim { member, block, count },
                Op::Sync => Entry::Sync { member },
                _ => return Ok(()),
            };
            g.log.push(e);
        }
        if Recorder::fire(&mut g, member, op, true) {
            return Err(eio());
        }
        Ok(())
    }

    fn mark(&self, what: &'static str) {
        let mut g = self.lock();
        if g.recording {
            g.log.push(Entry::Mark(what));
        }
        for (f, armed, _) in g.faults.iter_mut() {
            if f.after_mark == Some(what) && f.skip != u32::MAX {
                *armed = true;
            }
        }
    }
}
