//! A write recorder under the members, in the spirit of dm-log-writes, that can also fail
//! operations: the recording [`Backing`] ([`Recorded`]) that crash replay and fault injection
//! put under every member, through a [`RecordingSource`].
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

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use swan_server::member::{Backing, Member, MemberError, MemberSource, Op, OpenOptions, ZonedLayout, BLOCK};

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
}

/// The recorder; one `Arc` of it is under every member of a [`RecordingSource`].
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

impl Recorder {
    /// The verdict before `op` on `member`: go ahead, or an injected `EIO`.
    fn before(&self, member: u32, op: Op) -> io::Result<()> {
        let mut g = self.lock();
        if Recorder::fire(&mut g, member, op, false) {
            if op == Op::Sync && g.recording {
                g.log.push(Entry::SyncFailed { member });
            }
            return Err(eio());
        }
        Ok(())
    }

    /// Log `op`, which `member` performed (with the bytes of a write); it may still be
    /// reported failed.
    fn after(&self, member: u32, op: Op, data: &[u8]) -> io::Result<()> {
        let mut g = self.lock();
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

    /// A note from the layers above (e.g. "a GC copy is done"), kept in order with the I/O;
    /// it arms the faults waiting for it.
    pub fn mark(&self, what: &'static str) {
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

/// A member's backing with the recorder under it, as member (image) `index`: every operation
/// is first offered to the faults, and every write, trim and sync it performed is logged.
/// Called on the thread doing the I/O, so the log is in the order the operations happen.
#[derive(Debug)]
pub struct Recorded {
    inner: Arc<dyn Backing>,
    recorder: Arc<Recorder>,
    index: u32,
}

fn blocks(offset: u64, len: usize) -> (u64, u64) {
    (offset / BLOCK as u64, (len / BLOCK) as u64)
}

impl Recorded {
    /// A write of part of a block (an emulated zoned device's table entry), logged as the
    /// whole blocks it leaves, read back: a power cut keeps or loses a sector, never less.
    fn write_in_part(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let first = offset / BLOCK as u64;
        let end = (offset + buf.len() as u64).div_ceil(BLOCK as u64);
        let op = Op::Write { block: first, count: end - first };
        self.recorder.before(self.index, op)?;
        self.inner.write_at(offset, buf)?;
        let mut whole = vec![0u8; ((end - first) as usize) * BLOCK];
        self.inner.read_at(first * BLOCK as u64, &mut whole)?;
        self.recorder.after(self.index, op, &whole)
    }
}

impl Backing for Recorded {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let (block, count) = blocks(offset, buf.len());
        self.recorder.before(self.index, Op::Read { block, count })?;
        self.inner.read_at(offset, buf)
    }

    fn read_small(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.recorder.before(self.index, Op::Read { block: offset / BLOCK as u64, count: 1 })?;
        self.inner.read_small(offset, buf)
    }

    fn write_at(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        if !offset.is_multiple_of(BLOCK as u64) || !buf.len().is_multiple_of(BLOCK) {
            return self.write_in_part(offset, buf);
        }
        let (block, count) = blocks(offset, buf.len());
        let op = Op::Write { block, count };
        self.recorder.before(self.index, op)?;
        self.inner.write_at(offset, buf)?;
        self.recorder.after(self.index, op, buf)
    }

    fn write_back(&self, offset: u64, buf: &[u8]) -> io::Result<()> {
        let (block, count) = blocks(offset, buf.len());
        let op = Op::Write { block, count };
        self.recorder.before(self.index, op)?;
        self.inner.write_back(offset, buf)?;
        self.recorder.after(self.index, op, buf)
    }

    fn write_behind(&self, offset: u64, len: u64) {
        self.inner.write_behind(offset, len);
    }

    fn discard(&self, offset: u64, len: u64) -> io::Result<()> {
        let (block, count) = blocks(offset, len as usize);
        let op = Op::Trim { block, count };
        self.recorder.before(self.index, op)?;
        self.inner.discard(offset, len)?;
        self.recorder.after(self.index, op, &[])
    }

    fn sync(&self) -> io::Result<()> {
        self.recorder.before(self.index, Op::Sync)?;
        self.inner.sync()?;
        self.recorder.after(self.index, Op::Sync, &[])
    }

    fn lock(&self, exclusive: bool) -> io::Result<()> {
        self.inner.lock(exclusive)
    }

    fn mark(&self, what: &'static str) {
        self.recorder.mark(what);
    }

    fn is_recorded(&self) -> bool {
        true
    }

    fn report_zones(&self) -> io::Result<Vec<swan_server::member::Zone>> {
        self.inner.report_zones()
    }

    fn finish_zone(&self, zone: u32) -> io::Result<()> {
        self.inner.finish_zone(zone)
    }
}

/// Members from `inner` with the recorder under those it was told the image index of
/// ([`RecordingSource::record_as`]); others are opened as they are.
#[derive(Debug)]
pub struct RecordingSource {
    inner: Arc<dyn MemberSource>,
    recorder: Arc<Recorder>,
    images: Mutex<HashMap<PathBuf, u32>>,
}

impl RecordingSource {
    pub fn new(inner: Arc<dyn MemberSource>, recorder: Arc<Recorder>) -> Arc<RecordingSource> {
        Arc::new(RecordingSource { inner, recorder, images: Mutex::default() })
    }

    /// Log the I/O of the member at `path` as image `index`'s. A replacement put in a failed
    /// member's place is another device with its own image, so its index is its own.
    pub fn record_as(&self, path: &Path, index: u32) {
        self.images.lock().unwrap_or_else(|e| e.into_inner()).insert(path.to_owned(), index);
    }
}

impl MemberSource for RecordingSource {
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }

    fn create(&self, path: &Path, bytes: u64, overwrite: bool) -> Result<(), MemberError> {
        self.inner.create(path, bytes, overwrite)
    }

    fn create_zoned(&self, path: &Path, layout: &ZonedLayout, overwrite: bool) -> Result<(), MemberError> {
        self.inner.create_zoned(path, layout, overwrite)
    }

    /// The recorder goes under a zoned member's emulation, so the log holds its zone table's
    /// writes beside the data's, and a cut may keep either without the other.
    fn open(&self, path: &Path, opts: OpenOptions) -> Result<Member, MemberError> {
        let index = self.images.lock().unwrap_or_else(|e| e.into_inner()).get(path).copied();
        match index {
            Some(index) => {
                let recorder = Arc::clone(&self.recorder);
                self.inner.open_under(path, opts, Box::new(move |inner| Arc::new(Recorded { inner, recorder, index })))
            }
            None => self.inner.open(path, opts),
        }
    }

    fn remove(&self, path: &Path) {
        self.inner.remove(path);
    }
}
